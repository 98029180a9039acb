#!/bin/bash
# aisb-gate inspected hosts (issue 29): TLS terminated for rules with
# inspect: true, each request decided by its method and path, secrets
# added that the client never holds.  Real things: HTTPS upstreams with a
# CA the test makes (the gate told to trust it with --upstream-ca), one
# echoing requests, streaming SSE, a git smart-HTTP server (git
# http-backend); clients curl, python urllib and requests, git, node's
# fetch (through an AISB-TRANSPARENT relay, as in a session; skipped
# without node).  The upstream sees the real secret, the client only ever
# the placeholder; then a leak sweep: the secrets' bytes in the audit,
# the record, the gate's log and every file it wrote, its
# /proc/PID/cmdline and environ.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

for tool in openssl git; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
# the host's CA settings would override the test's (GIT_SSL_CAINFO wins
# over http.sslCAInfo): the clients trust what each case says, only
unset GIT_SSL_CAINFO CURL_CA_BUNDLE REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS \
    SSL_CERT_FILE SSL_CERT_DIR HTTPS_PROXY https_proxy HTTP_PROXY http_proxy
server=$here/gate_inspect_server.py
client=$here/gate_inspect_client.py
ip addr add 192.0.2.24/32 dev lo

# --- the upstreams' CA and certificates, made here --------------------------
cd "$tmp"
ossl() { openssl "$@" 2>/dev/null; }
upstream_cert "upstream test CA" api.test bearer.test repl.test git.test \
    gitok.test other.test plain.test
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=badca.test -addext subjectAltName=DNS:badca.test \
    -keyout bad.key -out bad.pem
cd - >/dev/null

# a bare repository to clone from and (not) push to
export HOME=$tmp/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME" "$tmp/git"
git config --global user.email t@example.test
git config --global user.name tester
git config --global init.defaultBranch main
git init -q "$tmp/seed"
echo one >"$tmp/seed/file"
git -C "$tmp/seed" add file
git -C "$tmp/seed" commit -qm one
git clone -q --bare "$tmp/seed" "$tmp/git/repo.git"
git -C "$tmp/git/repo.git" config http.receivepack true
before_push=$(git -C "$tmp/git/repo.git" rev-parse main)

"$PY" "$server" --bind 192.0.2.20 --port 443 --cert "$tmp/srv.pem" \
    --key "$tmp/srv.key" --port-file "$tmp/up.port" --log "$tmp/up.log" \
    --git-root "$tmp/git" 2>>"$tmp/upstream.err" &
pids+=($!)
"$PY" "$server" --bind 192.0.2.24 --port 443 --cert "$tmp/bad.pem" \
    --key "$tmp/bad.key" --port-file "$tmp/bad.port" --log "$tmp/bad.log" \
    2>>"$tmp/upstream.err" &
pids+=($!)
start_upstream http 192.0.2.10
web=$up_port
start_upstream hold 192.0.2.20
hold=$up_port
wait_file "$tmp/up.port"
wait_file "$tmp/bad.port"
start_dns '{"api.test": {"A": ["192.0.2.20"]}, "bearer.test": {"A": ["192.0.2.20"]},
 "repl.test": {"A": ["192.0.2.20"]}, "git.test": {"A": ["192.0.2.20"]},
 "gitok.test": {"A": ["192.0.2.20"]},
 "other.test": {"A": ["192.0.2.20"]}, "plain.test": {"A": ["192.0.2.20"]},
 "wrongname.test": {"A": ["192.0.2.20"]}, "badca.test": {"A": ["192.0.2.24"]},
 "fwd.test": {"A": ["192.0.2.10"]}, "silent.test": {"A": ["192.0.2.20"]}}'

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: api.test
    ports: [443]
    inspect: true
    requests:
      allow: ["POST /v1/messages*", "GET /v1/models*", "GET /sse", "GET /bytes",
              "GET /close", "GET /ws", "PUT /upload", "HEAD /*", "GET /echo*"]
      deny: ["GET /v1/models/secret*"]
    secrets:
      - name: API_KEY
        header: x-api-key
  - host: bearer.test
    ports: [443]
    inspect: true
    secrets: [{name: BEARER_TOKEN, scheme: bearer}]
  - host: repl.test
    ports: [443]
    inspect: true
    secrets: [{name: REPL_KEY, query: key}, {name: NOT_GIVEN, header: x-not-given}]
  - host: git.test
    ports: [443]
    inspect: true
    requests:
      deny: ["POST */git-receive-pack"]
    secrets:
      - {name: GIT_TOKEN, scheme: basic, user: x-access-token}
  - host: gitok.test
    ports: [443]
    inspect: true
    requests:
      allow: ["GET */info/refs", "POST */git-upload-pack", "POST */git-receive-pack"]
  - host: other.test
    ports: [443]
    inspect: true
  - host: plain.test
    ports: [443]
  - host: wrongname.test
    ports: [443]
    inspect: true
  - host: badca.test
    ports: [443]
    inspect: true
  - host: silent.test
    ports: [$hold]
    inspect: true
  - host: fwd.test
    ports: [$web]
    inspect: true
    requests:
      deny: ["POST /admin*"]
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF

API=sk-test-API-0f3c9a7e5b1d4c2a        API_PH=aisb-ph-API-9a8b7c6d5e4f3a2b
BEARER=tok-BEARER-77aa66bb55cc44dd      BEARER_PH=aisb-ph-BEARER-1122334455667788
REPL=key-REPL-5566778899aabbcc          REPL_PH=aisb-ph-REPL-aabbccddeeff0011
GIT=ghp-GIT-0a1b2c3d4e5f6a7b8c9d        GIT_PH=aisb-ph-GIT-99887766554433221
# the secrets reach the gate through a pipe: never argv, environment, a file
secrets() {
	printf 'aisb-secrets 1\nAPI_KEY %s %s\nBEARER_TOKEN %s %s\nREPL_KEY %s %s\nGIT_TOKEN %s %s\n' \
	    "$API_PH" "$API" "$BEARER_PH" "$BEARER" "$REPL_PH" "$REPL" \
	    "$GIT_PH" "$GIT"
}
start_gate main "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" \
    --ca-out "$tmp/gate-ca.pem" --control "$tmp/ctl.sock" --secrets-fd 5 \
    5< <(secrets)
A=$tmp/audit.main.log
CA=$tmp/gate-ca.pem
px=(-x "http://127.0.0.1:$gate_port" --cacert "$CA")
gpid=$gate_pid

# what the upstream saw of the last request to PATH: FIELD's value
upstream_saw() {	# upstream_saw PATH-GLOB FIELD
	"$PY" - "$tmp/up.log" "$1" "$2" <<'PY'
import fnmatch, json, sys
last = None
for line in open(sys.argv[1]):
    o = json.loads(line)
    if fnmatch.fnmatchcase(o["path"], sys.argv[2]):
        last = o
if last is None:
    print("(no such request)")
elif sys.argv[3] == "path":
    print(last["path"])
else:
    vals = [v for k, v in last["headers"] if k.lower() == sys.argv[3].lower()]
    print("|".join(vals) if vals else "(absent)")
PY
}
b64() { printf %s "$1" | base64 -w0; }

# --- the CA: published, and the same over the control socket ----------------
check "--ca-out is a CA certificate" \
    "$(openssl x509 -in "$CA" -noout -ext basicConstraints 2>/dev/null | grep -c 'CA:TRUE')" 1
check "control ca = --ca-out" "$(control "$tmp/ctl.sock" ca ca)" "$(cat "$CA")"
# the session CA is the client's trust anchor: a handshake sends the leaf only
# (its input open a while: a close right after the handshake could race it)
check "the leaf alone, verified" "$(sleep 1 | openssl s_client \
    -proxy "127.0.0.1:$gate_port" -connect api.test:443 -servername api.test \
    -verify_hostname api.test -verify_return_error -CAfile "$CA" -showcerts \
    2>/dev/null | grep -c 'BEGIN CERTIFICATE')" 1
# a client that closes right after its handshake refused nothing
n0=$(audit_count "$A" reason=client_refused_ca)
openssl s_client -proxy "127.0.0.1:$gate_port" -connect api.test:443 \
    -servername api.test -CAfile "$CA" </dev/null >/dev/null 2>&1 || true
sleep 0.5
check "a close after the handshake is no refusal of the CA" \
    "$(audit_count "$A" reason=client_refused_ca)" "$n0"
# a client resumes with the ticket the gate sent with its first answer
req='GET /v1/models/t HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n'
for s in out in; do
	# shellcheck disable=SC2059 # the request's escapes are printf's
	printf "$req" | openssl s_client -proxy "127.0.0.1:$gate_port" \
	    -connect api.test:443 -servername api.test -CAfile "$CA" \
	    -sess_"$s" "$tmp/client.sess" -ign_eof >"$tmp/sclient.$s" 2>/dev/null ||
	    true	# its status after the server's close says nothing
	grep -E '^(New|Reused),|^HTTP/1.1' "$tmp/sclient.$s" | cut -d, -f1 |
	    tr -d '\r' || true
done >"$tmp/resumed"
check "client sessions resumed" "$(tr '\n' ' ' <"$tmp/resumed")" \
    "New HTTP/1.1 200 OK Reused HTTP/1.1 200 OK "

# --- a header secret; requests allowed and refused ----------------------------
out=$(curl -sS -m 10 "${px[@]}" https://api.test/v1/messages -d '{"m":1}' \
    -H "x-api-key: $API_PH" -H 'content-type: application/json' 2>&1 || true)
check "allowed request answered" "$(printf %s "$out" | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["path"])' 2>/dev/null)" /v1/messages
check "the upstream saw the secret" "$(upstream_saw /v1/messages x-api-key)" "$API"
expect_audit "$A" event=request method=POST path=/v1/messages decision=allow \
    status=200 reason=allowed inject=API_KEY inspect=True host=api.test \
    'entry=line 7, column 15: POST /v1/messages[*]'
expect_audit "$A" event=decision method=CONNECT host=api.test decision=allow \
    status=200 inspect=True
# no header from the client: the gate sets it all the same
curl -sS -m 10 "${px[@]}" -o /dev/null https://api.test/v1/models || true
check "set without one sent" "$(upstream_saw /v1/models x-api-key)" "$API"
# two of the client's, both dropped for the one set
curl -sS -m 10 "${px[@]}" -o /dev/null -H 'X-Api-Key: mine' -H 'x-api-key: two' \
    https://api.test/v1/models/list || true
check "client's fields dropped" "$(upstream_saw /v1/models/list x-api-key)" "$API"

# the gate resumes its sessions with an upstream: no certificate again
check "upstream sessions resumed" "$("$PY" -c '
import json, sys
print(any(json.loads(l).get("resumed") for l in open(sys.argv[1])))' "$tmp/up.log")" True

# refused: not allowed (with the fix), denied, a path not in its normal form
code=$(proxy_get "${px[@]:2}" https://api.test/v1/complete -d x)
check "request not allowed: 403" "$code" "200 403"
check "its fix header" "$(decision_header | grep -o "fix=\"{requests: {allow: \['POST /v1/complete'\]}}\"")" \
    "fix=\"{requests: {allow: ['POST /v1/complete']}}\""
grep -q '^- "POST /v1/complete"$' "$tmp/body" && ok || bad "no fix in the 403 body: $(cat "$tmp/body")"
expect_audit "$A" event=request method=POST path=/v1/complete decision=deny \
    status=403 reason=request_not_allowed
code=$(proxy_get "${px[@]:2}" 'https://api.test/v1/models/secret-x?k=v')
check "deny entry wins: 403" "$code" "200 403"
expect_audit "$A" event=request path=/v1/models/secret-x reason=request_denied \
    'entry=line 9, column 14: GET /v1/models/secret[*]'
check "the query is not audited" "$(grep -c 'k=v' "$A" || true)" 0
code=$(proxy_get "${px[@]:2}" --path-as-is https://api.test/v1/models/./secret)
check "dot segment: 400" "$code" "200 400"
expect_audit "$A" event=request reason=bad_path status=400
# a method or path an override names (what frameworks and front ends act
# on) is decided too: DELETE is no allowed method, /v1/models/secret-o a
# denied path; an allowed one passes, a malformed one is 400
code=$(proxy_get "${px[@]:2}" -X POST -d x -H 'X-HTTP-Method-Override: delete' \
    https://api.test/v1/messages/o1)
check "a method override the entries refuse: 403" "$code" "200 403"
expect_audit "$A" event=request method=POST path=/v1/messages/o1 \
    reason=request_not_allowed "fix=*DELETE /v1/messages/o1*" \
    'detail=the method an override names*'
code=$(proxy_get "${px[@]:2}" -X POST -d x 'https://api.test/v1/messages/o2?_method=DELETE')
check "a _method parameter the entries refuse: 403" "$code" "200 403"
code=$(proxy_get "${px[@]:2}" -H 'X-Original-URL: /v1/models/secret-o' \
    https://api.test/v1/models/o3)
check "a URL override a deny entry refuses: 403" "$code" "200 403"
expect_audit "$A" event=request path=/v1/models/o3 reason=request_denied \
    'detail=the path an override field names*'
code=$(proxy_get "${px[@]:2}" -H 'X-HTTP-Method-Override: DE LETE' \
    https://api.test/v1/models/o4)
check "a malformed override: 400" "$code" "200 400"
code=$(proxy_get "${px[@]:2}" -X POST -d x -H 'X-HTTP-Method-Override: POST' \
    https://api.test/v1/messages/o5)
check "an override the entries allow passes" "$code" "200 200"
check "refused requests never reached the upstream" \
    "$(grep -c -e /v1/complete -e secret -e /o1 -e /o2 -e /o3 -e /o4 "$tmp/up.log" || true)" 0

# Host inside TLS must be the connection's (no fronting through the name)
check "another Host: 400" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'GET /v1/models HTTP/1.1\r\nHost: plain.test\r\n\r\n')" "HTTP/1.1 400 Bad Request"
expect_audit "$A" event=request reason=host_mismatch

# --- keep-alive, HEAD, chunked upload, 100-continue, a close-ended body -------
out=$(curl -sS -m 10 "${px[@]}" https://api.test/echo/1 https://api.test/echo/2 2>&1 || true)
check "keep-alive: one connection" "$(printf %s "$out" | "$PY" -c '
import json, sys
r = [json.loads(l) for l in sys.stdin if l.strip()]
print(r[0]["conn"] == r[1]["conn"], [x["request"] for x in r])')" "True [1, 2]"
# the second head reaches a connection between exchanges, which reads 2 KiB
# at a time until bytes come: a head of 12 KB arrives whole all the same
big=$(head -c 12000 /dev/zero | tr '\0' b)
out=$(curl -sS -m 10 "${px[@]}" -H "X-Big: $big" https://api.test/echo/1 \
    https://api.test/echo/2 2>&1 || true)
check "keep-alive: a large second head" "$(printf %s "$out" | "$PY" -c '
import json, sys
r = [json.loads(l) for l in sys.stdin if l.strip()]
print(r[0]["conn"] == r[1]["conn"],
      [len(v) for x in r for k, v in x["headers"] if k.lower() == "x-big"])')" \
    "True [12000, 12000]"
check "HEAD" "$(curl -sS -m 10 "${px[@]}" -I https://api.test/echo/h 2>&1 |
    grep '^HTTP/1.1' | tail -n 1 | tr -d '\r')" "HTTP/1.1 200 OK"
head -c 300000 /dev/urandom >"$tmp/upload"
want=$(sha256sum <"$tmp/upload" | cut -d' ' -f1)
out=$(curl -sS -m 20 "${px[@]}" -T - -H 'Transfer-Encoding: chunked' \
    https://api.test/upload <"$tmp/upload" 2>&1 || true)
check "chunked upload, whole" "$(printf %s "$out" | "$PY" -c \
    'import json,sys; o=json.load(sys.stdin); print(o["body_len"], o["body_sha256"])' 2>/dev/null)" \
    "300000 $want"
# a chunk-size line is the size, whitespace, then ';' or its end: "5 6"
# (an upstream reading 0x56 would take what follows for another request)
# is refused before a byte of the body goes up
check "chunk size '5 6': 400" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'PUT /upload HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n5 6\r\nabcde\r\n0\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
expect_audit "$A" event=request method=PUT path=/upload status=400 reason=bad_chunked_body
out=$(curl -sS -m 20 "${px[@]}" -H 'Expect: 100-continue' --data-binary @"$tmp/upload" \
    https://api.test/v1/messages/c 2>&1 || true)
check "100-continue" "$(printf %s "$out" | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["body_sha256"])' 2>/dev/null)" "$want"
check "body ended by the upstream's close" \
    "$(curl -sS -m 10 "${px[@]}" https://api.test/close 2>&1)" "until the close"
# bulk, both legs decrypted and encrypted: every byte
check "32 MiB down" "$(curl -sS -m 60 "${px[@]}" 'https://api.test/bytes?n=33554432' | wc -c)" 33554432

# --- streaming: server-sent events arrive as they are sent ---------------------
read -r first total n < <("$PY" "$client" sse "$gate_port" api.test \
    '/sse?n=4&gap=300' "$CA")
check "SSE: all events" "$n" 4
if [ "${first%.*}" -lt 250 ] && [ "${total%.*}" -ge 850 ]; then ok; else
	bad "SSE not streamed: first event at $first ms, last at $total ms"; fi

# --- an upgrade (WebSocket): both streams as they are after the 101 -----------
out=$("$PY" "$client" ws "$gate_port" api.test "$CA")
check "101" "$(printf '%s\n' "$out" | sed -n 1p)" "HTTP/1.1 101 Switching Protocols"
check "bytes after the upgrade pass as they are" "$(printf '%s\n' "$out" | tail -n 1)" \
    '"frame-oneGET /not-a-request HTTP/1.1\r\n\r\n"'
expect_audit "$A" event=request path=/ws status=101 decision=allow upgrade=websocket
# another protocol (h2c: HTTP/2 requests no entry would see) is refused
# before the upstream, which would switch to anything (the reviewer's)
check "Upgrade: h2c refused" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'GET /ws?n=h2c HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\nGET /v1/models/secret HTTP/1.1\r\nHost: api.test\r\n\r\n')" \
    "HTTP/1.1 403 Forbidden"
expect_audit "$A" event=request path=/ws status=403 decision=deny \
    reason=upgrade_refused upgrade=h2c
check "Upgrade: websocket, h2c refused" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'GET /ws?n=two HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\nUpgrade: h2c\r\n\r\n')" \
    "HTTP/1.1 403 Forbidden"
# a 101 to another protocol than the one offered: 502, closed
check "a 101 to h2c for a WebSocket offer: 502" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'GET /ws?as=h2c HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\n\r\nGET /v1/models/secret HTTP/1.1\r\nHost: api.test\r\n\r\n')" \
    "HTTP/1.1 502 Bad Gateway"
expect_audit "$A" event=request path=/ws status=502 decision=error \
    reason=upgrade_mismatch upgrade=WebSocket \
    "detail=the upstream switched to 'h2c', not the protocol the request offered"
# the upstream's Upgrade is its own bytes (obs-text): 0x9b, the C1 CSI of
# an 8-bit terminal, reaches the log line as '?', never as itself
# (common/log.c); the audit line keeps it as \udc9b, which Python reads
# as the byte its argv's 0x9b is (surrogateescape)
check "a 101 to bytes a terminal obeys: 502" "$("$PY" "$client" raw "$gate_port" api.test "$CA" \
    'GET /ws?as=%C2%9B2J HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\n\r\n')" \
    "HTTP/1.1 502 Bad Gateway"
expect_audit "$A" event=request path=/ws status=502 reason=upgrade_mismatch \
    "detail=the upstream switched to '"$'\x9b'"2J', not the protocol the request offered"
check "  its log line: '?' for the byte" "$(grep -c "switched to '?2J'" "$tmp/gate.main.err" || true)" 1
check "  no C1 byte in the log" "$(LC_ALL=C grep -c $'\x9b' "$tmp/gate.main.err" || true)" 0
check "no upgrade but the WebSocket ones reached the upstream" \
    "$(grep -c -e 'n=h2c' -e 'n=two' "$tmp/up.log" || true)" 0

# --- bearer and query -----------------------------------------------------------
curl -sS -m 10 "${px[@]}" -o /dev/null -H 'Authorization: Bearer not-mine' \
    https://bearer.test/b || true
check "bearer set, the client's dropped" "$(upstream_saw /b authorization)" "Bearer $BEARER"
# query: the value only as the whole value of ?key=; the placeholder in the
# path, another parameter, a header or a Basic credential stays one (an
# echoing endpoint, as this upstream is, would return what it got)
out=$(curl -sS -m 10 "${px[@]}" -u "someone:$REPL_PH" -H "X-Debug: $REPL_PH" \
    "https://repl.test/r/$REPL_PH?key=$REPL_PH&x=$REPL_PH" 2>&1 || true)
check "query: the parameter's value" "$(upstream_saw '/r/*' path)" \
    "/r/$REPL_PH?key=$REPL&x=$REPL_PH"
check "query: not in a header" "$(upstream_saw '/r/*' x-debug)" "$REPL_PH"
check "query: not in a Basic credential" "$(upstream_saw '/r/*' authorization)" \
    "Basic $(b64 "someone:$REPL_PH")"
check "a secret not given: no header" "$(upstream_saw '/r/*' x-not-given)" "(absent)"
expect_audit "$A" event=request "path=/r/$REPL_PH" inject=REPL_KEY placeholder=REPL_KEY \
    'detail=*secret NOT_GIVEN not given to the gate*'
# the echo of the path and the headers, as a client reads it: no value
curl -sS -m 10 "${px[@]}" -o "$tmp/echo.json" -H "X-Debug: $REPL_PH" \
    "https://repl.test/anything/$REPL_PH" || true
check "an echoed path and header hold the placeholder" \
    "$(grep -o -F -- "$REPL_PH" "$tmp/echo.json" | wc -l)" 2
# a placeholder sent where it does not belong: worth nothing, and said
curl -sS -m 10 "${px[@]}" -o /dev/null -H "x-api-key: $API_PH" https://other.test/o || true
check "a foreign placeholder stays one" "$(upstream_saw /o x-api-key)" "$API_PH"
expect_audit "$A" event=request host=other.test placeholder=API_KEY \
    'detail=placeholder of API_KEY sent to other.test, where it is worth nothing'
# not inspected: a blind tunnel as before (the upstream's own certificate)
check "plain tunnel" "$(curl -sS -m 10 --http1.1 -x "http://127.0.0.1:$gate_port" \
    --cacert "$tmp/upca.pem" -o /dev/null -w '%{http_code}' https://plain.test/p)" 200
check "its line says no inspect" "$(audit_count "$A" event=decision host=plain.test inspect=True)" 0

# --- TRACE and TRACK: the upstream's echo would carry the secret: refused -----
for m in TRACE TRACK; do
	code=$(proxy_get "${px[@]:2}" -X "$m" "https://bearer.test/t-$m")
	check "$m on an inspected host: 403" "$code" "200 403"
	expect_audit "$A" event=request method="$m" host=bearer.test status=403 \
	    decision=deny reason=method_refused
done
# a rule with deny entries only, which would allow it otherwise
code=$(proxy_get "${px[@]:2}" -X TRACE https://git.test/repo.git/info/refs)
check "TRACE where the entries allow it: 403" "$code" "200 403"
check "no TRACE or TRACK reached the upstream" \
    "$(grep -c -e '"method": "TRACE"' -e '"method": "TRACK"' "$tmp/up.log" || true)" 0
# and forwarded (plain HTTP) to an inspected host
code=$(proxy_get -X TRACE "http://fwd.test:$web/t")
check "TRACE forwarded to an inspected host: 403" "$code" "000 403"
expect_audit "$A" event=decision host=fwd.test status=403 reason=method_refused

# --- python: urllib and requests ------------------------------------------------
out=$(HTTPS_PROXY="http://127.0.0.1:$gate_port" "$PY" - "$CA" "$API_PH" <<'PY'
import json, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[1])
req = urllib.request.Request("https://api.test/v1/messages/u", data=b"u",
                             headers={"x-api-key": sys.argv[2]})
with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
    print(r.status, json.load(r)["path"])
PY
)
check "python urllib" "$out" "200 /v1/messages/u"
check "urllib: the upstream saw the secret" "$(upstream_saw /v1/messages/u x-api-key)" "$API"
if "$PY" -c 'import requests' 2>/dev/null; then
	out=$("$PY" "$client" requests "$gate_port" https://api.test/v1/messages/r \
	    "$CA" "x-api-key=$API_PH" 2>&1 || true)
	check "python requests" "${out%%$'\n'*}" 200
	check "requests: the upstream saw the secret" \
	    "$(upstream_saw /v1/messages/r x-api-key)" "$API"
else
	echo "note: python3-requests not installed: its case skipped"
fi

# --- git: fetch allowed, push refused, the token added by the gate -------------
gitp=(-c "http.proxy=http://127.0.0.1:$gate_port" -c "http.sslCAInfo=$CA")
if git "${gitp[@]}" clone -q https://git.test/repo.git "$tmp/clone" 2>"$tmp/git.err"; then
	ok; else bad "git clone: $(cat "$tmp/git.err")"; fi
check "git: the token the upstream saw" \
    "$(upstream_saw '/repo.git/info/refs*' authorization)" \
    "Basic $(b64 "x-access-token:$GIT")"
git -C "$tmp/clone" "${gitp[@]}" fetch -q origin 2>"$tmp/git.err" && ok ||
    bad "git fetch: $(cat "$tmp/git.err")"
echo two >>"$tmp/clone/file"
git -C "$tmp/clone" commit -qam two
if git -C "$tmp/clone" "${gitp[@]}" push -q origin main 2>"$tmp/git.err"; then
	bad "git push went through"; else ok; fi
# refused at its discovery (GET info/refs?service=git-receive-pack), whose
# text/plain refusal git prints as "remote:" lines (a refused POST's it
# does not: "RPC failed; HTTP 403" was all a user saw)
for want in "remote: aisb-gate: GET git.test:443/repo.git/info/refs denied: git push refused at its discovery: the push it announces, POST /repo.git/git-receive-pack, is denied by requests: entry POST */git-receive-pack (line 25, column 14)" \
    "remote: rule: $tmp/policy.yaml:21:5 allow host: git.test" \
    "remote: to allow it, in $tmp/policy.yaml:" \
    "remote: # a requests: deny entry refuses it: remove or narrow that entry"; do
	grep -qxF "$want" "$tmp/git.err" && ok ||
	    bad "git push: no line '$want' in: $(cat "$tmp/git.err")"
done
check "push never reached the upstream" \
    "$(grep -c -e '"POST", "path": "/repo.git/git-receive-pack"' \
    -e '"path": "/repo.git/info/refs?service=git-receive-pack"' "$tmp/up.log" || true)" 0
check "the repository unchanged" "$(git -C "$tmp/git/repo.git" rev-parse main)" "$before_push"
expect_audit "$A" event=request host=git.test method=GET \
    path=/repo.git/info/refs decision=deny reason=request_denied \
    'entry=line 25, column 14: POST [*]/git-receive-pack'
# a path parameter is no way around the deny entry: servlet containers
# (JGit's) route "git-receive-pack;x" as "git-receive-pack", "..;" as ".."
code=$(proxy_get "${px[@]:2}" -u "x-access-token:$GIT_PH" -d x \
    'https://git.test/repo.git/git-receive-pack;x')
check "push with a path parameter: 403" "$code" "200 403"
expect_audit "$A" event=request host=git.test method=POST \
    'path=/repo.git/git-receive-pack;x' reason=request_denied \
    'detail=the path without its parameters*'
code=$(proxy_get "${px[@]:2}" -u "x-access-token:$GIT_PH" -d x --path-as-is \
    'https://git.test/repo.git/x/..;/git-receive-pack')
check "a dot segment with a parameter: 400" "$code" "200 400"
check "neither reached the upstream" \
    "$(grep -c -e 'git-receive-pack;x' -e '[.][.];/git' "$tmp/up.log" || true)" 0

# --- --learn: what the rules would refuse goes through, but without secrets ---
main_port=$gate_port
start_gate learn "$tmp/policy.yaml" --learn --upstream-ca "$tmp/upca.pem" \
    --ca-out "$tmp/learn-ca.pem" --secrets-fd 5 5< <(secrets)
AL=$tmp/audit.learn.log
gitl=(-c "http.proxy=http://127.0.0.1:$gate_port" -c "http.sslCAInfo=$tmp/learn-ca.pem")
if git -C "$tmp/clone" "${gitl[@]}" push -q origin main 2>"$tmp/git.err"; then
	ok; else bad "git push under --learn: $(cat "$tmp/git.err")"; fi
check "--learn: the push went without the token" \
    "$(upstream_saw '/repo.git/git-receive-pack' authorization)" "(absent)"
check "--learn: its discovery too" \
    "$(upstream_saw '/repo.git/info/refs*receive-pack' authorization)" "(absent)"
git -C "$tmp/clone" "${gitl[@]}" fetch -q origin 2>"$tmp/git.err" && ok ||
    bad "git fetch under --learn: $(cat "$tmp/git.err")"
check "--learn: an allowed request still gets it" \
    "$(upstream_saw '/repo.git/info/refs*upload-pack' authorization)" \
    "Basic $(b64 "x-access-token:$GIT")"
expect_audit "$AL" event=request method=POST path=/repo.git/git-receive-pack \
    decision=allow learn=True would=deny would_reason=request_denied inject=None \
    "detail=--learn: the rules would refuse it (request_denied): sent without the rule's secrets"
expect_audit "$AL" event=request method=GET path=/repo.git/info/refs \
    decision=allow learn=True would=deny would_reason=request_denied inject=None
# the client's own placeholder goes as it came, named
curl -sS -m 10 -x "http://127.0.0.1:$gate_port" --cacert "$tmp/learn-ca.pem" \
    -o /dev/null -u "x-access-token:$GIT_PH" -d x \
    https://git.test/other.git/git-receive-pack || true
check "--learn: the client's placeholder left as it is" \
    "$(upstream_saw '/other.git/git-receive-pack' authorization)" \
    "Basic $(b64 "x-access-token:$GIT_PH")"
expect_audit "$AL" event=request path=/other.git/git-receive-pack \
    would=deny placeholder=GIT_TOKEN inject=None
# TRACE is not the entries' to refuse: --learn lets it through no more
code=$(proxy_get --cacert "$tmp/learn-ca.pem" -X TRACE https://bearer.test/t-learn)
check "--learn: TRACE still 403" "$code" "200 403"
expect_audit "$AL" event=request method=TRACE reason=method_refused would=None
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
gate_port=$main_port gate_pid=$gpid

# --- a rule whose entries allow the push: it pushes -------------------------------
echo three >>"$tmp/clone/file"
git -C "$tmp/clone" commit -qam three
if git -C "$tmp/clone" "${gitp[@]}" push -q https://gitok.test/repo.git main \
    2>"$tmp/git.err"; then ok; else bad "git push allowed: $(cat "$tmp/git.err")"; fi
check "the allowed push reached the repository" \
    "$(git -C "$tmp/git/repo.git" rev-parse main)" "$(git -C "$tmp/clone" rev-parse HEAD)"
expect_audit "$A" event=request host=gitok.test method=GET path=/repo.git/info/refs \
    decision=allow
expect_audit "$A" event=request host=gitok.test method=POST \
    path=/repo.git/git-receive-pack decision=allow

# --- upstreams that fail verification: 502 with the reason, never a bypass ------
code=$(proxy_get "${px[@]:2}" https://badca.test/x)
check "untrusted upstream: 502" "$code" "502 000"
dh=$(decision_header)
grep -q 'reason=upstream_tls; detail="the upstream.s certificate failed verification: self-signed certificate"' <<<"$dh" &&
    ok || bad "badca decision: $dh"
code=$(proxy_get -k https://badca.test/x)
check "an untrusting client changes nothing: 502" "$code" "502 000"
code=$(proxy_get "${px[@]:2}" https://wrongname.test/x)
check "a name the certificate lacks: 502" "$code" "502 000"
dh=$(decision_header)
grep -q 'hostname mismatch' <<<"$dh" && ok || bad "wrongname: $dh"
check "nothing reached the untrusted upstream" "$(wc -l <"$tmp/bad.log")" 0

# --- clients that refuse the session CA (pinning): one clear line, closed -------
out=$("$PY" "$client" untrusting "$gate_port" api.test)
check "untrusting client refused" "$out" "refused: CERTIFICATE_VERIFY_FAILED"
curl -sS -m 10 -x "http://127.0.0.1:$gate_port" https://api.test/v1/models \
    -o /dev/null 2>/dev/null && bad "curl trusted the session CA unasked" || ok
for i in $(seq 30); do
	[ "$(audit_count "$A" event=decision reason=client_refused_ca)" -ge 2 ] && break
	sleep 0.1
done
check "pinning lines" "$(audit_count "$A" event=decision decision=deny \
    reason=client_refused_ca 'detail=client refused the session CA: not given it, or pinning?*')" 2
# a tunnel to an inspected host that does not speak TLS: its 200, the close
check "not TLS: closed" "$(raw_req "$gate_port" \
    'CONNECT api.test:443 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n')" \
    "HTTP/1.1 200 Connection established"
expect_audit "$A" event=decision reason=inspect_not_tls
# the SNI is checked as for any tunnel
check "SNI mismatch" "$(curl -sS -m 10 "${px[@]}" --connect-to other.test:443:api.test:443 \
    https://other.test/x -o /dev/null -w '%{http_code}' 2>/dev/null || true)" 000
expect_audit "$A" event=decision host=api.test reason=sni_mismatch

# --- a forwarded request (plain HTTP) to an inspected host: entries apply -------
code=$(proxy_get -X POST "http://fwd.test:$web/admin/x?t=1")
check "forward denied by entry" "$code" "000 403"
expect_audit "$A" event=decision host=fwd.test reason=request_denied \
    'detail=request denied by rule: POST /admin/x'
code=$(proxy_get "http://fwd.test:$web/fine")
check "forward allowed" "$code" "000 200"
# its overrides too: POST by X-HTTP-Method-Override, /admin by X-Rewrite-URL
code=$(proxy_get -H 'X-HTTP-Method-Override: post' -H 'X-Rewrite-URL: /admin/y' \
    "http://fwd.test:$web/fine2")
check "forward: an override a deny entry refuses" "$code" "000 403"
expect_audit "$A" event=decision host=fwd.test reason=request_denied \
    'detail=the method an override names*refused*: POST /admin/y'
# a push's discovery, decided as the POST it announces (named once)
code=$(proxy_get "http://fwd.test:$web/admin/info/refs?a=1&service=git-receive-pack")
check "forward: a push's discovery a deny entry refuses" "$code" "000 403"
expect_audit "$A" event=decision host=fwd.test reason=request_denied \
    'detail=git push refused at its discovery: the push it announces, POST /admin/git-receive-pack, is denied by requests: entry POST /admin[*] (line 51, column 14)'
code=$(proxy_get "http://fwd.test:$web/admin/info/refs?service=git-upload-pack&service=git-receive-pack")
check "forward: an ambiguous discovery" "$code" "000 400"
code=$(proxy_get "http://fwd.test:$web/admin/info/refs?service=git-upload-pack")
check "forward: fetch's discovery" "$code" "000 200"

# --- node's fetch through the relay, as in a session (transparent) --------------
if command -v node >/dev/null; then
	"$PY" "$client" relay 443 "$gate_port" >"$tmp/relay.out" 2>&1 &
	pids+=($!)
	wait_file "$tmp/relay.out"
	printf '127.0.0.1 api.test\n' >"$tmp/hosts"
	out=$(NODE_EXTRA_CA_CERTS="$CA" unshare -m sh -c \
	    'mount --bind "$1" /etc/hosts && exec node -e "
fetch(\"https://api.test/v1/messages/node\", {method: \"POST\", body: \"n\",
    headers: {\"x-api-key\": process.argv[1]}})
  .then(r => r.json()).then(j => console.log(j.path))
  .catch(e => { console.log(\"error \" + (e.cause || e)); process.exit(1); });
" "$2"' sh "$tmp/hosts" "$API_PH" 2>&1 || true)
	check "node fetch" "$out" /v1/messages/node
	check "node: the upstream saw the secret" \
	    "$(upstream_saw /v1/messages/node x-api-key)" "$API"
	expect_audit "$A" event=request path=/v1/messages/node transparent=True \
	    tool=node inspect=True inject=API_KEY
else
	echo "note: node not installed: its case skipped"
fi

# --- the counters -----------------------------------------------------------
check "status: requests counted" "$([ "$(control "$tmp/ctl.sock" status \
    counters.insp_requests)" -ge 20 ] && echo yes)" yes

# --- --record: the client leg decrypts in tshark, and holds placeholders only -
if command -v tshark >/dev/null; then
	start_gate rec2 "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" \
	    --record "$tmp/cap2.pcapng" --ca-out "$tmp/rec-ca.pem" \
	    --secrets-fd 5 5< <(secrets)
	rpid=$gate_pid
	curl -sS -m 10 -x "http://127.0.0.1:$gate_port" --cacert "$tmp/rec-ca.pem" \
	    -o /dev/null https://api.test/v1/messages/rec -d r \
	    -H "x-api-key: $API_PH" || bad "curl through the recording gate"
	kill "$rpid" && wait "$rpid" 2>/dev/null || true
	tshark -r "$tmp/cap2.pcapng" -Y http.request -T fields \
	    -e http.request.method -e http.request.uri -e http.request.line \
	    >"$tmp/tshark.out" 2>"$tmp/tshark.err" || true
	grep -q "^POST	/v1/messages/rec	" "$tmp/tshark.out" && ok ||
	    bad "tshark does not show the request: $(cat "$tmp/tshark.out" "$tmp/tshark.err")"
	grep -q "x-api-key: $API_PH" "$tmp/tshark.out" && ok ||
	    bad "tshark does not show the placeholder: $(cat "$tmp/tshark.out")"
else
	echo "note: tshark not installed: the capture's decryption not checked"
fi

# --- the system's trust store: its hashed folder (SSL_CERT_DIR here) ---------
mkdir -p "$tmp/certs" "$tmp/nocerts"
cp "$tmp/upca.pem" "$tmp/certs/"
openssl rehash "$tmp/certs" 2>/dev/null || c_rehash "$tmp/certs" >/dev/null 2>&1
SSL_CERT_DIR=$tmp/certs start_gate sys "$tmp/policy.yaml" --ca-out "$tmp/sys-ca.pem"
check "the system's store verifies" "$(curl -sS -m 10 -x "http://127.0.0.1:$gate_port" \
    --cacert "$tmp/sys-ca.pem" -o /dev/null -w '%{http_code}' https://api.test/v1/models)" 200
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
SSL_CERT_DIR=$tmp/nocerts start_gate none "$tmp/policy.yaml"
check "a store without the CA: 502" "$(curl -sS -m 10 -x "http://127.0.0.1:$gate_port" \
    -o /dev/null -w '%{http_connect}' https://api.test/v1/models 2>/dev/null)" 502
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- an upstream that takes the connection and never speaks TLS: its
# timeout says so, not "did not answer" (a plain server on the port)
start_gate hold "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" --connect-timeout 1
code=$(proxy_get -k "https://silent.test:$hold/x")
check "a silent TLS upstream: 504" "$code" "504 000"
dh=$(decision_header)
grep -q 'reason=connect_timeout; detail="the upstream took the connection but its TLS handshake did not end in time (not a TLS server?)"' <<<"$dh" &&
    ok || bad "silent upstream: $dh"
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- a standalone gate with its operators' CA (--ca-key) -----------------------
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj /CN=operator-ca -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign -keyout "$tmp/op.key" -out "$tmp/op.crt"
cat "$tmp/op.crt" "$tmp/op.key" >"$tmp/op.pem"
chmod 600 "$tmp/op.pem"
start_gate op "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" \
    --ca-key "$tmp/op.pem" --ca-out "$tmp/op-out.pem"
check "--ca-key: leaves of the operators' CA" "$(curl -sS -m 10 \
    -x "http://127.0.0.1:$gate_port" --cacert "$tmp/op.crt" -o /dev/null \
    -w '%{http_code}' https://api.test/v1/models)" 200
check "--ca-out is that CA" "$(cmp -s "$tmp/op.crt" "$tmp/op-out.pem" && echo same)" same
# a client not given the operators' CA: the line names that CA, not a session's
curl -sS -m 10 -x "http://127.0.0.1:$gate_port" https://api.test/v1/models \
    -o /dev/null 2>/dev/null && bad "curl trusted the --ca-key CA unasked" || ok
for i in $(seq 30); do
	[ "$(audit_count "$tmp/audit.op.log" reason=client_refused_ca)" -ge 1 ] && break
	sleep 0.1
done
check "--ca-key: the refusal names that CA" "$(audit_count "$tmp/audit.op.log" \
    event=decision reason=client_refused_ca \
    'detail=client refused the --ca-key CA: not given it, or pinning?*')" 1
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
# a key every user may read is refused (78), one its group may is warned about
for m in 0644 0602 0640; do
	chmod "$m" "$tmp/op.pem"
	rc=0
	"$gate_bin" -n -f "$tmp/policy.yaml" --ca-key "$tmp/op.pem" >/dev/null \
	    2>"$tmp/gate.nm.err" || rc=$?
	case $m in
	0640)	check "--ca-key $m: runs" "$rc" 0
		grep -q "is open to its group: make it 0600" "$tmp/gate.nm.err" &&
		    ok || bad "--ca-key $m: $(cat "$tmp/gate.nm.err")" ;;
	*)	check "--ca-key $m: 78" "$rc" 78
		grep -q "is open to every user (mode $m): anyone could read or replace" \
		    "$tmp/gate.nm.err" && ok || bad "--ca-key $m: $(cat "$tmp/gate.nm.err")" ;;
	esac
done
chmod 0600 "$tmp/op.pem"
# refused at start, with what is wrong and never a secret's byte
rc=0
"$gate_bin" -n -f "$tmp/policy.yaml" --ca-key "$tmp/op.crt" >/dev/null \
    2>"$tmp/gate.n1.err" || rc=$?
check "--ca-key without its key: 78" "$rc" 78
grep -q "no private key" "$tmp/gate.n1.err" && ok || bad "$(cat "$tmp/gate.n1.err")"
rc=0
"$gate_bin" -n -f "$tmp/policy.yaml" --secrets-fd 5 >/dev/null 2>"$tmp/gate.n2.err" \
    5< <(printf 'aisb-secrets 1\nAPI_KEY %s %s\nBAD %s two words\n' "$API_PH" "$API" "$BEARER_PH") || rc=$?
check "a bad secrets line: 78" "$rc" 78
grep -q "secrets line 3: the value" "$tmp/gate.n2.err" && ok || bad "$(cat "$tmp/gate.n2.err")"
rc=0
"$gate_bin" -n -f "$tmp/policy.yaml" --ca-key "$tmp/op.pem" --secrets-fd 5 \
    >/dev/null 2>"$tmp/gate.n3.err" 5< <(secrets) || rc=$?
check "-n with both: OK" "$rc" 0

# --- --reload-closes: a reload that changes an inspected rule's secrets: -------
# (or requests:) closes its live connections, which would run on with the
# old ones; a connection whose rule did not change lives on
cp "$tmp/policy.yaml" "$tmp/rc.yaml"
start_gate rc "$tmp/rc.yaml" --upstream-ca "$tmp/upca.pem" --reload-closes \
    --ca-out "$tmp/rc-ca.pem" --secrets-fd 5 5< <(secrets)
rm -f "$tmp/rc.ready" "$tmp/rc.go"
"$PY" - "$gate_port" "$tmp/rc-ca.pem" "$tmp/rc" >"$tmp/rc.out" 2>&1 <<'PY' &
import http.client, os, ssl, sys, time
port, ca, base = int(sys.argv[1]), sys.argv[2], sys.argv[3]
conns = {}
for host in ("api.test", "other.test"):
    c = http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
        context=ssl.create_default_context(cafile=ca))
    c.set_tunnel(host, 443)
    conns[host] = c
def get(host, path):
    try:
        conns[host].request("GET", path)
        r = conns[host].getresponse()
        r.read()
        print(host, path, r.status)
    except Exception as e:
        print(host, path, "closed" if isinstance(e, (ConnectionError,
            http.client.RemoteDisconnected)) else repr(e))
get("api.test", "/echo/rc1")
get("other.test", "/echo/rc1")
open(base + ".ready", "w").close()
for _ in range(300):
    if os.path.exists(base + ".go"):
        break
    time.sleep(0.05)
get("api.test", "/echo/rc2")
get("other.test", "/echo/rc2")
PY
rcpid=$!
for i in $(seq 100); do [ -e "$tmp/rc.ready" ] && break; sleep 0.1; done
"$PY" - "$tmp/rc.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read()
cut = "    secrets:\n      - name: API_KEY\n        header: x-api-key\n"
assert cut in s
open(sys.argv[1], "w").write(s.replace(cut, "", 1))
PY
kill -HUP "$gate_pid"
for i in $(seq 50); do
	[ "$(audit_count "$tmp/audit.rc.log" event=reload reason=applied)" -ge 1 ] && break
	sleep 0.1
done
: >"$tmp/rc.go"
wait "$rcpid" || true
check "--reload-closes: before the reload" "$(grep -c 'rc1 200' "$tmp/rc.out")" 2
# a secret a rule names that the gate was not given: said at start, and again
# after each reload, once a name
for w in start reload; do
	check "$w: the secret not given is said, once" "$(grep -c \
	    "aisb-gate: $w: secret NOT_GIVEN (rule .*rc.yaml:[0-9]*:[0-9]* allow host: repl.test) was not given to the gate (--secrets-fd): its requests go out without it" \
	    "$tmp/gate.rc.err")" 1
done
check "only the secret not given is said (start, reload)" "$(grep -c 'secret [A-Z_]* (rule' "$tmp/gate.rc.err")" 2
check "--reload-closes: the secret taken out closes its connection" \
    "$(grep '^api.test /echo/rc2' "$tmp/rc.out")" "api.test /echo/rc2 closed"
check "--reload-closes: a rule unchanged, its connection lives" \
    "$(grep '^other.test /echo/rc2' "$tmp/rc.out")" "other.test /echo/rc2 200"
check "--reload-closes: its close line" "$(audit_count "$tmp/audit.rc.log" \
    event=close host=api.test reason=policy_reload)" 1
check "--reload-closes: the request after it never went upstream" \
    "$(grep -c '/echo/rc2' "$tmp/up.log")" 1
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --workers 2: every worker reloads the same files, and worker 0 alone says
# the secret not given (at start and after a reload), not once a worker
start_gate wk "$tmp/rc.yaml" --upstream-ca "$tmp/upca.pem" --workers 2 \
    --secrets-fd 5 5< <(secrets)
for i in $(seq 50); do
	[ "$(grep -c 'worker [01] (pid [0-9]*) listening' "$tmp/gate.wk.err")" = 2 ] && break
	sleep 0.1
done
kill -HUP "$gate_pid"
for i in $(seq 50); do
	[ "$(grep -c 'reload: policy .* applied' "$tmp/gate.wk.err")" -ge 2 ] && break
	sleep 0.1
done
check "--workers 2: both workers reloaded" \
    "$(grep -c 'reload: policy .* applied' "$tmp/gate.wk.err")" 2
for w in start reload; do
	check "--workers 2, $w: the secret not given is said once" \
	    "$(grep -c "$w: secret NOT_GIVEN (rule " "$tmp/gate.wk.err")" 1
done
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --- the leak sweep ----------------------------------------------------------
sweep() {	# sweep NAME FILE...: no secret, in any form, in these
	local name=$1 v hit
	shift
	for v in "$API" "$BEARER" "$REPL" "$GIT" "$(b64 "x-access-token:$GIT")" \
	    "$(b64 "someone:$REPL")"; do
		hit=$(cat "$@" 2>/dev/null | grep -c -a -F -- "$v" || true)
		check "no secret in $name" "$hit" 0
	done
}
sweep "the gate's cmdline" "/proc/$gpid/cmdline"
sweep "the gate's environ" "/proc/$gpid/environ"
[ -r "/proc/$gpid/environ" ] && ok || echo "note: /proc/$gpid/environ unreadable here"
check "the gate is not dumpable" "$(stat -c %u "/proc/$gpid/environ")" 0
sweep "the audit logs" "$tmp"/audit.*.log
sweep "the gates' logs" "$tmp"/gate.*.err
sweep "the captures" "$tmp"/cap*.pcapng
sweep "the CA files" "$tmp/gate-ca.pem" "$tmp"/rec-ca.pem
sweep "the port files" "$tmp"/gate.*.port
sweep "what the clients got" "$tmp/body" "$tmp/headers" "$tmp/git.err" \
    "$tmp/echo.json"
# and the upstream did see them all (else the sweep proves nothing)
for v in "$API" "$BEARER" "$REPL" "$(b64 "x-access-token:$GIT")"; do
	grep -q -F -- "$v" "$tmp/up.log" && ok || bad "the upstream never saw $v"
done

finish
