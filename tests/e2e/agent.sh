#!/bin/bash
# End to end: an agent recipe in real sessions (docs/agents.md).  A recipe
# of the user's own (no package: its command is curl, already in the
# image) allows one host of a test server; the session's gate must let it
# through while the same session without the recipe is refused, the
# recipe's setenv must reach the command, its config folders must be in a
# home volume made before the recipe was used, and the session folder
# must hold the merged policy the gate enforced, with its rule cited in
# the audit.
#
# Servers run on the host's loopback only (a DNS responder and an HTTP
# upstream); 10.0.2.2 is the host's loopback inside.  Needs root, podman
# and mmdebstrap; builds its images offline in a podman store of its own,
# which the EXIT trap removes.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start agent mmdebstrap "$PY"
e2e_seed_image curl
vol=aisb-e2e-agent-home-$$
export HOME=$tmp/home
mkdir -p "$XDG_CONFIG_HOME/aisb" "$HOME"

cat >"$tmp/zone.json" <<'Z'
{"allowed.test": {"A": ["127.0.0.1"], "ttl": 5},
 "agent.test": {"A": ["127.0.0.1"], "ttl": 5}}
Z
e2e_servers dns http

cat >"$tmp/policy.yaml" <<P
version: 1
allow:
  - host: allowed.test
    ports: [$http]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
P
# the user's own recipe: curl is its command, agent.test its host
cat >"$XDG_CONFIG_HOME/aisb/agents.yaml" <<A
version: 1
agents:
  probe:
    command: curl
    hosts: ["agent.test:$http"]
    setenv: { PROBE_SETTING: from-the-recipe }
    config: [.probe, .config/probe]
A

sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}
url="http://agent.test:$http/x"

# 1. without the recipe, the gate refuses the agent's host
rc=0; sess --agent none -- curl -sS -o /dev/null -w '%{http_code}' "$url" || rc=$?
case $(cat "$tmp/out") in
200) bad "no agent: agent.test was reachable" ;;
*) ok ;;
esac

# 2. with it (picked by the command's name), the gate lets it through
e2e_session_mark
rc=0; sess -- curl -sS -o /dev/null -w '%{http_code}' "$url" || rc=$?
check "agent: exit" "$rc" 0
check "agent: status" "$(cat "$tmp/out")" 200
if grep -q "^aisb: agent probe: its recipe ($XDG_CONFIG_HOME/aisb/agents.yaml:3:3) applies, picked by the command's name" "$tmp/err"; then
	ok; else bad "agent: the pick was not said: $(cat "$tmp/err")"; fi
sd=$(e2e_session)
if grep -q "^  # agent probe, $XDG_CONFIG_HOME/aisb/agents.yaml:5:13$" "$sd/policy.yaml" 2>/dev/null; then
	ok; else bad "session policy.yaml: $(cat "$sd/policy.yaml" 2>&1)"; fi
if grep -q "^agent probe $XDG_CONFIG_HOME/aisb/agents.yaml:3:3" "$sd/record"; then
	ok; else bad "record: no agent line: $(cat "$sd/record")"; fi
# the gate cited the rule of the merged file, the one with the comment
lines=$(grep '"agent.test"' "$sd/audit.jsonl" || true)
if grep -qF "$sd/policy.yaml:" <<<"$lines"; then
	ok; else bad "audit: $(grep agent.test "$sd/audit.jsonl" || cat "$sd/audit.jsonl")"; fi
# the policy the record names is the merged one
want=$("$aisb" policy check "$sd/policy.yaml" | sed -n 's/^policy OK sha256:\([0-9a-f]*\).*/\1/p')
check "record: the merged policy's sha256" "$(sed -n 's/^policy_sha256 //p' "$sd/record")" "$want"

# 3. its setenv reaches the command, and the allowed host of the policy
# itself still works next to the agent's
rc=0; sess --agent probe -- sh -c 'echo "$PROBE_SETTING"; curl -sS -o /dev/null -w "%{http_code}\n" "http://allowed.test:'"$http"'/y"' || rc=$?
check "setenv: exit" "$rc" 0
check "setenv: value" "$(sed -n 1p "$tmp/out")" from-the-recipe
check "setenv: policy's own host" "$(sed -n 2p "$tmp/out")" 200
# the recipe's folders, in the home volume session 1 made before the
# recipe was used (a new volume gets the image's; this one had none)
rc=0; sess --agent probe -- sh -c 'for d in .probe .config/probe; do stat -c "%n %U %a" "$HOME/$d"; done' || rc=$?
check "config folders: exit" "$rc" 0
check "config folders: in the old volume" "$(tr '\n' ';' <"$tmp/out")" \
    "/home/sandbox/.probe sandbox 700;/home/sandbox/.config/probe sandbox 700;"
# ... and the user's --env of the same name wins
rc=0; sess --agent probe --env PROBE_SETTING=mine -- sh -c 'echo "$PROBE_SETTING"' || rc=$?
check "--env wins: value" "$(cat "$tmp/out")" mine

echo "e2e agent: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
