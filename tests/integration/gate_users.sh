#!/bin/bash
# aisb-gate --users: one standalone gate, several users, each with its own
# policy.  Real curl with -x http://user:secret@127.0.0.1:PORT: each user
# reaches its own host (forward and CONNECT) and is denied the other's; a
# wrong or missing secret gets 407; every audit line names the user.
# SIGHUP (and the control socket's reload) takes a changed users file; an
# invalid users file, or an invalid policy of one user, keeps the whole old
# set and says FILE:LINE:COL.  Also: the start-up refusals (DNS settings
# that differ, --users with --token-file), -n, --workers 2, and --user
# (files read again after the privilege drop) when run as real root.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream echo 192.0.2.11
echo_port=$up_port
start_dns '{"a.test": {"A": ["192.0.2.10"]}, "b.test": {"A": ["192.0.2.10"]},
    "c.test": {"A": ["192.0.2.10"]}, "d.test": {"A": ["192.0.2.10"]},
    "e.test": {"A": ["192.0.2.11"]}}'

U=$tmp/users
mkdir "$U" "$U/pol"
write_policy "$U/default.yaml" d.test
write_policy "$U/pol/alice.yaml" a.test
write_policy "$tmp/bob.yaml" b.test e.test	# an absolute path
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$U/users.conf" <<EOF
# name  credential  policy
alice	sha256:$(sha alice-secret)	policy=pol/alice.yaml
bob  plain:bob-secret  policy=$tmp/bob.yaml
carol sha256:$(sha carol-secret)
EOF

# uget USER:SECRET URL [CURL ARGS...]: "CONNECT-CODE HTTP-CODE"
uget() {
	local cred=$1 url=$2
	shift 2
	curl -sS -m 15 -o "$tmp/body" -w '%{http_connect} %{http_code}' \
	    -x "http://$cred@127.0.0.1:$gate_port" "$@" "$url" \
	    2>"$tmp/curl.err" || true
}
wait_log() {	# wait_log FILE PATTERN COUNT: up to 10 s for COUNT lines
	local i
	for i in $(seq 100); do
		[ "$(grep -c -- "$2" "$1" || true)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# --- start-up refusals, -n ---------------------------------------------------
rc=0
"$gate_bin" -n -f "$U/default.yaml" --users "$U/users.conf" \
    --token-file "$U/users.conf" 2>"$tmp/excl.err" || rc=$?
check "--users with --token-file: usage error" "$rc" 64
grep -q 'excludes --token-file' "$tmp/excl.err" && ok ||
    bad "no exclusion message: $(cat "$tmp/excl.err")"

rc=0
chmod 0644 "$U/users.conf"
"$gate_bin" -n -f "$U/default.yaml" --users "$U/users.conf" \
    2>"$tmp/n.err" || rc=$?
check "-n with --users" "$rc" 0
grep -q 'configuration OK (policy sha256:[0-9a-f]*, 3 users)' "$tmp/n.err" &&
    ok || bad "-n said: $(cat "$tmp/n.err")"
grep -q "users file .*users.conf is accessible by others" "$tmp/n.err" &&
    ok || bad "no warning for a users file others may read"
chmod 0600 "$U/users.conf"
"$gate_bin" -n -f "$U/default.yaml" --users "$U/users.conf" 2>"$tmp/n.err"
if grep -q "accessible by others" "$tmp/n.err"; then
	bad "a warning for a 0600 users file"; else ok; fi

# a policy whose dns: section differs from -f's: one gate, one resolver
write_policy "$tmp/otherdns.yaml" b.test
sed -i "s/127.0.0.1:$dns_port/127.0.0.1:1/" "$tmp/otherdns.yaml"
printf 'dave plain:x policy=%s\n' "$tmp/otherdns.yaml" >"$tmp/users.dns"
rc=0
"$gate_bin" -n -f "$U/default.yaml" --users "$tmp/users.dns" \
    2>"$tmp/dns.err" || rc=$?
check "different DNS settings: refused" "$rc" 78
grep -q "users.dns:1: the policy of user dave, .*configures DNS" \
    "$tmp/dns.err" && ok || bad "DNS refusal said: $(cat "$tmp/dns.err")"

printf 'alice plain:x\nalice plain:y\n' >"$tmp/users.dup"
rc=0
"$gate_bin" -n -f "$U/default.yaml" --users "$tmp/users.dup" \
    2>"$tmp/dup.err" || rc=$?
check "duplicate user: refused" "$rc" 78
grep -q "users.dup:2:1: error: user alice is already defined on line 1" \
    "$tmp/dup.err" && ok || bad "duplicate said: $(cat "$tmp/dup.err")"

# --- two users through one gate ----------------------------------------------
start_gate u "$U/default.yaml" --users "$U/users.conf" \
    --control "$tmp/ctl.sock"
A=$tmp/audit.u.log
E=$tmp/gate.u.err

check "alice: a.test (forward)" "$(uget alice:alice-secret "http://a.test:$up/1")" "000 200"
check "alice: a.test (CONNECT)" "$(uget alice:alice-secret "http://a.test:$up/2" -p)" "200 200"
check "alice: b.test denied" "$(uget alice:alice-secret "http://b.test:$up/3")" "000 403"
check "alice: d.test (-f's) denied" "$(uget alice:alice-secret "http://d.test:$up/4")" "000 403"
check "bob: b.test (CONNECT)" "$(uget bob:bob-secret "http://b.test:$up/5" -p)" "200 200"
check "bob: a.test denied (CONNECT)" "$(uget bob:bob-secret "http://a.test:$up/6" -p)" "403 000"
check "carol: -f's policy, d.test" "$(uget carol:carol-secret "http://d.test:$up/7")" "000 200"
check "carol: a.test denied" "$(uget carol:carol-secret "http://a.test:$up/8")" "000 403"
check "wrong secret" "$(uget alice:bob-secret "http://a.test:$up/9")" "000 407"
check "another user's secret" "$(uget bob:alice-secret "http://a.test:$up/10")" "000 407"
check "unknown user" "$(uget eve:alice-secret "http://a.test:$up/11")" "000 407"
check "no credentials" "$(curl -sS -m 15 -o /dev/null -w '%{http_code}' \
    -x "http://127.0.0.1:$gate_port" "http://a.test:$up/12" || true)" 407

expect_audit "$A" event=decision user=alice host=a.test decision=allow
expect_audit "$A" event=close user=alice host=a.test
expect_audit "$A" event=decision user=alice host=b.test decision=deny
expect_audit "$A" event=decision user=bob host=b.test decision=allow method=CONNECT
expect_audit "$A" event=decision user=bob host=a.test decision=deny
expect_audit "$A" event=decision user=carol host=d.test decision=allow
check "refused credentials name no user" \
    "$(audit_count "$A" event=decision status=407 user=None)" 4
check "no line without a user but the 407s" \
    "$(audit_count "$A" event=decision user=None)" 4
if grep -qE 'alice-secret|bob-secret|carol-secret' "$A" "$E"; then
	bad "a secret in the audit log or the gate's log"; else ok; fi
# the 403 tells the user which policy file would need the change
uget bob:bob-secret "http://a.test:$up/13" >/dev/null
grep -q "bob.yaml" "$tmp/body" && ok || bad "403 body does not name bob.yaml"

# A tunnel of bob's, to the echo server, held across the reload below that
# takes bob's policy away: it keeps the policy it was decided with.
"$PY" - "$gate_port" "$echo_port" "$tmp/hold" <<'PY' 2>"$tmp/hold.err" &
import base64, os, socket, sys, time
port, echo, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cred = base64.b64encode(b"bob:bob-secret").decode()
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(b"CONNECT e.test:%d HTTP/1.1\r\nHost: e.test\r\n"
          b"Proxy-Authorization: Basic %s\r\n\r\n" % (echo, cred.encode()))
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
def ping(msg):
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        b = s.recv(len(msg) - len(got))
        if not b:
            break
        got += b
    return "ok" if got == msg else "bad"
first = ping(b"before")
open(d + ".ready", "w").write(head.split(b"\r\n")[0].decode() + " " + first)
while not os.path.exists(d + ".go"):	# the reload happened
    time.sleep(0.05)
second = ping(b"after the reload")
s.close()
open(d + ".tmp", "w").write(second)
os.rename(d + ".tmp", d + ".done")
PY
pids+=($!)
wait_file "$tmp/hold.ready"
check "held tunnel of bob's" "$(cat "$tmp/hold.ready")" "HTTP/1.1 200 Connection established ok"
check "control status: the tunnel's user" "$(control "$tmp/ctl.sock" status tunnels |
    "$PY" -c 'import json, sys; print([(t["target"].split(":")[0], t["user"]) for t in json.load(sys.stdin)])')" \
    "[('e.test', 'bob')]"

# --- SIGHUP: a changed users file --------------------------------------------
# alice gets a new secret, bob loses his own policy (-f's then), carol
# gets bob's
cat >"$U/users.tmp" <<EOF
alice plain:alice-new policy=pol/alice.yaml
bob plain:bob-secret
carol sha256:$(sha carol-secret) policy=$tmp/bob.yaml
EOF
mv "$U/users.tmp" "$U/users.conf"
write_policy "$U/default.yaml" d.test c.test
kill -HUP "$gate_pid"
wait_log "$E" 'reload: users .*3 users, 3 policies applied' 1 && ok ||
    bad "no reload line: $(grep reload "$E")"
check "alice: old secret withdrawn" "$(uget alice:alice-secret "http://a.test:$up/20")" "000 407"
check "alice: new secret" "$(uget alice:alice-new "http://a.test:$up/21")" "000 200"
check "bob: -f's new policy, c.test" "$(uget bob:bob-secret "http://c.test:$up/22")" "000 200"
check "bob: b.test now denied" "$(uget bob:bob-secret "http://b.test:$up/23")" "000 403"
check "carol: b.test now" "$(uget carol:carol-secret "http://b.test:$up/24" -p)" "200 200"
expect_audit "$A" user=bob host=c.test decision=allow
check "bob: e.test denied to new tunnels" "$(uget bob:bob-secret "http://e.test:$echo_port/" -p)" "403 000"
touch "$tmp/hold.go"
wait_file "$tmp/hold.done"
check "the held tunnel goes on with bob's old policy" "$(cat "$tmp/hold.done")" ok
expect_audit "$A" event=close user=bob host=e.test

# --- an invalid users file keeps the whole old set ---------------------------
cp "$U/users.conf" "$U/users.good"
printf 'alice plain:alice-new\nbob plain:bob-secret\nbad!name plain:x\n' \
    >"$U/users.tmp"
mv "$U/users.tmp" "$U/users.conf"
write_policy "$U/default.yaml" d.test	# valid, but part of the set
kill -HUP "$gate_pid"
wait_log "$E" 'reload: refused: users file' 1 && ok ||
    bad "no refusal: $(grep reload "$E")"
grep -q "reload: refused: users file .*users.conf:3:4: error: '!' in a user name" \
    "$E" && ok || bad "refusal without FILE:LINE:COL: $(grep refused "$E")"
check "old set: carol still has bob's policy" \
    "$(uget carol:carol-secret "http://b.test:$up/30")" "000 200"
check "old set: -f's old policy still allows c.test" \
    "$(uget bob:bob-secret "http://c.test:$up/31")" "000 200"

# ... and so does an invalid policy of one user (control socket reload)
mv "$U/users.good" "$U/users.conf"
printf 'version: 1\nallow:\n  - host: [\n' >"$tmp/bob.yaml.tmp"
mv "$tmp/bob.yaml.tmp" "$tmp/bob.yaml"
write_policy "$U/default.yaml" d.test
check "control reload refused" "$(control "$tmp/ctl.sock" reload reload)" failed
grep -q "reload: refused: users file .*users.conf:3: the policy of user carol is invalid: .*bob.yaml:[0-9]*:[0-9]*: error" \
    "$E" && ok || bad "policy refusal: $(grep refused "$E" | tail -n 1)"
check "old set after a bad policy" \
    "$(uget carol:carol-secret "http://b.test:$up/32")" "000 200"
check "old -f policy after a bad policy" \
    "$(uget bob:bob-secret "http://c.test:$up/33")" "000 200"

# fixed: the next reload applies
write_policy "$tmp/bob.yaml" b.test
check "control reload ok" "$(control "$tmp/ctl.sock" reload reload)" ok
check "-f's policy applied at last" "$(uget bob:bob-secret "http://c.test:$up/34")" "000 403"

# --- --workers 2: every worker reloads the set -------------------------------
start_gate w "$U/default.yaml" --users "$U/users.conf" --workers 2
many() {	# many CRED URL N: the distinct answers of N requests
	local i
	for i in $(seq "$3"); do uget "$1" "$2"; echo; done | sort | uniq -c |
	    awk '{ printf "%s x %s %s\n", $1, $2, $3 }'
}
check "workers: alice" "$(many alice:alice-new "http://a.test:$up/w" 10)" "10 x 000 200"
sed -i 's/^alice plain:alice-new /alice plain:alice-w /' "$U/users.conf"
kill -HUP "$gate_pid"
wait_log "$tmp/gate.w.err" 'reload: users' 2 && ok ||
    bad "workers: $(grep -c 'reload: users' "$tmp/gate.w.err") reload lines"
check "workers: new secret everywhere" "$(many alice:alice-w "http://a.test:$up/w" 10)" "10 x 000 200"
check "workers: old secret nowhere" "$(many alice:alice-new "http://a.test:$up/w" 10)" "10 x 000 407"

# --- --user: the files are read again after the privilege drop ---------------
if [ "$(id -u)" = 0 ] && [ -z "${AISB_GATE_USERNS:-}" ] &&
    gid=$(id -g nobody 2>/dev/null); then
	# $tmp is 0700 root: the gate may only search $P, by its group
	chmod 0700 "$tmp"
	P=$tmp/priv
	mkdir -m 0710 "$P" "$P/pol"
	chgrp "$gid" "$P" "$P/pol"
	cp "$U/default.yaml" "$P/default.yaml"
	write_policy "$P/pol/a.yaml" a.test
	printf 'alice plain:p1 policy=pol/a.yaml\n' >"$P/users.conf"
	chgrp "$gid" "$P"/*.yaml "$P"/pol/a.yaml "$P/users.conf"
	chmod 0640 "$P"/*.yaml "$P"/pol/a.yaml "$P/users.conf"
	start_gate p "$P/default.yaml" --users "$P/users.conf" --user nobody
	check "dropped: alice" "$(uget alice:p1 "http://a.test:$up/p")" "000 200"
	write_policy "$P/pol/a.yaml" c.test
	printf 'alice plain:p2 policy=pol/a.yaml\n' >"$P/users.tmp"
	chgrp "$gid" "$P/users.tmp" "$P/pol/a.yaml"
	chmod 0640 "$P/users.tmp" "$P/pol/a.yaml"
	mv "$P/users.tmp" "$P/users.conf"
	kill -HUP "$gate_pid"
	wait_log "$tmp/gate.p.err" 'reload: users' 1 && ok ||
	    bad "dropped reload: $(grep reload "$tmp/gate.p.err")"
	check "dropped: new secret, new policy" "$(uget alice:p2 "http://c.test:$up/p")" "000 200"
	check "dropped: old secret" "$(uget alice:p1 "http://a.test:$up/p")" "000 407"
else
	echo "(--user part skipped: needs real root and a user nobody)"
fi

finish
