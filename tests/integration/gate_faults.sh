#!/bin/bash
# aisb-gate: libevent failures that cannot be produced for real, injected
# at link time (tests/integration/gate_fault.c): a connection whose timer
# cannot be armed is closed, not left without a header timeout; a request
# head that cannot be queued upstream closes the connection, not leaves
# the client waiting for an answer that will never come.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"
gate_bin=$top_builddir/tests/integration/gate_fault
[ -x "$gate_bin" ] || { echo "FAIL: $gate_bin not built" >&2; exit 1; }

start_upstream http 192.0.2.10
up=$up_port
echo_port=$up
start_dns '{"ok.test": {"A": ["192.0.2.10"]}}'
write_policy "$tmp/policy.yaml" ok.test

# what a client sees: "closed" (EOF), "silent" (nothing for 3 s), or a line
client() {	# client BYTES
	"$PY" - "$gate_port" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
try:
    d = s.recv(4096)
    print(d.split(b"\r\n")[0].decode("latin-1") if d else "closed")
except socket.timeout:
    print("silent")
PY
}

# The header timer (7 s, a value nothing else uses) cannot be armed.
AISB_FAULT_TIMER_SECS=7 start_gate timer "$tmp/policy.yaml" --header-timeout 7
check "no header timer: closed" "$(client "")" closed
grep -q "cannot arm its timer" "$tmp/gate.timer.err" && ok ||
    bad "no log line for the timer"
kill -0 "$gate_pid" && ok || bad "no header timer: the gate died"
kill "$gate_pid"

# The forwarded head cannot be queued.
AISB_FAULT_BEV_WRITE=1 start_gate write "$tmp/policy.yaml"
check "head not queued: closed" \
    "$(client "GET http://ok.test:$up/ HTTP/1.1\r\nHost: ok.test:$up\r\n\r\n")" \
    closed
expect_audit "$tmp/audit.write.log" event=close host=ok.test \
    reason="out of memory"
kill "$gate_pid"

finish
