/*
 * One allow rule written into a policy file as its author keeps it
 * (polyedit.c): aisb approve ID always.  The file is edited as text, never
 * re-serialized: one entry inserted into its allow list, in the list's own
 * indentation, every other byte as it was; the result is loaded and
 * decided by the policy library before it replaces the file, atomically.
 */
#ifndef AISB_POLICYTOOLS_POLYEDIT_H
#define AISB_POLICYTOOLS_POLYEDIT_H

#include <stddef.h>
#include <stdio.h>

#include "policy.h"

/*
 * text (len bytes, a policy file's) with an allow entry for exactly t's
 * host (a cidr: entry for an address) and port, under a comment line
 * holding note (one line, or NULL), into a new NUL-terminated *out
 * (*outlen bytes): inserted after the last entry of the top-level
 * "allow:" block list, at its items' indentation; "allow: []" becomes
 * the block with that one entry; a file without "allow:" gets one at
 * its end.  The line of the inserted entry (1-based) in *line.  0, or -1
 * with err (a flow-style list, "allow:" twice, no memory).
 */
int	 launch_policy_add_allow(const char *text, size_t len,
	    const struct policy_target *t, const char *note, char **out,
	    size_t *outlen, unsigned *line, char *err, size_t errlen);
/*
 * a and b as a unified diff (names aname, bname) with 3 lines of
 * context: the lines between their common first and last lines are one
 * hunk, which is exact for one insertion or one replaced run.
 */
void	 launch_diff_print(FILE *, const char *aname, const char *a,
	    size_t alen, const char *bname, const char *b, size_t blen);
/*
 * The whole edit of aisb approve ID always, on path: read (at most
 * POLICY_MAX_FILE_SIZE bytes), t's entry added, the result loaded by the
 * policy library and t decided allowed by it, the diff printed to diff,
 * then written in place of path (temporary beside it, fsync, rename(2),
 * path's mode kept).  On any error path is untouched.  0, or -1 with err
 * (a load error says file:line:col).
 */
int	 launch_policy_allow_write(const char *path,
	    const struct policy_target *t, const char *note, FILE *diff,
	    char *err, size_t errlen);

#endif
