#!/bin/bash
# End to end: a learning session (aisb --learn) and the policy suggested
# from it.
#
# Under a policy that allows one name, a learning session reaches two
# names through its gate (the second one only because it learns), while a
# name in a denied range (link-local) stays refused; the session says so
# at start and end, counts what the policy would have denied, and its
# record says "learn yes".  aisb policy suggest returns exactly the two
# names used; that suggestion, as the next (ordinary) session's policy,
# lets the same command pass and denies a name the learning run did not
# use.
#
# Servers run on the host's loopback only (see session.sh), names come
# from the test's DNS server; the link-local name is never dialled.  Needs
# root, podman and mmdebstrap; builds its image offline in a podman store
# of its own, removed by the EXIT trap.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start learn mmdebstrap curl "$PY"
e2e_seed_image curl
vol=aisb-e2e-learn-$$
chmod 700 "$tmp/ws"

cat >"$tmp/zone.json" <<'EOF'
{"known.test": {"A": ["127.0.0.1"], "ttl": 5},
 "learned.test": {"A": ["127.0.0.1"], "ttl": 5},
 "unused.test": {"A": ["127.0.0.1"], "ttl": 5},
 "meta.test": {"A": ["169.254.169.254"], "ttl": 5}}
EOF
e2e_servers dns http

# the test's servers are on the host's loopback: exempt it, in every policy
tail_yaml="allow_ranges: [127.0.0.1/32]
dns:
  servers: [\"127.0.0.1:$dns\"]"
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: known.test
    ports: [$http]
$tail_yaml
EOF

sess() {	# sess POLICY [FLAGS...] -- CMD...
	local rc=0 p=$1
	shift
	(cd "$tmp/ws" && "$aisb" --policy "$p" --home-volume "$vol" \
	    --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}
# each curl's status on one line: 000 when the gate refused the tunnel
cmd="for h in known.test learned.test meta.test; do
	curl -s -o /dev/null -w '%{http_code} ' -p http://\$h:$http/ || true
done"

# The image is built by a first session (its output is not what we check).
rc=0; sess "$tmp/policy.yaml" -- true || rc=$?
check "warm-up session" "$rc" 0

# 0. without --learn the policy holds: learned.test is refused
rc=0; sess "$tmp/policy.yaml" -- sh -c "$cmd" || rc=$?
check "plain: exit" "$rc" 0
check "plain: statuses" "$(cat "$tmp/out")" "200 000 000 "

# 1. the learning session
e2e_session_mark
rc=0; sess "$tmp/policy.yaml" --learn -- sh -c "$cmd" || rc=$?
check "learn: exit" "$rc" 0
check "learn: statuses (meta.test still refused)" "$(cat "$tmp/out")" \
    "200 200 000 "
sd=$(e2e_session)
id=$(basename "$sd")
grep -q "^aisb: LEARNING MODE: NOTHING IS BLOCKED BY THE POLICY in session $id" \
    "$tmp/err" && ok || bad "no loud start: $(cat "$tmp/err")"
grep -q "^aisb: LEARNING MODE ended: nothing was blocked by the policy" \
    "$tmp/err" && ok || bad "no loud end: $(cat "$tmp/err")"
grep -q "^aisb: 3 destination(s) used; 2 would have been denied by the policy:" \
    "$tmp/err" && ok || bad "no count: $(cat "$tmp/err")"
grep -q "^aisb:   learned.test:$http (host_not_allowed, 1 connection(s))" \
    "$tmp/err" && ok || bad "learned.test not listed: $(cat "$tmp/err")"
grep -q "^aisb: aisb policy suggest $id prints" "$tmp/err" && ok ||
    bad "no suggest hint: $(cat "$tmp/err")"
grep -q "^learn yes" "$sd/record" && ok || bad "record: $(cat "$sd/record")"
grep -q "LEARNING MODE" "$sd/gate.log" && ok || bad "gate.log: no learning line"
lines=$(grep '"host":"learned.test"' "$sd/audit.jsonl" | grep '"event":"decision"' || true)
grep -q '"learn":true,"would":"deny","would_reason":"host_not_allowed"' <<<"$lines" &&
    ok || bad "audit: $(cat "$sd/audit.jsonl")"
lines=$(grep '"host":"meta.test"' "$sd/audit.jsonl" || true)
grep -q '"decision":"deny".*"reason":"address_denied"' <<<"$lines" && ok ||
    bad "meta.test audit: $(grep meta "$sd/audit.jsonl")"

# 2. suggest: exactly the names used, and a policy
rc=0; "$aisb" policy suggest "$id" >"$tmp/sug.yaml" 2>"$tmp/err" || rc=$?
check "suggest: exit" "$rc" 0
check "suggest: names" "$(sed -n 's/^  - host: "\(.*\)"$/\1/p' "$tmp/sug.yaml" |
    sort | tr '\n' ' ')" "known.test learned.test "
rc=0; "$aisb" policy check "$tmp/sug.yaml" >/dev/null 2>&1 || rc=$?
check "suggest: policy check" "$rc" 0

# 3. the suggestion as the next session's policy
{ cat "$tmp/sug.yaml"; printf '%s\n' "$tail_yaml"; } >"$tmp/next.yaml"
rc=0; sess "$tmp/next.yaml" -- sh -c "$cmd" || rc=$?
check "next: exit" "$rc" 0
check "next: the same command passes" "$(cat "$tmp/out")" "200 200 000 "
rc=0; sess "$tmp/next.yaml" -- curl -s -o /dev/null -w '%{http_code}' \
    -p "http://unused.test:$http/" || rc=$?
check "next: unused.test denied" "$(cat "$tmp/out")" "000"
grep -q "denied unused.test:$http" "$tmp/err" && ok ||
    bad "next: no denial of unused.test: $(cat "$tmp/err")"
grep -q "LEARNING MODE" "$tmp/err" && bad "next: learning said" || ok

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
