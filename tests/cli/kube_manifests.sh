#!/bin/bash
# The Kubernetes manifests of contrib/kube/ checked against the tree's
# build, so that they cannot rot (issue 32; docs/kubernetes.md): every
# document parses, and what the pods name exists in what `make gate-image`
# builds (the image's tag, its programs), in the manifests' ConfigMaps and
# Secrets (every mount and file), and in the containers' ports; the
# programs read their own arguments and files (aisb-gate -n,
# aisb-enforce --init -n).  tests/cli/kube_manifests.py says what is
# checked.  With kubectl, `kubectl kustomize` builds each folder too
# (offline).  Needs python3 with its yaml module (Debian: python3-yaml)
# and ldd; skips (77) without them.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
# the system python3 first: python3-yaml is Debian's
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
	PY=/usr/bin/python3
elif command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
	PY=python3
else
	echo "SKIP: python3 with the yaml module (apt-get install python3-yaml)"
	exit 77
fi
command -v ldd >/dev/null || { echo "SKIP: ldd not found"; exit 77; }
gate=$top_builddir/aisb-gate
enforce=$top_builddir/aisb-enforce
[ -x "$gate" ] && [ -x "$enforce" ] || { echo "FAIL: build aisb-gate and aisb-enforce first"; exit 1; }
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$version" ] || { echo "FAIL: no PACKAGE_VERSION in $top_builddir/config.h"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aisb-kube-manifests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the image's context as make gate-image stages it (no podman)
"$top_srcdir/contrib/gate-image/build.sh" -c "$tmp/ctx" \
    "localhost/aisb-gate:$version" "$gate" "$enforce"
mkdir "$tmp/work"
rc=0
"$PY" "$top_srcdir/tests/cli/kube_manifests.py" --kube "$top_srcdir/contrib/kube" \
    --rootfs "$tmp/ctx/rootfs" --image "localhost/aisb-gate:$version" \
    --gate "$gate" --enforce "$enforce" --work "$tmp/work" || rc=$?
if command -v kubectl >/dev/null; then
	for d in "$top_srcdir"/contrib/kube/*/; do
		if kubectl kustomize "$d" >/dev/null 2>"$tmp/kustomize.err"; then
			echo "ok - kubectl kustomize $(basename "$d")"
		else
			echo "not ok - kubectl kustomize $(basename "$d"): $(cat "$tmp/kustomize.err")"
			rc=1
		fi
	done
fi
exit "$rc"
