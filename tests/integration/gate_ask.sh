#!/bin/bash
# aisb-gate --ask: a request no rule allows is held, and a second process
# answers it over the control socket while real curl waits (a long
# --max-time).  approve once (the answer goes through; the same request
# again is held again), approve session (the next passes without asking,
# and after a reload too, and a live tunnel it let through outlives the
# reload under --reload-closes; a request held across a reload is still
# held and answered after it, and one a reload's policy allows goes on by
# that rule; status lists the grant), deny (the usual 403 and
# its text; the "ask" audit line names the answering uid and pid), a
# timeout (--ask 2: the usual deny with "asked":true), a deny rule never
# held, SOCKS5 held as "socks", both AISB-TRANSPARENT entries held
# ("transparent" by Host, "port" on a synthetic address), the gate's exit
# denying what it holds, and
# on a --users gate a flood from one user beyond the per-user bound denied
# ask_full while another user's held requests are still held and then
# approved (a session grant lets through those that wait for it too); under
# a token file the bound is a credential's, not a user name's: user bob
# through a line of any user name fills his, and bob through another such
# line, or through the line labelled bob, is still held.  A
# watcher sees every held and answered line; a ninth watcher is refused,
# and one that does not read is dropped past its 64 KiB.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream banner 192.0.2.10
banner=$up_port
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "new.test": {"A": ["192.0.2.10"]},
 "web.test": {"A": ["192.0.2.10"]}, "late.test": {"A": ["192.0.2.10"]},
 "sock.test": {"A": ["192.0.2.10"]}, "bye.test": {"A": ["192.0.2.10"]},
 "blocked.test": {"A": ["192.0.2.10"]}, "a.test": {"A": ["192.0.2.10"]},
 "b.test": {"A": ["192.0.2.10"]}, "tp.test": {"A": ["192.0.2.10"]},
 "now.test": {"A": ["192.0.2.10"]}}'
write_policy_deny "$tmp/policy.yaml"

# bounds are checked at start
rc=0; "$gate_bin" -n -f "$tmp/policy.yaml" --ask 3601 2>/dev/null || rc=$?
check "--ask 3601 is refused" "$rc" 64
rc=0; "$gate_bin" -n -f "$tmp/policy.yaml" --ask 30 --workers 2 \
    2>"$tmp/w.err" || rc=$?
check "--ask with --workers is refused" "$rc" 78
rc=0; "$gate_bin" -n -f "$tmp/policy.yaml" --ask 30 2>/dev/null || rc=$?
check "--ask without --control is refused" "$rc" 64

S=$tmp/ctl.sock
start_gate main "$tmp/policy.yaml" --control "$S" --ask 60 --reload-closes
A=$tmp/audit.main.log
G=127.0.0.1:$gate_port

# watch SOCKET FILE: the gate's stream of held, answered and refused
# lines, into FILE, in the background until the gate closes it
watch() {
	"$PY" - "$1" "$2" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"watch\n")
with open(sys.argv[2], "wb", buffering=0) as f:
    while True:
        b = s.recv(65536)
        if not b:
            break
        f.write(b)
PY
	pids+=($!)
}
watch "$S" "$tmp/watch.log"

# bg NAME CURL-ARGS...: curl in the background through the gate, its
# "CONNECT-CODE HTTP-CODE" in $tmp/NAME.code once done, body $tmp/NAME.body
bg() {
	local name=$1
	shift
	curl -sS -m 90 -o "$tmp/$name.body" -w '%{http_connect} %{http_code}' \
	    "$@" >"$tmp/$name.code" 2>"$tmp/$name.err" &
	pids+=($!)
	eval "pid_$name=\$!"
}
done_code() {	# done_code NAME: waits (20 s) for curl NAME, prints its codes
	local p
	p=$(eval "echo \$pid_$1")
	for _ in $(seq 200); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	wait "$p" 2>/dev/null || true
	cat "$tmp/$1.code"
}
# held_id SOCK HOST: waits (10 s) for a held request to HOST, prints its id
held_id() {
	local id
	for _ in $(seq 100); do
		id=$(control "$1" pending | "$PY" -c '
import json, sys
for p in json.load(sys.stdin)["pending"]:
    if p["host"] == sys.argv[1]:
        print(p["id"])
        break
' "$2")
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.1
	done
	echo none
}
pending_field() {	# pending_field SOCK ID KEY: the pending entry's field
	control "$1" pending | "$PY" -c '
import json, sys
for p in json.load(sys.stdin)["pending"]:
    if p["id"] == int(sys.argv[1]):
        print(json.dumps(p[sys.argv[2]]))
' "$2" "$3"
}

# --- allowed requests are not held -------------------------------------------
check "an allowed CONNECT passes" "$(proxy_get -p "http://ok.test:$up/")" \
    "200 200"
check "nothing held" "$(control "$S" pending)" \
    '{"pending": [], "refused": null}'

# --- approve once ------------------------------------------------------------
bg once -x "http://$G" -p "http://new.test:$up/first"
id1=$(held_id "$S" new.test)
check "the CONNECT is held, not answered" "$(cat "$tmp/once.code")" ""
check "pending: how" "$(pending_field "$S" "$id1" how)" '"connect"'
check "pending: port" "$(pending_field "$S" "$id1" port)" "$up"
check "pending: user (no credentials)" "$(pending_field "$S" "$id1" user)" null
check "pending: a tunnel has no method" \
    "$(pending_field "$S" "$id1" method)" null
left=$(pending_field "$S" "$id1" left_ms)
[ "$left" -gt 50000 ] && [ "$left" -le 60000 ] && ok ||
    bad "pending: left_ms $left"
check "approve once" "$(control "$S" "approve $id1 once" approve)" ok
check "curl gets its answer" "$(done_code once)" "200 200"
grep -q '"path": "/first"' "$tmp/once.body" && ok ||
    bad "tunnel body: $(cat "$tmp/once.body")"
expect_audit "$A" event=ask id="$id1" host=new.test port="$up" answer=once \
    by_uid="$(id -u)" "by_pid=[0-9]*"
expect_audit "$A" event=decision host=new.test decision=allow status=200 \
    asked=True "rule=ask: once"
check "answered is gone" "$(control "$S" "approve $id1 once" approve)" gone

# the same request again is held again, under a new id
bg again -x "http://$G" -p "http://new.test:$up/again"
id2=$(held_id "$S" new.test)
[ "$id2" != none ] && [ "$id2" != "$id1" ] && ok ||
    bad "held again under a new id: $id1 then $id2"

# --- deny --------------------------------------------------------------------
check "deny" "$(control "$S" "deny $id2" deny)" ok
check "denied: the usual 403" "$(done_code again)" "403 000"
expect_audit "$A" event=ask id="$id2" answer=deny by_uid="$(id -u)"
expect_audit "$A" event=decision host=new.test decision=deny status=403 \
    reason=host_not_allowed asked=True
check "deny: gone" "$(control "$S" "deny $id2" deny)" gone
check "deny of an id never given" "$(control "$S" "deny 999999" deny)" gone

# a plain GET denied: the text of a denial as without --ask
bg getdeny -x "http://$G" "http://new.test:$up/x"
id=$(held_id "$S" new.test)
check "pending: a forward's method" "$(pending_field "$S" "$id" method)" \
    '"GET"'
check "pending: how http" "$(pending_field "$S" "$id" how)" '"http"'
control "$S" "deny $id" >/dev/null
check "GET denied" "$(done_code getdeny)" "000 403"
printf 'aisb-gate: GET new.test:%s denied: host not allowed\nto allow it, add to %s:\nallow:\n  - host: new.test\n    ports: [%s]\n' \
    "$up" "$tmp/policy.yaml" "$up" >"$tmp/want.body"
cmp -s "$tmp/want.body" "$tmp/getdeny.body" && ok ||
    bad "403 body: $(cat "$tmp/getdeny.body")"

# --- a deny rule, and a bad request, are never held --------------------------
check "a deny rule: denied at once" \
    "$(proxy_get -p "http://blocked.test:$up/")" "403 000"
expect_audit "$A" event=decision host=blocked.test reason=deny_rule
check "the deny rule asked nobody" \
    "$(audit_count "$A" event=ask host=blocked.test)" 0

# --- a client that closed while held is gone: its approval dials nothing, --
# and closed ones keep no slot of the bounds
"$PY" - "$S" "$gate_port" "$up" >"$tmp/gone.out" <<'PY'
import json, socket, sys, time
ctl, port, up = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def cmd(line):
    s = socket.socket(socket.AF_UNIX)
    s.connect(ctl)
    s.sendall(line.encode() + b"\n")
    d = b""
    while not d.endswith(b"\n"):
        b = s.recv(65536)
        if not b:
            break
        d += b
    return json.loads(d)
def held(host):
    for _ in range(100):
        for p in cmd("pending")["pending"]:
            if p["host"] == host:
                return p["id"]
        time.sleep(0.1)
c = socket.create_connection(("127.0.0.1", port))
c.sendall(("CONNECT gone.test:%s HTTP/1.1\r\n\r\n" % up).encode())
i = held("gone.test")
c.close()
time.sleep(0.3)
print(cmd("approve %d once" % i)["approve"])
# nine that close at once: none keeps a slot, the tenth is held
for n in range(9):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(("CONNECT gone%d.test:%s HTTP/1.1\r\n\r\n" % (n, up)).encode())
    time.sleep(0.05)
    c.close()
time.sleep(0.3)
c = socket.create_connection(("127.0.0.1", port))
c.sendall(("CONNECT gone.test:%s HTTP/1.1\r\n\r\n" % up).encode())
i = held("gone.test")
print("held" if i else "not held", [p["host"] for p in cmd("pending")["pending"]])
print(cmd("deny %d" % i)["deny"])
PY
up_before=$(upstream_accepts 192.0.2.10)
check "approving a closed one: gone" "$(sed -n 1p "$tmp/gone.out")" gone
expect_audit "$A" event=ask host=gone.test answer=gone by=client
check "closed ones keep no slot" "$(sed -n 2p "$tmp/gone.out")" \
    "held ['gone.test']"
check "and a live one is still answered" "$(sed -n 3p "$tmp/gone.out")" ok
check "nothing was dialled for them" "$(upstream_accepts 192.0.2.10)" \
    "$up_before"
check "no upstream connection for the gone one" \
    "$(audit_count "$A" event=decision host=gone.test decision=allow)" 0

# --- approve session: later requests pass, a reload keeps it -----------------
bg sess -x "http://$G" "http://web.test:$up/s1"
id=$(held_id "$S" web.test)
check "approve session" "$(control "$S" "approve $id session" approve)" ok
check "the held GET passes" "$(done_code sess)" "000 200"
check "the next GET passes without asking" \
    "$(proxy_get "http://web.test:$up/s2")" "000 200"
check "a CONNECT to the same host:port too" \
    "$(proxy_get -p "http://web.test:$up/s3")" "200 200"
check "asked once only" "$(audit_count "$A" event=ask host=web.test)" 1
check "status lists the grant" \
    "$(control "$S" status ask.grants)" \
    "[{\"host\": \"web.test\", \"port\": $up, \"user\": null}]"
# a request held across the reload stays held, to be answered after it
bg overreload -x "http://$G" "http://new.test:$up/over"
id_over=$(held_id "$S" new.test)
# a tunnel the grant let through outlives a reload with --reload-closes
"$PY" - "$gate_port" "$up" "$tmp/tun.ready" <<'PY' >"$tmp/tun.out" 2>&1 &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"CONNECT web.test:%s HTTP/1.1\r\nHost: web.test\r\n\r\n" %
          sys.argv[2].encode())
d = b""
while b"\r\n\r\n" not in d:
    d += s.recv(4096)
open(sys.argv[3], "w").write(d.split(b"\r\n")[0].decode())
time.sleep(1.5)
s.sendall(b"GET /t HTTP/1.0\r\nHost: web.test\r\n\r\n")
d = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        d += b
except OSError:
    pass
print(d.split(b"\r\n")[0].decode() if d else "closed")
PY
p_tun=$!
pids+=("$p_tun")
wait_file "$tmp/tun.ready"
check "reload" "$(control "$S" reload reload)" ok
check "still held after the reload" "$(held_id "$S" new.test)" "$id_over"
check "answered after the reload" \
    "$(control "$S" "approve $id_over once" approve)" ok
check "and it passes" "$(done_code overreload)" "000 200"
wait "$p_tun" || true
check "the granted tunnel outlived the reload" "$(cat "$tmp/tun.out")" \
    "HTTP/1.0 200 OK"
check "after the reload it still passes" \
    "$(proxy_get "http://web.test:$up/s4")" "000 200"
check "another port of the host is asked for" \
    "$(proxy_get -m 3 "http://web.test:1/")" "000 000"
expect_audit "$A" event=decision host=web.test decision=allow "rule=ask: session"

# --- a reload whose policy allows a held request lets it go on by that rule
bg nowok -x "http://$G" "http://now.test:$up/now"
id_now=$(held_id "$S" now.test)
cp "$tmp/policy.yaml" "$tmp/policy.saved"
{ sed -n 1,2p "$tmp/policy.saved"
  printf '  - host: now.test\n    ports: [%s]\n' "$up"
  sed 1,2d "$tmp/policy.saved"; } >"$tmp/policy.yaml"
check "reload allowing now.test" "$(control "$S" reload reload)" ok
check "the held request went on, unanswered" "$(done_code nowok)" "000 200"
check "pending has it no more" \
    "$(control "$S" pending | grep -c now.test || true)" 0
expect_audit "$A" event=ask id="$id_now" host=now.test answer=allow by=reload
expect_audit "$A" event=decision host=now.test decision=allow asked=True \
    "rule=*policy.yaml:*now.test*"
sleep 0.3
check "the watcher saw it go" "$(grep -c "{\"answered\":{\"id\":$id_now,\"answer\":\"allow\"}}" "$tmp/watch.log" || true)" 1
cp "$tmp/policy.saved" "$tmp/policy.yaml"
check "reload back" "$(control "$S" reload reload)" ok

# --- SOCKS5 is held as "socks" -----------------------------------------------
curl -sS -m 90 -o /dev/null -w '%{http_code}' --socks5-hostname "$G" \
    "http://sock.test:$up/" >"$tmp/sock.code" 2>/dev/null &
p_sock=$!
pids+=("$p_sock")
id=$(held_id "$S" sock.test)
check "pending: how socks" "$(pending_field "$S" "$id" how)" '"socks"'
control "$S" "approve $id once" >/dev/null
wait "$p_sock" || true
check "SOCKS5 approved" "$(cat "$tmp/sock.code")" 200

# --- AISB-TRANSPARENT: named by Host ("transparent"), and a port of a
# synthetic address ("port": ok.test is allowed on another port only)
tpc=$here/gate_transparent.py
"$PY" "$tpc" "$gate_port" "$up" raw \
    --data "GET /tp HTTP/1.1\\r\\nHost: tp.test:$up\\r\\n\\r\\n" \
    >"$tmp/tp.out" 2>&1 &
p_tp=$!
pids+=("$p_tp")
id=$(held_id "$S" tp.test)
check "pending: how transparent" "$(pending_field "$S" "$id" how)" \
    '"transparent"'
check "approve the transparent stream" \
    "$(control "$S" "approve $id once" approve)" ok
wait "$p_tp" || true
check "the transparent request's answer" "$(cat "$tmp/tp.out")" \
    "HTTP/1.0 200 OK"
S_OK=$("$PY" "$here/gate_dnsstream.py" --synth ok.test)
"$PY" "$tpc" "$gate_port" "$banner" banner --dialled "$S_OK" \
    --data 'hi\r\n' >"$tmp/port.out" 2>&1 &
p_port=$!
pids+=("$p_port")
id=$(held_id "$S" ok.test)
check "pending: how port" "$(pending_field "$S" "$id" how)" '"port"'
check "pending: the port dialled" "$(pending_field "$S" "$id" port)" \
    "$banner"
control "$S" "approve $id once" >/dev/null
wait "$p_port" || true
check "the server speaks first once approved" \
    "$(sed -n 1p "$tmp/port.out")" "banner SSH-2.0-aisb-test"
expect_audit "$A" event=decision host=ok.test port="$banner" \
    named_by=address decision=allow asked=True

# --- the watcher saw it all --------------------------------------------------
sleep 0.3
"$PY" - "$tmp/watch.log" "$id1" "$id2" <<'PY' && ok || bad "watch stream: $(cat "$tmp/watch.log")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
held = {l["held"]["id"]: l["held"] for l in lines if "held" in l}
ans = {l["answered"]["id"]: l["answered"]["answer"] for l in lines
       if "answered" in l}
i1, i2 = int(sys.argv[2]), int(sys.argv[3])
assert held[i1]["host"] == "new.test" and held[i1]["how"] == "connect", held
assert ans[i1] == "once" and ans[i2] == "deny", ans
assert "session" in ans.values(), ans
PY

# --- at most 8 watchers: the ninth is refused, a place freed is taken again
"$PY" - "$S" <<'PY' >"$tmp/watchers.out"
import socket, sys
def watch():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    s.sendall(b"watch\n")
    return s
# one watches already: seven more fill the places
held = [watch() for _ in range(7)]
ninth = watch()
print(ninth.recv(4096).decode().strip())
held.pop().close()
again = None
for _ in range(50):
    again = watch()
    again.settimeout(0.2)
    try:
        b = again.recv(4096)
    except socket.timeout:
        b = b""
    # a watcher's first lines are what is held already (web.test:1 is)
    if not b.startswith(b'{"error"'):
        print("watching")
        break
    again.close()
PY
check "a ninth watcher" "$(sed -n 1p "$tmp/watchers.out")" \
    '{"error":"too many watchers"}'
check "a freed place is taken" "$(sed -n 2p "$tmp/watchers.out")" watching

# --- the gate's exit denies what it holds ------------------------------------
bg bye -x "http://$G" "http://bye.test:$up/"
id=$(held_id "$S" bye.test)
# a client connected before the SIGTERM that asks after it: not held
"$PY" - "$gate_port" "$tmp/drain.go" <<'PY' >"$tmp/drain.out" 2>&1 &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
open(sys.argv[2] + ".up", "w").write("up")
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
t = time.monotonic()
s.sendall(b"CONNECT drain.test:1 HTTP/1.1\r\n\r\n")
line = s.recv(4096).split(b"\r\n")[0].decode()
print(line, "at once" if time.monotonic() - t < 2 else "late")
PY
p_drain=$!
pids+=("$p_drain")
wait_file "$tmp/drain.go.up"
kill -TERM "$gate_pid"
check "SIGTERM: the held request is denied" "$(done_code bye)" "000 403"
touch "$tmp/drain.go"
wait "$p_drain" || true
check "draining: a request no rule allows is denied, not held" \
    "$(cat "$tmp/drain.out")" "HTTP/1.1 403 Forbidden at once"
wait "$gate_pid" 2>/dev/null || true
expect_audit "$A" event=ask id="$id" answer=deny by=exit
expect_audit "$A" event=decision host=bye.test decision=deny asked=True

# --- a timeout is a deny ----------------------------------------------------
start_gate short "$tmp/policy.yaml" --control "$tmp/short.sock" --ask 2
B=$tmp/audit.short.log
t0=$(date +%s%N)
check "--ask 2: timed out, denied" \
    "$(proxy_get -m 30 -p "http://late.test:$up/")" "403 000"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge 1900 ] && [ "$ms" -lt 6000 ] && ok || bad "timeout after $ms ms"
expect_audit "$B" event=ask host=late.test answer=timeout by=timeout
expect_audit "$B" event=decision host=late.test decision=deny status=403 \
    reason=host_not_allowed asked=True

# --- a watcher that does not read is dropped past 64 KiB; one that reads
# stays, and the gate goes on
start_gate flood "$tmp/policy.yaml" --control "$tmp/f.sock" --ask 60
"$PY" - "$tmp/f.sock" "$gate_port" <<'PY' >"$tmp/flood.out" 2>&1
import json, socket, sys, time
ctl, port = sys.argv[1], int(sys.argv[2])
def cmd(line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(ctl)
    s.sendall(line.encode() + b"\n")
    d = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        d += b
    return json.loads(d)
def watcher():
    s = socket.socket(socket.AF_UNIX)
    s.connect(ctl)
    s.sendall(b"watch\n")
    return s
mute, reader = watcher(), watcher()
reader.setblocking(False)
got = b""
label = "x" * 60
name = ".".join([label] * 4)		# 243 bytes: long held lines
next_id = 1
for r in range(120):
    socks = []
    for i in range(8):
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(b"CONNECT %s:1 HTTP/1.1\r\n\r\n" % name.encode())
        socks.append(c)
    for i in range(8):
        for _ in range(200):
            if cmd("deny %d" % next_id) == {"deny": "ok"}:
                break
            time.sleep(0.005)
        else:
            sys.exit("id %d never held" % next_id)
        next_id += 1
    for c in socks:
        c.close()
    try:
        while True:
            b = reader.recv(1 << 20)
            if not b:
                break
            got += b
    except BlockingIOError:
        pass
reader.setblocking(True)
reader.settimeout(2)
try:
    while b'"id":%d,"answer"' % (next_id - 1) not in got:
        b = reader.recv(1 << 20)
        if not b:
            break
        got += b
except socket.timeout:
    pass
print("reader", "complete" if b'{"answered":{"id":%d,"answer":"deny"}}' %
      (next_id - 1) in got else "incomplete")
# dropped: the gate closed it, before the last line (kept: it stays open)
mute.settimeout(5)
heard, closed = b"", False
try:
    while True:
        b = mute.recv(1 << 20)
        if not b:
            closed = True
            break
        heard += b
except socket.timeout:
    pass
last = b'{"answered":{"id":%d,' % (next_id - 1)
print("mute", "dropped" if closed and last not in heard else "kept",
      len(heard))
print("status", cmd("status")["ask"]["held"])
PY
check "the watcher that read got every line" \
    "$(sed -n 1p "$tmp/flood.out")" "reader complete"
case $(sed -n 2p "$tmp/flood.out") in
"mute dropped "*) ok ;;
*) bad "the mute watcher: $(cat "$tmp/flood.out")" ;;
esac
check "the gate goes on" "$(sed -n 3p "$tmp/flood.out")" "status 0"
grep -q "a watcher that does not read, dropped" "$tmp/gate.flood.err" &&
    ok || bad "no log line for the dropped watcher"

# --- --users: one user's flood does not starve another's ---------------------
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
printf 'alice sha256:%s\nbob sha256:%s\ncarol sha256:%s\n' "$(sha alice-pw)" \
    "$(sha bob-pw)" "$(sha carol-pw)" >"$tmp/users.conf"
start_gate users "$tmp/policy.yaml" --control "$tmp/u.sock" --ask 60 \
    --users "$tmp/users.conf"
U=$tmp/audit.users.log
# a watcher of this gate: its "refused" lines
watch "$tmp/u.sock" "$tmp/uwatch.log"
check "nothing refused yet" "$(control "$tmp/u.sock" pending refused)" None
for i in 1 2 3 4 5 6 7 8; do
	bg "alice$i" -x "http://alice:alice-pw@127.0.0.1:$gate_port" \
	    "http://a.test:$up/$i"
done
for _ in $(seq 100); do
	[ "$(control "$tmp/u.sock" status ask.held)" = 8 ] && break
	sleep 0.1
done
check "alice: 8 held" "$(control "$tmp/u.sock" status ask.held)" 8
check "alice's ninth: denied at once" "$(proxy_get -m 10 \
    -x "http://alice:alice-pw@127.0.0.1:$gate_port" "http://a.test:$up/9")" \
    "000 403"
expect_audit "$U" event=decision user=alice host=a.test reason=ask_full \
    status=403
# said, not only audited: the person learns what the flood cost
check "status counts the refusal" "$(control "$tmp/u.sock" status \
    ask.refused)" 1
check "pending names the refused one" "$(control "$tmp/u.sock" pending \
    refused | "$PY" -c 'import json, sys; r = json.load(sys.stdin)
print(r["host"], r["user"], r["how"], r["method"], r["count"])')" \
    "a.test alice http GET 1"
for _ in $(seq 50); do
	grep -q '"refused"' "$tmp/uwatch.log" 2>/dev/null && break
	sleep 0.1
done
check "the watcher is told at once" "$(grep '"refused"' "$tmp/uwatch.log" |
    "$PY" -c 'import json, sys
for l in sys.stdin:
    r = json.loads(l)["refused"]
    print(r["host"], r["user"], r["count"])')" "a.test alice 1"
bg bob -x "http://bob:bob-pw@127.0.0.1:$gate_port" "http://b.test:$up/"
id=$(held_id "$tmp/u.sock" b.test)
[ "$id" != none ] && ok || bad "bob's request is not held"
bg bob2 -x "http://bob:bob-pw@127.0.0.1:$gate_port" "http://b.test:$up/2"
for _ in $(seq 100); do
	[ "$(control "$tmp/u.sock" status ask.held)" = 10 ] && break
	sleep 0.1
done
check "bob's two held beside alice's eight" \
    "$(control "$tmp/u.sock" status ask.held)" 10
check "pending: bob's user" "$(pending_field "$tmp/u.sock" "$id" user)" \
    '"bob"'
check "approve bob's" "$(control "$tmp/u.sock" "approve $id session" \
    approve)" ok
check "bob's request passes" "$(done_code bob)" "000 200"
check "and the one that waited for the same host:port" "$(done_code bob2)" \
    "000 200"
check "each its own answer" \
    "$(audit_count "$U" event=ask user=bob answer=session by_uid="$(id -u)")" 2
check "alice's are still held" "$(control "$tmp/u.sock" status ask.held)" 8
check "bob's grant is bob's" "$(control "$tmp/u.sock" status ask.grants)" \
    "[{\"host\": \"b.test\", \"port\": $up, \"user\": \"bob\"}]"
check "alice is still asked for bob's host" "$(proxy_get -m 10 \
    -x "http://alice:alice-pw@127.0.0.1:$gate_port" "http://b.test:$up/")" \
    "000 403"
expect_audit "$U" event=decision user=alice host=b.test reason=ask_full
# a burst: alice's b.test just now and three more; at most one line a
# second (b.test's at once when a second passed since the first line,
# then the rest a second on), whose counts add up to all of them
for i in 1 2 3; do
	proxy_get -m 10 -x "http://alice:alice-pw@127.0.0.1:$gate_port" \
	    "http://c$i.test:$up/" >/dev/null
done
sleep 1.5
check "a burst: counted, the last named, in one or two lines" \
    "$(grep '"refused"' "$tmp/uwatch.log" | sed 1d | "$PY" -c 'import json, sys
rs = [json.loads(l)["refused"] for l in sys.stdin]
print(len(rs) in (1, 2), sum(r["count"] for r in rs), rs[-1]["host"])')" \
    "True 4 c3.test"
check "status counts them all" "$(control "$tmp/u.sock" status ask.refused)" 5

# --- a reload judges what is held: a removed user's request is no one's -----
bg carol -x "http://carol:carol-pw@127.0.0.1:$gate_port" "http://tp.test:$up/"
id_carol=$(held_id "$tmp/u.sock" tp.test)
[ "$id_carol" != none ] && ok || bad "carol's request is not held"
printf 'alice sha256:%s\n' "$(sha alice-pw)" >"$tmp/users.conf"
check "reload without bob and carol" "$(control "$tmp/u.sock" reload reload)" ok
check "carol's held request is denied at once" "$(done_code carol)" "000 403"
check "and cannot be approved" \
    "$(control "$tmp/u.sock" "approve $id_carol once" approve)" gone
expect_audit "$U" event=ask user=carol answer=deny by=reload
expect_audit "$U" event=decision user=carol host=tp.test \
    reason=host_not_allowed status=403
check "bob's grant went with bob" \
    "$(control "$tmp/u.sock" status ask.grants)" "[]"
check "alice's are still held" "$(control "$tmp/u.sock" status ask.held)" 8
# a deny rule the reload brings denies what it names, held or not
sed -i 's/^  - host: blocked.test$/&\n  - host: a.test/' "$tmp/policy.yaml"
check "reload with a.test denied" "$(control "$tmp/u.sock" reload reload)" ok
n=0
for i in 1 2 3 4 5 6 7 8; do
	[ "$(done_code "alice$i")" = "000 403" ] && n=$((n + 1))
done
check "alice's eight are denied at once" "$n" 8
check "none is held any more" "$(control "$tmp/u.sock" status ask.held)" 0
check "each by the reload" \
    "$(audit_count "$U" event=ask user=alice answer=deny by=reload)" 8
# an allow rule the reload brings: what waits goes on, by that rule (an
# inspect rule would decide each request inside)
sed -i '/^  - host: a.test$/d' "$tmp/policy.yaml"
check "reload without the deny rule" "$(control "$tmp/u.sock" reload reload)" ok
bg alice9 -x "http://alice:alice-pw@127.0.0.1:$gate_port" "http://a.test:$up/"
check "alice's next is held" "$(held_id "$tmp/u.sock" a.test | grep -c '^[0-9]')" 1
sed -i "s/^    ports: \[$up\]\$/&\n  - host: a.test\n    ports: [$up]/" \
    "$tmp/policy.yaml"
check "reload with a.test allowed" "$(control "$tmp/u.sock" reload reload)" ok
check "alice's goes on" "$(done_code alice9)" "000 200"
check "nothing held" "$(control "$tmp/u.sock" status ask.held)" 0
expect_audit "$U" event=ask user=alice host=a.test answer=allow by=reload
expect_audit "$U" event=decision user=alice host=a.test decision=allow \
    "rule=*a.test*" asked=True

# --- a token file's session a reload removed (a named gate's session that
# ended): its held request is denied, another's stays held -------------------
printf 's1:pw1\ns2:pw2\n' >"$tmp/tokens.conf"
chmod 600 "$tmp/tokens.conf"
start_gate tok "$tmp/policy.yaml" --control "$tmp/t.sock" --ask 60 \
    --token-file "$tmp/tokens.conf"
T=$tmp/audit.tok.log
bg s2 -x "http://s2:pw2@127.0.0.1:$gate_port" "http://b.test:$up/2"
id_s2=$(held_id "$tmp/t.sock" b.test)
bg s1 -x "http://s1:pw1@127.0.0.1:$gate_port" "http://b.test:$up/1"
for _ in $(seq 100); do
	[ "$(control "$tmp/t.sock" status ask.held)" = 2 ] && break
	sleep 0.1
done
check "s1 and s2 held" "$(control "$tmp/t.sock" status ask.held)" 2
printf 's1:pw1\n' >"$tmp/tokens.conf"
check "reload without s2" "$(control "$tmp/t.sock" reload reload)" ok
check "s2's held request is denied at once" "$(done_code s2)" "000 403"
check "and cannot be approved" \
    "$(control "$tmp/t.sock" "approve $id_s2 once" approve)" gone
expect_audit "$T" event=ask session=s2 answer=deny by=reload
check "s1's is still held" "$(control "$tmp/t.sock" status ask.held)" 1
id=$(held_id "$tmp/t.sock" b.test)
check "and approved" "$(control "$tmp/t.sock" "approve $id once" approve)" ok
check "s1's passes" "$(done_code s1)" "000 200"

# --- a line of any user name: what a reload judges is the line a request
# came through, not its user name (through such a line every name is some
# line's).  Two requests of user bob, through two lines of any user name;
# the reload removes one line: its request is denied, the other's stays
# held, and that credential gets 407 from then on ----------------------------
printf 's1:pw1\nanypw\nother\n' >"$tmp/tokens.conf"
check "reload with two lines of any user name" \
    "$(control "$tmp/t.sock" reload reload)" ok
bg bob1 -x "http://bob:anypw@127.0.0.1:$gate_port" "http://b.test:$up/b1"
id_bob1=$(held_id "$tmp/t.sock" b.test)
bg bob2 -x "http://bob:other@127.0.0.1:$gate_port" "http://new.test:$up/b2"
id_bob2=$(held_id "$tmp/t.sock" new.test)
check "both of bob's held" "$(control "$tmp/t.sock" status ask.held)" 2
printf 's1:pw1\nother\n' >"$tmp/tokens.conf"
check "reload without the line anypw" \
    "$(control "$tmp/t.sock" reload reload)" ok
check "the request through the removed line is denied at once" \
    "$(done_code bob1)" "000 403"
check "and cannot be approved" \
    "$(control "$tmp/t.sock" "approve $id_bob1 once" approve)" gone
expect_audit "$T" event=ask id="$id_bob1" session=bob answer=deny by=reload
check "the one through the kept line is still held" \
    "$(held_id "$tmp/t.sock" new.test)" "$id_bob2"
check "the removed line's credential gets 407" \
    "$(curl -sS -m 15 -o /dev/null -w '%{http_code}' \
    -x "http://bob:anypw@127.0.0.1:$gate_port" "http://ok.test:$up/" \
    2>/dev/null || true)" 407
check "the kept one's is approved" \
    "$(control "$tmp/t.sock" "approve $id_bob2 once" approve)" ok
check "and passes" "$(done_code bob2)" "000 200"
expect_audit "$U" event=decision user=alice host=a.test reason=deny_rule \
    status=403

# --- the bound per credential, not per user name: bob through any-a fills
# his 8 (the ninth: ask_full), and bob through any-b and through the line
# labelled bob are each still held ------------------------------------------
printf 'bob:pw-label\nany-a\nany-b\n' >"$tmp/tokens.cred"
chmod 600 "$tmp/tokens.cred"
start_gate cred "$tmp/policy.yaml" --control "$tmp/c.sock" --ask 60 \
    --token-file "$tmp/tokens.cred"
C=$tmp/audit.cred.log
for i in 1 2 3 4 5 6 7 8; do
	bg "ca$i" -x "http://bob:any-a@127.0.0.1:$gate_port" \
	    "http://late.test:$up/$i"
done
for _ in $(seq 100); do
	[ "$(control "$tmp/c.sock" status ask.held)" = 8 ] && break
	sleep 0.1
done
check "bob through any-a: 8 held" "$(control "$tmp/c.sock" status ask.held)" 8
check "bob through any-a: the ninth denied at once" "$(proxy_get -m 10 \
    -x "http://bob:any-a@127.0.0.1:$gate_port" "http://late.test:$up/9")" \
    "000 403"
expect_audit "$C" event=decision session=bob host=late.test \
    reason=ask_full status=403
bg cb -x "http://bob:any-b@127.0.0.1:$gate_port" "http://web.test:$up/"
check "bob through any-b: held beside them" \
    "$(held_id "$tmp/c.sock" web.test | grep -c '^[0-9]')" 1
bg cl -x "http://bob:pw-label@127.0.0.1:$gate_port" "http://sock.test:$up/"
check "bob through the line labelled bob: held too" \
    "$(held_id "$tmp/c.sock" sock.test | grep -c '^[0-9]')" 1
check "10 held" "$(control "$tmp/c.sock" status ask.held)" 10
check "one refused" "$(audit_count "$C" event=decision reason=ask_full)" 1
kill "$gate_pid"
n=0
for i in ca1 ca2 ca3 ca4 ca5 ca6 ca7 ca8 cb cl; do
	[ "$(done_code "$i")" = "000 403" ] && n=$((n + 1))
done
check "the gate's exit denies all ten" "$n" 10

finish
