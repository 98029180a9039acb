#!/bin/bash
# What the user config tightens for snapshot sessions (docs/snapshot.md,
# "What the user config tightens"), without podman: tests/cli/snapdraft
# runs the launcher's own snapshot path around a command run in the
# stage.  Bounds past the built-in maxima refused (78), and in a project
# config; tightened bounds refuse a workspace (or a change set) past
# them; writeback_deny: the paths staged, listed as skipped, never
# written by aisb apply nor by aisb draft commit, while the draft's tree
# keeps them from session to session; writeback: false: the draft kept,
# aisb apply refused; a state file whose bounds were loosened or whose
# deny line was dropped is refused, not guessed at.
. "$(dirname "$0")/snaplib.sh"
conf=$XDG_CONFIG_HOME/aisb/config.yaml
state() { sed -n "s/^$1 //p" "$sessions/$id/snapshot"; }

for i in 1 2 3 4 5 6; do printf '%s\n' "$i" >"f$i.txt"; done
mkdir -p secret && printf 'old\n' >secret/key.txt
printf 'lock 1\n' >deps.lock

# 1. past a built-in maximum: refused, naming it; a project may not set one
for kv in 'snapshot_max_entries: 100001' 'snapshot_max_bytes: 3g' \
    'snapshot_max_file_bytes: 1g' 'snapshot_max_depth: 129' \
    'snapshot_max_entries: 0'; do
	printf '%s\n' "$kv" >"$conf"
	session --snapshot -- true
	check "$kv: exit" "$rc" 78
	said "$kv" "${kv%%:*}: .* is not between 1 and the built-in maximum"
	[ -e "$sessions/$id/stage" ] && bad "$kv: staged" || ok
done
rm -f "$conf"
printf 'snapshot_max_entries: 5\n' >.aisb.yaml
session --snapshot -- true
check "project config: exit" "$rc" 78
said "project config" "snapshot_max_entries"
rm -f .aisb.yaml
printf 'snapshot_max_entries: 100000\nsnapshot_max_bytes: 2g\n' >"$conf"
session --snapshot --apply=never -- true
check "at the maximum: exit" "$rc" 0

# 2. tightened: a workspace past them is not staged; a change set past
# them is not proposed
printf 'snapshot_max_entries: 5\n' >"$conf"
session --snapshot -- true
check "entries 5: exit" "$rc" 78
said "entries 5" "limit entries"
printf 'snapshot_max_file_bytes: 4\n' >"$conf"
session --snapshot -- true
check "file_bytes 4: exit" "$rc" 78
said "file_bytes 4" "limit file_bytes"
printf 'snapshot_max_entries: 12\n' >"$conf"
session --snapshot --apply=never -- sh -c 'for i in 1 2 3 4 5; do echo x >more$i.txt; done'
check "entries 12, a command past them: exit" "$rc" 78
said "entries 12, past" "after the command"
check "entries 12, past: nothing proposed" "$(state state)" failed
check "entries 12: kept in the state" "$(state limits)" "12 2147483648 536870912 128"
printf 'snapshot_max_depth: 2\n' >"$conf"
session --snapshot --apply=never -- mkdir -p a/b/c
check "depth 2, a command past it: exit" "$rc" 78

# 3. writeback_deny: staged, listed as skipped, never written back
cat >"$conf" <<'EOF'
writeback_deny:
  - secret/**
  - "*.lock"
EOF
session --snapshot --apply=never -- sh -c 'cat secret/key.txt deps.lock >seen.txt &&
    echo new >secret/key.txt && echo planted >secret/new.txt &&
    echo lock 2 >deps.lock && echo ok >ok.txt'
check "deny: exit" "$rc" 0
check "deny: in the state" "$(state deny | tr '\n' ' ')" "secret/** *.lock "
run "$aisb" changes "$id"
for want in 'A ok.txt' 'A seen.txt' 'S secret/key.txt (writeback denied: secret/**)' \
    'S secret/new.txt (writeback denied: secret/**)' 'S deps.lock (writeback denied: *.lock)'; do
	if grep -qxF -- "$want" "$tmp/out"; then ok; else bad "changes lack '$want': $(cat "$tmp/out")"; fi
done
run "$aisb" apply "$id"
check "deny: apply" "$rc" 0
check "deny: the command saw the denied files" "$(cat seen.txt | tr '\n' ,)" "old,lock 1,"
check "deny: written" "$(cat ok.txt)" ok
check "deny: never written back" "$(cat secret/key.txt) $(cat deps.lock)" "old lock 1"
[ -e secret/new.txt ] && bad "deny: a new file under a denied folder written" || ok
rm -f ok.txt seen.txt

# ...and on a persistent draft: the draft's tree keeps them from session
# to session, its commit never writes them
session --draft d1 -- sh -c 'echo draft >secret/key.txt; echo one >one.txt'
check "draft deny: session 1" "$rc" 0
session --draft d1 -- sh -c 'cat secret/key.txt >two.txt'
check "draft deny: session 2" "$rc" 0
run "$aisb" draft commit d1
check "draft deny: commit" "$rc" 0
check "draft deny: the tree kept the denied edit" "$(cat two.txt)" draft
check "draft deny: committed, not the denied file" "$(cat one.txt) $(cat secret/key.txt)" "one old"
run "$aisb" draft discard d1
rm -f one.txt two.txt

# 4. writeback: false: kept, never asked about, never written back
printf 'writeback: false\n' >"$conf"
session --snapshot --apply=ask -- sh -c 'echo no >no.txt'
check "writeback false: exit" "$rc" 0
said "writeback false: said" "never written back (the user config's writeback: false)"
check "writeback false: kept" "$(state state)" kept
check "writeback false: in the state" "$(state writeback)" off
off=$id
# the environment and a flag cannot turn it back on
run env AISB_WRITEBACK=true "$snapdraft" "$sessions/$(printf '%024x' 999)" --snapshot --apply=ask -- true
said "writeback false: AISB_WRITEBACK=true ignored" "never written back\|nothing to write back"
check "writeback false: AISB_WRITEBACK ignored, state" "$(sed -n 's/^writeback //p' "$sessions/$(printf '%024x' 999)/snapshot")" off
session --snapshot --writeback -- true
check "writeback: no flag" "$rc" 78
rm -f "$conf"
run "$aisb" apply "$off"
check "writeback false: apply, even with the config gone" "$rc" 78
said "writeback false: apply said" "never written back: its session ran with the user config's writeback: false"
[ -e no.txt ] && bad "writeback false: written" || ok
run "$aisb" discard "$off"
check "writeback false: discard" "$rc" 0

# 5. a state file edited to loosen a bound or lose a deny: refused
printf 'writeback_deny: ["*.lock"]\n' >"$conf"
session --snapshot --apply=never -- sh -c 'echo lock 3 >deps.lock; echo y >y.txt'
check "tamper: exit" "$rc" 0
cp "$sessions/$id/snapshot" "$tmp/state.good"
sed -i 's/^limits .*/limits 100001 2147483648 536870912 128/' "$sessions/$id/snapshot"
run "$aisb" apply "$id"
check "tamper, loosened: apply" "$rc" 78
said "tamper, loosened" "not a snapshot state"
cp "$tmp/state.good" "$sessions/$id/snapshot"
sed -i '/^deny /d' "$sessions/$id/snapshot"
run "$aisb" apply "$id"
check "tamper, deny dropped: apply refused" "$rc" 78
said "tamper, deny dropped" "no longer holds"
check "tamper: nothing written" "$(cat deps.lock) $([ -e y.txt ] && echo y)" "lock 1 "
cp "$tmp/state.good" "$sessions/$id/snapshot"
run "$aisb" apply "$id"
check "untampered: apply" "$rc" 0
check "untampered: written, not the denied" "$(cat y.txt) $(cat deps.lock)" "y lock 1"

echo "snapshot_conf: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
