#!/bin/bash
# compare.sh: aisb-gate against squid, tinyproxy and no proxy on 127.0.0.1.
#
#   compare.sh [--smoke] [--gate PATH] [--bindir DIR] [--only LIST]
#              [--rounds N] [--workers N] [--perf DIR] [--replay FILE]
#              [--gate-arg ARG]... [--record]
#
# Starts tests/bench/target (echo, endless source, HTTP responder), then in
# turn no proxy, squid, tinyproxy and aisb-gate, each configured here to
# allow the target and nothing else of note, and drives each with the same
# tests/bench/loadgen runs.  Prints one Markdown table (the figures, the
# ratios of aisb-gate to squid and to no proxy) and the issue-6 targets,
# met or missed.
#
#   BENCH_SECONDS	seconds of each timed run (default 5)
#   --smoke		1 s runs and 500 tunnels for idle and scale: a check
#			that the harness works (CI), not a measurement
#   --gate PATH		aisb-gate to measure (default: ../../aisb-gate from
#			the loadgen's directory, i.e. the build tree)
#   --bindir DIR	where target and loadgen are (default: next to this
#			script, else tests/bench of the current directory)
#   --only LIST		columns to run, comma-separated, of: none,squid,
#			tinyproxy,gate,gatew (default all)
#   --workers N		add a column "gatew": aisb-gate --workers N, its
#			own ratios and target lines; its RSS is the sum of
#			the supervisor and the workers.  Each worker has its
#			own descriptor table, so it also runs the 10,000
#			tunnel row when the hard limit keeps the others
#			below it (a row of its own)
#   --rounds N		run every column N times, interleaved (none, squid,
#			tinyproxy, gate, none, ...), and report the median of
#			each figure, the sum of errors, the worst failures:
#			on a shared machine the load of others drifts
#   --replay FILE	print the table again from the stderr of an earlier
#			run (its "  COLUMN FIGURE: ..." lines), running nothing
#   --perf DIR		record `perf record -g` of aisb-gate during its
#			setup-50 and bulk-1 runs into DIR (perf slows the
#			gate: do not report figures from such a run)
#   --gate-arg ARG	one more argument for every aisb-gate started
#			(repeat it for several; the words of the environment
#			variable GATE_ARGS are added too)
#   --record		measure a recording gate: every aisb-gate started
#			gets --record into a new file of the temporary
#			directory (removed when that gate stops) and
#			--record-max RECORD_MAX (default 1G: a bulk run may
#			reach it, after which the gate no longer records;
#			raise it on a disk with room).  A recording gate
#			runs one process: with --workers its column fails
#
# Run as root: it raises RLIMIT_NOFILE as far as the hard limit allows (a
# tunnel costs a proxy two descriptors, so 10,000 tunnels need a hard limit
# above 20,000; with less the scale row is measured at the largest count
# that fits and says so), and installs squid and tinyproxy with apt-get
# when they are missing (a column whose proxy cannot be had is skipped
# with a note).  Every process it starts is killed by its pid, and its
# temporary directory removed, on every exit.  Traffic: 127.0.0.1 only.
# Exit status: 0 when aisb-gate was measured (targets met or not), 1 when
# it could not be, or, with --smoke, when any of its runs counted errors.
set -u -o pipefail

SECS=${BENCH_SECONDS:-5}
SMOKE=0
GATE=
BINDIR=
ONLY=
WORKERS=0
PERFDIR=
IDLE_N=5000
ROUNDS=1
REPLAY=
SCALE_WANT=10000
GATE_EXTRA=()
RECORD=0
RECORD_N=0
# shellcheck disable=SC2206
[ -n "${GATE_ARGS:-}" ] && GATE_EXTRA+=(${GATE_ARGS})

die() { echo "compare.sh: $*" >&2; exit 1; }
note() { echo "compare.sh: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--gate) GATE=$2; shift ;;
	--bindir) BINDIR=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--perf) PERFDIR=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--workers) WORKERS=$2; shift ;;
	--replay) REPLAY=$2; shift ;;
	--gate-arg) GATE_EXTRA+=("$2"); shift ;;
	--record) RECORD=1 ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next }
		NR > 1 { exit }' "$0"; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
case $SECS in ''|*[!0-9]*) die "BENCH_SECONDS must be a number" ;; esac
case $ROUNDS in ''|0|*[!0-9]*) die "--rounds takes a number from 1" ;; esac
case $WORKERS in ''|*[!0-9]*) die "--workers takes a number" ;; esac
if [ -z "$ONLY" ]; then
	ONLY=none,squid,tinyproxy,gate
	[ "$WORKERS" -gt 1 ] && ONLY=$ONLY,gatew
fi
case ",$ONLY," in *,gatew,*) [ "$WORKERS" -gt 1 ] ||
	die "the gatew column needs --workers N (N >= 2)" ;; esac
if [ "$SMOKE" = 1 ]; then
	SECS=1
	IDLE_N=500
	SCALE_WANT=500
fi

if [ -z "$BINDIR" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	if [ -x "$here/loadgen" ]; then BINDIR=$here
	else BINDIR=$PWD/tests/bench; fi
fi
BINDIR=$(cd "$BINDIR" 2>/dev/null && pwd) || die "no directory $BINDIR"
LOADGEN=$BINDIR/loadgen
TARGET=$BINDIR/target
[ -x "$LOADGEN" ] && [ -x "$TARGET" ] ||
	die "$BINDIR has no target/loadgen: run 'make bench' in the build tree"
[ -n "$GATE" ] || GATE=$BINDIR/../../aisb-gate

# --- descriptors: a tunnel is two in the proxy ---------------------------
want_fd=$((2 * SCALE_WANT + 200))
[ "$want_fd" -lt 100000 ] && want_fd=100000
ulimit -Hn "$want_fd" 2>/dev/null || true
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE=$(ulimit -n)
SCALE_N=$SCALE_WANT
SCALE_NOTE=
if [ "$NOFILE" != unlimited ] && [ $((2 * SCALE_N + 100)) -gt "$NOFILE" ]; then
	SCALE_N=$(((NOFILE - 100) / 2))
	SCALE_NOTE="RLIMIT_NOFILE hard limit is $NOFILE here and cannot be raised (no CAP_SYS_RESOURCE): $SCALE_WANT tunnels need $((2 * SCALE_WANT + 100)) descriptors in the proxy, so the scale row holds $SCALE_N"
	note "$SCALE_NOTE"
fi

# free_port, wait_port, have_or_install, squid_conf_common, stop_pids
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"

# --- processes and files, all removed on exit ----------------------------
TMP=$(mktemp -d /tmp/aisb-bench.XXXXXX) || die "mktemp"
chmod 0755 "$TMP"
PIDS=()
POLICY_RC_MADE=0
cleanup() {
	stop_pids "${PIDS[@]}"
	PIDS=()
	[ "$POLICY_RC_MADE" = 1 ] && rm -f /usr/sbin/policy-rc.d
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# stop_pid PID: end one process this script started, and forget it
stop_pid() {
	local p=$1 q keep=()
	stop_pids "$p"
	for q in "${PIDS[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
	PIDS=("${keep[@]}")
}

# --- target ------------------------------------------------------------
if [ -z "$REPLAY" ]; then
"$TARGET" -t 3600 -m $((SCALE_N * 2 + 1000)) >"$TMP/target.ports" \
	2>"$TMP/target.err" &
TPID=$!
PIDS+=("$TPID")
for _ in $(seq 1 50); do
	[ "$(wc -l <"$TMP/target.ports")" -ge 3 ] && break
	sleep 0.1
done
ECHO=$(awk '$1 == "echo" { print $2 }' "$TMP/target.ports")
SOURCE=$(awk '$1 == "source" { print $2 }' "$TMP/target.ports")
HTTP=$(awk '$1 == "http" { print $2 }' "$TMP/target.ports")
[ -n "$ECHO" ] && [ -n "$SOURCE" ] && [ -n "$HTTP" ] ||
	die "target did not start: $(cat "$TMP/target.err")"
fi

declare -A R	# R[column,figure] = value
declare -A NOTE	# NOTE[column] = why it was skipped
declare -A DIED	# DIED[column] = the proxy exited by itself

# kv LINE KEY: the value of KEY=... in a loadgen line
kv() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }

# lg COLUMN FIGURE PROXYARG ARGS...: one loadgen run, its line kept
lg() {
	local col=$1 fig=$2 x=$3 out
	shift 3
	out=$("$LOADGEN" -x "$x" -e "$ECHO" -s "$SOURCE" -h "$HTTP" "$@" \
		2>>"$TMP/loadgen.err") || out="loadgen failed (exit $?)"
	R[$col,$fig]+="$out"$'\n'
	echo "  $col $fig: $out" >&2
	sleep 1		# let the proxy settle the aborted connections
}

# Each column has a start_COLUMN that starts its proxy (sets CUR_X, the
# loadgen -x argument, and CUR_PID, whose RSS is read) or returns 1 with
# NOTE[COLUMN] set, and is stopped with stop_cur.
CUR_X=
CUR_PID=
CUR_OWN=0

CUR_LOG=
stop_cur() {
	local st
	if [ "$CUR_OWN" = 1 ]; then
		if ! kill -0 "$CUR_PID" 2>/dev/null; then
			wait "$CUR_PID" 2>/dev/null
			st=$?
			note "$CUR_COL (pid $CUR_PID) had exited before the end of its runs (status $st); its log ends:"
			tail -5 "$CUR_LOG" >&2
			DIED[$CUR_COL]="${DIED[$CUR_COL]:-}exited during a run (status $st); "
		fi
		stop_pid "$CUR_PID"
	fi
	# a recording gate's capture: gone with its gate (--record)
	[ "$RECORD" = 1 ] && [ -n "${CUR_COL:-}" ] && rm -f "$TMP/$CUR_COL"/record.*.pcapng
	CUR_OWN=0
}

start_none() {
	CUR_X=none
	CUR_PID=$TPID	# no proxy: the idle row shows the target's own RSS
	CUR_OWN=0
}

start_squid() {
	local port
	if [ -z "${SQUID:-}" ]; then
		have_or_install squid squid || {
			NOTE[squid]="squid is not installed and apt-get could not install it"
			return 1
		}
		SQUID=$(command -v squid || echo /usr/sbin/squid)
	fi
	port=$(free_port) || { NOTE[squid]="no free port"; return 1; }
	mkdir -p "$TMP/squid"
	chown proxy: "$TMP/squid" 2>/dev/null
	cat >"$TMP/squid/squid.conf" <<EOF
# written by tests/bench/compare.sh: a CONNECT/forward proxy, no cache
http_port 127.0.0.1:$port
acl SSL_ports port 1-65535
acl Safe_ports port 1-65535
acl CONNECT method CONNECT
http_access deny !Safe_ports
http_access deny CONNECT !SSL_ports
$(squid_conf_common "$TMP/squid" "$NOFILE")
via off
forwarded_for delete
client_idle_pconn_timeout 600 seconds
read_timeout 600 seconds
EOF
	"$SQUID" -N -f "$TMP/squid/squid.conf" >>"$TMP/squid/stdout" 2>&1 &
	CUR_PID=$!
	CUR_COL=squid
	CUR_LOG=$TMP/squid/cache.log
	CUR_OWN=1
	PIDS+=("$CUR_PID")
	CUR_X=127.0.0.1:$port
	wait_port "$port" "$CUR_PID" && return 0
	NOTE[squid]="squid did not start: $(tail -3 "$TMP/squid/cache.log" "$TMP/squid/stdout" 2>/dev/null | tr '\n' ' ')"
	stop_cur
	return 1
}

start_tinyproxy() {
	local port
	if [ -z "${TINY:-}" ]; then
		have_or_install tinyproxy tinyproxy || {
			NOTE[tinyproxy]="tinyproxy is not installed and apt-get could not install it"
			return 1
		}
		TINY=$(command -v tinyproxy || echo /usr/sbin/tinyproxy)
	fi
	port=$(free_port) || { NOTE[tinyproxy]="no free port"; return 1; }
	mkdir -p "$TMP/tinyproxy"
	# no ConnectPort line: every port may be CONNECTed to; no LogFile and
	# no Syslog: what it logs at Critical goes to stdout, kept in $TMP
	cat >"$TMP/tinyproxy/tinyproxy.conf" <<EOF
# written by tests/bench/compare.sh
User nobody
Group nogroup
Port $port
Listen 127.0.0.1
Timeout 600
MaxClients $((SCALE_N + 1000))
LogLevel Critical
Syslog Off
Allow 127.0.0.1
DisableViaHeader Yes
EOF
	"$TINY" -d -c "$TMP/tinyproxy/tinyproxy.conf" \
		>>"$TMP/tinyproxy/stdout" 2>&1 &
	CUR_PID=$!
	CUR_COL=tinyproxy
	CUR_LOG=$TMP/tinyproxy/stdout
	CUR_OWN=1
	PIDS+=("$CUR_PID")
	CUR_X=127.0.0.1:$port
	wait_port "$port" "$CUR_PID" && return 0
	NOTE[tinyproxy]="tinyproxy did not start: $(tail -3 "$TMP/tinyproxy/stdout" | tr '\n' ' ')"
	stop_cur
	return 1
}

start_gate() {		# start_gate [--workers N]: sets CUR_RSS too
	local port col=gate c
	[ $# -gt 0 ] && col=gatew
	if [ ! -x "$GATE" ]; then
		NOTE[$col]="no aisb-gate at $GATE (--gate PATH)"
		return 1
	fi
	mkdir -p "$TMP/$col"
	rm -f "$TMP/$col/port"
	printf 'version: 1\nallow:\n  - cidr: 127.0.0.1/32\n    ports: ["1-65535"]\nallow_ranges: [127.0.0.1/32]\n' \
		>"$TMP/$col/policy.yaml"
	local extra=("${GATE_EXTRA[@]}")
	if [ "$RECORD" = 1 ]; then
		RECORD_N=$((RECORD_N + 1))
		rm -f "$TMP/$col"/record.*.pcapng
		extra+=(--record "$TMP/$col/record.$RECORD_N.pcapng"
			--record-max "${RECORD_MAX:-1G}")
	fi
	"$GATE" -f "$TMP/$col/policy.yaml" -d -l 127.0.0.1:0 \
		--port-file "$TMP/$col/port" --audit /dev/null \
		--max-conns $((SCALE_WANT + 1000)) \
		--max-per-client $((SCALE_WANT + 1000)) \
		--idle-timeout 600 "${extra[@]}" "$@" >>"$TMP/$col/stdout" 2>&1 &
	CUR_PID=$!
	CUR_COL=$col
	CUR_LOG=$TMP/$col/stdout
	CUR_OWN=1
	PIDS+=("$CUR_PID")
	for _ in $(seq 1 100); do
		[ -s "$TMP/$col/port" ] && break
		kill -0 "$CUR_PID" 2>/dev/null || break
		sleep 0.1
	done
	port=$(tr -dc 0-9 <"$TMP/$col/port" 2>/dev/null)
	CUR_X=127.0.0.1:$port
	if [ -n "$port" ] && wait_port "$port" "$CUR_PID"; then
		# the workers are the supervisor's children; RSS counts them all
		CUR_RSS=$CUR_PID
		if [ $# -gt 0 ]; then
			sleep 0.3
			read -r -a kids <"/proc/$CUR_PID/task/$CUR_PID/children" 2>/dev/null || kids=()
			for c in "${kids[@]}"; do
				CUR_RSS=$CUR_RSS,$c
			done
		fi
		return 0
	fi
	NOTE[$col]="aisb-gate did not start: $(tail -3 "$TMP/$col/stdout" | tr '\n' ' ')"
	stop_cur
	return 1
}
start_gatew() { start_gate --workers "$WORKERS"; }

# perf_on COLUMN NAME / perf_off: profile aisb-gate during one run (--perf)
PERF_PID=
perf_on() {
	[ -n "$PERFDIR" ] && [ "$1" = gate ] && command -v perf >/dev/null ||
		return 0
	mkdir -p "$PERFDIR"
	perf record -g -o "$PERFDIR/$2.data" -p "$CUR_PID" >/dev/null 2>&1 &
	PERF_PID=$!
	PIDS+=("$PERF_PID")
}
perf_off() {
	[ -n "$PERF_PID" ] || return 0
	kill -INT "$PERF_PID" 2>/dev/null
	sleep 1
	stop_pid "$PERF_PID"
	PERF_PID=
}

# suite COLUMN: every figure for one column.  Idle and scale each begin
# with a freshly started proxy, so that memory freed by earlier runs does
# not hide the growth.
suite() {
	local col=$1
	note "measuring $col"
	CUR_RSS=
	start_"$col" || { note "${NOTE[$col]}"; return; }
	lg "$col" idle "$CUR_X" idle -n "$IDLE_N" -p "${CUR_RSS:-$CUR_PID}" -H 1
	stop_cur
	CUR_RSS=
	start_"$col" || { note "${NOTE[$col]}"; return; }
	lg "$col" scale "$CUR_X" idle -n "$SCALE_N" -p "${CUR_RSS:-$CUR_PID}" -H 2
	if [ "$col" = gatew ] && [ "$SCALE_N" -lt "$SCALE_WANT" ]; then
		# one descriptor table per worker: the full count fits
		stop_cur
		start_"$col" || { note "${NOTE[$col]}"; return; }
		lg "$col" scalefull "$CUR_X" idle -n "$SCALE_WANT" -p "$CUR_RSS" -H 2
	fi
	lg "$col" setup1 "$CUR_X" setup -c 1 -d "$SECS"
	perf_on "$col" setup50
	lg "$col" setup50 "$CUR_X" setup -c 50 -d "$SECS"
	perf_off
	perf_on "$col" bulk1
	lg "$col" bulk1 "$CUR_X" bulk -c 1 -d "$SECS"
	perf_off
	lg "$col" bulk8 "$CUR_X" bulk -c 8 -d "$SECS"
	lg "$col" http50 "$CUR_X" http -c 50 -d "$SECS"
	stop_cur
}

want() { case ",$ONLY," in *",$1,"*) return 0 ;; esac; return 1; }

if [ -n "$REPLAY" ]; then
	# the "  COLUMN FIGURE: loadgen line" records of an earlier run's
	# stderr: the table again, without running anything
	while IFS= read -r l; do
		[[ $l =~ ^\ \ (none|squid|tinyproxy|gate|gatew)\ ([a-z0-9]+):\ (.*)$ ]] ||
			continue
		want "${BASH_REMATCH[1]}" || continue
		R[${BASH_REMATCH[1]},${BASH_REMATCH[2]}]+="${BASH_REMATCH[3]}"$'\n'
		case ${BASH_REMATCH[2]} in
		idle) IDLE_N=$(kv "${BASH_REMATCH[3]}" n) ;;
		scale) SCALE_N=$(kv "${BASH_REMATCH[3]}" n) ;;
		setup1) SECS=$(kv "${BASH_REMATCH[3]}" seconds | cut -d. -f1) ;;
		esac
	done <"$REPLAY"
	ROUNDS=0
	for c in none squid tinyproxy gate gatew; do
		n=$(grep -c . <<<"${R[$c,setup1]:-}")
		[ "$n" -gt "$ROUNDS" ] && ROUNDS=$n
	done
	[ "$SCALE_N" -lt "$SCALE_WANT" ] && [ -z "$SCALE_NOTE" ] &&
		SCALE_NOTE="the run held $SCALE_N tunnels"
	for c in none squid tinyproxy gate gatew; do
		want "$c" && [ -z "${R[$c,setup1]:-}" ] &&
			NOTE[$c]="not in $REPLAY"
	done
else
for r in $(seq 1 "$ROUNDS"); do
	[ "$ROUNDS" -gt 1 ] && note "round $r of $ROUNDS"
	for c in none squid tinyproxy gate gatew; do
		want "$c" || continue
		[ -n "${NOTE[$c]:-}" ] && continue
		suite "$c"
	done
done
fi

# --- the table -----------------------------------------------------------
# cell COLUMN FIGURE KEY: a value, "-" when absent, errors appended
cell() {
	local line=${R[$1,$2]:-} v e
	[ -n "$line" ] || { echo "-"; return; }
	v=$(fmt "$(val "$1" "$2" "$3")")
	e=$(val "$1" "$2" errors)
	if [ -n "$e" ] && [ "$e" != 0 ] && [ "$3" != failures ]; then
		v="$v ($e err)"
	fi
	grep -q '^loadgen failed' <<<"$line" && v="$v (loadgen failed)"
	echo "${v:--}"
}
# val COLUMN FIGURE KEY: over the rounds, the median of KEY; the sum for
# errors and the largest for failures, so that none is hidden
val() {
	local line=${R[$1,$2]:-}
	[ -n "$line" ] || return 0
	while IFS= read -r l; do
		[ -n "$l" ] && kv "$l" "$3"
	done <<<"$line" | sort -n | awk -v k="$3" '
		{ v[NR] = $1; s += $1 }
		END {
			if (NR == 0) exit
			if (k == "errors") print s
			else if (k == "failures") print v[NR]
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio A B: A/B to two decimals, "-" when either is missing or B is 0
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0 || a + 0 < 0 || b + 0 < 0)
			print "-"
		else printf "%.2fx\n", a / b }'
}
fmt() {		# thousands separators for integers, one decimal otherwise
	awk -v v="$1" 'BEGIN {
		if (v !~ /^-?[0-9.]+$/) { print v; exit }
		if (v ~ /\./) s = sprintf("%.1f", v); else s = sprintf("%d", v)
		n = split(s, p, "."); i = p[1]; o = ""
		while (length(i) > 3) { o = "," substr(i, length(i) - 2) o
			i = substr(i, 1, length(i) - 3) }
		o = i o; if (n > 1) o = o "." p[2]; print o }'
}

declare -A names
names=([none]="no proxy" [squid]="squid" [tinyproxy]="tinyproxy" [gate]="aisb-gate"
	[gatew]="aisb-gate --workers $WORKERS")
if [ "$RECORD" = 1 ]; then
	names[gate]="aisb-gate --record"
	names[gatew]="aisb-gate --workers $WORKERS --record"
fi

row() {		# row LABEL FIGURE KEY [noratio]
	local label=$1 fig=$2 key=$3 c g line
	line="| $label |"
	for c in none squid tinyproxy gate gatew; do
		want "$c" || continue
		if [ -n "${NOTE[$c]:-}" ]; then line="$line skipped |"; continue; fi
		line="$line $(cell "$c" "$fig" "$key") |"
	done
	for g in gate gatew; do
		want "$g" || continue
		if [ -n "${4:-}" ]; then
			line="$line - | - |"
		else
			line="$line $(ratio "$(val $g "$fig" "$key")" "$(val squid "$fig" "$key")") | $(ratio "$(val $g "$fig" "$key")" "$(val none "$fig" "$key")") |"
		fi
	done
	echo "$line"
}

echo
echo "aisb proxy comparison: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p), ${SECS} s runs, $ROUNDS round(s) (median)$([ "$SMOKE" = 1 ] && echo ', SMOKE (not a measurement)')"
echo "squid: $( (squid -v 2>/dev/null || /usr/sbin/squid -v 2>/dev/null) | sed -n '1s/.*Version //p'), tinyproxy: $(tinyproxy -v 2>/dev/null | awk '{print $2}'), nofile: $NOFILE"
echo
hdr="| figure |"; sep="| --- |"
for c in none squid tinyproxy gate gatew; do
	want "$c" || continue
	hdr="$hdr ${names[$c]} |"; sep="$sep ---: |"
done
if want gate; then hdr="$hdr gate/squid | gate/no proxy |"; sep="$sep ---: | ---: |"; fi
if want gatew; then hdr="$hdr gate -w$WORKERS/squid | gate -w$WORKERS/no proxy |"; sep="$sep ---: | ---: |"; fi
echo "$hdr"
echo "$sep"
row "tunnel setup, 1 concurrent (tunnels/s)" setup1 rate
row "  p50 latency (us)" setup1 p50_us
row "  p99 latency (us)" setup1 p99_us
row "tunnel setup, 50 concurrent (tunnels/s)" setup50 rate
row "  p50 latency (us)" setup50 p50_us
row "  p99 latency (us)" setup50 p99_us
row "bulk, 1 stream (MB/s)" bulk1 mbps
row "bulk, 8 streams (MB/s)" bulk8 mbps
row "idle RSS per tunnel, $IDLE_N tunnels (bytes)" idle per_tunnel
row "  failures of $IDLE_N" idle failures noratio
row "$SCALE_N concurrent tunnels: failures" scale failures noratio
row "  proxy RSS per tunnel at $SCALE_N (bytes)" scale per_tunnel
if want gatew && [ "$SCALE_N" -lt "$SCALE_WANT" ]; then
	row "$SCALE_WANT concurrent tunnels, --workers only (fd limit): failures" scalefull failures noratio
	row "  proxy RSS per tunnel at $SCALE_WANT (bytes)" scalefull per_tunnel
fi
row "HTTP forward, 50 concurrent (req/s)" http50 rate
echo
echo "MB = 10^6 bytes; latency from connect() to the echoed byte; (N err) = loadgen errors in that run."
echo "RSS growth of the no-proxy column is the target's own (4 KiB echo buffer per connection)."
[ -n "$SCALE_NOTE" ] && echo "Scale: $SCALE_NOTE."
for c in squid tinyproxy gate gatew; do
	[ -n "${NOTE[$c]:-}" ] && echo "Skipped ${names[$c]}: ${NOTE[$c]}"
	[ -n "${DIED[$c]:-}" ] && echo "${names[$c]} ${DIED[$c]}"
done

# --- issue-6 targets -----------------------------------------------------
check() {	# check TEXT OK(0/1) DETAIL
	case $2 in
	1) echo "- met:    $1 ($3)" ;;
	*n/a*) echo "- n/a:    $1 ($3: a column is missing)" ;;
	*) echo "- MISSED: $1 ($3)" ;;
	esac
}
cmp() { awk -v a="${1:-}" -v op="$2" -v b="${3:-}" 'BEGIN {
	if (a == "" || b == "") { print "n/a"; exit }
	if (op == ">=") print (a + 0 >= b + 0) ? 1 : 0
	else print (a + 0 <= b + 0) ? 1 : 0 }'; }
mul() { awk -v a="${1:-}" -v m="$2" 'BEGIN { if (a == "") print ""; else print a * m }'; }
targets() {	# targets COLUMN
	local c=$1 g s n b ok sc sn
	echo
	echo "Issue-6 targets for ${names[$c]}:"
	g=$(val "$c" setup50 rate); s=$(val squid setup50 rate)
	check "setup rate at 50 >= 2x squid" "$(cmp "$g" '>=' "$(mul "$s" 2)")" "gate $(fmt "$g")/s, squid $(fmt "${s:--}")/s, $(ratio "$g" "$s")"
	g=$(val "$c" setup1 p50_us); s=$(val squid setup1 p50_us)
	check "p50 setup latency at 1 <= squid/2" "$(cmp "$g" '<=' "$(mul "$s" 0.5)")" "gate $g us, squid ${s:--} us"
	for b in bulk1 bulk8; do
		g=$(val "$c" $b mbps); s=$(val squid $b mbps); n=$(val none $b mbps)
		ok="$(cmp "$g" '>=' "$(mul "$s" 1.5)")$(cmp "$g" '>=' "$(mul "$n" 0.6)")"
		[ "$ok" = 11 ] && ok=1
		check "$b >= 1.5x squid and >= 0.6x no proxy" "$ok" "gate $(fmt "$g") MB/s, $(ratio "$g" "$s") squid, $(ratio "$g" "$n") no proxy"
	done
	g=$(val "$c" idle per_tunnel)
	check "idle tunnel <= 4 KiB of proxy RSS" "$(cmp "$g" '<=' 4096)" "$(fmt "$g") bytes at $IDLE_N"
	sc=scale; sn=$SCALE_N
	if [ -n "${R[$c,scalefull]:-}" ]; then sc=scalefull; sn=$SCALE_WANT; fi
	g=$(val "$c" $sc failures)
	ok=0; [ "$g" = 0 ] && [ "$sn" -ge 10000 ] && ok=1
	check "10,000 concurrent tunnels, zero failures" "$ok" "$g failures of $sn$([ "$sn" -lt "$SCALE_WANT" ] && [ -n "$SCALE_NOTE" ] && echo "; 10,000 not reachable on this host")$([ "$SMOKE" = 1 ] && echo "; smoke run")"
}
for c in gate gatew; do
	want $c && [ -z "${NOTE[$c]:-}" ] && targets $c
done
# The exit status says whether the harness worked, not whether targets
# were met: 1 when aisb-gate could not be measured, and with --smoke also
# when any of its runs counted an error.
for c in gate gatew; do
	want $c || continue
	[ -n "${NOTE[$c]:-}" ] || [ -n "${DIED[$c]:-}" ] && exit 1
	if [ "$SMOKE" = 1 ]; then
		for f in idle scale setup1 setup50 bulk1 bulk8 http50; do
			e=$(val $c "$f" errors)
			if [ "${e:-1}" != 0 ] || grep -q '^loadgen failed' <<<"${R[$c,$f]:-}"; then
				note "smoke: ${names[$c]} $f: ${e:-no} error(s)"
				exit 1
			fi
		done
	fi
done
exit 0
