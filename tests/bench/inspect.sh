#!/bin/bash
# inspect.sh: aisb-gate's inspected hosts (issue 29) against plain CONNECT
# through the same gate, mitmproxy and squid's ssl-bump, on 127.0.0.1.
#
#   inspect.sh [--rounds N] [--seconds S] [--bindir DIR] [--gate PATH]
#              [--only LIST] [--figures LIST] [--idle N]
#
# Starts tests/bench/tlsbench serve (HTTPS/1.1, a certificate of a CA made
# here), a DNS responder for the gate (tests/integration/gate_dns.py:
# localhost is 127.0.0.1), and the proxies, each decrypting what the client
# sends to localhost and checking the server's certificate against that CA:
#
#   plain   aisb-gate, a policy allowing localhost without inspection: the
#           client's TLS goes through a CONNECT tunnel (the baseline)
#   gate    aisb-gate, the same rule with inspect: true (its session CA);
#           the upstream leg of a connection that ended cleanly is kept
#           and serves the next one (one TLS handshake a connection: the
#           client's)
#   fresh   the same, with --no-upstream-reuse: every connection dials
#           and verifies its own upstream (two TLS handshakes)
#   mitm    mitmdump (mitmproxy 8), its own CA; bodies over 64 KiB
#           streamed (stream_large_bodies: else it holds a download whole)
#   squid   squid-openssl with ssl-bump (peek, then bump), a CA made here
#
# Then N rounds (default 3), the proxies interleaved in each (figure by
# figure, every proxy in turn; every other round in reverse), of tlsbench:
# setup at 1 and 50 concurrent (connect, CONNECT, TLS, GET, answer, close;
# every handshake a full one), ttfb (one connection, GET of a streamed
# answer, time to its first body byte), bulk (one connection reading), and
# once, after the rounds, idle (connections held after one request: the
# proxy's RSS per connection).  Prints each run and a table of the ratios
# over the rounds as min..max.  mitmproxy and squid-openssl are installed
# with apt-get when missing (as root; a proxy that cannot be had is
# skipped with a note): they are the benchmark's, not the tests'.
# --only picks proxies (plain,gate,fresh,mitm,squid), --figures the runs of a
# round (setup1,setup50,ttfb,bulk), --idle 0 leaves idle out.
#
# Every process it starts is killed by its pid on exit; traffic: 127.0.0.1.
set -u -o pipefail

ROUNDS=3 SECS=${BENCH_SECONDS:-5} BINDIR='' GATE='' ONLY=plain,gate,fresh,mitm,squid
FIGS=setup1,setup50,ttfb,bulk
IDLE_N=1000
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--bindir) BINDIR=$2; shift 2 ;;
	--gate) GATE=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--figures) FIGS=$2; shift 2 ;;
	--idle) IDLE_N=$2; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next }
		NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "inspect.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
B=${BINDIR:-tests/bench}
G=${GATE:-./aisb-gate}
TB=$B/tlsbench
DNS=$here/../integration/gate_dns.py
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
[ -x "$TB" ] && [ -x "$G" ] && [ -r "$DNS" ] || {
	echo "inspect.sh: needs $TB and $G (make bench-inspect in the build tree)" >&2
	exit 1
}
note() { echo "inspect.sh: $*" >&2; }
want() { case ",$ONLY," in *,$1,*) return 0 ;; esac; return 1; }
fig() { case ",$FIGS," in *,$1,*) return 0 ;; esac; return 1; }

T=$(mktemp -d /tmp/aisb-ibench.XXXXXX)
chmod 0755 "$T"
export TMP=$T	# lib.sh: apt's logs
PIDS=()
POLICY_RC_MADE=0
# free_port, wait_port, have_or_install, squid_conf_common, stop_pids
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
cleanup() {
	stop_pids "${PIDS[@]}"
	[ "$POLICY_RC_MADE" = 1 ] && rm -f /usr/sbin/policy-rc.d
	if [ -n "${INSPECT_KEEP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# --- the server, its CA, the names ---------------------------------------
cd "$T" || exit 1
ossl() { openssl "$@" 2>/dev/null; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=bench upstream CA" -keyout upca.key -out upca.pem \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
    -keyout srv.key -out srv.csr
printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n' >srv.ext
ossl x509 -req -in srv.csr -CA upca.pem -CAkey upca.key -CAcreateserial -days 2 \
    -extfile srv.ext -out srv.pem
cd - >/dev/null || exit 1
"$TB" serve -c "$T/srv.pem" -k "$T/srv.key" >"$T/srv.port" 2>"$T/srv.err" &
SPID=$!
PIDS+=("$SPID")
echo '{"localhost": {"A": ["127.0.0.1"]}}' >"$T/zone.json"
"$PY" "$DNS" --zone "$T/zone.json" --port-file "$T/dns.port" --log /dev/null \
    >/dev/null 2>"$T/dns.err" &
PIDS+=($!)
for _ in $(seq 1 50); do
	[ -s "$T/srv.port" ] && [ -s "$T/dns.port" ] && break
	sleep 0.1
done
SPORT=$(awk '{print $2}' "$T/srv.port")
DPORT=$(cat "$T/dns.port")
[ -n "$SPORT" ] && [ -n "$DPORT" ] || { note "server or DNS did not start"; exit 1; }

# --- the proxies: X[col] the proxy, CA[col] what the client trusts ------
declare -A X CA PID NOTE
gate_policy() {	# gate_policy FILE INSPECT
	cat >"$1" <<EOF
version: 1
allow:
  - host: localhost
    ports: [$SPORT]
    inspect: $2
allow_ranges: [127.0.0.0/8]
dns:
  servers: ["127.0.0.1:$DPORT"]
EOF
}
start_gate() {	# start_gate COL INSPECT [ARGS...]
	local p col=$1 insp=$2
	shift 2
	p=$(free_port) || return 1
	gate_policy "$T/$col.yaml" "$insp"
	set -- "$col" "$insp" "$@"
	"$G" -d -f "$T/$1.yaml" -l "127.0.0.1:$p" --upstream-ca "$T/upca.pem" \
	    --ca-out "$T/$1-ca.pem" --max-conns 20000 --max-per-client 20000 \
	    "${@:3}" >/dev/null 2>"$T/$1.err" &
	PID[$1]=$!
	PIDS+=("${PID[$1]}")
	wait_port "$p" "${PID[$1]}" || { NOTE[$1]="did not start: $(tail -2 "$T/$1.err")"; return 1; }
	X[$1]=127.0.0.1:$p
	CA[$1]=$T/$1-ca.pem
	if [ "$2" = false ]; then CA[$1]=$T/upca.pem; fi
}
start_mitm() {
	local p
	have_or_install mitmdump mitmproxy || { NOTE[mitm]="mitmproxy not installed"; return 1; }
	p=$(free_port) || return 1
	mitmdump -q --listen-host 127.0.0.1 --listen-port "$p" \
	    --set confdir="$T/mitm" --set ssl_verify_upstream_trusted_ca="$T/upca.pem" \
	    --set connection_strategy=eager --set stream_large_bodies=64k \
	    >"$T/mitm.out" 2>&1 &
	PID[mitm]=$!
	PIDS+=("${PID[mitm]}")
	wait_port "$p" "${PID[mitm]}" || { NOTE[mitm]="did not start: $(tail -2 "$T/mitm.out")"; return 1; }
	X[mitm]=127.0.0.1:$p
	CA[mitm]=$T/mitm/mitmproxy-ca-cert.pem
}
start_squid() {
	local p certgen
	have_or_install squid squid-openssl || { NOTE[squid]="squid-openssl not installed"; return 1; }
	if [[ $(squid -v 2>/dev/null || true) != *--with-openssl* ]]; then
		NOTE[squid]="this squid has no ssl-bump (install squid-openssl)"
		return 1
	fi
	certgen=$(ls /usr/lib/squid/security_file_certgen 2>/dev/null) ||
	    { NOTE[squid]="no security_file_certgen"; return 1; }
	p=$(free_port) || return 1
	mkdir -p "$T/squid"
	ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	    -subj "/CN=bench squid CA" -keyout "$T/squid/ca.key" -out "$T/squid/ca.pem" \
	    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
	"$certgen" -c -s "$T/squid/certs" -M 16MB >/dev/null 2>&1
	chown -R proxy: "$T/squid" 2>/dev/null
	cat >"$T/squid/squid.conf" <<EOF
# written by tests/bench/inspect.sh: ssl-bump of every CONNECT, no cache
http_port 127.0.0.1:$p ssl-bump generate-host-certificates=on dynamic_cert_mem_cache_size=16MB tls-cert=$T/squid/ca.pem tls-key=$T/squid/ca.key
sslcrtd_program $certgen -s $T/squid/certs -M 16MB
sslcrtd_children 8 startup=2 idle=1
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
tls_outgoing_options cafile=$T/upca.pem
$(squid_conf_common "$T/squid" 65536)
EOF
	squid -N -f "$T/squid/squid.conf" >"$T/squid/stdout" 2>&1 &
	PID[squid]=$!
	PIDS+=("${PID[squid]}")
	wait_port "$p" "${PID[squid]}" || { NOTE[squid]="did not start: $(tail -2 "$T/squid/cache.log")"; return 1; }
	X[squid]=127.0.0.1:$p
	CA[squid]=$T/squid/ca.pem
}
COLS=()
for c in plain gate fresh mitm squid; do
	want "$c" || continue
	case $c in
	plain) start_gate plain false ;;
	gate) start_gate gate true ;;
	fresh) start_gate fresh true --no-upstream-reuse ;;
	mitm) start_mitm ;;
	squid) start_squid ;;
	esac && COLS+=("$c") || note "$c skipped: ${NOTE[$c]:-}"
done

# tb COL FIG ARGS...: one tlsbench run, its line kept in R[COL,FIG]
declare -A R
kv() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }
tb() {
	local col=$1 fig=$2 out
	shift 2
	out=$("$TB" "$@" -x "${X[$col]}" -t "$SPORT" -n localhost -a "${CA[$col]}" \
	    2>>"$T/tlsbench.err") || out="failed"
	R[$col,$fig]+="$out"$'\n'
	echo "  $col $fig: $out" >&2
	sleep 1
}
# A round runs each figure through every proxy in turn, so the runs a
# ratio compares are seconds apart (the load of a shared machine moves
# over a round); every other round in the reverse order, so no proxy is
# always the first after a pause.
for r in $(seq 1 "$ROUNDS"); do
	note "round $r of $ROUNDS"
	order=("${COLS[@]}")
	if [ $((r % 2)) = 0 ]; then
		order=()
		for ((i = ${#COLS[@]} - 1; i >= 0; i--)); do order+=("${COLS[i]}"); done
	fi
	for f in setup1 setup50 ttfb bulk; do
		fig "$f" || continue
		for c in "${order[@]}"; do
			case $f in
			setup1) tb "$c" setup1 setup -c 1 -d "$SECS" -P "${PID[$c]}" ;;
			setup50) tb "$c" setup50 setup -c 50 -d "$SECS" -P "${PID[$c]}" ;;
			ttfb) tb "$c" ttfb ttfb -r 2000 ;;
			bulk) tb "$c" bulk bulk -c 1 -d "$SECS" -P "${PID[$c]}" ;;
			esac
		done
	done
done
for c in "${COLS[@]}"; do
	[ "$IDLE_N" -gt 0 ] || break
	tb "$c" idle idle -N "$IDLE_N" -P "${PID[$c]}"
done

# --- the table: per round, the ratio; then min..max over the rounds ------
vals() { # vals COL FIG KEY: one value per round
	local l
	while IFS= read -r l; do
		[ -n "$l" ] && kv "$l" "$3"
	done <<<"${R[$1,$2]:-}"
}
span() {	# span COL FIG KEY OTHER: min..max of COL/OTHER, round by round
	paste <(vals "$1" "$2" "$3") <(vals "$4" "$2" "$3") |
	    awk '$1 > 0 && $2 > 0 { r = $1 / $2; if (n == 0 || r < lo) lo = r;
		if (n == 0 || r > hi) hi = r; n++ }
		END { if (n) printf "%.2f..%.2f", lo, hi; else printf "-" }'
}
med() {	# med COL FIG KEY: the median over the rounds
	vals "$1" "$2" "$3" | sort -n | awk '{ v[NR] = $1 }
		END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}
echo
echo "aisb-gate inspected hosts, $ROUNDS rounds of $SECS s, $(nproc) cores," \
    "mitmproxy $(mitmdump --version 2>/dev/null | sed -n 's/^Mitmproxy: //p'), squid" \
    "$(squid -v 2>/dev/null | sed -n '1s/.*Version //p')"
echo
printf '| figure | plain CONNECT | aisb-gate inspect | aisb-gate, fresh upstream | mitmproxy | squid ssl-bump |\n'
printf '| --- | ---: | ---: | ---: | ---: | ---: |\n'
for f in "setup1 rate conn/s at 1" "setup1 p50_us p50 us at 1" \
    "setup50 rate conn/s at 50" "setup50 p50_us p50 us at 50" \
    "setup1 cpu_us_per_conn proxy CPU us per connection (at 1)" \
    "setup50 cpu_us_per_conn proxy CPU us per connection (at 50)" \
    "setup50 load_cpu_us_per_conn load generator CPU us per connection (at 50)" \
    "ttfb p50_us TTFB p50 us" "ttfb p99_us TTFB p99 us" \
    "bulk mbps MB/s, 1 connection" "bulk cpu_us_per_mb proxy CPU us per MB" \
    "bulk load_cpu_us_per_mb load generator CPU us per MB" \
    "idle kib_per_conn KiB per idle connection"; do
	read -r -a words <<<"$f"
	set -- "${words[@]}"
	fig=$1 key=$2
	shift 2
	printf '| %s |' "$*"
	for c in plain gate fresh mitm squid; do
		if want "$c" && [ -n "${X[$c]:-}" ]; then printf ' %s |' "$(med "$c" "$fig" "$key")"
		else printf ' - |'; fi
	done
	echo
done
echo
echo "Ratios, min..max over the rounds (each round's runs interleaved):"
echo
echo "| ratio | value |"
echo "| --- | ---: |"
for g in gate fresh; do
	for o in mitm squid plain; do
		[ -n "${X[$o]:-}" ] && [ -n "${X[$g]:-}" ] || continue
		echo "| setup at 1: $g / $o | $(span "$g" setup1 rate "$o") |"
		echo "| setup at 50: $g / $o | $(span "$g" setup50 rate "$o") |"
		echo "| proxy CPU per connection at 1: $o / $g | $(span "$o" setup1 cpu_us_per_conn "$g") |"
		echo "| proxy CPU per connection at 50: $o / $g | $(span "$o" setup50 cpu_us_per_conn "$g") |"
	done
done
if [ -n "${X[plain]:-}" ] && [ -n "${X[gate]:-}" ]; then
	echo "| bulk: gate / plain CONNECT | $(span gate bulk mbps plain) |"
	echo "| proxy CPU per MB: gate / plain CONNECT | $(span gate bulk cpu_us_per_mb plain) |"
	echo "| TTFB p50 added over plain CONNECT, us | $(paste <(vals gate ttfb p50_us) <(vals plain ttfb p50_us) |
	    awk '{ d = $1 - $2; if (NR == 1 || d < lo) lo = d; if (NR == 1 || d > hi) hi = d }
		END { printf "%d..%d", lo, hi }') |"
fi
for c in plain gate fresh mitm squid; do
	[ -n "${NOTE[$c]:-}" ] && echo "$c: ${NOTE[$c]}"
done
exit 0
