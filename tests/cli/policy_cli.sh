#!/bin/bash
# aisb policy check|print|test, driven as a user would from a shell.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

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
# a sources file over the bound (256 KiB) is refused with its name and
# the bound, never cut: the source after the bound would be lost unseen
mkdir -p "$tmp/bigroot/etc/apt/sources.list.d"
cp "$tmp/root/etc/apt/sources.list" "$tmp/bigroot/etc/apt/"
awk 'BEGIN { print "deb http://early.example.test/d bookworm main";
    for (i = 0; i < 4000; i++) printf "# %070d\n", i;
    print "deb http://late.example.test/d bookworm main" }' \
    >"$tmp/bigroot/etc/apt/sources.list.d/big.list"
expect_rc 78 "$aisb" policy derive apt --root "$tmp/bigroot"
expect_grep "$tmp/err" 'sources\.list\.d/big\.list: larger than 262144 bytes, the most it reads of one file: nothing derived'
[ -s "$tmp/out" ] && bad "derive printed a policy from a refused file: $(cat "$tmp/out")" || ok
if command -v npm >/dev/null 2>&1; then
	npm_config_registry=https://npm.example.test:4873/ \
	    expect_rc 0 "$aisb" policy derive npm
	expect_grep "$tmp/out" '^  - host: npm.example.test$'
	expect_grep "$tmp/out" '^    ports: \[4873\]$'
else
	echo "note: npm not installed, derive npm not exercised"
fi

# derive says the session command after the YAML, as a comment: the
# output redirected to a file is still a policy.
expect_grep "$tmp/apt.yaml" '^# save as apt.yaml and run: aisb --policy apt.yaml -- apt-get update$'
expect_rc 0 "$aisb" policy derive --help
for k in apt npm pip git; do expect_grep "$tmp/out" "^  $k( |$)"; done
expect_grep "$tmp/out" '--workspace DIR'
expect_rc 78 "$aisb" policy derive cargo
expect_grep "$tmp/err" 'derive knows apt, npm, pip, git, lockfile and env'
expect_rc 78 "$aisb" policy derive pip --root /

# derive pip: PIP_* over the files, a later file over an earlier one,
# [install] over [global]; pip's default index when nothing is set.
pipenv() {	# pipenv CMD...: with a home and environment made here
	env -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_FIND_LINKS \
	    -u PIP_CONFIG_FILE HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" "$@"
}
mkdir -p "$tmp/home/.config/pip" "$tmp/home/.pip"
expect_rc 0 pipenv "$aisb" policy derive pip
[ -e /etc/pip.conf ] || [ -e /etc/xdg/pip/pip.conf ] || {
	expect_grep "$tmp/out" '^  - host: pypi.org$'
	expect_grep "$tmp/out" '^  - host: files.pythonhosted.org$'
}
cat >"$tmp/home/.pip/pip.conf" <<'INI'
[global]
index-url = https://legacy.example.test/simple
INI
cat >"$tmp/home/.config/pip/pip.conf" <<'INI'
# the user's file: after the legacy one, so it wins
[global]
index_url = https://user:s3cret@pypi.example.test:8443/simple
extra-index-url =
    https://extra1.example.test/simple
    http://extra2.example.test:8080/simple
[install]
find-links = https://links.example.test/wheels
[freeze]
index-url = https://freeze.example.test/
INI
expect_rc 0 pipenv "$aisb" policy derive pip
cp "$tmp/out" "$tmp/pip.yaml"
expect_grep "$tmp/pip.yaml" '^  - host: pypi.example.test$'
expect_grep "$tmp/pip.yaml" '^    ports: \[8443\]$'
expect_grep "$tmp/pip.yaml" '^  - host: extra1.example.test$'
expect_grep "$tmp/pip.yaml" '^  - host: extra2.example.test$'
expect_grep "$tmp/pip.yaml" '^  - host: links.example.test$'
if grep -qE 'legacy|freeze|s3cret|pypi.org|pythonhosted' "$tmp/pip.yaml"; then
	bad "derive pip: $(cat "$tmp/pip.yaml")"; else ok; fi
expect_grep "$tmp/pip.yaml" "^# save as pip.yaml and run: aisb --policy pip.yaml --package python3-venv -- "
expect_rc 0 "$aisb" policy check "$tmp/pip.yaml"
# PIP_CONFIG_FILE after the user's files, the variables over every file;
# the session command passes the variables by name, never their values
printf '[global]\nindex-url = https://cfgfile.example.test/simple\n' >"$tmp/pipcfg.conf"
expect_rc 0 pipenv PIP_CONFIG_FILE="$tmp/pipcfg.conf" "$aisb" policy derive pip
expect_grep "$tmp/out" '^  - host: cfgfile.example.test$'
if grep -q 'pypi.example.test' "$tmp/out"; then bad "PIP_CONFIG_FILE did not win"; else ok; fi
expect_rc 0 pipenv PIP_CONFIG_FILE="$tmp/pipcfg.conf" \
    PIP_INDEX_URL=https://tok:en@env.example.test/simple "$aisb" policy derive pip
expect_grep "$tmp/out" '^  - host: env.example.test$'
expect_grep "$tmp/out" 'aisb --policy pip.yaml --env PIP_INDEX_URL --package python3-venv'
if grep -qE 'cfgfile|tok:en' "$tmp/out"; then bad "derive pip env: $(cat "$tmp/out")"; else ok; fi
mkdir -p "$tmp/empty"
expect_rc 78 pipenv HOME="$tmp/empty" XDG_CONFIG_HOME="$tmp/empty" \
    PIP_INDEX_URL=file:///srv/wheels "$aisb" policy derive pip
expect_grep "$tmp/err" "pip's index is not an http\(s\) URL"

# derive git: the remotes of the workspace's .git/config (made here, not
# by git: no git needed), of a worktree through its .git file too.
mkdir -p "$tmp/repo/.git" "$tmp/wt"
cat >"$tmp/repo/.git/config" <<'GIT'
[core]
	bare = false
[remote "origin"]
	url = https://user:tok@git.example.test/team/repo.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "mirror"]
	url = ssh://git@ssh.example.test:2222/team/repo.git
	pushurl = git@push.example.test:team/repo.git
[remote "local"]
	url = /srv/git/repo.git
[remote "proto"]
	url = git://anon.example.test/repo.git
[url "https://never.example.test/"]
	insteadOf = gh:
GIT
expect_rc 0 "$aisb" policy derive git --workspace "$tmp/repo"
cp "$tmp/out" "$tmp/git.yaml"
expect_grep "$tmp/git.yaml" '^  - host: git.example.test$'
expect_grep "$tmp/git.yaml" '^  - host: ssh.example.test$'
expect_grep "$tmp/git.yaml" '^    ports: \[2222\]    # ssh$'
expect_grep "$tmp/git.yaml" '^  - host: push.example.test$'
expect_grep "$tmp/git.yaml" '^    ports: \[22\]    # ssh$'
expect_grep "$tmp/git.yaml" '^# 2 source\(s\) left out'
expect_grep "$tmp/git.yaml" '^# ssh remotes: git over ssh ignores proxy variables, so the gate never$'
expect_grep "$tmp/git.yaml" '^# save as git.yaml and run: aisb --net direct --policy git.yaml --package git --package openssh-client -- git fetch$'
if grep -qE 'user:tok|never.example|anon|/srv' "$tmp/git.yaml"; then bad "derive git: $(cat "$tmp/git.yaml")"; else ok; fi
expect_rc 0 "$aisb" policy check "$tmp/git.yaml"
# a worktree: .git is a file naming its folder, whose commondir is the repo's
mkdir -p "$tmp/repo/.git/worktrees/wt"
printf '../..\n' >"$tmp/repo/.git/worktrees/wt/commondir"
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$tmp" >"$tmp/wt/.git"
aisb_abs=$(cd "$(dirname "$aisb")" && pwd)/$(basename "$aisb")
cd "$tmp/wt"
expect_rc 0 "$aisb_abs" policy derive git
cd - >/dev/null
expect_grep "$tmp/out" '^  - host: git.example.test$'
# https only: the gate carries it, no --net direct
printf '[remote "origin"]\n\turl = https://git.example.test/r.git\n' >"$tmp/repo/.git/config"
expect_rc 0 "$aisb" policy derive git --workspace "$tmp/repo"
expect_grep "$tmp/out" '^# save as git.yaml and run: aisb --policy git.yaml --package git -- git fetch$'
expect_rc 78 "$aisb" policy derive git --workspace "$tmp/nowhere"
expect_grep "$tmp/err" 'no git repository'

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
# Inspected hosts (issue 29): a secret on a host without inspect is
# refused at its key; policy test --request decides a request and names
# the secrets the gate would add; a refused request says what to add.
printf 'version: 1\nallow:\n  - host: api.example.com\n    secrets: [{name: K, header: x-api-key}]\n' \
    >"$tmp/noinsp.yaml"
expect_rc 78 "$aisb" policy check "$tmp/noinsp.yaml"
expect_grep "$tmp/err" "^$tmp/noinsp.yaml:4:14: error: secrets: needs inspect: true"
expect_grep "$tmp/err" '^  hint: add inspect: true to this rule$'
# a secret that says not where its value goes: the sandbox would choose
printf 'version: 1\nallow:\n  - host: api.example.com\n    inspect: true\n    secrets:\n      - name: K\n' \
    >"$tmp/nowhere.yaml"
expect_rc 78 "$aisb" policy check "$tmp/nowhere.yaml"
expect_grep "$tmp/err" "^$tmp/nowhere.yaml:6:9: error: secret K says not where its value goes"
expect_grep "$tmp/err" '^  hint: write where the service reads it: header: x-api-key, scheme: bearer, scheme: basic with user:, or query: key$'
cat >"$tmp/insp.yaml" <<'EOF'
version: 1
allow:
  - host: api.example.com
    inspect: true
    requests: {allow: ["POST /v1/messages*"]}
    secrets: [{name: API_KEY, header: X-Api-Key}]
  - host: git.example.com
    inspect: true
    requests: {deny: ["POST */git-receive-pack"]}
    secrets: [{name: GIT_TOKEN, scheme: basic, user: x-access-token}]
  - host: plain.example.com
  - host: q.example.com
    inspect: true
    secrets: [{name: Q_KEY, query: key}]
EOF
expect_rc 0 "$aisb" policy test "$tmp/insp.yaml" q.example.com \
    --request "GET /v1/models"
expect_grep "$tmp/out" '^secret Q_KEY: query parameter key$'
expect_rc 0 "$aisb" policy test "$tmp/insp.yaml" api.example.com \
    --request "POST /v1/messages?beta=true"
expect_grep "$tmp/out" '^request POST /v1/messages\?beta=true: allow, allowed \(line 5, column 24: "POST /v1/messages\*"\)$'
expect_grep "$tmp/out" '^secret API_KEY: header x-api-key$'
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" api.example.com \
    --request "GET /v1/models"
expect_grep "$tmp/out" '^request GET /v1/models: deny, request not allowed$'
expect_grep "$tmp/out" '^- "GET /v1/models"$'
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "TRACE /o/r.git/info/refs"
expect_grep "$tmp/out" '^request TRACE /o/r.git/info/refs: deny, TRACE and TRACK echo the request back, with what the gate adds to it: never sent to an inspected host$'
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "POST /o/r.git/git-receive-pack"
expect_grep "$tmp/out" 'deny, request denied by rule \(line 9, column 23: "POST \*/git-receive-pack"\)'
# a push's discovery: decided as the push it announces, as the gate does,
# in the gate's words; a path parameter is no way around the entry
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "GET /o/r.git/info/refs?service=git-receive-pack"
expect_grep "$tmp/out" '^request GET /o/r.git/info/refs\?service=git-receive-pack: deny, git push refused at its discovery: the push it announces, POST /o/r.git/git-receive-pack, is denied by requests: entry POST \*/git-receive-pack \(line 9, column 23\)$'
expect_grep "$tmp/out" '^# a requests: deny entry refuses it: remove or narrow that entry$'
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "GET /o/r.git/info/refs?service=git-upload-pack&service=git-receive-pack"
expect_grep "$tmp/out" 'deny, a git discovery with an ambiguous query .*400 bad_request$'
expect_rc 0 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "GET /o/r.git/info/refs?service=git-upload-pack"
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "POST /o/r.git/git-receive-pack;x"
expect_grep "$tmp/out" 'deny, the path without its parameters'
expect_rc 0 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "POST /o/r.git/git-upload-pack"
expect_grep "$tmp/out" '^secret GIT_TOKEN: basic in authorization$'
expect_rc 1 "$aisb" policy test "$tmp/insp.yaml" git.example.com \
    --request "POST /o/r.git/./git-receive-pack"
expect_grep "$tmp/out" 'deny, a dot segment'
expect_rc 0 "$aisb" policy test "$tmp/insp.yaml" plain.example.com \
    --request "POST /anything"
expect_grep "$tmp/out" '^request: not inspected'
expect_rc 78 "$aisb" policy test "$tmp/insp.yaml" api.example.com \
    --request "POST"
expect_grep "$tmp/err" 'write METHOD PATH'
# the canonical form holds the keys and loads to the same identity
expect_rc 0 "$aisb" policy print "$tmp/insp.yaml"
cp "$tmp/out" "$tmp/insp2.yaml"
expect_grep "$tmp/insp2.yaml" '^    inspect: true$'
expect_grep "$tmp/insp2.yaml" '^        header: "x-api-key"$'
expect_grep "$tmp/insp2.yaml" '^        query: "key"$'
expect_rc 0 "$aisb" policy check "$tmp/insp2.yaml"
want=$(tail -n 1 "$tmp/insp2.yaml" | sed 's/^# //')
expect_rc 0 "$aisb" policy check "$tmp/insp.yaml"
expect_grep "$tmp/out" "^policy OK $want\$"

expect_rc 78 "$aisb" policy frob "$tmp/p.yaml"
expect_rc 78 "$aisb" policy check
expect_rc 78 "$aisb"
expect_rc 0 "$aisb" version

# derive apt|npm|pip: a source that resolves into a denied range (an IP
# literal here: nothing is looked up) gets the commented allow_ranges
# line for exactly its addresses; a public address gets none
mkdir -p "$tmp/aptroot/etc/apt"
printf 'deb http://127.0.0.5/debian bookworm main\n' >"$tmp/aptroot/etc/apt/sources.list"
expect_rc 0 "$aisb" policy derive apt --root "$tmp/aptroot"
expect_grep "$tmp/out" '^# 127.0.0.5 is an address the gate denies by default \(127.0.0.5 is loopback 127.0.0.0/8\)$'
expect_grep "$tmp/out" '^# allow_ranges: \[127.0.0.5/32\]$'
expect_rc 0 env PIP_INDEX_URL=http://10.1.2.3/simple PIP_CONFIG_FILE=/dev/null \
    "$aisb" policy derive pip
expect_grep "$tmp/out" '^# allow_ranges: \[10.1.2.3/32\]$'
expect_rc 0 env PIP_INDEX_URL=http://192.0.43.10/simple PIP_CONFIG_FILE=/dev/null \
    "$aisb" policy derive pip
if grep -q allow_ranges "$tmp/out"; then bad "a public address got allow_ranges"; cat "$tmp/out" >&2; else ok; fi
if command -v npm >/dev/null; then
	expect_rc 0 env npm_config_registry=http://127.0.0.9:4873/ "$aisb" policy derive npm
	expect_grep "$tmp/out" '^# allow_ranges: \[127.0.0.9/32\]$'
fi

# A misspelt key: the nearest key valid where it stands (two letters
# swapped are one edit: 'hots' is host, not ports)
printf 'version: 1\nallow:\n  - hots: a.example\n' >"$tmp/typo.yaml"
expect_rc 78 "$aisb" policy check "$tmp/typo.yaml"
expect_grep "$tmp/err" "typo.yaml:3:5: error: unknown key 'hots'"
expect_grep "$tmp/err" "did you mean 'host'\?"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
