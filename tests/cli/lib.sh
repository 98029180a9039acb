# tests/cli/lib.sh: the start the command-line tests share (no podman, no
# root).  A test sources it after `set -euo pipefail` and gets $aisb (the
# build tree's), $top_srcdir, $tmp (removed on exit) holding home/ and
# ws/, HOME, XDG_CONFIG_HOME and XDG_STATE_HOME under $tmp (a user with no
# config at all), none of the caller's AISB_* variables, pass=0 fail=0,
#
#   ok    bad MSG    check MSG GOT WANT     counted; bad says why on stderr
#   run CMD...      CMD in $tmp/ws: $tmp/out, $tmp/err and its status in $rc
#
# shellcheck shell=bash

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/ws"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
# shellcheck disable=SC2046	# one word a variable name
unset $(env | sed -n 's/^\(AISB_[A-Z_]*\)=.*/\1/p') 2>/dev/null || true

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
run() {	# run CMD...: out, err, rc in the workspace
	rc=0
	(cd "$tmp/ws" && "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}
