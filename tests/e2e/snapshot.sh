#!/bin/bash
# End to end: snapshot sessions (aisb --snapshot, docs/snapshot.md) in real
# podman, as root in a root-owned 0700 folder (rootful: the stage through
# the idmapped mount) and as an ordinary user in that user's 0700 folder
# (rootless podman, keep-id).
#
# An agent-like shell command edits, creates and deletes files and
# folders and changes a mode in its stage; the host tree stays as it was
# until aisb apply, and then matches the stage; a host edit between the
# session and apply is refused as a conflict and nothing is written; a
# failed command proposes nothing; .git/hooks and .env are not in the
# stage (the command cannot see them); recover and apply again are
# harmless; aisb undo takes an apply back (refused, naming the file,
# after a host edit).  Root in a folder of that user, as under sudo: the
# stage and what apply and undo write are the folder owner's; another user's files and a
# mount in the folder are not staged; core.hooksPath from the user's own
# ~/.gitconfig guards its folder (rootless too), and the user's next
# commit runs nothing.  The question at a terminal carries aisb's mark.
# --net none: nothing talks to any network.
#
# Needs root, podman, mmdebstrap and AISB_E2E=1 (tests/run.sh sets it).
# Everything it makes is removed by the EXIT trap (tests/e2e/lib.sh: the
# test user and the /dev/net/tun mode too; e2e_cleanup_more below: a
# mount).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start snapshot mmdebstrap useradd userdel runuser sha256sum
ptyask=$(cd "$top_srcdir" && pwd)/tests/e2e/ptyask.py
e2e_seed_image
mnt=
e2e_cleanup_more() {
	[ -z "$mnt" ] || umount -l "$mnt" 2>/dev/null || true
	return 0
}

cat >"$tmp/policy.yaml" <<'EOF'
version: 1
allow:
  - host: allowed.test
    ports: [443]
EOF
chmod 0644 "$tmp/policy.yaml"

# A repository as users have them: files, a folder, a script, a hook that
# would run code, a secret.
make_repo() {	# make_repo DIR
	mkdir -p "$1/sub/deeper" "$1/.git/hooks" "$1/.git/objects"
	printf 'keep\n' >"$1/keep.txt"
	printf 'line 1\nline 2\n' >"$1/edit.txt"
	printf 'doomed\n' >"$1/del.txt"
	printf 'in sub\n' >"$1/sub/deeper/f.txt"
	printf '#!/bin/sh\necho run\n' >"$1/run.sh"
	chmod 0644 "$1/run.sh"
	printf 'SECRET=e2e-not-a-real-secret\n' >"$1/.env"
	printf '#!/bin/sh\necho pwned >/tmp/pwned\n' >"$1/.git/hooks/pre-commit"
	chmod 0755 "$1/.git/hooks/pre-commit"
	printf 'ref: refs/heads/main\n' >"$1/.git/HEAD"
}

# What the agent does: looks, edits, creates, deletes, chmods.
agent='set -e
[ -e .env ] && echo ".env present" || echo ".env absent"
[ -e .git/hooks/pre-commit ] && echo "hook present" || echo "hook absent"
[ -e edit.txt ] && echo "workspace visible"
echo "line 3" >> edit.txt
echo new >new.txt
mkdir -p made/sub
echo deep >made/sub/deep.txt
rm del.txt
rm -r sub
chmod 0755 run.sh'

# tree DIR: every path but .git and .env, its type, mode and content hash
tree() {
	(cd "$1" && find . -mindepth 1 \( -path ./.git -o -path ./.env \) -prune -o \
	    -printf '%P %y %m\n' | sort &&
	    find . \( -path ./.git -o -path ./.env \) -prune -o -type f \
	    -exec sha256sum {} + | sort -k2)
}
# session_id [STATE]: the id of the one session made since the last asked
session_id() { local d; d=$(e2e_session "$@") || return 1; echo "${d##*/}"; }
field() { sed -n "s/^$1 //p" "$2"; }

# --- 1. root, in a root-owned 0700 folder -------------------------------
ws=$tmp/rootws
mkdir -m 0700 "$ws"
make_repo "$ws"
tree "$ws" >"$tmp/before"
rc=0; (cd "$ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c "$agent") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "root: exit" "$rc" 0
check "root: .env not in the stage" "$(grep -c '^.env absent$' "$tmp/out")" 1
check "root: hook not in the stage" "$(grep -c '^hook absent$' "$tmp/out")" 1
check "root: the stage at the workspace's path" "$(grep -c '^workspace visible$' "$tmp/out")" 1
tree "$ws" >"$tmp/after"
check "root: host unchanged before apply" "$(cmp -s "$tmp/before" "$tmp/after" && echo same)" same
id=$(session_id)
sd=$XDG_STATE_HOME/aisb/sessions/$id
if grep -q "aisb apply $id" "$tmp/err"; then ok; else bad "root: no apply hint: $(cat "$tmp/err")"; fi
check "root: record mode" "$(grep -Ec '^workspace_mode +snapshot \(flag: --snapshot\)$' "$sd/record")" 1
check "root: record outcome" "$(field snapshot_outcome "$sd/record")" kept
digest=$(field snapshot_changes "$sd/record" | awk '{ print $3 }')
case $digest in [0-9a-f]*) [ ${#digest} = 64 ] && ok || bad "root: digest '$digest'" ;;
*) bad "root: record digest: $(grep snapshot "$sd/record")" ;; esac
"$aisb" changes "$id" >"$tmp/changes" 2>&1 || bad "root: changes failed: $(cat "$tmp/changes")"
for want in 'A new.txt' 'M edit.txt' 'D del.txt' 'D sub/' 'A made/'; do
	if grep -qF -- "$want" "$tmp/changes"; then ok; else bad "root: changes lack '$want': $(cat "$tmp/changes")"; fi
done
if grep -q 'run.sh' "$tmp/changes"; then ok; else bad "root: no mode change listed"; fi
"$aisb" changes "$id" --diff >"$tmp/diff" 2>&1 || bad "root: changes --diff failed"
if grep -qx '+line 3' "$tmp/diff"; then ok; else bad "root: diff: $(cat "$tmp/diff")"; fi
"$aisb" transactions >"$tmp/tx" 2>&1
if grep -Eq "^$id +kept " "$tmp/tx"; then ok; else bad "root: transactions: $(cat "$tmp/tx")"; fi
tree "$sd/stage" >"$tmp/stage"
[ -e "$sd/stage/.git/hooks" ] && bad "root: hooks in the stage" || ok

rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "root: apply exit" "$rc" 0
tree "$ws" >"$tmp/after"
check "root: host matches the stage" "$(cmp -s "$tmp/stage" "$tmp/after" && echo same)" same
check "root: .env kept" "$(cat "$ws/.env")" "SECRET=e2e-not-a-real-secret"
check "root: hook kept" "$(stat -c %a "$ws/.git/hooks/pre-commit")" 755
check "root: edit" "$(tail -n 1 "$ws/edit.txt")" "line 3"
check "root: owner of new files" "$(stat -c %u "$ws/new.txt" "$ws/made/sub/deep.txt" | sort -u)" 0
check "root: mode" "$(stat -c %a "$ws/run.sh")" 755
[ -e "$ws/del.txt" ] || [ -e "$ws/sub" ] && bad "root: deleted files back" || ok
check "root: state" "$(field state "$sd/snapshot")" applied
[ -e "$sd/stage" ] && bad "root: stage left after apply" || ok
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "root: apply twice" "$rc" 0
for n in 1 2; do
	rc=0; "$aisb" recover "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
	check "root: recover $n" "$rc" 0
done
tree "$ws" >"$tmp/again"
check "root: recover changed nothing" "$(cmp -s "$tmp/again" "$tmp/after" && echo same)" same
"$aisb" transactions >"$tmp/tx" 2>&1
if grep -Eq '^  tx 1 +applied ' "$tmp/tx"; then ok; else bad "root: tx listing: $(cat "$tmp/tx")"; fi

# undo: the workspace as before the session, the draft undone
rc=0; "$aisb" undo "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "root: undo exit" "$rc" 0
tree "$ws" >"$tmp/undone"
check "root: undo: as before the session" "$(cmp -s "$tmp/before" "$tmp/undone" && echo same)" same
check "root: undone" "$(field state "$sd/snapshot")" undone
"$aisb" transactions >"$tmp/tx" 2>&1
if grep -Eq '^  tx 1 +applied +[0-9a-f]{12}  undone by tx 2$' "$tmp/tx" &&
    grep -Eq '^  tx 2 +applied +[0-9a-f]{12}  undo of tx 1$' "$tmp/tx"; then ok; else
	bad "root: undo listing: $(cat "$tmp/tx")"; fi
rc=0; "$aisb" undo "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "root: undo twice" "$rc" 78
# after a host edit of what the apply wrote: refused, naming the file
rc=0; (cd "$ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo undo-me >undo.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "undo conflict: session exit" "$rc" 0
id=$(session_id)
sd=$XDG_STATE_HOME/aisb/sessions/$id
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "undo conflict: apply" "$rc" 0
echo "host edit" >>"$ws/undo.txt"
tree "$ws" >"$tmp/edited"
rc=0; "$aisb" undo "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "undo conflict: exit" "$rc" 65
if grep -q "$ws/undo.txt" "$tmp/err"; then ok; else bad "undo conflict: no file named: $(cat "$tmp/err")"; fi
tree "$ws" >"$tmp/undone"
check "undo conflict: nothing written" "$(cmp -s "$tmp/edited" "$tmp/undone" && echo same)" same
check "undo conflict: still applied" "$(field state "$sd/snapshot")" applied
rm -f "$ws/undo.txt"

# a host edit between the session and apply: a conflict, nothing written
rc=0; (cd "$ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo agent >>edit.txt; echo x >conflict-new.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "conflict: session exit" "$rc" 0
id=$(session_id)
sd=$XDG_STATE_HOME/aisb/sessions/$id
echo "host edit" >>"$ws/edit.txt"
tree "$ws" >"$tmp/before"
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "conflict: apply exit" "$rc" 65
if grep -q 'edit.txt' "$tmp/err"; then ok; else bad "conflict: no file named: $(cat "$tmp/err")"; fi
check "conflict: 'nothing was written' said once" "$(grep -o 'nothing was written' "$tmp/err" | wc -l)" 1
# the sandbox's version against the host's now, where it is: to merge
rc=0; "$aisb" changes "$id" --diff >"$tmp/out" 2>"$tmp/err" || rc=$?
check "conflict: changes --diff exit" "$rc" 0
check "conflict: the sandbox's version, where" \
    "$(grep -c "^conflict edit.txt: changed on the host since it was staged; below, the sandbox's version ($sd/stage/edit.txt) against the host's now, to merge by hand$" "$tmp/out")" 1
check "conflict: the diff's heads" "$(grep -A2 '^conflict edit.txt' "$tmp/out" | sed -n '2,3p' | tr '\n' ';')" \
    "--- a/edit.txt (the host's now);+++ b/edit.txt (the sandbox's);"
check "conflict: the host's line and the sandbox's" \
    "$(sed -n '/^conflict edit.txt/,/^diff --aisb/p' "$tmp/out" | grep -c -e '^-host edit$' -e '^+agent$')" 2
tree "$ws" >"$tmp/after"
check "conflict: nothing written" "$(cmp -s "$tmp/before" "$tmp/after" && echo same)" same
check "conflict: state" "$(field state "$sd/snapshot")" conflict
rc=0; "$aisb" discard "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "conflict: discard" "$rc" 0
check "conflict: discarded" "$(field state "$sd/snapshot")" discarded
[ -e "$sd/stage" ] && bad "discard left the stage" || ok
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "discarded: apply refused" "$rc" 78

# a failed command proposes nothing
rc=0; (cd "$ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo x >failed-new.txt; rm keep.txt; exit 3') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "failed: exit" "$rc" 3
id=$(session_id)
sd=$XDG_STATE_HOME/aisb/sessions/$id
tree "$ws" >"$tmp/again"
check "failed: host unchanged" "$(cmp -s "$tmp/again" "$tmp/after" && echo same)" same
check "failed: state" "$(field state "$sd/snapshot")" failed
check "failed: record outcome" "$(field snapshot_outcome "$sd/record")" failed
[ -e "$sd/stage" ] && bad "failed: stage left" || ok
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "failed: apply refused" "$rc" 78

# --apply=ask with no terminal: said, and the draft is kept
rc=0; (cd "$ws" && setsid -w "$aisb" --snapshot --apply=ask --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo y >ask.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "ask: exit" "$rc" 0
[ -e "$ws/ask.txt" ] && bad "ask: applied without an answer" || ok
if grep -q 'no terminal to ask on' "$tmp/err"; then ok; else bad "ask: $(cat "$tmp/err")"; fi

# --apply=ask at a terminal: "d" shows the diff and asks again, "y" applies;
# at the next session "n" keeps the draft
rc=0; (cd "$ws" && python3 "$ptyask" 300 '[d]iff: ' d \
    '[d]iff: ' y -- "$aisb" --snapshot --apply=ask --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo asked >ask2.txt') \
    >"$tmp/out" 2>&1 </dev/null || rc=$?
check "ask at a terminal: exit" "$rc" 0
check "ask: 'y' applied" "$(cat "$ws/ask2.txt" 2>/dev/null)" asked
if grep -q '^+asked' "$tmp/out"; then ok; else bad "ask: 'd' showed no diff: $(tail -n 5 "$tmp/out")"; fi
check "ask: asked twice" "$(grep -o 'write these 1 change(s)' "$tmp/out" | wc -l | tr -d ' ')" 2
# the question carries the mark of the line that opens aisb's block
qmark=$(sed -n 's/.*---- aisb, session [0-9a-f]*, mark \([0-9a-f]\{8\}\): .*/\1/p' "$tmp/out" | sed -n 1p)
if [ -n "$qmark" ] && grep -q "aisb \[mark $qmark\]: write these 1 change(s)" "$tmp/out"; then ok; else
	bad "ask: no marked block and question: $(tail -n 8 "$tmp/out" | cat -v)"; fi
e2e_session_mark
rc=0; (cd "$ws" && python3 "$ptyask" 300 '[d]iff: ' n \
    -- "$aisb" --snapshot --apply=ask --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo refused >ask3.txt') \
    >"$tmp/out" 2>&1 </dev/null || rc=$?
check "ask 'n': exit" "$rc" 0
[ -e "$ws/ask3.txt" ] && bad "ask: 'n' applied" || ok
id=$(session_id)
check "ask 'n': kept" "$(field state "$XDG_STATE_HOME/aisb/sessions/$id/snapshot")" kept

# a draft that persists: three sessions with a host edit in between, the
# workspace untouched until aisb draft commit; then a host edit of what
# the draft changed refuses the next session before anything runs
dws=$tmp/draftws
mkdir -m 0700 "$dws"
printf 'a\n' >"$dws/a.txt"
printf 'b\n' >"$dws/b.txt"
dsession() {	# dsession SCRIPT: one session on the draft e2e
	rc=0; (cd "$dws" && "$aisb" --draft e2e --net none \
	    --policy "$tmp/policy.yaml" -- sh -c "$1") >"$tmp/out" 2>"$tmp/err" \
	    </dev/null || rc=$?
}
dsession 'echo one >a.txt'
check "draft 1: exit" "$rc" 0
check "draft 1: the workspace untouched" "$(cat "$dws/a.txt")" a
id=$(session_id)
echo host >"$dws/b.txt"
dsession 'cat b.txt >seen.txt; echo two >>a.txt'
check "draft 2 (after a host edit): exit" "$rc" 0
id=$(session_id)
if grep -q "took in the workspace's edits" "$tmp/err"; then ok; else bad "draft 2: $(cat "$tmp/err")"; fi
dsession 'test "$(cat a.txt)" = "one
two" && test "$(cat seen.txt)" = host && echo three >c.txt'
check "draft 3: sees both sessions' edits and the host's" "$rc" 0
id=$(session_id)
check "draft 3: record" "$(field snapshot_draft "$XDG_STATE_HOME/aisb/sessions/$id/record")" "e2e revision 5"
check "draft 3: the workspace still untouched" "$(cat "$dws/a.txt") $(ls "$dws" | tr '\n' ,)" "a a.txt,b.txt,"
rc=0; "$aisb" draft commit e2e --workspace "$dws" --expect-revision 5 >"$tmp/out" 2>"$tmp/err" || rc=$?
check "draft commit: exit" "$rc" 0
check "draft commit: the workspace" "$(tr '\n' , <"$dws/a.txt")$(cat "$dws/b.txt" "$dws/seen.txt" "$dws/c.txt" | tr '\n' ,)" "one,two,host,host,three,"
dsession 'echo draft >a.txt'
id=$(session_id)
echo "host again" >"$dws/a.txt"
dsession 'echo ran >ran.txt'
check "draft conflict: exit" "$rc" 65
if grep -q "$dws/a.txt" "$tmp/err"; then ok; else bad "draft conflict: $(cat "$tmp/err")"; fi
id=$(session_id)
check "draft conflict: no command ran" "$(find "$XDG_STATE_HOME/aisb" -name ran.txt | wc -l | tr -d ' ')" 0
"$aisb" draft discard e2e --workspace "$dws" >/dev/null 2>&1 || bad "draft discard"

# one writer per workspace: while a bind session runs, a second one is
# refused (75) naming it; a snapshot session runs alongside
wws=$tmp/writerws
mkdir -m 0700 "$wws"
(cd "$wws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- \
    sh -c 'touch started; sleep 40; touch ended') >"$tmp/w1.out" 2>"$tmp/w1.err" </dev/null &
w1=$!
for _ in $(seq 600); do [ -e "$wws/started" ] && break; sleep 0.1; done
id1=$(session_id)
rc=0; (cd "$wws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- \
    sh -c 'touch second') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "two writers: the second refused" "$rc" 75
if grep -q "is being written by session $id1" "$tmp/err"; then ok; else bad "two writers: $(cat "$tmp/err")"; fi
[ -e "$wws/second" ] && bad "two writers: the second ran" || ok
id=$(session_id)
rc=0; (cd "$wws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo alongside >along.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "two writers: a snapshot session alongside" "$rc" 0
id=$(session_id)
rc=0; (cd "$wws" && "$aisb" --read-only --net none --policy "$tmp/policy.yaml" \
    -- cat started) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "two writers: a read-only session alongside" "$rc" 0
[ -e "$wws/ended" ] && bad "two writers: the first had ended already" || ok
id=$(session_id)
wait "$w1" || bad "two writers: the first session failed: $(cat "$tmp/w1.err")"
rc=0; (cd "$wws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- \
    sh -c 'touch third') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "two writers: free once the first ended" "$rc" 0
id=$(session_id)

# a project config may choose snapshot, never direct
printf 'workspace_mode: snapshot\n' >"$ws/.aisb.yaml"
rc=0; (cd "$ws" && "$aisb" --apply=never --net none --policy "$tmp/policy.yaml" -- \
    sh -c 'echo p >project.txt') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "project snapshot: exit" "$rc" 0
[ -e "$ws/project.txt" ] && bad "project snapshot: written directly" || ok
rm -f "$ws/.aisb.yaml"

# --- 2. an ordinary user, rootless podman, in that user's 0700 folder ---
# the images the root sessions ran and their base handed over (e2e_user)
e2e_user aisbsnap
user=$e2e_user_name uid=$e2e_uid home=$e2e_home
install -m 0644 -o "$user" "$tmp/policy.yaml" "$home/policy.yaml"
uws=$home/proj
install -d -m 0700 -o "$user" -g "$user" "$uws"
make_repo "$uws"
chown -R "$user:$user" "$uws"
tree "$uws" >"$tmp/before"
rc=0; (cd "$uws" && as_user aisb --snapshot --apply=never --net none \
    --policy "$home/policy.yaml" -- sh -c "$agent") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: exit" "$rc" 0
check "user: .env not in the stage" "$(grep -c '^.env absent$' "$tmp/out")" 1
check "user: hook not in the stage" "$(grep -c '^hook absent$' "$tmp/out")" 1
tree "$uws" >"$tmp/after"
check "user: host unchanged before apply" "$(cmp -s "$tmp/before" "$tmp/after" && echo same)" same
id=$(session_id "$home/.local/state")
usd=$home/.local/state/aisb/sessions/$id
check "user: stage owned by the user" "$(stat -c %u "$usd/stage/new.txt")" "$uid"
tree "$usd/stage" >"$tmp/stage"
rc=0; as_user aisb apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "user: apply exit" "$rc" 0
tree "$uws" >"$tmp/after"
check "user: host matches the stage" "$(cmp -s "$tmp/stage" "$tmp/after" && echo same)" same
check "user: owners" "$(cd "$uws" && stat -c %u new.txt made made/sub/deep.txt edit.txt | sort -u)" "$uid"
check "user: .env kept" "$(cat "$uws/.env")" "SECRET=e2e-not-a-real-secret"
# undone by the user: as before the session, the files the user's
rc=0; as_user aisb undo "${usd##*/}" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "user: undo exit" "$rc" 0
tree "$uws" >"$tmp/undone"
check "user: undo: as before the session" "$(cmp -s "$tmp/before" "$tmp/undone" && echo same)" same
check "user: undo: owners" "$(cd "$uws" && stat -c %u del.txt sub sub/deeper/f.txt edit.txt | sort -u)" "$uid"
check "user: undone" "$(field state "$usd/snapshot")" undone
# one writer per workspace across users: the user's bind session holds
# the folder's lock; root's is refused, naming another user's session
(cd "$uws" && as_user aisb --net none --policy "$home/policy.yaml" -- \
    sh -c 'touch started; sleep 15') >"$tmp/w1.out" 2>"$tmp/w1.err" </dev/null &
w1=$!
for _ in $(seq 600); do [ -e "$uws/started" ] && break; sleep 0.1; done
uid1=$(session_id "$home/.local/state")
rc=0; (cd "$uws" && as_user aisb --net none --policy "$home/policy.yaml" -- \
    true) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: two writers refused" "$rc" 75
if grep -q "session $uid1" "$tmp/err"; then ok; else bad "user two writers: $(cat "$tmp/err")"; fi
id=$(session_id "$home/.local/state")
e2e_session_mark
rc=0; (cd "$uws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "root while the user writes: refused" "$rc" 75
if grep -q "a session of another user" "$tmp/err"; then ok; else bad "root vs user: $(cat "$tmp/err")"; fi
id=$(session_id)
wait "$w1" || bad "user writer: its session failed: $(cat "$tmp/w1.err")"
rm -f "$uws/started"

# a draft that persists, rootless: three sessions, a host edit between
udws=$home/draftproj
install -d -m 0700 -o "$user" -g "$user" "$udws"
printf 'a\n' >"$udws/a.txt"
printf 'b\n' >"$udws/b.txt"
chown "$user:$user" "$udws/a.txt" "$udws/b.txt"
udsession() {
	rc=0; (cd "$udws" && as_user aisb --draft e2e --net none \
	    --policy "$home/policy.yaml" -- sh -c "$1") >"$tmp/out" \
	    2>"$tmp/err" </dev/null || rc=$?
}
udsession 'echo one >a.txt'
check "user draft 1: exit" "$rc" 0
id=$(session_id "$home/.local/state")
as_user sh -c "echo host >$udws/b.txt"
udsession 'cat b.txt >seen.txt; echo two >>a.txt'
check "user draft 2: exit" "$rc" 0
id=$(session_id "$home/.local/state")
udsession 'test "$(cat seen.txt)" = host && echo three >c.txt'
check "user draft 3: exit" "$rc" 0
id=$(session_id "$home/.local/state")
check "user draft: the workspace untouched" "$(cat "$udws/a.txt")" a
rc=0; (cd "$udws" && as_user aisb draft commit e2e) >"$tmp/out" 2>"$tmp/err" || rc=$?
check "user draft commit: exit" "$rc" 0
check "user draft commit: the workspace" "$(tr '\n' , <"$udws/a.txt")$(cat "$udws/seen.txt" "$udws/c.txt" | tr '\n' ,)" "one,two,host,three,"
check "user draft commit: owners" "$(stat -c %u "$udws/a.txt" "$udws/c.txt" | sort -u)" "$uid"

# core.hooksPath from the user's own ~/.gitconfig: a hook the command
# writes there is skipped, and the user's next commit runs nothing
printf '[core]\n\thooksPath = .githooks\n' >"$home/.gitconfig"
chown "$user:$user" "$home/.gitconfig"
rc=0; (cd "$uws" && as_user aisb --snapshot --apply=never --net none \
    --policy "$home/policy.yaml" -- sh -c 'mkdir -p .githooks &&
printf "#!/bin/sh\ntouch /tmp/aisb-e2e-hook-ran\n" >.githooks/pre-commit &&
chmod 0755 .githooks/pre-commit && echo ok >hooked.txt') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user hooksPath: exit" "$rc" 0
id=$(session_id "$home/.local/state")
rc=0; as_user aisb changes "$id" >"$tmp/changes" 2>&1 || rc=$?
if grep -q '^S .githooks/pre-commit (git hooks run code (core.hooksPath))$' "$tmp/changes"; then ok; else
	bad "user hooksPath: not skipped: $(cat "$tmp/changes")"; fi
rc=0; as_user aisb apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "user hooksPath: apply" "$rc" 0
[ -e "$uws/.githooks/pre-commit" ] && bad "user hooksPath: the hook was written back" || ok
check "user hooksPath: the rest applied" "$(cat "$uws/hooked.txt" 2>/dev/null)" ok
rm -f "$home/.gitconfig"

# a failed command proposes nothing, rootless too
rc=0; (cd "$uws" && as_user aisb --snapshot --apply=never --net none \
    --policy "$home/policy.yaml" -- sh -c 'echo x >nope.txt; false') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: failed exit" "$rc" 1
[ -e "$uws/nope.txt" ] && bad "user: failed command's file written" || ok

# --- 3. root in that user's folder, as under sudo: the owner's files ----
sws=$home/sudo-proj
e2e_session_mark
install -d -m 0700 -o "$user" -g "$user" "$sws"
make_repo "$sws"
chown -R "$user:$user" "$sws"
rc=0; (cd "$sws" && SUDO_UID=4242 SUDO_GID=4242 SUDO_USER=nobody "$aisb" --snapshot \
    --apply=never --net none --policy "$tmp/policy.yaml" -- sh -c "$agent") \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "sudo: exit" "$rc" 0
id=$(session_id)
ssd=$XDG_STATE_HOME/aisb/sessions/$id
check "sudo: stage given to the owner" "$(stat -c %u "$ssd/stage/new.txt" "$ssd/stage/edit.txt" | sort -u)" "$uid"
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "sudo: apply exit" "$rc" 0
check "sudo: owners after apply" "$(cd "$sws" && stat -c %u new.txt made made/sub made/sub/deep.txt edit.txt run.sh | sort -u)" "$uid"
check "sudo: the owner reads the edit" "$(cd "$sws" && as_user sh -c 'cat edit.txt >/dev/null && echo readable')" readable
# undone by root: what it puts back is the owner's, as what apply wrote
rc=0; "$aisb" undo "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "sudo: undo exit" "$rc" 0
check "sudo: owners after undo" "$(cd "$sws" && stat -c %u del.txt sub sub/deeper sub/deeper/f.txt edit.txt run.sh | sort -u)" "$uid"
[ -e "$sws/new.txt" ] || [ -e "$sws/made" ] && bad "sudo: undo left what apply made" || ok
check "sudo: no mount left" "$(grep -c " $tmp/state" /proc/self/mounts || true)" 0

# root in the user's folder: what the user cannot read (another user's
# 0600 file, a folder of 0700) and what is mounted in the folder never
# reach the stage, where the command would read them; the hooks folder
# the user's own ~/.gitconfig names is guarded (root reads the owner's
# home, not its own); git run by the user afterwards runs nothing
rws=$home/sudo-guard
install -d -m 0700 -o "$user" -g "$user" "$rws"
as_user git -C "$rws" init -q
as_user git -C "$rws" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
printf 'keep\n' >"$rws/keep.txt"
printf 'another user'"'"'s\n' >"$rws/other-secret.txt"
chown 4343:4343 "$rws/other-secret.txt" && chmod 0600 "$rws/other-secret.txt"
mkdir -p "$rws/closed" && printf 'x\n' >"$rws/closed/f"
chown -R 4343:4343 "$rws/closed" && chmod 0700 "$rws/closed"
mkdir -p "$rws/mnt" && chown "$user:$user" "$rws/keep.txt" "$rws/mnt"
mount -t tmpfs -o size=1m aisb-e2e-snap "$rws/mnt" && mnt=$rws/mnt
printf 'mounted\n' >"$rws/mnt/secret"
printf '[core]\n\thooksPath = .githooks\n' >"$home/.gitconfig"
chown "$user:$user" "$home/.gitconfig"
rm -f /tmp/aisb-e2e-hook-ran
guard='for f in other-secret.txt closed/f mnt/secret; do
  cat "$f" >/dev/null 2>&1 && echo "read $f" || echo "no $f"; done
mkdir -p .githooks
printf "#!/bin/sh\ntouch /tmp/aisb-e2e-hook-ran\n" >.githooks/pre-commit
chmod 0755 .githooks/pre-commit
echo new >guard-new.txt'
rc=0; (cd "$rws" && SUDO_UID=4242 SUDO_GID=4242 SUDO_USER=nobody "$aisb" --snapshot \
    --apply=never --net none --policy "$tmp/policy.yaml" -- sh -c "$guard") \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "sudo guard: exit" "$rc" 0
for f in other-secret.txt closed/f mnt/secret; do
	check "sudo guard: $f not in the stage" "$(grep -c "^no $f\$" "$tmp/out")" 1
done
if grep -q "left out 2 entries the workspace's owner cannot read" "$tmp/err" &&
    grep -q 'left out 1 mount point' "$tmp/err"; then ok; else
	bad "sudo guard: what was left out not said: $(cat "$tmp/err")"; fi
id=$(session_id)
"$aisb" changes "$id" >"$tmp/changes" 2>&1 || bad "sudo guard: changes failed"
if grep -q '^S .githooks/pre-commit (git hooks run code (core.hooksPath))$' "$tmp/changes"; then ok; else
	bad "sudo guard: hook not skipped: $(cat "$tmp/changes")"; fi
rc=0; "$aisb" apply "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "sudo guard: apply" "$rc" 0
[ -e "$rws/.githooks/pre-commit" ] && bad "sudo guard: the hook was written back" || ok
check "sudo guard: other's file kept" "$(stat -c %u:%a "$rws/other-secret.txt")" 4343:600
check "sudo guard: mount untouched" "$(cat "$rws/mnt/secret")" mounted
check "sudo guard: new file the owner's" "$(stat -c %u "$rws/guard-new.txt")" "$uid"
as_user git -C "$rws" -c user.name=t -c user.email=t@t commit -q --allow-empty -m two ||
    bad "sudo guard: the user's commit failed"
[ -e /tmp/aisb-e2e-hook-ran ] && bad "sudo guard: a hook ran at the user's commit" || ok
umount -l "$rws/mnt" && mnt=
rm -f "$home/.gitconfig" /tmp/aisb-e2e-hook-ran

# retention: with the user config's cap, a session as it ends removes the
# oldest settled session folders, never a draft that waits, nor itself
applied=$id
rc=0; (cd "$ws" && "$aisb" --snapshot --apply=never --net none \
    --policy "$tmp/policy.yaml" -- sh -c 'echo waits >waits.txt') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "retention: a draft that waits" "$rc" 0
waits=$(session_id)
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'retention: 1k\n' >>"$XDG_CONFIG_HOME/aisb/config.yaml"
rc=0; (cd "$ws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "retention: the session" "$rc" 0
last=$(session_id)
if grep -q '^aisb: retention: [0-9]* older session folder(s) and [0-9]* draft transaction(s) removed' "$tmp/err" &&
    grep -q 'over the cap of 1 KiB' "$tmp/err"; then ok; else bad "retention said: $(cat "$tmp/err")"; fi
sd=$XDG_STATE_HOME/aisb/sessions
[ -d "$sd/$applied" ] && bad "retention: an applied session kept" || ok
[ -d "$sd/$waits" ] && ok || bad "retention: the waiting draft removed"
[ -d "$sd/$last" ] && ok || bad "retention: the session removed itself"
# what is left waits, is half done, or has no record yet (starting)
for d in "$sd"/*; do
	[ "${d##*/}" != "$last" ] || continue
	st=$(sed -n 's/^state //p' "$d/snapshot" 2>/dev/null || true)
	case $st in
	failed|unchanged|applied|discarded|undone) bad "retention: ${d##*/} ($st) kept" ;;
	'') [ -e "$d/record" ] && bad "retention: ${d##*/} (a record, no draft) kept" || ok ;;
	*) ok ;;
	esac
done
sed -i '/^retention:/d' "$XDG_CONFIG_HOME/aisb/config.yaml"

echo "snapshot: $pass passed, $fail failed"
[ "$fail" = 0 ]
