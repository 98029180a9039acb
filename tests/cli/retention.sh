#!/bin/bash
# Retention (docs/launcher.md, "Retention"): aisb clean --older-than
# removes session folders (with their transaction backups and
# recordings) untouched for that long, and the user config's retention:
# cap removes the oldest until the rest fits; neither ever removes a
# session whose draft waits for approval, whose transaction is not
# settled, whose launcher runs, or that is starting.  Real folders;
# podman (which aisb clean lists containers with) on a store of the
# test's own, which holds none.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
command -v podman >/dev/null || { echo "SKIP: podman not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home/.config/aisb" "$tmp/ws" "$tmp/store"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/store/g"\nrunroot = "%s/store/r"\n' \
    "$tmp" "$tmp" >"$tmp/storage.conf"
export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
conf=$XDG_CONFIG_HOME/aisb/config.yaml
sessions=$XDG_STATE_HOME/aisb/sessions
mkdir -p "$sessions"
cd "$tmp/ws"

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
run() { rc=0; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?; }
said() { if grep -q -- "$2" "$tmp/out" "$tmp/err"; then ok; else bad "$1: $(cat "$tmp/out" "$tmp/err")"; fi; }
there() { [ -d "$sessions/$1" ] && echo yes || echo no; }

# session ID AGE KIB [STATE]: an ended session folder (a record, a
# recording of KIB KiB), a snapshot session's state and a transaction's
# backups when STATE is given, last written AGE ago
session() {
	local d=$sessions/$1
	mkdir -p "$d/recording"
	printf 'exit 0\n' >"$d/record"
	head -c $(($3 * 1024)) /dev/urandom >"$d/recording/capture.pcapng"
	if [ -n "${4:-}" ]; then
		mkdir -p "$d/tx/1/backup" "$d/tx/1/after"
		echo old >"$d/tx/1/backup/f"
		cat >"$d/snapshot" <<EOF
# aisb snapshot state 1 (docs/snapshot.md)
workspace $tmp/ws
stage $d/stage
owner 0:0
state $4
exit 0
changes 1
digest $(printf '%064d' 7)
tx 1
updated 0
EOF
	fi
	touch -d "$2 ago" "$d"
}
id() { printf '%024x' "$1"; }

# 1. --older-than: what is older goes, what waits or is half done stays
session "$(id 1)" '10 days' 8
session "$(id 2)" '10 days' 8 kept
session "$(id 3)" '10 days' 8 conflict
session "$(id 4)" '10 days' 8 applying
session "$(id 5)" '10 days' 8 recovery
session "$(id 6)" '10 days' 8 applied
session "$(id 7)" '10 days' 8 undone
session "$(id 8)" '1 hour' 8
session "$(id 9)" '10 days' 8
printf '%s %s\n' $$ "$(awk '{ print $22 }' /proc/$$/stat)" >"$sessions/$(id 9)/launcher"
touch -d '10 days ago' "$sessions/$(id 9)"
# a folder without a record, just made: a session starting
mkdir -p "$sessions/$(id 10)"
run "$aisb" clean --older-than 7d
check "older-than: exit" "$rc" 0
for k in 1 6 7; do
	check "older-than: session $k removed" "$(there "$(id $k)")" no
	said "older-than: session $k said" "^removed session $(id $k) ([0-9]* KiB): older than --older-than$"
done
check "older-than: a waiting draft kept" "$(there "$(id 2)")" yes
said "older-than: kept said" "^kept session $(id 2): its draft waits for aisb apply or discard$"
check "older-than: a conflict kept" "$(there "$(id 3)")" yes
for k in 4 5; do
	check "older-than: unsettled $k kept" "$(there "$(id $k)")" yes
	said "older-than: unsettled $k said" "^kept session $(id $k): its transaction is not settled"
done
check "older-than: younger kept" "$(there "$(id 8)")" yes
check "older-than: a running session kept" "$(there "$(id 9)")" yes
check "older-than: a session starting kept" "$(there "$(id 10)")" yes
said "older-than: the count" " 3 session folder(s),"
# what the kept drafts hold is as it was
check "older-than: the waiting draft's backup" "$(cat "$sessions/$(id 2)/tx/1/backup/f")" old
run "$aisb" clean --older-than 7x
check "older-than: a bad duration" "$rc" 78
run "$aisb" clean
said "no --older-than, no cap: nothing by age" " 0 session folder(s),"
check "no --older-than: kept" "$(there "$(id 8)")" yes
rm -rf "${sessions:?}"/*

# 2. the retention cap: oldest first until the rest fits; a waiting draft
# is never removed, even when it alone is over the cap
session "$(id 21)" '5 days' 2048 kept
session "$(id 22)" '4 days' 400
session "$(id 23)" '3 days' 400 applied
session "$(id 24)" '2 days' 400
session "$(id 25)" '1 day' 400
printf 'retention: 3m\n' >"$conf"
run "$aisb" clean
check "cap: exit" "$rc" 0
check "cap: the waiting draft kept" "$(there "$(id 21)")" yes
check "cap: the oldest removed" "$(there "$(id 22)")" no
check "cap: the next removed" "$(there "$(id 23)")" no
check "cap: the rest kept" "$(there "$(id 24)") $(there "$(id 25)")" "yes yes"
said "cap: said" "^removed session $(id 22) ([0-9]* KiB): over the retention cap$"
said "cap: the count" " 2 session folder(s),"
total=$(du -sk "$sessions" | cut -f1)
[ "$total" -le 3072 ] && ok || bad "cap: $total KiB left, over 3072"
printf 'retention: 1m\n' >"$conf"
run "$aisb" clean
check "cap, the draft alone over it: kept" "$(there "$(id 21)")" yes
check "cap 1m: the rest removed" "$(there "$(id 24)") $(there "$(id 25)")" "no no"
said "cap 1m: over, said" "over the retention cap of 1024 KiB: what is left waits"
# not from a project config, nor the environment
rm -f "$conf"
session "$(id 26)" '1 day' 400
printf 'retention: 1k\n' >.aisb.yaml
run "$aisb" clean
said "project config: said" "no retention cap"
check "project config: nothing removed" "$(there "$(id 26)")" yes
rm -f .aisb.yaml
run env AISB_RETENTION=1k "$aisb" clean
check "environment: nothing removed" "$(there "$(id 26)")" yes

rm -rf "${sessions:?}"/*

# 3. persistent drafts: the folder stays, the transactions of its commits
# go by age and by the cap; the last one, not settled, stays; a draft
# another aisb holds is left alone
drafts=$XDG_STATE_HOME/aisb/drafts
# draft NAME STATE TX AGE KIB: a draft's folder, its last transaction TX,
# tx/1..TX each KIB KiB of backups, last written AGE ago
draft() {
	local d=$drafts/0123456789abcdef-$1 n
	mkdir -p "$d/stage"
	cat >"$d/snapshot" <<EOF
# aisb snapshot state 1 (docs/snapshot.md)
name $1
revision 3
workspace $tmp/ws
stage $d/stage
owner 0:0
state $2
changes 0
tx $3
EOF
	for n in $(seq "$3"); do
		mkdir -p "$d/tx/$n/backup"
		head -c $(($5 * 1024)) /dev/urandom >"$d/tx/$n/backup/f"
		touch -d "$4 ago" "$d/tx/$n"
	done
}
txs() { ls "$drafts/0123456789abcdef-$1/tx" | sort -n | paste -sd' '; }
draft feat kept 3 '10 days' 8
draft busy applying 2 '10 days' 8
draft young kept 1 '1 hour' 8
draft held kept 1 '10 days' 8
flock "$drafts/0123456789abcdef-held/snapshot.lock" sleep 60 &
holder=$!
for _ in $(seq 50); do
	flock -n "$drafts/0123456789abcdef-held/snapshot.lock" true || break
	sleep 0.1
done
run "$aisb" clean --older-than 7d
kill "$holder"; wait "$holder" 2>/dev/null || true
check "drafts: exit" "$rc" 0
check "drafts: the settled transactions removed" "$(txs feat)" ""
check "drafts: the folder stays" "$(ls "$drafts/0123456789abcdef-feat" | paste -sd' ')" "snapshot snapshot.lock stage tx"
said "drafts: said" "^removed draft 0123456789abcdef-feat transaction 1 ([0-9]* KiB): older than --older-than$"
check "drafts: an unsettled commit's kept, the one before removed" "$(txs busy)" 2
said "drafts: unsettled said" "^kept draft 0123456789abcdef-busy transaction 2: its commit is not settled"
check "drafts: younger kept" "$(txs young)" 1
check "drafts: a held draft's kept" "$(txs held)" 1
said "drafts: held said" "^kept draft 0123456789abcdef-held transaction 1: a session or another aisb holds the draft$"
said "drafts: the count" " 4 draft transaction(s),"
rm -rf "${drafts:?}"/*
# the cap: a draft's old commit counts and goes first
draft big kept 2 '5 days' 1024
session "$(id 31)" '1 day' 400
printf 'retention: 2m\n' >"$conf"
run "$aisb" clean
check "drafts, cap: the oldest transaction removed" "$(txs big)" 2
check "drafts, cap: the session kept" "$(there "$(id 31)")" yes
said "drafts, cap: said" "^removed draft 0123456789abcdef-big transaction 1 ([0-9]* KiB): over the retention cap$"
rm -f "$conf"

echo "retention: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
