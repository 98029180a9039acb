#!/bin/bash
# aisb-gate: configuration check, CONNECT and forward requests allowed and
# denied by name, port, deny rule and CIDR; proxy authentication; the
# control socket.  Every request's audit line is checked.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream http 10.0.0.1 "$up"
start_dns '{"ok.test": {"A": ["192.0.2.10"]},
 "a.wild.test": {"A": ["192.0.2.10"]},
 "blocked.wild.test": {"A": ["192.0.2.10"]}}'

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: ok.test
    ports: [$up]
  - host: "*.wild.test"
    ports: [$up]
  - cidr: 192.0.2.0/24
    ports: [$up]
  - cidr: 10.0.0.0/8
    ports: [$up]
deny:
  - host: blocked.wild.test
  - host: "~^rx[0-9]\\\\.wild\\\\.test\$"
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
  min_ttl: 1
  max_ttl: 5
EOF
printf 'version: 1\nallow:\n  - host: "*"\n' >"$tmp/bad.yaml"

# -n: configuration check
rc=0; "$gate_bin" -n -f "$tmp/policy.yaml" 2>"$tmp/n.err" || rc=$?
check "-n good policy" "$rc" 0
grep -q "configuration OK" "$tmp/n.err" && ok || bad "-n says: $(cat "$tmp/n.err")"
rc=0; "$gate_bin" -n -f "$tmp/bad.yaml" 2>"$tmp/n.err" || rc=$?
check "-n bad policy" "$rc" 78
grep -q "bad.yaml:3" "$tmp/n.err" && ok || bad "-n bad policy: $(cat "$tmp/n.err")"
rc=0; "$gate_bin" -n -f "$tmp/policy.yaml" -l nonsense 2>/dev/null || rc=$?
check "-n bad listen address" "$rc" 78

start_gate main "$tmp/policy.yaml" --control "$tmp/ctl.sock"
A=$tmp/audit.main.log

# CONNECT allowed: a tunnel to the upstream, a decision and a close line
check "CONNECT ok.test" "$(proxy_get -p "http://ok.test:$up/hello")" "200 200"
grep -q '"path": "/hello"' "$tmp/body" && ok || bad "tunnel body: $(cat "$tmp/body")"
expect_audit "$A" event=decision method=CONNECT host=ok.test port="$up" \
    addr=192.0.2.10 decision=allow status=200 reason=allowed
sleep 0.3
expect_audit "$A" event=close method=CONNECT host=ok.test

# Forward: origin-form upstream, hop-by-hop fields gone, Connection: close
check "GET ok.test" "$(proxy_get -H 'Proxy-Connection: keep-alive' \
    -H 'Connection: X-Drop' -H 'X-Drop: 1' -H 'X-Keep: 2' \
    "http://ok.test:$up/fwd?x=1")" "000 200"
"$PY" - "$tmp/body" <<'PY' && ok || bad "forwarded request: $(cat "$tmp/body")"
import json, sys
r = json.load(open(sys.argv[1]))
h = {k.lower(): v for k, v in r["headers"]}
assert r["path"] == "/fwd?x=1", r
assert "proxy-connection" not in h and "x-drop" not in h, h
assert h.get("x-keep") == "2" and h.get("connection") == "close", h
assert h.get("host", "").startswith("ok.test:"), h
PY
expect_audit "$A" event=decision method=GET host=ok.test decision=allow

# A wildcard name
check "CONNECT a.wild.test" "$(proxy_get -p "http://a.wild.test:$up/")" "200 200"
expect_audit "$A" event=decision host=a.wild.test decision=allow

# Denied host: 403, the header names the reason and the fix
check "CONNECT nope.test" "$(proxy_get -p "http://nope.test:$up/")" "403 000"
grep -qF "fix=\"{allow: [{host: nope.test, ports: [$up]}]}\"" <<<"$(decision_header)" &&
    ok || bad "decision header: $(decision_header)"
# (fnmatch patterns: ? stands for the brackets)
expect_audit "$A" event=decision host=nope.test decision=deny status=403 \
    reason=host_not_allowed "fix=allow:
  - host: nope.test
    ports: ?$up?
"
check "GET nope.test" "$(proxy_get "http://nope.test:$up/")" "000 403"
# the body says it for people, with the YAML to paste, multi-line
printf 'aisb-gate: GET nope.test:%s denied: host not allowed\nto allow it, add to %s:\nallow:\n  - host: nope.test\n    ports: [%s]\n' \
    "$up" "$tmp/policy.yaml" "$up" >"$tmp/want.body"
cmp -s "$tmp/want.body" "$tmp/body" && ok || bad "403 body: $(cat "$tmp/body")"
expect_audit "$A" event=decision method=GET host=nope.test reason=host_not_allowed

# Denied port: the rule that matched the name is cited
check "CONNECT ok.test:81" "$(proxy_get -p "http://ok.test:81/")" "403 000"
grep -q 'reason=port_not_allowed.*rule="[^"]*policy.yaml:3' <<<"$(decision_header)" &&
    ok || bad "decision header: $(decision_header)"
expect_audit "$A" host=ok.test port=81 decision=deny reason=port_not_allowed

# A deny rule wins over the wildcard allow
check "CONNECT blocked.wild.test" \
    "$(proxy_get -p "http://blocked.wild.test:$up/")" "403 000"
grep -q 'reason=deny_rule.*deny host: blocked.wild.test' <<<"$(decision_header)" &&
    ok || bad "decision header: $(decision_header)"
expect_audit "$A" host=blocked.wild.test decision=deny reason=deny_rule \
    "fix=# a deny rule refuses it*"
# A rule's backslashes: '?' in the header's quoted parameter (termsafe.h);
# the audit line keeps them
check "CONNECT rx1.wild.test" "$(proxy_get -p "http://rx1.wild.test:$up/")" \
    "403 000"
grep -qF 'rule="'"$tmp"'/policy.yaml:13:5 deny host: ~^rx[0-9]?.wild?.test$"' \
    <<<"$(decision_header)" && ok || bad "decision header: $(decision_header)"
expect_audit "$A" host=rx1.wild.test decision=deny reason=deny_rule \
    'rule=*deny host: ~^rx[[]0-9]\.wild\.test$'
# its body: the fix is a change of what is there, not a block to add
check "GET blocked.wild.test" "$(proxy_get "http://blocked.wild.test:$up/")" "000 403"
check "a deny rule's fix: in the policy, not added to it" \
    "$(tail -n 2 "$tmp/body")" "to allow it, in $tmp/policy.yaml:
# a deny rule refuses it: remove or narrow that rule"

# IP literals: CIDR rules, then address classes
check "CONNECT 192.0.2.10" "$(proxy_get -p "http://192.0.2.10:$up/")" "200 200"
expect_audit "$A" host=192.0.2.10 addr=192.0.2.10 decision=allow
check "CONNECT 203.0.113.5" "$(proxy_get -p "http://203.0.113.5:$up/")" "403 000"
expect_audit "$A" host=203.0.113.5 decision=deny reason=host_not_allowed \
    "fix=allow:
  - cidr: 203.0.113.5/32
    ports: ?$up?
allow_ranges: ?203.0.113.5/32?
"
# an IPv6 literal: the one-line fix quotes it with single quotes, which
# survive inside the header's quoted parameter
check "CONNECT [2001:db8::7]" "$(proxy_get -p "http://[2001:db8::7]:$up/")" "403 000"
grep -qF "fix=\"{allow: [{cidr: '2001:db8::7/128', ports: [$up]}], allow_ranges: ['2001:db8::7/128']}\"" <<<"$(decision_header)" &&
    ok || bad "decision header: $(decision_header)"
check "CONNECT 10.0.0.1" "$(proxy_get -p "http://10.0.0.1:$up/")" "403 000"
grep -q 'reason=address_denied' <<<"$(decision_header)" && ok ||
    bad "decision header: $(decision_header)"
expect_audit "$A" host=10.0.0.1 decision=deny reason=address_denied \
    "fix=allow_ranges: ?10.0.0.1/32?
"
check "10.0.0.1 never dialled" "$(upstream_accepts 10.0.0.1)" 0

# Host must agree with the target; only http:// is forwarded
check "Host mismatch" "$(raw_req "$gate_port" \
    "GET http://ok.test:$up/ HTTP/1.1\r\nHost: evil.test\r\n\r\n")" \
    "HTTP/1.1 400 Bad Request"
expect_audit "$A" method=GET host=ok.test status=400 reason=host_mismatch
check "https:// forward" "$(raw_req "$gate_port" \
    "GET https://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n")" \
    "HTTP/1.1 400 Bad Request"
expect_audit "$A" method=GET status=400 reason=bad_target
check "origin-form to the proxy" "$(raw_req "$gate_port" \
    "GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n")" "HTTP/1.1 400 Bad Request"

# Control socket: 0600, status JSON
check "control socket mode" "$(stat -c %a "$tmp/ctl.sock")" 600
control "$tmp/ctl.sock" status | "$PY" -c '
import json, sys
st = json.load(sys.stdin)
c = st["counters"]
assert c["accepted"] >= 10 and c["denied"] >= 5 and c["allowed"] >= 3, c
assert len(st["policy"]["sha256"]) == 64 and isinstance(st["tunnels"], list)
' && ok || bad "control status"

# Proxy authentication, from a file and from a descriptor
printf '# session:secret\nsess-1:s3cret-token\n' >"$tmp/token"
chmod 600 "$tmp/token"
start_gate auth "$tmp/policy.yaml" --token-file "$tmp/token"
B=$tmp/audit.auth.log
check "no credentials" "$(proxy_get -p "http://ok.test:$up/")" "407 000"
grep -qi '^Proxy-Authenticate: Basic' "$tmp/headers" && ok ||
    bad "no Proxy-Authenticate"
# the target is named (a client's proxy-auth probe is paired by it), no fix
expect_audit "$B" host=ok.test port=$up method=CONNECT status=407 \
    reason=auth_required detail="no credentials" fix=None
check "wrong credentials" "$(proxy_get -p --proxy-user sess-1:nope \
    "http://ok.test:$up/")" "407 000"
check "wrong session" "$(proxy_get -p --proxy-user other:s3cret-token \
    "http://ok.test:$up/")" "407 000"
check "right credentials" "$(proxy_get -p --proxy-user sess-1:s3cret-token \
    "http://ok.test:$up/")" "200 200"
expect_audit "$B" session=sess-1 host=ok.test decision=allow
check "GET with credentials" "$(proxy_get --proxy-user sess-1:s3cret-token \
    "http://ok.test:$up/x")" "000 200"
grep -qi 'proxy-authorization' "$tmp/body" && bad "credentials forwarded" || ok

start_gate authfd "$tmp/policy.yaml" --token-fd 3 3<"$tmp/token"
check "token from fd" "$(proxy_get -p --proxy-user sess-1:s3cret-token \
    "http://ok.test:$up/")" "200 200"
# A full disk under the audit log (/dev/full): the first request is served
# (nothing had failed yet), the next ones get 503 audit_unavailable, the
# failure is logged once; with --audit-failure allow requests go on.
# (gate_audit.sh covers a real filesystem filling and recovering.)
if [ -w /dev/full ]; then
	for mode in deny allow; do
		rm -f "$tmp/gate.full.port"
		"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 \
		    --port-file "$tmp/gate.full.port" --audit /dev/full \
		    --audit-failure "$mode" --control "$tmp/full.$mode.sock" \
		    2>"$tmp/gate.full.$mode.err" &
		pids+=($!)
		wait_file "$tmp/gate.full.port"
		gate_port=$(cat "$tmp/gate.full.port")
		check "$mode: CONNECT, audit disk full" \
		    "$(proxy_get -p "http://ok.test:$up/")" "200 200"
		if [ "$mode" = deny ]; then
			check "deny: GET, audit disk full" \
			    "$(proxy_get "http://nope.test:$up/")" "000 503"
			case $(decision_header) in
			*reason=audit_unavailable*) ok ;;
			*) bad "deny: no audit_unavailable: $(decision_header)" ;;
			esac
			check "deny: refusals counted" "$(control \
			    "$tmp/full.deny.sock" status counters.rejected_audit)" 1
		else
			check "allow: GET, audit disk full" \
			    "$(proxy_get "http://nope.test:$up/")" "000 403"
		fi
		check "$mode: audit failures logged once" "$(grep -c \
		    'audit: write .*: No space left on device' \
		    "$tmp/gate.full.$mode.err")" 1
	done
fi

# --ready-fd: the port, once listening
"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --ready-fd 3 \
    --audit "$tmp/audit.ready.log" 3>"$tmp/ready" 2>"$tmp/gate.ready.err" &
pids+=($!)
wait_file "$tmp/ready"
gate_port=$(cat "$tmp/ready")
check "CONNECT via the ready-fd port" "$(proxy_get -p "http://ok.test:$up/")" \
    "200 200"
expect_audit "$tmp/audit.ready.log" host=ok.test decision=allow

# Started as root with --user: the gate drops every id after binding
if [ "$(id -u)" = 0 ] && [ -z "${AISB_GATE_USERNS:-}" ] &&
    getent passwd nobody >/dev/null; then
	start_gate user "$tmp/policy.yaml" --user nobody
	nobody=$(id -u nobody)
	check "uids after --user" "$(awk '/^Uid:/ {print $2,$3,$4,$5}' \
	    "/proc/$gate_pid/status")" "$nobody $nobody $nobody $nobody"
	check "groups after --user" "$(awk '/^Groups:/ {print $2}' \
	    "/proc/$gate_pid/status")" "$(id -g nobody)"
	check "CONNECT as nobody" "$(proxy_get -p "http://ok.test:$up/")" "200 200"
	expect_audit "$tmp/audit.user.log" host=ok.test decision=allow
fi

check "secret in logs" "$(cat "$tmp"/gate.*.err "$tmp"/audit.*.log |
    grep -c s3cret || true)" 0

finish
