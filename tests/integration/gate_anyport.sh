#!/bin/bash
# aisb-gate: any TCP port by name (issue 31).  A relay's AISB-TRANSPARENT to
# a synthetic address the gate's DNS handed out (X-Aisb-Dialled) is decided
# as a CONNECT to the name that address was given for, on the port dialled,
# at once: a server that speaks first (ssh, SMTP) is heard before the client
# sends a byte.  Checked here with the gate's own AISB-DNS answers and real
# upstreams: the banner and an echo both ways; a port not on the rule; an
# address the gate never handed out, or handed out to another session (a
# wildcard's name, per session); an exact name of the policy known without
# a query (a restarted gate); ssh-like bytes on 443 named by the address; a
# TLS stream on another port held to the name by its SNI; the audit's
# transparent, named_by, port and byte counts; --record's stream.  And
# per credential, not per user name: under a token file with lines of any
# user name, an address handed to user bob through one line means nothing
# to bob through another such line, nor through a line labelled bob,
# while bob through the same line finds it on every connection, also
# after a reload that moved and added lines around it.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
client=$here/gate_transparent.py
dnsq=$here/gate_dnsstream.py
start_tls_server
start_upstream banner 192.0.2.10
ssh=$up_port
start_upstream banner 192.0.2.11 443
start_dns '{"ssh.test": {"A": ["192.0.2.10"]}, "a.wild.test": {"A": ["192.0.2.10"]},
 "tls.test": {"A": ["192.0.2.20"]}, "evil.test": {"A": ["192.0.2.20"]},
 "ssh443.test": {"A": ["192.0.2.11"]}, "b.wild.test": {"A": ["192.0.2.10"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: ssh.test
    ports: [$ssh]
  - host: "*.wild.test"
    ports: [$ssh]
  - host: tls.test
    ports: [$tls]
  - host: evil.test
    ports: [$tls]
  - host: ssh443.test
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
printf 'sess-1:s3cret-one\nsess-2:s3cret-two\n' >"$tmp/token"
chmod 600 "$tmp/token"
start_gate main "$tmp/policy.yaml" --token-file "$tmp/token" \
    --metrics 127.0.0.1:9128
A=$tmp/audit.main.log
one=sess-1:s3cret-one
two=sess-2:s3cret-two
synth() { "$PY" "$dnsq" --synth "$1"; }
S_SSH=$(synth ssh.test)
S_WILD=$(synth a.wild.test)
S_TLS=$(synth tls.test)
S_443=$(synth ssh443.test)

# --- the gate's DNS hands the address out; the caught connection is the name's
check "AISB-DNS answers ssh.test" "$("$PY" "$dnsq" "$gate_port" "$one" \
    ssh.test/A)" "NOERROR $S_SSH@30"
"$PY" "$client" "$gate_port" "$ssh" banner --auth "$one" --dialled "$S_SSH" \
    --data 'hello\r\n' >"$tmp/out" 2>&1 || true
check "the server speaks first, through the gate" "$(sed -n 1p "$tmp/out")" \
    "banner SSH-2.0-aisb-test"
check "and the stream goes both ways" "$(sed -n 2p "$tmp/out")" "echo hello"
expect_audit "$A" event=decision decision=allow host=ssh.test port="$ssh" \
    method=CONNECT transparent=True named_by=address dialled="$S_SSH" \
    session=sess-1 addr=192.0.2.10
for i in $(seq 50); do
	[ "$(audit_count "$A" event=close host=ssh.test)" = 1 ] && break
	sleep 0.1
done
expect_audit "$A" event=close host=ssh.test port="$ssh" transparent=True \
    named_by=address bytes_up=7 bytes_down=26 reason=eof
check "no 200 to a client that speaks no proxy" \
    "$(audit_count "$A" event=decision named_by=address status=200)" 0

# --- a port not on the rule: refused by the name's rule, closed without a byte
before=$(upstream_accepts 192.0.2.10)
check "a port not on the rule" "$("$PY" "$client" "$gate_port" 2222 raw \
    --auth "$one" --dialled "$S_SSH")" closed
expect_audit "$A" event=decision decision=deny host=ssh.test port=2222 \
    reason=port_not_allowed named_by=address status=403
check "nothing dialled for it" "$(upstream_accepts 192.0.2.10)" "$before"

# --- addresses the gate did not hand out (to this session)
check "a synthetic address never answered" "$("$PY" "$client" "$gate_port" \
    "$ssh" raw --auth "$one" --dialled 198.19.200.200)" closed
expect_audit "$A" event=decision decision=deny reason=unknown_address \
    host=198.19.200.200 dialled=198.19.200.200 port="$ssh" status=403
check "a wildcard's name before its query" "$("$PY" "$client" "$gate_port" \
    "$ssh" raw --auth "$one" --dialled "$S_WILD")" closed
check "AISB-DNS answers a.wild.test to sess-1" "$("$PY" "$dnsq" \
    "$gate_port" "$one" a.wild.test/A)" "NOERROR $S_WILD@30"
"$PY" "$client" "$gate_port" "$ssh" banner --auth "$one" \
    --dialled "$S_WILD" --data 'x' >"$tmp/out" 2>&1 || true
check "the wildcard's name, once answered" "$(sed -n 1p "$tmp/out")" \
    "banner SSH-2.0-aisb-test"
expect_audit "$A" event=decision decision=allow host=a.wild.test \
    session=sess-1 named_by=address
check "another session was not given it" "$("$PY" "$client" "$gate_port" \
    "$ssh" raw --auth "$two" --dialled "$S_WILD")" closed
expect_audit "$A" event=decision decision=deny reason=unknown_address \
    session=sess-2 dialled="$S_WILD"
# an exact name of the policy: its address is known without a query (a
# restarted gate, another worker answered it)
"$PY" "$client" "$gate_port" "$ssh" banner --auth "$two" \
    --dialled "$S_SSH" --data 'y' >"$tmp/out" 2>&1 || true
check "an exact name without a query" "$(sed -n 1p "$tmp/out")" \
    "banner SSH-2.0-aisb-test"
check "the unauthenticated get 407 first" "$("$PY" "$client" "$gate_port" \
    "$ssh" raw --dialled "$S_SSH")" "HTTP/1.1 407 Proxy Authentication Required"

# --- 443: a stream that is neither TLS nor HTTP is named by its address
"$PY" "$dnsq" "$gate_port" "$one" ssh443.test/A >/dev/null
check "ssh-like bytes on 443" "$("$PY" "$client" "$gate_port" 443 raw \
    --auth "$one" --dialled "$S_443" --data 'SSH-2.0-client\r\n' --shut)" \
    "SSH-2.0-aisb-test"
expect_audit "$A" event=decision decision=allow host=ssh443.test port=443 \
    named_by=address
check "443 with no address of the gate's stays transparent_unknown" \
    "$("$PY" "$client" "$gate_port" 443 raw --auth "$one" \
    --dialled 192.0.2.11 --data 'SSH-2.0-client\r\n')" closed
expect_audit "$A" event=decision reason=transparent_unknown port=443

# --- TLS on another port: the name is the address's, the SNI must agree
"$PY" "$dnsq" "$gate_port" "$one" tls.test/A >/dev/null
"$PY" "$client" "$gate_port" "$tls" tls --sni tls.test --ca "$tmp/cert.pem" \
    --auth "$one" --dialled "$S_TLS" >"$tmp/out" 2>&1 || true
check "TLS named by the address, its SNI the same" "$(head -n 1 "$tmp/out")" \
    "tls HTTP/1.1 200 OK"
"$PY" "$client" "$gate_port" "$tls" hello --ext evil.test --auth "$one" \
    --dialled "$S_TLS" >"$tmp/out" 2>&1 || true
check "an SNI of another name (allowed or not) is refused" \
    "$(cat "$tmp/out")" closed
expect_audit "$A" event=decision decision=deny host=tls.test \
    reason=sni_mismatch detail="TLS server name evil.test"

# --- the metrics' reason, and --record's stream
grep -q '^aisb_gate_decisions_total{decision="deny",reason="unknown_address"} 3$' \
    <("$PY" -c 'import urllib.request as u; print(u.urlopen(
"http://127.0.0.1:9128/metrics", timeout=10).read().decode())') &&
    ok || bad "metrics: 3 unknown_address denials"
if command -v tshark >/dev/null; then
	start_gate rec "$tmp/policy.yaml" --token-file "$tmp/token" \
	    --record "$tmp/rec.pcapng"
	"$PY" "$client" "$gate_port" "$ssh" banner --auth "$one" \
	    --dialled "$S_SSH" --data 'recorded\r\n' >"$tmp/out" 2>&1 || true
	check "recorded" "$(sed -n 2p "$tmp/out")" "echo recorded"
	kill "$gate_pid"
	wait "$gate_pid" || true
	check "the capture: the banner from the server to the client" \
	    "$(tshark -n -r "$tmp/rec.pcapng" -Y \
	    'tcp.payload contains "SSH-2.0-aisb-test"' -T fields -e ip.src \
	    2>/dev/null)" 192.0.2.10
	check "the capture: its comment names the name" \
	    "$(tshark -n -r "$tmp/rec.pcapng" -Y frame.comment -T fields \
	    -e frame.comment 2>/dev/null |
	    grep -c "decision=allow reason=allowed host=ssh.test:$ssh")" 1
fi
# --- per credential: one user name through three lines is three sessions
printf 'bob:s3cret-bob\nany-one\nany-two\n' >"$tmp/token.any"
chmod 600 "$tmp/token.any"
start_gate anyuser "$tmp/policy.yaml" --token-file "$tmp/token.any"
Y=$tmp/audit.anyuser.log
S_WILDB=$(synth b.wild.test)
check "AISB-DNS answers b.wild.test to bob through any-one" "$("$PY" \
    "$dnsq" "$gate_port" bob:any-one b.wild.test/A)" "NOERROR $S_WILDB@30"
"$PY" "$client" "$gate_port" "$ssh" banner --auth bob:any-one \
    --dialled "$S_WILDB" --data 'x' >"$tmp/out" 2>&1 || true
check "bob through any-one: its name, on another connection" \
    "$(sed -n 1p "$tmp/out")" "banner SSH-2.0-aisb-test"
check "bob through any-two was not given it" "$("$PY" "$client" \
    "$gate_port" "$ssh" raw --auth bob:any-two --dialled "$S_WILDB")" closed
check "nor bob through the line labelled bob" "$("$PY" "$client" \
    "$gate_port" "$ssh" raw --auth bob:s3cret-bob --dialled "$S_WILDB")" \
    closed
check "both refused as unknown_address" "$(audit_count "$Y" \
    event=decision decision=deny reason=unknown_address session=bob \
    dialled="$S_WILDB")" 2
# a reload that moves the line and adds another before it: the line is
# its label and secret, not its place, and keeps what it was given
printf 'any-three\nany-two\nbob:s3cret-bob\nany-one\n' >"$tmp/token.any"
kill -HUP "$gate_pid"
for _ in $(seq 100); do
	[ "$(audit_count "$Y" event=reload reason=applied)" = 1 ] && break
	sleep 0.1
done
expect_audit "$Y" event=reload reason=applied
"$PY" "$client" "$gate_port" "$ssh" banner --auth bob:any-one \
    --dialled "$S_WILDB" --data 'x' >"$tmp/out" 2>&1 || true
check "bob through any-one after the reload: still its name" \
    "$(sed -n 1p "$tmp/out")" "banner SSH-2.0-aisb-test"
check "bob through the new line any-three: not" "$("$PY" "$client" \
    "$gate_port" "$ssh" raw --auth bob:any-three --dialled "$S_WILDB")" \
    closed
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

check "the test's DNS server was never asked for a synthetic name" \
    "$(grep -c 198\\.1[89] "$tmp/dns.log" || true)" 0
finish
