# shellcheck shell=bash
# Shared by the proxy benchmarks (compare.sh, inspect.sh); sourced, not
# run.  The caller defines note() and TMP (its temporary folder, for apt's
# logs), and removes /usr/sbin/policy-rc.d on exit when POLICY_RC_MADE is 1
# (have_or_install made it to keep a package's service from starting).
POLICY_RC_MADE=${POLICY_RC_MADE:-0}

# free_port: a TCP port on 127.0.0.1 below the ephemeral range, unused
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))
		if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# wait_port PORT PID: until PORT listens, PID dies or 15 s pass
wait_port() {
	for _ in $(seq 1 150); do
		kill -0 "$2" 2>/dev/null || return 1
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

have_or_install() {	# have_or_install BINARY PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	[ -x "/usr/sbin/$1" ] && return 0
	[ "$(id -u)" = 0 ] || return 1
	note "installing $2 with apt-get"
	# keep the package's own service from starting: the benchmark starts
	# its own instance with its own configuration
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d &&
			chmod 0755 /usr/sbin/policy-rc.d && POLICY_RC_MADE=1
	fi
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" \
		>"$TMP/apt-$2.log" 2>&1; then
		apt-get update -q >>"$TMP/apt-$2.log" 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" \
			>>"$TMP/apt-$2.log" 2>&1 ||
			note "apt-get install $2 failed: $(tail -1 "$TMP/apt-$2.log")"
	fi
	if [ "$POLICY_RC_MADE" = 1 ]; then
		rm -f /usr/sbin/policy-rc.d
		POLICY_RC_MADE=0
	fi
	command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]
}

# squid_conf_common DIR NOFILE: the end of a squid.conf both benchmarks
# write: clients from 127.0.0.1 only, no cache, no logs but cache.log in
# DIR, one worker, a quick shutdown
squid_conf_common() {
	cat <<EOF
acl bench_clients src 127.0.0.1/32
http_access allow bench_clients
http_access deny all
cache deny all
cache_mem 8 MB
access_log none
cache_store_log none
cache_log $1/cache.log
pid_filename $1/squid.pid
coredump_dir $1
max_filedescriptors $2
workers 1
shutdown_lifetime 1 seconds
EOF
}

# stop_pids PID...: TERM to each, then up to 5 s each to go, then KILL
stop_pids() {
	local p
	for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
	for p in "$@"; do
		for _ in $(seq 1 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
