#!/bin/bash
# End to end: aisb --record in gate mode.  A session makes an HTTP forward
# request with a body, a TLS request through a CONNECT tunnel and a denied
# one, to servers on the host's loopback that keep the exact bytes of each
# connection (tests/integration/gate_record_server.py).  Then: tshark
# reads the capture without a warning; each allowed stream, followed,
# gives back exactly the bytes each side sent, and the manifest's stream
# hashes are those bytes' SHA-256s; aisb sessions verify passes, and fails
# naming the capture and a stream after one byte is edited and after a
# cut; sessions show names the record; a session with a small
# --record-max hits it and goes on; --record with a named gate is refused.
#
# Needs root, podman, mmdebstrap, tshark and openssl; builds its images
# offline in a podman store of its own, which the EXIT trap removes,
# failure or not.  Runs only with AISB_E2E=1.
set -euo pipefail

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_start record mmdebstrap tshark openssl sha256sum "$PY"
e2e_seed_image curl
chmod 0755 "$tmp"
vol=aisb-e2e-record-$$
e2e_cleanup_more() { "$aisb" gate down e2erec >/dev/null 2>&1 || true; }

# shellcheck source=tests/integration/record_lib.sh
. "$here/record_lib.sh"
sha() { sha256sum <"$1" | cut -d' ' -f1; }

# --- host-side servers ----------------------------------------------------
srv=$here/gate_record_server.py
mkdir "$tmp/srv"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls.test \
    -addext subjectAltName=DNS:tls.test -keyout "$tmp/key.pem" \
    -out "$tmp/ws/cert.pem" 2>/dev/null
"$PY" "$srv" http --bind 127.0.0.1 --port-file "$tmp/http.port" --dir "$tmp/srv" \
    >/dev/null 2>>"$tmp/upstream.err" &
pids+=($!)
"$PY" "$srv" tls --bind 127.0.0.1 --port-file "$tmp/tls.port" --dir "$tmp/srv" \
    --cert "$tmp/ws/cert.pem" --key "$tmp/key.pem" >/dev/null 2>>"$tmp/upstream.err" &
pids+=($!)
cat >"$tmp/zone.json" <<'EOF2'
{"web.test": {"A": ["127.0.0.1"], "ttl": 5},
 "tls.test": {"A": ["127.0.0.1"], "ttl": 5}}
EOF2
e2e_servers dns
# not gate_upstream.py (e2e_servers http): these keep each stream's bytes
# in $tmp/srv, which the capture is compared with
http=$(e2e_port http)
tls=$(e2e_port tls)
cat >"$tmp/policy.yaml" <<EOF2
version: 1
allow:
  - host: web.test
    ports: [$http]
  - host: tls.test
    ports: [$tls]
allow_ranges: [127.0.0.1/32]
dns:
  servers: ["127.0.0.1:$dns"]
  min_ttl: 1
  max_ttl: 5
EOF2

head -c 3000 /dev/urandom | base64 -w 0 >"$tmp/ws/post.body"
head -c 30000 /dev/urandom | base64 -w 0 >"$tmp/ws/big.body"
cat >"$tmp/ws/probe.sh" <<EOF2
#!/bin/sh
# one line per request: its status
curl -sS -m 20 -o /dev/null -w 'post %{http_code}\n' --data-binary @$tmp/ws/\${1:-post}.body http://web.test:$http/upload
[ -n "\$1" ] && exit 0
curl -sS -m 20 -o $tmp/ws/tls.out -w 'tls %{http_code}\n' --cacert $tmp/ws/cert.pem -d 'hello over tls' https://tls.test:$tls/x
curl -sS -m 20 -o /dev/null -w 'denied %{http_connect}\n' https://denied.test:443/ 2>/dev/null
exit 0
EOF2
chmod 0755 "$tmp/ws/probe.sh"

sess() {
	local rc=0
	(cd "$tmp/ws" && "$aisb" --policy "$tmp/policy.yaml" --home-volume "$vol" \
	    --package curl "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	return "$rc"
}

# --- 1. a recorded session ----------------------------------------------------
rc=0; sess --record -- "$tmp/ws/probe.sh" || rc=$?
check "recorded session: exit" "$rc" 0
check "recorded session: what the requests got" "$(tr '\n' ' ' <"$tmp/out")" \
    "post 200 tls 200 denied 403 "
sd=$(e2e_session)
id=$(basename "$sd")
cap=$sd/recording/capture.pcapng
check "recording folder: mode" "$(stat -c %a "$sd/recording" 2>/dev/null || echo missing)" 700
check "capture: mode" "$(stat -c %a "$cap" 2>/dev/null || echo missing)" 600
check "manifest: mode" "$(stat -c %a "$sd/recording/manifest" 2>/dev/null || echo missing)" 600
if grep -q "^aisb: record: $cap ([0-9]* bytes); aisb sessions verify $id checks it$" "$tmp/err"; then
	ok; else bad "no line naming the record: $(cat "$tmp/err")"; fi
wait_file "$tmp/srv/http.1.out"
wait_file "$tmp/srv/tls.1.out"

tshark_r "$cap" >"$tmp/tshark.out" && rc=0 || rc=$?
check "tshark -r: exit" "$rc" 0
check "tshark -r: stderr" "$(cat "$tmp/tshark.err")" ""
tshark_r "$cap" -Y frame.comment -T fields -e tcp.stream -e frame.comment >"$tmp/streams"
check "commented streams (two allowed, one denied)" "$(wc -l <"$tmp/streams")" 3
s_http='' s_tls='' s_deny='' c_http='' c_tls=''
while IFS=$'\t' read -r stream comment; do
	conn=$(sed -n 's/^aisb conn=\([^ ]*\) .*/\1/p' <<<"$comment")
	case $comment in
	*" host=web.test:"*) s_http=$stream c_http=$conn ;;
	*" host=tls.test:"*) s_tls=$stream c_tls=$conn ;;
	*" host=denied.test:"*) s_deny=$stream
		case $comment in *" decision=deny "*) ok ;; *) bad "denied: $comment" ;; esac ;;
	esac
	if grep -q "\"conn\":\"\\{0,1\\}$conn\"\\{0,1\\}[,}]" "$sd/audit.jsonl"; then
		ok; else bad "no audit line of conn $conn ($comment)"; fi
done <"$tmp/streams"
[ -n "$s_deny" ] && ok || bad "no denied stream"

follow "$cap" "${s_http:-x}" "$tmp/f.http"
same "HTTP forward, client to server" "$tmp/f.http.0" "$tmp/srv/http.1.in"
same "HTTP forward, server to client" "$tmp/f.http.1" "$tmp/srv/http.1.out"
follow "$cap" "${s_tls:-x}" "$tmp/f.tls"
same "TLS tunnel, client to server" "$tmp/f.tls.0" "$tmp/srv/tls.1.in"
same "TLS tunnel, server to client" "$tmp/f.tls.1" "$tmp/srv/tls.1.out"

# the manifest: the files, and each stream's bytes as the servers kept them
mf=$sd/recording/manifest
check "manifest: capture line" "$(awk '$1 == "file" && $2 == "recording/capture.pcapng" { print $3, $4 }' "$mf")" \
    "$(stat -c %s "$cap") $(sha "$cap")"
check "manifest: audit line" "$(awk '$1 == "file" && $2 == "audit.jsonl" { print $3, $4 }' "$mf")" \
    "$(stat -c %s "$sd/audit.jsonl") $(sha "$sd/audit.jsonl")"
check "manifest: stream lines" "$(grep -c '^stream ' "$mf")" 6
mstream() { awk -v c="$1" -v d="$2" '$1 == "stream" && $2 == c && $5 == d { print $6, $7 }' "$mf"; }
check "manifest: HTTP up" "$(mstream "$c_http" up)" \
    "$(stat -c %s "$tmp/srv/http.1.in") $(sha "$tmp/srv/http.1.in")"
check "manifest: HTTP down" "$(mstream "$c_http" down)" \
    "$(stat -c %s "$tmp/srv/http.1.out") $(sha "$tmp/srv/http.1.out")"
check "manifest: TLS up" "$(mstream "$c_tls" up)" \
    "$(stat -c %s "$tmp/srv/tls.1.in") $(sha "$tmp/srv/tls.1.in")"
check "manifest: TLS down" "$(mstream "$c_tls" down)" \
    "$(stat -c %s "$tmp/srv/tls.1.out") $(sha "$tmp/srv/tls.1.out")"

# verify, show
rc=0; "$aisb" sessions verify "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "verify: exit" "$rc" 0
rc=0; "$aisb" sessions show "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "show: exit" "$rc" 0
check "show: the capture's size" "$(sed -n 's/^recording_file recording\/capture.pcapng \([0-9]*\) bytes$/\1/p' "$tmp/out")" \
    "$(stat -c %s "$cap")"

# one byte of the TLS server's answer edited in the capture
cp "$cap" "$tmp/cap.orig"
# one bit of a byte in the middle of the server's answer, flipped in place
found=$("$PY" - "$cap" "$tmp/srv/tls.1.out" <<'PY'
import sys
cap, out = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
off = cap.find(out[100:132])
if off >= 0:
    with open(sys.argv[1], "r+b") as f:
        f.seek(off + 5)
        f.write(bytes([cap[off + 5] ^ 0x01]))
print("yes" if off >= 0 else "no")
PY
)
check "the TLS answer is in the capture" "$found" yes
rc=0; "$aisb" sessions verify "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "edited byte: exit" "$rc" 1
grep -q '^changed: file recording/capture.pcapng: ' "$tmp/out" && ok ||
    bad "edited byte: the file not named: $(cat "$tmp/out")"
grep -q "^changed: stream $c_tls .* down: was " "$tmp/out" && ok ||
    bad "edited byte: the stream not named: $(cat "$tmp/out")"
check "edited byte: only the file and that stream" "$(wc -l <"$tmp/out")" 2
cp "$tmp/cap.orig" "$cap"
rc=0; "$aisb" sessions verify "$id" >/dev/null 2>&1 || rc=$?
check "restored: exit" "$rc" 0
truncate -s $(( $(stat -c %s "$cap") - 100 )) "$cap"
rc=0; "$aisb" sessions verify "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "truncated: exit" "$rc" 1
grep -q '^changed: file recording/capture.pcapng: ' "$tmp/out" && ok ||
    bad "truncated: the file not named: $(cat "$tmp/out")"

# --- 2. --record-max small enough to hit: the session goes on -----------------
rc=0; sess --record --record-max 8K -- "$tmp/ws/probe.sh" big || rc=$?
check "bounded: exit" "$rc" 0
check "bounded: the request still went through" "$(cat "$tmp/out")" "post 200"
sd=$(e2e_session)
size=$(stat -c %s "$sd/recording/capture.pcapng")
check "bounded: capture within the bound" "$(( size <= 8192 && size > 0 ))" 1
check "bounded: one audit line for the limit" \
    "$(grep '"event":"record"' "$sd/audit.jsonl" | grep -c 'record limit reached at [0-9]* bytes')" 1
tshark_r "$sd/recording/capture.pcapng" >/dev/null && rc=0 || rc=$?
check "bounded: tshark -r exit" "$rc" 0
check "bounded: tshark -r stderr" "$(cat "$tmp/tshark.err")" ""
rc=0; "$aisb" sessions verify "$(basename "$sd")" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "bounded: verify" "$rc" 0

# --- 3. a shared gate does not record ----------------------------------------
(cd "$tmp/ws" && "$aisb" gate up e2erec --policy "$tmp/policy.yaml") >"$tmp/out" 2>"$tmp/err"
rc=0; sess --gate e2erec --record -- true || rc=$?
check "--record --gate: exit" "$rc" 78
grep -q "a shared gate's traffic is not one session's" "$tmp/err" && ok ||
    bad "--record --gate: $(cat "$tmp/err")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
