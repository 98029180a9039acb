/*
 * One bounded scanner per format (lockfile.h): npm, yarn and pnpm
 * lockfiles, Cargo.lock and poetry.lock (one small TOML reader), pip's
 * requirements, go.sum (through GOPROXY), Gemfile.lock, and the tool
 * configurations .yarnrc.yml, .npmrc, cargo's config.toml, git's
 * insteadOf; then lockfile_parse, the entry point.  Pure and fuzzed
 * (tests/fuzz/fuzz_lockfile.c): nothing here opens a file.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy.h"
#include "policytools/lockfile.h"
#include "policytools/lockfile-int.h"

static int
parse_npm(struct ctx *c, const char *b, size_t len)
{
	char	 stack[LOCKFILE_MAX_DEPTH], *str;
	size_t	 i = 0, depth = 0, slen = 0, j;
	int	 started = 0, done = 0, want = 0, rc = -1;

	if ((str = malloc(LOCKFILE_MAX_LINE + 1)) == NULL)
		return lockfile_fail(c, "out of memory");
	c->line = 1;
	for (;;) {
		while (i < len && (b[i] == ' ' || b[i] == '\t' ||
		    b[i] == '\r' || b[i] == '\n'))
			if (b[i++] == '\n')
				c->line++;
		if (i >= len)
			break;
		if (done) {
			lockfile_fail(c, "text after the JSON object");
			goto out;
		}
		if (!started && b[i] != '{') {
			lockfile_fail(c, "not a JSON object (a package-lock.json "
			    "starts with '{')");
			goto out;
		}
		started = 1;
		switch (b[i]) {
		case '{': case '[':
			if (depth == LOCKFILE_MAX_DEPTH) {
				lockfile_fail(c, "nested deeper than %d",
				    LOCKFILE_MAX_DEPTH);
				goto out;
			}
			stack[depth++] = b[i++];
			want = 0;
			break;
		case '}': case ']':
			if (depth == 0 || stack[depth - 1] !=
			    (b[i] == '}' ? '{' : '[')) {
				lockfile_fail(c, "a '%c' that closes nothing opened",
				    b[i]);
				goto out;
			}
			if (--depth == 0)
				done = 1;
			i++;
			want = 0;
			break;
		case ':': case ',':
			i++;
			break;
		case '"':
			if (lockfile_json_string(c, b, len, &i, str, &slen) == -1)
				goto out;
			for (j = i; j < len && (b[j] == ' ' || b[j] == '\t' ||
			    b[j] == '\r' || b[j] == '\n'); j++)
				;
			if (j < len && b[j] == ':')
				want = slen == 8 && memcmp(str, "resolved",
				    8) == 0;
			else {
				if (want && lockfile_add_url(c, str, slen) == -1)
					goto out;
				want = 0;
			}
			break;
		default:
			for (j = i; j < len && (isalnum((unsigned char)b[j]) ||
			    b[j] == '.' || b[j] == '+' || b[j] == '-'); j++)
				;
			if (j == i) {
				lockfile_fail(c, "an unexpected byte 0x%02x",
				    (unsigned char)b[i]);
				goto out;
			}
			i = j;
			want = 0;
		}
	}
	if (!started || depth > 0) {
		lockfile_fail(c, "the file ends before its JSON object closes");
		goto out;
	}
	rc = 0;
out:
	free(str);
	return rc;
}

/* --- yarn.lock -------------------------------------------------------------- */

static int
parse_yarn(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *v;
	size_t		 pos = 0, n, vn, used, k;
	int		 r;

	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		if (n == 0 || l[0] == '#')
			continue;
		if (l[0] != ' ' && l[0] != '\t') {
			lockfile_trim(&l, &n);
			if (n == 0 || l[n - 1] != ':')
				return lockfile_fail(c, "a top-level line of yarn.lock "
				    "ends with ':' (an entry, or __metadata:)");
			continue;
		}
		lockfile_trim(&l, &n);
		if (lockfile_has_prefix(l, n, "resolved ") ||
		    lockfile_has_prefix(l, n, "resolved:")) {
			/* v1: resolved "https://host/x/-/x-1.0.0.tgz#sha1" */
			if (lockfile_value_at(c, l + 9, n - 9, NULL, &v, &vn,
			    &used) == -1 || lockfile_add_url(c, v, vn) == -1)
				return -1;
		} else if (lockfile_has_prefix(l, n, "resolution:")) {
			/* berry: resolution: "name@npm:1.0.0" or name@URL */
			if (lockfile_value_at(c, l + 11, n - 11, NULL, &v, &vn,
			    &used) == -1)
				return -1;
			for (k = 1; k < vn; k++)
				if (v[k] == '@' && (lockfile_has_prefix(v + k + 1,
				    vn - k - 1, "http://") || lockfile_has_prefix(v + k +
				    1, vn - k - 1, "https://")))
					break;
			if (k < vn) {
				if (lockfile_add_url(c, v + k + 1, vn - k - 1) == -1)
					return -1;
			} else if (lockfile_contains(v, vn, "@npm:"))
				c->out->notes |= LOCKFILE_NOTE_NOURL;
		}
	}
	return r;
}

/* --- pnpm-lock.yaml --------------------------------------------------------- */

static int
parse_pnpm(struct ctx *c, const char *b, size_t len)
{
	static const char *const keys[] = { "tarball:", "registry:", "repo:" };
	const char	*l, *v;
	size_t		 pos = 0, n, vn, used, k, i, kl;
	int		 r, first = 1, tarball;

	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		lockfile_trim(&l, &n);
		if (n == 0 || l[0] == '#')
			continue;
		if (first) {
			if (n == 3 && memcmp(l, "---", 3) == 0)
				continue;
			if (!lockfile_has_prefix(l, n, "lockfileVersion:"))
				return lockfile_fail(c, "not a pnpm lockfile: its first "
				    "line is lockfileVersion:");
			first = 0;
			continue;
		}
		tarball = 0;
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			kl = strlen(keys[k]);
			for (i = 0; i + kl <= n; i++) {
				if (memcmp(l + i, keys[k], kl) != 0 ||
				    (i > 0 && l[i - 1] != ' ' &&
				    l[i - 1] != '{' && l[i - 1] != ','))
					continue;
				if (lockfile_value_at(c, l + i + kl, n - i - kl, ",} ",
				    &v, &vn, &used) == -1)
					return -1;
				if (vn > 0 && lockfile_add_url(c, v, vn) == -1)
					return -1;
				tarball |= k == 0;
				i += kl + used - 1;
			}
		}
		if (!tarball && lockfile_contains(l, n, "integrity:"))
			c->out->notes |= LOCKFILE_NOTE_NOURL;
	}
	if (r == 0 && first)
		return lockfile_fail(c, "not a pnpm lockfile: no lockfileVersion:");
	return r;
}

/* --- TOML, the part lockfiles use ----------------------------------------- */

#define TOML_MAX_HEADER	256

/*
 * Called for each [header] (key NULL) and each key = "string" (val
 * decoded, NUL-terminated).  0, or -1 after lockfile_fail().
 */
typedef int (*toml_cb)(struct ctx *, const char *hdr, const char *key,
    const char *val, size_t vlen, void *arg);

/*
 * Brackets and strings from s[n] on: *depth counts [ and { open across
 * lines; *ml is set when a """ or ''' string stays open.  -1 when a
 * string does not close on its line or brackets close more than open.
 */
static int
toml_skip(struct ctx *c, const char *s, size_t n, size_t *depth, char *ml)
{
	size_t	 i = 0;
	char	 q;

	while (i < n) {
		if (*ml != '\0') {
			for (; i + 2 < n + 0 && !(s[i] == *ml &&
			    s[i + 1] == *ml && s[i + 2] == *ml); i++)
				if (*ml == '"' && s[i] == '\\')
					i++;
			if (i + 2 >= n)
				return 0;
			i += 3;
			*ml = '\0';
			continue;
		}
		if (s[i] == '#')
			return 0;
		if (s[i] == '"' || s[i] == '\'') {
			q = s[i];
			if (i + 2 < n && s[i + 1] == q && s[i + 2] == q) {
				*ml = q;
				i += 3;
				continue;
			}
			for (i++; i < n && s[i] != q; i++)
				if (q == '"' && s[i] == '\\')
					i++;
			if (i >= n)
				return lockfile_fail(c, "a string that does not close "
				    "on its line");
			i++;
			continue;
		}
		if (s[i] == '[' || s[i] == '{') {
			if (*depth == LOCKFILE_MAX_DEPTH)
				return lockfile_fail(c, "nested deeper than %d",
				    LOCKFILE_MAX_DEPTH);
			(*depth)++;
		} else if (s[i] == ']' || s[i] == '}') {
			if (*depth == 0)
				return lockfile_fail(c, "a '%c' that closes nothing "
				    "opened", s[i]);
			(*depth)--;
		}
		i++;
	}
	return 0;
}

static int
parse_toml(struct ctx *c, const char *b, size_t len, toml_cb cb, void *arg)
{
	const char	*l, *eq, *v;
	char		 hdr[TOML_MAX_HEADER + 1] = "", key[TOML_MAX_HEADER + 1];
	char		*val, ml = '\0';
	size_t		 pos = 0, n, depth = 0, i, o, kn, vn;
	unsigned	 opened = 0;
	int		 r, rc = -1;

	if ((val = malloc(LOCKFILE_MAX_LINE + 1)) == NULL)
		return lockfile_fail(c, "out of memory");
	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		if (depth > 0 || ml != '\0') {
			/* inside a multi-line array or string: skipped */
			if (toml_skip(c, l, n, &depth, &ml) == -1)
				goto out;
			continue;
		}
		lockfile_trim(&l, &n);
		if (n == 0 || l[0] == '#')
			continue;
		opened = c->line;
		if (l[0] == '[') {
			int dbl = n > 1 && l[1] == '[';
			const char *h = l + 1 + dbl, *e;

			if ((e = memchr(h, ']', n - 1 - dbl)) == NULL ||
			    (dbl && (e + 1 >= l + n || e[1] != ']')))
				{ lockfile_fail(c, "a [table] header without its ']'");
				goto out; }
			for (o = 0; h < e && o < TOML_MAX_HEADER; h++)
				if (*h != '"' && *h != '\'' && *h != ' ')
					hdr[o++] = *h;
			hdr[o] = '\0';
			if (cb(c, hdr, NULL, NULL, 0, arg) == -1)
				goto out;
			continue;
		}
		if ((eq = memchr(l, '=', n)) == NULL) {
			lockfile_fail(c, "not a key = value, a [table] or a comment");
			goto out;
		}
		for (o = 0, i = 0; l + i < eq && o < TOML_MAX_HEADER; i++)
			if (l[i] != '"' && l[i] != '\'' && l[i] != ' ' &&
			    l[i] != '\t')
				key[o++] = l[i];
		key[o] = '\0';
		kn = o;
		v = eq + 1;
		vn = (size_t)(l + n - v);
		lockfile_trim(&v, &vn);
		if (kn == 0 || vn == 0) {
			lockfile_fail(c, "a key = value without its %s", kn == 0 ?
			    "key" : "value");
			goto out;
		}
		if ((v[0] == '"' || v[0] == '\'') && !(vn >= 3 &&
		    v[1] == v[0] && v[2] == v[0])) {
			char	 q = v[0];

			for (i = 1, o = 0; i < vn && v[i] != q; i++) {
				if (q == '"' && v[i] == '\\' && i + 1 < vn)
					i++;
				val[o++] = v[i];
			}
			if (i >= vn) {
				lockfile_fail(c, "a string that does not close on its "
				    "line");
				goto out;
			}
			val[o] = '\0';
			if (toml_skip(c, v + i + 1, vn - i - 1, &depth,
			    &ml) == -1)
				goto out;
			if (cb(c, hdr, key, val, o, arg) == -1)
				goto out;
			continue;
		}
		if (toml_skip(c, v, vn, &depth, &ml) == -1)
			goto out;
	}
	if (r == -1)
		goto out;
	if (depth > 0 || ml != '\0') {
		c->line = opened;
		lockfile_fail(c, "an array, table or string opened here does not "
		    "close before the file ends");
		goto out;
	}
	rc = 0;
out:
	free(val);
	return rc;
}

/* --- Cargo.lock ------------------------------------------------------------- */

#define CRATES_IO_INDEX	"registry+https://github.com/rust-lang/crates.io-index"

static int
cargo_cb(struct ctx *c, const char *hdr, const char *key, const char *val,
    size_t vlen, void *arg)
{
	(void)arg;
	if (key == NULL || strcmp(hdr, "package") != 0 ||
	    strcmp(key, "source") != 0)
		return 0;
	if (vlen == strlen(CRATES_IO_INDEX) && memcmp(val, CRATES_IO_INDEX,
	    vlen) == 0) {
		/* cargo's sparse index and its downloads, not GitHub's git */
		c->out->notes |= LOCKFILE_NOTE_CRATES;
		if (lockfile_add_name(c, "index.crates.io", 443) == -1 ||
		    lockfile_add_name(c, "static.crates.io", 443) == -1)
			return -1;
		return 0;
	}
	if (lockfile_has_prefix(val, vlen, "registry+") ||
	    lockfile_has_prefix(val, vlen, "sparse+"))
		c->out->notes |= LOCKFILE_NOTE_REGISTRY;
	return lockfile_add_url(c, val, vlen);
}

/* --- poetry.lock ------------------------------------------------------------ */

struct poetry {
	int	 in_pkg, has_source, need_pypi;
};

static int
poetry_cb(struct ctx *c, const char *hdr, const char *key, const char *val,
    size_t vlen, void *arg)
{
	struct poetry	*p = arg;

	if (key == NULL) {
		if (strcmp(hdr, "package") == 0) {
			if (p->in_pkg && !p->has_source)
				p->need_pypi = 1;
			p->in_pkg = 1;
			p->has_source = 0;
		} else if (strcmp(hdr, "package.source") == 0)
			p->has_source = 1;
		return 0;
	}
	if (strcmp(hdr, "package.source") == 0 && strcmp(key, "url") == 0)
		return lockfile_add_url(c, val, vlen);
	return 0;
}

static int
add_pypi(struct ctx *c)
{
	c->out->notes |= LOCKFILE_NOTE_PYPI;
	if (lockfile_add_name(c, "pypi.org", 443) == -1 ||
	    lockfile_add_name(c, "files.pythonhosted.org", 443) == -1)
		return -1;
	return 0;
}

/* --- .cargo/config.toml ----------------------------------------------------- */

static int
cargocfg_cb(struct ctx *c, const char *hdr, const char *key, const char *val,
    size_t vlen, void *arg)
{
	char	 full[2 * TOML_MAX_HEADER + 2];
	size_t	 n;

	(void)arg;
	if (key == NULL)
		return 0;
	snprintf(full, sizeof(full), "%s%s%s", hdr, hdr[0] ? "." : "", key);
	n = strlen(full);
	if ((strncmp(full, "registries.", 11) == 0 && n > 17 &&
	    strcmp(full + n - 6, ".index") == 0) ||
	    (strncmp(full, "source.", 7) == 0 && n > 16 &&
	    strcmp(full + n - 9, ".registry") == 0) ||
	    strcmp(full, "registry.index") == 0)
		return lockfile_add_url(c, val, vlen);
	return 0;
}

/* --- requirements.txt ------------------------------------------------------- */

/* A URL in a requirement line: NAME @ URL, or the line is one. */
static int
req_url(struct ctx *c, const char *s, size_t n, int *named)
{
	const char	*p, *e;
	size_t		 i;

	for (i = 0; i + 3 <= n && memcmp(s + i, "://", 3) != 0; i++)
		;
	if (i + 3 > n) {
		*named = 1;
		return 0;
	}
	for (p = s + i; p > s && !isspace((unsigned char)p[-1]) &&
	    p[-1] != '@'; p--)
		;
	for (e = s + i; e < s + n && !isspace((unsigned char)*e) &&
	    *e != ';'; e++)
		;
	return lockfile_add_url(c, p, (size_t)(e - p));
}

static int
parse_pipreq(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *t, *v;
	char		*buf;
	size_t		 pos = 0, n, o, i, tn, vn;
	unsigned	 start;
	int		 r, cont, named = 0, have_index = 0, no_index = 0;
	int		 rc = -1;

	if ((buf = malloc(LOCKFILE_MAX_LINE + 1)) == NULL)
		return lockfile_fail(c, "out of memory");
	for (;;) {
		/* a logical line: physical ones joined at a final '\' */
		o = 0;
		start = c->line + 1;
		do {
			if ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) != 1)
				break;
			cont = n > 0 && l[n - 1] == '\\';
			if (cont)
				n--;
			if (o + n > LOCKFILE_MAX_LINE) {
				lockfile_fail(c, "a line joined by '\\' longer than %d "
				    "bytes", LOCKFILE_MAX_LINE);
				goto out;
			}
			memcpy(buf + o, l, n);
			o += n;
		} while (cont);
		if (r == -1)
			goto out;
		if (r == 0 && o == 0)
			break;
		buf[o] = '\0';
		/* a comment: '#' at the start or after white space */
		for (i = 0; i < o; i++)
			if (buf[i] == '#' && (i == 0 ||
			    isspace((unsigned char)buf[i - 1]))) {
				o = i;
				break;
			}
		buf[o] = '\0';
		l = buf;
		n = o;
		lockfile_trim(&l, &n);
		if (n == 0)
			continue;
		{
			unsigned here = c->line;

			c->line = start;
			t = l;
			/* (every scan stops at n: isspace trims more than " \t") */
			for (tn = 0; tn < n && !isspace((unsigned char)t[tn]) &&
			    t[tn] != '='; tn++)
				;
			if (t[0] != '-') {
				if (t[0] == '.' || t[0] == '/')
					c->out->other++;	/* a local path */
				else if (req_url(c, l, n, &named) == -1)
					goto out;
				c->line = here;
				continue;
			}
			v = t + tn;
			vn = n - tn;
			if (vn > 0 && *v == '=')
				v++, vn--;
			lockfile_trim(&v, &vn);
			for (i = 0; i < vn && !isspace((unsigned char)v[i]); i++)
				;
			vn = i;
#define OPT(s)	(tn == strlen(s) && memcmp(t, s, tn) == 0)
			if (OPT("-i") || OPT("--index-url") ||
			    OPT("--extra-index-url") || OPT("-f") ||
			    OPT("--find-links") || OPT("-e") ||
			    OPT("--editable")) {
				if (vn == 0) {
					lockfile_fail(c, "%.*s needs a value", (int)tn,
					    t);
					goto out;
				}
				if (OPT("-i") || OPT("--index-url"))
					have_index = 1;
				if (lockfile_add_url(c, v, vn) == -1)
					goto out;
			} else if (OPT("--no-index"))
				no_index = 1;
			else if (OPT("-r") || OPT("--requirement") ||
			    OPT("-c") || OPT("--constraint"))
				c->out->notes |= LOCKFILE_NOTE_INCLUDE;
#undef OPT
			c->line = here;
		}
	}
	if (named && !have_index && !no_index && add_pypi(c) == -1)
		goto out;
	rc = 0;
out:
	free(buf);
	return rc;
}

/* --- go.sum ----------------------------------------------------------------- */

static int
parse_gosum(struct ctx *c, const char *b, size_t len, const char *goproxy)
{
	const char	*l, *sp1, *sp2, *e, *px;
	char		 host[POLICY_MAX_NAME + 1], s[80];
	size_t		 pos = 0, n, hn;
	int		 r, direct = -1, mods = 0;

	/* go's default: the public proxy, then the origin when it says 404 */
	if (goproxy == NULL || goproxy[0] == '\0')
		goproxy = "https://proxy.golang.org,direct";
	for (px = goproxy; *px != '\0'; px = e + (*e != '\0')) {
		e = px + strcspn(px, ",|");
		if (e - px == 3 && strncmp(px, "off", 3) == 0)
			break;
		if (e - px == 6 && strncmp(px, "direct", 6) == 0) {
			/* first: the origins; after a proxy: its fallback */
			direct = px == goproxy;
			break;
		}
	}
	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		if (n == 0)
			continue;
		if ((sp1 = memchr(l, ' ', n)) == NULL || sp1 == l ||
		    (sp2 = memchr(sp1 + 1, ' ', (size_t)(l + n - sp1 - 1))) ==
		    NULL || sp2 == sp1 + 1 || !lockfile_has_prefix(sp2 + 1,
		    (size_t)(l + n - sp2 - 1), "h1:") ||
		    memchr(sp2 + 1, ' ', (size_t)(l + n - sp2 - 1)) != NULL)
			return lockfile_fail(c, "not 'MODULE VERSION h1:HASH' (a go.sum "
			    "line)");
		mods++;
		if (direct != 1)
			continue;
		/* the module path's first element is its host */
		for (hn = 0; hn < n && l[hn] != '/' && l[hn] != ' '; hn++)
			;
		if (memchr(l, '.', hn) == NULL)
			continue;
		if (hn > POLICY_MAX_NAME)
			return lockfile_fail(c, "a module path's host is longer than "
			    "%d bytes", POLICY_MAX_NAME);
		memcpy(host, l, hn);
		host[hn] = '\0';
		if (lockfile_add(c->out, host, 443, c->file, c->line) == -1)
			return lockfile_fail(c, "a module path's host, '%s', is not a "
			    "host name (or more than %d hosts)", lockfile_shown(l, hn,
			    s, sizeof(s)), LOCKFILE_MAX_HOSTS);
	}
	if (r == -1 || mods == 0)
		return r;
	c->line = 0;
	c->where = "GOPROXY";
	for (px = goproxy; *px != '\0'; px = e + (*e != '\0')) {
		e = px + strcspn(px, ",|");
		if ((e - px == 6 && strncmp(px, "direct", 6) == 0) ||
		    (e - px == 3 && strncmp(px, "off", 3) == 0))
			break;
		if (lockfile_add_url(c, px, (size_t)(e - px)) == -1)
			return -1;
	}
	if (direct == 1)
		c->out->notes |= LOCKFILE_NOTE_GODIRECT;
	else if (direct == 0)
		c->out->notes |= LOCKFILE_NOTE_GOFALLBACK;
	return 0;
}

/* --- Gemfile.lock ----------------------------------------------------------- */

static int
parse_gemfile(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *v;
	size_t		 pos = 0, n, i, vn, used;
	int		 r, path = 0;

	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		if (n == 0)
			continue;
		if (l[0] != ' ') {
			for (i = 0; i < n && (isupper((unsigned char)l[i]) ||
			    l[i] == ' '); i++)
				;
			if (i < n || !isupper((unsigned char)l[0]))
				return lockfile_fail(c, "not a Gemfile.lock section (GEM, "
				    "GIT, PATH, PLATFORMS, DEPENDENCIES...)");
			path = n == 4 && memcmp(l, "PATH", 4) == 0;
			continue;
		}
		lockfile_trim(&l, &n);
		if (!lockfile_has_prefix(l, n, "remote:"))
			continue;
		if (lockfile_value_at(c, l + 7, n - 7, NULL, &v, &vn, &used) == -1)
			return -1;
		if (path)
			c->out->other++;	/* a local folder */
		else if (lockfile_add_url(c, v, vn) == -1)
			return -1;
	}
	return r;
}

/* --- .yarnrc.yml, .npmrc, .gitconfig ---------------------------------------- */

static int
parse_yarnrc(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *v;
	size_t		 pos = 0, n, vn, used;
	int		 r;

	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		lockfile_trim(&l, &n);
		if (!lockfile_has_prefix(l, n, "npmRegistryServer:"))
			continue;
		if (lockfile_value_at(c, l + 18, n - 18, NULL, &v, &vn, &used) == -1 ||
		    lockfile_add_url(c, v, vn) == -1)
			return -1;
	}
	return r;
}

static int
parse_npmrc(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *eq, *k, *v;
	size_t		 pos = 0, n, kn, vn, used;
	int		 r;

	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		lockfile_trim(&l, &n);
		if (n == 0 || l[0] == ';' || l[0] == '#' ||
		    (eq = memchr(l, '=', n)) == NULL)
			continue;
		k = l;
		kn = (size_t)(eq - l);
		lockfile_trim(&k, &kn);
		/* registry, @scope:registry; //host/:_authToken never */
		if (!(kn == 8 && memcmp(k, "registry", 8) == 0) &&
		    !(kn > 10 && k[0] == '@' && memcmp(k + kn - 9,
		    ":registry", 9) == 0))
			continue;
		if (lockfile_value_at(c, eq + 1, (size_t)(l + n - eq - 1), NULL, &v,
		    &vn, &used) == -1 || lockfile_add_url(c, v, vn) == -1)
			return -1;
	}
	return r;
}

static int
parse_gitconfig(struct ctx *c, const char *b, size_t len)
{
	const char	*l, *q, *e, *k;
	char		 base[LOCKFILE_MAX_LINE / 16];
	size_t		 pos = 0, n, o, kn;
	int		 r, in_url = 0, done = 0;

	base[0] = '\0';
	while ((r = lockfile_next_line(c, b, len, &pos, &l, &n)) == 1) {
		lockfile_trim(&l, &n);
		if (n == 0 || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			if ((e = memchr(l, ']', n)) == NULL)
				return lockfile_fail(c, "a [section] without its ']'");
			in_url = 0;
			if (lockfile_has_prefix(l + 1, (size_t)(e - l - 1), "url") &&
			    (q = memchr(l, '"', (size_t)(e - l))) != NULL) {
				for (o = 0, q++; q < e && *q != '"' &&
				    o + 1 < sizeof(base); q++) {
					if (*q == '\\' && q + 1 < e)
						q++;
					base[o++] = *q;
				}
				if (q >= e || *q != '"')
					return lockfile_fail(c, "a [url \"...\"] section "
					    "whose quote does not close");
				base[o] = '\0';
				in_url = 1;
				done = 0;
			}
			continue;
		}
		if (!in_url || done)
			continue;
		k = l;
		for (kn = 0; kn < n && k[kn] != ' ' && k[kn] != '\t' &&
		    k[kn] != '='; kn++)
			;
		if ((kn == 9 && strncasecmp(k, "insteadof", 9) == 0) ||
		    (kn == 13 && strncasecmp(k, "pushinsteadof", 13) == 0)) {
			done = 1;	/* once per section */
			if (lockfile_add_url(c, base, strlen(base)) == -1)
				return -1;
		}
	}
	return r;
}

/* --- the entry points -------------------------------------------------------- */

int
lockfile_parse(enum lockfile_kind kind, const char *buf, size_t len,
    unsigned flags, const char *goproxy, unsigned file,
    struct lockfile_hosts *out, char *err, size_t errlen)
{
	struct ctx	 c = { .out = out, .flags = flags, .file = file,
			    .err = err, .errlen = errlen };
	struct poetry	 p = { 0, 0, 0 };

	if (errlen > 0)
		err[0] = '\0';
	if (len > LOCKFILE_MAX_SIZE) {
		c.where = "the file";
		return lockfile_fail(&c, "larger than %d bytes", LOCKFILE_MAX_SIZE);
	}
	switch (kind) {
	case LOCKFILE_NPM:
		return parse_npm(&c, buf, len);
	case LOCKFILE_YARN:
		return parse_yarn(&c, buf, len);
	case LOCKFILE_PNPM:
		return parse_pnpm(&c, buf, len);
	case LOCKFILE_CARGO:
		return parse_toml(&c, buf, len, cargo_cb, NULL);
	case LOCKFILE_POETRY:
		if (parse_toml(&c, buf, len, poetry_cb, &p) == -1)
			return -1;
		if (p.in_pkg && !p.has_source)
			p.need_pypi = 1;
		c.line = 0;
		c.where = "poetry.lock";
		return p.need_pypi ? add_pypi(&c) : 0;
	case LOCKFILE_PIPREQ:
		return parse_pipreq(&c, buf, len);
	case LOCKFILE_GOSUM:
		return parse_gosum(&c, buf, len, goproxy);
	case LOCKFILE_GEMFILE:
		return parse_gemfile(&c, buf, len);
	case LOCKFILE_YARNRC:
		return parse_yarnrc(&c, buf, len);
	case LOCKFILE_NPMRC:
		return parse_npmrc(&c, buf, len);
	case LOCKFILE_CARGOCFG:
		return parse_toml(&c, buf, len, cargocfg_cb, NULL);
	case LOCKFILE_GITCONFIG:
		return parse_gitconfig(&c, buf, len);
	case LOCKFILE__COUNT:
		break;
	}
	c.where = "lockfile";
	return lockfile_fail(&c, "unknown kind %d", (int)kind);
}
