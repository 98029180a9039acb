#!/bin/bash
# aisb-gate: resolution and classification.  Names that resolve to
# loopback, private, link-local (metadata), ::1 and IPv4-mapped loopback are
# denied unless allow_ranges exempts them, and never dialled; DNS rebinding
# cannot swap in an unchecked address; NXDOMAIN, DNS timeout, a refusing and
# a black-holed upstream; the next address after a failed one; a stale
# answer served for the grace period.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
for a in 127.0.0.1 127.0.0.2 10.0.0.1 169.254.169.254 ::1; do
	start_upstream http "$a" "$up"
done
start_dns '{
 "pub.x.test": {"A": ["192.0.2.10"]},
 "lo.x.test": {"A": ["127.0.0.1"]},
 "ten.x.test": {"A": ["10.0.0.1"]},
 "meta.x.test": {"A": ["169.254.169.254"]},
 "six.x.test": {"AAAA": ["::1"]},
 "mapped.x.test": {"AAAA": ["::ffff:127.0.0.1"]},
 "zero.x.test": {"A": ["0.0.0.0"]},
 "dual.x.test": {"A": ["192.0.2.10"], "AAAA": ["::1"]},
 "nx.x.test": {"rcode": "NXDOMAIN"},
 "slow.x.test": {"rcode": "DROP"},
 "refuse.x.test": {"A": ["192.0.2.20"]},
 "hole.x.test": {"A": ["198.51.100.1"]},
 "two.x.test": {"A": ["192.0.2.20", "192.0.2.10"]},
 "rebind.x.test": {"A": ["127.0.0.1"], "ttl": 3},
 "stale.x.test": {"A": ["192.0.2.10"], "ttl": 1}}'

policy() {	# policy FILE ALLOW_RANGES
	cat >"$1" <<EOF
version: 1
allow:
  - host: "*.x.test"
    ports: [$up]
  - cidr: 127.0.0.1/32
    ports: ["1-65535"]
allow_ranges: $2
dns:
  servers: ["127.0.0.1:$dns_port"]
  min_ttl: 1
  max_ttl: 3
EOF
}
policy "$tmp/strict.yaml" "[$test_ranges]"
policy "$tmp/exempt.yaml" "[$test_ranges, 127.0.0.1/32, 10.0.0.0/8, \"::1/128\"]"

# --- without exemptions: every internal answer is refused, never dialled
start_gate strict "$tmp/strict.yaml" --dns-timeout 2 --connect-timeout 2
A=$tmp/audit.strict.log
check "pub" "$(proxy_get -p "http://pub.x.test:$up/")" "200 200"
expect_audit "$A" host=pub.x.test decision=allow addr=192.0.2.10
for n in lo ten meta six mapped; do
	check "$n" "$(proxy_get -p "http://$n.x.test:$up/")" "403 000"
	grep -q 'reason=address_denied.*allow_ranges' <<<"$(decision_header)" && ok ||
	    bad "$n: decision header: $(decision_header)"
	expect_audit "$A" host="$n.x.test" decision=deny status=403 \
	    reason=address_denied
done
check "GET lo (forward)" "$(proxy_get "http://lo.x.test:$up/")" "000 403"
expect_audit "$A" method=GET host=lo.x.test reason=address_denied
for a in 127.0.0.1 10.0.0.1 169.254.169.254 ::1; do
	check "$a never dialled" "$(upstream_accepts "$a")" 0
done

# A and AAAA: the loopback AAAA is dropped, the public A is dialled
check "dual" "$(proxy_get -p "http://dual.x.test:$up/")" "200 200"
expect_audit "$A" host=dual.x.test decision=allow addr=192.0.2.10

# Resolution failures: 502 with the reason
check "NXDOMAIN" "$(proxy_get -p "http://nx.x.test:$up/")" "502 000"
grep -q 'reason=dns_failed; detail="name not found"' <<<"$(decision_header)" && ok ||
    bad "nx: decision header: $(decision_header)"
expect_audit "$A" host=nx.x.test decision=error status=502 reason=dns_failed \
    detail="name not found"
check "DNS timeout" "$(proxy_get -p "http://slow.x.test:$up/")" "502 000"
expect_audit "$A" host=slow.x.test status=502 reason=dns_failed detail=timeout

# Upstream refusing, black-holed, and the next address after a refusal
check "refused" "$(proxy_get -p "http://refuse.x.test:$up/")" "502 000"
expect_audit "$A" host=refuse.x.test status=502 reason=connect_failed \
    addr=192.0.2.20
check "black hole" "$(proxy_get -p "http://hole.x.test:$up/")" "504 000"
expect_audit "$A" host=hole.x.test status=504 reason=connect_timeout \
    addr=198.51.100.1
check "next address" "$(proxy_get -p "http://two.x.test:$up/")" "200 200"
expect_audit "$A" host=two.x.test decision=allow addr=192.0.2.10

# Reload onto other DNS servers while a look-up is pending on the old ones:
# the pending one ends on the old channel, new look-ups use the new servers
# and the cache starts empty (pub.x.test now answers 192.0.2.11)
start_upstream http 192.0.2.11 "$up"
printf '{"pub.x.test": {"A": ["192.0.2.11"]}}\n' >"$tmp/zone2.json"
"$PY" "$here/gate_dns.py" --zone "$tmp/zone2.json" --port-file "$tmp/dns2.port" \
    >/dev/null 2>"$tmp/dns2.err" &
pids+=($!)
wait_file "$tmp/dns2.port"
sed "s/127.0.0.1:$dns_port/127.0.0.1:$(cat "$tmp/dns2.port")/" \
    "$tmp/strict.yaml" >"$tmp/strict2.yaml.tmp"
proxy_get -p "http://slow.x.test:$up/" >"$tmp/pending.out" &
pending=$!
sleep 0.5
mv "$tmp/strict2.yaml.tmp" "$tmp/strict.yaml"
kill -HUP "$gate_pid"
sleep 0.3
check "after DNS change" "$(proxy_get -p "http://pub.x.test:$up/")" "200 200"
expect_audit "$A" host=pub.x.test decision=allow addr=192.0.2.11
wait "$pending" || true
check "look-up pending over the change" "$(cat "$tmp/pending.out")" "502 000"
check "gate alive after the old channel went" \
    "$(proxy_get -p "http://pub.x.test:$up/")" "200 200"

# --- with allow_ranges: exempted addresses pass, others still do not
start_gate exempt "$tmp/exempt.yaml" --dns-grace 30 --dns-timeout 2
B=$tmp/audit.exempt.log
check "lo exempt" "$(proxy_get -p "http://lo.x.test:$up/")" "200 200"
expect_audit "$B" host=lo.x.test decision=allow addr=127.0.0.1
check "ten exempt" "$(proxy_get -p "http://ten.x.test:$up/")" "200 200"
expect_audit "$B" host=ten.x.test decision=allow addr=10.0.0.1
check "meta still denied" "$(proxy_get -p "http://meta.x.test:$up/")" "403 000"
expect_audit "$B" host=meta.x.test reason=address_denied
check "mapped loopback exempt" "$(proxy_get -p "http://mapped.x.test:$up/")" \
    "200 200"
check "::1 exempt" "$(proxy_get -p "http://six.x.test:$up/")" "200 200"
expect_audit "$B" host=six.x.test decision=allow addr=::1
check "::1 dialled once exempt" "$(upstream_accepts ::1)" 1
check "169.254.169.254 never dialled" "$(upstream_accepts 169.254.169.254)" 0

# Loopback exempted, yet the gate never dials itself
check "the gate itself" "$(proxy_get -p "http://127.0.0.1:$gate_port/")" "403 000"
expect_audit "$B" host=127.0.0.1 port="$gate_port" reason=address_denied

# DNS rebinding: 127.0.0.1 (exempt) is pinned for the TTL; the next answer,
# 127.0.0.2, is classified like the first and refused: never dialled.
check "rebind first" "$(proxy_get -p "http://rebind.x.test:$up/")" "200 200"
lookups() { grep -c '^rebind.x.test A$' "$tmp/dns.log" || true; }
n1=$(lookups)
set_zone "$(sed 's/"rebind.x.test": {"A": \["127.0.0.1"\]/"rebind.x.test": {"A": ["127.0.0.2"]/' "$tmp/zone.json")"
check "rebind pinned" "$(proxy_get -p "http://rebind.x.test:$up/")" "200 200"
check "no look-up while pinned" "$(lookups)" "$n1"
sleep 3.5
check "rebind after TTL" "$(proxy_get -p "http://rebind.x.test:$up/")" "403 000"
n2=$(lookups)
[ "$n2" -gt "$n1" ] && ok || bad "rebind: no new look-up after the TTL ($n1, $n2)"
expect_audit "$B" host=rebind.x.test decision=deny reason=address_denied \
    detail="127.0.0.2 is loopback 127.0.0.0/8"
check "rebind allow lines" "$(audit_count "$B" host=rebind.x.test \
    event=decision decision=allow addr=127.0.0.1)" 2
check "127.0.0.2 never dialled" "$(upstream_accepts 127.0.0.2)" 0

# Grace: after the TTL the name stops resolving; the last answer is served
check "stale first" "$(proxy_get -p "http://stale.x.test:$up/")" "200 200"
set_zone "$(sed 's/"stale.x.test": {"A": \["192.0.2.10"\], "ttl": 1}/"stale.x.test": {"rcode": "DROP"}/' "$tmp/zone.json")"
sleep 2.5
check "stale served" "$(proxy_get -p "http://stale.x.test:$up/")" "200 200"
expect_audit "$B" host=stale.x.test decision=allow detail="stale DNS answer"
grep -q 'stale.x.test: refresh failed (timeout), serving the last answer' \
    "$tmp/gate.exempt.err" && ok || bad "no stale log line"
# and again (from the cache for min_ttl after the failed refresh)
check "stale again" "$(proxy_get -p "http://stale.x.test:$up/")" "200 200"
check "stale lines" "$(audit_count "$B" host=stale.x.test event=decision \
    detail="stale DNS answer")" 2

# The gate on 127.0.0.1 with all of loopback (and 0.0.0.0, ::) exempted and
# allowed: no other spelling of its own address on its port may loop it
# into itself (IPv4-mapped, 0.0.0.0 which the kernel connects to
# 127.0.0.1, another 127/8 address), by literal or by name.
cat >"$tmp/self.yaml" <<EOF
version: 1
allow:
  - host: "*.x.test"
    ports: ["1-65535"]
  - cidr: 127.0.0.0/8
    ports: ["1-65535"]
  - cidr: 0.0.0.0/32
    ports: ["1-65535"]
  - cidr: "::ffff:127.0.0.0/104"
    ports: ["1-65535"]
allow_ranges: [$test_ranges, 127.0.0.0/8, 0.0.0.0/32, "::1/128", "::/128"]
dns:
  servers: ["127.0.0.1:$dns_port"]
EOF
start_gate self "$tmp/self.yaml"
S=$tmp/audit.self.log
for t in "127.0.0.1" "[::ffff:127.0.0.1]" "0.0.0.0" "127.0.0.2" \
    "mapped.x.test" "zero.x.test" "lo.x.test"; do
	check "self-loop via $t" \
	    "$(proxy_get -p "http://$t:$gate_port/")" "403 000"
done
check "self-loop lines" "$(audit_count "$S" event=decision decision=deny \
    reason=address_denied detail="* is the gate itself")" 7
check "self-loop: no tunnel" "$(audit_count "$S" decision=allow)" 0
# the same addresses on another port are dialled
check "mapped, other port" "$(proxy_get -p "http://mapped.x.test:$up/")" \
    "200 200"

# No dns.servers in the policy: the system's resolver configuration, here a
# resolv.conf bind-mounted in a mount namespace of the gate's own.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" --port 53 \
	    --port-file "$tmp/dns53.port" >/dev/null 2>"$tmp/dns53.err" &
	pids+=($!)
	wait_file "$tmp/dns53.port"
	echo "nameserver 127.0.0.1" >"$tmp/resolv.conf"
	sed '/^dns:/,$d' "$tmp/strict.yaml" >"$tmp/sysdns.yaml"
	rm -f "$tmp/gate.sys.port"
	unshare -m "$BASH" -c 'mount --bind "$1" /etc/resolv.conf && shift &&
	    exec "$@"' sh "$tmp/resolv.conf" "$gate_bin" -d -f "$tmp/sysdns.yaml" \
	    -l 127.0.0.1:0 --port-file "$tmp/gate.sys.port" \
	    --audit "$tmp/audit.sys.log" >/dev/null 2>"$tmp/gate.sys.err" &
	pids+=($!)
	wait_file "$tmp/gate.sys.port"
	gate_port=$(cat "$tmp/gate.sys.port")
	check "system resolver" "$(proxy_get -p "http://pub.x.test:$up/")" \
	    "200 200"
	expect_audit "$tmp/audit.sys.log" host=pub.x.test decision=allow \
	    addr=192.0.2.10
fi

finish
