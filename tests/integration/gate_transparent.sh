#!/bin/bash
# aisb-gate AISB-TRANSPARENT (issue 16): what a relay sends for a tool that
# ignored the proxy variables.  The gate names the stream by its TLS server
# name or its Host header and decides that name, never the address the
# client dialled: a real TLS handshake and data with a server made here for
# an allowed name; refusals (unlisted SNI, also towards the allowed
# server's own address; no SNI; a malformed ClientHello) as a TLS alert;
# plain HTTP served, denied (403), without Host (no_host); a stream that
# is neither; credentials (407); the audit's transparent/tool/dialled; the
# metrics counter.  Nothing refused reaches an upstream or the DNS server.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
client=$here/gate_transparent.py
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls.test \
    -addext subjectAltName=DNS:tls.test -keyout "$tmp/key.pem" \
    -out "$tmp/cert.pem" 2>/dev/null
mkdir "$tmp/srv"
"$PY" "$here/gate_record_server.py" tls --bind 192.0.2.20 \
    --port-file "$tmp/tls.port" --dir "$tmp/srv" --cert "$tmp/cert.pem" \
    --key "$tmp/key.pem" >/dev/null 2>>"$tmp/upstream.err" &
pids+=($!)
wait_file "$tmp/tls.port"
tls=$(cat "$tmp/tls.port")
start_upstream http 192.0.2.10
web=$up_port
start_dns '{"tls.test": {"A": ["192.0.2.20"]}, "web.test": {"A": ["192.0.2.10"]},
 "evil.test": {"A": ["192.0.2.20"]}, "evilweb.test": {"A": ["192.0.2.10"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: tls.test
    ports: [$tls]
  - host: web.test
    ports: [$web]
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
printf 'sess-1:s3cret-token\n' >"$tmp/token"
chmod 600 "$tmp/token"
start_gate main "$tmp/policy.yaml" --token-file "$tmp/token" \
    --metrics 127.0.0.1:9128 --control "$tmp/ctl.sock"
A=$tmp/audit.main.log
cred=(--auth sess-1:s3cret-token)
tlsconns() { ls "$tmp/srv" | grep -c '^tls\.[0-9]*\.in$' || true; }

# --- TLS ------------------------------------------------------------------
"$PY" "$client" "$gate_port" "$tls" tls --sni tls.test --ca "$tmp/cert.pem" \
    "${cred[@]}" --tool node --dialled 192.0.2.99 >"$tmp/out" 2>&1 || true
check "TLS by SNI: handshake and answer" "$(head -n 1 "$tmp/out")" \
    "tls HTTP/1.1 200 OK"
check "TLS by SNI: body" "$(sed -n 2p "$tmp/out")" "got 0 bytes of body:"
expect_audit "$A" event=decision decision=allow host=tls.test port="$tls" \
    method=CONNECT transparent=True tool=node dialled=192.0.2.99 \
    session=sess-1 addr=192.0.2.20
check "no 200 status for a transparent tunnel" \
    "$(audit_count "$A" event=decision transparent=True status=200)" 0
# the close line comes once the tunnel is over: wait for it (bounded)
for i in $(seq 50); do
	[ "$(audit_count "$A" event=close host=tls.test)" = 1 ] && break
	sleep 0.1
done
expect_audit "$A" event=close host=tls.test transparent=True tool=node \
    dialled=192.0.2.99 'bytes_up=[1-9]*' 'bytes_down=[1-9]*'
check "one TLS connection reached the server" "$(tlsconns)" 1

# as a relay sends it: the head and the ClientHello in one write
"$PY" "$client" "$gate_port" "$tls" tls --sni tls.test --ca "$tmp/cert.pem" \
    "${cred[@]}" --pipelined >"$tmp/out" 2>&1 || true
check "pipelined TLS by SNI" "$(head -n 1 "$tmp/out")" "tls HTTP/1.1 200 OK"
"$PY" "$client" "$gate_port" "$tls" tls --sni evil.test --ca "$tmp/cert.pem" \
    "${cred[@]}" --pipelined >"$tmp/out" 2>&1 || true
check "pipelined, unlisted SNI: TLS alert" "$(cat "$tmp/out")" \
    "alert TLSV1_ALERT_ACCESS_DENIED"
check "two TLS connections reached the server" "$(tlsconns)" 2

# an unlisted name, even towards the allowed server's address
"$PY" "$client" "$gate_port" "$tls" tls --sni evil.test --ca "$tmp/cert.pem" \
    "${cred[@]}" --dialled 192.0.2.20 >"$tmp/out" 2>&1 || true
check "unlisted SNI: TLS alert" "$(cat "$tmp/out")" \
    "alert TLSV1_ALERT_ACCESS_DENIED"
expect_audit "$A" event=decision decision=deny reason=host_not_allowed \
    host=evil.test transparent=True dialled=192.0.2.20 'fix=*evil.test*'
check "unlisted SNI: never looked up" "$(grep -c 'evil\.test' "$tmp/dns.log" || true)" 0

"$PY" "$client" "$gate_port" "$tls" tls --ca "$tmp/cert.pem" "${cred[@]}" \
    >"$tmp/out" 2>&1 || true
check "no SNI: TLS alert" "$(cat "$tmp/out")" "alert TLSV1_ALERT_ACCESS_DENIED"
expect_audit "$A" event=decision decision=deny reason=no_sni \
    transparent=True port="$tls"

check "malformed ClientHello: closed after the alert" "$("$PY" "$client" \
    "$gate_port" "$tls" raw "${cred[@]}" \
    --data '\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00')" \
    "alert-record 15030100020231"
expect_audit "$A" event=decision decision=deny reason=tls_malformed \
    transparent=True
check "refused TLS: nothing reached the server" "$(tlsconns)" 2

# --- HTTP -----------------------------------------------------------------
get() {	# get HOST-LINE [TOOL]: prints the status line
	"$PY" "$client" "$gate_port" "$web" raw "${cred[@]}" \
	    ${2:+--tool "$2"} \
	    --data "GET /hello?x=1 HTTP/1.1\\r\\n${1}X-Test: 1\\r\\n\\r\\n"
}
check "HTTP by Host" "$(get "Host: web.test\\r\\n" curl)" \
    "HTTP/1.0 200 OK"
expect_audit "$A" event=decision decision=allow method=GET host=web.test \
    port="$web" transparent=True tool=curl session=sess-1
# what the upstream got: the path, the Host, the body; none of the relay's
"$PY" - "$gate_port" "$web" <<'PY' >"$tmp/fwd"
import base64, json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
s.sendall(b"AISB-TRANSPARENT %s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n"
          b"X-Aisb-Tool: curl\r\n\r\nPOST /p?q=1 HTTP/1.1\r\nHost: web.test\r\n"
          b"Content-Length: 5\r\n\r\nhello" % (sys.argv[2].encode(),
          base64.b64encode(b"sess-1:s3cret-token")))
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
o = json.loads(d.split(b"\r\n\r\n", 1)[1])
h = {k.lower(): v for k, v in o["headers"]}
print(o["method"], o["path"], h.get("host"), o["body_len"],
      "x-aisb-tool" in h, "proxy-authorization" in h)
PY
check "HTTP forwarded as a request" "$(cat "$tmp/fwd")" \
    "POST /p?q=1 web.test 5 False False"

check "HTTP, unlisted Host: 403" "$(get "Host: evilweb.test\\r\\n")" \
    "HTTP/1.1 403 Forbidden"
expect_audit "$A" event=decision decision=deny reason=host_not_allowed \
    host=evilweb.test method=GET transparent=True
check "HTTP without Host: 403" "$("$PY" "$client" "$gate_port" "$web" raw \
    "${cred[@]}" --data 'GET / HTTP/1.0\r\n\r\n')" "HTTP/1.1 403 Forbidden"
expect_audit "$A" event=decision decision=deny reason=no_host transparent=True
check "HTTP, Host on another port: 400" \
    "$(get "Host: web.test:1\\r\\n")" "HTTP/1.1 400 Bad Request"
expect_audit "$A" event=decision reason=host_mismatch transparent=True
check "HTTP, absolute-form target: 400" "$("$PY" "$client" "$gate_port" \
    "$web" raw "${cred[@]}" \
    --data 'GET http://web.test/ HTTP/1.1\r\nHost: web.test\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
check "HTTP, malformed head: 400" "$("$PY" "$client" "$gate_port" "$web" raw \
    "${cred[@]}" --data 'GET / HTTP/1.1\r\nHost : web.test\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
check "neither TLS nor HTTP: closed, no answer" "$("$PY" "$client" \
    "$gate_port" "$web" raw "${cred[@]}" --data 'SSH-2.0-x\r\n')" closed
expect_audit "$A" event=decision decision=error reason=transparent_unknown \
    transparent=True
check "an invalid tool is not audited" "$(get "Host: web.test\\r\\n" 'a b')" \
    "HTTP/1.0 200 OK"
check "no tool field for it" "$(audit_count "$A" 'tool=a*')" 0

# --- the head itself ------------------------------------------------------
check "no credentials: 407" "$("$PY" "$client" "$gate_port" "$web" raw \
    --data 'GET / HTTP/1.1\r\nHost: web.test\r\n\r\n')" \
    "HTTP/1.1 407 Proxy Authentication Required"
check "wrong credentials: 407" "$("$PY" "$client" "$gate_port" "$web" raw \
    --auth sess-1:nope --data 'GET / HTTP/1.1\r\nHost: web.test\r\n\r\n')" \
    "HTTP/1.1 407 Proxy Authentication Required"
expect_audit "$A" event=decision reason=auth_required method=AISB-TRANSPARENT
for p in 0 65536 80x 080; do
	check "port '$p': 400" "$("$PY" "$client" "$gate_port" "$p" raw \
	    "${cred[@]}" --data 'GET / HTTP/1.1\r\nHost: web.test\r\n\r\n')" \
	    "HTTP/1.1 400 Bad Request"
done
expect_audit "$A" event=decision reason=bad_target method=AISB-TRANSPARENT

allowed_tls=2
# --- --record: the stream as for CONNECT (read with tshark when there is one)
if command -v tshark >/dev/null; then
	start_gate rec "$tmp/policy.yaml" --token-file "$tmp/token" \
	    --record "$tmp/rec.pcapng"
	"$PY" "$client" "$gate_port" "$tls" tls --sni tls.test \
	    --ca "$tmp/cert.pem" "${cred[@]}" >"$tmp/out" 2>&1 || true
	check "recorded TLS by SNI" "$(head -n 1 "$tmp/out")" "tls HTTP/1.1 200 OK"
	kill "$gate_pid"
	wait "$gate_pid" || true
	check "the capture: the ClientHello from the client to the server" \
	    "$(tshark -n -r "$tmp/rec.pcapng" -Y \
	    'tls.handshake.extensions_server_name == "tls.test"' \
	    -T fields -e ip.dst 2>/dev/null)" 192.0.2.20
	allowed_tls=3
	check "the capture: its comment" "$(tshark -n -r "$tmp/rec.pcapng" \
	    -Y frame.comment -T fields -e frame.comment 2>/dev/null |
	    grep -c "session=sess-1 decision=allow reason=allowed host=tls.test:$tls")" 1
fi

# --- metrics, and what never happened -------------------------------------
"$PY" - >"$tmp/metrics.txt" <<'PY'
import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:9128/metrics", timeout=10)
      .read().decode())
PY
n=$(audit_count "$A" event=decision transparent=True)
check "metrics count every transparent head" \
    "$(sed -n 's/^aisb_gate_transparent_total //p' "$tmp/metrics.txt")" "$n"
check "the control socket counts them too" \
    "$(control "$tmp/ctl.sock" status counters.transparent)" "$n"
grep -q '^aisb_gate_decisions_total{decision="deny",reason="no_sni"} 1$' \
    "$tmp/metrics.txt" && ok || bad "no no_sni decision in the metrics"
check "nothing refused reached a server" "$(tlsconns)" "$allowed_tls"
check "unlisted names never looked up" \
    "$(grep -c 'evil' "$tmp/dns.log" || true)" 0
finish
