# Shared by the tests/integration/gate_*.sh scripts; sourced, not run.
#
# Every gate test runs in a network namespace of its own with only loopback
# up, so nothing it does can leave the machine: the script re-executes
# itself under unshare(1) first.  Inside, documentation addresses
# (192.0.2.0/24) are added to lo to play "public" upstreams, and private or
# metadata addresses (10.0.0.1, 169.254.169.254) to prove that they are
# never dialled.
#
# Helpers start the gate on 127.0.0.1 port 0 (the port comes back through
# --port-file), a DNS responder (gate_dns.py) and upstream servers
# (gate_upstream.py), all killed by the EXIT trap, failure or not.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
here=$top_srcdir/tests/integration
gate_bin=${AISB_GATE:-$top_builddir/aisb-gate}
# The system python3 when there is one: version-manager shims cost ~0.5 s a call.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi
# the helpers import modules beside them (https_upstream.py): no
# __pycache__ written into the source tree
export PYTHONDONTWRITEBYTECODE=1

if [ -z "${AISB_GATE_NETNS:-}" ]; then
	export AISB_GATE_NETNS=1
	if unshare -n true 2>/dev/null; then
		exec unshare -n "$BASH" "$0" "$@"
	elif unshare -rn true 2>/dev/null; then
		export AISB_GATE_USERNS=1	# root here, but not really
		exec unshare -rn "$BASH" "$0" "$@"
	fi
	echo "SKIP: cannot create a network namespace (unshare -n, unshare -rn)"
	exit 77
fi
for tool in curl ip "$PY"; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
[ -x "$gate_bin" ] || { echo "FAIL: $gate_bin not built" >&2; exit 1; }

ip link set lo up
ip addr add 192.0.2.10/32 dev lo
ip addr add 192.0.2.11/32 dev lo
ip addr add 192.0.2.20/32 dev lo
ip addr add 10.0.0.1/32 dev lo
ip addr add 169.254.169.254/32 dev lo
# Packets to 198.51.100.0/24 loop back in and are dropped (not ours, no
# forwarding): a black hole for connect timeouts.
ip route add 198.51.100.0/24 dev lo
# Documentation blocks are denied ranges like any special-purpose block:
# the policies of the tests exempt the two that play the internet here.
test_ranges='192.0.2.0/24, 198.51.100.0/24'

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aisb-gate-test.XXXXXX")
pids=()
cleanup() {
	local rc=$? p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	# a suite's own teardown (mounts), once its processes are gone
	if declare -F cleanup_extra >/dev/null; then
		cleanup_extra || true
	fi
	# A sanitizer build reports into the gate's stderr, at exit for leaks.
	if grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
	    "$tmp"/gate*.err >/dev/null 2>&1; then
		echo "FAIL: sanitizer report" >&2
		rc=1
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "--- gate log" >&2; cat "$tmp"/gate*.err >&2 2>/dev/null || true
		echo "--- audit" >&2; cat "$tmp"/audit*.log >&2 2>/dev/null || true
	fi
	if [ -n "${AISB_TEST_KEEP:-}" ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
. "$here/../errtrap.sh"	# a death names its command and line

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() {	# check WHAT GOT WANT
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
finish() {
	echo "$pass checks passed, $fail failed"
	[ "$fail" = 0 ]
}

wait_file() {	# wait_file FILE: up to 10 s
	local i
	for i in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "FAIL: $1 did not appear" >&2
	return 1
}

# zone JSON: written atomically so the responder never reads half a file
set_zone() {
	printf '%s\n' "$1" >"$tmp/zone.json.tmp"
	mv "$tmp/zone.json.tmp" "$tmp/zone.json"
}

start_dns() {	# start_dns ZONE-JSON; sets dns_port
	set_zone "$1"
	"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" \
	    --port-file "$tmp/dns.port" --log "$tmp/dns.log" \
	    >/dev/null 2>"$tmp/dns.err" &
	pids+=($!)
	wait_file "$tmp/dns.port"
	dns_port=$(cat "$tmp/dns.port")
}

# start_upstream MODE ADDR [PORT]: sets up_port
start_upstream() {
	local f=$tmp/up.$1.$2.${3:-0}.port
	"$PY" "$here/gate_upstream.py" "$1" --bind "$2" --port "${3:-0}" \
	    --port-file "$f" --log "$tmp/upstream.log" \
	    >/dev/null 2>>"$tmp/upstream.err" &
	pids+=($!)
	wait_file "$f"
	up_port=$(cat "$f")
}

# start_tls_server: a certificate for tls.test ($tmp/cert.pem, its key
# $tmp/key.pem) and a TLS server with it on 192.0.2.20 (gate_record_server.py,
# each stream it got in $tmp/srv); sets tls to its port.  Needs openssl.
start_tls_server() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls.test \
	    -addext subjectAltName=DNS:tls.test -keyout "$tmp/key.pem" \
	    -out "$tmp/cert.pem" 2>/dev/null
	mkdir -p "$tmp/srv"
	"$PY" "$here/gate_record_server.py" tls --bind 192.0.2.20 \
	    --port-file "$tmp/tls.port" --dir "$tmp/srv" --cert "$tmp/cert.pem" \
	    --key "$tmp/key.pem" >/dev/null 2>>"$tmp/upstream.err" &
	pids+=($!)
	wait_file "$tmp/tls.port"
	tls=$(cat "$tmp/tls.port")
}

# start_gate NAME POLICY [ARGS...]: sets gate_port and gate_pid; the audit
# goes to $tmp/audit.NAME.log and stderr to $tmp/gate.NAME.err.
start_gate() {
	local name=$1 policy=$2
	shift 2
	rm -f "$tmp/gate.$name.port"
	"$gate_bin" -d -v -f "$policy" -l 127.0.0.1:0 \
	    --port-file "$tmp/gate.$name.port" \
	    --audit "$tmp/audit.$name.log" "$@" >/dev/null \
	    2>"$tmp/gate.$name.err" &
	gate_pid=$!
	pids+=($gate_pid)
	wait_file "$tmp/gate.$name.port"
	gate_port=$(cat "$tmp/gate.$name.port")
}

# proxy_get [CURL ARGS...] URL: prints "CONNECT-CODE HTTP-CODE", body in
# $tmp/body.  Never fails the script.
proxy_get() {
	curl -sS -m 15 -o "$tmp/body" -D "$tmp/headers" \
	    -w '%{http_connect} %{http_code}' \
	    -x "http://127.0.0.1:$gate_port" "$@" 2>"$tmp/curl.err" || true
}

# The X-Aisb-Decision header of the last answer (CONNECT or forward).
decision_header() {
	tr -d '\r' <"$tmp/headers" | sed -n 's/^[Xx]-[Aa]isb-[Dd]ecision: //p' |
	    tail -n 1
}

# audit_count LOG KEY=VALUE...: how many audit lines have all these fields
# (VALUE is a glob).  Every line must be valid JSON, or the count is "invalid".
audit_count() {
	local log=$1
	shift
	"$PY" - "$log" "$@" <<'PY'
import fnmatch, json, sys
want = dict(a.split("=", 1) for a in sys.argv[2:])
n = 0
try:
    for line in open(sys.argv[1]):
        o = json.loads(line)
        if all(fnmatch.fnmatchcase(str(o.get(k)), v)
               for k, v in want.items()):
            n += 1
except (ValueError, OSError):
    print("invalid")
    sys.exit(0)
print(n)
PY
}

expect_audit() {	# expect_audit LOG KEY=VALUE...: at least one line
	local n
	n=$(audit_count "$@")
	if [ "$n" != invalid ] && [ "$n" -ge 1 ]; then ok; else
		bad "no audit line in $(basename "$1") with: ${*:2} (count $n)"
	fi
}

# raw_req PORT PRINTF-FORMAT: send the bytes, print the status line
# (or "closed" when the gate closed without a word).
raw_req() {
	printf "$2" | "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.stdin.buffer.read())
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
line = data.split(b"\r\n", 1)[0].decode("latin-1")
print(line if line else "closed")
' "$1"
}

# control SOCK CMD [KEY.KEY...]: one command on a gate's control socket;
# prints its JSON answer, or the value at the dotted key path
control() {
	"$PY" - "$1" "$2" "${3:-}" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall((sys.argv[2] + "\n").encode())
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
o = json.loads(d)
for k in filter(None, sys.argv[3].split(".")):
    o = o[k]
print(json.dumps(o) if isinstance(o, (dict, list)) else o)
PY
}

# write_policy FILE HOST...: allow HOSTs on ports $up and $echo_port, DNS
# from the test's server; replaced whole (rename) for reload tests
write_policy() {
	local f=$1 h
	shift
	{
		echo "version: 1"
		echo "allow:"
		for h in "$@"; do
			echo "  - host: $h"
			echo "    ports: [$up, $echo_port]"
		done
		echo "allow_ranges: [$test_ranges]"
		echo "dns:"
		echo "  servers: [\"127.0.0.1:$dns_port\"]"
	} >"$f.tmp"
	mv "$f.tmp" "$f"
}

# upstream_cert CN DNS-NAME...: in $tmp, a test CA (upca.pem, upca.key)
# and a server certificate it signs (srv.pem, srv.key) for the names:
# the HTTPS upstreams of the inspect tests, whose CA the gate is told
upstream_cert() {
	local cn=$1 sans
	shift
	sans=$(printf 'DNS:%s,' "$@")
	( cd "$tmp" &&
	  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -days 2 -subj "/CN=$cn" -keyout upca.key -out upca.pem \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign &&
	  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -subj "/CN=$1" -keyout srv.key -out srv.csr &&
	  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' \
	    "${sans%,}" >srv.ext &&
	  openssl x509 -req -in srv.csr -CA upca.pem -CAkey upca.key \
	    -CAcreateserial -days 2 -extfile srv.ext -out srv.pem ) 2>/dev/null
}

# write_policy_deny FILE: ok.test allowed on port $up alone, blocked.test
# refused by a deny rule (not only by default), DNS from the test's server:
# what the --ask and --learn tests start from
write_policy_deny() {
	cat >"$1" <<EOF
version: 1
allow:
  - host: ok.test
    ports: [$up]
deny:
  - host: blocked.test
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
}

upstream_accepts() {	# upstream_accepts ADDR: connections accepted on ADDR
	grep -c "^accept $1\$" "$tmp/upstream.log" 2>/dev/null || true
}
