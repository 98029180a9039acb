#!/bin/bash
# aisb-enforce --init: the init container of a Kubernetes pod, played in
# network namespaces made here (docs/kubernetes.md).
#
#   host ns (aisb-ih-PID)               pod ns (aisb-ip-PID)
#   10.198.0.1  <-------- veth -------->  10.198.0.10
#   tcp 43127 (a banner), udp echo 7777   tcp 127.0.0.1:43129 (root)
#   dns 53 (query log)                    tcp 10.198.0.10:9128  (gate uid)
#                                         tcp 10.198.0.10:8080  (app, served)
#                                         tcp 10.198.0.10:8081  (app, not)
#
# The enforcer loads the table and exits 0; from then on no process of
# its is left, and every check below meets the table alone, as the app
# containers of a pod do.  The app's uid (1000) reaches loopback only; the
# gate's (65532, gate-uid) reaches the host; root without CAP_NET_ADMIN
# cannot delete the table; the host reaches the gate's listener and the
# app's served port, not another; and while the gate's uid sends DNS
# queries (each from a new port: conntrack holds their flows), the app's
# uid sweeps the ephemeral range with queries to the same server: none
# may reach it (the drop of other uids before the established shortcut).
# Plans --init refuses (direct mode, transparent, dns-gate; gate-uid
# outside --init) exit 78; without CAP_NET_ADMIN, 77.  Needs root, ip,
# setpriv, /usr/bin/python3 (run as the two uids, so not a python under
# /root); skips (77) otherwise.  Everything made here goes on exit.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# skip, ok, fail, check, wait_file, expect; the EXIT trap (nss, work)
. "$srcdir/tests/integration/enforce_lib.sh"
builddir=$(pwd)
ENFORCE=$builddir/aisb-enforce
PROBE_BIN=$builddir/tests/integration/enforce_probe
PEER_SRC=$srcdir/tests/integration/enforce_peer.py
PY=/usr/bin/python3
GATE_UID=65532
APP_UID=1000

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "needs ip (iproute2)"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
[ -x "$PY" ] || skip "needs $PY (the listeners run as two uids)"
[ -x "$ENFORCE" ] && [ -x "$PROBE_BIN" ] ||
	skip "build aisb-enforce and enforce_probe first"

HOST=aisb-ih-$$
POD=aisb-ip-$$
VH=aih$$
VP=aip$$
work=$(mktemp -d /tmp/aisb-enforce-init.XXXXXX)
nss=("$HOST" "$POD")

# init RC_WANT NAME PLAN [PREFIX...]: aisb-enforce --init in the pod.
init() {
	local want=$1 name=$2 plan=$3 rc=0
	shift 3
	ip netns exec "$POD" "$@" "$ENFORCE" --init --plan "$plan" \
	    >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$name: exit $rc"
	else
		fail "$name: exit $want expected, got $rc: $(tr '\n' ' ' <"$work/$name.err")"
	fi
}

# as UID NAME ATTEMPT...: the probe in the pod as UID, no capability.
as() {
	local uid=$1 name=$2
	shift 2
	ip netns exec "$POD" setpriv --reuid="$uid" --regid="$uid" \
	    --clear-groups --inh-caps=-all --bounding-set=-all -- \
	    "$PROBE" "$@" >"$work/$name.out" 2>&1 || true
}

said() {	# said NAME TEXT: stderr of NAME holds TEXT
	if grep -qF -- "$2" "$work/$1.err"; then ok "$1: says $2"; else
		fail "$1: \"$2\" expected, got: $(tr '\n' ' ' <"$work/$1.err")"; fi
}

# --- namespaces, servers ---------------------------------------------------

ip netns add "$HOST"
ip netns add "$POD"
ip link add "$VH" netns "$HOST" type veth peer name "$VP" netns "$POD"
ip -n "$HOST" addr add 10.198.0.1/24 dev "$VH"
ip -n "$POD" addr add 10.198.0.10/24 dev "$VP"
for ns in "$HOST" "$POD"; do ip -n "$ns" link set lo up; done
ip -n "$HOST" link set "$VH" up
ip -n "$POD" link set "$VP" up

chmod 755 "$work"
cp "$PROBE_BIN" "$work/probe"
cp "$PEER_SRC" "$work/peer.py"
chmod 755 "$work/probe" "$work/peer.py"
PROBE=$work/probe
: >"$work/zone"
: >"$work/queries"
chmod 666 "$work/zone"
mkdir -m 1777 "$work/ready"	# written by the listeners of the two uids

ip netns exec "$HOST" "$PY" "$work/peer.py" --ready "$work/ready/host" \
	--tcp 10.198.0.1:43127 --udp 10.198.0.1:7777 --dns 10.198.0.1:53 \
	--zone "$work/zone" --query-log "$work/queries" --lifetime 600 &
pids+=($!)
ip netns exec "$POD" "$PY" "$work/peer.py" --ready "$work/ready/lo" \
	--tcp 127.0.0.1:43129 --lifetime 600 &
pids+=($!)
# listeners of the gate's uid and the app's, as in a pod
ip netns exec "$POD" setpriv --reuid=$GATE_UID --regid=$GATE_UID \
	--clear-groups -- "$PY" "$work/peer.py" --ready "$work/ready/gate" \
	--tcp 10.198.0.10:9128 --lifetime 600 &
pids+=($!)
ip netns exec "$POD" setpriv --reuid=$APP_UID --regid=$APP_UID \
	--clear-groups -- "$PY" "$work/peer.py" --ready "$work/ready/app" \
	--tcp 10.198.0.10:8080 --tcp 10.198.0.10:8081 --lifetime 600 &
pids+=($!)
for f in host lo gate app; do wait_file "$work/ready/$f"; done

OUT="tcp:10.198.0.1:43127 udp:10.198.0.1:7777 dns:10.198.0.1:53"
IN="tcp:10.198.0.10:9128 tcp:10.198.0.10:8080 tcp:10.198.0.10:8081"

# control: no table, everything gets through both ways
# shellcheck disable=SC2086
as $APP_UID control $OUT tcp:127.0.0.1:43129
for a in $OUT tcp:127.0.0.1:43129; do expect "$work/control.out" "$a" open; done
# shellcheck disable=SC2086
ip netns exec "$HOST" "$PROBE" $IN >"$work/in0.out"
for a in $IN; do expect "$work/in0.out" "$a" open; done

# --- the init container ------------------------------------------------------

cat >"$work/pod.plan" <<EOF
# the sidecar pattern: the gate in the pod listens on loopback
aisb-plan 1
mode gate
gate 127.0.0.1 3128
gate-uid $GATE_UID
serve 8080
log-prefix aisb-init-drop:
EOF
ip netns exec "$POD" "$ENFORCE" --init -n --plan "$work/pod.plan" \
	>"$work/check.out" 2>&1 || true
if [ "$(cat "$work/check.out")" = "plan OK (mode gate, --init)" ]; then
	ok "-n --init checks the plan"
else
	fail "-n --init: $(cat "$work/check.out")"
fi
# only CAP_NET_ADMIN, as the manifests give it
init 0 init "$work/pod.plan" setpriv --inh-caps=-all --bounding-set=-all,+net_admin --
said init "table inet aisb loaded and verified: mode gate, 9 rules; exiting (--init)"
left=
for p in $(ip netns pids "$POD"); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" != aisb-enforce ] || left=$p
done
if [ -z "$left" ]; then ok "no enforcer process is left"; else
	fail "an enforcer process is left: $left"; fi
if command -v nft >/dev/null; then
	ip netns exec "$POD" nft list chain inet aisb output >"$work/chain" 2>&1 || true
	if grep -q "meta skuid $GATE_UID accept" "$work/chain" &&
	    grep -q "meta skuid != $GATE_UID counter" "$work/chain" &&
	    grep -q "policy drop" "$work/chain"; then
		ok "the table is in the pod's namespace after the enforcer exited"
	else
		fail "table: $(cat "$work/chain")"
	fi
fi

# the app's uid: loopback only
# shellcheck disable=SC2086
as $APP_UID app $OUT tcp:127.0.0.1:43129
for a in $OUT; do expect "$work/app.out" "$a" blocked; done
expect "$work/app.out" tcp:127.0.0.1:43129 open
# the gate's uid: anywhere (its own policy decides)
# shellcheck disable=SC2086
as $GATE_UID gate $OUT
for a in $OUT; do expect "$work/gate.out" "$a" open; done
# root of an app container without CAP_NET_ADMIN cannot change the table
as 0 root nft tcp:10.198.0.1:43127
expect "$work/root.out" nft denied "(Operation not permitted)"
expect "$work/root.out" tcp:10.198.0.1:43127 blocked
# from outside: the gate's listener (its SYN-ACK has its uid), the served
# port, not another one of the app's
# shellcheck disable=SC2086
ip netns exec "$HOST" "$PROBE" $IN >"$work/in.out"
expect "$work/in.out" tcp:10.198.0.10:9128 open "hello 10.198.0.10 9128"
expect "$work/in.out" tcp:10.198.0.10:8080 open "hello 10.198.0.10 8080"
expect "$work/in.out" tcp:10.198.0.10:8081 blocked

# The gate's DNS flows stay established in conntrack after its sockets
# close; the app's uid sweeps every ephemeral port with queries meanwhile.
: >"$work/queries"
(
	end=$((SECONDS + 6))
	while [ "$SECONDS" -lt "$end" ]; do
		as $GATE_UID gate-dns dns:10.198.0.1:53
		sleep 0.2
	done
) &
loop=$!
as $APP_UID sweep sweep:10.198.0.1:53:5 dns:10.198.0.1:53
wait "$loop"
n=$(grep -c '^probe\.test ' "$work/queries" || true)
if [ "$n" -ge 5 ]; then ok "the gate's queries reached the server ($n)"; else
	fail "the gate's queries did not reach the server ($n)"; fi
n=$(grep -c 'sweep\.test ' "$work/queries" || true)
if [ "$n" = 0 ]; then
	ok "none of the app's swept queries reached the server"
else
	fail "$n of the app's queries reached the server, e.g. $(grep -m 3 'sweep\.test ' "$work/queries" | tr '\n' ' ')"
fi
expect "$work/sweep.out" sweep:10.198.0.1:53:5 sent "0 refused $(
    awk '$1 == "sweep:10.198.0.1:53:5" { print $5 }' "$work/sweep.out")"

# A restarted init container replaces the table in one transaction.
init 0 again "$work/pod.plan"
as $APP_UID app2 tcp:10.198.0.1:43127
expect "$work/app2.out" tcp:10.198.0.1:43127 blocked

# --- refusals ---------------------------------------------------------------

plan() {	# plan NAME LINE...: a plan file of these lines
	local name=$1
	shift
	printf 'aisb-plan 1\n' >"$work/$name.plan"
	printf '%s\n' "$@" >>"$work/$name.plan"
}
plan direct "mode direct" "resolver 10.198.0.1" "allow-name a.test 443"
init 78 direct "$work/direct.plan"
said direct "--init: mode direct needs the refresher"
plan tp "mode gate" "gate 10.198.0.1 3128" "transparent 443"
init 78 transparent "$work/tp.plan"
said transparent "--init: transparent, transparent-range and dns-gate need the relay"
plan tprange "mode gate" "gate 10.198.0.1 3128" "transparent-range 198.18.0.0/15"
init 78 transparent-range "$work/tprange.plan"
said transparent-range "--init: transparent, transparent-range and dns-gate need the relay"
plan dnsgate "mode gate" "gate 10.198.0.1 3128" "dns-gate"
init 78 dns-gate "$work/dnsgate.plan"
plan root "mode gate" "gate 127.0.0.1 3128" "gate-uid 0"
init 78 gate-uid-0 "$work/root.plan"
said gate-uid-0 "bad gate-uid \"0\""
plan none "mode none" "gate-uid 65532"
init 78 gate-uid-none "$work/none.plan"
said gate-uid-none "gate-uid is only for mode gate"
rc=0
ip netns exec "$POD" "$ENFORCE" --plan "$work/pod.plan" -- /bin/true \
	>"$work/noinit.out" 2>"$work/noinit.err" || rc=$?
if [ "$rc" = 78 ] && grep -q "gate-uid and serve lines are for --init" "$work/noinit.err"; then
	ok "gate-uid without --init: 78"
else
	fail "gate-uid without --init: exit $rc: $(cat "$work/noinit.err")"
fi
for args in "-- /bin/true" "--uid 1234"; do
	rc=0
	# shellcheck disable=SC2086
	ip netns exec "$POD" "$ENFORCE" --init --plan "$work/pod.plan" $args \
	    >/dev/null 2>"$work/usage.err" || rc=$?
	if [ "$rc" = 78 ]; then ok "--init $args: 78"; else
		fail "--init $args: exit $rc"; fi
done
# without CAP_NET_ADMIN nothing is changed: the table of before stays
plan none "mode none"
init 77 no-net-admin "$work/none.plan" setpriv --bounding-set=-net_admin --inh-caps=-net_admin --
as $GATE_UID gate3 tcp:10.198.0.1:43127
expect "$work/gate3.out" tcp:10.198.0.1:43127 open

echo "# enforce_init: $passed passed, $failed failed"
[ "$failed" = 0 ]
