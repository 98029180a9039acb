#!/bin/bash
# aisb gate up --reload-closes (docs/launcher.md, "Named gates"): the
# named gate's aisb-gate runs with --reload-closes, so that a reload
# (the policy file edited) closes the tunnels the new policy denies
# (tests/integration/gate_signals.sh tests that in the gate); without
# the flag it does not.  A real gate on 127.0.0.1, taken down again.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
tmp=$(mktemp -d)
up=
cleanup() {
	local g
	for g in $up; do "$aisb" gate down "$g" >/dev/null 2>&1 || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/home"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
printf 'version: 1\nallow:\n  - host: a.example\n    ports: [443]\n' >"$tmp/policy.yaml"

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
# the argv of gate NAME's aisb-gate, one word a line
gate_argv() {
	local pid
	pid=$(sed -n 's/^gate \([0-9]*\) .*/\1/p' "$XDG_STATE_HOME/aisb/gates/$1/state")
	tr '\0' '\n' <"/proc/$pid/cmdline"
}

rc=0; "$aisb" gate up gc$$ --reload-closes --policy "$tmp/policy.yaml" \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
up="$up gc$$"
check "--reload-closes: up" "$rc" 0
check "--reload-closes: the gate's flag" "$(gate_argv gc$$ | grep -cx -- --reload-closes)" 1
rc=0; "$aisb" gate up gk$$ --policy "$tmp/policy.yaml" \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
up="$up gk$$"
check "without: up" "$rc" 0
check "without: no flag" "$(gate_argv gk$$ | grep -cx -- --reload-closes || true)" 0
for g in gc$$ gk$$; do
	rc=0; "$aisb" gate down "$g" >/dev/null 2>&1 || rc=$?
	check "$g down" "$rc" 0
done
up=

echo "gate_up_closes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
