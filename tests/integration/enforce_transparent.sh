#!/bin/bash
# Transparent capture (issue 16): the real aisb-enforce with a plan that has
# "transparent 80,443", "transparent-range 198.18.0.0/15" and "dns-gate",
# against the real aisb-gate, in network namespaces made here.  Issue 31:
# ssh and git over ssh to an sshd made here, by the name the gate's DNS
# answered, with no ssh configuration for a proxy (when sshd is installed).
#
#   host ns (aisb-th-PID)                         sandbox ns (aisb-ts-PID)
#   10.199.1.1: aisb-gate (token, audit)  <-veth->  10.199.1.10
#   10.199.1.2: TLS 443 + HTTP 80 servers,          aisb-enforce, relay,
#               sshd on 22 (a key made here)
#   127.0.0.1:  DNS server (gate_dns.py), the        curl --noproxy '*',
#               gate's only resolver                 python3 resolving itself
#
# Inside, resolv.conf names 127.0.0.1 (a mount namespace of the run's own)
# and nothing in the sandbox knows the gate but the proxy variables.  The
# addresses exist only inside these namespaces.  Needs root; skips (77)
# otherwise.  Everything made here is removed on exit, also on failure.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=$(pwd)
ENFORCE=$builddir/aisb-enforce
GATE=$builddir/aisb-gate
here=$srcdir/tests/integration
PY=/usr/bin/python3

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
for t in ip curl openssl unshare "$PY"; do
	command -v "$t" >/dev/null || skip "needs $t"
done
[ -x "$ENFORCE" ] && [ -x "$GATE" ] || skip "build aisb-enforce and aisb-gate first"

HOST=aisb-th-$$
SBX=aisb-ts-$$
VH=ath$$
VS=ats$$
work=$(mktemp -d /tmp/aisb-transparent-test.XXXXXX)
pids=()
pass=0
fail=0

cleanup() {
	local rc=$? p
	set +e
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for ns in "$HOST" "$SBX"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	# a sanitizer build reports into stderr: the relay's is the enforcer's
	if grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
	    "$work"/*.err >/dev/null 2>&1; then
		echo "FAIL: sanitizer report" >&2
		grep -hE -A5 'Sanitizer|runtime error:' "$work"/*.err >&2
		rc=1
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "--- gate" >&2; cat "$work/gate.err" >&2 2>/dev/null
		echo "--- audit" >&2; cat "$work/audit.log" >&2 2>/dev/null
	fi
	[ -z "${ssh_made_run_sshd:-}" ] || rmdir /run/sshd 2>/dev/null || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT

ok()  { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() {	# check WHAT GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}
wait_file() {
	local i
	for i in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $1" >&2
	return 1
}
# audit_count KEY=VALUE...: lines of the gate's audit with all these fields
audit_count() {
	"$PY" - "$work/audit.log" "$@" <<'PY'
import fnmatch, json, sys
want = dict(a.split("=", 1) for a in sys.argv[2:])
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if all(fnmatch.fnmatchcase(str(o.get(k)), v) for k, v in want.items()):
        n += 1
print(n)
PY
}
expect_audit() {	# expect_audit WHAT KEY=VALUE...: at least one line
	local n
	n=$(audit_count "${@:2}")
	if [ "$n" -ge 1 ]; then ok "$1"; else bad "$1: no audit line with ${*:2}"; fi
}

# --- namespaces, servers, the gate ----------------------------------------

ip netns add "$HOST"
ip netns add "$SBX"
ip link add "$VH" netns "$HOST" type veth peer name "$VS" netns "$SBX"
ip -n "$HOST" addr add 10.199.1.1/24 dev "$VH"
ip -n "$HOST" addr add 10.199.1.2/24 dev "$VH"
ip -n "$SBX" addr add 10.199.1.10/24 dev "$VS"
for ns in "$HOST" "$SBX"; do ip -n "$ns" link set lo up; done
ip -n "$HOST" link set "$VH" up
ip -n "$SBX" link set "$VS" up
# a route for any address the command may dial: the nat chain must see it
ip -n "$SBX" route add default via 10.199.1.1

chmod 755 "$work"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=aisb test CA $$" \
    -addext basicConstraints=critical,CA:TRUE -keyout "$work/ca.key" \
    -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=www.allowed.test \
    -keyout "$work/srv.key" -out "$work/srv.csr" 2>/dev/null
printf 'subjectAltName=DNS:www.allowed.test,DNS:unlisted.test\n' >"$work/ext"
openssl x509 -req -in "$work/srv.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
    -CAcreateserial -days 2 -extfile "$work/ext" -out "$work/srv.pem" 2>/dev/null
chmod 644 "$work/ca.pem"

# TLS on 10.199.1.2:443 and HTTP on :80: both answer "hello PROTO HOST"
cat >"$work/servers.py" <<'PY'
import socket, ssl, sys, threading
work = sys.argv[1]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(work + "/srv.pem", work + "/srv.key")
def serve(conn, proto):
    try:
        conn.settimeout(10)
        if proto == "tls":
            conn = ctx.wrap_socket(conn, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            d = conn.recv(4096)
            if not d:
                return
            data += d
        host = b"?"
        for line in data.split(b"\r\n")[1:]:
            if line.lower().startswith(b"host:"):
                host = line[5:].strip()
        body = b"hello " + proto.encode() + b" " + host + b"\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % len(body) + body)
    except (OSError, ssl.SSLError):
        pass
    finally:
        conn.close()
def listen(port, proto):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.199.1.2", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, proto), daemon=True).start()
threading.Thread(target=listen, args=(443, "tls"), daemon=True).start()
threading.Thread(target=listen, args=(80, "http"), daemon=True).start()
open(work + "/servers.ready", "w").write("1")
threading.Event().wait()
PY
ip netns exec "$HOST" "$PY" "$work/servers.py" "$work" 2>"$work/servers.err" &
pids+=($!)
printf '{"www.allowed.test": {"A": ["10.199.1.2"]}, "unlisted.test": {"A": ["10.199.1.2"]}, "git.test": {"A": ["10.199.1.2"]}}\n' \
    >"$work/zone.json"
: >"$work/dns.log"
ip netns exec "$HOST" "$PY" "$here/gate_dns.py" --zone "$work/zone.json" \
    --port-file "$work/dns.port" --log "$work/dns.log" 2>"$work/dns.err" &
pids+=($!)
wait_file "$work/servers.ready"
wait_file "$work/dns.port"

cat >"$work/policy.yaml" <<EOF
version: 1
allow:
  - host: www.allowed.test
    ports: [80, 443]
  - host: git.test
    ports: [22]
allow_ranges: [10.199.1.2/32]
dns:
  servers: ["127.0.0.1:$(cat "$work/dns.port")"]
EOF
printf 'sess-t:s3cret-token\n' >"$work/token"
chmod 600 "$work/token"
ip netns exec "$HOST" "$GATE" -d -f "$work/policy.yaml" -l 10.199.1.1:0 \
    --port-file "$work/gate.port" --token-file "$work/token" \
    --audit "$work/audit.log" >/dev/null 2>"$work/gate.err" &
pids+=($!)
wait_file "$work/gate.port"
gport=$(cat "$work/gate.port")

printf 'aisb-plan 1\nmode gate\ngate 10.199.1.1 %s\ntransparent 80,443\ntransparent-range 198.18.0.0/15\ndns-gate\n' \
    "$gport" >"$work/plan"
printf 'aisb-plan 1\nmode gate\ngate 10.199.1.1 %s\n' "$gport" >"$work/plain.plan"
printf 'HTTPS_PROXY=http://sess-t:s3cret-token@10.199.1.1:%s\nPATH=/usr/bin:/bin\n' \
    "$gport" >"$work/env"
chmod 600 "$work/env"
printf 'nameserver 127.0.0.1\n' >"$work/resolv.conf"
chmod 644 "$work/plan" "$work/plain.plan" "$work/resolv.conf"

# sandbox PLAN NAME CMD...: the command under aisb-enforce with resolv.conf
# naming 127.0.0.1; its stdout in $work/NAME.out, exit code printed
sandbox() {
	local plan=$1 name=$2 rc=0
	shift 2
	ip netns exec "$SBX" unshare -m /bin/sh -c \
	    'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh \
	    "$work/resolv.conf" "$ENFORCE" --plan "$plan" --env-file "$work/env" \
	    -- "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	# the enforcer's own failures: its words in the log, for a rare one
	case $rc in 77|78) sed "s/^/# $name: /" "$work/$name.err" >&2 ;; esac
	echo "$rc"
}

# --- a tool that ignores the proxy reaches the allowed name ---------------

CURL=(curl -sS -m 20 --noproxy '*' --cacert "$work/ca.pem")
check "https by name, no proxy" "$(sandbox "$work/plan" tls "${CURL[@]}" \
    https://www.allowed.test/)" 0
check "the TLS server answered" "$(cat "$work/tls.out")" \
    "hello tls www.allowed.test"
check "http on 80, no proxy" "$(sandbox "$work/plan" http "${CURL[@]}" \
    http://www.allowed.test/)" 0
check "the HTTP server answered" "$(cat "$work/http.out")" \
    "hello http www.allowed.test"
expect_audit "audit: transparent, from curl, port 443" event=decision \
    host=www.allowed.test port=443 decision=allow transparent=True tool=curl
expect_audit "audit: transparent, port 80" event=decision \
    host=www.allowed.test port=80 decision=allow transparent=True

# a program that resolves and connects itself (no proxy code at all)
cat >"$work/self.py" <<'PY'
import socket, ssl, sys
ai = socket.getaddrinfo("www.allowed.test", 443, socket.AF_INET,
                        socket.SOCK_STREAM)
ctx = ssl.create_default_context(cafile=sys.argv[1])
with socket.create_connection(ai[0][4][:2], timeout=20) as s:
    with ctx.wrap_socket(s, server_hostname="www.allowed.test") as t:
        t.sendall(b"GET / HTTP/1.1\r\nHost: www.allowed.test\r\n\r\n")
        data = b""
        while True:
            d = t.recv(4096)
            if not d:
                break
            data += d
print(data.split(b"\r\n\r\n", 1)[1].decode().strip())
PY
chmod 644 "$work/self.py"
check "python resolving and connecting itself" "$(sandbox "$work/plan" self \
    "$PY" "$work/self.py" "$work/ca.pem")" 0
check "python got the page" "$(cat "$work/self.out")" \
    "hello tls www.allowed.test"
expect_audit "audit: python named" event=decision host=www.allowed.test \
    transparent=True 'tool=python3*'

# --- what it may not reach -------------------------------------------------

: >"$work/dns.log"
rc=$(sandbox "$work/plan" nx "${CURL[@]}" https://unlisted.test/)
check "unlisted name: curl cannot resolve it (6)" "$rc" 6
check "unlisted name never reached the DNS server" \
    "$(grep -c unlisted "$work/dns.log" || true)" 0
cat >"$work/resolve.py" <<'PY'
import socket, sys
try:
    print(socket.getaddrinfo(sys.argv[1], 443, socket.AF_INET)[0][4][0])
except socket.gaierror as e:
    print("gaierror", e.errno == socket.EAI_NONAME)
PY
chmod 644 "$work/resolve.py"
sandbox "$work/plan" res-nx "$PY" "$work/resolve.py" unlisted.test >/dev/null
check "unlisted name: NXDOMAIN" "$(cat "$work/res-nx.out")" "gaierror True"
sandbox "$work/plan" res-ok "$PY" "$work/resolve.py" www.allowed.test >/dev/null
synth=$(cat "$work/res-ok.out")
case $synth in
198.18.*|198.19.*) ok "allowed name: a synthetic address ($synth)" ;;
*) bad "allowed name: $synth is not in 198.18.0.0/15" ;;
esac

# SNI of an unlisted name at the allowed name's address: refused by name
rc=$(sandbox "$work/plan" sni "${CURL[@]}" --resolve "unlisted.test:443:$synth" \
    https://unlisted.test/)
[ "$rc" != 0 ] && ok "SNI of an unlisted name refused (curl $rc)" ||
	bad "SNI of an unlisted name reached: $(cat "$work/sni.out")"
expect_audit "audit: unlisted SNI denied, transparent" event=decision \
    host=unlisted.test decision=deny transparent=True
check "unlisted SNI never looked up" "$(grep -c unlisted "$work/dns.log" || true)" 0
# TLS without SNI (an address, no server_hostname): refused
cat >"$work/nosni.py" <<'PY'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
ctx.check_hostname = False
try:
    with socket.create_connection((sys.argv[1], 443), timeout=20) as s:
        with ctx.wrap_socket(s) as t:
            t.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            print("reached", t.recv(100))
except (OSError, ssl.SSLError) as e:
    print("refused")
PY
chmod 644 "$work/nosni.py"
sandbox "$work/plan" nosni "$PY" "$work/nosni.py" "$synth" "$work/ca.pem" >/dev/null
check "TLS without SNI refused" "$(cat "$work/nosni.out")" refused
expect_audit "audit: no_sni" event=decision reason=no_sni transparent=True
# other ports and the gate's own address on 443 still drop
rc=$(sandbox "$work/plan" port "${CURL[@]}" -m 3 http://10.199.1.2:8080/)
[ "$rc" != 0 ] && ok "other ports still drop (curl $rc)" || bad "port 8080 reached"
rc=$(sandbox "$work/plan" gate443 "${CURL[@]}" -m 3 https://10.199.1.1:443/)
[ "$rc" != 0 ] && ok "the gate's address is not redirected (curl $rc)" ||
	bad "10.199.1.1:443 reached"
# DNS asked of another server: caught all the same
cat >"$work/rawdns.py" <<'PY'
import socket, struct, sys
q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + \
    b"\x03www\x07allowed\x04test\x00" + struct.pack("!HH", 1, 1)
if sys.argv[2] == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.sendto(q, (sys.argv[1], 53))
    a = s.recv(4096)
else:
    s = socket.create_connection((sys.argv[1], 53), timeout=10)
    s.sendall(struct.pack("!H", len(q)) + q)
    n = struct.unpack("!H", s.recv(2))[0]
    a = b""
    while len(a) < n:
        a += s.recv(n - len(a))
print("id=%04x rcode=%d an=%d" % (struct.unpack("!H", a[:2])[0], a[3] & 15,
      struct.unpack("!H", a[6:8])[0]))
PY
chmod 644 "$work/rawdns.py"
: >"$work/dns.log"
sandbox "$work/plan" udp53 "$PY" "$work/rawdns.py" 10.199.1.1 udp >/dev/null
check "UDP DNS to another address: the gate answers" "$(cat "$work/udp53.out")" \
    "id=4242 rcode=0 an=1"
sandbox "$work/plan" tcp53 "$PY" "$work/rawdns.py" 127.0.0.1 tcp >/dev/null
check "DNS over TCP: the gate answers" "$(cat "$work/tcp53.out")" \
    "id=4242 rcode=0 an=1"
check "no query reached the DNS server" "$(wc -l <"$work/dns.log")" 0
# one oversized UDP query (over the 1232 bytes the gate takes in a frame)
# costs only itself: the queries around it on the shared stream are answered
cat >"$work/bigdns.py" <<'PY'
import socket, struct, sys
def q(qid, pad=0):
    m = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 1 if pad else 0, 0) + \
        b"\x03www\x07allowed\x04test\x00" + struct.pack("!HH", 1, 1)
    if pad:	# OPT with a padding option of pad bytes
        m += b"\x00" + struct.pack("!HHIH", 41, 4096, 0, pad + 4) + \
            struct.pack("!HH", 12, pad) + b"\x00" * pad
    return m
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
for m in (q(2), q(3, 1500), q(4)):
    s.sendto(m, (sys.argv[1], 53))
got = []
try:
    while True:
        got.append(struct.unpack("!H", s.recv(4096)[:2])[0])
except OSError:
    pass
print(" ".join(str(i) for i in sorted(got)))
PY
chmod 644 "$work/bigdns.py"
sandbox "$work/plan" bigdns "$PY" "$work/bigdns.py" 127.0.0.1 >/dev/null
check "an oversized UDP query costs only itself" "$(cat "$work/bigdns.out")" "2 4"
# the relay dialled directly (its port read from /proc/net/tcp), not
# redirected: closed, never carried to the gate as a transparent connection
cat >"$work/direct.py" <<'PY'
import socket, ssl, sys
ports = set()
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    f = line.split()
    if f[3] == "0A":	# LISTEN
        ports.add(int(f[1].split(":")[1], 16))
out = []
for port in sorted(ports):
    ctx = ssl.create_default_context(cafile=sys.argv[1])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            with ctx.wrap_socket(s, server_hostname="www.allowed.test") as t:
                out.append("reached")
    except (OSError, ssl.SSLError):
        out.append("refused")
print(len(ports), " ".join(sorted(set(out))))
print(" ".join(str(p) for p in sorted(ports)))
PY
chmod 644 "$work/direct.py"
sandbox "$work/plan" direct "$PY" "$work/direct.py" "$work/ca.pem" >/dev/null
case $(head -n 1 "$work/direct.out") in
[1-9]*" refused") ok "the relay dialled directly: closed ($(head -n 1 "$work/direct.out"))" ;;
*) bad "the relay dialled directly: $(cat "$work/direct.out")" ;;
esac
for p in $(sed -n 2p "$work/direct.out"); do
	n=$(audit_count event=decision transparent=True port="$p")
	check "no transparent decision for the relay's own port $p" "$n" 0
done

# --- any TCP port by name: ssh to the name the gate's DNS answered --------

if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null && command -v git >/dev/null; then
	. "$here/ssh_fixture.sh"
	ssh_fixture "$work" 10.199.1.2
	chmod 644 "$work/userkey"	# read by the sandbox's uid; root owns it
	ip netns exec "$HOST" /usr/sbin/sshd -D -e -f "$work/sshd_config" \
	    2>"$work/sshd.err" &
	pids+=($!)
	for i in $(seq 50); do
		ssh_listening 10.199.1.2 ip netns exec "$HOST" && break
		sleep 0.1
	done
	mkdir -m 777 "$work/clone"
	SSH=(ssh -F /dev/null -i "$work/userkey" -o BatchMode=yes
	    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null)
	check "ssh by name, no proxy configuration" "$(sandbox "$work/plan" ssh \
	    "${SSH[@]}" root@git.test echo via-ssh)" 0
	check "the command ran over ssh" "$(cat "$work/ssh.out")" via-ssh
	expect_audit "audit: ssh transparent, by the address's name, from ssh" \
	    event=decision host=git.test port=22 decision=allow \
	    transparent=True named_by=address tool=ssh 'dialled=198.1[89].*'
	expect_audit "audit: its close line with bytes both ways" event=close \
	    host=git.test port=22 transparent=True 'bytes_up=[1-9]*' \
	    'bytes_down=[1-9]*'
	check "git clone over ssh" "$(sandbox "$work/plan" clone env \
	    "GIT_SSH_COMMAND=${SSH[*]}" git clone -q \
	    "root@git.test:$work/repo.git" "$work/clone/repo")" 0
	check "the clone has the file" "$(cat "$work/clone/repo/README" 2>&1)" \
	    "over ssh"
	rc=$(sandbox "$work/plan" ssh2222 "${SSH[@]}" -p 2222 root@git.test true)
	[ "$rc" != 0 ] && ok "a port not on the rule: refused (ssh $rc)" ||
		bad "git.test:2222 reached"
	expect_audit "audit: port 2222 denied by the name's rule" event=decision \
	    host=git.test port=2222 decision=deny reason=port_not_allowed \
	    named_by=address
	rc=$(sandbox "$work/plan" ssh-unknown "${SSH[@]}" root@198.19.250.250 true)
	[ "$rc" != 0 ] && ok "an address the gate did not hand out: refused" ||
		bad "198.19.250.250 reached"
	expect_audit "audit: unknown_address" event=decision \
	    reason=unknown_address dialled=198.19.250.250 port=22
	rc=$(sandbox "$work/plan" ssh-direct "${SSH[@]}" -o ConnectTimeout=3 \
	    root@10.199.1.2 true)
	[ "$rc" != 0 ] && ok "the real address on 22 still drops (ssh $rc)" ||
		bad "10.199.1.2:22 reached without the gate"
else
	echo "# skipped the ssh part: no sshd, ssh or git here (openssh-server)"
fi

# --- without the plan lines: today's behaviour ----------------------------

rc=$(sandbox "$work/plain.plan" plain "${CURL[@]}" -m 5 https://www.allowed.test/)
check "no transparent lines: curl cannot resolve (6)" "$rc" 6
rc=$(sandbox "$work/plain.plan" plainproxy curl -sS -m 20 --cacert \
    "$work/ca.pem" https://www.allowed.test/)
check "no transparent lines: through the proxy variables" "$rc" 0

# --- the largest plan loads and verifies ----------------------------------

{
	printf 'aisb-plan 1\nmode gate\ngate 10.199.1.1 %s\n' "$gport"
	for i in 2 3 4 5 6 7 8; do printf 'gate 10.199.1.%d %d\n' "$i" "$gport"; done
	printf 'transparent 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\ndns-gate\n'
} >"$work/big.plan"
chmod 644 "$work/big.plan"
check "16 ports and 8 gates load and verify" \
    "$(sandbox "$work/big.plan" big /bin/true)" 0

# --- fail closed -------------------------------------------------------------

# the relay's listeners cannot be made (one descriptor to spare, taken by
# the first): 77, nothing runs
rc=0
ip netns exec "$SBX" /bin/sh -c 'ulimit -n 4 && exec "$@"' sh "$ENFORCE" \
    --plan "$work/plan" --env-file "$work/env" -- /bin/echo ran \
    >"$work/nolo.out" 2>"$work/nolo.err" || rc=$?
check "no descriptors for the relay: exit 77" "$rc" 77
check "no descriptors for the relay: the command did not run" \
    "$(cat "$work/nolo.out")" ""
grep -q "relay socket" "$work/nolo.err" && ok "... and says it was the relay" ||
	bad "no relay line: $(cat "$work/nolo.err")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
