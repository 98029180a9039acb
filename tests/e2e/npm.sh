#!/bin/bash
# End to end: an npm CLI installed into an image layer by a gated sandbox
# session (docs/launcher.md, "Tools"), from the registry the host's npm is
# configured with, through the gate.
#
#   aisb --npm semver@7.6.3 -- semver 1.2.3      prints 1.2.3
#   /opt/aisb/npm is root's, the sandbox user cannot write it, and the
#   lockfile with every tarball's integrity is there
#   --npm semver@7.6.2 is another tag; the 7.6.3 image stays
#   the install session is in aisb sessions, with its allowed requests
#   an install under a policy without the registry fails naming the step
#   and the session, which says what was denied; nothing is tagged
#   --npm semver takes the version of the newest image that has it
#   a project config may not name npm packages (exit 78)
#   as an ordinary user with rootless podman (keep-id): the same layer,
#   root-owned, from a tree the session left owned by that user
#
# The install policy is what `aisb policy derive npm` prints, plus an
# allow_ranges entry for the addresses the registry's name resolves to
# here: on hosts whose egress is intercepted it resolves into a range the
# gate denies by default (documentation, private), which a user allows
# the same way (the denial summary prints the line).  No registry name is
# written here: it comes from `npm config get registry`.
#
# Needs root, podman, mmdebstrap, npm and a reachable registry; builds in
# a podman store of its own, which the EXIT trap removes, failure or not.
# Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start npm mmdebstrap npm getent
registry=$(npm config get registry 2>/dev/null || true)
rhost=$(printf '%s\n' "$registry" | sed -nE 's#^https?://([^/:@]+).*#\1#p')
[ -n "$rhost" ] || { echo "SKIP: npm has no http(s) registry configured"; exit 77; }
mapfile -t addrs < <(getent ahostsv4 "$rhost" | awk '{ print $1 }' | sort -u)
[ "${#addrs[@]}" -gt 0 ] || { echo "SKIP: npm's registry does not resolve here"; exit 77; }
e2e_seed_base
unset AISB_INSTALL_POLICY
# the session ids of install sessions, in start order
installs() { "$aisb" sessions ls | awk '$5 == "npm" && $6 == "install" { print $1 }'; }

"$aisb" policy derive npm >"$tmp/install.yaml"
printf 'allow_ranges: [%s]\n' "$(printf '%s/32\n' "${addrs[@]}" | paste -sd, - | sed 's/,/, /g')" \
    >>"$tmp/install.yaml"
# a policy that allows something else only: the registry is denied
cat >"$tmp/deny.yaml" <<'EOF'
version: 1
allow:
  - host: nothing.invalid
    ports: [443]
EOF
# the session's own policy: semver needs no network
cat >"$tmp/none.yaml" <<'EOF'
version: 1
allow: []
EOF

echo "# building the base, the npm builder image, the install, the layer"
export AISB_INSTALL_POLICY=$tmp/install.yaml
rc=0
t0=$(date +%s)
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --npm semver@7.6.3 \
    -- semver 1.2.3) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
t1=$(date +%s)
check "aisb --npm semver@7.6.3 -- semver 1.2.3: exit" "$rc" 0
check "... prints 1.2.3" "$(cat "$tmp/out")" 1.2.3
echo "# first run with every image built: $((t1 - t0)) s"
tag3=$(sed -n 's/^aisb: image \(localhost\/aisb:[0-9a-f]*\) built in .*/\1/p' "$tmp/err" | tail -1)
if grep -q 'tools layer, no network' "$tmp/err" && [ -n "$tag3" ]; then
	ok "the tools layer was built without network ($tag3)"
else
	bad "no tools layer build in: $(cat "$tmp/err")"
fi
n=$(installs | wc -l)
check "one install session in aisb sessions" "$n" 1
sid=$(installs | tail -1)
if [ -n "$sid" ] && "$aisb" sessions show "$sid" >"$tmp/show" 2>&1 &&
    grep -Eq '^# audit: [1-9][0-9]* allowed, 0 denied' "$tmp/show"; then
	ok "the install session's requests were decided and allowed by the gate"
else
	bad "install session '$sid': $(grep '^# audit' "$tmp/show" 2>/dev/null)"
fi
if grep -q "^policy $tmp/install.yaml\$" "$tmp/show"; then
	ok "... under the install policy"
else
	bad "install session policy: $(grep '^policy ' "$tmp/show")"
fi

cat >"$tmp/ws/inside.sh" <<'EOF'
#!/bin/sh
id -u
stat -c '%u:%g %a' /opt/aisb/npm /opt/aisb/npm/package-lock.json \
    /opt/aisb/npm/node_modules/semver/package.json
if touch /opt/aisb/npm/x 2>/dev/null || touch /opt/aisb/npm/node_modules/semver/package.json 2>/dev/null; then
	echo writable
else
	echo readonly
fi
find /opt/aisb/npm ! -user 0 | wc -l
find /opt/aisb/npm -perm /022 ! -type l | wc -l
grep -c '"integrity": "sha512-' /opt/aisb/npm/package-lock.json
command -v semver
EOF
chmod 0755 "$tmp/ws/inside.sh"
rc=0
(cd "$tmp/ws" && "$aisb" --quiet --policy "$tmp/none.yaml" \
    --npm semver@7.6.3 -- ./inside.sh) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "the same spec again: exit" "$rc" 0
if grep -q 'installing npm tools' "$tmp/err"; then bad "installed again"
else ok "the same spec reuses the image: no second install"; fi
check "... runs as the sandbox user" "$(sed -n 1p "$tmp/out")" 1000
check "/opt/aisb/npm is root's, 0755" "$(sed -n 2p "$tmp/out")" "0:0 755"
check "the lockfile is root's, 0644" "$(sed -n 3p "$tmp/out")" "0:0 644"
check "a package file is root's, 0644" "$(sed -n 4p "$tmp/out")" "0:0 644"
check "the sandbox user cannot write the tree" "$(sed -n 5p "$tmp/out")" readonly
check "no file of the tree belongs to anyone but root" "$(sed -n 6p "$tmp/out")" 0
check "no file of the tree is group or world writable" "$(sed -n 7p "$tmp/out")" 0
check "the lockfile records semver's sha512 integrity" "$(sed -n 8p "$tmp/out")" 1
check "semver is found through PATH" "$(sed -n 9p "$tmp/out")" \
    /opt/aisb/npm/node_modules/.bin/semver

rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --npm semver@7.6.2 \
    -- semver --help) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--npm semver@7.6.2: exit" "$rc" 0
if grep -q 'SemVer 7.6.2' "$tmp/out"; then ok "... runs semver 7.6.2"
else bad "semver --help: $(head -2 "$tmp/out")"; fi
tag2=$(sed -n 's/^aisb: image \(localhost\/aisb:[0-9a-f]*\) built in .*/\1/p' "$tmp/err" | tail -1)
if [ -n "$tag2" ] && [ "$tag2" != "$tag3" ]; then ok "another version, another tag ($tag2)"
else bad "tags: 7.6.3 '$tag3', 7.6.2 '$tag2'"; fi
if podman image exists "$tag3"; then ok "the 7.6.3 image stays"
else bad "the 7.6.3 image is gone"; fi
"$aisb" image ls >"$tmp/ls"
if grep -q "npm:semver@7.6.3" "$tmp/ls" && grep -q "npm:semver@7.6.2" "$tmp/ls"; then
	ok "aisb image ls shows each image's npm tools"
else
	bad "image ls: $(cat "$tmp/ls")"
fi

# the tag without building: built for 7.6.3, not for 7.6.1
"$aisb" image containerfile --npm semver@7.6.3 >"$tmp/cf" 2>&1 || true
check "image containerfile --npm semver@7.6.3 names the built image" \
    "$(grep '^# image ' "$tmp/cf")" "# image $tag3: built"
"$aisb" image containerfile --npm semver@7.6.1 >"$tmp/cf" 2>&1 || true
if grep -Eq '^# image localhost/aisb:[0-9a-f]{16}: not built yet$' "$tmp/cf" &&
    ! grep -q "$tag3" "$tmp/cf"; then
	ok "... and another tag, not built yet, for 7.6.1"
else
	bad "containerfile 7.6.1: $(grep '^# image' "$tmp/cf")"
fi

# no version: the newest image that has semver (7.6.2, built last)
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --npm semver \
    -- semver 2.0.0) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--npm semver (no version): exit" "$rc" 0
if grep -q '^aisb: npm semver: 7.6.2, as in the newest image that has it' "$tmp/err" &&
    ! grep -q 'installing npm tools' "$tmp/err"; then
	ok "... takes 7.6.2 from the newest image, and says so"
else
	bad "no version: $(cat "$tmp/err")"
fi

# A shipped recipe: image build --agent NAME --update pins the registry's
# newest version (asked by a gated session) and builds its image, and aisb
# agents then says that image is built.  The shipped file is the one next
# to aisb, so these run a copy of the programs with one more recipe in it.
mkdir -p "$tmp/bin"
for f in aisb aisb-enforce aisb-gate aisb-default-policy.yaml aisb-seccomp.json \
    aisb-agents.yaml; do
	cp "$(dirname "$aisb")/$f" "$tmp/bin/$f"
done
printf '  semv:\n    command: semver\n    npm: "semver@7.6.2"\n' \
    >>"$tmp/bin/aisb-agents.yaml"
shipped_aisb=$aisb
aisb=$tmp/bin/aisb
# the user's own version wins over aisb's pins: --update says where it is
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'version: 1\nagents:\n  semv:\n    npm: "semver@7.6.1"\n' \
    >"$XDG_CONFIG_HOME/aisb/agents.yaml"
rc=0
"$aisb" image build --agent semv --update >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "--update of a version the user wrote: exit" "$rc" 78
if grep -q "^aisb: agent semv: npm is pinned by your own recipe ($XDG_CONFIG_HOME/aisb/agents.yaml:4:10)" "$tmp/err"; then
	ok "... names the user's line to change instead"
else
	bad "user pin: $(cat "$tmp/err")"
fi
rm -f "$XDG_CONFIG_HOME/aisb/agents.yaml"
rc=0
"$aisb" image build --agent semv --update >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "image build --agent semv --update: exit" "$rc" 0
newest=$(sed -n 's/^aisb: agent semv: semver@7\.6\.2 -> semver@\([0-9.]*\) (pinned in .*/\1/p' "$tmp/err")
if [ -n "$newest" ] && [ "$newest" != 7.6.2 ]; then
	ok "... pins the newest semver ($newest) and says so"
else
	bad "--update: $(cat "$tmp/err")"
fi
if grep -q "semver@$newest" "$XDG_CONFIG_HOME/aisb/agent-pins.yaml" 2>/dev/null; then
	ok "... in the pins file"
else
	bad "pins file: $(cat "$XDG_CONFIG_HOME/aisb/agent-pins.yaml" 2>&1)"
fi
"$aisb" agents >"$tmp/out" 2>&1 || true
if grep -q "^  semv     npm semver@$newest, node from Debian; 0 hosts; image built (" "$tmp/out"; then
	ok "aisb agents: the pinned version, its image built"
else
	bad "aisb agents: $(cat "$tmp/out")"
fi
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" -- semver --help) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "aisb -- semver (the recipe picked by its command): exit" "$rc" 0
if grep -q "SemVer $newest" "$tmp/out" && ! grep -q 'installing npm tools' "$tmp/err"; then
	ok "... runs the pinned $newest from the image --update built"
else
	bad "semver --help: $(head -2 "$tmp/out") $(cat "$tmp/err")"
fi
rc=0
"$aisb" image build --agent semv --update >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" = 0 ] && grep -q "^aisb: agent semv: semver@$newest is the newest" "$tmp/err"; then
	ok "a second --update finds nothing newer"
else
	bad "second --update ($rc): $(cat "$tmp/err")"
fi
rm -f "$XDG_CONFIG_HOME/aisb/agent-pins.yaml"
aisb=$shipped_aisb

# a denied install: the step, the session, nothing tagged
export AISB_INSTALL_POLICY=$tmp/deny.yaml
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" --npm semver@7.6.1 \
    -- semver 1.0.0) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok "an install the policy denies fails ($rc)"
else bad "a denied install ran"; fi
dsid=$(sed -n 's/^aisb: install: npm install in session \([0-9a-f]*\) exited with status [0-9]*: .*/\1/p' "$tmp/err")
if [ -n "$dsid" ]; then ok "... one line names the step and the session ($dsid)"
else bad "no step/session line in: $(tail -3 "$tmp/err")"; fi
# ... and what the gate denied, the fix, npm's own log in the session
if grep -q "^aisb: install: npm install in session $dsid exited with status [0-9]*: the gate denied $rhost:443 (host_not_allowed); fix: .*--install-policy FILE.*; npm's own log: .*/sessions/$dsid/npm-logs\$" "$tmp/err"; then
	ok "... the denied registry, the fix and npm's log"
else bad "denied install: $(tail -3 "$tmp/err")"; fi
if [ -n "$dsid" ] && "$aisb" sessions show "$dsid" >"$tmp/show" 2>&1 &&
    grep -Eq '^# audit: 0 allowed, [1-9][0-9]* denied' "$tmp/show" &&
    grep -q "^# denied $rhost:443" "$tmp/show"; then
	ok "aisb sessions show names the denied registry"
else
	bad "denied session: $(grep '^# ' "$tmp/show" 2>/dev/null)"
fi
images=$("$aisb" image ls)
if grep -q "semver@7.6.1" <<<"$images"; then bad "a 7.6.1 image was tagged"
else ok "nothing half-built is tagged"; fi
check "no scratch folder is left" "$(ls -A "$XDG_STATE_HOME/aisb/install" | wc -l)" 0
check "no install home volume is left" \
    "$(podman volume ls --format '{{.Name}}' | grep -c '^aisb-install-' || true)" 0
unset AISB_INSTALL_POLICY

# a project config may not add packages whose install runs scripts
printf 'npm: [semver@7.6.3]\n' >"$tmp/ws/.aisb.yaml"
rc=0
(cd "$tmp/ws" && "$aisb" --policy "$tmp/none.yaml" -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "npm: in .aisb.yaml: exit" "$rc" 78
if grep -q "a project config may not set 'npm'" "$tmp/err"; then
	ok "... says why"
else
	bad "project npm: $(cat "$tmp/err")"
fi
rm -f "$tmp/ws/.aisb.yaml"

# --- an ordinary user, rootless podman (keep-id): the tree the session
# leaves is that user's on the host, and root's in the image all the same.
if command -v useradd >/dev/null && command -v runuser >/dev/null &&
    [ -z "${AISB_E2E_NO_ROOTLESS:-}" ]; then
	# the base and the two Debian images handed over (e2e_user: a load
	# keeps the ids the tags hash), not the tools layers: the user's own
	# session is to install them, so they leave root's store first
	mapfile -t tools < <(podman images --filter label=io.aisb.managed=1 \
	    --format '{{.Repository}}:{{.Tag}} {{index .Labels "io.aisb.npm"}}' |
	    awk '$2 != "" && $2 != "<no value>" { print $1 }')
	[ "${#tools[@]}" = 0 ] || podman rmi "${tools[@]}" >/dev/null
	e2e_user aisbnpm
	user=$e2e_user_name home=$e2e_home
	install -m 0644 -o "$user" "$tmp/install.yaml" "$home/install.yaml"
	install -m 0644 -o "$user" "$tmp/none.yaml" "$home/none.yaml"
	uws=$home/proj
	install -d -m 0700 -o "$user" -g "$user" "$uws"
	install -m 0755 -o "$user" -g "$user" "$tmp/ws/inside.sh" "$uws/inside.sh"
	rc=0
	(cd "$uws" && as_user AISB_INSTALL_POLICY="$home/install.yaml" aisb \
	    --policy "$home/none.yaml" --npm semver@7.6.3 -- ./inside.sh) \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "rootless: --npm semver@7.6.3: exit" "$rc" 0
	if grep -q 'installing npm tools' "$tmp/err" &&
	    grep -q 'tools layer, no network' "$tmp/err"; then
		ok "rootless: installed by the user's own session, layer built"
	else
		bad "rootless: $(cat "$tmp/err")"
	fi
	check "rootless: /opt/aisb/npm is root's in the image" \
	    "$(sed -n 2p "$tmp/out")" "0:0 755"
	check "rootless: the sandbox user cannot write the tree" \
	    "$(sed -n 5p "$tmp/out")" readonly
	check "rootless: no file of the tree is anyone's but root's" \
	    "$(sed -n 6p "$tmp/out")" 0
	check "rootless: the lockfile's integrity" "$(sed -n 8p "$tmp/out")" 1
	check "rootless: no scratch folder left" \
	    "$(ls -A "$home/.local/state/aisb/install" 2>/dev/null | wc -l)" 0
else
	echo "# rootless part skipped"
fi

echo "# $pass passed, $fail failed"
[ "$fail" = 0 ]
