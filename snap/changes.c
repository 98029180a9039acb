/*
 * The change set (snap.h, docs/snapshot.md "Change set"): its entries in
 * canonical order, its canonical text form and digest, its file saved
 * and loaded.  compare.c computes one from a stage and its manifest.
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

static int
cmp_chg(const void *a, const void *b)
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

void
snap_changes_sort(struct snap_changes *c)
{
	if (c->n > 1)
		qsort(c->v, c->n, sizeof(c->v[0]), cmp_chg);
}

int
snap_changes_finish(struct snap_changes *c)
{
	struct buf	b;
	size_t		i;
	int		rc;

	snap_changes_sort(c);
	for (i = 0; i < c->n; i++)
		publish(&c->v[i]);
	buf_init(&b, SNAP_FILE_MAX, 0);
	rc = snap_changes_text(c, &b);
	buf_free(&b);
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
		if (cmp_chg(&c->v[i - 1], &c->v[i]) >= 0) {
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
