#!/bin/bash
# aisb-gate: SIGHUP with a valid and an invalid policy while a tunnel is
# live (the tunnel keeps running, new requests follow the policy in force),
# SIGHUP reopens the audit log (rotation), reload through the control
# socket, SIGTERM drain (no new connections, live tunnels finish, bounded
# by --drain-timeout), SIGINT (exit now), --reload-closes (alone, with
# --users: each tunnel judged by its own user's policy, and with a token
# file: a tunnel whose line a reload removed is closed).
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream echo 192.0.2.11
echo_port=$up_port
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "echo.test": {"A": ["192.0.2.11"]}}'
write_policy "$tmp/policy.yaml" ok.test echo.test

# A helper that holds a tunnel to the echo server and answers commands on
# stdin: "ping" (one round trip), "close"; it prints one line per command.
hold_tunnel() {	# hold_tunnel NAME [USER:SECRET]: coprocess, fds in ${NAME[@]}
	coproc "$1" { "$PY" -u -c '
import base64, socket, sys
port, echo = int(sys.argv[1]), int(sys.argv[2])
auth = b""
if sys.argv[3]:
    auth = b"Proxy-Authorization: Basic %s\r\n" % base64.b64encode(sys.argv[3].encode())
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"CONNECT echo.test:%d HTTP/1.1\r\nHost: echo.test\r\n%s\r\n" % (echo, auth))
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
print(head.split(b"\r\n")[0].decode())
for cmd in sys.stdin:
    cmd = cmd.strip()
    try:
        if cmd == "ping":
            s.sendall(b"ping")
            print("pong" if s.recv(4) == b"ping" else "bad")
        elif cmd == "wait-close":
            print("closed" if s.recv(10) == b"" else "data")
        elif cmd == "close":
            s.close()
            print("closed")
            break
    except OSError as e:
        print("error", e)
' "$gate_port" "$echo_port" "${2:-}"; }
}
# An AISB-DNS stream held open, answering "query" (one A query of
# echo.test: "answer" or "closed") and "wait-close".
hold_dns() {	# hold_dns NAME USER:SECRET: coprocess, fds in ${NAME[@]}
	coproc "$1" { "$PY" -u -c '
import base64, socket, struct, sys
port, cred = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"AISB-DNS * HTTP/1.1\r\nHost: *\r\nProxy-Authorization: Basic %s\r\n\r\n"
          % base64.b64encode(cred.encode()))
def query():
    q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + \
        b"\x04echo\x04test\x00" + struct.pack(">HH", 1, 1)
    s.sendall(struct.pack(">H", len(q)) + q)
    n = s.recv(2)
    if len(n) < 2:
        return "closed"
    want, d = struct.unpack(">H", n)[0], b""
    while len(d) < want:
        b = s.recv(want - len(d))
        if not b:
            return "closed"
        d += b
    return "answer"
print("ready")
for cmd in sys.stdin:
    cmd = cmd.strip()
    try:
        if cmd == "query":
            print(query())
        elif cmd == "wait-close":
            print("closed" if s.recv(10) == b"" else "data")
    except OSError as e:
        print("error", e)
' "$gate_port" "$2"; }
}
say() {	# say COPROC-NAME COMMAND: prints the answer (10 s at most)
	local -n cp=$1
	local line=timeout
	echo "$2" >&"${cp[1]}"
	read -r -t 10 line <&"${cp[0]}" || true
	echo "$line"
}

start_gate main "$tmp/policy.yaml" --control "$tmp/ctl.sock"
A=$tmp/audit.main.log
hold_tunnel T1
read -r -t 10 line <&"${T1[0]}" || line=timeout
check "tunnel up" "$line" "HTTP/1.1 200 Connection established"
check "tunnel ping" "$(say T1 ping)" pong

# SIGHUP, valid policy without echo.test: new requests denied, tunnel lives
write_policy "$tmp/policy.yaml" ok.test
kill -HUP "$gate_pid"
sleep 0.5
check "after reload: echo.test" "$(proxy_get -p "http://echo.test:$echo_port/")" \
    "403 000"
expect_audit "$A" host=echo.test decision=deny reason=host_not_allowed
check "after reload: ok.test" "$(proxy_get -p "http://ok.test:$up/")" "200 200"
check "tunnel survives reload" "$(say T1 ping)" pong
grep -q "reload: policy .* sha256:" "$tmp/gate.main.err" && ok ||
    bad "no reload log line"

# SIGHUP, invalid policy: the previous one stays in force
printf 'version: 1\nallow:\n  - host: "*bob.x"\n' >"$tmp/policy.yaml"
kill -HUP "$gate_pid"
sleep 0.5
grep -q "reload: .* is invalid, keeping policy sha256:" "$tmp/gate.main.err" &&
    ok || bad "no invalid-reload log line"
# the details are log lines (so a detached gate's syslog has them too)
grep -q "^aisb-gate: reload: .*policy.yaml:3:11: error: invalid wildcard" \
    "$tmp/gate.main.err" && ok || bad "reload error not logged"
check "after bad reload: ok.test" "$(proxy_get -p "http://ok.test:$up/")" "200 200"
check "after bad reload: echo.test" \
    "$(proxy_get -p "http://echo.test:$echo_port/")" "403 000"
check "tunnel survives bad reload" "$(say T1 ping)" pong

# SIGHUP reopens the audit log (rotation)
mv "$A" "$tmp/audit.rotated.log"
kill -HUP "$gate_pid"
sleep 0.5
check "after rotation: ok.test" "$(proxy_get -p "http://ok.test:$up/rotated")" \
    "200 200"
expect_audit "$A" host=ok.test decision=allow
check "rotated log keeps the old lines" \
    "$(audit_count "$tmp/audit.rotated.log" host=ok.test decision=allow)" 2

# reload through the control socket
write_policy "$tmp/policy.yaml" ok.test echo.test
check "control reload" "$("$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"reload\n")
print(s.recv(100).decode().strip())' "$tmp/ctl.sock")" '{"reload":"ok"}'
check "after control reload: echo.test" \
    "$("$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"CONNECT echo.test:%s HTTP/1.1\r\n\r\nx" % sys.argv[2].encode())
print(s.recv(40).split(b"\r\n")[0].decode())' "$gate_port" "$echo_port")" \
    "HTTP/1.1 200 Connection established"

# SIGTERM: the listener closes, the live tunnel finishes, then the gate exits
kill -TERM "$gate_pid"
sleep 0.5
rc=0; curl -sS -m 5 -o /dev/null -x "http://127.0.0.1:$gate_port" \
    "http://ok.test:$up/" 2>/dev/null || rc=$?
check "no new connections while draining" "$rc" 7
check "tunnel works while draining" "$(say T1 ping)" pong
kill -0 "$gate_pid" 2>/dev/null && ok || bad "gate exited before the tunnel closed"
check "tunnel closed" "$(say T1 close)" closed
rc=0; timeout 5 tail --pid="$gate_pid" -f /dev/null || rc=$?
check "gate exits once drained" "$rc" 0
rc=0; wait "$gate_pid" || rc=$?
check "drain exit status" "$rc" 0
expect_audit "$A" event=close host=echo.test reason=eof bytes_up=16 bytes_down=16

# SIGTERM with a tunnel that stays open: closed after --drain-timeout
write_policy "$tmp/policy.yaml" ok.test echo.test
start_gate drain "$tmp/policy.yaml" --drain-timeout 1
hold_tunnel T2
read -r -t 10 line <&"${T2[0]}" || line=timeout
check "tunnel 2 up" "$line" "HTTP/1.1 200 Connection established"
t0=$(date +%s%N)
kill -TERM "$gate_pid"
check "tunnel 2 closed by the drain deadline" "$(say T2 wait-close)" closed
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge 900 ] && [ "$ms" -lt 4000 ] && ok || bad "drain took ${ms} ms"
rc=0; wait "$gate_pid" || rc=$?
check "drain deadline exit status" "$rc" 0
expect_audit "$tmp/audit.drain.log" event=close host=echo.test reason=shutdown

# SIGINT: exit now, tunnels or not
start_gate int "$tmp/policy.yaml"
hold_tunnel T3
read -r -t 10 line <&"${T3[0]}" || line=timeout
check "tunnel 3 up" "$line" "HTTP/1.1 200 Connection established"
kill -INT "$gate_pid"
check "tunnel 3 closed at once" "$(say T3 wait-close)" closed
rc=0; wait "$gate_pid" || rc=$?
check "SIGINT exit status" "$rc" 0
expect_audit "$tmp/audit.int.log" event=close host=echo.test reason=shutdown

# --reload-closes: a reload that still allows a tunnel keeps it; one that
# narrows the policy past it closes it ("policy_reload"), says how many;
# without the flag (above) the tunnel outlives any reload
write_policy "$tmp/policy.yaml" ok.test echo.test
start_gate closes "$tmp/policy.yaml" --reload-closes
hold_tunnel T4
read -r -t 10 line <&"${T4[0]}" || line=timeout
check "tunnel 4 up" "$line" "HTTP/1.1 200 Connection established"
write_policy "$tmp/policy.yaml" echo.test ok.test other.test
kill -HUP "$gate_pid"
sleep 0.5
check "a reload that still allows it: tunnel 4 lives" "$(say T4 ping)" pong
grep -q "reload: 0 connection(s) the policy now denies closed" \
    "$tmp/gate.closes.err" && ok || bad "no count of 0 closed"
write_policy "$tmp/policy.yaml" ok.test
kill -HUP "$gate_pid"
check "a narrowing reload: tunnel 4 closed" "$(say T4 wait-close)" closed
expect_audit "$tmp/audit.closes.log" event=close host=echo.test reason=policy_reload
grep -q "reload: 1 connection(s) the policy now denies closed" \
    "$tmp/gate.closes.err" && ok || bad "no count of 1 closed"
check "after the narrowing reload: ok.test" \
    "$(proxy_get -p "http://ok.test:$up/")" "200 200"
kill -INT "$gate_pid"
wait "$gate_pid" || true

# --reload-closes with --users: each live tunnel is judged by its own
# user's policy; narrowing alice's closes alice's tunnel only, and a user
# taken out of the file loses hers too
write_policy "$tmp/alice.yaml" echo.test
write_policy "$tmp/bob.yaml" echo.test
printf 'alice plain:alice-secret policy=%s\nbob plain:bob-secret policy=%s\n' \
    "$tmp/alice.yaml" "$tmp/bob.yaml" >"$tmp/users.conf"
chmod 0600 "$tmp/users.conf"
write_policy "$tmp/policy.yaml" ok.test
start_gate users "$tmp/policy.yaml" --reload-closes --users "$tmp/users.conf"
hold_tunnel TA alice:alice-secret
read -r -t 10 line <&"${TA[0]}" || line=timeout
check "alice's tunnel up" "$line" "HTTP/1.1 200 Connection established"
hold_tunnel TB bob:bob-secret
read -r -t 10 line <&"${TB[0]}" || line=timeout
check "bob's tunnel up" "$line" "HTTP/1.1 200 Connection established"
write_policy "$tmp/alice.yaml" ok.test
kill -HUP "$gate_pid"
check "alice narrowed: her tunnel closed" "$(say TA wait-close)" closed
check "alice narrowed: bob's tunnel lives" "$(say TB ping)" pong
expect_audit "$tmp/audit.users.log" event=close user=alice host=echo.test \
    reason=policy_reload
grep -q "reload: 1 connection(s) the policy now denies closed" \
    "$tmp/gate.users.err" && ok || bad "--users: no count of 1 closed"
printf 'alice plain:alice-secret policy=%s\n' "$tmp/alice.yaml" \
    >"$tmp/users.conf"
kill -HUP "$gate_pid"
check "bob no longer a user: his tunnel closed" "$(say TB wait-close)" closed
expect_audit "$tmp/audit.users.log" event=close user=bob host=echo.test \
    reason=policy_reload
kill -INT "$gate_pid"
wait "$gate_pid" || true

# --reload-closes with a token file: a live tunnel whose line the reload
# removed is closed, also when that line took any user name and another
# such line stays (the same user name through it lives on)
printf 'anypw\nother\n' >"$tmp/tokens.conf"
chmod 0600 "$tmp/tokens.conf"
write_policy "$tmp/policy.yaml" ok.test echo.test
start_gate tok "$tmp/policy.yaml" --reload-closes \
    --token-file "$tmp/tokens.conf"
hold_tunnel TC bob:anypw
read -r -t 10 line <&"${TC[0]}" || line=timeout
check "bob's tunnel through anypw up" "$line" \
    "HTTP/1.1 200 Connection established"
hold_tunnel TD bob:other
read -r -t 10 line <&"${TD[0]}" || line=timeout
check "bob's tunnel through other up" "$line" \
    "HTTP/1.1 200 Connection established"
hold_dns DC bob:anypw
read -r -t 10 line <&"${DC[0]}" || line=timeout
check "bob's DNS stream through anypw answers" "$(say DC query)" answer
hold_dns DD bob:other
read -r -t 10 line <&"${DD[0]}" || line=timeout
check "bob's DNS stream through other answers" "$(say DD query)" answer
printf 'other\n' >"$tmp/tokens.conf"
kill -HUP "$gate_pid"
check "line anypw removed: its tunnel closed" "$(say TC wait-close)" closed
check "line anypw removed: the other line's tunnel lives" "$(say TD ping)" \
    pong
check "line anypw removed: its DNS stream closed" "$(say DC wait-close)" \
    closed
check "line anypw removed: the other line's DNS stream answers" \
    "$(say DD query)" answer
expect_audit "$tmp/audit.tok.log" event=close session=bob host=echo.test \
    reason=policy_reload
grep -q "reload: 2 connection(s) the policy now denies closed" \
    "$tmp/gate.tok.err" && ok || bad "token file: no count of 2 closed"
kill -INT "$gate_pid"
wait "$gate_pid" || true

# A detached gate (no -d) logs to syslog, its stderr is /dev/null: a bad
# policy on SIGHUP must still say file:line:col there.  /dev/log is the
# test's own datagram socket, in a mount namespace of the gate's own.
if [ "$(id -u)" = 0 ] && [ -z "${AISB_GATE_USERNS:-}" ] &&
    unshare -m true 2>/dev/null; then
	"$PY" - "$tmp/log.sock" "$tmp/syslog" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1] + ".tmp")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
with open(sys.argv[1] + ".ready", "w") as f:
    f.write("1\n")
with open(sys.argv[2], "ab", buffering=0) as f:
    while True:
        f.write(s.recv(4096) + b"\n")
PY
	pids+=($!)
	wait_file "$tmp/log.sock.ready"
	write_policy "$tmp/det.yaml" ok.test
	rm -f "$tmp/gate.det.port"
	mkdir "$tmp/dev"
	unshare -m "$BASH" -c '
	    mount --make-rprivate / && mount --bind /dev "$1/dev" &&
	    mount -t tmpfs none /dev && touch /dev/null &&
	    mount --bind "$1/dev/null" /dev/null &&
	    ln -s "$1/log.sock" /dev/log && shift && exec "$@"' sh "$tmp" \
	    "$gate_bin" -f "$tmp/det.yaml" -l 127.0.0.1:0 \
	    --port-file "$tmp/gate.det.port" --control "$tmp/det.sock" \
	    2>"$tmp/gate.det.err"
	wait_file "$tmp/gate.det.port"
	det_pid=$(control "$tmp/det.sock" status pid)
	pids+=("$det_pid")
	printf 'version: 1\nallow:\n  - host: "*bob.x"\n' >"$tmp/det.yaml"
	kill -HUP "$det_pid"
	sleep 0.5
	grep -q "reload: .*det.yaml is invalid" "$tmp/syslog" && ok ||
	    bad "detached: no invalid-reload line in syslog"
	grep -q "reload: .*det.yaml:3:11: error: invalid wildcard" \
	    "$tmp/syslog" && ok || bad "detached: reload details not in syslog"
	kill -INT "$det_pid"
fi

finish
