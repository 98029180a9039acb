#!/bin/bash
# aisb-run.exe under Wine (docs/windows.md, "What Wine can run").
#
# Cross-builds the runner with mingw-w64 in a build folder of its own, makes
# a Wine prefix in a temporary folder, and runs aisb-run.exe on
# tests/win/winchild.exe (a small program with one mode per behaviour),
# the stage's drive letter among them (12b).
# Then tests/win/snapsmoke.exe runs the snapshot core (snap/) through
# snap/fs_win32.c.  Wine has no AppContainer, so the runs use --no-appcontainer, which the
# runner allows only with the test variable set; the AppContainer path is
# checked to refuse cleanly here.  Then aisb.exe, the Windows launcher:
# sessions staged, run, kept, applied, refused, discarded and cleaned in a
# workspace of the test, and (with a Linux aisb-gate) the gate through
# --gate with a credential file; the build's identity and the self-test's
# stored result (14b, 14c).  Run by tests/run.sh after the Linux
# stages; SKIP (77) when the cross compiler, Wine or python3 is missing.
#   AISB_WIN_BUILD   the cross build folder (default: a temporary one)
#   AISB_GATE        a Linux aisb-gate (default: AISB_WIN_BUILD/../plain,
#                    tests/run.sh's layout; without one the gate is a SKIP)
set -uo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
CROSS=x86_64-w64-mingw32
command -v "$CROSS-gcc" >/dev/null ||
	{ echo "SKIP: $CROSS-gcc not found (apt-get install gcc-mingw-w64-x86-64)"; exit 77; }
WINE=$(command -v wine64 || command -v wine || true)
[ -z "$WINE" ] && [ -x /usr/lib/wine/wine64 ] && WINE=/usr/lib/wine/wine64
[ -n "$WINE" ] || { echo "SKIP: wine64 not found (apt-get install wine64)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$top_srcdir/configure" ] || { echo "SKIP: run autoreconf -fi first"; exit 77; }

tmp=$(mktemp -d)
export WINEPREFIX=$tmp/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
cleanup() {
	local sd d
	# the wineserver of our own prefix only, then the folder of its
	# socket, which it leaves: /tmp/wine-XXXXXX/server-DEV-INODE (or
	# /tmp/.wine-UID/...), named by our prefix's device and inode
	if [ -d "$WINEPREFIX" ]; then
		WINEPREFIX=$WINEPREFIX "$(dirname "$WINE")/wineserver" -k 2>/dev/null || true
		WINEPREFIX=$WINEPREFIX "$(dirname "$WINE")/wineserver" -w 2>/dev/null || true
		sd=$(printf 'server-%x-%x' "0x$(stat -c %D "$WINEPREFIX")" \
		    "$(stat -c %i "$WINEPREFIX")" 2>/dev/null) || sd=
		for d in /tmp/wine-*/"$sd" "/tmp/.wine-$(id -u)/$sd"; do
			[ -n "$sd" ] && [ -d "$d" ] || continue
			rm -rf "$d"
			rmdir "${d%/*}" 2>/dev/null || true
		done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

build=${AISB_WIN_BUILD:-$tmp/build}
mkdir -p "$build"
if ! ( cd "$build" && "$top_srcdir/configure" --host=$CROSS --enable-werror \
	CFLAGS="-O2 -g" >configure.out 2>&1 && make -j2 >make.out 2>&1 ); then
	cat "$build/configure.out" "$build/make.out" 2>/dev/null | tail -n 40
	echo "FAIL: the mingw-w64 cross build"
	echo "# TOTAL: 1"; echo "# PASS: 0"; echo "# SKIP: 0"; echo "# FAIL: 1"
	exit 1
fi
# One wineserver for the whole run, from before wineboot (cleanup's -k
# ends it).  By default it exits 3 s after its last client, and a program
# started as it goes finds it holding its lock but no longer answering:
# Wine's loader then exits 1 ("a wine server seems to be running, but I
# cannot connect to it"), whatever the program would have said.  A slow
# step between two cases made that a flake (a usage error's 64 seen as 1).
mkdir -p "$WINEPREFIX"
"$(dirname "$WINE")/wineserver" -p ||
	{ echo "SKIP: wineserver -p failed"; exit 77; }
"$WINE" wineboot -i >"$tmp/wineboot.out" 2>&1 ||
	{ cat "$tmp/wineboot.out"; echo "SKIP: wineboot failed"; exit 77; }

winpath() { printf 'Z:%s' "${1//\//\\}"; }
RUN=$(winpath "$build/aisb-run.exe")
CHILD=$(winpath "$build/tests/win/winchild.exe")
LAUNCH=$build/tests/win/winchild.exe
d=$tmp/runs
mkdir -p "$d"
LEASE=$(winpath "$d/lease.json")
RESULT=$(winpath "$d/result.json")

pass=0 fail=0 skip=0
ok()   { pass=$((pass + 1)); echo "PASS: $*"; }
bad()  { fail=$((fail + 1)); echo "FAIL: $*"; }
skp()  { skip=$((skip + 1)); echo "SKIP: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# runner OPTIONS... -- COMMAND: aisb-run started by a Windows parent
# (winchild run), as aisb would; stdout in $d/out, stderr in $d/err
runner() {
	rm -f "$d/lease.json" "$d/result.json"
	"$WINE" "$LAUNCH" run "$RUN" --lease "$LEASE" --result "$RESULT" "$@" \
	    >"$d/out" 2>"$d/err"
	local rc=$?
	sed -i 's/\r$//' "$d/out"	# the C runtime's text mode
	return $rc
}
# json KEY...: the result's value at a path, as Python prints it
json() {
	python3 - "$d/${JSON_FILE:-result.json}" "$@" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[k]
print(json.dumps(v) if isinstance(v, (list, dict, bool)) else v)
PY
}
is() { [ "$1" = "$2" ] || { echo "  got <$1>, want <$2>" >&2; return 1; }; }

export AISB_RUN_TEST_NO_APPCONTAINER=i-am-a-test
T="--no-appcontainer"

# 0. --version, as the Linux programs answer it (GNU)
v=$(grep '^#define PACKAGE_VERSION' "$build/config.h" | cut -d'"' -f2)
check "aisb-run.exe --version" is "$("$WINE" "$build/aisb-run.exe" --version 2>&1 | tr -d '\r')" "aisb-run $v"
check "aisb.exe --version" is "$("$WINE" "$build/aisb.exe" --version 2>&1 | tr -d '\r')" "aisb $v"

# 1. --no-appcontainer is refused without the test variable
AISB_RUN_TEST_NO_APPCONTAINER='' runner $T -- "$CHILD" exit 0; rc=$?
check "--no-appcontainer refused outside tests (exit 64)" is "$rc" 64
[ "$rc" = 64 ] || sed 's/^/  stderr: /' "$d/err"
check "  and it says why" grep -q "test suite only" "$d/err"

# 2. the AppContainer path on Wine: refused, nothing runs
runner -- "$CHILD" exit 0; rc=$?
check "no AppContainer on Wine: exit 77" is "$rc" 77
check "  result state failed, naming Wine" \
    bash -c '[ "$(cd "'"$d"'" && python3 -c "import json;r=json.load(open(\"result.json\"));print(r[\"state\"], \"Wine\" in r[\"error\"])")" = "failed True" ]'
check "  no lease: the command never started" test ! -e "$d/lease.json"

# 3. exit code passthrough and the result document
runner $T -- "$CHILD" exit 7; rc=$?
check "exit code passthrough (7)" is "$rc" 7
check "  result: state exited" is "$(json state)" exited
check "  result: exit_code 7" is "$(json exit_code)" 7
check "  result: protocol 1, kind aisb-run-result" is "$(json protocol) $(json kind)" "1 aisb-run-result"
check "  result: no limit hit" is "$(json limits_hit)" "[]"
check "  result: appcontainer false (test mode, said so)" is "$(json appcontainer)" false
check "  result: one process in the job" is "$(json peak_processes)" 1
check "  result: every field" python3 - "$d/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = {"protocol", "kind", "run_id", "state", "exit_code", "limits_hit",
        "wall_ms", "user_ms", "kernel_ms", "peak_processes", "peak_memory",
        "appcontainer", "cleanup", "error"}
sys.exit(0 if set(r) == want and set(r["cleanup"]) == {"profile", "stage", "drive"}
         and len(r["run_id"]) == 32 else 1)
PY

# 4. timeout: the job is killed
runner $T --timeout 1 -- "$CHILD" sleep 600000; rc=$?
check "timeout kills the job (exit 124)" is "$rc" 124
check "  result: killed, limits_hit timeout" is "$(json state) $(json limits_hit)" 'killed ["timeout"]'

# 5. cancel on stdin; other lines and EOF are not a cancel
printf 'hello\ncancel\n' | runner $T -- "$CHILD" sleep 600000; rc=$?
check "cancel on stdin kills the job (exit 130)" is "$rc" 130
check "  result: killed, limits_hit cancel" is "$(json state) $(json limits_hit)" 'killed ["cancel"]'
printf 'cancelled\n cancel\n' | runner $T -- "$CHILD" exit 5; rc=$?
check "only the exact line cancels" is "$rc" 5

# 6. the runner's parent dies: the job goes with it
rm -f "$d/lease.json" "$d/result.json"
"$WINE" "$LAUNCH" orphan "$LEASE" "$RUN" --lease "$LEASE" --result "$RESULT" \
    $T -- "$CHILD" sleep 600000 >"$d/out" 2>"$d/err"; rc=$?
check "orphan launcher saw the lease and left" is "$rc" 0
# the orphaned runner writes its result once it has killed the job (bounded)
for _ in $(seq 600); do [ -s "$d/result.json" ] && break; sleep 0.1; done
check "parent death kills the job" is "$(json state) $(json limits_hit)" 'killed ["parent"]'

# 7. the lease exists before the command starts, and names this run
runner $T --run-id 0123456789abcdef0123456789abcdef -- "$CHILD" cat "$LEASE"; rc=$?
check "lease written before the command (it read it)" is "$rc" 0
cp "$d/out" "$d/lease-seen.json"
check "  lease: run id, protocol, pid" is "$(JSON_FILE=lease-seen.json json run_id) $(JSON_FILE=lease-seen.json json protocol) $( [ "$(JSON_FILE=lease-seen.json json runner_pid)" -gt 0 ] && echo pid)" "0123456789abcdef0123456789abcdef 1 pid"
check "  lease: no profile (test mode)" is "$(JSON_FILE=lease-seen.json json profile)" ""
check "  result: the same run id" is "$(json run_id)" 0123456789abcdef0123456789abcdef

# 8. the environment: an allowlist, never the host's credentials
printf 'FROM_FILE=yes\r\nHTTPS_PROXY=http://127.0.0.1:9\n' >"$d/env.txt"
GITHUB_TOKEN=ghp_canary AWS_SECRET_ACCESS_KEY=canary2 LANG=C FOO=bar \
    runner $T --env FOO --env-file "$(winpath "$d/env.txt")" -- "$CHILD" env; rc=$?
check "env: the child ran" is "$rc" 0
check "  no credential reaches the child" bash -c '! grep -q canary "'"$d"'/out"'
check "  --env FOO passed" grep -qx "FOO=bar" "$d/out"
check "  LANG not passed (not on the list)" bash -c '! grep -q "^LANG=" "'"$d"'/out"'
check "  --env-file variables set" grep -qx "FROM_FILE=yes" "$d/out"
check "  AISB_SANDBOX=1" grep -qx "AISB_SANDBOX=1" "$d/out"
check "  SystemRoot passed" grep -q "^SystemRoot=" "$d/out"
runner $T --env GITHUB_TOKEN -- "$CHILD" env; rc=$?
check "--env of a credential refused (64)" is "$rc" 64

# 9. the stage: the command's folder, removed at the end (or kept)
mkdir -p "$d/stage/sub" && echo x >"$d/stage/sub/f" && chmod -w "$d/stage/sub/f"
runner $T --stage "$(winpath "$d/stage")" -- "$CHILD" env; rc=$?
check "stage run" is "$rc" 0
check "  TEMP is the stage" grep -Fqix "TEMP=$(winpath "$d/stage")" "$d/out"
check "  stage removed" test ! -e "$d/stage"
check "  result: cleanup.stage removed" is "$(json cleanup stage)" removed
mkdir -p "$d/stage2"
runner $T --keep-stage --stage "$(winpath "$d/stage2")" -- "$CHILD" exit 0
check "--keep-stage keeps it" test -d "$d/stage2"
check "  result: cleanup.stage kept" is "$(json cleanup stage)" kept

# 10. the process limit: every descendant is in the job
runner $T --procs 3 -- "$CHILD" spawn 5; rc=$?
started=$(sed -n 's/^started //p' "$d/out")
check "spawn ran" is "$rc" 0
check "  every descendant counted in the job (no breakaway)" is "$(json peak_processes)" "$((1 + ${started:-99}))"
if [ "${started:-99}" -le 2 ]; then ok "  active process limit 3 enforced"
else skp "  active process limit not enforced by Wine ($started of 5 started)"; fi

# 11. the job memory limit
runner $T --memory 64 -- "$CHILD" alloc 256; rc=$?
if grep -qx "alloc failed" "$d/out"; then ok "job memory limit enforced"
else skp "job memory limit (64 MiB) not enforced by Wine"; fi

# 12. aisb clean's step: a dead run's exact stage, never a live run's, never
# a folder outside the stage root
mkdir -p "$d/root/r1/sub" "$d/root/r2" "$d/elsewhere"
ROOT=$(winpath "$d/root")
printf '{"protocol":1,"run_id":"00112233445566778899aabbccddeeff","runner_pid":%s,"runner_start":1,"profile":"","stage":"%s"}' \
    4000000 "$(winpath "$d/root/r1" | sed 's/\\/\\\\/g')" >"$d/dead.json"
"$WINE" "$LAUNCH" run "$RUN" --clean "$(winpath "$d/dead.json")" --stage-root "$ROOT" >"$d/out" 2>&1; rc=$?
check "clean: a dead run's stage removed" bash -c '[ '"$rc"' = 0 ] && [ ! -e "'"$d"'/root/r1" ]'
printf '{"protocol":1,"run_id":"00112233445566778899aabbccddeeff","runner_pid":%s,"runner_start":1,"profile":"","stage":"%s"}' \
    4000000 "$(winpath "$d/elsewhere" | sed 's/\\/\\\\/g')" >"$d/forged.json"
"$WINE" "$LAUNCH" run "$RUN" --clean "$(winpath "$d/forged.json")" --stage-root "$ROOT" >"$d/out" 2>&1; rc=$?
check "clean: a stage outside the root refused" bash -c '[ '"$rc"' = 1 ] && [ -d "'"$d"'/elsewhere" ] && grep -q refused "'"$d"'/out"'
# the running runner's own lease, read by its command: a live run
runner $T --keep-stage --stage "$(winpath "$d/root/r2")" -- "$RUN" --clean "$LEASE" --stage-root "$ROOT"; rc=$?
check "clean: a live run skipped" bash -c '[ '"$rc"' = 0 ] && grep -q "^skipped" "'"$d"'/out" && [ -d "'"$d"'/root/r2" ]'

# 12b. the stage's drive (docs/windows.md, "The drive root"): a free
# letter mapped to the stage (DefineDosDevice, raw target \??\STAGE),
# chosen under a named mutex, recorded in the lease, removed at the end
# and by aisb clean only while it maps to exactly that target
mkdir -p "$d/root/ds1" "$d/root/ds2" "$d/root/other"
echo inroot >"$d/root/ds1/inroot.txt"
DS1=$(winpath "$d/root/ds1") DS2=$(winpath "$d/root/ds2")
dosdevs() { "$WINE" "$CHILD" dosdevs | tr -d '\r'; }
runner $T --keep-stage --stage "$DS1" -- "$CHILD" cat "$LEASE"; rc=$?
cp "$d/out" "$d/dlease.json"
drv=$(JSON_FILE=dlease.json json drive)
check "drive: the lease names a letter and the stage as its raw target" bash -c '[ '"$rc"' = 0 ] && [[ "'"$drv"'" =~ ^[D-Z]:$ ]]'
check "  target \\??\\STAGE" is "$(JSON_FILE=dlease.json json drive_target)" "\\??\\$DS1"
now=$(dosdevs)
check "  removed at the end, said in the result" bash -c '[ "'"$(json cleanup drive)"'" = removed ] && [ -n "'"$now"'" ] && ! grep -qF "'"\\??\\$DS1"'" <<<"'"$now"'"'
runner $T --keep-stage --stage "$DS1" -- "$CHILD" dosdevs; rc=$?
check "drive: the command's QueryDosDevice sees it during the run" grep -qxF "$(JSON_FILE=dlease.json json drive) \\??\\$DS1" "$d/out"
# two runs at once: two letters
L2=$(winpath "$d/lease2.json") R2=$(winpath "$d/result2.json")
rm -f "$d/lease2.json"
"$WINE" "$LAUNCH" run "$RUN" --lease "$L2" --result "$R2" $T --keep-stage \
    --stage "$DS1" -- "$CHILD" sleep 4000 >/dev/null 2>&1 &
bgr=$!
for _ in $(seq 100); do [ -s "$d/lease2.json" ] && break; sleep 0.1; done
runner $T --keep-stage --stage "$DS2" -- "$CHILD" dosdevs
wait "$bgr"
d1=$(JSON_FILE=lease2.json json drive)
d2=$(grep -F "\\??\\$DS2" "$d/out" | cut -c1-2)
check "drive: two runs at once take two letters, each its own stage" bash -c '[ -n "'"$d1"'" ] && [ -n "'"$d2"'" ] && [ "'"$d1"'" != "'"$d2"'" ] && grep -qxF "'"$d1 \\??\\$DS1"'" "'"$d"'/out"'
now=$(dosdevs)
check "  both removed" bash -c '[ -n "'"$now"'" ] && ! grep -qF "\\??\\Z:" <<<"'"$now"'"'
# the drive root: the stage's on Windows; Wine defines the name (above) but
# its file system resolves letters through the prefix's dosdevices/ only
runner $T --keep-stage --stage "$DS1" -- "$CHILD" rootls
if grep -qx inroot.txt "$d/out"; then ok "drive: the command's drive root is the stage"
else skp "drive: the command's drive root is the stage: Wine's DefineDosDevice makes \\??\\X: (QueryDosDevice sees it) but its file system resolves drive letters only through dosdevices/, so the runner starts the command in the stage's path (--no-appcontainer only; with an AppContainer such a drive fails the run)"; fi
# aisb clean: a dead run's drive, exactly its target; a letter mapped
# elsewhere since is left alone (Wine ignores DDD_EXACT_MATCH_ON_REMOVE:
# this is the runner's own check), one outside the stage root refused
OTHER="\\??\\$(winpath "$d/root/other")"
"$WINE" "$CHILD" define P: "$OTHER"
deadlease() {	# deadlease FILE DRIVE TARGET
	printf '{"protocol":1,"run_id":"00112233445566778899aabbccddeeff","runner_pid":4000000,"runner_start":1,"profile":"","stage":"","drive":"%s","drive_target":"%s"}' \
	    "$2" "${3//\\/\\\\}" >"$1"
}
deadlease "$d/dl.json" P: "\\??\\$DS2"
"$WINE" "$LAUNCH" run "$RUN" --clean "$(winpath "$d/dl.json")" --stage-root "$ROOT" >"$d/out" 2>&1; rc=$?
now=$(dosdevs)
check "clean: a letter that maps elsewhere now is left alone" bash -c '[ '"$rc"' = 0 ] && grep -q "drive P: no longer maps to" "'"$d"'/out" && grep -qxF "P: '"$OTHER"'" <<<"'"$now"'"'
deadlease "$d/dl.json" P: "\\??\\$(winpath "$d/elsewhere")"
"$WINE" "$LAUNCH" run "$RUN" --clean "$(winpath "$d/dl.json")" --stage-root "$ROOT" >"$d/out" 2>&1; rc=$?
now=$(dosdevs)
check "clean: a drive outside the stage root refused, kept" bash -c '[ '"$rc"' = 1 ] && grep -q "^refused.*its drive" "'"$d"'/out" && grep -qxF "P: '"$OTHER"'" <<<"'"$now"'"'
deadlease "$d/dl.json" P: "$OTHER"
"$WINE" "$LAUNCH" run "$RUN" --clean "$(winpath "$d/dl.json")" --stage-root "$ROOT" >"$d/out" 2>&1; rc=$?
sed -i 's/\r$//' "$d/out"
now=$(dosdevs)
check "clean: a dead run's drive removed (its exact target)" bash -c '[ '"$rc"' = 0 ] && grep -qx "removed drive P:" "'"$d"'/out" && [ -n "'"$now"'" ] && ! grep -q "^P:" <<<"'"$now"'"'
# what drive_win32.c assumes of Wine (docs/windows.md, "The drive root"):
# a letter holds one target (a second definition fails, where Windows
# stacks it), and a removal naming another target removes the letter
# anyway (DDD_EXACT_MATCH_ON_REMOVE ignored); so the runner checks its
# target is listed before every removal
"$WINE" "$CHILD" define Q: "$OTHER"
"$WINE" "$CHILD" define Q: "\\??\\$DS1"; r2=$?
now=$(dosdevs)
check "Wine: a letter holds one target (a second definition fails)" bash -c '[ '"$r2"' = 3 ] && grep -qxF "Q: '"$OTHER"'" <<<"'"$now"'"'
"$WINE" "$CHILD" undefine Q: "\\??\\$DS1"
now=$(dosdevs)
check "Wine: a removal naming another target removes the letter" bash -c '[ -n "'"$now"'" ] && ! grep -q "^Q:" <<<"'"$now"'"'
"$WINE" "$CHILD" undefine Q: "$OTHER" 2>/dev/null

# 13. the snapshot core (snap/) on Windows, through snap/fs_win32.c: stage,
# change set, transaction, conflict (snapsmoke prints one line per check)
"$WINE" "$build/tests/win/snapsmoke.exe" "$(winpath "$d/snap")" >"$d/out" 2>&1; rc=$?
sed -i 's/\r$//' "$d/out"
while read -r verdict what; do
	case $verdict in
	ok) ok "snap on Windows: $what" ;;
	FAIL) bad "snap on Windows: $what" ;;
	esac
done <"$d/out"
check "snap on Windows: snapsmoke exit 0" is "$rc" 0

# 14. aisb.exe, the Windows launcher: every session a snapshot session.
# The workspace is a folder of the test; the sessions are in the prefix's
# %LOCALAPPDATA%\aisb\sessions.  aisb.exe is started from the shell (it is
# the runner's Windows parent); stdin is /dev/null: no console to ask on.
AISB=$build/aisb.exe
SESSIONS=$(echo "$WINEPREFIX"/drive_c/users/*/AppData/Local)/aisb/sessions
ws=$tmp/ws
# aisb ARGS...: out in $d/aout, err in $d/aerr, a new session's id in $sid
aisb() {
	"$WINE" "$AISB" "$@" </dev/null >"$d/aout" 2>"$d/aerr"
	local rc=$?
	sed -i 's/\r$//' "$d/aout" "$d/aerr"
	# a run says its session; changes, apply... leave $sid as it was
	local s
	s=$(sed -n 's/^aisb: session \([0-9a-f]\{24\}\) (.*/\1/p' "$d/aerr" | sed -n 1p)
	[ -n "$s" ] && sid=$s
	return $rc
}
newws() {	# a fresh workspace: a.txt, sub/b.txt, d.txt, credentials
	rm -rf "$ws" && mkdir -p "$ws/sub" &&
	echo a >"$ws/a.txt" && echo b >"$ws/sub/b.txt" && echo keep >"$ws/d.txt" &&
	echo 'API_TOKEN=canary-env' >"$ws/.env" &&
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\ncanary\n' >"$ws/id_rsa"
	cp -a "$ws" "$tmp/ws.orig"
}
WSW=$(winpath "$ws")
CH=$CHILD
cd "$tmp" || exit 1

# usage errors
aisb --bogus -- x; rc=$?
check "aisb: unknown option: exit 64 with the usage" bash -c '[ '"$rc"' = 64 ] && grep -q "^usage: aisb" "'"$d"'/aerr"'
AISB_RUN_TEST_NO_APPCONTAINER='' aisb --no-appcontainer -- "$CH" exit 0; rc=$?
check "aisb: --no-appcontainer refused outside tests (64)" is "$rc" 64
[ "$rc" = 64 ] || sed 's/^/  stderr: /' "$d/aerr"
aisb --gate 192.0.2.1:80 -- "$CH" exit 0; rc=$?
check "aisb: --gate other than 127.0.0.1 refused (64)" is "$rc" 64

# --apply never: the host is unchanged, the draft lists exactly A/M/D
rm -rf "$tmp/ws.orig"; newws
aisb --workspace "$WSW" $T --apply never -- "$CH" write a.txt changed new.txt hello d.txt -; rc=$?
check "aisb --apply never: exit 0" is "$rc" 0
check "  a session id was said" test -n "$sid"
check "  the host is unchanged" diff -r "$tmp/ws.orig" "$ws"
aisb changes "$sid"; rc=$?
check "  aisb changes: exactly M a.txt, D d.txt, A new.txt" is "$rc $(grep -E '^[AMD] ' "$d/aout" | sort | tr '\n' ,)" "0 A new.txt,D d.txt,M a.txt,"
check "  record: exited 0, appcontainer false, outcome kept" bash -c 'grep -qx "state exited" "'"$SESSIONS/$sid"'/record" && grep -qx "appcontainer false" "'"$SESSIONS/$sid"'/record" && grep -qx "outcome kept" "'"$SESSIONS/$sid"'/record"'
check "  no lease left (the runner cleaned up itself)" test ! -e "$SESSIONS/$sid/lease.json"
aisb apply "$sid"; rc=$?
check "aisb apply: exit 0" is "$rc" 0
check "  the host now holds what the command wrote" bash -c '[ "$(cat "'"$ws"'/a.txt")" = changed ] && [ "$(cat "'"$ws"'/new.txt")" = hello ] && [ ! -e "'"$ws"'/d.txt" ] && [ "$(cat "'"$ws"'/sub/b.txt")" = b ]'
aisb transactions; rc=$?
check "  aisb transactions: the session applied" bash -c '[ '"$rc"' = 0 ] && grep -Eq "^'"$sid"' +applied" "'"$d"'/aout"'
applied=$sid
# undone: the host as before the session; then the apply again is refused
aisb undo "$sid"; rc=$?
check "aisb undo: exit 0, the host as before the session" bash -c '[ '"$rc"' = 0 ] && diff -r "'"$tmp"'/ws.orig" "'"$ws"'"'
aisb transactions; rc=$?
check "  aisb transactions: undone, tx 2 the undo of tx 1" bash -c '[ '"$rc"' = 0 ] && grep -Eq "^'"$sid"' +undone" "'"$d"'/aout" && grep -Eq "^  tx 2 +applied +[0-9a-f]{12}  undo of tx 1$" "'"$d"'/aout"'

# a host edit between the run and the apply: 65, nothing written
rm -rf "$tmp/ws.orig"; newws
aisb --workspace "$WSW" $T --apply never -- "$CH" write a.txt changed new.txt hello
kept=$sid
echo edited >"$ws/a.txt"
aisb apply "$sid"; rc=$?
check "aisb apply after a host edit: exit 65 (conflict)" is "$rc" 65
check "  nothing written" bash -c '[ "$(cat "'"$ws"'/a.txt")" = edited ] && [ ! -e "'"$ws"'/new.txt" ]'
# an undo after a host edit of what the apply wrote: 65, naming it
rm -rf "$tmp/ws.orig"; newws
aisb --workspace "$WSW" $T --apply never -- "$CH" write a.txt changed new.txt hello
aisb apply "$sid"
echo "the user went on" >>"$ws/new.txt"
aisb undo "$sid"; rc=$?
check "aisb undo after a host edit: 65 naming the file, nothing written" bash -c '[ '"$rc"' = 65 ] && grep -q "new.txt" "'"$d"'/aerr" && [ "$(cat "'"$ws"'/a.txt")" = changed ] && grep -qx "the user went on" "'"$ws"'/new.txt"'

# a failing command proposes nothing: the stage removed, the host unchanged
rm -rf "$tmp/ws.orig"; newws
aisb --workspace "$WSW" $T -- "$CH" exit 3 made.txt; rc=$?
check "a failing command: its exit code (3)" is "$rc" 3
check "  nothing proposed: stage removed, host unchanged" bash -c '[ ! -e "'"$SESSIONS/$sid"'/stage" ] && diff -r "'"$tmp"'/ws.orig" "'"$ws"'" && grep -qx "outcome failed" "'"$SESSIONS/$sid"'/record"'

# --apply auto without a console keeps the draft; discard drops the stage
aisb --workspace "$WSW" $T --apply auto -- "$CH" write new.txt hello; rc=$?
check "--apply auto, no console: the draft is kept (0)" bash -c '[ '"$rc"' = 0 ] && [ -d "'"$SESSIONS/$sid"'/stage" ] && [ ! -e "'"$ws"'/new.txt" ] && grep -q "kept as a draft" "'"$d"'/aerr"'
aisb discard "$sid"; rc=$?
check "  aisb discard: the stage removed" bash -c '[ '"$rc"' = 0 ] && [ ! -e "'"$SESSIONS/$sid"'/stage" ] && [ ! -e "'"$ws"'/new.txt" ]'

# credential files of the workspace are not in the stage
aisb --workspace "$WSW" $T --apply never -- "$CH" ls; rc=$?
check "credential files absent from the stage (.env, id_rsa)" bash -c '[ '"$rc"' = 0 ] && grep -qx a.txt "'"$d"'/aout" && grep -qx sub/b.txt "'"$d"'/aout" && ! grep -Eq "^(\.env|id_rsa)$" "'"$d"'/aout"'

# the timeout: 124, nothing proposed
aisb --workspace "$WSW" $T --timeout 1 -- "$CH" sleep 600000 made.txt; rc=$?
check "timeout: exit 124, nothing proposed" bash -c '[ '"$rc"' = 124 ] && [ ! -e "'"$SESSIONS/$sid"'/stage" ] && [ ! -e "'"$ws"'/made.txt" ] && grep -qx "limits_hit timeout" "'"$SESSIONS/$sid"'/record"'

# aisb.exe dies mid-run: the runner kills the job (its parent is gone);
# discard refuses while aisb runs; aisb clean reaps the draft once it is gone
"$WINE" "$AISB" --workspace "$WSW" $T --timeout 0 -- "$CH" sleep 600000 \
    </dev/null >"$d/bout" 2>"$d/berr" &
bg=$!
bsid=
for _ in $(seq 300); do
	bsid=$(sed -n 's/^aisb: session \([0-9a-f]\{24\}\) (.*/\1/p' "$d/berr" | sed -n 1p)
	[ -n "$bsid" ] && [ -s "$SESSIONS/$bsid/lease.json" ] && break
	sleep 0.1
done
aisb discard "$bsid"; rc=$?
check "discard while aisb.exe runs: refused (78), stage kept" bash -c '[ '"$rc"' = 78 ] && grep -q "still running" "'"$d"'/aerr" && [ -d "'"$SESSIONS/$bsid"'/stage" ]'
kill -KILL "$bg" 2>/dev/null; wait "$bg" 2>/dev/null
for _ in $(seq 300); do [ -s "$SESSIONS/$bsid/result.json" ] && break; sleep 0.1; done
check "  aisb.exe killed: the runner killed the job (limits_hit parent)" is "$(python3 -c 'import json,sys;r=json.load(open(sys.argv[1]));print(r["state"], r["limits_hit"])' "$SESSIONS/$bsid/result.json" 2>&1)" "killed ['parent']"
aisb clean; rc=$?
check "  then aisb clean reaps it: stage removed, draft failed" bash -c '[ '"$rc"' = 0 ] && grep -q "^removed the stage of session '"$bsid"'" "'"$d"'/aout" && [ ! -e "'"$SESSIONS/$bsid"'/stage" ] && grep -qx "state failed" "'"$SESSIONS/$bsid"'/snapshot"'
check "  a kept draft is not reaped" test -d "$SESSIONS/$kept/stage"

# aisb clean: a dead runner's lease in a session folder; a forged one
mkdir -p "$SESSIONS/00000000000000000000dead/stage" "$tmp/outside"
# the sessions folder as aisb.exe names it: C:\users\...
cpath() { local p=${1#"$WINEPREFIX"/drive_c}; printf 'C:%s' "${p//\//\\}"; }
printf '{"protocol":1,"run_id":"00000000000000000000dead00000000","runner_pid":4000000,"runner_start":1,"profile":"","stage":"%s"}' \
    "$(cpath "$SESSIONS/00000000000000000000dead/stage" | sed 's/\\/\\\\/g')" >"$SESSIONS/00000000000000000000dead/lease.json"
# and the gate's env file a killed aisb left (its launcher file: a dead pid)
echo 'HTTPS_PROXY=http://alice:x@127.0.0.1:9' >"$SESSIONS/00000000000000000000dead/gate.env"
echo '4000000 1' >"$SESSIONS/00000000000000000000dead/launcher"
aisb clean; rc=$?
check "aisb clean: a dead run's stage removed" bash -c '[ '"$rc"' = 0 ] && [ ! -e "'"$SESSIONS"'/00000000000000000000dead/stage" ] && grep -q "^removed stage" "'"$d"'/aout"'
check "  and a dead aisb's gate env file" bash -c '[ ! -e "'"$SESSIONS"'/00000000000000000000dead/gate.env" ] && grep -q "^removed the gate credential file" "'"$d"'/aout"'
check "  the applied session untouched" test -e "$SESSIONS/$applied/snapshot"
mkdir -p "$SESSIONS/00000000000000000000beef"
printf '{"protocol":1,"run_id":"00000000000000000000beef00000000","runner_pid":4000000,"runner_start":1,"profile":"","stage":"%s"}' \
    "$(winpath "$tmp/outside" | sed 's/\\/\\\\/g')" >"$SESSIONS/00000000000000000000beef/lease.json"
aisb clean; rc=$?
check "  a stage outside the sessions refused (1), kept" bash -c '[ '"$rc"' = 1 ] && [ -d "'"$tmp"'/outside" ] && grep -q "^refused" "'"$d"'/aout"'
rm -rf "$SESSIONS/00000000000000000000dead" "$SESSIONS/00000000000000000000beef"

# 14b. identity: aisb.exe runs only the aisb-run.exe its build manifest
# names (docs/windows.md, "Identity"): a tampered runner, or no manifest,
# is refused (77) before anything is staged, and nothing runs
check "identity: the manifest names the runner" grep -q "^file aisb-run.exe $(sha256sum "$build/aisb-run.exe" | cut -d' ' -f1)\$" "$build/aisb-manifest.txt"
cp "$build/aisb-run.exe" "$tmp/runner.good"
printf 'x' >>"$build/aisb-run.exe"
newws
aisb --workspace "$WSW" $T --apply never -- "$CH" write tampered.txt x -; rc=$?
check "identity: a tampered runner refused (77)" bash -c '[ '"$rc"' = 77 ] && grep -q "aisb-run.exe is not the runner this aisb.exe was built with" "'"$d"'/aerr"'
check "  nothing ran" bash -c '! grep -rqs x "'"$SESSIONS"'"/*/stage/tampered.txt'
cp "$tmp/runner.good" "$build/aisb-run.exe"
mv "$build/aisb-manifest.txt" "$tmp/manifest.good"
aisb --workspace "$WSW" $T --apply never -- "$CH" exit 0; rc=$?
check "identity: no manifest refused (77)" bash -c '[ '"$rc"' = 77 ] && grep -q "aisb-manifest.txt" "'"$d"'/aerr"'
mv "$tmp/manifest.good" "$build/aisb-manifest.txt"
aisb --workspace "$WSW" $T --apply never -- "$CH" exit 0; rc=$?
check "identity: the runner of the manifest runs" is "$rc" 0
aisb doctor; rc=$?
check "identity: aisb doctor names the runner's hash" bash -c '[ '"$rc"' = 0 ] && grep -q "^  file aisb-run.exe $(sha256sum "'"$build"'/aisb-run.exe" | cut -d" " -f1)\$" "'"$d"'/aout" && grep -q "^  protocol 1\$" "'"$d"'/aout" && grep -q ": the manifest.s (sha256 [0-9a-f]\{64\}, verified)\$" "'"$d"'/aout"'
printf 'x' >>"$build/aisb-run.exe"
aisb doctor; rc=$?
check "identity: aisb doctor on a tampered runner: 77" bash -c '[ '"$rc"' = 77 ] && grep -q "NOT the manifest.s" "'"$d"'/aout"'
cp "$tmp/runner.good" "$build/aisb-run.exe"

# 14c. the self-test's result, kept with its identity (docs/windows.md,
# "Self-test results"): stored in %LOCALAPPDATA%\aisb\selftest.txt with
# the manifest's hashes and the policy's; aisb doctor shows it only
# while both hold.  On Wine the self-test cannot run (no AppContainer):
# its one check fails, and that result is stored and judged like any.
REC=$(dirname "$SESSIONS")/selftest.txt
RUNSHA=$(sha256sum "$build/aisb-run.exe" | cut -d' ' -f1)
aisb doctor; rc=$?
check "self-test: doctor before any: none stored, how to run one" bash -c '[ '"$rc"' = 0 ] && grep -q "^self-test: none stored (.*selftest.txt); run .*aisb-run.exe --self-test\$" "'"$d"'/aout"'
selftest() {	# selftest DIR [OPTIONS]: DIR's aisb-run.exe --self-test, out in $d/sout
	local dir=$1; shift
	"$WINE" "$dir/aisb-run.exe" --self-test "$@" </dev/null >"$d/sout" 2>&1
	local rc=$?
	sed -i 's/\r$//' "$d/sout"
	return $rc
}
selftest "$build"; rc=$?
check "self-test: cannot run on Wine (77), says why" bash -c '[ '"$rc"' = 77 ] && grep -q "^FAIL this host has AppContainers (this is Wine" "'"$d"'/sout" && grep -q "^self-test: could not run\$" "'"$d"'/sout"'
check "  prints the manifest and the runner's verified hash" bash -c 'grep -q "^  file aisb-run.exe '"$RUNSHA"'\$" "'"$d"'/sout" && grep -q "^  protocol 1\$" "'"$d"'/sout" && grep -q "aisb-run.exe: the manifest.s (sha256 '"$RUNSHA"', verified)\$" "'"$d"'/sout" && grep -q "^policy sha256 [0-9a-f]\{64\} (protocol 1; appcontainer; capabilities none; memory 1073741824; procs 32; " "'"$d"'/sout"'
check "  stores its result with the manifest's hashes" bash -c 'grep -q "^self-test: result stored in " "'"$d"'/sout" && grep -qx "file aisb-run.exe '"$RUNSHA"'" "'"$REC"'" && grep -qx "result failed" "'"$REC"'"'
aisb doctor; rc=$?
check "self-test: doctor shows the stored result (same build, same policy)" bash -c '[ '"$rc"' = 0 ] && grep -q "^self-test: FAILED on 20[0-9-]*T[0-9:]*Z, with this build and policy" "'"$d"'/aout" && grep -q "^  FAIL this host has AppContainers" "'"$d"'/aout"'
# another policy: the limits the self-test ran under are not the sessions'
selftest "$build" --memory 512
aisb doctor
check "self-test: another policy's result is stale, says which, how to re-run" bash -c 'grep -q "^self-test: the stored result is stale, ignored: the policy changed: the result is of policy [0-9a-f]\{16\}... (.*memory 536870912.*), sessions run with [0-9a-f]\{16\}...; run .*aisb-run.exe --self-test\$" "'"$d"'/aout" && ! grep -q "^  FAIL" "'"$d"'/aout"'
selftest "$build"
# a copy of the install: its own result, until one byte of its runner
# changes (a new build: the manifest names the new runner)
inst=$tmp/inst && mkdir -p "$inst"
cp "$build/aisb.exe" "$build/aisb-run.exe" "$build/aisb-manifest.txt" "$inst/"
aisbi() { "$WINE" "$inst/aisb.exe" "$@" </dev/null >"$d/aout" 2>"$d/aerr"; local rc=$?; sed -i 's/\r$//' "$d/aout" "$d/aerr"; return $rc; }
aisbi doctor
check "self-test: the copy's doctor: the same build's result holds" grep -q "^self-test: FAILED on .*, with this build and policy" "$d/aout"
printf 'x' >>"$inst/aisb-run.exe"
cp "$REC" "$tmp/rec.before"
selftest "$inst"
check "self-test: a runner not the manifest's stores nothing" bash -c 'grep -q "^self-test: result not stored: this aisb-run.exe is not the one its build manifest names" "'"$d"'/sout" && cmp -s "'"$REC"'" "'"$tmp"'/rec.before"'
new=$(sha256sum "$inst/aisb-run.exe" | cut -d' ' -f1)
sed -i "s/^file aisb-run.exe .*/file aisb-run.exe $new/" "$inst/aisb-manifest.txt"
aisbi doctor; rc=$?
check "self-test: a new runner makes the result stale, naming both hashes" bash -c '[ '"$rc"' = 0 ] && grep -q "^self-test: the stored result is stale, ignored: aisb-run.exe changed: the result is of sha256 '"${RUNSHA:0:16}"'..., the manifest names '"${new:0:16}"'...; run " "'"$d"'/aout"'
aisb doctor
check "  the build's own doctor still shows it" grep -q "^self-test: FAILED on .*, with this build and policy" "$d/aout"
# a record cut short, or larger than its bound: ignored, never trusted
head -n -1 "$tmp/rec.before" >"$REC"
aisb doctor
check "self-test: a record cut short is ignored with a note" grep -q "^self-test: .*selftest.txt ignored, not trusted (no result line (cut short)); run " "$d/aout"
{ cat "$tmp/rec.before"; head -c 20000 /dev/zero | tr '\0' 'x'; echo; } >"$REC"
aisb doctor
check "self-test: a record past its bound is ignored with a note" grep -q "^self-test: .*selftest.txt ignored, not trusted (.*larger" "$d/aout"
sed 's/^check FAIL /check ok /; s/^result failed/result passed/' "$tmp/rec.before" >"$REC"
sed -i "s/^file aisb.exe .*/file aisb.exe $(printf '0%.0s' $(seq 64))/" "$REC"
aisb doctor
check "self-test: an edited record of another aisb.exe: stale, not passed" bash -c '! grep -q "^self-test: passed" "'"$d"'/aout" && grep -q "^self-test: the stored result is stale, ignored: aisb.exe changed" "'"$d"'/aout"'
rm -f "$REC"

# 15. the gate: the real Linux aisb-gate on 127.0.0.1:0 with a users file;
# a DNS server and an HTTP server of the test on 127.0.0.1 (the policy
# exempts 127.0.0.1/32 in allow_ranges, as tests/integration/gate_dns.sh
# does).  aisb.exe --gate gives the command the proxy variables with the
# credential from the file; the gate decides and audits.
gate_bin=${AISB_GATE:-}
[ -z "$gate_bin" ] && [ -x "$build/../plain/aisb-gate" ] && gate_bin=$build/../plain/aisb-gate
if [ -z "$gate_bin" ] || [ ! -x "$gate_bin" ]; then
	skp "gate through aisb.exe: no Linux aisb-gate (set AISB_GATE=BUILD/aisb-gate)"
else
	g=$tmp/gate && mkdir -p "$g"
	gpids=()
	wait_file() { local _; for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
	echo '{"allowed.test": {"A": ["127.0.0.1"]}, "denied.test": {"A": ["127.0.0.1"]}}' >"$g/zone.json"
	python3 "$top_srcdir/tests/integration/gate_dns.py" --zone "$g/zone.json" \
	    --port-file "$g/dns.port" --log "$g/dns.log" >/dev/null 2>&1 &
	gpids+=($!)
	python3 "$top_srcdir/tests/integration/gate_upstream.py" http --bind 127.0.0.1 \
	    --port-file "$g/up.port" --log "$g/up.log" >/dev/null 2>&1 &
	gpids+=($!)
	wait_file "$g/dns.port" && wait_file "$g/up.port"
	up=$(cat "$g/up.port")
	printf 'version: 1\nallow:\n  - host: allowed.test\n    ports: [%s]\nallow_ranges: [127.0.0.1/32]\ndns:\n  servers: ["127.0.0.1:%s"]\n' \
	    "$up" "$(cat "$g/dns.port")" >"$g/policy.yaml"
	SECRET=wlZq9secretCanary
	printf 'alice plain:%s\n' "$SECRET" >"$g/users" && chmod 0600 "$g/users"
	"$gate_bin" -d -v -f "$g/policy.yaml" -l 127.0.0.1:0 --port-file "$g/gate.port" \
	    --audit "$g/audit.log" --users "$g/users" >/dev/null 2>"$g/gate.err" &
	gpids+=($!)
	trap 'kill "${gpids[@]}" 2>/dev/null; wait "${gpids[@]}" 2>/dev/null; cleanup' EXIT
	if ! wait_file "$g/gate.port"; then
		bad "the gate did not start: $(tail -n 3 "$g/gate.err")"
	else
		gp=$(cat "$g/gate.port")
		# outside the workspace: the stage is a copy of it
		printf 'alice:%s\n' "$SECRET" >"$g/cred.txt"
		CRED=$(winpath "$g/cred.txt")
		aisb --workspace "$WSW" $T --apply never --gate "127.0.0.1:$gp" \
		    --gate-credential-file "$CRED" -- "$CH" connect "allowed.test:$up"; rc=$?
		check "gate: an allowed name through aisb.exe: 200 and the upstream" bash -c '[ '"$rc"' = 0 ] && grep -qx "connect 200" "'"$d"'/aout" && grep -q "^upstream HTTP/1.[01] 200" "'"$d"'/aout"'
		s1=$sid
		check "  the env file with the credential removed" test ! -e "$SESSIONS/$s1/gate.env"
		check "  record: gate and user, no secret" bash -c 'grep -qx "gate 127.0.0.1:'"$gp"'" "'"$SESSIONS/$s1"'/record" && grep -qx "gate_user alice" "'"$SESSIONS/$s1"'/record"'
		aisb --workspace "$WSW" $T --apply never --gate "127.0.0.1:$gp" \
		    --gate-credential-file "$CRED" -- "$CH" connect "denied.test:$up"; rc=$?
		check "gate: a denied name: 403" bash -c '[ '"$rc"' = 3 ] && grep -qx "connect 403" "'"$d"'/aout"'
		sleep 0.5	# the audit line of the last tunnel's close
		check "  audit: both decisions attributed to alice" python3 - "$g/audit.log" "$up" <<'PY'
import json, sys
seen = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("user") == "alice" and str(o.get("port")) == sys.argv[2]:
        seen.add((o.get("host"), o.get("decision")))
sys.exit(0 if {("allowed.test", "allow"), ("denied.test", "deny")} <= seen else 1)
PY
		printf 'alice:wrongsecret\n' >"$g/bad.txt"
		aisb --workspace "$WSW" $T --apply never --gate "127.0.0.1:$gp" \
		    --gate-credential-file "$(winpath "$g/bad.txt")" -- "$CH" connect "allowed.test:$up"; rc=$?
		check "gate: a wrong secret: 407" bash -c '[ '"$rc"' = 3 ] && grep -qx "connect 407" "'"$d"'/aout"'
		printf 'alice:Zq9 bad\n' >"$g/bad.txt"
		aisb --workspace "$WSW" $T --gate "127.0.0.1:$gp" \
		    --gate-credential-file "$(winpath "$g/bad.txt")" -- "$CH" exit 0; rc=$?
		check "gate: a malformed credential file: 78, the secret not said" bash -c '[ '"$rc"' = 78 ] && ! grep -q "Zq9" "'"$d"'/aerr" && grep -q "gate-credential-file" "'"$d"'/aerr"'
		# Wine shows a Windows process's command line in /proc/PID/cmdline:
		# the runner's (with --gate-port, --env-file) must not hold the secret
		"$WINE" "$AISB" --workspace "$WSW" $T --gate "127.0.0.1:$gp" \
		    --gate-credential-file "$CRED" --timeout 0 -- "$CH" sleep 600000 \
		    </dev/null >"$d/gout" 2>"$d/gerr" &
		gbg=$!
		runner_seen=0
		for _ in $(seq 300); do
			for c in /proc/[0-9]*/cmdline; do
				cmd=$({ tr '\0' ' ' <"$c"; } 2>/dev/null) || continue
				grep -q -- "aisb-run.exe --run-id .*--gate-port $gp --env-file " <<<"$cmd" &&
				    { runner_seen=1; break; }
			done
			[ "$runner_seen" = 1 ] && break
			sleep 0.1
		done
		# the pattern is not the secret itself: grep's own argv must not match
		leaked=$(for c in /proc/[0-9]*/cmdline; do { tr '\0' ' ' <"$c"; } 2>/dev/null; echo; done |
		    grep -c "${SECRET%?}[${SECRET: -1}]")
		check "gate: the runner's command line (seen: $runner_seen) holds no secret" is "$runner_seen $leaked" "1 0"
		kill -KILL "$gbg" 2>/dev/null; wait "$gbg" 2>/dev/null
		gsid=$(sed -n 's/^aisb: session \([0-9a-f]\{24\}\) (.*/\1/p' "$d/gerr" | sed -n 1p)
		for _ in $(seq 300); do [ -s "$SESSIONS/$gsid/result.json" ] && break; sleep 0.1; done
		check "  aisb killed: its gate env file was already gone (read, then removed)" \
		    test ! -e "$SESSIONS/$gsid/gate.env"
		aisb discard "$gsid" >/dev/null 2>&1
		check "gate: the secret in no session file, output or log" bash -c '! grep -rlF "'"$SECRET"'" "'"$SESSIONS"'" "'"$d"'" "'"$g"'/audit.log" "'"$g"'/gate.err"'
	fi
	kill "${gpids[@]}" 2>/dev/null; wait "${gpids[@]}" 2>/dev/null
	trap cleanup EXIT
fi

echo "# TOTAL: $((pass + fail + skip))"
echo "# PASS: $pass"
echo "# SKIP: $skip"
echo "# FAIL: $fail"
[ "$fail" = 0 ]
