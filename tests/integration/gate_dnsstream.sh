#!/bin/bash
# aisb-gate's AISB-DNS entry (issue 16), spoken by a python client
# (gate_dnsstream.py): the head with the session's credential, then DNS
# over TCP frames, pipelined.  Allowed exact, wildcard and regex names get
# their synthetic address in 198.18.0.0/15; AAAA of them NODATA; unlisted,
# denied and apex names NXDOMAIN; malformed queries FORMERR, another
# opcode NOTIMP, EDNS an OPT record, EDNS version 1 BADVERS; answers come
# in order; a wrong or missing credential gets 407; over the rate bound
# REFUSED, audited; a CONNECT to a synthetic address is refused; every
# query has its audit line, and the launcher's summary of them counts the
# malformed ones as such.  And the test's upstream DNS server, which the
# policy names, is asked nothing at all.  The rate bound is the session's
# across its connections, holds within a connection with --workers 2, and
# more sessions than have a bucket (256) are all answered.  A bucket is a
# credential's: one user name through a labelled line and two lines of any
# user name is three buckets, while one credential on two connections
# shares one.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
# what a resolver would answer, if the gate ever asked it
start_dns '{"exact.test": {"A": ["192.0.2.10"], "AAAA": ["2001:db8::1"]},
 "a.wild.test": {"A": ["192.0.2.10"]}, "unlisted.test": {"A": ["192.0.2.10"]}}'

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: exact.test
    ports: [443]
  - host: "*.wild.test"
    ports: [$up]
  - host: "~^api[0-9]+\\\\.re\\\\.test\$"
    ports: ["8000-8100"]
deny:
  - host: bad.wild.test
allow_ranges: [$test_ranges]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
printf 'sess-1:s3cret\n' >"$tmp/token"
chmod 600 "$tmp/token"
# (a bucket large enough for the 3,000 below; the bound has its own gate)
start_gate main "$tmp/policy.yaml" --token-file "$tmp/token" \
    --dns-rate 100000 --dns-burst 100000
A=$tmp/audit.main.log
dq() {
	if [ "$1" = --shut ]; then
		shift
		"$PY" "$here/gate_dnsstream.py" --shut "$gate_port" "$@" 2>&1 || true
	else
		"$PY" "$here/gate_dnsstream.py" "$gate_port" "$@" 2>&1 || true
	fi
}
synth() { "$PY" "$here/gate_dnsstream.py" --synth "$1"; }

# Every kind of answer, pipelined in one write, in order
out=$(dq sess-1:s3cret exact.test/A a.b.wild.test/A api7.re.test/A \
    Exact.TEST/AAAA exact.test/TXT unlisted.test/A bad.wild.test/A \
    wild.test/A api.re.test/A twoq:exact.test/A cut:exact.test/A \
    notimp:exact.test/A edns:exact.test/A badvers:exact.test/A \
    edns:unlisted.test/A)
want="NOERROR $(synth exact.test)@30
NOERROR $(synth a.b.wild.test)@30
NOERROR $(synth api7.re.test)@30
NODATA
NODATA
NXDOMAIN
NXDOMAIN
NXDOMAIN
NXDOMAIN
FORMERR
FORMERR
NOTIMP
NOERROR $(synth exact.test)@30 opt
BADVERS opt
NXDOMAIN opt"
check "answers in order" "$out" "$want"
case $(synth exact.test) in
198.1[89].*) ok ;;
*) bad "synthetic address outside 198.18.0.0/15: $(synth exact.test)" ;;
esac

# The same name, the same address, on another connection; a client that
# half-closes after its queries gets every answer, then the gate's close
check "stable address, half-close" \
    "$(dq --shut sess-1:s3cret exact.test/A unlisted.test/AAAA)" \
    "NOERROR $(synth exact.test)@30
NXDOMAIN"

# 3,000 queries pipelined, written while the answers are read (140 KiB
# each way): all answered, in order, ids matching
check "3000 pipelined" "$(dq --shut sess-1:s3cret many:3000:x.wild.test/A)" \
    "3000 x NOERROR $(synth x.wild.test)@30"

# One audit line per query, with the session
expect_audit "$A" event=dns session=sess-1 name=exact.test qtype=A \
    answer="$(synth exact.test)" rule='*exact.test'
expect_audit "$A" event=dns session=sess-1 name=api7.re.test qtype=A \
    answer="$(synth api7.re.test)"
expect_audit "$A" event=dns name=exact.test qtype=AAAA answer=NODATA
expect_audit "$A" event=dns name=unlisted.test qtype=A answer=NXDOMAIN
expect_audit "$A" event=dns name=bad.wild.test answer=NXDOMAIN
# a refused name is a denial: its reason and the rule that would allow it
expect_audit "$A" event=dns name=unlisted.test answer=NXDOMAIN \
    reason=host_not_allowed "fix=allow:
  - host: unlisted.test
"
expect_audit "$A" event=dns name=bad.wild.test answer=NXDOMAIN reason=deny_rule
check "a deny rule's refusal names the rule" "$(grep '"name":"bad.wild.test"' "$A" |
    grep -c '"rule":"[^"]*policy.yaml:[0-9]*:[0-9]* deny host: bad.wild.test"')" \
    "$(grep -c '"name":"bad.wild.test"' "$A")"
expect_audit "$A" event=dns answer=FORMERR
expect_audit "$A" event=dns answer=BADVERS
check "audit lines" "$(audit_count "$A" event=dns)" 3017
# the launcher's summary reads these very lines: the queries the gate
# could not read or does not serve are malformed, not failed, not denied
sid=0123456789abcdef0123dead
mkdir -p "$tmp/state/aisb/sessions/$sid"
cp "$A" "$tmp/state/aisb/sessions/$sid/audit.jsonl"
show=$(XDG_STATE_HOME=$tmp/state "${AISB:-$top_builddir/aisb}" sessions show "$sid")
check "summary: malformed queries" "$(printf '%s\n' "$show" | grep -v '^# denied ' |
    grep -e '^# audit:' -e '^# malformed' -e '^# failed')" \
    "# audit: 0 allowed, 6 denied, 0 failed, 4 malformed; lines in $tmp/state/aisb/sessions/$sid/audit.jsonl
# malformed (DNS query, no name), 2 times: a query the gate could not read (FORMERR)
# malformed (DNS query, no name), 1 time: not a standard query (opcode) (NOTIMP)
# malformed exact.test (DNS lookup), 1 time: an EDNS version other than 0 (BADVERS)"

# Credentials: none, wrong, of another session
check "no credentials" "$(dq - exact.test/A)" "HTTP/1.1 407 Proxy Authentication Required"
check "wrong credentials" "$(dq sess-1:nope exact.test/A)" \
    "HTTP/1.1 407 Proxy Authentication Required"
check "other session" "$(dq sess-2:s3cret exact.test/A)" \
    "HTTP/1.1 407 Proxy Authentication Required"
expect_audit "$A" event=decision method=AISB-DNS status=407 \
    reason=auth_required
# ... also to a client that half-closes before the 407 is written
check "no credentials, half-close" "$(dq --shut - exact.test/A)" \
    "HTTP/1.1 407 Proxy Authentication Required"

# A frame too short to be a query, or a response: the stream is closed
check "runt frame" "$(dq sess-1:s3cret frame:5 exact.test/A)" "closed"

# A CONNECT to a synthetic address is refused: it is not a place
check "CONNECT to the synthetic address" \
    "$(proxy_get -p --proxy-user sess-1:s3cret "https://$(synth exact.test):443/")" \
    "403 000"

# The rate bound: 3 at once, then 1 a second; refusals audited, counted
start_gate rate "$tmp/policy.yaml" --token-file "$tmp/token" \
    --dns-rate 1 --dns-burst 3
R=$tmp/audit.rate.log
out=$(dq sess-1:s3cret exact.test/A exact.test/A exact.test/A exact.test/A \
    unlisted.test/A exact.test/A | tr '\n' ' ')
check "over the rate bound" "$out" \
    "NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 REFUSED REFUSED REFUSED "
expect_audit "$R" event=dns session=sess-1 answer=REFUSED refused=1 \
    reason=dns_rate_limited
check "refusals audited once a second" \
    "$(audit_count "$R" event=dns answer=REFUSED)" 1
check "answered lines" "$(audit_count "$R" event=dns answer='198.*')" 3
# ... of the session, not of a connection: the same session on 4 more
# connections of 4 queries each gets no new burst, only what is left (at
# most the burst, 3) and the refill of the time the client took (1 a
# second); a bucket per connection would answer 12
out=$("$PY" "$here/gate_dnsstream.py" --conns 4 "$gate_port" sess-1:s3cret \
    exact.test/A exact.test/A exact.test/A exact.test/A) || true
words() {	# words WORD: how many times it is in $out
	printf '%s\n' "$out" | awk -v w="$1" \
	    '{ for (i = 1; i <= NF; i++) n += $i == w } END { print n + 0 }'
}
n=$(words NOERROR)
max=$(printf '%s\n' "$out" | awk '/^elapsed / { print 3 + int($2) }')
if [ -n "$max" ] && [ "$n" -le "$max" ]; then ok; else
	bad "one session on 4 connections: $n answered, at most ${max:-?} wanted: $out"
fi
check "one session on 4 connections: all answered" \
    "$(($(words NOERROR) + $(words REFUSED)))" 16

# --workers 2: each worker has buckets of its own, and one connection is
# served by one worker, so within a connection the bound holds as above.
# Across connections it is not pinned: the kernel spreads connections
# over the workers by a hash of the client's port (SO_REUSEPORT), so a
# session's connections draw on one bucket or on two (3 to 6 answered at
# once), and the test cannot choose which.
start_gate rate2 "$tmp/policy.yaml" --token-file "$tmp/token" \
    --dns-rate 1 --dns-burst 3 --workers 2
out=$(dq sess-1:s3cret exact.test/A exact.test/A exact.test/A exact.test/A \
    exact.test/A exact.test/A | tr '\n' ' ')
check "--workers 2: over the rate bound" "$out" \
    "NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 REFUSED REFUSED REFUSED "
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# More sessions than have a bucket (256 a process): any user name with
# the secret is a session of its own, 300 of them, one after another.
# The least recently used bucket is handed on, as a new one: every session
# gets its burst (2) and then REFUSED, the last ones too; the gate lives.
printf 's3cret-any\n' >"$tmp/token.any"
chmod 600 "$tmp/token.any"
start_gate evict "$tmp/policy.yaml" --token-file "$tmp/token.any" \
    --dns-rate 1 --dns-burst 2
three="NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 REFUSED"
out=$("$PY" "$here/gate_dnsstream.py" --conns 300 "$gate_port" \
    'u%d:s3cret-any' exact.test/A exact.test/A exact.test/A) || true
check "300 sessions: each its own bucket" \
    "$(printf '%s\n' "$out" | grep -v '^elapsed ' | sort | uniq -c |
    sed 's/^ *//')" "300 $three"
# session 0's bucket was the first given up: it comes back to a new one
check "an evicted session again" "$(dq u0:s3cret-any exact.test/A \
    exact.test/A exact.test/A | tr '\n' ' ')" "$three "
check "a fresh session after them" "$(dq fresh:s3cret-any exact.test/A \
    exact.test/A exact.test/A | tr '\n' ' ')" "$three "
kill -0 "$gate_pid" 2>/dev/null && ok || bad "the gate died under 300 sessions"
check "every session audited" "$(audit_count "$tmp/audit.evict.log" \
    event=dns answer=REFUSED)" 302

# A bucket per credential, not per user name: bob through the line
# labelled bob and through two lines of any user name (the client names
# itself there) is three credentials, each its own burst (3) on its
# connection right after the others'; one bucket of "bob" would answer the
# first 3 and refuse the rest (the refill is 1 a second)
printf 'bob:pw0\npw1\npw2\n' >"$tmp/token.cred"
chmod 600 "$tmp/token.cred"
start_gate cred "$tmp/policy.yaml" --token-file "$tmp/token.cred" \
    --dns-rate 1 --dns-burst 3
ok3="NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30 NOERROR $(synth exact.test)@30"
out=$("$PY" "$here/gate_dnsstream.py" --conns 3 "$gate_port" 'bob:pw%d' \
    exact.test/A exact.test/A exact.test/A) || true
check "bob through three lines: three buckets" \
    "$(printf '%s\n' "$out" | grep -v '^elapsed ' | sort | uniq -c |
    sed 's/^ *//')" "3 $ok3"
check "none refused" "$(audit_count "$tmp/audit.cred.log" event=dns \
    answer=REFUSED)" 0
# ... and one credential (carol through pw1) on two connections: one
# bucket, at most its burst and the refill of the time taken
out=$("$PY" "$here/gate_dnsstream.py" --conns 2 "$gate_port" carol:pw1 \
    exact.test/A exact.test/A exact.test/A) || true
n=$(words NOERROR)
max=$(printf '%s\n' "$out" | awk '/^elapsed / { print 3 + int($2) }')
if [ -n "$max" ] && [ "$n" -le "$max" ] && [ "$(words REFUSED)" -ge 1 ]; then
	ok
else
	bad "one credential on 2 connections: $n answered, at most ${max:-?} wanted: $out"
fi
kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# --learn: every valid name gets its address (a tool that resolves first
# is learnt when it connects); invalid names still NXDOMAIN
start_gate learn "$tmp/policy.yaml" --token-file "$tmp/token" --learn
out=$(dq sess-1:s3cret unlisted.test/A exact.test/A 'bad!name.test/A' | tr '\n' ' ')
check "learning: unlisted names answered" "$out" \
    "NOERROR $(synth unlisted.test)@30 NOERROR $(synth exact.test)@30 NXDOMAIN "
expect_audit "$tmp/audit.learn.log" event=dns name=unlisted.test learn=True

# Nothing ever reached the upstream DNS server
if [ -s "$tmp/dns.log" ]; then
	bad "the DNS server was asked: $(cat "$tmp/dns.log")"
else
	ok
fi
# ... which does answer when asked (so the check above can fail)
"$PY" - "$dns_port" <<'PY' >/dev/null
import socket, struct, sys
q = struct.pack(">HHHHHH", 7, 0x100, 1, 0, 0, 0) + b"\x05probe\x04test\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(q, ("127.0.0.1", int(sys.argv[1])))
s.recv(512)
PY
[ -s "$tmp/dns.log" ] && ok || bad "the DNS server logs no query"

kill "$gate_pid"
wait "$gate_pid" 2>/dev/null || true
finish
