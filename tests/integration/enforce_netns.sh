#!/bin/bash
# aisb-enforce against the real kernel, in network namespaces made here.
#
#   host ns (aisb-eh-PID)                      sandbox ns (aisb-es-PID)
#   10.199.0.1 10.199.0.2  fd00:199::1,2  <-veth->  10.199.0.10  fd00:199::10
#   tcp 43127 43128, udp echo 7777, dns 53         tcp 127.0.0.1:43129
#   (dns on 10.199.0.1 and fd00:199::1)             dns 127.0.0.53:53
#                                                   tcp 10.199.0.10:43130
#                                                   udp echo 10.199.0.10:7778
#
# The addresses exist only inside these namespaces.  The probe
# (enforce_probe.c) runs once without the enforcer as a control, then under
# aisb-enforce with several plans, and every line it prints is checked.
# Failure injection: bad plans and usage exit 78, missing capabilities exit
# 77, and in both cases the command never runs.  Needs root; skips (77)
# otherwise.  Everything made here is removed on exit, also on failure.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# skip, ok, fail, check, wait_file, expect; the EXIT trap (nss, work)
. "$srcdir/tests/integration/enforce_lib.sh"
builddir=$(pwd)
ENFORCE=$builddir/aisb-enforce
PROBE_BIN=$builddir/tests/integration/enforce_probe
VERIFY=$builddir/tests/integration/enforce_verify
PEER=$srcdir/tests/integration/enforce_peer.py

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "needs ip (iproute2)"
command -v python3 >/dev/null || skip "needs python3"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
[ -x "$ENFORCE" ] && [ -x "$PROBE_BIN" ] && [ -x "$VERIFY" ] ||
	skip "build aisb-enforce, enforce_probe and enforce_verify first"

HOST=aisb-eh-$$
SBX=aisb-es-$$
BARE=aisb-ex-$$
VH=aeh$$
VS=aes$$
work=$(mktemp -d /tmp/aisb-enforce-test.XXXXXX)
nss=("$HOST" "$SBX" "$BARE")

# run_enforce RC_WANT NAME NS [ARGS...]: the exit code and that the probe
# (asked for "ids") did or did not run.
run_enforce() {
	local want=$1 name=$2 ns=$3 rc=0
	shift 3
	ip netns exec "$ns" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $want expected, got $rc: $(tr '\n' ' ' <"$work/$name.err")"
	else
		ok "$name: exit $rc"
	fi
	if [ "$want" = 77 ] || [ "$want" = 78 ]; then
		if grep -q '^ids ' "$work/$name.out"; then
			fail "$name: the command ran although enforcement failed"
		else
			ok "$name: the command did not run"
		fi
	fi
}

# --- namespaces, addresses, servers ---------------------------------------

ip netns add "$HOST"
ip netns add "$SBX"
ip netns add "$BARE"
ip link add "$VH" netns "$HOST" type veth peer name "$VS" netns "$SBX"
ip -n "$HOST" addr add 10.199.0.1/24 dev "$VH"
ip -n "$HOST" addr add 10.199.0.2/24 dev "$VH"
ip -n "$HOST" addr add 10.199.0.3/24 dev "$VH"
ip -n "$HOST" addr add fd00:199::1/64 dev "$VH" nodad
ip -n "$HOST" addr add fd00:199::2/64 dev "$VH" nodad
ip -n "$SBX" addr add 10.199.0.10/24 dev "$VS"
ip -n "$SBX" addr add fd00:199::10/64 dev "$VS" nodad
for ns in "$HOST" "$SBX" "$BARE"; do
	ip -n "$ns" link set lo up
done
ip -n "$HOST" link set "$VH" up
ip -n "$SBX" link set "$VS" up
# Let any group use ping sockets, so that ICMP meets nftables, not a sysctl.
ip netns exec "$SBX" sysctl -qw net.ipv4.ping_group_range="0 2147483647"

: >"$work/zone"
ip netns exec "$HOST" python3 "$PEER" --ready "$work/host.ready" \
	--tcp 10.199.0.1:43127 --tcp 10.199.0.1:43128 --tcp 10.199.0.2:43127 \
	--tcp 10.199.0.3:43127 \
	--tcp '[fd00:199::1]:43127' --tcp '[fd00:199::1]:43128' \
	--tcp '[fd00:199::2]:43127' --udp 10.199.0.1:7777 \
	--dns 10.199.0.1:53 --dns '[fd00:199::1]:53' --zone "$work/zone" \
	--query-log "$work/queries" --lifetime 600 &
pids+=($!)
ip netns exec "$SBX" python3 "$PEER" --ready "$work/sbx.ready" \
	--tcp 127.0.0.1:43129 --tcp 10.199.0.10:43130 --udp 10.199.0.10:7778 \
	--dns 127.0.0.53:53 --zone "$work/zone" \
	--query-log "$work/queries.lo" --lifetime 600 &
pids+=($!)
wait_file "$work/host.ready"
wait_file "$work/sbx.ready"

# The probe must be reachable by uid 1000 whatever the build directory is.
chmod 755 "$work"
cp "$PROBE_BIN" "$work/probe"
chmod 755 "$work/probe"
PROBE=$work/probe

NET="tcp:10.199.0.1:43127 tcp:10.199.0.1:43128 tcp:10.199.0.2:43127
	tcp:10.199.0.3:43127
	tcp:[fd00:199::1]:43127 tcp:[fd00:199::1]:43128 tcp:[fd00:199::2]:43127
	tcp:127.0.0.1:43129 udp:10.199.0.1:7777
	dns:10.199.0.1:53 icmp:10.199.0.1 icmp:[fd00:199::1]"
ALL="$NET raw packet nft setuid caps ids fds"

# --- control: without the enforcer everything gets through ---------------

# shellcheck disable=SC2086
ip netns exec "$SBX" "$PROBE" $NET >"$work/control.out"
for a in $NET; do
	expect "$work/control.out" "$a" open
done
# Flows opened from outside towards the sandbox: answered while no table.
INBOUND="tcp:10.199.0.10:43130 udp:10.199.0.10:7778"
# shellcheck disable=SC2086
ip netns exec "$HOST" "$PROBE" $INBOUND >"$work/inbound0.out"
for a in $INBOUND; do
	expect "$work/inbound0.out" "$a" open
done

# --- gate mode -----------------------------------------------------------

cat >"$work/gate.plan" <<'EOF'
# aisb-enforce plan for the netns test
aisb-plan 1
mode gate
gate 10.199.0.1 43127
log-prefix aisb-test-drop:
EOF
# shellcheck disable=SC2086
run_enforce 0 gate "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- "$PROBE" $ALL \
	loudp:10.199.0.10,10.199.0.1:7777
out=$work/gate.out
expect "$out" tcp:10.199.0.1:43127 open "hello 10.199.0.1 43127"
expect "$out" tcp:10.199.0.1:43128 blocked
expect "$out" tcp:10.199.0.2:43127 blocked
expect "$out" "tcp:[fd00:199::1]:43127" blocked
expect "$out" tcp:127.0.0.1:43129 open
expect "$out" udp:10.199.0.1:7777 blocked
# bound to device lo, to a remote address: not let out as loopback traffic
expect "$out" loudp:10.199.0.10,10.199.0.1:7777 blocked \
	"(send: Operation not permitted)"
expect "$out" dns:10.199.0.1:53 blocked
expect "$out" icmp:10.199.0.1 blocked
expect "$out" "icmp:[fd00:199::1]" blocked
expect "$out" raw denied
expect "$out" packet denied
expect "$out" nft denied "(Operation not permitted)"
expect "$out" setuid denied "(Operation not permitted)"
expect "$out" caps is "CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1"
expect "$out" ids is "uid=1000 euid=1000 gid=1000 groups=1000"
expect "$out" fds is none
# The table stays after the command: a flow someone outside opens towards
# the sandbox gets no reply through the established shortcut, since only
# flows opened from inside count.
# shellcheck disable=SC2086
ip netns exec "$HOST" "$PROBE" $INBOUND >"$work/inbound.out"
for a in $INBOUND; do
	expect "$work/inbound.out" "$a" blocked
done
if command -v nft >/dev/null; then
	chain=$(ip netns exec "$SBX" nft list chain inet aisb output)
	if grep -q 'counter packets [1-9][0-9]* bytes [0-9]* log prefix "aisb-test-drop:" drop' <<<"$chain"; then
		ok "drops were counted and logged"
	else
		fail "no drop counted: $chain"
	fi
fi

# The plan from a descriptor, other ids, a descriptor passed on purpose.
run_enforce 0 ids "$SBX" "$ENFORCE" --plan-fd 5 --uid 1234 --gid 1235 \
	--groups 1235,1300 --keep-fd 7 -- "$PROBE" ids fds \
	tcp:10.199.0.1:43127 5<"$work/gate.plan" 7<"$work/gate.plan" \
	8<"$work/gate.plan"
expect "$work/ids.out" ids is "uid=1234 euid=1234 gid=1235 groups=1235,1300"
expect "$work/ids.out" fds is 7
expect "$work/ids.out" tcp:10.199.0.1:43127 open

# The command's status is the enforcer's; a missing command is 127.
run_enforce 42 status "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- \
	/bin/sh -c 'exit 42'
run_enforce 127 missing "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- \
	"$work/no-such-command"
# ... and says what to do: a package for a bare name, the mode, the
# noexec mount or the missing #! interpreter for a file (126 when found).
errline() { tr '\n' ' ' <"$work/$1.err"; }
hint() {	# hint NAME TEXT: the enforcer's stderr says TEXT
	if grep -qF -- "$2" "$work/$1.err"; then ok "$1: says $2"; else
		fail "$1: \"$2\" expected, got: $(errline "$1")"; fi
}
run_enforce 127 nocmd "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- \
	aisb-no-such-cmd --flag
hint nocmd "aisb-enforce: aisb-no-such-cmd: command not found in the sandbox's image; add the Debian package that provides it (aisb --package PACKAGE -- ...)"
check_lines() {
	local n
	n=$(wc -l <"$work/$1.err")
	if [ "$n" -le 2 ]; then ok "$1: $n line(s)"; else fail "$1: $n lines: $(errline "$1")"; fi
}
check_lines nocmd
printf '#!/bin/sh\necho ran\n' >"$work/script.sh"
chmod 644 "$work/script.sh"
run_enforce 126 noexec-mode "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- \
	"$work/script.sh"
hint noexec-mode "$work/script.sh: not executable (mode 0644); make it so: chmod +x $work/script.sh"
check_lines noexec-mode
printf '#!/nonexistent/interp -x\necho ran\n' >"$work/interp.sh"
chmod 755 "$work/interp.sh"
run_enforce 127 nointerp "$SBX" "$ENFORCE" --plan "$work/gate.plan" -- \
	"$work/interp.sh"
hint nointerp "$work/interp.sh: its interpreter is not in the sandbox's image: #!/nonexistent/interp -x"
mkdir -p "$work/nx"
run_enforce 126 noexec-mount "$SBX" unshare -m sh -c \
	'mount -t tmpfs -o noexec,mode=755 aisb-nx "$1" && cp "$2" "$1/probe" &&
	 chmod 755 "$1/probe" && exec "$3" --plan "$4" -- "$1/probe" ids' \
	sh "$work/nx" "$PROBE" "$ENFORCE" "$work/gate.plan"
hint noexec-mount "$work/nx/probe: its file system is mounted noexec"

# --- mode none replaces the table: the gate is closed too -----------------

printf 'aisb-plan 1\nmode none\n' >"$work/none.plan"
run_enforce 0 none "$SBX" "$ENFORCE" --plan "$work/none.plan" -- "$PROBE" \
	tcp:10.199.0.1:43127 tcp:127.0.0.1:43129 ids
expect "$work/none.out" tcp:10.199.0.1:43127 blocked
expect "$work/none.out" tcp:127.0.0.1:43129 open

# --- bad plans and usage: 78, nothing runs --------------------------------

printf 'aisb-plan 1\nmode gate\ngate 10.199.0.1 99999\n' >"$work/bad1.plan"
printf 'aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\nset allowed9 10.199.0.2\n' >"$work/bad2.plan"
printf 'aisb-plan 1\nmode gate\ngate 10.199.0.1 43127' >"$work/bad3.plan"
printf 'aisb-plan 1\nmode gate\n' >"$work/bad4.plan"
for i in 1 2 3 4; do
	run_enforce 78 "badplan$i" "$SBX" "$ENFORCE" --plan "$work/bad$i.plan" \
		-- "$PROBE" ids
done
run_enforce 78 noplan "$SBX" "$ENFORCE" --plan "$work/none-such.plan" -- \
	"$PROBE" ids
# --env-file: the command's environment, set before the drop; a bad file
# is a 78 before anything is loaded, and its values are never printed
printf '# by the launcher\nAISB_ENV_T=from the file\nPATH=/usr/bin:/bin\n' \
	>"$work/env"
chmod 600 "$work/env"
run_enforce 0 envfile "$SBX" "$ENFORCE" --plan "$work/gate.plan" \
	--env-file "$work/env" -- /bin/sh -c 'echo "env $AISB_ENV_T"'
if grep -qx 'env from the file' "$work/envfile.out"; then
	ok "the env file reaches the command"
else
	fail "env file: $(cat "$work/envfile.out" "$work/envfile.err")"
fi
printf 'AISB_ENV_T=fine\n9BAD=hunter2\n' >"$work/env.bad"
run_enforce 78 envfile-bad "$SBX" "$ENFORCE" --plan "$work/gate.plan" \
	--env-file "$work/env.bad" -- "$PROBE" ids
if grep -q 'line 2: not NAME=VALUE' "$work/envfile-bad.err" &&
    ! grep -q hunter2 "$work/envfile-bad.err"; then
	ok "a bad env file names the line, not the value"
else
	fail "bad env file: $(cat "$work/envfile-bad.err")"
fi
run_enforce 78 nodashdash "$SBX" "$ENFORCE" --plan "$work/gate.plan" \
	"$PROBE" ids
run_enforce 78 uid0 "$SBX" "$ENFORCE" --plan "$work/gate.plan" --uid 0 -- \
	"$PROBE" ids
run_enforce 78 plan-fd0 "$SBX" "$ENFORCE" --plan-fd 0 -- "$PROBE" ids \
	<"$work/gate.plan"
run_enforce 78 keep-plan-fd "$SBX" "$ENFORCE" --plan-fd 5 --keep-fd 5 -- \
	"$PROBE" ids 5<"$work/gate.plan"
run_enforce 0 check "$SBX" "$ENFORCE" -n --plan "$work/gate.plan"
grep -q '^plan OK' "$work/check.out" && ok "-n says plan OK" ||
	fail "-n: $(cat "$work/check.out")"
# "plan OK" that cannot be written is not an OK.
rc=0
"$ENFORCE" -n --plan "$work/gate.plan" >/dev/full 2>"$work/check-full.err" ||
	rc=$?
[ "$rc" = 78 ] && ok "-n with an unwritable stdout: exit 78" ||
	fail "-n with an unwritable stdout: exit $rc"

# --- missing privileges: 77, nothing runs ---------------------------------

# No CAP_NET_ADMIN stands for a kernel or container that cannot filter.
run_enforce 77 no-net-admin "$BARE" setpriv --bounding-set=-net_admin \
	--inh-caps=-net_admin -- "$ENFORCE" --plan "$work/gate.plan" -- \
	"$PROBE" ids
if command -v nft >/dev/null; then
	if [ -z "$(ip netns exec "$BARE" nft list tables)" ]; then
		ok "no-net-admin: no table was left behind"
	else
		fail "no-net-admin: a table exists"
	fi
fi
# The table loads, but the privileges cannot all be dropped.
run_enforce 77 no-setpcap "$BARE" setpriv --bounding-set=-setpcap \
	--inh-caps=-setpcap -- "$ENFORCE" --plan "$work/gate.plan" -- \
	"$PROBE" ids
run_enforce 77 no-setuid "$BARE" setpriv --bounding-set=-setuid \
	--inh-caps=-setuid -- "$ENFORCE" --plan "$work/gate.plan" -- \
	"$PROBE" ids

# A table inet aisb owned by another process (NFT_TABLE_F_OWNER, as a
# firewall daemon may hold one) refuses every change with EPERM, as a
# missing CAP_NET_ADMIN does: 77, and the message names the owner flag.
rm -f "$work/owned.ready"
ip netns exec "$BARE" "$VERIFY" own "$work/owned.ready" &
opid=$!
pids+=($opid)
if wait_file "$work/owned.ready"; then
	run_enforce 77 owned "$BARE" "$ENFORCE" --plan "$work/gate.plan" -- \
		"$PROBE" ids
	if grep -q 'table inet aisb is owned by another process (flag NFT_TABLE_F_OWNER, netlink port id [1-9][0-9]*)' \
	    "$work/owned.err" && ! grep -q CAP_NET_ADMIN "$work/owned.err"; then
		ok "owned: the message names the owner flag"
	else
		fail "owned: $(cat "$work/owned.err")"
	fi
else
	fail "owned: could not create an owned table"
fi
kill "$opid" 2>/dev/null || true
wait "$opid" 2>/dev/null || true
# The table goes with its owner's socket; the enforcer then loads its own.
run_enforce 0 owner-gone "$BARE" "$ENFORCE" --plan "$work/gate.plan" -- true

# --- rootless: an ordinary user's user and network namespace --------------

# As rootless podman does: uid 200000 creates a user namespace in which it
# is root, with 1..65535 mapped to 300001..; the enforcer runs as that root.
# Its uids must reach the binaries whatever the build directory is.
rm -f "$work/userns.pid" "$work/userns.go"
cp "$ENFORCE" "$work/aisb-enforce"
chmod 755 "$work/aisb-enforce"
chmod 777 "$work"
setpriv --reuid=200000 --regid=200000 --clear-groups -- \
	unshare --user --net sh -c '
	echo $$ >"$1/userns.pid.tmp" && mv "$1/userns.pid.tmp" "$1/userns.pid"
	i=0
	while [ ! -e "$1/userns.go" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	shift
	exec "$@"' sh "$work" "$work/aisb-enforce" --plan "$work/gate.plan" -- "$PROBE" \
	ids caps nft setuid >"$work/userns.out" 2>"$work/userns.err" &
upid=$!
pids+=($upid)
if wait_file "$work/userns.pid"; then
	# One write per map, as the kernel wants it.
	python3 -c '
import os, sys
for f in ("uid_map", "gid_map"):
    fd = os.open("/proc/%s/%s" % (sys.argv[1], f), os.O_WRONLY)
    os.write(fd, b"0 200000 1\n1 300001 65535\n")
    os.close(fd)' "$(cat "$work/userns.pid")"
	touch "$work/userns.go"
	rc=0
	wait "$upid" || rc=$?
	if [ "$rc" = 0 ]; then
		ok "rootless: exit 0"
		expect "$work/userns.out" ids is "uid=1000 euid=1000 gid=1000 groups=1000"
		expect "$work/userns.out" caps is "CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1"
		expect "$work/userns.out" nft denied
		expect "$work/userns.out" setuid denied
	else
		fail "rootless: exit $rc: $(tr '\n' ' ' <"$work/userns.err")"
	fi
else
	wait "$upid" || true
	echo "# no unprivileged user namespaces here: rootless case skipped"
fi
chmod 755 "$work"

# --- the read-back refuses a table that differs from the one sent ---------

# tamper NAME NFT-ARGS...: load, change the table with nft, verify.
tamper() {
	local name=$1 out
	shift
	if ! ip netns exec "$BARE" "$VERIFY" apply "$work/gate.plan"; then
		fail "$name: could not load the table"
		return
	fi
	if ! ip netns exec "$BARE" nft "$@"; then
		fail "$name: nft $*"
		return
	fi
	out=$(ip netns exec "$BARE" "$VERIFY" verify "$work/gate.plan" || true)
	case $out in
	"verify failed: "*) ok "$name refused: ${out#verify failed: }" ;;
	*) fail "$name: verify said: $out" ;;
	esac
}

# handle NS PATTERN: the handle of the rule of chain output matching PATTERN.
handle() {
	ip netns exec "$1" nft -a list chain inet aisb output |
	    awk -v p="$2" 'index($0, p) && !n++ { print $NF }'
}

if command -v nft >/dev/null; then
	ip netns exec "$BARE" "$VERIFY" apply "$work/gate.plan"
	out=$(ip netns exec "$BARE" "$VERIFY" verify "$work/gate.plan" || true)
	[ "$out" = "verify ok" ] && ok "verify accepts the table as loaded" ||
		fail "verify: $out"
	tamper "extra rule" add rule inet aisb output accept
	tamper "inserted rule" insert rule inet aisb output tcp dport 22 accept
	tamper "policy accept" add chain inet aisb output \
		'{ type filter hook output priority 0; policy accept; }'
	tamper "dormant table" add table inet aisb '{ flags dormant; }'
	tamper "deleted table" delete table inet aisb
	ip netns exec "$BARE" "$VERIFY" apply "$work/gate.plan"
	h=$(handle "$BARE" "dport 43127")
	tamper "changed port" replace rule inet aisb output handle "$h" \
		meta nfproto ipv4 meta l4proto tcp ip daddr 10.199.0.1 th dport 22 accept
	ip netns exec "$BARE" "$VERIFY" apply "$work/gate.plan"
	h=$(handle "$BARE" "counter")
	tamper "deleted drop rule" delete rule inet aisb output handle "$h"
else
	echo "# nft not installed: tampering checks skipped"
fi

# --- direct mode: names resolved and refreshed by the enforcer ------------

# pid of the aisb-enforce process in namespace $1 (the refresher).
refresher_pid() {
	local p
	for p in $(ip netns pids "$1"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = aisb-enforce ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

wait_refresher() {
	local i
	for i in $(seq 1 100); do
		refresher_pid "$1" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

ZONE1='svc.test 10.199.0.1 1
svc6.test fd00:199::1 1
meta.test 169.254.169.254 1
private.test 192.168.7.7 1
other.test 10.199.0.3 1'
printf '%s\n' "$ZONE1" >"$work/zone"
# 10.199/16 and fd00:199::/64 are private: they need allow-range lines,
# 192.168.7.7 has none and must be refused.  The stub answers the command.
printf 'aisb-plan 1\nmode direct\nresolver 10.199.0.1\nallow-name svc.test 43127\nallow-name svc6.test 43127\nallow-name meta.test 80\nallow-name private.test 443\nallow-range 10.199.0.0/16\nallow-range fd00:199::/64\ndns-stub 127.0.0.1\ndns-min-ttl 2\ndns-max-ttl 2\n' \
	>"$work/direct.plan"
mkdir -m 777 "$work/sync"
# Runs as uid 1000 inside the sandbox; the test switches the answer for
# svc.test from 10.199.0.1 to 10.199.0.2 between phase 1 and phase 2.
cat >"$work/direct.sh" <<'SCRIPT'
P=$1
S=$2
"$P" tcp:10.199.0.1:43127 tcp:10.199.0.2:43127 tcp:10.199.0.3:43127 \
	tcp:10.199.0.1:43128 dns:10.199.0.1:53 tcp:[fd00:199::1]:43127 \
	tcp:[fd00:199::1]:43128 tcp:[fd00:199::2]:43127 ids caps \
	ask:svc.test:A ask:SVC.test:A ask:svc6.test:AAAA ask:svc.test:AAAA \
	ask:other.test:A ask:meta.test:A ask:private.test:A >"$S/p1"
touch "$S/phase1"
i=0
while [ ! -e "$S/switched" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
i=0
until "$P" tcp:10.199.0.2:43127 | grep -q ' open'; do
	[ $i -lt 60 ] || break; sleep 0.2; i=$((i + 1))
done
echo "seconds $(($(date +%s) - start))" >"$S/t2"
"$P" tcp:10.199.0.2:43127 >"$S/p2"
i=0
while "$P" tcp:10.199.0.1:43127 | grep -q ' open'; do
	[ $i -lt 60 ] || break; sleep 0.2; i=$((i + 1))
done
# (a refused connect gives up after the probe's 2 s timeout)
echo "seconds $(($(date +%s) - start))" >"$S/t3"
"$P" tcp:10.199.0.1:43127 tcp:10.199.0.2:43127 tcp:10.199.0.3:43127 \
	ask:svc.test:A >"$S/p3"
exit 5
SCRIPT
chmod 644 "$work/direct.sh"

ip netns exec "$SBX" "$ENFORCE" -v --plan "$work/direct.plan" -- \
	/bin/sh "$work/direct.sh" "$PROBE" "$work/sync" \
	>"$work/direct.out" 2>"$work/direct.err" &
dpid=$!
pids+=($dpid)
if wait_file "$work/sync/phase1"; then
	rp=$(refresher_pid "$SBX" || true)
	st=$(grep -E '^(Uid|CapEff|CapPrm|CapInh|CapBnd|CapAmb|NoNewPrivs):' \
	    "/proc/$rp/status" 2>/dev/null | tr -s '\t' ' ' | tr '\n' ' ')
	if [ "$st" = "Uid: 0 0 0 0 CapInh: 0000000000000000 CapPrm: 0000000000001020 CapEff: 0000000000001020 CapBnd: 0000000000001020 CapAmb: 0000000000000000 NoNewPrivs: 1 " ]; then
		ok "refresher keeps uid 0, CAP_NET_ADMIN and CAP_KILL only"
	else
		fail "refresher credentials: $st"
	fi
	printf '%s\n' "$ZONE1" | sed 's/^svc.test 10.199.0.1/svc.test 10.199.0.2/' \
		>"$work/zone"
	touch "$work/sync/switched"
fi
rc=0
wait "$dpid" || rc=$?
if [ "$rc" = 5 ]; then
	ok "direct: the command's status is returned"
else
	fail "direct: exit 5 expected, got $rc: $(tr '\n' ' ' <"$work/direct.err")"
fi
expect "$work/sync/p1" tcp:10.199.0.1:43127 open
expect "$work/sync/p1" tcp:10.199.0.2:43127 blocked
expect "$work/sync/p1" tcp:10.199.0.3:43127 blocked
expect "$work/sync/p1" tcp:10.199.0.1:43128 blocked
expect "$work/sync/p1" dns:10.199.0.1:53 blocked
expect "$work/sync/p1" "tcp:[fd00:199::1]:43127" open
expect "$work/sync/p1" "tcp:[fd00:199::1]:43128" blocked
expect "$work/sync/p1" "tcp:[fd00:199::2]:43127" blocked
if grep -q 'meta.test: refusing address 169.254.169.254' "$work/direct.err"; then
	ok "a name resolving to the metadata address is refused"
else
	fail "meta.test: $(cat "$work/direct.err")"
fi
if grep -q 'private.test: refusing address 192.168.7.7 (private 192.168.0.0/16)' "$work/direct.err"; then
	ok "a name resolving to a private address outside allow-range is refused"
else
	fail "private.test: $(cat "$work/direct.err")"
fi
expect "$work/sync/p1" ask:svc.test:A answer "rcode=0 10.199.0.1"
expect "$work/sync/p1" ask:SVC.test:A answer "rcode=0 10.199.0.1"
expect "$work/sync/p1" ask:svc6.test:AAAA answer "rcode=0 fd00:199::1"
expect "$work/sync/p1" ask:svc.test:AAAA answer "rcode=0"
expect "$work/sync/p1" ask:other.test:A answer "rcode=3"
expect "$work/sync/p1" ask:meta.test:A answer "rcode=2"
expect "$work/sync/p1" ask:private.test:A answer "rcode=2"
expect "$work/sync/p1" ids is "uid=1000 euid=1000 gid=1000 groups=1000"
expect "$work/sync/p1" caps is "CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1"
expect "$work/sync/p2" tcp:10.199.0.2:43127 open
expect "$work/sync/p3" tcp:10.199.0.1:43127 blocked
expect "$work/sync/p3" tcp:10.199.0.2:43127 open
expect "$work/sync/p3" tcp:10.199.0.3:43127 blocked
expect "$work/sync/p3" ask:svc.test:A answer "rcode=0 10.199.0.2"
echo "# direct mode, seconds after the switch: B open $(awk '{print $2}' "$work/sync/t2" 2>/dev/null), A closed $(awk '{print $2}' "$work/sync/t3" 2>/dev/null) (TTL 2 s, element timeout 4 s)"

# Signals reach the command; its death by signal is the refresher's status.
ip netns exec "$SBX" "$ENFORCE" --plan "$work/direct.plan" -- sleep 60 \
	>"$work/sig.out" 2>"$work/sig.err" &
spid=$!
pids+=($spid)
rc=0
if wait_refresher "$SBX"; then
	sleep 0.5
	kill -TERM "$(refresher_pid "$SBX")"
fi
wait "$spid" || rc=$?
if [ "$rc" = 143 ]; then
	ok "direct: SIGTERM forwarded, exit 143"
else
	fail "direct: exit 143 expected, got $rc: $(cat "$work/sig.err")"
fi

# --- direct mode: the resolver answers the refresher only ----------------

# Conntrack outlives sockets: once the refresher has closed its resolver
# socket, its UDP flow stays "established" for 30 s, and a datagram from
# the same source port to the same server matches it.  The command sweeps
# the whole ephemeral range with queries while the refresher refreshes
# every second (TTL 1); the server's query log must show the refresher's
# queries and none of the command's.  A loopback resolver is checked too:
# loopback is let out early, before any uid rule.
# leak_check NAME RESOLVER TARGET QUERY-LOG
leak_check() {
	local name=$1 resolver=$2 target=$3 log=$4 skip n
	printf '%s\n' "$ZONE1" >"$work/zone"
	printf 'aisb-plan 1\nmode direct\nresolver %s\nallow-name svc.test 43127\nallow-range 10.199.0.0/16\ndns-min-ttl 1\ndns-max-ttl 1\n' \
		"$resolver" >"$work/$name.plan"
	touch "$log"
	skip=$(wc -l <"$log")
	run_enforce 0 "$name" "$SBX" "$ENFORCE" --plan "$work/$name.plan" \
		-- "$PROBE" "sweep:$target:5" "dns:$target"
	tail -n +"$((skip + 1))" "$log" >"$work/$name.queries"
	# the first round and at least three refreshes during the sweep
	n=$(grep -c '^svc\.test ' "$work/$name.queries" || true)
	if [ "$n" -ge 8 ]; then
		ok "$name: the refresher's queries reached the resolver ($n)"
	else
		fail "$name: the refresher did not refresh ($n queries)"
	fi
	n=$(grep -c -e '^probe\.test ' -e 'sweep\.test ' "$work/$name.queries" || true)
	if [ "$n" = 0 ]; then
		ok "$name: none of the command's queries reached the resolver"
	else
		fail "$name: $n of the command's queries reached the resolver, e.g. $(grep -m 3 'sweep\.test ' "$work/$name.queries" | tr '\n' ' ')"
	fi
	expect "$work/$name.out" "sweep:$target:5" sent "0 refused $(
	    awk -v w="sweep:$target:5" '$1 == w { print $5 }' "$work/$name.out")"
	expect "$work/$name.out" "dns:$target" blocked
}
leak_check resolver4 10.199.0.1 10.199.0.1:53 "$work/queries"
leak_check resolver6 fd00:199::1 '[fd00:199::1]:53' "$work/queries"
# --- direct mode: the stub answers all along a one-second TTL -------------

# The stub withholds an address with under a second left, so the refresh
# must come on time: scheduled in whole seconds it ran up to a second late
# and the stub answered SERVFAIL while the address was still in the set.
# The resolver (10.199.0.2 here) answers each query after 250 ms, so that
# the refresh takes half a second (A and AAAA), as a slow resolver does;
# the command asks the stub every 50 ms for about 7 s (several refreshes).
printf '%s\n' "$ZONE1" >"$work/zone"
ip netns exec "$HOST" python3 "$PEER" --ready "$work/slow.ready" \
	--dns 10.199.0.2:53 --zone "$work/zone" --dns-delay 0.25 \
	--lifetime 600 &
pids+=($!)
wait_file "$work/slow.ready"
printf 'aisb-plan 1\nmode direct\nresolver 10.199.0.2\nallow-name svc.test 43127\nallow-range 10.199.0.0/16\ndns-stub 127.0.0.1\ndns-min-ttl 1\ndns-max-ttl 1\n' \
	>"$work/ttl1.plan"
run_enforce 0 ttl1 "$SBX" "$ENFORCE" --plan "$work/ttl1.plan" -- /bin/sh -c '
	i=0
	while [ $i -lt 120 ]; do
		"$1" ask:svc.test:A
		sleep 0.05
		i=$((i + 1))
	done' sh "$PROBE"
n=$(grep -c '^ask:svc.test:A answer rcode=0 10.199.0.1$' "$work/ttl1.out" || true)
if [ "$n" = 120 ]; then
	ok "ttl1: 120 of 120 stub answers carry the address"
else
	fail "ttl1: $n of 120 stub answers carry the address; others: $(grep -v 'rcode=0 10.199.0.1$' "$work/ttl1.out" | sort | uniq -c | tr '\n' ' ')"
fi

# A resolver inside the sandbox (127.0.0.53 listens here, as a local
# resolver would) is reached through loopback, let out before any uid rule,
# and through every other local address: refused, and the command never
# runs.  The same for the sandbox's own address.
printf 'aisb-plan 1\nmode direct\nresolver 127.0.0.53\nallow-name svc.test 43127\nallow-range 10.199.0.0/16\n' \
	>"$work/resolver-lo.plan"
run_enforce 78 resolver-lo "$SBX" "$ENFORCE" --plan "$work/resolver-lo.plan" \
	-- "$PROBE" ids sweep:127.0.0.53:53:1
printf 'aisb-plan 1\nmode direct\nresolver 10.199.0.10\nallow-name svc.test 43127\nallow-range 10.199.0.0/16\n' \
	>"$work/resolver-self.plan"
run_enforce 77 resolver-self "$SBX" "$ENFORCE" --plan \
	"$work/resolver-self.plan" -- "$PROBE" ids
if grep -q 'resolver 10.199.0.10 is an address of the sandbox itself' \
    "$work/resolver-self.err"; then
	ok "resolver-self: the message names the address"
else
	fail "resolver-self: $(cat "$work/resolver-self.err")"
fi
if [ -s "$work/queries.lo" ]; then
	fail "the local resolver got queries: $(head -n 3 "$work/queries.lo" | tr '\n' ' ')"
else
	ok "the local resolver got no query"
fi

# Gate and none modes: the enforcer stays as the command's parent with
# CAP_KILL alone and passes signals on to the command's process group, so
# a shell's trap runs while its foreground child sleeps (with the signal
# to the shell's pid only, bash would wait the 60 s out).
: >"$work/pg.out"
ip netns exec "$SBX" "$ENFORCE" --plan "$work/none.plan" -- bash -c '
	trap "echo trapped; trap - TERM; kill -TERM \$\$" TERM
	grep ^CapEff: /proc/$PPID/status | tr -d "\t"; echo ready; sleep 60' \
	>"$work/pg.out" 2>"$work/pg.err" &
spid=$!
pids+=($spid)
for i in $(seq 1 100); do grep -q ready "$work/pg.out" && break; sleep 0.1; done
rc=0
t0=$(date +%s)
kill -TERM "$(refresher_pid "$SBX")" 2>/dev/null || true
wait "$spid" || rc=$?
if [ "$rc" = 143 ] && grep -q '^trapped$' "$work/pg.out" &&
    [ $(($(date +%s) - t0)) -lt 10 ]; then
	ok "none: SIGTERM reaches the command's group, its trap runs, exit 143"
else
	fail "none: want the trap and 143 at once, got $rc after $(($(date +%s) - t0)) s: $(cat "$work/pg.out" "$work/pg.err")"
fi
if grep -q '^CapEff:0000000000000020$' "$work/pg.out"; then
	ok "none: the command's parent keeps CAP_KILL only"
else
	fail "none: the command's parent: $(cat "$work/pg.out")"
fi

# The enforcer as the sandbox uid, with the capabilities podman adds
# (ambient), as rootless podman's keep-id started it without --user 0:0:
# the command could signal its parent (and in direct mode send DNS as the
# refresher's uid).  Refused in every mode: 78, nothing runs.
caps=+net_admin,+setuid,+setgid,+setpcap,+kill
for m in gate none direct; do
	run_enforce 78 "as-sandbox-uid-$m" "$BARE" setpriv --reuid=1000 \
		--regid=1000 --clear-groups --inh-caps="$caps" \
		--ambient-caps="$caps" -- "$work/aisb-enforce" \
		--plan "$work/$m.plan" -- "$PROBE" ids
	if grep -q 'the sandbox uid must differ from the enforcer.s (1000)' \
	    "$work/as-sandbox-uid-$m.err"; then
		ok "as-sandbox-uid-$m: the message says why"
	else
		fail "as-sandbox-uid-$m: $(cat "$work/as-sandbox-uid-$m.err")"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
