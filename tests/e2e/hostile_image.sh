#!/bin/bash
# End to end: a hostile base image, chosen by every route a user or a
# repository has, never reaches the firewall (issue 27; docs/enforcer.md,
# "Nothing of the image"; docs/launcher.md, "Image").
#
# The test makes the base offline, FROM aisb's offline base: an
# /etc/ld.so.preload library it compiles (tests/e2e/evil_preload.c)
# that deletes table inet aisb from whatever process holds CAP_NET_ADMIN
# and logs every load into the working folder; the environment a static
# glibc reads before main (GLIBC_TUNABLES, MALLOC_PERTURB_); USER 1234;
# a HEALTHCHECK; STOPSIGNAL SIGCONT; an apt.conf.d hook; and an ONBUILD
# trigger that writes the network interfaces its build step sees into
# the image.  It checks, as root (rootful podman, the aisb subordinate
# range) and as an ordinary user it creates, in that user's 0700 folder
# (rootless, keep-id):
#   - the user config's image:, --image and AISB_IMAGE run it, and say
#     where a file or the environment chose it; a project config's
#     image: is refused (78) with the line for the user config;
#   - the enforcer process is the host's binary (its inode), started as
#     the container's root or the sandbox user whatever USER says, with
#     no GLIBC_TUNABLES or MALLOC_PERTURB_ in its environment (the
#     image's LD_LIBRARY_PATH is, so its ENV did reach the container)
#     and no library mapped;
#   - the library did load in the command (the trap is armed), never with
#     NET_ADMIN, never deleting the table; the command cannot reach a
#     port the test opens on the host's loopback (only the gate's may be
#     reached), and that server sees no connection;
#   - the ONBUILD trigger ran in aisb's build with no interface but lo;
#     --package on that base is refused (78) before anything is built;
#   - the session's argv drops the image's health check and stop signal.
# The trap itself is proven first: as root in a network namespace of
# the test's, the library deletes a table named aisb (needs nft).
#
# Servers run on the host's loopback only (10.0.2.2 inside, slirp4netns):
# nothing leaves the machine.  Needs root, podman, mmdebstrap, cc,
# python3, useradd and AISB_E2E=1.  Everything it makes is removed on
# exit (tests/e2e/lib.sh, the test user too).
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start hostile mmdebstrap cc "$PY" useradd userdel runuser

if [[ $(LC_ALL=C readelf -l "$build/aisb-enforce" 2>/dev/null) == *INTERP* ]]; then
	echo "SKIP: aisb-enforce is dynamically linked (a sanitizer build): sessions refuse it"
	exit 77
fi
e2e_seed_base
runtime=()
command -v runc >/dev/null && runtime=(--runtime runc)
evil=localhost/aisb-e2e-evil/base:1

# --- a server on the host's loopback the command must not reach ----------
e2e_servers echo
port=$echo_port
# a policy that allows nothing the command tries
printf 'version: 1\nallow:\n  - host: allowed.test\n' >"$tmp/policy.yaml"
chmod 0644 "$tmp/policy.yaml"

# --- the trap is armed: the library deletes the table where it can -------
mkdir -p "$tmp/ctx"
cc -shared -fPIC -O2 -o "$tmp/ctx/evil.so" "$top_srcdir/tests/e2e/evil_preload.c"
chmod 0755 "$tmp/ctx/evil.so"
if command -v nft >/dev/null && command -v unshare >/dev/null; then
	got=$(cd "$tmp" && unshare -n sh -c 'nft add table inet aisb &&
	    LD_PRELOAD="$1" /bin/true && nft list tables' sh "$tmp/ctx/evil.so")
	check "the library deletes table inet aisb where it may" "$got" ""
	if grep -q 'uid=0 .*delete=DELETED' "$tmp/aisb-preload.log"; then
		ok "... and logs it"; else bad "trap: $(cat "$tmp/aisb-preload.log")"; fi
	rm -f "$tmp/aisb-preload.log"
else
	echo "# nft not found: the trap's own check skipped"
fi

# --- the hostile base, FROM aisb's offline base ------------------------
"$aisb" image build >"$tmp/out" 2>"$tmp/err" </dev/null ||
    { bad "image build: $(tail -3 "$tmp/err")"; exit 1; }
base=$(podman images --filter label=io.aisb.kind=base \
    --format '{{.Repository}}:{{.Tag}}' | sed -n 1p)
[ -n "$base" ] || { bad "no offline base"; exit 1; }
cat >"$tmp/ctx/Containerfile" <<EOF
FROM $base
COPY evil.so /usr/lib/evil.so
RUN ["/bin/sh", "-c", "echo /usr/lib/evil.so >/etc/ld.so.preload && printf 'APT::Update::Pre-Invoke {\"ls /sys/class/net >/apt-hook-net\";};\\\\n' >/etc/apt/apt.conf.d/00evil"]
ENV GLIBC_TUNABLES=glibc.malloc.perturb=42 MALLOC_PERTURB_=42 LD_LIBRARY_PATH=/opt/evil/lib
USER 1234:1234
HEALTHCHECK --interval=1s CMD ["/bin/sh", "-c", "true"]
STOPSIGNAL SIGCONT
ONBUILD RUN ["/bin/bash", "-c", "ls /sys/class/net | sort | tr '\\\\n' ' ' >/tmp/onbuild-net"]
EOF
podman build "${runtime[@]}" -q --format docker --network=none --pull=never \
    -t "$evil" "$tmp/ctx" >"$tmp/out" 2>"$tmp/err" ||
    { bad "hostile base: $(tail -3 "$tmp/err")"; exit 1; }
ok "hostile base built"

# --- a session on it, watched from the host -------------------------------
# session LABEL AISB...: runs bash -c "$probe" in $ws (the command: what
# the ONBUILD saw, its uid, a direct connection to the echo server, then
# a sleep while the test reads the enforcer's /proc); out/err/rc, and
# $tmp/enf: the enforcer's pid found meanwhile, its facts in $tmp/enf.*
probe='cat /tmp/onbuild-net 2>/dev/null || echo "no-onbuild-file"; echo
id -u
if (exec 3<>"/dev/tcp/10.0.2.2/$1") 2>/dev/null; then echo reached; else echo blocked; fi
sleep "$2"'
nap=6.$$	# the command's sleep, found by its argument
enforcer_of() {	# enforcer_of PID: the aisb-enforce above sleep $nap, while PID runs
	local p c i
	# a session starts in seconds; a first one builds its image, which
	# on a loaded machine (a rootless store) takes minutes: looked for
	# as long as the session runs, 30 minutes at most
	for i in $(seq 18000); do
		p=$(ps -eo pid=,args= |
		    awk -v n="$nap" '$2 == "sleep" && $3 == n && !p { p = $1 }
		    END { print p }')
		[ -n "$p" ] && break
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	[ -n "$p" ] || return 1
	for i in 1 2 3 4 5; do
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || return 1
		c=$(cat "/proc/$p/comm" 2>/dev/null) || return 1
		[ "$c" = aisb-enforce ] && { echo "$p"; return 0; }
	done
	return 1
}
session() {	# session LABEL WS RUNNER...
	local label=$1 ws=$2 e
	shift 2
	rm -f "$ws/aisb-preload.log" "$tmp/enf".*
	rc=0
	(cd "$ws" && "$@" -- bash -c "$probe" sh "$port" "$nap") \
	    >"$tmp/out" 2>"$tmp/err" </dev/null &
	e=$!
	if p=$(enforcer_of "$e"); then
		stat -L -c '%d:%i' "/proc/$p/exe" >"$tmp/enf.exe" 2>&1 || true
		tr '\0' '\n' <"/proc/$p/environ" >"$tmp/enf.env" 2>/dev/null || true
		awk '/^Uid:/ { print $2 }' "/proc/$p/status" >"$tmp/enf.uid" 2>/dev/null || true
		grep -c 'evil' "/proc/$p/maps" >"$tmp/enf.maps" 2>/dev/null || true
	else
		echo "# $label: no aisb-enforce above sleep $nap:" \
		    "$(ps -eo pid=,ppid=,comm=,args= | awk -v n="$nap" 'index($0, n) && k++ < 3')"
	fi
	wait "$e" || rc=$?
	check "$label: exit" "$rc" 0
	check "$label: the ONBUILD step saw no network" "$(sed -n 1p "$tmp/out")" "lo "
	check "$label: the command's uid" "$(sed -n 2p "$tmp/out")" 1000
	check "$label: the host's loopback port" "$(sed -n 3p "$tmp/out")" blocked
}
# the library's loads as root, with CAP_NET_ADMIN (bit 12) or deleting
privileged_loads() {
	local u cap del n=0
	while read -r _ u cap del; do
		if [ "$u" = uid=0 ] || [ "$del" = delete=DELETED ] ||
		    (( 16#${cap#capeff=} & 4096 )); then
			n=$((n + 1))
		fi
	done <"$1"
	echo "$n"
}
# checks of the enforcer and the command's library, for binary BIN
enforcer_checks() {	# enforcer_checks LABEL WS BIN HOSTUID
	local label=$1 ws=$2 bin=$3
	check "$label: the enforcer is the host's binary" "$(cat "$tmp/enf.exe" 2>/dev/null)" \
	    "$(stat -L -c '%d:%i' "$bin")"
	check "$label: the enforcer's host uid (not USER 1234's)" \
	    "$(cat "$tmp/enf.uid" 2>/dev/null)" "$4"
	if grep -q '^LD_LIBRARY_PATH=/opt/evil/lib$' "$tmp/enf.env" 2>/dev/null; then
		ok "$label: the image's ENV reached the container"; else
		bad "$label: no image ENV in the enforcer's: $(cat "$tmp/enf.env" 2>/dev/null)"; fi
	check "$label: no GLIBC_TUNABLES, MALLOC_PERTURB_ in the enforcer's" \
	    "$(grep -c -e '^GLIBC_TUNABLES=' -e '^MALLOC_PERTURB_=' "$tmp/enf.env" 2>/dev/null || true)" 0
	check "$label: no library of the image mapped in the enforcer" \
	    "$(cat "$tmp/enf.maps" 2>/dev/null)" 0
	if [ -s "$ws/aisb-preload.log" ]; then ok "$label: the library loaded in the command"; else
		bad "$label: the library never loaded: the trap was not armed"; fi
	check "$label: ... never with CAP_NET_ADMIN nor as root, never deleting" \
	    "$(privileged_loads "$ws/aisb-preload.log")" 0
	check "$label: the echo server saw no connection" \
	    "$(grep -c accept "$tmp/echo.log" 2>/dev/null || true)" 0
}

ws=$tmp/rootws
mkdir -m 0700 "$ws"

# 1. the user config
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'image: %s\n' "$evil" >"$XDG_CONFIG_HOME/aisb/config.yaml"
# (the environment, which wins over the file, names no base here)
session "user config" "$ws" env -u AISB_IMAGE "$aisb" --policy "$tmp/policy.yaml"
# the container's root: the aisb range's base (made by the first session)
base_uid=$(awk -F: '$1 == "aisb" { print $2; exit }' /etc/subuid)
enforcer_checks "user config" "$ws" "$build/aisb-enforce" "$base_uid"
if grep -qxF "aisb: image: base $evil, from the config file $XDG_CONFIG_HOME/aisb/config.yaml:1:8 (not aisb's own base: its build steps run without network, and it takes no --package)" "$tmp/err"; then
	ok "user config: the start says where the base came from"; else
	bad "user config: start line: $(grep '^aisb: image' "$tmp/err")"; fi
rec=$(e2e_session)/record
grep '^podman ' "$rec" | tr ' ' '\n' >"$tmp/argv"
for a in --no-healthcheck --stop-signal=SIGTERM --user=0:0 \
    --entrypoint=/run/aisb/aisb-enforce; do
	if grep -qxF -- "$a" "$tmp/argv"; then
		ok "the session's argv: $a"; else bad "the session's argv has no $a"; fi
done
rm "$XDG_CONFIG_HOME/aisb/config.yaml"

# 2. the flag
: >"$tmp/echo.log"
session "--image" "$ws" "$aisb" --policy "$tmp/policy.yaml" --image "$evil"
enforcer_checks "--image" "$ws" "$build/aisb-enforce" "$base_uid"
check "--image: the flag is the user's: nothing said" "$(grep -c '^aisb: image' "$tmp/err" || true)" 0

# 3. the environment
: >"$tmp/echo.log"
session "AISB_IMAGE" "$ws" env AISB_IMAGE="$evil" "$aisb" --policy "$tmp/policy.yaml"
enforcer_checks "AISB_IMAGE" "$ws" "$build/aisb-enforce" "$base_uid"
if grep -q "^aisb: image: base $evil, from the environment, AISB_IMAGE " "$tmp/err"; then
	ok "AISB_IMAGE: said"; else bad "AISB_IMAGE: start line: $(grep '^aisb: image' "$tmp/err")"; fi

# refused LABEL FLAG...: a session in $ws stops with 78
refused() {
	local label=$1
	shift
	rc=0; (cd "$ws" && "$aisb" --policy "$tmp/policy.yaml" "$@" -- true) \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "$label: exit" "$rc" 78
}

# 4. the repository: refused before anything starts
printf 'image: %s\n' "$evil" >"$ws/.aisb.yaml"
n0=$(ls "$XDG_STATE_HOME/aisb/sessions" | wc -l)
refused "project config"
if grep -qF "a project config may not set 'image'" "$tmp/err" &&
    grep -qF "write 'image: $evil' in $XDG_CONFIG_HOME/aisb/config.yaml" "$tmp/err"; then
	ok "project config: refused with the line for the user config"; else
	bad "project config: $(cat "$tmp/err")"; fi
check "project config: no session started" "$(ls "$XDG_STATE_HOME/aisb/sessions" | wc -l)" "$n0"
rm "$ws/.aisb.yaml"

# 5. packages on it: its apt would run with network; refused, nothing built
ni=$(podman images -q | wc -l)
refused "--package on a foreign base" --image "$evil" --package curl
if grep -q "is not aisb's own" "$tmp/err" && grep -q "bake" "$tmp/err"; then
	ok "--package on a foreign base: says what to do"; else
	bad "--package on a foreign base: $(cat "$tmp/err")"; fi
check "--package on a foreign base: nothing built" "$(podman images -q | wc -l)" "$ni"

# 6. a bind session's command writes the project config: said at its
# end; the next session refuses it, naming the session, until aisb trust
# plants() WS RUNNER...: the session that writes it, then the next one
plants() {
	local ws=$1 sid
	shift
	rm -f "$ws/.aisb.yaml"
	rc=0; (cd "$ws" && "$@" -- sh -c 'echo "net: none" >.aisb.yaml') \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "plant: exit" "$rc" 0
	if grep -qF "aisb: the command created $ws/.aisb.yaml" "$tmp/err" &&
	    grep -qF "aisb trust $ws/.aisb.yaml" "$tmp/err"; then
		ok "plant: said at the session's end"; else
		bad "plant: $(cat "$tmp/err")"; fi
	rc=0; (cd "$ws" && "$@" -- true) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "plant: the next session" "$rc" 78
	sid=$(sed -n 's/.* by the sandboxed command of session \([0-9a-f]*\) .*/\1/p' "$tmp/err")
	if [ -n "$sid" ] && grep -qF "aisb trust $ws/.aisb.yaml" "$tmp/err"; then
		ok "plant: refused, naming session $sid and the way out"; else
		bad "plant: refusal: $(cat "$tmp/err")"; fi
}
plants "$ws" "$aisb" --policy "$tmp/policy.yaml" --image "$evil"
rc=0; "$aisb" trust "$ws/.aisb.yaml" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "trust: exit" "$rc" 0
rc=0; (cd "$ws" && "$aisb" --print-config) >"$tmp/out" 2>"$tmp/err" \
    </dev/null || rc=$?
check "trusted: read again" "$rc" 0
if grep -q '^net  *none (project config: ' "$tmp/out"; then
	ok "trusted: its net: none applies"; else bad "trusted: $(grep '^net' "$tmp/out")"; fi
rm -f "$ws/.aisb.yaml"

# --- 7. rootless: a user's own session in a 0700 folder ----------------------
e2e_user aisbhost
install -m 0644 -o "$e2e_user_name" "$tmp/policy.yaml" "$e2e_home/policy.yaml"
# the hostile base too: e2e_user hands over aisb's own images only
podman save -q -o "$e2e_home/evil.tar" "$evil"
chown "$e2e_user_name" "$e2e_home/evil.tar"
as_user podman load -q -i "$e2e_home/evil.tar" >/dev/null
rm -f "$e2e_home/evil.tar"
# the container's root under keep-id with --user 0:0: the user's first
# subordinate id
subuid=$(awk -F: -v u="$e2e_user_name" '$1 == u { print $2; exit }' /etc/subuid)
uws=$e2e_home/proj
install -d -m 0700 -o "$e2e_user_name" -g "$e2e_user_name" "$uws"
: >"$tmp/echo.log"
session "rootless" "$uws" as_user aisb --policy "$e2e_home/policy.yaml" \
    --image "$evil"
enforcer_checks "rootless" "$uws" "$e2e_home/bin/aisb-enforce" "$subuid"
plants "$uws" as_user aisb --policy "$e2e_home/policy.yaml" --image "$evil"

echo "hostile_image: $pass passed, $fail failed"
[ "$fail" = 0 ]
