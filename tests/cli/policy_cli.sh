#!/bin/bash
# aisb policy check|print|test, driven as a user would from a shell.
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
aisb=${AISB:-./aisb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
ok()   { pass=$((pass + 1)); }
bad()  { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() {	# expect_rc RC CMD...
	local want=$1 rc=0; shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" = "$want" ]; then ok; else
		bad "$* exited $rc, expected $want"; cat "$tmp/out" "$tmp/err" >&2; fi
}
expect_grep() {	# expect_grep FILE PATTERN
	if grep -qE -- "$2" "$1"; then ok; else bad "$1 lacks /$2/"; cat "$1" >&2; fi
}

# Every shipped policy is valid, prints canonically, and its dump reloads
# to the same identity.
for f in "$top_srcdir"/contrib/policies/*.yaml; do
	expect_rc 0 "$aisb" policy check "$f"
	expect_grep "$tmp/out" '^policy OK sha256:[0-9a-f]{64}$'
	sha=$(sed -n 's/^policy OK sha256://p' "$tmp/out")
	expect_rc 0 "$aisb" policy print "$f"
	cp "$tmp/out" "$tmp/dump.yaml"
	expect_grep "$tmp/dump.yaml" "^# sha256:$sha\$"
	expect_rc 0 "$aisb" policy check "$tmp/dump.yaml"
	expect_grep "$tmp/out" "sha256:$sha\$"
done

cat >"$tmp/p.yaml" <<'YAML'
version: 1
allow:
  - host: example.com
  - host: "*.example.org"
    ports: [443]
deny:
  - host: bad.example.org
allow_ranges: [127.0.0.1/32]
YAML
expect_rc 0 "$aisb" policy test "$tmp/p.yaml" example.com:443
expect_grep "$tmp/out" '^allow example.com:443$'
expect_grep "$tmp/out" "^rule: $tmp/p.yaml:3:5 allow host: example.com\$"
expect_rc 1 "$aisb" policy test "$tmp/p.yaml" a.example.org:80
expect_grep "$tmp/out" '^reason: port not allowed$'
expect_rc 1 "$aisb" policy test "$tmp/p.yaml" bad.example.org
expect_grep "$tmp/out" "^rule: $tmp/p.yaml:7:5 deny host: bad.example.org\$"
expect_rc 1 "$aisb" policy test "$tmp/p.yaml" other.example
expect_grep "$tmp/out" '^reason: host not allowed$'
# the name is allowed, the address it resolved to is not
expect_rc 1 "$aisb" policy test "$tmp/p.yaml" example.com:443 169.254.169.254
expect_grep "$tmp/out" 'address 169.254.169.254: denied range \(link-local'
expect_rc 0 "$aisb" policy test "$tmp/p.yaml" example.com:443 127.0.0.1
expect_grep "$tmp/out" 'address 127.0.0.1: may be dialled'
expect_rc 78 "$aisb" policy test "$tmp/p.yaml" 'bad host:443'
expect_rc 78 "$aisb" policy test "$tmp/p.yaml" example.com:443 not-an-ip

# derive: a policy from apt's sources and npm's configured registry.
mkdir -p "$tmp/root/etc/apt/sources.list.d"
cat >"$tmp/root/etc/apt/sources.list" <<'SRC'
# a comment
deb http://mirror.example.test/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] https://user:secret@secure.example.test:8443/d bookworm main # trailing
deb-src http://mirror.example.test/debian bookworm main
deb cdrom:[Debian]/ bookworm main
SRC
cat >"$tmp/root/etc/apt/sources.list.d/extra.sources" <<'SRC'
Types: deb
URIs: http://one.example.test/a https://two.example.test/b
Suites: bookworm

Types: deb
Enabled: no
URIs: http://disabled.example.test/
SRC
expect_rc 0 "$aisb" policy derive apt --root "$tmp/root"
cp "$tmp/out" "$tmp/apt.yaml"
expect_grep "$tmp/apt.yaml" '^  - host: mirror.example.test$'
expect_grep "$tmp/apt.yaml" '^  - host: secure.example.test$'
expect_grep "$tmp/apt.yaml" '^    ports: \[8443\]$'
expect_grep "$tmp/apt.yaml" '^  - host: one.example.test$'
expect_grep "$tmp/apt.yaml" '^  - host: two.example.test$'
expect_grep "$tmp/apt.yaml" '^# 1 source\(s\) left out'
if grep -qE 'secret|disabled|cdrom' "$tmp/apt.yaml"; then bad "derive leaked: $(cat "$tmp/apt.yaml")"; else ok; fi
[ "$(grep -c 'host: mirror.example.test' "$tmp/apt.yaml")" = 1 ] && ok || bad "duplicate source"
expect_rc 0 "$aisb" policy check "$tmp/apt.yaml"
expect_rc 78 "$aisb" policy derive apt --root "$tmp/nowhere"
if command -v npm >/dev/null 2>&1; then
	npm_config_registry=https://npm.example.test:4873/ \
	    expect_rc 0 "$aisb" policy derive npm
	expect_grep "$tmp/out" '^  - host: npm.example.test$'
	expect_grep "$tmp/out" '^    ports: \[4873\]$'
else
	echo "note: npm not installed, derive npm not exercised"
fi

# An invalid policy: exit 78, file:line:col and a hint on stderr.
printf 'version: 1\nallow:\n  - host: "*.com"\n' >"$tmp/bad.yaml"
expect_rc 78 "$aisb" policy check "$tmp/bad.yaml"
expect_grep "$tmp/err" "^$tmp/bad.yaml:3:11: error: wildcard over a bare top-level label"
expect_grep "$tmp/err" '^  hint: '
expect_rc 78 "$aisb" policy check "$tmp/missing.yaml"
expect_grep "$tmp/err" 'cannot open'
expect_rc 78 "$aisb" policy frob "$tmp/p.yaml"
expect_rc 78 "$aisb" policy check
expect_rc 78 "$aisb"
expect_rc 0 "$aisb" version

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
