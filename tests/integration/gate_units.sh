#!/bin/bash
# The service units of contrib/ (docs/gate.md, "Running as a service"):
# systemd-analyze verify accepts the system unit, the user unit and its
# instance, and the system unit's exposure stays at the score docs/gate.md
# records (at most 1.5, "OK").  The units are made from their .in with the
# build tree as bindir, so that their commands exist; the man pages are
# the tree's.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
command -v systemd-analyze >/dev/null ||
    { echo "SKIP: systemd-analyze not found"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aisb-units.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bindir=$(cd "$top_builddir" && pwd)
mkdir -p "$tmp/man/man1" "$tmp/man/man8" "$tmp/run" "$tmp/units"
chmod 700 "$tmp/run"
cp "$top_srcdir/docs/aisb.1" "$tmp/man/man1/"
cp "$top_srcdir/docs/aisb-gate.8" "$tmp/man/man8/"
for u in aisb-gate.service aisb-gate@.service; do
	sed -e "s|@bindir@|$bindir|g" -e "s|@sysconfdir@|/etc|g" \
	    "$top_srcdir/contrib/systemd/$u.in" >"$tmp/units/$u"
done
export MANPATH=$tmp/man XDG_RUNTIME_DIR=$tmp/run

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

if systemd-analyze verify "$tmp/units/aisb-gate.service" 2>"$tmp/err"
then ok; else bad "verify aisb-gate.service: $(cat "$tmp/err")"; fi
if systemd-analyze verify --user "$tmp/units/aisb-gate@.service" \
    "$tmp/units/aisb-gate@work.service" 2>"$tmp/err"
then ok; else bad "verify aisb-gate@.service: $(cat "$tmp/err")"; fi
score=$(systemd-analyze security --offline=true \
    "$tmp/units/aisb-gate.service" 2>/dev/null |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }'; then
	ok
else
	bad "exposure of aisb-gate.service: '$score', want at most 1.5"
fi
echo "$pass checks passed, $fail failed"
[ "$fail" = 0 ]
