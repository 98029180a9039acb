#!/bin/bash
# aisb-gate in a Kubernetes pod, without Kubernetes (issue 32):
#
# --watch with a policy folder laid out and updated the way the kubelet
# does a ConfigMap mount (files in a hidden ..TIMESTAMP folder, ..data a
# symlink to it, the visible names symlinks through ..data; an update is
# a new folder and one rename of ..data_tmp over ..data): the new rule
# applies without a restart (same pid), a broken policy is refused with
# its file:line:col and the old one kept, each outcome one log line and
# one audit line (event "reload"); another file of the folder changing
# reloads nothing; --users and its policies from a Secret-like folder;
# after --user drops privileges; with --workers 2; and polling when
# inotify cannot be had (a user namespace whose instance limit is 0).
#
# /healthz and /readyz on the metrics listener: ok; ready while the test's
# DNS server answers, 503 once it is gone and ready again when it is back;
# 503 "draining" after SIGTERM while a tunnel drains, /healthz still ok.
#
# --audit -: the JSON lines on stdout carry the same fields as the file's.
set -euo pipefail
. "$(dirname "$0")/gate_lib.sh"

start_upstream http 192.0.2.10
up=$up_port
start_upstream echo 192.0.2.11
echo_port=$up_port
start_dns '{"a.test": {"A": ["192.0.2.10"]}, "b.test": {"A": ["192.0.2.10"]},
    "c.test": {"A": ["192.0.2.10"]}, "echo.test": {"A": ["192.0.2.11"]}}'

# --- a ConfigMap folder, as the kubelet writes and updates it ----------------
cm=$tmp/cm
mkdir -m 0755 "$cm"
gen=0
# cm_set FILE=CONTENT-FILE...: one atomic update of the whole folder
cm_set() {
	local d a
	gen=$((gen + 1))
	d=..2026_12_01_10_00_$(printf %02d "$gen").00000000$gen
	mkdir -m 0755 "$cm/$d"
	for a; do
		cp "${a#*=}" "$cm/$d/${a%%=*}"
		chmod 0644 "$cm/$d/${a%%=*}"
		[ -L "$cm/${a%%=*}" ] || ln -s "..data/${a%%=*}" "$cm/${a%%=*}"
	done
	ln -s "$d" "$cm/..data_tmp"
	mv -T "$cm/..data_tmp" "$cm/..data"
	# the kubelet removes the old folder after the swap
	for old in "$cm"/..2026_*; do
		[ "$old" = "$cm/$d" ] || rm -rf "$old"
	done
}
pol() {	# pol FILE HOST...: a policy allowing HOSTs
	write_policy "$@"
}
pol "$tmp/p1.yaml" a.test echo.test
pol "$tmp/p2.yaml" b.test echo.test
printf 'version: 1\nallow:\n  - host: c.test\n    ports: [nope]\n' >"$tmp/broken.yaml"
cm_set gate.yaml="$tmp/p1.yaml"

wait_for() {	# wait_for WHAT CMD...: up to 10 s for CMD to succeed
	local what=$1 i
	shift
	for i in $(seq 100); do
		"$@" && { ok; return 0; }
		sleep 0.1
	done
	bad "$what: not within 10 s"
	return 0
}
code() {	# code HOST: the forward's status through the gate
	proxy_get "http://$1:$up/" | cut -d' ' -f2
}
is() { [ "$(code "$1")" = "$2" ]; }
lines() { grep -c "$1" "$2" || true; }

# --- the gate, audit on stdout, metrics and probes ---------------------------
G=$tmp/gate.w.err
OUT=$tmp/stdout.jsonl
"$gate_bin" -d -v -f "$cm/gate.yaml" -l 127.0.0.1:0 --port-file "$tmp/w.port" \
    --metrics 127.0.0.1:9128 --audit - --watch >"$OUT" 2>"$G" &
w_pid=$!
pids+=($w_pid)
wait_file "$tmp/w.port"
gate_port=$(cat "$tmp/w.port")
grep -q -- "--watch: inotify on the folders" "$G" && ok || bad "not watching: $(cat "$G")"

check "a.test allowed" "$(code a.test)" 200
check "b.test denied" "$(code b.test)" 403
cm_set gate.yaml="$tmp/p2.yaml"
wait_for "the swapped policy applies" is b.test 200
check "a.test denied now" "$(code a.test)" 403
check "the same process" "$(kill -0 "$w_pid" && echo up)" up
check "one reload line" "$(lines "reload: policy $cm/gate.yaml sha256:.* applied" "$G")" 1
expect_audit "$OUT" event=reload reason=applied "detail=policy $cm/gate.yaml sha256:* applied"

# broken: refused with its position, the old policy kept
cm_set gate.yaml="$tmp/broken.yaml"
wait_for "the broken policy is refused" grep -q "reload: refused: $cm/gate.yaml is invalid, keeping policy" "$G"
grep -q "reload: refused: .*gate.yaml:4:.*error" "$G" && ok ||
    bad "the refusal names no file:line:col: $(grep refused "$G")"
expect_audit "$OUT" event=reload reason=refused "detail=refused: $cm/gate.yaml is invalid*"
check "b.test still allowed" "$(code b.test)" 200
check "c.test still denied" "$(code c.test)" 403

# another file of the folder: no reload
n=$(lines "reload:" "$G")
echo x >"$cm/unrelated"
sleep 1
check "an unrelated file reloads nothing" "$(lines "reload:" "$G")" "$n"

# fixed again: applied (a refused attempt is tried again on the next change)
cm_set gate.yaml="$tmp/p1.yaml"
wait_for "the fixed policy applies" is a.test 200

# --- probes -------------------------------------------------------------------
probe() {	# probe PATH: "STATUS BODY"
	curl -s -m 10 -o "$tmp/probe.body" -w '%{http_code}' \
	    "http://127.0.0.1:9128$1" || true
	printf ' %s' "$(head -c 200 "$tmp/probe.body")"
}
check "/healthz" "$(probe /healthz)" "200 ok"
r=$(probe /readyz)
case $r in "200 ready: listening on 127.0.0.1:$gate_port, policy sha256:"*"DNS answering") ok ;;
*) bad "/readyz: $r" ;; esac
m=$(probe /metrics)
check "/metrics still served" "${m:0:3}" 200
check "another path" "$(probe /ready | cut -d' ' -f1)" 404
# the resolver gone: not ready (after the result's 2 s), then back
kill "${pids[2]}"	# start_dns's server: the third process started
wait "${pids[2]}" 2>/dev/null || true
sleep 2.1
check "/readyz without DNS" "$(probe /readyz)" \
    "503 not ready: DNS not answering (server refused)"
check "/healthz without DNS" "$(probe /healthz)" "200 ok"
"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" --port "$dns_port" \
    --port-file "$tmp/dns2.port" --log "$tmp/dns.log" >/dev/null 2>&1 &
pids+=($!)
wait_file "$tmp/dns2.port"
sleep 2.1
case $(probe /readyz) in "200 ready:"*) ok ;; *) bad "/readyz with DNS back: $(probe /readyz)" ;; esac

# --- audit on stdout: the fields of a file's lines -----------------------------
start_gate file "$cm/gate.yaml"
check "a.test through the file gate" "$(code a.test)" 200
gate_port=$(cat "$tmp/w.port")
check "a.test through the stdout gate" "$(code a.test)" 200
"$PY" - "$OUT" "$tmp/audit.file.log" <<'PY' && ok || bad "stdout and file audit lines differ"
import json, sys
def last(path, event):
    ls = [json.loads(l) for l in open(path) if l.startswith("{")]
    return [l for l in ls if l["event"] == event and l.get("host") == "a.test"][-1]
for ev in ("decision", "close"):
    a, b = last(sys.argv[1], ev), last(sys.argv[2], ev)
    if sorted(a) != sorted(b):
        sys.exit("%s: %s != %s" % (ev, sorted(a), sorted(b)))
    for k in a:
        if k not in ("time", "conn", "client", "dns_ms", "connect_ms",
                     "duration_ms") and a[k] != b[k]:
            sys.exit("%s: %s: %r != %r" % (ev, k, a[k], b[k]))
PY
check "stdout holds JSON lines only" "$(grep -vc '^{' "$OUT" || true)" 0

# --- SIGTERM: not ready while draining, alive -------------------------------
"$PY" -u -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"CONNECT echo.test:%s HTTP/1.1\r\nHost: echo.test\r\n\r\n" % sys.argv[2].encode())
print(s.recv(100).split(b"\r\n")[0].decode(), flush=True)
time.sleep(8)
' "$gate_port" "$echo_port" >"$tmp/tunnel.out" &
pids+=($!)
wait_file "$tmp/tunnel.out"
kill -TERM "$w_pid"
sleep 0.3
check "/readyz draining" "$(probe /readyz)" \
    "503 not ready: draining (SIGTERM): new connections are refused"
check "/healthz draining" "$(probe /healthz)" "200 ok"
kill -INT "$w_pid"
wait "$w_pid" 2>/dev/null || true

# --- --users from a Secret-like folder, --user, --workers 2 -----------------
sec=$tmp/secret
mkdir -m 0755 "$sec"
chmod 0711 "$tmp"	# --user nobody reaches the absolute policy= path
cm_dir=$cm
printf 'ci plain:s3cret policy=%s/ci.yaml\n' "$cm" >"$tmp/users"
pol "$tmp/ci1.yaml" a.test
pol "$tmp/ci2.yaml" c.test
cm_set gate.yaml="$tmp/p1.yaml" ci.yaml="$tmp/ci1.yaml"
(cm=$sec; gen=100; cm_set users="$tmp/users")
chmod 0644 "$sec"/..2026_*/users
uget() {	# uget HOST: status as user ci
	curl -s -m 10 -o /dev/null -w '%{http_code}' \
	    -x "http://ci:s3cret@127.0.0.1:$gate_port" "http://$1:$up/" || true
}
uis() { [ "$(uget "$1")" = "$2" ]; }
for mode in user workers; do
	rm -f "$tmp/u.port"
	if [ "$mode" = user ]; then
		extra=(--user nobody)
		[ -z "${AISB_GATE_USERNS:-}" ] || continue
	else
		extra=(--workers 2)
	fi
	"$gate_bin" -d -f "$cm_dir/gate.yaml" -l 127.0.0.1:0 --port-file "$tmp/u.port" \
	    --users "$sec/users" --watch --audit "$tmp/audit.$mode.log" \
	    "${extra[@]}" >/dev/null 2>"$tmp/gate.$mode.err" &
	gate_pid=$!
	pids+=($gate_pid)
	wait_file "$tmp/u.port"
	gate_port=$(cat "$tmp/u.port")
	check "$mode: ci reaches a.test" "$(uget a.test)" 200
	cm_set gate.yaml="$tmp/p1.yaml" ci.yaml="$tmp/ci2.yaml"
	wait_for "$mode: the user's swapped policy applies" uis c.test 200
	check "$mode: a.test denied to ci now" "$(uget a.test)" 403
	# the Secret's credentials swapped
	printf 'ci plain:n3w policy=%s/ci.yaml\n' "$cm" >"$tmp/users2"
	(cm=$sec; gen=$((200 + ${#mode})); cm_set users="$tmp/users2")
	chmod 0644 "$sec"/..2026_*/users
	wait_for "$mode: the new credential" sh -c "curl -s -m 5 -o /dev/null \
	    -w '%{http_code}' -x http://ci:n3w@127.0.0.1:$gate_port \
	    http://c.test:$up/ | grep -qx 200"
	check "$mode: the old credential refused" "$(uget c.test)" 407
	if [ "$mode" = workers ]; then
		# several connections: the kernel spreads them over both
		n=0
		for i in 1 2 3 4 5 6; do
			c=$(curl -s -m 5 -o /dev/null -w '%{http_code}' \
			    -x "http://ci:n3w@127.0.0.1:$gate_port" "http://c.test:$up/$i")
			[ "$c" = 200 ] && n=$((n + 1))
		done
		check "workers: every worker has the new set" "$n" 6
		check "workers: one audit line per reload" \
		    "$(audit_count "$tmp/audit.$mode.log" event=reload reason=applied \
		    'detail=policy *')" 2
	fi
	printf 'ci plain:s3cret policy=%s/ci.yaml\n' "$cm" >"$tmp/users"
	(cm=$sec; gen=$((300 + ${#mode})); cm_set users="$tmp/users")
	chmod 0644 "$sec"/..2026_*/users
	cm_set gate.yaml="$tmp/p1.yaml" ci.yaml="$tmp/ci1.yaml"
	wait_for "$mode: back to the first set" uis a.test 200
	kill -TERM "$gate_pid"
	wait "$gate_pid" 2>/dev/null || true
done

# --- no inotify: the poll --------------------------------------------------------
if [ -z "${AISB_GATE_USERNS:-}" ] && unshare -U -r true 2>/dev/null; then
	rm -f "$tmp/p.port"
	# the user namespace's own limit (never fs.inotify's: the host's)
	unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_instances &&
	    exec "$0" "$@"' "$gate_bin" -d -v -f "$cm/gate.yaml" -l 127.0.0.1:0 \
	    --port-file "$tmp/p.port" --watch >/dev/null 2>"$tmp/gate.poll.err" &
	gate_pid=$!
	pids+=($gate_pid)
	wait_file "$tmp/p.port"
	gate_port=$(cat "$tmp/p.port")
	grep -q -- "--watch: polling every 2s instead of inotify" "$tmp/gate.poll.err" &&
	    ok || bad "no fallback to the poll: $(cat "$tmp/gate.poll.err")"
	check "poll: a.test allowed" "$(code a.test)" 200
	cm_set gate.yaml="$tmp/p2.yaml"
	wait_for "poll: the swapped policy applies" is b.test 200
fi

finish
