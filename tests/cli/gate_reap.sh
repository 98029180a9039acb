#!/bin/bash
# A named gate takes back the credential of a session whose launcher is
# gone only once the gate has reread its token file without it
# (launcher/session/gates.c, gates_reap): a gate that kept its old
# credentials (the file could not be read) still lets the session's
# container on, so the supervisor keeps the session and tries again
# every second, and says so; the control socket's reload answer says
# which credentials the gate holds.  A real gate on 127.0.0.1, real
# curl through it: a credential the gate holds gets 403 for a host the
# policy denies, one it does not hold 407.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_builddir=${top_builddir:-.}
aisb=$(cd "$top_builddir" && pwd)/aisb
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }
command -v flock >/dev/null || { echo "SKIP: no flock"; exit 77; }
tmp=$(mktemp -d)
name=gr$$
up=
cleanup() {
	[ -z "$up" ] || "$aisb" gate down "$name" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/home"
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/state
printf 'version: 1\nallow:\n  - host: a.example\n    ports: [443]\n' >"$tmp/policy.yaml"
dir=$XDG_STATE_HOME/aisb/gates/$name

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
control() {	# control CMD: the gate's first answer line
	python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.recv(200).decode().strip())' \
	    "$dir/control" "$1"
}
tokens() {	# tokens FILTER-CMD...: the token file through a filter, under the lock
	flock "$dir/lock" sh -c '"$@" <"$0/tokens" >"$0/tokens.t" &&
	    chmod 0640 "$0/tokens.t" && chgrp --reference="$0/tokens" "$0/tokens.t" &&
	    mv "$0/tokens.t" "$0/tokens"' "$dir" "$@"
}
status() {	# the proxy's answer to the session's credential
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
	    -x "http://session-$id:$secret@127.0.0.1:$port" http://b.example/ || true
}
wait_for() {	# wait_for TENTHS CMD...: until CMD succeeds
	local n=$1; shift
	while ! "$@" && [ "$n" -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	"$@"
}

"$aisb" gate up "$name" --policy "$tmp/policy.yaml" >"$tmp/out" 2>"$tmp/err" </dev/null
up=1
port=$(sed -n 's/^port //p' "$dir/state")
id=$(printf '%024x' $$)
secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

# a session the gate holds, whose launcher is not reaped (no sessions/ file yet)
tokens sed -e '$a\' -e "session-$id:$secret"
check "reload: credentials read" "$(control reload)" '{"reload":"ok","credentials":"applied"}'
check "held: the policy answers" "$(status)" 403

# the token file now unreadable for the gate (a line over its bound),
# and the session's launcher gone
junk=$(head -c 600 /dev/zero | tr '\0' x)
tokens sed -e '$a\' -e "$junk"
mkdir -p "$dir/sessions"
printf '4194303 1\n' >"$dir/sessions/$id"
said() { grep -q 'may still use their credential' "$dir/gate.log"; }
wait_for 50 said || bad "the supervisor did not say the withdrawal failed"
check "kept: the session stays to retry" "$([ -e "$dir/sessions/$id" ] && echo kept)" kept
check "kept: the credential still works, as said" "$(status)" 403
check "kept: the control says so" "$(control reload)" '{"reload":"ok","credentials":"kept"}'
check "kept: told once, not every second" "$(grep -c 'may still use' "$dir/gate.log")" 1

# the file readable again: the next try withdraws it
tokens grep -v "^$junk\$"
gone() { [ ! -e "$dir/sessions/$id" ]; }
wait_for 50 gone || bad "the session was not reaped once the gate could read the file"
check "withdrawn: said" "$(grep -c "session $id is gone; its credential is withdrawn" "$dir/gate.log")" 1
check "withdrawn: the credential is refused" "$(status)" 407
check "withdrawn: not in the file" "$(grep -c "^session-$id:" "$dir/tokens" || true)" 0

rc=0; "$aisb" gate down "$name" >/dev/null 2>&1 || rc=$?
check "down" "$rc" 0
up=

echo "gate_reap: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
