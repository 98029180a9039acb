#!/bin/bash
# Nothing of the image reaches aisb-enforce (docs/enforcer.md, "Nothing of
# the image").
#
# A root folder made here stands for a hostile base image: an
# /etc/ld.so.preload library, an NSS module named by /etc/nsswitch.conf,
# resolv.conf, host.conf and gai.conf of its own, and LD_*, GLIBC_TUNABLES,
# RES_OPTIONS and LOCALDOMAIN in the environment, as an image's ENV lines
# would set them.  The preload library writes a line (uid, program) to a
# marker file wherever it is loaded.  aisb-enforce runs chrooted into that
# folder, in a network namespace of its own, as root (as in a container),
# under strace, with a gate plan and a direct-mode plan (c-ares), then
# runs a dynamically linked command from the folder.  Checked:
#   - the command, which is the image's to run, did load the library (the
#     trap works);
#   - no process of uid 0 loaded it, and the enforcer opened no library,
#     no NSS, resolver or locale file, and no file of the folder but the
#     plan and /dev/urandom;
#   - the table was loaded all the same (the command's exit is 0).
# A dynamically linked enforcer fails the second check: the test copies
# its libraries into the folder, as an image that carries them would
# (run it with ENFORCE=a-dynamic-build ENFORCE_ANY=1 to see).  Needs root,
# strace and a C compiler; skips (77) otherwise.  Everything made here is
# removed on exit.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

builddir=$(pwd)
ENFORCE=${ENFORCE:-$builddir/aisb-enforce}

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (namespaces, chroot)"
for t in strace cc unshare chroot ldd ip; do
	command -v "$t" >/dev/null || skip "needs $t"
done
[ -x "$ENFORCE" ] || skip "build aisb-enforce first"
# A sanitizer build links it dynamically (configure says so); sessions
# refuse such an enforcer, and this test is about the one they run.
# ENFORCE=... runs it on any binary, to see a dynamic one fail.
phdrs=$(LC_ALL=C readelf -l "$ENFORCE" 2>/dev/null || true)
if [ -z "${ENFORCE_ANY:-}" ] && [[ $phdrs == *INTERP* ]]; then
	skip "$ENFORCE is dynamically linked (--disable-static-enforcer or a sanitizer build)"
fi
CHROOT=$(command -v chroot)

work=$(mktemp -d /tmp/aisb-enforce-image.XXXXXX)
root=$work/root
passed=0
failed=0
cleanup() {
	local rc=$?
	set +e
	umount "$root/proc" 2>/dev/null
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "died: line $LINENO: $BASH_COMMAND (status $?)" >&2' ERR

ok()   { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*"; }

# copy_in FILE [AS]: FILE at AS (default: its own path) under $root, with
# the libraries its loader would load (none for a static program).
copy_in() {
	local f lib as=${2:-$1}
	f=$(readlink -f "$1")
	mkdir -p "$root$(dirname "$as")"
	cp "$f" "$root$as"
	ldd "$f" >"$work/ldd" 2>&1 || true
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' \
	    "$work/ldd" >"$work/libs"
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp "$(readlink -f "$lib")" "$root$lib"
	done <"$work/libs"
}

mkdir -p "$root"/{etc,proc,dev,tmp,bin}
chmod 1777 "$root/tmp"
cp -a /dev/null /dev/urandom "$root/dev/"
copy_in /bin/true
copy_in "$ENFORCE" /aisb-enforce	# and its libraries, if it has any
libdir=$(dirname "$(ldd /bin/true | awk '/libc\.so/ { print $3 }')")

cat >"$work/evil.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void
evil(void)
{
	char	exe[256] = "?";
	int	fd = open("/tmp/marker", O_WRONLY | O_APPEND | O_CREAT, 0666);
	ssize_t	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	if (fd != -1) {
		dprintf(fd, "uid=%d exe=%s\n", (int)geteuid(), exe);
		close(fd);
	}
}
EOF
cc -shared -fPIC -o "$root/evil.so" "$work/evil.c"
mkdir -p "$root$libdir"
cp "$root/evil.so" "$root$libdir/libnss_evil.so.2"
echo /evil.so >"$root/etc/ld.so.preload"
printf 'passwd: evil\ngroup: evil\nhosts: evil\nservices: evil\n' \
    >"$root/etc/nsswitch.conf"
printf 'nameserver 192.0.2.53\noptions ndots:9 timeout:30\nsearch evil.test\n' \
    >"$root/etc/resolv.conf"
echo 'order bind' >"$root/etc/host.conf"
echo 'precedence ::ffff:0:0/96 100' >"$root/etc/gai.conf"

printf 'aisb-plan 1\nmode gate\ngate 127.0.0.1 43127\n' >"$root/gate.plan"
# the resolver: an address behind a veth pair of the namespace's own
printf 'aisb-plan 1\nmode direct\nresolver 10.199.9.53\nallow-name svc.test 443\n' \
    >"$root/direct.plan"

# run NAME PLAN: aisb-enforce in the folder, as an image's ENV would start it
run() {
	local name=$1 plan=$2 rc=0
	: >"$root/tmp/marker"
	chmod 666 "$root/tmp/marker"
	unshare -n -m sh -c 'mount -t proc proc "$1/proc" &&
	    ip link set lo up && ip link add v0 type veth peer name v1 &&
	    ip addr add 10.199.9.1/24 dev v0 && ip link set v0 up &&
	    ip link set v1 up &&
	    exec strace -f -qq -o "$2" -e trace=open,openat,execve,clone,clone3,fork,vfork \
		env -i PATH=/bin LD_PRELOAD=/evil.so LD_LIBRARY_PATH=/evil \
		LD_AUDIT=/evil.so GLIBC_TUNABLES=glibc.malloc.check=3 \
		RES_OPTIONS="ndots:15 attempts:9" LOCALDOMAIN=evil.test \
		TZ=/etc/localtime GCONV_PATH=/evil \
		"$4" "$1" /aisb-enforce --plan "$3" -- /bin/true' \
	    sh "$root" "$work/$name.trace" "$plan" "$CHROOT" \
	    >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	umount "$root/proc" 2>/dev/null || true
	if [ "$rc" = 0 ]; then
		ok "$name: the table loaded, the command ran (exit 0)"
	else
		fail "$name: exit $rc: $(tr '\n' ' ' <"$work/$name.err")"
	fi
	if grep -q '^uid=1000 ' "$root/tmp/marker"; then
		ok "$name: the image's preload reached the command (the trap works)"
	else
		fail "$name: the command did not load the preload library: $(cat "$root/tmp/marker")"
	fi
	if grep -q '^uid=0 ' "$root/tmp/marker"; then
		fail "$name: a root process loaded the image's library: $(grep '^uid=0' "$root/tmp/marker" | tr '\n' ' ')"
	else
		ok "$name: no root process loaded the image's library"
	fi
	if [ ! -s "$work/$name.trace" ]; then
		fail "$name: nothing traced"
		return
	fi
	# What the enforcer opened: every process from its execve (and those
	# it forked) up to each one's execve of the command.
	awk '
	    $2 ~ /^execve\("\/aisb-enforce"/ { enf[$1] = 1; next }
	    $2 ~ /^execve\("\/bin\/true"/ { delete enf[$1]; next }
	    !($1 in enf) { next }
	    $2 ~ /^(clone3?|fork|vfork)\(/ && $NF ~ /^[0-9]+$/ { enf[$NF] = 1 }
	    $2 ~ /^open(at)?\(/ { print }
	' "$work/$name.trace" >"$work/$name.opens"
	if ! grep -q 'execve("/aisb-enforce"' "$work/$name.trace"; then
		fail "$name: the enforcer did not run under strace"
		return
	fi
	if grep -E '\.so|ld\.so|nsswitch|resolv\.conf|host\.conf|gai\.conf|svc\.conf|localtime|zoneinfo|gconv|locale|/evil' \
	    "$work/$name.opens" >"$work/$name.bad"; then
		fail "$name: the enforcer opened the image's files: $(head -n 3 "$work/$name.bad" | tr '\n' ' ')..."
	else
		ok "$name: the enforcer opened no library, NSS, resolver or locale file"
	fi
}

run gate /gate.plan
run direct /direct.plan

echo "$passed passed, $failed failed"
if [ "$failed" != 0 ]; then
	exit 1
fi
