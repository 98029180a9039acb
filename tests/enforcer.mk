# aisb-enforce: cmocka unit tests (plan parser, batch builder) and the
# network-namespace integration test (needs root; skips with 77 otherwise).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_plan tests/unit/test_nft_batch \
	tests/unit/test_nft_send tests/unit/test_privdrop tests/unit/test_stub \
	tests/unit/test_envfile
TESTS += tests/unit/test_plan tests/unit/test_nft_batch \
	tests/unit/test_nft_send tests/unit/test_privdrop tests/unit/test_stub \
	tests/unit/test_envfile
# enforcer/mnl.c: the netlink layer of the static enforcer, against the
# kernel too (an unprivileged NETLINK_ROUTE dump)
check_PROGRAMS += tests/unit/test_mnl
TESTS += tests/unit/test_mnl
tests_unit_test_mnl_SOURCES = tests/unit/test_mnl.c
tests_unit_test_mnl_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(NFTNL_CFLAGS)
tests_unit_test_mnl_LDADD = enforcer/libaisbmnl.a $(CMOCKA_LIBS)
# issue 16: the relay's pure parts (enforcer/tproxy_head.c)
check_PROGRAMS += tests/unit/test_tproxy
TESTS += tests/unit/test_tproxy
tests_unit_test_tproxy_SOURCES = tests/unit/test_tproxy.c
tests_unit_test_tproxy_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_tproxy_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
tests_unit_test_plan_SOURCES = tests/unit/test_plan.c
tests_unit_test_plan_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_plan_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
tests_unit_test_envfile_SOURCES = tests/unit/test_envfile.c
tests_unit_test_envfile_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_envfile_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
tests_unit_test_stub_SOURCES = tests/unit/test_stub.c
tests_unit_test_stub_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_stub_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
tests_unit_test_nft_batch_SOURCES = tests/unit/test_nft_batch.c
tests_unit_test_nft_batch_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(NFTNL_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_nft_batch_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
# The kernel side of the netlink socket is faked: see the test's header.
tests_unit_test_nft_send_SOURCES = tests/unit/test_nft_send.c
tests_unit_test_nft_send_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(NFTNL_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_nft_send_LDFLAGS = \
	-Wl,--wrap=mnl_socket_open -Wl,--wrap=mnl_socket_bind \
	-Wl,--wrap=mnl_socket_setsockopt -Wl,--wrap=mnl_socket_get_fd \
	-Wl,--wrap=mnl_socket_get_portid -Wl,--wrap=mnl_socket_sendto \
	-Wl,--wrap=mnl_socket_recvfrom -Wl,--wrap=mnl_socket_close \
	-Wl,--wrap=setsockopt
tests_unit_test_nft_send_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
# The credentials are a model in the test: see its header.
tests_unit_test_privdrop_SOURCES = tests/unit/test_privdrop.c
tests_unit_test_privdrop_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/enforcer
tests_unit_test_privdrop_LDFLAGS = \
	-Wl,--wrap=prctl -Wl,--wrap=syscall -Wl,--wrap=setgroups \
	-Wl,--wrap=setresuid -Wl,--wrap=setresgid -Wl,--wrap=getresuid \
	-Wl,--wrap=getresgid -Wl,--wrap=setuid -Wl,--wrap=setgid
tests_unit_test_privdrop_LDADD = $(ENFORCE_LIBS) $(CMOCKA_LIBS)
endif

check_PROGRAMS += tests/integration/enforce_probe
tests_integration_enforce_probe_SOURCES = tests/integration/enforce_probe.c

EXTRA_DIST += tests/integration/enforce_netns.sh tests/integration/enforce_peer.py \
	tests/integration/enforce_lib.sh

# issue 16: transparent capture, the relay and the real gate in namespaces.
TESTS += tests/integration/enforce_transparent.sh
EXTRA_DIST += tests/integration/enforce_transparent.sh \
	tests/integration/ssh_fixture.sh

# Nothing of the image reaches the enforcer: a hostile root folder
# (ld.so.preload, NSS, resolver files, LD_* and the like), strace.
TESTS += tests/integration/enforce_image.sh
EXTRA_DIST += tests/integration/enforce_image.sh

# --init: the init container of a Kubernetes pod, its table alone
# (gate-uid, serve, the refusals), in namespaces (issue 32).
TESTS += tests/integration/enforce_init.sh
EXTRA_DIST += tests/integration/enforce_init.sh

# Direct mode's recorder: NFLOG to pcapng, read back with tshark.
TESTS += tests/integration/enforce_record.sh
EXTRA_DIST += tests/integration/enforce_record.sh

# Loads and reads back the table on its own, for the tampering checks.
check_PROGRAMS += tests/integration/enforce_verify
tests_integration_enforce_verify_SOURCES = tests/integration/enforce_verify.c
tests_integration_enforce_verify_CFLAGS = $(AM_CFLAGS) $(NFTNL_CFLAGS) -I$(top_srcdir)/enforcer
tests_integration_enforce_verify_LDADD = $(ENFORCE_LIBS)

# libFuzzer harnesses of the plan parser, the DNS stub and the env file
# (make fuzz runs those: FUZZ_HARNESSES in tests/fuzz/local.mk).
EXTRA_DIST += tests/fuzz/corpus/plan tests/fuzz/corpus/stub \
	tests/fuzz/corpus/envfile
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_plan tests/fuzz/fuzz_stub \
	tests/fuzz/fuzz_envfile
tests_fuzz_fuzz_envfile_SOURCES = tests/fuzz/fuzz_envfile.c
tests_fuzz_fuzz_envfile_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/enforcer
tests_fuzz_fuzz_envfile_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_envfile_LDADD = $(ENFORCE_LIBS)
tests_fuzz_fuzz_stub_SOURCES = tests/fuzz/fuzz_stub.c
tests_fuzz_fuzz_stub_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/enforcer
tests_fuzz_fuzz_stub_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_stub_LDADD = $(ENFORCE_LIBS)
tests_fuzz_fuzz_plan_SOURCES = tests/fuzz/fuzz_plan.c
tests_fuzz_fuzz_plan_CFLAGS = $(AM_CFLAGS) $(NFTNL_CFLAGS) -I$(top_srcdir)/enforcer
tests_fuzz_fuzz_plan_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_plan_LDADD = $(ENFORCE_LIBS)
endif

# --net direct in real podman sessions, rootful and rootless, and the
# supervisors out of the command's reach in every mode (AISB_E2E=1 only).
EXTRA_DIST += tests/e2e/direct.sh
