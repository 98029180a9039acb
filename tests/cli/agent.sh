#!/bin/bash
# Agent recipes driven as a user would (docs/agents.md): a bad recipe
# stops the session with one line and 78; --print-policy shows the
# agent's hosts merged; --dry-run shows its setenv and no secret; a
# project config cannot name an agent; `aisb -- claude` picks the recipe
# by the command's name; a named gate's policy is checked, not widened.
# Runs no container: previews, and a named gate (aisb-gate only).
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
tmp=$(mktemp -d)
gates=()
cleanup() {
	local g
	for g in "${gates[@]}"; do "$aisb" gate down "$g" >/dev/null 2>&1 || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/home/.config/aisb" "$tmp/ws"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
unset $(env | sed -n 's/^\(AISB_[A-Z_]*\)=.*/\1/p') 2>/dev/null || true
unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN || true
userfile=$XDG_CONFIG_HOME/aisb/agents.yaml

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
has() {	# has NAME FILE PATTERN: grep -q
	if grep -q -- "$3" "$2"; then ok; else bad "$1: no '$3' in: $(cat "$2")"; fi
}
hasnt() {
	if grep -q -- "$3" "$2"; then bad "$1: '$3' in: $(cat "$2")"; else ok; fi
}
run() {	# run CMD...: out, err, rc in the workspace
	rc=0
	(cd "$tmp/ws" && "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}

# 1. the build tree's copy of the recipes, as for the default policy
check "make copied the recipes" "$(cmp -s "$top_builddir/aisb-agents.yaml" \
    "$top_srcdir/contrib/agents.yaml" && echo same)" same

# 2. --print-policy: the agent's hosts are allow rules, each cited
run "$aisb" --agent claude --print-policy
check "print-policy: exit" "$rc" 0
has "print-policy: the API host" "$tmp/out" '^  - host: "api.anthropic.com"'
has "print-policy: a login host" "$tmp/out" '^  - host: "claude.ai"'
has "print-policy: cited" "$tmp/out" '^# agent claude: claude.ai:443 (.*aisb-agents.yaml:[0-9]*:[0-9]*)$'
has "print-policy: the policy's own rules stay" "$tmp/out" '^  - host: "github.com"'
sha_agent=$(sed -n 's/^# sha256://p' "$tmp/out")
run "$aisb" --print-policy
hasnt "no agent: no claude.ai" "$tmp/out" 'claude.ai'
check "no agent: another policy" "$([ "$(sed -n 's/^# sha256://p' "$tmp/out")" != "$sha_agent" ] && echo differs)" differs
run env AISB_AGENT=codex "$aisb" --print-policy
has "AISB_AGENT: codex's hosts" "$tmp/out" '^  - host: "chatgpt.com"'

# 3. the command's name picks the recipe, saying so even with --quiet
# (it widens the policy); --agent none stops it
run "$aisb" --print-policy -- claude --version
has "auto-pick: said" "$tmp/err" "^aisb: agent claude: its recipe (.*) applies, picked by the command's name; --agent none runs without it$"
has "auto-pick: applied" "$tmp/out" '"claude.ai"'
run "$aisb" --quiet --print-policy -- claude
check "auto-pick --quiet: still said" "$(grep -c 'picked by' "$tmp/err" || true)" 1
has "auto-pick --quiet: still applied" "$tmp/out" '"claude.ai"'
run "$aisb" --agent none --print-policy -- claude
hasnt "--agent none: not applied" "$tmp/out" 'claude.ai'
run "$aisb" --print-policy -- /usr/bin/claude
hasnt "a path is not the command's name" "$tmp/out" 'claude.ai'
run "$aisb" --print-policy -- true
check "other commands: nothing said" "$(grep -c 'agent' "$tmp/err" || true)" 0

# 4. --dry-run: setenv shown, the credential hint, never a value
run "$aisb" --dry-run -- claude
check "dry run: exit" "$rc" 0
has "dry run: setenv" "$tmp/out" '^CLAUDE_CONFIG_DIR=/home/sandbox/.claude (setenv of agent claude)$'
has "dry run: hint" "$tmp/err" "^aisb: agent claude reads its credentials from ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN; none is passed: add --secret NAME (the gate adds it, the sandbox holds a placeholder), --env NAME"
export ANTHROPIC_API_KEY=sk-test-must-not-show-4d1c
run "$aisb" --dry-run --env ANTHROPIC_API_KEY -- claude
check "dry run --env: exit" "$rc" 0
check "dry run --env: no hint" "$(grep -c 'reads its credentials' "$tmp/err" || true)" 0
has "dry run --env: the name" "$tmp/out" '^ANTHROPIC_API_KEY$'
check "dry run --env: no value anywhere" "$(cat "$tmp/out" "$tmp/err" | grep -c 'must-not-show' || true)" 0
run "$aisb" --dry-run --env CLAUDE_CONFIG_DIR=/home/sandbox/mine -- claude
check "the user's --env wins over setenv" "$(grep -c '^CLAUDE_CONFIG_DIR=/home/sandbox/.claude' "$tmp/out" || true)" 0
unset ANTHROPIC_API_KEY

# 5. a bad recipe: one line naming file:line:col, the field, the fix; 78
printf 'version: 1\nagents:\n  claude:\n    npm: "@anthropic-ai/claude-code@^2.1"\n' >"$userfile"
run "$aisb" --dry-run -- claude
check "bad recipe: exit" "$rc" 78
check "bad recipe: one line" "$(wc -l <"$tmp/err")" 1
has "bad recipe: the line" "$tmp/err" "^aisb: $userfile:4:10: agent 'claude': npm: '^2.1' is not an exact version .*write npm: \"@anthropic-ai/claude-code@1.2.3\"$"
printf 'version: 1\nagents:\n  claude:\n    hostz: [a.example]\n' >"$userfile"
run "$aisb" --print-policy
check "bad recipe, no agent asked: nothing read" "$rc" 0
run "$aisb" --agent claude --print-policy
check "unknown field: exit" "$rc" 78
has "unknown field: the line" "$tmp/err" "^aisb: $userfile:4:5: agent 'claude': unknown field 'hostz'; write one of command"
# ... and a good override replaces only the fields it names
printf 'version: 1\nagents:\n  claude:\n    hosts: [api.anthropic.com, llm-proxy.corp.example:8443]\n' >"$userfile"
run "$aisb" --agent claude --print-policy
has "override: its host" "$tmp/out" '"llm-proxy.corp.example"'
hasnt "override: hosts replaced" "$tmp/out" 'claude.ai'
has "override: cites the user's file" "$tmp/out" "^# agent claude: llm-proxy.corp.example:8443 ($userfile:4:"
run "$aisb" --dry-run -- claude
has "override: the rest stays" "$tmp/out" '^CLAUDE_CONFIG_DIR='
rm "$userfile"

# 6. an unknown agent
run "$aisb" --agent nosuch --dry-run -- true
check "unknown agent: exit" "$rc" 78
has "unknown agent: lists the known" "$tmp/err" '^aisb: agent nosuch (flag: --agent) has no recipe; known: claude codex gemini aider'

# 7. a project config may not name an agent (it widens the policy) ...
printf 'agent: claude\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --dry-run -- true
check "project agent: exit" "$rc" 78
has "project agent: why and what instead" "$tmp/err" "^aisb: $tmp/ws/.aisb.yaml:1:8: a project config may only say 'agent: none' (a recipe adds allow rules to the policy); to have 'agent: claude', write it in .*, or pass --agent claude"
# ... but may turn one off, which stops the pick by name too
printf 'agent: none\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --print-policy -- claude
check "project agent none: exit" "$rc" 0
hasnt "project agent none: not applied" "$tmp/out" 'claude.ai'
rm "$tmp/ws/.aisb.yaml"
# the user config may name one
printf 'agent: gemini\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" --print-policy
has "user config agent:" "$tmp/out" '"generativelanguage.googleapis.com"'
rm "$XDG_CONFIG_HOME/aisb/config.yaml"

# 8. the user's deny rules win, and the session says which hosts lose
printf 'version: 1\nallow:\n  - host: github.com\ndeny:\n  - host: claude.ai\n' >"$tmp/deny.yaml"
run "$aisb" --policy "$tmp/deny.yaml" --agent claude --dry-run -- claude
has "deny wins: said" "$tmp/err" "^aisb: agent claude: claude.ai:443 stays denied by $tmp/deny.yaml:5:5"
run "$aisb" --policy "$tmp/deny.yaml" --agent claude --print-policy
check "deny wins: still in deny" "$(sed -n '/^deny:/,/^allow_ranges/p' "$tmp/out" | grep -c '"claude.ai"')" 1

# 9. a named gate: its policy is checked, never widened
if command -v "$top_builddir/aisb-gate" >/dev/null 2>&1 || [ -x "$top_builddir/aisb-gate" ]; then
	g=aisbtest-agent-$$
	gates+=("$g")
	run "$aisb" gate up "$g" --idle 60s
	check "gate up: exit" "$rc" 0
	run "$aisb" --gate "$g" --agent claude --dry-run -- claude
	check "named gate missing hosts: exit" "$rc" 78
	has "named gate: names the missing hosts and the fix" "$tmp/err" "^aisb: agent claude needs console.anthropic.com:443 platform.claude.com:443 claude.ai:443, which the policy of gate $g (.*) does not allow, and a session does not widen a shared gate's policy: add them to that file"
	"$aisb" gate down "$g" >/dev/null 2>&1 || true
	# a gate whose policy has them all
	"$aisb" --agent claude --print-policy | sed '/^#/d' >"$tmp/gate.yaml"
	run "$aisb" gate up "$g" --idle 60s --policy "$tmp/gate.yaml"
	check "gate up (agent's hosts): exit" "$rc" 0
	run "$aisb" --gate "$g" --agent claude --dry-run -- claude
	check "named gate with the hosts: exit" "$rc" 0
	"$aisb" gate down "$g" >/dev/null 2>&1 || true
	run "$aisb" gate up "$g" --agent claude
	check "gate up --agent: refused" "$rc" 78
	has "gate up --agent: why" "$tmp/err" "gate up: --agent: a gate enforces its policy file as written"
fi

# 10. doctor lists the recipes, and fails on a file that does not load
# (whatever else it finds on this host: only its agents lines are read)
run "$aisb" doctor
has "doctor: the count" "$tmp/out" '^ok   agents     4 recipes (.*aisb-agents.yaml; none of yours in '
has "doctor: claude" "$tmp/out" '^  claude   npm @anthropic-ai/claude-code@[0-9.]*, node [0-9.]*; [0-9]* hosts; image \(built\|not built yet\|unknown\) (.*aisb-agents.yaml:[0-9]*:[0-9]*)$'
has "doctor: aider" "$tmp/out" '^  aider    pip aider-chat==[0-9.]*; '
printf 'version: 1\nagents:\n  claude:\n    npm: "x@1"\n' >"$userfile"
run "$aisb" doctor
check "doctor, bad recipe: exit" "$rc" 1
has "doctor, bad recipe: the line" "$tmp/out" "^FAIL agents     $userfile:4:10: agent 'claude': npm: '1' is not an exact version"
rm "$userfile"

# 11. aisb agents: the list, one recipe with where each field was written
run "$aisb" agents
check "agents: exit" "$rc" 0
check "agents: four" "$(grep -c '^  [a-z]' "$tmp/out")" 4
printf 'version: 1\nagents:\n  codex:\n    hosts: [api.openai.com]\n' >"$userfile"
run "$aisb" agents codex
check "agents codex: exit" "$rc" 0
has "agents codex: changed" "$tmp/out" "^agent codex (.*aisb-agents.yaml:[0-9]*:3, changed by the user's file)$"
has "agents codex: the user's host" "$tmp/out" "^  hosts    api.openai.com:443 ($userfile:4:13)$"
has "agents codex: the shipped npm" "$tmp/out" "^  npm      @openai/codex@[0-9.]* (.*aisb-agents.yaml:[0-9]*:10)$"
rm "$userfile"
run "$aisb" agents nosuch
check "agents nosuch: exit" "$rc" 78

# 12. bad --agent values, and where --print-config says it came from
run "$aisb" --agent 'Claude Code' --print-config
check "bad --agent: exit" "$rc" 78
run "$aisb" --agent claude --print-config
has "print-config: agent" "$tmp/out" '^agent  *claude (flag: --agent)$'

echo "agent.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
