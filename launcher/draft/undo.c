/*
 * aisb undo ID (draft.h): an applied draft taken back.  Its transaction
 * tx/N is undone by a transaction of its own, tx/N+1 (snap_tx_undo: the
 * inverse change set, its contents the backups of tx/N, every target
 * checked to be as tx/N left it, the same journal, crash points and
 * recovery as apply).  The draft goes applied -> undoing -> undone; a
 * conflict leaves it applied, an interrupted undo is "recovery" until
 * aisb recover ID settles it (rolled back: applied again; done: undone).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "draft/draft-int.h"
#include "exitcode.h"

/* The state after the undo's transaction in tx returned rc with err. */
static int
settle(struct dstate *st, const char *id, const char *tx, int rc,
    const char *err, int quiet)
{
	enum snap_tx_state	 txs = draft_tx_outcome(tx, rc);

	if (txs == SNAP_TX_APPLIED) {
		draft_own_settled(st, tx, 0);
		dstate_set(st, DRAFT_UNDONE);
		if (!quiet)
			fprintf(stderr, "aisb: undone: %s is as it was before "
			    "transaction %u (the undo's journal and backups: "
			    "%s)\n", st->workspace, st->applied, tx);
		return 0;
	}
	if (txs == SNAP_TX_ROLLED_BACK || txs == SNAP_TX_NONE) {
		if (snap_tx_wrote(tx) == 1)
			draft_own_settled(st, tx, 1);
		dstate_set(st, DRAFT_APPLIED);
		fprintf(stderr, "aisb: undo: %s; nothing is undone, session %s "
		    "stays applied\n", err, id);
		return rc == SNAP_ECONFLICT ? EXIT_CONFLICT : EXIT_IOERR;
	}
	dstate_set(st, DRAFT_RECOVERY);
	fprintf(stderr, "aisb: undo: %s; transaction %s is %s: aisb recover "
	    "%s brings %s to all undone or nothing undone\n", err, tx,
	    snap_tx_state_name(txs), id, st->workspace);
	return EXIT_IOERR;
}

int
draft_undo(const char *sdir, const char *id, int quiet)
{
	struct dstate	 st;
	char		 err[2048], tx[DRAFT_PATH_MAX], undo[DRAFT_PATH_MAX];
	intptr_t	 lock;
	int		 rc, code = EXIT_CONFIG;

	if ((rc = draft_take(sdir, id, &st, &lock)) != 0)
		return rc;
	if (!dstate_is(&st, DRAFT_APPLIED)) {
		fprintf(stderr, "aisb: session %s: nothing to undo (its draft "
		    "is %s)\n", id, st.state);
		goto out;
	}
	if (st.applied == 0 || st.tx >= DRAFT_MAX_TX) {
		fprintf(stderr, "aisb: session %s: no transaction to undo, or "
		    "%u attempts already\n", id, st.tx);
		goto out;
	}
	/* the transaction that applied the draft, undone by a new one */
	if (draft_tx_path(sdir, st.applied, tx) == -1 ||
	    draft_tx_path(sdir, st.tx + 1, undo) == -1)
		goto out;
	st.tx++;
	dstate_set(&st, DRAFT_UNDOING);
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	rc = snap_tx_undo(undo, tx, st.workspace, err, sizeof(err));
	code = settle(&st, id, undo, rc, err, quiet);
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		if (code == 0)
			code = EXIT_ENFORCE;
	}
out:
	dstate_free(&st);
	draft_os_unlock(lock);
	return code;
}
