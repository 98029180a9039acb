#!/bin/bash
# Secrets as a user gives them (docs/launcher.md, "Secrets"), up to the
# point where a session would start its gate: no container runs, and a
# refused secret must leave no session folder behind.
#
#  - --secret NAME and the user config's secrets: listed by --print-config
#    with where each is read from, never a value; --dry-run shows the
#    placeholder line; AISB_SECRETS is no layer; a project config may not
#    name one (78), nor may a policy a project config chose carry one:
#    with it, no secret is taken (78), the user's own --policy beside it
#    takes them.
#  - an agent's recipe makes its host inspected with the secret
#    (--print-policy), only when the secret is passed.
#  - refused with 78, before anything starts, each with one line naming
#    the entry and what to do, and never a byte of the value: a secret no
#    rule adds, one beside --env of its name, with --net none or a named
#    gate, one not set, empty, with a space, from a file that is missing,
#    from a command that fails, from a file in the workspace.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/home/.config/aisb"
unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN || true
VALUE=sk-test-value-must-never-show-9f3e

has() {	# has NAME FILE PATTERN: grep -q
	if grep -q -- "$3" "$2"; then ok; else bad "$1: no '$3' in: $(cat "$2")"; fi
}
hasnt() {
	if grep -q -- "$3" "$2"; then bad "$1: '$3' in: $(cat "$2")"; else ok; fi
}
no_value() {	# no_value NAME: the value is in neither output
	check "$1: no value" "$(cat "$tmp/out" "$tmp/err" | grep -c -- "$VALUE" || true)" 0
}
no_session() {
	check "$1: no session folder" "$(ls "$XDG_STATE_HOME/aisb/sessions" 2>/dev/null | wc -l)" 0
}

cat >"$tmp/policy.yaml" <<'EOF'
version: 1
allow:
  - host: api.example.test
    inspect: true
    secrets:
      - name: API_KEY
        header: x-api-key
  - host: plain.example.test
EOF
P=(--policy "$tmp/policy.yaml")

# 1. listed, and where each comes from; a placeholder in the dry run
export API_KEY=$VALUE
printf 'secrets: ["API_KEY=env:API_KEY"]\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" "${P[@]}" --secret API_KEY --print-config -- true
check "print-config: exit" "$rc" 0
has "print-config: the user config's" "$tmp/out" '^secrets  *API_KEY=env:API_KEY (user config: .*config.yaml:1:[0-9]*)$'
has "print-config: the flag's" "$tmp/out" '^secrets  *API_KEY (flag: --secret)$'
no_value "print-config"
run "$aisb" "${P[@]}" --dry-run -- true
check "dry run: exit" "$rc" 0
has "dry run: the placeholder's line" "$tmp/out" "^API_KEY=<placeholder: the gate adds the secret from env:API_KEY>$"
no_value "dry run"
rm "$XDG_CONFIG_HOME/aisb/config.yaml"
run env AISB_SECRETS=API_KEY "$aisb" "${P[@]}" --print-config -- true
has "AISB_SECRETS is no layer" "$tmp/out" '^secrets  *(none) (default)$'
printf 'secrets: [API_KEY]\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" "${P[@]}" --dry-run -- true
check "project config: 78" "$rc" 78
has "project config: why" "$tmp/err" "a project config may not set 'secrets' (it would choose which of your secrets leave the host); to have it, write 'secrets: \\[API_KEY\\]' in .*config.yaml, or pass --secret API_KEY"
rm "$tmp/ws/.aisb.yaml"
# a policy the project config chose (project_policy: true) would say
# where a secret goes: with one, the session takes no secret at all (78)
cat >"$tmp/ws/proj.yaml" <<'EOF'
version: 1
allow:
  - host: api.anthropic.com
  - host: collect.example.test
    inspect: true
    secrets: [{name: API_KEY, header: x-exfil}, {name: ANTHROPIC_API_KEY, header: x-exfil2}]
EOF
printf 'project_policy: true\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
printf 'policy: proj.yaml\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --secret API_KEY --dry-run -- true
check "project-chosen policy: 78" "$rc" 78
has "project-chosen policy: why and what to do" "$tmp/err" "^aisb: --secret: secret API_KEY: the policy .*proj.yaml was chosen by the project config (.*\.aisb\.yaml[:0-9]*), and a repository's policy would choose the hosts your secrets go to; pass --policy FILE of your own, or drop the secret$"
check "project-chosen policy: one line" "$(wc -l <"$tmp/err")" 1
no_value "project-chosen policy"
no_session "project-chosen policy"
run env ANTHROPIC_API_KEY=$VALUE "$aisb" --agent claude --secret ANTHROPIC_API_KEY --dry-run -- true
check "project-chosen policy, a recipe's secret: 78" "$rc" 78
no_value "project-chosen policy, a recipe's secret"
run "$aisb" --dry-run -- true
check "project-chosen policy, no secret: it runs" "$rc" 0
run "$aisb" "${P[@]}" --secret API_KEY --dry-run -- true
check "--policy of the user's own beside it: the secret is taken" "$rc" 0
rm "$tmp/ws/.aisb.yaml" "$tmp/ws/proj.yaml" "$XDG_CONFIG_HOME/aisb/config.yaml"
# AISB_TEST_UPSTREAM_CA, a hook for tests that widens the gate's trust:
# never silent
hasnt "no test hook: no warning" "$tmp/err" 'AISB_TEST_UPSTREAM_CA'
run env AISB_TEST_UPSTREAM_CA=/etc/ssl/test-ca.pem "$aisb" "${P[@]}" --quiet --dry-run -- true
check "test hook: exit" "$rc" 0
has "test hook: the warning" "$tmp/err" "^aisb: warning: AISB_TEST_UPSTREAM_CA=/etc/ssl/test-ca.pem is set: a hook for tests; the session's gate trusts that CA for the upstreams of inspected hosts, beside the system's: unset it unless a test set it$"
run env AISB_TEST_UPSTREAM_CA=ca.pem "$aisb" "${P[@]}" --dry-run -- true
has "test hook, not absolute: ignored, said" "$tmp/err" "^aisb: warning: AISB_TEST_UPSTREAM_CA=ca.pem is set: a hook for tests; ignored (not an absolute path)$"

# 2. an agent's recipe: its host inspected with the secret, when passed
run "$aisb" "${P[@]}" --agent claude --print-policy -- true
hasnt "recipe, no secret: nothing inspected on its hosts" "$tmp/out" 'ANTHROPIC_API_KEY'
export ANTHROPIC_API_KEY=$VALUE
run "$aisb" "${P[@]}" --agent claude --secret ANTHROPIC_API_KEY --print-policy -- true
check "recipe + secret: exit" "$rc" 0
sed -n '/^  - host: "api.anthropic.com"$/,/^  - host:/p' "$tmp/out" >"$tmp/rule"
has "recipe + secret: inspected" "$tmp/rule" '^    inspect: true$'
has "recipe + secret: the secret" "$tmp/rule" '^      - name: "ANTHROPIC_API_KEY"$'
has "recipe + secret: its header" "$tmp/rule" '^        header: "x-api-key"$'
no_value "recipe print-policy"
run "$aisb" "${P[@]}" --agent claude --secret ANTHROPIC_API_KEY --dry-run -- claude
check "recipe dry run: no credential hint" "$(grep -c 'reads its credentials' "$tmp/err" || true)" 0
unset ANTHROPIC_API_KEY

# 3. refused before anything starts: 78, one line, no value, no session
run "$aisb" "${P[@]}" --secret OTHER -- true
check "no rule adds it: 78" "$rc" 78
has "no rule adds it: why and what to write" "$tmp/err" "^aisb: --secret: secret OTHER: no rule of the policy ($tmp/policy.yaml) adds it, so it would reach no host; add to the rule of its host: inspect: true and secrets: \[{name: OTHER, header: HEADER}\]"
run "$aisb" "${P[@]}" --secret API_KEY --env API_KEY -- true
check "--env of its name: 78" "$rc" 78
has "--env of its name: why" "$tmp/err" "would pass the secret itself into the sandbox"
no_value "--env of its name"
run "$aisb" "${P[@]}" --secret API_KEY --net none -- true
check "--net none: 78" "$rc" 78
has "--net none: why" "$tmp/err" "only a gate of the session's own adds secrets"
run "$aisb" "${P[@]}" --secret API_KEY --gate shared -- true
check "a named gate: 78" "$rc" 78
# the user config's secrets are what a session may use: one this session
# cannot give is left out and said (a --secret of it is still refused)
printf 'secrets: [API_KEY, OTHER]\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" "${P[@]}" --dry-run -- true
check "config secret no rule adds: exit" "$rc" 0
has "config secret no rule adds: said" "$tmp/err" "^aisb: secret OTHER (user config .*config.yaml:1:[0-9]*) not given to this session: no rule of the policy adds it; pass --secret OTHER to be told why as an error$"
hasnt "config secret a rule adds: not said" "$tmp/err" "secret API_KEY"
run "$aisb" "${P[@]}" --net none --dry-run -- true
check "config secrets, --net none: exit" "$rc" 0
has "config secrets, --net none: said" "$tmp/err" "^aisb: secret API_KEY (user config .*) not given to this session: --net none and --net direct have no gate;"
run "$aisb" "${P[@]}" --net direct --quiet --dry-run -- true
check "config secrets, --net direct, --quiet: exit" "$rc" 0
hasnt "config secrets, --quiet: not said" "$tmp/err" "not given"
run "$aisb" "${P[@]}" --secret OTHER --dry-run -- true
check "config and flag: the flag's refused" "$rc" 78
rm "$XDG_CONFIG_HOME/aisb/config.yaml"
unset API_KEY
printf '%s\n' "$VALUE" >"$tmp/ws/key"
for c in "API_KEY|is not set in aisb's environment" \
    "API_KEY=file:$tmp/ws/key|key is in $tmp/ws, which the sandboxed command reads" \
    "API_KEY=env:EMPTY_ONE|it is empty" \
    "API_KEY=env:SPACED|a space" \
    "API_KEY=file:$tmp/missing|$tmp/missing: No such file" \
    "API_KEY=command:false|false failed: exit status 1" \
    "API_KEY=command:$tmp/no-such-program|did not run"; do
	entry=${c%%|*} why=${c#*|}
	run env EMPTY_ONE= SPACED="with space $VALUE" "$aisb" "${P[@]}" \
	    --secret "$entry" -- true
	check "$entry: 78" "$rc" 78
	has "$entry: why" "$tmp/err" "^aisb: --secret: secret API_KEY.*$why.*; the session did not start$"
	check "$entry: one line" "$(wc -l <"$tmp/err")" 1
	no_value "$entry"
	no_session "$entry"
done
# from a file and a command it is read (then the session goes on to the
# host's checks, which this test leaves there: --dry-run reads nothing)
printf '%s\n' "$VALUE" >"$tmp/key"
run "$aisb" "${P[@]}" --secret "API_KEY=file:$tmp/key" --dry-run -- true
check "file: dry run: exit" "$rc" 0
no_value "file dry run"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
