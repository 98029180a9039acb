#!/bin/bash
# End to end: a new user's rootless store and `aisb doctor --fix`.
#
# podman makes a new rootless user's store with the vfs driver on these
# hosts, and every session then copies the image in full (10 s and more
# against about 1 s).  As an ordinary user the test creates: doctor names
# vfs, what it costs and the fix; --fix on a store holding a volume
# changes nothing and says what a reset would delete; on an empty store
# it writes ~/.config/containers/storage.conf (driver = "overlay") and the
# store uses overlay; a user's own storage.conf is never rewritten; then
# a session runs, in the user's 0700 folder, on the overlay store.  Root's
# store (overlay) gets an ok line, and doctor's container checks run in
# the image a session would run (the tag --dry-run prints), not in a newer
# sandbox image of another package set that podman lists first.
#
# Needs root, podman, useradd, runuser and AISB_E2E=1.  The EXIT trap
# removes the user (its store and processes), the test's store and the
# /dev/net/tun mode it changed (tests/e2e/lib.sh).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start storage useradd userdel runuser
chmod 0711 "$tmp"

# root's store is the test's own, overlay: an ok line (before any image:
# no container checks)
"$aisb" doctor >"$tmp/out" 2>"$tmp/err" </dev/null || true
check "root: storage ok" "$(grep -c '^ok   storage    driver overlay' "$tmp/out")" 1
e2e_seed_image

# as a user, from / (the test's folders are not theirs to enter)
user_run() { (cd / && as_user "$@"); }
driver() { user_run podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null; }

e2e_user --bare aisbst
user=$e2e_user_name home=$e2e_home
conf=$home/.config/containers/storage.conf
check "user: a new store uses vfs" "$(driver)" vfs

# 1. doctor says what vfs costs and the fix
user_run aisb doctor >"$tmp/out" 2>"$tmp/err" </dev/null || true
line=$(grep '^warn storage    driver vfs' "$tmp/out" || true)
if [ -n "$line" ]; then ok "doctor warns of vfs"; else bad "doctor: no vfs warning: $(cat "$tmp/out")"; fi
case $line in
*"10 s or more"*"fix: aisb doctor --fix (the store is empty"*) ok "doctor: the cost and the fix" ;;
*) bad "doctor: the line: $line" ;;
esac
# whether sessions get their limits is the host's to say, image or not
# (a rootless session on cgroups v1 runs without them and points here)
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	want='^ok   cgroups    --memory, --cpus and --pids are applied by podman$'
else
	want='^warn cgroups    rootless podman on cgroups v1 cannot apply --memory, --cpus or --pids: sessions say so'
fi
check "doctor: the limits said before any image" "$(grep -c "$want" "$tmp/out")" 1

# 2. a store holding something: nothing changes, the reset is explained
user_run podman volume create keepme >/dev/null 2>&1
rc=0; user_run aisb doctor --fix >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "held store: --fix exit" "$rc" 1
if grep -q '^aisb doctor --fix: the store (.*) holds Local Volumes 1, which a switch to overlay deletes.*podman system reset, then aisb doctor --fix$' "$tmp/out"; then
	ok "held store: says what a reset deletes"; else bad "held store: $(grep -- --fix "$tmp/out")"; fi
if [ -e "$conf" ]; then bad "held store: $conf written"; else ok; fi
check "held store: still vfs" "$(driver)" vfs
check "held store: the volume kept" "$(user_run podman volume ls -q 2>/dev/null)" keepme
user_run podman volume rm keepme >/dev/null 2>&1

# 3. a storage.conf of the user's own is theirs: not rewritten
install -d -m 0755 -o "$user" -g "$user" "$home/.config" "$home/.config/containers"
printf '[storage]\ndriver = "vfs"\n' >"$conf"
chown "$user" "$conf"
sum=$(sha256sum <"$conf")
rc=0; user_run aisb doctor --fix >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "own conf: --fix exit" "$rc" 1
if grep -q "^aisb doctor --fix: $conf exists: set driver = \"overlay\" under \[storage\] in it" "$tmp/out"; then
	ok "own conf: says what to edit"; else bad "own conf: $(grep -- --fix "$tmp/out")"; fi
check "own conf: unchanged" "$(sha256sum <"$conf")" "$sum"
rm -f "$conf"

# 4. an empty store: reset, the file, overlay
rc=0; user_run aisb doctor --fix >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "empty store: --fix exit" "$rc" 0
check "empty store: overlay now" "$(driver)" overlay
check "empty store: the file" "$(grep -v '^#' "$conf" 2>&1)" "$(printf '[storage]\ndriver = "overlay"')"
check "empty store: owned by the user" "$(stat -c %U "$conf")" "$user"
check "empty store: doctor ok" "$(grep -c '^ok   storage    driver overlay' "$tmp/out")" 1
rc=0; user_run aisb doctor --fix >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "fixed: --fix again" "$(grep -c 'uses the overlay driver; nothing to fix' "$tmp/out")" 1

# 5. a session in the user's 0700 folder, on the overlay store
# (the seed's, when it was loaded: the build finds it)
img=$("$aisb" image build </dev/null 2>"$tmp/err" | tail -n 1)
podman save -q -m -o "$tmp/img.tar" "$img" \
    "$(podman image inspect --format '{{index .Labels "io.aisb.base"}}' "$img")"
chmod 0644 "$tmp/img.tar"
user_run podman load -q -i "$tmp/img.tar" >/dev/null 2>&1
install -d -m 0700 -o "$user" -g "$user" "$home/proj"
rc=0; user_run sh -c 'cd "$HOME/proj" && exec aisb --net none -- sh -c "echo made >f; id -u"' \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "session: exit" "$rc" 0
check "session: uid inside" "$(cat "$tmp/out")" 1000
check "session: file owned by the user" "$(stat -c %U "$home/proj/f" 2>&1)" "$user"

# 6. root: doctor checks the image a session here would run, not the
# sandbox image podman lists first (a newer one: another package set, an
# older aisb's).  Here that is the image on the offline base (lib.sh's
# AISB_IMAGE=offline), the one aisb image build made above.
install -d "$tmp/decoy"
printf 'FROM %s\nLABEL io.aisb.kind=sandbox io.aisb.test=decoy\n' "$img" \
    >"$tmp/decoy/Containerfile"
podman build -q -t localhost/aisb:decoy "$tmp/decoy" >/dev/null 2>"$tmp/err"
first=$(podman images --filter label=io.aisb.kind=sandbox \
    --format '{{.Repository}}:{{.Tag}}' | sed -n 1p)
check "root: podman lists the other image first" "$first" localhost/aisb:decoy
(cd "$tmp/ws" && "$aisb" doctor --fresh) >"$tmp/out" 2>"$tmp/err" </dev/null || true
check "root: doctor's container checks in the session's image" \
    "$(sed -n 's/^ *image  *\([^ ]*\) (for the container checks.*/\1/p' "$tmp/out")" "$img"
podman rmi localhost/aisb:decoy "$img" >/dev/null 2>&1 || true
(cd "$tmp/ws" && "$aisb" doctor --fresh) >"$tmp/out" 2>"$tmp/err" </dev/null || true
if grep -q "^skip containers the image a session here would run, $img is not built, nor any other aisb image; run \`aisb image build\`" "$tmp/out"; then
	ok "root: the session's image removed: doctor names it"
else bad "root: no image: $(grep containers "$tmp/out")"; fi

echo "storage: $pass passed, $fail failed"
[ "$fail" = 0 ]
