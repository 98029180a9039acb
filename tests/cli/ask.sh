#!/bin/bash
# Held requests, the launcher's half (docs/launcher.md, "Held requests"):
# aisb pending, approve ID once|session|always and deny ID against the
# control sockets of a running session and of a named gate, served by
# askfake.py as a gate run with --ask would (the gate's half has tests of
# its own; tests/e2e/ask.sh runs both).  always: the user's policy file
# gains the rule, every other byte kept, its mode kept, written only when
# the result loads and allows the request.  ask: is the user's: a
# project config that says it is refused.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"
fake='' watch=''
cleanup() {
	local p
	for p in $fake $watch; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# one line to a control socket; its answer on stdout
ctl() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(s.makefile().readline())' "$1" "$2"
}
start_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }

# 1. nothing running: nothing held, exit 0
run "$aisb" pending
check "no gates: exit" "$rc" 0
check "no gates: said" "$(cat "$tmp/out")" "no held requests"
run "$aisb" approve 0123abcd-1 once
check "approve, no such session: exit" "$rc" 78
grep -q "no running session or named gate that holds requests is '0123abcd'" "$tmp/err" && ok ||
    bad "approve, no such session: $(cat "$tmp/err")"
run "$aisb" approve nodash once
check "approve, not an ID: exit" "$rc" 78
# no gate numbers a request 0 or past 2^53 - 1: said before any gate is asked
for n in 0 9007199254740992; do
	run "$aisb" approve "0123abcd-$n" once
	check "approve, N $n: exit" "$rc" 78
	grep -q "is not a held request's ID" "$tmp/err" && ok || bad "N $n: $(cat "$tmp/err")"
done
run "$aisb" approve 0123abcd-1 sometimes
check "approve, bad answer: exit" "$rc" 78
run "$aisb" approve 0123abcd-1 once --to "$tmp/x.yaml"
check "approve once --to: exit" "$rc" 78

# 2. a running session (its launcher: the fake; its note names its policy
# and command) and a named gate, both with --ask
id=0123abcd4567ef0123abcd45
sdir=$XDG_STATE_HOME/aisb/sessions/$id
gdir=$XDG_STATE_HOME/aisb/gates/work
mkdir -p "$sdir" "$gdir"
chmod 700 "$sdir" "$gdir"
policy=$XDG_CONFIG_HOME/aisb/policy.yaml
mkdir -p "$(dirname "$policy")"
cat >"$policy" <<'EOF'
# my policy: what my agents may reach
version: 1

allow:
  # model provider
  - host: api.anthropic.com
    ports: [443]   # HTTPS only

  - host: "*.githubusercontent.com"
    ports: [443]
# what leaks
deny:
  - host: gist.github.com
  - host: blocked.example.test
EOF
chmod 640 "$policy"
cp "$policy" "$tmp/policy.orig"
python3 "$top_srcdir/tests/cli/askfake.py" "$tmp/log" "$sdir/control" \
    "$gdir/control" &
fake=$!
for _ in $(seq 100); do grep -qx ready "$tmp/log" 2>/dev/null && break; sleep 0.1; done
printf '%s %s\n' "$fake" "$(start_of "$fake")" >"$sdir/launcher"
printf 'policy %s\ncommand curl -m 60 https://new.example.test/\n' "$policy" >"$sdir/ask"
printf 'supervisor %s %s\ngate %s %s\nport 1\nidle 600\nask 30\npolicy %s\n' \
    "$fake" "$(start_of "$fake")" "$fake" "$(start_of "$fake")" "$policy" >"$gdir/state"
printf 'policy -\n' >"$gdir/ask"
ctl "$sdir/control" "hold 1 new.example.test 443 connect -" >/dev/null
ctl "$sdir/control" "hold 2 other.example.test 8080 transparent -" >/dev/null
ctl "$gdir/control" "hold 7 shared.example.test 5432 port session-$id" >/dev/null

run "$aisb" pending
check "pending: exit" "$rc" 0
check "pending: header" "$(head -1 "$tmp/out" | tr -s ' ')" "ID SESSION COMMAND HOST:PORT HOW AGE/LEFT"
check "pending: rows" "$(grep -c . "$tmp/out")" 4
row() { grep "^$1 " "$tmp/out" | tr -s ' ' | sed 's/ [0-9]*s\/[0-9]*s$//'; }
check "pending: the session's" "$(row 0123abcd-1)" \
    "0123abcd-1 0123abcd curl -m 60 https://new.example.test/ new.example.test:443 connect"
check "pending: transparent" "$(row 0123abcd-2 | awk '{print $(NF-1), $NF}')" "other.example.test:8080 transparent"
check "pending: the named gate's" "$(row work-7)" \
    "work-7 0123abcd curl -m 60 https://new.example.test/ shared.example.test:5432 port"
grep -q ' [0-9]*s/[56][0-9]s$' "$tmp/out" && ok || bad "pending: age/left: $(cat "$tmp/out")"
# the note's command is the sandbox's: ESC and C1 (U+009B, CSI) as '?',
# the column cut before a character that does not fit whole (bytes 37-39)
cp "$sdir/ask" "$tmp/ask.orig"
printf 'policy %s\ncommand echo \033[2J \302\233 %s\342\202\254tail\n' \
    "$policy" xxxxxxxxxxxxxxxxxxxxxxxx >"$sdir/ask"
run "$aisb" pending
check "pending: the command, terminal-safe and cut" "$(row 0123abcd-1)" \
    "0123abcd-1 0123abcd echo ?[2J ? xxxxxxxxxxxxxxxxxxxxxxxx... new.example.test:443 connect"
cp "$tmp/ask.orig" "$sdir/ask"

# bash completion (contrib/completion/aisb): the IDs, then the answers
comp() {
	bash -c 'source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_aisb
		printf "%s\n" "${COMPREPLY[@]}" | sort -u | paste -sd" "' \
	    comp "$top_srcdir/contrib/completion/aisb" "$aisb" "$@"
}
check "completion: aisb deny" "$(comp deny '')" "0123abcd-1 0123abcd-2 work-7"
check "completion: aisb approve 0123abcd-1" "$(comp approve 0123abcd-1 '')" "always once session"

# 3. once, then gone; deny; session on the named gate
run "$aisb" approve 0123abcd-1 once
check "approve once: exit" "$rc" 0
check "approve once: said" "$(cat "$tmp/out")" "approved 0123abcd-1 once"
grep -qx "approve 1 once" "$tmp/log" && ok || bad "approve once: the gate got $(cat "$tmp/log")"
run "$aisb" approve 0123abcd-1 once
check "approve again: exit" "$rc" 1
grep -q "0123abcd-1 is no longer held" "$tmp/err" && ok || bad "approve again: $(cat "$tmp/err")"
run "$aisb" deny 0123abcd4567-2
check "deny (a longer prefix): exit" "$rc" 0
check "deny: said" "$(cat "$tmp/out")" "denied 0123abcd4567-2"
grep -qx "deny 2" "$tmp/log" && ok || bad "deny: the gate got $(cat "$tmp/log")"
run "$aisb" approve work-7 session
check "approve session (named gate): exit" "$rc" 0
grep -qx "approve 7 session" "$tmp/log" && ok || bad "approve session: the gate got $(cat "$tmp/log")"
run "$aisb" pending
check "all answered" "$(cat "$tmp/out")" "no held requests"

# 4. always: the rule written where the list is, in its indentation, the
# diff printed, every other byte kept, the mode kept; then session
ctl "$sdir/control" "hold 3 new.example.test 8443 connect -" >/dev/null
run "$aisb" approve 0123abcd-3 always
check "always: exit" "$rc" 0
grep -qx "approve 3 session" "$tmp/log" && ok || bad "always: the gate got $(cat "$tmp/log")"
check "always: mode kept" "$(stat -c %a "$policy")" 640
check "always: what was added" "$(diff "$tmp/policy.orig" "$policy" | grep '^>' | sed 's/ [0-9-]*$//')" \
">   # allowed by aisb approve 0123abcd-3 always,
>   - host: \"new.example.test\"
>     ports: [8443]"
# the lines around it are the file's, the insertion after the last entry
check "always: after the last entry" "$(diff "$tmp/policy.orig" "$policy" | sed -n 1p)" "10a11,13"
grep -q "^+  - host: \"new.example.test\"$" "$tmp/out" && grep -q "^@@ -8,6 +8,9 @@$" "$tmp/out" &&
    grep -q "^--- $policy$" "$tmp/out" && ok || bad "always: the diff: $(cat "$tmp/out")"
run "$aisb" policy test "$policy" new.example.test:8443
check "always: the file allows it" "$(head -1 "$tmp/out" | cut -d' ' -f1)" allow

# 5. always that cannot hold: the file untouched (a deny rule wins; a
# flow-style list; a file that is not the user's default); --to names
# another; a link stays a link
cp "$policy" "$tmp/policy.before"
ctl "$sdir/control" "hold 4 blocked.example.test 443 connect -" >/dev/null
run "$aisb" approve 0123abcd-4 always
check "always, a deny rule wins: exit" "$rc" 78
grep -q "would still deny blocked.example.test:443" "$tmp/err" && ok || bad "deny rule: $(cat "$tmp/err")"
cmp -s "$policy" "$tmp/policy.before" && ok || bad "deny rule: the file changed"
grep -qx "approve 4 session" "$tmp/log" && bad "deny rule: approved at the gate" || ok
printf 'version: 1\nallow: [{host: a.example.test}]\n' >"$tmp/flow.yaml"
cp "$tmp/flow.yaml" "$tmp/flow.orig"
run "$aisb" approve 0123abcd-4 always --to "$tmp/flow.yaml"
check "always, flow style: exit" "$rc" 78
grep -q "flow style" "$tmp/err" && ok || bad "flow style: $(cat "$tmp/err")"
cmp -s "$tmp/flow.yaml" "$tmp/flow.orig" && ok || bad "flow style: the file changed"
printf 'version: 1\nallow:\n- host: a.example.test\n  ports: [443]\n' >"$tmp/mine.yaml"
ln -s mine.yaml "$tmp/link.yaml"
ctl "$sdir/control" "hold 5 2001:db8::5 22 connect -" >/dev/null
run "$aisb" approve 0123abcd-5 always --to "$tmp/link.yaml"
check "always --to, an address: exit" "$rc" 0
check "always --to: the link stays" "$(readlink "$tmp/link.yaml")" mine.yaml
check "always --to: a cidr rule at column 0" "$(sed -n '6,7p' "$tmp/mine.yaml")" \
    "$(printf -- '- cidr: "2001:db8::5"\n  ports: [22]')"
grep -qx "approve 5 session" "$tmp/log" && ok || bad "--to: the gate got $(cat "$tmp/log")"
# the named gate's note names no file of the user's: the default one
ctl "$gdir/control" "hold 8 gate.example.test 443 http session-$id" >/dev/null
run "$aisb" approve work-8 always
check "always, named gate: exit" "$rc" 0
grep -q '^  - host: "gate.example.test"$' "$policy" && ok || bad "named gate: not in $policy"
rm "$policy"
ctl "$gdir/control" "hold 9 none.example.test 443 http -" >/dev/null
run "$aisb" approve work-9 always
check "always, no policy file of the user's: exit" "$rc" 78
grep -q "does not exist" "$tmp/err" && ok || bad "no file: $(cat "$tmp/err")"
run "$aisb" approve work-9 once
check "still held after a refused always" "$rc" 0

# the gate's session grants full: said so, and the request still held
ctl "$sdir/control" "hold 12 full.test 443 connect -" >/dev/null
run "$aisb" approve 0123abcd-12 session
check "approve session, grants full: exit" "$rc" 78
grep -q "the gate keeps no more session grants (256, until it exits); the request is still held: approve it once" "$tmp/err" &&
    ok || bad "grants full: $(cat "$tmp/err")"
run "$aisb" approve 0123abcd-12 once
check "approve once, grants full: exit" "$rc" 0

# 6. --watch: the list, then one line per request held or answered,
# until the gates are gone
"$aisb" pending --watch >"$tmp/watch" 2>&1 &
watch=$!
for _ in $(seq 100); do [ "$(grep -c '^watch$' "$tmp/log")" -ge 2 ] && break; sleep 0.1; done
ctl "$sdir/control" "hold 10 w.example.test 443 connect -" >/dev/null
run "$aisb" deny 0123abcd-10
for _ in $(seq 100); do grep -q '^answered' "$tmp/watch" && break; sleep 0.1; done
grep -q '^held     0123abcd-10 .* w\.example\.test:443 ' "$tmp/watch" && ok || bad "--watch: held: $(cat "$tmp/watch")"
grep -qx 'answered 0123abcd-10 deny' "$tmp/watch" && ok || bad "--watch: answered: $(cat "$tmp/watch")"
# a line past the bound is dropped whole, its tail too; a line without
# an id is read within its bytes (ASan: not past the buffer)
ctl "$gdir/control" junk >/dev/null
ctl "$gdir/control" "hold 11 j.example.test 443 connect -" >/dev/null
for _ in $(seq 100); do grep -q 'work-11 ' "$tmp/watch" && break; sleep 0.1; done
grep -q '^held     work-11 ' "$tmp/watch" && ok || bad "--watch after junk: $(cat "$tmp/watch")"
grep -q 'work-99' "$tmp/watch" && bad "--watch: the tail of a dropped line was read: $(cat "$tmp/watch")" || ok

# what the gate's bounds denied without holding it is said, in --watch
# and after pending's table: a flood cannot make a request vanish unheard
ctl "$sdir/control" "refuse real.example.test 443 connect - 1" >/dev/null
ctl "$sdir/control" "refuse junk9.example.test 443 connect - 40" >/dev/null
for _ in $(seq 100); do [ "$(grep -c '^refused' "$tmp/watch")" -ge 2 ] && break; sleep 0.1; done
check "--watch: one refused" "$(grep '^refused' "$tmp/watch" | sed -n 1p)" \
    "refused  denied real.example.test:443 (connect) without holding it: too many requests of 0123abcd wait for an answer already; answer them (aisb pending), the gate's audit log has every denied one"
check "--watch: a burst" "$(grep '^refused' "$tmp/watch" | sed -n 2p)" \
    "refused  denied 40 requests without holding them, the last junk9.example.test:443 (connect): too many requests of 0123abcd wait for an answer already; answer them (aisb pending), the gate's audit log has every denied one"
run "$aisb" pending
check "pending: the refused, after the table" "$(tail -n 1 "$tmp/out")" \
    "0123abcd: 41 requests denied without being held (too many were waiting), the last junk9.example.test:443 (connect) 2s ago; each is in the gate's audit log"

# a session may not ask more of a named gate than it was started with
sed -i 's/^ask 30$/ask 0/' "$gdir/state"
run "$aisb" --gate work --ask -- true
check "--gate, a gate without --ask: exit" "$rc" 78
grep -q "^aisb: --ask: gate work does not hold requests; its own flag turns that on: aisb gate down work; aisb gate up work --ask; nothing was started$" "$tmp/err" &&
    ok || bad "--gate without --ask: $(cat "$tmp/err")"
sed -i 's/^ask 0$/ask 30/' "$gdir/state"

# 7. dead ones are skipped quietly; --watch ends with the gates
kill "$fake"
wait "$fake" 2>/dev/null || true
fake=
run "$aisb" pending
check "dead: exit" "$rc" 0
check "dead: said" "$(cat "$tmp/out")" "no held requests"
check "dead: quiet" "$(cat "$tmp/err")" ""
# its ID: no longer held (exit 1), not an unknown one (78)
run "$aisb" approve 0123abcd-1 once
check "approve, the session ended: exit" "$rc" 1
check "approve, the session ended: said" "$(cat "$tmp/err")" \
    "aisb: 0123abcd-1 is no longer held: its session 0123abcd ended: nothing of it is held any more"
rc=0; wait "$watch" || rc=$?
check "--watch: ends with the gates" "$rc" 0

# 8. ask: is the user's (config, flag, AISB_ASK), never a project's
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'version: 1\n' >"$tmp/p.yaml"
run "$aisb" --policy "$tmp/p.yaml" --print-config
grep -q '^ask *false (default)$' "$tmp/out" && ok || bad "ask default: $(grep ask "$tmp/out")"
printf 'ask: 30\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" --policy "$tmp/p.yaml" --print-config
grep -q '^ask *30 (user config: .*config.yaml:1:6)$' "$tmp/out" && ok || bad "ask: 30: $(grep ask "$tmp/out")"
run "$aisb" --ask=5000 --print-config
check "--ask=5000: exit" "$rc" 78
grep -q "from 1 to 3600" "$tmp/err" && ok || bad "--ask=5000: $(cat "$tmp/err")"
printf 'ask: true\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --policy "$tmp/p.yaml" --print-config
check "project ask: exit" "$rc" 78
grep -q "\.aisb\.yaml:1:[0-9]*: a project config may not set 'ask' (a repository must never turn approvals on or off)" "$tmp/err" &&
    ok || bad "project ask: $(cat "$tmp/err")"
printf 'ask: false\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --policy "$tmp/p.yaml" --print-config
check "project ask: false: refused too" "$rc" 78
rm "$tmp/ws/.aisb.yaml"
run "$aisb" --policy "$tmp/p.yaml" --ask --net none -- true
check "--ask --net none: exit" "$rc" 78
grep -q "^aisb: --ask needs a gate to hold requests" "$tmp/err" && ok || bad "--ask --net none: $(cat "$tmp/err")"
# --ask takes no word after it: the command's first word stays the command
run "$aisb" --policy "$tmp/p.yaml" --ask --dry-run -- true
grep -q "aisb-enforce.* -- true$" "$tmp/out" && ok || bad "--ask --dry-run: $(tail -3 "$tmp/out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
