# aisb-gate integration tests: real sockets in a network namespace of their
# own, a real DNS responder, real curl.  See tests/integration/gate_lib.sh.
GATE_TESTS = \
	tests/integration/gate_audit.sh \
	tests/integration/gate_basic.sh \
	tests/integration/gate_dns.sh \
	tests/integration/gate_faults.sh \
	tests/integration/gate_http.sh \
	tests/integration/gate_lines.sh \
	tests/integration/gate_load.sh \
	tests/integration/gate_privdrop.sh \
	tests/integration/gate_signals.sh \
	tests/integration/gate_splice.sh \
	tests/integration/gate_workers.sh
TESTS += $(GATE_TESTS)
EXTRA_DIST += $(GATE_TESTS) tests/integration/gate_lib.sh \
	tests/integration/gate_dns.py tests/integration/gate_upstream.py
# --record (recgate)
GATE_TESTS += tests/integration/gate_record.sh
EXTRA_DIST += tests/integration/gate_record_server.py

# aisb-gate with libevent failures injected at link time (gate_faults.sh).
if ENABLE_TESTS
check_PROGRAMS += tests/integration/gate_fault
tests_integration_gate_fault_SOURCES = $(aisb_gate_SOURCES) \
	tests/integration/gate_fault.c
tests_integration_gate_fault_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_integration_gate_fault_CFLAGS = $(aisb_gate_CFLAGS)
tests_integration_gate_fault_LDFLAGS = -Wl,--wrap=event_add \
	-Wl,--wrap=bufferevent_write
tests_integration_gate_fault_LDADD = $(aisb_gate_LDADD)
endif

# The gate's pure parts (parser, chunked framing, JSON, credentials), unit tested.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_gate_http
TESTS += tests/unit/test_gate_http
tests_unit_test_gate_http_SOURCES = tests/unit/test_gate_http.c \
	gate/http.c gate/tls.c gate/audit.c gate/auth.c gate/ctlcmd.c
tests_unit_test_gate_http_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_unit_test_gate_http_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(CRYPTO_CFLAGS) \
	$(LIBEVENT_CFLAGS)
tests_unit_test_gate_http_LDADD = common/libaisbcommon.a $(CMOCKA_LIBS) $(CRYPTO_LIBS) \
	$(LIBEVENT_LIBS)
endif

# libFuzzer harness for the request parser (./configure --enable-fuzz CC=clang);
# tests/fuzz/run.sh runs it when "gate_http" is in its list.
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gate_http
tests_fuzz_fuzz_gate_http_SOURCES = tests/fuzz/fuzz_gate_http.c gate/http.c \
	gate/tls.c
tests_fuzz_fuzz_gate_http_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_http_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_http_LDFLAGS = -fsanitize=fuzzer
noinst_PROGRAMS += tests/fuzz/fuzz_gate_tls tests/fuzz/fuzz_gate_ctl
tests_fuzz_fuzz_gate_tls_SOURCES = tests/fuzz/fuzz_gate_tls.c gate/tls.c
tests_fuzz_fuzz_gate_tls_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_tls_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_tls_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_ctl_SOURCES = tests/fuzz/fuzz_gate_ctl.c gate/ctlcmd.c
tests_fuzz_fuzz_gate_ctl_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_ctl_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_ctl_LDFLAGS = -fsanitize=fuzzer
noinst_PROGRAMS += tests/fuzz/fuzz_gate_auth
tests_fuzz_fuzz_gate_auth_SOURCES = tests/fuzz/fuzz_gate_auth.c gate/auth.c
tests_fuzz_fuzz_gate_auth_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_auth_CFLAGS = $(aisb_gate_CFLAGS)
tests_fuzz_fuzz_gate_auth_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_auth_LDADD = $(aisb_gate_LDADD)
# the whole connection state machine: the gate's sources but for main()
noinst_PROGRAMS += tests/fuzz/fuzz_gate_conn
tests_fuzz_fuzz_gate_conn_SOURCES = tests/fuzz/fuzz_gate_conn.c \
	$(GATE_SOURCES)
tests_fuzz_fuzz_gate_conn_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_conn_CFLAGS = $(aisb_gate_CFLAGS)
tests_fuzz_fuzz_gate_conn_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_conn_LDADD = $(aisb_gate_LDADD)
endif
