#!/bin/bash
# aisb-gate: SOCKS5 on the listener (issue 31; RFC 1928, RFC 1929).  Real
# clients through the real gate: curl --socks5-hostname and socks5h://,
# Python's PySocks (python3-socks) and a client written byte by byte
# (gate_socks.py) to see each answer.  Checked: a name decided as CONNECT
# (the HTTPS server name check too), the session credential as RFC 1929's
# user and password (none offered, a wrong one: refused, audited), a name
# the policy does not allow, an address decided by cidr rules, IPv6 targets
# (a literal, a name with only an AAAA record), BIND refused as "command not
# supported", an unresolvable name; the audit's "socks":true; a gate
# without credentials takes method 0, and ssh and git clone through it
# with ProxyCommand nc -X 5 to an sshd made here (when sshd, ssh, nc and
# git are installed); --no-socks turns it off.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
"$PY" -c 'import socks' 2>/dev/null ||
	{ echo "SKIP: no PySocks for $PY (python3-socks)"; exit 77; }
client=$here/gate_socks.py
ip addr add 2001:db8::10/128 dev lo nodad
start_tls_server
start_upstream http 192.0.2.10
web=$up_port
start_upstream http 2001:db8::10
web6=$up_port
start_upstream echo 2001:db8::10
echo6=$up_port
start_dns '{"web.test": {"A": ["192.0.2.10"]}, "denied.test": {"A": ["192.0.2.10"]},
 "six.test": {"AAAA": ["2001:db8::10"]}, "tls.test": {"A": ["192.0.2.20"]},
 "ssh.test": {"A": ["192.0.2.10"]}}'
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: web.test
    ports: [$web]
  - host: six.test
    ports: [$web6]
  - host: gone.test
    ports: [$web]
  - host: ssh.test
    ports: [22]
  - host: tls.test
    ports: [$tls]
  - cidr: 2001:db8::10/128
    ports: [$echo6]
allow_ranges: [$test_ranges, 2001:db8::/32]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
printf 'sess-1:s3cret-one\n' >"$tmp/token"
chmod 600 "$tmp/token"
start_gate main "$tmp/policy.yaml" --token-file "$tmp/token"
A=$tmp/audit.main.log
G=127.0.0.1:$gate_port
one=sess-1:s3cret-one
path_of() { "$PY" -c 'import json,sys; print(json.load(sys.stdin)["path"])'; }

# --- curl: a name, decided as CONNECT name:port, the credential as RFC 1929's
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -m 10 --socks5-hostname "$G" \
    --proxy-user "$one" "http://web.test:$web/by-name" || true)
check "curl --socks5-hostname: the name's answer" "$code" 200
check "the upstream got the request" "$(path_of <"$tmp/body")" /by-name
expect_audit "$A" event=decision decision=allow host=web.test port="$web" \
    method=CONNECT socks=True session=sess-1 addr=192.0.2.10
expect_audit "$A" event=close host=web.test socks=True 'bytes_up=[1-9]*' \
    'bytes_down=[1-9]*'
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -m 10 --cacert "$tmp/cert.pem" \
    -x "socks5h://$one@$G" "https://tls.test:$tls/" || true)
check "HTTPS through SOCKS5 (socks5h://), the server name checked" "$code" 200

# --- the credential: none offered, a wrong one
rc=0; curl -s -o /dev/null -m 10 --socks5-hostname "$G" \
    "http://web.test:$web/" || rc=$?
[ "$rc" != 0 ] && ok || bad "curl without credentials got through"
check "no user and password offered: no acceptable method" \
    "$("$PY" "$client" "$gate_port" raw web.test "$web" --methods 0 | xargs)" \
    "method ff closed"
expect_audit "$A" event=decision decision=deny reason=auth_required \
    status=407 socks=True method=SOCKS5
check "a wrong password: RFC 1929's failure, closed" \
    "$("$PY" "$client" "$gate_port" raw web.test "$web" \
    --auth sess-1:n0t-the-s3cret | xargs)" "method 02 auth 01 closed"
check "PySocks with a wrong password" "$("$PY" "$client" "$gate_port" \
    pysocks web.test "$web" --auth sess-1:n0t-the-s3cret)" "error auth"
check "PySocks with no credentials" "$("$PY" "$client" "$gate_port" \
    pysocks web.test "$web")" "error method"
check "two auth_required lines per wrong password (curl's, ours)" \
    "$(audit_count "$A" reason=auth_required detail='wrong credentials' \
    socks=True)" 2
if grep -q 's3cret' "$A" "$tmp/gate.main.err"; then
	bad "a password in the audit or the log"
else
	ok
fi

# --- names and addresses the policy does not allow
before=$(upstream_accepts 192.0.2.10)
rc=0; curl -s -o /dev/null -m 10 -x "socks5h://$one@$G" \
    "http://denied.test:$web/" || rc=$?
[ "$rc" != 0 ] && ok || bad "curl reached denied.test"
check "a denied name: not allowed by the ruleset" "$("$PY" "$client" \
    "$gate_port" raw denied.test "$web" --auth "$one" | xargs)" \
    "method 02 auth 00 reply 02"
check "PySocks: the same code" "$("$PY" "$client" "$gate_port" pysocks \
    denied.test "$web" --auth "$one")" "error 0x02"
expect_audit "$A" event=decision decision=deny host=denied.test port="$web" \
    socks=True status=403
check "nothing dialled for it" "$(upstream_accepts 192.0.2.10)" "$before"
check "an IPv4 address with no cidr rule" "$("$PY" "$client" "$gate_port" \
    raw 192.0.2.10 "$web" --atyp v4 --auth "$one" | xargs)" \
    "method 02 auth 00 reply 02"
expect_audit "$A" event=decision decision=deny host=192.0.2.10 \
    port="$web" socks=True
check "a name on a port not on its rule" "$("$PY" "$client" "$gate_port" \
    raw web.test 9 --auth "$one" | xargs)" "method 02 auth 00 reply 02"
check "an allowed name that does not resolve: host unreachable" \
    "$("$PY" "$client" "$gate_port" raw gone.test "$web" --auth "$one" |
    xargs)" "method 02 auth 00 reply 04"
expect_audit "$A" event=decision host=gone.test socks=True
check "BIND: command not supported" "$("$PY" "$client" "$gate_port" raw \
    web.test "$web" --auth "$one" --cmd 2 | xargs)" \
    "method 02 auth 00 reply 07"
expect_audit "$A" event=decision reason=bad_request socks=True \
    detail='SOCKS5: only CONNECT is served'

# --- IPv6: a literal (cidr rule), a name with only an AAAA record
check "IPv6 literal (address type 4), the stream both ways" \
    "$("$PY" "$client" "$gate_port" raw 2001:db8::10 "$echo6" --atyp v6 \
    --auth "$one" --data ping6 | xargs)" "method 02 auth 00 reply 00 echo ping6"
expect_audit "$A" event=decision decision=allow host=2001:db8::10 \
    port="$echo6" socks=True 'rule=*allow cidr: 2001:db8::10/128'
check "PySocks to the IPv6 literal" "$("$PY" "$client" "$gate_port" pysocks \
    2001:db8::10 "$echo6" --auth "$one" --data py6)" "echo py6"
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -m 10 -x "socks5h://$one@$G" \
    "http://six.test:$web6/six" || true)
check "curl: a name with only an AAAA record" "$code" 200
expect_audit "$A" event=decision decision=allow host=six.test \
    addr=2001:db8::10 socks=True

# --- PySocks, as an application uses it
"$PY" -c '
import socks, sys
s = socks.socksocket()
s.set_proxy(socks.SOCKS5, "127.0.0.1", int(sys.argv[1]), rdns=True,
            username="sess-1", password="s3cret-one")
s.settimeout(10)
s.connect(("web.test", int(sys.argv[2])))
s.sendall(b"GET /pysocks HTTP/1.0\r\nHost: web.test\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
print(got.split(b"\r\n", 1)[0].decode())
' "$gate_port" "$web" >"$tmp/out" 2>&1 || true
check "PySocks: an HTTP request by name" "$(cat "$tmp/out")" \
    "HTTP/1.0 200 OK"

# --- a gate without credentials: method 0; --no-socks: not spoken at all
start_gate open "$tmp/policy.yaml"
check "no credentials on the gate: method 0" "$("$PY" "$client" \
    "$gate_port" raw 2001:db8::10 "$echo6" --atyp v6 --methods 0 \
    --data open | xargs)" "method 00 reply 00 echo open"
# ssh's ProxyCommand through OpenBSD nc, which speaks SOCKS5 without a
# user and password: the name goes to the gate, decided as ssh.test:22
if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null &&
    command -v nc >/dev/null && command -v git >/dev/null; then
	. "$here/ssh_fixture.sh"
	cleanup_extra() {
		[ -z "$ssh_made_run_sshd" ] || rmdir /run/sshd 2>/dev/null || true
	}
	mkdir "$tmp/ssh"
	ssh_fixture "$tmp/ssh" 192.0.2.10
	/usr/sbin/sshd -D -e -f "$tmp/ssh/sshd_config" 2>"$tmp/sshd.err" &
	pids+=($!)
	for i in $(seq 50); do
		ssh_listening 192.0.2.10 && break
		sleep 0.1
	done
	SSH=(ssh -F /dev/null -i "$tmp/ssh/userkey" -o BatchMode=yes
	    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
	    -o "ProxyCommand=nc -X 5 -x 127.0.0.1:$gate_port %h %p")
	check "ssh through SOCKS5 (nc -X 5)" "$("${SSH[@]}" root@ssh.test \
	    echo via-socks 2>"$tmp/ssh.err")" via-socks
	expect_audit "$tmp/audit.open.log" event=decision decision=allow \
	    host=ssh.test port=22 socks=True addr=192.0.2.10
	GIT_SSH_COMMAND=$(printf '%q ' "${SSH[@]}") git clone -q \
	    "root@ssh.test:$tmp/ssh/repo.git" "$tmp/clone" 2>"$tmp/git.err" || true
	check "git clone over ssh through SOCKS5" \
	    "$(cat "$tmp/clone/README" 2>&1)" "over ssh"
	check "ssh to a port not on the rule" "$("${SSH[@]}" -p 2222 \
	    root@ssh.test true 2>/dev/null && echo reached || echo refused)" \
	    refused
	expect_audit "$tmp/audit.open.log" event=decision decision=deny \
	    host=ssh.test port=2222 socks=True reason=port_not_allowed
else
	echo "# skipped ssh through SOCKS5: no sshd, ssh, nc or git here"
fi
start_gate nosocks "$tmp/policy.yaml" --no-socks
check "--no-socks: a SOCKS greeting is a bad HTTP request" \
    "$(raw_req "$gate_port" '\x05\x01\x00\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
check "--no-socks: no line says socks" \
    "$(audit_count "$tmp/audit.nosocks.log" socks=True)" 0
finish
