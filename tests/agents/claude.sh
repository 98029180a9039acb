#!/bin/bash
# The slow test of the claude recipe (make check-agents; not part of make
# check): a real session `aisb --agent claude -- claude --version`, whose
# image installs @anthropic-ai/claude-code and its Node runtime through a
# gated install session (the install layer, docs/launcher.md "Image").
# Prints claude's version, the image's size and how long the image took,
# and fails with one clear line when the image could not be built or has
# no claude in it.
#
# It downloads the agent (tens of MB) from the npm registry the host's npm
# is configured with, and uses the host's podman store (the image is kept
# for the sessions that follow).  Needs root and podman.
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rootful podman)"; exit 77; }
command -v podman >/dev/null || { echo "SKIP: podman not found"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/aisb-agents.XXXXXX")
vol=aisb-agents-test-$$
cleanup() {
	podman volume rm -f "$vol" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_STATE_HOME=$tmp/state
mkdir -p "$tmp/ws"

# The install session's policy: what `aisb policy derive npm` prints, plus
# allow_ranges for the addresses the registry's name resolves to here (on
# hosts whose egress is intercepted they fall in a range the gate denies
# by default; a user allows them the same way).  No registry name is
# written here: it comes from the host's npm configuration.
if command -v npm >/dev/null && command -v getent >/dev/null; then
	rhost=$(npm config get registry 2>/dev/null |
	    sed -nE 's#^https?://([^/:@]+).*#\1#p')
	addrs=$(getent ahostsv4 "$rhost" 2>/dev/null | awk '{ print $1 }' | sort -u)
	if [ -n "$addrs" ]; then
		"$aisb" policy derive npm >"$tmp/install.yaml"
		printf 'allow_ranges: [%s]\n' "$(printf '%s/32\n' $addrs |
		    paste -sd, - | sed 's/,/, /g')" >>"$tmp/install.yaml"
		export AISB_INSTALL_POLICY=$tmp/install.yaml
	fi
fi
# the session of the agent, not one of the install sessions it started
last_session() {
	grep -l '^agent claude' "$XDG_STATE_HOME"/aisb/sessions/*/record 2>/dev/null |
	    xargs -r ls -t | sed -n 1p | xargs -r dirname
}

fail() { echo "FAIL: $*" >&2; exit 1; }

start=$(date +%s)
rc=0
(cd "$tmp/ws" && "$aisb" --agent claude --home-volume "$vol" -- claude --version) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
end=$(date +%s)
sd=$(last_session || true)
image=$(grep -m1 '^image ' "$sd/record" 2>/dev/null | cut -d' ' -f2 || true)
image_ms=$(sed -n 's/^timings_ms .* image \([0-9]*\) .*/\1/p' "$sd/record" 2>/dev/null || true)

if [ "$rc" != 0 ]; then
	cat "$tmp/out" "$tmp/err" >&2
	if grep -Eq 'claude: (No such file or directory|command not found)' "$tmp/err"; then
		fail "the image ${image:-?} has no claude: this aisb does not install an agent's package yet (the install layer: launch_agent_spec() fills the spec, launch_image_ensure() must build spec->npm and spec->node)"
	fi
	if [ -z "$image" ] || [ "$image" = - ]; then
		fail "the image for the claude recipe could not be built (exit $rc; its output is above)"
	fi
	fail "aisb --agent claude -- claude --version exited $rc"
fi
version=$(head -1 "$tmp/out")
case $version in
*[0-9].[0-9]*) ;;
*) fail "claude --version printed '$version'" ;;
esac
want=$(sed -n 's/^ *npm: "@anthropic-ai\/claude-code@\([^"]*\)".*/\1/p' \
    "$top_srcdir/contrib/agents.yaml" | sed -n 1p)
case $version in
*"$want"*) ;;
*) fail "claude --version printed '$version'; the recipe pins $want" ;;
esac
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "claude --version: $version"
echo "image: $image, $((size / 1024 / 1024)) MiB ($size bytes)"
echo "first session: $((end - start)) s wall, of which image ${image_ms:-?} ms (built now, or reused if it existed)"

# the second session reuses the image
rc=0
(cd "$tmp/ws" && "$aisb" --agent claude --home-volume "$vol" -- claude --version) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/err" >&2; fail "second session exited $rc"; }
sd=$(last_session)
echo "second session: image $(sed -n 's/^timings_ms .* image \([0-9]*\) .*/\1/p' "$sd/record") ms ($(grep -m1 '^image ' "$sd/record" | cut -d' ' -f2))"
echo "claude.sh: ok"
