# aisb image and doctor.  The unit test covers the Containerfile generator
# and launch_exec(); the e2e test builds the offline base with mmdebstrap
# in a podman store of its own (needs root, mmdebstrap and AISB_E2E=1;
# skips with 77 otherwise): 2 to 3 minutes on 2 cores, twice that with
# AISB_E2E_FULL=1, which also builds a second base for a changed install
# list.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_image
TESTS += tests/unit/test_image
tests_unit_test_image_SOURCES = tests/unit/test_image.c
tests_unit_test_image_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(CRYPTO_CFLAGS) -I$(top_srcdir)/launcher
tests_unit_test_image_LDADD = $(LAUNCHER_LIBS) $(CMOCKA_LIBS)
endif

TESTS += tests/e2e/image.sh
EXTRA_DIST += tests/e2e/image.sh
