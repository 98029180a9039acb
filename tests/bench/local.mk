# Benchmarks: built by `make bench`, never part of `make check`.
#   bench_policy	the policy engine (decisions/s, load time)
#   target, loadgen	the proxy comparison driven by compare.sh:
#			no proxy, squid, tinyproxy and aisb-gate on 127.0.0.1
#   splice_relay	the least a relay can do, for ceiling.sh (bulk:
#			no proxy, splice_relay, aisb-gate)
# BENCH_SECONDS (default 5) sets each timed run; BENCH_ARGS passes more
# options to compare.sh (e.g. --smoke, the short run CI may use; --workers 2,
# a column for aisb-gate --workers 2).
#   bench-startup	startup.sh: sessions of `true` against plain podman of
#			the same image, runtime, network, init and ulimits,
#			paired and interleaved (root and podman needed, so
#			not part of `make bench`); STARTUP_ARGS passes
#			--rounds R --runs N.
EXTRA_PROGRAMS += tests/bench/bench_policy tests/bench/target tests/bench/loadgen \
	tests/bench/splice_relay tests/bench/bench_synth
tests_bench_bench_policy_SOURCES = tests/bench/bench_policy.c
tests_bench_bench_policy_LDADD = $(POLICY_LIBS)
tests_bench_target_SOURCES = tests/bench/target.c
tests_bench_loadgen_SOURCES = tests/bench/loadgen.c
tests_bench_splice_relay_SOURCES = tests/bench/splice_relay.c
# bench_synth: gate_synth_name/note at their bounds (64 sessions x 512
# names), ns per call; run by hand: make tests/bench/bench_synth
tests_bench_bench_synth_SOURCES = tests/bench/bench_synth.c
tests_bench_bench_synth_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_bench_bench_synth_CFLAGS = $(GATE_CFLAGS)
tests_bench_bench_synth_LDADD = $(GATE_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)
EXTRA_DIST += tests/bench/compare.sh tests/bench/ceiling.sh tests/bench/instructions.sh \
	tests/bench/lib.sh
bench: tests/bench/bench_policy tests/bench/target tests/bench/loadgen \
	    tests/bench/splice_relay aisb-gate
	tests/bench/bench_policy
	bash $(top_srcdir)/tests/bench/compare.sh \
	    --bindir tests/bench --gate ./aisb-gate $(BENCH_ARGS)
EXTRA_DIST += tests/bench/startup.sh
# Rootless sessions of `true` on a new user's store (vfs) and after aisb
# doctor --fix (overlay), against rootful (root, podman; makes two users).
# ROOTLESS_ARGS passes --rounds R --runs N --sides LIST --base TAR.
EXTRA_DIST += tests/bench/rootless.sh
bench-rootless: aisb aisb-gate aisb-enforce
	bash $(top_srcdir)/tests/bench/rootless.sh --aisb ./aisb $(ROOTLESS_ARGS)
# AISB-TRANSPARENT against CONNECT tunnel setup (issue 16): run by hand from
# the build tree after make bench, see the script's head
EXTRA_DIST += tests/bench/transparent.sh
bench-startup: aisb aisb-gate aisb-enforce
	bash $(top_srcdir)/tests/bench/startup.sh --aisb ./aisb $(STARTUP_ARGS)
# Snapshot sessions (issue 17): stage, change set, session and apply times
# of a FILES-file tree (root and podman needed; not part of make bench).
# SNAPSHOT_ARGS passes --files N --mb N --edit N --runs N --dir DIR.
EXTRA_DIST += tests/bench/snapshot.sh
bench-snapshot: aisb aisb-gate aisb-enforce
	bash $(top_srcdir)/tests/bench/snapshot.sh --aisb ./aisb $(SNAPSHOT_ARGS)
.PHONY: bench-snapshot
# snap_bench: stage, change set and apply of snapshot sessions on a
# 10,000-file, 200 MB tree (docs/performance.md, "Snapshot sessions");
# SNAP_BENCH_ARGS passes -d DIR -f FILES -m MB -r ROUNDS.
EXTRA_PROGRAMS += tests/bench/snap_bench
tests_bench_snap_bench_SOURCES = tests/bench/snap_bench.c
tests_bench_snap_bench_LDADD = $(SNAP_LIBS)
bench-snap: tests/bench/snap_bench
	tests/bench/snap_bench $(SNAP_BENCH_ARGS)
.PHONY: bench-snap
# Inspected hosts (issue 29): inspect.sh against plain CONNECT, mitmproxy
# and squid's ssl-bump; tlsbench is its HTTPS server and TLS load.  Run by
# hand: make bench-inspect (INSPECT_ARGS: --rounds N --seconds S --only
# LIST --idle N); it installs mitmproxy and squid-openssl when missing.
EXTRA_PROGRAMS += tests/bench/tlsbench
tests_bench_tlsbench_SOURCES = tests/bench/tlsbench.c
tests_bench_tlsbench_CFLAGS = $(AM_CFLAGS) $(SSL_CFLAGS) $(CRYPTO_CFLAGS)
tests_bench_tlsbench_LDADD = $(SSL_LIBS) $(CRYPTO_LIBS) -lpthread
EXTRA_DIST += tests/bench/inspect.sh
bench-inspect: tests/bench/tlsbench aisb-gate
	bash $(top_srcdir)/tests/bench/inspect.sh --bindir tests/bench \
	    --gate ./aisb-gate $(INSPECT_ARGS)
.PHONY: bench-inspect
