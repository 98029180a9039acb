#!/bin/bash
# aisb-gate --record: a gate that records, real curl through it (an HTTP
# forward request with a body, a CONNECT tunnel carrying TLS to a server
# made here, a denied request), then tshark reads the capture: no warning,
# each TCP stream gives back exactly the bytes each side sent (kept by the
# servers, gate_record_server.py), each stream's comment names the conn id
# and the decision of its audit line.  Then a gate killed (SIGKILL) in the
# middle of a transfer leaves a readable capture, --record-max stops the
# recording with an audit line while the gate goes on, and the refusals
# (an existing file, --workers).
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

for tool in tshark openssl; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
. "$here/record_lib.sh"

srv=$here/gate_record_server.py
mkdir "$tmp/srv" "$tmp/srv6"
# start_rec_server MODE ADDR DIR [ARGS]: sets up_port
start_rec_server() {
	local f=$tmp/rec.$1.$2.port
	"$PY" "$srv" "$1" --bind "$2" --port-file "$f" --dir "$3" "${@:4}" \
	    >/dev/null 2>>"$tmp/upstream.err" &
	pids+=($!)
	wait_file "$f"
	up_port=$(cat "$f")
}

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls.test \
    -addext subjectAltName=DNS:tls.test -keyout "$tmp/key.pem" \
    -out "$tmp/cert.pem" 2>/dev/null
start_rec_server http 192.0.2.11 "$tmp/srv"
http_port=$up_port
start_rec_server tls 192.0.2.20 "$tmp/srv" --cert "$tmp/cert.pem" --key "$tmp/key.pem"
tls_port=$up_port
start_rec_server echo 192.0.2.10 "$tmp/srv"
echo_port=$up_port
ip addr add 2001:db8::10/128 dev lo nodad
start_rec_server echo 2001:db8::10 "$tmp/srv6"
echo6_port=$up_port
start_dns '{"web.test": {"A": ["192.0.2.11"]}, "tls.test": {"A": ["192.0.2.20"]},
    "echo.test": {"A": ["192.0.2.10"]}, "echo6.test": {"AAAA": ["2001:db8::10"]},
    "closed.test": {"A": ["192.0.2.11"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: web.test
    ports: [$http_port]
  - host: tls.test
    ports: [$tls_port]
  - host: echo.test
    ports: [$echo_port]
  - host: echo6.test
    ports: [$echo6_port]
  - host: "~^closed\\\\.test\$"
    ports: [9]
allow_ranges: [$test_ranges, 2001:db8::/32]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF

# streams FILE: "STREAM<TAB>COMMENT" for each commented packet
streams() {
	tshark_r "$1" -Y frame.comment -T fields -e tcp.stream -e frame.comment
}

# tunnel PORT HOST:PORT FILE: CONNECT, send FILE's bytes while reading the
# echo, half-close, print the echo's length and whether it is FILE's bytes
tunnel() {
	"$PY" - "$@" <<'PY'
import socket, sys, threading
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % sys.argv[2].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
data = open(sys.argv[3], "rb").read()
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send)
t.start()
out = bytearray()
while True:
    d = s.recv(65536)
    if not d:
        break
    out += d
t.join()
print(len(out), out == data)
PY
}

# --- refusals -------------------------------------------------------------------

"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --record "$tmp/w.pcapng" \
    --workers 2 >/dev/null 2>"$tmp/refuse.err" && rc=0 || rc=$?
check "--record with --workers 2: exit" "$rc" 78
check "--record with --workers 2: no file" "$(ls "$tmp"/w.pcapng* 2>/dev/null | wc -l)" 0
"$gate_bin" -d -f "$tmp/policy.yaml" --record-max 12 --record "$tmp/w.pcapng" \
    >/dev/null 2>"$tmp/refuse.err" && rc=0 || rc=$?
check "--record-max 12: exit" "$rc" 64
"$gate_bin" -n -f "$tmp/policy.yaml" --record "$tmp/n.pcapng" --record-max 2g \
    2>"$tmp/refuse.err" && rc=0 || rc=$?
check "-n with --record: exit" "$rc" 0
check "-n with --record: no file" "$(ls "$tmp"/n.pcapng 2>/dev/null | wc -l)" 0
echo planted >"$tmp/exists.pcapng"
"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --record "$tmp/exists.pcapng" \
    >/dev/null 2>"$tmp/refuse.err" && rc=0 || rc=$?
check "--record on an existing file: fails" "$((rc != 0))" 1
check "--record on an existing file: untouched" "$(cat "$tmp/exists.pcapng")" planted
ln -s "$tmp/target" "$tmp/link.pcapng"
"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --record "$tmp/link.pcapng" \
    >/dev/null 2>"$tmp/refuse.err" && rc=0 || rc=$?
check "--record on a symbolic link: fails" "$((rc != 0))" 1
check "--record on a symbolic link: not followed" "$(ls "$tmp/target" 2>/dev/null | wc -l)" 0

# --- a recorded session ---------------------------------------------------------

cap=$tmp/capture.pcapng
start_gate rec "$tmp/policy.yaml" --record "$cap"
check "capture mode" "$(stat -c %a "$cap")" 600

head -c 3000 /dev/urandom | base64 -w 0 >"$tmp/post.body"
code=$(curl -sS -m 15 -o "$tmp/post.out" -w '%{http_code}' \
    -x "http://127.0.0.1:$gate_port" --data-binary @"$tmp/post.body" \
    "http://web.test:$http_port/upload" 2>"$tmp/curl.err" || true)
check "POST through the recording gate" "$code" 200
code=$(curl -sS -m 15 -o "$tmp/tls.out" -w '%{http_code}' \
    -x "http://127.0.0.1:$gate_port" --cacert "$tmp/cert.pem" \
    -d 'hello over tls' "https://tls.test:$tls_port/x" 2>"$tmp/curl.err" || true)
check "TLS tunnel through the recording gate" "$code" 200
grep -q "got 14 bytes of body: hello over tls" "$tmp/tls.out" && ok ||
    bad "the TLS server did not see the body: $(cat "$tmp/tls.out")"
check "denied CONNECT" "$(proxy_get "https://denied.test:443/")" "403 000"
# allowed, but nothing listens there: a failed connect
check "connect refused" "$(proxy_get "http://closed.test:9/")" "000 502"
# 3 MiB each way through the raw relay: many reads, segments split at the
# largest a packet holds
head -c $((3 << 20)) /dev/urandom >"$tmp/bulk.in"
check "bulk tunnel" "$(tunnel "$gate_port" "echo.test:$echo_port" "$tmp/bulk.in")" \
    "$((3 << 20)) True"
wait_file "$tmp/srv/echo.1.out"
# the servers write their bytes once the connections are closed
wait_file "$tmp/srv/http.1.out"
wait_file "$tmp/srv/tls.1.out"
for i in $(seq 50); do
	[ "$(audit_count "$tmp/audit.rec.log" event=close)" -ge 3 ] && break
	sleep 0.1
done

tshark_r "$cap" >"$tmp/tshark.out" && rc=0 || rc=$?
check "tshark -r: exit" "$rc" 0
check "tshark -r: stderr" "$(cat "$tmp/tshark.err")" ""
# checksums: the gate writes valid IP and TCP checksums, tshark checks them
bad_ck=$(tshark_r "$cap" -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
    -Y 'tcp.checksum.status == 0 || ip.checksum.status == 0' | wc -l)
check "packets with a bad checksum" "$bad_ck" 0
good_ck=$(tshark_r "$cap" -o tcp.check_checksum:TRUE \
    -Y 'tcp.checksum.status == 1' | wc -l)
check "packets with a checked good checksum" "$((good_ck > 10))" 1

streams "$cap" >"$tmp/streams"
check "commented streams (three allowed, one denied, one failed)" \
    "$(wc -l <"$tmp/streams")" 5
# each comment: the conn id and decision of an audit decision line
while IFS=$'\t' read -r stream comment; do
	conn=$(sed -n 's/.*conn=\([0-9]*\) .*/\1/p' <<<"$comment")
	dec=$(sed -n 's/.* decision=\([a-z]*\) .*/\1/p' <<<"$comment")
	host=$(sed -n 's/.* host=\([^ ]*\) .*/\1/p' <<<"$comment")
	case $comment in "aisb conn="*" session="*" decision="*" reason="*" host="*" rule=\""*\")
		ok ;; *) bad "comment format: $comment" ;; esac
	check "audit line of stream $stream ($comment)" \
	    "$(audit_count "$tmp/audit.rec.log" event=decision conn="$conn" \
	    decision="$dec" host="${host%:*}")" 1
	case $host in
	web.test:*) s_http=$stream ;;
	tls.test:*) s_tls=$stream ;;
	echo.test:*) s_bulk=$stream ;;
	denied.test:*) s_deny=$stream
		check "denied stream's decision" "$dec" deny ;;
	closed.test:*) s_fail=$stream
		# the rule's backslash: '?' inside the quotes (termsafe.h)
		check "failed stream's decision" "$comment" \
		    "aisb conn=$conn session=- decision=error reason=connect_failed host=closed.test:9 rule=\"$tmp/policy.yaml:11:5 allow host: ~^closed?.test\$\"" ;;
	esac
done <"$tmp/streams"

# the bytes of each stream, both ways, against what the servers kept
follow "$cap" "${s_http:-x}" "$tmp/f.http"
same "HTTP forward, client to server" "$tmp/f.http.0" "$tmp/srv/http.1.in"
same "HTTP forward, server to client" "$tmp/f.http.1" "$tmp/srv/http.1.out"
grep -q "^POST /upload HTTP/1.1" "$tmp/f.http.0" && ok ||
    bad "the recorded forward request does not start with its line"
tail -c "$(stat -c %s "$tmp/post.body")" "$tmp/f.http.0" |
    cmp -s - "$tmp/post.body" && ok ||
    bad "the recorded forward request does not end with the body"
follow "$cap" "${s_bulk:-x}" "$tmp/f.bulk"
same "bulk tunnel, client to server" "$tmp/f.bulk.0" "$tmp/srv/echo.1.in"
same "bulk tunnel, server to client" "$tmp/f.bulk.1" "$tmp/srv/echo.1.out"
same "bulk tunnel, the client's bytes" "$tmp/f.bulk.0" "$tmp/bulk.in"
check "bulk tunnel: largest packet" "$(tshark_r "$cap" -Y "tcp.stream == ${s_bulk:-x}" \
    -T fields -e frame.len | sort -n | tail -1)" 65515
follow "$cap" "${s_tls:-x}" "$tmp/f.tls"
same "TLS tunnel, client to server" "$tmp/f.tls.0" "$tmp/srv/tls.1.in"
same "TLS tunnel, server to client" "$tmp/f.tls.1" "$tmp/srv/tls.1.out"
# the client and the destination as dialled, the handshake and the close
ends=$(tshark_r "$cap" -Y "tcp.stream == ${s_tls:-x}" -T fields -e ip.dst \
    -e tcp.dstport | sed -n 1p)
check "TLS stream: destination" "$(cut -f1,2 <<<"$ends")" "192.0.2.20	$tls_port"
check "TLS stream: SYNs and FINs" "$(tshark_r "$cap" -Y \
    "tcp.stream == ${s_tls:-x} && (tcp.flags.syn == 1 || tcp.flags.fin == 1)" | wc -l)" 4
# streams that ended as connections end (how a connection ended, not its
# reason's words): FINs, no RST
for s in "${s_http:-x}" "${s_tls:-x}" "${s_bulk:-x}"; do
	check "stream $s: no RST" "$(tshark_r "$cap" -Y \
	    "tcp.stream == $s && tcp.flags.reset == 1" | wc -l)" 0
done
# the denied attempt: a SYN to the placeholder, the placeholder's RST-ACK
check "denied stream: SYN, RST" "$(tshark_r "$cap" -Y "tcp.stream == ${s_deny:-x}" \
    -T fields -e ip.src -e ip.dst -e tcp.dstport -e tcp.srcport \
    -e tcp.flags.syn -e tcp.flags.reset | cut -f1,2,3,5,6 | tr '\t\n' ' /')" \
    "127.0.0.1 0.0.0.0 443 1 0/0.0.0.0 127.0.0.1 $(tshark_r "$cap" \
    -Y "tcp.stream == ${s_deny:-x}" -T fields -e tcp.srcport | sed -n 1p) 0 1/"
# the failed connect: a SYN to the address dialled, its RST-ACK
check "failed stream: SYN, RST" "$(tshark_r "$cap" -Y "tcp.stream == ${s_fail:-x}" \
    -T fields -e ip.dst -e tcp.dstport -e tcp.flags.syn -e tcp.flags.reset |
    tr '\t\n' ' /')" "192.0.2.11 9 1 0/127.0.0.1 $(tshark_r "$cap" \
    -Y "tcp.stream == ${s_fail:-x}" -T fields -e tcp.srcport | sed -n 1p) 0 1/"
kill -TERM "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- an IPv4 client to an IPv6 destination, after --user ---------------------

cap6=$tmp/six.pcapng
printf 'six of one' >"$tmp/six.in"
user_args=()
if [ "$(id -u)" = 0 ] && [ -z "${AISB_GATE_USERNS:-}" ] && id nobody >/dev/null 2>&1; then
	user_args=(--user nobody)
fi
start_gate six "$tmp/policy.yaml" --record "$cap6" "${user_args[@]}"
if [ ${#user_args[@]} -gt 0 ]; then
	check "--user: the capture is the user's" "$(stat -c %U "$cap6")" nobody
fi
check "tunnel to an IPv6 destination" \
    "$(tunnel "$gate_port" "echo6.test:$echo6_port" "$tmp/six.in")" "10 True"
wait_file "$tmp/srv6/echo.1.out"
for i in $(seq 50); do
	[ "$(audit_count "$tmp/audit.six.log" event=close)" -ge 1 ] && break
	sleep 0.1
done
tshark_r "$cap6" >/dev/null && rc=0 || rc=$?
check "IPv6 capture: tshark -r exit" "$rc" 0
check "IPv6 capture: tshark -r stderr" "$(cat "$tmp/tshark.err")" ""
check "IPv6 capture: the client as IPv4-mapped" "$(tshark_r "$cap6" -Y frame.comment \
    -T fields -e ipv6.src -e ipv6.dst -e tcp.dstport)" \
    "::ffff:127.0.0.1	2001:db8::10	$echo6_port"
check "IPv6 capture: bad checksums" "$(tshark_r "$cap6" -o tcp.check_checksum:TRUE \
    -Y 'tcp.checksum.status != 1' | wc -l)" 0
follow "$cap6" 0 "$tmp/f.six"
same "IPv6 tunnel, client to server" "$tmp/f.six.0" "$tmp/srv6/echo.1.in"
same "IPv6 tunnel, server to client" "$tmp/f.six.1" "$tmp/srv6/echo.1.out"
kill -TERM "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- SIGKILL in the middle of a transfer --------------------------------------

cap2=$tmp/killed.pcapng
start_gate kill "$tmp/policy.yaml" --record "$cap2"
"$PY" - "$gate_port" "$echo_port" >"$tmp/kill.out" 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"CONNECT echo.test:%s HTTP/1.1\r\n\r\n" % sys.argv[2].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
chunk = os.urandom(1 << 16)
try:
    while True:
        s.sendall(chunk)
        s.recv(1 << 16)
except OSError:
    pass
PY
pids+=($!)
for i in $(seq 100); do
	[ "$(stat -c %s "$cap2")" -gt 1000000 ] && break
	sleep 0.05
done
kill -KILL "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
check "killed gate: capture grew past 1 MB" "$(($(stat -c %s "$cap2") > 1000000))" 1
# Every packet is one write(2); a SIGKILL that lands inside one (the kernel
# may stop a write between pages for a fatal signal) leaves a last packet
# cut short, which tshark names after reading all the others (status 2,
# or 0 with the same line: both seen).
tshark_r "$cap2" >"$tmp/tshark.out" && rc=0 || rc=$?
cut_short="tshark: The file \"$cap2\" appears to have been cut short in the middle of a packet."
if { [ "$rc" = 0 ] && [ ! -s "$tmp/tshark.err" ]; } ||
    { { [ "$rc" = 2 ] || [ "$rc" = 0 ]; } &&
    [ "$(cat "$tmp/tshark.err")" = "$cut_short" ]; }; then
	ok
else
	bad "killed gate: tshark -r: status $rc: $(cat "$tmp/tshark.err")"
fi
check "killed gate: packets read" "$(($(wc -l <"$tmp/tshark.out") > 10))" 1

# --- --record-max ---------------------------------------------------------------

cap3=$tmp/small.pcapng
start_gate small "$tmp/policy.yaml" --record "$cap3" --record-max 8K
for i in 1 2 3 4 5 6; do
	code=$(curl -sS -m 15 -o /dev/null -w '%{http_code}' \
	    -x "http://127.0.0.1:$gate_port" --data-binary @"$tmp/post.body" \
	    "http://web.test:$http_port/n$i" 2>"$tmp/curl.err" || true)
	check "request $i with a full record" "$code" 200
done
check "record limit: one audit line" "$(audit_count "$tmp/audit.small.log" \
    event=record detail='record limit reached at * bytes; recording stopped')" 1
check "record limit: file within the bound" "$(($(stat -c %s "$cap3") <= 8192))" 1
grep -q "record limit reached" "$tmp/gate.small.err" && ok ||
    bad "record limit: no log line"
tshark_r "$cap3" >"$tmp/tshark.out" && rc=0 || rc=$?
check "record limit: tshark -r exit" "$rc" 0
check "record limit: tshark -r stderr" "$(cat "$tmp/tshark.err")" ""

finish
