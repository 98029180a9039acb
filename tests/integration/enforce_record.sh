#!/bin/bash
# aisb-enforce's recorder (plan line "record", direct mode) against the real
# kernel, in network namespaces made here:
#
#   peer ns (aisb-rp-PID)                      sandbox ns (aisb-rs-PID)
#   10.198.0.1: dns 53 (peer.test),  <-veth->  10.198.0.10
#   tcp 43180 (reads a line, answers),          the command: uid 1000
#   tcp 43181 (not allowed)
#
# The addresses exist only inside these namespaces.  The command sends a
# request to peer.test:43180 (allowed) and reads the answer, tries 43181 and
# raw DNS (both dropped), and tries to read and remove the capture.  Then
# tshark reads the file: no warning, the flow's first packet says "aisb
# accept", the drops say "aisb drop" and "aisb drop dns", the answer's
# packets were recorded on the way in, and following the TCP stream gives
# back exactly the bytes sent each way.  Then: a bound small enough to hit
# (the command goes on, the file stays readable), the recorder's
# credentials and a SIGKILL of it in mid-stream (the command goes on, the
# file ends at a complete block), a table without a record
# line has no recording chain, and what must stop the command before it
# runs (77: a folder the sandbox could write, a file already there; 78: a
# record line outside mode direct).  Needs root and tshark; skips (77)
# otherwise.  Everything made here is removed on exit, also on failure.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# skip, ok, fail, check, wait_file, expect; the EXIT trap (nss, work)
. "$srcdir/tests/integration/enforce_lib.sh"
builddir=$(pwd)
ENFORCE=$builddir/aisb-enforce
PEER=$srcdir/tests/integration/enforce_peer.py

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "needs ip (iproute2)"
command -v python3 >/dev/null || skip "needs python3"
command -v tshark >/dev/null || skip "needs tshark"
[ -x "$ENFORCE" ] || skip "build aisb-enforce first"

PNS=aisb-rp-$$
SNS=aisb-rs-$$
VP=arp$$
VS=ars$$
work=$(mktemp -d /tmp/aisb-record-test.XXXXXX)
nss=("$PNS" "$SNS")

# tshark as root says so on stderr; anything else there is a warning.
tshark_q() {
	tshark "$@" 2>"$work/tshark.err"
	local e
	e=$(grep -vxF 'Running as user "root" and group "root". This could be dangerous.' \
	    "$work/tshark.err" || true)
	if [ -n "$e" ]; then
		echo "tshark: $e" >&2
		return 1
	fi
}

# --- namespaces, servers -------------------------------------------------

ip netns add "$PNS"
ip netns add "$SNS"
ip link add "$VP" netns "$PNS" type veth peer name "$VS" netns "$SNS"
ip -n "$PNS" addr add 10.198.0.1/24 dev "$VP"
ip -n "$SNS" addr add 10.198.0.10/24 dev "$VS"
for ns in "$PNS" "$SNS"; do
	ip -n "$ns" link set lo up
done
ip -n "$PNS" link set "$VP" up
ip -n "$SNS" link set "$VS" up

echo 'peer.test 10.198.0.1 60' >"$work/zone"
ip netns exec "$PNS" python3 "$PEER" --ready "$work/dns.ready" \
	--dns 10.198.0.1:53 --tcp 10.198.0.1:43181 --zone "$work/zone" \
	--lifetime 600 &
pids+=($!)
# 43180: reads one line, answers "answer:" and the line reversed, closes.
cat >"$work/server.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.198.0.1", 43180))
s.listen(8)
open(sys.argv[1], "w").close()
while True:
    c, _ = s.accept()
    data = b""
    while not data.endswith(b"\n"):
        b = c.recv(65536)
        if not b:
            break
        data += b
    c.sendall(b"answer:" + data[::-1])
    c.close()
PY
ip netns exec "$PNS" python3 "$work/server.py" "$work/server.ready" &
pids+=($!)
wait_file "$work/dns.ready"
wait_file "$work/server.ready"

# The command, as uid 1000: the traffic, then the capture itself.
chmod 755 "$work"
cat >"$work/client.py" <<'PY'
import os, socket, sys
out, size, cap = sys.argv[1], int(sys.argv[2]), sys.argv[3]
req = b"request " + bytes(ord("a") + i % 26 for i in range(size)) + b"\n"
c = socket.create_connection(("10.198.0.1", 43180), timeout=5)
c.sendall(req)
ans = b""
while True:
    b = c.recv(65536)
    if not b:
        break
    ans += b
c.close()
res = []
try:
    socket.create_connection(("10.198.0.1", 43181), timeout=2)
    res.append("43181 open")
except OSError:
    res.append("43181 blocked")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
             b"\x04peer\x04test\x00\x00\x01\x00\x01", ("10.198.0.1", 53))
    res.append("dns sent")
except OSError:
    res.append("dns blocked")
try:
    open(cap, "rb").read(1)
    res.append("capture readable")
except OSError:
    res.append("capture unreadable")
try:
    os.unlink(cap)
    res.append("capture removed")
except OSError:
    res.append("capture kept")
with open(out + ".req", "wb") as f:
    f.write(req)
with open(out + ".ans", "wb") as f:
    f.write(ans)
print("\n".join(res))
PY
mkdir -m 777 "$work/out"

plan() {	# plan FILE MAXBYTES: a direct plan recording to FILE
	printf 'aisb-plan 1\nmode direct\nresolver 10.198.0.1\nallow-name peer.test 43180\nallow-range 10.198.0.0/24\nrecord %s %s\n' \
	    "$1" "$2"
}

# --- a recorded run --------------------------------------------------------

mkdir -m 700 "$work/rec"
plan "$work/rec/capture.pcapng" 1048576 >"$work/rec.plan"
rc=0
ip netns exec "$SNS" "$ENFORCE" -v --plan "$work/rec.plan" -- \
	python3 "$work/client.py" "$work/out/rec" 3000 "$work/rec/capture.pcapng" \
	>"$work/rec.out" 2>"$work/rec.err" || rc=$?
check "recorded run: exit status" "$rc" 0
check "the command's results" "$(tr '\n' ' ' <"$work/rec.out")" \
	"43181 blocked dns blocked capture unreadable capture kept "
cap=$work/rec/capture.pcapng
check "capture: owner and mode" "$(stat -c '%u %a' "$cap" 2>/dev/null)" "0 600"
if tshark_q -r "$cap" -T fields -e frame.number >"$work/frames"; then
	ok "tshark reads the capture without a warning"
else
	fail "tshark warned"
fi
bad=$(tshark -r "$cap" -Y '_ws.malformed || _ws.expert.severity >= error' \
    -T fields -e frame.number 2>/dev/null | wc -l)
check "no malformed packet, no expert error" "$bad" 0
n=$(wc -l <"$work/frames")
[ "$n" -ge 10 ] && ok "capture: $n packets" || fail "capture: $n packets"

fields() {	# fields FILTER FIELD...: one line per packet
	local f=$1
	shift
	tshark -r "$cap" -Y "$f" -T fields -E separator=' ' \
	    $(printf -- '-e %s ' "$@") 2>/dev/null
}
syn=$(fields 'tcp.dstport == 43180 && tcp.flags.syn == 1 && tcp.flags.ack == 0' frame.comment | sed -n 1p)
check "the flow's SYN says aisb accept" "$syn" "aisb accept"
other=$(fields 'tcp.dstport == 43180 && tcp.flags.syn == 0' frame.comment | sort -u | tr '\n' ' ')
check "later packets of the flow carry no comment" "$other" " "
drop=$(fields 'tcp.dstport == 43181' frame.comment | sort -u | tr '\n' ' ')
check "the SYN to 43181 says aisb drop" "$drop" "aisb drop "
dns=$(fields 'udp.dstport == 53 && ip.src == 10.198.0.10' frame.comment | sort | uniq -c | awk '{ $1 = ""; print }' | sort | tr '\n' '|')
case $dns in
*"aisb drop dns"*) ok "the command's raw DNS says aisb drop dns" ;;
*) fail "no aisb drop dns: $dns" ;;
esac
case $dns in
*"aisb accept"*) ok "the refresher's look-up is recorded as accepted" ;;
*) fail "no accepted look-up: $dns" ;;
esac
inbound=$(fields 'tcp.srcport == 43180 && ip.src == 10.198.0.1' frame.number | wc -l)
[ "$inbound" -ge 3 ] && ok "received packets recorded ($inbound from the peer)" ||
	fail "received packets: $inbound"
dnsin=$(fields 'udp.srcport == 53 && ip.src == 10.198.0.1' frame.number | wc -l)
[ "$dnsin" -ge 1 ] && ok "the resolver's answers recorded" ||
	fail "no answer of the resolver recorded"

# The stream gives back exactly what was sent, each way.
stream=$(fields 'tcp.dstport == 43180' tcp.stream | sed -n 1p)
tshark -r "$cap" -q -z "follow,tcp,raw,$stream" 2>/dev/null >"$work/follow"
# raw: the client's chunks at column 1, the server's indented by a tab
python3 - "$work/follow" "$work/out/rec" <<'PY' >"$work/follow.res"
import sys
lines = open(sys.argv[1]).read().split("\n")
body = lines[lines.index("Node 1: 10.198.0.1:43180") + 1:]
c, s = b"", b""
for l in body:
    if l.startswith("="):
        break
    if l.startswith("\t"):
        s += bytes.fromhex(l.strip())
    elif l:
        c += bytes.fromhex(l.strip())
req = open(sys.argv[2] + ".req", "rb").read()
ans = open(sys.argv[2] + ".ans", "rb").read()
print("request", "same" if c == req else "differs (%d vs %d bytes)" % (len(c), len(req)))
print("answer", "same" if s == ans and len(ans) > 0 else "differs (%d vs %d bytes)" % (len(s), len(ans)))
PY
check "following the stream: request" "$(sed -n 1p "$work/follow.res")" "request same"
check "following the stream: answer" "$(sed -n 2p "$work/follow.res")" "answer same"

# --- the bound ------------------------------------------------------------

mkdir -m 700 "$work/small"
plan "$work/small/capture.pcapng" 4096 >"$work/small.plan"
rc=0
ip netns exec "$SNS" "$ENFORCE" --plan "$work/small.plan" -- \
	python3 "$work/client.py" "$work/out/small" 60000 "$work/small/capture.pcapng" \
	>"$work/small.out" 2>"$work/small.err" || rc=$?
check "bound: the command goes on" "$rc" 0
size=$(stat -c %s "$work/small/capture.pcapng")
# the 60 kB request leaves as one segment (GSO), which does not fit
[ "$size" -le 4096 ] && [ "$size" -gt 0 ] && ok "bound: $size bytes" ||
	fail "bound: $size bytes"
grep -q 'record: limit of 4096 bytes reached' "$work/small.err" &&
	ok "bound: one line says so" || fail "bound: $(cat "$work/small.err")"
if tshark_q -r "$work/small/capture.pcapng" >/dev/null; then
	ok "bound: tshark reads it without a warning"
else
	fail "bound: tshark warned"
fi
cmp -s "$work/out/small.ans" /dev/null && fail "bound: no answer" ||
	ok "bound: the traffic went on"

# --- the recorder killed mid-stream: the file ends at a complete block -------

# The command streams until the test has killed the recorder, then ends.
cat >"$work/stream.py" <<'PY'
import os, socket, sys, time
c = socket.create_connection(("10.198.0.1", 43180), timeout=30)
open(sys.argv[1] + ".started", "w").close()
chunk = b"s" * 16384
while not os.path.exists(sys.argv[1] + ".stop"):
    c.sendall(chunk)
    time.sleep(0.002)	# a steady stream, small enough for the server
c.sendall(b"\n")
while c.recv(65536):
    pass
print("stream done")
PY
mkdir -m 700 "$work/killed"
plan "$work/killed/capture.pcapng" 1073741824 >"$work/killed.plan"
ip netns exec "$SNS" "$ENFORCE" --plan "$work/killed.plan" -- \
	python3 "$work/stream.py" "$work/out/killed" \
	>"$work/killed.out" 2>"$work/killed.err" &
kpid=$!
pids+=($kpid)
recorder=
if wait_file "$work/out/killed.started"; then
	for p in $(ip netns pids "$SNS"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = aisb-record ] && recorder=$p
	done
fi
if [ -n "$recorder" ]; then
	st=$(grep -E '^(Uid|CapEff|CapPrm|CapBnd|NoNewPrivs):' "/proc/$recorder/status" |
	    tr -s '\t' ' ' | tr '\n' ' ')
	check "the recorder: uid 0, no capability" "$st" \
	    "Uid: 0 0 0 0 CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 NoNewPrivs: 1 "
	kill -KILL "$recorder"
else
	fail "no aisb-record process in the sandbox's namespace"
fi
touch "$work/out/killed.stop"
rc=0
wait "$kpid" || rc=$?
check "recorder killed: the command goes on" "$rc:$(cat "$work/killed.out")" "0:stream done"
size=$(stat -c %s "$work/killed/capture.pcapng")
if [ "$size" -gt 100 ] && tshark_q -r "$work/killed/capture.pcapng" >/dev/null &&
    [ "$(tshark -r "$work/killed/capture.pcapng" -Y _ws.malformed 2>/dev/null | wc -l)" = 0 ]; then
	ok "recorder killed: tshark reads its $size bytes without a warning"
else
	fail "recorder killed: $size bytes, tshark: $(cat "$work/tshark.err")"
fi

# --- a table without a record line -----------------------------------------

printf 'aisb-plan 1\nmode direct\nresolver 10.198.0.1\nallow-name peer.test 43180\nallow-range 10.198.0.0/24\n' \
	>"$work/plain.plan"
if command -v nft >/dev/null; then
	rc=0
	ip netns exec "$SNS" "$ENFORCE" --plan "$work/plain.plan" -- true \
		>"$work/plain.out" 2>"$work/plain.err" || rc=$?
	t=$(ip netns exec "$SNS" nft list table inet aisb)
	if [ "$rc" = 0 ] && ! grep -q 'record_\|group' <<<"$t"; then
		ok "without record: no recording chain, no log group"
	else
		fail "without record ($rc): $t"
	fi
fi

# --- what stops the command before it runs ----------------------------------

run_refused() {	# run_refused NAME WANT PLAN: exit WANT, the command never ran
	local rc=0
	ip netns exec "$SNS" "$ENFORCE" --plan "$3" -- /bin/sh -c \
	    "echo ran >$work/out/$1" >"$work/$1.out" 2>"$work/$1.err" || rc=$?
	check "$1: exit" "$rc" "$2"
	[ ! -e "$work/out/$1" ] && ok "$1: the command did not run" ||
		fail "$1: the command ran"
}
mkdir -m 777 "$work/open"
plan "$work/open/capture.pcapng" 1048576 >"$work/open.plan"
run_refused open-folder 77 "$work/open.plan"
grep -q 'the sandbox (uid 1000) could remove or replace the capture' \
	"$work/open-folder.err" && ok "open-folder: says why" ||
	fail "open-folder: $(cat "$work/open-folder.err")"
mkdir -m 700 "$work/taken"
: >"$work/taken/capture.pcapng"
plan "$work/taken/capture.pcapng" 1048576 >"$work/taken.plan"
run_refused file-exists 77 "$work/taken.plan"
grep -q 'record: creating .*: File exists' "$work/file-exists.err" &&
	ok "file-exists: says why" || fail "file-exists: $(cat "$work/file-exists.err")"
printf 'aisb-plan 1\nmode gate\ngate 10.198.0.1 43180\nrecord %s 1048576\n' \
	"$work/rec/other.pcapng" >"$work/gate.plan"
run_refused gate-mode 78 "$work/gate.plan"
grep -q 'record is only for mode direct' "$work/gate-mode.err" &&
	ok "gate-mode: says why" || fail "gate-mode: $(cat "$work/gate-mode.err")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
