#!/bin/bash
# End to end: aisb doctor keeps a passing run of its container checks
# (docs/launcher.md, "Identity") in $XDG_CACHE_HOME/aisb/doctor, under
# the identity it was made with (the SHA-256 of aisb, aisb-gate and
# aisb-enforce, podman and its configuration, the host checks, the
# image, the options and the policy), shows it again marked as stored
# while all of it holds, and runs the checks again when one part
# changes (one byte of an installed copy's enforcer, a line of its
# policy), with --fresh, or when the file is not a whole store file.
#
# The image is copied from the host's default store when it has an aisb
# image (podman save and load: nothing of that store changes), else
# built (e2e_seed_image).  Needs root, podman and AISB_E2E=1.  The EXIT
# trap removes the test's store and folders (tests/e2e/lib.sh).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start doctor_store
# the host's default store, not the test's (e2e_init named that)
host_img=$(env -u CONTAINERS_STORAGE_CONF podman images \
    --filter label=io.aisb.kind=sandbox \
    --format '{{.Repository}}:{{.Tag}}' 2>/dev/null | sed -n 1p) || host_img=
if [ -n "$host_img" ]; then
	env -u CONTAINERS_STORAGE_CONF podman save -o "$tmp/img.tar" "$host_img" >/dev/null
	podman load -i "$tmp/img.tar" >/dev/null
	rm -f "$tmp/img.tar"
	img=$host_img
else
	e2e_seed_image
	img=$(podman images --filter label=io.aisb.kind=sandbox \
	    --format '{{.Repository}}:{{.Tag}}' | sed -n 1p)
fi
store=$XDG_CACHE_HOME/aisb/doctor

# doctor PROGRAM [FLAGS]: its output in $tmp/out, its status in $rc
doctor() {
	local prog=$1; shift
	local ia=()
	rc=0
	[ -z "$img" ] || ia=(--image "$img")
	(cd "$tmp/ws" && "$prog" doctor "${ia[@]}" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}
stored() { grep -q '^     stored     the container checks of 20[0-9-]*T[0-9:]*Z, made with these programs, podman, host, image, options and policy (aisb doctor --fresh runs them again):$' "$tmp/out"; }
checks_ok() { grep -q '^ok   runtime ' "$tmp/out" && grep -q '^ok   nftables ' "$tmp/out" && grep -q '^ok   workspace ' "$tmp/out"; }

# 1. a first run: the checks run, and the passing run is kept
ta=$(date +%s%N)
doctor "$aisb"
tb=$(date +%s%N)
check "first run: exit" "$rc" 0
if checks_ok && ! stored; then ok; else bad "first run: the checks ran: $(cat "$tmp/out")"; fi
check "  kept, the user's alone" "$(stat -c %a "$store" 2>/dev/null)" 600
check "  under the programs' hashes" "$(sed -n 's/^aisb-enforce //p' "$store")" "$(sha256sum "$build/aisb-enforce" | cut -d' ' -f1)"

# 2. the same identity: shown again, marked as stored, no container run
t0=$(date +%s%N)
doctor "$aisb"
t1=$(date +%s%N)
check "second run: exit" "$rc" 0
if stored && checks_ok; then ok; else bad "second run: not the stored run: $(cat "$tmp/out")"; fi
echo "# doctor: $(((tb - ta) / 1000000)) ms checking, $(((t1 - t0) / 1000000)) ms from the store"

# 3. --fresh runs them whatever is stored
doctor "$aisb" --fresh
if [ "$rc" = 0 ] && checks_ok && ! stored; then ok; else bad "--fresh: $(cat "$tmp/out")"; fi

# 4. an installed copy: its own run; then one byte of its enforcer, then
# a line of its policy, each makes the stored run stale
inst=$tmp/inst && mkdir -p "$inst"
for f in aisb aisb-gate aisb-enforce aisb-agents.yaml aisb-default-policy.yaml aisb-seccomp.json; do
	cp -p "$build/$f" "$inst/"
done
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && grep -q "^     stored     the container checks of $store were made with another config: running them again\$" "$tmp/out"; then ok
else bad "copy: another policy path is another config: $(cat "$tmp/out")"; fi
doctor "$inst/aisb"
if [ "$rc" = 0 ] && stored; then ok; else bad "copy: its own run stored: $(cat "$tmp/out")"; fi
printf 'x' >>"$inst/aisb-enforce"
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && checks_ok && grep -q "^     stored     the container checks of $store were made with another aisb-enforce: running them again\$" "$tmp/out"; then ok
else bad "copy: one byte of the enforcer: $(cat "$tmp/out")"; fi
echo '# one more line' >>"$inst/aisb-default-policy.yaml"
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && grep -q "^     stored     the container checks of $store were made with another policy: running them again\$" "$tmp/out"; then ok
else bad "copy: a line of the policy: $(cat "$tmp/out")"; fi

# 5. a store file that is not whole: ignored with a note, never trusted,
# then replaced by the new run
head -n 5 "$store" >"$tmp/cut" && cat "$tmp/cut" >"$store"
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && checks_ok && grep -q "^     stored     $store does not parse: ignored, not trusted; running the checks again\$" "$tmp/out"; then ok
else bad "a cut store file: $(cat "$tmp/out")"; fi
doctor "$inst/aisb"
if stored; then ok; else bad "  replaced by the new run: $(cat "$tmp/out")"; fi
echo 'not a store file' >"$store"
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && grep -q "^     stored     $store is not a whole store file of yours: ignored, not trusted; running the checks again\$" "$tmp/out"; then ok
else bad "not a store file: $(cat "$tmp/out")"; fi
head -c 70000 /dev/zero | tr '\0' 'x' >"$store"
doctor "$inst/aisb"
if [ "$rc" = 0 ] && ! stored && grep -q "^     stored     $store: ignored (.*larger" "$tmp/out"; then ok
else bad "a store file past its bound: $(cat "$tmp/out")"; fi

# 6. no --image, and the image a session here would run not built, as
# after `aisb --package NAME` alone: the aisb image sessions used last
# stands in (its last use, else its creation), named with the others;
# the image is given two tags no spec hashes to, the one it had untagged
alt1=localhost/aisb:00000000000000a1 alt2=localhost/aisb:00000000000000a2
podman tag "$img" "$alt1" "$alt2"
podman untag "$img" "$img"
img=
mkdir -p "$XDG_STATE_HOME/aisb/images"
touch -d '2 minutes ago' "$XDG_STATE_HOME/aisb/images/00000000000000a1"
touch -d '1 minute ago' "$XDG_STATE_HOME/aisb/images/00000000000000a2"
doctor "$aisb" --fresh
standin() { grep -q "^     image      $1 (for the container checks; it stands in)\$" "$tmp/out" &&
    grep -q "^                the image a session here would run\(, localhost/aisb:[0-9a-f]\{16\}\)\? is not built; this one is the aisb image sessions here used last, of 2: .*$1 (" "$tmp/out"; }
if [ "$rc" = 0 ] && checks_ok && standin "$alt2"; then ok
else bad "a stand-in, the last used: $(cat "$tmp/out")"; fi
touch "$XDG_STATE_HOME/aisb/images/00000000000000a1"
doctor "$aisb" --fresh
if [ "$rc" = 0 ] && checks_ok && standin "$alt1"; then ok
else bad "  the other, used since: $(cat "$tmp/out")"; fi
# none: how to build the plain one, and the checks skipped (the image is
# named when its base is in the store: not when the image was copied from
# the host's store without it, for its tag hashes the base's id)
podman rmi "$alt1" "$alt2" >/dev/null
doctor "$aisb" --fresh
if [ "$rc" = 0 ] && ! grep -q '^ok   runtime ' "$tmp/out" &&
    grep -q "^skip containers the image a session here would run\(, localhost/aisb:[0-9a-f]\{16\}\)\? is not built, nor any other aisb image; run \`aisb image build\`" "$tmp/out"; then ok
else bad "no aisb image: $(cat "$tmp/out")"; fi

echo "doctor_store: $pass passed, $fail failed"
[ "$fail" = 0 ]
