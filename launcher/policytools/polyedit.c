/*
 * One allow rule written into the user's policy file (polyedit.h).
 *
 * The file is the user's own text: comments, blank lines, order, quoting
 * and indentation are theirs, and re-serializing the YAML would lose all
 * of it.  So the edit is a text insertion at the one place a reader
 * expects it, the end of the top-level allow: list, indented as that
 * list's items are; then the policy library loads the result, exactly as
 * a session would, and decides the very host and port: only a file that
 * loads and allows them replaces the old one, atomically.  What the edit
 * cannot place (a flow-style list) is refused with what to write by hand.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "policy.h"
#include "policytools/polyaml.h"
#include "policytools/polyedit.h"

#define DIFF_CONTEXT	3

/* The end of the line at off: its '\n', or len. */
static size_t
eol(const char *t, size_t len, size_t off)
{
	const char	*nl = memchr(t + off, '\n', len - off);

	return nl != NULL ? (size_t)(nl - t) : len;
}

/* Leading spaces of the line [off, end). */
static size_t
indent(const char *t, size_t off, size_t end)
{
	size_t	 i = off;

	while (i < end && t[i] == ' ')
		i++;
	return i - off;
}

/* 1 when the line [off, end) is blank or only a comment. */
static int
line_void(const char *t, size_t off, size_t end)
{
	while (off < end && (t[off] == ' ' || t[off] == '\t' ||
	    t[off] == '\r'))
		off++;
	return off == end || t[off] == '#';
}

/* Where the allow: list is, and how its items are indented. */
struct spot {
	size_t	 key;		/* offset of the "allow:" line; len: none */
	size_t	 keyline;	/* its number, 1-based */
	size_t	 at;		/* the entry goes here */
	size_t	 cut, cutlen;	/* "allow: []": the " []" taken out */
	size_t	 dash, col;	/* indentation of "- " and of the keys */
	int	 nl;		/* a '\n' is missing before at */
};

/*
 * The top-level allow: of t and the end of its block list.  0, or -1
 * with err.
 */
static int
find_spot(const char *t, size_t len, struct spot *s, char *err,
    size_t errlen)
{
	size_t	 off, end, r, n, line = 0, last = 0;
	int	 found = 0, item = 0;

	memset(s, 0, sizeof(*s));
	s->key = len;
	s->dash = 2;
	s->col = 4;
	for (off = 0; off < len; off = end + 1) {
		end = eol(t, len, off);
		line++;
		if (end - off < 6 || memcmp(t + off, "allow:", 6) != 0)
			continue;
		if (found++) {
			snprintf(err, errlen, "line %zu: a second allow: key; "
			    "keep one allow: list", line);
			return -1;
		}
		s->key = off;
		s->keyline = line;
		for (r = off + 6; r < end && t[r] == ' '; r++)
			;
		if (r + 2 <= end && t[r] == '[' && t[r + 1] == ']' &&
		    line_void(t, r + 2, end)) {
			s->cut = off + 6;
			s->cutlen = r + 2 - (off + 6);
		} else if (!line_void(t, r, end)) {
			snprintf(err, errlen, "line %zu: the allow: list is "
			    "written in flow style ([...]); aisb adds only to a "
			    "block list (\"- host: NAME\" lines): turn it into "
			    "one, or add the rule by hand", line);
			return -1;
		}
		last = end;
	}
	if (!found) {
		s->at = len;
		s->dash = 2;
		s->nl = len > 0 && t[len - 1] != '\n';
		return 0;
	}
	/* the block: indented lines, "- " lines at column 0, comments */
	for (off = last < len ? last + 1 : len; off < len; off = end + 1) {
		end = eol(t, len, off);
		if (line_void(t, off, end))
			continue;
		n = indent(t, off, end);
		if (n == 0 && !(t[off] == '-' && (off + 1 == end ||
		    t[off + 1] == ' ')))
			break;
		if (!item && t[off + n] == '-') {
			item = 1;
			s->dash = n;
			for (r = off + n + 1; r < end && t[r] == ' '; r++)
				;
			s->col = r - off;
		}
		last = end;
	}
	s->at = last < len ? last + 1 : len;
	s->nl = last == len && len > 0 && t[len - 1] != '\n';
	return 0;
}

/* The lines written: note, then "- host:" (or cidr:) and "ports:". */
static int
entry_text(FILE *f, const struct spot *s, const struct policy_target *t,
    const char *note)
{
	if (note != NULL)
		fprintf(f, "%*s# %s\n", (int)s->dash, "", note);
	fprintf(f, "%*s- %*s%s: ", (int)s->dash, "", (int)(s->col - s->dash -
	    2), "", t->is_ip ? "cidr" : "host");
	launch_yaml_str(f, t->host);
	fprintf(f, "\n%*sports: [%u]\n", (int)s->col, "", (unsigned)t->port);
	return ferror(f) ? -1 : 0;
}

int
launch_policy_add_allow(const char *text, size_t len,
    const struct policy_target *t, const char *note, char **out,
    size_t *outlen, unsigned *line, char *err, size_t errlen)
{
	struct spot	 s;
	FILE		*f;
	size_t		 i;

	*out = NULL;
	*outlen = 0;
	if (note != NULL && strchr(note, '\n') != NULL) {
		snprintf(err, errlen, "the comment holds a line break");
		return -1;
	}
	if (find_spot(text, len, &s, err, errlen) == -1)
		return -1;
	if (s.col < s.dash + 2)
		s.col = s.dash + 2;
	if ((f = open_memstream(out, outlen)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (s.cutlen > 0) {
		fwrite(text, 1, s.cut, f);
		fwrite(text + s.cut + s.cutlen, 1, s.at - s.cut - s.cutlen, f);
	} else
		fwrite(text, 1, s.at, f);
	if (s.nl)
		fputc('\n', f);
	if (s.key == len)
		fputs("allow:\n", f);
	for (*line = 1, i = 0; i < s.at; i++)
		*line += text[i] == '\n';
	*line += s.nl + (s.key == len) + (note != NULL);
	if (entry_text(f, &s, t, note) == -1 ||
	    fwrite(text + s.at, 1, len - s.at, f) != len - s.at ||
	    fclose(f) == EOF) {
		free(*out);
		*out = NULL;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- the diff ---------------------------------------------------------- */

struct lines {
	const char	 *t;
	size_t		 *off;		/* n + 1 starts: the last is the end */
	size_t		  n;
	int		  nonl;		/* the last line lacks its '\n' */
};

static int
lines_split(struct lines *l, const char *t, size_t len)
{
	size_t	 i, k = 0;

	l->t = t;
	l->n = 0;
	for (i = 0; i < len; i++)
		l->n += t[i] == '\n';
	l->nonl = len > 0 && t[len - 1] != '\n';
	l->n += l->nonl;
	if ((l->off = calloc(l->n + 1, sizeof(*l->off))) == NULL)
		return -1;
	for (i = 0; i < len; i++)
		if (t[i] == '\n')
			l->off[++k] = i + 1;
	l->off[l->n] = len;
	return 0;
}

static int
lines_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	size_t	 la = a->off[i + 1] - a->off[i], lb = b->off[j + 1] - b->off[j];

	return la == lb && memcmp(a->t + a->off[i], b->t + b->off[j], la) == 0;
}

static void
put_line(FILE *f, char mark, const struct lines *l, size_t i)
{
	size_t	 n = l->off[i + 1] - l->off[i];

	fputc(mark, f);
	fwrite(l->t + l->off[i], 1, n, f);
	if (i + 1 == l->n && l->nonl)
		fputs("\n\\ No newline at end of file\n", f);
}

void
launch_diff_print(FILE *f, const char *aname, const char *a, size_t alen,
    const char *bname, const char *b, size_t blen)
{
	struct lines	 x, y;
	size_t		 p = 0, s = 0, lo, ahi, bhi, i;

	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	if (lines_split(&x, a, alen) == -1 || lines_split(&y, b, blen) == -1)
		goto out;
	while (p < x.n && p < y.n && lines_eq(&x, p, &y, p))
		p++;
	while (s < x.n - p && s < y.n - p && lines_eq(&x, x.n - 1 - s, &y,
	    y.n - 1 - s))
		s++;
	if (p == x.n && p == y.n)
		goto out;		/* the same text */
	lo = p > DIFF_CONTEXT ? p - DIFF_CONTEXT : 0;
	ahi = x.n - s + (s > DIFF_CONTEXT ? DIFF_CONTEXT : s);
	bhi = y.n - s + (s > DIFF_CONTEXT ? DIFF_CONTEXT : s);
	fprintf(f, "--- %s\n+++ %s\n@@ -%zu,%zu +%zu,%zu @@\n", aname, bname,
	    ahi > lo ? lo + 1 : lo, ahi - lo, bhi > lo ? lo + 1 : lo,
	    bhi - lo);
	for (i = lo; i < p; i++)
		put_line(f, ' ', &x, i);
	for (i = p; i < x.n - s; i++)
		put_line(f, '-', &x, i);
	for (i = p; i < y.n - s; i++)
		put_line(f, '+', &y, i);
	for (i = x.n - s; i < ahi; i++)
		put_line(f, ' ', &x, i);
out:
	free(x.off);
	free(y.off);
}

/* ---- the file ---------------------------------------------------------- */

/*
 * The file locked and read: the lock is on the file itself, taken again
 * when a writer replaced it meanwhile (rename: another inode), so that
 * two approvals never lose one another's rule; the text is read through
 * the locked descriptor, never by name again (a file renamed into place
 * after the check would be read instead).  The descriptor holding the
 * lock, or -1 with err.
 */
static int
read_locked(const char *real, struct stat *st, char **text, size_t *len,
    char *err, size_t errlen)
{
	struct stat	 now;
	int		 fd, tries;

	for (tries = 0; tries < 8; tries++) {
		if ((fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK)) == -1) {
			snprintf(err, errlen, "%s: %s", real, strerror(errno));
			return -1;
		}
		while (flock(fd, LOCK_EX) == -1 && errno == EINTR)
			;
		if (fstat(fd, st) == -1 || lstat(real, &now) == -1) {
			snprintf(err, errlen, "%s: %s", real, strerror(errno));
			close(fd);
			return -1;
		}
		if (st->st_ino == now.st_ino && st->st_dev == now.st_dev)
			break;
		close(fd);
		fd = -1;
	}
	if (fd == -1) {
		snprintf(err, errlen, "%s: replaced while aisb waited for "
		    "it; try again", real);
		return -1;
	}
	if (!S_ISREG(st->st_mode) || st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s: %s", real, !S_ISREG(st->st_mode) ?
		    "not a regular file" : "not your file (aisb writes only "
		    "a policy file you own)");
		close(fd);
		return -1;
	}
	/* through fd: a file put in its place since the check above is
	 * not the one locked, and not read */
	if ((*text = file_read_fd(fd, real, POLICY_MAX_FILE_SIZE, len, err,
	    errlen)) == NULL) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The new text loaded and t decided by it: 0, or -1 with err. */
static int
check_text(const char *path, const char *text, size_t len,
    const struct policy_target *t, char *err, size_t errlen)
{
	struct policy_errors	*errs;
	struct policy_decision	 d;
	struct policy		*p = NULL;
	char			 ip[64];
	int			 rc = -1;

	if ((errs = calloc(1, sizeof(*errs))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (policy_load_buffer(path, text, len, &p, errs) == -1) {
		size_t	 n = snprintf(err, errlen, "with the rule added, %s "
		    "would not load, so it is left as it was:\n", path);

		if (n < errlen)
			policy_errors_format(errs, err + n, errlen - n);
		goto out;
	}
	if (t->is_ip)
		policy_decide_addr(p, &t->addr, t->port, &d);
	else
		policy_decide_name(p, t->host, t->hostlen, t->port, &d);
	if (d.verdict != POLICY_ALLOW) {
		snprintf(err, errlen, "with the rule added, %s would still "
		    "deny %s:%u (%s): a deny rule wins over every allow rule; "
		    "the file is left as it was", path, t->is_ip ?
		    policy_addr_str(&t->addr, ip, sizeof(ip)) : t->host,
		    (unsigned)t->port, policy_reason_str(d.reason));
		goto out;
	}
	rc = 0;
out:
	policy_free(p);
	free(errs);
	return rc;
}

int
launch_policy_allow_write(const char *path, const struct policy_target *t,
    const char *note, FILE *diff, char *err, size_t errlen)
{
	struct stat	 st;
	char		 real[PATH_MAX], sub[1024], *text = NULL, *out = NULL;
	size_t		 len = 0, outlen = 0;
	unsigned	 line;
	int		 fd = -1, rc = -1;

	/* a link (dotfiles) stays a link: the file it names is edited */
	if (realpath(path, real) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((fd = read_locked(real, &st, &text, &len, err, errlen)) == -1)
		return -1;
	if (memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: holds a NUL byte", real);
		goto out;
	}
	if (launch_policy_add_allow(text, len, t, note, &out, &outlen, &line,
	    sub, sizeof(sub)) == -1) {
		snprintf(err, errlen, "%s: %s", real, sub);
		goto out;
	}
	if (check_text(real, out, outlen, t, err, errlen) == -1)
		goto out;
	launch_diff_print(diff, real, text, len, real, out, outlen);
	if (file_write_atomic(real, out, outlen, st.st_mode & 07777,
	    st.st_gid != getegid() ? st.st_gid : (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s: %s; the file is left as it was",
		    real, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	free(text);
	free(out);
	return rc;
}
