#!/bin/bash
# aisb-gate --metrics: after a known mix of traffic (allowed forwards and a
# tunnel, denials by reason, a DNS failure, a refused dial, a malformed
# request, a reload that applies and one that is refused, an audit reopen)
# each count of the scrape is exactly what the test caused; the DNS
# histogram counts the look-ups the DNS server saw; the exposition parses
# (HELP and TYPE before each family, cumulative buckets); bad scrapes get
# 400/404/405 and the gate goes on; with --workers 2 the numbers are the
# sum of both workers; bad --metrics arguments exit 78.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
echo_port=$up	# write_policy's second port
start_dns '{"ok.test": {"A": ["192.0.2.10"], "ttl": 300},
 "priv.test": {"A": ["10.0.0.1"], "ttl": 300},
 "dead.test": {"A": ["192.0.2.20"], "ttl": 300},
 "gone.test": {"rcode": "NXDOMAIN"}}'
write_policy "$tmp/policy.yaml" ok.test priv.test dead.test gone.test

# scrape PORT [PATH]: the parsed exposition as "key value" lines in
# $tmp/metrics.txt, or "invalid: why" as its only line.  Checks the text
# format 0.0.4 as Prometheus reads it: the content type, every sample of
# a family after its # HELP and # TYPE, _total counters, a histogram's
# buckets cumulative and ending in +Inf == _count.
scrape() {
	"$PY" - "$1" >"$tmp/metrics.txt" <<'PY'
import re, sys, urllib.request
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1],
                               timeout=10)
    ctype = r.headers.get("Content-Type", "")
    text = r.read().decode()
except Exception as e:
    print("invalid: %s" % e); sys.exit(0)
def invalid(why):
    print("invalid: " + why); sys.exit(0)
if not ctype.startswith("text/plain; version=0.0.4"):
    invalid("content type " + ctype)
types, helps, out, buckets = {}, set(), [], {}
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')
for line in text.splitlines():
    if line.startswith("# HELP "):
        helps.add(line.split()[2]); continue
    if line.startswith("# TYPE "):
        _, _, name, t = line.split()
        types[name] = t; continue
    m = sample.match(line)
    if not m:
        invalid("line " + line)
    name, labels, value = m.group(1), m.group(2) or "", m.group(3)
    fam = re.sub(r'_(bucket|sum|count)$', '', name)
    fam = fam if types.get(fam) == "histogram" else name
    if fam not in types or fam not in helps:
        invalid("no HELP/TYPE before " + name)
    if types[fam] == "counter" and not name.endswith("_total"):
        invalid("counter without _total: " + name)
    float(value)
    if name.endswith("_bucket"):
        buckets.setdefault(fam, []).append(float(value))
    out.append("%s%s %s" % (name, labels, value))
for fam, b in buckets.items():
    if b != sorted(b):
        invalid("buckets of %s not cumulative" % fam)
    count = [l for l in out if l.startswith(fam + "_count ")]
    if not count or float(count[0].split()[1]) != b[-1]:
        invalid("+Inf bucket of %s is not its _count" % fam)
print("\n".join(out))
PY
}
# m KEY: the value of one sample of the last scrape ("absent": none)
m() {
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "absent" }' \
	    "$tmp/metrics.txt"
}
# wait_metric PORT KEY VALUE: scrape until KEY is VALUE (10 s at most): for
# what a signal causes, which the gate counts when its loop gets to it
wait_metric() {
	local i
	for i in $(seq 100); do
		scrape "$1"
		[ "$(m "$2")" = "$3" ] && return 0
		sleep 0.1
	done
}

# --- bad arguments --------------------------------------------------------
rc=0
"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --metrics localhost:9 \
    2>"$tmp/bad.err" || rc=$?
check "--metrics with a name: exit 78" "$rc" 78
grep -q -- "--metrics localhost:9: expected an IP address and port" \
    "$tmp/bad.err" && ok || bad "no message for --metrics localhost:9"
rc=0
"$gate_bin" -d -f "$tmp/policy.yaml" -l 127.0.0.1:9100 \
    --metrics 127.0.0.1:9100 2>"$tmp/bad.err" || rc=$?
check "--metrics on the proxy's address: exit 78" "$rc" 78

# --- one process ----------------------------------------------------------
# (each test has a network namespace of its own: a fixed port is free)
start_gate one "$tmp/policy.yaml" --metrics 127.0.0.1:9128 \
    --connect-timeout 2 --control "$tmp/ctl.sock"
A=$tmp/audit.one.log
scrape 9128
check "first scrape parses" "$(grep '^invalid' "$tmp/metrics.txt" || true)" ""
check "nothing decided yet" \
    "$(m 'aisb_gate_decisions_total{decision="allow",reason="allowed"}')" 0
check "one worker" "$(m aisb_gate_workers)" 1
now=$(date +%s)
st=$(m process_start_time_seconds)
if [ "$st" -le "$now" ] && [ "$st" -gt $((now - 600)) ]; then ok; else
	bad "process_start_time_seconds $st, now $now"
fi

# the traffic: 4 allowed (3 forwards, 1 tunnel), each denial once
for i in 1 2 3; do
	check "forward $i" "$(proxy_get "http://ok.test:$up/$i")" "000 200"
done
check "tunnel" "$(proxy_get -p "http://ok.test:$up/t")" "200 200"
check "host_not_allowed" "$(proxy_get "http://evil.test:$up/")" "000 403"
check "port_not_allowed" "$(proxy_get "http://ok.test:81/")" "000 403"
check "address_denied" "$(proxy_get "http://priv.test:$up/")" "000 403"
check "dns_failed" "$(proxy_get "http://gone.test:$up/")" "000 502"
check "connect_failed" "$(proxy_get "http://dead.test:$up/")" "000 502"
check "bad_request" "$(raw_req "$gate_port" 'GARBAGE\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"

# a reload that applies, one that is refused, a reopen (SIGUSR1)
kill -HUP "$gate_pid"
wait_metric 9128 'aisb_gate_reloads_total{outcome="ok"}' 1
cp "$tmp/policy.yaml" "$tmp/policy.good"
printf 'version: 1\nallow: [\n' >"$tmp/policy.yaml"
kill -HUP "$gate_pid"
wait_metric 9128 'aisb_gate_reloads_total{outcome="failed"}' 1
mv "$tmp/policy.good" "$tmp/policy.yaml"
kill -USR1 "$gate_pid"
wait_metric 9128 'aisb_gate_audit_reopens_total{outcome="ok"}' 3
# the last connection's close may still be on its way: wait for it
wait_metric 9128 aisb_gate_connections_active 0

scrape 9128
D='aisb_gate_decisions_total{decision'
check "allow/allowed" "$(m "$D=\"allow\",reason=\"allowed\"}")" 4
check "deny/host_not_allowed" "$(m "$D=\"deny\",reason=\"host_not_allowed\"}")" 1
check "deny/port_not_allowed" "$(m "$D=\"deny\",reason=\"port_not_allowed\"}")" 1
check "deny/address_denied" "$(m "$D=\"deny\",reason=\"address_denied\"}")" 1
check "error/dns_failed" "$(m "$D=\"error\",reason=\"dns_failed\"}")" 1
check "error/connect_failed" "$(m "$D=\"error\",reason=\"connect_failed\"}")" 1
check "error/bad_request" "$(m "$D=\"error\",reason=\"bad_request\"}")" 1
check "no other decision" "$(grep -c '^aisb_gate_decisions_total' \
    "$tmp/metrics.txt")" 7
check "decisions == audit decision lines" \
    "$(awk '/^aisb_gate_decisions_total/ { n += $2 } END { print n }' \
    "$tmp/metrics.txt")" "$(audit_count "$A" event=decision)"
check "connections" "$(m aisb_gate_connections_total)" 10
check "connections active" "$(m aisb_gate_connections_active)" 0
check "tunnels" "$(m aisb_gate_tunnels_total)" 4
check "tunnels active" "$(m aisb_gate_tunnels_active)" 0
sum_audit() {	# sum_audit FIELD: over the close lines
	"$PY" -c '
import json, sys
print(sum(json.loads(l).get(sys.argv[2], 0) for l in open(sys.argv[1])
          if json.loads(l)["event"] == "close"))' "$A" "$1"
}
check "bytes up == the close lines'" "$(m 'aisb_gate_bytes_total{direction="up"}')" \
    "$(sum_audit bytes_up)"
check "bytes down == the close lines'" \
    "$(m 'aisb_gate_bytes_total{direction="down"}')" "$(sum_audit bytes_down)"
down=$(m 'aisb_gate_bytes_total{direction="down"}')
[ "$down" -gt 0 ] && ok || bad "no bytes down counted"

# DNS: ok.test, priv.test, dead.test, gone.test looked up once each (the
# server saw them), ok.test then answered three times from the cache
looked=$(awk '{ print $1 }' "$tmp/dns.log" | sort -u | wc -l)
check "the DNS server saw 4 names" "$looked" 4
check "histogram count == look-ups" \
    "$(m aisb_gate_dns_lookup_duration_seconds_count)" "$looked"
check "+Inf bucket" \
    "$(m 'aisb_gate_dns_lookup_duration_seconds_bucket{le="+Inf"}')" "$looked"
check "look-up failures" "$(m aisb_gate_dns_lookup_failures_total)" 1
check "cache misses" "$(m aisb_gate_dns_cache_misses_total)" 4
check "cache hits" "$(m aisb_gate_dns_cache_hits_total)" 3

E='aisb_gate_errors_total{kind'
check "errors: dns_failed" "$(m "$E=\"dns_failed\"}")" 1
check "errors: connect_failed" "$(m "$E=\"connect_failed\"}")" 1
check "errors: bad_request" "$(m "$E=\"bad_request\"}")" 1
check "errors: connect_timeout" "$(m "$E=\"connect_timeout\"}")" 0
check "errors: audit lines lost" "$(m "$E=\"audit_lines_lost\"}")" 0
check "reloads ok" "$(m 'aisb_gate_reloads_total{outcome="ok"}')" 1
check "reloads failed" "$(m 'aisb_gate_reloads_total{outcome="failed"}')" 1
check "reopens (2 reloads, 1 SIGUSR1)" \
    "$(m 'aisb_gate_audit_reopens_total{outcome="ok"}')" 3

# the control socket's reopen is the signal's
mv "$A" "$A.1"
check "control reopen" "$(control "$tmp/ctl.sock" reopen reopen)" ok
scrape 9128
check "reopens after control reopen" \
    "$(m 'aisb_gate_audit_reopens_total{outcome="ok"}')" 4
[ -e "$A" ] && ok || bad "control reopen did not create the log again"
# a reopen that fails keeps the old file and is counted
mv "$A" "$A.2"
mkdir "$A"
check "a failed reopen" "$(control "$tmp/ctl.sock" reopen reopen)" failed
scrape 9128
check "reopens failed" "$(m 'aisb_gate_audit_reopens_total{outcome="failed"}')" 1
check "the old file still written" "$(proxy_get "http://evil.test:$up/")" "000 403"
check "... its line in the old file" \
    "$(audit_count "$A.2" host=evil.test decision=deny)" 1
rmdir "$A"
mv "$A.2" "$A"

# bad scrapes: answered and closed; the gate and its metrics go on
check "another path: 404" "$(raw_req 9128 'GET /other HTTP/1.1\r\n\r\n')" \
    "HTTP/1.1 404 Not Found"
check "another method: 405" "$(raw_req 9128 'POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n')" \
    "HTTP/1.1 405 Method Not Allowed"
check "garbage: 400" "$(raw_req 9128 'GARBAGE\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
check "a binary line: 400" "$(raw_req 9128 '\001\002\003\r\n\r\n')" \
    "HTTP/1.1 400 Bad Request"
big=$(head -c 5000 /dev/zero | tr '\0' a)
check "a head over 4 KiB: 400" \
    "$(raw_req 9128 "GET /metrics HTTP/1.1\r\nX-Big: $big\r\n\r\n")" \
    "HTTP/1.1 400 Bad Request"
check "a query string is ignored" \
    "$(raw_req 9128 'GET /metrics?x=1 HTTP/1.0\r\n\r\n')" "HTTP/1.1 200 OK"
# more silent scrapers than it serves at once: the extra ones are closed,
# proxy traffic is not touched
exec 5<>/dev/tcp/127.0.0.1/9128 6<>/dev/tcp/127.0.0.1/9128
exec 7<>/dev/tcp/127.0.0.1/9128 8<>/dev/tcp/127.0.0.1/9128
check "proxy while scrapers hang" "$(proxy_get "http://ok.test:$up/x")" "000 200"
check "a fifth scraper is closed" "$(raw_req 9128 'GET /metrics HTTP/1.1\r\n\r\n')" closed
exec 5>&- 6>&- 7>&- 8>&-
# the 5 s bound is the whole scrape's, not a byte's: one byte a second
# for 7 s does not keep a slot
check "a trickling scrape is closed at its deadline" "$("$PY" - <<'PY'
import socket, time
s = socket.create_connection(("127.0.0.1", 9128))
s.settimeout(3)
try:
    for c in b"GET /me":
        s.send(bytes([c]))
        time.sleep(1)
    print("closed" if s.recv(100) == b"" else "answered")
except (BrokenPipeError, ConnectionResetError):
    print("closed")
except socket.timeout:
    print("still open")
PY
)" closed
wait_metric 9128 'aisb_gate_decisions_total{decision="allow",reason="allowed"}' 5
check "metrics after the bad scrapes" \
    "$(m 'aisb_gate_decisions_total{decision="allow",reason="allowed"}')" 5
kill -0 "$gate_pid" && ok || bad "the gate died"

# --- two workers: the numbers are the gate's ----------------------------------
start_gate two "$tmp/policy.yaml" --workers 2 --metrics 127.0.0.1:9129
many() {	# many HOST N: N requests at once (waits for these only)
	local i cp=()
	for i in $(seq 1 "$2"); do
		curl -sS -m 10 -o /dev/null -x "http://127.0.0.1:$gate_port" \
		    "http://$1:$up/$i" 2>/dev/null &
		cp+=($!)
	done
	wait "${cp[@]}" || true
}
many ok.test 30
many evil.test 10
both=$(audit_count "$tmp/audit.two.log" event=decision 'conn=*[13579]')
check "worker 0 decided some" "$([ "$both" -gt 0 ] && [ "$both" -lt 40 ] &&
    echo yes || echo "no ($both of 40 odd)")" yes
# several scrapes, whichever worker answers each: the same sums
for i in 1 2 3 4 5 6; do
	wait_metric 9129 aisb_gate_connections_active 0
	check "scrape $i: allowed" "$(m "$D=\"allow\",reason=\"allowed\"}")" 30
	check "scrape $i: denied" \
	    "$(m "$D=\"deny\",reason=\"host_not_allowed\"}")" 10
	check "scrape $i: connections" "$(m aisb_gate_connections_total)" 40
	check "scrape $i: workers" "$(m aisb_gate_workers)" 2
done
# SIGUSR1 to the supervisor: both workers reopen (what each writes next
# goes to the new file), counted once (by worker 0), as a reload is
mv "$tmp/audit.two.log" "$tmp/audit.two.log.1"
kill -USR1 "$gate_pid"
wait_metric 9129 'aisb_gate_audit_reopens_total{outcome="ok"}' 1
sleep 0.5
many ok.test 20
wait_metric 9129 aisb_gate_connections_active 0
check "SIGUSR1 counted once" \
    "$(m 'aisb_gate_audit_reopens_total{outcome="ok"}')" 1
check "after SIGUSR1 both workers write the new file" \
    "$(audit_count "$tmp/audit.two.log" event=decision) $(audit_count "$tmp/audit.two.log.1" event=decision)" \
    "20 40"
kill -HUP "$gate_pid"
wait_metric 9129 'aisb_gate_reloads_total{outcome="ok"}' 1
sleep 0.5
check "SIGHUP is one reload with two workers" \
    "$(m 'aisb_gate_reloads_total{outcome="ok"}')" 1

finish
