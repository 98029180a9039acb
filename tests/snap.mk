# snap/ (libaisbsnap): the stage, the change set, the printers; the
# transactions with a crash injected after every step, then recovered.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_snap tests/unit/test_snap_tx \
	tests/unit/test_snap_fs tests/unit/test_snap_guard \
	tests/unit/test_snap_race tests/unit/test_snap_gitcfg
TESTS += tests/unit/test_snap tests/unit/test_snap_tx tests/unit/test_snap_fs \
	tests/unit/test_snap_guard tests/unit/test_snap_race \
	tests/unit/test_snap_gitcfg
tests_unit_test_snap_SOURCES = tests/unit/test_snap.c tests/unit/snap_util.h tests/unit/snap_fx.h
tests_unit_test_snap_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
tests_unit_test_snap_tx_SOURCES = tests/unit/test_snap_tx.c \
	tests/unit/snap_util.h tests/unit/snap_fx.h
tests_unit_test_snap_tx_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_tx_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
# every fs.h call refuses a link on the way (openat2, and the walk)
tests_unit_test_snap_fs_SOURCES = tests/unit/test_snap_fs.c \
	tests/unit/snap_util.h tests/unit/snap_fx.h
tests_unit_test_snap_fs_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_fs_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
# what guards the write-back and the approval (issue 27)
tests_unit_test_snap_guard_SOURCES = tests/unit/test_snap_guard.c \
	tests/unit/snap_util.h tests/unit/snap_fx.h
tests_unit_test_snap_guard_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_guard_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
# another program writing the host while apply runs, at every point
tests_unit_test_snap_race_SOURCES = tests/unit/test_snap_race.c \
	tests/unit/snap_util.h
tests_unit_test_snap_race_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_race_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
# git's config syntax, the keys offered back, the sanitized copy
tests_unit_test_snap_gitcfg_SOURCES = tests/unit/test_snap_gitcfg.c
tests_unit_test_snap_gitcfg_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_snap_gitcfg_LDADD = $(SNAP_LIBS) $(CMOCKA_LIBS)
endif
