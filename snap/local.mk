# libaisbsnap: snapshot sessions (issue 17): the stage, the change set,
# transactions.  Portable C; every OS call in snap/fs_posix.c behind
# snap/fs.h.  Hashing is libcrypto's SHA-256, as elsewhere in aisb.
noinst_LIBRARIES += snap/libaisbsnap.a
snap_libaisbsnap_a_SOURCES = snap/snap.h snap/snap-int.h snap/snap-test.h \
	snap/fs.h snap/fs-posix.h snap/fs_posix.c snap/fs_reader.c snap/util.c \
	snap/hash.c snap/rules.c snap/manifest.c snap/stage.c snap/changes.c \
	snap/compare.c snap/print.c snap/tx.c snap/tx-int.h snap/journal.c \
	snap/recover.c snap/undo.c snap/source.c snap/autorun.c snap/git.c \
	snap/gitcfg.c snap/gitsyntax.c snap/gitkeys.c
snap_libaisbsnap_a_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
# What a program linking libaisbsnap.a adds.
SNAP_LIBS = snap/libaisbsnap.a common/libaisbcommon.a $(CRYPTO_LIBS)
