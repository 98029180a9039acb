/*
 * The change set computed (snap_changes_compute, snap.h): the stage
 * walked and compared with the manifest made when it was staged, within
 * the limits (entries, bytes, depth); then the entries git's rules keep
 * from the host (git.c; docs/snapshot.md, "Exclusions"); then the manifest's
 * new hashes saved.  The change set itself is changes.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

struct walk {
	struct snap_manifest		*m;
	const char			*stage;
	const struct snap_rules		*rules;
	const struct snap_limits	*lim;
	struct snap_changes		*c;
	unsigned char			*seen;	/* per manifest entry */
	uint64_t			 entries, bytes;
	char				*err;
	size_t				 errlen;
};

static int
oom(struct walk *w)
{
	return snap_err(w->err, w->errlen, SNAP_ESYS, "changes: out of "
	    "memory");
}

static int
skip(struct walk *w, const char *rel, int type, const char *prefix,
    const char *why)
{
	struct snap_chg	*x;
	char		 r[256];

	if (prefix != NULL)
		snprintf(r, sizeof(r), "%s: %s", prefix, why);
	else
		snprintf(r, sizeof(r), "%s", why);
	if ((x = snap_changes_add(w->c, SNAP_SKIP, type, rel)) == NULL ||
	    (x->reason = strdup(r)) == NULL)
		return oom(w);
	return SNAP_OK;
}

static int
bounds(struct walk *w, const char *rel)
{
	return snap_bound_entry(w->lim, &w->entries, w->stage, rel,
	    " after the command", "nothing is proposed", w->err, w->errlen);
}

static int	walk_dir(struct walk *, const char *);

static int
file_bounds(struct walk *w, const char *rel, uint64_t size)
{
	if (size > w->lim->file_bytes)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: %"
		    PRIu64 " bytes after the command, over %" PRIu64 " (limit "
		    "file_bytes): nothing is proposed", w->stage, rel, size,
		    w->lim->file_bytes);
	w->bytes += size;
	if (w->bytes > w->lim->bytes)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s: more "
		    "than %" PRIu64 " bytes of files after the command "
		    "(limit bytes): nothing is proposed", w->stage,
		    w->lim->bytes);
	return SNAP_OK;
}

/*
 * The permission bits written back for a stage entry of mode now whose
 * original had old (0 for a new one): the command's, but never write for
 * everyone unless the original had it: a world-writable file or folder
 * in the user's tree lets any local user change it.
 */
static uint32_t
back_mode(uint32_t now, uint32_t old)
{
	return (now & 0777) & ~(0002 & ~old);
}

/* A new entry of the stage (not in the manifest, or of another type). */
static int
created(struct walk *w, const char *rel, const char *full,
    const struct snap_stat *st)
{
	struct snap_chg	*x;
	char		 link[SNAP_LINK_MAX];
	const char	*why;
	int		 rc;

	if ((why = snap_rules_match_file(w->rules, rel, full,
	    st->type == SNAP_FS_DIR)) != NULL)
		return skip(w, rel, st->type == SNAP_FS_DIR ? SNAP_DIR :
		    SNAP_FILE, "excluded", why);
	switch (st->type) {
	case SNAP_FS_OTHER:
		return skip(w, rel, SNAP_SPECIAL, NULL, "special file");
	case SNAP_FS_LINK:
		if (snap_fs_readlink(full, link, sizeof(link)) == -1)
			return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s",
			    full, strerror(errno));
		if (!snap_link_inside(rel, link))
			return skip(w, rel, SNAP_LINK, NULL,
			    "link leaves the tree");
		if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_LINK,
		    rel)) == NULL || (x->new_link = strdup(link)) == NULL)
			return oom(w);
		x->pub.new_mode = 0777;
		x->pub.new_size = strlen(link);
		return SNAP_OK;
	case SNAP_FS_DIR:
		if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_DIR, rel)) ==
		    NULL)
			return oom(w);
		x->pub.new_mode = back_mode(st->mode, 0);
		return walk_dir(w, rel);
	case SNAP_FS_FILE:
		break;
	}
	if ((rc = file_bounds(w, rel, st->size)) != SNAP_OK)
		return rc;
	if ((x = snap_changes_add(w->c, SNAP_CREATE, SNAP_FILE, rel)) == NULL)
		return oom(w);
	if (snap_sha_file(full, x->new_sha, &x->pub.new_size) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	x->pub.new_mode = back_mode(st->mode, 0);
	return SNAP_OK;
}

static void
old_of(struct snap_chg *x, const struct snap_ment *e)
{
	x->pub.old_mode = e->pub.mode;
	x->pub.old_size = e->pub.size;
	memcpy(x->old_sha, e->sha, sizeof(x->old_sha));
}

/* The staged content's hash of file entry e, when it can be known (not
 * hashed at stage time: read from the source now, if unchanged since). */
static int
orig_hash(struct walk *w, struct snap_ment *e, int *known)
{
	int	r;

	*known = 1;
	if (e->pub.type != SNAP_FILE || e->sha[0] != '\0')
		return SNAP_OK;
	if ((r = snap_ment_hash(w->m, e)) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s/%s: %s",
		    w->m->source != NULL ? w->m->source : "?", e->path,
		    strerror(errno));
	*known = r == 0;
	return SNAP_OK;
}

static int
deleted(struct walk *w, struct snap_ment *e)
{
	struct snap_chg	*x;
	int		 rc, known;

	/* unknown (the source changed since): "-", a conflict at apply */
	if ((rc = orig_hash(w, e, &known)) != SNAP_OK)
		return rc;
	if ((x = snap_changes_add(w->c, SNAP_DELETE, e->pub.type,
	    e->path)) == NULL ||
	    (e->link != NULL && (x->old_link = strdup(e->link)) == NULL))
		return oom(w);
	old_of(x, e);
	return SNAP_OK;
}

static int
entry(struct walk *w, const char *rel)
{
	char			 full[SNAP_PATH_MAX], link[SNAP_LINK_MAX];
	char			 sha[SNAP_SHA256_HEX + 1];
	struct snap_stat	 st;
	struct snap_ment	*e;
	struct snap_chg		*x;
	const char		*why;
	uint64_t		 size;
	int			 rc, known, type;

	if ((rc = bounds(w, rel)) != SNAP_OK)
		return rc;
	if (snap_join(full, w->stage, rel) == -1)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: path "
		    "too long", w->stage, rel);
	if (snap_fs_lstat(full, &st) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	if ((e = snap_manifest_find(w->m, rel)) == NULL)
		return created(w, rel, full, &st);
	w->seen[e - w->m->v] = 1;
	if (e->excluded != NULL) {
		if (strcmp(e->excluded, "sanitized copy") == 0 &&
		    st.type == SNAP_FS_FILE && st.dev == e->stg.dev &&
		    st.ino == e->stg.ino && st.size == e->stg.size &&
		    st.mtime_ns == e->stg.mtime_ns &&
		    st.ctime_ns == e->stg.ctime_ns)
			return SNAP_OK;
		return skip(w, rel, e->pub.type, "excluded", e->excluded);
	}
	type = st.type == SNAP_FS_FILE ? SNAP_FILE : st.type == SNAP_FS_DIR ?
	    SNAP_DIR : st.type == SNAP_FS_LINK ? SNAP_LINK : SNAP_SPECIAL;
	if (type != (int)e->pub.type) {
		/* another type at the same path: the old one goes, the new
		 * one comes (a folder's entries go through the "not seen"
		 * pass) */
		if ((rc = deleted(w, e)) != SNAP_OK)
			return rc;
		return created(w, rel, full, &st);
	}
	switch (type) {
	case SNAP_DIR:
		if (back_mode(st.mode, e->pub.mode) != e->pub.mode) {
			if ((x = snap_changes_add(w->c, SNAP_MODE, SNAP_DIR,
			    rel)) == NULL)
				return oom(w);
			old_of(x, e);
			x->pub.new_mode = back_mode(st.mode, e->pub.mode);
		}
		return walk_dir(w, rel);
	case SNAP_LINK:
		if (snap_fs_readlink(full, link, sizeof(link)) == -1)
			return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s",
			    full, strerror(errno));
		if (strcmp(link, e->link) == 0)
			return SNAP_OK;
		if (!snap_link_inside(rel, link))
			return skip(w, rel, SNAP_LINK, NULL,
			    "link leaves the tree");
		if ((x = snap_changes_add(w->c, SNAP_MODIFY, SNAP_LINK,
		    rel)) == NULL || (x->old_link = strdup(e->link)) == NULL ||
		    (x->new_link = strdup(link)) == NULL)
			return oom(w);
		old_of(x, e);
		x->pub.new_mode = 0777;
		x->pub.new_size = strlen(link);
		return SNAP_OK;
	case SNAP_FILE:
		break;
	default:
		return skip(w, rel, SNAP_SPECIAL, NULL, "special file");
	}
	if ((rc = file_bounds(w, rel, st.size)) != SNAP_OK)
		return rc;
	/* the stage copy's identity unchanged: its content is too (a mode
	 * change moves the ctime) */
	if (snap_ident_is(&st, &e->stg) &&
	    back_mode(st.mode, e->pub.mode) == e->pub.mode)
		return SNAP_OK;
	if (snap_sha_file(full, sha, &size) == -1)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	/* the original's hash: from the manifest, else from the source if
	 * it is as staged; unknown, the file is proposed as modified with
	 * an unknown old side, which apply refuses as a conflict */
	if ((rc = orig_hash(w, e, &known)) != SNAP_OK)
		return rc;
	if (known && strcmp(sha, e->sha) == 0 &&
	    back_mode(st.mode, e->pub.mode) == e->pub.mode)
		return SNAP_OK;
	/* a change to a file the content rules now match is not taken */
	if ((why = snap_rules_match_file(w->rules, rel, full, 0)) != NULL)
		return skip(w, rel, SNAP_FILE, "excluded", why);
	if ((x = snap_changes_add(w->c, !known || strcmp(sha, e->sha) != 0 ?
	    SNAP_MODIFY : SNAP_MODE, SNAP_FILE, rel)) == NULL)
		return oom(w);
	old_of(x, e);
	x->pub.new_mode = back_mode(st.mode, e->pub.mode);
	x->pub.new_size = st.size;
	memcpy(x->new_sha, sha, sizeof(sha));
	return SNAP_OK;
}

static int
walk_dir(struct walk *w, const char *rel)
{
	char	 child[SNAP_PATH_MAX];
	char	**names;
	long	 n, i;
	int	 rc = SNAP_OK, len;

	if ((n = snap_list_dir(w->stage, rel, &names)) == -1)
		return snap_err(w->err, w->errlen, errno == EFBIG ?
		    SNAP_EBOUND : SNAP_ESYS, "%s/%s: %s", w->stage, rel,
		    errno == EFBIG ? "too many names in one folder" :
		    strerror(errno));
	for (i = 0; i < n && rc == SNAP_OK; i++) {
		len = rel[0] == '\0' ?
		    snprintf(child, sizeof(child), "%s", names[i]) :
		    snprintf(child, sizeof(child), "%s/%s", rel, names[i]);
		if (len < 0 || (size_t)len >= SNAP_REL_MAX) {
			rc = snap_err(w->err, w->errlen, SNAP_EBOUND, "%s/%s: "
			    "a path too long after the command (limit "
			    "path_len): nothing is proposed", w->stage, rel);
			break;
		}
		rc = entry(w, child);
	}
	snap_names_free(names, n);
	return rc;
}

/* Folder deletes over excluded entries cannot happen on the host: the
 * folder and the folders above it stay (SKIP). */
static int
hold_excluded(const struct snap_manifest *m, size_t i)
{
	size_t	len = strlen(m->v[i].path), lo = i + 1, hi = m->n, mid, j;

	/* the entries under "path/" are one run, but not right after path:
	 * "path-x" and "path.x" sort between (both below '/') */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strncmp(m->v[mid].path, m->v[i].path, len) < 0 ||
		    (strncmp(m->v[mid].path, m->v[i].path, len) == 0 &&
		    (unsigned char)m->v[mid].path[len] < '/'))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < m->n; j++) {
		if (strncmp(m->v[j].path, m->v[i].path, len) != 0 ||
		    m->v[j].path[len] != '/')
			break;
		if (m->v[j].excluded != NULL)
			return 1;
	}
	return 0;
}

/* ---- git's metadata on the way back ------------------------------------ */

int
snap_changes_compute(struct snap_manifest *m, const char *stage_root,
    const struct snap_rules *rules, const struct snap_limits *lim,
    struct snap_changes **out, char *err, size_t errlen)
{
	struct walk	 w;
	size_t		 i;
	int		 rc;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.m = m;
	w.stage = stage_root;
	w.rules = rules;
	w.lim = lim;
	w.err = err;
	w.errlen = errlen;
	if ((w.c = calloc(1, sizeof(*w.c))) == NULL ||
	    (w.seen = calloc(m->n + 1, 1)) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "changes: out of memory");
		goto fail;
	}
	if ((rc = walk_dir(&w, "")) != SNAP_OK)
		goto fail;
	for (i = 0; i < m->n; i++) {
		if (w.seen[i])
			continue;
		if (m->v[i].excluded != NULL) {
			if (strcmp(m->v[i].excluded, "sanitized copy") == 0 &&
			    (rc = skip(&w, m->v[i].path, SNAP_FILE,
			    "excluded", m->v[i].excluded)) != SNAP_OK)
				goto fail;
			continue;
		}
		if (m->v[i].pub.type == SNAP_DIR && hold_excluded(m, i))
			rc = skip(&w, m->v[i].path, SNAP_DIR, NULL,
			    "folder holds excluded entries: kept");
		else
			rc = deleted(&w, &m->v[i]);
		if (rc != SNAP_OK)
			goto fail;
	}
	if ((rc = snap_git_pass(w.c, m, stage_root, rules, err, errlen)) !=
	    SNAP_OK)
		goto fail;
	/* the hashes found, kept: the same change set (digest) later,
	 * whatever the host does meanwhile */
	if (m->dirty && m->file != NULL &&
	    (rc = snap_manifest_save(m, m->file, err, errlen)) != SNAP_OK)
		goto fail;
	if (snap_changes_finish(w.c) == -1) {
		rc = snap_err(err, errlen, SNAP_EBOUND, "changes: the change "
		    "set is over %zu bytes: nothing is proposed",
		    SNAP_FILE_MAX);
		goto fail;
	}
	free(w.seen);
	*out = w.c;
	return SNAP_OK;
fail:
	free(w.seen);
	snap_changes_free(w.c);
	return rc;
}
