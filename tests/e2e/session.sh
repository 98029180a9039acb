#!/bin/bash
# End to end: real aisb sessions in real podman containers.
#
# Servers run on the host's loopback only (a DNS responder, an HTTP
# upstream, a TCP echo and a UDP sink); from inside the container the host
# loopback is 10.0.2.2 (slirp4netns allow_host_loopback), so every escape
# attempt targets a service this test started and nothing can leave the
# machine even if the sandbox were broken.
#
# Needs root, podman and mmdebstrap; builds its images offline (see
# docs/launcher.md) in a podman store of its own, which the EXIT trap
# removes, failure or not.  Runs only with AISB_E2E=1 (tests/run.sh sets
# it for one build), so that sanitizer and distcheck builds do not repeat
# the image builds.
set -euo pipefail

# A podman store of our own: images, containers and volumes made here are
# exactly what the EXIT trap removes, and nothing of the host's is touched.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start session mmdebstrap curl "$PY"
e2e_seed_image curl
vol=aisb-e2e-home-$$
e2e_cleanup_more() {
	local g
	for g in e2e e2e2; do "$aisb" gate down "$g" >/dev/null 2>&1 || true; done
}

# --- host-side servers --------------------------------------------------
cat >"$tmp/zone.json" <<'EOF'
{"allowed.test": {"A": ["127.0.0.1"], "ttl": 5},
 "denied.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF
e2e_servers dns http echo udp

cat >"$tmp/policy.yaml" <<EOF
version: 1
allow:
  - host: allowed.test
    ports: [$http]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF

# aisb with the test's policy, workspace and home volume; output in out/err
sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}

# 1. an allowed host, by name, through the gate
rc=0; sess -- curl -sS -o /dev/null -w '%{http_code}' "http://allowed.test:$http/x" || rc=$?
check "allowed: exit" "$rc" 0
check "allowed: status" "$(cat "$tmp/out")" 200
sd=$(e2e_session)
if grep -q '"allowed.test"' "$sd/audit.jsonl" 2>/dev/null; then ok; else bad "no audit line for allowed.test"; fi
check "mode of record" "$(stat -c %a "$sd/record" 2>/dev/null || echo missing)" 600
if grep -Eq '^timings_ms host [0-9]+ gate [1-9][0-9]* image [0-9]+ run [1-9][0-9]* teardown [0-9]+$' "$sd/record"; then
	ok; else bad "record timings: $(grep timings "$sd/record")"; fi
for f in env token; do
	check "$f removed at the end" "$(test -e "$sd/$f" && echo present || echo gone)" gone
done

# 2. a denied host: 403 from the gate, with the reason
rc=0; sess -- curl -sS -D - -o /dev/null "http://denied.test:$http/" || rc=$?
if grep -q '^HTTP/1.1 403' "$tmp/out"; then ok; else bad "denied.test not refused"; fi
if grep -qi '^X-Aisb-Decision:' "$tmp/out"; then ok; else bad "no X-Aisb-Decision"; fi

# 3. around the gate: a direct TCP connection to the host's loopback
: >"$tmp/echo.log"
rc=0; sess -- curl -sS --noproxy '*' --max-time 5 "http://10.0.2.2:$echo_port/" || rc=$?
if [ "$rc" != 0 ]; then ok; else bad "direct TCP connection succeeded"; fi
if grep -q accept "$tmp/echo.log"; then bad "echo server saw a connection"; else ok; fi

# 4. UDP, and DNS to the test's own server, out of the sandbox.  The
# same query from the host shows that it would be logged if it arrived.
query() {	# a DNS query for NAME (one label + .test) as printf escapes
	printf '\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x%02x%s\\x04test\\x00\\x00\\x01\\x00\\x01' \
	    "${#1}" "$1"
}
bash -c "printf '$(query control)' >/dev/udp/127.0.0.1/$dns"
sleep 0.5
if grep -q '^control.test' "$tmp/dns.log"; then ok; else bad "the DNS server logs no query from the host"; fi
rc=0; sess -- bash -c "echo hello >/dev/udp/10.0.2.2/$udp; printf '$(query escape)' >/dev/udp/10.0.2.2/$dns; sleep 1" || rc=$?
sleep 1
if [ -s "$tmp/udp.log" ]; then bad "UDP reached the host"; else ok; fi
if grep -q '^escape.test' "$tmp/dns.log"; then bad "DNS from the sandbox reached the host"; else ok; fi

# 5. who the command runs as
rc=0; sess -- sh -c 'id -u; grep -E "^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status' || rc=$?
check "identity: exit" "$rc" 0
check "uid" "$(sed -n 1p "$tmp/out")" 1000
for c in CapPrm CapEff CapBnd CapAmb; do
	check "$c" "$(awk -v k="$c:" '$1 == k { print $2 }' "$tmp/out")" 0000000000000000
done
check "NoNewPrivs" "$(awk '$1 == "NoNewPrivs:" { print $2 }' "$tmp/out")" 1

# 5b. the ulimits a session has are those its dry run shows (one builder)
rc=0; sess --dry-run -- true || rc=$?
want=$(grep -o -- '--ulimit=[a-z]*=[0-9]*' "$tmp/out" | sed 's/.*=//' | paste -sd' ')
rc=0; sess -- cat /proc/self/limits || rc=$?
check "ulimits: dry run vs session (nofile nproc)" "$(awk '
    /^Max open files/ { n = $5 } /^Max processes/ { p = $4 }
    END { print n, p }' "$tmp/out")" "$want"

# 5c. no policy named anywhere: the build tree's default, said first
rc=0; (cd "$tmp/ws" && "$aisb" --home-volume "$vol" --package curl -- true) \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "default policy: exit" "$rc" 0
case $(sed -n 1p "$tmp/err") in
"aisb: policy: the shipped default, $(cd "$top_builddir" && pwd)/aisb-default-policy.yaml (build tree copy, sha256:"*) ok ;;
*) bad "default policy: first line: $(sed -n 1p "$tmp/err")" ;;
esac

# 6. exit status passes through
rc=0; sess -- sh -c 'exit 42' || rc=$?
check "exit status" "$rc" 42

# 7. --env NAME unset on the host: refused before anything starts
n0=$(ls "$XDG_STATE_HOME/aisb/sessions" | wc -l)
rc=0; (unset AISB_E2E_UNSET; sess --env AISB_E2E_UNSET -- true) || rc=$?
check "unset env: exit" "$rc" 78
check "unset env: no session" "$(ls "$XDG_STATE_HOME/aisb/sessions" | wc -l)" "$n0"

# 8. a secret reaches the command and nothing else
secret=hunter2-$$-$RANDOM
want=$(printf %s "$secret" | sha256sum | cut -d' ' -f1)
e2e_session_mark
rc=0; AISB_E2E_SECRET=$secret sess --env AISB_E2E_SECRET --keep -- \
    sh -c 'printf %s "$AISB_E2E_SECRET" | sha256sum | cut -d" " -f1' || rc=$?
check "secret: delivered" "$(cat "$tmp/out")" "$want"
sd=$(e2e_session)
name=aisb-$(basename "$sd")
if grep -rqs "$secret" "$sd/record" "$sd/plan" "$sd/gate.log" "$sd/audit.jsonl"; then
	bad "secret in the session record"; else ok; fi
# everything podman keeps of the container: argv, environment, mounts
# (the values reach the command through the enforcer, not podman's env)
podman inspect "$name" >"$tmp/inspect" 2>&1 || bad "podman inspect $name failed"
if grep -q "$secret" "$tmp/inspect"; then
	bad "secret in podman inspect"; else ok; fi
if grep -q -- '"--env-file"' "$tmp/inspect" && grep -q '/run/aisb/env' "$tmp/inspect"; then
	ok; else bad "inspect shows no env file for the enforcer"; fi
if grep -q '_proxy=http' "$tmp/inspect"; then bad "proxy URL in podman inspect"; else ok; fi
# ps while a session with the secret runs: its container, found by the
# session's label once its folder is there
(cd "$tmp/ws" && AISB_E2E_SECRET=$secret "$aisb" --policy "$tmp/policy.yaml" \
    --home-volume "$vol" --package curl --env AISB_E2E_SECRET -- sleep 8) \
    >/dev/null 2>&1 </dev/null &
bg=$!
running=0 bgsd=
for _ in $(seq 100); do
	[ -n "$bgsd" ] || bgsd=$(e2e_sessions)
	if [ -n "$bgsd" ] && [ -n "$(podman ps -q --filter \
	    "label=io.aisb.session=$(basename "$bgsd")")" ]; then
		running=1; break; fi
	sleep 0.2
done
check "session running for ps" "$running" 1
procs=$(ps -eo args)
if grep -qF -- "$secret" <<<"$procs"; then bad "secret in ps"; else ok; fi
# clean while it runs: the running container and its volume are spared
"$aisb" clean --volumes="$vol" >"$tmp/out" 2>&1 || bad "clean failed: $(cat "$tmp/out")"
if grep -q "kept volume $vol: used by" "$tmp/out"; then ok; else bad "clean did not spare $vol: $(cat "$tmp/out")"; fi
check "running session spared" "$(podman ps -q --filter \
    "label=io.aisb.session=$(basename "$bgsd")" | wc -l)" 1
wait "$bg" || true

# 11. limits, read from inside (cgroup v2 or v1 files)
rc=0; sess --memory 96m --pids 77 --cpus 1.5 -- sh -c '
	cat /sys/fs/cgroup/memory.max 2>/dev/null ||
	    cat /sys/fs/cgroup/memory/memory.limit_in_bytes
	cat /sys/fs/cgroup/pids.max 2>/dev/null ||
	    cat /sys/fs/cgroup/pids/pids.max
	cat /sys/fs/cgroup/cpu.max 2>/dev/null ||
	    echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"' || rc=$?
check "limits: exit" "$rc" 0
check "memory limit" "$(sed -n 1p "$tmp/out")" $((96 * 1024 * 1024))
check "pids limit" "$(sed -n 2p "$tmp/out")" 77
check "cpu limit" "$(sed -n 3p "$tmp/out")" "150000 100000"
# and the pids limit holds: 40 sleepers cannot all start under --pids 20
rc=0; sess --pids 20 -- sh -c 'for i in $(seq 40); do sleep 20 & done; echo all started' || rc=$?
if [ "$rc" != 0 ] && grep -qi 'fork' "$tmp/err" && ! grep -q 'all started' "$tmp/out"; then ok; else
	bad "pids: 40 processes under --pids 20 (rc $rc): $(cat "$tmp/out") $(head -c 300 "$tmp/err")"; fi

# 12. --net none: no proxy, no route, the gate not even started
e2e_session_mark
rc=0; sess --net none -- sh -c 'env | grep -ci _proxy; curl -sS --max-time 5 "http://10.0.2.2:'"$echo_port"'/"' || rc=$?
check "net none: no proxy variables" "$(sed -n 1p "$tmp/out")" 0
if [ "$rc" != 0 ]; then ok; else bad "--net none reached the host"; fi
sd=$(e2e_session)
if [ -e "$sd/gate.log" ]; then bad "--net none started a gate"; else ok; fi
if grep -Eq '^timings_ms host [0-9]+ gate 0 image' "$sd/record"; then ok; else bad "--net none timings: $(grep timings "$sd/record")"; fi

# 13. --net direct, rootful and rootless: tests/e2e/direct.sh.  Here
# only its policy, which a named gate of another policy refuses (14).
cat >"$tmp/direct.yaml" <<EOF
version: 1
allow:
  - host: direct.test
    ports: [$http]
EOF

# 14. named gates: one gate shared by sessions, credentials withdrawn when
# a launcher dies, reaped when idle, stopped by gate down.
rc=0; "$aisb" gate up e2e --policy "$tmp/policy.yaml" --idle 6 >"$tmp/out" 2>"$tmp/err" || rc=$?
check "gate up" "$rc" 0
gdir=$XDG_STATE_HOME/aisb/gates/e2e
# read now: on a loaded machine the idle reap below may come first
gpid=$(awk '$1 == "gate" { print $2 }' "$gdir/state")
check "gate ls: up" "$("$aisb" gate ls | awk '$1 == "e2e" { print $2 }')" up
rc=0; "$aisb" gate up e2e --policy "$tmp/policy.yaml" >/dev/null 2>&1 || rc=$?
check "gate up twice" "$rc" 78
e2e_session_mark
# in a folder of its own: one writing session per workspace (the second
# would be refused, 75), and what is shared here is the gate
mkdir -p "$tmp/ws2"
(cd "$tmp/ws2" && "$aisb" --policy "$tmp/policy.yaml" --gate e2e --home-volume "$vol" \
    --package curl -- sh -c 'sleep 2; curl -sS -o /dev/null -w "%{http_code}" "http://allowed.test:'"$http"'/one"') \
    >"$tmp/out1" 2>"$tmp/err1" </dev/null &
bg=$!
rc=0; sess --gate e2e -- curl -sS -o /dev/null -w '%{http_code}' "http://allowed.test:$http/two" || rc=$?
check "named gate: second session" "$(cat "$tmp/out")" 200
wait "$bg" || true
check "named gate: first session" "$(cat "$tmp/out1")" 200
both=$(e2e_sessions)
check "sessions run" "$(grep -c . <<<"$both")" 2
# each session folder holds its own decisions, and only those
for sd in $both; do
	id=$(basename "$sd")
	if [ -e "$sd/gate.log" ]; then bad "--gate session $id started its own gate"; else ok; fi
	mine=$(grep -c "\"session\":\"session-$id\"" "$sd/audit.jsonl" 2>/dev/null || true)
	all=$(wc -l <"$sd/audit.jsonl" 2>/dev/null || echo 0)
	if [ "${mine:-0}" -ge 1 ] && [ "$mine" = "$all" ]; then ok; else
		bad "session $id audit: $mine of $all lines its own"; fi
	if grep -q "\"session\":\"session-$id\"" "$gdir/audit.jsonl"; then ok; else
		bad "gate audit lacks session $id"; fi
done
check "credentials withdrawn" "$(grep -c '^session-' "$gdir/tokens")" 0
rc=0; sess --gate e2e --policy "$tmp/direct.yaml" -- true || rc=$?
check "named gate, other policy" "$rc" 78
rc=0; sess --gate e2e --net none -- true || rc=$?
check "named gate, --net none" "$rc" 78
rc=0; sess --gate nosuch -- true || rc=$?
check "named gate not up" "$rc" 78
if grep -q 'aisb gate up nosuch' "$tmp/err"; then ok; else bad "no hint: $(cat "$tmp/err")"; fi
# a launcher killed while attached: the supervisor withdraws its credential
e2e_session_mark
(cd "$tmp/ws" && exec "$aisb" --policy "$tmp/policy.yaml" --gate e2e --home-volume "$vol" \
    --package curl -- sleep 60) >/dev/null 2>&1 </dev/null &
bg=$!
for _ in $(seq 100); do grep -q '^session-' "$gdir/tokens" 2>/dev/null && break; sleep 0.2; done
check "attached credential" "$(grep -c '^session-' "$gdir/tokens")" 1
ksd=$(e2e_session)
killed=label=io.aisb.session=${ksd##*/}
kill -9 "$bg"; wait "$bg" 2>/dev/null || true
for _ in $(seq 50); do grep -q '^session-' "$gdir/tokens" || break; sleep 0.2; done
check "credential of a killed launcher withdrawn" "$(grep -c '^session-' "$gdir/tokens")" 0
# ... and its watcher stops and removes the container (podman stop, then
# run --rm); waited for, so that clean below does not race that removal
for _ in $(seq 100); do [ -z "$(podman ps -aq --filter "$killed")" ] && break; sleep 0.2; done
check "killed launcher: its container stopped by the watcher" \
    "$(podman ps -a --filter "$killed" --format '{{.Names}}')" ""
# idle: down within --idle (6 s) and the supervisor's 1 s tick
for _ in $(seq 60); do [ "$("$aisb" gate ls | awk '$1 == "e2e" { print $2 }')" = down ] && break; sleep 0.25; done
check "reaped when idle" "$("$aisb" gate ls | awk '$1 == "e2e" { print $2 }')" down
if kill -0 "$gpid" 2>/dev/null; then bad "the idle gate still runs"; else ok; fi
# gate down
"$aisb" gate up e2e2 --policy "$tmp/policy.yaml" >/dev/null 2>&1 || bad "gate up e2e2"
gpid=$(awk '$1 == "gate" { print $2 }' "$XDG_STATE_HOME/aisb/gates/e2e2/state")
rc=0; "$aisb" gate down e2e2 >/dev/null || rc=$?
check "gate down" "$rc" 0
if kill -0 "$gpid" 2>/dev/null; then bad "gate down left the gate running"; else ok; fi
rc=0; "$aisb" gate down e2e2 >/dev/null 2>&1 || rc=$?
check "gate down twice" "$rc" 78

# 10. sessions ls/show, and clean after the sessions ended
"$aisb" sessions ls >"$tmp/out"
check "sessions ls lines" "$(grep -c '^[0-9a-f]\{24\} ' "$tmp/out")" \
    "$(ls "$XDG_STATE_HOME/aisb/sessions" | wc -l)"
if grep -q " 42 *sh -c 'exit 42'" "$tmp/out"; then ok; else bad "sessions ls lacks the exit 42 session: $(cat "$tmp/out")"; fi
"$aisb" sessions show "$(basename "$sd" | cut -c1-10)" >"$tmp/out"
if grep -q "^policy_sha256 [0-9a-f]\{64\}$" "$tmp/out"; then ok; else bad "sessions show: $(cat "$tmp/out")"; fi
"$aisb" clean --volumes="$vol" >"$tmp/out" 2>&1 || bad "clean failed: $(cat "$tmp/out")"
if grep -q "removed volume $vol" "$tmp/out"; then ok; else bad "volume not removed: $(cat "$tmp/out")"; fi
check "no session container left" "$(podman ps -a --filter label=io.aisb.kind=session -q | wc -l)" 0
rc=0; "$aisb" sessions show nothex >/dev/null 2>&1 || rc=$?
check "sessions show bad id" "$rc" 78
podman rm -f "$name" >/dev/null 2>&1 || true
AISB_E2E_SECRET=$secret "$aisb" --policy "$tmp/policy.yaml" --env AISB_E2E_SECRET \
    --dry-run -- true >"$tmp/out" 2>&1 || true
if grep -q "$secret" "$tmp/out"; then bad "secret in --dry-run"; else ok; fi

# 9. --timeout kills and exits 124
rc=0; sess --timeout 3 -- sleep 60 || rc=$?
check "timeout" "$rc" 124

# 15. start-up: with nothing changed, a session runs podman once (its own
# run) and the record keeps that argv; a removed image is seen at once
# (the store's image list changed), not taken from the cached listing.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "$1 $2" >>"%s"\nexec %s "$@"\n' "$tmp/podman.calls" \
    "$(command -v podman)" >"$tmp/bin/podman"
chmod 0755 "$tmp/bin/podman"
rc=0; PATH=$tmp/bin:$PATH sess --net none -- true || rc=$?
check "warm-up session" "$rc" 0
: >"$tmp/podman.calls"
e2e_session_mark
rc=0; PATH=$tmp/bin:$PATH sess --net none -- true || rc=$?
check "cached session" "$rc" 0
# the first word: run, or a global flag such as --runtime=runc before it
check "podman runs before the session's own" \
    "$(grep -v -e '^run ' -e '^--[a-z-]*=[^ ]* run$' "$tmp/podman.calls" | sed -n 1,3p | tr '\n' ';')" ""
sd=$(e2e_session)
img=$(grep '^podman ' "$sd/record" | tr ' ' '\n' | grep -A1 -e '^--entrypoint=' | tail -1)
case $img in localhost/aisb:*) ok ;; *) bad "no image in the record's podman line: $(grep '^podman' "$sd/record")" ;; esac
# 16. the previews name the tag this session ran, not "<image>"
rc=0; sess --net none --dry-run -- true || rc=$?
check "dry run: exit" "$rc" 0
check "dry run: the image" "$(sed -n 's/^# image \([^ ]*\) .*/\1/p' "$tmp/out")" "$img"
check "dry run: in podman's argv" "$(grep -c " $img --plan " "$tmp/out")" 1
rc=0; sess --net none --print-config || rc=$?
check "print-config: the image" "$(sed -n 's/^sandbox image  *\([^ ]*\) (built)$/\1/p' "$tmp/out")" "$img"
podman rmi "$img" >/dev/null 2>&1 || bad "podman rmi $img failed"
rc=0; sess --net none --dry-run -- true || rc=$?
check "dry run, image removed: the tag still" "$(grep -c "^# image $img (not built yet" "$tmp/out")" 1
rc=0; sess --net none -- true || rc=$?
check "session after its image was removed" "$rc" 0
if podman image exists "$img"; then ok; else bad "the removed image was not rebuilt: $(head -c 300 "$tmp/err")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
