/*
 * The manifest: what the source tree held when it was staged, entry by
 * entry, in memory and as a text file (docs/snapshot.md, "Manifest").
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

#define MANIFEST_HEAD	"aisb-snap-manifest 2"
#define MANIFEST_HEAD1	"aisb-snap-manifest 1"	/* read: all hashed, no source */
#define MANIFEST_TOKENS	17

struct snap_manifest *
snap_manifest_new(void)
{
	return calloc(1, sizeof(struct snap_manifest));
}

void
snap_manifest_free(struct snap_manifest *m)
{
	size_t	i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].link);
		free(m->v[i].excluded);
	}
	free(m->v);
	free(m->source);
	free(m->file);
	free(m);
}

int
snap_ment_hash(struct snap_manifest *m, struct snap_ment *e)
{
	char			 full[SNAP_PATH_MAX], hex[SNAP_SHA256_HEX + 1];
	struct snap_stat	 st;
	uint64_t		 size;

	if (e->sha[0] != '\0')
		return 0;
	if (m->source == NULL || e->pub.type != SNAP_FILE) {
		errno = EINVAL;
		return -1;
	}
	if (snap_join(full, m->source, e->path) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* unchanged since staging, before and after the read: then it
	 * held the staged content all along */
	if (snap_fs_lstat(full, &st) == -1)
		return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
	if (!snap_ident_is(&st, &e->src))
		return 1;
	if (snap_sha_file(full, hex, &size) == -1)
		return errno == ENOENT || errno == ELOOP ? 1 : -1;
	if (snap_fs_lstat(full, &st) == -1)
		return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
	if (!snap_ident_is(&st, &e->src) || size != e->src.size)
		return 1;
	memcpy(e->sha, hex, sizeof(e->sha));
	m->dirty = 1;
	return 0;
}

int
snap_ident_is(const struct snap_stat *st, const struct snap_ident *id)
{
	return st->type == SNAP_FS_FILE && st->dev == id->dev &&
	    st->ino == id->ino && st->size == id->size &&
	    st->mtime_ns == id->mtime_ns && st->ctime_ns == id->ctime_ns;
}

struct snap_ment *
snap_manifest_add(struct snap_manifest *m, const char *path)
{
	struct snap_ment	*nv, *e;
	size_t			 ncap;

	if (m->n == m->cap) {
		ncap = m->cap == 0 ? 256 : m->cap * 2;
		if ((nv = realloc(m->v, ncap * sizeof(*nv))) == NULL)
			return NULL;
		m->v = nv;
		m->cap = ncap;
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	if ((e->path = strdup(path)) == NULL)
		return NULL;
	m->n++;
	return e;
}

void
snap_ment_publish(struct snap_ment *e)
{
	e->pub.path = e->path;
	e->pub.link = e->link;
	e->pub.excluded = e->excluded;
	e->pub.sha256 = e->sha;
}

static int
cmp_ment(const void *a, const void *b)
{
	return strcmp(((const struct snap_ment *)a)->path,
	    ((const struct snap_ment *)b)->path);
}

void
snap_manifest_sort(struct snap_manifest *m)
{
	size_t	i;

	if (m->n > 1)
		qsort(m->v, m->n, sizeof(m->v[0]), cmp_ment);
	memset(&m->stats, 0, sizeof(m->stats) - sizeof(m->stats.cloned));
	for (i = 0; i < m->n; i++) {
		snap_ment_publish(&m->v[i]);
		m->stats.entries++;
		if (m->v[i].excluded != NULL &&
		    strcmp(m->v[i].excluded, "sanitized copy") != 0) {
			m->stats.excluded++;
			continue;
		}
		switch (m->v[i].pub.type) {
		case SNAP_FILE:
			m->stats.files++;
			m->stats.bytes += m->v[i].pub.size;
			break;
		case SNAP_DIR:
			m->stats.dirs++;
			break;
		case SNAP_LINK:
			m->stats.links++;
			break;
		case SNAP_SPECIAL:
			break;
		}
	}
}

struct snap_ment *
snap_manifest_find(const struct snap_manifest *m, const char *path)
{
	size_t	lo = 0, hi = m->n, mid;
	int	c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(path, m->v[mid].path)) == 0)
			return &m->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t
snap_manifest_count(const struct snap_manifest *m)
{
	return m->n;
}

const struct snap_entry *
snap_manifest_entry(const struct snap_manifest *m, size_t i)
{
	return i < m->n ? &m->v[i].pub : NULL;
}

void
snap_manifest_stats(const struct snap_manifest *m, struct snap_stage_stats *s)
{
	*s = m->stats;
}

const char	snap_type_chars[] = "?fdls";

/* Where m lives from now on: snap_changes_compute writes the hashes it
 * finds back there. */
static int
set_file(const struct snap_manifest *cm, const char *path, char *err,
    size_t errlen)
{
	struct snap_manifest	*m = (struct snap_manifest *)cm;
	char			*p;

	if (m->file != NULL && strcmp(m->file, path) == 0) {
		m->dirty = 0;
		return SNAP_OK;
	}
	if ((p = strdup(path)) == NULL)
		return snap_err(err, errlen, SNAP_ESYS, "out of memory");
	free(m->file);
	m->file = p;
	m->dirty = 0;
	return SNAP_OK;
}

int
snap_manifest_save(const struct snap_manifest *m, const char *path,
    char *err, size_t errlen)
{
	const struct snap_ment	*e;
	struct buf		 b;
	size_t			 i;
	int			 rc;

	buf_init(&b, SNAP_FILE_MAX, 0);
	buf_printf(&b, "%s\ncloned %" PRIu64 "\nsource ", MANIFEST_HEAD,
	    m->stats.cloned);
	snap_enc(&b, m->source);
	buf_add(&b, "\n", 1);
	for (i = 0; i < m->n && !b.failed; i++) {
		e = &m->v[i];
		buf_printf(&b, "%c %o %" PRIu64 " %s", snap_type_chars[e->pub.type],
		    e->pub.mode, e->pub.size, e->sha[0] != '\0' ? e->sha : "-");
		buf_printf(&b, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64
		    " %" PRId64, e->src.dev, e->src.ino, e->src.size,
		    e->src.mtime_ns, e->src.ctime_ns);
		buf_printf(&b, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64
		    " %" PRId64 " ", e->stg.dev, e->stg.ino, e->stg.size,
		    e->stg.mtime_ns, e->stg.ctime_ns);
		snap_enc(&b, e->excluded);
		buf_add(&b, " ", 1);
		snap_enc(&b, e->path);
		buf_add(&b, " ", 1);
		snap_enc(&b, e->link);
		buf_add(&b, "\n", 1);
	}
	buf_printf(&b, "end %zu\n", m->n);
	if (b.failed) {
		buf_free(&b);
		return snap_err(err, errlen, SNAP_EBOUND, "%s: the manifest "
		    "is over %zu bytes (limit entries lower)", path,
		    SNAP_FILE_MAX);
	}
	rc = snap_file_write(path, b.p, b.len);
	buf_free(&b);
	if (rc == -1)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", path,
		    strerror(errno));
	return set_file(m, path, err, errlen);
}

static int
num_u64(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

static int
num_i64(const char *s, int64_t *out)
{
	char		*end;
	long long	 v;

	if (*s != '-' && (*s < '0' || *s > '9'))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

static int
num_mode(const char *s, uint32_t *out)
{
	char		*end;
	unsigned long	 v;

	if (*s < '0' || *s > '7')
		return -1;
	v = strtoul(s, &end, 8);
	if (*end != '\0' || v > 07777)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
is_hex64(const char *s)
{
	size_t	i;

	for (i = 0; i < SNAP_SHA256_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

int
snap_parse_u64(const char *s, uint64_t *out)
{
	return num_u64(s, out);
}

int
snap_parse_mode(const char *s, uint32_t *out)
{
	return num_mode(s, out);
}

/* "-" -> "", else 64 lower-case hex digits. */
int
snap_parse_sha(const char *s, char *out)
{
	if (strcmp(s, "-") == 0) {
		out[0] = '\0';
		return 0;
	}
	if (!is_hex64(s))
		return -1;
	memcpy(out, s, SNAP_SHA256_HEX + 1);
	return 0;
}

int
snap_parse_type(const char *s)
{
	const char	*p;

	if (s[0] == '\0' || s[1] != '\0' || s[0] == '?' ||
	    (p = strchr(snap_type_chars, s[0])) == NULL)
		return -1;
	return (int)(p - snap_type_chars);
}

static int
parse_line(struct snap_manifest *m, char *line)
{
	char			*t[MANIFEST_TOKENS], *path, *link, *excl;
	struct snap_ment	*e;
	int			 type;

	if (snap_split(line, t, MANIFEST_TOKENS) != MANIFEST_TOKENS)
		return -1;
	if ((type = snap_parse_type(t[0])) == -1)
		return -1;
	if (snap_dec(t[14], &excl) == -1 || snap_dec(t[15], &path) == -1 ||
	    path == NULL || snap_dec(t[16], &link) == -1 ||
	    !snap_path_ok(path) || strlen(path) >= SNAP_REL_MAX)
		return -1;
	/* a staged link has its target; an excluded one is not read */
	if (excl == NULL && (type == SNAP_LINK) != (link != NULL))
		return -1;
	if ((e = snap_manifest_add(m, path)) == NULL)
		return -2;
	e->pub.type = (enum snap_type)type;
	if (num_mode(t[1], &e->pub.mode) == -1 ||
	    num_u64(t[2], &e->pub.size) == -1 ||
	    snap_parse_sha(t[3], e->sha) == -1 ||
	    num_u64(t[4], &e->src.dev) == -1 ||
	    num_u64(t[5], &e->src.ino) == -1 ||
	    num_u64(t[6], &e->src.size) == -1 ||
	    num_i64(t[7], &e->src.mtime_ns) == -1 ||
	    num_i64(t[8], &e->src.ctime_ns) == -1 ||
	    num_u64(t[9], &e->stg.dev) == -1 ||
	    num_u64(t[10], &e->stg.ino) == -1 ||
	    num_u64(t[11], &e->stg.size) == -1 ||
	    num_i64(t[12], &e->stg.mtime_ns) == -1 ||
	    num_i64(t[13], &e->stg.ctime_ns) == -1)
		return -1;
	if (type == SNAP_FILE && excl == NULL && e->sha[0] == '\0' &&
	    m->source == NULL)
		return -1;	/* version 1: every file hashed */
	if ((link != NULL && (e->link = strdup(link)) == NULL) ||
	    (excl != NULL && (e->excluded = strdup(excl)) == NULL))
		return -2;
	return 0;
}

int
snap_manifest_load(const char *path, struct snap_manifest **out,
    char *err, size_t errlen)
{
	struct snap_manifest	*m = NULL;
	char			*text, *p, *e;
	size_t			 len, lineno = 0, i;
	uint64_t		 n;
	char			*src;
	int			 rc, ended = 0, v1 = 0;

	*out = NULL;
	if ((text = snap_file_read(path, SNAP_FILE_MAX, &len)) == NULL)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", path,
		    errno == EFBIG ? "larger than 256 MiB" : strerror(errno));
	if ((m = snap_manifest_new()) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s: out of memory",
		    path);
		goto fail;
	}
	for (p = text; *p != '\0'; p = e + 1) {
		lineno++;
		if ((e = strchr(p, '\n')) == NULL || (size_t)(e - p) >=
		    SNAP_LINE_MAX || ended)
			goto bad;
		*e = '\0';
		if (lineno == 1) {
			if (strcmp(p, MANIFEST_HEAD1) == 0)
				v1 = 1;
			else if (strcmp(p, MANIFEST_HEAD) != 0)
				goto bad;
		} else if (lineno == 2) {
			if (strncmp(p, "cloned ", 7) != 0 ||
			    num_u64(p + 7, &m->stats.cloned) == -1)
				goto bad;
		} else if (lineno == 3 && !v1) {
			/* the source tree: a path, bounded by the line */
			if (strncmp(p, "source ", 7) != 0 ||
			    snap_dec(p + 7, &src) == -1 ||
			    (src != NULL && (m->source = strdup(src)) == NULL))
				goto bad;
		} else if (strncmp(p, "end ", 4) == 0) {
			if (num_u64(p + 4, &n) == -1 || n != m->n)
				goto bad;
			ended = 1;
		} else if ((rc = parse_line(m, p)) != 0) {
			if (rc == -2) {
				rc = snap_err(err, errlen, SNAP_ESYS,
				    "%s: out of memory", path);
				goto fail;
			}
			goto bad;
		}
	}
	if (!ended) {
		lineno++;
		goto bad;
	}
	snap_manifest_sort(m);
	for (i = 1; i < m->n; i++)
		if (strcmp(m->v[i - 1].path, m->v[i].path) == 0) {
			lineno = 0;
			goto bad;
		}
	free(text);
	if ((rc = set_file(m, path, err, errlen)) != SNAP_OK)
		goto fail0;
	*out = m;
	return SNAP_OK;
bad:
	rc = snap_err(err, errlen, SNAP_EINVAL, "%s:%zu: not an aisb "
	    "manifest line (a damaged or foreign file: discard the session's "
	    "draft)", path, lineno);
fail:
	free(text);
fail0:
	snap_manifest_free(m);
	return rc;
}
