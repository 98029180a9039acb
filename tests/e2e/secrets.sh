#!/bin/bash
# End to end: secrets that never enter the sandbox (docs/launcher.md,
# "Secrets"), in real sessions, rootful and rootless.
#
# The test makes its own CA and an HTTPS server on the host's loopback
# (tests/integration/gate_inspect_server.py: it logs every request as
# received, and answers credentials as their SHA-256 only) for api.test
# and other.test (the test's DNS server), and a policy that inspects both,
# adding three secrets to api.test: one read from aisb's environment (an
# x-api-key header), one from a file (Authorization: Bearer), one from a
# command (the value of the query parameter key, where the client put
# the placeholder as that parameter's value, and nowhere else).  The gate
# trusts the test's CA for upstreams through AISB_TEST_UPSTREAM_CA (for
# tests only).  Inside, curl, python-requests and node (when the image
# has it) reach api.test through the gate, trusting its CA as the host's
# CAs are trusted, with the placeholders the sandbox holds; a request the
# policy denies gets 403; the placeholder sent to other.test stays a
# placeholder.  Then the leak sweep, for each value: what the clients
# got, every process's environment and command line inside (collected by
# the command), the gate's /proc/PID/{cmdline,environ} and descriptors
# and every process on the host, aisb's own included (while the session
# runs), the session folder (audit, record, logs, the capture), the
# container (podman inspect, podman export), the home volume.  The
# upstream saw the values; the capture decrypts (tshark) to placeholders.
# A secret named but not set: 78, no container, no session folder.
# Rootless: an ordinary user's session, the same checks in short.
#
# Needs root, podman and mmdebstrap; builds its images offline in a
# podman store of its own, which the EXIT trap removes, failure or not.
# Runs only with AISB_E2E=1.  AISB_E2E_NODE=0 leaves node out.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start secrets mmdebstrap openssl "$PY" useradd userdel runuser
chmod 0755 "$tmp"
vol=aisb-e2e-secrets-$$

node=${AISB_E2E_NODE:-1}
pkgs=(curl python3 python3-requests)
[ "$node" = 1 ] && pkgs+=(nodejs)
e2e_seed_image "${pkgs[@]}"
pkgargs=()
for p in "${pkgs[@]}"; do pkgargs+=(--package "$p"); done

# --- the values: random, so that finding one anywhere is a leak ----------
V_ENV=sk-e2e-env-$(openssl rand -hex 16)
V_FILE=tok-e2e-file-$(openssl rand -hex 16)
V_CMD=key-e2e-cmd-$(openssl rand -hex 16)
values=("$V_ENV" "$V_FILE" "$V_CMD")
printf '%s\n' "$V_FILE" >"$tmp/token"
printf '%s\n' "$V_CMD" >"$tmp/cmdkey"
chmod 0600 "$tmp/token" "$tmp/cmdkey"

# --- a CA, the upstream, the DNS server -----------------------------------
e2e_tls_cert "$tmp" api.test other.test
chmod 0644 "$tmp/ca.crt"
"$PY" "$here/gate_inspect_server.py" --bind 127.0.0.1 --port 0 \
    --cert "$tmp/srv.crt" --key "$tmp/srv.key" --port-file "$tmp/up.port" \
    --log "$tmp/up.log" &
pids+=($!)
cat >"$tmp/zone.json" <<'EOF'
{"api.test": {"A": ["127.0.0.1"], "ttl": 5},
 "other.test": {"A": ["127.0.0.1"], "ttl": 5}}
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
    secrets:
      - name: E2E_API_KEY
        header: x-api-key
      - name: E2E_TOKEN
        scheme: bearer
      - name: E2E_REPL
        query: key
  - host: other.test
    ports: [$port]
    inspect: true
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
secrets=(--secret E2E_API_KEY --secret "E2E_TOKEN=file:$tmp/token"
    --secret "E2E_REPL=command:cat $tmp/cmdkey")

# --- the command: the clients, then what its processes hold ---------------
# node: tests/e2e/tls_get.js (CONNECT by hand, then TLS against node's
# store, where NODE_EXTRA_CA_CERTS puts the gate's CA)
cp "$top_srcdir/tests/e2e/tls_get.js" "$tmp/ws/tls.js"
cat >"$tmp/ws/probe.sh" <<EOF
#!/bin/sh
# inside: the placeholders, the clients, then what the processes hold
base=https://api.test:$port
printf 'env %s\n' "E2E_API_KEY=\$E2E_API_KEY" "E2E_TOKEN=\$E2E_TOKEN" "E2E_REPL=\$E2E_REPL"
curl -sS -o curl.json -w 'curl %{http_code}\n' -H "x-api-key: \$E2E_API_KEY" \
    -H "Authorization: Bearer \$E2E_TOKEN" "\$base/echo?key=\$E2E_REPL"
python3 - "\$base" <<'PYEOF'
import os, sys, requests
r = requests.get(sys.argv[1] + "/py", timeout=30,
    params={"key": os.environ["E2E_REPL"]},
    headers={"x-goog-api-key": os.environ["E2E_REPL"]})
open("py.json", "w").write(r.text)
print("requests", r.status_code)
PYEOF
curl -sS -o denied.txt -w 'denied %{http_code}\n' -X POST --data x "\$base/denied/x"
curl -sS -o other.json -w 'other %{http_code}\n' -H "x-api-key: \$E2E_API_KEY" \
    "https://other.test:$port/echo"
if command -v node >/dev/null; then node tls.js "\$base/node" E2E_API_KEY; fi
mkdir -p sweep
for p in /proc/[0-9]*; do
	n=\${p#/proc/}
	cat "\$p/environ" >"sweep/environ.\$n" 2>/dev/null
	cat "\$p/cmdline" >"sweep/cmdline.\$n" 2>/dev/null
done
: >ready
i=0
while [ ! -e go ] && [ \$i -lt 900 ]; do sleep 0.1; i=\$((i + 1)); done
echo done
EOF
chmod 0755 "$tmp/ws/probe.sh"

sweep() {	# sweep WHAT PATH...: no value in these files (binary too)
	local what=$1 v n=0
	shift
	for v in "${values[@]}"; do
		n=$((n + $(grep -rasl -- "$v" "$@" 2>/dev/null | wc -l || true)))
	done
	check "no value in $what" "$n" 0
}
# every process of the host, aisb itself too (it wipes the variable it
# read in place): its environment, argv
sweep_host() {	# sweep_host WHAT
	local p n=0 v who=
	for p in /proc/[0-9]*; do
		for v in "${values[@]}"; do
			if grep -qas -- "$v" "$p/environ" "$p/cmdline" 2>/dev/null; then
				n=$((n + 1)); who="$who ${p#/proc/}:$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-60)"
			fi
		done
	done
	check "$1: no value in any process's environ or cmdline$who" "$n" 0
}
gate_look() {	# gate_look WHAT SESSION-DIR: while it runs
	local g
	g=$(cat "$2/gate.pid")
	check "$1: the gate runs" "$(kill -0 "$g" 2>/dev/null && echo yes)" yes
	sweep "$1: gate cmdline, environ" "/proc/$g/cmdline" "/proc/$g/environ"
	check "$1: the gate holds no secrets descriptor" \
	    "$(find "/proc/$g/fd" -mindepth 1 -lname '*memfd*' 2>/dev/null | grep -c . || true)" 0
	# not dumpable: its /proc files are root's, whoever it runs as
	check "$1: the gate is not dumpable" "$(stat -c %U "/proc/$g/environ")" root
	sweep_host "$1"
}

# while_it_runs WHAT PID WORKSPACE STATE: once the command (PID, aisb run
# in the background) has collected its sweep and waits, the look at the
# gate and the host; then it is let go and waited for.  The session folder
# into $run_sd, the exit status into $run_rc.
while_it_runs() {
	for _ in $(seq 3000); do
		[ -e "$3/ready" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.2
	done
	run_sd=$(e2e_session "$4") || run_sd=
	if [ -e "$3/ready" ] && [ -n "$run_sd" ]; then
		gate_look "$1" "$run_sd"
	else
		bad "$1: the command never got to its sweep"
	fi
	: >"$3/go"
	run_rc=0
	wait "$2" || run_rc=$?
}

# --- 1. rootful -----------------------------------------------------------
echo "# the image (${pkgs[*]}), then the session"
rm -f "$tmp/ws/ready" "$tmp/ws/go"
(cd "$tmp/ws" && exec env E2E_API_KEY="$V_ENV" "$aisb" --policy "$tmp/policy.yaml" \
    --home-volume "$vol" --keep --record "${pkgargs[@]}" "${secrets[@]}" -- \
    ./probe.sh) >"$tmp/out" 2>"$tmp/err" </dev/null &
while_it_runs rootful "$!" "$tmp/ws" "$XDG_STATE_HOME"
sd=$run_sd
check "rootful: exit" "$run_rc" 0
check "rootful: the test hook said on stderr" \
    "$(grep -c '^aisb: warning: AISB_TEST_UPSTREAM_CA=.* is set: a hook for tests;' "$tmp/err" || true)" 1
id=$(basename "$sd")
for k in E2E_API_KEY E2E_TOKEN E2E_REPL; do
	if grep -Eq "^env $k=aisb-placeholder-[0-9a-f]{40}\$" "$tmp/out"; then
		ok "rootful: $k inside is a placeholder"
	else bad "rootful: $k inside: $(grep "^env $k=" "$tmp/out")"; fi
done
ph_env=$(sed -n 's/^env E2E_API_KEY=//p' "$tmp/out")
ph_repl=$(sed -n 's/^env E2E_REPL=//p' "$tmp/out")
check "rootful: curl through the gate, its CA trusted" "$(grep '^curl' "$tmp/out")" "curl 200"
check "rootful: python-requests, its CA trusted" "$(grep '^requests' "$tmp/out")" "requests 200"
[ "$node" = 1 ] && check "rootful: node, its CA trusted" "$(grep '^node' "$tmp/out")" "node 200"
check "rootful: a request the policy denies" "$(grep '^denied' "$tmp/out")" "denied 403"
check "rootful: other.test answers" "$(grep '^other' "$tmp/out")" "other 200"
check "rootful: the denial summary names the request" \
    "$(grep -c "^aisb: denied api.test:$port POST /denied/x, 1 time: request denied" "$tmp/err" || true)" 1
# what the upstream saw: the values on api.test, the placeholder elsewhere
saw() {	# saw HOST PATH FIELD: that header (? the query) as the upstream got it, last
	"$PY" - "$tmp/up.log" "$@" <<'EOF'
import json, sys
out = "(no such request)"
for line in open(sys.argv[1]):
    r = json.loads(line)
    h = {k.lower(): v for k, v in r["headers"]}
    path, _, query = r["path"].partition("?")
    if h.get("host", "").split(":")[0] == sys.argv[2] and path == sys.argv[3]:
        out = query if sys.argv[4] == "?" else h.get(sys.argv[4], "(absent)")
print(out)
EOF
}
check "upstream: x-api-key is the value" "$(saw api.test /echo x-api-key)" "$V_ENV"
check "upstream: the bearer token is the value" "$(saw api.test /echo authorization)" "Bearer $V_FILE"
check "upstream: the placeholder in the query replaced" "$(saw api.test /echo '?')" "key=$V_CMD"
check "upstream: python's query parameter replaced" "$(saw api.test /py '?')" "key=$V_CMD"
check "upstream: the placeholder in a header stays one" "$(saw api.test /py x-goog-api-key)" "$ph_repl"
[ "$node" = 1 ] && check "upstream: node's x-api-key" "$(saw api.test /node x-api-key)" "$V_ENV"
check "upstream: other.test got the placeholder, worth nothing" "$(saw other.test /echo x-api-key)" "$ph_env"
check "upstream: the denied request never reached it" "$(grep -c '/denied' "$tmp/up.log" || true)" 0
# the audit: what was added where, the placeholder that went elsewhere
if grep -q '"event":"request".*"path":"/echo".*"inject":\["E2E_API_KEY","E2E_REPL","E2E_TOKEN"\]' "$sd/audit.jsonl" ||
    grep -q '"event":"request".*"path":"/echo".*"inject"' "$sd/audit.jsonl"; then
	ok "audit: the secrets added, by name"
else bad "audit: no inject: $(grep -m 3 '"event":"request"' "$sd/audit.jsonl")"; fi
if grep -q '"event":"request".*"host":"other.test".*"placeholder"' "$sd/audit.jsonl" ||
    grep -q '"placeholder":\["E2E_API_KEY"\]' "$sd/audit.jsonl"; then
	ok "audit: the placeholder sent to other.test, named"
else bad "audit: no placeholder line: $(grep -m 3 other.test "$sd/audit.jsonl")"; fi
check "the record names the secrets and their sources" \
    "$(grep -c '^secret E2E_\(API_KEY from environment E2E_API_KEY\|TOKEN from file \|REPL from command cat\)' "$sd/record")" 3
check "the record: the session CA" "$(grep -c '^session_ca yes' "$sd/record")" 1
check "the session folder: the gate's CA, public" \
    "$(openssl x509 -noout -subject -in "$sd/gate-ca.pem" >/dev/null 2>&1 && echo cert)" cert
check "the sandbox's CA file holds the gate's CA" \
    "$(grep -c 'BEGIN CERTIFICATE' "$sd/host-ca.pem")" \
    "$(( $(cat /usr/local/share/ca-certificates/*.crt /usr/local/share/ca-certificates/*/*.crt 2>/dev/null | grep -c 'BEGIN CERTIFICATE' || true) + 1 ))"
check "aisb sessions verify" "$("$aisb" sessions verify "$id" >/dev/null 2>&1; echo $?)" 0
# the leak sweep
sweep "what the clients got" "$tmp/ws"/*.json "$tmp/ws"/denied.txt
sweep "the processes inside (environ, cmdline)" "$tmp/ws/sweep"
sweep "aisb's output" "$tmp/out" "$tmp/err"
sweep "the session folder (audit, record, logs, capture)" "$sd"
podman inspect "aisb-$id" >"$tmp/inspect.json" 2>/dev/null || bad "podman inspect aisb-$id"
sweep "podman inspect" "$tmp/inspect.json"
podman export -o "$tmp/container.tar" "aisb-$id" 2>/dev/null || bad "podman export aisb-$id"
sweep "the container's files (podman export)" "$tmp/container.tar"
rm -f "$tmp/container.tar"
vpath=$(podman volume inspect --format '{{.Mountpoint}}' "$vol")
sweep "the home volume" "$vpath"
if command -v tshark >/dev/null; then
	tshark -r "$sd/recording/capture.pcapng" -Y http.request -T fields \
	    -e http.host -e http.request.uri -e http.request.line \
	    >"$tmp/tshark.txt" 2>/dev/null || true
	if grep -q "$ph_env" "$tmp/tshark.txt"; then
		ok "the capture decrypts to the placeholder"
	else bad "the capture: no placeholder: $(head -5 "$tmp/tshark.txt")"; fi
	sweep "the decrypted capture" "$tmp/tshark.txt"
fi
podman rm -f "aisb-$id" >/dev/null 2>&1 || true

# a secret named but not set: 78 before anything starts
rc=0; (cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
    "${pkgargs[@]}" --secret E2E_API_KEY -- true) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "unset secret: 78" "$rc" 78
check "unset secret: no session folder" "$(e2e_sessions | wc -l)" 0
check "unset secret: no container" "$(podman ps -aq | wc -l)" 0

# --- 2. rootless: an ordinary user's session ------------------------------
e2e_user aisbsec
home=$e2e_home user=$e2e_user_name
install -m 0644 -o "$user" "$tmp/policy.yaml" "$home/policy.yaml"
install -m 0600 -o "$user" "$tmp/token" "$home/token"
install -m 0600 -o "$user" "$tmp/cmdkey" "$home/cmdkey"
install -m 0644 "$tmp/ca.crt" "$home/ca.crt"
uws=$home/proj
install -d -m 0700 -o "$user" -g "$user" "$uws"
install -m 0755 -o "$user" "$tmp/ws/probe.sh" "$tmp/ws/tls.js" "$uws/"
rm -f "$tmp/ws/ready" "$tmp/ws/go"
# the value into aisb's environment from a file, so that no command line
# holds it (runuser stays as aisb's parent)
install -m 0600 -o "$user" /dev/null "$home/envkey"
printf '%s' "$V_ENV" >"$home/envkey"
(cd "$uws" && as_user env AISB_TEST_UPSTREAM_CA="$home/ca.crt" sh -c \
    'E2E_API_KEY=$(cat "$1"); export E2E_API_KEY; shift; exec "$@"' \
    sh "$home/envkey" aisb --policy "$home/policy.yaml" \
    --home-volume "$vol" --keep "${pkgargs[@]}" --secret E2E_API_KEY \
    --secret "E2E_TOKEN=file:$home/token" --secret "E2E_REPL=command:cat $home/cmdkey" -- \
    ./probe.sh) >"$tmp/out" 2>"$tmp/err" </dev/null &
while_it_runs rootless "$!" "$uws" "$home/.local/state"
usd=$run_sd
check "rootless: exit" "$run_rc" 0
check "rootless: curl" "$(grep '^curl' "$tmp/out")" "curl 200"
check "rootless: python-requests" "$(grep '^requests' "$tmp/out")" "requests 200"
check "rootless: denied" "$(grep '^denied' "$tmp/out")" "denied 403"
check "upstream (rootless): x-api-key is the value" "$(saw api.test /echo x-api-key)" "$V_ENV"
uid_=$(basename "$usd")
sweep "rootless: what the clients got, the processes inside" "$uws"/*.json "$uws/sweep"
sweep "rootless: the session folder" "$usd"
as_user podman inspect "aisb-$uid_" >"$tmp/inspect.json" 2>/dev/null || bad "rootless: podman inspect"
sweep "rootless: podman inspect" "$tmp/inspect.json"
uvol=$(as_user podman volume inspect --format '{{.Mountpoint}}' "$vol" 2>/dev/null)
[ -n "$uvol" ] && sweep "rootless: the home volume" "$uvol"
as_user podman rm -f "aisb-$uid_" >/dev/null 2>&1 || true

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
