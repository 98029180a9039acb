#!/bin/bash
# End to end (issue 16): tools that ignore the proxy variables, in a real
# session, caught transparently and decided by the gate by name.
#
# The test makes a CA, a TLS server on 127.0.0.77:443 and an HTTP server on
# 127.0.0.77:80 (the host's loopback: the gate dials NAME:PORT with the
# port the command dialled), its DNS server (gate_dns.py, the gate's only
# resolver) mapping tls.test and unlisted.test there, and a policy that
# allows tls.test on 80 and 443.  The CA reaches the session as a host CA
# (AISB_TEST_HOST_CA_DIR, as tests/e2e/hostca.sh).  Inside: curl
# --noproxy '*' over TLS and plain HTTP, a python3 program that resolves
# and connects itself, an unlisted name (NXDOMAIN, never asked of the DNS
# server), an unlisted SNI at the allowed address and TLS without SNI
# (refused), and the audit and the summary naming the tool and the
# unlisted name as a denial.  On a named gate the same, the session known
# by the relay's credential (its summary counts its own transparent
# connection and its refused name).  --no-transparent: resolution
# fails as before.
#
# Needs root, podman and mmdebstrap, and 127.0.0.77 ports 80 and 443 free;
# builds its images offline in a podman store of its own, which the EXIT
# trap removes, failure or not.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start transparent mmdebstrap openssl "$PY"
SRV=127.0.0.77
e2e_seed_base
e2e_cleanup_more() { "$aisb" gate down e2etp >/dev/null 2>&1 || true; }
chmod 0755 "$tmp"
vol=aisb-e2e-transparent-$$
mkdir -p "$tmp/hostca/test"

# --- a CA, a certificate for tls.test, the servers, DNS ---------------------
e2e_tls_cert "$tmp" tls.test unlisted.test
cp "$tmp/ca.crt" "$tmp/hostca/test/e2e-transparent.crt"
export AISB_TEST_HOST_CA_DIR=$tmp/hostca

"$PY" - "$SRV" "$tmp/srv.crt" "$tmp/srv.key" "$tmp/servers.ready" <<'EOF' &
import http.server, ssl, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello %s %s\n" % (self.server.proto, self.headers.get(
            "Host", "?").encode())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
def start(port, proto):
    try:
        s = http.server.ThreadingHTTPServer((sys.argv[1], port), H)
    except OSError as e:
        print("cannot listen on %s:%d: %s" % (sys.argv[1], port, e))
        sys.exit(1)
    s.proto = proto
    if proto == b"tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    return s
a, b = start(443, b"tls"), start(80, b"http")
threading.Thread(target=a.serve_forever, daemon=True).start()
open(sys.argv[4], "w").write("ready\n")
b.serve_forever()
EOF
pids+=($!)
cat >"$tmp/zone.json" <<EOF
{"tls.test": {"A": ["$SRV"], "ttl": 5}, "unlisted.test": {"A": ["$SRV"], "ttl": 5}}
EOF
: >"$tmp/dns.log"
for _ in $(seq 100); do
	[ -s "$tmp/servers.ready" ] && break
	kill -0 "${pids[0]}" 2>/dev/null || { echo "SKIP: $SRV:80 or :443 taken"; exit 77; }
	sleep 0.1
done
wait_file "$tmp/servers.ready"
e2e_servers dns
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: tls.test
    ports: [80, 443]
allow_ranges: [$SRV/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF

# --- what runs inside ----------------------------------------------------------
cat >"$tmp/ws/self.py" <<'EOF'
import socket, ssl, sys
# no proxy code at all: resolve, connect, TLS, as many tools do
ai = socket.getaddrinfo("tls.test", 443, socket.AF_INET, socket.SOCK_STREAM)
ctx = ssl.create_default_context()
with socket.create_connection(ai[0][4][:2], timeout=20) as s:
    with ctx.wrap_socket(s, server_hostname="tls.test") as t:
        t.sendall(b"GET / HTTP/1.0\r\nHost: tls.test\r\n\r\n")
        data = b""
        while True:
            d = t.recv(4096)
            if not d:
                break
            data += d
print("self", data.split(b"\r\n\r\n", 1)[1].decode().strip().replace(" ", "_"))
EOF
cat >"$tmp/ws/resolve.py" <<'EOF'
import socket, sys
try:
    print(sys.argv[2], socket.getaddrinfo(sys.argv[1], 443, socket.AF_INET)[0][4][0])
except socket.gaierror as e:
    print(sys.argv[2], "nxdomain" if e.errno == socket.EAI_NONAME else "error")
EOF
cat >"$tmp/ws/nosni.py" <<'EOF'
import socket, ssl, sys
ctx = ssl.create_default_context()
ctx.check_hostname = False
try:
    with socket.create_connection((sys.argv[1], 443), timeout=20) as s:
        with ctx.wrap_socket(s) as t:
            t.sendall(b"GET / HTTP/1.0\r\nHost: tls.test\r\n\r\n")
            print("nosni reached")
except (OSError, ssl.SSLError):
    print("nosni refused")
EOF
cat >"$tmp/ws/probe.sh" <<'EOF'
#!/bin/sh
# one line per attempt: NAME RESULT
set -f	# the '*' of --noproxy
c="curl -sS -m 20 --noproxy *"
echo "tls $($c https://tls.test/ 2>/dev/null | tr ' ' _)"
echo "http $($c http://tls.test/ 2>/dev/null | tr ' ' _)"
python3 self.py 2>/dev/null || echo "self failed"
python3 resolve.py unlisted.test nx
python3 resolve.py tls.test synth
a=$(python3 resolve.py tls.test x | cut -d' ' -f2)
$c -o /dev/null --resolve "unlisted.test:443:$a" https://unlisted.test/ 2>/dev/null
echo "sni $?"
python3 nosni.py "$a"
EOF
chmod 0755 "$tmp/ws/probe.sh"

sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package curl --package python3 "$@") >"$tmp/out" 2>"$tmp/err" \
	    </dev/null || rc=$?
	return "$rc"
}
val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/out"; }

echo "# building the image (the offline base, then curl and python3)"
t0=$SECONDS
rc=0; sess -- ./probe.sh || rc=$?
echo "# first session, image build included: $((SECONDS - t0))s"
check "session exit" "$rc" 0
check "curl --noproxy https by name" "$(val tls)" "hello_tls_tls.test"
check "curl --noproxy http on 80" "$(val http)" "hello_http_tls.test"
check "python resolving and connecting itself" "$(val self)" "hello_tls_tls.test"
check "unlisted name: NXDOMAIN" "$(val nx)" nxdomain
case $(val synth) in
198.18.*|198.19.*) ok "allowed name: a synthetic address ($(val synth))" ;;
*) bad "allowed name resolved to '$(val synth)'" ;;
esac
v=$(val sni)
if [ -n "$v" ] && [ "$v" != 0 ]; then ok "unlisted SNI at the allowed address refused ($v)"
else bad "unlisted SNI: '$v'"; fi
check "TLS without SNI refused" "$(val nosni)" refused
check "the DNS server was never asked for the unlisted name" \
    "$(grep -c '^unlisted' "$tmp/dns.log" || true)" 0
sd=$(e2e_session)
lines=$(grep '"event":"decision"' "$sd/audit.jsonl" | grep '"transparent":true' || true)
n=$(grep -c '"tool":"curl"' <<<"$lines" || true)
[ "$n" -ge 2 ] && ok "audit: transparent decisions from curl ($n)" ||
	bad "audit: $n transparent decision(s) from curl"
grep -q '"reason":"no_sni"' <<<"$lines" && ok "audit: no_sni" || bad "audit: no no_sni line"
if grep -q 'tools that ignored the proxy variables: .*curl ([0-9]*)' "$tmp/err"; then
	ok "the summary names curl"
else
	bad "summary: $(grep transparently "$tmp/err" || echo none)"
fi
grep -q 'python3 (' "$tmp/err" && ok "the summary names python3" ||
	bad "summary without python3: $(grep transparently "$tmp/err" || echo none)"
"$aisb" sessions show "$(basename "$sd")" >"$tmp/show" 2>&1 || true
grep -q '^# [0-9]* connection(s) came in transparently; tools that ignored the proxy variables: .*curl ([0-9]*)' \
    "$tmp/show" && ok "sessions show: the tools line" ||
	bad "sessions show: $(grep -c . "$tmp/show") lines, no tools line"
# the unlisted name the gate's DNS refused is a denial: counted, in the
# summary with the YAML that allows it, and in sessions show
if grep -q '^aisb: denied unlisted.test (DNS lookup), [0-9]* times\{0,1\}: host not allowed' "$tmp/err" &&
    [ "$(grep -A2 '^aisb: denied unlisted.test (DNS lookup)' "$tmp/err" |
    grep -c '^  - host: unlisted.test$')" -ge 1 ]; then
	ok "the summary: the refused name and its YAML"
else
	bad "summary without the refused name: $(grep denied "$tmp/err" || echo none)"
fi
grep -q '^# denied unlisted.test (DNS lookup), ' "$tmp/show" &&
	ok "sessions show: the refused name" ||
	bad "sessions show: $(grep denied "$tmp/show" || echo none)"
check "sessions show: the refused name counted" \
    "$(sed -n 's/^# audit: [0-9]* allowed, \([0-9]*\) denied.*/\1/p' "$tmp/show")" \
    "$(grep -c '"event":"decision".*"decision":"deny"\|"event":"dns".*"answer":"NXDOMAIN"' "$sd/audit.jsonl")"

# --- a named gate: the relay's credential says whose session it is --------------
rc=0; (cd "$tmp/ws" && "$aisb" gate up e2etp --policy "$tmp/policy.yaml") \
    >/dev/null 2>&1 || rc=$?
check "named gate up" "$rc" 0
rc=0
sess --gate e2etp -- sh -c 'set -f; echo "tls $(curl -sS -m 20 --noproxy * https://tls.test/ 2>/dev/null | tr " " _)"; python3 resolve.py unlisted.test nx' || rc=$?
check "named gate: session exit" "$rc" 0
check "named gate: curl --noproxy https by name" "$(val tls)" "hello_tls_tls.test"
check "named gate: unlisted name NXDOMAIN" "$(val nx)" nxdomain
grep -q '^aisb: denied unlisted.test (DNS lookup)' "$tmp/err" &&
	ok "named gate: the session's summary names the refused name" ||
	bad "named gate: $(grep denied "$tmp/err" || echo no denial)"
grep -q 'tools that ignored the proxy variables: .*curl (1)' "$tmp/err" &&
	ok "named gate: the session's summary names curl" ||
	bad "named gate summary: $(grep transparently "$tmp/err" || echo none)"
"$aisb" gate down e2etp >/dev/null 2>&1 || bad "named gate down"

# --- --no-transparent: as before ---------------------------------------------
rc=0
sess --no-transparent -- sh -c 'curl -sS -m 10 --noproxy "*" -o /dev/null https://tls.test/; echo "curl $?"; curl -sS -m 20 -o /dev/null https://tls.test/; echo "proxy $?"' || rc=$?
check "--no-transparent: curl --noproxy cannot resolve (6)" "$(val curl)" 6
check "--no-transparent: the proxy-aware curl still works" "$(val proxy)" 0

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
