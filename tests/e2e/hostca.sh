#!/bin/bash
# End to end: the CAs a host trusts locally are trusted inside sessions.
#
# The test makes its own CA (openssl), a TLS server on the host's loopback
# with a certificate from it for tls.test (resolved by the test's DNS
# server), and a host CA folder holding the CA, which aisb reads instead
# of /usr/local/share/ca-certificates through AISB_TEST_HOST_CA_DIR (for
# tests only; this machine's own CA folder is never touched).  Through
# the gate, curl, python's ssl, python-requests and node (when the image
# has it) must trust the server; with --no-host-ca each must refuse it.
#
# Needs root, podman and mmdebstrap; builds its images offline in a podman
# store of its own, which the EXIT trap removes, failure or not.  Runs
# only with AISB_E2E=1 (so sanitizer and distcheck builds skip it).  Set
# AISB_E2E_NODE=0 to leave node out (its package is the largest here).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start hostca mmdebstrap openssl "$PY"
e2e_seed_base
chmod 0755 "$tmp"
vol=aisb-e2e-hostca-$$
mkdir -p "$tmp/hostca/corp"

# --- a CA, a server certificate from it, a TLS server ---------------------
e2e_tls_cert "$tmp" tls.test
# what a company's IT puts there: the CA only, in a subfolder
cp "$tmp/ca.crt" "$tmp/hostca/corp/e2e-inspection.crt"
export AISB_TEST_HOST_CA_DIR=$tmp/hostca

"$PY" - "$tmp/srv.crt" "$tmp/srv.key" "$tmp/tls.port" <<'EOF' &
import http.server, os, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"trusted\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(sys.argv[3] + ".tmp", "w").write("%d\n" % s.server_address[1])
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
s.serve_forever()
EOF
pids+=($!)
cat >"$tmp/zone.json" <<'EOF'
{"tls.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns
port=$(e2e_port tls)
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: tls.test
    ports: [$port]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
url=https://tls.test:$port/
check "the host itself does not trust the test CA" \
    "$(curl -s -o /dev/null --resolve "tls.test:$port:127.0.0.1" "$url"; echo $?)" 60

pkgs=(--package curl --package python3 --package python3-requests)
node=${AISB_E2E_NODE:-1}
[ "$node" = 1 ] && pkgs+=(--package nodejs)

# node: tests/e2e/tls_get.js (CONNECT by hand, then TLS against node's store)
cp "$top_srcdir/tests/e2e/tls_get.js" "$tmp/ws/tls.js"
cat >"$tmp/ws/probe.sh" <<EOF
#!/bin/sh
# one line per client: name status
url=$url
curl -sS -o /dev/null "\$url" 2>/dev/null; echo "curl \$?"
python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' "\$url" 2>/dev/null; echo "python \$?"
python3 -c 'import sys, requests; requests.get(sys.argv[1], timeout=20).raise_for_status()' "\$url" 2>/dev/null; echo "requests \$?"
if command -v node >/dev/null; then node tls.js "\$url" >/dev/null 2>&1; echo "node \$?"; fi
EOF
chmod 0755 "$tmp/ws/probe.sh"

sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    "${pkgs[@]}" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}

echo "# building the image (the offline base, then ${pkgs[*]})"
t0=$SECONDS
rc=0; sess -- ./probe.sh || rc=$?
echo "# first session, image build included: $((SECONDS - t0))s"
check "host CA on: session exit" "$rc" 0
for c in curl python requests; do
	check "host CA on: $c trusts the server" "$(awk -v c=$c '$1 == c { print $2 }' "$tmp/out")" 0
done
[ "$node" = 1 ] && check "host CA on: node trusts the server" \
    "$(awk '$1 == "node" { print $2 }' "$tmp/out")" 0
sd=$(e2e_session)
check "the record counts the host's CAs" "$(awk '$1 == "host_cas" { print $2 }' "$sd/record")" 1
if grep -Eq '^base localhost/aisb-base:[0-9a-f]{16}$' "$sd/record"; then
	ok "the record names the offline base it used"
else
	bad "record base: $(grep '^base' "$sd/record")"
fi
check "the session's CA file holds the certificate only" \
    "$(openssl x509 -noout -subject -in "$sd/host-ca.pem" 2>/dev/null | sed 's/^subject= *//')" \
    "CN = aisb e2e test CA $$"

rc=0; sess --no-host-ca -- ./probe.sh || rc=$?
for c in curl python requests; do
	v=$(awk -v c=$c '$1 == c { print $2 }' "$tmp/out")
	if [ -n "$v" ] && [ "$v" != 0 ]; then ok "--no-host-ca: $c refuses the server ($v)"
	else bad "--no-host-ca: $c: '$v'"; fi
done
if [ "$node" = 1 ]; then
	v=$(awk '$1 == "node" { print $2 }' "$tmp/out")
	if [ -n "$v" ] && [ "$v" != 0 ]; then ok "--no-host-ca: node refuses the server ($v)"
	else bad "--no-host-ca: node: '$v'"; fi
fi
sd=$(e2e_session)
check "--no-host-ca: no CA file" "$(test -e "$sd/host-ca.pem" && echo present || echo absent)" absent

# a key next to the certificates is never copied, and says so
cat "$tmp/srv.key" >>"$tmp/hostca/corp/e2e-inspection.crt"
rc=0; sess -- sh -c 'curl -sS -o /dev/null '"$url"'; echo "curl $?"' || rc=$?
if grep -q 'holds a private key; skipped' "$tmp/err"; then ok "a CA file with a key is skipped, with a line"
else bad "no line for the file with a key: $(cat "$tmp/err")"; fi
check "... so the server is not trusted" "$(awk '$1 == "curl" { print $2 }' "$tmp/out")" 60

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
