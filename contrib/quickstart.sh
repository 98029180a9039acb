#!/bin/sh
# Quick start: install what aisb needs, build it in ./build, and run a
# sandboxed command under the shipped default policy: one request the
# policy allows (GitHub's API) and one it denies (example.com).  The first
# run builds the offline sandbox image from this host's Debian sources
# (a few minutes).  Run as root: aisb uses rootful podman here.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/contrib/apt-install.sh"
cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure
make -j"$(nproc)"
./aisb doctor
# No --policy: a build tree's aisb uses the shipped default, and says so.
./aisb --package curl -- sh -c '
for u in https://api.github.com/zen https://example.com/; do
	printf "%-28s " "$u"
	curl -s -o /dev/null --max-time 20 \
	    -w "proxy answered %{http_connect}, site answered %{http_code}\n" "$u" ||
	    true	# curl fails on a refused CONNECT; the line says why
done'
echo "The gate's decisions (allow api.github.com, deny example.com):"
state=${XDG_STATE_HOME:-$HOME/.local/state}/aisb/sessions
tail -n 4 "$(ls -dt "$state"/*/ | head -n 1)audit.jsonl"
