#!/bin/bash
# aisb's own exit codes are the documented ones.  The table of
# docs/launcher.md ("### Exit status") is read, each code found by its
# meaning, and checked against the man page's EXIT STATUS list; then
# cases of bad input are run and must exit with the code the table gives
# "usage, configuration or policy error" (an unknown flag, a bad policy,
# a missing workspace, a file as the workspace, a folder of the system,
# --net direct with cidr rules alone, --learn without a gate), and
# --quiet must print nothing but the notices the docs list.  No container
# runs: every case is refused before one would.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

# The table: "| 78 | usage, configuration or policy error ... |"
md=$top_srcdir/docs/launcher.md
sed -n '/^### Exit status/,/^### /p' "$md" >"$tmp/table"
code_of() {	# code_of MEANING-PREFIX: the status of the row it starts
	awk -F' *\\| *' -v m="$1" 'index($3, m) == 1 { print $2; exit }' "$tmp/table"
}
config=$(code_of "usage, configuration or policy error")
enforce=$(code_of "enforcement could not be set up")
timeout=$(code_of '`--timeout` expired')
check "table: the bad-input code" "$config" 78
check "table: the enforcement code" "$enforce" 77
check "table: the timeout code" "$timeout" 124
# the man page's EXIT STATUS list says the same for each
man=$top_srcdir/docs/aisb.1
for c in "$config:usage, configuration or policy error" \
    "$enforce:enforcement could not be set up" "$timeout:"; do
	n=${c%%:*} m=${c#*:}
	got=$(awk -v n="$n" '/^\.Sh EXIT STATUS/ { s = 1 } s && p { print; p = 0 }
	    s && $0 == ".It " n { p = 1 }' "$man")
	case $got in
	"$m"*) ok ;;
	*) bad "aisb.1 EXIT STATUS $n: '$got', the table says '$m...'" ;;
	esac
done

# Bad input: the documented code, and a line that says what and where
cat >"$tmp/p.yaml" <<'YAML'
version: 1
allow:
  - host: example.com
YAML
printf 'version: 1\nallow:\n  - cidr: 192.0.2.0/24\n' >"$tmp/cidr.yaml"
printf 'version: 1\nalow: []\n' >"$tmp/bad.yaml"
: >"$tmp/afile"
cases=(
	"unknown flag|--polcy x -- true"
	"bad policy|--policy $tmp/bad.yaml -- true"
	"missing workspace|--policy $tmp/p.yaml --workspace $tmp/nope -- true"
	"a file as workspace|--policy $tmp/p.yaml --workspace $tmp/afile -- true"
	"system folder|--policy $tmp/p.yaml --workspace /etc -- true"
	"learn without a gate|--policy $tmp/p.yaml --learn --net none -- true"
)
# direct mode's plan is checked once the host is (podman found, the
# enforcer fit: a sanitizer build's is dynamically linked, refused 77
# first): 78 too
phdrs=$(LC_ALL=C readelf -l "$(dirname "$aisb")/aisb-enforce" 2>/dev/null || true)
if command -v podman >/dev/null && [[ $phdrs != *INTERP* ]]; then
	cases+=("--net direct, cidr rules alone|--policy $tmp/cidr.yaml --net direct -- true")
fi
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -r -a args <<<"${c#*|}"
	run "$aisb" "${args[@]}"
	check "$name: exit" "$rc" "$config"
	[ -s "$tmp/err" ] && ok || bad "$name: nothing said"
	if ls "$XDG_STATE_HOME"/aisb/sessions/* >/dev/null 2>&1; then
		bad "$name: a session folder was made"
		rm -rf "$XDG_STATE_HOME"/aisb/sessions
	else
		ok
	fi
done
check "missing workspace: said" "$(run "$aisb" --policy "$tmp/p.yaml" --workspace "$tmp/nope" -- true;
    grep -c "workspace $tmp/nope (flag: --workspace): No such file or directory" "$tmp/err")" 1

# --quiet: errors, and only the notices the docs name; not the policy line
run "$aisb" --quiet --dry-run -- true
check "quiet dry run: exit" "$rc" 0
check "quiet dry run: nothing on stderr" "$(cat "$tmp/err")" ""

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
