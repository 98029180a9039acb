/*
 * The change set for people: a summary, and a unified diff (snap.h).
 * Bounded: files over max_file_bytes, binary files and pairs that differ
 * in more than DIFF_D_MAX lines are shown by size and hash, with the
 * reason; a script (what a shell, make or node would run) is always
 * diffed as text within max_file_bytes (is_script).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"

#define DIFF_FILE_DEFAULT	((size_t)1 << 20)
#define DIFF_D_MAX		2000	/* lines changed, for the O(ND) diff */
#define DIFF_CONTEXT		3
#define BINARY_PEEK		8192

static const char *
dir_slash(const struct snap_change *x)
{
	return x->type == SNAP_DIR ? "/" : "";
}

/* Length of the valid UTF-8 sequence at s[0..n), not a C1 control
 * (U+0080..U+009F), a bidi or zero-width control, nor an overlong or
 * surrogate form; 0 if none. */
static size_t
utf8_ok(const unsigned char *s, size_t n)
{
	size_t		 len, i;
	unsigned long	 cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	cp = s[0] & (0x3f >> (len - 1));
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < 0xa0 || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* what reorders or hides text: bidi controls, zero-width marks,
	 * line and paragraph separators, the byte order mark */
	if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 &&
	    cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
		return 0;
	return len;
}

/*
 * n bytes of s to out with what a terminal would act on escaped as \xNN:
 * control bytes (a tab kept when text, and a carriage return when it
 * ends the line), DEL, C1 controls and bytes that are not UTF-8.  Names,
 * link targets and diff lines come from the command: printed raw, a
 * name could move the cursor and hide or forge lines of what the user
 * is asked to approve.
 */
static void
put_esc(FILE *out, const char *s, size_t n, int text)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, k;

	while (i < n) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			for (k = i; k < n && p[k] >= 0x20 && p[k] < 0x7f; k++)
				;
			fwrite(p + i, 1, k - i, out);
			i = k;
		} else if (p[i] >= 0x80 && (k = utf8_ok(p + i, n - i)) > 0) {
			fwrite(p + i, 1, k, out);
			i += k;
		} else {
			if (text && (p[i] == '\t' || (p[i] == '\r' && i + 1 == n)))
				fputc(p[i], out);
			else
				fprintf(out, "\\x%02x", p[i]);
			i++;
		}
	}
}

static void
put_name(FILE *out, const char *s)
{
	put_esc(out, s, strlen(s), 0);
}

void
snap_print_name(FILE *out, const char *name)
{
	put_name(out, name);
}

/*
 * A change the bound on lines never hides: what can run (a new or
 * changed executable, a link, a mode change, a file that runs on its
 * own: snap_autorun) and what goes into a repository's folder.  Else a
 * command could push them past the summary's last line with a crowd of
 * harmless files.
 */
static int
notable(const struct snap_change *x)
{
	const char	*g;

	if (x->kind == SNAP_SKIP)
		return 0;
	if (snap_autorun(x->path) != NULL)
		return 1;
	if (x->type == SNAP_LINK || x->kind == SNAP_MODE ||
	    (x->type == SNAP_FILE && (x->new_mode & 0111) != 0 &&
	    x->kind != SNAP_DELETE))
		return 1;
	for (g = x->path; (g = strstr(g, ".git")) != NULL; g += 4)
		if ((g == x->path || g[-1] == '/') &&
		    (g[4] == '/' || g[4] == '\0'))
			return 1;
	return 0;
}

int
snap_changes_print_summary(const struct snap_changes *c, FILE *out,
    size_t max_lines)
{
	const struct snap_change	*x;
	const char			*why;
	size_t				 i, shown = 0, counts[6] = { 0 };

	for (i = 0; i < c->n; i++) {
		x = &c->v[i].pub;
		counts[x->kind]++;
		if (max_lines != 0 && shown >= max_lines && !notable(x))
			continue;
		shown++;
		switch (x->kind) {
		case SNAP_CREATE:
			fputs("A ", out);
			put_name(out, x->path);
			fputs(dir_slash(x), out);
			break;
		case SNAP_MODIFY:
			fputs("M ", out);
			put_name(out, x->path);
			break;
		case SNAP_DELETE:
			fputs("D ", out);
			put_name(out, x->path);
			fputs(dir_slash(x), out);
			break;
		case SNAP_MODE:
			fputs("m ", out);
			put_name(out, x->path);
			fprintf(out, "%s %04o -> %04o", dir_slash(x),
			    x->old_mode, x->new_mode);
			break;
		case SNAP_SKIP:
			fputs("S ", out);
			put_name(out, x->path);
			fprintf(out, "%s (", dir_slash(x));
			put_name(out, x->reason);
			fputc(')', out);
			break;
		}
		if (x->type == SNAP_LINK && x->new_link != NULL &&
		    x->kind != SNAP_SKIP)
		{
			fputs(" -> ", out);
			put_name(out, x->new_link);
		}
		if (x->kind == SNAP_MODIFY && x->type == SNAP_FILE &&
		    x->old_mode != x->new_mode)
			fprintf(out, " (%04o -> %04o)", x->old_mode,
			    x->new_mode);
		if (x->kind == SNAP_CREATE && x->type == SNAP_FILE &&
		    (x->new_mode & 0111) != 0)
			fprintf(out, " (%04o)", x->new_mode);
		/* marked: the one line a reader must not skim past */
		if (x->kind != SNAP_SKIP && (why = snap_autorun(x->path)) !=
		    NULL)
			fprintf(out, "  [!] %s", why);
		fputc('\n', out);
	}
	if (shown < c->n)
		fprintf(out, "... %zu more (none of them executable, a link, a "
		    "mode change, in a .git folder or a file that runs on its "
		    "own)\n", c->n - shown);
	fprintf(out, "%zu created, %zu modified, %zu deleted, %zu mode "
	    "changes, %zu skipped; digest %s\n", counts[SNAP_CREATE],
	    counts[SNAP_MODIFY], counts[SNAP_DELETE], counts[SNAP_MODE],
	    counts[SNAP_SKIP], c->digest);
	return ferror(out) ? SNAP_ESYS : SNAP_OK;
}

struct lines {
	char		 *text;
	size_t		  len;
	const char	**p;	/* line starts */
	size_t		 *l;	/* line lengths, without the newline */
	size_t		  n;
	int		  noeol;	/* the last line has no newline */
};

static void
lines_free(struct lines *ls)
{
	free(ls->text);
	free(ls->p);
	free(ls->l);
	memset(ls, 0, sizeof(*ls));
}

static int
lines_split(struct lines *ls)
{
	size_t		 i, n = 0, start = 0;

	for (i = 0; i < ls->len; i++)
		if (ls->text[i] == '\n')
			n++;
	if (ls->len > 0 && ls->text[ls->len - 1] != '\n') {
		n++;
		ls->noeol = 1;
	}
	if ((ls->p = calloc(n + 1, sizeof(*ls->p))) == NULL ||
	    (ls->l = calloc(n + 1, sizeof(*ls->l))) == NULL)
		return -1;
	for (i = 0; i < ls->len; i++)
		if (ls->text[i] == '\n') {
			ls->p[ls->n] = ls->text + start;
			ls->l[ls->n++] = i - start;
			start = i + 1;
		}
	if (start < ls->len) {
		ls->p[ls->n] = ls->text + start;
		ls->l[ls->n++] = ls->len - start;
	}
	return 0;
}

static int
is_binary(const struct lines *ls)
{
	size_t	n = ls->len < BINARY_PEEK ? ls->len : BINARY_PEEK;

	return ls->text != NULL && memchr(ls->text, '\0', n) != NULL;
}

static int
same_line(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	/* "x" at the end without a newline is not "x\n" */
	if ((i + 1 == a->n && a->noeol) != (j + 1 == b->n && b->noeol))
		return 0;
	return a->l[i] == b->l[j] && memcmp(a->p[i], b->p[j], a->l[i]) == 0;
}

/*
 * Myers' O(ND) diff, keeping every V for the way back: ops[] receives
 * '=' '-' '+' per line, in order.  The number of ops, or -1 when the
 * files differ in more than DIFF_D_MAX lines (or memory fails).
 */
static long
myers(const struct lines *a, const struct lines *b, char **opsp)
{
	long	 n = (long)a->n, m = (long)b->n, max = n + m, d, k, x, y;
	long	 dmax = max < DIFF_D_MAX ? max : DIFF_D_MAX, off, nops, i;
	long	**trace = NULL, *v = NULL;
	char	*ops = NULL;

	*opsp = NULL;
	if ((trace = calloc((size_t)dmax + 1, sizeof(*trace))) == NULL ||
	    (v = calloc((size_t)(2 * dmax + 3), sizeof(*v))) == NULL)
		goto fail;
	off = dmax + 1;
	for (d = 0; d <= dmax; d++) {
		for (k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[off + k - 1] <
			    v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < n && y < m && same_line(a, (size_t)x, b,
			    (size_t)y)) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= n && y >= m)
				goto found;
		}
		if ((trace[d] = malloc((size_t)(2 * dmax + 3) *
		    sizeof(*v))) == NULL)
			goto fail;
		memcpy(trace[d], v, (size_t)(2 * dmax + 3) * sizeof(*v));
	}
	goto fail;		/* too different */
found:
	if ((ops = malloc((size_t)(n + m + 1))) == NULL)
		goto fail;
	/* backwards from (n, m): ops are written from the end */
	nops = 0;
	x = n;
	y = m;
	for (; d > 0; d--) {
		long	*pv = trace[d - 1], pk, px, py;

		k = x - y;
		if (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1]))
			pk = k + 1;
		else
			pk = k - 1;
		px = pv[off + pk];
		py = px - pk;
		while (x > px && y > py) {
			ops[nops++] = '=';
			x--;
			y--;
		}
		if (x == px)
			ops[nops++] = '+';
		else
			ops[nops++] = '-';
		x = px;
		y = py;
	}
	while (x > 0 && y > 0) {
		ops[nops++] = '=';
		x--;
		y--;
	}
	for (i = 0; i < nops / 2; i++) {
		char	tmp = ops[i];

		ops[i] = ops[nops - 1 - i];
		ops[nops - 1 - i] = tmp;
	}
	for (d = 0; d <= dmax; d++)
		free(trace[d]);
	free(trace);
	free(v);
	*opsp = ops;
	return nops;
fail:
	if (trace != NULL)
		for (d = 0; d <= dmax; d++)
			free(trace[d]);
	free(trace);
	free(v);
	free(ops);
	return -1;
}

static void
put_line(FILE *out, char c, const struct lines *ls, size_t i)
{
	fputc(c, out);
	put_esc(out, ls->p[i], ls->l[i], 1);
	fputc('\n', out);
	if (i + 1 == ls->n && ls->noeol)
		fputs("\\ No newline at end of file\n", out);
}

/* Hunks of DIFF_CONTEXT lines of context around the changes. */
static void
print_hunks(FILE *out, const struct lines *a, const struct lines *b,
    const char *ops, long nops)
{
	long	i = 0, j, end, ai, bi, a0, b0, an, bn, k, last;

	/* positions in a and b before op i */
	while (i < nops) {
		if (ops[i] == '=') {
			i++;
			continue;
		}
		/* a hunk from i - context to the last change within
		 * 2 * context of the next, plus context */
		j = i;
		last = i;
		while (j < nops) {
			if (ops[j] != '=')
				last = j;
			else if (j - last > 2 * DIFF_CONTEXT)
				break;
			j++;
		}
		end = last + 1 + DIFF_CONTEXT;
		if (end > nops)
			end = nops;
		k = i - DIFF_CONTEXT;
		if (k < 0)
			k = 0;
		/* line numbers at k */
		ai = bi = 0;
		for (j = 0; j < k; j++) {
			if (ops[j] != '+')
				ai++;
			if (ops[j] != '-')
				bi++;
		}
		a0 = ai;
		b0 = bi;
		an = bn = 0;
		for (j = k; j < end; j++) {
			if (ops[j] != '+')
				an++;
			if (ops[j] != '-')
				bn++;
		}
		fprintf(out, "@@ -%ld,%ld +%ld,%ld @@\n",
		    an == 0 ? a0 : a0 + 1, an, bn == 0 ? b0 : b0 + 1, bn);
		for (j = k; j < end; j++) {
			if (ops[j] == '=') {
				put_line(out, ' ', a, (size_t)ai++);
				bi++;
			} else if (ops[j] == '-')
				put_line(out, '-', a, (size_t)ai++);
			else
				put_line(out, '+', b, (size_t)bi++);
		}
		i = end;
	}
}

/*
 * The content of root/rel into ls when its hash is want: 0; 1 when it is
 * larger than max (ls empty, *size set); 2 when the hash differs or it is
 * gone; -1 on error.
 */
static int
load(const char *root, const char *rel, const char *want, size_t max,
    struct lines *ls)
{
	char			 full[SNAP_PATH_MAX];
	char			 hex[SNAP_SHA256_HEX + 1];
	struct snap_stat	 st;

	memset(ls, 0, sizeof(*ls));
	if (snap_join(full, root, rel) == -1)
		return -1;
	if (snap_fs_lstat(full, &st) == -1)
		return errno == ENOENT ? 2 : -1;
	if (st.type != SNAP_FS_FILE)
		return 2;
	if (st.size > max) {
		if (want == NULL)
			return 1;
		if (snap_sha_file(full, hex, NULL) == -1)
			return -1;
		return strcmp(hex, want) == 0 ? 1 : 2;
	}
	if ((ls->text = snap_file_read(full, max, &ls->len)) == NULL)
		return errno == EFBIG ? 1 : -1;
	if (want == NULL)
		return 0;	/* whatever it is now */
	if (snap_sha_buf(ls->text, ls->len, hex) == -1)
		return -1;
	if (strcmp(hex, want) != 0) {
		lines_free(ls);
		return 2;
	}
	return 0;
}

/*
 * What a shell, make or node would run: an executable (before or after),
 * a file snap_autorun names, a "#!" first line on either side.  Its diff
 * is shown as text whatever it holds: NUL bytes are escaped like any
 * control byte, and past DIFF_D_MAX changed lines it is shown whole
 * (every old line out, every new line in), never as "binary".
 */
static int
is_script(const struct snap_change *x, const struct lines *a,
    const struct lines *b)
{
	return ((x->old_mode | x->new_mode) & 0111) != 0 ||
	    snap_autorun(x->path) != NULL ||
	    (a->len >= 2 && memcmp(a->text, "#!", 2) == 0) ||
	    (b->len >= 2 && memcmp(b->text, "#!", 2) == 0);
}

/* "WORD path: OLD -> NEW (why)": a file shown by size and hash only. */
static void
withheld(FILE *out, const struct snap_change *x, const char *word,
    const char *why)
{
	fprintf(out, "%s ", word);
	put_name(out, x->path);
	fputs(": ", out);
	if (x->kind == SNAP_CREATE)
		fprintf(out, "(none)");
	else
		fprintf(out, "%" PRIu64 " bytes sha256 %s", x->old_size,
		    x->old_sha256);
	fprintf(out, " -> ");
	if (x->kind == SNAP_DELETE)
		fprintf(out, "(none)");
	else
		fprintf(out, "%" PRIu64 " bytes sha256 %s", x->new_size,
		    x->new_sha256);
	fprintf(out, " (%s)\n", why);
}

/* Every line of a out, every line of b in: ops for print_hunks. */
static long
whole(const struct lines *a, const struct lines *b, char **opsp)
{
	char	*ops;

	if ((*opsp = ops = malloc(a->n + b->n + 1)) == NULL)
		return -1;
	memset(ops, '-', a->n);
	memset(ops + a->n, '+', b->n);
	return (long)(a->n + b->n);
}

static int
diff_file(const struct snap_change *x, const char *host, const char *stage,
    size_t max, FILE *out, char *err, size_t errlen)
{
	struct lines	 a, b;
	char		*ops = NULL, why[128];
	long		 nops;
	int		 ra = 0, rb = 0, rc = SNAP_OK, script, conflict = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (x->kind != SNAP_CREATE &&
	    (ra = load(host, x->path, x->old_sha256, max, &a)) == -1)
		return snap_err(err, errlen, SNAP_ESYS, "%s/%s: %s", host,
		    x->path, strerror(errno));
	if (ra == 2) {
		/*
		 * The original as staged is not kept (the stage holds the
		 * sandbox's version): what can be shown is the sandbox's
		 * version against the host's file as it is now, where it
		 * is, so that the two can be merged by hand.
		 */
		fputs("conflict ", out);
		put_name(out, x->path);
		fputs(": changed on the host since it was staged; below, "
		    "the sandbox's version (", out);
		put_name(out, stage);
		fputc('/', out);
		put_name(out, x->path);
		fputs(") against the host's now, to merge by hand\n", out);
		if ((ra = load(host, x->path, NULL, max, &a)) == -1)
			return snap_err(err, errlen, SNAP_ESYS, "%s/%s: %s",
			    host, x->path, strerror(errno));
		if (ra == 2)
			ra = 3;	/* gone, or no file now: all of it new */
		conflict = 1;
	}
	if (x->kind != SNAP_DELETE &&
	    (rb = load(stage, x->path, x->new_sha256, max, &b)) == -1) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s/%s: %s", stage,
		    x->path, strerror(errno));
		goto done;
	}
	if (rb == 2) {
		fputs("stale ", out);
		put_name(out, x->path);
		fputs(": changed in the stage since the change set was made: "
		    "not diffed\n", out);
		goto done;
	}
	script = is_script(x, &a, &b);
	if (ra == 1 || rb == 1) {
		snprintf(why, sizeof(why), "over the %zu bytes a diff shows%s",
		    max, script ? "; it runs: read it in the stage before you "
		    "approve" : "");
		withheld(out, x, "withheld", why);
		goto done;
	}
	if (!script && (is_binary(&a) || is_binary(&b))) {
		withheld(out, x, "binary", "a NUL byte in the first 8 KiB");
		goto done;
	}
	if (lines_split(&a) == -1 || lines_split(&b) == -1) {
		rc = snap_err(err, errlen, SNAP_ESYS, "diff: out of memory");
		goto done;
	}
	if ((nops = myers(&a, &b, &ops)) == -1 && !script) {
		snprintf(why, sizeof(why), "more than %d lines differ",
		    DIFF_D_MAX);
		withheld(out, x, "withheld", why);
		goto done;
	}
	if (nops == -1 && (nops = whole(&a, &b, &ops)) == -1) {
		rc = snap_err(err, errlen, SNAP_ESYS, "diff: out of memory");
		goto done;
	}
	fputs(x->kind == SNAP_CREATE || ra == 3 ? "--- /dev/null" : "--- a/",
	    out);
	if (x->kind != SNAP_CREATE && ra != 3)
		put_name(out, x->path);
	if (conflict && ra != 3)
		fputs(" (the host's now)", out);
	fputs(x->kind == SNAP_DELETE ? "\n+++ /dev/null" : "\n+++ b/", out);
	if (x->kind != SNAP_DELETE)
		put_name(out, x->path);
	if (conflict && x->kind != SNAP_DELETE)
		fputs(" (the sandbox's)", out);
	fputc('\n', out);
	print_hunks(out, &a, &b, ops, nops);
done:
	free(ops);
	lines_free(&a);
	lines_free(&b);
	return rc;
}

int
snap_changes_print_diff(const struct snap_changes *c, const char *host_root,
    const char *stage_root, size_t max_file_bytes, FILE *out, char *err,
    size_t errlen)
{
	const struct snap_change	*x;
	size_t				 i;
	int				 rc;

	if (max_file_bytes == 0)
		max_file_bytes = DIFF_FILE_DEFAULT;
	for (i = 0; i < c->n; i++) {
		x = &c->v[i].pub;
		fputs("diff --aisb ", out);
		put_name(out, x->path);
		fprintf(out, "%s\n", dir_slash(x));
		switch (x->kind) {
		case SNAP_SKIP:
			fputs("skipped ", out);
			put_name(out, x->path);
			fputs(" (", out);
			put_name(out, x->reason);
			fputs(")\n", out);
			continue;
		case SNAP_MODE:
			fputs("mode ", out);
			put_name(out, x->path);
			fprintf(out, "%s %04o -> %04o\n", dir_slash(x),
			    x->old_mode, x->new_mode);
			continue;
		default:
			break;
		}
		if (x->type == SNAP_DIR) {
			fputs(x->kind == SNAP_CREATE ? "new folder " :
			    "deleted folder ", out);
			put_name(out, x->path);
			fputs("/\n", out);
			continue;
		}
		if (x->type == SNAP_LINK) {
			fputs("link ", out);
			put_name(out, x->path);
			fputs(": ", out);
			put_name(out, x->old_link != NULL ? x->old_link :
			    "(none)");
			fputs(" => ", out);
			put_name(out, x->new_link != NULL ? x->new_link :
			    "(none)");
			fputc('\n', out);
			continue;
		}
		if (x->kind == SNAP_MODIFY && x->old_mode != x->new_mode)
		{
			fputs("mode ", out);
			put_name(out, x->path);
			fprintf(out, " %04o -> %04o\n", x->old_mode,
			    x->new_mode);
		}
		if ((rc = diff_file(x, host_root, stage_root, max_file_bytes,
		    out, err, errlen)) != SNAP_OK)
			return rc;
	}
	if (ferror(out))
		return snap_err(err, errlen, SNAP_ESYS, "writing the diff: %s",
		    strerror(errno));
	return SNAP_OK;
}
