#!/bin/bash
# aisb policy derive lockfile|env and aisb --allow-from-lockfile, driven as
# a user would: real-shaped files made here, the printed policy checked by
# aisb policy check, refusals (exit 78) naming the file and the line.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

aisb=${AISB:-./aisb}
aisb=$(cd "$(dirname "$aisb")" && pwd)/$(basename "$aisb")
tmp=$(mktemp -d)
gates=()
cleanup() {
	local g
	for g in "${gates[@]}"; do "$aisb" gate down "$g" >/dev/null 2>&1 || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

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
expect_nogrep() {	# expect_nogrep FILE PATTERN
	if grep -qE -- "$2" "$1"; then bad "$1 has /$2/"; cat "$1" >&2; else ok; fi
}
# hosts FILE: the host:port pairs of a derived policy, one line, in order
hosts() {
	awk '/^  - host: /{h=$3} /^    ports: /{gsub(/[][]/,"",$2); printf "%s%s:%s", n++ ? " " : "", h, $2} END{print ""}' "$1"
}
expect_hosts() {	# expect_hosts FILE "h:443 ..."
	local got; got=$(hosts "$1")
	if [ "$got" = "$2" ]; then ok; else bad "hosts '$got', expected '$2'"; cat "$1" >&2; fi
}
# the user's own configuration stays out of it
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
    XDG_STATE_HOME="$tmp/state"
unset $(env | sed -n 's/^\(AISB_[A-Z_]*\)=.*/\1/p') 2>/dev/null || true
unset GOPROXY NPM_CONFIG_USERCONFIG npm_config_userconfig CARGO_HOME \
    PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_CONFIG_FILE || true
mkdir -p "$HOME" "$tmp/ws" "$tmp/empty"
# go.sum's proxy comes from go env when go is installed: not here
mkdir -p "$tmp/bin"
PATH_NOGO=$tmp/bin
for p in awk grep sed cat; do ln -s "$(command -v $p)" "$tmp/bin/$p"; done

# --- a workspace with one lockfile of each kind ---------------------------
cd "$tmp/ws"
cat >package-lock.json <<'EOF'
{
  "name": "demo",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": { "name": "demo" },
    "node_modules/left-pad": {
      "version": "1.3.0",
      "resolved": "https://registry.example.test/left-pad/-/left-pad-1.3.0.tgz",
      "integrity": "sha512-abc"
    },
    "node_modules/plain": { "resolved": "http://plain.example.test/p.tgz" },
    "node_modules/ip": { "resolved": "https://192.0.2.1/p.tgz" }
  }
}
EOF
cat >yarn.lock <<'EOF'
# yarn lockfile v1


left-pad@^1.3.0:
  version "1.3.0"
  resolved "https://yarn.example.test/left-pad/-/left-pad-1.3.0.tgz#5b8a"
EOF
cat >.yarnrc.yml <<'EOF'
npmRegistryServer: "https://berry.example.test"
EOF
cat >Cargo.lock <<'EOF'
version = 3

[[package]]
name = "libc"
version = "0.2.150"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "89d92a4743f9a61002fae18374ed11e7973f530cb3a3255fb354818118b2203c"
EOF
cat >requirements.txt <<'EOF'
--index-url https://pypi.example.test/simple
certifi==2023.11.17 \
    --hash=sha256:e036ab49d5b79556f99cfc2d9320b34cfbe5be05c5871b51de9329f0603b0474
EOF
cat >go.sum <<'EOF'
github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=
EOF
cat >Gemfile.lock <<'EOF'
GEM
  remote: https://rubygems.org/
  specs:
    rake (13.1.0)

BUNDLED WITH
   2.4.22
EOF

expect_rc 0 env PATH="$PATH_NOGO" "$aisb" policy derive lockfile
cp "$tmp/out" "$tmp/lock.yaml"
expect_hosts "$tmp/lock.yaml" "registry.example.test:443 yarn.example.test:443 \
index.crates.io:443 static.crates.io:443 proxy.golang.org:443 \
rubygems.org:443 pypi.example.test:443 berry.example.test:443"
expect_grep "$tmp/lock.yaml" '# \./package-lock\.json:9$'
expect_grep "$tmp/lock.yaml" '^# left out: 1 http URL\(s\) \(--allow-http adds them on port 80\), 1 IP literal\(s\)$'
expect_grep "$tmp/lock.yaml" "^# go.sum's modules come through go's default GOPROXY"
expect_rc 0 "$aisb" policy check "$tmp/lock.yaml"
expect_grep "$tmp/out" '^policy OK sha256:'
# each allowed on 443, nothing else
expect_rc 0 "$aisb" policy test "$tmp/lock.yaml" registry.example.test:443
expect_rc 1 "$aisb" policy test "$tmp/lock.yaml" registry.example.test:80
expect_rc 1 "$aisb" policy test "$tmp/lock.yaml" plain.example.test:80

# --allow-http: the http URL on port 80
expect_rc 0 env PATH="$PATH_NOGO" "$aisb" policy derive lockfile --allow-http package-lock.json
expect_hosts "$tmp/out" "registry.example.test:443 plain.example.test:80"
# named files, GOPROXY from the environment without go
expect_rc 0 env PATH="$PATH_NOGO" GOPROXY=https://goproxy.example.test,direct \
    "$aisb" policy derive lockfile go.sum Gemfile.lock
expect_hosts "$tmp/out" "goproxy.example.test:443 rubygems.org:443"
expect_grep "$tmp/out" 'GOPROXY \(go is not installed\): https://goproxy.example.test,direct'
# go installed: go env GOPROXY, run so that no go.mod makes it fetch a toolchain
mkdir -p "$tmp/fakego"
cat >"$tmp/fakego/go" <<'EOF'
#!/bin/sh
[ "$GOTOOLCHAIN" = local ] || { echo "go run with GOTOOLCHAIN=$GOTOOLCHAIN" >&2; exit 1; }
[ "$1 $2" = "env GOPROXY" ] || exit 2
echo "https://goproxy-env.example.test,direct"
EOF
chmod +x "$tmp/fakego/go"
expect_rc 0 env PATH="$tmp/fakego:$PATH_NOGO" GOTOOLCHAIN=auto \
    GOPROXY=https://not-this.example.test "$aisb" policy derive lockfile go.sum
expect_hosts "$tmp/out" "goproxy-env.example.test:443"
expect_grep "$tmp/out" "^# go.sum's modules come through go env GOPROXY: https://goproxy-env"
# --workspace DIR
cd "$tmp"
expect_rc 0 env PATH="$PATH_NOGO" "$aisb" policy derive lockfile --workspace "$tmp/ws"
expect_grep "$tmp/out" "# $tmp/ws/package-lock\\.json:9\$"

# --- refusals: exit 78, file and line --------------------------------------
mkdir -p "$tmp/bad"
printf '{\n  "resolved": "https://bad host.example.test/x"\n}\n' >"$tmp/bad/package-lock.json"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/package-lock.json"
expect_grep "$tmp/err" "^aisb: $tmp/bad/package-lock.json: line 2: the host of a URL"
expect_rc 78 "$aisb" policy derive lockfile --workspace "$tmp/bad"
printf 'version = 3\n[[package]]\nsource = "registry+https://x\n' >"$tmp/bad/Cargo.lock"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/Cargo.lock"
expect_grep "$tmp/err" "Cargo.lock: line 3: a string that does not close"
printf 'not a go.sum\n' >"$tmp/bad/go.sum"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/go.sum"
expect_grep "$tmp/err" "go.sum: line 1: not 'MODULE VERSION h1:HASH'"
# no wildcard, no range sneaks in
printf '{"resolved": "https://*.example.test/x"}\n' >"$tmp/bad/npm-shrinkwrap.json"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/npm-shrinkwrap.json"
# huge: a line over the bound, then a file over the bound
head -c 70000 /dev/zero | tr '\0' a >"$tmp/bad/yarn.lock"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/yarn.lock"
expect_grep "$tmp/err" "yarn.lock: line 1: longer than 65536 bytes"
truncate -s 33M "$tmp/bad/poetry.lock"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/bad/poetry.lock"
expect_grep "$tmp/err" 'poetry.lock: larger than 32 MiB'
# not a lockfile, no lockfile, a workspace's link
expect_rc 78 "$aisb" policy derive lockfile "$tmp/ws/.yarnrc.yml.missing"
printf '{}' >"$tmp/package.json"
expect_rc 78 "$aisb" policy derive lockfile "$tmp/package.json"
expect_grep "$tmp/err" 'not a lockfile aisb reads'
expect_rc 78 "$aisb" policy derive lockfile --workspace "$tmp/empty"
expect_grep "$tmp/err" "no lockfile in $tmp/empty"
mkdir -p "$tmp/linked"
ln -s "$tmp/ws/package-lock.json" "$tmp/linked/package-lock.json"
expect_rc 78 "$aisb" policy derive lockfile --workspace "$tmp/linked"
# flags of other kinds
expect_rc 78 "$aisb" policy derive apt --allow-http
expect_rc 78 "$aisb" policy derive git extra/path
expect_rc 78 "$aisb" policy derive lockfile --root /
expect_rc 78 "$aisb" policy derive env some/path

# --- derive env: the user's tool configurations -----------------------------
mkdir -p "$HOME/.cargo" "$tmp/root/etc/apt" "$tmp/envws"
cat >"$HOME/.npmrc" <<'EOF'
registry=https://npm.example.test/
@corp:registry=https://corp.example.test/npm/
//corp.example.test/npm/:_authToken=s3cret-token
EOF
cat >"$HOME/.cargo/config.toml" <<'EOF'
[source.crates-io]
replace-with = "mirror"

[source.mirror]
registry = "sparse+https://cargo-mirror.example.test/index/"
EOF
cat >"$HOME/.gitconfig" <<'EOF'
[url "https://git-mirror.example.test/github/"]
	insteadOf = https://github.com/
EOF
printf '[global]\nindex-url = https://pip-mirror.example.test/simple\n' >"$tmp/pip.conf"
printf 'deb https://apt-mirror.example.test/debian bookworm main\n' \
    >"$tmp/root/etc/apt/sources.list"
expect_rc 0 env PIP_CONFIG_FILE="$tmp/pip.conf" "$aisb" policy derive env \
    --root "$tmp/root" --workspace "$tmp/envws"
cp "$tmp/out" "$tmp/env.yaml"
expect_hosts "$tmp/env.yaml" "npm.example.test:443 corp.example.test:443 \
git-mirror.example.test:443 cargo-mirror.example.test:443 \
pip-mirror.example.test:443 apt-mirror.example.test:443"
expect_nogrep "$tmp/env.yaml" 's3cret'
expect_rc 0 "$aisb" policy check "$tmp/env.yaml"
printf 'registry=https://bad host/\n' >"$HOME/.npmrc"
expect_rc 78 "$aisb" policy derive env --root "$tmp/root"
expect_grep "$tmp/err" "$HOME/.npmrc: line 1: the host of a URL"

# --- --allow-from-lockfile: the session's policy -----------------------------
cat >"$tmp/base.yaml" <<'EOF'
version: 1
allow:
  - host: "*.example.org"
    ports: [443]
deny:
  - host: rubygems.org
EOF
cd "$tmp/ws"
expect_rc 0 env PATH="$PATH_NOGO:$PATH" "$aisb" --policy "$tmp/base.yaml" \
    --print-policy -- true
expect_nogrep "$tmp/out" 'registry\.example\.test'
expect_rc 0 env PATH="$PATH_NOGO" "$aisb" --policy "$tmp/base.yaml" \
    --allow-from-lockfile --print-policy -- true
cp "$tmp/out" "$tmp/session.yaml"
expect_grep "$tmp/session.yaml" "^# lockfile $tmp/ws/package-lock\\.json:9: registry\\.example\\.test:443\$"
expect_grep "$tmp/session.yaml" '^  - host: "registry\.example\.test"$'
expect_grep "$tmp/session.yaml" '^  - host: "\*\.example\.org"$'
# the user's deny rule wins, and the session says so
expect_grep "$tmp/err" "rubygems.org:443 \\($tmp/ws/Gemfile.lock:2\\) stays denied by $tmp/base.yaml:6:5"
# the dump is a policy: only 443, and the deny holds
sed -n '/^version:/,$p' "$tmp/session.yaml" >"$tmp/session-policy.yaml"
expect_rc 0 "$aisb" policy test "$tmp/session-policy.yaml" index.crates.io:443
expect_rc 1 "$aisb" policy test "$tmp/session-policy.yaml" index.crates.io:80
expect_rc 1 "$aisb" policy test "$tmp/session-policy.yaml" rubygems.org:443
expect_rc 1 "$aisb" policy test "$tmp/session-policy.yaml" plain.example.test:80
# a lockfile's host the user's policy inspects: inspected still, the
# merged rules of that name saying the same
cat >"$tmp/base-insp.yaml" <<'EOF'
version: 1
allow:
  - host: registry.example.test
    inspect: true
    requests:
      deny: ["PUT /*"]
EOF
expect_rc 0 env PATH="$PATH_NOGO" "$aisb" --policy "$tmp/base-insp.yaml" \
    --allow-from-lockfile --print-policy -- true
expect_grep "$tmp/out" '^    inspect: true$'
expect_grep "$tmp/out" '^      deny: \["PUT /\*"\]$'
# the environment and the user config may ask for it; a project config not
expect_rc 0 env PATH="$PATH_NOGO" AISB_ALLOW_FROM_LOCKFILE=true "$aisb" \
    --policy "$tmp/base.yaml" --print-policy -- true
expect_grep "$tmp/out" 'registry\.example\.test'
printf 'allow_from_lockfile: true\n' >"$tmp/ws/.aisb.yaml"
expect_rc 78 "$aisb" --policy "$tmp/base.yaml" --print-policy -- true
expect_grep "$tmp/err" "a project config may not set 'allow_from_lockfile'"
rm "$tmp/ws/.aisb.yaml"
# a malformed lockfile, or none: the session does not start
cd "$tmp/bad"
expect_rc 78 "$aisb" --policy "$tmp/base.yaml" --allow-from-lockfile --print-policy -- true
expect_grep "$tmp/err" 'the session does not start'
cd "$tmp/empty"
expect_rc 78 "$aisb" --policy "$tmp/base.yaml" --allow-from-lockfile --print-policy -- true
expect_grep "$tmp/err" 'no lockfile in'

# a named gate's policy is checked, never widened; gate up does not take it
aisbgate=$(dirname "$aisb")/aisb-gate
if [ -x "$aisbgate" ]; then
	cd "$tmp/ws"
	g=aisbtest-lockfile-$$
	gates+=("$g")
	expect_rc 78 "$aisb" gate up "$g" --allow-from-lockfile
	expect_grep "$tmp/err" 'gate up: --allow-from-lockfile \(--allow-from-lockfile\): a gate enforces its policy file as written'
	expect_rc 0 "$aisb" gate up "$g" --idle 60s --policy "$tmp/base.yaml"
	expect_rc 78 env PATH="$PATH_NOGO" "$aisb" --gate "$g" --allow-from-lockfile --dry-run -- true
	expect_grep "$tmp/err" "^aisb: --allow-from-lockfile: registry.example.test:443 \\($tmp/ws/package-lock.json:9\\) is not allowed by gate $g's policy"
	"$aisb" gate down "$g" >/dev/null 2>&1 || true
	# a gate whose policy has them all: the session runs under it as it is
	sed -n '/^version:/,$p' "$tmp/session.yaml" | sed '/^# sha256/d' >"$tmp/gate.yaml"
	sed -i '/^deny:/,/^allow_ranges/{/^deny:/d;/^  /d}' "$tmp/gate.yaml"
	expect_rc 0 "$aisb" gate up "$g" --idle 60s --policy "$tmp/gate.yaml"
	expect_rc 0 env PATH="$PATH_NOGO" "$aisb" --gate "$g" --allow-from-lockfile --print-policy -- true
	expect_grep "$tmp/out" "^# lockfile $tmp/ws/package-lock\\.json:9: registry\\.example\\.test:443\$"
	"$aisb" gate down "$g" >/dev/null 2>&1 || true
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
