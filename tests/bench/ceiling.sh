#!/bin/bash
# ceiling.sh: bulk throughput of no proxy, of the least a relay can do
# (splice_relay) and of aisb-gate, interleaved, to tell what this machine
# allows a proxy from what the gate costs.
#
#   ceiling.sh [--rounds N] [--seconds S] [--bindir DIR] [--gate PATH]
#
# DIR holds target, loadgen and splice_relay (make bench builds them).
# Prints each run and the median MB/s of each column with its ratio to no
# proxy.  Traffic: 127.0.0.1 only; every process is killed on exit.
set -euo pipefail

rounds=3 secs=4 bindir=tests/bench gate=./aisb-gate
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--bindir) bindir=$2; shift 2 ;;
	--gate) gate=$2; shift 2 ;;
	*) echo "usage: ceiling.sh [--rounds N] [--seconds S] [--bindir DIR] [--gate PATH]" >&2
	   exit 2 ;;
	esac
done
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

wait_lines() {	# wait_lines FILE N
	for _ in $(seq 100); do
		[ -s "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "ceiling.sh: $1 never got $2 lines" >&2
	exit 1
}

"$bindir/target" -t 3600 -m 100 >"$tmp/target" 2>/dev/null &
pids+=($!)
wait_lines "$tmp/target" 3
src=$(awk '$1 == "source" { print $2 }' "$tmp/target")
echo_=$(awk '$1 == "echo" { print $2 }' "$tmp/target")
http=$(awk '$1 == "http" { print $2 }' "$tmp/target")
"$bindir/splice_relay" "$src" >"$tmp/relay" &
pids+=($!)
printf 'version: 1\nallow:\n  - cidr: 127.0.0.1/32\n    ports: ["1-65535"]\nallow_ranges: [127.0.0.1/32]\n' \
    >"$tmp/policy.yaml"
"$gate" -d -f "$tmp/policy.yaml" -l 127.0.0.1:0 --port-file "$tmp/gate" \
    --audit /dev/null 2>"$tmp/gate.err" &
pids+=($!)
wait_lines "$tmp/relay" 1
wait_lines "$tmp/gate" 1
declare -A via=([none]=none [relay]=127.0.0.1:$(cat "$tmp/relay")
    [gate]=127.0.0.1:$(cat "$tmp/gate"))

for r in $(seq "$rounds"); do
	for col in none relay gate; do
		mb=$("$bindir/loadgen" -x "${via[$col]}" -e "$echo_" -s "$src" \
		    -h "$http" bulk -c 1 -d "$secs" | sed -n 's/.* mbps=\([0-9.]*\) .*/\1/p')
		echo "round $r $col ${mb:-failed} MB/s"
		echo "$mb" >>"$tmp/$col.mbps"
	done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
none=$(median "$tmp/none.mbps")
for col in none relay gate; do
	m=$(median "$tmp/$col.mbps")
	echo "$col: median $m MB/s, $(awk -v a="$m" -v b="$none" 'BEGIN { printf "%.2f", a / b }')x no proxy"
done
