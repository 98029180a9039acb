#!/bin/bash
# The shell scripts people run pass shellcheck: contrib/*.sh (the quick
# start, apt), tests/run.sh (CI), the e2e tests and the benchmarks, with
# the tree's .shellcheckrc (which says why each check it leaves out is
# left out).  SKIP when shellcheck is not installed (Debian: shellcheck,
# in contrib/debian-packages).
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
command -v shellcheck >/dev/null ||
    { echo "SKIP: shellcheck not found (apt-get install shellcheck)"; exit 77; }

cd "$top_srcdir"	# -x follows "$top_srcdir/tests/e2e/lib.sh" from here
pass=0 fail=0
for f in contrib/*.sh tests/run.sh tests/e2e/*.sh tests/bench/*.sh; do
	if out=$(shellcheck -x -f gcc "$f" 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $f"
		echo "$out"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
