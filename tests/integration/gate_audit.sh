#!/bin/bash
# aisb-gate: the audit log under faults, on a tmpfs of 16 KiB.  A full disk
# never leaves a torn line (a line is written whole or kept and written
# later); while lines cannot be written new connections get 503
# audit_unavailable (the default) or go on (--audit-failure allow); the
# lines kept are written and the gate serves again as soon as there is
# room, with no signal or restart.
set -euo pipefail

# A mount namespace of the suite's own, entered before gate_lib.sh enters
# a network namespace: the tmpfs goes with it, whatever happens.
if [ -z "${AISB_GATE_MOUNTNS:-}" ]; then
	export AISB_GATE_MOUNTNS=1
	if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
		exec unshare -m --propagation private "$BASH" "$0" "$@"
	fi
	echo "SKIP: needs root and unshare -m (a tmpfs of the test's own)"
	exit 77
fi
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
echo_port=$up
start_dns '{"ok.test": {"A": ["192.0.2.10"]}}'
write_policy "$tmp/policy.yaml" ok.test

fs=$tmp/fs
mkdir "$fs"
mount -t tmpfs -o size=16k,mode=0755 aisb-audit-test "$fs"
cleanup_extra() { umount "$fs"; }

fill() {	# take every free page of the tmpfs
	dd if=/dev/zero of="$fs/fill" bs=4096 2>/dev/null || true
}
lines_ok() {	# every line of FILE whole JSON, and FILE ends with a newline
	[ "$(audit_count "$1")" != invalid ] &&
	    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]
}

# --- deny (the default): 503 audit_unavailable while lines cannot be written
start_gate full "$tmp/policy.yaml" --audit "$fs/audit.log" \
    --control "$tmp/ctl.sock"
A=$fs/audit.log
check "before the disk fills" "$(proxy_get "http://ok.test:$up/")" "000 200"
fill
allowed=1 got=
for i in $(seq 40); do
	got=$(proxy_get "http://ok.test:$up/$i")
	[ "$got" = "000 200" ] || break
	allowed=$((allowed + 1))
done
check "refused once the log is full" "$got" "000 503"
case $(decision_header) in
*"reason=audit_unavailable"*) ok ;;
*) bad "503 without audit_unavailable: $(decision_header)" ;;
esac
[ "$allowed" -ge 2 ] && ok || bad "the log filled at once ($allowed)"
lines_ok "$A" && ok || bad "torn line while full: $(tail -c 300 "$A")"
grep -q "kept for retry" "$tmp/gate.full.err" && ok || bad "no failure logged"
check "still refused" "$(proxy_get "http://ok.test:$up/again")" "000 503"
check "refusals counted" \
    "$(control "$tmp/ctl.sock" status counters.rejected_audit)" 2

# room again: the next connection is served, and the lines kept come first
rm -f "$fs/fill"
check "recovered" "$(proxy_get "http://ok.test:$up/back")" "000 200"
sleep 0.3
lines_ok "$A" && ok || bad "torn line after recovery: $(tail -c 300 "$A")"
check "every allowed request audited" "$(audit_count "$A" event=decision \
    decision=allow)" $((allowed + 1))
expect_audit "$A" status=503 reason=audit_unavailable
grep -q "audit: writing again after failures" "$tmp/gate.full.err" && ok ||
    bad "no recovery logged"
# lines kept while nothing happens are written by the retry timer
fill
proxy_get "http://ok.test:$up/fill" >/dev/null
for i in $(seq 20); do
	proxy_get "http://ok.test:$up/w$i" >/dev/null
	grep -q "kept for retry" <(tail -n 3 "$tmp/gate.full.err") && break
done
n=$(audit_count "$A")
rm -f "$fs/fill"
sleep 1.5
[ "$(audit_count "$A")" -gt "$n" ] && ok ||
    bad "kept lines not written by the retry timer"
lines_ok "$A" && ok || bad "torn line after the retry: $(tail -c 300 "$A")"
kill "$gate_pid"

# --- allow: decisions go on, lines are still never torn
rm -f "$fs/audit.log"
start_gate allow "$tmp/policy.yaml" --audit "$fs/allow.log" \
    --audit-failure allow
B=$fs/allow.log
check "allow: first" "$(proxy_get "http://ok.test:$up/")" "000 200"
fill
n=0
for i in $(seq 20); do
	[ "$(proxy_get "http://ok.test:$up/$i")" = "000 200" ] && n=$((n + 1))
done
check "allow: served while the log is full" "$n" 20
grep -q "kept for retry" "$tmp/gate.allow.err" && ok ||
    bad "allow: the log never filled"
lines_ok "$B" && ok || bad "allow: torn line: $(tail -c 300 "$B")"
rm -f "$fs/fill"
check "allow: after" "$(proxy_get "http://ok.test:$up/after")" "000 200"
sleep 0.3
lines_ok "$B" && ok || bad "allow: torn line after: $(tail -c 300 "$B")"
kill "$gate_pid"

finish
