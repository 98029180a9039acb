#!/bin/bash
# aisb doctor's identity lines (docs/launcher.md, "Doctor"): aisb's
# version and plan protocol, the SHA-256 of the aisb, aisb-gate and
# aisb-enforce a session here would use (found as sessions find them),
# the enforcer's state and the image tag.  No container runs: podman is
# kept off PATH, so the host checks stop early; the identity lines come
# first whatever the host.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line
. "$(dirname "$0")/lib.sh"

build=$(cd "$top_builddir" && pwd)
mkdir -p "$tmp/nobin"
export XDG_CACHE_HOME=$tmp/cache	# where doctor keeps its checks
short() { sha256sum "$1" | cut -c1-16; }
has() {	# has NAME PATTERN: a line of $tmp/out
	if grep -q -- "$2" "$tmp/out"; then ok; else bad "$1: no '$2' in: $(cat "$tmp/out")"; fi
}
doctor() { PATH=$tmp/nobin run "$1" doctor; }

# 1. the build tree's programs, by their hashes
doctor "$aisb"
check "no podman: doctor fails" "$rc" 1
ver=$("$aisb" --version | sed -n '1s/^aisb //p')
has "version and protocol" "^     identity   aisb $ver, plan protocol 1\$"
has "aisb's hash" "^ok   identity   aisb sha256 $(short "$build/aisb") $build/aisb\$"
has "the gate's hash" "^ok   identity   aisb-gate sha256 $(short "$build/aisb-gate") $build/aisb-gate\$"
# (a sanitizer build's enforcer is dynamically linked: refused, as below)
if [[ $(LC_ALL=C readelf -l "$build/aisb-enforce" 2>/dev/null || true) != *INTERP* ]]; then
	has "the enforcer's hash, static" "^ok   identity   aisb-enforce sha256 $(short "$build/aisb-enforce") $build/aisb-enforce, static\$"
else
	has "the enforcer's hash, dynamic" "^FAIL identity   aisb-enforce sha256 $(short "$build/aisb-enforce") $build/aisb-enforce, refused by sessions\$"
fi
has "the image a session would use" "^     identity   image "
check "identity lines first" "$(sed -n 1p "$tmp/out" | cut -c6-13)" "identity"

# the container checks did not run: nothing kept (doctor --fresh is
# taken, and keeps nothing either)
check "no podman: nothing stored" "$(ls "$XDG_CACHE_HOME/aisb/doctor" 2>/dev/null)" ""
PATH=$tmp/nobin run "$aisb" doctor --fresh
check "--fresh: taken" "$rc" 1
check "  nothing stored" "$(ls "$XDG_CACHE_HOME/aisb/doctor" 2>/dev/null)" ""

# 2. an installed copy: the programs beside it, whatever they are now
inst=$tmp/inst && mkdir -p "$inst"
cp "$build/aisb" "$build/aisb-gate" "$inst/"
cp /bin/true "$inst/aisb-enforce"	# dynamically linked
chmod 0755 "$inst/aisb-enforce"
printf 'x' >>"$inst/aisb-gate"
doctor "$inst/aisb"
check "installed copy: exit" "$rc" 1
has "the copy's own hash" "^ok   identity   aisb sha256 $(short "$inst/aisb") $inst/aisb\$"
has "the changed gate's hash" "^ok   identity   aisb-gate sha256 $(short "$inst/aisb-gate") $inst/aisb-gate\$"
has "a dynamic enforcer: FAIL, why" "^FAIL identity   aisb-enforce sha256 $(short "$inst/aisb-enforce") $inst/aisb-enforce, refused by sessions\$"
has "  the reason" "is dynamically linked"

# 3. no gate beside aisb and none on PATH
rm "$inst/aisb-gate"
doctor "$inst/aisb"
has "no gate: FAIL with the fix" "^FAIL identity   aisb-gate not found next to aisb or on PATH; build it"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
