#!/bin/bash
# The enforcer a session runs is the host's static binary beside aisb,
# never the image's (docs/enforcer.md, "Nothing of the image"), without
# podman: what --dry-run says a session runs (the binary mounted
# read-only, named the entrypoint, the image's user, health check and
# stop signal overridden, and every variable a static glibc reads before
# main dropped: each MALLOC_* name in the binary, GLIBC_TUNABLES,
# LD_HWCAP_MASK); and that a session refuses, with 77 and before podman
# runs, an enforcer beside aisb that is dynamically linked, missing,
# or of a mode the container's root cannot run.  Also aisb trust on a
# file no session changed.  Everything is under a folder of the test's.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"	# $aisb, $tmp, a user with no config, check, run
build=$(dirname "$aisb")
mkdir -p "$tmp/bin"
export XDG_CACHE_HOME=$tmp/cache
# has_arg ARG: ARG is a word of the dry run's podman line
has_arg() {
	tr ' ' '\n' <"$tmp/out" >"$tmp/args"
	grep -qxF -- "$1" "$tmp/args"
}

# 1. the build's own enforcer: static, mounted, the entrypoint
phdrs=$(LC_ALL=C readelf -l "$build/aisb-enforce" 2>/dev/null || true)
if [[ $phdrs == *INTERP* ]]; then
	echo "SKIP: $build/aisb-enforce is dynamically linked (a sanitizer build); sessions refuse it"
	exit 77
fi
run "$aisb" --quiet --dry-run -- true
check "dry run: exit" "$rc" 0
real=$(readlink -f "$build/aisb-enforce")
if has_arg "--mount=type=bind,src=$real,dst=/run/aisb/aisb-enforce,ro=true"; then
	ok; else bad "no read-only mount of $real: $(grep '^podman' "$tmp/out")"; fi
if has_arg "--entrypoint=/run/aisb/aisb-enforce"; then ok; else
	bad "the entrypoint is not the mounted enforcer"; fi
for a in --user=0:0 --no-healthcheck --stop-signal=SIGTERM; do
	if has_arg "$a"; then ok; else bad "no $a"; fi
done
if grep -q '/usr/local/bin/aisb-enforce' "$tmp/out"; then
	bad "an enforcer of the image is named"; else ok; fi

# every variable glibc's start-up reads from the environment, by the
# binary's own strings: dropped for the container
if command -v strings >/dev/null; then
	names=$( (strings -n 4 "$build/aisb-enforce" | grep -Ex 'MALLOC_[A-Z_]+' || true;
	    echo GLIBC_TUNABLES; echo LD_HWCAP_MASK) | sort -u)
	# (the names are there to be found: a static glibc's malloc)
	if grep -qx MALLOC_PERTURB_ <<<"$names"; then ok; else
		bad "no MALLOC_ name in the binary: strings found $(echo $names)"; fi
	for v in $names; do
		if has_arg "--unsetenv=$v"; then ok; else
			bad "$v: read by the enforcer's libc before main, not dropped"; fi
	done
fi

# 2. an aisb whose enforcer is not fit: refused with 77 before podman
# runs (a podman of the test's records any call)
mkdir -p "$tmp/fake"
printf '#!/bin/sh\necho "$@" >>"%s/podman.calls"\nexit 1\n' "$tmp" >"$tmp/fake/podman"
chmod 0755 "$tmp/fake/podman"
cp "$aisb" "$tmp/bin/aisb"
cp "$build/aisb-seccomp.json" "$build/aisb-default-policy.yaml" "$tmp/bin/"
session() {	# session: a real session of $tmp/bin/aisb, podman faked
	run env PATH="$tmp/fake:$PATH" "$tmp/bin/aisb" --quiet -- true
}
# dynamically linked: this test's own aisb is one
cp "$aisb" "$tmp/bin/aisb-enforce"
session
check "dynamic enforcer: exit" "$rc" 77
if grep -q "aisb-enforce is dynamically linked (its loader: /" "$tmp/err" &&
    grep -q -- "--disable-static-enforcer" "$tmp/err"; then ok; else
	bad "dynamic enforcer: message: $(cat "$tmp/err")"; fi
check "dynamic enforcer: podman never ran" "$(cat "$tmp/podman.calls" 2>/dev/null)" ""
# the preview shows the refusal a session would stop on, and goes on
run "$tmp/bin/aisb" --quiet --dry-run -- true
check "dynamic enforcer: dry run exit" "$rc" 0
if grep -q "^# enforcer: a session stops here (77): .*aisb-enforce is dynamically linked" \
    "$tmp/out"; then ok; else bad "dynamic enforcer: dry run: $(head -c 400 "$tmp/out")"; fi
# static, but the container's root could not run it
cp "$build/aisb-enforce" "$tmp/bin/aisb-enforce"
chmod 0700 "$tmp/bin/aisb-enforce"
session
check "mode 0700: exit" "$rc" 77
if grep -q "mode 700" "$tmp/err"; then ok; else bad "mode 0700: $(cat "$tmp/err")"; fi
# missing
rm -f "$tmp/bin/aisb-enforce"
session
check "missing: exit" "$rc" 77
if grep -q "$tmp/bin/aisb-enforce: No such file" "$tmp/err"; then ok; else
	bad "missing: $(cat "$tmp/err")"; fi
check "podman never ran" "$(cat "$tmp/podman.calls" 2>/dev/null)" ""
# a static one: the dry run names it
cp "$build/aisb-enforce" "$tmp/bin/aisb-enforce"
run "$tmp/bin/aisb" --quiet --dry-run -- true
check "static copy: dry run exit" "$rc" 0
if has_arg "--mount=type=bind,src=$tmp/bin/aisb-enforce,dst=/run/aisb/aisb-enforce,ro=true"; then
	ok; else bad "the copy beside that aisb is not the one mounted"; fi

# 3. aisb trust with nothing to accept; a folder that is not there
run "$aisb" trust "$tmp/ws/.aisb.yaml"
check "trust, nothing changed: exit" "$rc" 0
check "trust, nothing changed: says so" "$(cat "$tmp/out")" \
    "aisb: $tmp/ws/.aisb.yaml: no session changed it; nothing to accept"
run "$aisb" trust "$tmp/nowhere/.aisb.yaml"
check "trust, no folder: exit" "$rc" 78
run "$aisb" trust
check "trust, no file: exit" "$rc" 78

echo "enforcer: $pass passed, $fail failed"
[ "$fail" = 0 ]
