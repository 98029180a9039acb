#!/bin/bash
# sessions.sh: how long a whole aisb session takes, in each network mode.
#
#   sessions.sh [--runs N] [--aisb PATH]
#
# Starts a DNS responder and an HTTP upstream on 127.0.0.1 (the test
# helpers in tests/integration), writes policies that allow only the
# upstream's name and port, then for --net gate, direct and none:
# one session that must reach the upstream (gate, direct) or must not
# (none), not timed, and N timed sessions of `true`.  Prints the median
# wall time and the median of each phase of the session records
# (timings_ms: host, gate, image, run, teardown).
#
# Run as root where podman works (aisb doctor).  Sessions use podman's
# store like any session would: the image is built once if it is missing
# and kept, as aisb keeps it.  The home volume, the session folders and
# every process started here are removed on exit.  Traffic: 127.0.0.1
# and, from inside the container, the host loopback mapping only.
set -euo pipefail

runs=5
here=$(cd "$(dirname "$0")" && pwd)
aisb=${AISB:-./aisb}
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--aisb) aisb=$2; shift 2 ;;
	*) echo "usage: sessions.sh [--runs N] [--aisb PATH]" >&2; exit 2 ;;
	esac
done
aisb=$(cd "$(dirname "$aisb")" && pwd)/$(basename "$aisb")
PY=${PYTHON:-python3}
helpers=$here/../integration

tmp=$(mktemp -d)
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

# host.bench.test is the upstream as the gate (on the host) reaches it,
# bench.test as the sandbox reaches it in direct mode (the host loopback
# mapping).  Each mode gets a policy with only its own name, so that the
# gate never has a way to 10.0.2.2, a real address outside a container.
printf '{"host.bench.test": {"A": ["127.0.0.1"], "ttl": 30},\n "bench.test": {"A": ["10.0.2.2"], "ttl": 30}}\n' \
    >"$tmp/zone.json"
"$PY" "$helpers/gate_dns.py" --zone "$tmp/zone.json" --port-file "$tmp/dns.port" &
pids+=($!)
"$PY" "$helpers/gate_upstream.py" http --bind 127.0.0.1 \
    --port-file "$tmp/http.port" --log "$tmp/http.log" &
pids+=($!)
for f in dns http; do
	for _ in $(seq 100); do [ -s "$tmp/$f.port" ] && break; sleep 0.1; done
done
dns=$(cat "$tmp/dns.port") http=$(cat "$tmp/http.port")
policy() {	# policy NAME RANGE
	cat <<YAML
version: 1
allow:
  - host: $1
    ports: [$http]
allow_ranges: [$2]
dns:
  servers: ["127.0.0.1:$dns"]
YAML
}
policy host.bench.test 127.0.0.1/32 >"$tmp/gate.yaml"
policy bench.test 10.0.2.2/32 >"$tmp/direct.yaml"
cp "$tmp/direct.yaml" "$tmp/none.yaml"

session() {	# session MODE CMD... ; wall ms and status on stdout
	local t0 t1 rc=0
	t0=$(date +%s%N)
	(cd "$tmp" && "$aisb" --policy "$tmp/$1.yaml" --home-volume "$vol" \
	    --package curl --net "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) "$rc"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '| mode | wall (ms) | host | gate | image | run | teardown |\n'
printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for mode in gate direct none; do
	case $mode in
	gate) url=http://host.bench.test:$http/ ;;
	*) url=http://bench.test:$http/ ;;
	esac
	read -r ms rc < <(session "$mode" -- curl -sS --max-time 5 -o /dev/null \
	    -w '%{http_code}' "$url")
	got=$(cat "$tmp/out")
	if [ "$mode" = none ]; then
		[ "$got" != 200 ] || { echo "none: the upstream answered" >&2; exit 1; }
	elif [ "$got" != 200 ]; then
		echo "$mode: no 200 from the upstream (rc $rc): $(head -c 400 "$tmp/err")" >&2
		exit 1
	fi
	rm -rf "$XDG_STATE_HOME/aisb/sessions"
	: >"$tmp/walls"
	for _ in $(seq "$runs"); do
		read -r ms rc < <(session "$mode" -- true)
		[ "$rc" = 0 ] || { echo "$mode: session failed: $(cat "$tmp/err")" >&2; exit 1; }
		echo "$ms" >>"$tmp/walls"
	done
	row="| $mode | $(median <"$tmp/walls")"
	for k in 2 4 6 8 10; do
		row="$row | $(cat "$XDG_STATE_HOME"/aisb/sessions/*/record |
		    awk -v k=$((k + 1)) '$1 == "timings_ms" { print $k }' | median)"
	done
	echo "$row |"
done
echo "# $runs timed sessions of \`true\` per mode, medians; $(nproc) cores, $(date -u +%FT%TZ)"
