#!/bin/bash
# End to end: a named gate whose policy inspects a host (docs/launcher.md,
# "Named gates"), with two sessions through it, as users run them.
#
# The test makes its own CA and an HTTPS server on the host's loopback
# (tests/integration/gate_inspect_server.py) for api.test (the test's DNS
# server), a policy that inspects api.test and refuses POST /denied*, and
# `aisb gate up` with it; the gate trusts the test's CA for upstreams
# through AISB_TEST_UPSTREAM_CA (for tests only).  Each session's curl
# must reach api.test through the gate, trusting the gate's CA as a
# session of its own gate does (the gate writes it into its folder, each
# session adds it to its CA file), and get 403 for the denied request;
# both sessions' requests are decided by the rule.  --secret with
# --gate, and on gate up, are refused (78) saying why.  Then the same
# as an ordinary user with rootless podman.
#
# Needs root, podman and mmdebstrap; builds its images offline in a
# podman store of its own, which the EXIT trap removes, failure or not.
# Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start named_inspect mmdebstrap openssl "$PY" useradd userdel runuser
chmod 0755 "$tmp"
e2e_seed_image curl
e2e_cleanup_more() {
	"$aisb" gate down e2eni >/dev/null 2>&1 || true
	[ -z "${user:-}" ] || (cd / && as_user aisb gate down e2eni) >/dev/null 2>&1 || true
}

e2e_tls_cert "$tmp" api.test
chmod 0644 "$tmp/ca.crt"
"$PY" "$here/gate_inspect_server.py" --bind 127.0.0.1 --port 0 \
    --cert "$tmp/srv.crt" --key "$tmp/srv.key" --port-file "$tmp/up.port" \
    --log "$tmp/up.log" &
pids+=($!)
cat >"$tmp/zone.json" <<'EOF'
{"api.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers -t 300 dns
port=$(e2e_port up 300)
export AISB_TEST_UPSTREAM_CA=$tmp/ca.crt

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: api.test
    ports: [$port]
    inspect: true
    requests:
      deny: ["POST /denied*"]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
cat >"$tmp/ws/probe.sh" <<EOF
#!/bin/sh
curl -sS -m 20 -o /dev/null -w 'get %{http_code}\n' "https://api.test:$port/echo/\$1"
curl -sS -m 20 -o /dev/null -w 'denied %{http_code}\n' -X POST --data x \
    "https://api.test:$port/denied/\$1"
EOF
chmod 0755 "$tmp/ws/probe.sh"

rc=0; "$aisb" gate up e2eni --policy "$tmp/policy.yaml" --secret HOME \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
check "gate up --secret: 78" "$rc" 78
check "gate up --secret: says why" \
    "$(grep -c 'gate up: --secret HOME: a named gate adds no secrets' "$tmp/err" || true)" 1
rc=0; "$aisb" gate up e2eni --policy "$tmp/policy.yaml" --idle 60 \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
check "gate up" "$rc" 0
check "gate up: the test hook said on stderr, for the named gate" \
    "$(grep -c '^aisb: warning: AISB_TEST_UPSTREAM_CA=.* is set: a hook for tests; named gate e2eni trusts that CA' "$tmp/err" || true)" 1
gdir=$XDG_STATE_HOME/aisb/gates/e2eni
check "gate status names the gate's CA" \
    "$("$aisb" gate status e2eni | grep -c "^ca $gdir/gate-ca.pem\$" || true)" 1
check "the gate's CA in its folder" \
    "$(openssl x509 -noout -subject -in "$gdir/gate-ca.pem" 2>/dev/null | grep -c 'aisb session CA' || true)" 1

rc=0; (cd "$tmp/ws" && HOME=/root "$aisb" --gate e2eni --package curl \
    --secret HOME -- ./probe.sh x) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--secret with --gate: 78" "$rc" 78
check "--secret with --gate: says why" \
    "$(grep -c 'a named gate adds no secrets' "$tmp/err" || true)" 1

for s in one two; do
	rc=0; (cd "$tmp/ws" && "$aisb" --gate e2eni --package curl -- \
	    ./probe.sh "$s") >"$tmp/out.$s" 2>"$tmp/err.$s" </dev/null || rc=$?
	check "session $s: exit" "$rc" 0
	check "session $s: no word of the hook, which its gate does not read" \
	    "$(grep -c 'AISB_TEST_UPSTREAM_CA' "$tmp/err.$s" || true)" 0
	check "session $s: curl trusts the gate's CA" \
	    "$(grep '^get' "$tmp/out.$s" || true)" "get 200"
	check "session $s: the rule's deny entry" \
	    "$(grep '^denied' "$tmp/out.$s" || true)" "denied 403"
	sd=$(e2e_sessions | while read -r d; do
		grep -q '"path":"/echo/'"$s"'"' "$d/audit.jsonl" 2>/dev/null &&
		    echo "$d"; done | sed -n 1p)
	check "session $s: its record says the gate's CA" \
	    "$(grep -c '^session_ca yes' "$sd/record" 2>/dev/null || true)" 1
	check "session $s: its audit, the request decided by the rule" \
	    "$(grep -c '"event":"request".*"path":"/denied/'"$s"'".*"reason":"request_denied"' \
	    "$sd/audit.jsonl" 2>/dev/null || true)" 1
done
check "upstream: both sessions' GETs, no denied request" \
    "$(grep -c '"/echo/' "$tmp/up.log" || true) $(grep -c '/denied' "$tmp/up.log" || true)" "2 0"

"$aisb" gate down e2eni >/dev/null 2>&1 || bad "gate down"
check "gate down: its CA file gone" "$([ -e "$gdir/gate-ca.pem" ] && echo there || echo gone)" gone

# --- rootless: an ordinary user's named gate and two sessions ---------------
e2e_user aisbni
home=$e2e_home user=$e2e_user_name
install -m 0644 "$tmp/policy.yaml" "$tmp/ca.crt" "$home/"
uws=$home/proj
install -d -m 0700 -o "$user" -g "$user" "$uws"
install -m 0755 -o "$user" "$tmp/ws/probe.sh" "$uws/"
rc=0; (cd "$uws" && as_user env AISB_TEST_UPSTREAM_CA="$home/ca.crt" aisb \
    gate up e2eni --policy "$home/policy.yaml" --idle 60) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "rootless: gate up" "$rc" 0
for s in three four; do
	rc=0; (cd "$uws" && as_user aisb --gate e2eni --package curl -- \
	    ./probe.sh "$s") >"$tmp/out.$s" 2>"$tmp/err.$s" </dev/null || rc=$?
	check "rootless session $s: exit" "$rc" 0
	check "rootless session $s: curl trusts the gate's CA" \
	    "$(grep '^get' "$tmp/out.$s" || true)" "get 200"
	check "rootless session $s: the rule's deny entry" \
	    "$(grep '^denied' "$tmp/out.$s" || true)" "denied 403"
done
check "rootless: the gate's audit, each session's denied request" \
    "$(grep -c '"event":"request".*"reason":"request_denied"' "$home/.local/state/aisb/gates/e2eni/audit.jsonl" || true)" 2
(cd "$uws" && as_user aisb gate down e2eni) >/dev/null 2>&1 || bad "rootless: gate down"

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
