#!/bin/bash
# aisb-gate log rotation under load: while clients make requests without
# pause, the test renames the audit log and sends SIGUSR1 (logrotate's
# postrotate) several times, to one process and to --workers 2.  Then
# every line of every file is whole JSON, no line is in two files, and the
# decision lines add up to the requests made: none lost, none split.
# The clients run from before the first rotation until after the last, so
# the load spans them however fast the machine is (a fixed count of
# requests once ended before the third rotation on a fast machine).
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
echo_port=$up
start_dns '{"ok.test": {"A": ["192.0.2.10"], "ttl": 300}}'
write_policy "$tmp/policy.yaml" ok.test

ROTATIONS=6
MAX_PER_CLIENT=2000	# a bound, should the stop file never come
CLIENTS=4

# client NAME.N: requests one after the other until $tmp/stop.NAME exists;
# their codes in a file, one line each
client() {
	local i=0
	while [ ! -e "$tmp/stop.${1%.*}" ] && [ "$i" -lt "$MAX_PER_CLIENT" ]; do
		i=$((i + 1))
		curl -sS -m 10 -o /dev/null -w '%{http_code}\n' \
		    -x "http://127.0.0.1:$gate_port" \
		    "http://ok.test:$up/$1/$i" 2>/dev/null || echo fail
	done >"$tmp/codes.$1"
}

# run NAME WORKERS: load and rotations against one gate
run() {
	local name=$1 workers=$2 r c i cps=() log files rc=0 total
	shift 2
	start_gate "$name" "$tmp/policy.yaml" --workers "$workers"
	log=$tmp/audit.$name.log
	for c in $(seq 1 "$CLIENTS"); do
		client "$name.$c" &
		cps+=($!)
	done
	# the load has begun before the first rotation
	for i in $(seq 200); do [ -s "$log" ] && break; sleep 0.05; done
	for r in $(seq 1 "$ROTATIONS"); do
		sleep 0.3	# pacing: let lines accumulate between rotations
		mv "$log" "$log.$r"
		kill -USR1 "$gate_pid"
		# the gate creates the file again when it reopens
		for i in $(seq 100); do [ -e "$log" ] && break; sleep 0.05; done
	done
	: >"$tmp/stop.$name"
	wait "${cps[@]}"
	total=$(cat "$tmp"/codes."$name".* | wc -l)
	# the last lines of the loop turns in flight: the gate writes them
	# before it exits
	kill -TERM "$gate_pid"
	wait "$gate_pid" || rc=$?
	check "$name: gate exit" "$rc" 0
	files=("$log" "$log".*)
	check "$name: $ROTATIONS rotated files and the live one" \
	    "${#files[@]}" $((ROTATIONS + 1))
	check "$name: all requests answered 200" \
	    "$(cat "$tmp"/codes."$name".* | sort | uniq -c | awk '{ print $1 " x " $2 }')" \
	    "$total x 200"
	"$PY" - "${files[@]}" >"$tmp/lines.$name" <<'PY'
import json, sys
decisions, closes, bad, seen, nonempty = 0, 0, 0, set(), 0
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    if data and not data.endswith(b"\n"):
        bad += 1
    n = 0
    for line in data.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            bad += 1
            continue
        n += 1
        key = (o["event"], o["conn"])
        if key in seen:
            bad += 1
        seen.add(key)
        decisions += o["event"] == "decision"
        closes += o["event"] == "close"
    nonempty += n > 0
print(decisions, closes, bad, nonempty)
PY
	read -r dec clo badl nonempty <"$tmp/lines.$name"
	check "$name: decision lines == requests" "$dec" "$total"
	check "$name: close lines == requests" "$clo" "$total"
	check "$name: no torn, partial or repeated line" "$badl" 0
	# the load spans the rotations: lines went to several files
	if [ "$nonempty" -ge 3 ]; then ok; else
		bad "$name: only $nonempty file(s) got lines"
	fi
	check "$name: SIGUSR1 logged" "$(grep -c 'SIGUSR1: audit log reopened' \
	    "$tmp/gate.$name.err")" $((ROTATIONS * workers))
}

run one 1
run two 2
finish
