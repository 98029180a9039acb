#!/bin/sh
# build.sh [-c DIR] TAG PROGRAM...: the aisb-gate image (docs/kubernetes.md,
# "The image"), offline: a build context of this folder's Containerfile
# and a rootfs holding each PROGRAM in /usr/bin, every shared library it
# loads (as ldd(1) of this machine resolves them: the ones it was built
# and tested against) at the path it loads it from, its program
# interpreter, and /etc/passwd and /etc/group naming root, aisb (65532)
# and nobody; debug sections stripped when strip(1) is there.  A static
# program (aisb-enforce) brings no library.  Then `podman build` of it,
# FROM scratch, tagged TAG ($PODMAN, default podman), and the context
# removed.  With -c DIR the context is left in DIR and nothing is built
# (make check reads the manifests against it).  Fails, leaving nothing,
# when a program is missing or a library cannot be found.
#
#	make gate-image		(TAG localhost/aisb-gate:VERSION)
#
# ldd runs the programs' interpreter on them: give it programs of this
# build, never programs from elsewhere.
set -eu

keep=
if [ "${1:-}" = -c ]; then
	keep=$2
	shift 2
fi
[ $# -ge 2 ] || { echo "usage: build.sh [-c DIR] TAG PROGRAM..." >&2; exit 64; }
here=$(cd "$(dirname "$0")" && pwd)
tag=$1
shift
if [ -n "$keep" ]; then
	dir=$keep
	rm -rf "$dir"
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/aisb-gate-image.XXXXXX")
fi
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/rootfs/usr/bin" "$dir/rootfs/etc"
cp "$here/Containerfile" "$dir/Containerfile"

for p; do
	[ -f "$p" ] && [ -x "$p" ] || { echo "build.sh: $p: not a program" >&2; exit 1; }
	b=$dir/rootfs/usr/bin/$(basename "$p")
	cp "$p" "$b"
	chmod 0755 "$b"
	! command -v strip >/dev/null || strip --strip-debug "$b"
	out=$(LC_ALL=C ldd "$p" 2>&1) || true
	case $out in *"not a dynamic executable"*|*"statically linked"*) continue ;; esac
	if printf '%s\n' "$out" | grep -q 'not found'; then
		echo "build.sh: $p: $(printf '%s\n' "$out" | grep 'not found')" >&2
		exit 1
	fi
	# "libx.so.1 => /lib/.../libx.so.1 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)"
	printf '%s\n' "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
	    $1 ~ /^\// { print $1 }' | while read -r lib; do
		mkdir -p "$dir/rootfs$(dirname "$lib")"
		# the host's modes: the interpreter must stay executable
		cp -L "$lib" "$dir/rootfs$lib"
	done
done
printf '%s\n' 'root:x:0:0:root:/:/nonexistent' \
    'aisb:x:65532:65532:aisb-gate:/:/nonexistent' \
    'nobody:x:65534:65534:nobody:/:/nonexistent' >"$dir/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'aisb:x:65532:' 'nobody:x:65534:' \
    >"$dir/rootfs/etc/group"
chmod 0644 "$dir/rootfs/etc/passwd" "$dir/rootfs/etc/group"

if [ -n "$keep" ]; then
	trap - EXIT
	exit 0
fi
"${PODMAN:-podman}" build -q -t "$tag" "$dir"
