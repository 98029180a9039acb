#!/bin/bash
# startup.sh: how much longer a session of `true` takes than plain podman.
#
#   startup.sh [--rounds R] [--runs N] [--modes "gate none"] [--aisb PATH]
#
# For each mode (--net gate, --net none), one untimed session first (it
# builds the image if it is missing, as any session would); the plain
# command is then derived from that session's own record, the `podman`
# line of the argv the session really ran, so that the two cannot drift:
#
#   PODMAN [--runtime=R] run --rm --init --network=N --ulimit=nofile=...
#       --ulimit=nproc=... --entrypoint=true IMAGE
#
# the same podman, image, runtime, network, init and ulimits; what the
# session adds (capabilities, seccomp profile, mounts, user namespace,
# the enforcer's table) is what is measured.  Then R rounds; in each,
# N pairs per mode, the two members of a pair run back to back, in
# alternating order.  Prints per round and mode the median wall time of
# each, their ratio, and the median of each phase of the session records
# (timings_ms); at the end the ratio's min and max over the rounds, and
# the load (uptime) before and after.
#
# Run as root where podman works (aisb doctor).  The policy names a DNS
# server this script starts on 127.0.0.1 (the gate resolves nothing for
# `true`).  The home volume, the session folders and every process
# started here are removed on exit.  Traffic: 127.0.0.1 only.
set -euo pipefail

rounds=3
runs=10
modes="gate none"
here=$(cd "$(dirname "$0")" && pwd)
aisb=${AISB:-./aisb}
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--aisb) aisb=$2; shift 2 ;;
	*) echo "usage: startup.sh [--rounds R] [--runs N] [--modes \"gate none\"] [--aisb PATH]" >&2
	   exit 2 ;;
	esac
done
aisb=$(cd "$(dirname "$aisb")" && pwd)/$(basename "$aisb")
PY=${PYTHON:-python3}

tmp=$(mktemp -d)
chmod 0700 "$tmp"
vol=aisb-bench-home-$$
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	podman volume rm -f "$vol" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
# the offline base: a benchmark asks no registry, and measures none
export AISB_IMAGE=offline
mkdir -p "$tmp/ws"
chmod 0700 "$tmp/ws"
# the workspace of every session; both sides start as one fork and exec
cd "$tmp/ws"

printf '{"bench.test": {"A": ["127.0.0.1"], "ttl": 30}}\n' >"$tmp/zone.json"
"$PY" "$here/../integration/gate_dns.py" --zone "$tmp/zone.json" \
    --port-file "$tmp/dns.port" &
pids+=($!)
for i in $(seq 100); do [ -s "$tmp/dns.port" ] && break; sleep 0.1; done
cat >"$tmp/policy.yaml" <<YAML
version: 1
allow:
  - host: bench.test
    ports: [443]
dns:
  servers: ["127.0.0.1:$(cat "$tmp/dns.port")"]
YAML

sessions=$XDG_STATE_HOME/aisb/sessions
now_ms() { echo $(($(date +%s%N) / 1000000)); }

session() {	# session MODE: wall ms on stdout; fails the script on error
	local t0 t1 rc=0
	t0=$(now_ms)
	"$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" --net "$1" \
	    -- true >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	t1=$(now_ms)
	[ "$rc" = 0 ] || { echo "session --net $1 failed ($rc): $(head -c 600 "$tmp/err")" >&2; exit 1; }
	echo $((t1 - t0))
}

plain() {	# plain MODE: wall ms of the derived podman command
	local t0 t1 rc=0 cmd
	read -r -a cmd <"$tmp/plain.$1"
	t0=$(now_ms)
	"${cmd[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	t1=$(now_ms)
	[ "$rc" = 0 ] || { echo "plain podman ($1) failed ($rc): $(head -c 600 "$tmp/err")" >&2; exit 1; }
	echo $((t1 - t0))
}

# The plain command from the `podman` line of the newest record: the
# words the comparison keeps are never quoted there (no blanks in them).
derive() {	# derive MODE
	local rec w img="" next=0 out=() runtime=""
	rec=$(ls -t "$sessions"/*/record | sed -n 1p)
	read -r -a words < <(grep '^podman ' "$rec") || true
	[ "${#words[@]}" -gt 1 ] || { echo "no podman line in $rec" >&2; exit 1; }
	out=("${words[1]}")
	for w in "${words[@]:2}"; do
		if [ "$next" = 1 ]; then img=$w; break; fi
		case $w in
		--runtime=*) runtime=$w ;;
		--init|--network=*|--ulimit=*) out+=("$w") ;;
		--entrypoint=*) next=1 ;;
		esac
	done
	[ -n "$img" ] || { echo "no image in $rec" >&2; exit 1; }
	[ -n "$runtime" ] && out=("${out[0]}" "$runtime" "${out[@]:1}")
	# podman's global flags come before `run`
	if [ -n "$runtime" ]; then
		out=("${out[0]}" "${out[1]}" run --rm "${out[@]:2}")
	else
		out=("${out[0]}" run --rm "${out[@]:1}")
	fi
	out+=(--entrypoint=true "$img")
	echo "${out[*]}" >"$tmp/plain.$1"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# load before: $(uptime)"
for mode in $modes; do
	session "$mode" >/dev/null
	derive "$mode"
	echo "# --net $mode: aisb --policy P --home-volume V --net $mode -- true"
	echo "#   against: $(cat "$tmp/plain.$mode")"
done
printf '| round | mode | aisb (ms) | podman (ms) | ratio | host | gate | image | run | teardown |\n'
printf '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
: >"$tmp/ratios"
for r in $(seq "$rounds"); do
	for mode in $modes; do
		rm -rf "$sessions"
		: >"$tmp/a" ; : >"$tmp/p"
		for i in $(seq "$runs"); do
			if [ $((i % 2)) = 1 ]; then
				session "$mode" >>"$tmp/a"
				plain "$mode" >>"$tmp/p"
			else
				plain "$mode" >>"$tmp/p"
				session "$mode" >>"$tmp/a"
			fi
		done
		a=$(median <"$tmp/a") p=$(median <"$tmp/p")
		ratio=$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.2f", a / p }')
		echo "$mode $ratio" >>"$tmp/ratios"
		row="| $r | $mode | $a | $p | $ratio"
		for k in 2 4 6 8 10; do
			row="$row | $(cat "$sessions"/*/record |
			    awk -v k=$((k + 1)) '$1 == "timings_ms" { print $k }' | median)"
		done
		echo "$row |"
	done
done
for mode in $modes; do
	awk -v m="$mode" '$1 == m { if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
	    END { printf "# --net %s: ratio min %.2f max %.2f over %d rounds\n", m, lo, hi, n }' \
	    "$tmp/ratios"
done
echo "# $runs pairs per mode and round, medians; $(nproc) cores, $(date -u +%FT%TZ)"
echo "# load after: $(uptime)"
