#!/bin/sh
# run.sh SECONDS CORPUS_DIR BIN_DIR HARNESS...: each harness for SECONDS,
# on a scratch copy of its seed corpus (CORPUS_DIR/HARNESS), FUZZ_JOBS
# (default 2) of them at a time.  Any crash, leak or timeout fails the run.
# SECONDS may be runs:N instead (make fuzz-long): N executions each, and
# the corpus each grew to is printed with the count.
set -eu
secs=$1 corpus=$2 bin=$3
shift 3
jobs=${FUZZ_JOBS:-2}
case $secs in
runs:*) limit="-runs=${secs#runs:}" ;;
*) limit="-max_total_time=$secs" ;;
esac
case $jobs in
''|*[!0-9]*|0) echo "run.sh: FUZZ_JOBS must be a positive number" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one HARNESS: its report goes to $work/HARNESS.out; exit status 1 on a find
one() {
	h=$1
	mkdir -p "$work/$h" "$work/$h.art"
	cp "$corpus/$h"/* "$work/$h/"
	echo "fuzz_$h: $limit"
	# -timeout 20: fuzz_gate_conn lets one connection run into its 1 s
	# timeouts, and a few of them in a row
	if ! "$bin/fuzz_$h" "$limit" -max_len=4096 -timeout=20 \
	    -rss_limit_mb=2048 -artifact_prefix="$work/$h.art/" \
	    -print_final_stats=1 "$work/$h" 2>"$work/$h.log"; then
		tail -n 60 "$work/$h.log"
		for a in "$work/$h.art"/*; do
			[ -e "$a" ] && { echo "artifact $a:"; od -c "$a" | head -20; }
		done
		echo "fuzz_$h FAILED"
		return 1
	fi
	grep -E '^stat::number_of_executed_units' "$work/$h.log" || true
	echo "corpus: $(ls "$work/$h" | wc -l) entries"
}

# FUZZ_JOBS lanes, the harnesses dealt round-robin; each lane runs its
# share one after another and stops at its first find
i=0
for h in "$@"; do
	echo "$h" >>"$work/lane.$((i % jobs))"
	i=$((i + 1))
done
pids=
for lane in "$work"/lane.*; do
	[ -e "$lane" ] || continue
	( while read -r h; do
		one "$h" >"$work/$h.out" 2>&1 || exit 1
	  done <"$lane" ) &
	pids="$pids $!"
done
rc=0
for p in $pids; do
	wait "$p" || rc=1
done
for h in "$@"; do
	[ -e "$work/$h.out" ] && cat "$work/$h.out"
done
if [ "$rc" != 0 ]; then
	echo "fuzz: a harness found something (above)"
	exit 1
fi
echo "fuzz: all $# harnesses ran ($limit, $jobs at a time) without a crash or leak"
