# libFuzzer harnesses: ./configure --enable-fuzz CC=clang, then
# `make fuzz` runs each for FUZZ_SECONDS and fails on a crash or a leak.
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/run.sh
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_policy tests/fuzz/fuzz_target
FUZZ_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_policy_SOURCES = tests/fuzz/fuzz_policy.c
tests_fuzz_fuzz_policy_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_policy_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_policy_LDADD = $(POLICY_LIBS)
tests_fuzz_fuzz_target_SOURCES = tests/fuzz/fuzz_target.c
tests_fuzz_fuzz_target_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_target_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_target_LDADD = $(POLICY_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_denials
tests_fuzz_fuzz_denials_SOURCES = tests/fuzz/fuzz_denials.c
tests_fuzz_fuzz_denials_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/launcher
tests_fuzz_fuzz_denials_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_denials_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_denials_LDADD = $(LAUNCHER_LIBS)
FUZZ_SECONDS ?= 60
fuzz: tests/fuzz/fuzz_policy tests/fuzz/fuzz_target tests/fuzz/fuzz_plan \
	    tests/fuzz/fuzz_gate_http tests/fuzz/fuzz_stub tests/fuzz/fuzz_envfile \
	    tests/fuzz/fuzz_gate_tls tests/fuzz/fuzz_gate_ctl tests/fuzz/fuzz_gate_conn \
	    tests/fuzz/fuzz_gate_auth tests/fuzz/fuzz_denials
	$(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(top_srcdir)/tests/fuzz/corpus tests/fuzz
# Each harness for FUZZ_RUNS executions (10^7: tens of minutes on two
# cores); prints the executions and the corpus each grew to.
FUZZ_RUNS ?= 10000000
fuzz-long: tests/fuzz/fuzz_policy tests/fuzz/fuzz_target tests/fuzz/fuzz_plan \
	    tests/fuzz/fuzz_gate_http tests/fuzz/fuzz_stub tests/fuzz/fuzz_envfile \
	    tests/fuzz/fuzz_gate_tls tests/fuzz/fuzz_gate_ctl tests/fuzz/fuzz_gate_conn \
	    tests/fuzz/fuzz_gate_auth tests/fuzz/fuzz_denials
	$(SHELL) $(top_srcdir)/tests/fuzz/run.sh runs:$(FUZZ_RUNS) $(top_srcdir)/tests/fuzz/corpus tests/fuzz
else
fuzz fuzz-long:
	@echo "fuzzing needs: ./configure --enable-fuzz CC=clang" >&2; exit 1
endif
# --record: the pcapng reader and the stream hashing on any capture
# (in make fuzz with the others; make fuzz-record alone)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_record
tests_fuzz_fuzz_record_SOURCES = tests/fuzz/fuzz_record.c
tests_fuzz_fuzz_record_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/launcher \
	-I$(top_srcdir)/common
tests_fuzz_fuzz_record_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_record_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_record_LDADD = $(LAUNCHER_LIBS)
fuzz fuzz-long: tests/fuzz/fuzz_record
fuzz-record: tests/fuzz/fuzz_record
	rm -rf tests/fuzz/record.work && mkdir -p tests/fuzz/record.work && \
	cp $(top_srcdir)/tests/fuzz/corpus/record/* tests/fuzz/record.work/ && \
	tests/fuzz/fuzz_record -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    -artifact_prefix=tests/fuzz/ tests/fuzz/record.work
endif
# DNS messages (common/dnsmsg.c, issue 16): parse, answer, truncate
EXTRA_DIST += tests/fuzz/corpus/dnsmsg
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_dnsmsg
tests_fuzz_fuzz_dnsmsg_SOURCES = tests/fuzz/fuzz_dnsmsg.c
tests_fuzz_fuzz_dnsmsg_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_dnsmsg_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_dnsmsg_LDADD = common/libaisbcommon.a
fuzz fuzz-long: tests/fuzz/fuzz_dnsmsg
endif
