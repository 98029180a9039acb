#!/bin/bash
# Bash and zsh completion (contrib/completion/) against aisb's command
# table: bash's complete/compgen on the bash script, for every command and
# flag the help shows; the zsh script driven with zsh's completion builtins
# stubbed to record what they are given.  Neither script may hold a flag
# of its own: they ask aisb.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
top_srcdir=$(cd "$top_srcdir" && pwd)
aisb=$(cd "$top_builddir" && pwd)/aisb
bashc=$top_srcdir/contrib/completion/aisb
zshc=$top_srcdir/contrib/completion/_aisb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }

# comp WORDS...: what bash's completion of aisb offers for the last word,
# sorted, one line
comp() {
	bash -c '
		source "$1"; shift
		spec=$(complete -p aisb)
		[ "$spec" = "complete -F _aisb aisb" ] || { echo "bad spec: $spec"; exit 1; }
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_aisb
		printf "%s\n" "${COMPREPLY[@]}" | sort -u | paste -sd" "
	' comp "$bashc" "$aisb" "$@"
}
help_flags() {	# the flags of aisb CMD --help, sorted
	"$aisb" "$@" --help | sed -n '/^Options:/,/^$/p' |
	    sed -n 's/^  \(-[-a-z]*\).*/\1/p' | sort -u | paste -sd' '
}

# 1. every command's flags, as its --help lists them
"$aisb" help --commands >"$tmp/commands"
while read -r cmd; do
	[ "$cmd" = run ] && continue
	check "bash: aisb $cmd --" "$(comp $cmd --)" "$(help_flags $cmd | tr ' ' '\n' | grep -- '^--' | paste -sd' ')"
done <"$tmp/commands"
check "bash: aisb --" "$(comp --)" "$(help_flags | tr ' ' '\n' | grep -- '^--' | paste -sd' ')"
check "bash: aisb --net none --" "$(comp --net none --)" "$(help_flags | tr ' ' '\n' | grep -- '^--' | paste -sd' ')"

# 2. command words, group words, values
check "bash: first word" "$(comp '')" "$(cut -d' ' -f1 "$tmp/commands" | sort -u | paste -sd' ')"
check "bash: gate" "$(comp gate '')" "$(sed -n 's/^gate //p' "$tmp/commands" | sort | paste -sd' ')"
check "bash: policy d" "$(comp policy d)" derive
check "bash: derive's sources" "$(comp policy derive '')" "apt env git lockfile npm pip"
check "bash: --net" "$(comp --net '')" "direct gate none"
check "bash: clean --v" "$(comp clean --v)" "--volumes"
mkdir "$tmp/d" && touch "$tmp/d/p.yaml"
check "bash: --policy FILE" "$(comp --policy "$tmp/d/p")" "$tmp/d/p.yaml"
check "bash: --workspace DIR" "$(comp --workspace "$tmp/")" "$tmp/d"
# past the session's command, aisb's flags are not offered
case " $(comp --net none ls --) " in
*" --net "*) bad "bash: aisb flags offered after the command" ;;
*) ok ;;
esac

# 3. the scripts hold no flag of their own (but help's --commands and
# --flags, through which they ask)
for cmd in $(grep -vx help "$tmp/commands" | tr ' ' '_'); do
	"$aisb" help --flags "${cmd//_/ }"
done | sed -e 's/\[.*//' -e 's/=.*//' | sort -u | grep -v '^--help$' >"$tmp/allflags"
while read -r f; do
	if grep -qF -- "$f" "$bashc" "$zshc"; then
		bad "a completion script names $f itself"
	else ok; fi
done <"$tmp/allflags"

# 4. zsh, where it is installed
if command -v zsh >/dev/null; then
	zcomp() {
		zsh -f -c '
			got=()
			compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done
				[[ $1 == -- ]] && shift
				local w; for w; do [[ $w == ${PREFIX}* ]] && got+=($w); done; }
			_files() { got+=(FILES$*); }
			_normal() { got+=(NORMAL:${words[1]}); }
			_command_names() { got+=(COMMANDS); }
			source "$1" 2>/dev/null; shift
			words=("$@"); CURRENT=${#words}; PREFIX=${words[CURRENT]}
			_aisb
			print -l -- $got | sort -u | paste -sd" "
		' zcomp "$zshc" "$aisb" "$@"
	}
	while read -r cmd; do
		[ "$cmd" = run ] && continue
		check "zsh: aisb $cmd --" "$(zcomp $cmd --)" "$(help_flags $cmd | tr ' ' '\n' | grep -- '^--' | paste -sd' ')"
	done <"$tmp/commands"
	check "zsh: aisb --" "$(zcomp --)" "$(help_flags | tr ' ' '\n' | grep -- '^--' | paste -sd' ')"
	check "zsh: first word" "$(zcomp '')" "$(cut -d' ' -f1 "$tmp/commands" | sort -u | paste -sd' ')"
	check "zsh: gate" "$(zcomp gate '')" "$(sed -n 's/^gate //p' "$tmp/commands" | sort | paste -sd' ')"
	check "zsh: --net" "$(zcomp --net '')" "direct gate none"
	check "zsh: --policy" "$(zcomp --policy '')" "FILES"
	check "zsh: the command word" "$(zcomp --net none '')" "COMMANDS"
	check "zsh: past the command" "$(zcomp --net none ls -)" "NORMAL:ls"
else
	echo "zsh not installed: zsh checks skipped"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
