#!/bin/bash
# aisb-run.exe under Wine (docs/windows.md, "What Wine can run").
#
# Cross-builds the runner with mingw-w64 in a build folder of its own, makes
# a Wine prefix in a temporary folder, and runs aisb-run.exe on
# tests/win/winchild.exe (a small program with one mode per behaviour).
# Then tests/win/snapsmoke.exe runs the snapshot core (snap/) through
# snap/fs_win32.c.  Wine has no AppContainer, so the runs use --no-appcontainer, which the
# runner allows only with the test variable set; the AppContainer path is
# checked to refuse cleanly here.  Run by tests/run.sh after the Linux
# stages; SKIP (77) when the cross compiler, Wine or python3 is missing.
#   AISB_WIN_BUILD   the cross build folder (default: a temporary one)
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
	# the wineserver of our own prefix only
	[ -d "$WINEPREFIX" ] && WINEPREFIX=$WINEPREFIX "$(dirname "$WINE")/wineserver" -k 2>/dev/null
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

# 1. --no-appcontainer is refused without the test variable
AISB_RUN_TEST_NO_APPCONTAINER= runner $T -- "$CHILD" exit 0; rc=$?
check "--no-appcontainer refused outside tests (exit 64)" is "$rc" 64
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
sys.exit(0 if set(r) == want and set(r["cleanup"]) == {"profile", "stage"}
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

echo "# TOTAL: $((pass + fail + skip))"
echo "# PASS: $pass"
echo "# SKIP: $skip"
echo "# FAIL: $fail"
[ "$fail" = 0 ]
