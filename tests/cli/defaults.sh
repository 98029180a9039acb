#!/bin/bash
# What aisb does with nothing configured, and what its previews and records
# say: the policy a session uses when none is named (build tree copy,
# installed copy, the user's own), the line that says so, the ulimits of
# --dry-run against the ones a session passes, and sessions show's times.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

# a user with no config at all
. "$(dirname "$0")/lib.sh"
built=$(cd "$top_builddir" && pwd)/aisb-default-policy.yaml
policy_of() { sed -n 's/^policy  *\([^ ]*\) .*/\1/p' "$tmp/out"; }

# 1. the build tree: the shipped default.yaml, copied next to aisb by make
check "make copied the default policy" "$(cmp -s "$built" \
    "$top_srcdir/contrib/policies/default.yaml" && echo same)" same
run "$aisb" --print-config
check "print-config: exit" "$rc" 0
check "no config: the build tree's default" "$(policy_of)" "$built"
sha=$("$aisb" policy check "$built" | sed -n 's/^policy OK sha256:\(.\{12\}\).*/\1/p')
run "$aisb" --dry-run -- true
check "dry run: exit" "$rc" 0
check "dry run: first line" "$(sed -n 1p "$tmp/err")" \
    "aisb: policy: the shipped default, $built (build tree copy, sha256:$sha)"
check "dry run: second line" "$(sed -n 2p "$tmp/err")" \
    "aisb: to write your own: copy it to $XDG_CONFIG_HOME/aisb/policy.yaml and edit it (docs/policy.md), or pass --policy FILE"
run "$aisb" --quiet
check "no command: exit" "$rc" 78
check "no command: says so" "$(cat "$tmp/err")" \
    "aisb: no command to run: aisb [flags] [--] COMMAND [ARGS...]"
run "$aisb" --quiet --dry-run -- true
check "--quiet: no policy line" "$(grep -c 'shipped default' "$tmp/err" || true)" 0
run env AISB_QUIET=1 "$aisb" --dry-run -- true
check "AISB_QUIET: no policy line" "$(grep -c 'shipped default' "$tmp/err" || true)" 0

# 2. an installed aisb (nothing next to it) uses the installed copy
mkdir -p "$tmp/bin"
cp "$aisb" "$tmp/bin/aisb"
run "$tmp/bin/aisb" --print-config
case $(policy_of) in
*/share/aisb/policies/default.yaml) ok ;;
*) bad "installed: policy $(policy_of)" ;;
esac

# 3. the user's own policy wins over the shipped one, and nothing is said
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'version: 1\nallow:\n  - host: own.test\n    ports: [443]\n' \
    >"$XDG_CONFIG_HOME/aisb/policy.yaml"
run "$aisb" --print-config
check "user policy wins" "$(policy_of)" "$XDG_CONFIG_HOME/aisb/policy.yaml"
run "$aisb" --dry-run -- true
check "user policy: no default line" "$(grep -c 'shipped default' "$tmp/err" || true)" 0
# ... and a flag over both
printf 'version: 1\nallow:\n  - host: flag.test\n    ports: [443]\n' >"$tmp/flag.yaml"
run "$aisb" --policy "$tmp/flag.yaml" --print-config
check "--policy wins" "$(policy_of)" "$tmp/flag.yaml"
rm "$XDG_CONFIG_HOME/aisb/policy.yaml"

# 3b. a base image a config file or the environment chose is said, with
# the file and line, or the variable; one typed on the command line is
# not; a project config may not choose one at all (78, with the line for
# the user config)
image_line() { grep '^aisb: image: ' "$tmp/err" || true; }
printf 'image: localhost/team/base:2\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" --dry-run -- true
check "user config image: exit" "$rc" 0
check "user config image: said" "$(image_line)" \
    "aisb: image: base localhost/team/base:2, from the config file $XDG_CONFIG_HOME/aisb/config.yaml:1:8 (not aisb's own base: its build steps run without network, and it takes no --package)"
run "$aisb" --quiet --dry-run -- true
check "user config image, --quiet: not said" "$(image_line)" ""
rm "$XDG_CONFIG_HOME/aisb/config.yaml"
run env AISB_IMAGE=docker.io/library/debian:bookworm-slim "$aisb" --dry-run -- true
check "AISB_IMAGE: said" "$(image_line)" \
    "aisb: image: base docker.io/library/debian:bookworm-slim, from the environment, AISB_IMAGE"
run "$aisb" --image localhost/team/base:2 --dry-run -- true
check "--image: not said" "$(image_line)" ""
# offline: the offline base by name, aisb's own (no foreign note), which
# the preview builds on without a registry's name (no pull, no fallback)
printf 'image: offline\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" --dry-run -- true
check "image: offline: said, aisb's own" "$(image_line)" \
    "aisb: image: base offline, from the config file $XDG_CONFIG_HOME/aisb/config.yaml:1:8"
rm "$XDG_CONFIG_HOME/aisb/config.yaml"
for how in "--image offline --print-containerfile" "image containerfile --base offline"; do
	read -r -a args <<<"$how"
	run "$aisb" "${args[@]}"
	check "$how: exit" "$rc" 0
	check "$how: the offline base" "$(sed -n 's/^FROM \(localhost\/aisb-base\):[0-9a-f]*$/\1/p' "$tmp/out")" \
	    localhost/aisb-base
done
run "$aisb" --dry-run -- true
check "default: not said" "$(image_line)" ""
printf 'image: localhost/team/base:2\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --dry-run -- true
check "project config image: exit" "$rc" 78
check "project config image: refused" "$(cat "$tmp/err")" \
    "aisb: $tmp/ws/.aisb.yaml:1:8: a project config may not set 'image' (the base's programs run in every session and in the image build); to have it, write 'image: localhost/team/base:2' in $XDG_CONFIG_HOME/aisb/config.yaml, or pass --image localhost/team/base:2"
rm "$tmp/ws/.aisb.yaml"

# 4. the ulimits --dry-run shows are the session's choice: the hard limit,
# nofile capped at 65536 and nproc at 32768 (podman's conmon), whatever
# the host allows above that (it showed nproc 65536, sessions passed 32768)
ulimits() {	# ulimits PRLIMIT-ARGS...: "NOFILE NPROC" of a dry run
	rc=0
	(cd "$tmp/ws" && prlimit "$@" "$aisb" --quiet --dry-run -- true) \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	echo "$(sed -n 's/.*--ulimit=nofile=\([0-9]*\):\1.*/\1/p' "$tmp/out") $(sed -n 's/.*--ulimit=nproc=\([0-9]*\):\1.*/\1/p' "$tmp/out")"
}
if command -v prlimit >/dev/null; then
	check "ulimits: nproc above the cap" "$(ulimits --nproc=40000:40000 --nofile=3000:3000)" "3000 32768"
	check "ulimits: below the caps" "$(ulimits --nproc=2000:2000 --nofile=1500:1500)" "1500 2000"
	# raising a hard limit needs CAP_SYS_RESOURCE, which a container may lack
	if prlimit --nproc=unlimited:unlimited --nofile=200000:200000 true 2>/dev/null; then
		check "ulimits: unlimited" "$(ulimits --nproc=unlimited:unlimited --nofile=200000:200000)" "65536 32768"
	fi
else
	echo "prlimit not found: ulimit checks skipped"
fi

# 5. sessions show: times in UTC as ls prints them; the record keeps epochs
id=0123456789abcdef01234567
mkdir -p "$XDG_STATE_HOME/aisb/sessions/$id"
printf 'session %s\nstarted 1796080204\nended 1796080265\nexit 0\ncommand true\nstartedness 5\n' \
    "$id" >"$XDG_STATE_HOME/aisb/sessions/$id/record"
run "$aisb" sessions show 0123
check "show: exit" "$rc" 0
check "show: started" "$(grep '^started ' "$tmp/out")" "started 2026-11-30 23:10:04 UTC"
check "show: ended" "$(grep '^ended ' "$tmp/out")" "ended 2026-11-30 23:11:05 UTC"
check "show: other lines as they are" "$(grep '^startedness' "$tmp/out")" "startedness 5"
run "$aisb" sessions ls
check "ls: the same start" "$(awk -v id=$id '$1 == id { print $2, $3 }' "$tmp/out")" \
    "2026-11-30 23:10:04"

# 6. a record over its bound (64 KiB) is refused, not read in part: the
# fields in its first bytes must not be shown as the session's end
big=fedcba9876543210fedcba98
mkdir -p "$XDG_STATE_HOME/aisb/sessions/$big"
{ printf 'session %s\nstarted 1796080204\nexit 0\ncommand true\n' "$big"
  head -c 70000 /dev/zero | tr '\0' 'x'; echo; } \
    >"$XDG_STATE_HOME/aisb/sessions/$big/record"
run "$aisb" sessions show fedc
check "big record: show exit" "$rc" 0
check "big record: no field shown" "$(grep -c '^exit ' "$tmp/out" || true)" 0
check "big record: refused" "$(grep -c 'record refused: .*larger than 65536 bytes' "$tmp/out" || true)" 1
run "$aisb" sessions ls
check "big record: ls exit" "$(awk -v id=$big '$1 == id { print $4 }' "$tmp/out")" "?"
check "big record: ls says why" "$(grep -c 'larger than 65536 bytes' "$tmp/err" || true)" 1

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
