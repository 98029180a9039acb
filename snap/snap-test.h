/*
 * Tests only: a simulated crash inside the transaction code (tx.c).  The
 * code passes numbered crash points (after every journal record, every
 * backup, every half of a step, every undo); snap_test_crash_after(n)
 * makes the n-th point from now return SNAP_ECRASH at once, writing
 * nothing more, as if the process had died there.  No program of aisb
 * calls these: they are not in snap.h.
 */
#ifndef AISB_SNAP_TEST_H
#define AISB_SNAP_TEST_H

/* 0 disarms. */
void		snap_test_crash_after(unsigned n);
/* Crash points passed since the last snap_test_crash_after(). */
unsigned	snap_test_crash_points(void);

#endif
