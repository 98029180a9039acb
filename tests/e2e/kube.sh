#!/bin/bash
# End to end (issue 32): the sidecar pattern of contrib/kube/ played by
# `podman kube play`, the engine here (no cluster): docs/kubernetes.md.
#
# The test builds the gate's image as `make gate-image` does
# (contrib/gate-image/build.sh, FROM scratch, offline) and an app image of
# the host's curl, nft and sleep the same way; its upstreams are HTTP
# servers on the host's loopback, which the pod reaches at 10.0.2.2
# (slirp4netns with allow_host_loopback: addresses inside the pod's own
# namespace), and its DNS server (gate_dns.py) answers the gate's
# readiness probe there.  The manifests are contrib/kube/sidecar's, as
# shipped but for the app's image and command and the policy's contents
# (its plan is the shipped one); podman 4.3 plays them.
#
# Play 1, the ConfigMap as podman mounts it: the init container's table is
# in the pod's network namespace (nft, entered from the host); the app
# reaches the allowed upstream through the gate by its proxy variables
# (a forward and a CONNECT tunnel); a direct connection (no proxy) and a
# denied host and port are refused; root in the app container (no
# CAP_NET_ADMIN) cannot change the table; the gate's audit lines are
# JSON on its stdout (podman logs); /healthz and /readyz answer.  Then
# `podman kube play --down`: no pod, no container left.
#
# Play 2, the policy folder laid out and swapped as the kubelet does (a
# hostPath here, since podman writes a ConfigMap once): a new rule applies
# in the running gate (the same container, started once), a broken policy
# is refused and the old kept; --down again.  At the end no pod,
# container, volume or image is left in the test's store (lib.sh removes
# the store whatever happens, failure included).
#
# Needs root, podman, nft, nsenter, ldd, curl and a python3 with its yaml
# module (/usr/bin/python3: python3-yaml).  Runs only with AISB_E2E=1.
set -euo pipefail

PY=/usr/bin/python3
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start kube nft nsenter ldd curl sleep
[ -x "$PY" ] && "$PY" -c 'import yaml' 2>/dev/null ||
	{ echo "SKIP: $PY with the yaml module (python3-yaml)"; exit 77; }
gate_bin=$build/aisb-gate
enforce_bin=$build/aisb-enforce
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
IMAGE=localhost/aisb-gate:$version
APP=localhost/aisb-e2e-app:1
POD="aisb-sidecar-example"	# quoted: shellcheck reads aisb-sidecar as arithmetics (lib.sh sets aisb)
chmod 0755 "$tmp"
e2e_cleanup_more() {
	local f
	for f in "$tmp"/play*.yaml; do
		[ -f "$f" ] && podman kube play --down "$f" >/dev/null 2>&1
	done
	return 0
}
# the runtime and limits a session passes as flags (launcher/podman.c),
# for kube play, which takes none
nofile=$(ulimit -Hn); [ "$nofile" -le 65536 ] || nofile=65536
nproc=$(ulimit -Hu); [ "$nproc" != unlimited ] && [ "$nproc" -le 32768 ] || nproc=32768
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
    "$nofile" "$nofile" "$nproc" "$nproc" >"$tmp/containers.conf"
export CONTAINERS_CONF=$tmp/containers.conf

wait_for() {	# wait_for WHAT CMD...: up to 30 s
	local what=$1
	shift
	for _ in $(seq 150); do
		"$@" >/dev/null 2>&1 && { ok "$what"; return 0; }
		sleep 0.2
	done
	bad "$what: not within 30 s"
	return 1
}

# --- upstreams and DNS on the host's loopback --------------------------------
# not e2e_servers: two http upstreams (e2e_servers starts one of a kind)
"$PY" "$here/gate_upstream.py" http --bind 127.0.0.1 --port 0 \
    --port-file "$tmp/up1.port" --log "$tmp/up1.log" >/dev/null 2>&1 &
pids+=($!)
"$PY" "$here/gate_upstream.py" http --bind 127.0.0.1 --port 0 \
    --port-file "$tmp/up2.port" --log "$tmp/up2.log" >/dev/null 2>&1 &
pids+=($!)
echo '{}' >"$tmp/zone.json"
"$PY" "$here/gate_dns.py" --zone "$tmp/zone.json" --port-file "$tmp/dns.port" \
    --log "$tmp/dns.log" >/dev/null 2>&1 &
pids+=($!)
wait_file "$tmp/up1.port"
wait_file "$tmp/up2.port"
wait_file "$tmp/dns.port"
UP1=$(cat "$tmp/up1.port")
UP2=$(cat "$tmp/up2.port")
policy() {	# policy FILE PORT: the upstream on the host's loopback, on PORT
	printf 'version: 1\nallow:\n  - cidr: 10.0.2.2/32\n    ports: [%s]\nallow_ranges: [10.0.2.2/32]\ndns:\n  servers: ["10.0.2.2:%s"]\n' \
	    "$2" "$(cat "$tmp/dns.port")" >"$1"
}
policy "$tmp/p1.yaml" "$UP1"
policy "$tmp/p2.yaml" "$UP2"
printf 'version: 1\nallow:\n  - host: [nope\n' >"$tmp/broken.yaml"

# --- images: the gate's as make gate-image builds it, the app's ---------------
"$top_srcdir/contrib/gate-image/build.sh" "$IMAGE" "$gate_bin" "$enforce_bin" \
    >"$tmp/out" 2>"$tmp/err" && ok "the gate's image built offline" ||
    { bad "gate image: $(cat "$tmp/err")"; exit 1; }
"$top_srcdir/contrib/gate-image/build.sh" "$APP" "$(command -v curl)" \
    "$(command -v nft)" "$(command -v sleep)" >"$tmp/out" 2>"$tmp/err" ||
    { bad "app image: $(cat "$tmp/err")"; exit 1; }
check "the gate's image runs as" "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" 65532:65532

# play FILE [FOLDER]: contrib/kube/sidecar as one file of documents, the
# app's image and command replaced, the ConfigMap's gate.yaml that of
# p1.yaml, its ports published on free ones of the host's loopback; with
# FOLDER, the volume a hostPath on it instead
play_yaml() {
	"$PY" - "$top_srcdir/contrib/kube/sidecar" "$1" "$APP" "$tmp/p1.yaml" \
	    "${2:-}" <<'PY'
import socket, sys, yaml
src, out, app, policy, folder = sys.argv[1:6]
docs = []
for f in ("configmap.yaml", "pod.yaml"):
    docs += [d for d in yaml.safe_load_all(open("%s/%s" % (src, f))) if d]
for d in docs:
    if d["kind"] == "ConfigMap":
        d["data"]["gate.yaml"] = open(policy).read()
    if d["kind"] == "Pod":
        for c in d["spec"]["containers"]:
            # podman kube play publishes a containerPort on the host
            # (9128, the metrics', on 0.0.0.0): a free one on loopback
            # instead, which another run cannot be holding
            for p in c.get("ports", []):
                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                p["hostPort"], p["hostIP"] = s.getsockname()[1], "127.0.0.1"
                s.close()
            if c["name"] == "app":
                c["image"] = app
                c["imagePullPolicy"] = "IfNotPresent"
                c["command"] = ["/usr/bin/sleep", "3600"]
        if folder:
            d["spec"]["volumes"] = [{"name": "aisb", "hostPath":
                                     {"path": folder, "type": "Directory"}}]
yaml.safe_dump_all(docs, open(out, "w"), sort_keys=False)
PY
}
play() {	# play FILE: the pod up, its gate ready
	# from $tmp: podman 4.3 looks for a folder named like each image in
	# its working directory to build it (--build=false too), and the
	# build folder holds a program named aisb-gate
	(cd "$tmp" && podman kube play --build=false \
	    --network slirp4netns:allow_host_loopback=true "$1") \
	    >"$tmp/out" 2>"$tmp/err" && ok "played $(basename "$1")" ||
	    { bad "podman kube play $1: $(cat "$tmp/err")"; return 1; }
	wait_for "the gate is ready" app_exec curl -sf -m 5 --noproxy '*' \
	    http://127.0.0.1:9128/readyz
}
app_exec() { podman exec "$POD-app" "$@"; }
code() {	# code [CURL ARGS...] URL: the HTTP status the app gets
	app_exec curl -s -m 10 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null || true
}
netns_pid() {
	podman inspect --format '{{.State.Pid}}' \
	    "$(podman pod inspect --format '{{.InfraContainerID}}' "$POD")"
}

# --- play 1: the shipped manifests -------------------------------------------
play_yaml "$tmp/play1.yaml"
play "$tmp/play1.yaml" || exit 1
nsenter -t "$(netns_pid)" -n nft list table inet aisb >"$tmp/table" 2>&1 || true
if grep -q 'meta skuid 65532 accept' "$tmp/table" &&
    grep -q 'policy drop' "$tmp/table" &&
    grep -q 'meta skuid != 65532 counter' "$tmp/table"; then
	ok "the init container's table is in the pod's network namespace"
else
	bad "no table in the pod: $(cat "$tmp/table")"
fi
check "no init container left running" \
    "$(podman ps --filter name="$POD-aisb-enforce" --format '{{.Names}}')" ""
check "app -> allowed upstream, a forward by its proxy variables" \
    "$(code "http://10.0.2.2:$UP1/forward")" 200
check "app -> allowed upstream, a CONNECT tunnel" \
    "$(code -p "http://10.0.2.2:$UP1/tunnel")" 200
check "the upstream saw the gate's two connections" "$(grep -c '^accept' "$tmp/up1.log")" 2
check "app, no proxy: refused" "$(code --noproxy '*' "http://10.0.2.2:$UP1/direct")" 000
check "the direct connection never reached the upstream" \
    "$(grep -c '^accept' "$tmp/up1.log")" 2
check "app, a denied host" "$(code "http://denied.test:$UP1/")" 403
check "app, a denied port" "$(code "http://10.0.2.2:$UP2/")" 403
check "the denied port's upstream saw nothing" "$(grep -c '^accept' "$tmp/up2.log" || true)" 0
# root in the app container, without CAP_NET_ADMIN
if podman exec --user 0 "$POD-app" nft flush ruleset >"$tmp/out" 2>&1; then
	bad "root in the app container flushed the ruleset"
else
	ok "root in the app container cannot change the table"
fi
check "the table still drops" "$(code --noproxy '*' "http://10.0.2.2:$UP1/direct2")" 000
# the audit on stdout, JSON lines
podman logs "$POD-aisb-gate" >"$tmp/gate.out" 2>"$tmp/gate.err"
if "$PY" - "$tmp/gate.out" "$UP1" "$UP2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
up1, up2 = int(sys.argv[2]), int(sys.argv[3])
def has(**kw):
    return any(all(l.get(k) == v for k, v in kw.items()) for l in lines)
assert has(event="decision", decision="allow", method="GET", port=up1)
assert has(event="decision", decision="allow", method="CONNECT", port=up1)
assert has(event="close", method="CONNECT", port=up1)
assert has(event="decision", decision="deny", host="denied.test",
           reason="host_not_allowed")
assert has(event="decision", decision="deny", port=up2,
           reason="port_not_allowed")
PY
then ok "the audit lines reach stdout (podman logs)"
else bad "audit on stdout: $(cat "$tmp/gate.out")"; fi
grep -q 'aisb-gate: up: listening on 127.0.0.1:3128' "$tmp/gate.err" &&
    ok "the gate's own log is on stderr" || bad "gate stderr: $(cat "$tmp/gate.err")"
check "/healthz" "$(app_exec curl -s -m 5 --noproxy '*' http://127.0.0.1:9128/healthz)" ok
case $(app_exec curl -s -m 5 --noproxy '*' http://127.0.0.1:9128/readyz) in
"ready: listening on 127.0.0.1:3128, policy sha256:"*"DNS answering") ok "/readyz" ;;
*) bad "/readyz: $(app_exec curl -s -m 5 --noproxy '*' http://127.0.0.1:9128/readyz)" ;;
esac
grep -q '^ 2$' "$tmp/dns.log" && ok "the readiness probe asked the test's DNS server" ||
    bad "no probe in the DNS log: $(cat "$tmp/dns.log")"
podman kube play --down "$tmp/play1.yaml" >"$tmp/out" 2>"$tmp/err" &&
    ok "kube play --down" || bad "kube play --down: $(cat "$tmp/err")"
check "no pod after --down" "$(podman pod ls -q)" ""
check "no container after --down" "$(podman ps -aq)" ""
# podman 4.3 keeps the volume it made of the ConfigMap: that one alone
case $(podman volume ls -q | tr '\n' ' ') in
"" | "aisb-sidecar ") ok "no volume after --down but the ConfigMap's" ;;
*) bad "volumes after --down: $(podman volume ls -q | tr '\n' ' ')" ;;
esac
podman volume rm -f aisb-sidecar >/dev/null 2>&1 || true

# --- play 2: the kubelet's folder, swapped ------------------------------------
cm=$tmp/cm
mkdir -m 0755 "$cm"
gen=0
cm_set() {	# cm_set POLICY: gate.yaml and the shipped plan, one swap
	local d old
	gen=$((gen + 1))
	d=..2026_12_01_10_00_0$gen.00000000$gen
	mkdir -m 0755 "$cm/$d"
	cp "$1" "$cm/$d/gate.yaml"
	"$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["plan"], end="")' \
	    "$top_srcdir/contrib/kube/sidecar/configmap.yaml" >"$cm/$d/plan"
	chmod 0644 "$cm/$d/gate.yaml" "$cm/$d/plan"
	[ -L "$cm/gate.yaml" ] || ln -s ..data/gate.yaml "$cm/gate.yaml"
	[ -L "$cm/plan" ] || ln -s ..data/plan "$cm/plan"
	ln -s "$d" "$cm/..data_tmp"
	mv -T "$cm/..data_tmp" "$cm/..data"
	for old in "$cm"/..2026_*; do [ "$old" = "$cm/$d" ] || rm -rf "$old"; done
}
cm_set "$tmp/p1.yaml"
play_yaml "$tmp/play2.yaml" "$cm"
play "$tmp/play2.yaml" || exit 1
started=$(podman inspect --format '{{.State.StartedAt}}' "$POD-aisb-gate")
check "play 2: the first policy" "$(code "http://10.0.2.2:$UP1/")" 200
check "play 2: not the second's port" "$(code "http://10.0.2.2:$UP2/")" 403
cm_set "$tmp/p2.yaml"
wait_for "the swapped policy applies in the running gate" \
    sh -c "[ \"\$(podman exec $POD-app curl -s -m 5 -o /dev/null -w '%{http_code}' http://10.0.2.2:$UP2/)\" = 200 ]"
check "the first port denied now" "$(code "http://10.0.2.2:$UP1/")" 403
check "the gate was not restarted" \
    "$(podman inspect --format '{{.State.StartedAt}} {{.RestartCount}}' "$POD-aisb-gate")" \
    "$started 0"
cm_set "$tmp/broken.yaml"
wait_for "the broken policy is refused" sh -c \
    "podman logs $POD-aisb-gate 2>&1 | grep -q 'reload: refused: /etc/aisb/gate.yaml is invalid, keeping policy'"
check "the old policy is kept" "$(code "http://10.0.2.2:$UP2/")" 200
podman logs "$POD-aisb-gate" 2>/dev/null >"$tmp/gate.out"
if "$PY" - "$tmp/gate.out" <<'PY'
import json, sys
r = [json.loads(l)["reason"] for l in open(sys.argv[1])
     if l.strip() and json.loads(l)["event"] == "reload"]
assert r == ["applied", "refused"], r
PY
then ok "reload audit lines: applied, refused"
else bad "reload audit lines: $(grep reload "$tmp/gate.out")"; fi
podman kube play --down "$tmp/play2.yaml" >"$tmp/out" 2>"$tmp/err" &&
    ok "kube play --down (2)" || bad "kube play --down: $(cat "$tmp/err")"
rm -f "$tmp"/play*.yaml

# --- nothing left ----------------------------------------------------------------
check "no pod left" "$(podman pod ls -q)" ""
check "no container left" "$(podman ps -aq)" ""
check "no volume left" "$(podman volume ls -q)" ""
podman rmi -f "$IMAGE" "$APP" >/dev/null 2>&1 || true
podman rmi -af >/dev/null 2>&1 || true	# podman's own pause image too
check "no image left" "$(podman images -q)" ""

echo "# kube: $pass passed, $fail failed"
[ "$fail" = 0 ]
