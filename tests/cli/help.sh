#!/bin/bash
# aisb --help, aisb help TOPIC and --help on every command: usage, every
# flag with a line and its default, from the table the parser reads.  Each
# flag the help shows is fed back to the parser, which must take it; a
# flag it does not show must be refused with one line and exit 78; every
# flag of the man page must be in some help.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"
cd "$tmp/ws"

# A value the parser takes for a value's name in the help.
sample() {
	case $1 in
	gate\|*) echo none ;;
	*\|*) echo "${1%%|*}" ;;	# a choice: the first
	SIZE) echo 1g ;;
	N|DURATION) echo 5 ;;
	FILE|PATH) echo "$tmp/x.yaml" ;;
	DIR) echo "$tmp" ;;
	NAME\[=VALUE\]) echo X=1 ;;
	PKG==VER) echo x==1.0 ;;
	PORTS) echo 80,443 ;;	# --transparent-ports
	SRC:DST\[:MODE\]) echo /srv:/opt/x ;;	# --mount
	NAME) echo xy ;;	# --package: two characters at least (Debian Policy 5.6.1)
	*) echo x ;;
	esac
}

# The flags of a help text: "  --flag ARG  ..." lines under "Options:".
flags_of() {
	sed -n '/^Options:/,/^$/p' "$1" | sed -n 's/^  \(-[-a-z]*\)\(\[=\([^]]*\)\]\)\{0,1\}\( \([^ ]*\)\)\{0,1\}  .*/\1 \5/p'
}

# 1. aisb --help, -h, help: one text, with its layout
run "$aisb" --help
check "--help: exit" "$rc" 0
cp "$tmp/out" "$tmp/main"
for h in -h help "run --help"; do
	run "$aisb" $h
	check "aisb $h: exit" "$rc" 0
	check "aisb $h: same text" "$(cmp -s "$tmp/out" "$tmp/main" && echo same)" same
done
for section in '^Usage:$' '^Commands:$' '^Options:$' '^  aisb \[options\] \[--\] COMMAND'; do
	grep -q -- "$section" "$tmp/main" && ok || bad "aisb --help lacks /$section/"
done
# every option of the session table, with a line
flags_of "$tmp/main" >"$tmp/flags.run"
check "session flags listed" "$(wc -l <"$tmp/flags.run")" \
    "$("$aisb" help --flags run | wc -l)"

# 2. every command: --help and help TOPIC, the same text, with Usage and
# Options; every flag fed back to its parser
"$aisb" help --commands >"$tmp/commands"
[ "$(wc -l <"$tmp/commands")" -ge 15 ] && ok || bad "few commands: $(cat "$tmp/commands")"
while read -r cmd; do
	[ "$cmd" = run ] && continue
	run "$aisb" $cmd --help
	check "$cmd --help: exit" "$rc" 0
	check "$cmd --help: stderr" "$(cat "$tmp/err")" ""
	cp "$tmp/out" "$tmp/h"
	grep -q "^Usage:$" "$tmp/h" && grep -q "^  aisb $cmd" "$tmp/h" &&
	    grep -q "^Options:$" "$tmp/h" && ok || bad "$cmd --help layout: $(cat "$tmp/h")"
	run "$aisb" help $cmd
	check "help $cmd: same text" "$(cmp -s "$tmp/out" "$tmp/h" && echo same)" same
	run "$aisb" $cmd -h
	check "$cmd -h: same text" "$(cmp -s "$tmp/out" "$tmp/h" && echo same)" same
	# the help lists what the table holds, no more, no less
	check "$cmd: flags in help" "$(flags_of "$tmp/h" | cut -d' ' -f1 | sort | paste -sd' ')" \
	    "$("$aisb" help --flags "$cmd" | sed -e 's/\[.*//' -e 's/=.*//' | sort | paste -sd' ')"
	# each flag back to the parser: taken (then --help answers, exit 0)
	while read -r flag arg; do
		[ "$flag" = --help ] && continue
		if [ -n "$arg" ]; then
			run "$aisb" $cmd "$flag" "$(sample "$arg")" --help
		else
			run "$aisb" $cmd "$flag" --help
		fi
		check "$cmd $flag ${arg:+$(sample "$arg") }--help: taken" "$rc" 0
	done < <(flags_of "$tmp/h")
	# a flag not in the help: refused, one line, 78
	run "$aisb" $cmd --no-such-flag
	check "$cmd --no-such-flag: exit" "$rc" 78
	check "$cmd --no-such-flag: one line" "$(wc -l <"$tmp/err")" 1
done <"$tmp/commands"

# the session's flags back to the session's parser
while read -r flag arg; do
	[ "$flag" = --help ] && continue
	if [ -n "$arg" ]; then
		run "$aisb" "$flag" "$(sample "$arg")" --help
	else
		run "$aisb" "$flag" --help
	fi
	check "aisb $flag ${arg:+$(sample "$arg") }--help: taken" "$rc" 0
	check "aisb $flag: the help" "$(cmp -s "$tmp/out" "$tmp/main" && echo same)" same
done <"$tmp/flags.run"

# 3. defaults: every option with a default says it
for f in --net --memory --cpus --pids --runtime --policy --workspace; do
	grep -q -- "^  $f .*(default: " "$tmp/main" && ok || bad "$f: no default in --help"
done
run "$aisb" gate up --help
grep -q -- '^  --idle DURATION .*(default: 600s)$' "$tmp/out" && ok || bad "gate up --idle default"
run "$aisb" policy derive --help
grep -q -- '^  --root DIR .*(default: /)$' "$tmp/out" && ok || bad "derive --root default"

# 4. groups: help and --help list their commands; bad input, one line, 78
for g in gate policy image sessions; do
	run "$aisb" $g --help
	check "$g --help: exit" "$rc" 0
	check "$g --help = help $g" "$(cat "$tmp/out")" "$("$aisb" help $g)"
	for c in $(sed -n "s/^$g //p" "$tmp/commands"); do
		grep -q "^  $c " "$tmp/out" && ok || bad "$g --help lacks $c"
	done
	run "$aisb" $g
	check "aisb $g: exit" "$rc" 78
	check "aisb $g: one line" "$(wc -l <"$tmp/err")" 1
	run "$aisb" $g bogus
	check "aisb $g bogus: exit" "$rc" 78
	check "aisb $g bogus: one line" "$(wc -l <"$tmp/err")" 1
done
for bad_input in "" "help nope" "policy derive bogus" "sessions show" \
    "sessions show a b" "policy test" "gate up" "clean --all=1" \
    "doctor --image" "--no-such-flag true" "--net bogus true" "version x"; do
	run "$aisb" $bad_input
	check "aisb $bad_input: exit" "$rc" 78
	check "aisb $bad_input: one line" "$(wc -l <"$tmp/err")" 1
done

# 5. the man page names no flag the help does not
for cmd in $(tr ' ' '_' <"$tmp/commands"); do
	"$aisb" help ${cmd//_/ }
done >"$tmp/all"
# (mdoc: "Fl \&-net" is --net)
for f in $(grep -o 'Fl \\&-[a-z-]*' "$top_srcdir/docs/aisb.1" | sed 's/.*&/-/' | sort -u); do
	grep -q -- "^  $f\b" "$tmp/all" && ok || bad "aisb.1 has $f, no help does"
done

# 6. ... and it lacks none: each session flag of the one option table has
# its entry in the flags' list (".It Fl \&-NAME"), each command is in the
# SYNOPSIS, and each command's flags are named in the page
man=$top_srcdir/docs/aisb.1
sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$man" >"$tmp/synopsis"
"$aisb" help --flags run | sed 's/=.*//' | sort -u >"$tmp/runflags"
while read -r f; do
	[ "$f" = --help ] && continue
	grep -q -- "^\.It .*Fl \\\\&${f#-}\( \|$\)" "$man" && ok ||
	    bad "aisb.1 has no .It entry for the session flag $f"
done <"$tmp/runflags"
while read -r c; do
	case $c in run|help) continue ;; esac
	first=${c%% *} rest=${c#"$first"}
	if grep -q "^\.Cm \(.* \)\{0,1\}$first\b" "$tmp/synopsis" &&
	    { [ -z "$rest" ] || grep -q "^\.Cm $first\b.*\b${rest# }\b" "$tmp/synopsis"; }; then
		ok
	else
		bad "aisb.1's SYNOPSIS lacks aisb $c"
	fi
	for f in $("$aisb" help --flags "$c" | sed -e 's/=.*//' -e 's/\[.*//'); do
		# (mdoc: "Fl \&-all" and "Fl -all" are --all, "Fl v" is -v)
		case $f in
		--help|-h) continue ;;
		--*) pat="Fl \\(\\\\&\\)\\{0,1\\}${f#-}\b" ;;
		*) pat="Fl ${f#-}\b" ;;
		esac
		grep -q -- "$pat" "$man" && ok ||
		    bad "aisb.1 does not name $f of aisb $c"
	done
done <"$tmp/commands"

# --version, GNU's, from each program (aisb.exe and aisb-run.exe:
# tests/win/wine.sh)
v=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$(dirname "$aisb")/config.h")
for p in aisb aisb-gate aisb-enforce; do
	run "$(dirname "$aisb")/$p" --version
	check "$p --version: exit" "$rc" 0
	check "$p --version" "$(cat "$tmp/out")" "$p $v"
done

# A misspelt flag: the nearest one ("did you mean"), for the session's
# flags and a command's
run "$aisb" --polcy x.yaml -- true
check "--polcy: exit" "$rc" 78
check "--polcy: did you mean" "$(grep -c "unknown flag '--polcy': did you mean --policy?" "$tmp/err")" 1
run "$aisb" --quite -- true
check "--quite: did you mean" "$(grep -c "unknown flag '--quite': did you mean --quiet?" "$tmp/err")" 1
# -q starts --quiet and --quarantine: no guess between them
run "$aisb" -q -- true
check "-q: no guess" "$(grep -c "did you mean" "$tmp/err")" 0
run "$aisb" --no-transparnt -- true
check "--no-transparnt: did you mean" "$(grep -c "did you mean --no-transparent?" "$tmp/err")" 1
run "$aisb" doctor --fxi
check "doctor --fxi: exit" "$rc" 78
check "doctor --fxi: did you mean" "$(grep -c "aisb doctor: unknown flag '--fxi': did you mean --fix?" "$tmp/err")" 1
run "$aisb" --zzzzzz -- true
check "no near flag: no guess" "$(grep -c "did you mean" "$tmp/err")" 0

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
