/*
 * The lockfile and tool-configuration scanners of lockfile.h: the kinds,
 * the hosts and URLs they add, lines, values and JSON strings, the
 * notes (lockfile-int.h); each format's scanner is in lockfile_formats.c.
 *
 * Each format gets a scanner that reads only what holds URLs:
 *   package-lock.json, npm-shrinkwrap.json  "resolved" values (JSON)
 *   yarn.lock      v1: resolved; berry: resolution: NAME@http(s)://...
 *   pnpm-lock.yaml tarball:, registry:, repo: values
 *   Cargo.lock     [[package]] source = "registry+|sparse+|git+URL"
 *   poetry.lock    [package.source] url; a package without one: PyPI
 *   requirements   -i/--index-url, --extra-index-url, -f/--find-links,
 *                  -e URL, NAME @ URL, a bare URL; a named requirement
 *                  without --index-url: PyPI; --hash ignored
 *   go.sum         module lines checked; the hosts are GOPROXY's
 *   Gemfile.lock   remote: in GEM, GIT and PLUGIN SOURCE sections
 *   .yarnrc.yml    npmRegistryServer
 *   .npmrc         registry, @scope:registry (never a token)
 *   .cargo/config.toml  registries.*.index, source.*.registry,
 *                  registry.index
 *   .gitconfig     [url "BASE"] with insteadOf / pushInsteadOf: BASE
 *
 * Bounds: LOCKFILE_MAX_SIZE bytes per file (the caller reads at most
 * that), LOCKFILE_MAX_LINE bytes per line (per string in JSON, per
 * logical line in requirements), LOCKFILE_MAX_DEPTH JSON nesting,
 * LOCKFILE_MAX_HOSTS hosts.  Over a bound, a NUL byte, or a shape the
 * format does not have: -1 with the line in err.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "termsafe.h"
#include "policytools/lockfile.h"
#include "policytools/lockfile-int.h"
#include "policy.h"


static const char *const kind_names[LOCKFILE__COUNT] = {
	[LOCKFILE_NPM] = "package-lock.json",
	[LOCKFILE_YARN] = "yarn.lock",
	[LOCKFILE_PNPM] = "pnpm-lock.yaml",
	[LOCKFILE_CARGO] = "Cargo.lock",
	[LOCKFILE_POETRY] = "poetry.lock",
	[LOCKFILE_PIPREQ] = "requirements.txt",
	[LOCKFILE_GOSUM] = "go.sum",
	[LOCKFILE_GEMFILE] = "Gemfile.lock",
	[LOCKFILE_YARNRC] = ".yarnrc.yml",
	[LOCKFILE_NPMRC] = ".npmrc",
	[LOCKFILE_CARGOCFG] = ".cargo/config.toml",
	[LOCKFILE_GITCONFIG] = ".gitconfig",
};

const char *
lockfile_kind_name(enum lockfile_kind k)
{
	return (unsigned)k < LOCKFILE__COUNT ? kind_names[k] : "?";
}

int
lockfile_kind_of(const char *path)
{
	const char	*b = strrchr(path, '/');
	size_t		 n;

	b = b != NULL ? b + 1 : path;
	n = strlen(b);
	if (strcmp(b, "package-lock.json") == 0 ||
	    strcmp(b, "npm-shrinkwrap.json") == 0)
		return LOCKFILE_NPM;
	if (strcmp(b, "yarn.lock") == 0)
		return LOCKFILE_YARN;
	if (strcmp(b, "pnpm-lock.yaml") == 0)
		return LOCKFILE_PNPM;
	if (strcmp(b, "Cargo.lock") == 0)
		return LOCKFILE_CARGO;
	if (strcmp(b, "poetry.lock") == 0)
		return LOCKFILE_POETRY;
	if (strncmp(b, "requirements", 12) == 0 && n > 4 &&
	    strcmp(b + n - 4, ".txt") == 0)
		return LOCKFILE_PIPREQ;
	if (strcmp(b, "go.sum") == 0)
		return LOCKFILE_GOSUM;
	if (strcmp(b, "Gemfile.lock") == 0 || strcmp(b, "gems.locked") == 0)
		return LOCKFILE_GEMFILE;
	if (strcmp(b, ".yarnrc.yml") == 0)
		return LOCKFILE_YARNRC;
	if (strcmp(b, ".npmrc") == 0 || strcmp(b, "npmrc") == 0)
		return LOCKFILE_NPMRC;
	if (strcmp(b, "config.toml") == 0)
		return LOCKFILE_CARGOCFG;
	if (strcmp(b, ".gitconfig") == 0)
		return LOCKFILE_GITCONFIG;
	return -1;
}

/* What the file said, printable and short, for an error message. */
const char *
lockfile_shown(const char *s, size_t n, char *buf, size_t len)
{
	size_t	 o;
	int	 cut;

	/* at most 64 bytes of it and len - 4 shown, room kept for "..." */
	o = term_clean(buf, len - 3, s, n < 64 ? n : 64, TERM_ASCII, &cut);
	if (cut || n > 64)
		memcpy(buf + o, "...", 4);
	return buf;
}

int
lockfile_fail(struct ctx *c, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (c->line > 0)
		n = snprintf(c->err, c->errlen, "line %u: ", c->line);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->where != NULL ?
		    c->where : "?");
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

int
lockfile_add(struct lockfile_hosts *out, const char *host, uint16_t port,
    unsigned file, unsigned line)
{
	struct policy_target	 t;
	char			 e[128];
	size_t			 i;

	if (policy_parse_target(host, strlen(host), port, &t, e,
	    sizeof(e)) == -1 || t.port != port)
		return -1;
	/* an address is never a host to allow (go.sum's "1.2.3.4/x") */
	if (t.is_ip) {
		out->ip++;
		return 1;
	}
	for (i = 0; i < out->n; i++)
		if (out->h[i].port == port && strcmp(out->h[i].host,
		    t.host) == 0)
			return 1;
	if (out->n == LOCKFILE_MAX_HOSTS)
		return -1;
	snprintf(out->h[out->n].host, sizeof(out->h[out->n].host), "%s",
	    t.host);
	out->h[out->n].port = port;
	out->h[out->n].file = file;
	out->h[out->n].line = line;
	out->n++;
	return 0;
}

int
lockfile_add_name(struct ctx *c, const char *host, uint16_t port)
{
	if (lockfile_add(c->out, host, port, c->file, c->line) == -1) {
		if (c->out->n == LOCKFILE_MAX_HOSTS)
			return lockfile_fail(c, "more than %d hosts: not a lockfile a "
			    "policy can be derived from", LOCKFILE_MAX_HOSTS);
		return lockfile_fail(c, "'%s' is not a host name", host);
	}
	return 0;
}

int
lockfile_has_prefix(const char *s, size_t n, const char *pre)
{
	size_t	 l = strlen(pre);

	return n >= l && strncasecmp(s, pre, l) == 0;
}

int
lockfile_contains(const char *s, size_t n, const char *needle)
{
	size_t	 l = strlen(needle), i;

	for (i = 0; i + l <= n; i++)
		if (memcmp(s + i, needle, l) == 0)
			return 1;
	return 0;
}

/*
 * The host of URL u[n]: https -> 443, http -> 80 (LOCKFILE_HTTP), after
 * an optional git+, registry+ or sparse+.  Other schemes, local paths,
 * IP literals and other ports are counted and left out; a host that
 * does not parse is an error.
 */
int
lockfile_add_url(struct ctx *c, const char *u, size_t n)
{
	struct policy_target	 t;
	const char		*p, *end, *at;
	char			 e[128], s[80];
	uint16_t		 defport;
	size_t			 i;

	while (n > 0 && isspace((unsigned char)*u))
		u++, n--;
	while (n > 0 && isspace((unsigned char)u[n - 1]))
		n--;
	if (lockfile_has_prefix(u, n, "git+"))
		u += 4, n -= 4;
	else if (lockfile_has_prefix(u, n, "registry+"))
		u += 9, n -= 9;
	else if (lockfile_has_prefix(u, n, "sparse+"))
		u += 7, n -= 7;
	if (lockfile_contains(u, n, "${")) {
		c->out->notes |= LOCKFILE_NOTE_VARIABLE;
		return 0;
	}
	if (lockfile_has_prefix(u, n, "https://")) {
		p = u + 8;
		defport = 443;
	} else if (lockfile_has_prefix(u, n, "http://")) {
		if (!(c->flags & LOCKFILE_HTTP)) {
			c->out->http++;
			return 0;
		}
		p = u + 7;
		defport = 80;
	} else {
		c->out->other++;
		return 0;
	}
	for (end = p; end < u + n && *end != '/' && *end != '?' &&
	    *end != '#'; end++)
		;
	/* credentials in a URL: never copied, never shown */
	for (at = NULL, i = 0; p + i < end; i++)
		if (p[i] == '@')
			at = p + i;
	if (at != NULL)
		p = at + 1;
	if (end == p)	/* (what came before may be a credential) */
		return lockfile_fail(c, "a URL without a host");
	if (policy_parse_target(p, (size_t)(end - p), defport, &t, e,
	    sizeof(e)) == -1)
		return lockfile_fail(c, "the host of a URL, '%s': %s", lockfile_shown(p,
		    (size_t)(end - p), s, sizeof(s)), e);
	if (t.is_ip) {
		c->out->ip++;
		return 0;
	}
	if (t.port != defport) {
		c->out->port++;
		return 0;
	}
	return lockfile_add_name(c, t.host, t.port);
}

/*
 * The next line of b[len] from *pos, without its \n or \r\n: 1, 0 at the
 * end, -1 over LOCKFILE_MAX_LINE or on a NUL byte.  Counts c->line.
 */
int
lockfile_next_line(struct ctx *c, const char *b, size_t len, size_t *pos,
    const char **lp, size_t *ll)
{
	const char	*nl;
	size_t		 n;

	if (*pos >= len)
		return 0;
	c->line++;
	nl = memchr(b + *pos, '\n', len - *pos);
	n = nl != NULL ? (size_t)(nl - (b + *pos)) : len - *pos;
	if (n > LOCKFILE_MAX_LINE)
		return lockfile_fail(c, "longer than %d bytes: not a lockfile this "
		    "reads", LOCKFILE_MAX_LINE);
	if (memchr(b + *pos, '\0', n) != NULL)
		return lockfile_fail(c, "a NUL byte: not a text file");
	*lp = b + *pos;
	*ll = n;
	if (n > 0 && (*lp)[n - 1] == '\r')
		(*ll)--;
	*pos += n + (nl != NULL);
	return 1;
}

void
lockfile_trim(const char **s, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)**s))
		(*s)++, (*n)--;
	while (*n > 0 && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/*
 * A value as YAML or INI writes it: "quoted", 'quoted', or bare up to
 * one of stop (NULL: to the end, trimmed).  *vp, *vn: the text; the
 * bytes consumed from s.  -1 when a quote does not close on the line.
 */
int
lockfile_value_at(struct ctx *c, const char *s, size_t n, const char *stop,
    const char **vp, size_t *vn, size_t *used)
{
	const char	*q;
	size_t		 i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '"' || s[i] == '\'')) {
		if ((q = memchr(s + i + 1, s[i], n - i - 1)) == NULL)
			return lockfile_fail(c, "a %s quote that does not close on its "
			    "line", s[i] == '"' ? "double" : "single");
		*vp = s + i + 1;
		*vn = (size_t)(q - *vp);
		*used = (size_t)(q + 1 - s);
		return 0;
	}
	*vp = s + i;
	while (i < n && (stop == NULL || strchr(stop, s[i]) == NULL))
		i++;
	*vn = (size_t)(s + i - *vp);
	*used = i;
	lockfile_trim(vp, vn);
	return 0;
}

/* --- package-lock.json, npm-shrinkwrap.json ------------------------------- */

/*
 * A JSON string at b[*i] ('"'), decoded into str (LOCKFILE_MAX_LINE + 1
 * bytes) by the one JSON string reader (common/json.c); *i after it.
 */
int
lockfile_json_string(struct ctx *c, const char *b, size_t len, size_t *i,
    char *str, size_t *slen)
{
	char		 e[192];
	const char	*why = e;
	ssize_t		 n;

	n = json_string(b + *i, len - *i, str, LOCKFILE_MAX_LINE + 1, slen, 0,
	    e, sizeof(e));
	if (n == 0)
		return lockfile_fail(c, "the file ends inside a string");
	if (n == -1) {
		/* the line says where; the offset in the string does not */
		if (strncmp(e, "byte ", 5) == 0 && strchr(e, ':') != NULL)
			why = strchr(e, ':') + 2;
		return lockfile_fail(c, "%s", why);
	}
	*i += (size_t)n;
	return 0;
}


void
lockfile_notes(unsigned notes, const char *prefix, FILE *f)
{
	static const struct {
		unsigned	 bit;
		const char	*text;
	} t[] = {
		{ LOCKFILE_NOTE_PYPI, "Python packages without an index "
		    "named: pypi.org and files.pythonhosted.org (pip's "
		    "default) added; an index in pip.conf or PIP_INDEX_URL is "
		    "not seen here (aisb policy derive env)" },
		{ LOCKFILE_NOTE_CRATES, "crates.io: its sparse index "
		    "(index.crates.io) and downloads (static.crates.io) added" },
		{ LOCKFILE_NOTE_REGISTRY, "another cargo registry: its index "
		    "host added; its downloads may come from the host its "
		    "config.json names (add it if the gate refuses cargo's downloads)" },
		{ LOCKFILE_NOTE_NOURL, "yarn berry and pnpm lockfiles do not "
		    "name the registry of registry packages: it is in "
		    ".yarnrc.yml (npmRegistryServer) or .npmrc (registry), read "
		    "when in the workspace; else aisb policy derive env or "
		    "derive npm" },
		{ LOCKFILE_NOTE_GODIRECT, "GOPROXY says direct: the hosts of "
		    "the module paths added; a vanity path's real host (its "
		    "go-import tag) is not known here" },
		{ LOCKFILE_NOTE_GOFALLBACK, "GOPROXY's direct after a proxy is "
		    "a fallback: the module paths' hosts were not added" },
		{ LOCKFILE_NOTE_INCLUDE, "requirements -r/-c files are not "
		    "followed: pass them as paths too" },
		{ LOCKFILE_NOTE_VARIABLE, "a URL with ${VARIABLE} left out: "
		    "its host is known only when the tool runs" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (notes & t[i].bit)
			fprintf(f, "%s%s\n", prefix, t[i].text);
}
