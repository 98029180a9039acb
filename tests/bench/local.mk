# Benchmarks: built by `make bench`, never part of `make check`.
EXTRA_PROGRAMS += tests/bench/bench_policy
tests_bench_bench_policy_SOURCES = tests/bench/bench_policy.c
tests_bench_bench_policy_LDADD = $(POLICY_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)
bench: tests/bench/bench_policy
	tests/bench/bench_policy
