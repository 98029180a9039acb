#!/bin/sh
# Quick start: install what aisb needs, build it in ./build, and run the
# main job with the shipped default policy.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/contrib/apt-install.sh"
cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure
make -j"$(nproc)"
./aisb policy check ../contrib/policies/default.yaml
./aisb policy test ../contrib/policies/default.yaml github.com:443
./aisb policy test ../contrib/policies/default.yaml example.com:443 || true
