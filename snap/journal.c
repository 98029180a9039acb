/*
 * What a transaction's write-back (tx.c) and roll-back (recover.c) share
 * (tx-int.h): the step list a change set makes, the journal written one
 * fsync'd record at a time and read back (its state, the transactions of
 * a folder), host paths, copies checked by their hash, and the crash hook
 * of the unit tests (snap-test.h).  The journal's format is tx.c's
 * comment.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"
#include "snap-test.h"
#include "tx-int.h"

#define COPY_CHUNK	(256 * 1024)

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

int
snap_tx_crash(void)
{
	crash_passed++;
	if (hook_left > 0 && --hook_left == 0 && hook_fn != NULL)
		hook_fn(hook_arg);
	if (crash_left == 0)
		return 0;
	return --crash_left == 0;
}

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
/* What the write-back and the roll-back share.                       */

int
snap_tx_sys(struct tx *t, const char *path)
{
	return snap_err(t->err, t->errlen, SNAP_ESYS, "%s: %s", path,
	    strerror(errno));
}

/* One journal record, durable before the caller goes on. */
int
snap_tx_jrec(struct tx *t, const char *fmt, ...)
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
int
snap_tx_plan(struct tx *t)
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

int
snap_tx_host_path(struct tx *t, char *out, const char *rel)
{
	if (snap_join(out, t->host, rel) == -1)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s/%s: path "
		    "too long", t->host, rel);
	return SNAP_OK;
}

/* The temporary of step k, next to the target: parent/.aisb-tx-D-K and
 * the suffix (TX_NEW, TX_WAS, TX_BACK). */
int
snap_tx_temp_path(struct tx *t, char *out, const char *rel, size_t k,
    const char *suffix)
{
	char	dir[SNAP_PATH_MAX], full[SNAP_PATH_MAX];
	int	n;

	snap_dirname(dir, rel);
	if (snap_join(full, t->host, dir) == -1)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	n = snprintf(out, SNAP_PATH_MAX, "%s/.aisb-tx-%.12s-%zu%s", full,
	    t->c->digest, k, suffix);
	if (n < 0 || n >= SNAP_PATH_MAX)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "path too "
		    "long");
	return SNAP_OK;
}

int
snap_tx_content(struct tx *t, size_t ci, char *out)
{
	const struct snap_chg	*x = &t->c->v[ci], *y;
	int			 n;

	if (t->src_c == NULL) {
		if (snap_join(out, t->stage, x->path) == -1)
			return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s/%s: "
			    "path too long", t->stage, x->path);
		return SNAP_OK;
	}
	/* an undo puts back what the undone transaction replaced or
	 * removed: its backup */
	if (((y = snap_changes_find(t->src_c, x->path, SNAP_MODIFY)) == NULL &&
	    (y = snap_changes_find(t->src_c, x->path, SNAP_DELETE)) == NULL) ||
	    y->pub.type != SNAP_FILE)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: no backup "
		    "of %s in %s", t->dir, x->path, t->src_dir);
	n = snprintf(out, SNAP_PATH_MAX, "%s/backup/%zu", t->src_dir,
	    (size_t)(y - t->src_c->v));
	if (n < 0 || n >= SNAP_PATH_MAX)
		return snap_err(t->err, t->errlen, SNAP_EINVAL, "%s: path too "
		    "long", t->src_dir);
	return SNAP_OK;
}

int
snap_tx_fsync_parent(struct tx *t, const char *rel)
{
	char	dir[SNAP_PATH_MAX], full[SNAP_PATH_MAX];

	snap_dirname(dir, rel);
	if (snap_join(full, t->host, dir) == -1 ||
	    snap_fs_fsync_dir(full) == -1)
		return snap_tx_sys(t, full);
	return SNAP_OK;
}

/*
 * src to a new file dst of mode (dst NULL: src only read and hashed),
 * fsync'd when dosync (else the caller syncs the filesystem once for a
 * batch); its hash must be want (when want is not NULL), and src the same
 * file, unchanged, before its first byte and after its last (then *id,
 * when id is not NULL, is its identity: what the write-back compares the
 * target with again at its own step).  0, -1 (errno), or 1 when the hash
 * differs or src changed while it was read.
 */
int
snap_tx_copy_to(const char *src, const char *dst, uint32_t mode,
    const char *want, int dosync, struct snap_stat *id)
{
	struct snap_file	*in = NULL, *out = NULL;
	struct snap_sha		*h = NULL;
	struct snap_stat	 st0, st1;
	unsigned char		*b = NULL;
	char			 hex[SNAP_SHA256_HEX + 1];
	long			 n;
	int			 e, rc = -1;

	if (dst != NULL)
		(void)snap_fs_unlink(dst);
	if ((b = malloc(COPY_CHUNK)) == NULL ||
	    (in = snap_fs_open_read(src)) == NULL ||
	    snap_fs_fstat(in, &st0) == -1 ||
	    (h = snap_sha_new()) == NULL ||
	    (dst != NULL && (out = snap_fs_create(dst, mode)) == NULL))
		goto fail;
	while ((n = snap_fs_read(in, b, COPY_CHUNK)) > 0)
		if (snap_sha_update(h, b, (size_t)n) == -1 ||
		    (out != NULL && snap_fs_write(out, b, (size_t)n) == -1))
			goto fail;
	if (n == -1 || (dosync && out != NULL && snap_fs_fsync(out) == -1) ||
	    snap_fs_fstat(in, &st1) == -1)
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
	rc = (want != NULL && strcmp(want, hex) != 0) ||
	    !snap_fs_same(&st0, &st1, SNAP_SAME_CTIME) ? 1 : 0;
	if (id != NULL)
		*id = st0;
	snap_fs_close(in);
	free(b);
	return rc;
fail:
	e = errno;
	snap_sha_free(h);
	snap_fs_close(in);
	snap_fs_close(out);
	free(b);
	if (dst != NULL)
		(void)snap_fs_unlink(dst);
	errno = e;
	return -1;
}

int
snap_tx_open(struct tx *t, const char *tx_dir, const char *host,
    const char *stage, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->refused = -1;
	t->dir = tx_dir;
	t->host = host;
	t->stage = stage;
	t->err = err;
	t->errlen = errlen;
	return SNAP_OK;
}

void
snap_tx_close(struct tx *t)
{
	snap_fs_close(t->j);
	t->j = NULL;
	free(t->steps);
	t->steps = NULL;
	free(t->was);
	t->was = NULL;
}

/* ---------------------------------------------------------------- */
/* The journal read back.                                             */

int
snap_tx_read_journal(const char *tx_dir, struct jstate *js, char *err,
    size_t errlen)
{
	char		 path[SNAP_PATH_MAX];
	char		*text, *p, *e;
	size_t		 len, lineno = 0;
	uint64_t	 v;

	memset(js, 0, sizeof(*js));
	js->last = -1;
	js->refused = -1;
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
		} else if (strncmp(p, "refused ", 8) == 0 && js->ready &&
		    js->state == SNAP_TX_APPLYING && js->refused == -1) {
			if (snap_parse_u64(p + 8, &v) == -1 || v >= js->nsteps)
				goto bad;
			js->refused = (long)v;
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
	if ((rc = snap_tx_read_journal(tx_dir, &js, err, errlen)) != SNAP_OK)
		return rc;
	*state = js.state;
	if (digest != NULL)
		memcpy(digest, js.digest, sizeof(js.digest));
	return SNAP_OK;
}

int
snap_tx_wrote(const char *tx_dir)
{
	struct jstate	js;

	if (snap_tx_read_journal(tx_dir, &js, NULL, 0) != SNAP_OK)
		return -1;
	return js.ready;
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
