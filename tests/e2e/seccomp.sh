#!/bin/bash
# End to end: aisb's seccomp profile (docs/seccomp.md) in real sessions.
# Inside a session the calls the profile denies fail, with the errno it
# names, and ordinary agent work (threads, fork, python's subprocess and
# multiprocessing, node, git, make, gcc, a debugger tracing its own child)
# still runs; the enforcer still loads nftables and drops privileges under
# it, in gate and in direct mode (the refresher forks, keeps NET_ADMIN and
# binds port 53).
#
# Needs root, podman and mmdebstrap; builds its image offline from Debian
# packages in a podman store of its own, which the EXIT trap removes,
# failure or not.  Runs only with AISB_E2E=1, like session.sh.  The only
# server it starts is a DNS responder on the host's 127.0.0.1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start seccomp mmdebstrap "$PY"
e2e_seed_base
vol=aisb-e2e-seccomp-$$
chmod 0755 "$tmp" "$tmp/ws"	# the sandbox user reads the checks from here

# A DNS responder for direct mode's refresher, on the host's loopback.
echo '{"direct.test": {"A": ["192.0.2.7"], "ttl": 5}}' >"$tmp/zone.json"
e2e_servers dns
cat >"$tmp/policy.yaml" <<YAML
version: 1
allow:
  - host: direct.test
    ports: [443]
allow_ranges: [192.0.2.0/24]
dns:
  servers: ["127.0.0.1:$dns"]
YAML

# One image for every session: the same package list each time.
sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package keyutils --package python3 --package git --package make \
	    --package gcc --package libc6-dev --package strace --package gdb \
	    --package nodejs "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}

# The checks print "ok NAME" or "FAIL NAME: detail", one line each.
cat >"$tmp/ws/calls.py" <<'PY'
import ctypes, errno, os, platform, struct, subprocess, sys, threading
import multiprocessing

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
    "x86_64": dict(keyctl=250, add_key=248, clone=56, clone3=435,
                   unshare=272, setns=308, io_uring_setup=425, bpf=321,
                   perf_event_open=298, userfaultfd=323),
    "aarch64": dict(keyctl=219, add_key=217, clone=220, clone3=435,
                    unshare=97, setns=268, io_uring_setup=425, bpf=280,
                    perf_event_open=241, userfaultfd=282),
}[platform.machine()]


def say(good, name, detail=""):
    print(("ok %s" % name) if good else ("FAIL %s: %s" % (name, detail)),
          flush=True)


def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[name], *args)
    return r, ctypes.get_errno()


def denied(name, want, *args):
    r, e = call(name, *args)
    if r == 0 and name in ("clone", "clone3"):
        os._exit(0)             # a child, had the call been allowed
    say(r == -1 and e == want, name + " denied",
        "returned %d, %s" % (r, os.strerror(e)))


# keyrings: KEYCTL_GET_KEYRING_ID of the user keyring, add_key to it
denied("keyctl", errno.EPERM, 0, ctypes.c_long(-4), 0)
denied("add_key", errno.EPERM, b"user", b"aisb-e2e", b"x", 1,
       ctypes.c_long(-4))
# namespaces: unshare, setns, clone with CLONE_NEWUSER or CLONE_NEWNET
# (and SIGCHLD, as fork would)
denied("unshare", errno.EPERM, 0x10000000)
denied("setns", errno.EPERM, 0, 0)
denied("clone", errno.EPERM, 0x10000000 | 17, 0, 0, 0, 0)
denied("clone", errno.EPERM, 0x40000000 | 17, 0, 0, 0, 0)
# clone3: ENOSYS, so that libc falls back to clone (struct clone_args
# with exit_signal SIGCHLD, a plain fork had it been allowed)
cargs = ctypes.create_string_buffer(88)
struct.pack_into("QQQQQ", cargs, 0, 0, 0, 0, 0, 17)
denied("clone3", errno.ENOSYS, cargs, 64)
# io_uring; perf events (a software counter of this task, user space
# only: allowed by the kernel at perf_event_paranoid 2); userfaultfd
# (UFFD_USER_MODE_ONLY: allowed by the kernel to everyone); bpf
params = ctypes.create_string_buffer(120)
denied("io_uring_setup", errno.EPERM, 1, params)
attr = ctypes.create_string_buffer(128)
struct.pack_into("IIQ", attr, 0, 1, 128, 0)
struct.pack_into("Q", attr, 40, 0x60)
denied("perf_event_open", errno.EPERM, attr, 0, -1, -1, 0)
denied("userfaultfd", errno.EPERM, 1)
denied("bpf", errno.EPERM, 0, ctypes.create_string_buffer(128), 128)
# x32 system calls on x86_64 (getpid): the process is killed (SIGSYS)
if platform.machine() == "x86_64":
    p = subprocess.run([sys.executable, "-c",
                        "import ctypes; ctypes.CDLL(None).syscall(0x40000027)"])
    say(p.returncode == -31, "x32 killed", "returncode %d" % p.returncode)

# ordinary work
out = []
t = threading.Thread(target=lambda: out.append(threading.get_native_id()))
t.start()
t.join()
say(len(out) == 1 and out[0] != threading.get_native_id(), "thread")
pid = os.fork()
if pid == 0:
    os._exit(7)
say(os.waitpid(pid, 0)[1] >> 8 == 7, "fork")
p = subprocess.run(["sh", "-c", "echo sub"], capture_output=True, text=True)
say(p.stdout == "sub\n", "subprocess", repr(p.stdout))


def square(x):
    return x * x


if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        got = pool.map(square, range(8))
    say(got == [x * x for x in range(8)], "multiprocessing", repr(got))
PY
# The i386 entry (int 0x80) from a 64-bit program is killed by the profile
# (SIGSYS, 159).  A kernel without IA32 emulation has no such entry: the
# instruction faults (SIGSEGV, 139) before any filter sees it, on the host
# as inside, and there is nothing for the profile to stop.
printf 'int main(void) { long r; __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory"); return r > 0 ? 0 : 1; }\n' \
    >"$tmp/i386-host.c"
echo 159 >"$tmp/ws/i386.want"
if [ "$(uname -m)" = x86_64 ] && gcc -o "$tmp/i386-host" "$tmp/i386-host.c" 2>/dev/null; then
	rc=0; "$tmp/i386-host" 2>/dev/null || rc=$?
	if [ "$rc" = 139 ]; then
		echo 139 >"$tmp/ws/i386.want"
		echo "# this kernel has no IA32 entry (int 0x80 faults on the host too)"
	fi
fi
cat >"$tmp/ws/work.sh" <<'SH'
# ordinary agent work, in a scratch folder of the sandbox user's
set -u
t() { if "$@" >/tmp/t.out 2>&1; then echo "ok $name"; else
	echo "FAIL $name: $(head -c 300 /tmp/t.out | tr '\n' ' ')"; fi; }
name="keyctl show @u refused"; t sh -c '! keyctl show @u'
name="keyctl add refused"; t sh -c '! keyctl add user aisb-e2e x @u'
name="unshare -U refused"; t sh -c '! unshare -U true'
name="unshare -n refused"; t sh -c '! unshare -n true'
name="seccomp mode 2"; t grep -q '^Seccomp:[[:space:]]*2$' /proc/self/status
name="uid 1000"; t test "$(id -u)" = 1000
ws=$PWD
cd "$(mktemp -d)"
name=git; t sh -c 'git init -q . && echo a >f && git add f &&
    git -c user.name=t -c user.email=t@example.test commit -qm one &&
    test "$(git rev-list --count HEAD)" = 1'
cat >hello.c <<'C'
#include <pthread.h>
#include <stdio.h>
static void *run(void *a) { return a; }
int main(void) {
	pthread_t t; void *r;
	if (pthread_create(&t, NULL, run, "thread") != 0 || pthread_join(t, &r) != 0)
		return 1;
	printf("hello %s\n", (char *)r);
	return 0;
}
C
printf 'hello: hello.c\n\tgcc -g -O0 -pthread -o hello hello.c\n' >Makefile
name="make and gcc"; t sh -c 'make -s && test "$(./hello)" = "hello thread"'
name="strace of its own child"; t sh -c 'strace -f -e trace=execve -o s.out ./hello &&
    grep -q "execve(\"./hello\"" s.out'
name="gdb runs its own child"; t sh -c 'gdb -q -batch -ex "break run" -ex run \
    -ex bt -ex continue ./hello >g.out 2>&1; cat g.out; grep -q "^#0  run (" g.out &&
    grep -q "hello thread" g.out && ! grep -qi "not permitted" g.out'
# the i386 system call entry from a 64-bit program: killed (SIGSYS)
if [ "$(uname -m)" = x86_64 ]; then
	cat >i386.c <<'C'
int main(void) {
	long r;
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory"); /* getpid */
	return r > 0 ? 0 : 1;
}
C
	# i386.want (written on the host, below): 159, or 139 where the
	# kernel has no IA32 entry at all
	name="i386 killed"; t sh -c 'gcc -o i386 i386.c; ./i386; test $? = "$(cat "$1")"' \
	    sh "$ws/i386.want"
fi
if command -v node >/dev/null; then
	name="node"; t node -e '
		const { Worker } = require("worker_threads");
		const cp = require("child_process");
		if (cp.execSync("echo child").toString() !== "child\n") process.exit(1);
		new Worker("require(\"worker_threads\").parentPort.postMessage(6*7)",
		    { eval: true }).on("message", (m) => process.exit(m === 42 ? 0 : 1));'
else
	echo "FAIL node: not in the image"
fi
python3 "$ws/calls.py"
SH

# 1. gate mode: everything inside one session
rc=0; sess -- bash ./work.sh || rc=$?
check "checks: exit" "$rc" 0
grep -E '^(ok|FAIL) ' "$tmp/out" >"$tmp/verdicts" || true
while read -r verdict what; do
	if [ "$verdict" = ok ]; then ok; else bad "inside: $what"; fi
done <"$tmp/verdicts"
# every check reported (a crash half-way would leave some out)
want=26; [ "$(uname -m)" = x86_64 ] && want=28	# the x32 and i386 checks
check "checks run" "$(grep -c '^ok ' "$tmp/verdicts")" "$want"
sd=$(e2e_session)
if grep -q "^timings_ms host [0-9]* gate [1-9]" "$sd/record"; then ok; else
	bad "gate mode: no gate in the record"; fi

# 2. direct mode: the refresher forks, binds port 53 and loads nftables
# sets under the profile; the command resolves through its stub
rc=0; sess --net direct -- sh -c 'getent hosts direct.test | cut -d" " -f1' || rc=$?
check "direct: exit" "$rc" 0
check "direct: stub answer" "$(cat "$tmp/out")" 192.0.2.7
if grep -q '^direct.test' "$tmp/dns.log"; then ok; else bad "direct: the refresher asked nothing"; fi

# 3. the podman argv names the profile next to aisb
"$aisb" --policy "$tmp/policy.yaml" --dry-run -- true >"$tmp/out" 2>"$tmp/err"
if grep -q -- "--security-opt=seccomp=$(dirname "$aisb")/aisb-seccomp.json" "$tmp/out"; then
	ok; else bad "dry-run: $(grep podman "$tmp/out")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
