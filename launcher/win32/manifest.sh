#!/bin/sh
# The build manifest of the Windows programs (docs/windows.md,
# "Identity"), on stdout: what they were built with, and the SHA-256 of
# each, which aisb.exe checks aisb-run.exe against before it runs it.
#   manifest.sh CC PROGRAM...
set -eu
cc=$1
shift
proto=$(sed -n 's/^#define WINRUN_PROTOCOL[^0-9]*\([0-9]*\).*/\1/p' \
    "$(dirname "$0")/winrun.h")
echo "# aisb build manifest 1 (docs/windows.md, \"Identity\")"
echo "protocol $proto"
echo "arch $($cc -dumpmachine)"
echo "compiler $($cc --version | sed -n 1p)"
# the mingw-w64 headers' version: the SDK the programs were built against
sdk=$(printf '#include <_mingw.h>\n__MINGW64_VERSION_STR\n' |
    $cc -E -P - 2>/dev/null | sed -n '$p' | tr -d '" ')
echo "sdk mingw-w64 ${sdk:-unknown}"
for p; do
	echo "file ${p##*/} $(sha256sum "$p" | cut -d' ' -f1)"
done
