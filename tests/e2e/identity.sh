#!/bin/bash
# End to end: sessions on a user's own repository, where users keep them.
#
# As root, in a root-owned 0700 folder (rootful podman: the aisb
# subordinate range and an idmapped workspace mount), in a 0700 folder of
# another user as under sudo, and as an ordinary user the test creates,
# in that user's own 0700 folder (rootless podman, keep-id).  In each the
# command edits a file, creates a file and folders, runs git init and
# commit, and fetches through the gate with curl and python; outside,
# every file belongs to the folder's owner and that owner's git works on
# the same repository.  Also: the sandbox is no real host user (its
# processes run as a subordinate uid, not host uid 1000), one home volume
# per project, no mount left behind, doctor's workspace check, and the
# nftables guarantee under both mappings (a direct connection to the
# host's loopback stays blocked).
#
# Servers run on the host's loopback only; inside, the host loopback is
# 10.0.2.2 (slirp4netns), so nothing can leave the machine.  Needs root,
# podman, mmdebstrap and AISB_E2E=1 (tests/run.sh sets it).  Everything it
# makes is removed by the EXIT trap (tests/e2e/lib.sh): the podman store,
# the test user (its rootless store and processes) and the /dev/net/tun
# mode it changed.  The system user aisb stays: aisb makes it on first
# use, as any rootful session would, and the other e2e suites, running
# alongside under make -j, use it at the same time.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
rws=
e2e_cleanup_more() { [ -z "$rws" ] || rm -rf "$rws"; }
e2e_start identity mmdebstrap curl git "$PY" useradd userdel runuser
# The run's offline base (AISB_E2E_SEED) into the root store; the user's
# rootless store gets the images the root sessions built (e2e_user).
e2e_seed_base

# --- host-side servers --------------------------------------------------
cat >"$tmp/zone.json" <<'EOF'
{"allowed.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns http echo

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: allowed.test
    ports: [$http]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
EOF
chmod 0644 "$tmp/policy.yaml"
pkgs=(--package curl --package git --package python3)

# What a developer does in a session: edit, create, commit, fetch.
work='set -e
id -u
printf "// edited\n" >> main.c
echo new > created.txt
mkdir -p made/sub
git init -q
git add -A
git -c user.name=t -c user.email=t@example.test commit -qm first
curl -sS -o /dev/null -w "curl %{http_code}\n" "http://allowed.test:$1/curl"
python3 -c "import sys, urllib.request; print(\"python\", urllib.request.urlopen(\"http://allowed.test:%s/py\" % sys.argv[1]).status)" "$1"'

# owners DIR: the owner uid of each path the session made, one line
owners() {
	(cd "$1" && stat -c %u main.c created.txt made made/sub .git .git/objects \
	    .git/HEAD | sort -u | tr '\n' ' ')
}

# --- 1. root, in a root-owned 0700 folder -------------------------------
ws=$tmp/rootws
mkdir -m 0700 "$ws"
printf 'int main;\n' >"$ws/main.c"
rc=0; (cd "$ws" && "$aisb" --policy "$tmp/policy.yaml" "${pkgs[@]}" -- \
    sh -c "$work" sh "$http") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "root: exit" "$rc" 0
check "root: uid inside" "$(sed -n 1p "$tmp/out")" 1000
check "root: curl" "$(grep '^curl' "$tmp/out")" "curl 200"
check "root: python" "$(grep '^python' "$tmp/out")" "python 200"
check "root: owners" "$(owners "$ws")" "0 "
check "root: edit kept" "$(tail -n 1 "$ws/main.c")" "// edited"
check "root: git status outside" "$(git -C "$ws" status --porcelain 2>&1 | wc -l)" 0
check "root: git log outside" "$(git -C "$ws" log --format=%s 2>&1)" first
sd=$(e2e_session)
if grep -Eq '^identity mapped sandbox_uid [0-9]+ owner 0:0 range [0-9]+-[0-9]+$' "$sd/record"; then
	ok; else bad "root: record identity: $(grep identity "$sd/record")"; fi
check "root: limits all applied" "$(sed -n 's/^limits_not_applied //p' "$sd/record")" none
home1=$(awk '$1 == "home_volume" && NF == 2 { print $2 }' "$sd/record")
case $home1 in aisb-home-????????????-direct) ok ;; *) bad "root: home volume '$home1'" ;; esac
"$aisb" sessions show "$(basename "$sd")" >"$tmp/show" 2>&1 || bad "sessions show failed"
if grep -q "^home_volume $home1\$" "$tmp/show"; then ok; else bad "sessions show names no home volume"; fi
check "root: no mount left" "$(grep -c " $tmp/state" /proc/self/mounts || true)" 0
if [ -e "$sd/workspace" ]; then bad "root: mount point left"; else ok; fi

# The sandbox is no real host user: its processes run as the subordinate
# uid base + 1000 of the aisb user, never as host uid 1000.
base=$(awk -F: '$1 == "aisb" { print $2; exit }' /etc/subuid)
rc=0; (cd "$ws" && "$aisb" --policy "$tmp/policy.yaml" --net none "${pkgs[@]}" -- \
    sh -c 'cat /proc/self/uid_map; exec sleep 4.321') >"$tmp/out" 2>"$tmp/err" </dev/null &
spid=$!
huid=
for _ in $(seq 60); do
	huid=$(ps -eo uid=,args= | awk '$2 == "sleep" && $3 == "4.321" && !n++ { print $1 }')
	[ -n "$huid" ] && break
	sleep 0.1
done
wait "$spid" || rc=$?
check "root: sleep session exit" "$rc" 0
check "root: the command's host uid" "$huid" "$((base + 1000))"
check "root: container root on the host" "$(awk '$1 == 0 { print $2 }' "$tmp/out")" "$base"
check "root: host uid 1000 maps nowhere inside" \
    "$(awk '$1 <= 1000 && 1000 < $1 + $3 && $2 + 1000 - $1 == 1000' "$tmp/out" | wc -l)" 0

# One home per project: a file planted in one is absent from the other.
e2e_session_mark	# the sleep session: looked at through ps
ws2=$tmp/rootws2
mkdir -m 0700 "$ws2"
rc=0; (cd "$ws" && "$aisb" --policy "$tmp/policy.yaml" --net none "${pkgs[@]}" -- \
    sh -c 'echo planted > ~/.planted') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "plant: exit" "$rc" 0
e2e_session_mark	# the planting session
rc=0; (cd "$ws2" && "$aisb" --policy "$tmp/policy.yaml" --net none "${pkgs[@]}" -- \
    sh -c 'test -e ~/.planted && echo present || echo absent') >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "other project: home" "$(cat "$tmp/out")" absent
sd2=$(e2e_session)
home2=$(awk '$1 == "home_volume" && NF == 2 { print $2 }' "$sd2/record")
if [ -n "$home2" ] && [ "$home2" != "$home1" ]; then ok; else bad "same home volume for two projects: $home2"; fi
rc=0; (cd "$ws" && "$aisb" --policy "$tmp/policy.yaml" --net none "${pkgs[@]}" -- \
    cat /home/sandbox/.planted) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "same project: home kept" "$(cat "$tmp/out")" planted

# doctor runs a session's container in a 0700 folder of root: in the
# image the sessions ran (its default, the newest image labelled sandbox,
# may be any other the store holds)
img=$(e2e_record_field image "$sd/record")
"$aisb" doctor --fresh --image "$img" >"$tmp/doctor" 2>&1 ||
    bad "root: doctor failed: $(grep -v '^ok' "$tmp/doctor")"
if grep -q '^ok   workspace  in a 0700 folder of uid 0' "$tmp/doctor"; then ok; else
	bad "root: doctor workspace: $(grep workspace "$tmp/doctor")"; fi

# doctor under load (--fresh: the container checks run, not the kept
# run): three busy loops above everyone's priority (at most 240 s, and
# killed once doctor said its network line), and the network probe still
# holds.  Before, the host read the probe's word only after
# the container was gone, and slirp4netns, starved, was torn down before
# it had passed the bytes on ("connected to nothing"): a quarter of the
# probes under this load, a working network said broken.
load=()
for _ in 1 2 3; do
	timeout 240 nice -n -15 bash -c 'while :; do :; done' &
	load+=($!) pids+=($!)
done
"$aisb" doctor --fresh --image "$img" >"$tmp/doctor" 2>&1 &
doc=$!
pids+=("$doc")
for _ in $(seq 2400); do
	! grep -q '^[a-z]* *network ' "$tmp/doctor" || break
	kill -0 "$doc" 2>/dev/null || break
	sleep 0.1
done
kill "${load[@]}" 2>/dev/null || true
wait "${load[@]}" "$doc" 2>/dev/null || true
if grep -q '^ok   network    slirp4netns' "$tmp/doctor"; then ok "root: doctor's network probe under load"; else
	bad "root: doctor under load: $(grep network "$tmp/doctor")"; fi

# no test asks a registry (lib.sh): a session of the default base pulls
# it first, which the podman wrapper refuses and notes, and the session
# runs on the offline base; the note would fail the test at its end
rc=0; (cd "$ws" && env -u AISB_IMAGE "$aisb" --policy "$tmp/policy.yaml" --net none -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "the default base: the session runs" "$rc" 0
check "the default base: its pull refused and noted" \
    "$(grep -c '^podman pull --quiet docker.io/library/debian:bookworm-slim$' "$tmp/pulls" 2>/dev/null || true)" 1
rm -f "$tmp/pulls"
e2e_session_mark

# --- 1b. root, in a project under /root: absolute paths reach it -------
# The workspace is mounted at its host path, so a tool that writes by
# absolute path (an agent, npm --prefix, node) searches the image's /root
# on the way; in Debian's images that is 0700, and only relative paths
# from the working folder used to work there.
rws=$(mktemp -d /root/aisb-e2e-identity.XXXXXX)
rc=0; (cd "$rws" && "$aisb" --policy "$tmp/policy.yaml" --net none "${pkgs[@]}" -- \
    sh -c 'mkdir "$PWD/abs" && echo made >"$PWD/abs/f" && cat "$PWD/abs/f"') \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "root under /root: exit" "$rc" 0
check "root under /root: absolute path written" "$(cat "$tmp/out")" made
check "root under /root: owner outside" "$(stat -c %u "$rws/abs/f" 2>&1)" 0
rm -rf "$rws"

# --- 2. an ordinary user, rootless podman, in that user's 0700 folder ---
e2e_user aisbe2e
user=$e2e_user_name uid=$e2e_uid home=$e2e_home
grep -q "^$user:" /etc/subuid || bad "useradd gave $user no subordinate uids"
install -m 0644 -o "$user" "$tmp/policy.yaml" "$home/policy.yaml"
# The image the first root session ran (its record names it) and its base
# are among those e2e_user handed over instead of rebuilding: the tag
# hashes the base's id, so without it the user's aisb built a base of its
# own (mmdebstrap) and the image again on it.
imgs=$(e2e_images_of "$sd")
check "root: the session's image and base" "$(wc -l <<<"$imgs")" 2
while read -r i; do
	as_user podman image exists "$i" && ok || bad "user: $i not handed over"
done <<<"$imgs"

uws=$home/proj
install -d -m 0700 -o "$user" -g "$user" "$uws"
printf 'int main;\n' >"$uws/main.c"
chown "$user:$user" "$uws/main.c"
# recorded (--record), as the user would: the gate is the user's own
rc=0; (cd "$uws" && as_user aisb --record --policy "$home/policy.yaml" "${pkgs[@]}" -- \
    sh -c "$work" sh "$http") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: exit" "$rc" 0
check "user: uid inside" "$(sed -n 1p "$tmp/out")" 1000
check "user: curl" "$(grep '^curl' "$tmp/out")" "curl 200"
check "user: python" "$(grep '^python' "$tmp/out")" "python 200"
check "user: owners" "$(owners "$uws")" "$uid "
check "user: edit kept" "$(tail -n 1 "$uws/main.c")" "// edited"
check "user: git status outside" "$(cd "$uws" && as_user git status --porcelain 2>&1 | wc -l)" 0
check "user: git log outside" "$(cd "$uws" && as_user git log --format=%s 2>&1)" first
usd=$(e2e_session "$home/.local/state")
if grep -Eq "^identity keep-id sandbox_uid $uid\$" "$usd/record"; then
	ok; else bad "user: record identity: $(grep identity "$usd/record")"; fi
check "user: capture owned by the user" \
    "$(stat -c '%u %a' "$usd/recording/capture.pcapng" 2>&1)" "$uid 600"
check "user: sessions verify" "$(as_user aisb sessions verify "$(basename "$usd")" >/dev/null 2>&1; echo $?)" 0
if command -v tshark >/dev/null; then
	check "user: the capture has the session's streams" \
	    "$(tshark -r "$usd/recording/capture.pcapng" -Y 'frame.comment contains "decision=allow"' 2>/dev/null | wc -l | tr -d ' ')" \
	    "$(grep -c '"event":"decision".*"decision":"allow"' "$usd/audit.jsonl")"
fi
# cgroups v1 (as on these machines): aisb names the ignored limits, once
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
	check "user: limits named once" "$(grep -c 'cannot apply these limits' "$tmp/err")" 1
	check "user: limits recorded" "$(sed -n 's/^limits_not_applied //p' "$usd/record")" "memory cpus pids"
	if grep -q 'Resource limits are not supported' "$tmp/err"; then
		bad "user: podman still warns about limits"; else ok; fi
fi

# the nftables guarantee under keep-id: no way around the gate
: >"$tmp/echo.log"
rc=0; (cd "$uws" && as_user aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- \
    curl -sS --noproxy '*' --max-time 5 "http://10.0.2.2:$echo_port/") \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then ok; else bad "user: direct TCP connection succeeded"; fi
if grep -q accept "$tmp/echo.log"; then bad "user: echo server saw a connection"; else ok; fi

# the host's CAs reach a rootless session too: the enforcer, root only in
# the user namespace, appends them to the image's bundle (tests/e2e/
# hostca.sh checks TLS clients against them, rootful)
if command -v openssl >/dev/null; then
	install -d -m 0755 -o "$user" -g "$user" "$home/hostca"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout /dev/null \
	    -subj "/CN=aisb identity CA $$" -out "$home/hostca/id.crt" 2>/dev/null
	rc=0; (cd "$uws" && as_user env AISB_TEST_HOST_CA_DIR="$home/hostca" \
	    aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- \
	    sh -c 'tail -n 2 /etc/ssl/certs/ca-certificates.crt | head -n 1; echo "node=$NODE_EXTRA_CA_CERTS"') \
	    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	check "user: host CA: exit" "$rc" 0
	check "user: host CA: last in the bundle" "$(sed -n 1p "$tmp/out")" \
	    "$(tail -n 2 "$home/hostca/id.crt" | sed -n 1p)"
	check "user: host CA: for node" "$(sed -n 2p "$tmp/out")" node=/run/aisb/host-ca.pem
	if grep -q 'host CAs' "$tmp/err"; then bad "user: host CA: $(grep 'host CAs' "$tmp/err")"; else ok; fi
fi
# what the user is told, rootless too: a denial summary with its YAML
# (tests/e2e/deny.sh checks it in full, rootful), a missing command's
# package, a workspace script's mode
rc=0; (cd "$uws" && as_user aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- \
    sh -c "curl -s -o /dev/null -p http://nope-user.test:$http/; true") \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: denied session exit" "$rc" 0
if grep -qx "aisb: denied nope-user.test:$http, 1 time: host not allowed" "$tmp/err" &&
    grep -qx "  - host: nope-user.test" "$tmp/err"; then ok; else
	bad "user: denial summary: $(cat "$tmp/err")"; fi
rc=0; (cd "$uws" && as_user aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- \
    aisb-nosuchcmd) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: missing command" "$rc" 127
# (no package has it: said, not guessed from the command's name)
if grep -qF "aisb: which Debian package has aisb-nosuchcmd is unknown here" "$tmp/err" &&
    ! grep -q -- "--package aisb-nosuchcmd" "$tmp/err"; then ok; else
	bad "user: missing command hint: $(cat "$tmp/err")"; fi
printf '#!/bin/sh\necho ran\n' >"$uws/build.sh"
chown "$user:$user" "$uws/build.sh"
chmod 0644 "$uws/build.sh"
rc=0; (cd "$uws" && as_user aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- \
    ./build.sh) >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "user: script without x" "$rc" 126
if grep -qF "./build.sh: not executable (mode 0644)" "$tmp/err"; then ok; else
	bad "user: script mode hint: $(cat "$tmp/err")"; fi
rm -f "$uws/build.sh"

# stopping a rootless session without a terminal (tests/e2e/signals.sh
# does it rootful): SIGTERM reaches the command's group and its trap; a
# SIGKILLed aisb takes its gate along, and its watcher (the user's own
# process) stops the container.  The aisb and the gate are the ones this
# session started, never the first of the user's listed: aisb is the
# child of the runuser the background job started (a watcher, a fork on
# its way to exec podman are aisb's too), the gate the one the session's
# folder names.
user_aisb() {	# user_aisb BG: the aisb of the background job BG
	local r p
	for _ in $(seq 100); do
		if r=$(pgrep -P "$1" -x runuser) && p=$(pgrep -P "$r" -x aisb); then
			echo "$p"; return 0
		fi
		sleep 0.1
	done
	return 1
}
for how in TERM KILL; do
	rm -f "$uws/ready" "$uws/marker"
	e2e_session_mark "$home/.local/state"
	(cd "$uws" && as_user aisb --policy "$home/policy.yaml" "${pkgs[@]}" -- bash -c \
	    'trap "echo trapped >marker; trap - TERM; kill -TERM \$\$" TERM; echo >ready; sleep 300') \
	    >"$tmp/out" 2>"$tmp/err" </dev/null &
	bg=$!
	for _ in $(seq 600); do [ -e "$uws/ready" ] && break; sleep 0.1; done
	ap=$(user_aisb "$bg") || { bad "user $how: no aisb"; continue; }
	bsd=$(e2e_session "$home/.local/state")
	gp=$(cat "$bsd/gate.pid")
	kill -"$how" "$ap"
	rc=0; wait "$bg" || rc=$?
	mine=label=io.aisb.session=$(basename "$bsd")
	for _ in $(seq 100); do
		[ -z "$(as_user podman ps -q --filter "$mine")" ] && break
		sleep 0.1
	done
	check "user $how: container stopped" "$(as_user podman ps -q --filter "$mine" | wc -l)" 0
	check "user $how: the trap ran" "$(cat "$uws/marker" 2>/dev/null)" trapped
	for _ in $(seq 30); do
		[ -n "$gp" ] && [ "$(awk '{ print $3 }' "/proc/$gp/stat" 2>/dev/null || echo gone)" != gone ] &&
		    [ "$(awk '{ print $3 }' "/proc/$gp/stat" 2>/dev/null)" != Z ] || break
		sleep 0.1
	done
	st=$(awk '{ print $3 }' "/proc/$gp/stat" 2>/dev/null || echo gone)
	if [ -z "$gp" ] || [ "$st" = gone ] || [ "$st" = Z ]; then ok; else
		bad "user $how: gate $gp left ($st)"; fi
	if [ "$how" = TERM ] && [ "$rc" != 143 ]; then
		bad "user TERM: exit $rc, want 143: $(cat "$tmp/err")"
	elif [ "$how" = TERM ]; then ok; fi
done
rm -f "$uws/ready" "$uws/marker"

img=$(e2e_record_field image "$usd/record")
as_user aisb doctor --fresh --image "$img" >"$tmp/doctor" 2>&1 ||
    bad "user: doctor failed: $(grep -v '^ok' "$tmp/doctor")"
if grep -q "^ok   workspace  in a 0700 folder of uid $uid" "$tmp/doctor"; then ok; else
	bad "user: doctor workspace: $(grep workspace "$tmp/doctor")"; fi

# --- 3. root in that user's folder, as under sudo: the owner wins -------
sws=$home/sudo-proj
install -d -m 0700 -o "$user" -g "$user" "$sws"
printf 'int main;\n' >"$sws/main.c"
chown "$user:$user" "$sws/main.c"
rc=0; (cd "$sws" && SUDO_UID=4242 SUDO_GID=4242 SUDO_USER=nobody "$aisb" \
    --policy "$tmp/policy.yaml" "${pkgs[@]}" -- sh -c "$work" sh "$http") \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "sudo: exit" "$rc" 0
check "sudo: owners" "$(owners "$sws")" "$uid "
check "sudo: git status as the owner" "$(cd "$sws" && as_user git status --porcelain 2>&1 | wc -l)" 0
check "sudo: no mount left" "$(grep -c " $tmp/state" /proc/self/mounts || true)" 0

echo "identity: $pass passed, $fail failed"
[ "$fail" = 0 ]
