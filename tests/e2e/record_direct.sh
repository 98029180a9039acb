#!/bin/bash
# End to end: aisb --net direct --record in a real (rootful) podman session.
#
# Servers run on the host's loopback only (a DNS responder, an HTTP
# upstream, a TCP echo); from inside the container the host loopback is
# 10.0.2.2 (slirp4netns allow_host_loopback), so every packet recorded
# goes to a service this test started.  The command fetches a page from
# the allowed name, tries the echo port (not allowed) and raw DNS, and
# tries the record folder.  Then the capture in SESSION/recording: the
# container root's file, mode 0600, in a 0700 folder the command could
# not enter; tshark reads it without a warning; the allowed flow's SYN
# says "aisb accept", the echo port's SYN "aisb drop", the raw DNS "aisb
# drop dns"; the HTTP stream gives back, each way, exactly the request the
# server logged and the body curl saved.
#
# Needs root, podman, mmdebstrap and tshark; builds its image offline in a
# podman store of its own, which the EXIT trap removes, failure or not.
# Runs only with AISB_E2E=1 (tests/run.sh sets it for one build).
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
here=$top_srcdir/tests/integration
PY=${PYTHON:-python3}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rootful podman)"; exit 77; }
[ -n "${AISB_E2E:-}" ] || { echo "SKIP: set AISB_E2E=1 (tests/run.sh does, once)"; exit 77; }
for t in podman mmdebstrap curl tshark "$PY"; do
	command -v "$t" >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done

. "$top_srcdir/tests/e2e/lib.sh"
e2e_init record-direct
e2e_seed_image curl
vol=aisb-e2e-home-$$

wait_file() {
	for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done
	echo "FAIL: $1 never appeared" >&2; return 1
}

# --- host-side servers --------------------------------------------------
cat >"$tmp/zone.json" <<'EOF'
{"direct.test": {"A": ["10.0.2.2"], "ttl": 5}}
EOF
"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" --port-file "$tmp/dns.port" \
    --log "$tmp/dns.log" &
pids+=($!)
"$PY" "$here/gate_upstream.py" http --bind 127.0.0.1 --port-file "$tmp/http.port" \
    --log "$tmp/http.log" &
pids+=($!)
"$PY" "$here/gate_upstream.py" echo --bind 127.0.0.1 --port-file "$tmp/echo.port" \
    --log "$tmp/echo.log" &
pids+=($!)
for f in dns http echo; do wait_file "$tmp/$f.port"; done
dns=$(cat "$tmp/dns.port") http=$(cat "$tmp/http.port")
echo_port=$(cat "$tmp/echo.port")

cat >"$tmp/direct.yaml" <<EOF
version: 1
allow:
  - host: direct.test
    ports: [$http]
allow_ranges: [10.0.2.2/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
query='\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x06escape\x04test\x00\x00\x01\x00\x01'

rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/direct.yaml" --home-volume "$vol" \
    --package curl --net direct --record -- bash -c '
	curl -sS -o body -w "%{http_code}\n" "http://direct.test:'"$http"'/recorded?x=1"
	curl -sS --max-time 3 "http://10.0.2.2:'"$echo_port"'/" >/dev/null 2>&1; echo "echo $?"
	printf "'"$query"'" >/dev/udp/10.0.2.2/'"$dns"' 2>/dev/null; echo "dns $?"
	ls /run/aisb/record >/dev/null 2>&1; echo "ls $?"
	: >/run/aisb/record/x 2>/dev/null; echo "write $?"') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "session: exit" "$rc" 0
check "allowed fetch" "$(sed -n 1p "$tmp/out")" 200
if [ "$(sed -n 2p "$tmp/out")" != "echo 0" ]; then ok; else bad "the echo port was open"; fi
if [ "$(sed -n 4p "$tmp/out")" != "ls 0" ]; then ok; else bad "the command listed the record folder"; fi
if [ "$(sed -n 5p "$tmp/out")" != "write 0" ]; then ok; else bad "the command wrote into the record folder"; fi

sd=$(ls -dt "$XDG_STATE_HOME"/aisb/sessions/* | head -1)
cap=$sd/recording/capture.pcapng
base=$(awk -F: '$1 == "aisb" { print $2; exit }' /etc/subuid)
check "record folder: owner and mode" "$(stat -c '%u %a' "$sd/recording" 2>/dev/null)" "$base 700"
check "capture: owner and mode" "$(stat -c '%u %a' "$cap" 2>/dev/null)" "$base 600"

tshark -r "$cap" -T fields -e frame.number >"$tmp/frames" 2>"$tmp/tshark.err" || true
if grep -vxqF 'Running as user "root" and group "root". This could be dangerous.' "$tmp/tshark.err"; then
	bad "tshark warned: $(cat "$tmp/tshark.err")"
else
	ok
fi
n=$(wc -l <"$tmp/frames")
if [ "$n" -ge 8 ]; then ok; else bad "capture: $n packets"; fi
fields() {
	tshark -r "$cap" -Y "$1" -T fields -e "$2" 2>/dev/null
}
check "the allowed flow's SYN" \
    "$(fields "tcp.dstport == $http && tcp.flags.syn == 1 && tcp.flags.ack == 0" frame.comment | head -1)" \
    "aisb accept"
check "the echo port's SYN" \
    "$(fields "tcp.dstport == $echo_port" frame.comment | sort -u | tr '\n' ' ')" "aisb drop "
if fields "udp.dstport == $dns && ip.src != 10.0.2.2" frame.comment | grep -qx 'aisb drop dns'; then
	ok; else bad "no aisb drop dns: $(fields "udp.dstport == $dns" frame.comment | sort | uniq -c)"; fi
if [ "$(fields "tcp.srcport == $http" frame.number | wc -l)" -ge 3 ]; then ok; else bad "no received packets recorded"; fi

# The HTTP stream, each way: the request as the server logged it, the body
# curl saved at the end of the answer.
stream=$(fields "tcp.dstport == $http" tcp.stream | head -1)
tshark -r "$cap" -q -z "follow,tcp,raw,$stream" 2>/dev/null >"$tmp/follow"
"$PY" - "$tmp/follow" "$tmp/ws/body" <<'PY' >"$tmp/follow.res"
import sys
lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("Node 1:")) + 1
c, s = b"", b""
for l in lines[start:]:
    if l.startswith("="):
        break
    if l.startswith("\t"):
        s += bytes.fromhex(l.strip())
    elif l:
        c += bytes.fromhex(l.strip())
body = open(sys.argv[2], "rb").read()
print("request", "ok" if c.startswith(b"GET /recorded?x=1 HTTP/1.1\r\n") and c.endswith(b"\r\n\r\n") else repr(c[:80]))
print("answer", "ok" if s.startswith(b"HTTP/1.") and b" 200 " in s.split(b"\r\n")[0] and len(body) > 0 and s.endswith(body) else repr(s[:80]))
PY
check "stream: the request" "$(sed -n 1p "$tmp/follow.res")" "request ok"
check "stream: the answer ends with the body curl saved" "$(sed -n 2p "$tmp/follow.res")" "answer ok"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
