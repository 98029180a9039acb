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
	tests/integration/gate_metrics.sh \
	tests/integration/gate_privdrop.sh \
	tests/integration/gate_rotate.sh \
	tests/integration/gate_signals.sh \
	tests/integration/gate_splice.sh \
	tests/integration/gate_units.sh \
	tests/integration/gate_workers.sh
# --users: per-user policies
GATE_TESTS += tests/integration/gate_users.sh
# --ask: held requests answered over the control socket (issue 31)
GATE_TESTS += tests/integration/gate_ask.sh
TESTS += $(GATE_TESTS)
EXTRA_DIST += $(GATE_TESTS) tests/integration/gate_lib.sh \
	tests/integration/gate_dns.py tests/integration/gate_upstream.py
# AISB-DNS (issue 16): DNS answered from the policy over the proxy port
GATE_TESTS += tests/integration/gate_dnsstream.sh
EXTRA_DIST += tests/integration/gate_dnsstream.py
# --watch (a ConfigMap's symlink swap), /healthz and /readyz, --audit -
# (issue 32: the gate in a Kubernetes pod)
GATE_TESTS += tests/integration/gate_watch.sh
# --record (recgate)
GATE_TESTS += tests/integration/gate_record.sh
EXTRA_DIST += tests/integration/gate_record_server.py \
	tests/integration/record_lib.sh

# aisb-gate with libevent failures injected at link time (gate_faults.sh).
# --wrap rewrites the undefined references of every object linked, the
# library's members pulled in included: libevent is never called directly.
if ENABLE_TESTS
check_PROGRAMS += tests/integration/gate_fault
tests_integration_gate_fault_SOURCES = gate/main.c \
	tests/integration/gate_fault.c
tests_integration_gate_fault_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_integration_gate_fault_CFLAGS = $(GATE_CFLAGS)
tests_integration_gate_fault_LDFLAGS = -Wl,--wrap=event_add \
	-Wl,--wrap=bufferevent_write
tests_integration_gate_fault_LDADD = $(GATE_LIBS)
endif

# The gate's pure parts (parser, chunked framing, JSON, credentials), unit tested.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_gate_http
TESTS += tests/unit/test_gate_http
tests_unit_test_gate_http_SOURCES = tests/unit/test_gate_http.c
tests_unit_test_gate_http_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_unit_test_gate_http_CFLAGS = $(GATE_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gate_http_LDADD = $(GATE_LIBS) $(CMOCKA_LIBS)
endif

# issue 29: inspected hosts: secrets file, heads with secrets, responses, CA
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_gate_inspect
TESTS += tests/unit/test_gate_inspect
tests_unit_test_gate_inspect_SOURCES = tests/unit/test_gate_inspect.c
tests_unit_test_gate_inspect_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_unit_test_gate_inspect_CFLAGS = $(GATE_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gate_inspect_LDADD = $(GATE_LIBS) $(CMOCKA_LIBS)
endif
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gate_inspect
tests_fuzz_fuzz_gate_inspect_SOURCES = tests/fuzz/fuzz_gate_inspect.c
tests_fuzz_fuzz_gate_inspect_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_inspect_CFLAGS = $(GATE_CFLAGS)
tests_fuzz_fuzz_gate_inspect_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_inspect_LDADD = $(GATE_LIBS)
endif
GATE_TESTS += tests/integration/gate_inspect.sh
EXTRA_DIST += tests/integration/gate_inspect_server.py \
	tests/integration/gate_inspect_client.py \
	tests/integration/https_upstream.py
# kept upstream legs of inspected hosts (conn/inspect.c's pool)
GATE_TESTS += tests/integration/gate_inspect_pool.sh
EXTRA_DIST += tests/integration/gate_pool_server.py

# --users: the users file parser and the credential check (gate/users.c)
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_gate_users
TESTS += tests/unit/test_gate_users
tests_unit_test_gate_users_SOURCES = tests/unit/test_gate_users.c
tests_unit_test_gate_users_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_unit_test_gate_users_CFLAGS = $(GATE_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gate_users_LDADD = $(GATE_LIBS) $(CMOCKA_LIBS)
endif
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gate_users
tests_fuzz_fuzz_gate_users_SOURCES = tests/fuzz/fuzz_gate_users.c
tests_fuzz_fuzz_gate_users_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_users_CFLAGS = $(GATE_CFLAGS)
tests_fuzz_fuzz_gate_users_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_users_LDADD = $(GATE_LIBS)
# make fuzz and fuzz-long (tests/fuzz/local.mk) run it too
endif

# libFuzzer harness for the request parser (./configure --enable-fuzz CC=clang);
# make fuzz runs it: "gate_http" is in FUZZ_HARNESSES (tests/fuzz/local.mk).
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gate_http
tests_fuzz_fuzz_gate_http_SOURCES = tests/fuzz/fuzz_gate_http.c
tests_fuzz_fuzz_gate_http_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_http_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_http_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_http_LDADD = $(GATE_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_gate_tls tests/fuzz/fuzz_gate_ctl
tests_fuzz_fuzz_gate_tls_SOURCES = tests/fuzz/fuzz_gate_tls.c
tests_fuzz_fuzz_gate_tls_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_tls_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_tls_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_tls_LDADD = $(GATE_LIBS)
tests_fuzz_fuzz_gate_ctl_SOURCES = tests/fuzz/fuzz_gate_ctl.c
tests_fuzz_fuzz_gate_ctl_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_ctl_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_ctl_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_ctl_LDADD = $(GATE_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_gate_auth
tests_fuzz_fuzz_gate_auth_SOURCES = tests/fuzz/fuzz_gate_auth.c
tests_fuzz_fuzz_gate_auth_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_auth_CFLAGS = $(GATE_CFLAGS)
tests_fuzz_fuzz_gate_auth_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_auth_LDADD = $(GATE_LIBS)
# the whole connection state machine: the gate library, all but main()
noinst_PROGRAMS += tests/fuzz/fuzz_gate_conn
tests_fuzz_fuzz_gate_conn_SOURCES = tests/fuzz/fuzz_gate_conn.c
tests_fuzz_fuzz_gate_conn_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_conn_CFLAGS = $(GATE_CFLAGS)
tests_fuzz_fuzz_gate_conn_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_conn_LDADD = $(GATE_LIBS)
endif
# AISB-TRANSPARENT: a relay's captured stream, named by SNI or Host (tgate)
GATE_TESTS += tests/integration/gate_transparent.sh
EXTRA_DIST += tests/integration/gate_transparent.py
# --learn: learning mode and aisb policy suggest over its log (learn)
GATE_TESTS += tests/integration/gate_learn.sh
# issue 31: any TCP port of a synthetic address, by the name it was given for
GATE_TESTS += tests/integration/gate_anyport.sh
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_gate_synth
TESTS += tests/unit/test_gate_synth
tests_unit_test_gate_synth_SOURCES = tests/unit/test_gate_synth.c
tests_unit_test_gate_synth_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_unit_test_gate_synth_CFLAGS = $(GATE_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gate_synth_LDADD = $(GATE_LIBS) $(CMOCKA_LIBS)
endif
# SOCKS5 on the listener: curl, PySocks and a byte-by-byte client
GATE_TESTS += tests/integration/gate_socks.sh
EXTRA_DIST += tests/integration/gate_socks.py
# SOCKS5's messages (gate/socksmsg.c): make fuzz runs it ("gate_socks" in
# FUZZ_HARNESSES)
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_gate_socks
tests_fuzz_fuzz_gate_socks_SOURCES = tests/fuzz/fuzz_gate_socks.c
tests_fuzz_fuzz_gate_socks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/gate
tests_fuzz_fuzz_gate_socks_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_gate_socks_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gate_socks_LDADD = $(GATE_LIBS)
endif
