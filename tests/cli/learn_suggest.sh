#!/bin/bash
# aisb policy suggest over audit logs shaped as aisb-gate --learn writes
# them (in a session folder of a state folder of the test's own, and as
# a path), and aisb --learn's refusals.  What suggest prints must load as
# a policy, whatever the log holds.  No network: the logs are text.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
aisb=${AISB:-./aisb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME=$tmp/state

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
check() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
# the names of the host: rules of a suggestion, sorted, on one line
names() { sed -n 's/^+\{0,1\}  - host: "\(.*\)"$/\1/p' "$1" | sort | tr '\n' ' '; }
loads() {	# loads FILE: aisb policy check accepts it
	local rc=0
	"$aisb" policy check "$1" >/dev/null 2>"$tmp/check.err" || rc=$?
	if [ "$rc" = 0 ]; then ok; else bad "$1 does not load: $(cat "$tmp/check.err")"; cat "$1" >&2; fi
}

# decision HOST PORT DECISION REASON [WOULD WOULD_REASON]: one audit line
decision() {
	local w=''
	[ -n "${5:-}" ] && w=",\"learn\":true,\"would\":\"$5\",\"would_reason\":\"$6\""
	printf '{"time":"2026-11-01T10:00:00.000Z","event":"decision","conn":1,"session":"session-x","client":"127.0.0.1:4000","method":"CONNECT","host":"%s","port":%s,"addr":"203.0.113.7","decision":"%s","status":200,"reason":"%s"%s,"dns_ms":1.0}\n' \
	    "$1" "$2" "$3" "$4" "$w"
}
closeline() {	# closeline HOST PORT UP DOWN
	printf '{"time":"2026-11-01T10:00:01.000Z","event":"close","conn":1,"client":"127.0.0.1:4000","method":"CONNECT","host":"%s","port":%s,"reason":"eof","learn":true,"bytes_up":%s,"bytes_down":%s,"duration_ms":3.0}\n' \
	    "$1" "$2" "$3" "$4"
}

id=0123456789abcdef01234567
sess=$XDG_STATE_HOME/aisb/sessions/$id
mkdir -p "$sess"
{
	decision api.example.com 443 allow allowed allow allowed
	closeline api.example.com 443 1200 54000
	decision api.example.com 443 allow allowed allow allowed
	decision cdn.example.com 443 allow allowed deny host_not_allowed
	decision cdn.example.com 8443 allow allowed deny host_not_allowed
	decision static.example.com 443 allow allowed deny host_not_allowed
	decision example.com 443 allow allowed deny host_not_allowed
	decision a.github.io 443 allow allowed deny host_not_allowed
	decision b.github.io 443 allow allowed deny host_not_allowed
	decision x.shop.co.uk 443 allow allowed deny host_not_allowed
	decision y.shop.co.uk 80 allow allowed deny port_not_allowed
	decision upload.example.net 443 allow allowed deny deny_rule
	# refused by address, failed, and literals
	decision metadata.example.org 80 deny address_denied deny host_not_allowed
	decision gone.example.org 443 error dns_failed deny host_not_allowed
	decision 169.254.169.254 80 deny address_denied deny host_not_allowed
	decision 10.1.2.3 443 allow allowed deny host_not_allowed
	decision 8.8.8.8 443 allow allowed deny host_not_allowed
	decision 2001:4860:4860::8888 443 allow allowed deny host_not_allowed
	# a log is a file: hostile names must not become rules
	printf '{"event":"decision","host":"evil\\"\\n  - host: \\"*\\"","port":443,"decision":"allow","reason":"allowed","learn":true}\n'
	printf '{"event":"decision","host":"UPPER.example.com","port":443,"decision":"allow","reason":"allowed"}\n'
	printf 'not json at all\n'
	printf '{"event":"decision","host":"long.example.com","port":443,"decision":"allow","detail":"%s"}\n' \
	    "$(head -c 20000 /dev/zero | tr '\0' a)"
	printf '{"event":"decision","host":"cut.example.com","port":443,"decision":"allow"'
} >"$sess/audit.jsonl"

# --- a learning session's suggestion: exact names, ports as seen
expect_rc 0 "$aisb" policy suggest "$id"
cp "$tmp/out" "$tmp/s.yaml"
loads "$tmp/s.yaml"
check "names" "$(names "$tmp/s.yaml")" \
    "a.github.io api.example.com b.github.io cdn.example.com example.com static.example.com upload.example.net x.shop.co.uk y.shop.co.uk "
expect_grep "$tmp/s.yaml" '^    ports: \[443, 8443\]$'
expect_grep "$tmp/s.yaml" '^  # api.example.com:443: 2 connection\(s\), 1200 B up, 52 KiB down; the session.s policy: allow$'
expect_grep "$tmp/s.yaml" 'upload.example.net:443: .*deny \(deny_rule\)'
# never: denied ranges, literals without --allow-ip, failed, hostile
expect_nogrep "$tmp/s.yaml" '^  - cidr:'
expect_nogrep "$tmp/s.yaml" '^ *- host: "\*"'
expect_grep "$tmp/s.yaml" '^#   metadata.example.org:80: refused \(address_denied\)$'
expect_grep "$tmp/s.yaml" '^#   gone.example.org:443: never connected \(dns_failed\)$'
expect_grep "$tmp/s.yaml" '^#   8.8.8.8:443: an IP literal \(--allow-ip proposes it\)$'
expect_grep "$tmp/s.yaml" '^#   evil"\?  - host: "\*":443: not a host name$'
expect_grep "$tmp/s.yaml" '^#   UPPER.example.com:443: not a host name$'
expect_nogrep "$tmp/s.yaml" 'long.example.com|cut.example.com'
# a unique prefix of the id, and the log's path, say the same
expect_rc 0 "$aisb" policy suggest 0123456
cmp -s "$tmp/out" "$tmp/s.yaml" && ok || bad "prefix: another suggestion"
expect_rc 0 "$aisb" policy suggest "$sess/audit.jsonl"
check "by path" "$(names "$tmp/out")" "$(names "$tmp/s.yaml")"

# --allow-ip: public literals as /32 and /128, never a denied range
expect_rc 0 "$aisb" policy suggest --allow-ip "$id"
cp "$tmp/out" "$tmp/ip.yaml"
loads "$tmp/ip.yaml"
expect_grep "$tmp/ip.yaml" '^  - cidr: "8.8.8.8/32"$'
expect_grep "$tmp/ip.yaml" '^  - cidr: "2001:4860:4860::8888/128"$'
expect_nogrep "$tmp/ip.yaml" 'cidr: "(10\.|169\.254)'
expect_grep "$tmp/ip.yaml" '^#   10.1.2.3:443: an address in a denied range$'

# --group: two or more names below one registrable domain; the apex stays
# exact, and a public suffix (github.io, co.uk) is never grouped over
expect_rc 0 "$aisb" policy suggest --group "$id"
cp "$tmp/out" "$tmp/g.yaml"
loads "$tmp/g.yaml"
check "grouped names" "$(names "$tmp/g.yaml")" \
    "*.example.com *.shop.co.uk a.github.io b.github.io example.com upload.example.net "
rule=$(grep -A1 '^  - host: "\*.example.com"$' "$tmp/g.yaml" || true)
grep -q 'ports: \[443, 8443\]$' <<<"$rule" && ok || bad "group ports: $(cat "$tmp/g.yaml")"
rule=$(grep -A1 '^  - host: "\*.shop.co.uk"$' "$tmp/g.yaml" || true)
grep -q 'ports: \[80, 443\]$' <<<"$rule" && ok || bad "co.uk ports: $(cat "$tmp/g.yaml")"
expect_grep "$tmp/g.yaml" '# --group: 3 names below example.com:'

# --group never puts a wildcard at a public suffix (the list's private
# section too: s3.amazonaws.com), over a domain holding one (amazonaws.com
# holds s3.amazonaws.com), nor at or under a domain where anyone gets a
# name that an older list lacks (blob.core.windows.net, ngrok-free.app):
# each "*." there admits an attacker's own bucket, account or tunnel
{
	for h in a-bucket.s3.amazonaws.com b-bucket.s3.amazonaws.com \
	    x.amazonaws.com y.amazonaws.com acct1.blob.core.windows.net \
	    acct2.blob.core.windows.net abc.ngrok-free.app def.ngrok-free.app \
	    a.pkg.example.org b.pkg.example.org; do
		decision "$h" 443 allow allowed deny host_not_allowed
	done
} >"$tmp/tenants.jsonl"
expect_rc 0 "$aisb" policy suggest --group "$tmp/tenants.jsonl"
cp "$tmp/out" "$tmp/t.yaml"
loads "$tmp/t.yaml"
check "never over a tenant's suffix" "$(names "$tmp/t.yaml")" \
    "*.example.org a-bucket.s3.amazonaws.com abc.ngrok-free.app acct1.blob.core.windows.net acct2.blob.core.windows.net b-bucket.s3.amazonaws.com def.ngrok-free.app x.amazonaws.com y.amazonaws.com "

# --base: left out what the base allows or denies by a rule; a diff that
# patch applies to the base's canonical form
cat >"$tmp/base.yaml" <<'EOF'
version: 1
allow:
  - host: api.example.com
    ports: [443]
deny:
  - host: upload.example.net
EOF
expect_rc 0 "$aisb" policy suggest --base "$tmp/base.yaml" "$id"
cp "$tmp/out" "$tmp/d.diff"
expect_grep "$tmp/d.diff" '^\+\+\+ '
check "diff names" "$(names "$tmp/d.diff")" \
    "a.github.io b.github.io cdn.example.com example.com static.example.com x.shop.co.uk y.shop.co.uk "
expect_grep "$tmp/d.diff" '^#   api.example.com:443: allowed by the base already; .*base.yaml:3:5 allow host: api.example.com$'
expect_grep "$tmp/d.diff" '^#   upload.example.net:443: denied by a deny rule of the base'
"$aisb" policy print "$tmp/base.yaml" >"$tmp/canon.yaml"
rc=0; patch -s "$tmp/canon.yaml" <"$tmp/d.diff" >/dev/null 2>&1 || rc=$?
check "patch" "$rc" 0
loads "$tmp/canon.yaml"
expect_rc 0 "$aisb" policy test "$tmp/canon.yaml" cdn.example.com:8443
expect_rc 1 "$aisb" policy test "$tmp/canon.yaml" upload.example.net:443
expect_rc 1 "$aisb" policy test "$tmp/canon.yaml" other.example.com:443

# bases without allow rules: only deny rules, and none at all
for base in 'version: 1
deny:
  - host: upload.example.net' 'version: 1
allow: []'; do
	printf '%s\n' "$base" >"$tmp/b2.yaml"
	expect_rc 0 "$aisb" policy suggest --base "$tmp/b2.yaml" "$id"
	cp "$tmp/out" "$tmp/d2.diff"
	"$aisb" policy print "$tmp/b2.yaml" >"$tmp/c2.yaml"
	rc=0; patch -s "$tmp/c2.yaml" <"$tmp/d2.diff" >/dev/null 2>&1 || rc=$?
	check "patch onto: $base" "$rc" 0
	loads "$tmp/c2.yaml"
	expect_rc 0 "$aisb" policy test "$tmp/c2.yaml" api.example.com:443
done
# a base that allows it all: nothing to add
printf 'version: 1\nallow:\n  - host: "*.example.com"\n    ports: [443, 8443]\n  - host: example.com\n  - host: "*.github.io"\n  - host: "*.shop.co.uk"\n  - host: upload.example.net\n' >"$tmp/all.yaml"
expect_rc 0 "$aisb" policy suggest --base "$tmp/all.yaml" "$id"
expect_grep "$tmp/out" '^# nothing to add: '

# --- what suggest refuses
expect_rc 78 "$aisb" policy suggest ffffffff
expect_grep "$tmp/err" "no session matches 'ffffffff'"
expect_rc 78 "$aisb" policy suggest 'not-an-id'
expect_rc 78 "$aisb" policy suggest --base "$tmp/nonexistent.yaml" "$id"
printf 'version: 1\nallow:\n  - host: "*"\n' >"$tmp/bad.yaml"
expect_rc 78 "$aisb" policy suggest --base "$tmp/bad.yaml" "$id"
expect_grep "$tmp/err" 'bad.yaml:3'
expect_rc 1 "$aisb" policy suggest "$tmp/no-such.log"
printf '{"event":"close","host":"a.example.com","port":443}\n' >"$tmp/empty.log"
expect_rc 78 "$aisb" policy suggest "$tmp/empty.log"
expect_grep "$tmp/err" 'no decisions'
# not a learning log: said, and what it allowed is still proposed
decision plain.example.com 443 allow allowed >"$tmp/plain.log"
expect_rc 0 "$aisb" policy suggest "$tmp/plain.log"
expect_grep "$tmp/err" 'not a learning session'
check "plain names" "$(names "$tmp/out")" "plain.example.com "

# --- aisb --learn: refused where there is no gate of the session's own
expect_rc 78 "$aisb" --learn --net none -- true
expect_grep "$tmp/err" '^aisb: --learn needs a gate of the session.s own: --net none'
expect_rc 78 "$aisb" --learn --net direct -- true
expect_rc 78 "$aisb" --learn --gate shared -- true
expect_grep "$tmp/err" 'drop --gate'
# a flag only: no config key, no AISB_LEARN
mkdir -p "$tmp/cfg/aisb"
printf 'learn: true\n' >"$tmp/cfg/aisb/config.yaml"
expect_rc 78 env XDG_CONFIG_HOME="$tmp/cfg" "$aisb" --print-config -- true
expect_grep "$tmp/err" 'learn'
# the help lists it
expect_rc 0 "$aisb" --help
expect_grep "$tmp/out" '--learn'
expect_rc 0 "$aisb" help policy suggest
expect_grep "$tmp/out" '--group'

echo "$pass checks passed, $fail failed"
[ "$fail" = 0 ]
