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
 *		  done			  all applied (and durable)
 *		  rolledback		  nothing applied
 *		a last line without its newline was never written ("step K"
 *		records of older versions are read and ignored).
 *
 * Durability is batched: the backups are written without an fsync each,
 * then one syncfs(2) of their filesystem makes them durable before
 * "ready"; the new contents go to temporaries next to their targets, one
 * syncfs makes them durable before the first rename, and one more after
 * the last step comes before "done".  Recovery needs no per-step record:
 * it looks at every target of every step and undoes what it finds done
 * (the content is the new one: back from the backup), leaves what it
 * finds as it was, and refuses anything else (an edit made since).
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

#define JOURNAL_HEAD	"aisb-snap-journal 1"
#define COPY_CHUNK	(256 * 1024)

enum action {
	A_DEL,		/* a file, link or folder removed */
	A_MKDIR,	/* a folder made (0700 until A_CHMOD) */
	A_PUT,		/* a file or link written: temporary, rename */
	A_CHMOD		/* the final mode of a file or folder */
};

struct step {
	size_t		ci;	/* change index */
	enum action	a;
};

struct tx {
	const char		*dir, *host, *stage;
	const struct snap_changes *c;
	struct step		*steps;
	size_t			 nsteps;
	struct snap_file	*j;	/* the journal, for appending */
	char			*err;
	size_t			 errlen;
};

/* ---------------------------------------------------------------- */
/* The crash hook (snap-test.h).                                      */

static unsigned	crash_left, crash_passed;
static unsigned	hook_left;
static void	(*hook_fn)(void *);
static void	*hook_arg;

void
snap_test_crash_after(unsigned n)
{
	crash_left = n;
	crash_passed = 0;
}

unsigned
snap_test_crash_points(void)
{
	return crash_passed;
}

void
snap_test_hook_at(unsigned n, void (*fn)(void *), void *arg)
{
	hook_left = n;
	hook_fn = fn;
	hook_arg = arg;
}

static int
crash(void)
{
	crash_passed++;
	if (hook_left > 0 && --hook_left == 0 && hook_fn != NULL)
		hook_fn(hook_arg);
	if (crash_left == 0)
		return 0;
	return --crash_left == 0;
}

#define CRASH(t) do {							\
	if (crash())							\
		return snap_err((t)->err, (t)->errlen, SNAP_ECRASH,	\
		    "crash point %u (test hook)", crash_passed);	\
} while (0)

const char *
snap_tx_state_name(enum snap_tx_state s)
{
	switch (s) {
	case SNAP_TX_NONE:
		return "none";
	case SNAP_TX_PREPARING:
		return "preparing";
	case SNAP_TX_APPLYING:
		return "applying";
	case SNAP_TX_APPLIED:
		return "applied";
	case SNAP_TX_ROLLED_BACK:
		return "rolled-back";
	}
	return "unknown";
}

/* ---------------------------------------------------------------- */

static int
sys(struct tx *t, const char *path)
{
	return snap_err(t->err, t->errlen, SNAP_ESYS, "%s: %s", path,
	    strerror(errno));
}

static int
jrec(struct tx *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One journal record, durable before the caller goes on. */
static int
jrec(struct tx *t, const char *fmt, ...)
{
	char	line[SNAP_LINE_MAX];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "journal "
		    "record too long");
	line[n++] = '\n';
	if (snap_fs_write(t->j, line, (size_t)n) == -1 ||
	    snap_fs_fsync(t->j) == -1)
		return snap_err(t->err, t->errlen, SNAP_ESYS, "%s/journal: %s",
		    t->dir, strerror(errno));
	return SNAP_OK;
}

/* The deterministic step list of a change set (the journal's K). */
static int
plan(struct tx *t)
{
	const struct snap_change	*x;
	size_t				 i, n = t->c->n, k = 0;

	if ((t->steps = calloc(2 * n + 1, sizeof(*t->steps))) == NULL)
		return snap_err(t->err, t->errlen, SNAP_ESYS, "out of memory");
	for (i = n; i-- > 0; )
		if (t->c->v[i].pub.kind == SNAP_DELETE)
			t->steps[k++] = (struct step){ i, A_DEL };
	for (i = 0; i < n; i++) {
		x = &t->c->v[i].pub;
		if (x->kind == SNAP_CREATE && x->type == SNAP_DIR)
			t->steps[k++] = (struct step){ i, A_MKDIR };
	}
	for (i = 0; i < n; i++) {
		x = &t->c->v[i].pub;
		if ((x->kind == SNAP_CREATE || x->kind == SNAP_MODIFY) &&
		    (x->type == SNAP_FILE || x->type == SNAP_LINK))
			t->steps[k++] = (struct step){ i, A_PUT };
	}
	for (i = n; i-- > 0; ) {
		x = &t->c->v[i].pub;
		if (x->kind == SNAP_MODE ||
		    (x->kind == SNAP_CREATE && x->type == SNAP_DIR))
			t->steps[k++] = (struct step){ i, A_CHMOD };
	}
	t->nsteps = k;
	return SNAP_OK;
}

static int
host_path(struct tx *t, char *out, const char *rel)
{
	if (snap_join(out, t->host, rel) == -1)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s/%s: path "
		    "too long", t->host, rel);
	return SNAP_OK;
}

/* The temporary of step k, next to the target: parent/.aisb-tx-D-K. */
static int
temp_path(struct tx *t, char *out, const char *rel, size_t k)
{
	char	dir[SNAP_PATH_MAX], full[SNAP_PATH_MAX];
	int	n;

	snap_dirname(dir, rel);
	if (snap_join(full, t->host, dir) == -1)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	n = snprintf(out, SNAP_PATH_MAX, "%s/.aisb-tx-%.12s-%zu", full,
	    t->c->digest, k);
	if (n < 0 || n >= SNAP_PATH_MAX)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	return SNAP_OK;
}

static int
fsync_parent(struct tx *t, const char *rel)
{
	char	dir[SNAP_PATH_MAX], full[SNAP_PATH_MAX];

	snap_dirname(dir, rel);
	if (snap_join(full, t->host, dir) == -1 ||
	    snap_fs_fsync_dir(full) == -1)
		return sys(t, full);
	return SNAP_OK;
}

/*
 * src to a new file dst of mode, fsync'd when dosync (else the caller syncs
 * the filesystem once for a batch); its hash must be want (when want is
 * not NULL).  0, -1 (errno), or 1 when the hash differs.
 */
static int
copy_to(const char *src, const char *dst, uint32_t mode, const char *want,
    int dosync)
{
	struct snap_file	*in = NULL, *out = NULL;
	struct snap_sha		*h = NULL;
	unsigned char		*b = NULL;
	char			 hex[SNAP_SHA256_HEX + 1];
	long			 n;
	int			 e, rc = -1;

	(void)snap_fs_unlink(dst);
	if ((b = malloc(COPY_CHUNK)) == NULL ||
	    (in = snap_fs_open_read(src)) == NULL ||
	    (h = snap_sha_new()) == NULL ||
	    (out = snap_fs_create(dst, mode)) == NULL)
		goto fail;
	while ((n = snap_fs_read(in, b, COPY_CHUNK)) > 0)
		if (snap_sha_update(h, b, (size_t)n) == -1 ||
		    snap_fs_write(out, b, (size_t)n) == -1)
			goto fail;
	if (n == -1 || (dosync && snap_fs_fsync(out) == -1))
		goto fail;
	if (snap_fs_close(out) == -1) {
		out = NULL;
		goto fail;
	}
	out = NULL;
	rc = snap_sha_final(h, hex);
	h = NULL;
	if (rc == -1)
		goto fail;
	rc = want != NULL && strcmp(want, hex) != 0 ? 1 : 0;
	snap_fs_close(in);
	free(b);
	return rc;
fail:
	e = errno;
	snap_sha_free(h);
	snap_fs_close(in);
	snap_fs_close(out);
	free(b);
	(void)snap_fs_unlink(dst);
	errno = e;
	return -1;
}

/* ---------------------------------------------------------------- */
/* Before the first host write: the conflict check, and the backups.  */

static int
conflict(struct tx *t, const char *rel, const char *why)
{
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
		if (host_path(t, full, pre) != SNAP_OK)
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
			return sys(t, full);
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
	char			 link[SNAP_LINK_MAX], hex[SNAP_SHA256_HEX + 1];
	char			 child[SNAP_PATH_MAX];
	struct snap_stat	 st;
	char			**names;
	long			 n, k;
	int			 rc;

	if ((rc = check_ancestors(t, x->path)) != SNAP_OK)
		return rc;
	if ((rc = host_path(t, full, x->path)) != SNAP_OK)
		return rc;
	if (snap_fs_lstat(full, &st) == -1) {
		/* ENOTDIR: a file above, which this change set replaces by
		 * a folder (check_ancestors said so) */
		if (errno != ENOENT && errno != ENOTDIR)
			return sys(t, full);
		if (x->pub.kind == SNAP_CREATE)
			return SNAP_OK;
		return conflict(t, x->path, "was removed on the host");
	}
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
		if (backup) {
			if (snprintf(bk, sizeof(bk), "%s/backup/%zu", t->dir,
			    i) >= (int)sizeof(bk))
				return snap_err(t->err, t->errlen, SNAP_EINVAL,
				    "%s: path too long", t->dir);
			rc = copy_to(full, bk, 0600, x->old_sha, 0);
			if (rc == -1)
				return sys(t, full);
			if (rc == 1)
				return conflict(t, x->path, "was edited");
			CRASH(t);
			return SNAP_OK;
		}
		if (snap_sha_file(full, hex, NULL) == -1)
			return sys(t, full);
		if (strcmp(hex, x->old_sha) != 0)
			return conflict(t, x->path, "was edited");
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
			return sys(t, full);
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
/* Steps, forward.                                                    */

static int
do_step(struct tx *t, size_t k)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], tmp[SNAP_PATH_MAX];
	int			 rc;

	if ((rc = host_path(t, full, x->path)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_DEL:
		if ((x->pub.type == SNAP_DIR ? snap_fs_rmdir(full) :
		    snap_fs_unlink(full)) == -1)
			return sys(t, full);
		return SNAP_OK;
	case A_MKDIR:
		if (snap_fs_mkdir(full, 0700) == -1)
			return sys(t, full);
		return SNAP_OK;
	case A_CHMOD:
		if (snap_fs_chmod(full, x->pub.new_mode & 0777) == -1)
			return sys(t, full);
		return SNAP_OK;
	case A_PUT:
		break;
	}
	/* the temporary was written (and synced) by put_temps */
	if ((rc = temp_path(t, tmp, x->path, k)) != SNAP_OK)
		return rc;
	if (snap_fs_rename(tmp, full) == -1) {
		rc = sys(t, full);
		(void)snap_fs_unlink(tmp);
		return rc;
	}
	CRASH(t);
	return SNAP_OK;
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
		if ((rc = temp_path(t, tmp, x->path, k)) != SNAP_OK)
			return rc;
		if (x->pub.type == SNAP_LINK) {
			(void)snap_fs_unlink(tmp);
			if (snap_fs_symlink(x->new_link, tmp) == -1)
				return sys(t, tmp);
		} else {
			if (snap_join(src, t->stage, x->path) == -1)
				return snap_err(t->err, t->errlen, SNAP_EINVAL,
				    "path too long");
			rc = copy_to(src, tmp, x->pub.new_mode & 0777,
			    x->new_sha, 0);
			if (rc == -1)
				return sys(t, src);
			if (rc == 1) {
				(void)snap_fs_unlink(tmp);
				return snap_err(t->err, t->errlen, SNAP_EINVAL,
				    "%s: changed in the stage since the change "
				    "set was made: compute it again", src);
			}
		}
		CRASH(t);
	}
	if (snap_fs_sync_fs(t->host) == -1)
		return sys(t, t->host);
	return SNAP_OK;
}

static int
tx_open(struct tx *t, const char *tx_dir, const char *host,
    const char *stage, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->dir = tx_dir;
	t->host = host;
	t->stage = stage;
	t->err = err;
	t->errlen = errlen;
	return SNAP_OK;
}

static void
tx_close(struct tx *t)
{
	snap_fs_close(t->j);
	t->j = NULL;
	free(t->steps);
	t->steps = NULL;
}

static int	recover(struct tx *, enum snap_tx_state *);

int
snap_tx_apply(const char *tx_dir, const char *host_root,
    const char *stage_root, const struct snap_manifest *m,
    const struct snap_changes *c, char *err, size_t errlen)
{
	struct tx			 t;
	char				 path[SNAP_PATH_MAX];
	const struct snap_ment		*e;
	const struct snap_chg		*x;
	struct snap_stat		 st;
	size_t				 i, k;
	int				 rc, rc2, temps = 0;
	enum snap_tx_state		 state;
	char				 err2[512];

	tx_open(&t, tx_dir, host_root, stage_root, err, errlen);
	t.c = c;
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
	if (snap_fs_lstat(tx_dir, &st) == 0 || errno != ENOENT)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: exists already "
		    "(a transaction is made in a new folder)", tx_dir);
	if ((rc = plan(&t)) != SNAP_OK)
		return rc;
	if (snap_fs_mkdir(tx_dir, 0700) == -1) {
		rc = sys(&t, tx_dir);
		goto out;
	}
	if (snap_join(path, tx_dir, "changes") == -1 ||
	    (rc = snap_changes_save(c, path, err, errlen)) != SNAP_OK)
		goto out;
	if (snap_join(path, tx_dir, "backup") == -1 ||
	    snap_fs_mkdir(path, 0700) == -1) {
		rc = sys(&t, path);
		goto out;
	}
	if (snap_join(path, tx_dir, "journal") == -1 ||
	    (t.j = snap_fs_create(path, 0600)) == NULL ||
	    snap_fs_fsync_dir(tx_dir) == -1) {
		rc = sys(&t, path);
		goto out;
	}
	if ((rc = jrec(&t, "%s", JOURNAL_HEAD)) != SNAP_OK ||
	    (rc = jrec(&t, "intent %s %zu", c->digest, t.nsteps)) != SNAP_OK)
		goto out;
	if (crash()) {
		rc = snap_err(err, errlen, SNAP_ECRASH, "crash point");
		goto out;
	}
	/* 1, 2: every target checked, the backups made */
	for (i = 0; i < c->n; i++) {
		x = &c->v[i];
		if (x->pub.kind == SNAP_SKIP)
			continue;
		rc = check_one(&t, i, x->pub.type == SNAP_FILE &&
		    (x->pub.kind == SNAP_MODIFY || x->pub.kind == SNAP_DELETE));
		if (rc == SNAP_ECONFLICT) {
			struct buf	b;

			/* nothing was written: settled at once */
			buf_init(&b, SNAP_LINE_MAX - 16, 0);
			snap_enc(&b, x->path);
			if (!b.failed)
				(void)jrec(&t, "conflict %s", b.p);
			buf_free(&b);
			(void)jrec(&t, "rolledback");
			goto out;
		}
		if (rc != SNAP_OK && rc != SNAP_ECRASH) {
			/* no host write yet either */
			(void)jrec(&t, "rolledback");
			goto out;
		}
		if (rc != SNAP_OK)
			goto out;
	}
	/* every backup durable at once */
	if (snap_join(path, tx_dir, "backup") == -1 ||
	    snap_fs_sync_fs(path) == -1 || snap_fs_fsync_dir(path) == -1) {
		rc = sys(&t, path);
		goto out;
	}
	if ((rc = jrec(&t, "ready")) != SNAP_OK)
		goto out;
	if (crash()) {
		rc = snap_err(err, errlen, SNAP_ECRASH, "crash point");
		goto out;
	}
	/* 3: the steps; the new contents written and synced before the
	 * first rename; everything synced before "done" */
	for (k = 0; k < t.nsteps; k++) {
		if (t.steps[k].a == A_PUT && !temps) {
			temps = 1;
			if ((rc = put_temps(&t)) != SNAP_OK)
				break;
		}
		if ((rc = do_step(&t, k)) != SNAP_OK)
			break;
		if (crash()) {
			rc = snap_err(err, errlen, SNAP_ECRASH, "crash point");
			goto out;
		}
	}
	if (rc == SNAP_OK && snap_fs_sync_fs(host_root) == -1)
		rc = sys(&t, host_root);
	if (rc == SNAP_OK)
		rc = jrec(&t, "done");
	if (rc == SNAP_ECRASH)
		goto out;
	if (rc != SNAP_OK) {
		/* undo what was done; the first error is the one to tell */
		tx_close(&t);
		tx_open(&t, tx_dir, host_root, stage_root, err2, sizeof(err2));
		rc2 = recover(&t, &state);
		if (rc2 != SNAP_OK && err != NULL && errlen > 0) {
			size_t	len = strlen(err);

			snprintf(err + len, errlen - len, "; rolling back "
			    "failed too: %s (run recover)", err2);
		} else if (err != NULL && errlen > 0) {
			size_t	len = strlen(err);

			snprintf(err + len, errlen - len, "; rolled back: "
			    "nothing applied");
		}
		goto out;
	}
	if (crash()) {
		rc = snap_err(err, errlen, SNAP_ECRASH, "crash point");
		goto out;
	}
out:
	tx_close(&t);
	return rc;
}

/* ---------------------------------------------------------------- */
/* The journal read back.                                             */

struct jstate {
	enum snap_tx_state	state;
	char			digest[SNAP_SHA256_HEX + 1];
	size_t			nsteps;
	long			last;	/* the last step announced; -1 */
	int			ready;
};

static int
read_journal(const char *tx_dir, struct jstate *js, char *err,
    size_t errlen)
{
	char		 path[SNAP_PATH_MAX];
	char		*text, *p, *e;
	size_t		 len, lineno = 0;
	uint64_t	 v;

	memset(js, 0, sizeof(*js));
	js->last = -1;
	js->state = SNAP_TX_NONE;
	if (snap_join(path, tx_dir, "journal") == -1)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: path too long",
		    tx_dir);
	if ((text = snap_file_read(path, SNAP_FILE_MAX, &len)) == NULL) {
		if (errno == ENOENT)
			return SNAP_OK;
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", path,
		    strerror(errno));
	}
	/* a torn last record (no newline) was never written */
	for (p = text; (e = strchr(p, '\n')) != NULL; p = e + 1) {
		*e = '\0';
		lineno++;
		if (lineno == 1) {
			if (strcmp(p, JOURNAL_HEAD) != 0)
				goto bad;
		} else if (strncmp(p, "intent ", 7) == 0 && lineno == 2) {
			if (strlen(p) < 7 + SNAP_SHA256_HEX + 2 ||
			    p[7 + SNAP_SHA256_HEX] != ' ')
				goto bad;
			p[7 + SNAP_SHA256_HEX] = '\0';
			if (snap_parse_sha(p + 7, js->digest) == -1 ||
			    snap_parse_u64(p + 8 + SNAP_SHA256_HEX, &v) == -1)
				goto bad;
			js->nsteps = (size_t)v;
			js->state = SNAP_TX_PREPARING;
		} else if (js->state == SNAP_TX_NONE) {
			goto bad;
		} else if (strcmp(p, "ready") == 0 && !js->ready) {
			js->ready = 1;
			js->state = SNAP_TX_APPLYING;
		} else if (strncmp(p, "step ", 5) == 0 && js->ready &&
		    js->state == SNAP_TX_APPLYING) {
			if (snap_parse_u64(p + 5, &v) == -1 ||
			    (long)v != js->last + 1 || v >= js->nsteps)
				goto bad;
			js->last = (long)v;
		} else if (strcmp(p, "done") == 0 &&
		    js->state == SNAP_TX_APPLYING) {
			js->state = SNAP_TX_APPLIED;
		} else if (strncmp(p, "conflict ", 9) == 0 && !js->ready) {
			;
		} else if (strcmp(p, "rolledback") == 0 &&
		    (js->state == SNAP_TX_PREPARING ||
		    js->state == SNAP_TX_APPLYING)) {
			js->state = SNAP_TX_ROLLED_BACK;
		} else
			goto bad;
	}
	free(text);
	return SNAP_OK;
bad:
	free(text);
	return snap_err(err, errlen, SNAP_EINVAL, "%s:%zu: not an aisb "
	    "journal record (a damaged file: restore the files from %s/backup "
	    "by hand)", path, lineno, tx_dir);
}

int
snap_tx_state(const char *tx_dir, enum snap_tx_state *state, char *digest,
    char *err, size_t errlen)
{
	struct jstate	js;
	int		rc;

	*state = SNAP_TX_NONE;
	if (digest != NULL)
		digest[0] = '\0';
	if ((rc = read_journal(tx_dir, &js, err, errlen)) != SNAP_OK)
		return rc;
	*state = js.state;
	if (digest != NULL)
		memcpy(digest, js.digest, sizeof(js.digest));
	return SNAP_OK;
}

int
snap_tx_list(const char *parent,
    int (*fn)(const char *, enum snap_tx_state, const char *, void *),
    void *arg, char *err, size_t errlen)
{
	char			  path[SNAP_PATH_MAX];
	char			  digest[SNAP_SHA256_HEX + 1];
	char			**names;
	struct snap_stat	  st;
	enum snap_tx_state	  state;
	long			  n, i;

	if ((n = snap_list_dir(parent, "", &names)) == -1) {
		if (errno == ENOENT)
			return SNAP_OK;
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", parent,
		    strerror(errno));
	}
	for (i = 0; i < n; i++) {
		if (snap_join(path, parent, names[i]) == -1 ||
		    snap_fs_lstat(path, &st) == -1 || st.type != SNAP_FS_DIR)
			continue;
		if (snap_tx_state(path, &state, digest, NULL, 0) != SNAP_OK) {
			state = SNAP_TX_NONE;
			digest[0] = '\0';
		}
		if (fn(names[i], state, digest, arg) != 0)
			break;
	}
	snap_names_free(names, n);
	return SNAP_OK;
}

/* ---------------------------------------------------------------- */
/* Recovery: roll back every step the journal announced.             */

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

/* Step k's target is as before it or as after it. */
static int
undo_check(struct tx *t, size_t k, long last)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], child[SNAP_PATH_MAX];
	const struct snap_chg	*y;
	struct snap_stat	 st;
	char			**names;
	long			 n, i;
	int			 rc, r;

	if ((rc = host_path(t, full, x->path)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_PUT:
		if (x->pub.type == SNAP_LINK) {
			r = link_is(full, x->new_link, x->old_link);
			if (r == -1)
				return sys(t, full);
			if (r == 0 && x->pub.kind == SNAP_CREATE &&
			    snap_changes_find(t->c, x->path, SNAP_DELETE) !=
			    NULL)
				return SNAP_OK;
			if (r == 0 && !(x->pub.kind == SNAP_CREATE &&
			    (r = absent(full)) == 1))
				return r == -1 ? sys(t, full) : snap_err(t->err,
				    t->errlen, SNAP_ECONFLICT, "%s: changed "
				    "after the transaction wrote it: not "
				    "rolled back (move it away, then recover "
				    "again)", full);
			return SNAP_OK;
		}
		r = file_is(full, x->new_sha, x->pub.kind == SNAP_MODIFY ?
		    x->old_sha : NULL, &st);
		if (r == -1)
			return sys(t, full);
		if (r == 0 && x->pub.kind == SNAP_CREATE &&
		    snap_changes_find(t->c, x->path, SNAP_DELETE) != NULL)
			return SNAP_OK;	/* the old one back: its DELETE's
					   check looks at it */
		if (r == 0 && !(x->pub.kind == SNAP_CREATE &&
		    (r = absent(full)) == 1))
			return r == -1 ? sys(t, full) : snap_err(t->err,
			    t->errlen, SNAP_ECONFLICT, "%s: changed after the "
			    "transaction wrote it: not rolled back (move it "
			    "away, then recover again)", full);
		return SNAP_OK;
	case A_DEL:
		if ((r = absent(full)) == 1)
			return SNAP_OK;
		if (r == -1)
			return sys(t, full);
		if (x->pub.type == SNAP_DIR) {
			if (snap_fs_lstat(full, &st) == 0 &&
			    st.type == SNAP_FS_DIR)
				return SNAP_OK;
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
		if ((r = absent(full)) == 1)
			return SNAP_OK;
		if (r == -1)
			return sys(t, full);
		if (snap_fs_lstat(full, &st) == 0 && st.type != SNAP_FS_DIR &&
		    snap_changes_find(t->c, x->path, SNAP_DELETE) != NULL)
			return SNAP_OK;	/* the old one back (see A_PUT) */
		if (snap_fs_lstat(full, &st) == -1 || st.type != SNAP_FS_DIR)
			return snap_err(t->err, t->errlen, SNAP_ECONFLICT,
			    "%s: not the folder the transaction made: not "
			    "rolled back", full);
		/* only what this transaction made may be in it */
		if ((n = snap_list_dir(t->host, x->path, &names)) == -1)
			return sys(t, full);
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
			return sys(t, full);
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

	if ((rc = temp_path(t, tmp, x->path, k)) != SNAP_OK)
		return rc;
	if (snprintf(bk, sizeof(bk), "%s/backup/%zu", t->dir,
	    t->steps[k].ci) >= (int)sizeof(bk))
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	rc = copy_to(bk, tmp, x->pub.old_mode, x->old_sha, 1);
	if (rc == -1)
		return sys(t, bk);
	if (rc == 1) {
		(void)snap_fs_unlink(tmp);
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: the "
		    "backup does not hold what was backed up: restore %s by "
		    "hand", bk, full);
	}
	if (snap_fs_rename(tmp, full) == -1)
		return sys(t, full);
	return fsync_parent(t, x->path);
}

static int
undo(struct tx *t, size_t k)
{
	const struct snap_chg	*x = &t->c->v[t->steps[k].ci];
	char			 full[SNAP_PATH_MAX], tmp[SNAP_PATH_MAX];
	struct snap_stat	 st;
	int			 rc;

	if ((rc = host_path(t, full, x->path)) != SNAP_OK)
		return rc;
	switch (t->steps[k].a) {
	case A_PUT:
		if ((rc = temp_path(t, tmp, x->path, k)) != SNAP_OK)
			return rc;
		if (snap_fs_unlink(tmp) == -1 && errno != ENOENT &&
		    errno != ENOTDIR)
			return sys(t, tmp);
		if (x->pub.type == SNAP_LINK) {
			if (link_is(full, x->new_link, NULL) != 1)
				return SNAP_OK;
			if (x->pub.kind == SNAP_CREATE) {
				if (snap_fs_unlink(full) == -1)
					return sys(t, full);
				return fsync_parent(t, x->path);
			}
			if (snap_fs_symlink(x->old_link, tmp) == -1 ||
			    snap_fs_rename(tmp, full) == -1)
				return sys(t, full);
			return fsync_parent(t, x->path);
		}
		if (file_is(full, x->new_sha, NULL, &st) != 1)
			return SNAP_OK;
		if (x->pub.kind == SNAP_CREATE) {
			if (snap_fs_unlink(full) == -1)
				return sys(t, full);
			return fsync_parent(t, x->path);
		}
		return restore(t, k, full);
	case A_DEL:
		if (absent(full) != 1)
			return SNAP_OK;
		if (x->pub.type == SNAP_DIR) {
			/* writable until its entries are back: A_DEL's
			 * final pass sets the old mode */
			if (snap_fs_mkdir(full, 0700) == -1)
				return sys(t, full);
			return fsync_parent(t, x->path);
		}
		if (x->pub.type == SNAP_LINK) {
			if (snap_fs_symlink(x->old_link, full) == -1)
				return sys(t, full);
			return fsync_parent(t, x->path);
		}
		return restore(t, k, full);
	case A_MKDIR:
		if (absent(full) == 1 || snap_fs_lstat(full, &st) == -1 ||
		    st.type != SNAP_FS_DIR)
			return SNAP_OK;
		if (snap_fs_rmdir(full) == -1)
			return sys(t, full);
		return fsync_parent(t, x->path);
	case A_CHMOD:
		if (x->pub.kind != SNAP_MODE) {
			/* a folder it made: writable again, so that what
			 * went into it can go */
			if (absent(full) == 1 ||
			    snap_fs_lstat(full, &st) == -1 ||
			    st.type != SNAP_FS_DIR)
				return SNAP_OK;
			if (snap_fs_chmod(full, 0700) == -1)
				return sys(t, full);
			return SNAP_OK;
		}
		if (snap_fs_chmod(full, x->pub.old_mode) == -1)
			return sys(t, full);
		return SNAP_OK;
	}
	return SNAP_OK;
}

static int
recover(struct tx *t, enum snap_tx_state *state)
{
	char		 path[SNAP_PATH_MAX], full[SNAP_PATH_MAX];
	struct jstate	 js;
	struct snap_changes *c = NULL;
	long		 k, last;
	int		 rc;

	if ((rc = read_journal(t->dir, &js, t->err, t->errlen)) != SNAP_OK)
		return rc;
	*state = js.state;
	if (js.state == SNAP_TX_NONE || js.state == SNAP_TX_APPLIED ||
	    js.state == SNAP_TX_ROLLED_BACK)
		return SNAP_OK;
	if (snap_join(path, t->dir, "journal") == -1 ||
	    (t->j = snap_fs_open_append(path)) == NULL)
		return sys(t, path);
	if (js.state == SNAP_TX_PREPARING) {
		/* the host was never written */
		if ((rc = jrec(t, "rolledback")) == SNAP_OK)
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
	if ((rc = plan(t)) != SNAP_OK)
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
		if (crash()) {
			rc = snap_err(t->err, t->errlen, SNAP_ECRASH,
			    "crash point");
			goto out;
		}
	}
	/* folders made again get their old mode, deepest first */
	for (k = 0; k <= last; k++) {
		const struct snap_chg	*x = &c->v[t->steps[k].ci];

		if (t->steps[k].a != A_DEL || x->pub.type != SNAP_DIR)
			continue;
		if ((rc = host_path(t, full, x->path)) != SNAP_OK)
			goto out;
		if (snap_fs_chmod(full, x->pub.old_mode) == -1) {
			rc = sys(t, full);
			goto out;
		}
	}
	if ((rc = jrec(t, "rolledback")) != SNAP_OK)
		goto out;
	*state = SNAP_TX_ROLLED_BACK;
	if (crash())
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

	tx_open(&t, tx_dir, host_root, NULL, err, errlen);
	rc = recover(&t, &s);
	tx_close(&t);
	if (state != NULL)
		*state = s;
	return rc;
}
