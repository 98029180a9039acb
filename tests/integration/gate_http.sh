#!/bin/bash
# aisb-gate: strict request parsing.  Each malformed head is answered
# 400/414/431 and closed, with one audit line, and nothing reaches an
# upstream; request bodies (Content-Length and chunked) are forwarded
# exactly, and bytes behind the one request are never sent upstream.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream capture 192.0.2.11
cap=$up_port
start_upstream keepalive 192.0.2.11
ka=$up_port
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "cap.test": {"A": ["192.0.2.11"]},
 "ka.test": {"A": ["192.0.2.11"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: ok.test
    ports: [$up]
  - host: cap.test
    ports: [$cap]
  - host: ka.test
    ports: [$ka]
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
start_gate main "$tmp/policy.yaml"
A=$tmp/audit.main.log

# name, expected status, expected audit detail; the bytes come from Python
"$PY" - "$gate_port" "$up" >"$tmp/malformed" <<'PY'
import socket, sys
port, up = int(sys.argv[1]), sys.argv[2].encode()
T = b"GET http://ok.test:" + up + b"/ HTTP/1.1\r\n"
cases = [
 ("long request line", b"GET http://ok.test/" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414, "request line too long"),
 ("large header section", T + (b"X-A: " + b"b" * 1000 + b"\r\n") * 40 + b"\r\n", 431, "header section too large"),
 ("101 header fields", T + b"X-N: 1\r\n" * 101 + b"\r\n", 431, "too many header fields"),
 ("obs-fold", T + b"X-A: 1\r\n  folded\r\n\r\n", 400, "obsolete line folding"),
 ("bare LF", b"GET http://ok.test/ HTTP/1.1\nHost: ok.test\n\n", 400, "bare LF in request head"),
 ("bare CR", T + b"X-A: 1\rX-B: 2\r\n\r\n", 400, "bare CR in request head"),
 ("NUL", T + b"X-A: a\x00b\r\n\r\n", 400, "NUL byte in request head"),
 ("control byte", T + b"X-A: a\x01b\r\n\r\n", 400, "control character in field value"),
 ("CL and TE", T + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"),
 ("duplicate CL", T + b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400, "duplicate Content-Length"),
 ("non-numeric CL", T + b"Content-Length: 5x\r\n\r\nhello", 400, "bad Content-Length"),
 ("negative CL", T + b"Content-Length: -1\r\n\r\n", 400, "bad Content-Length"),
 ("CL list", T + b"Content-Length: 5, 5\r\n\r\nhello", 400, "bad Content-Length"),
 ("unknown TE", T + b"Transfer-Encoding: gzip, chunked\r\n\r\n", 400, "unsupported Transfer-Encoding"),
 ("space before colon", T + b"Host : ok.test\r\n\r\n", 400, "malformed header field"),
 ("duplicate Host", T + b"Host: ok.test\r\nHost: ok.test\r\n\r\n", 400, "duplicate Host"),
 ("HTTP/2.0", b"GET http://ok.test/ HTTP/2.0\r\n\r\n", 400, "unsupported HTTP version"),
 ("two spaces", b"GET  http://ok.test/ HTTP/1.1\r\n\r\n", 400, "malformed request target"),
 ("empty line first", b"\r\nGET http://ok.test/ HTTP/1.1\r\n\r\n", 400, "empty request line"),
 ("lowercase connect", b"connect ok.test:" + up + b" HTTP/1.1\r\n\r\n", 400, "unknown method"),
 ("mixed-case Get", b"Get http://ok.test:" + up + b"/ HTTP/1.1\r\n\r\n", 400, "unknown method"),
 ("CL 2^32+5", T + b"Content-Length: 4294967301\r\n\r\nhello", 400, "Content-Length over 2^31 - 1"),
]
for name, data, status, detail in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(data)
    except OSError:
        pass
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    s.close()
    line = got.split(b"\r\n", 1)[0].decode("latin-1")
    print("%s|%s|%d|%s" % (name, line, status, detail))
PY
n=0
while IFS='|' read -r name line status detail; do
	n=$((n + 1))
	case $line in
	"HTTP/1.1 $status "*) ok ;;
	*) bad "$name: got '$line', want $status" ;;
	esac
	expect_audit "$A" event=decision decision=error status="$status" \
	    reason=bad_request detail="$detail"
done <"$tmp/malformed"
check "malformed cases run" "$n" 22
check "bad requests audited" "$(audit_count "$A" reason=bad_request)" 22
check "nothing reached an upstream" "$(upstream_accepts 192.0.2.10)" 0

# Bodies: Content-Length and chunked, forwarded whole
head -c 100000 /dev/urandom >"$tmp/blob"
check "POST Content-Length" "$(proxy_get --data-binary @"$tmp/blob" \
    "http://ok.test:$up/post")" "000 200"
grep -q '"body_len": 100000' "$tmp/body" && ok || bad "CL body: $(head -c 300 "$tmp/body")"
check "POST chunked" "$(proxy_get -H 'Transfer-Encoding: chunked' \
    --data-binary @"$tmp/blob" "http://ok.test:$up/chunked")" "000 200"
grep -q '"body_len": 100000' "$tmp/body" && ok || bad "chunked body: $(head -c 300 "$tmp/body")"
expect_audit "$A" method=POST host=ok.test decision=allow

# Smuggling: bytes behind the one request never go upstream
H="Host: cap.test:$cap\r\n"
out=$(printf "POST http://cap.test:$cap/a HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhelloGET http://cap.test:$cap/smuggled HTTP/1.1\r\n${H}\r\n" |
    "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.stdin.buffer.read())
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
sys.stdout.write(d.decode("latin-1"))
' "$gate_port")
case $out in
*"POST /a HTTP/1.1"*hello*) ok ;;
*) bad "CL request not forwarded: $out" ;;
esac
case $out in *smuggled*) bad "CL: smuggled request forwarded" ;; *) ok ;; esac
out=$(printf "POST http://cap.test:$cap/b HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET http://cap.test:$cap/smuggled HTTP/1.1\r\n${H}\r\n" |
    "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.stdin.buffer.read())
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
sys.stdout.write(d.decode("latin-1"))
' "$gate_port")
case $out in
*"POST /b HTTP/1.1"*"5"*hello*"0"*) ok ;;
*) bad "chunked request not forwarded: $out" ;;
esac
case $out in *smuggled*) bad "chunked: smuggled request forwarded" ;; *) ok ;; esac
expect_audit "$A" method=POST host=cap.test decision=allow
sleep 0.3
expect_audit "$A" event=close method=POST host=cap.test

# A chunk of 2^31 bytes or more is refused with 400 (an upstream keeping the
# size in 32 bits would read the rest as a second request); 2^31 - 1 passes.
chunk_try() {	# chunk_try SIZE-LINE: the first line of the answer
	"$PY" - "$gate_port" "$cap" "$1" <<'PY'
import socket, sys
port, cap, size = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3].encode()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"POST http://cap.test:%s/c HTTP/1.1\r\nHost: cap.test:%s\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n%s\r\nGET /x HTTP/1.1\r\n\r\n"
          % (cap, cap, size))
d = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        d += b
except OSError:
    pass
print(d.split(b"\r\n")[0].decode("latin-1"))
PY
}
check "chunk 2^31" "$(chunk_try 80000000)" "HTTP/1.1 400 Bad Request"
check "chunk 2^32+1" "$(chunk_try 100000001)" "HTTP/1.1 400 Bad Request"
expect_audit "$A" event=close host=cap.test reason=bad_chunked_body
check "chunk 2^31-1" "$(chunk_try 7fffffff)" "HTTP/1.0 200 OK"

# A client that half-closes right after its request still gets the answer
check "half-closed client" "$("$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET http://ok.test:%s/half HTTP/1.0\r\n\r\n" % sys.argv[2].encode())
s.shutdown(socket.SHUT_WR)
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
print(d.split(b"\r\n")[0].decode())' "$gate_port" "$up")" "HTTP/1.0 200 OK"

# ... and one that half-closes once the answer has begun still gets all of
# it (the upstream sends it in two parts): an EOF from the client is not
# the end of the answer
check "half-closed client, answer begun" "$("$PY" -c '
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET http://ok.test:%s/half/slow HTTP/1.0\r\n\r\n" %
          sys.argv[2].encode())
d = s.recv(65536)
s.shutdown(socket.SHUT_WR)
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
print(json.loads(d.split(b"\r\n\r\n", 1)[1])["path"])' "$gate_port" "$up")" \
    "/half/slow"

# CONNECT to a name: the TLS server name must be that name (else the tunnel
# is closed before a byte of the handshake reaches the upstream)
"$PY" - "$gate_port" "$cap" >"$tmp/sni.out" <<'PY'
import socket, ssl, sys
port, cap = int(sys.argv[1]), int(sys.argv[2])

def hello_bytes(name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = ctx.wrap_bio(inc, out, server_hostname=name)
    try:
        o.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()

def tunnel(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"CONNECT cap.test:%d HTTP/1.1\r\nHost: cap.test\r\n\r\n" % cap)
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    s.sendall(data)
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    return "forwarded" if got.startswith(b"HTTP/1.0 200 OK") and data in got \
        else "closed" if got == b"" else "other"

print("same", tunnel(hello_bytes("cap.test")))
print("upper", tunnel(hello_bytes("CAP.Test")))
print("other", tunnel(hello_bytes("evil.test")))
print("none", tunnel(hello_bytes(None)))
print("malformed", tunnel(b"\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00"))
PY
for want in "same forwarded" "upper forwarded" "other closed" "none forwarded" \
    "malformed closed"; do
	grep -qx "$want" "$tmp/sni.out" && ok || bad "SNI: want '$want': $(cat "$tmp/sni.out")"
done
expect_audit "$A" event=decision host=cap.test decision=deny \
    reason=sni_mismatch detail="TLS server name evil.test"
expect_audit "$A" event=close host=cap.test reason=sni_mismatch bytes_up=0
expect_audit "$A" event=decision host=cap.test decision=deny \
    reason=tls_malformed

# An upstream that keeps the connection open despite "Connection: close":
# once the client has its answer and closes, the gate closes too
check "GET keep-alive upstream" "$(proxy_get "http://ka.test:$ka/")" "000 200"
check "keep-alive body" "$(cat "$tmp/body")" ok
# (two seconds of upstream silence after the client's EOF, not the idle
# timeout)
for i in $(seq 40); do
	[ "$(audit_count "$A" event=close host=ka.test reason="client closed")" \
	    = 1 ] && break
	sleep 0.1
done
expect_audit "$A" event=close host=ka.test reason="client closed"

finish
