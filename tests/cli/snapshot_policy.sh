#!/bin/bash
# A draft made under a policy that is no longer the one in force needs a
# fresh look (docs/snapshot.md, "When the policy changes"), without
# podman: tests/cli/snapdraft runs the launcher's own snapshot path.  The
# session keeps its policy file's SHA-256; aisb apply refuses (78) once
# the file changed or is gone, until --reviewed; a policy changed while
# the command ran is not asked about at the end; a persistent draft is
# not marked (its commit is the review); a state file whose policy line
# is not absolute is refused.
. "$(dirname "$0")/snaplib.sh"
pol=$(cd "$tmp" && pwd -P)/policy.yaml
# every session under the test's policy file
psession() { session --policy "$pol" "$@"; }
policy() { printf 'version: 1\nallow:\n' >"$pol"; for h; do printf '  - host: %s\n    ports: [443]\n' "$h" >>"$pol"; done; }

# 1. unchanged: applied as ever; the state keeps the file's hash
policy a.example b.example
psession --snapshot --apply=never -- sh -c 'echo one >one.txt'
check "unchanged: session" "$rc" 0
check "unchanged: the state's policy line" "$(sed -n 's/^policy //p' "$sessions/$id/snapshot")" \
    "$(sha256sum "$pol" | cut -d' ' -f1) $pol"
run "$aisb" apply "$id"
check "unchanged: apply" "$rc" 0
check "unchanged: written" "$(cat one.txt)" one

# 2. narrowed after the session: refused until --reviewed
psession --snapshot --apply=never -- sh -c 'echo two >two.txt'
old=$(sha256sum "$pol" | cut -c1-12)
policy a.example
new=$(sha256sum "$pol" | cut -c1-12)
run "$aisb" apply "$id"
check "narrowed: apply refused" "$rc" 78
said "narrowed: said" "made under another policy: $pol was sha256:$old, is sha256:$new; look at it again (aisb changes $id --diff), then aisb apply $id --reviewed"
[ -e two.txt ] && bad "narrowed: written" || ok
check "narrowed: still waits" "$(sed -n 's/^state //p' "$sessions/$id/snapshot")" kept
run "$aisb" apply "$id" --reviewed
check "narrowed: apply --reviewed" "$rc" 0
check "narrowed: written once reviewed" "$(cat two.txt)" two

# 3. the policy file gone: refused too
psession --snapshot --apply=never -- sh -c 'echo three >three.txt'
mv "$pol" "$pol.away"
run "$aisb" apply "$id"
check "gone: apply refused" "$rc" 78
said "gone: said" "$pol: No such file or directory"
mv "$pol.away" "$pol"
run "$aisb" apply "$id"
check "back as it was: apply" "$rc" 0

# 4. changed while the command ran: not asked about, kept
psession --snapshot --apply=ask -- sh -c "echo four >four.txt; printf '# edited\n' >>'$pol'"
check "during: exit" "$rc" 0
said "during: said" "not asked about: the policy changed while the command ran"
check "during: kept" "$(sed -n 's/^state //p' "$sessions/$id/snapshot")" kept
[ -e four.txt ] && bad "during: written" || ok

# 5. a persistent draft is not marked: its commit is the review
psession --draft d1 -- sh -c 'echo five >five.txt'
check "draft: session" "$rc" 0
policy c.example
run "$aisb" draft commit d1
check "draft: commit after a policy change" "$rc" 0
check "draft: written" "$(cat five.txt)" five
grep -q '^policy ' "$XDG_STATE_HOME"/aisb/drafts/*-d1/snapshot && bad "draft: marked" || ok

# 6. a policy line not absolute: a corrupt state, refused
psession --snapshot --apply=never -- sh -c 'echo six >six.txt'
sed -i "s|^policy \([0-9a-f]*\) .*|policy \1 relative/policy.yaml|" "$sessions/$id/snapshot"
run "$aisb" apply "$id"
check "relative policy line: refused" "$rc" 78
said "relative policy line: said" "not a snapshot state"

echo "snapshot_policy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
