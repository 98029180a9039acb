#!/bin/bash
# transparent.sh: the setup of a transparent tunnel (AISB-TRANSPARENT, issue
# 16) against a CONNECT tunnel, on one aisb-gate.
#
#   transparent.sh [--rounds N] [--seconds S] [--bindir DIR] [--gate PATH]
#
# Starts tests/bench/target and one aisb-gate (policy: 127.0.0.1 on every
# port), then N rounds (default 3) of, interleaved, tests/bench/loadgen
# `setup` (connect, CONNECT 127.0.0.1:ECHO, 200, one byte echoed) and
# `tsetup` (connect, AISB-TRANSPARENT ECHO with a 70-byte ClientHello
# naming 127.0.0.1 in the same write, the ClientHello echoed), each at 1
# and at 50 concurrent for S seconds (default 5).  Prints one line per run
# and, per concurrency, the ratio transparent/CONNECT of tunnels/s and of
# p50 latency over the rounds as min..max (rates drift with the load of a
# shared machine; the rounds are interleaved so that both see it).
# Traffic: 127.0.0.1 only; every process it starts is killed on exit.
set -u -o pipefail
ROUNDS=3 SECS=${BENCH_SECONDS:-5} BINDIR='' GATE=''
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--bindir) BINDIR=$2; shift 2 ;;
	--gate) GATE=$2; shift 2 ;;
	*) echo "usage: transparent.sh [--rounds N] [--seconds S] [--bindir DIR] [--gate PATH]" >&2; exit 64 ;;
	esac
done
B=${BINDIR:-tests/bench}
G=${GATE:-./aisb-gate}
[ -x "$B/loadgen" ] && [ -x "$B/target" ] && [ -x "$G" ] || {
	echo "transparent.sh: needs $B/loadgen, $B/target, $G: run make bench in the build tree" >&2
	exit 1
}
T=$(mktemp -d /tmp/aisb-tbench.XXXXXX)
TP='' GP=''
trap '[ -n "$GP" ] && kill "$GP" 2>/dev/null; [ -n "$TP" ] && kill "$TP" 2>/dev/null; rm -rf "$T"' EXIT
"$B/target" -t 3600 -m 5000 >"$T/ports" 2>"$T/target.err" & TP=$!
for _ in $(seq 1 50); do [ "$(wc -l <"$T/ports")" -ge 3 ] && break; sleep 0.1; done
ECHO=$(awk '$1=="echo"{print $2}' "$T/ports")
SRC=$(awk '$1=="source"{print $2}' "$T/ports")
HTTP=$(awk '$1=="http"{print $2}' "$T/ports")
[ -n "$ECHO" ] || { echo "transparent.sh: target did not start" >&2; exit 1; }
printf 'version: 1\nallow:\n  - cidr: 127.0.0.1/32\n    ports: ["1-65535"]\nallow_ranges: [127.0.0.1/32]\n' >"$T/policy.yaml"
"$G" -f "$T/policy.yaml" -d -l 127.0.0.1:0 --port-file "$T/port" \
    --audit /dev/null --max-conns 2000 --max-per-client 2000 \
    --idle-timeout 600 >"$T/gate.log" 2>&1 & GP=$!
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
P=$(tr -dc 0-9 <"$T/port")
[ -n "$P" ] || { echo "transparent.sh: aisb-gate did not start" >&2; cat "$T/gate.log" >&2; exit 1; }

kv() { grep -oE "(^| )$2=[0-9.]+" <<<"$1" | cut -d= -f2; }
for round in $(seq 1 "$ROUNDS"); do
	for c in 1 50; do
		for mode in setup tsetup; do
			out=$("$B/loadgen" -x "127.0.0.1:$P" -e "$ECHO" -s "$SRC" \
			    -h "$HTTP" "$mode" -c "$c" -d "$SECS")
			echo "round=$round $out"
			echo "$round $c $mode $(kv "$out" rate) $(kv "$out" p50_us) $(kv "$out" errors)" >>"$T/runs"
		done
	done
done
for c in 1 50; do
	awk -v c="$c" '
	$2 == c { r[$1, $3] = $4; p[$1, $3] = $5; e += $6; n[$1] = 1 }
	END {
		rmin = pmin = 1e9; rmax = pmax = 0
		for (k in n) {
			if (r[k, "setup"] > 0) {
				x = r[k, "tsetup"] / r[k, "setup"]
				if (x < rmin) rmin = x; if (x > rmax) rmax = x
			}
			if (p[k, "setup"] > 0) {
				y = p[k, "tsetup"] / p[k, "setup"]
				if (y < pmin) pmin = y; if (y > pmax) pmax = y
			}
		}
		printf "conc=%s transparent/CONNECT: tunnels/s %.2f..%.2f, " \
		    "p50 latency %.2f..%.2f, errors %d\n", c, rmin, rmax, pmin, \
		    pmax, e
	}' "$T/runs"
done
