#!/bin/bash
# aisb-gate --learn, and aisb policy suggest over what it wrote: names and
# ports the policy refuses are let through and audited with what the
# policy would have said; the denied address ranges (metadata, private)
# and the gate itself stay refused; the suggestion holds exactly the
# names used, loads, and as the next run's policy allows the same and
# denies a name the learning run did not use.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

aisb=${AISB:-$top_builddir/aisb}
[ -x "$aisb" ] || { echo "FAIL: $aisb not built" >&2; exit 1; }

start_upstream http 192.0.2.10
up=$up_port
rm -f "$tmp/up.http.192.0.2.10.0.port"	# a second port of the same address
start_upstream http 192.0.2.10
up2=$up_port
[ "$up2" != "$up" ] || { echo "FAIL: one port for two upstreams" >&2; exit 1; }
start_upstream http 169.254.169.254 "$up"
start_upstream http 10.0.0.1 "$up"
start_dns '{"ok.test": {"A": ["192.0.2.10"]},
 "new.test": {"A": ["192.0.2.10"]},
 "a.group.test": {"A": ["192.0.2.10"]},
 "b.group.test": {"A": ["192.0.2.10"]},
 "blocked.test": {"A": ["192.0.2.10"]},
 "unused.test": {"A": ["192.0.2.10"]},
 "meta.test": {"A": ["169.254.169.254"]},
 "priv.test": {"A": ["10.0.0.1"]}}'

write_policy_deny "$tmp/policy.yaml"

# Without --learn the policy holds (so that what follows can fail).
start_gate plain "$tmp/policy.yaml"
check "plain: new.test denied" "$(proxy_get -p "http://new.test:$up/")" \
    "403 000"
kill "$gate_pid"

# -n says the mode too
rc=0; "$gate_bin" -n --learn -f "$tmp/policy.yaml" 2>"$tmp/n.err" || rc=$?
check "-n --learn" "$rc" 0
grep -q "LEARNING MODE" "$tmp/n.err" && ok || bad "-n: $(cat "$tmp/n.err")"

start_gate learn "$tmp/policy.yaml" --learn --control "$tmp/ctl.sock"
A=$tmp/audit.learn.log
check "status says learn" "$(control "$tmp/ctl.sock" status learn)" True
grep -q "LEARNING MODE.*NOTHING IS BLOCKED BY THE POLICY" \
    "$tmp/gate.learn.err" && ok || bad "no loud line at start"

check "learn: ok.test" "$(proxy_get -p "http://ok.test:$up/")" "200 200"
check "learn: new.test" "$(proxy_get -p "http://new.test:$up/x")" "200 200"
grep -q '"path": "/x"' "$tmp/body" && ok || bad "new.test body: $(cat "$tmp/body")"
check "learn: new.test forward" "$(proxy_get "http://new.test:$up/f")" \
    "000 200"
check "learn: new.test other port" \
    "$(proxy_get -p "http://new.test:$up2/")" "200 200"
check "learn: ok.test other port" \
    "$(proxy_get -p "http://ok.test:$up2/")" "200 200"
check "learn: a.group.test" "$(proxy_get -p "http://a.group.test:$up/")" \
    "200 200"
check "learn: b.group.test" "$(proxy_get -p "http://b.group.test:$up/")" \
    "200 200"
check "learn: blocked.test (deny rule)" \
    "$(proxy_get -p "http://blocked.test:$up/")" "200 200"
# the denied ranges stay denied
check "learn: meta.test" "$(proxy_get -p "http://meta.test:$up/")" "403 000"
check "learn: priv.test" "$(proxy_get -p "http://priv.test:$up/")" "403 000"
check "learn: 10.0.0.1 literal" "$(proxy_get -p "http://10.0.0.1:$up/")" \
    "403 000"
check "learn: metadata literal" \
    "$(proxy_get "http://169.254.169.254:$up/latest")" "000 403"
# ... and so does the gate itself
check "learn: the gate" "$(proxy_get -p "http://127.0.0.1:$gate_port/")" \
    "403 000"
check "metadata never dialled" "$(upstream_accepts 169.254.169.254)" 0
check "private never dialled" "$(upstream_accepts 10.0.0.1)" 0
sleep 0.3

expect_audit "$A" event=decision host=ok.test decision=allow learn=True \
    would=allow would_reason=allowed "rule=*allow host: ok.test*"
expect_audit "$A" event=decision host=new.test method=CONNECT decision=allow \
    learn=True would=deny would_reason=host_not_allowed
expect_audit "$A" event=decision host=new.test method=GET decision=allow \
    learn=True would=deny
expect_audit "$A" event=decision host=ok.test port="$up2" decision=allow \
    would=deny would_reason=port_not_allowed
expect_audit "$A" event=decision host=blocked.test decision=allow \
    would=deny would_reason=deny_rule "rule=*deny host: blocked.test*"
expect_audit "$A" event=decision host=meta.test decision=deny \
    reason=address_denied learn=True would=deny
expect_audit "$A" event=decision host=127.0.0.1 decision=deny \
    reason=address_denied learn=True
expect_audit "$A" event=close host=new.test learn=True would=deny
check "every decision line says learn" \
    "$(audit_count "$A" event=decision learn=None)" 0
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- aisb policy suggest over the learning log
rc=0; "$aisb" policy suggest "$A" >"$tmp/sug.yaml" 2>"$tmp/sug.err" || rc=$?
check "suggest" "$rc" 0
rc=0; "$aisb" policy check "$tmp/sug.yaml" >/dev/null 2>&1 || rc=$?
check "the suggestion is a policy" "$rc" 0
names=$(sed -n 's/^  - host: "\(.*\)"$/\1/p' "$tmp/sug.yaml" | sort | tr '\n' ' ')
check "suggest: exactly the names used" "$names" \
    "a.group.test b.group.test blocked.test new.test ok.test "
grep -qE '^  - (cidr|host): "?(10\.|169\.254|127\.|meta|priv)' \
    "$tmp/sug.yaml" && bad "a denied destination proposed: $(cat "$tmp/sug.yaml")" || ok
grep -q "^#   meta.test:$up: refused (address_denied)" "$tmp/sug.yaml" && ok ||
    bad "meta.test not listed as refused: $(cat "$tmp/sug.yaml")"
# ports as seen: new.test on both
rule=$(grep -A1 '^  - host: "new.test"$' "$tmp/sug.yaml" || true)
grep -qE "ports: \[($up, $up2|$up2, $up)\]" <<<"$rule" && ok ||
    bad "new.test ports: $(cat "$tmp/sug.yaml")"

# --group: the two names below group.test become one rule
rc=0; "$aisb" policy suggest --group "$A" >"$tmp/grp.yaml" 2>&1 || rc=$?
check "suggest --group" "$rc" 0
names=$(sed -n 's/^  - host: "\(.*\)"$/\1/p' "$tmp/grp.yaml" | sort | tr '\n' ' ')
check "suggest --group: names" "$names" \
    "*.group.test blocked.test new.test ok.test "

# --base: only what the base lacks, as a diff its canonical form takes
rc=0; "$aisb" policy suggest --base "$tmp/policy.yaml" "$A" \
    >"$tmp/diff" 2>"$tmp/diff.err" || rc=$?
check "suggest --base" "$rc" 0
grep -q '^+  - host: "new.test"$' "$tmp/diff" && ok || bad "diff: $(cat "$tmp/diff")"
grep -q '^+  - host: "blocked.test"$' "$tmp/diff" &&
    bad "diff adds what a deny rule of the base denies: $(cat "$tmp/diff")" || ok
# ok.test: only the port the base does not allow
rule=$(grep -A1 '^+  - host: "ok.test"$' "$tmp/diff" || true)
grep -q "ports: \[$up2\]\$" <<<"$rule" && ok || bad "diff: ok.test's ports: $(cat "$tmp/diff")"
grep -q "blocked.test:$up: denied by a deny rule of the base" "$tmp/diff" && ok ||
    bad "the base's deny rule not said: $(cat "$tmp/diff")"
"$aisb" policy print "$tmp/policy.yaml" >"$tmp/canon.yaml"
rc=0; patch -s "$tmp/canon.yaml" <"$tmp/diff" >"$tmp/patch.out" 2>&1 || rc=$?
check "the diff applies" "$rc" 0
rc=0; "$aisb" policy test "$tmp/canon.yaml" "new.test:$up2" >/dev/null || rc=$?
check "patched base allows new.test" "$rc" 0
rc=0; "$aisb" policy test "$tmp/canon.yaml" "blocked.test:$up" >/dev/null || rc=$?
check "patched base still denies blocked.test" "$rc" 1

# --- the suggestion as the next run's policy (plus this test's ranges/DNS)
{
	grep -v '^#' "$tmp/sug.yaml"
	echo "allow_ranges: [$test_ranges]"
	echo "dns:"
	echo "  servers: [\"127.0.0.1:$dns_port\"]"
} >"$tmp/next.yaml"
start_gate next "$tmp/next.yaml" --control "$tmp/ctl2.sock"
check "status: not learning" "$(control "$tmp/ctl2.sock" status learn)" False
check "next: new.test" "$(proxy_get -p "http://new.test:$up/")" "200 200"
check "next: new.test other port" "$(proxy_get -p "http://new.test:$up2/")" \
    "200 200"
check "next: a.group.test" "$(proxy_get -p "http://a.group.test:$up/")" \
    "200 200"
check "next: unused.test denied" "$(proxy_get -p "http://unused.test:$up/")" \
    "403 000"
check "next: meta.test denied" "$(proxy_get -p "http://meta.test:$up/")" \
    "403 000"
kill "$gate_pid"

finish
