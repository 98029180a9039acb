/*
 * The change set: the stage compared with the manifest made when it was
 * staged; its canonical text form, digest, file (snap.h,
 * docs/snapshot.md "Change set").
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

#define CHANGES_HEAD	"aisb-snap-changes 1"
#define CHANGES_TOKENS	12

static const char	kind_chars[] = "?AMDmS";

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

void
snap_changes_free(struct snap_changes *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].old_link);
		free(c->v[i].new_link);
		free(c->v[i].reason);
	}
	free(c->v);
	free(c);
}

struct snap_chg *
snap_changes_add(struct snap_changes *c, int kind, int type,
    const char *path)
{
	struct snap_chg	*nv, *x;
	size_t		 ncap;

	if (c->n == c->cap) {
		ncap = c->cap == 0 ? 64 : c->cap * 2;
		if ((nv = realloc(c->v, ncap * sizeof(*nv))) == NULL)
			return NULL;
		c->v = nv;
		c->cap = ncap;
	}
	x = &c->v[c->n];
	memset(x, 0, sizeof(*x));
	if ((x->path = strdup(path)) == NULL)
		return NULL;
	x->pub.kind = (enum snap_change_kind)kind;
	x->pub.type = (enum snap_type)type;
	c->n++;
	return x;
}

static void
publish(struct snap_chg *x)
{
	x->pub.path = x->path;
	x->pub.old_link = x->old_link;
	x->pub.new_link = x->new_link;
	x->pub.reason = x->reason;
	x->pub.old_sha256 = x->old_sha;
	x->pub.new_sha256 = x->new_sha;
}

static int
rank(enum snap_change_kind k)
{
	switch (k) {
	case SNAP_DELETE:
		return 0;
	case SNAP_CREATE:
		return 1;
	case SNAP_MODIFY:
		return 2;
	case SNAP_MODE:
		return 3;
	case SNAP_SKIP:
		break;
	}
	return 4;
}

int
snap_cmp_chg(const void *a, const void *b)
{
	const struct snap_chg	*x = a, *y = b;
	int			 c;

	if ((c = strcmp(x->path, y->path)) != 0)
		return c;
	return rank(x->pub.kind) - rank(y->pub.kind);
}

const struct snap_chg *
snap_changes_find(const struct snap_changes *c, const char *path, int kind)
{
	size_t	lo = 0, hi = c->n, mid, i;
	int	r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((r = strcmp(path, c->v[mid].path)) < 0)
			hi = mid;
		else if (r > 0)
			lo = mid + 1;
		else {
			/* at most a few changes share a path */
			while (mid > 0 && strcmp(path, c->v[mid - 1].path) == 0)
				mid--;
			for (i = mid; i < c->n &&
			    strcmp(path, c->v[i].path) == 0; i++)
				if (kind == 0 || (int)c->v[i].pub.kind == kind)
					return &c->v[i];
			return NULL;
		}
	}
	return NULL;
}

size_t
snap_changes_count(const struct snap_changes *c)
{
	return c->n;
}

const struct snap_change *
snap_changes_get(const struct snap_changes *c, size_t i)
{
	return i < c->n ? &c->v[i].pub : NULL;
}

size_t
snap_changes_effective(const struct snap_changes *c)
{
	size_t	i, n = 0;

	for (i = 0; i < c->n; i++)
		if (c->v[i].pub.kind != SNAP_SKIP)
			n++;
	return n;
}

const char *
snap_changes_digest(const struct snap_changes *c)
{
	return c->digest;
}

/* The body, then "digest HEX" of the body; c->digest is set. */
int
snap_changes_text(const struct snap_changes *c, struct buf *b)
{
	const struct snap_chg	*x;
	char			 hex[SNAP_SHA256_HEX + 1];
	size_t			 i;

	buf_printf(b, "%s\n", CHANGES_HEAD);
	for (i = 0; i < c->n; i++) {
		x = &c->v[i];
		buf_printf(b, "%c %c %o %o %" PRIu64 " %" PRIu64 " %s %s ",
		    kind_chars[x->pub.kind], snap_type_chars[x->pub.type],
		    x->pub.old_mode, x->pub.new_mode, x->pub.old_size,
		    x->pub.new_size, x->old_sha[0] != '\0' ? x->old_sha : "-",
		    x->new_sha[0] != '\0' ? x->new_sha : "-");
		snap_enc(b, x->old_link);
		buf_add(b, " ", 1);
		snap_enc(b, x->new_link);
		buf_add(b, " ", 1);
		snap_enc(b, x->reason);
		buf_add(b, " ", 1);
		snap_enc(b, x->path);
		buf_add(b, "\n", 1);
	}
	if (b->failed || snap_sha_buf(b->p, b->len, hex) == -1)
		return -1;
	memcpy(((struct snap_changes *)(uintptr_t)c)->digest, hex,
	    sizeof(hex));
	buf_printf(b, "digest %s\n", hex);
	return b->failed ? -1 : 0;
}

static int
finish(struct snap_changes *c)
{
	struct buf	b;
	size_t		i;
	int		rc;

	if (c->n > 1)
		qsort(c->v, c->n, sizeof(c->v[0]), snap_cmp_chg);
	for (i = 0; i < c->n; i++)
		publish(&c->v[i]);
	buf_init(&b, SNAP_FILE_MAX, 0);
	rc = snap_changes_text(c, &b);
	buf_free(&b);
	return rc;
}

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
depth_of(const char *rel)
{
	int	d = 1;

	for (; *rel != '\0'; rel++)
		if (*rel == '/')
			d++;
	return d;
}

static int
bounds(struct walk *w, const char *rel)
{
	size_t	len = strlen(rel);

	if (++w->entries > w->lim->entries)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s: more "
		    "than %" PRIu64 " entries after the command (limit "
		    "entries): nothing is proposed", w->stage,
		    w->lim->entries);
	if (len > w->lim->path_len || len >= SNAP_REL_MAX)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s: a path "
		    "of %zu bytes after the command, over %zu (limit "
		    "path_len): nothing is proposed", w->stage, len,
		    w->lim->path_len);
	if ((size_t)depth_of(rel) > w->lim->depth)
		return snap_err(w->err, w->errlen, SNAP_EBOUND, "%s: a path "
		    "%d folders deep after the command, over %zu (limit "
		    "depth): nothing is proposed", w->stage, depth_of(rel),
		    w->lim->depth);
	return SNAP_OK;
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
	if (finish(w.c) == -1) {
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

int
snap_changes_save(const struct snap_changes *c, const char *path,
    char *err, size_t errlen)
{
	struct buf	b;
	int		rc;

	buf_init(&b, SNAP_FILE_MAX, 0);
	if (snap_changes_text(c, &b) == -1) {
		buf_free(&b);
		return snap_err(err, errlen, SNAP_EBOUND, "%s: the change set "
		    "is over %zu bytes", path, SNAP_FILE_MAX);
	}
	rc = snap_file_write(path, b.p, b.len);
	buf_free(&b);
	if (rc == -1)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", path,
		    strerror(errno));
	return SNAP_OK;
}

static int
parse_line(struct snap_changes *c, char *line)
{
	char		*t[CHANGES_TOKENS], *ol, *nl, *why, *path;
	const char	*k;
	struct snap_chg	*x;
	int		 type;

	if (snap_split(line, t, CHANGES_TOKENS) != CHANGES_TOKENS)
		return -1;
	if (t[0][0] == '\0' || t[0][1] != '\0' || t[0][0] == '?' ||
	    (k = strchr(kind_chars, t[0][0])) == NULL ||
	    (type = snap_parse_type(t[1])) == -1)
		return -1;
	if (snap_dec(t[8], &ol) == -1 || snap_dec(t[9], &nl) == -1 ||
	    snap_dec(t[10], &why) == -1 || snap_dec(t[11], &path) == -1 ||
	    path == NULL || !snap_path_ok(path) ||
	    strlen(path) >= SNAP_REL_MAX)
		return -1;
	if ((x = snap_changes_add(c, (int)(k - kind_chars), type, path)) ==
	    NULL)
		return -2;
	if (snap_parse_mode(t[2], &x->pub.old_mode) == -1 ||
	    snap_parse_mode(t[3], &x->pub.new_mode) == -1 ||
	    snap_parse_u64(t[4], &x->pub.old_size) == -1 ||
	    snap_parse_u64(t[5], &x->pub.new_size) == -1 ||
	    snap_parse_sha(t[6], x->old_sha) == -1 ||
	    snap_parse_sha(t[7], x->new_sha) == -1)
		return -1;
	if ((ol != NULL && (x->old_link = strdup(ol)) == NULL) ||
	    (nl != NULL && (x->new_link = strdup(nl)) == NULL) ||
	    (why != NULL && (x->reason = strdup(why)) == NULL))
		return -2;
	/* what apply relies on */
	if ((x->pub.kind == SNAP_SKIP) != (why != NULL))
		return -1;
	if (type == SNAP_FILE && x->pub.kind != SNAP_SKIP &&
	    ((x->pub.kind == SNAP_MODE && x->old_sha[0] == '\0') ||
	    (x->pub.kind != SNAP_DELETE && x->new_sha[0] == '\0')))
		return -1;
	if (type == SNAP_LINK && x->pub.kind != SNAP_SKIP &&
	    ((x->pub.kind != SNAP_CREATE && ol == NULL) ||
	    (x->pub.kind != SNAP_DELETE && nl == NULL) ||
	    (nl != NULL && !snap_link_inside(path, nl))))
		return -1;
	if (type == SNAP_SPECIAL && x->pub.kind != SNAP_SKIP)
		return -1;
	return 0;
}

int
snap_changes_load(const char *path, struct snap_changes **out, char *err,
    size_t errlen)
{
	struct snap_changes	*c = NULL;
	char			*text, *p, *e, *body_end;
	char			 hex[SNAP_SHA256_HEX + 1];
	size_t			 len, lineno = 0, i;
	int			 rc;

	*out = NULL;
	if ((text = snap_file_read(path, SNAP_FILE_MAX, &len)) == NULL)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", path,
		    errno == EFBIG ? "larger than 256 MiB" : strerror(errno));
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s: out of memory",
		    path);
		goto fail;
	}
	/* the last line is "digest HEX", of every byte before it */
	if (len < 2 || text[len - 1] != '\n' || strlen(text) != len)
		goto bad;
	text[len - 1] = '\0';
	body_end = (p = strrchr(text, '\n')) != NULL ? p + 1 : text;
	if (strncmp(body_end, "digest ", 7) != 0 ||
	    snap_parse_sha(body_end + 7, c->digest) == -1 ||
	    c->digest[0] == '\0' ||
	    snap_sha_buf(text, (size_t)(body_end - text), hex) == -1)
		goto bad;
	if (strcmp(hex, c->digest) != 0) {
		rc = snap_err(err, errlen, SNAP_EINVAL, "%s: its content does "
		    "not match its digest (damaged or edited): discard it",
		    path);
		goto fail;
	}
	*body_end = '\0';
	for (p = text; *p != '\0'; p = e + 1) {
		lineno++;
		if ((e = strchr(p, '\n')) == NULL || (size_t)(e - p) >=
		    SNAP_LINE_MAX)
			goto bad;
		*e = '\0';
		if (lineno == 1) {
			if (strcmp(p, CHANGES_HEAD) != 0)
				goto bad;
			continue;
		}
		if ((rc = parse_line(c, p)) != 0) {
			if (rc == -2) {
				rc = snap_err(err, errlen, SNAP_ESYS,
				    "%s: out of memory", path);
				goto fail;
			}
			goto bad;
		}
	}
	if (lineno == 0)
		goto bad;
	for (i = 1; i < c->n; i++)
		if (snap_cmp_chg(&c->v[i - 1], &c->v[i]) >= 0) {
			lineno = 0;
			goto bad;
		}
	for (i = 0; i < c->n; i++)
		publish(&c->v[i]);
	free(text);
	*out = c;
	return SNAP_OK;
bad:
	rc = snap_err(err, errlen, SNAP_EINVAL, "%s:%zu: not an aisb change "
	    "set (a damaged or foreign file: discard the draft)", path,
	    lineno);
fail:
	free(text);
	snap_changes_free(c);
	return rc;
}
