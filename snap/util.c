/*
 * Small helpers of libaisbsnap: messages, paths, the token encoding of
 * its text formats, whole-file reads and atomic writes through fs.h.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hex.h"
#include "snap-int.h"

int
snap_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list	ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		(void)vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int
snap_join(char *out, const char *root, const char *rel)
{
	int	n;

	if (rel[0] == '\0')
		n = snprintf(out, SNAP_PATH_MAX, "%s", root);
	else
		n = snprintf(out, SNAP_PATH_MAX, "%s/%s", root, rel);
	if (n < 0 || n >= SNAP_PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

void
snap_dirname(char *out, const char *rel)
{
	const char	*s;
	size_t		 n;

	if ((s = strrchr(rel, '/')) == NULL) {
		out[0] = '\0';
		return;
	}
	n = (size_t)(s - rel);
	if (n >= SNAP_PATH_MAX)
		n = SNAP_PATH_MAX - 1;
	memcpy(out, rel, n);
	out[n] = '\0';
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

int
snap_bound_entry(const struct snap_limits *lim, uint64_t *entries,
    const char *root, const char *rel, const char *when, const char *fix,
    char *err, size_t errlen)
{
	size_t	len = strlen(rel);

	if (++*entries > lim->entries)
		return snap_err(err, errlen, SNAP_EBOUND, "%s: more than %"
		    PRIu64 " entries%s (limit entries): %s", root,
		    lim->entries, when, fix);
	if (len > lim->path_len || len >= SNAP_REL_MAX)
		return snap_err(err, errlen, SNAP_EBOUND, "%s: a path of %zu "
		    "bytes%s, over %zu (limit path_len): %s", root, len, when,
		    lim->path_len, fix);
	if ((size_t)depth_of(rel) > lim->depth)
		return snap_err(err, errlen, SNAP_EBOUND, "%s: a path %d "
		    "folders deep%s, over %zu (limit depth): %s", root,
		    depth_of(rel), when, lim->depth, fix);
	return SNAP_OK;
}

/*
 * Tokens are separated by one space: bytes up to ' ', '%' and DEL are
 * written %XX, and a token that is "-" itself (which stands for none) is
 * written %2D.
 */
void
snap_enc(struct buf *b, const char *s)
{
	const unsigned char	*p;

	if (s == NULL) {
		buf_add(b, "-", 1);
		return;
	}
	if (strcmp(s, "-") == 0) {
		buf_add(b, "%2D", 3);
		return;
	}
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p <= ' ' || *p == '%' || *p == 0x7f)
			buf_printf(b, "%%%02X", *p);
		else
			buf_add(b, p, 1);
	}
}

int
snap_dec(char *s, char **out)
{
	char	*r, *w;
	int	 c;

	if (strcmp(s, "-") == 0) {
		*out = NULL;
		return 0;
	}
	for (r = w = s; *r != '\0'; r++) {
		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		/* %00 would end the string: never written, refused */
		if ((c = hex_byte(r + 1)) <= 0)
			return -1;
		*w++ = (char)c;
		r += 2;
	}
	*w = '\0';
	if (s[0] == '\0')
		return -1;
	*out = s;
	return 0;
}

size_t
snap_split(char *line, char **tok, size_t max)
{
	size_t	 n = 0;
	char	*p = line;

	while (n < max && *p != '\0') {
		tok[n++] = p;
		if ((p = strchr(p, ' ')) == NULL)
			break;
		*p++ = '\0';
	}
	/* more tokens than max: the caller sees max and a leftover */
	if (n == max && p != NULL && *p != '\0')
		return max + 1;
	return n;
}

int
snap_path_ok(const char *rel)
{
	const char	*p = rel, *e;
	size_t		 n;

	if (rel[0] == '\0' || rel[0] == '/')
		return 0;
	for (;;) {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (e == NULL)
			return 1;
		p = e + 1;
	}
}

static char *
read_whole(struct snap_file *f, size_t max, size_t *lenp)
{
	struct snap_stat	 st;
	char			*b = NULL;
	size_t			 len = 0;
	long			 n;
	int			 e;

	if (f == NULL)
		return NULL;
	if (snap_fs_fstat(f, &st) == -1)
		goto fail;
	if (st.size > max) {
		errno = EFBIG;
		goto fail;
	}
	if ((b = malloc((size_t)st.size + 1)) == NULL)
		goto fail;
	/* the size is read once; a file that grows meanwhile is cut there */
	while (len < (size_t)st.size) {
		if ((n = snap_fs_read(f, b + len, (size_t)st.size - len)) == -1)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	b[len] = '\0';
	snap_fs_close(f);
	*lenp = len;
	return b;
fail:
	e = errno;
	free(b);
	snap_fs_close(f);
	errno = e;
	return NULL;
}

char *
snap_file_read(const char *path, size_t max, size_t *lenp)
{
	return read_whole(snap_fs_open_read(path), max, lenp);
}

char *
snap_file_read_follow(const char *path, size_t max, size_t *lenp)
{
	return read_whole(snap_fs_open_follow(path), max, lenp);
}

int
snap_file_write(const char *path, const void *data, size_t len)
{
	char			 tmp[SNAP_PATH_MAX], dir[SNAP_PATH_MAX];
	struct snap_file	*f = NULL;
	char			*s;
	int			 n, e;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	(void)snap_fs_unlink(tmp);	/* a crashed earlier attempt's */
	if ((f = snap_fs_create(tmp, 0600)) == NULL)
		return -1;
	if (snap_fs_write(f, data, len) == -1 || snap_fs_fsync(f) == -1)
		goto fail;
	if (snap_fs_close(f) == -1) {
		f = NULL;
		goto fail;
	}
	f = NULL;
	if (snap_fs_rename(tmp, path) == -1)
		goto fail;
	snprintf(dir, sizeof(dir), "%s", path);
	if ((s = strrchr(dir, '/')) != NULL) {
		if (s == dir)
			s[1] = '\0';
		else
			*s = '\0';
	} else
		snprintf(dir, sizeof(dir), ".");
	return snap_fs_fsync_dir(dir);
fail:
	e = errno;
	snap_fs_close(f);
	(void)snap_fs_unlink(tmp);
	errno = e;
	return -1;
}

int
snap_sha256_hex(const void *p, size_t len, char *hex)
{
	return snap_sha_buf(p, len, hex);
}

int
snap_fs_same(const struct snap_stat *a, const struct snap_stat *b, int flags)
{
	if (a->type != b->type || a->dev != b->dev || a->ino != b->ino)
		return 0;
	if (a->type == SNAP_FS_DIR)
		return 1;
	return a->size == b->size && a->mtime_ns == b->mtime_ns &&
	    (!(flags & SNAP_SAME_CTIME) || a->ctime_ns == b->ctime_ns);
}

int
snap_cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Lexically, from the folder of rel: an absolute target, or one whose
 * ".." climbs above the root, leaves the tree.  A ".." after a name is
 * refused too: "l1/../x" is judged as "x", but the kernel applies ".."
 * to where l1 leads, and l1 may be another link ("sub/l1 -> .." makes
 * "sub/x -> l1/../.ssh" the tree's parent's .ssh).  With ".." only at
 * the front, each link lands below an ancestor of its own folder, so no
 * chain of links judged here can leave the tree.
 */
int
snap_link_inside(const char *rel, const char *target)
{
	const char	*p, *e;
	size_t		 depth = 0, n;
	int		 named = 0;

	if (target[0] == '\0' || target[0] == '/' || target[0] == '\\')
		return 0;
	for (p = rel; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	for (p = target; ; p = e + 1) {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (depth == 0 || named)
				return 0;
			depth--;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			depth++;
			named = 1;
		}
		if (e == NULL)
			return 1;
	}
}

/*
 * The file's SHA-256 (hex) and size, read through snap/fs.h: one body for
 * both hosts (hash.c and hash_win32.c give the digest).
 */
int
snap_sha_file(const char *path, char *hex, uint64_t *size)
{
	unsigned char		 b[1 << 16];
	struct snap_file	*f;
	struct snap_sha		*s;
	uint64_t		 total = 0;
	long			 n;
	int			 e;

	if ((f = snap_fs_open_read(path)) == NULL)
		return -1;
	if ((s = snap_sha_new()) == NULL) {
		snap_fs_close(f);
		return -1;
	}
	while ((n = snap_fs_read(f, b, sizeof(b))) > 0) {
		if (snap_sha_update(s, b, (size_t)n) == -1)
			break;
		total += (uint64_t)n;
	}
	if (n != 0) {
		e = errno;
		snap_sha_free(s);
		snap_fs_close(f);
		errno = e;
		return -1;
	}
	snap_fs_close(f);
	if (size != NULL)
		*size = total;
	return snap_sha_final(s, hex);
}

/* ASCII case-insensitive equality of n bytes of a with b (NUL-ended). */
static int
name_is(const char *a, size_t n, const char *b)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (b[i] == '\0' || ((a[i] | 0x20) != (b[i] | 0x20) &&
		    a[i] != b[i]))
			return 0;
	}
	return b[n] == '\0';
}

const char *
snap_win_name_bad(const char *rel)
{
	static const char *const dev[] = { "con", "prn", "aux", "nul",
	    "conin$", "conout$", "clock$", NULL };
	const char	*c = rel, *e, *dot;
	size_t		 n, stem, i;

	for (;; c = e + 1) {
		e = strchr(c, '/');
		n = e != NULL ? (size_t)(e - c) : strlen(c);
		if (n > 0 && (c[n - 1] == '.' || c[n - 1] == ' '))
			return "a name Windows reads as another (a trailing "
			    "dot or space)";
		for (i = 0; i < n; i++)
			if (strchr("<>:\"|?*\\", c[i]) != NULL ||
			    (unsigned char)c[i] < 0x20)
				return "a name Windows reads as another (':' "
				    "names a stream; <>\"|?*\\ and control "
				    "characters)";
		/* a device name, with any extension: NUL.txt is NUL */
		dot = memchr(c, '.', n);
		stem = dot != NULL ? (size_t)(dot - c) : n;
		while (stem > 0 && c[stem - 1] == ' ')
			stem--;
		for (i = 0; dev[i] != NULL; i++)
			if (name_is(c, stem, dev[i]))
				return "a Windows device name";
		/* COM0-9 and LPT0-9, and with a superscript 1, 2 or 3
		 * (U+00B9, U+00B2, U+00B3: two bytes in UTF-8) */
		if ((stem == 4 || stem == 5) && (name_is(c, 3, "com") ||
		    name_is(c, 3, "lpt")) && ((stem == 4 && c[3] >= '0' &&
		    c[3] <= '9') || (stem == 5 && (unsigned char)c[3] == 0xc2 &&
		    ((unsigned char)c[4] == 0xb9 || (unsigned char)c[4] == 0xb2 ||
		    (unsigned char)c[4] == 0xb3))))
			return "a Windows device name";
		/* an 8.3 short name ("GIT~1" may be ".git" on the host's
		 * volume): what git's core.protectNTFS refuses too */
		for (i = 0; i + 1 < n; i++)
			if (c[i] == '~' && c[i + 1] >= '0' && c[i + 1] <= '9')
				return "a Windows short (8.3) name, which may "
				    "be another name's";
		if (e == NULL)
			return NULL;
	}
}
