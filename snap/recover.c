/*
 * Recovery (snap_tx_recover, snap.h; docs/snapshot.md "Recovery: rolled
 * back, never forward"): every step of an interrupted transaction looked
 * at first, then undone from the last; a target found as before its step
 * is left alone, one found as after it is put back from its backup, and
 * anything else (an edit made since) is a conflict that leaves the host
 * as it is.  The write-back (tx.c) calls it too, on its own failure.
 *
 * A step's names next to its target (tx-int.h) say how far it got, what
 * the target alone cannot tell:
 *   K.was	 the entry the step moved away from its target (a replace
 *		 or a delete without an atomic swap): it goes back in place
 *		 (over the new content, or into the empty name); another
 *		 entry in that place is a conflict;
 *   K		 the step's new content or folder, not renamed yet: the
 *		 target is not the transaction's, whatever it holds (a
 *		 program made it while the step waited); removed.  After a
 *		 swap (snap_fs_exchange), the target holds the new content
 *		 and K the entry swapped out (not the new content): K goes
 *		 back;
 *   K.back	 recovery's own copy of a backup on its way in.
 * A step the journal calls refused wrote nothing at its target.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"
#include "tx-int.h"


/* The host file at full holds hash a or b: 1 a, 2 b, 0 neither or
 * absent, -1 error. */
static int
file_is(const char *full, const char *a, const char *b,
    struct snap_stat *st)
{
	char	hex[SNAP_SHA256_HEX + 1];

	if (snap_fs_lstat(full, st) == -1)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (st->type != SNAP_FS_FILE)
		return 0;
	if (snap_sha_file(full, hex, NULL) == -1)
		return -1;
	if (a != NULL && strcmp(hex, a) == 0)
		return 1;
	if (b != NULL && strcmp(hex, b) == 0)
		return 2;
	return 0;
}

/* The link at full is a or b: 1, 2, 0, -1. */
static int
link_is(const char *full, const char *a, const char *b)
{
	char			link[SNAP_LINK_MAX];
	struct snap_stat	st;

	if (snap_fs_lstat(full, &st) == -1)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (st.type != SNAP_FS_LINK ||
	    snap_fs_readlink(full, link, sizeof(link)) == -1)
		return 0;
	if (a != NULL && strcmp(link, a) == 0)
		return 1;
	if (b != NULL && strcmp(link, b) == 0)
		return 2;
	return 0;
}

static int
absent(const char *full)
{
	struct snap_stat	st;

	if (snap_fs_lstat(full, &st) == 0)
		return 0;
	return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
}

/* The change y was written by a step up to last. */
static int
made_by(struct tx *t, const struct snap_chg *y, long last)
{
	long	s;

	for (s = 0; s <= last; s++)
		if (&t->c->v[t->steps[s].ci] == y &&
		    (t->steps[s].a == A_PUT || t->steps[s].a == A_MKDIR))
			return 1;
	return 0;
}

/* Removes path when it is there: 0, or -1 (errno). */
static int
unlink_quiet(const char *path)
{
	if (snap_fs_unlink(path) == -1 && errno != ENOENT && errno != ENOTDIR)
		return -1;
	return 0;
}

/* Change x's target holds its new content or link: 1, 0, -1. */
static int
is_new(const struct snap_chg *x, const char *full)
{
	struct snap_stat	st;

	return x->pub.type == SNAP_LINK ? link_is(full, x->new_link, NULL) :
	    file_is(full, x->new_sha, NULL, &st);
}

static int
changed_since(struct tx *t, const char *full)
{
	return snap_err(t->err, t->errlen, SNAP_ECONFLICT, "%s: changed after "
	    "the transaction wrote it: not rolled back (move it away, then "
	    "recover again)", full);
}

/* Step k's A_PUT target is as before it or as after it. */
static int
put_check(struct tx *t, size_t k, const char *full)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 tmp[SNAP_PATH_MAX], was[SNAP_PATH_MAX];
	struct snap_stat	 st;
	int			 rc, r;

	if ((rc = snap_tx_temp_path(t, tmp, x->path, k, TX_NEW)) != SNAP_OK ||
	    (rc = snap_tx_temp_path(t, was, x->path, k, TX_WAS)) != SNAP_OK)
		return rc;
	if ((r = absent(was)) == -1)
		return snap_tx_sys(t, was);
	if (r == 0) {
		/* the old entry, moved aside: back into its place */
		if ((r = is_new(x, full)) == 1 || (r != -1 &&
		    (r = absent(full)) == 1))
			return SNAP_OK;
		return r == -1 ? snap_tx_sys(t, full) : changed_since(t, full);
	}
	if (x->pub.type == SNAP_LINK)
		r = link_is(full, x->new_link, x->old_link);
	else
		r = file_is(full, x->new_sha, x->pub.kind == SNAP_MODIFY ?
		    x->old_sha : NULL, &st);
	if (r != 0)
		return r == -1 ? snap_tx_sys(t, full) : SNAP_OK;
	/* the old one back: its DELETE's check looks at it */
	if (x->pub.kind == SNAP_CREATE &&
	    snap_changes_find(t->c, x->path, SNAP_DELETE) != NULL)
		return SNAP_OK;
	if (x->pub.kind == SNAP_CREATE && (r = absent(full)) != 0)
		return r == -1 ? snap_tx_sys(t, full) : SNAP_OK;
	/* its new content still at the temporary's name (not the entry a
	 * swap took out): never renamed, what is there is not the
	 * transaction's */
	if ((r = is_new(x, tmp)) != 0)
		return r == -1 ? snap_tx_sys(t, tmp) : SNAP_OK;
	return changed_since(t, full);
}

/* Step k's target is as before it or as after it. */
static int
undo_check(struct tx *t, size_t k, long last)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], child[SNAP_PATH_MAX];
	char			 tmp[SNAP_PATH_MAX];
	const struct snap_chg	*y;
	struct snap_stat	 st;
	char			**names;
	long			 n, i;
	int			 rc, r;

	if ((long)k == t->refused)
		return SNAP_OK;		/* it wrote nothing there */
	if ((rc = snap_tx_host_path(t, full, x->path)) != SNAP_OK ||
	    (rc = snap_tx_temp_path(t, tmp, x->path, k, t->steps[k].a ==
	    A_DEL ? TX_WAS : TX_NEW)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_PUT:
		return put_check(t, k, full);
	case A_DEL:
		if ((r = absent(full)) == 1)
			return SNAP_OK;
		if (r == -1)
			return snap_tx_sys(t, full);
		if (x->pub.type == SNAP_DIR) {
			if (snap_fs_lstat(full, &st) == 0 &&
			    st.type == SNAP_FS_DIR)
				return SNAP_OK;
		} else if ((r = absent(tmp)) == 0) {
			;	/* moved aside: its place must be free */
		} else if (r == -1) {
			return snap_tx_sys(t, tmp);
		} else if (x->pub.type == SNAP_LINK) {
			if (link_is(full, x->old_link, NULL) == 1)
				return SNAP_OK;
		} else if (file_is(full, x->old_sha, NULL, &st) == 1)
			return SNAP_OK;
		/* another type in its place, made by a later step of this
		 * transaction (whose own check looks at it): undone first */
		if ((y = snap_changes_find(t->c, x->path, SNAP_CREATE)) !=
		    NULL && made_by(t, y, last))
			return SNAP_OK;
		return snap_err(t->err, t->errlen, SNAP_ECONFLICT, "%s: "
		    "created again after the transaction removed it: not "
		    "rolled back (move it away, then recover again)", full);
	case A_MKDIR:
		/* its folder never got its name: the target is another's */
		if ((r = absent(tmp)) != 1)
			return r == -1 ? snap_tx_sys(t, tmp) : SNAP_OK;
		if ((r = absent(full)) == 1)
			return SNAP_OK;
		if (r == -1)
			return snap_tx_sys(t, full);
		if (snap_fs_lstat(full, &st) == 0 && st.type != SNAP_FS_DIR &&
		    snap_changes_find(t->c, x->path, SNAP_DELETE) != NULL)
			return SNAP_OK;	/* the old one back (see A_PUT) */
		if (snap_fs_lstat(full, &st) == -1 || st.type != SNAP_FS_DIR)
			return snap_err(t->err, t->errlen, SNAP_ECONFLICT,
			    "%s: not the folder the transaction made: not "
			    "rolled back", full);
		/* only what this transaction made may be in it */
		if ((n = snap_list_dir(t->host, x->path, &names)) == -1)
			return snap_tx_sys(t, full);
		rc = SNAP_OK;
		for (i = 0; i < n && rc == SNAP_OK; i++) {
			if (strncmp(names[i], ".aisb-tx-", 9) == 0)
				continue;
			snprintf(child, sizeof(child), "%s/%s", x->path,
			    names[i]);
			y = snap_changes_find(t->c, child, SNAP_CREATE);
			if (y == NULL || !made_by(t, y, last))
				rc = snap_err(t->err, t->errlen,
				    SNAP_ECONFLICT, "%s/%s: added after the "
				    "transaction made its folder: not rolled "
				    "back (move it away, then recover again)",
				    t->host, child);
		}
		snap_names_free(names, n);
		return rc;
	case A_CHMOD:
		if (x->pub.kind != SNAP_MODE)
			return SNAP_OK;
		if (snap_fs_lstat(full, &st) == -1)
			return snap_tx_sys(t, full);
		if ((st.mode & 0777) != x->pub.old_mode &&
		    (st.mode & 0777) != x->pub.new_mode)
			return snap_err(t->err, t->errlen, SNAP_ECONFLICT,
			    "%s: its mode changed after the transaction set "
			    "it: not rolled back", full);
		return SNAP_OK;
	}
	return SNAP_OK;
}

/* The backup of change ci back at full, with its old mode. */
static int
restore(struct tx *t, size_t k, const char *full)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 bk[SNAP_PATH_MAX], tmp[SNAP_PATH_MAX];
	int			 rc;

	if ((rc = snap_tx_temp_path(t, tmp, x->path, k, TX_BACK)) != SNAP_OK)
		return rc;
	if (snprintf(bk, sizeof(bk), "%s/backup/%zu", t->dir,
	    t->steps[k].ci) >= (int)sizeof(bk))
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	rc = snap_tx_copy_to(bk, tmp, x->pub.old_mode, x->old_sha, 1, NULL);
	if (rc == -1)
		return snap_tx_sys(t, bk);
	if (rc == 1) {
		(void)snap_fs_unlink(tmp);
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: the "
		    "backup does not hold what was backed up: restore %s by "
		    "hand", bk, full);
	}
	if (snap_fs_rename(tmp, full) == -1)
		return snap_tx_sys(t, full);
	return snap_tx_fsync_parent(t, x->path);
}

/* Step k's A_PUT undone (put_check said it may be). */
static int
put_undo(struct tx *t, size_t k, const char *full)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 tmp[SNAP_PATH_MAX], was[SNAP_PATH_MAX];
	int			 rc, r;

	if ((rc = snap_tx_temp_path(t, tmp, x->path, k, TX_NEW)) != SNAP_OK ||
	    (rc = snap_tx_temp_path(t, was, x->path, k, TX_WAS)) != SNAP_OK)
		return rc;
	if ((long)k != t->refused && absent(was) == 0) {
		/* the old entry moved aside: back in place */
		if (snap_fs_rename(was, full) == -1 || unlink_quiet(tmp) == -1)
			return snap_tx_sys(t, full);
		return snap_tx_fsync_parent(t, x->path);
	}
	if ((long)k == t->refused || (r = is_new(x, full)) != 1) {
		if (unlink_quiet(tmp) == -1 || unlink_quiet(was) == -1)
			return snap_tx_sys(t, tmp);
		return SNAP_OK;
	}
	if (x->pub.kind == SNAP_MODIFY && absent(tmp) == 0) {
		/* swapped: the old entry is at the temporary's name */
		if (snap_fs_rename(tmp, full) == -1)
			return snap_tx_sys(t, full);
		return snap_tx_fsync_parent(t, x->path);
	}
	if (unlink_quiet(tmp) == -1)
		return snap_tx_sys(t, tmp);
	if (x->pub.kind == SNAP_CREATE) {
		if (snap_fs_unlink(full) == -1)
			return snap_tx_sys(t, full);
		return snap_tx_fsync_parent(t, x->path);
	}
	if (x->pub.type != SNAP_LINK)
		return restore(t, k, full);
	if ((rc = snap_tx_temp_path(t, tmp, x->path, k, TX_BACK)) != SNAP_OK)
		return rc;
	(void)snap_fs_unlink(tmp);
	if (snap_fs_symlink(x->old_link, tmp) == -1 ||
	    snap_fs_rename(tmp, full) == -1)
		return snap_tx_sys(t, full);
	return snap_tx_fsync_parent(t, x->path);
}

static int
undo(struct tx *t, size_t k)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], tmp[SNAP_PATH_MAX];
	struct snap_stat	 st;
	int			 rc, r;

	if ((rc = snap_tx_host_path(t, full, x->path)) != SNAP_OK ||
	    (rc = snap_tx_temp_path(t, tmp, x->path, k, t->steps[k].a ==
	    A_DEL ? TX_WAS : TX_NEW)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_PUT:
		return put_undo(t, k, full);
	case A_DEL:
		if ((long)k == t->refused || absent(full) != 1)
			return SNAP_OK;
		if (x->pub.type == SNAP_DIR) {
			/* writable until its entries are back: A_DEL's
			 * final pass sets the old mode */
			if (snap_fs_mkdir(full, 0700) == -1)
				return snap_tx_sys(t, full);
			return snap_tx_fsync_parent(t, x->path);
		}
		if (absent(tmp) == 0) {
			/* moved aside, not removed yet: back in place */
			if (snap_fs_rename_new(tmp, full) == -1)
				return snap_tx_sys(t, full);
			return snap_tx_fsync_parent(t, x->path);
		}
		if (x->pub.type == SNAP_LINK) {
			if (snap_fs_symlink(x->old_link, full) == -1)
				return snap_tx_sys(t, full);
			return snap_tx_fsync_parent(t, x->path);
		}
		return restore(t, k, full);
	case A_MKDIR:
		if ((r = absent(tmp)) == 0 && snap_fs_rmdir(tmp) == -1)
			return snap_tx_sys(t, tmp);
		if (r == 0 || (long)k == t->refused)
			return SNAP_OK;	/* its folder never got its name */
		if (absent(full) == 1 || snap_fs_lstat(full, &st) == -1 ||
		    st.type != SNAP_FS_DIR)
			return SNAP_OK;
		if (snap_fs_rmdir(full) == -1)
			return snap_tx_sys(t, full);
		return snap_tx_fsync_parent(t, x->path);
	case A_CHMOD:
		if ((long)k == t->refused)
			return SNAP_OK;
		if (x->pub.kind != SNAP_MODE) {
			/* a folder it made: writable again, so that what
			 * went into it can go */
			if (absent(full) == 1 ||
			    snap_fs_lstat(full, &st) == -1 ||
			    st.type != SNAP_FS_DIR)
				return SNAP_OK;
			if (snap_fs_chmod(full, 0700) == -1)
				return snap_tx_sys(t, full);
			return SNAP_OK;
		}
		if (snap_fs_chmod(full, x->pub.old_mode) == -1)
			return snap_tx_sys(t, full);
		return SNAP_OK;
	}
	return SNAP_OK;
}

int
snap_tx_rollback(struct tx *t, enum snap_tx_state *state)
{
	char		 path[SNAP_PATH_MAX], full[SNAP_PATH_MAX];
	struct jstate	 js;
	struct snap_changes *c = NULL;
	long		 k, last;
	int		 rc;

	if ((rc = snap_tx_read_journal(t->dir, &js, t->err, t->errlen)) !=
	    SNAP_OK)
		return rc;
	*state = js.state;
	t->refused = js.refused;
	if (js.state == SNAP_TX_NONE || js.state == SNAP_TX_APPLIED ||
	    js.state == SNAP_TX_ROLLED_BACK)
		return SNAP_OK;
	if (snap_join(path, t->dir, "journal") == -1 ||
	    (t->j = snap_fs_open_append(path)) == NULL)
		return snap_tx_sys(t, path);
	if (js.state == SNAP_TX_PREPARING) {
		/* the host was never written */
		if ((rc = snap_tx_jrec(t, "rolledback")) == SNAP_OK)
			*state = SNAP_TX_ROLLED_BACK;
		return rc;
	}
	if (snap_join(path, t->dir, "changes") == -1 ||
	    (rc = snap_changes_load(path, &c, t->err, t->errlen)) != SNAP_OK)
		return rc;
	t->c = c;
	if (strcmp(c->digest, js.digest) != 0) {
		rc = snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: the change "
		    "set is not the one the journal names", path);
		goto out;
	}
	if ((rc = snap_tx_plan(t)) != SNAP_OK)
		goto out;
	if (t->nsteps != js.nsteps) {
		rc = snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: %zu steps, "
		    "the journal says %zu", path, t->nsteps, js.nsteps);
		goto out;
	}
	/*
	 * Every step, not only those announced (no step is announced any
	 * more): each target is found as before its step (left alone), as
	 * after it (undone) or otherwise (a conflict).  First look, then
	 * write: a conflict leaves everything as it is.
	 */
	last = (long)t->nsteps - 1;
	for (k = last; k >= 0; k--)
		if ((rc = undo_check(t, (size_t)k, last)) != SNAP_OK)
			goto out;
	for (k = last; k >= 0; k--) {
		if ((rc = undo(t, (size_t)k)) != SNAP_OK)
			goto out;
		if (snap_tx_crash()) {
			rc = snap_err(t->err, t->errlen, SNAP_ECRASH,
			    "crash point");
			goto out;
		}
	}
	/* folders made again get their old mode, deepest first */
	for (k = 0; k <= last; k++) {
		const struct snap_chg	*x = &c->v[t->steps[k].ci];

		if (t->steps[k].a != A_DEL || x->pub.type != SNAP_DIR ||
		    k == t->refused)
			continue;
		if ((rc = snap_tx_host_path(t, full, x->path)) != SNAP_OK)
			goto out;
		if (snap_fs_chmod(full, x->pub.old_mode) == -1) {
			rc = snap_tx_sys(t, full);
			goto out;
		}
	}
	if ((rc = snap_tx_jrec(t, "rolledback")) != SNAP_OK)
		goto out;
	*state = SNAP_TX_ROLLED_BACK;
	if (snap_tx_crash())
		rc = snap_err(t->err, t->errlen, SNAP_ECRASH, "crash point");
out:
	snap_changes_free(c);
	t->c = NULL;
	return rc;
}

int
snap_tx_recover(const char *tx_dir, const char *host_root,
    enum snap_tx_state *state, char *err, size_t errlen)
{
	struct tx		t;
	enum snap_tx_state	s = SNAP_TX_NONE;
	int			rc;

	snap_tx_open(&t, tx_dir, host_root, NULL, err, errlen);
	rc = snap_tx_rollback(&t, &s);
	snap_tx_close(&t);
	if (state != NULL)
		*state = s;
	return rc;
}
