#!/bin/sh
# run.sh SECONDS CORPUS_DIR BIN_DIR: each harness for SECONDS, on a scratch
# copy of the seed corpus.  Any crash, leak or timeout fails the run.
# SECONDS may be runs:N instead (make fuzz-long): N executions each, and
# the corpus each grew to is printed with the count.
set -eu
secs=$1 corpus=$2 bin=$3
case $secs in
runs:*) limit="-runs=${secs#runs:}" ;;
*) limit="-max_total_time=$secs" ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for h in policy target plan gate_http gate_tls gate_ctl gate_conn gate_auth gate_users stub envfile denials record dnsmsg; do
	mkdir -p "$work/$h"
	cp "$corpus/$h"/* "$work/$h/"
	echo "fuzz_$h: $limit"
	# -timeout 20: fuzz_gate_conn lets one connection run into its 1 s
	# timeouts, and a few of them in a row
	"$bin/fuzz_$h" "$limit" -max_len=4096 -timeout=20 \
	    -rss_limit_mb=2048 -artifact_prefix="$work/" -print_final_stats=1 \
	    "$work/$h" 2>"$work/$h.log" || {
		tail -n 60 "$work/$h.log"
		for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
			[ -e "$a" ] && { echo "artifact $a:"; od -c "$a" | head -20; }
		done
		echo "fuzz_$h FAILED"
		exit 1
	}
	grep -E '^stat::number_of_executed_units' "$work/$h.log" || true
	echo "corpus: $(ls "$work/$h" | wc -l) entries"
done
echo "fuzz: all harnesses ran ($limit) without a crash or leak"
