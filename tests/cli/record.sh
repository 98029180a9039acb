#!/bin/bash
# --record's options and commands, without podman: --record-max from each
# layer and its bounds, a project config that may turn record on but not
# off (nor shrink it), --record with a named gate, and sessions verify and
# show on session folders made here (a manifest over the decision log:
# edited, cut, removed; a malformed request and a malformed DNS query
# counted as such).  The capture's streams are covered by
# tests/unit/test_record and tests/e2e/record.sh.
set -euo pipefail
. "$(dirname "$0")/../errtrap.sh"	# a death names its command and line

. "$(dirname "$0")/lib.sh"
has() {	# has WHAT FILE PATTERN: a line of FILE matches
	if grep -q -e "$3" "$2"; then ok; else bad "$1: no '$3' in $(cat "$2")"; fi
}

# 1. --record-max: default, flag, environment, user config; its bounds
run "$aisb" --print-config
check "default: exit" "$rc" 0
has "default record_max" "$tmp/out" '^record_max  *1G (default)$'
run "$aisb" --record-max 2M --print-config
has "flag" "$tmp/out" '^record_max  *2M (flag: --record-max)$'
rc=0; (cd "$tmp/ws" && AISB_RECORD_MAX=64k "$aisb" --print-config) >"$tmp/out" 2>"$tmp/err" || rc=$?
has "environment" "$tmp/out" '^record_max  *64k (environment: AISB_RECORD_MAX)$'
for bad_size in 512 4095 65G 1T 3X -1 ''; do
	run "$aisb" --record-max="$bad_size" --print-config
	check "--record-max '$bad_size': exit" "$rc" 78
done
run "$aisb" --record-max=4K --print-config
check "--record-max 4K (the gate's least): exit" "$rc" 0
run "$aisb" --record-max=512 --print-config
has "bound named" "$tmp/err" "record_max: 512 is not between 4K and 64G"
mkdir -p "$XDG_CONFIG_HOME/aisb"
printf 'record: true\nrecord_max: 10M\n' >"$XDG_CONFIG_HOME/aisb/config.yaml"
run "$aisb" --print-config
has "user config" "$tmp/out" '^record_max  *10M (user config: .*config.yaml:2:13)$'
has "user config record" "$tmp/out" '^record  *true (user config: '

# 2. a project config may turn record on, never off nor smaller
printf 'record: false\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --print-config
check "project record: false: exit" "$rc" 78
has "project record: false: why" "$tmp/err" "may only say 'record: true'"
printf 'record_max: 1K\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --print-config
check "project record_max: exit" "$rc" 78
has "project record_max: why" "$tmp/err" "a project config may not set 'record_max'"
rm "$XDG_CONFIG_HOME/aisb/config.yaml"
printf 'record: true\n' >"$tmp/ws/.aisb.yaml"
run "$aisb" --print-config
check "project record: true: exit" "$rc" 0
has "project record: true" "$tmp/out" '^record  *true (project config: '
rm "$tmp/ws/.aisb.yaml"

# the dry run says where the capture goes and its bound
run "$aisb" --record --record-max 5M --dry-run -- true
has "dry run: the record" "$tmp/out" '^# record: <session>/recording/capture.pcapng, at most 5242880 bytes'
run "$aisb" --dry-run -- true
check "dry run without --record: no record line" "$(grep -c '^# record' "$tmp/out" || true)" 0

# a named gate does not record: refused before anything starts
run "$aisb" gate up recx --record
check "gate up --record: exit" "$rc" 78
has "gate up --record: why" "$tmp/err" "a named gate does not record"
check "gate up --record: no gate folder" "$(ls "$XDG_STATE_HOME/aisb/gates" 2>/dev/null | wc -l)" 0

# 3. sessions verify and show on folders made here
sd=$XDG_STATE_HOME/aisb/sessions
id=0123456789abcdef01234567
mkdir -p "$sd/$id"
printf 'session %s\nstarted 1796080204\nexit 0\ncommand true\n' "$id" >"$sd/$id/record"
run "$aisb" sessions verify "$id"
check "verify without a recording: exit" "$rc" 78
has "verify without a recording: why" "$tmp/err" "no manifest"
run "$aisb" sessions show "$id"
has "show without a recording" "$tmp/out" '^recording none'
run "$aisb" sessions verify 0123zz
check "verify, not an id: exit" "$rc" 78
run "$aisb" sessions verify fff
check "verify, no such session: exit" "$rc" 78
run "$aisb" sessions verify
check "verify without an id: exit" "$rc" 78

# a manifest over the decision log and the record (no capture: direct
# mode before its recorder ran, say)
mkdir -m 0700 "$sd/$id/recording"
printf '{"event":"decision","conn":1}\n' >"$sd/$id/audit.jsonl"
line() { printf 'file %s %s %s\n' "$1" "$(stat -c %s "$sd/$id/$1")" \
    "$(sha256sum <"$sd/$id/$1" | cut -d' ' -f1)"; }
{ echo "# aisb record manifest 1"; line audit.jsonl; line record; } \
    >"$sd/$id/recording/manifest"
run "$aisb" sessions verify "$id"
check "verify: exit" "$rc" 0
has "verify: says so" "$tmp/out" "^verified: 2 files and streams match"
run "$aisb" sessions show 01234
has "show: the folder" "$tmp/out" "^recording $sd/$id/recording\$"
has "show: the log's size" "$tmp/out" "^recording_file audit.jsonl 30 bytes\$"
has "show: the manifest" "$tmp/out" "^recording_manifest $sd/$id/recording/manifest "
cp "$sd/$id/audit.jsonl" "$tmp/audit.orig"
sed -i 's/"conn":1/"conn":2/' "$sd/$id/audit.jsonl"
run "$aisb" sessions verify "$id"
check "an edited byte: exit" "$rc" 1
has "an edited byte: named" "$tmp/out" "^changed: file audit.jsonl: was 30 [0-9a-f]*, is 30 [0-9a-f]*\$"
check "an edited byte: nothing else" "$(wc -l <"$tmp/out")" 1
head -c 10 "$tmp/audit.orig" >"$sd/$id/audit.jsonl"
run "$aisb" sessions verify "$id"
check "a cut: exit" "$rc" 1
has "a cut: named" "$tmp/out" "^changed: file audit.jsonl: was 30 [0-9a-f]*, is 10 "
rm "$sd/$id/audit.jsonl"
run "$aisb" sessions verify "$id"
check "removed: exit" "$rc" 1
has "removed: named" "$tmp/out" "^missing: file audit.jsonl: 30 "
cp "$tmp/audit.orig" "$sd/$id/audit.jsonl"
: >"$sd/$id/recording/capture.pcapng"
run "$aisb" sessions verify "$id"
check "added: exit" "$rc" 1
has "added: named" "$tmp/out" "^added: file recording/capture.pcapng: 0 e3b0c442"
rm "$sd/$id/recording/capture.pcapng"
run "$aisb" sessions verify "$id"
check "restored: exit" "$rc" 0
echo "file record 1 00" >>"$sd/$id/recording/manifest"
run "$aisb" sessions verify "$id"
check "a line twice: exit" "$rc" 1
echo "garbage" >>"$sd/$id/recording/manifest"
run "$aisb" sessions verify "$id"
check "a manifest that is not one: exit" "$rc" 78
has "a manifest that is not one: where" "$tmp/err" "manifest:5: not a manifest line"

# show counts a malformed request (bad_request) and a DNS query the gate
# could not read (FORMERR, as gate_dnsstream.sh's audit has it) as such,
# not as failed
id2=0123456789abcdef01234568
mkdir -p "$sd/$id2"
printf 'session %s\nstarted 1796080204\nexit 0\ncommand true\n' "$id2" >"$sd/$id2/record"
{
	printf '{"event":"decision","conn":1,"decision":"error","status":400,"reason":"bad_request","detail":"malformed request line"}\n'
	printf '{"event":"dns","conn":2,"client":"127.0.0.1:9","answer":"FORMERR"}\n'
} >"$sd/$id2/audit.jsonl"
run "$aisb" sessions show "$id2"
has "show: malformed counted" "$tmp/out" "^# audit: 0 allowed, 0 denied, 0 failed, 2 malformed; "
has "show: malformed said" "$tmp/out" "^# malformed (no target), 1 time: malformed request line (bad_request)\$"
has "show: malformed DNS said" "$tmp/out" "^# malformed (DNS query, no name), 1 time: a query the gate could not read (FORMERR)\$"
# an inspected host's requests the gate refused before its entries (a
# Host of another name: fronting) or that its upstream broke are said too
printf '%s\n' '{"event":"request","conn":2,"host":"api.test","port":443,"method":"GET","path":"/x","decision":"error","status":400,"reason":"host_mismatch","detail":"the Host header must name the connection'"'"'s host"}' \
    '{"event":"request","conn":2,"host":"api.test","port":443,"method":"GET","path":"/y","decision":"error","status":502,"reason":"upstream_error","detail":"the upstream closed before its answer"}' \
    >>"$sd/$id2/audit.jsonl"
run "$aisb" sessions show "$id2"
has "show: inspected request errors counted" "$tmp/out" "^# audit: 0 allowed, 0 denied, 1 failed, 3 malformed; "
has "show: a Host of another name said" "$tmp/out" "^# malformed api.test:443 GET /x, 1 time: the Host header must name the connection's host (host_mismatch)\$"
has "show: an upstream's broken answer said" "$tmp/out" "^# failed api.test:443 GET /y, 1 time: the upstream closed before its answer (upstream_error)\$"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
