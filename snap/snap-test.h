/*
 * Tests only: a simulated crash inside the transaction code (tx.c,
 * recover.c; the hook is journal.c's).  The code passes numbered crash
 * points (after every journal record, every backup, every half of a
 * step, every undo); snap_test_crash_after(n) makes the n-th point from
 * now return SNAP_ECRASH at once, writing nothing more, as if the process
 * had died there.  No program of aisb calls these: they are not in
 * snap.h.
 */
#ifndef AISB_SNAP_TEST_H
#define AISB_SNAP_TEST_H

/* 0 disarms. */
void		snap_test_crash_after(unsigned n);
/* Crash points passed since the last snap_test_crash_after(). */
unsigned	snap_test_crash_points(void);

/*
 * At the n-th crash point from now, fn(arg) is called and the code goes
 * on (no crash): a test changes the host tree there, as a racing process
 * would.  n 0 disarms.  Transactions (tx.c, recover.c) only.
 */
void		snap_test_hook_at(unsigned n, void (*fn)(void *), void *arg);

/*
 * Staging (stage.c) calls fn(arg, rel) before it looks at each entry rel
 * of the source: a test swaps a folder for a link there.  NULL disarms.
 */
void		snap_test_stage_hook(void (*fn)(void *, const char *), void *arg);

/* POSIX (fs_posix.c): 1 makes every call walk a path component by
 * component, as on a kernel without openat2; 0 uses openat2 again. */
void		snap_test_fs_walk(int on);

/* POSIX (fs_posix.c): 1 makes snap_fs_exchange fail with ENOSYS, as on a
 * filesystem without RENAME_EXCHANGE and on Windows, so that the
 * write-back takes its other way (the old entry moved aside, checked,
 * then the new one renamed in); 0 undoes it. */
void		snap_test_fs_noexchange(int on);

#endif
