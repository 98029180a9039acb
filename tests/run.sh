#!/bin/bash
# The whole test suite, as CI runs it (as root on Debian 12):
#   1. install the packages (contrib/debian-packages),
#   2. build with -Werror and run `make check` (unit, CLI, integration, and
#      the podman end-to-end tests, AISB_E2E=1),
#   3. build with ASan+UBSan and run `make check` again (e2e skipped: the
#      image builds are not worth repeating),
#   4. `make distcheck`, running the unit tests in the distributed tree,
#   5. build the libFuzzer harnesses with clang and run each FUZZ_SECONDS,
#      two at a time (FUZZ_JOBS: the number of cores),
#   6. cross-build aisb-run.exe (mingw-w64) and run it under Wine.
# The builds of 3 and 5 are made during 2, at the lowest priority.
# Build trees go to $AISB_BUILD (default: build-tests/ in the source tree).
# At the end: each stage's wall time and the slowest tests.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${AISB_BUILD:-$top/build-tests}
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-15}

# Each stage's wall time, and at the end (also of a failed run) the
# stages and the slowest tests: every test's .log ends with "TIME name
# seconds" (tests/timed-driver).
stage='' stage_t0=$SECONDS stages=()
step() {
	[ -z "$stage" ] || stages+=("$((SECONDS - stage_t0)) s  $stage")
	stage=$* stage_t0=$SECONDS
	printf '\n=== %s\n' "$*"
}
show_times() {
	local d
	[ -z "$stage" ] || stages+=("$((SECONDS - stage_t0)) s  $stage")
	stage=
	printf '\n=== times\n'
	printf '%s\n' "${stages[@]}"
	for d in plain asan; do
		[ -d "$out/$d/tests" ] || continue
		echo "--- $d: the slowest tests (seconds; sum of all, two at a time)"
		find "$out/$d/tests" -name '*.log' -exec sed -n 's/^TIME //p' {} + |
		    sort -k2,2nr | awk '{ s += $2 } NR <= 25 { printf "%8s %s\n", $2, $1 }
			END { printf "%8.1f sum of %d tests\n", s, NR }'
	done
	echo "total: $SECONDS s"
}
prebuild_pid=
trap 'prebuild_stop; show_times' EXIT

step "packages"
sh "$top/contrib/apt-install.sh"

cd "$top"
autoreconf -fi

passed=0 failed=0 skipped=0
finish() {	# finish STATUS: the times, then the counts as the last line
	trap - EXIT
	prebuild_stop
	show_times
	echo "tests: $passed passed, $failed failed, $skipped skipped"
	exit "$1"
}
count() {	# count TEST-SUITE-LOG: add automake's totals to ours
	local p f e s
	p=$(sed -n 's/^# PASS: *//p' "$1"); f=$(sed -n 's/^# FAIL: *//p' "$1")
	e=$(sed -n 's/^# ERROR: *//p' "$1"); s=$(sed -n 's/^# SKIP: *//p' "$1")
	passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0}))
	skipped=$((skipped + ${s:-0}))
}

build_tree() {	# build_tree DIR CONFIGURE-ARGS...: configure, make, the check programs
	local dir=$1; shift
	rm -rf "$dir"
	mkdir -p "$dir"
	( cd "$dir" && "$top/configure" --enable-werror "$@" >configure.out &&
	  make -j"$jobs" >make.out 2>&1 && make -j"$jobs" check TESTS= >>make.out 2>&1 ||
	  { cat configure.out make.out 2>/dev/null | tail -n 200; exit 1; } )
}

check_tree() {	# check_tree DIR: make check, counted
	local dir=$1 rc=0
	( cd "$dir" && make -j"$jobs" check || { cat test-suite.log 2>/dev/null; exit 1; } ) ||
	    rc=$?
	[ -f "$dir/test-suite.log" ] && count "$dir/test-suite.log"
	if [ "$rc" != 0 ]; then
		[ "$failed" -gt 0 ] || failed=1
		finish "$rc"
	fi
}

asan_env() {
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
}

# The sanitizer and fuzz builds, made while the podman end-to-end tests
# run, at the lowest CPU and I/O priority: those tests wait on podman,
# apt and sleeps much of the time, and the builds take what they leave
# idle, next to nothing from the tests.  The stages after only run tests.
# Output in each build folder; prebuild.status says which build failed.
prebuild() {
	renice -n 19 -p "$BASHPID" >/dev/null
	ionice -c 2 -n 7 -p "$BASHPID" 2>/dev/null || true
	asan_env
	build_tree "$out/asan" CC=clang \
	    CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" >"$out/prebuild.out" 2>&1 ||
	    { echo "the ASan+UBSan build" >"$out/prebuild.status"; return 1; }
	unset ASAN_OPTIONS UBSAN_OPTIONS
	rm -rf "$out/fuzz" && mkdir -p "$out/fuzz"
	( cd "$out/fuzz" && "$top/configure" --enable-fuzz --disable-tests CC=clang \
	      CFLAGS="-O1 -g -fno-omit-frame-pointer" >configure.out &&
	  make -j"$jobs" fuzz-build >make.out 2>&1 ) >>"$out/prebuild.out" 2>&1 ||
	    { echo "the fuzz build" >"$out/prebuild.status"; return 1; }
	echo ok >"$out/prebuild.status"
}
prebuild_wait() {	# the builds' end; their output if one failed
	[ -n "$prebuild_pid" ] || return 0
	wait "$prebuild_pid" || true
	prebuild_pid=
	[ "$(cat "$out/prebuild.status" 2>/dev/null)" = ok ] && return 0
	echo "FAIL: $(cat "$out/prebuild.status" 2>/dev/null || echo 'the sanitizer and fuzz builds'):"
	cat "$out/prebuild.out" "$out/fuzz/configure.out" "$out/fuzz/make.out" 2>/dev/null |
	    tail -n 200
	failed=$((failed + 1))
	finish 1
}
prebuild_stop() {	# a failed run does not wait for them
	[ -n "$prebuild_pid" ] || return 0
	kill -TERM -- "-$prebuild_pid" 2>/dev/null || true
	wait "$prebuild_pid" 2>/dev/null || true
	prebuild_pid=
}

step "build and make check (-Werror), with the podman end-to-end tests"
mkdir -p "$out"
rm -f "$out/prebuild.status"
set -m		# the builds in a process group of their own, for prebuild_stop
prebuild </dev/null >/dev/null 2>&1 &
prebuild_pid=$!
set +m
# the offline base and the images several tests use, built by the first
# e2e test that needs each and loaded by the others (tests/e2e/lib.sh)
export AISB_E2E_SEED=$out/e2e-seed
rm -rf "$AISB_E2E_SEED" && install -d -m 0700 "$AISB_E2E_SEED"
build_tree "$out/plain" CFLAGS="-O2 -g" || { failed=1; finish 1; }
AISB_E2E=1 check_tree "$out/plain"
rm -rf "$AISB_E2E_SEED"
unset AISB_E2E_SEED

step "ASan+UBSan make check (built during the stage before)"
prebuild_wait
asan_env
check_tree "$out/asan"
unset ASAN_OPTIONS UBSAN_OPTIONS

# The tarball builds, installs and runs its unit tests: the whole suite
# ran twice above, and a third run of it would cost minutes for nothing.
step "make distcheck (the unit tests in the distributed tree)"
units=$(cd "$out/plain" && find tests/unit -maxdepth 1 -type f -name 'test_*' \
    -perm -u+x | sort | tr '\n' ' ')
( cd "$out/plain" && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
      TESTS="$units" >distcheck.out 2>&1 ||
  { tail -n 100 distcheck.out; exit 1; } )
tail -n 4 "$out/plain/distcheck.out"

step "fuzz smoke (${fuzz_seconds}s per harness; built during the e2e stage)"
( cd "$out/fuzz" && make fuzz FUZZ_SECONDS="$fuzz_seconds" FUZZ_JOBS="$jobs" )

step "Windows runner: mingw-w64 cross build, then under Wine (tests/win/wine.sh)"
# its own build folder; prints automake's summary lines, counted as the rest
wrc=0
AISB_WIN_BUILD="$out/win" bash "$top/tests/win/wine.sh" >"$out/wine.log" 2>&1 || wrc=$?
cat "$out/wine.log"
if [ "$wrc" = 77 ]; then
	skipped=$((skipped + 1))
else
	count "$out/wine.log"
	[ "$wrc" = 0 ] || finish 1
fi

step "done"
echo "all test stages passed (test counts are of the two make check runs)"
finish 0
