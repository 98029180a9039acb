#!/bin/bash
# Snapshot sessions' commands without podman (tests/e2e/snapshot.sh runs
# real sessions): aisb changes|apply|discard|recover ID and transactions
# on drafts in each state, on sessions that are not snapshot sessions, on
# corrupt state files; the options' refusals; one line and the
# documented exit code for each refusal.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"
cd "$tmp/ws"
lines() { wc -l <"$tmp/err" | tr -d ' '; }

sessions=$XDG_STATE_HOME/aisb/sessions
# draft ID STATE [TX]: a session folder with a state file and no stage
draft() {
	mkdir -p "$sessions/$1"
	cat >"$sessions/$1/snapshot" <<EOF
# aisb snapshot state 1 (docs/snapshot.md)
workspace $tmp/ws
stage $sessions/$1/stage
owner 0:0
state $2
exit 0
changes 2
digest $(printf '%064d' 7)
tx ${3:-0}
updated 0
exclude *.log
EOF
}

# 1. no state folder yet: an empty listing
run "$aisb" transactions
check "transactions, none: exit" "$rc" 0
check "transactions, none: header only" "$(wc -l <"$tmp/out" | tr -d ' ')" 1

# 2. no such session, not an id
for c in changes apply discard recover; do
	run "$aisb" $c 0123abcd
	check "$c nothing: exit" "$rc" 78
	check "$c nothing: one line" "$(lines)" 1
	run "$aisb" $c ../etc
	check "$c not an id: exit" "$rc" 78
	check "$c not an id: one line" "$(lines)" 1
	run "$aisb" $c
	check "$c without ID: exit" "$rc" 78
done

# 3. a session that is not a snapshot session
mkdir -p "$sessions/aaaaaaaaaaaaaaaaaaaaaaaa"
for c in changes apply discard recover; do
	run "$aisb" $c aaaa
	check "$c direct session: exit" "$rc" 78
	if grep -q 'not a snapshot session' "$tmp/err"; then ok; else bad "$c direct session: $(cat "$tmp/err")"; fi
done

# 4. a corrupt state file: refused, not guessed at
mkdir -p "$sessions/bbbbbbbbbbbbbbbbbbbbbbbb"
printf 'state kept\n' >"$sessions/bbbbbbbbbbbbbbbbbbbbbbbb/snapshot"
run "$aisb" apply bbbb
check "corrupt: apply exit" "$rc" 78
if grep -q 'not a snapshot state' "$tmp/err"; then ok; else bad "corrupt: $(cat "$tmp/err")"; fi
# a second workspace line (a pattern with a line break could have written
# one): refused, never the last one taken
draft bbbbbbbbbbbbbbbbbbbbbbbb kept
printf 'workspace /etc\n' >>"$sessions/bbbbbbbbbbbbbbbbbbbbbbbb/snapshot"
run "$aisb" apply bbbb
check "repeated workspace: apply exit" "$rc" 78
if grep -q 'repeated' "$tmp/err"; then ok; else bad "repeated workspace: $(cat "$tmp/err")"; fi
head -c 20000 /dev/zero | tr '\0' x >"$sessions/bbbbbbbbbbbbbbbbbbbbbbbb/snapshot"
run "$aisb" changes bbbb
check "oversized state: exit" "$rc" 78
rm -rf "$sessions/bbbbbbbbbbbbbbbbbbbbbbbb"

# 5. drafts in each state
draft cccccccccccccccccccccccc failed
run "$aisb" apply cccc
check "failed: apply" "$rc" 78
if grep -q 'nothing to apply (its draft is failed)' "$tmp/err"; then ok; else bad "failed: $(cat "$tmp/err")"; fi
run "$aisb" changes cccc
check "failed: changes" "$rc" 0
if grep -q '^(no change set: the command did not succeed)$' "$tmp/out"; then ok; else bad "failed changes: $(cat "$tmp/out")"; fi
run "$aisb" recover cccc
check "failed: recover" "$rc" 0
if grep -q 'no transaction; nothing to recover' "$tmp/out"; then ok; else bad "failed recover: $(cat "$tmp/out")"; fi

draft dddddddddddddddddddddddd applied 1
run "$aisb" apply dddd
check "applied: apply again" "$rc" 0
if grep -q 'already applied' "$tmp/err"; then ok; else bad "applied: $(cat "$tmp/err")"; fi
run "$aisb" discard dddd
check "applied: discard" "$rc" 78

draft eeeeeeeeeeeeeeeeeeeeeeee recovery 2
run "$aisb" apply eeee
check "recovery: apply" "$rc" 74
if grep -q 'aisb recover eeeeeeeeeeeeeeeeeeeeeeee' "$tmp/err"; then ok; else bad "recovery: $(cat "$tmp/err")"; fi
run "$aisb" discard eeee
check "recovery: discard" "$rc" 74

draft ffffffffffffffffffffffff kept
# the change set on file is missing: nothing is applied
run "$aisb" apply ffff
check "kept, no change set: apply" "$rc" 78
check "kept, no change set: state" "$(sed -n 's/^state //p' "$sessions/ffffffffffffffffffffffff/snapshot")" kept
run "$aisb" discard ffff
check "kept: discard" "$rc" 0
check "kept: discarded" "$(sed -n 's/^state //p' "$sessions/ffffffffffffffffffffffff/snapshot")" discarded
run "$aisb" sessions show ffff
if grep -q '^# snapshot: draft discarded now, 2 change(s), 0 transaction(s)' "$tmp/out"; then ok; else
	bad "sessions show: $(cat "$tmp/out")"; fi
# the patterns of the session survive a rewrite of its state
check "kept: exclude kept" "$(sed -n 's/^exclude //p' "$sessions/ffffffffffffffffffffffff/snapshot")" '*.log'

# a staged draft whose launcher runs is not discarded under it
draft 111111111111111111111111 staged
printf '%s %s\n' $$ "$(awk '{ print $22 }' /proc/$$/stat)" >"$sessions/111111111111111111111111/launcher"
run "$aisb" discard 1111
check "staged, launcher alive: discard" "$rc" 78
# ...and is, once it is gone
printf '999999999 1\n' >"$sessions/111111111111111111111111/launcher"
run "$aisb" discard 1111
check "staged, launcher gone: discard" "$rc" 0

# aisb clean: a staged draft whose launcher runs keeps its stage; once the
# launcher is gone, its stage goes and the draft proposes nothing
if command -v podman >/dev/null; then
	draft 222222222222222222222222 staged
	mkdir -p "$sessions/222222222222222222222222/stage/sub"
	echo x >"$sessions/222222222222222222222222/stage/sub/f"
	printf '%s %s\n' $$ "$(awk '{ print $22 }' /proc/$$/stat)" >"$sessions/222222222222222222222222/launcher"
	run "$aisb" clean
	check "clean, launcher alive: exit" "$rc" 0
	if [ -f "$sessions/222222222222222222222222/stage/sub/f" ]; then ok; else bad "clean removed a live session's stage"; fi
	check "clean, launcher alive: state" "$(sed -n 's/^state //p' "$sessions/222222222222222222222222/snapshot")" staged
	printf '999999999 1\n' >"$sessions/222222222222222222222222/launcher"
	run "$aisb" clean
	check "clean, launcher gone: exit" "$rc" 0
	if [ -e "$sessions/222222222222222222222222/stage" ]; then bad "clean kept a dead session's stage"; else ok; fi
	check "clean, launcher gone: state" "$(sed -n 's/^state //p' "$sessions/222222222222222222222222/snapshot")" failed
	if grep -q '^removed the stage of session 222222222222222222222222: its launcher is gone' "$tmp/out" &&
	    grep -q ' 1 snapshot stage(s)' "$tmp/out"; then ok; else bad "clean said: $(cat "$tmp/out")"; fi
	# nothing left to do the second time
	run "$aisb" clean
	if grep -q ' 0 snapshot stage(s)' "$tmp/out"; then ok; else bad "clean again said: $(cat "$tmp/out")"; fi
else
	echo "# podman not installed: aisb clean's stage step not run"
fi

run "$aisb" transactions
check "transactions: exit" "$rc" 0
for want in "cccccccccccccccccccccccc  failed" "dddddddddddddddddddddddd  applied" \
    "eeeeeeeeeeeeeeeeeeeeeeee  recovery" "ffffffffffffffffffffffff  discarded"; do
	if grep -q "^$want " "$tmp/out"; then ok; else bad "transactions lack '$want': $(cat "$tmp/out")"; fi
done
if grep -q aaaaaaaa "$tmp/out"; then bad "transactions list a direct session"; else ok; fi

# a pattern with a line break: refused before anything is staged
run "$aisb" --snapshot --net none --snapshot-exclude "$(printf 'x\nworkspace /etc')" -- true
check "pattern with a line break: exit" "$rc" 78
if grep -q 'on one line' "$tmp/err"; then ok; else bad "pattern with a line break: $(cat "$tmp/err")"; fi
# 5b. links on the way (docs/snapshot.md): one in the state folder's path
# is resolved once, at the start; a session folder that is itself a link
# is refused, and nothing where it points is touched
ln -s "$XDG_STATE_HOME" "$tmp/statelink"
draft 333333333333333333333333 kept
mkdir -p "$sessions/333333333333333333333333/stage"
run env XDG_STATE_HOME="$tmp/statelink" "$aisb" transactions
check "state via a link: transactions" "$rc" 0
if grep -q '^333333333333333333333333  kept ' "$tmp/out"; then ok; else bad "state via a link: $(cat "$tmp/out")"; fi
run env XDG_STATE_HOME="$tmp/statelink" "$aisb" discard 3333
check "state via a link: discard" "$rc" 0
if [ -e "$sessions/333333333333333333333333/stage" ]; then bad "state via a link: stage kept"; else ok; fi
# a state file naming its stage through a link (not one aisb writes: it
# writes real paths): refused, and the stage is not removed through it
draft 444444444444444444444444 kept
mkdir -p "$sessions/444444444444444444444444/stage"
echo keep >"$sessions/444444444444444444444444/stage/f"
sed -i "s|^stage .*|stage $tmp/statelink/aisb/sessions/444444444444444444444444/stage|" \
    "$sessions/444444444444444444444444/snapshot"
run "$aisb" discard 4444
if [ "$rc" != 0 ]; then ok; else bad "a stage named through a link was discarded"; fi
if grep -q 'Too many levels of symbolic links' "$tmp/err"; then ok; else bad "stage through a link: $(cat "$tmp/err")"; fi
if [ -f "$sessions/444444444444444444444444/stage/f" ]; then ok; else bad "discard removed a stage through a link"; fi
check "stage through a link: state" "$(sed -n 's/^state //p' "$sessions/444444444444444444444444/snapshot")" kept
# a session folder that is itself a link is not taken
mkdir -p "$tmp/elsewhere/stage"
echo keep >"$tmp/elsewhere/stage/f"
draft 555555555555555555555555 kept
mv "$sessions/555555555555555555555555/snapshot" "$tmp/elsewhere/snapshot"
rmdir "$sessions/555555555555555555555555"
ln -s "$tmp/elsewhere" "$sessions/555555555555555555555555"
run "$aisb" discard 5555
if [ "$rc" != 0 ]; then ok; else bad "a linked session folder was discarded"; fi
if [ -f "$tmp/elsewhere/stage/f" ]; then ok; else bad "discard went through a linked session folder"; fi
rm -f "$sessions/555555555555555555555555"
rm -rf "$sessions/444444444444444444444444"

# 5c. aisb recover, as root, of an apply into another user's tree that
# ended before the draft said so: what it wrote (journal "done") or what
# its roll back put back from the backups goes to the tree's owner, as
# apply's own hand-back does; never left root's
if [ "$(id -u)" = 0 ]; then
	# settled_tx ID BODY JOURNAL-TAIL: a draft "applying", its tx 1 with
	# the change set BODY (digest added) and the journal
	settled_tx() {
		local d=$sessions/$1 digest
		draft "$1" applying 1
		sed -i "s|^workspace .*|workspace $tmp/own|; s|^owner .*|owner 4242:4243|" "$d/snapshot"
		mkdir -p "$d/tx/1/backup"
		printf '%s' "$2" >"$d/tx/1/changes"
		digest=$(sha256sum <"$d/tx/1/changes" | cut -d' ' -f1)
		printf 'digest %s\n' "$digest" >>"$d/tx/1/changes"
		printf 'aisb-snap-journal 1\nintent %s 1\n%s' "$digest" "$3" >"$d/tx/1/journal"
	}
	sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
	rm -rf "$tmp/own"
	mkdir -p "$tmp/own"
	chown 4242:4243 "$tmp/own"
	printf 'new\n' >"$tmp/own/new.txt"		# root's, as apply left it
	settled_tx 666666666666666666666666 "aisb-snap-changes 1
A f 0 644 0 4 - $(sha 'new
') - - - new.txt
" 'ready
done
'
	run "$aisb" recover 6666
	check "recover after done: exit" "$rc" 0
	check "recover after done: owner" "$(stat -c %u:%g "$tmp/own/new.txt")" 4242:4243
	check "recover after done: state" "$(sed -n 's/^state //p' "$sessions/666666666666666666666666/snapshot")" applied
	# interrupted after a file was replaced: rolled back from the backup,
	# the restored file (a new inode, root's) given to the owner
	printf 'agent\n' >"$tmp/own/edit.txt"
	settled_tx 777777777777777777777777 "aisb-snap-changes 1
M f 644 644 5 6 $(sha 'user
') $(sha 'agent
') - - - edit.txt
" 'ready
'
	printf 'user\n' >"$sessions/777777777777777777777777/tx/1/backup/0"
	run "$aisb" recover 7777
	check "recover, rolled back: exit" "$rc" 0
	check "recover, rolled back: content" "$(cat "$tmp/own/edit.txt")" user
	check "recover, rolled back: owner" "$(stat -c %u:%g "$tmp/own/edit.txt")" 4242:4243
	rm -rf "$tmp/own" "$sessions/666666666666666666666666" "$sessions/777777777777777777777777"
else
	echo "# not root: recover's hand-back of ownership not run"
fi

# 6. options: no unattended yes; choices; one line each
for args in "--apply=yes true" "--apply always true" "--workspace-mode copy true" \
    "--snapshot-exclude= true"; do
	run "$aisb" $args
	check "aisb $args: exit" "$rc" 78
	check "aisb $args: one line" "$(lines)" 1
done
run "$aisb" --snapshot --print-config
check "print-config: exit" "$rc" 0
if grep -Eq '^workspace_mode +snapshot \(flag: --snapshot\)$' "$tmp/out"; then ok; else
	bad "print-config: $(grep workspace_mode "$tmp/out")"; fi
printf 'workspace_mode: direct\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --print-config
check "project direct: exit" "$rc" 78
if grep -q "may only say 'workspace_mode: snapshot' or 'workspace_mode: readonly'" "$tmp/err"; then ok; else bad "project direct: $(cat "$tmp/err")"; fi
rm -f "$tmp/ws/.aisb.yaml"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
