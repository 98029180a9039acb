/*
 * Retention's side of a session's draft (draft.h, draft_retire): whether
 * a session folder may go, decided under the draft's lock so that no
 * apply, undo or recover starts on it meanwhile, and the folder removed
 * with that lock held.  A draft that waits for approval, or a
 * transaction that is not settled, keeps its folder; so does a state
 * file that cannot be read (fail closed: it may be either).
 *
 * A persistent draft's folder is never retention's (it waits for aisb
 * draft commit or discard), but the transactions of its commits are:
 * each tx/N keeps the backups and new contents of a commit, and nothing
 * reads them once settled (a draft has no undo; recover needs only the
 * last one, while it is not settled).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "draft/draft-int.h"

/* the states in which nothing waits and nothing is half done */
static const char *const settled[] = { DRAFT_FAILED, DRAFT_UNCHANGED,
    DRAFT_APPLIED, DRAFT_DISCARDED, DRAFT_UNDONE, NULL };

/* Why st keeps its folder, or NULL. */
static const char *
keeps(const struct dstate *st)
{
	size_t	 i;

	if (dstate_is(st, DRAFT_KEPT) || dstate_is(st, DRAFT_CONFLICT))
		return "its draft waits for aisb apply or discard";
	if (dstate_is(st, DRAFT_STAGED))
		return "it is staged (its launcher may run; aisb clean "
		    "settles a killed one's)";
	for (i = 0; settled[i] != NULL; i++)
		if (dstate_is(st, settled[i]))
			return NULL;
	return "its transaction is not settled (aisb recover ID)";
}

int
draft_retire(const char *sdir, const char **why)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128];
	intptr_t	 lock = -1;
	int		 rc;

	*why = NULL;
	if (dstate_load(sdir, &st, err, sizeof(err)) == -1) {
		if (errno != ENOENT) {
			*why = "its snapshot state cannot be read";
			return 0;
		}
		goto remove;	/* not a snapshot session */
	}
	dstate_free(&st);
	if ((rc = draft_os_lock(sdir, &lock, 1)) != 0) {
		if (rc == -2)
			*why = "another aisb works on its draft";
		return rc == -2 ? 0 : -1;
	}
	/* again, held: an apply may have ended between the two */
	if (dstate_load(sdir, &st, err, sizeof(err)) == -1)
		*why = "its snapshot state cannot be read";
	else {
		*why = keeps(&st);
		dstate_free(&st);
	}
	if (*why != NULL) {
		draft_os_unlock(lock);
		return 0;
	}
remove:
	rc = snap_tree_remove(sdir, err, sizeof(err)) == SNAP_OK ? 1 : -1;
	if (rc == -1)
		fprintf(stderr, "aisb: %s\n", err);
	draft_os_unlock(lock);
	return rc;
}

int
draft_retire_tx(const char *ddir, unsigned n, const char **why)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128], tx[DRAFT_PATH_MAX];
	intptr_t	 lock = -1;
	int		 rc;

	*why = NULL;
	if ((rc = draft_os_lock(ddir, &lock, 1)) != 0) {
		if (rc == -2)
			*why = "a session or another aisb holds the draft";
		return rc == -2 ? 0 : -1;
	}
	if (dstate_load(ddir, &st, err, sizeof(err)) == -1)
		*why = "its state cannot be read";
	else {
		/* tx/N past the state's: an apply being set up */
		if (n > st.tx)
			*why = "a transaction its state does not know yet";
		else if (n == st.tx && (dstate_is(&st, DRAFT_APPLYING) ||
		    dstate_is(&st, DRAFT_RECOVERY) ||
		    dstate_is(&st, DRAFT_UNDOING)))
			*why = "its commit is not settled (aisb draft recover "
			    "NAME)";
		dstate_free(&st);
	}
	if (*why != NULL) {
		draft_os_unlock(lock);
		return 0;
	}
	rc = 1;
	if (draft_tx_path(ddir, n, tx) == -1) {
		fprintf(stderr, "aisb: %s: path too long\n", ddir);
		rc = -1;
	} else if (snap_tree_remove(tx, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: %s\n", err);
		rc = -1;
	}
	draft_os_unlock(lock);
	return rc;
}
