# aisb image and doctor.  The unit tests cover the Containerfile generator,
# launch_exec() and the host CA gathering; the e2e test builds the offline
# base with mmdebstrap in a podman store of its own, then a package set
# layered on it (needs root, mmdebstrap and AISB_E2E=1; skips with 77
# otherwise): about two minutes on 2 cores.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_image
TESTS += tests/unit/test_image
tests_unit_test_image_SOURCES = tests/unit/test_image.c tests/unit/tmpdir.h
tests_unit_test_image_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_unit_test_image_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_test_image_LDADD = $(LAUNCHER_LIBS) $(CMOCKA_LIBS)
# The enforcer a session mounts: its ELF program headers read bounded,
# a dynamic one (PT_INTERP) refused, its mode.
check_PROGRAMS += tests/unit/test_elf
TESTS += tests/unit/test_elf
tests_unit_test_elf_SOURCES = tests/unit/test_elf.c tests/unit/tmpdir.h
tests_unit_test_elf_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_unit_test_elf_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_elf_LDADD = $(LAUNCHER_LIBS) $(CMOCKA_LIBS)
# The host's local CAs: gathered from files, bounded, keys never copied.
check_PROGRAMS += tests/unit/test_hostca
TESTS += tests/unit/test_hostca
tests_unit_test_hostca_SOURCES = tests/unit/test_hostca.c
tests_unit_test_hostca_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_unit_test_hostca_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_test_hostca_LDADD = $(LAUNCHER_LIBS) $(CMOCKA_LIBS)
endif

EXTRA_DIST += tests/e2e/image.sh
# A hostile base image (an ld.so.preload library that deletes the
# firewall, USER, ENV, HEALTHCHECK, ONBUILD) by every route, root and
# rootless: the host's enforcer, the table intact, no network in its
# build (root, podman, cc, AISB_E2E=1; 77 otherwise).
EXTRA_DIST += tests/e2e/hostile_image.sh tests/e2e/evil_preload.c
# apt as the sandbox user against a repository the test serves; the
# host's local CAs trusted inside (root, AISB_E2E=1; 77 otherwise).
EXTRA_DIST += tests/e2e/apt.sh tests/e2e/hostca.sh
# npm tools installed into a layer by a gated session, from the registry
# the host's npm names (root, npm, AISB_E2E=1; 77 otherwise).
EXTRA_DIST += tests/e2e/npm.sh
# pip tools the same way, from an index the test serves on the loopback
# (root, AISB_E2E=1; 77 otherwise).
EXTRA_DIST += tests/e2e/pip.sh
