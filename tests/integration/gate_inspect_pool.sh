#!/bin/bash
# aisb-gate inspected hosts: the upstream leg of an inspected connection
# whose last exchange ended cleanly is kept and serves the next inspected
# connection of the same key (user, session, host:port, address, rule).
# A real HTTPS upstream (gate_pool_server.py) numbers its TCP connections
# in every answer: two client connections in a row that get the same
# number went over one upstream connection.  Checked: reuse;
# --no-upstream-reuse; another host; Connection: close and a close-framed
# body not kept; a reload empties the pool; an upstream closing a kept
# connection (dropped, the next client works); the stale race (the
# upstream reads the next request and closes without answering: the
# request is sent again on a fresh connection, GET and POST; one beyond
# the copy's bound is a 502); --users: two users never share; a token
# file: one name through two lines of any user name is two credentials.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
unset CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR HTTPS_PROXY https_proxy \
    HTTP_PROXY http_proxy

upstream_cert "pool test CA" pool.test other.test

"$PY" "$here/gate_pool_server.py" --bind 192.0.2.20 --port 443 \
    --cert "$tmp/srv.pem" --key "$tmp/srv.key" --port-file "$tmp/up.port" \
    2>>"$tmp/upstream.err" &
pids+=($!)
wait_file "$tmp/up.port"
start_dns '{"pool.test": {"A": ["192.0.2.20"]}, "other.test": {"A": ["192.0.2.20"]}}'

policy() {	# policy FILE
	cat >"$1" <<EOF2
version: 1
allow:
  - host: pool.test
    ports: [443]
    inspect: true
  - host: other.test
    ports: [443]
    inspect: true
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF2
}
policy "$tmp/policy.yaml"

# get [CURL ARGS...] URL: the upstream connection's number that answered,
# or the HTTP status when it is not a 200 ("000": no answer)
proxy=
get() {
	local code
	sleep 0.2	# the previous client's close reaches the gate first
	code=$(curl -sS -m 15 --cacert "$tmp/gate-ca.pem" -o "$tmp/body" \
	    -w '%{http_code}' -x "http://${proxy}127.0.0.1:$gate_port" "$@" \
	    2>"$tmp/curl.err") || true
	if [ "$code" != 200 ]; then
		echo "status-$code"
		return
	fi
	sed -n 's/.*"conn": \([0-9]*\).*/\1/p' "$tmp/body"
}
counter() { control "$tmp/ctl.$1.sock" status "counters.$2"; }

start_gate main "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" \
    --ca-out "$tmp/gate-ca.pem" --control "$tmp/ctl.main.sock"
A=$tmp/audit.main.log

# --- reuse: one upstream connection for two client connections -------------
c1=$(get https://pool.test/one)
c2=$(get https://pool.test/two)
case $c1 in [0-9]*) ok ;; *) bad "first request: $c1" ;; esac
check "second client connection: the first's upstream connection" "$c2" "$c1"
check "reused counted" "$(counter main insp_reused)" 1
expect_audit "$A" event=decision host=pool.test upstream_reused=True
check "first decision line not reused" "$(audit_count "$A" event=decision \
    host=pool.test upstream_reused=None)" 1

# another host never takes pool.test's connection
c3=$(get https://other.test/x)
if [ "$c3" != "$c1" ] && [ -n "$c3" ]; then ok; else
	bad "other.test took pool.test's upstream connection ($c3)"; fi

# --- answers that end the upstream connection are not kept ----------------
c4=$(get https://pool.test/close)
c5=$(get https://pool.test/after-close)
if [ "$c5" != "$c4" ] && [ "${c5#status}" = "$c5" ]; then ok; else
	bad "after Connection: close: conn $c5 (close was $c4)"; fi
c6=$(get https://pool.test/untilclose)
c7=$(get https://pool.test/after-untilclose)
if [ "$c7" != "$c6" ] && [ "${c7#status}" = "$c7" ]; then ok; else
	bad "after a close-framed body: conn $c7 (it was $c6)"; fi
# a client that said Connection: close: the upstream was told so
c8=$(get -H 'Connection: close' https://pool.test/client-close)
c9=$(get https://pool.test/after-client-close)
if [ "$c9" != "$c8" ] && [ "${c9#status}" = "$c9" ]; then ok; else
	bad "after the client's Connection: close: conn $c9 (it was $c8)"; fi

# --- a reload empties the pool ---------------------------------------------
r1=$(get https://pool.test/before-reload)
kill -HUP "$gate_pid"
for i in $(seq 50); do
	[ "$(counter main reloads)" -ge 1 ] && break
	sleep 0.1
done
r2=$(get https://pool.test/after-reload)
if [ "$r2" != "$r1" ] && [ "${r2#status}" = "$r2" ]; then ok; else
	bad "after a reload: conn $r2 (before it: $r1)"; fi
r3=$(get https://pool.test/after-reload-2)
check "kept again after the reload" "$r3" "$r2"

# --- the upstream closes a kept connection: dropped, the next one works ----
redials=$(counter main insp_redialed)
i1=$(get "https://pool.test/idle?ms=300")
sleep 1
i2=$(get https://pool.test/after-idle)
if [ "$i2" != "$i1" ] && [ "${i2#status}" = "$i2" ]; then ok; else
	bad "after the upstream's idle close: $i2 (it was $i1)"; fi
check "the closed connection left the pool (no retry needed)" \
    "$(counter main insp_redialed)" "$redials"

# --- the upstream closes a kept connection while the next client is still
# in its handshake with the gate: that client's first request dials
# afresh (the close was read then, nothing more would come of the leg)
g1=$(get "https://pool.test/idle?ms=1000")
reused=$(counter main insp_reused) redials=$(counter main insp_redialed)
g2=$("$PY" - "$gate_port" "$tmp/gate-ca.pem" <<'PY'
import re, socket, ssl, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
s.sendall(b"CONNECT pool.test:443 HTTP/1.1\r\nHost: pool.test:443\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)               # a byte at a time: no TLS byte taken
    if not b:
        print("no-200")
        sys.exit()
    head += b
time.sleep(2)                   # the upstream closes the kept leg meanwhile
t = ssl.create_default_context(cafile=sys.argv[2]).wrap_socket(
    s, server_hostname="pool.test")
t.sendall(b"GET /after-gone HTTP/1.1\r\nHost: pool.test\r\n"
          b"Connection: close\r\n\r\n")
out = b""
try:
    while True:
        b = t.recv(65536)
        if not b:
            break
        out += b
except OSError as e:            # socket.timeout and ssl.SSLError among them
    print("error-" + type(e).__name__)
    sys.exit()
m = re.search(rb'"conn": (\d+)', out)
print(m.group(1).decode() if out.startswith(b"HTTP/1.1 200") and m else
      "status-" + out[:12].decode(errors="replace"))
PY
)
if [ "$g2" != "$g1" ] && [ "${g2#[a-z]}" = "$g2" ]; then ok; else
	bad "a kept leg closed during the client's handshake: $g2 (it was $g1)"; fi
check "it was the kept leg" "$(counter main insp_reused)" "$((reused + 1))"
check "dialled afresh once" "$(counter main insp_redialed)" "$((redials + 1))"

# --- the stale race: the request is sent again on a fresh connection -------
s1=$(get https://pool.test/arm)
s2=$(get https://pool.test/stale-get)
if [ "$s2" != "$s1" ] && [ "${s2#status}" = "$s2" ]; then ok; else
	bad "GET on a connection closed under it: $s2 (armed $s1)"; fi
check "redial counted (GET)" "$(counter main insp_redialed)" $((redials + 2))
s3=$(get https://pool.test/arm)
s4=$(get --data-binary 'hello=world' https://pool.test/stale-post)
if [ "$s4" != "$s3" ] && [ "${s4#status}" = "$s4" ]; then ok; else
	bad "POST on a connection closed under it: $s4 (armed $s3)"; fi
grep -q '"body_len": 11' "$tmp/body" && ok ||
    bad "the POST's body did not reach the fresh connection: $(cat "$tmp/body")"
check "redial counted (POST)" "$(counter main insp_redialed)" $((redials + 3))
# beyond the copy's bound (64 KiB): today's 502
head -c 100000 /dev/zero | tr '\0' a >"$tmp/big"
s5=$(get https://pool.test/arm)
s6=$(get --data-binary @"$tmp/big" https://pool.test/stale-big)
check "a request beyond the copy: 502" "$s6" status-502
check "no redial for it" "$(counter main insp_redialed)" $((redials + 3))

# --- --no-upstream-reuse: a new upstream connection each time --------------
start_gate noreuse "$tmp/policy.yaml" --upstream-ca "$tmp/upca.pem" \
    --ca-out "$tmp/gate-ca2.pem" --control "$tmp/ctl.noreuse.sock" \
    --no-upstream-reuse
cp "$tmp/gate-ca2.pem" "$tmp/gate-ca.pem"
n1=$(get https://pool.test/n1)
n2=$(get https://pool.test/n2)
if [ "$n2" != "$n1" ] && [ "${n2#status}" = "$n2" ]; then ok; else
	bad "--no-upstream-reuse: conn $n2 after $n1"; fi
check "--no-upstream-reuse: none reused" "$(counter noreuse insp_reused)" 0

# --- --users: a user's upstream connection never serves another ------------
U=$tmp/users
mkdir "$U"
policy "$U/shared.yaml"
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$U/users.conf" <<EOF
alice	sha256:$(sha alice-secret)	policy=$U/shared.yaml
bob	sha256:$(sha bob-secret)	policy=$U/shared.yaml
EOF
chmod 0600 "$U/users.conf"
start_gate users "$tmp/policy.yaml" --users "$U/users.conf" \
    --upstream-ca "$tmp/upca.pem" --ca-out "$tmp/gate-ca3.pem" \
    --control "$tmp/ctl.users.sock"
cp "$tmp/gate-ca3.pem" "$tmp/gate-ca.pem"
proxy=alice:alice-secret@
u1=$(get https://pool.test/alice-1)
proxy=bob:bob-secret@
u2=$(get https://pool.test/bob-1)
proxy=alice:alice-secret@
u3=$(get https://pool.test/alice-2)
proxy=
case $u1 in [0-9]*) ok ;; *) bad "alice: $u1" ;; esac
if [ "$u2" != "$u1" ] && [ "${u2#status}" = "$u2" ]; then ok; else
	bad "bob got alice's upstream connection ($u2, alice's $u1)"; fi
check "alice gets her own kept connection back" "$u3" "$u1"

# --- a token file: one user name through two lines of any user name is two
# credentials, which never share an upstream connection ---------------------
printf 'pw-a\npw-b\n' >"$tmp/tokens.conf"
chmod 0600 "$tmp/tokens.conf"
start_gate tok "$tmp/policy.yaml" --token-file "$tmp/tokens.conf" \
    --upstream-ca "$tmp/upca.pem" --ca-out "$tmp/gate-ca4.pem" \
    --control "$tmp/ctl.tok.sock"
cp "$tmp/gate-ca4.pem" "$tmp/gate-ca.pem"
proxy=bob:pw-a@
t1=$(get https://pool.test/bob-a-1)
proxy=bob:pw-b@
t2=$(get https://pool.test/bob-b-1)
proxy=bob:pw-a@
t3=$(get https://pool.test/bob-a-2)
proxy=
case $t1 in [0-9]*) ok ;; *) bad "bob through pw-a: $t1" ;; esac
if [ "$t2" != "$t1" ] && [ "${t2#status}" = "$t2" ]; then ok; else
	bad "bob through pw-b got pw-a's upstream connection ($t2, $t1)"; fi
check "bob through pw-a gets its kept connection back" "$t3" "$t1"

finish
