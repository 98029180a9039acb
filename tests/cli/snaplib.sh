# What the snapshot tests that run tests/cli/snapdraft share (sourced by
# snapshot_draft.sh, snapshot_conf.sh, snapshot_policy.sh): the programs,
# a temporary HOME, XDG folders and workspace ($ws, the current folder),
# the counters, and session FLAGS... -- COMMAND, which runs one session
# as aisb does ($id its id, $rc, $tmp/out, $tmp/err).
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
build=$(cd "$top_builddir" && pwd)
aisb=$build/aisb
snapdraft=$build/tests/cli/snapdraft
command -v flock >/dev/null || { echo "SKIP: flock not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home/.config/aisb" "$tmp/ws"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
sessions=$XDG_STATE_HOME/aisb/sessions
mkdir -p "$sessions"
ws=$(cd "$tmp/ws" && pwd -P)
cd "$ws"

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
run() { rc=0; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?; }
said() { if grep -q -- "$2" "$tmp/err"; then ok; else bad "$1: $(cat "$tmp/err")"; fi; }
n=0 id=
session() {
	n=$((n + 1))
	id=$(printf '%024x' "$n")
	run "$snapdraft" "$sessions/$id" "$@"
}
