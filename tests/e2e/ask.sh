#!/bin/bash
# End to end: held requests (docs/launcher.md, "Held requests"; issue 31
# item 1).  Real sessions with --ask run curl --max-time 60 against an
# HTTPS server the test starts on the host's loopback (a name the test's
# DNS server gives 127.0.0.1, allow_ranges for it, its CA trusted as a host
# CA); the policy, the user's own ~/.config/aisb/policy.yaml, does not
# allow that name.  From a second shell, aisb pending lists the request
# and aisb approve or deny answers it:
#   once     the request passes; the session's stderr named the ID
#   session  a second request of the same session passes without asking
#   always   the policy file gains the rule, its comments kept; a new
#            session passes without asking
#   deny     refused (403 to CONNECT), as without --ask
#   timeout  refused after --ask=SECONDS, nothing answered
#   a named gate up with --ask: its ID is GATE-N
# Every answer is an audit line of the gate's with who gave it.
#
# Needs the gate's half (aisb-gate --ask): SKIP, saying so, without it.
# Needs root, podman and mmdebstrap; builds its image offline in a podman
# store of its own, which the EXIT trap removes.  Runs only with
# AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start ask mmdebstrap openssl "$PY"
grep -q -- '--ask' <<<"$("$build/aisb-gate" --help 2>&1 || true)" ||
    { echo "SKIP: this aisb-gate holds no requests (its --help lacks --ask: the gate's half of issue 31 item 1)"; exit 77; }
e2e_seed_image curl
vol=aisb-e2e-ask-$$
e2e_cleanup_more() { "$aisb" gate down e2eask >/dev/null 2>&1; }
chmod 700 "$tmp/ws"

# --- an HTTPS server, its CA a host CA, the test's DNS server -------------
e2e_tls_cert "$tmp" ask.test new.test twice.test gone.test late.test shared.test
mkdir -p "$tmp/hostca/test" "$tmp/srv"
cp "$tmp/ca.crt" "$tmp/hostca/test/e2e-ask.crt"
export AISB_TEST_HOST_CA_DIR=$tmp/hostca
echo hello >"$tmp/srv/hello"
"$PY" "$top_srcdir/tests/e2e/serve_dir.py" "$tmp/srv.crt" "$tmp/srv.key" \
    "$tmp/https.port" "$tmp/srv" &
pids+=($!)
cat >"$tmp/zone.json" <<'EOF'
{"ask.test": {"A": ["127.0.0.1"], "ttl": 5},
 "new.test": {"A": ["127.0.0.1"], "ttl": 5},
 "twice.test": {"A": ["127.0.0.1"], "ttl": 5},
 "gone.test": {"A": ["127.0.0.1"], "ttl": 5},
 "late.test": {"A": ["127.0.0.1"], "ttl": 5},
 "shared.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns
port=$(e2e_port https)

# the user's own policy: none of the test's names allowed
policy=$XDG_CONFIG_HOME/aisb/policy.yaml
mkdir -p "$(dirname "$policy")"
cat >"$policy" <<EOF
# the e2e test's policy: these comments stay
version: 1
allow:
  # nothing of the test's is allowed: each is asked for
  - host: allowed.example.test
    ports: [443]

allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
EOF
chmod 600 "$policy"

get() { printf '%s' "curl -sS --max-time 60 -o /dev/null -w '%{http_code}\\n' https://$1:$port/hello"; }
# a session in the background: $tmp/NAME.out, NAME.err, its pid in $bg
sess_bg() {
	local n=$1
	shift
	(cd "$tmp/ws" && exec "$aisb" --home-volume "$vol" --package curl "$@") \
	    >"$tmp/$n.out" 2>"$tmp/$n.err" </dev/null &
	bg=$!
	pids+=("$bg")
}
# the ID aisb pending lists for HOST (120 s at most: the session starts)
held_id() {
	local id
	for _ in $(seq 600); do
		"$aisb" pending >"$tmp/pending" 2>"$tmp/pending.err" || true
		id=$(grep " $1:$port " "$tmp/pending" | cut -d' ' -f1 | sed -n 1p)
		[ -n "$id" ] && { echo "$id"; return 0; }
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.2
	done
	echo "FAIL: nothing held for $1 (pending: $(cat "$tmp/pending" "$tmp/pending.err"))" >&2
	return 1
}
end() { rc=0; wait "$1" || rc=$?; }
# the gate's ask line of a session, for request ID N: answer and by_uid
asked() { grep '"event":"ask"' "$1/audit.jsonl" | grep "\"id\":$2," | sed -n 1p; }

# The image is built by a first session.
rc=0; (cd "$tmp/ws" && "$aisb" --home-volume "$vol" --package curl -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "warm-up session" "$rc" 0
e2e_session_mark

# 1. once, from a second shell; the session's terminal named the ID
sess_bg once --ask -- sh -c "$(get ask.test)"
id=$(held_id ask.test)
grep -q "^$id  *${id%-*}  *sh -c curl -sS --max-time 60 " "$tmp/pending" && ok ||
    bad "once: pending's row: $(cat "$tmp/pending")"
rc=0; "$aisb" approve "$id" once >"$tmp/out" 2>"$tmp/err" || rc=$?
check "approve once: exit" "$rc" 0
check "approve once: said" "$(cat "$tmp/out")" "approved $id once"
end "$bg"
check "once: session exit" "$rc" 0
check "once: curl got through" "$(cat "$tmp/once.out")" 200
grep -Eq "^aisb: held ask\.test:$port \(connect\) for [0-9]+s: aisb approve $id once\|session\|always, or aisb deny $id$" \
    "$tmp/once.err" && ok || bad "once: the notice: $(cat "$tmp/once.err")"
sd=$(e2e_session)
[ -d "$sd" ] && [ ! -e "$sd/control" ] && ok ||
    bad "once: the ended session's control socket is left: $(ls -l "$sd")"
asked "$sd" "${id##*-}" >"$tmp/line"
grep -q '"answer":"once"' "$tmp/line" && grep -q '"by_uid":0' "$tmp/line" && ok ||
    bad "once: the audit line: $(cat "$tmp/line")"
rc=0; "$aisb" approve "$id" once >/dev/null 2>&1 || rc=$?
check "once: the session is gone (no longer held)" "$rc" 1

# 1b. on a terminal, which the session's podman run -t holds in raw mode
# (no newline translation): the notice ends in "\r\n", so the command's
# next line starts at the margin, not where the notice ended
(cd "$tmp/ws" && exec "$PY" "$top_srcdir/tests/e2e/ptyask.py" 150 -- \
    "$aisb" --home-volume "$vol" --package curl --ask -- sh -c "$(get ask.test)") \
    >"$tmp/tty.out" 2>&1 </dev/null &
bg=$!
pids+=("$bg")
id=$(held_id ask.test)
"$aisb" approve "$id" once >/dev/null
end "$bg"
check "tty: exit" "$rc" 0
"$PY" - "$tmp/tty.out" "$id" <<'PY' && ok || bad "tty: the notice's end: $(od -c "$tmp/tty.out" | tail -n 8)"
import sys
out = open(sys.argv[1], "rb").read()
end = ("aisb deny %s" % sys.argv[2]).encode()
sys.exit(0 if end + b"\r\n" in out else 1)
PY
e2e_session_mark

# 2. session: the second request of the session is not held
sess_bg session --ask -- sh -c "$(get twice.test); $(get twice.test)"
id=$(held_id twice.test)
rc=0; "$aisb" approve "$id" session >"$tmp/out" 2>"$tmp/err" || rc=$?
check "approve session: exit" "$rc" 0
end "$bg"
check "session: exit" "$rc" 0
check "session: both through" "$(paste -sd' ' "$tmp/session.out")" "200 200"
check "session: asked once" "$(grep -c '^aisb: held ' "$tmp/session.err")" 1
e2e_session_mark

# 3. always: the rule in the user's policy file, its comments kept; the
# next session passes without asking
cp "$policy" "$tmp/policy.before"
sess_bg always --ask -- sh -c "$(get new.test)"
id=$(held_id new.test)
rc=0; "$aisb" approve "$id" always >"$tmp/out" 2>"$tmp/err" || rc=$?
check "approve always: exit" "$rc" 0
grep -q "^+  - host: \"new.test\"$" "$tmp/out" && ok || bad "always: the diff: $(cat "$tmp/out")"
end "$bg"
check "always: exit" "$rc" 0
check "always: through" "$(cat "$tmp/always.out")" 200
check "always: the rule" "$(diff "$tmp/policy.before" "$policy" | sed -n 's/^> //p' | sed 1d)" \
    "$(printf '  - host: "new.test"\n    ports: [%s]' "$port")"
check "always: the rest kept" "$(diff "$tmp/policy.before" "$policy" | sed -n 1p)" "6a7,9"
check "always: mode kept" "$(stat -c %a "$policy")" 600
e2e_session_mark
sess_bg after --ask -- sh -c "$(get new.test)"
end "$bg"
check "always, a new session: exit" "$rc" 0
check "always, a new session: through" "$(cat "$tmp/after.out")" 200
check "always, a new session: not asked" "$(grep -c '^aisb: held ' "$tmp/after.err" || true)" 0
e2e_session_mark

# 4. deny: refused as without --ask
sess_bg deny --ask -- sh -c "$(get gone.test)"
id=$(held_id gone.test)
rc=0; "$aisb" deny "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "deny: exit" "$rc" 0
check "deny: said" "$(cat "$tmp/out")" "denied $id"
end "$bg"
[ "$rc" != 0 ] && ok || bad "deny: curl got through"
grep -q 200 "$tmp/deny.out" && bad "deny: 200" || ok
sd=$(e2e_session)
grep -q '"answer":"deny"' "$sd/audit.jsonl" && ok || bad "deny: no ask line"

# 5. timeout: nothing answered, refused after --ask=SECONDS
t0=$(date +%s)
sess_bg late --ask=3 -- sh -c "$(get late.test)"
id=$(held_id late.test)
end "$bg"
[ "$rc" != 0 ] && ok || bad "timeout: curl got through"
[ $(($(date +%s) - t0)) -lt 55 ] && ok || bad "timeout: took curl's own 60 s"
sd=$(e2e_session)
grep -q '"answer":"timeout"' "$sd/audit.jsonl" && ok || bad "timeout: no ask line"
rc=0; "$aisb" approve "$id" once >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] && ok || bad "timeout: approved after the fact"

# 6. a named gate up with --ask: GATE-N
rc=0; "$aisb" gate up e2eask --ask=30 >"$tmp/out" 2>"$tmp/err" || rc=$?
check "gate up --ask: exit" "$rc" 0
grep -q "holds what its policy denies for 30 s" "$tmp/out" && ok || bad "gate up --ask: $(cat "$tmp/out")"
sess_bg shared --gate e2eask -- sh -c "$(get shared.test)"
id=$(held_id shared.test)
check "named gate: the ID" "${id%-*}" e2eask
rc=0; "$aisb" approve "$id" once >"$tmp/out" 2>"$tmp/err" || rc=$?
check "named gate: approve once" "$rc" 0
end "$bg"
check "named gate: through" "$(cat "$tmp/shared.out")" 200
"$aisb" gate down e2eask >/dev/null 2>&1 || true

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
