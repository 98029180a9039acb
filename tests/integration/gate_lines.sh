#!/bin/bash
# aisb-gate without -v: one stderr line when it is up (address, policy
# path, identity, rule count) and one per SIGHUP reload, applied (the new
# identity, and the new policy decides) or refused (why, the old identity
# kept, and the old policy still decides).
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

aisb=${AISB:-$top_builddir/aisb}
start_upstream http 192.0.2.10
up=$up_port
echo_port=$up
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "new.test": {"A": ["192.0.2.10"]}}'
write_policy "$tmp/p.yaml" ok.test
ident() { "$aisb" policy check "$1" | sed -n 's/^policy OK sha256:\(.\{12\}\).*/\1/p'; }
id1=$(ident "$tmp/p.yaml")

"$gate_bin" -d -f "$tmp/p.yaml" -l 127.0.0.1:0 --port-file "$tmp/port" \
    >/dev/null 2>"$tmp/err" &
gate_pid=$!
pids+=($gate_pid)
wait_file "$tmp/port"
gate_port=$(cat "$tmp/port")
# the line is written before the port file
check "up: one line" "$(wc -l <"$tmp/err")" 1
check "up: the line" "$(cat "$tmp/err")" \
    "aisb-gate: up: listening on 127.0.0.1:$gate_port, policy $tmp/p.yaml sha256:$id1 (1 rule)"

# wait_lines N: until stderr has N lines (5 s at most)
wait_lines() {
	local i
	for i in $(seq 50); do
		[ "$(wc -l <"$tmp/err")" -ge "$1" ] && return 0
		sleep 0.1
	done
}

# a valid policy: applied, with its identity, and it decides from now on
write_policy "$tmp/p.yaml" ok.test new.test
id2=$(ident "$tmp/p.yaml")
kill -HUP "$gate_pid"
wait_lines 2
check "applied: one line" "$(wc -l <"$tmp/err")" 2
check "applied: the line" "$(sed -n 2p "$tmp/err")" \
    "aisb-gate: reload: policy $tmp/p.yaml sha256:$id2 (2 rules) applied"
check "applied: new.test allowed" "$(proxy_get "http://new.test:$up/")" "000 200"

# an invalid one (two errors): refused in one line that says why, and the
# policy in force still decides
printf 'version: 1\nallow:\n  - host: "*.*bad"\n    ports: [80]\n  - host: "x..y"\n    ports: [80]\n' \
    >"$tmp/p.yaml.tmp"
mv "$tmp/p.yaml.tmp" "$tmp/p.yaml"
kill -HUP "$gate_pid"
wait_lines 3
check "refused: one line" "$(wc -l <"$tmp/err")" 3
check "refused: the line" "$(sed -n 3p "$tmp/err")" \
    "aisb-gate: reload: refused: $tmp/p.yaml is invalid, keeping policy sha256:$id2 (2 rules): $tmp/p.yaml:3:11: error: invalid wildcard '*.*bad' (and 1 more; aisb policy check $tmp/p.yaml lists them)"
check "refused: new.test still allowed" "$(proxy_get "http://new.test:$up/")" "000 200"

# a policy file gone: refused too, one line
rm "$tmp/p.yaml"
kill -HUP "$gate_pid"
wait_lines 4
check "missing: one line" "$(wc -l <"$tmp/err")" 4
case $(sed -n 4p "$tmp/err") in
"aisb-gate: reload: refused: $tmp/p.yaml is invalid, keeping policy sha256:$id2 (2 rules): "*) ok ;;
*) bad "missing: $(sed -n 4p "$tmp/err")" ;;
esac
finish
