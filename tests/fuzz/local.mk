# libFuzzer harnesses: ./configure --enable-fuzz CC=clang, then
# `make fuzz` runs each for FUZZ_SECONDS and fails on a crash or a leak.
# FUZZ_HARNESSES is the one list: `make fuzz`, `make fuzz-long` and CI
# (tests/run.sh) run these; each has its seeds in tests/fuzz/corpus/NAME.
FUZZ_HARNESSES = policy target plan gate_http gate_tls gate_ctl gate_conn \
	gate_auth gate_users stub envfile denials record dnsmsg suggest lockfile \
	json gitcfg gate_inspect gate_socks ask
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
tests_fuzz_fuzz_denials_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_fuzz_fuzz_denials_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_denials_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_denials_LDADD = $(LAUNCHER_LIBS)
# held requests: the gate's JSON, the rule written into a policy's text
noinst_PROGRAMS += tests/fuzz/fuzz_ask
tests_fuzz_fuzz_ask_SOURCES = tests/fuzz/fuzz_ask.c
tests_fuzz_fuzz_ask_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_fuzz_fuzz_ask_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_ask_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_ask_LDADD = $(LAUNCHER_LIBS)
FUZZ_SECONDS ?= 60
# Each harness for FUZZ_RUNS executions (10^7: tens of minutes on two
# cores); prints the executions and the corpus each grew to.
FUZZ_RUNS ?= 10000000
# How many harnesses run at once (each is one process).
FUZZ_JOBS ?= 2
fuzz-build: $(FUZZ_HARNESSES:%=tests/fuzz/fuzz_%)
fuzz: fuzz-build
	FUZZ_JOBS=$(FUZZ_JOBS) $(SHELL) $(top_srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) \
	    $(top_srcdir)/tests/fuzz/corpus tests/fuzz $(FUZZ_HARNESSES)
fuzz-long: fuzz-build
	FUZZ_JOBS=$(FUZZ_JOBS) $(SHELL) $(top_srcdir)/tests/fuzz/run.sh runs:$(FUZZ_RUNS) \
	    $(top_srcdir)/tests/fuzz/corpus tests/fuzz $(FUZZ_HARNESSES)
else
fuzz fuzz-long fuzz-build:
	@echo "fuzzing needs: ./configure --enable-fuzz CC=clang" >&2; exit 1
endif
# --record: the pcapng reader and the stream hashing on any capture
# (in make fuzz with the others; make fuzz-record alone)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_record
tests_fuzz_fuzz_record_SOURCES = tests/fuzz/fuzz_record.c
tests_fuzz_fuzz_record_CPPFLAGS = $(LAUNCHER_CPPFLAGS) \
	-I$(top_srcdir)/common
tests_fuzz_fuzz_record_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_record_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_record_LDADD = $(LAUNCHER_LIBS)
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
endif
# JSON strings (common/json.c): both bounds, never a cut string
EXTRA_DIST += tests/fuzz/corpus/json
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_json
tests_fuzz_fuzz_json_SOURCES = tests/fuzz/fuzz_json.c
tests_fuzz_fuzz_json_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_json_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_json_LDADD = common/libaisbcommon.a
endif
# --learn: aisb policy suggest over any audit log (learn)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_suggest
tests_fuzz_fuzz_suggest_SOURCES = tests/fuzz/fuzz_suggest.c
tests_fuzz_fuzz_suggest_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_fuzz_fuzz_suggest_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_suggest_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_suggest_LDADD = $(LAUNCHER_LIBS)
fuzz-suggest: tests/fuzz/fuzz_suggest
	rm -rf tests/fuzz/suggest.work && mkdir -p tests/fuzz/suggest.work && \
	cp $(top_srcdir)/tests/fuzz/corpus/suggest/* tests/fuzz/suggest.work/ && \
	tests/fuzz/fuzz_suggest -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    -artifact_prefix=tests/fuzz/ tests/fuzz/suggest.work
endif
# lockfiles and tool configs (issue 19): every scanner of
# launcher/policytools/lockfile*.c, a format selector byte first (in make
# fuzz with the others)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_lockfile
tests_fuzz_fuzz_lockfile_SOURCES = tests/fuzz/fuzz_lockfile.c \
	launcher/policytools/lockfile.c launcher/policytools/lockfile_formats.c
tests_fuzz_fuzz_lockfile_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_fuzz_fuzz_lockfile_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_lockfile_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_lockfile_LDADD = $(POLICY_LIBS)
endif
# git's config syntax, the sanitized copy and the keys offered back
# (snap/gitsyntax.c, gitkeys.c; issue 27)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gitcfg
tests_fuzz_fuzz_gitcfg_SOURCES = tests/fuzz/fuzz_gitcfg.c
tests_fuzz_fuzz_gitcfg_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_gitcfg_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gitcfg_LDADD = $(SNAP_LIBS)
endif
