# Shared by the enforcer's namespace tests (enforce_netns.sh,
# enforce_record.sh, enforce_init.sh); sourced, not run.  Before sourcing,
# a test sets
#
#   nss=(NAME...)   the network namespaces it makes
#   work=DIR        its scratch folder
#
# and gets pids=(), passed=0 failed=0, and the EXIT trap: every pid killed
# and reaped, what is left in the namespaces killed, the namespaces
# deleted, work removed, the test's exit status kept; and
#
#   skip WHY                           exit 77
#   ok MSG, fail MSG                   count, one TAP-like line each
#   check WHAT GOT WANT                ok or fail
#   wait_file FILE                     up to 10 s for it to exist
#   expect OUTPUT ATTEMPT RESULT [DETAIL]
#                                      enforce_probe's line for ATTEMPT
# shellcheck shell=bash

pids=()
passed=0
failed=0

enf_cleanup() {
	local rc=$? p ns
	set +eu
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for ns in "${nss[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	[ -z "$work" ] || rm -rf "$work"
	exit "$rc"
}
trap enf_cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
ok()   { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi; }

wait_file() {
	local i
	for i in $(seq 1 100); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $1" >&2
	return 1
}

expect() {
	local out=$1 what=$2 want=$3 detail=${4-} line
	line=$(awk -v w="$what" '$1 == w { print; exit }' "$out" 2>/dev/null || true)
	if [ -z "$line" ]; then
		fail "$what: no line from the probe (${out##*/})"
		return
	fi
	# shellcheck disable=SC2086
	set -- $line
	if [ "$2" != "$want" ]; then
		fail "$what: $want expected, got: $line (${out##*/})"
	elif [ -n "$detail" ] && [ "${line#"$1 $2 "}" != "$detail" ]; then
		fail "$what: \"$detail\" expected, got: $line"
	else
		ok "$what $want"
	fi
}
