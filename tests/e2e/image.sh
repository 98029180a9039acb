#!/bin/bash
# End to end: the sandbox image and doctor, with real podman.
#
# Builds the offline base (mmdebstrap from this host's apt sources, then
# podman import) and aisb images on it, and checks: tag stability (same
# inputs, same tag; a rebuilt enforcer, the same tag; a changed install
# list, the same base and one layer more; an unpullable base falls back to
# the same offline image, and the preview says so), the sandbox user,
# no enforcer in the image nor its libraries in the base (the image alone
# runs nothing; with the host's enforcer mounted as a session mounts it:
# 78 for a bad plan, id 1000 after loading its table), labels, `aisb
# image ls`, a package set layered on the one base
# (its build time printed, not asserted), `aisb clean --images`, and
# `aisb doctor` passing.
#
# Everything lives in a podman store of its own (CONTAINERS_STORAGE_CONF),
# so that cleanup is exact and a parallel test using the host's store is
# never disturbed; the EXIT trap removes it, failure or not.  The only
# network use: mmdebstrap fetching from the host's configured Debian
# sources, and containers reaching listeners this test (or doctor) opened
# on the host's loopback.  A pull of localhost:1 fails at once.
set -euo pipefail
# shellcheck source=tests/errtrap.sh
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

# Not lib.sh's e2e_start: that names the offline base for every session
# (AISB_IMAGE=offline) and puts a podman on PATH that refuses any pull and
# fails the test for it, and this test builds the base itself and pulls
# an unpullable base (localhost:1) on purpose.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
AISB=${AISB:-$(cd "$top_builddir" && pwd)/aisb}
ENFORCE=${ENFORCE:-$(cd "$top_builddir" && pwd)/aisb-enforce}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rootful podman)"; exit 77; }
[ -n "${AISB_E2E:-}" ] || { echo "SKIP: set AISB_E2E=1 (tests/run.sh does, once)"; exit 77; }
for t in podman mmdebstrap; do
	command -v "$t" >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
[ -x "$AISB" ] && [ -x "$ENFORCE" ] || { echo "FAIL: build aisb and aisb-enforce first"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/aisb-e2e-image.XXXXXX")
export TMPDIR=$tmp
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' \
    "$tmp" "$tmp" >"$tmp/storage.conf"
export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
export XDG_CACHE_HOME=$tmp/cache	# aisb's memory of failed pulls
export XDG_STATE_HOME=$tmp/state	# the build lock, images' last use
run_label=io.aisb.test=image-$$

cleanup() {
	local rc=$? m
	podman rm -f --filter "label=$run_label" >/dev/null 2>&1 || true
	podman rm -af >/dev/null 2>&1 || true
	podman rmi -af >/dev/null 2>&1 || true
	# Leftover overlay mounts of our store only, deepest first.
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' \
	    /proc/self/mounts | sort -r)
	# (before $tmp goes: they are in it)
	if [ "$rc" != 0 ]; then
		echo "--- last output" >&2
		cat "$out" "$err" >&2 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}
out=$tmp/out
err=$tmp/err
trap cleanup EXIT

nfail=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; nfail=$((nfail + 1)); }
check() {	# check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
t0=$SECONDS
step() { echo "# $* ($((SECONDS - t0))s)"; }

runtime=()
command -v runc >/dev/null && runtime=(--runtime runc)
prun() {	# podman run with what this machine kind needs
	podman run --rm "${runtime[@]}" --ulimit nofile=1024:1024 \
	    --ulimit nproc=1024:1024 --label "$run_label" --pull=never "$@"
}

# build [ARGS...]: aisb image build, the tag on stdout (last line).
build() {
	"$AISB" image build "$@" >"$out" 2>"$err" ||
	    return
	tail -n 1 "$out"
}

# --- the offline base and the image on it ----------------------------------
step "building the offline base and the image"
tb=$SECONDS
tag1=$(build)
echo "# first build: $((SECONDS - tb))s, $tag1"
check "the tag is localhost/aisb:<16 hex>" \
    grep -Eq '^localhost/aisb:[0-9a-f]{16}$' <<<"$tag1"
check "the offline base was announced" \
    grep -q 'building the offline base localhost/aisb-base:' "$err"
check "the base is labelled kind=base" test "$(podman images \
    --filter label=io.aisb.kind=base --format '{{.Repository}}' | sort -u)" \
    = localhost/aisb-base

tb=$SECONDS
tag1b=$(build)
check "same inputs, same tag" test "$tag1b" = "$tag1"
check "same inputs, reused, not rebuilt ($((SECONDS - tb))s)" \
    test "$((SECONDS - tb))" -lt 30 -a ! -s "$err"

# --- labels ------------------------------------------------------------------
hash=$(podman image inspect --format '{{index .Labels "io.aisb.hash"}}' "$tag1")
check "label io.aisb.hash is the tag's hash" test "$hash" = "${tag1##*:}"
check "label io.aisb.managed=1" test "$(podman image inspect --format \
    '{{index .Labels "io.aisb.managed"}}' "$tag1")" = 1
"$AISB" image ls >"$out" 2>"$err"
check "aisb image ls lists it" grep -q "^$tag1 " "$out"
check "... with a header: size, age, last use" \
    grep -Eq '^TAG +KIND +SIZE +OWN +CREATED +LAST USE +PACKAGES$' "$out"
check "... never used by a session yet" \
    grep -Eq "^$tag1 +sandbox .* never +- *\$" "$out"

# --- what is inside ------------------------------------------------------------
step "inside the image"
check "user sandbox is uid 1000" \
    test "$(prun --network=none --entrypoint /usr/bin/id "$tag1" -u sandbox)" = 1000
check "group sandbox is gid 1000" \
    test "$(prun --network=none --entrypoint /usr/bin/id "$tag1" -g sandbox)" = 1000
check "home is /home/sandbox, owned by 1000" test "$(prun --network=none \
    --entrypoint /usr/bin/stat "$tag1" -c '%u:%g %n' /home/sandbox)" \
    = "1000:1000 /home/sandbox"
check "no enforcer in the image" test -z "$(prun --network=none \
    --entrypoint /usr/bin/find "$tag1" / -xdev -name 'aisb-enforce*')"
check "... nor its libraries in the base" test -z "$(prun --network=none \
    --entrypoint /usr/bin/find "$tag1" / -xdev -name 'libnftnl*' -o -name \
    'libmnl*' -o -name 'libcares*')"
set +e
prun --network=none "$tag1" --plan /nonexistent -- /bin/true >"$out" 2>"$err"
rc=$?
set -e
check "the image alone runs nothing (exit $rc)" test "$rc" != 0
check "... its entrypoint is where a session mounts the enforcer" \
    grep -q '/run/aisb/aisb-enforce' "$err"
mnt=(--mount "type=bind,src=$ENFORCE,dst=/run/aisb/aisb-enforce,ro=true")
set +e
prun --network=none "${mnt[@]}" "$tag1" --plan /nonexistent -- /bin/true \
    >"$out" 2>"$err"
rc=$?
set -e
check "the host's enforcer mounted: a missing plan exits 78 (got $rc)" \
    test "$rc" = 78
check "... and says why" grep -q '/nonexistent' "$err"
printf 'aisb-plan 1\nmode none\n' >"$tmp/none.plan"
prun --network=none --cap-add NET_ADMIN "${mnt[@]}" \
    --volume "$tmp/none.plan:/run/aisb/plan:ro" "$tag1" \
    --plan /run/aisb/plan -- /usr/bin/id -u >"$out" 2>"$err" || true
check "the enforcer loads its table, then the command runs as 1000" \
    test "$(cat "$out")" = 1000

# --- what changes the tag ------------------------------------------------------
step "tag inputs"
"$AISB" image containerfile >"$out" 2>"$err"
check "containerfile: FROM the offline base" \
    grep -q '^FROM localhost/aisb-base:[0-9a-f]\{16\}$' "$out"
check "containerfile: the mounted enforcer is the entrypoint" \
    grep -qx 'ENTRYPOINT \["/run/aisb/aisb-enforce"\]' "$out"
check "containerfile: nothing copies an enforcer" \
    test "$(grep -c 'aisb-enforce ' "$out")" = 0

# an aisb beside another enforcer build (one byte more): the same image
mkdir -p "$tmp/bin"
cp "$AISB" "$tmp/bin/aisb"
cp "$ENFORCE" "$tmp/bin/aisb-enforce"
printf '\0' >>"$tmp/bin/aisb-enforce"
tag3=$("$tmp/bin/aisb" image build 2>"$err" | tail -n 1)
check "a rebuilt enforcer, the same tag ($tag3)" test "$tag3" = "$tag1"

"$AISB" image containerfile --base localhost:1/aisb-none:0 >"$out" 2>"$err"
check "the preview of a base not here yet says what happens" grep -q \
    '^# localhost:1/aisb-none:0 is not here yet: a session pulls it, and builds on the offline Debian base instead' \
    "$out"
set +e
"$AISB" image build --base localhost:1/aisb-none:0 \
    >"$out" 2>"$err"
rc=$?
set -e
check "an unpullable base falls back to the offline one" \
    test "$rc" = 0 -a "$(tail -n 1 "$out")" = "$tag1"
check "... and says so" grep -q 'cannot be pulled' "$err"
"$AISB" image containerfile --base localhost:1/aisb-none:0 >"$out" 2>"$err"
check "... and the preview names the offline base, as the session uses it" \
    test "$(grep '^FROM ' "$out")" = "$("$AISB" image containerfile | grep '^FROM ')"
"$AISB" image build --base localhost:1/aisb-none:0 \
    >"$out" 2>"$err"
check "... and does not try again at once" \
    test "$(tail -n 1 "$out")" = "$tag1" -a ! -s "$err"

set +e
"$AISB" image build --package 'Bad;name' >"$out" 2>"$err"
rc=$?
set -e
check "a bad package name is a usage error (78, got $rc)" test "$rc" = 78

# A package set is a layer on the one base: apt-get install over the
# host's Debian sources (the network the base build uses already), no
# second mmdebstrap.
"$AISB" image containerfile --package git >"$out" 2>"$err"
from1=$("$AISB" image containerfile | grep '^FROM ')
check "a package set, the same base in the Containerfile" \
    test "$(grep '^FROM ' "$out")" = "$from1" -a -n "$from1"
check "... installed by apt-get in the image" grep -q \
    '^RUN \["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends", "git"\]$' \
    "$out"
step "a package set over the base present (--package git)"
# the build lock: one file of the store's in the user's state folder (not
# /tmp, not /run/lock), kept; a build waits while another aisb holds it
locks=("$XDG_STATE_HOME"/aisb/locks/image-*.lock)
check "the build lock: one file, in the state folder" \
    test "${#locks[@]}" = 1 -a -f "${locks[0]}"
check "... the user's alone" test "$(stat -c %a "$XDG_STATE_HOME/aisb/locks")" = 700
flock "${locks[0]}" sleep 4 &
hold=$!
sleep 1
tb=$(date +%s%N)
tag2=$(build --package git)
ms=$((($(date +%s%N) - tb) / 1000000))
wait "$hold"
echo "# TIMING: aisb image build --package git, base present (3 s of it waiting): $((ms / 1000)).$(printf %03d $((ms % 1000))) s"
check "... it waited for the lock's holder" grep -qx \
    'aisb: waiting for another aisb that is building an image' "$err"
check "--package git, another tag ($tag2)" test -n "$tag2" -a "$tag2" != "$tag1"
check "... no second base" test "$(podman images --filter \
    label=io.aisb.kind=base -q | wc -l)" = 1
check "... git is in it" prun --network=none --entrypoint /usr/bin/git \
    "$tag2" --version
check "... it shares the base's layers" test "$(podman image inspect \
    --format '{{index .RootFS.Layers 0}}' "$tag2")" = "$(podman image inspect \
    --format '{{index .RootFS.Layers 0}}' "$tag1")"
check "... labelled with its base and packages" test "$(podman image inspect \
    --format '{{index .Labels "io.aisb.base"}} {{index .Labels "io.aisb.packages"}}' \
    "$tag2")" = "${from1#FROM } git"
check "... both coexist" podman image exists "$tag1"
"$AISB" image ls >"$out" 2>"$err"
check "image ls: the package, and what it adds over the base" \
    grep -Eq "^$tag2 +sandbox +[0-9]+MB +[0-9]+MB .* git\$" "$out"

# --- aisb clean --images --------------------------------------------------------
step "clean --images"
build_id() { podman image inspect --format '{{.Id}}' "$1"; }
# a container that uses tag1 keeps it; tag2, unused, goes
prun -d --name "aisb-e2e-image-$$" --network=none --entrypoint /bin/sleep \
    "$tag1" 600 >/dev/null
"$AISB" clean --images --older-than 1h >"$out" 2>"$err"
check "clean --images --older-than 1h keeps what was built just now" \
    grep -qx 'clean: 0 image(s) removed' "$out"
set +e
"$AISB" clean --images --older-than 7x >"$out" 2>"$err"
rc=$?
set -e
check "a bad duration is a usage error (78, got $rc)" test "$rc" = 78
"$AISB" clean --images --older-than 0s >"$out" 2>"$err"
cat "$out"
check "clean --images removes the unused image" grep -qx \
    "removed image $tag2 (last used: never)" "$out"
check "... not the one a container uses" \
    grep -qx "kept image $tag1: a container uses it" "$out"
check "... nor the base it is built on" podman image exists "${from1#FROM }"
check "... gone" test "$(podman image exists "$tag2"; echo $?)" = 1
podman rm -f -t 0 "aisb-e2e-image-$$" >/dev/null

# --- doctor ----------------------------------------------------------------------
step "doctor"
set +e
"$AISB" doctor --fresh --image "$tag1" >"$out" 2>"$err"
rc=$?
set -e
cat "$out"
check "aisb doctor passes (exit $rc)" test "$rc" = 0
for c in podman cgroups limits tun runtime network nftables workspace; do
	check "doctor: $c ok" grep -Eq "^ok +$c " "$out"
done

step "done"
[ "$nfail" = 0 ] || { echo "$nfail check(s) failed"; exit 1; }
echo "all image checks passed in $((SECONDS - t0))s"
