#!/bin/bash
# End to end: installs of npm and pip tools that cannot work say why and
# how to fix it (docs/launcher.md, "Tools").
#
# The test runs an npm registry of its own on 127.0.0.9 (loopback: a
# range the gate denies unless a policy's allow_ranges says otherwise, as
# a company mirror on 10.x, or the public registries where they resolve
# into a documentation range), serving aisb-hello (a bin that prints
# hello) and aisb-broken (whose tarball is on 127.0.0.10, which the
# install policy does not allow).
#
#   --npm with npm configured for that registry: stops before any image
#   is built, naming the source, its range and the fix
#   aisb policy derive npm: the commented allow_ranges line for it
#   the fix followed (--install-policy FILE): the tool runs
#   aisb-broken: the failure names what the gate denied and the fix, and
#   npm's own log is kept in the install session's folder
#   --pip with pip's index on that address: stops the same way, at once
#   --pip with pip's default index, whose name does not resolve: stops at
#   once, "pypi.org: name not found (dns_failed)"; the host's resolver is
#   then a DNS server of the test's own on 127.0.0.11:53 (resolv.conf
#   bound over in a mount namespace of that command alone)
#
# Traffic: 127.0.0.9, 127.0.0.10 and 127.0.0.11 only, and the Debian
# mirror the image build of nodejs and npm installs from.  Needs root, podman,
# mmdebstrap, npm and AISB_E2E=1; a podman store of its own, removed by
# the EXIT trap.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start install_why mmdebstrap npm "$PY" unshare
e2e_seed_base
unset AISB_INSTALL_POLICY PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS
chmod 0755 "$tmp"

# --- the registry: packuments and tarballs, built here ---------------------
mkdir -p "$tmp/pkg/package"
cat >"$tmp/pkg/package/package.json" <<'EOF'
{"name": "aisb-hello", "version": "1.0.0", "bin": {"aisb-hello": "bin.js"}}
EOF
printf '#!/usr/bin/env node\nconsole.log("hello from the test registry");\n' \
    >"$tmp/pkg/package/bin.js"
chmod 0755 "$tmp/pkg/package/bin.js"
tar -C "$tmp/pkg" -czf "$tmp/hello.tgz" package
"$PY" - "$tmp/hello.tgz" "$tmp/reg.port" <<'EOF' &
import base64, hashlib, http.server, json, os, sys
tgz = open(sys.argv[1], "rb").read()
integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
shasum = hashlib.sha1(tgz).hexdigest()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        port = self.server.server_address[1]
        name = self.path.lstrip("/").split("/")[0]
        if self.path.endswith(".tgz"):
            return self.send(200, tgz, "application/octet-stream")
        if name not in ("aisb-hello", "aisb-broken"):
            return self.send(404, b"{}", "application/json")
        # aisb-broken's tarball is on an address the policy leaves out
        host = "127.0.0.9" if name == "aisb-hello" else "127.0.0.10"
        doc = {"name": name, "dist-tags": {"latest": "1.0.0"},
               "versions": {"1.0.0": {"name": name, "version": "1.0.0",
                   "bin": {name: "bin.js"},
                   "dist": {"tarball": "http://%s:%d/%s/-/%s-1.0.0.tgz" %
                            (host, port, name, name),
                            "integrity": integrity, "shasum": shasum}}}}
        self.send(200, json.dumps(doc).encode(), "application/json")
s = http.server.ThreadingHTTPServer(("127.0.0.9", 0), H)
open(sys.argv[2] + ".tmp", "w").write("%d\n" % s.server_address[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()
EOF
pids+=($!)
port=$(e2e_port reg)
export npm_config_registry=http://127.0.0.9:$port/
printf 'version: 1\nallow: []\n' >"$tmp/none.yaml"
cd "$tmp/ws"
sandbox_images() { podman images --filter label=io.aisb.kind=sandbox -q | wc -l; }

# 1. the registry is in a denied range: stopped before any image is built
rc=0; "$aisb" --policy "$tmp/none.yaml" --npm aisb-hello@1.0.0 -- aisb-hello \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "denied registry: refused ($rc)"; else bad "denied registry: ran"; fi
if grep -q "install: npm's source 127.0.0.9:$port: 127.0.0.9 is loopback 127.0.0.0/8, a range the gate denies.*nothing was built.*aisb policy derive npm > install.yaml, uncomment its allow_ranges line.*--install-policy FILE" "$tmp/err"; then
	ok "denied registry: the source, its range and the fix"
else
	bad "denied registry: $(cat "$tmp/err")"
fi
check "denied registry: no image built" "$(sandbox_images)" 0

# 2. derive npm names the range; the fix followed, the tool runs
"$aisb" policy derive npm >"$tmp/install.yaml"
check "derive npm: the commented allow_ranges" "$(grep -c '^# allow_ranges: \[127.0.0.9/32\]$' "$tmp/install.yaml")" 1
sed -i 's/^# allow_ranges:/allow_ranges:/' "$tmp/install.yaml"
rc=0; "$aisb" --policy "$tmp/none.yaml" --install-policy "$tmp/install.yaml" \
    --npm aisb-hello@1.0.0 -- aisb-hello >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "fixed: exit" "$rc" 0
check "fixed: the tool" "$(cat "$tmp/out")" "hello from the test registry"
grep -q "installing npm tools in a sandbox session (policy: $tmp/install.yaml)" "$tmp/err" &&
    ok "fixed: the install said its policy" || bad "fixed: $(cat "$tmp/err")"

# 3. a failed install: what the gate denied, the fix, npm's log kept
rc=0; "$aisb" --policy "$tmp/none.yaml" --install-policy "$tmp/install.yaml" \
    --npm aisb-broken@1.0.0 -- aisb-broken >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "broken: refused ($rc)"; else bad "broken: ran"; fi
line=$(grep "install: npm install in session" "$tmp/err" || true)
case $line in
*"the gate denied 127.0.0.10:$port (host_not_allowed)"*"--install-policy FILE"*) ok "broken: the denied destination and the fix" ;;
*) bad "broken: $(cat "$tmp/err")" ;;
esac
logs=$(sed -n "s/.*npm's own log: \([^ ]*\).*/\1/p" <<<"$line")
if [ -n "$logs" ] && ls "$logs"/*.log >/dev/null 2>&1; then ok "broken: npm's log kept ($logs)"; else
	bad "broken: no npm log: '$logs'"; fi
case $logs in "$XDG_STATE_HOME"/aisb/sessions/*/npm-logs) ok ;; *) bad "broken: logs at '$logs'" ;; esac

# 4. pip's index in the same range: stopped at once, nothing built
n=$(sandbox_images)
rc=0; PIP_INDEX_URL=http://127.0.0.9:$port/simple/ "$aisb" --policy "$tmp/none.yaml" \
    --pip aisb-hello==1.0 -- true >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "pip: refused ($rc)"; else bad "pip: ran"; fi
grep -q "install: pip's source 127.0.0.9:$port: 127.0.0.9 is loopback 127.0.0.0/8, a range the gate denies.*nothing was built" "$tmp/err" &&
    ok "pip: the source and its range" || bad "pip: $(cat "$tmp/err")"
check "pip: no image built" "$(sandbox_images)" "$n"

# 5. pip's default index, its name not found: said at once, nothing built
echo '{}' >"$tmp/nx.json"
# not e2e_servers dns: this one is on port 53 of an address of its own,
# as resolv.conf names a server (no port)
"$PY" "$here/gate_dns.py" --zone "$tmp/nx.json" --port-file "$tmp/nx.port" \
    --bind 127.0.0.11 --port 53 --log "$tmp/nx.log" &
pids+=($!)
wait_file "$tmp/nx.port"
printf 'nameserver 127.0.0.11\noptions attempts:1 timeout:2\n' >"$tmp/resolv.conf"
n=$(sandbox_images)
rc=0; unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' \
    sh "$tmp/resolv.conf" "$aisb" --policy "$tmp/none.yaml" --pip aisb-hello==1.0 \
    -- true >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "pip, no such name: refused ($rc)"; else bad "pip, no such name: ran"; fi
grep -q "install: pip's source pypi.org: name not found (dns_failed).*nothing was built" "$tmp/err" &&
    ok "pip, no such name: said so" || bad "pip, no such name: $(cat "$tmp/err")"
[ "$(grep -c '^pypi.org ' "$tmp/nx.log" || true)" -ge 1 ] &&
    ok "pip, no such name: asked the test's resolver" ||
    bad "pip, no such name: the test's resolver saw: $(cat "$tmp/nx.log")"
check "pip, no such name: no image built" "$(sandbox_images)" "$n"

echo "install_why: $pass passed, $fail failed"
[ "$fail" = 0 ]
