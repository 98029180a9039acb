#!/bin/bash
# aisb-gate: 500 slow clients sending a byte a second while a normal CONNECT
# still succeeds, then all answered 408 by the header timeout; connection
# limits overall and per client; the idle timeout; 32 MiB through one
# tunnel both ways with a half-close at the end.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream echo 192.0.2.11
echo_port=$up_port
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "echo.test": {"A": ["192.0.2.11"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: ok.test
    ports: [$up]
  - host: echo.test
    ports: [$echo_port]
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF

# --- slowloris -----------------------------------------------------------------
start_gate slow "$tmp/policy.yaml" --header-timeout 4 --max-per-client 1000
A=$tmp/audit.slow.log
"$PY" - "$gate_port" >"$tmp/slow.out" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
req = b"GET http://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n"
socks = [socket.create_connection(("127.0.0.1", port), timeout=5)
         for _ in range(500)]
for s in socks:
    s.setblocking(False)
answers = {}
deadline = time.time() + 15
i = 0
while len(answers) < len(socks) and time.time() < deadline:
    for k, s in enumerate(socks):
        if k in answers:
            continue
        try:
            d = s.recv(4096)
            answers[k] = d.split(b"\r\n", 1)[0].decode() if d else "closed"
            continue
        except BlockingIOError:
            pass
        except OSError as e:
            answers[k] = "error " + str(e)
            continue
        if i < len(req):
            try:
                s.send(req[i:i + 1])
            except OSError:
                pass
    i += 1
    time.sleep(1)
codes = {}
for v in answers.values():
    codes[v] = codes.get(v, 0) + 1
print("answered %d: %s" % (len(answers), codes))
PY
slow_pid=$!
pids+=($slow_pid)
sleep 2
t0=$(date +%s%N)
check "CONNECT among slow clients" "$(proxy_get -p "http://ok.test:$up/")" "200 200"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 2000 ] && ok || bad "CONNECT took ${ms} ms among slow clients"
expect_audit "$A" method=CONNECT host=ok.test decision=allow
wait "$slow_pid" || true
grep -q "answered 500: {'HTTP/1.1 408 Request Timeout': 500}" "$tmp/slow.out" &&
    ok || bad "slow clients: $(cat "$tmp/slow.out")"
check "header timeouts audited" \
    "$(audit_count "$A" status=408 reason=header_timeout)" 500

# --- limits ---------------------------------------------------------------------
start_gate lim "$tmp/policy.yaml" --max-conns 4 --max-per-client 3
B=$tmp/audit.lim.log
"$PY" - "$gate_port" >"$tmp/lim.out" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
def conn(src):
    s = socket.socket()
    s.settimeout(5)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s
def answer(s):
    # the whole answer, and whether its Content-Length is its body's length
    d = b""
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            d += b
    except socket.timeout:
        return "none" if not d else "no close"
    if not d:
        return "closed"
    head, _, body = d.partition(b"\r\n\r\n")
    cl = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    ok = len(cl) == 1 and int(cl[0].split(b":")[1]) == len(body)
    return "%s length=%s" % (head.split(b"\r\n", 1)[0].decode(),
                             "ok" if ok else "WRONG")
held = [conn("127.0.0.1") for _ in range(3)]
time.sleep(0.3)
print("client:", answer(conn("127.0.0.1")))
held.append(conn("127.0.0.2"))
time.sleep(0.3)
print("total:", answer(conn("127.0.0.3")))
PY
grep -q "^client: HTTP/1.1 503 Service Unavailable length=ok$" "$tmp/lim.out" && ok ||
    bad "per-client limit: $(cat "$tmp/lim.out")"
grep -q "^total: HTTP/1.1 503 Service Unavailable length=ok$" "$tmp/lim.out" && ok ||
    bad "total limit: $(cat "$tmp/lim.out")"
expect_audit "$B" status=503 reason=limit_client
expect_audit "$B" status=503 reason=limit_total client=127.0.0.3:*

# --- idle timeout and a large tunnel -----------------------------------------
start_gate idle "$tmp/policy.yaml" --idle-timeout 2
C=$tmp/audit.idle.log
"$PY" - "$gate_port" "$echo_port" >"$tmp/tunnel.out" <<'PY'
import hashlib, os, socket, sys, threading, time
port, echo = int(sys.argv[1]), int(sys.argv[2])

def tunnel():
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(b"CONNECT echo.test:%d HTTP/1.1\r\nHost: echo.test\r\n\r\n" % echo)
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 200 "), head
    return s

# 32 MiB each way; the echo only reads as fast as the gate delivers.
# The data is made before the tunnel opens: on a loaded machine making it
# took longer than the gate's 2 s idle timeout.
blob = bytearray(os.urandom(1 << 20) * 32)
blob[0] = 0x42      # not 0x16: this tunnel carries no TLS ClientHello
blob = bytes(blob)
want = hashlib.sha256(blob).hexdigest()
s = tunnel()
def send():
    s.sendall(blob)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send)
t.start()
h, n = hashlib.sha256(), 0
while True:
    d = s.recv(1 << 16)
    if not d:
        break
    h.update(d)
    n += len(d)
t.join()
print("bulk", n, h.hexdigest() == want)

# idle: open, one exchange, then silence until the gate closes it
s = tunnel()
s.sendall(b"ping")
assert s.recv(4) == b"ping"
t0 = time.time()
s.settimeout(10)
d = s.recv(10)
print("idle closed", d == b"", round(time.time() - t0))
PY
grep -q "^bulk 33554432 True$" "$tmp/tunnel.out" && ok ||
    bad "bulk tunnel: $(cat "$tmp/tunnel.out")"
grep -q "^idle closed True 2$" "$tmp/tunnel.out" && ok ||
    bad "idle tunnel: $(cat "$tmp/tunnel.out")"
expect_audit "$C" event=close host=echo.test reason=eof bytes_up=33554432 \
    bytes_down=33554432
expect_audit "$C" event=close host=echo.test reason=idle_timeout bytes_up=4 \
    bytes_down=4

finish
