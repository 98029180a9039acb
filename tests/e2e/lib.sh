# tests/e2e/lib.sh: the start and the end every podman end-to-end test
# shares.  A test sources it after its SKIP checks and calls
#
#   e2e_init NAME
#
# which makes $tmp (also TMPDIR: whatever podman and aisb make goes
# there), a podman store of the test's own (CONTAINERS_STORAGE_CONF), the
# XDG cache, state and config folders under $tmp, $tmp/ws, pids=(),
# pass=0 fail=0, and the EXIT trap.  The trap runs the test's own
# e2e_cleanup_more first when it defines one (named gates down, a user
# removed), kills and reaps "${pids[@]}", removes every container, volume
# and image of the store (the test's alone), unmounts what is left under
# $tmp, shows the last output ($tmp/out, $tmp/err) of a failed run, and
# removes $tmp, keeping the test's exit status.  Failure or not, nothing
# of the test stays.
#
#   ok [MSG]  bad MSG  check MSG GOT WANT     count into $pass and $fail
# shellcheck shell=bash

e2e_init() {
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/aisb-e2e-$1.XXXXXX")
	export TMPDIR=$tmp
	printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' \
	    "$tmp" "$tmp" >"$tmp/storage.conf"
	export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
	export XDG_CACHE_HOME=$tmp/cache XDG_STATE_HOME=$tmp/state
	export XDG_CONFIG_HOME=$tmp/config
	mkdir -p "$XDG_CONFIG_HOME" "$tmp/ws"
	pids=()
	pass=0 fail=0
	trap e2e_cleanup EXIT
}

e2e_cleanup() {
	local rc=$? p m

	if declare -F e2e_cleanup_more >/dev/null; then
		e2e_cleanup_more || true
	fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	podman rm -af -t 0 >/dev/null 2>&1 || true
	podman volume rm -af >/dev/null 2>&1 || true
	podman rmi -af >/dev/null 2>&1 || true
	for m in $(awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' \
	    /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "--- last output" >&2
		cat "$tmp/out" "$tmp/err" >&2 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}

ok()  { pass=$((pass + 1)); [ $# -eq 0 ] || echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }
