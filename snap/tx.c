/*
 * Transactions: a change set written back to the host tree, checked
 * before the first write, with fsync'd backups and a journal, and a
 * recovery that rolls an interrupted one back (snap.h; docs/snapshot.md,
 * "Transactions", "Journal", "Recovery").
 *
 * tx_dir holds:
 *   changes	the change set (its canonical file, digest checked on load)
 *   backup/I	the host's content of the file of change I, before
 *   journal	one record a line, each fsync'd before what it announces:
 *		  aisb-snap-journal 1
 *		  intent DIGEST NSTEPS	  backups about to be made
 *		  ready			  backups durable: host writes follow
 *		  conflict PATH		  refused before any host write
 *		  refused K		  step K found its target changed
 *					  since the check: it wrote nothing
 *					  there; the roll back follows
 *		  done			  all applied (and durable)
 *		  rolledback		  nothing applied
 *		a last line without its newline was never written ("step K"
 *		records of older versions are read and ignored).
 *
 * Each target is checked twice: before the first host write (its hash,
 * against the manifest's), and again at its own step, against the
 * identity (device, inode, size, mtime, ctime) it had when it was hashed:
 * a creation is a rename that never replaces (snap_fs_rename_new), a
 * replacement swaps the new entry in and looks at the one swapped out
 * (snap_fs_exchange), or moves the old one aside checked as it moves
 * (snap_fs_move_checked) and renames the new one in without replacing, a
 * delete moves its file aside checked, a folder is made under a
 * temporary name and renamed in without replacing.  An edit made by
 * another program in between is "refused K" in the journal, a conflict,
 * and the roll back of what the transaction did before it.  What the
 * names next to a target mean to a recovery is recover.c's comment.
 *
 * Durability is batched: the backups are written without an fsync each,
 * then one syncfs(2) of their filesystem makes them durable before
 * "ready"; the new contents go to temporaries next to their targets, one
 * syncfs makes them durable before the first rename, and one more after
 * the last step comes before "done".  Recovery needs no per-step record:
 * it looks at every target of every step and undoes what it finds done
 * (the content is the new one: back from the backup), leaves what it
 * finds as it was, and refuses anything else (an edit made since).
 *
 * This file writes back; recover.c rolls back; journal.c holds what both
 * use (tx-int.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"
#include "snap-test.h"
#include "tx-int.h"

#define CRASH(t) do {							\
	if (snap_tx_crash())						\
		return snap_err((t)->err, (t)->errlen, SNAP_ECRASH,	\
		    "crash point %u (test hook)",			\
		    snap_test_crash_points());				\
} while (0)

/* ---------------------------------------------------------------- */
/* Before the first host write: the conflict check, and the backups.  */

static int
conflict(struct tx *t, const char *rel, const char *why)
{
	if (t->src_c != NULL)	/* an undo */
		return snap_err(t->err, t->errlen, SNAP_ECONFLICT, "%s/%s: %s "
		    "since the transaction being undone wrote it: nothing was "
		    "written (put it back as it was, or move it away, to "
		    "undo)", t->host, rel, why);
	return snap_err(t->err, t->errlen, SNAP_ECONFLICT, "%s/%s: %s since "
	    "the stage was made: nothing was written (look at it, then "
	    "discard the draft or run the command again)", t->host, rel, why);
}

/* Every folder above rel is a folder on the host (no link), or one this
 * change set makes. */
static int
check_ancestors(struct tx *t, const char *rel)
{
	char			 pre[SNAP_PATH_MAX], full[SNAP_PATH_MAX];
	struct snap_stat	 st;
	const struct snap_chg	*x;
	const char		*s;
	size_t			 n;

	for (s = rel; (s = strchr(s, '/')) != NULL; s++) {
		n = (size_t)(s - rel);
		memcpy(pre, rel, n);
		pre[n] = '\0';
		if (snap_tx_host_path(t, full, pre) != SNAP_OK)
			return SNAP_EINVAL;
		if (snap_fs_lstat(full, &st) == 0) {
			if (st.type == SNAP_FS_DIR)
				continue;
			/* replaced by a folder in this change set? */
			if ((x = snap_changes_find(t->c, pre, SNAP_CREATE)) !=
			    NULL && x->pub.type == SNAP_DIR &&
			    snap_changes_find(t->c, pre, SNAP_DELETE) != NULL)
				continue;
			return conflict(t, pre, "is no longer a folder");
		}
		if (errno != ENOENT)
			return snap_tx_sys(t, full);
		if ((x = snap_changes_find(t->c, pre, SNAP_CREATE)) == NULL ||
		    x->pub.type != SNAP_DIR)
			return conflict(t, pre, "folder is gone");
	}
	return SNAP_OK;
}

static int
check_one(struct tx *t, size_t i, int backup)
{
	const struct snap_chg	*x = &t->c->v[i];
	char			 full[SNAP_PATH_MAX], bk[SNAP_PATH_MAX];
	char			 link[SNAP_LINK_MAX], child[SNAP_PATH_MAX];
	struct snap_stat	 st;
	char			**names;
	long			 n, k;
	int			 rc;

	if ((rc = check_ancestors(t, x->path)) != SNAP_OK)
		return rc;
	if ((rc = snap_tx_host_path(t, full, x->path)) != SNAP_OK)
		return rc;
	if (snap_fs_lstat(full, &st) == -1) {
		/* ENOTDIR: a file above, which this change set replaces by
		 * a folder (check_ancestors said so) */
		if (errno != ENOENT && errno != ENOTDIR)
			return snap_tx_sys(t, full);
		if (x->pub.kind == SNAP_CREATE)
			return SNAP_OK;
		return conflict(t, x->path, "was removed on the host");
	}
	/* what its step compares the target with again */
	t->was[i] = st;
	if (x->pub.kind == SNAP_CREATE) {
		/* a type swap: the DELETE at this path checks the old one */
		if (snap_changes_find(t->c, x->path, SNAP_DELETE) != NULL)
			return SNAP_OK;
		return conflict(t, x->path, "was created on the host");
	}
	switch (x->pub.type) {
	case SNAP_FILE:
		if (st.type != SNAP_FS_FILE)
			return conflict(t, x->path, "is no longer a file");
		if ((st.mode & 0777) != x->pub.old_mode)
			return conflict(t, x->path, "changed mode");
		/* the source changed before the change set was made: its
		 * staged content is unknown (snap_changes_compute) */
		if (x->old_sha[0] == '\0')
			return conflict(t, x->path, "was edited");
		if (backup && snprintf(bk, sizeof(bk), "%s/backup/%zu", t->dir,
		    i) >= (int)sizeof(bk))
			return snap_err(t->err, t->errlen, SNAP_EINVAL,
			    "%s: path too long", t->dir);
		/* the hash and the identity of one file, unchanged while
		 * read: the step checks that identity again */
		rc = snap_tx_copy_to(full, backup ? bk : NULL, 0600,
		    x->old_sha, 0, &t->was[i]);
		if (rc == -1)
			return snap_tx_sys(t, full);
		if (rc == 1 || t->was[i].dev != st.dev ||
		    t->was[i].ino != st.ino)
			return conflict(t, x->path, "was edited");
		if (backup)
			CRASH(t);
		return SNAP_OK;
	case SNAP_LINK:
		if (st.type != SNAP_FS_LINK ||
		    snap_fs_readlink(full, link, sizeof(link)) == -1 ||
		    strcmp(link, x->old_link) != 0)
			return conflict(t, x->path, "link was changed");
		return SNAP_OK;
	case SNAP_DIR:
		if (st.type != SNAP_FS_DIR)
			return conflict(t, x->path, "is no longer a folder");
		if (x->pub.kind == SNAP_MODE &&
		    (st.mode & 0777) != x->pub.old_mode)
			return conflict(t, x->path, "changed mode");
		if (x->pub.kind != SNAP_DELETE)
			return SNAP_OK;
		/* everything in it must go with it */
		if ((n = snap_list_dir(t->host, x->path, &names)) == -1)
			return snap_tx_sys(t, full);
		for (k = 0; k < n; k++) {
			if (snprintf(child, sizeof(child), "%s/%s", x->path,
			    names[k]) >= (int)sizeof(child) ||
			    snap_changes_find(t->c, child, SNAP_DELETE) ==
			    NULL) {
				rc = conflict(t, child, "was created on the "
				    "host (in a folder to delete)");
				break;
			}
		}
		snap_names_free(names, n);
		return rc;
	case SNAP_SPECIAL:
		break;
	}
	return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: a change of a "
	    "special file", x->path);
}

/* ---------------------------------------------------------------- */
/* Steps, forward, each checking its target again.                    */

/*
 * Step k found its target other than the check saw it (a program wrote
 * it meanwhile): it wrote nothing there.  Journalled, so that the roll
 * back that follows leaves that target alone.
 */
static int
refuse(struct tx *t, size_t k, const char *why)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];

	(void)snap_tx_jrec(t, "refused %zu", k);
	return snap_err(t->err, t->errlen, SNAP_ECONFLICT, "%s/%s: %s while "
	    "the changes were being written (another program wrote it); "
	    "left as that program made it", t->host, x->path, why);
}

/* errno of a checked rename that met another entry than the checked one */
static int
raced(void)
{
	return errno == ESTALE || errno == EBUSY || errno == ENOENT ||
	    errno == EEXIST || errno == ENOTEMPTY;
}

/*
 * A_PUT of a MODIFY: the new entry at tmp takes the place of the one
 * checked, and of no other.  Swapped in one step where the system can,
 * then the entry swapped out is looked at (swapped back when it is not
 * the one checked); else the old one is moved aside, checked on the way,
 * and the new one renamed in without replacing (a name absent for the
 * time of two calls).
 */
static int
replace(struct tx *t, size_t k, const char *full, const char *tmp)
{
	const struct snap_stat	*was = &t->was[t->steps[k].ci];
	struct snap_stat	 st;
	char			 aside[SNAP_PATH_MAX];
	int			 rc;

	if (snap_fs_lstat(full, &st) == -1)
		return errno == ENOENT ? refuse(t, k, "was removed") :
		    snap_tx_sys(t, full);
	if (!snap_fs_same(&st, was, SNAP_SAME_CTIME))
		return refuse(t, k, "was changed");
	if (snap_fs_exchange(tmp, full) == 0) {
		CRASH(t);
		if (snap_fs_lstat(tmp, &st) == -1)
			return snap_tx_sys(t, tmp);
		if (!snap_fs_same(&st, was, 0)) {
			if (snap_fs_exchange(tmp, full) == -1)
				return snap_tx_sys(t, full);
			return refuse(t, k, "was changed");
		}
		if (snap_fs_unlink(tmp) == -1)	/* the old one: backed up */
			return snap_tx_sys(t, tmp);
		return SNAP_OK;
	}
	if (errno != ENOSYS)
		return snap_tx_sys(t, full);
	if ((rc = snap_tx_temp_path(t, aside, t->c->v[t->steps[k].ci].path,
	    k, TX_WAS)) != SNAP_OK)
		return rc;
	if (snap_fs_move_checked(full, aside, was) == -1)
		return raced() ? refuse(t, k, "was changed") :
		    snap_tx_sys(t, full);
	CRASH(t);
	if (snap_fs_rename_new(tmp, full) == -1) {
		if (errno != EEXIST)
			return snap_tx_sys(t, full);
		/* made again in the moment its name was free: that one
		 * stays; the old one is in the backup */
		(void)snap_fs_unlink(aside);
		return refuse(t, k, "was created again");
	}
	CRASH(t);
	if (snap_fs_unlink(aside) == -1)
		return snap_tx_sys(t, aside);
	return SNAP_OK;
}

static int
do_step(struct tx *t, size_t k)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	const struct snap_stat	*was = &t->was[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], tmp[SNAP_PATH_MAX];
	struct snap_stat	 st;
	int			 rc;

	if ((rc = snap_tx_host_path(t, full, x->path)) != SNAP_OK ||
	    (rc = snap_tx_temp_path(t, tmp, x->path, k, t->steps[k].a ==
	    A_DEL ? TX_WAS : TX_NEW)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_DEL:
		if (x->pub.type == SNAP_DIR) {
			/* one that holds new entries is not removed */
			if (snap_fs_rmdir(full) == -1)
				return raced() || errno == ENOTDIR ?
				    refuse(t, k, "holds new entries or was "
				    "replaced") : snap_tx_sys(t, full);
			return SNAP_OK;
		}
		/* moved aside checked, then removed: never another one */
		if (snap_fs_move_checked(full, tmp, was) == -1)
			return raced() ? refuse(t, k, "was changed") :
			    snap_tx_sys(t, full);
		CRASH(t);
		if (snap_fs_unlink(tmp) == -1)
			return snap_tx_sys(t, tmp);
		return SNAP_OK;
	case A_MKDIR:
		/* made under its temporary name, renamed in without
		 * replacing: a folder made meanwhile stays its maker's */
		if (snap_fs_mkdir(tmp, 0700) == -1)
			return snap_tx_sys(t, tmp);
		CRASH(t);
		if (snap_fs_rename_new(tmp, full) == -1) {
			rc = raced() ? refuse(t, k, "was created") :
			    snap_tx_sys(t, full);
			(void)snap_fs_rmdir(tmp);
			return rc;
		}
		return SNAP_OK;
	case A_CHMOD:
		if (x->pub.kind == SNAP_MODE) {
			if (snap_fs_lstat(full, &st) == -1)
				return errno == ENOENT ? refuse(t, k, "was "
				    "removed") : snap_tx_sys(t, full);
			if (!snap_fs_same(&st, was, SNAP_SAME_CTIME))
				return refuse(t, k, "was changed");
		}
		if (snap_fs_chmod(full, x->pub.new_mode & 0777) == -1)
			return snap_tx_sys(t, full);
		return SNAP_OK;
	case A_PUT:
		break;
	}
	/* the temporary was written (and synced) by put_temps */
	if (x->pub.kind == SNAP_MODIFY)
		rc = replace(t, k, full, tmp);
	else if (snap_fs_rename_new(tmp, full) == -1)
		rc = raced() ? refuse(t, k, "was created") :
		    snap_tx_sys(t, full);
	if (rc != SNAP_OK)
		return rc;
	CRASH(t);
	return SNAP_OK;
}

/* src does not hold the content the change set names. */
static int
stale_content(struct tx *t, const char *src)
{
	return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: not the content "
	    "the change set names (it changed after the change set was "
	    "made): compute it again", src);
}

/*
 * The temporaries of every A_PUT step, next to their targets (after the
 * folders are made, before the first rename), then one sync of the host
 * filesystem: a rename never makes a name point at content that is not
 * durable.
 */
static int
put_temps(struct tx *t)
{
	const struct snap_chg	*x;
	char			 tmp[SNAP_PATH_MAX], src[SNAP_PATH_MAX];
	size_t			 k;
	int			 rc;

	for (k = 0; k < t->nsteps; k++) {
		if (t->steps[k].a != A_PUT)
			continue;
		x = &t->c->v[t->steps[k].ci];
		if ((rc = snap_tx_temp_path(t, tmp, x->path, k, TX_NEW)) !=
		    SNAP_OK)
			return rc;
		if (x->pub.type == SNAP_LINK) {
			(void)snap_fs_unlink(tmp);
			if (snap_fs_symlink(x->new_link, tmp) == -1)
				return snap_tx_sys(t, tmp);
		} else {
			if ((rc = snap_tx_content(t, t->steps[k].ci, src)) !=
			    SNAP_OK)
				return rc;
			rc = snap_tx_copy_to(src, tmp, x->pub.new_mode & 0777,
			    x->new_sha, 0, NULL);
			if (rc == -1)
				return snap_tx_sys(t, src);
			if (rc == 1) {
				(void)snap_fs_unlink(tmp);
				return stale_content(t, src);
			}
		}
		CRASH(t);
	}
	if (snap_fs_sync_fs(t->host) == -1)
		return snap_tx_sys(t, t->host);
	return SNAP_OK;
}

/* The content of change i, new to the host, into after/i (what the
 * transaction writes, kept beside what it replaces). */
static int
keep_after(struct tx *t, size_t i)
{
	const struct snap_chg	*x = &t->c->v[i];
	char			 src[SNAP_PATH_MAX], dst[SNAP_PATH_MAX];
	int			 rc;

	if (x->pub.type != SNAP_FILE || (x->pub.kind != SNAP_CREATE &&
	    x->pub.kind != SNAP_MODIFY))
		return SNAP_OK;
	if ((rc = snap_tx_content(t, i, src)) != SNAP_OK)
		return rc;
	if (snprintf(dst, sizeof(dst), "%s/after/%zu", t->dir, i) >=
	    (int)sizeof(dst))
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: path too "
		    "long", t->dir);
	if ((rc = snap_tx_copy_to(src, dst, 0600, x->new_sha, 0, NULL)) == -1)
		return snap_tx_sys(t, src);
	if (rc == 1)
		return stale_content(t, src);
	CRASH(t);
	return SNAP_OK;
}

/* The transaction's folder, its change set, and the journal's first two
 * records. */
static int
begin(struct tx *t, const char *undoes)
{
	static const char *const dirs[] = { "backup", "after" };
	char			 path[SNAP_PATH_MAX], line[SNAP_PATH_MAX];
	size_t			 i;
	int			 rc = SNAP_OK, n;

	if (snap_fs_mkdir(t->dir, 0700) == -1)
		return snap_tx_sys(t, t->dir);
	if (snap_join(path, t->dir, "changes") == -1 ||
	    (rc = snap_changes_save(t->c, path, t->err, t->errlen)) != SNAP_OK)
		return rc;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (snap_join(path, t->dir, dirs[i]) == -1 ||
		    snap_fs_mkdir(path, 0700) == -1)
			return snap_tx_sys(t, path);
	/* an undo names the transaction it undoes (snap_tx_undoes) */
	n = undoes == NULL ? 0 : snprintf(line, sizeof(line), "%s\n", undoes);
	if (n < 0 || n >= (int)sizeof(line) || snap_join(path, t->dir,
	    "undoes") == -1 || (undoes != NULL &&
	    snap_file_write(path, line, (size_t)n) == -1))
		return snap_tx_sys(t, path);
	if (snap_join(path, t->dir, "journal") == -1 ||
	    (t->j = snap_fs_create(path, 0600)) == NULL ||
	    snap_fs_fsync_dir(t->dir) == -1)
		return snap_tx_sys(t, path);
	if ((rc = snap_tx_jrec(t, "%s", JOURNAL_HEAD)) != SNAP_OK ||
	    (rc = snap_tx_jrec(t, "intent %s %zu", t->c->digest,
	    t->nsteps)) != SNAP_OK)
		return rc;
	CRASH(t);
	return SNAP_OK;
}

/* 1, 2: every target checked, the backups and the new contents kept,
 * made durable at once, then "ready".  A conflict is settled here. */
static int
check_all(struct tx *t)
{
	const struct snap_chg	*x;
	char			 path[SNAP_PATH_MAX];
	struct buf		 b;
	size_t			 i;
	int			 rc;

	for (i = 0; i < t->c->n; i++) {
		x = &t->c->v[i];
		if (x->pub.kind == SNAP_SKIP)
			continue;
		rc = check_one(t, i, x->pub.type == SNAP_FILE &&
		    (x->pub.kind == SNAP_MODIFY || x->pub.kind == SNAP_DELETE));
		if (rc == SNAP_OK)
			rc = keep_after(t, i);
		if (rc == SNAP_ECONFLICT) {
			/* nothing was written: settled at once */
			buf_init(&b, SNAP_LINE_MAX - 16, 0);
			snap_enc(&b, x->path);
			if (!b.failed)
				(void)snap_tx_jrec(t, "conflict %s", b.p);
			buf_free(&b);
		}
		if (rc != SNAP_OK && rc != SNAP_ECRASH)
			(void)snap_tx_jrec(t, "rolledback");
		if (rc != SNAP_OK)
			return rc;
	}
	/* every backup durable at once (after/ is on the same filesystem) */
	if (snap_join(path, t->dir, "backup") == -1 ||
	    snap_fs_sync_fs(path) == -1 || snap_fs_fsync_dir(path) == -1)
		return snap_tx_sys(t, path);
	if (snap_join(path, t->dir, "after") == -1 ||
	    snap_fs_fsync_dir(path) == -1)
		return snap_tx_sys(t, path);
	if ((rc = snap_tx_jrec(t, "ready")) != SNAP_OK)
		return rc;
	CRASH(t);
	return SNAP_OK;
}

int
snap_tx_run(struct tx *t, const char *undoes)
{
	const struct snap_changes *c;
	struct snap_stat	 st;
	enum snap_tx_state	 state;
	char			 err2[512], *err;
	size_t			 k, len, errlen;
	int			 rc, rc2, temps = 0;

	if (snap_fs_lstat(t->dir, &st) == 0 || errno != ENOENT)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: exists "
		    "already (a transaction is made in a new folder)", t->dir);
	if ((rc = snap_tx_plan(t)) != SNAP_OK)
		return rc;
	if ((t->was = calloc(t->c->n + 1, sizeof(*t->was))) == NULL)
		return snap_err(t->err, t->errlen, SNAP_ESYS, "out of memory");
	if ((rc = begin(t, undoes)) != SNAP_OK ||
	    (rc = check_all(t)) != SNAP_OK)
		return rc;
	/* 3: the steps; the new contents written and synced before the
	 * first rename; everything synced before "done" */
	for (k = 0; k < t->nsteps; k++) {
		if (t->steps[k].a == A_PUT && !temps) {
			temps = 1;
			if ((rc = put_temps(t)) != SNAP_OK)
				break;
		}
		if ((rc = do_step(t, k)) != SNAP_OK)
			break;
		CRASH(t);
	}
	if (rc == SNAP_OK && snap_fs_sync_fs(t->host) == -1)
		rc = snap_tx_sys(t, t->host);
	if (rc == SNAP_OK)
		rc = snap_tx_jrec(t, "done");
	if (rc == SNAP_ECRASH)
		return rc;
	if (rc == SNAP_OK) {
		CRASH(t);
		return SNAP_OK;
	}
	/* undo what was done (from the journal and the change set on
	 * file, as a recovery would); the first error is the one to tell */
	snap_fs_close(t->j);
	t->j = NULL;
	free(t->steps);
	t->steps = NULL;
	c = t->c;
	err = t->err;
	errlen = t->errlen;
	t->err = err2;
	t->errlen = sizeof(err2);
	rc2 = snap_tx_rollback(t, &state);
	t->c = c;
	t->err = err;
	t->errlen = errlen;
	if (err != NULL && errlen > 0) {
		len = strlen(err);
		if (rc2 != SNAP_OK)
			snprintf(err + len, errlen - len, "; rolling back "
			    "failed too: %s (run recover)", err2);
		else
			snprintf(err + len, errlen - len, "; rolled back: "
			    "nothing applied");
	}
	return rc;
}

int
snap_tx_apply(const char *tx_dir, const char *host_root,
    const char *stage_root, const struct snap_manifest *m,
    const struct snap_changes *c, char *err, size_t errlen)
{
	struct tx			 t;
	const struct snap_ment		*e;
	const struct snap_chg		*x;
	size_t				 i;
	int				 rc;

	/* the change set belongs to the manifest */
	for (i = 0; i < c->n; i++) {
		x = &c->v[i];
		if (x->pub.kind == SNAP_SKIP || x->pub.kind == SNAP_CREATE)
			continue;
		if ((e = snap_manifest_find(m, x->path)) == NULL ||
		    e->excluded != NULL || e->pub.type != x->pub.type ||
		    strcmp(e->sha, x->old_sha) != 0)
			return snap_err(err, errlen, SNAP_EINVAL, "%s: the "
			    "change set does not belong to this manifest",
			    x->path);
	}
	snap_tx_open(&t, tx_dir, host_root, stage_root, err, errlen);
	t.c = c;
	rc = snap_tx_run(&t, NULL);
	snap_tx_close(&t);
	return rc;
}
