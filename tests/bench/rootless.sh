#!/bin/bash
# rootless.sh: a session of `true` (aisb -- true), rootful against
# rootless with the store podman gives a new user (vfs here) and rootless
# after `aisb doctor --fix` (overlay).
#
#   rootless.sh [--rounds R] [--runs N] [--sides "rootful vfs overlay"]
#       [--aisb PATH] [--base TAR]
#
# Three sides: root, in a store of this script's own; an ordinary user
# it creates, whose store is what podman made (the driver is printed);
# a second user whose store `aisb doctor --fix` switched.  Every side runs
# the same image (built once as root, saved, loaded by each user; on the
# offline base, --image offline), the shipped default policy, the default --net
# gate.  R rounds (default 3); in each, N sessions a side (default 3),
# the sides taking turns session by session, in an order that rotates
# with the round, so that load that comes and goes falls on all three.  Prints each session's wall time,
# then per side min, median and max over all rounds and the median's
# ratio to rootful.  --sides leaves some out (their users are not made).
#
# Needs root, podman, runuser, useradd.  --base TAR: an offline base
# (podman save of localhost/aisb-base:...) loaded instead of building one
# (mmdebstrap, minutes).  Removes on exit what it made: both users (their
# stores and processes), its store, the /dev/net/tun mode it changed.
# Traffic: none leaves the machine (the gate resolves nothing for true).
set -euo pipefail

rounds=3
runs=3
sides=(rootful vfs overlay)
base=
here=$(cd "$(dirname "$0")" && pwd)
aisb=${AISB:-./aisb}
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--sides) read -r -a sides <<<"$2"; shift 2 ;;
	--aisb) aisb=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	*) echo "usage: rootless.sh [--rounds R] [--runs N] [--sides LIST] [--aisb PATH] [--base TAR]" >&2
	   exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "rootless.sh: needs root (it makes two users)" >&2; exit 2; }
build=$(cd "$(dirname "$aisb")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/aisb-bench-rootless.XXXXXX")
chmod 0711 "$tmp"
cleanup() {
	declare -F e2e_user_remove >/dev/null && e2e_user_remove
	podman rm -af -t 0 >/dev/null 2>&1 || true
	podman volume rm -af >/dev/null 2>&1 || true
	podman rmi -af >/dev/null 2>&1 || true
	declare -F e2e_tun_close >/dev/null && { e2e_tun_close || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT
# e2e_user: the users, /dev/net/tun for their slirp4netns
aisb=$build/aisb
top_srcdir=$(cd "$here/../.." && pwd)
. "$top_srcdir/tests/e2e/lib.sh"

printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' \
    "$tmp" "$tmp" >"$tmp/storage.conf"
export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
export XDG_STATE_HOME=$tmp/state XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config
[ -z "$base" ] || podman load -q -i "$base" >/dev/null
# Every session names the offline base (--image offline; AISB_IMAGE in
# as_user): the default one is a registry's, which a session would ask
# for first, and no registry is part of what is measured here.
img=$("$build/aisb" image build --base offline </dev/null 2>/dev/null | tail -n 1)
base_ref=$(podman image inspect --format '{{index .Labels "io.aisb.base"}}' "$img")
podman save -q -m -o "$tmp/img.tar" "$img" "$base_ref"
chmod 0644 "$tmp/img.tar"
install -d -m 0700 "$tmp/ws"

user_run() {	# user_run USER CMD...: CMD as USER, from /
	e2e_user_pick "$1"
	(cd / && as_user "${@:2}")
}
mkuser() {	# mkuser NAME: a new user, podman's own store, a workspace
	e2e_user --bare "$1"
	install -d -m 0700 -o "$e2e_user_name" -g "$e2e_user_name" "$e2e_home/ws"
}
vfs='' ovl=''
has() { case " ${sides[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
driver() { user_run "$1" podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null; }
echo "# rootful: overlay"
if has vfs; then
	mkuser aisbbv
	vfs=$e2e_user_name
	user_run "$vfs" podman load -q -i "$tmp/img.tar" >/dev/null 2>&1
	echo "# $vfs: $(driver "$vfs")"
fi
if has overlay; then
	mkuser aisbbo
	ovl=$e2e_user_name
	user_run "$ovl" aisb doctor --fix >"$tmp/fix.out" 2>&1 </dev/null || true
	user_run "$ovl" podman load -q -i "$tmp/img.tar" >/dev/null 2>&1
	echo "# $ovl (aisb doctor --fix): $(driver "$ovl")"
	grep '^aisb doctor --fix' "$tmp/fix.out" | sed 's/^/#   /'
fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }
session() {	# session SIDE: wall ms of aisb -- true
	local t0 t1 rc=0 u
	t0=$(now_ms)
	case $1 in
	rootful) (cd "$tmp/ws" && "$build/aisb" --image offline -- true) \
	    >"$tmp/out" 2>&1 </dev/null || rc=$? ;;
	*)	u=$vfs; [ "$1" = overlay ] && u=$ovl
		e2e_user_pick "$u"
		(cd "$e2e_home/ws" && as_user aisb --image offline -- true) \
		    >"$tmp/out" 2>&1 </dev/null || rc=$? ;;
	esac
	t1=$(now_ms)
	[ "$rc" = 0 ] || { echo "$1: aisb -- true failed ($rc): $(head -c 600 "$tmp/out")" >&2; exit 1; }
	echo $((t1 - t0))
}

# one untimed session each: the home volume, the caches
for s in "${sides[@]}"; do session "$s" >/dev/null; done
echo "# load before: $(uptime)"
: >"$tmp/times"
for r in $(seq "$rounds"); do
	for _ in $(seq "$runs"); do
		for k in "${!sides[@]}"; do
			s=${sides[$(((k + r) % ${#sides[@]}))]}
			ms=$(session "$s")
			echo "$s $ms $r" >>"$tmp/times"
			echo "round $r: $s $ms ms"
		done
	done
done
stats() {	# stats SIDE: "min median max" in ms
	awk -v s="$1" '$1 == s { print $2 }' "$tmp/times" | sort -n |
	    awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)], v[NR] }'
}
read -r _ rootmed _ <<<"$(stats rootful)"
printf '| side | min (ms) | median (ms) | max (ms) | median / rootful |\n'
printf '| --- | ---: | ---: | ---: | ---: |\n'
for s in "${sides[@]}"; do
	read -r lo med hi <<<"$(stats "$s")"
	printf '| %s | %s | %s | %s | %s |\n' "$s" "$lo" "$med" "$hi" \
	    "$(awk -v a="$med" -v b="$rootmed" 'BEGIN { printf "%.2f", a / b }')"
done
# Per round: each side's median over that round's sessions, over
# rootful's; the ratio holds only if it holds in every round.
printf '\n| side | round medians / rootful: min | max |\n| --- | ---: | ---: |\n'
for s in "${sides[@]}"; do
	[ "$s" = rootful ] && continue
	for r in $(seq "$rounds"); do
		a=$(awk -v s="$s" -v r="$r" '$1 == s && $3 == r { print $2 }' "$tmp/times" | sort -n |
		    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		b=$(awk -v r="$r" '$1 == "rootful" && $3 == r { print $2 }' "$tmp/times" | sort -n |
		    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", a / b }'
	done | sort -n | awk -v s="$s" '{ v[NR] = $1 } END { printf "| %s | %s | %s |\n", s, v[1], v[NR] }'
done
echo "# $rounds rounds x $runs sessions a side, interleaved; $(nproc) cores, $(date -u +%FT%TZ)"
echo "# load after: $(uptime)"
