#!/bin/bash
# tests/sigpipe_lint.sh: no pipe in the tree's shell scripts may end in a
# reader that can stop before its writer is done.
#
# Under `set -o pipefail` the status of a pipeline is the last non-zero
# status of its commands.  In `podman images | head -n 1`, head exits
# after one line; podman, still writing, gets SIGPIPE and dies with 141,
# and the pipeline, the `$(...)` around it and, under `set -e`, the whole
# test die with it, silently and only sometimes: whether the writer is
# still writing when the reader leaves depends on timing and on how much
# there is to write.  In `if producer | grep -q X` the same death turns a
# match into "no match".  (issue 35: 9 deaths in 20 runs of one such line
# with 21 images in the store.)
#
# A pipe is flagged when its reader is one of
#
#   head                       any options
#   grep, egrep, fgrep         with -q, -m N (also inside -Fqx, -m1),
#                              --quiet, --silent, --max-count
#   sed                        with a q or Q command (sed q, sed -n '1p;q')
#   awk, gawk, mawk            with an exit in its program
#   read                       (also `{ read ...; }`)
#
# Write instead: the whole output into a variable or a file first, then
# the line from it (`out=$(producer)`, `sed -n 1p <<<"$out"`, `grep -m1 X
# file`), or a reader that reads to the end (`sed -n 1p`, `awk 'NR == 1'`,
# `grep -c`).  Where a short read is what is meant and the writer's death
# is harmless (or its status is not used), say so on the reader's line:
#
#   producer |
#       head -n 1	# sigpipe-ok: WHY
#
# The marker needs a reason after the colon.
#
# Checked: every shell script under .ci/, contrib/ and tests/ (*.sh, a
# sh/bash #! line, a shellcheck shell= or shell-script mode line) that
# turns pipefail on, or that has no #! line (sourced: it runs with its
# caller's options).  Scripts that never turn pipefail on are left out:
# there only the last command's status counts.  Text inside quotes and
# here-documents is not code of the script (a `sh -c '...'` runs in a
# shell of its own); `$(...)` inside double quotes is.
#
#   tests/sigpipe_lint.sh              the tree (make check)
#   tests/sigpipe_lint.sh FILE...      those files, pipefail or not
#
# Prints FILE:LINE: READER for each pipe found and exits 1; before the
# tree, it checks itself on samples that must and must not be flagged.
# The scanner is tests/sigpipe_lint.awk.
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
here=$(cd "$(dirname "$0")" && pwd)

# scan FILE...: one line per flagged pipe, FILE:LINE: READER
scan() { awk -f "$here/sigpipe_lint.awk" "$@"; }

# The tree's shell scripts, those that run under pipefail.
tree_scripts() {
	local f first head3 d dirs=()
	# (a distributed tree has no .ci/)
	for d in .ci contrib tests; do
		[ ! -d "$top_srcdir/$d" ] || dirs+=("$top_srcdir/$d")
	done
	find "${dirs[@]}" -type f | LC_ALL=C sort |
	while IFS= read -r f; do
		head3=$(head -c 256 "$f" | tr -d '\0')
		first=${head3%%$'\n'*}
		case $f in
		*.sh) ;;
		*)
			case $first in
			'#!'*/sh | '#!'*/bash | '#!'*/sh\ * | '#!'*/bash\ * | \
			    '#!'*env\ bash*) ;;
			*)
				grep -Eq 'shellcheck shell=|-\*- shell-script' <<<"$head3" ||
				    continue ;;
			esac ;;
		esac
		case $first in
		'#!'*) grep -q pipefail "$f" || continue ;;
		esac
		printf '%s\n' "$f"
	done
}

# Each line of the samples that ends in "# flag" must be flagged, no
# other line may be: the rules above, checked before the tree is.
selftest() {
	local s=$1 want got
	cat >"$s" <<'EOF'
#!/bin/bash
set -euo pipefail
img=$(podman images --format '{{.ID}}' | head -n 1)	# flag
if podman ps | grep -q aisb; then :; fi	# flag
podman ps | grep -Fqx aisb || true	# flag
x=$(ls | grep -m1 y)	# flag
x=$(ls | grep 1 --max-count=1)	# flag
ls | sed -n '1p;q'	# flag
ls | sed 2q	# flag
ls | awk '{ print; exit }'	# flag
ls | { read -r first; }	# flag
ls | IFS= read -r first	# flag
ls |& head -c 10	# flag
check "x" "$(tail -n 2 f | head -n 1)" y	# flag
ls -t "$d"/* |
    head -1	# flag
ls -t "$d"/* | \
    grep -q x	# flag
v=$(ls | /usr/bin/head -1)	# flag
ls | head -1	# sigpipe-ok: the list is at most two lines
ls | sed -n 1p
ls | awk 'NR == 1'
ls | grep -c x
ls | grep -v -e -q
ls | grep -e -m
ls | grep -- -q
ls | sed 's/q/x/'
ls | tail -n 1
x=$(ls) && sed -n 1p <<<"$x"
a=$((1 | 2))
(( a = 1 | 2 ))
y=${x//|/ head}
case $x in head|grep) : ;; esac
sh -c 'ls | head -n 1'
echo "a | head -n 1"
echo 'a | grep -q b'	# "quotes" then | head
cat <<EOS | sort
x | head -1
EOS
cat <<'EOS'
it's | head
EOS
ls | head -1	# flag
cat <<-EOS
	x | grep -q y
	EOS
cat <<EOS
	EOS
ls | head -1
EOS
w='set -e
ls | head -1'
EOF
	want=$(grep -n '# flag$' "$s" | cut -d: -f1 | paste -sd' ')
	got=$(scan "$s" | cut -d: -f2 | paste -sd' ')
	if [ "$got" != "$want" ]; then
		echo "FAIL: sigpipe_lint flags lines '$got' of its samples, want '$want'"
		scan "$s"
		return 1
	fi
}

if [ $# -gt 0 ]; then
	found=$(scan "$@")
	[ -z "$found" ] || { printf '%s\n' "$found"; exit 1; }
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
selftest "$tmp/sample.sh" || rc=1
tree_scripts >"$tmp/files"
n=$(wc -l <"$tmp/files")
# a scan that found neither a script nor a sourced library checked nothing
for f in tests/sigpipe_lint.sh tests/e2e/lib.sh; do
	if ! grep -qxF "$top_srcdir/$f" "$tmp/files"; then
		echo "FAIL: sigpipe_lint did not find $f under $top_srcdir"
		rc=1
	fi
done
found=
if [ "$n" != 0 ]; then
	mapfile -t files <"$tmp/files"
	found=$(scan "${files[@]}")
fi
if [ -n "$found" ]; then
	sed "s|^$top_srcdir/||" <<<"$found"
	echo "FAIL: $(wc -l <<<"$found") pipes may die of SIGPIPE under pipefail;" \
	    "read the whole output first, or mark an intended short read" \
	    "'# sigpipe-ok: WHY' (tests/sigpipe_lint.sh)"
	rc=1
fi
echo "sigpipe_lint: $n scripts, $(grep -c . <<<"$found" || true) pipes flagged"
exit "$rc"
