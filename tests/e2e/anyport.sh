#!/bin/bash
# End to end (issue 31): any TCP port by name in gate mode.  ssh and git
# over ssh from a real session to an sshd the test starts on the host's
# loopback (127.0.0.78:22), reached by a name the test's DNS server serves
# (git.test, the gate's only resolver; allow_ranges for the address), with
# no ssh configuration for a proxy and no --net direct: the tool resolves
# the name (the gate answers a synthetic address), dials port 22 of it, and
# the gate decides git.test:22 by the policy's rule.  Checked: the command
# ran over ssh, a git clone over ssh, a port not on the rule refused, an
# address the gate never handed out refused, the audit's lines (transparent,
# named_by address, the port, bytes both ways) and --record's capture (the
# server's banner, the stream's comment naming git.test:22); then the same
# as a rootless user.
#
# Needs root, podman, mmdebstrap, sshd (openssh-server), ssh-keygen, git,
# and 127.0.0.78 port 22 free; builds its images offline in a podman store
# of its own, which the EXIT trap removes, failure or not.  Runs only with
# AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start anyport mmdebstrap ssh-keygen git "$PY"
SRV=127.0.0.78

[ -x /usr/sbin/sshd ] || { echo "SKIP: no sshd (openssh-server)"; exit 77; }

# shellcheck source=tests/integration/ssh_fixture.sh
. "$here/ssh_fixture.sh"
e2e_seed_base
e2e_cleanup_more() {
	e2e_user_remove
	[ -z "$ssh_made_run_sshd" ] || rmdir /run/sshd 2>/dev/null || true
}
chmod 0755 "$tmp"
vol=aisb-e2e-anyport-$$

# --- sshd on the host's loopback, a repository (ssh_fixture.sh), DNS -----------
ssh_fixture "$tmp" "$SRV"
/usr/sbin/sshd -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.err" &
pids+=($!)
# this sshd's own word that it listens: another one there (a second run
# of this test) would answer ssh_listening too, and vanish with its run
for i in $(seq 50); do
	grep -q "^Server listening on $SRV port 22" "$tmp/sshd.err" &&
	    ssh_listening "$SRV" && break
	kill -0 "${pids[0]}" 2>/dev/null || { echo "SKIP: $SRV:22 taken"; exit 77; }
	sleep 0.1
done
cat >"$tmp/zone.json" <<EOF
{"git.test": {"A": ["$SRV"], "ttl": 5}}
EOF
e2e_servers dns
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: git.test
    ports: [22]
allow_ranges: [$SRV/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF

# --- what runs inside: no ProxyCommand, no proxy variable ssh would read -------
cp "$tmp/userkey" "$tmp/ws/key"
chmod 0600 "$tmp/ws/key"
cat >"$tmp/ws/probe.sh" <<EOF
#!/bin/sh
# one line per attempt: NAME RESULT
S="ssh -F /dev/null -i ./key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
echo "ssh \$(\$S root@git.test echo via-ssh 2>/dev/null)"
GIT_SSH_COMMAND="\$S" git clone -q root@git.test:$tmp/repo.git clone 2>/dev/null
echo "clone \$(cat clone/README 2>/dev/null | tr ' ' _)"
\$S -p 2222 root@git.test true 2>/dev/null
echo "port2222 \$?"
\$S root@198.19.250.250 true 2>/dev/null
echo "unknown \$?"
EOF
chmod 0755 "$tmp/ws/probe.sh"

sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package openssh-client --package git "$@") >"$tmp/out" \
	    2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}
val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/out"; }
# check_run WHO: the probe's lines and the session's audit and capture
check_run() {
	local who=$1 sd=$2 lines
	check "$who: ssh by name, no proxy configuration" "$(val ssh)" via-ssh
	check "$who: git clone over ssh" "$(val clone)" over_ssh
	v=$(val port2222)
	if [ -n "$v" ] && [ "$v" != 0 ]; then ok "$who: a port not on the rule refused ($v)"
	else bad "$who: port 2222: '$v'"; fi
	v=$(val unknown)
	if [ -n "$v" ] && [ "$v" != 0 ]; then ok "$who: an address never handed out refused ($v)"
	else bad "$who: 198.19.250.250: '$v'"; fi
	lines=$(grep '"named_by":"address"' "$sd/audit.jsonl" || true)
	n=$(grep '"event":"decision"' <<<"$lines" | grep '"decision":"allow"' |
	    grep -c '"host":"git.test","port":22,' || true)
	[ "$n" -ge 2 ] && ok "$who: audit: ssh and git allowed by name ($n)" ||
		bad "$who: audit: $n allowed decisions for git.test:22"
	n=$(grep '"event":"close"' <<<"$lines" | grep '"host":"git.test"' |
	    grep -c '"bytes_up":[1-9][0-9]*,"bytes_down":[1-9]' || true)
	[ "$n" -ge 1 ] &&
		ok "$who: audit: a close line with bytes both ways" ||
		bad "$who: audit: no close line with bytes"
	grep -q '"port":2222,.*"reason":"port_not_allowed"' <<<"$lines" &&
		ok "$who: audit: port 2222 port_not_allowed" ||
		bad "$who: audit: no port_not_allowed for 2222"
	grep -q '"host":"198.19.250.250","port":22,.*"reason":"unknown_address"' \
	    "$sd/audit.jsonl" && ok "$who: audit: unknown_address" ||
		bad "$who: audit: no unknown_address"
	grep -q '^aisb: denied 198.19.250.250:22, 1 time: .*unknown_address' \
	    "$tmp/err" && ok "$who: the summary names the address dialled" ||
		bad "$who: summary: $(grep 198.19.250 "$tmp/err" || echo none)"
	if command -v tshark >/dev/null; then
		n=$(tshark -n -r "$sd/recording/capture.pcapng" -Y \
		    "ip.src == $SRV && tcp.srcport == 22 && tcp.payload contains \"SSH-2.0-OpenSSH\"" \
		    2>/dev/null | wc -l)
		[ "$n" -ge 2 ] && ok "$who: the capture: the server's banners ($n)" ||
			bad "$who: the capture: $n banners of the server's"
		n=$(tshark -n -r "$sd/recording/capture.pcapng" -Y \
		    frame.comment -T fields -e frame.comment 2>/dev/null |
		    grep -c "decision=allow reason=allowed host=git.test:22" ||
		    true)
		[ "$n" -ge 1 ] &&
			ok "$who: the capture: the stream's comment names git.test:22" ||
			bad "$who: the capture has no comment for git.test:22"
	fi
}

echo "# building the image (the offline base, then openssh-client and git)"
t0=$SECONDS
rc=0; sess --record -- ./probe.sh || rc=$?
echo "# first session, image build included: $((SECONDS - t0))s"
check "root: session exit" "$rc" 0
check_run root "$(e2e_session)"
check "the DNS server was asked for no synthetic address" \
    "$(grep -c '^198\.1[89]' "$tmp/dns.log" || true)" 0

# --- the same as a rootless user -------------------------------------------------
e2e_user anyport
uws=$e2e_home/proj
install -d -m 0700 -o "$e2e_user_name" -g "$e2e_user_name" "$uws"
install -m 0600 -o "$e2e_user_name" "$tmp/userkey" "$uws/key"
install -m 0755 -o "$e2e_user_name" "$tmp/ws/probe.sh" "$uws/probe.sh"
install -m 0644 -o "$e2e_user_name" "$tmp/policy.yaml" "$e2e_home/policy.yaml"
rc=0; (cd "$uws" && as_user aisb --record --policy "$e2e_home/policy.yaml" \
    --package openssh-client --package git -- ./probe.sh) >"$tmp/out" \
    2>"$tmp/err" </dev/null || rc=$?
check "user: session exit" "$rc" 0
check_run user "$(e2e_session "$e2e_home/.local/state")"

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
