#!/bin/bash
# End to end: what a session was denied, as the user sees it.
#
# A session is denied two destinations, one of them twice: at its end aisb
# prints one line per destination and the YAML that would allow it; that
# YAML, fed back to `aisb policy check` and `aisb policy test`, allows
# exactly that destination; `aisb sessions show` prints the same; --quiet
# prints nothing; the audit lines carry the fix; a named gate's session
# gets its own summary; git over HTTPS (libcurl's proxy-auth probe, a 407
# answered at once with credentials) is no denial; a name that does not
# resolve is a failure, named with its reason.  And a command that is
# not in the image, or a workspace file that cannot be executed, says
# what to do.
#
# Servers run on the host's loopback only (see session.sh); the denied
# names are never dialled.  Needs root, podman and mmdebstrap; builds its
# image offline in a podman store of its own, removed by the EXIT trap.
# Runs only with AISB_E2E=1, like the other e2e tests (not in the
# sanitizer build).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start deny mmdebstrap curl git openssl "$PY"
e2e_seed_image curl
vol=aisb-e2e-deny-$$
e2e_cleanup_more() { "$aisb" gate down e2edeny >/dev/null 2>&1; }
# the user's workspace: a 0700 folder of their own
chmod 700 "$tmp/ws"

cat >"$tmp/zone.json" <<'EOF'
{"allowed.test": {"A": ["127.0.0.1"], "ttl": 5},
 "den1.test": {"A": ["127.0.0.1"], "ttl": 5},
 "den2.test": {"A": ["127.0.0.1"], "ttl": 5},
 "git.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
# git over HTTPS: a CA the session trusts as a host CA (tests/e2e/
# hostca.sh), a TLS server on the host's loopback serving a repository
e2e_tls_cert "$tmp" git.test
mkdir -p "$tmp/hostca/test" "$tmp/srv"
cp "$tmp/ca.crt" "$tmp/hostca/test/e2e-deny.crt"
export AISB_TEST_HOST_CA_DIR=$tmp/hostca
git init -q "$tmp/src"
git -C "$tmp/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m first
git clone -q --bare "$tmp/src" "$tmp/srv/repo.git"
git -C "$tmp/srv/repo.git" update-server-info
"$PY" "$top_srcdir/tests/e2e/serve_dir.py" "$tmp/srv.crt" "$tmp/srv.key" \
    "$tmp/git.port" "$tmp/srv" &
pids+=($!)
e2e_servers dns http
gitport=$(e2e_port git)

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: allowed.test
    ports: [$http]
  - host: git.test
    ports: [$gitport]
  - host: gone.test
    ports: [$http]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
EOF

# (--image offline: lib.sh's AISB_IMAGE would be said on stderr, which
# section 6 wants empty)
sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --image offline --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}
# the denial summary of a stderr, from its first line on
summary() { sed -n '/^aisb: [0-9]* request(s) denied/,$p' "$1"; }

# The image is built by a first session (its output is not what we check).
rc=0; sess -- true || rc=$?
check "warm-up session" "$rc" 0
e2e_session_mark

# 1. den1 twice (a tunnel, then a forward), den2 once over CONNECT :443
denied_cmd="curl -s -o /dev/null -p http://den1.test:$http/a;
    curl -s -o /dev/null http://den1.test:$http/b;
    curl -s -o /dev/null https://den2.test/;
    curl -s -o /dev/null -w %{http_code} http://allowed.test:$http/ok"
rc=0; sess -- sh -c "$denied_cmd" || rc=$?
check "denials: exit" "$rc" 0
check "denials: the allowed request" "$(cat "$tmp/out")" 200
sd=$(e2e_session)
summary "$tmp/err" >"$tmp/summary"
cat >"$tmp/want" <<EOF
aisb: 3 request(s) denied, to 2 destination(s); the YAML under one would allow it: add its entries to your policy
aisb: denied den1.test:$http, 2 times: host not allowed
allow:
  - host: den1.test
    ports: [$http]
aisb: denied den2.test:443, 1 time: host not allowed
allow:
  - host: den2.test
EOF
if diff -u "$tmp/want" "$tmp/summary" >"$tmp/diff"; then ok; else
	bad "summary: $(cat "$tmp/diff") -- stderr: $(cat "$tmp/err")"; fi

# 2. each YAML block is a policy that allows exactly its destination
awk '/^aisb: denied /{n++; next} /^aisb: /{next} n {print > (dir "/fix" n ".yaml")}' \
    dir="$tmp" "$tmp/summary"
for n in 1 2; do
	{ echo "version: 1"; cat "$tmp/fix$n.yaml"; } >"$tmp/p$n.yaml"
	rc=0; "$aisb" policy check "$tmp/p$n.yaml" >"$tmp/out" 2>&1 || rc=$?
	check "fix $n: policy check" "$rc" 0
done
ptest() {	# ptest FILE TARGET: allow or deny
	if "$aisb" policy test "$1" "$2" >/dev/null 2>&1; then echo allow; else echo deny; fi
}
check "fix 1 allows den1:$http" "$(ptest "$tmp/p1.yaml" "den1.test:$http")" allow
check "fix 1 not den1:443" "$(ptest "$tmp/p1.yaml" den1.test:443)" deny
check "fix 1 not den2:$http" "$(ptest "$tmp/p1.yaml" "den2.test:$http")" deny
check "fix 2 allows den2:443" "$(ptest "$tmp/p2.yaml" den2.test:443)" allow
check "fix 2 not den1:443" "$(ptest "$tmp/p2.yaml" den1.test:443)" deny
check "fix 2 not den2:8443" "$(ptest "$tmp/p2.yaml" den2.test:8443)" deny

# 3. the audit lines carry the fix, JSON-escaped
"$PY" - "$sd/audit.jsonl" "$http" <<'PY' && ok || bad "audit fix fields: $(grep deny "$sd/audit.jsonl")"
import json, sys
fixes = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("decision") == "deny":
        fixes.setdefault((o["host"], o["port"]), set()).add(o.get("fix"))
port = int(sys.argv[2])
assert fixes == {
    ("den1.test", port): {"allow:\n  - host: den1.test\n    ports: [%d]\n" % port},
    ("den2.test", 443): {"allow:\n  - host: den2.test\n"},
}, fixes
PY

# 4. sessions show prints the same, through the same function
"$aisb" sessions show "$(basename "$sd")" >"$tmp/show"
sed -n '/^# [0-9]* request(s) denied/,$p' "$tmp/show" >"$tmp/show.summary"
sed 's/^aisb: /# /' "$tmp/summary" >"$tmp/want"
if diff -u "$tmp/want" "$tmp/show.summary" >"$tmp/diff"; then ok; else
	bad "sessions show: $(cat "$tmp/diff")"; fi
if grep -q "^# audit: 1 allowed, 3 denied, 0 failed" "$tmp/show"; then ok; else
	bad "sessions show counts: $(grep '^# audit' "$tmp/show")"; fi

# 5. --quiet: nothing of it
rc=0; sess --quiet -- sh -c "$denied_cmd" || rc=$?
check "quiet: exit" "$rc" 0
if grep -q "denied" "$tmp/err"; then bad "--quiet printed: $(cat "$tmp/err")"; else ok; fi
sd=$(e2e_session)
if grep -q '"fix"' "$sd/audit.jsonl"; then ok; else bad "quiet: no audit fix"; fi

# 6. a session without denials prints no summary
rc=0; sess -- curl -s -o /dev/null "http://allowed.test:$http/" || rc=$?
check "no denials: exit" "$rc" 0
check "no denials: stderr" "$(cat "$tmp/err")" ""

# 7. a named gate: the session's own denials, from its own audit lines
rc=0; "$aisb" gate up e2edeny --policy "$tmp/policy.yaml" >/dev/null 2>&1 || rc=$?
check "gate up" "$rc" 0
rc=0; sess --gate e2edeny -- sh -c "curl -s -o /dev/null https://den2.test:8443/; true" || rc=$?
check "named gate: exit" "$rc" 0
summary "$tmp/err" >"$tmp/summary"
cat >"$tmp/want" <<EOF
aisb: 1 request(s) denied, to 1 destination(s); the YAML under one would allow it: add its entries to your policy
aisb: denied den2.test:8443, 1 time: host not allowed
allow:
  - host: den2.test
    ports: [8443]
EOF
if diff -u "$tmp/want" "$tmp/summary" >"$tmp/diff"; then ok; else
	bad "named gate summary: $(cat "$tmp/diff") -- stderr: $(cat "$tmp/err")"; fi
# the policy line of a --gate session named no policy: the gate's, never
# "the shipped default" (it was the gate's file under that name)
rc=0; (cd "$tmp/ws" && "$aisb" --gate e2edeny --home-volume "$vol" --package curl \
    -- true) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "named gate, no --policy: exit" "$rc" 0
if grep -q "shipped default" "$tmp/err"; then bad "named gate: $(cat "$tmp/err")"; else ok; fi
check "named gate: the policy line" "$(grep -c "^aisb: policy: the one gate e2edeny enforces, $tmp/policy.yaml (sha256:" "$tmp/err")" 1
"$aisb" gate down e2edeny >/dev/null 2>&1 || bad "gate down"

# 8. a command that is not in the image: 127, and the package to add as
# this host's dpkg knows it (ps is in procps), or that it is unknown
rc=0; sess -- aisb-nosuchcmd --help || rc=$?
check "missing command: exit" "$rc" 127
if grep -qF "aisb-enforce: aisb-nosuchcmd: command not found in the sandbox's image; add the Debian package that provides it (aisb --package PACKAGE -- ...)" "$tmp/err"; then
	ok; else bad "missing command: $(cat "$tmp/err")"; fi
if grep -qF "aisb: which Debian package has aisb-nosuchcmd is unknown here" "$tmp/err" &&
    ! grep -q -- "--package aisb-nosuchcmd" "$tmp/err"; then
	ok "missing command: unknown, not guessed"; else bad "missing command: $(cat "$tmp/err")"; fi
pkg=$(dpkg-query -S /bin/ps /usr/bin/ps 2>/dev/null | sed -n '1s/:.*//p' || true)
if [ -n "$pkg" ]; then
	rc=0; sess -- ps -o comm= || rc=$?
	check "ps: exit" "$rc" 127
	if grep -qF "aisb: ps is in the Debian package $pkg (this host's dpkg database): aisb --package $pkg -- ps ..." "$tmp/err"; then
		ok "ps: the package ($pkg)"; else bad "ps: $(cat "$tmp/err")"; fi
	# the hint, followed, works
	rc=0; sess --package "$pkg" -- ps -o comm= || rc=$?
	check "ps: with the hint's package" "$rc" 0
	grep -q '^ps$' "$tmp/out" && ok || bad "ps: $(cat "$tmp/out" "$tmp/err")"
fi
# a command the image has that exits 127 itself: no hint
rc=0; sess -- sh -c 'exit 127' || rc=$?
check "own 127: exit" "$rc" 127
if grep -q "Debian package" "$tmp/err"; then bad "own 127: a hint: $(cat "$tmp/err")"; else ok; fi
# 9. a workspace script without execute bits: its mode; 126
printf '#!/bin/sh\necho ran\n' >"$tmp/ws/build.sh"
chmod 644 "$tmp/ws/build.sh"
rc=0; sess -- ./build.sh || rc=$?
check "non-executable script: exit" "$rc" 126
if grep -qF "aisb-enforce: ./build.sh: not executable (mode 0644); make it so: chmod +x ./build.sh" "$tmp/err"; then
	ok; else bad "non-executable script: $(cat "$tmp/err")"; fi
if grep -q '^ran' "$tmp/out"; then bad "the script ran"; else ok; fi

# 10. git over HTTPS through the gate: libcurl's proxy-auth probe (a 407
# without credentials, then the same CONNECT with them) is no denial
e2e_session_mark	# the sessions of 6 to 9, looked at through their output
rc=0; sess --package git -- sh -c "git clone -q https://git.test:$gitport/repo.git r && git -C r log --format=%s" || rc=$?
check "git clone: exit" "$rc" 0
check "git clone: the commit" "$(cat "$tmp/out")" first
sd=$(e2e_session)
n=$(grep -c '"status":407' "$sd/audit.jsonl" || true)
if [ "$n" -ge 1 ]; then ok "git: libcurl probed with a 407 ($n)"; else
	bad "git: no 407 in the audit: the probe this checks did not happen"; fi
if grep -q "denied" "$tmp/err"; then bad "git: a denial printed: $(grep denied "$tmp/err")"; else ok; fi
"$aisb" sessions show "$(basename "$sd")" >"$tmp/show"
if grep -q '^# audit: [1-9][0-9]* allowed, 0 denied, 0 failed' "$tmp/show"; then ok; else
	bad "git: sessions show counts: $(grep '^# audit' "$tmp/show")"; fi

# 11. an allowed name that does not resolve: a failure, with its reason,
# in the summary and in sessions show (not only "1 failed")
rc=0; sess -- curl -s -o /dev/null "http://gone.test:$http/" || rc=$?
check "failure: curl's exit (502 from the gate)" "$rc" 0
sd=$(e2e_session)
if grep -q "^aisb: 1 request(s) failed, to 1 destination(s)" "$tmp/err" &&
    grep -q "^aisb: failed gone.test:$http, 1 time: .* (dns_failed); rule .*allow host: gone.test$" "$tmp/err"; then
	ok "failure: the summary names it and why"
else
	bad "failure: summary: $(cat "$tmp/err")"
fi
"$aisb" sessions show "$(basename "$sd")" >"$tmp/show"
if grep -q "^# failed gone.test:$http, 1 time: .* (dns_failed); rule " "$tmp/show"; then ok; else
	bad "failure: sessions show: $(grep '^#' "$tmp/show")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
