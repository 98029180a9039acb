#!/bin/bash
# End to end: apt as the sandbox user (uid 1000) inside a session.
#
# The test builds a tiny .deb (dpkg-deb), makes a flat apt repository of
# it (dpkg-scanpackages and a Release file), serves it over HTTP on the
# host's loopback as repo.test (the test's DNS server), and runs `apt-get
# update` and `apt-get download` in a session through the gate, the way
# docs/launcher.md ("apt inside a session") tells users to.  Lists, caches
# and locks must land in the sandbox user's home, and apt must not need
# root for any of it.
#
# Needs root, podman, mmdebstrap, dpkg-deb and dpkg-scanpackages; builds
# its image offline in a podman store of its own, which the EXIT trap
# removes, failure or not.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start apt mmdebstrap dpkg-deb dpkg-scanpackages "$PY"
e2e_seed_image
# no host CA folder: this test is about apt, not about this machine's CAs
export AISB_TEST_HOST_CA_DIR=$tmp/no-host-ca
vol=aisb-e2e-apt-$$

# --- a package and a repository of it -------------------------------------
pkg='aisb-e2e-hello'
mkdir -p "$tmp/pkg/DEBIAN" "$tmp/pkg/usr/share/doc/$pkg" "$tmp/repo"
cat >"$tmp/pkg/DEBIAN/control" <<EOF
Package: $pkg
Version: 1.0-$$
Architecture: all
Maintainer: aisb tests <tests@invalid>
Description: a package made by tests/e2e/apt.sh
EOF
echo "made by the aisb e2e test" >"$tmp/pkg/usr/share/doc/$pkg/README"
dpkg-deb --root-owner-group --build "$tmp/pkg" "$tmp/repo/${pkg}_1.0-$$_all.deb" >/dev/null
(cd "$tmp/repo" && dpkg-scanpackages --multiversion . /dev/null 2>/dev/null >Packages)
sz=$(stat -c %s "$tmp/repo/Packages")
sum=$(sha256sum "$tmp/repo/Packages" | cut -d' ' -f1)
printf 'Origin: aisb-e2e\nLabel: aisb-e2e\nSuite: e2e\nCodename: e2e\nDate: %s\nSHA256:\n %s %s Packages\n' \
    "$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S UTC')" "$sum" "$sz" >"$tmp/repo/Release"

e2e_serve_dir "$tmp/repo" repo
cat >"$tmp/zone.json" <<'EOF'
{"repo.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns
port=$(e2e_port repo)
cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: repo.test
    ports: [$port]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF

# What docs/launcher.md tells users to run, with the test's repository as
# the only source (the image's Debian sources are not in this policy).
cat >"$tmp/ws/apt.sh" <<EOF
#!/bin/sh
set -e
id -u
echo "APT_CONFIG=\$APT_CONFIG"
mkdir -p "\$HOME/.config/apt/sources.list.d"
echo "deb [trusted=yes] http://repo.test:$port/ ./" >"\$HOME/.config/apt/sources.list"
o="-o Dir::Etc::SourceList=\$HOME/.config/apt/sources.list -o Dir::Etc::SourceParts=\$HOME/.config/apt/sources.list.d"
# control: apt's stock configuration, as images had it before
rc=0; APT_CONFIG=/dev/null apt-get \$o update >/dev/null 2>control.err || rc=\$?
echo "control \$rc"
apt-get \$o update
apt-get \$o download $pkg
ls ${pkg}_*.deb
apt-cache \$o policy $pkg | sed -n 's/^ *Candidate: /candidate /p'
ls -d "\$HOME/.cache/apt/lists"
EOF
chmod 0755 "$tmp/ws/apt.sh"

echo "# building the image (the offline base) and running apt as uid 1000"
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
    -- ./apt.sh) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
cat "$tmp/out"
check "apt as the sandbox user: exit" "$rc" 0
check "... as uid 1000" "$(sed -n 1p "$tmp/out")" 1000
check "... with the image's APT_CONFIG" "$(sed -n 2p "$tmp/out")" \
    APT_CONFIG=/etc/aisb/apt-sandbox.conf
v=$(awk '$1 == "control" { print $2 }' "$tmp/out")
if [ -n "$v" ] && [ "$v" != 0 ] && grep -q 'lock' "$tmp/ws/control.err"; then
	ok "control: without it, apt-get update as uid 1000 fails on the lock ($v)"
else
	bad "control: '$v', $(cat "$tmp/ws/control.err" 2>/dev/null)"
fi
if grep -q "^${pkg}_1.0-$$_all.deb$" "$tmp/out"; then ok "apt-get download fetched the package"
else bad "no downloaded .deb"; fi
check "apt-cache sees the repository's version" \
    "$(awk '$1 == "candidate" { print $2 }' "$tmp/out")" "1.0-$$"
if grep -qx '/home/sandbox/.cache/apt/lists' "$tmp/out"; then ok "lists in the user's home"
else bad "no lists folder in the home"; fi
if grep -Eq '"GET /(\./)?Packages ' "$tmp/repo.log" &&
    grep -Eq "\"GET /(\\./)?${pkg}_" "$tmp/repo.log"; then
	ok "the repository served the index and the package"
else
	bad "repository log: $(cat "$tmp/repo.log")"
fi
if grep -qi 'lock\|permission denied' "$tmp/err"; then bad "apt complained: $(grep -i 'lock\|permission' "$tmp/err")"
else ok "no lock or permission complaint"; fi
check "the downloaded file is the user's, in the workspace" \
    "$(stat -c %s "$tmp/ws/${pkg}_1.0-$$_all.deb" 2>/dev/null || echo missing)" \
    "$(stat -c %s "$tmp/repo/${pkg}_1.0-$$_all.deb")"

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
