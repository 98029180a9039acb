#!/bin/bash
# aisb-gate --user: started as root, it binds, then runs as an
# unprivileged user for good (no way back to root, no_new_privs, not
# dumpable, no core files), and still does what a named gate needs after
# the drop: re-reads its credentials and its policy on SIGHUP, reopens
# its audit log and answers on its control socket, although the path to
# those files runs through a folder only root may enter (as a root-owned
# ~/.local/state does).  The files sit in a folder the gate's group may
# search, readable by that group only, as aisb lays out a named gate.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

[ "$(id -u)" = 0 ] && [ -z "${AISB_GATE_USERNS:-}" ] ||
    { echo "SKIP: needs real root"; exit 77; }
user=nobody
uid=$(id -u "$user" 2>/dev/null) || { echo "SKIP: no user $user"; exit 77; }
gid=$(id -g "$user")

start_upstream http 192.0.2.10
up=$up_port
echo_port=$up
start_dns '{"ok.test": {"A": ["192.0.2.10"]}, "new.test": {"A": ["192.0.2.10"]}}'

# $tmp is mode 0700 root: the gate's user cannot walk the path, only
# search $g itself (group x), as with a named gate under /root.
chmod 0700 "$tmp"
g=$tmp/gate
mkdir -m 0710 "$g"
chgrp "$gid" "$g"
give() {	# the group of the gate may read it, nobody else
	chgrp "$gid" "$1" && chmod 0640 "$1"
}
write_policy "$g/policy.yaml" ok.test
give "$g/policy.yaml"
printf 'sess-1:first-secret\n' >"$g/tokens.tmp"
give "$g/tokens.tmp"
mv "$g/tokens.tmp" "$g/tokens"

A=$g/audit.log
start_gate priv "$g/policy.yaml" --user "$user" --token-file "$g/tokens" \
    --control "$g/control" --audit "$A"

# who it runs as, for good
check "uid" "$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' /proc/$gate_pid/status)" \
    "$uid$uid$uid$uid"
check "gid" "$(awk '$1 == "Gid:" { print $2 $3 $4 $5 }' /proc/$gate_pid/status)" \
    "$gid$gid$gid$gid"
check "groups" "$(awk '$1 == "Groups:" { print $2 }' /proc/$gate_pid/status)" "$gid"
check "no_new_privs" "$(awk '$1 == "NoNewPrivs:" { print $2 }' /proc/$gate_pid/status)" 1
check "capabilities" "$(awk '$1 == "CapEff:" { print $2 }' /proc/$gate_pid/status)" \
    0000000000000000
# a process that is not dumpable has its /proc files owned by root
check "not dumpable" "$(stat -c %u /proc/$gate_pid/environ)" 0
check "no core files" "$(awk '/^Max core file size/ { print $5, $6 }' /proc/$gate_pid/limits)" "0 0"
grep -q "running as $user" "$tmp/gate.priv.err" && ok || bad "no 'running as' line"

check "allowed, first credential" \
    "$(proxy_get -p --proxy-user sess-1:first-secret "http://ok.test:$up/a")" "200 200"
check "not yet allowed" \
    "$(proxy_get -p --proxy-user sess-1:first-secret "http://new.test:$up/a")" "403 000"

# a session comes and goes: new credentials, a changed policy, SIGHUP
printf 'sess-2:second-secret\n' >"$g/tokens.tmp"
give "$g/tokens.tmp"
mv "$g/tokens.tmp" "$g/tokens"
write_policy "$g/policy.yaml" ok.test new.test
give "$g/policy.yaml"
kill -HUP "$gate_pid"
for i in $(seq 50); do
	grep -q 'reload: policy' "$tmp/gate.priv.err" && break
	sleep 0.1
done
if grep -q 'reload: policy' "$tmp/gate.priv.err"; then ok; else
	bad "the policy was not reloaded: $(grep reload "$tmp/gate.priv.err")"; fi
if grep -qE 'reload: .*(keeping|denied)' "$tmp/gate.priv.err"; then
	bad "a reload step failed: $(grep reload "$tmp/gate.priv.err")"; else ok; fi
check "new credential" \
    "$(proxy_get -p --proxy-user sess-2:second-secret "http://new.test:$up/b")" "200 200"
check "withdrawn credential" \
    "$(proxy_get -p --proxy-user sess-1:first-secret "http://ok.test:$up/b")" "407 000"

# the audit log: the gate's own, still written after the reopen
check "audit log owner" "$(stat -c %u "$A")" "$uid"
expect_audit "$A" host=new.test decision=allow
# the control socket answers the launcher (root)
check "control: reload" "$(control "$g/control" reload reload)" ok

kill -TERM "$gate_pid"
wait "$gate_pid" 2>/dev/null || true

# The parent-death signal the launcher gives its gate survives the drop
# (a change of uid clears it): the gate of a SIGKILLed launcher stops.
bash -c '"$@" & echo $! >"'"$tmp"'/orphan.pid"; wait' holder \
    setpriv --pdeathsig TERM "$gate_bin" -d -f "$g/policy.yaml" -l 127.0.0.1:0 \
    --user "$user" --port-file "$tmp/orphan.port" 2>"$tmp/gate.orphan.err" &
holder=$!
pids+=($holder)
wait_file "$tmp/orphan.port"
opid=$(cat "$tmp/orphan.pid")
pids+=($opid)
check "orphan: dropped" "$(awk '$1 == "Uid:" { print $2 }' /proc/$opid/status)" "$uid"
kill -KILL "$holder"
for i in $(seq 50); do kill -0 "$opid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$opid" 2>/dev/null; then bad "the gate outlived its parent"; else ok; fi
finish
