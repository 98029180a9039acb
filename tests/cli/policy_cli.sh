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

# A FIFO where the policy should be is refused at once, not waited on
# (timeout: the hang this guards against).
mkfifo "$tmp/fifo.yaml"
expect_rc 78 timeout 10 "$aisb" policy check "$tmp/fifo.yaml"
expect_grep "$tmp/err" 'not a regular file'

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

# --net direct: the plan the launcher writes from a policy (no podman).
export XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state
cat >"$tmp/direct.yaml" <<'YAML'
version: 1
allow:
  - host: api.example.com
    ports: [443, 8443]
  - host: "*.example.org"
  - host: api.example.com
    ports: [80]
  - host: git.example.net
    ports: [22, 443]
deny:
  - host: git.example.net
    ports: [22]
allow_ranges: [10.20.0.0/16]
dns:
  servers: ["127.0.0.1:5353", "192.0.2.53:53"]
YAML
expect_rc 0 "$aisb" --net direct --policy "$tmp/direct.yaml" --print-plan -- true
expect_grep "$tmp/out" '^mode direct$'
expect_grep "$tmp/out" '^allow-name api.example.com 80,443,8443$'
expect_grep "$tmp/out" '^allow-name git.example.net 443$'
expect_grep "$tmp/out" '^resolver 10.0.2.2 5353$'
expect_grep "$tmp/out" '^resolver 192.0.2.53 53$'
expect_grep "$tmp/out" '^allow-range 10.20.0.0/16$'
expect_grep "$tmp/out" '^dns-stub 127.0.0.1$'
if grep -q 'example.org' "$tmp/out"; then bad "a wildcard reached the plan"; else ok; fi
expect_grep "$tmp/err" "1 wildcard, regex or cidr allow rule\(s\) .* \(first: $tmp/direct.yaml:5:5 allow host: \*.example.org\)"
# without DNS servers, slirp4netns' forwarder
printf 'version: 1\nallow:\n  - host: a.example.com\n' >"$tmp/d2.yaml"
expect_rc 0 "$aisb" --net direct --policy "$tmp/d2.yaml" --print-plan -- true
expect_grep "$tmp/out" '^resolver 10.0.2.3$'
# what the enforcer could not hold is refused here (78), naming the rule
direct_refused() {	# direct_refused POLICY_TEXT STDERR_PATTERN
	printf '%b' "$1" >"$tmp/d.yaml"
	expect_rc 78 "$aisb" --net direct --policy "$tmp/d.yaml" --print-plan -- true
	expect_grep "$tmp/err" "$2"
}
direct_refused 'version: 1\nallow:\n  - host: "*.example.com"\n' \
    'needs at least one allow rule with an exact host name'
direct_refused 'version: 1\nallow:\n  - host: a.example.com\n    ports: [1000-1016]\n' \
    "$tmp/d.yaml:3:5 allow host: a.example.com: --net direct pins at most 16 ports"
direct_refused 'version: 1\nallow:\n  - host: a.example.com\ndns:\n  servers: ["[::1]:53"]\n' \
    'reaches the host.s loopback only at 127.0.0.1'

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
