#!/bin/bash
# End to end: --net direct in real podman sessions, as root (rootful: the
# aisb subordinate range) and then as an ordinary user the test creates,
# in that user's own 0700 folder (rootless: keep-id, the container started
# as its own root); and, in every network mode, the command unable to
# signal its supervisors.  Both rest on one thing: the enforcer, the
# refresher and the recorder run under a uid that is not the command's.
#
# For each of the two, as the command sees it and as the host's servers
# saw it:
#   - the enforcer pins direct.test (the host's loopback as the container
#     sees it, which allow_ranges must open) and its DNS stub answers the
#     command for the policy's exact names only; the command's own DNS,
#     its UDP and another port of the same address never reach the host;
#   - the resolver answers the refresher only: while the refresher
#     refreshes every second (TTL 1), the command sends a query from every
#     port of the ephemeral range to the resolver, again and again for
#     5 s (conntrack keeps the refresher's closed flows; only its uid is
#     let out), and the resolver's log holds the refresher's queries and
#     none of the command's;
#   - an answer that changes is followed: the new address is pinned and
#     the old one refused once the stub stops naming it;
#   - without allow_ranges the host's loopback is a private answer: refused;
#   - --record: the capture in SESSION/recording, a folder the command can
#     neither list nor write (the container root's, mode 0700, inside and
#     on the host during the session; the user's again after it, rootless),
#     which aisb sessions verify accepts and tshark reads without a
#     warning: the allowed flow's SYN says "aisb accept", the echo port's
#     "aisb drop", the raw DNS "aisb drop dns", and the HTTP stream gives
#     back each way the request the server logged and the body curl saved;
#   - kill(2) with signal 0 and with SIGTERM, from the command, of PID 1
#     (catatonit), of its parent (the enforcer; in direct mode the
#     refresher) and of the recorder fails with EPERM, in gate, none and
#     direct mode.
#
# Servers run on the host's loopback only (a DNS responder, an HTTP
# upstream, a TCP echo, a UDP sink); inside, the host loopback is 10.0.2.2
# (slirp4netns allow_host_loopback), so every packet goes to a service
# this test started.  The sweep is tests/integration/enforce_probe's,
# copied into the workspace (the image's C library is the host's Debian
# one).  Needs root, podman, mmdebstrap, useradd, runuser and AISB_E2E=1
# (tests/run.sh sets it); without tshark the capture's packets are not
# read.  Everything it makes is removed by the EXIT trap (tests/e2e/
# lib.sh): its podman store, the test user with its store and processes,
# the /dev/net/tun mode.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start direct mmdebstrap curl useradd userdel runuser "$PY"
probe=$build/tests/integration/enforce_probe

[ -x "$probe" ] || { echo "SKIP: build tests/integration/enforce_probe (make check does)"; exit 77; }
e2e_seed_image curl
vol=aisb-e2e-home-$$

# --- host-side servers --------------------------------------------------
# zone ADDR: direct.test answers ADDR, TTL 1 (written whole, then renamed:
# the responder reads the file for every query)
zone() {
	printf '{"direct.test": {"A": ["%s"], "ttl": 1}}\n' "$1" >"$tmp/zone.json.tmp"
	mv "$tmp/zone.json.tmp" "$tmp/zone.json"
}
zone 10.0.2.2
e2e_servers dns http echo udp
: >"$tmp/echo.log"; : >"$tmp/udp.log"; : >"$tmp/dns.log"

query() {	# a DNS query for NAME (one label + .test) as printf escapes
	printf '\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x%02x%s\\x04test\\x00\\x00\\x01\\x00\\x01' \
	    "${#1}" "$1"
}

# The command's view of its supervisors: kill(2) of PID 1 (podman's
# init), of its parent (the enforcer, the refresher) and of every
# aisb-record, with signal 0 and with SIGTERM; one line each: WHO SIGNAL
# EPERM|sent|the other error.
supervisors='for t in init:1 parent:$PPID $(grep -lx aisb-record /proc/[0-9]*/comm 2>/dev/null | sed "s|^/proc/\([0-9]*\)/comm\$|recorder:\1|"); do
	for s in 0 TERM; do
		if e=$(kill -$s ${t#*:} 2>&1); then echo "${t%%:*} $s sent"
		else case $e in
		*"Operation not permitted"*) echo "${t%%:*} $s EPERM" ;;
		*) echo "${t%%:*} $s $e" ;;
		esac; fi
	done
done'
sup_want="init 0 EPERM init TERM EPERM parent 0 EPERM parent TERM EPERM "

# --- who runs the sessions ------------------------------------------------
# as WHO: root (rootful, in $tmp/ws) or user (rootless, in the user's own
# 0700 folder); sets the runner, the workspace, the policy file and the
# state folder of that identity.
as() {
	who=$1
	if [ "$who" = root ]; then
		run=("$aisb") ws=$tmp/ws pol=$tmp/direct.yaml
		state=$XDG_STATE_HOME/aisb/sessions
	else
		run=(as_user aisb) ws=$e2e_home/proj pol=$e2e_home/direct.yaml
		state=$e2e_home/.local/state/aisb/sessions
		install -d -m 0700 -o "$e2e_uid" -g "$e2e_uid" "$ws"
	fi
	install -m 0755 -o "${e2e_uid:-0}" "$probe" "$ws/probe"
}

# policy RANGE...: the policy of the sessions, direct.test on the HTTP port
policy() {
	local ranges
	ranges=$(printf '%s, ' "$@")
	cat >"$pol" <<EOF
version: 1
allow:
  - host: direct.test
    ports: [$http]
  - host: "*.wild.test"
allow_ranges: [${ranges%, }]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF
	[ "$who" = root ] || chown "$e2e_uid" "$pol"
}

# sess ARGS...: a session of $who with the policy and the home volume;
# out and err in $tmp, $sd its session folder.
sess() {
	local rc=0 before
	before=$(ls "$state" 2>/dev/null || true)
	(cd "$ws" && "${run[@]}" --policy "$pol" --home-volume "$vol" \
	    --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	sd=$state/$(comm -13 <(printf '%s\n' "$before") <(ls "$state") | sed -n 1p)
	return "$rc"
}

# dns_since N: the resolver's log after its first N lines
dns_since() { tail -n +"$(($1 + 1))" "$tmp/dns.log"; }

direct_suite() {
	local w=$who n0 n base rc sw

	# 1. the stub, the pins, the escapes, the sweep
	policy 10.0.2.2/32 192.0.2.0/24
	: >"$tmp/echo.log"; : >"$tmp/udp.log"
	n0=$(wc -l <"$tmp/dns.log")
	rc=0; sess --net direct -- bash -c '
		printf "'"$(query direct-escape)"'" >/dev/udp/10.0.2.2/'"$dns"'
		env | grep -ci _proxy
		getent hosts direct.test | cut -d" " -f1
		curl -sS -o /dev/null -w "%{http_code}\n" "http://direct.test:'"$http"'/d"
		getent hosts denied.test >/dev/null; echo "denied $?"
		getent hosts x.wild.test >/dev/null; echo "wild $?"
		curl -sS --max-time 5 "http://10.0.2.2:'"$echo_port"'/" >/dev/null 2>&1; echo "echo $?"
		echo hello >/dev/udp/10.0.2.2/'"$udp"'; sleep 1
		grep -E "^(CapEff|NoNewPrivs):" /proc/self/status | tr -s "\t" " "
		id -u
		./probe sweep:10.0.2.2:'"$dns"':5 dns:10.0.2.2:'"$dns" || rc=$?
	check "$w direct: exit" "$rc" 0
	check "$w direct: no proxy variables" "$(sed -n 1p "$tmp/out")" 0
	check "$w direct: the stub answers a policy name" "$(sed -n 2p "$tmp/out")" 10.0.2.2
	check "$w direct: allowed name and port" "$(sed -n 3p "$tmp/out")" 200
	check "$w direct: other names do not resolve" "$(sed -n 4p "$tmp/out")" "denied 2"
	check "$w direct: wildcards are left out" "$(sed -n 5p "$tmp/out")" "wild 2"
	if [ "$(sed -n 6p "$tmp/out")" != "echo 0" ]; then ok; else bad "$w direct: another port of the same address was open"; fi
	check "$w direct: CapEff" "$(sed -n 7p "$tmp/out")" "CapEff: 0000000000000000"
	check "$w direct: NoNewPrivs" "$(sed -n 8p "$tmp/out")" "NoNewPrivs: 1"
	check "$w direct: uid" "$(sed -n 9p "$tmp/out")" 1000
	if grep -q accept "$tmp/echo.log"; then bad "$w direct: echo server saw a connection"; else ok; fi
	if [ -s "$tmp/udp.log" ]; then bad "$w direct: UDP reached the host"; else ok; fi
	if grep -q 'left out (first: .*wild.test)' "$tmp/err"; then ok; else bad "$w direct: no word about the wildcard: $(cat "$tmp/err")"; fi
	if [ -e "$sd/gate.log" ]; then bad "$w: --net direct started a gate"; else ok; fi
	if grep -q '^allow-range 10.0.2.2/32$' "$sd/plan" && grep -q '^dns-stub 127.0.0.1$' "$sd/plan"; then
		ok; else bad "$w direct plan: $(cat "$sd/plan")"; fi
	# the sweep: every datagram refused at the sender, none at the
	# resolver, which heard the refresher all along
	if grep -Eq "^sweep:10.0.2.2:$dns:5 sent 0 refused [1-9][0-9]{4,}\$" "$tmp/out"; then ok; else
		bad "$w sweep: $(grep '^sweep' "$tmp/out")"; fi
	check "$w sweep: the probe's own query" "$(awk '$1 == "dns:10.0.2.2:'"$dns"'" { print $2 }' "$tmp/out")" blocked
	n=$(dns_since "$n0" | grep -c '^direct\.test ' || true)
	if [ "$n" -ge 6 ]; then ok; else bad "$w sweep: the refresher asked $n times"; fi
	check "$w: none of the command's queries reached the resolver" \
	    "$(dns_since "$n0" | grep -c -e 'escape\.test ' -e '\.sweep\.test ' -e '^probe\.test ' || true)" 0

	# 2. without allow_ranges the host's loopback is a private address
	policy 192.0.2.0/24
	rc=0; sess --net direct -- sh -c '
		getent hosts direct.test >/dev/null; echo "resolve $?"
		curl -sS --max-time 5 -o /dev/null "http://10.0.2.2:'"$http"'/p" 2>/dev/null; echo "curl $?"' || rc=$?
	check "$w direct, no range: exit" "$rc" 0
	check "$w direct, no range: nothing pinned" "$(sed -n 1p "$tmp/out")" "resolve 2"
	if [ "$(sed -n 2p "$tmp/out")" != "curl 0" ]; then ok; else bad "$w direct: private address reachable without allow_ranges"; fi
	if grep -q 'refusing address 10.0.2.2 (private 10.0.0.0/8)' "$tmp/err"; then ok; else bad "$w direct: no refusal logged: $(cat "$tmp/err")"; fi

	# 3. a changed answer: direct.test moves from the host's loopback to
	# 192.0.2.7 (nothing is sent there); once the stub names only the new
	# address, the old one has under a second left in the sets
	policy 10.0.2.2/32 192.0.2.0/24
	rm -f "$ws/switch"
	: >"$tmp/http.log"
	(
		for _ in $(seq 600); do [ -e "$ws/switch" ] && break; sleep 0.1; done
		zone 192.0.2.7
	) &
	sw=$!
	rc=0; sess --net direct -- bash -c '
		curl -sS -o /dev/null -w "before %{http_code}\n" "http://direct.test:'"$http"'/r1"
		: >switch
		for i in $(seq 100); do
			a=$(getent ahostsv4 direct.test | cut -d" " -f1 | sort -u | tr "\n" " ")
			[ "$a" = "192.0.2.7 " ] && break
			sleep 0.1
		done
		echo "answer $a"
		sleep 1.5
		curl -sS --max-time 3 -o /dev/null "http://10.0.2.2:'"$http"'/r2" 2>/dev/null; echo "old $?"' || rc=$?
	wait "$sw" || true
	zone 10.0.2.2
	check "$w re-resolution: exit" "$rc" 0
	check "$w re-resolution: before" "$(sed -n 1p "$tmp/out")" "before 200"
	check "$w re-resolution: the new answer" "$(sed -n 2p "$tmp/out")" "answer 192.0.2.7 "
	if [ "$(sed -n 3p "$tmp/out")" != "old 0" ]; then ok; else bad "$w re-resolution: the old address stayed open"; fi
	check "$w re-resolution: connections the server saw" "$(grep -c '^accept' "$tmp/http.log" || true)" 1

	# 4. --record: the capture where the command cannot reach, and the
	# supervisors, the recorder among them, out of its reach
	policy 10.0.2.2/32
	rc=0; sess --net direct --record -- bash -c '
		curl -sS -o body -w "%{http_code}\n" "http://direct.test:'"$http"'/recorded?x=1"
		curl -sS --max-time 3 "http://10.0.2.2:'"$echo_port"'/" >/dev/null 2>&1; echo "echo $?"
		printf "'"$(query escape)"'" >/dev/udp/10.0.2.2/'"$dns"' 2>/dev/null; echo "dns $?"
		ls /run/aisb/record >/dev/null 2>&1; echo "ls $?"
		: >/run/aisb/record/x 2>/dev/null; echo "write $?"
		stat -c "folder %u %a" /run/aisb/record
		'"$supervisors" || rc=$?
	check "$w record: exit" "$rc" 0
	check "$w record: allowed fetch" "$(sed -n 1p "$tmp/out")" 200
	if [ "$(sed -n 2p "$tmp/out")" != "echo 0" ]; then ok; else bad "$w record: the echo port was open"; fi
	if [ "$(sed -n 4p "$tmp/out")" != "ls 0" ]; then ok; else bad "$w record: the command listed the record folder"; fi
	if [ "$(sed -n 5p "$tmp/out")" != "write 0" ]; then ok; else bad "$w record: the command wrote into the record folder"; fi
	check "$w record: the folder inside" "$(sed -n 6p "$tmp/out")" "folder 0 700"
	check "$w direct: the supervisors" "$(sed -n '7,$p' "$tmp/out" | tr '\n' ' ')" \
	    "${sup_want}recorder 0 EPERM recorder TERM EPERM "
	if [ "$who" = root ]; then
		base=$(awk -F: '$1 == "aisb" { print $2; exit }' /etc/subuid)
	else
		base=$e2e_uid	# the folder was given back to the user
	fi
	cap=$sd/recording/capture.pcapng
	check "$w record: folder owner and mode" "$(stat -c '%u %a' "$sd/recording" 2>&1)" "$base 700"
	check "$w record: capture owner and mode" "$(stat -c '%u %a' "$cap" 2>&1)" "$base 600"
	rc=0; (cd "$ws" && "${run[@]}" sessions verify "$(basename "$sd")") \
	    >/dev/null 2>"$tmp/verify.err" || rc=$?
	check "$w record: sessions verify" "$rc" 0
	if [ -s "$cap" ] && command -v tshark >/dev/null; then
		capture_checks "$w" "$cap" "$ws/body"
	fi

	# 5. the supervisors in the other modes
	for m in gate none; do
		rc=0; sess --net "$m" -- bash -c "$supervisors" || rc=$?
		check "$w $m: exit" "$rc" 0
		check "$w $m: the supervisors" "$(tr '\n' ' ' <"$tmp/out")" "$sup_want"
	done
}

# capture_checks WHO FILE BODY: the recording as a reviewer reads it
capture_checks() {
	local w=$1 cap=$2 n stream
	fields() { tshark -r "$cap" -Y "$1" -T fields -e "$2" 2>/dev/null; }
	tshark -r "$cap" -T fields -e frame.number >"$tmp/frames" 2>"$tmp/tshark.err" || true
	if grep -vxqF 'Running as user "root" and group "root". This could be dangerous.' "$tmp/tshark.err"; then
		bad "$w tshark warned: $(cat "$tmp/tshark.err")"
	else
		ok
	fi
	n=$(wc -l <"$tmp/frames")
	if [ "$n" -ge 8 ]; then ok; else bad "$w capture: $n packets"; fi
	check "$w the allowed flow's SYN" \
	    "$(fields "tcp.dstport == $http && tcp.flags.syn == 1 && tcp.flags.ack == 0" frame.comment | sed -n 1p)" \
	    "aisb accept"
	check "$w the echo port's SYN" \
	    "$(fields "tcp.dstport == $echo_port" frame.comment | sort -u | tr '\n' ' ')" "aisb drop "
	if grep -qx 'aisb drop dns' <<<"$(fields "udp.dstport == $dns && ip.src != 10.0.2.2" frame.comment)"; then
		ok; else bad "$w no aisb drop dns: $(fields "udp.dstport == $dns" frame.comment | sort | uniq -c)"; fi
	if [ "$(fields "tcp.srcport == $http" frame.number | wc -l)" -ge 3 ]; then ok; else bad "$w no received packets recorded"; fi
	# the HTTP stream each way: the request as the server logged it, the
	# body curl saved at the end of the answer
	stream=$(fields "tcp.dstport == $http" tcp.stream | sed -n 1p)
	tshark -r "$cap" -q -z "follow,tcp,raw,$stream" 2>/dev/null >"$tmp/follow"
	"$PY" - "$tmp/follow" "$3" <<'PY' >"$tmp/follow.res"
import sys
lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("Node 1:")) + 1
c, s = b"", b""
for l in lines[start:]:
    if l.startswith("="):
        break
    if l.startswith("\t"):
        s += bytes.fromhex(l.strip())
    elif l:
        c += bytes.fromhex(l.strip())
body = open(sys.argv[2], "rb").read()
print("request", "ok" if c.startswith(b"GET /recorded?x=1 HTTP/1.1\r\n") and c.endswith(b"\r\n\r\n") else repr(c[:80]))
print("answer", "ok" if s.startswith(b"HTTP/1.") and b" 200 " in s.split(b"\r\n")[0] and len(body) > 0 and s.endswith(body) else repr(s[:80]))
PY
	check "$w stream: the request" "$(sed -n 1p "$tmp/follow.res")" "request ok"
	check "$w stream: the answer ends with the body curl saved" "$(sed -n 2p "$tmp/follow.res")" "answer ok"
}

as root
direct_suite
e2e_user aisbdir
as user
direct_suite

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
