#!/bin/bash
# Snapshot sessions as a user meets them (docs/performance.md, "Snapshot
# sessions"): a tree of FILES files and MB megabytes, a session of an
# agent-like command on its stage (it edits EDIT files, creates and
# deletes some), then aisb apply.  Prints, per run, the stage and change
# set times the session recorded (snapshot_ms), the session's wall time
# next to a direct session's, and apply's wall and CPU time
# (/usr/bin/time, package time).
#
#   bash tests/bench/snapshot.sh --aisb build/aisb [--files N] [--mb N]
#       [--edit N] [--runs N] [--dir DIR]
#
# Needs root and podman (a rootful session, --net none: no network); the
# tree, the podman store and the state are made under DIR (default
# /var/tmp) and removed at the end.  Not part of make check.
set -euo pipefail

aisb='' files=10000 mb=200 edit=1000 runs=3 dir=${TMPDIR:-/var/tmp}
while [ $# -gt 0 ]; do
	case $1 in
	--aisb) aisb=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--files) files=$2; shift 2 ;;
	--mb) mb=$2; shift 2 ;;
	--edit) edit=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	*) echo "usage: $0 --aisb PATH [--files N] [--mb N] [--edit N] [--runs N] [--dir DIR]" >&2; exit 64 ;;
	esac
done
[ -x "$aisb" ] || { echo "$0: --aisb PATH of a built aisb" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (rootful podman)" >&2; exit 77; }

tmp=$(mktemp -d "$dir/aisb-bench-snapshot.XXXXXX")
export TMPDIR=$tmp XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache
# the offline base: a benchmark asks no registry, and measures none
export AISB_IMAGE=offline
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' \
    "$tmp" "$tmp" >"$tmp/storage.conf"
export CONTAINERS_STORAGE_CONF=$tmp/storage.conf
cleanup() {
	local m
	podman rm -af -t 0 >/dev/null 2>&1 || true
	podman volume rm -af >/dev/null 2>&1 || true
	podman rmi -af >/dev/null 2>&1 || true
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v p="$tmp/" 'index($2, p) == 1 { print $2 }' /proc/self/mounts | sort -r)
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$XDG_CONFIG_HOME"
printf 'version: 1\nallow:\n  - host: allowed.test\n    ports: [443]\n' >"$tmp/policy.yaml"

ms() { date +%s%3N; }

# The tree: 100 folders of files/100 files, mb MB in all, random content.
ws=$tmp/ws
mkdir -m 0700 "$ws"
per=$((mb * 1024 * 1024 / files))
python3 - "$ws" "$files" "$per" <<'EOF'
import os, sys
root, n, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = os.urandom(1 << 20)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        off = (i * 7919) % (len(block) - per) if per < len(block) else 0
        f.write(block[off:off + per] + b"%d\n" % i)
EOF
echo "tree: $files files, $(du -sm "$ws" | cut -f1) MB in $ws ($(stat -fc %T "$ws"))"

agent="set -e
i=0
for f in d0*/f*; do
	[ \$i -lt $edit ] || break
	echo edited >>\"\$f\"
	i=\$((i + 1))
done
mkdir -p new
for i in \$(seq 100); do echo \$i >new/n\$i; done
rm -f d099/f*"

# one session first: the image is built, not timed
(cd "$ws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- true) >/dev/null 2>&1 </dev/null

printf '%-4s %10s %10s %12s %12s %10s %12s\n' run stage_ms changes_ms snapshot_ms direct_ms apply_ms apply_cpu_ms
for r in $(seq "$runs"); do
	t0=$(ms)
	(cd "$ws" && "$aisb" --net none --policy "$tmp/policy.yaml" -- true) >/dev/null 2>&1 </dev/null
	direct=$(($(ms) - t0))
	t0=$(ms)
	(cd "$ws" && "$aisb" --snapshot --apply=never --net none --policy "$tmp/policy.yaml" \
	    -- sh -c "$agent") >/dev/null 2>"$tmp/err" </dev/null || { cat "$tmp/err"; exit 1; }
	snap=$(($(ms) - t0))
	sd=$(ls -dt "$XDG_STATE_HOME"/aisb/sessions/* | sed -n 1p)
	read -r _ _ stage _ changes < <(grep '^snapshot_ms ' "$sd/record")
	t0=$(ms)
	# CPU time too (user + system): load inflates it less than the wall
	# clock (it includes the stage's removal once applied)
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$aisb" apply "$(basename "$sd")" \
	    >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	apply=$(($(ms) - t0))
	apply_cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$tmp/cpu")
	printf '%-4s %10s %10s %12s %12s %10s %12s\n' "$r" "$stage" "$changes" "$snap" "$direct" "$apply" "$apply_cpu"
	# the next run starts from the tree as applied: put the deleted folder back
	python3 - "$ws" "$files" "$per" <<'EOF'
import os, sys
root, n, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = os.path.join(root, "d099")
os.makedirs(d, exist_ok=True)
for i in range(99, n, 100):
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(per))
EOF
	rm -rf "$ws/new"
done
