#!/bin/bash
# Drafts that persist (aisb --draft NAME, aisb draft ...) without podman:
# tests/cli/snapdraft runs the launcher's own --draft path around a
# command run in the stage (tests/e2e/snapshot.sh runs real sessions).
# Three sessions continue one draft with a host edit in between: the
# workspace untouched until commit, the host's unrelated edit seen by the
# next session, the draft's own edits kept from session to session; the
# commit with a wrong expected revision refused, with the right one
# written; a host edit of a file the draft changed, and a file where the
# draft made a folder, refused before anything runs; a failed command
# leaves the draft as it was; a draft in use refused naming the session;
# discard, ls, status, recover; where no drafts folder or no state folder
# is.
. "$(dirname "$0")/snaplib.sh"
field() { sed -n "s/^$1 //p" "$tmp/out"; }
status() { run "$aisb" draft status "$1"; }
tree() { (find . -mindepth 1 -printf '%P %m ' -exec sh -c \
    'if [ -f "$1" ]; then cat "$1"; else echo; fi' _ {} \; | sort); }

printf 'a\n' >a.txt
printf 'b\n' >b.txt
printf 'keep\n' >keep.txt
tree >"$tmp/ws0"

# 0. no drafts folder yet: aisb draft names it, makes nothing; no state
# folder at all: said, the session and the command in the same words
run "$aisb" draft ls
check "ls, none: exit" "$rc" 0
check "ls, none: header only" "$(wc -l <"$tmp/out" | tr -d ' ')" 1
check "ls, none: nothing made" "$(ls -A "$XDG_STATE_HOME/aisb")" sessions
run env HOME=relative XDG_STATE_HOME= "$aisb" draft ls
check "no state folder: exit" "$rc" 78
said "no state folder: said" "^aisb: no state folder for the drafts: set XDG_STATE_HOME or HOME to an absolute path\$"

# 1. the first session makes the draft; the workspace is untouched
session --draft d1 -- sh -c 'echo one >a.txt; echo new >n1.txt'
check "session 1: exit" "$rc" 0
[ "$rc" = 0 ] || cat "$tmp/err" >&2
tree >"$tmp/now"
check "session 1: the workspace untouched" "$(cmp -s "$tmp/ws0" "$tmp/now" && echo same)" same
if grep -q 'draft d1: revision 2, 2 change(s) waiting' "$tmp/err"; then ok; else bad "session 1 said: $(cat "$tmp/err")"; fi
status d1
check "status: state" "$(field state)" kept
check "status: revision" "$(field revision)" 2
check "status: changes" "$(field changes)" 2
check "status: the workspace has not moved" "$(field workspace_moved)" no

# 2. a host edit between sessions: the next one sees it
printf 'host\n' >b.txt
status d1
case $(field workspace_moved) in yes*) ok ;; *) bad "status after a host edit: $(cat "$tmp/out")" ;; esac
session --draft d1 -- sh -c 'cat b.txt >seen-b.txt; echo two >>a.txt'
check "session 2: exit" "$rc" 0
[ "$rc" = 0 ] || cat "$tmp/err" >&2
if grep -q "draft d1: took in the workspace's edits" "$tmp/err"; then ok; else bad "session 2 said: $(cat "$tmp/err")"; fi
check "session 2: the workspace has only the host's edit" "$(cat a.txt) $(cat b.txt) $([ -e seen-b.txt ] && echo seen || echo unseen)" "a host unseen"

# 3. the third session finds what the first two wrote
session --draft d1 -- sh -c 'test "$(cat a.txt)" = "one
two" && test "$(cat n1.txt)" = new && test "$(cat seen-b.txt)" = host && echo three >c.txt'
check "session 3: the draft's edits and the host's are there" "$rc" 0
[ "$rc" = 0 ] || cat "$tmp/err" >&2
status d1
rev=$(field revision)
check "revision after a sync and three sessions" "$rev" 5
run "$aisb" draft changes d1
for want in 'M a.txt' 'A n1.txt' 'A seen-b.txt' 'A c.txt'; do
	if grep -qxF -- "$want" "$tmp/out"; then ok; else bad "changes lack '$want': $(cat "$tmp/out")"; fi
done
grep -q '^M b.txt' "$tmp/out" && bad "the host's own edit listed as the draft's" || ok

# 4. commit: another revision refused; the right one writes
run "$aisb" draft commit d1 --expect-revision $((rev - 1))
check "commit at another revision: exit" "$rc" 65
if grep -q "draft d1 is at revision $rev, not $((rev - 1))" "$tmp/err"; then ok; else bad "commit said: $(cat "$tmp/err")"; fi
[ -e c.txt ] && bad "commit at another revision wrote" || ok
run "$aisb" draft commit d1 --expect-revision "$rev"
check "commit: exit" "$rc" 0
[ "$rc" = 0 ] || cat "$tmp/err" >&2
check "commit: the workspace" "$(cat a.txt | tr '\n' ,)$(cat b.txt) $(cat n1.txt) $(cat seen-b.txt) $(cat c.txt) $(cat keep.txt)" "one,two,host new host three keep"
status d1
check "after commit: nothing waits" "$(field changes) $(field state)" "0 kept"
check "after commit: a revision more" "$(field revision)" $((rev + 1))

# 5. a host edit of a file the draft changed: refused before anything runs
session --draft d1 -- sh -c 'echo draft >a.txt'
check "session 4: exit" "$rc" 0
printf 'host again\n' >a.txt
status d1
rev=$(field revision)
session --draft d1 -- sh -c 'echo ran >ran.txt'
check "file conflict: exit" "$rc" 65
if grep -q "draft d1: the workspace changed where the draft did: $ws/a.txt" "$tmp/err"; then ok; else bad "file conflict said: $(cat "$tmp/err")"; fi
status d1
check "file conflict: the draft as it was" "$(field revision) $(field changes)" "$rev 1"
check "file conflict: nothing ran" "$(find "$XDG_STATE_HOME/aisb/drafts" -name ran.txt | wc -l | tr -d ' ')" 0
run "$aisb" draft discard d1
check "discard: exit" "$rc" 0
status d1
check "discarded" "$(field state)" discarded

# 6. an ancestor conflict: a file where the draft made a folder
session --draft d2 -- sh -c 'mkdir made && echo x >made/x'
check "d2 session: exit" "$rc" 0
printf 'a file\n' >made
session --draft d2 -- true
check "ancestor conflict: exit" "$rc" 65
if grep -q "made" "$tmp/err"; then ok; else bad "ancestor conflict said: $(cat "$tmp/err")"; fi
rm -f made

# 7. a failed command leaves the draft as it was
session --draft d3 -- sh -c 'echo kept >k.txt'
status d3
rev=$(field revision)
session --draft d3 -- sh -c 'echo lost >k.txt; echo lost >l.txt; exit 3'
check "failed command: its exit" "$rc" 3
status d3
check "failed command: the draft as it was" "$(field revision) $(field changes)" "$rev 1"
run "$aisb" draft changes d3 --diff
if grep -qx '+kept' "$tmp/out" && ! grep -q lost "$tmp/out"; then ok; else bad "diff after a failed command: $(cat "$tmp/out")"; fi

# 8. a draft in use: refused, naming the session that holds it
ddir=$(ls -d "$XDG_STATE_HOME"/aisb/drafts/*-d3)
printf 'feedfacefeedfacefeedface\n' >"$ddir/session"
flock -o "$ddir/snapshot.lock" sleep 5 &
holder=$!
sleep 0.5
session --draft d3 -- true
check "in use: exit" "$rc" 75
if grep -q 'draft d3 is in use by session feedfacefeedfacefeedface' "$tmp/err"; then ok; else bad "in use said: $(cat "$tmp/err")"; fi
status d3
check "status: busy" "$(field busy)" feedfacefeedfacefeedface
run "$aisb" draft commit d3
check "commit while in use: exit" "$rc" 75
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null || true

# 9. ls, recover of a settled draft, names and unknown drafts
run "$aisb" draft ls
if grep -Eq '^d3 +kept ' "$tmp/out" && grep -Eq '^d1 +discarded ' "$tmp/out"; then ok; else bad "ls: $(cat "$tmp/out")"; fi
run "$aisb" draft recover d3
check "recover a settled draft: exit" "$rc" 0
run "$aisb" draft status nosuch
check "unknown draft: exit" "$rc" 78
session --draft ../x -- true
check "a name with a slash: exit" "$rc" 78

echo "snapshot_draft: $pass passed, $fail failed"
[ "$fail" = 0 ]
