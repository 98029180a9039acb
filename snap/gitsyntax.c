/*
 * Git's config syntax (git-config(1), "Syntax"), the one reader of it in
 * aisb (snap.h, snap_gitcfg_parse): core.hooksPath and the included files
 * (gitcfg.c), the stage's sanitized .git/config (rules.c) and the keys a
 * bind session offers back to the host's config (launcher/session/
 * gitguard.c) read every file through here, so that the three never
 * disagree on what a file says.
 *
 * A header is "[section]", "[section "sub"]" (the subsection as written,
 * with \" and \\ unescaped and any other backslash dropped, as git does)
 * or the old "[section.sub]" (the subsection lower case); a key may
 * follow on the same line.  A value may be quoted, holds the escapes \n
 * \t \b \\ \", goes on past a backslash at the end of a line, and ends at
 * a '#' or ';' outside quotes; blanks around it are dropped, not those
 * inside quotes.  A key alone on its line ("[core] bare") is a boolean
 * true: its value is NULL.  A line git would refuse (and with it the
 * whole file) is skipped here, not the file: read as the safe side, a
 * value more is one more to look at.
 *
 * Bounds: section and key names SNAP_GITCFG_NAME_MAX bytes, subsections
 * SNAP_GITCFG_SUB_MAX, values SNAP_GITCFG_VALUE_MAX; a longer one is
 * skipped with its line.  The text itself is the caller's bound.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"

struct gsx {
	const char	*p, *end;
	char		 sect[SNAP_GITCFG_NAME_MAX];
	char		 sub[SNAP_GITCFG_SUB_MAX];
	int		 has_sub;
};

static int
name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '-';
}

static int
alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static char
lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
}

static void
skip_line(struct gsx *x)
{
	while (x->p < x->end && *x->p != '\n')
		x->p++;
}

/* The quoted subsection after '"' into x->sub: 0, or -1 (a newline, no
 * closing quote, too long). */
static int
parse_sub(struct gsx *x)
{
	size_t	 n = 0;
	char	 ch;

	for (; x->p < x->end && *x->p != '"'; x->p++) {
		ch = *x->p;
		if (ch == '\n')
			return -1;
		if (ch == '\\') {
			if (++x->p == x->end || *x->p == '\n')
				return -1;
			ch = *x->p;
		}
		if (n + 1 >= sizeof(x->sub))
			return -1;
		x->sub[n++] = ch;
	}
	if (x->p == x->end)
		return -1;
	x->p++;			/* the closing quote */
	x->sub[n] = '\0';
	x->has_sub = 1;
	return 0;
}

/* A header at x->p ('['): the section and subsection set, x->p after its
 * ']'.  A malformed one ends the section and its line (git refuses the
 * file: no key of it counts for a section it does not name). */
static void
parse_header(struct gsx *x)
{
	size_t	 n = 0, m = 0;
	int	 dot = 0;

	x->p++;
	x->has_sub = 0;
	while (x->p < x->end && (name_char(*x->p) || *x->p == '.')) {
		if (*x->p == '.' && !dot) {
			dot = 1;
			x->p++;
			continue;
		}
		if (dot) {
			if (m + 1 >= sizeof(x->sub))
				goto bad;
			x->sub[m++] = lower(*x->p++);
		} else {
			if (n + 1 >= sizeof(x->sect))
				goto bad;
			x->sect[n++] = lower(*x->p++);
		}
	}
	x->sect[n] = '\0';
	if (n == 0)
		goto bad;
	if (dot) {
		x->sub[m] = '\0';
		x->has_sub = 1;
	} else {
		while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
			x->p++;
		if (x->p < x->end && *x->p == '"') {
			x->p++;
			if (parse_sub(x) == -1)
				goto bad;
		}
	}
	if (x->p < x->end && *x->p == ']') {
		x->p++;
		return;
	}
bad:
	x->sect[0] = '\0';
	x->has_sub = 0;
	skip_line(x);
}

/*
 * The value after '=' at x->p into val[SNAP_GITCFG_VALUE_MAX]: quotes,
 * escapes, a backslash-newline continuing it, a comment ending it outside
 * quotes, blanks at its end dropped.  0, or -1 when too long.
 */
static int
parse_value(struct gsx *x, char *val)
{
	const char	*p = x->p, *end = x->end;
	size_t		 n = 0, keep = 0;
	int		 quoted = 0;
	char		 ch;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end && *p != '\n'; p++) {
		ch = *p;
		if (ch == '\\' && p + 1 < end) {
			ch = *++p;
			if (ch == '\n' || (ch == '\r' && p + 1 < end &&
			    p[1] == '\n' && ++p))
				continue;
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'b' ?
			    '\b' : ch;
		} else if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		} else if (!quoted && (ch == '#' || ch == ';')) {
			while (p < end && *p != '\n')
				p++;
			break;
		} else if (!quoted && (ch == ' ' || ch == '\t' ||
		    ch == '\r')) {
			if (n + 1 >= SNAP_GITCFG_VALUE_MAX)
				goto long_;
			val[n++] = ch;
			continue;
		}
		if (n + 1 >= SNAP_GITCFG_VALUE_MAX)
			goto long_;
		val[n++] = ch;
		keep = n;
	}
	val[keep] = '\0';
	x->p = p;
	return 0;
long_:
	x->p = p;
	skip_line(x);
	return -1;
}

int
snap_gitcfg_parse(const char *text, size_t len, snap_gitcfg_fn fn, void *arg)
{
	struct gsx	 x;
	char		 key[SNAP_GITCFG_NAME_MAX], *val;
	size_t		 n;
	int		 rc = 0, has;

	if ((val = malloc(SNAP_GITCFG_VALUE_MAX)) == NULL)
		return -1;
	memset(&x, 0, sizeof(x));
	x.p = text;
	x.end = text + len;
	while (x.p < x.end && rc == 0) {
		while (x.p < x.end && (*x.p == ' ' || *x.p == '\t' ||
		    *x.p == '\r' || *x.p == '\n'))
			x.p++;
		if (x.p == x.end)
			break;
		if (*x.p == '[') {
			parse_header(&x);
			continue;
		}
		if (!alpha(*x.p)) {
			skip_line(&x);		/* a comment, or junk */
			continue;
		}
		for (n = 0; x.p < x.end && name_char(*x.p); x.p++) {
			if (n + 1 >= sizeof(key))
				break;
			key[n++] = lower(*x.p);
		}
		key[n] = '\0';
		if (x.p < x.end && name_char(*x.p)) {
			skip_line(&x);		/* over the bound */
			continue;
		}
		while (x.p < x.end && (*x.p == ' ' || *x.p == '\t' ||
		    *x.p == '\r'))
			x.p++;
		has = x.p < x.end && *x.p == '=';
		if (!has && x.p < x.end && *x.p != '\n' && *x.p != '#' &&
		    *x.p != ';') {
			skip_line(&x);		/* "key junk": refused */
			continue;
		}
		if (has) {
			x.p++;
			if (parse_value(&x, val) == -1)
				continue;
		} else
			skip_line(&x);
		if (x.sect[0] == '\0')
			continue;		/* no section: refused */
		if (fn(arg, x.sect, x.has_sub ? x.sub : NULL, key, has ? val :
		    NULL) == -1)
			rc = -1;
	}
	free(val);
	return rc;
}
