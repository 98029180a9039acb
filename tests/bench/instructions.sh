#!/bin/bash
# instructions.sh GATE[:ARGS] ...: what aisb-gate costs in instructions,
# which do not move with the machine's load as wall-clock rates do.
#
# Each GATE (a path to aisb-gate; after a colon, extra arguments, comma
# separated; "--record" alone gets a capture file of its own) runs under
# `valgrind --tool=callgrind` while tests/bench/loadgen drives it for a
# fixed time: setup (1 client, SETUP_SECONDS), http (4 clients,
# HTTP_SECONDS), bulk (1 stream, BULK_SECONDS).  It prints one line per
# run: the gate's total instructions over the tunnels, requests or
# megabytes served.  ROUNDS (default 3) rounds interleave the gates.
# MODES (default "setup http bulk") picks the runs; tsetup is the
# transparent tunnel's setup (AISB-TRANSPARENT and a ClientHello, 1 client,
# SETUP_SECONDS), to set against setup: MODES="setup tsetup".
# Run from the build tree (make bench builds target and loadgen).
# Traffic: 127.0.0.1 only; every process it starts is killed on exit.
set -u
ROUNDS=${ROUNDS:-3}
B=${BINDIR:-tests/bench}
[ -x "$B/loadgen" ] && [ -x "$B/target" ] || { echo "instructions.sh: no $B/loadgen or $B/target: run make bench in the build tree" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: instructions.sh GATE[:ARG,ARG...] ..." >&2; exit 64; }
T=$(mktemp -d /tmp/aisb-instr.XXXXXX)
TP='' GP=''
trap '[ -n "$GP" ] && kill "$GP" 2>/dev/null; [ -n "$TP" ] && kill "$TP" 2>/dev/null; rm -rf "$T"' EXIT
"$B/target" -t 3600 -m 5000 >"$T/ports" 2>"$T/target.err" & TP=$!
for _ in $(seq 1 50); do [ "$(wc -l <"$T/ports")" -ge 3 ] && break; sleep 0.1; done
ECHO=$(awk '$1=="echo"{print $2}' "$T/ports")
SRC=$(awk '$1=="source"{print $2}' "$T/ports")
HTTP=$(awk '$1=="http"{print $2}' "$T/ports")
printf 'version: 1\nallow:\n  - cidr: 127.0.0.1/32\n    ports: ["1-65535"]\nallow_ranges: [127.0.0.1/32]\n' >"$T/policy.yaml"
for round in $(seq 1 "$ROUNDS"); do
for mode in ${MODES:-setup http bulk}; do
	for spec in "$@"; do
		G=${spec%%:*} extra=()
		if [ "$G" != "$spec" ]; then
			IFS=, read -r -a extra <<<"${spec#*:}"
		fi
		if [ "${extra[*]:-}" = --record ]; then
			rm -f "$T/rec.pcapng"
			extra=(--record "$T/rec.pcapng" --record-max 60G)
		fi
		rm -f "$T/port" "$T/cg.out"
		valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$G" \
		    -f "$T/policy.yaml" -d -l 127.0.0.1:0 --port-file "$T/port" \
		    --audit /dev/null --idle-timeout 600 "${extra[@]}" \
		    >"$T/gate.log" 2>&1 & GP=$!
		for _ in $(seq 1 200); do [ -s "$T/port" ] && break; sleep 0.1; done
		P=$(tr -dc 0-9 <"$T/port")
		case $mode in
		setup) out=$("$B/loadgen" -x "127.0.0.1:$P" -e "$ECHO" -s "$SRC" -h "$HTTP" setup -c 1 -d "${SETUP_SECONDS:-20}" 2>&1) ;;
		http) out=$("$B/loadgen" -x "127.0.0.1:$P" -e "$ECHO" -s "$SRC" -h "$HTTP" http -c 4 -d "${HTTP_SECONDS:-20}" 2>&1) ;;
		bulk) out=$("$B/loadgen" -x "127.0.0.1:$P" -e "$ECHO" -s "$SRC" -h "$HTTP" bulk -c 1 -d "${BULK_SECONDS:-10}" 2>&1) ;;
		tsetup) out=$("$B/loadgen" -x "127.0.0.1:$P" -e "$ECHO" -s "$SRC" -h "$HTTP" tsetup -c 1 -d "${SETUP_SECONDS:-20}" 2>&1) ;;
		esac
		kill -TERM "$GP"; wait "$GP"; GP=
		ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$T/cg.out")
		if [ "$mode" = bulk ]; then
			n=$(grep -oE 'bytes=[0-9]+' <<<"$out" | cut -d= -f2)
			per=$(awk -v i="$ir" -v b="$n" 'BEGIN { if (b > 0) printf "%.0f Ir/MB", i / (b / 1e6); else print "no bytes" }')
		else
			n=$(grep -oE 'ok=[0-9]+' <<<"$out" | cut -d= -f2)
			per=$(awk -v i="$ir" -v o="$n" 'BEGIN { if (o > 0) printf "%.0f Ir/op", i / o; else print "no ops" }')
		fi
		echo "round=$round mode=$mode gate=$spec ir=$ir n=${n:-0} $per"
	done
done
done
