#!/bin/bash
# The man pages render without a warning: mandoc -T lint at level
# "warning" (the STYLE level's suggestions are left to taste) says
# nothing of aisb(1), aisb-gate(8) or aisb-enforce(8).  SKIP when mandoc
# is not installed (Debian: mandoc, in contrib/debian-packages).
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v mandoc >/dev/null || { echo "SKIP: mandoc not found (apt-get install mandoc)"; exit 77; }

pass=0 fail=0
for page in "$top_srcdir"/docs/*.[18]; do
	rc=0
	out=$(mandoc -T lint -W warning "$page" 2>&1) || rc=$?
	if [ "$rc" = 0 ] && [ -z "$out" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $(basename "$page"): mandoc -T lint -W warning (status $rc):"
		echo "$out"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
