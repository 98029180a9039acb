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
	tests/bench/splice_relay
tests_bench_bench_policy_SOURCES = tests/bench/bench_policy.c
tests_bench_bench_policy_LDADD = $(POLICY_LIBS)
tests_bench_target_SOURCES = tests/bench/target.c
tests_bench_loadgen_SOURCES = tests/bench/loadgen.c
tests_bench_splice_relay_SOURCES = tests/bench/splice_relay.c
CLEANFILES += $(EXTRA_PROGRAMS)
EXTRA_DIST += tests/bench/compare.sh tests/bench/ceiling.sh tests/bench/instructions.sh
bench: tests/bench/bench_policy tests/bench/target tests/bench/loadgen \
	    tests/bench/splice_relay aisb-gate
	tests/bench/bench_policy
	bash $(top_srcdir)/tests/bench/compare.sh \
	    --bindir tests/bench --gate ./aisb-gate $(BENCH_ARGS)
EXTRA_DIST += tests/bench/startup.sh
# AISB-TRANSPARENT against CONNECT tunnel setup (issue 16): run by hand from
# the build tree after make bench, see the script's head
EXTRA_DIST += tests/bench/transparent.sh
bench-startup: aisb aisb-gate aisb-enforce
	bash $(top_srcdir)/tests/bench/startup.sh --aisb ./aisb $(STARTUP_ARGS)
