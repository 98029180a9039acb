#!/bin/sh
# Installs contrib/debian-packages with apt-get (run as root).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pkgs=$(grep -v '^#' "$here/debian-packages" | tr '\n' ' ')
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
	    missing="$missing $p"
done
[ -z "$missing" ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# With the recommended packages, as a user's machine has them: podman's
# (catatonit, fuse-overlayfs...) are part of what the tests exercise.
# shellcheck disable=SC2086
apt-get install -y -q $missing
