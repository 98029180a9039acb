# tests/cli/lib.sh: the start every CLI test of a session's options
# shares.  A test sources it after set -euo pipefail and gets: errtrap.sh
# (a death names its command and line), $aisb of the build, $tmp (removed
# on exit) with $tmp/home, $tmp/ws and a user with no config at all
# (HOME, XDG_CONFIG_HOME, XDG_STATE_HOME under $tmp; no AISB_* variable),
# and
#
#   ok  bad MSG  check MSG GOT WANT     count into $pass and $fail
#   run CMD...                          CMD in $tmp/ws: $tmp/out, $tmp/err,
#                                       its status in $rc
# shellcheck shell=bash

. "$(dirname "${BASH_SOURCE[0]}")/../errtrap.sh"

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/ws"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
unset $(env | sed -n 's/^\(AISB_[A-Z_]*\)=.*/\1/p') 2>/dev/null || true

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
run() {	# run CMD...: out, err, rc in the workspace
	rc=0
	(cd "$tmp/ws" && "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}
