# aisb-run.exe, the Windows runner (docs/windows.md).  Its pure logic is a
# library built on both hosts: on Linux for the unit tests
# (tests/unit/test_winrun), with mingw-w64 for the runner.  The Win32 calls
# are in the *_win32.c files, built only for a Windows host.
noinst_LIBRARIES += launcher/win32/libaisbwinrun.a
launcher_win32_libaisbwinrun_a_SOURCES = launcher/win32/winrun.h \
	launcher/win32/opts.c launcher/win32/cmdline.c \
	launcher/win32/envblock.c launcher/win32/handles.c \
	launcher/win32/ids.c launcher/win32/doc.c launcher/win32/clean.c \
	launcher/win32/net.c launcher/win32/selfrec.c \
	launcher/win32/drive.c
# the one JSON string reader (doc.c) and its hex digits, libc only
launcher_win32_libaisbwinrun_a_SOURCES += common/json.c common/json.h \
	common/hex.c common/hex.h
launcher_win32_libaisbwinrun_a_CPPFLAGS = $(LAUNCHER_CPPFLAGS)

# aisb.exe's pure logic (wlaunch.h: options, paths, the runner's argv, the
# exit code, the record), built on both hosts like the runner's.
noinst_LIBRARIES += launcher/win32/libaisbwlaunch.a
launcher_win32_libaisbwlaunch_a_SOURCES = launcher/win32/wlaunch.h \
	launcher/win32/wlaunch.c
launcher_win32_libaisbwlaunch_a_CPPFLAGS = $(LAUNCHER_CPPFLAGS)

if HOST_WIN32
bin_PROGRAMS += aisb-run
aisb_run_SOURCES = launcher/win32/main_win32.c launcher/win32/run_win32.c \
	launcher/win32/appc_win32.c launcher/win32/selftest_win32.c \
	launcher/win32/clean_win32.c launcher/win32/util_win32.c \
	launcher/win32/ident_win32.c launcher/win32/selfrec_win32.c \
	launcher/win32/drive_win32.c launcher/win32/win32.h
aisb_run_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
# the snapshot core for its SHA-256 (snap/hash_win32.c): the self-test's
# identity (ident_win32.c, selfrec_win32.c)
aisb_run_LDADD = launcher/win32/libaisbwinrun.a \
	launcher/win32/libaisbsnapwin.a $(WIN32_LIBS)
# a small program the wine tests run inside the job (tests/win/wine.sh)
noinst_PROGRAMS += tests/win/winchild
tests_win_winchild_SOURCES = tests/win/winchild.c
tests_win_winchild_LDADD = -lws2_32
# aisb.exe, the Windows launcher (docs/windows.md, "aisb on Windows"):
# the draft (launcher/draft/, shared with Linux) over the snapshot core,
# the runner's pure logic for its argv and result
bin_PROGRAMS += aisb
aisb_SOURCES = launcher/win32/aisb_win32.c launcher/win32/draft_win32.c \
	launcher/win32/util_win32.c launcher/win32/ident_win32.c \
	launcher/win32/selfrec_win32.c launcher/win32/win32.h
# the build manifest (docs/windows.md, "Identity"): aisb.exe runs only the
# aisb-run.exe whose SHA-256 it names
all-local: aisb-manifest.txt
aisb-manifest.txt: aisb-run$(EXEEXT) aisb$(EXEEXT) \
    $(top_srcdir)/launcher/win32/manifest.sh
	$(SHELL) $(top_srcdir)/launcher/win32/manifest.sh "$(CC)" \
	    aisb-run$(EXEEXT) aisb$(EXEEXT) >$@.tmp && mv $@.tmp $@
CLEANFILES += aisb-manifest.txt
aisb_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
# set here too: the Linux aisb's aisb_CFLAGS (launcher/local.mk) would
# leave this condition with none, and the warnings off
aisb_CFLAGS = $(AM_CFLAGS)
aisb_LDADD = launcher/win32/libaisbdraftwin.a \
	launcher/win32/libaisbwlaunch.a launcher/win32/libaisbwinrun.a \
	launcher/win32/libaisbsnapwin.a $(WIN32_LIBS)
# launcher/draft/ as the snapshot core is built for Windows (below)
noinst_LIBRARIES += launcher/win32/libaisbdraftwin.a
launcher_win32_libaisbdraftwin_a_SOURCES = launcher/draft/draft.c \
	launcher/draft/draft.h launcher/draft/draft-int.h \
	launcher/draft/stage.c launcher/draft/draft_ask.c \
	launcher/draft/undo.c launcher/draft/persist.c
launcher_win32_libaisbdraftwin_a_CPPFLAGS = $(LAUNCHER_CPPFLAGS) \
	-include $(top_srcdir)/common/compat.h
launcher_win32_libaisbdraftwin_a_CFLAGS = $(AM_CFLAGS) -Wno-format
else
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test_wlaunch
TESTS += tests/unit/test_wlaunch
tests_unit_test_wlaunch_SOURCES = tests/unit/test_wlaunch.c
tests_unit_test_wlaunch_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_unit_test_wlaunch_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_wlaunch_LDADD = launcher/win32/libaisbwlaunch.a \
	launcher/win32/libaisbwinrun.a $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_winrun
TESTS += tests/unit/test_winrun
tests_unit_test_winrun_SOURCES = tests/unit/test_winrun.c
tests_unit_test_winrun_CPPFLAGS = $(LAUNCHER_CPPFLAGS)
tests_unit_test_winrun_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_winrun_LDADD = launcher/win32/libaisbwinrun.a $(CMOCKA_LIBS)
endif
endif
EXTRA_DIST += tests/win/wine.sh launcher/win32/manifest.sh

# The snapshot core (snap/, docs/snapshot.md) cross-built for Windows, for
# the runner's writeback: its portable files, with snap/fs_win32.c and
# snap/hash_win32.c (BCrypt SHA-256) in place of fs_posix.c and hash.c.
# common/compat.h brings memmem and explicit_bzero, which mingw-w64 lacks; the
# format checks are off here only (mingw's printf archetype is Microsoft's
# for the files' own format attributes; the Linux build checks them).
if HOST_WIN32
noinst_LIBRARIES += launcher/win32/libaisbsnapwin.a
launcher_win32_libaisbsnapwin_a_SOURCES = snap/snap.h snap/snap-int.h \
	snap/snap-test.h snap/fs.h snap/util.c snap/rules.c snap/manifest.c \
	snap/stage.c snap/changes.c snap/compare.c snap/print.c snap/tx.c \
	snap/tx-int.h snap/journal.c snap/recover.c snap/undo.c snap/source.c \
	snap/autorun.c snap/git.c snap/gitcfg.c snap/gitsyntax.c snap/gitkeys.c \
	common/buf.c \
	common/buf.h common/hex.c common/hex.h snap/fs_win32.c \
	snap/hash_win32.c \
	common/compat_win32.c common/compat.h
launcher_win32_libaisbsnapwin_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-include $(top_srcdir)/common/compat.h
launcher_win32_libaisbsnapwin_a_CFLAGS = $(AM_CFLAGS) -Wno-format
# the core on Windows, run under Wine by tests/win/wine.sh
noinst_PROGRAMS += tests/win/snapsmoke
tests_win_snapsmoke_SOURCES = tests/win/snapsmoke.c
tests_win_snapsmoke_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/snap
tests_win_snapsmoke_LDADD = launcher/win32/libaisbsnapwin.a -lbcrypt
endif
