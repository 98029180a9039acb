#!/bin/bash
# aisb-gate --workers 2: two processes listen on one port (SO_REUSEPORT)
# and both serve; SIGHUP to the supervisor and "reload" on the control
# socket reach every worker; the audit log gets whole lines from both;
# SIGTERM drains a live tunnel, refuses new connections and exits 0; a
# supervisor killed outright takes its workers along.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

command -v ss >/dev/null || { echo "SKIP: ss not found"; exit 77; }
start_upstream http 192.0.2.10
up=$up_port
start_upstream echo 192.0.2.11
echo_port=$up_port
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "echo.test": {"A": ["192.0.2.11"]}}'
write_policy "$tmp/policy.yaml" ok.test echo.test

# many HOST N: N requests through the gate at once; prints the answers
# ("CONNECT-CODE HTTP-CODE"), counted
many() {
	local i
	for i in $(seq 1 "$2"); do
		curl -sS -m 10 -o /dev/null -w '%{http_connect} %{http_code}\n' \
		    -p -x "http://127.0.0.1:$gate_port" \
		    "http://$1:$up/$i" 2>/dev/null &
	done | sort | uniq -c | awk '{ print $1 " x " $2 " " $3 }'
	wait
}

start_gate w "$tmp/policy.yaml" -v --workers 2 --control "$tmp/ctl.sock"
A=$tmp/audit.w.log
sleep 0.3
check "two listening sockets on the port" \
    "$(ss -Hltn "sport = :$gate_port" | wc -l)" 2
check "two worker processes" "$(wc -w </proc/$gate_pid/task/$gate_pid/children)" 2

check "40 requests" "$(many ok.test 40)" "40 x 200 200"
check "40 decision lines, all whole" "$(audit_count "$A" event=decision \
    host=ok.test decision=allow)" 40
# both workers served (the kernel hashes each connection's ports)
served=$(grep -o 'conn [0-9]*: accepted' "$tmp/gate.w.err" | wc -l)
workers=$(grep -c 'worker [01] (pid [0-9]*) listening' "$tmp/gate.w.err" || true)
check "both workers started" "$workers" 2
check "accepted 40" "$served" 40

check "control socket: worker 0 of 2" "worker=$(control "$tmp/ctl.sock" status worker) workers=$(control "$tmp/ctl.sock" status workers)" "worker=0 workers=2"

# SIGHUP to the supervisor: every worker loads the new policy
write_policy "$tmp/policy.yaml" echo.test
kill -HUP "$gate_pid"
sleep 0.5
check "after SIGHUP: ok.test denied by both" "$(many ok.test 20)" "20 x 403 000"
check "two reloads logged" "$(grep -c 'reload: policy' "$tmp/gate.w.err")" 2

# "reload" on the control socket (worker 0) reaches worker 1 too
write_policy "$tmp/policy.yaml" ok.test echo.test
check "control reload" "$(control "$tmp/ctl.sock" reload reload)" ok
sleep 0.5
check "after control reload: ok.test allowed by both" "$(many ok.test 20)" \
    "20 x 200 200"
check "four reloads logged" "$(grep -c 'reload: policy' "$tmp/gate.w.err")" 4

# SIGTERM: a live tunnel finishes, new connections are refused, exit 0
coproc T { "$PY" -u -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"CONNECT echo.test:%d HTTP/1.1\r\n\r\n" % int(sys.argv[2]))
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
print(head.split(b"\r\n")[0].decode())
for cmd in sys.stdin:
    if cmd.strip() == "ping":
        s.sendall(b"ping")
        print("pong" if s.recv(4) == b"ping" else "bad")
    else:
        s.close()
        print("closed")
        break
' "$gate_port" "$echo_port"; }
read -r -t 10 line <&"${T[0]}" || line=timeout
check "tunnel up" "$line" "HTTP/1.1 200 Connection established"
kill -TERM "$gate_pid"
sleep 0.5
rc=0; curl -sS -m 5 -o /dev/null -x "http://127.0.0.1:$gate_port" \
    "http://ok.test:$up/" 2>/dev/null || rc=$?
check "no new connections while draining" "$rc" 7
echo ping >&"${T[1]}"; read -r -t 10 line <&"${T[0]}" || line=timeout
check "tunnel works while draining" "$line" pong
kill -0 "$gate_pid" 2>/dev/null && ok || bad "gate exited before the tunnel closed"
echo close >&"${T[1]}"; read -r -t 10 line <&"${T[0]}" || line=timeout
check "tunnel closed" "$line" closed
rc=0; wait "$gate_pid" || rc=$?
check "drain exit status" "$rc" 0
expect_audit "$A" event=close host=echo.test reason=eof bytes_up=4 bytes_down=4
[ ! -e "$tmp/gate.w.port" ] && ok || bad "port file left behind"
[ ! -e "$tmp/ctl.sock" ] && ok || bad "control socket left behind"

# SIGKILL of the supervisor: the workers drain and free the port
start_gate k "$tmp/policy.yaml" --workers 2
sleep 0.3
kill -KILL "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
for _ in $(seq 50); do
	[ "$(ss -Hltn "sport = :$gate_port" | wc -l)" = 0 ] && break
	sleep 0.1
done
check "workers gone with their supervisor" \
    "$(ss -Hltn "sport = :$gate_port" | wc -l)" 0

finish
