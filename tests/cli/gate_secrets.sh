#!/bin/bash
# A named gate and secrets (docs/launcher.md, "Named gates"): it adds
# none, so gate up refuses --secret and says at once which secrets its
# policy names that its rules' requests go without; it makes its CA at
# start and writes the certificate into its folder, which gate status
# names and gate down removes; a session's options say whose policy it
# runs.  A real gate on 127.0.0.1, no podman.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }
tmp=$(mktemp -d)
name=gs$$
up=
cleanup() {
	[ -z "$up" ] || "$aisb" gate down "$name" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/home"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
cat >"$tmp/policy.yaml" <<'YAML'
version: 1
allow:
  - host: api.example
    ports: [443]
    inspect: true
    secrets:
      - name: API_KEY
        header: x-api-key
  - host: a.example
    ports: [443]
YAML
dir=$XDG_STATE_HOME/aisb/gates/$name

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }

rc=0
API_KEY=sk-never-used "$aisb" gate up "$name" --policy "$tmp/policy.yaml" \
    --secret API_KEY >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "gate up --secret: 78" "$rc" 78
check "gate up --secret: says why and what to do" "$(grep -c \
    "^aisb: gate up: --secret API_KEY: a named gate adds no secrets (one session's would go out with every other session's requests); pass it to a session with a gate of its own: aisb --secret API_KEY -- COMMAND\$" \
    "$tmp/err" || true)" 1
check "gate up --secret: no gate" "$([ -e "$dir/state" ] && echo up || echo none)" none

rc=0
"$aisb" gate up "$name" --policy "$tmp/policy.yaml" >"$tmp/out" 2>"$tmp/err" \
    </dev/null || rc=$?
up=1
check "gate up" "$rc" 0
check "gate up: the policy's secret, said at once" "$(grep -c \
    "^aisb: gate $name: secret API_KEY (rule $tmp/policy.yaml:3:5 allow host: api.example): a named gate adds no secrets, so that rule's requests go out without it" \
    "$tmp/err" || true)" 1
check "gate up: nothing else on stderr" "$(wc -l <"$tmp/err")" 1
check "its gate.log says it too" "$(grep -c \
    'start: secret API_KEY (rule .*policy.yaml:3:5 allow host: api.example) was not given to the gate' \
    "$dir/gate.log" || true)" 1
check "its CA's certificate, a CA's" "$(openssl x509 -noout -text \
    -in "$dir/gate-ca.pem" 2>/dev/null | grep -c 'CA:TRUE' || true)" 1
check "a session's --print-config: the policy is the gate's" "$("$aisb" --gate \
    "$name" --print-config 2>/dev/null | grep -c "^policy *$tmp/policy.yaml (gate $name)\$" || true)" 1
check "gate status names it" "$("$aisb" gate status "$name" | grep -c "^ca $dir/gate-ca.pem\$" || true)" 1
"$aisb" gate down "$name" >/dev/null 2>&1 || bad "gate down"
up=
check "gate down removes it" "$([ -e "$dir/gate-ca.pem" ] && echo there || echo gone)" gone

# a policy with no secret: gate up says nothing of secrets
printf 'version: 1\nallow:\n  - host: a.example\n    ports: [443]\n' >"$tmp/plain.yaml"
rc=0
"$aisb" gate up "$name" --policy "$tmp/plain.yaml" >"$tmp/out" 2>"$tmp/err" \
    </dev/null || rc=$?
up=1
check "gate up (no secrets)" "$rc" 0
check "gate up (no secrets): quiet" "$(wc -l <"$tmp/err")" 0

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
