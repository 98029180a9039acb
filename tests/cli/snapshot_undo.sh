#!/bin/bash
# aisb undo ID without podman (tests/e2e/snapshot.sh undoes real
# sessions): a draft made by the launcher's own end of a session
# (tests/cli/snapask, its draft kept: no terminal), applied, then undone:
# the workspace as before the apply, the draft "undone", the transactions
# listed as undone and as an undo; undoing twice, or a draft never
# applied, refused with 78.  After a host edit of a file the apply wrote,
# the undo is refused with 65 naming the file, and nothing is written; put
# back as the apply left it, the undo goes through.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
build=$(cd "$top_builddir" && pwd)
aisb=$build/aisb
snapask=$build/tests/cli/snapask
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/ws"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
sessions=$XDG_STATE_HOME/aisb/sessions
mkdir -p "$sessions"
ws=$tmp/ws

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
run() { rc=0; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?; }
state() { sed -n 's/^state //p' "$sessions/$1/snapshot"; }
# tree: each path, its mode and content
tree() { (cd "$ws" && find . -mindepth 1 -printf '%P %m ' -exec sh -c \
    'if [ -f "$1" ]; then cat "$1"; else echo; fi' _ {} \; | sort); }
# session ID: a kept draft whose command wrote new.txt ("agent")
session() {
	rc=0
	mkdir -m 0700 "$sessions/$1"
	setsid -w "$snapask" "$sessions/$1" "$ws" /dev/null >"$tmp/out" \
	    2>"$tmp/err" </dev/null || rc=$?
	check "session $1: exit" "$rc" 0
	[ "$rc" = 0 ] || cat "$tmp/err" >&2
	check "session $1: kept" "$(state "$1")" kept
}

printf 'a\n' >"$ws/a.txt"
id1=0123456789abcdef01234567
id2=89abcdef0123456789abcdef

# 1. a clean apply, undone
tree >"$tmp/before"
session $id1
run "$aisb" undo $id1
check "undo before apply: exit" "$rc" 78
if grep -q 'nothing to undo (its draft is kept)' "$tmp/err"; then ok; else bad "undo kept: $(cat "$tmp/err")"; fi
run "$aisb" apply $id1
check "apply: exit" "$rc" 0
check "apply: new.txt" "$(cat "$ws/new.txt")" agent
run "$aisb" undo $id1
check "undo: exit" "$rc" 0
tree >"$tmp/after"
check "undo: the workspace as before the apply" "$(cmp -s "$tmp/before" "$tmp/after" && echo same)" same
check "undo: draft" "$(state $id1)" undone
if grep -q "undone: $ws is as it was before transaction 1" "$tmp/err"; then ok; else bad "undo said: $(cat "$tmp/err")"; fi
run "$aisb" transactions
if grep -Eq "^$id1 +undone " "$tmp/out"; then ok; else bad "transactions: $(cat "$tmp/out")"; fi
if grep -Eq '^  tx 1 +applied +[0-9a-f]{12}  undone by tx 2$' "$tmp/out"; then ok; else bad "tx 1: $(cat "$tmp/out")"; fi
if grep -Eq '^  tx 2 +applied +[0-9a-f]{12}  undo of tx 1$' "$tmp/out"; then ok; else bad "tx 2: $(cat "$tmp/out")"; fi
run "$aisb" undo $id1
check "undo twice: exit" "$rc" 78
run "$aisb" discard $id1
check "discard undone: exit" "$rc" 78
for n in 1 2; do
	run "$aisb" recover $id1
	check "recover an undone draft $n: exit" "$rc" 0
	check "recover $n: still undone" "$(state $id1)" undone
done
tree >"$tmp/after"
check "recover changed nothing" "$(cmp -s "$tmp/before" "$tmp/after" && echo same)" same
# kept with the undo: what the apply wrote (after/) and replaced (backup/)
check "the apply's new content kept" "$(cat "$sessions/$id1/tx/1/after/"*)" agent

# 2. a host edit after the apply: the undo is refused, nothing written
session $id2
run "$aisb" apply $id2
check "apply 2: exit" "$rc" 0
printf 'the user went on\n' >>"$ws/new.txt"
tree >"$tmp/edited"
run "$aisb" undo $id2
check "undo after a host edit: exit" "$rc" 65
if grep -q "$ws/new.txt" "$tmp/err" && grep -q 'nothing is undone' "$tmp/err"; then ok; else
	bad "undo after a host edit: $(cat "$tmp/err")"; fi
check "undo after a host edit: one line" "$(wc -l <"$tmp/err" | tr -d ' ')" 1
tree >"$tmp/after"
check "undo after a host edit: nothing written" "$(cmp -s "$tmp/edited" "$tmp/after" && echo same)" same
check "undo after a host edit: still applied" "$(state $id2)" applied
# as the apply left it again: the undo goes through (a new transaction)
printf 'agent\n' >"$ws/new.txt"
run "$aisb" undo $id2
check "undo once put back: exit" "$rc" 0
[ -e "$ws/new.txt" ] && bad "undo once put back: new.txt is still there" || ok
check "undo once put back: draft" "$(state $id2)" undone
run "$aisb" transactions
if grep -Eq '^  tx 2 +rolled-back +[0-9a-f]{12}  undo of tx 1$' "$tmp/out" &&
    grep -Eq '^  tx 3 +applied +[0-9a-f]{12}  undo of tx 1$' "$tmp/out"; then ok; else
	bad "transactions 2: $(cat "$tmp/out")"; fi

echo "snapshot_undo: $pass passed, $fail failed"
[ "$fail" = 0 ]
