/*
 * Requests on an inspected host: the decision on one request by its
 * method and path (the rule's requests: entries, inspect.c reads them),
 * the change that would allow a refused one, and the rule's secrets, for
 * the gate.  Pure and allocation-free, as the matcher of names is.
 *
 * The path is decided as an upstream will read it, or refused:
 *   - only the path is matched, never the query: "POST /x?y" is the
 *     request "POST /x" to every entry, so a deny entry cannot be evaded
 *     by appending a query;
 *   - a path an upstream may normalise to another one is refused before
 *     any entry is tried (dot segments, "//", a backslash, a fragment,
 *     and a percent-encoded '/', '\' or unreserved byte, which RFC 3986
 *     normalisation decodes): "/a/./git-receive-pack" must not pass a
 *     deny of "POST /a/git-receive-pack" and then be read as that path;
 *   - deny entries match ignoring case (an upstream that folds case
 *     would reach the denied path), allow entries as written (allowing
 *     less is the safe side);
 *   - TRACE and TRACK are refused before any of it: an upstream answers
 *     them with the request it received, so the answer would hand the
 *     sandbox the secrets the gate added.
 * '*' in a pattern matches any run of bytes, '/' included; the match is
 * the usual two-pointer glob, so its work is bounded by the length of the
 * path times the pattern's stars (POLICY_MAX_REQ_STARS).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "policy-int.h"

#define FIX_PATH_MAX	200	/* bytes of a path in a suggested entry */

int
policy_rule_inspect(const struct policy_rule *r)
{
	return r != NULL && r->inspect;
}

int
policy_rule_inspect_same(const struct policy_rule *a,
    const struct policy_rule *b)
{
	if (!policy_rule_inspect(a) || !policy_rule_inspect(b))
		return policy_rule_inspect(a) == policy_rule_inspect(b);
	return policy_inspect_same(a, b);
}

size_t
policy_rule_secret_count(const struct policy_rule *r)
{
	return r != NULL ? r->nsecrets : 0;
}

void
policy_rule_secret(const struct policy_rule *r, size_t i,
    struct policy_secret_info *out)
{
	const struct policy_secret	*s = &r->secrets[i];

	out->name = s->name;
	out->mode = s->mode;
	out->header = s->header;
	out->user = s->user;
	out->query = s->query;
}

static int
lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static int
glob(const char *p, size_t pn, const char *s, size_t sn, int icase)
{
	size_t	 pi = 0, si = 0, star = (size_t)-1, mark = 0;

	while (si < sn) {
		if (pi < pn && p[pi] == '*') {
			star = pi++;
			mark = si;
		} else if (pi < pn && (p[pi] == s[si] || (icase &&
		    lower((unsigned char)p[pi]) ==
		    lower((unsigned char)s[si])))) {
			pi++;
			si++;
		} else if (star != (size_t)-1) {
			pi = star + 1;
			si = ++mark;
		} else
			return 0;
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

static int
hex(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = lower(ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* NULL when the path is in its normal form, else why it is not. */
static const char *
path_abnormal(const char *p, size_t n)
{
	size_t	 i, seg = 1;

	if (n == 0 || p[0] != '/')
		return "the path does not start with /";
	for (i = 0; i < n; i++) {
		unsigned char	 ch = (unsigned char)p[i];
		int		 hi, lo, v;

		if (ch <= 0x20 || ch >= 0x7f)
			return "a control, space or non-ASCII byte in the path";
		if (ch == '\\')
			return "a backslash in the path";
		if (ch == '#')
			return "a fragment in the request target";
		if (ch == '/') {
			if (i > 0 && p[i - 1] == '/')
				return "an empty segment (//) in the path";
			seg = i + 1;
		} else if (ch == '%') {
			if (i + 2 >= n || (hi = hex(p[i + 1])) == -1 ||
			    (lo = hex(p[i + 2])) == -1)
				return "a malformed percent-encoding in the path";
			v = hi * 16 + lo;
			if ((v >= 'A' && v <= 'Z') || (v >= 'a' && v <= 'z') ||
			    (v >= '0' && v <= '9') || v == '-' || v == '.' ||
			    v == '_' || v == '~' || v == '/' || v == '\\')
				return "a percent-encoded '/', '\\' or unreserved "
				    "byte in the path";
		}
		if (ch == ';' && i == seg)
			return "an empty segment with parameters (/;) in the "
			    "path";
		/* a segment "." or ".." ends here, or its parameters start */
		if (ch != '/' && ch != ';' && (i + 1 == n || p[i + 1] == '/' ||
		    p[i + 1] == ';') && p[seg] == '.' &&
		    (i == seg || (i == seg + 1 && p[i] == '.')))
			return "a dot segment (. or .., parameters or not: "
			    "..;x) in the path";
	}
	return NULL;
}

/*
 * p[0..n) without its segments' parameters (from a ';' to the segment's
 * end), as servlet containers (Tomcat, Jetty: JGit, Gerrit, Bitbucket
 * Server) and Spring route a path: "/r.git/git-receive-pack;x" is their
 * "/r.git/git-receive-pack".  Into out (n bytes at least): its length, or
 * 0 when p has no parameters.
 */
static size_t
path_unparam(const char *p, size_t n, char *out)
{
	size_t	 i, o = 0;
	int	 in = 0, any = 0;

	for (i = 0; i < n; i++) {
		if (p[i] == '/')
			in = 0;
		else if (p[i] == ';')
			in = any = 1;
		if (!in)
			out[o++] = p[i];
	}
	return any ? o : 0;
}

static int
method_is(const struct policy_reqrule *e, const char *m, size_t mlen)
{
	return e->method[0] == '\0' || (strlen(e->method) == mlen &&
	    memcmp(e->method, m, mlen) == 0);
}

static void
decided(struct policy_request_decision *d, enum policy_verdict v,
    enum policy_reason why, const struct policy_reqrule *e)
{
	d->verdict = v;
	d->reason = why;
	d->entry = e != NULL ? e->text : NULL;
	d->line = e != NULL ? e->line : 0;
	d->column = e != NULL ? e->column : 0;
}

/* The entries on one path (target[0..plen)): deny wins, then allow. */
static void
decide_path(const struct policy_rule *r, const char *m, size_t mlen,
    const char *target, size_t plen, struct policy_request_decision *d)
{
	size_t	 i;

	for (i = 0; i < r->nreq_deny; i++) {
		const struct policy_reqrule *e = &r->req_deny[i];

		if (method_is(e, m, mlen) &&
		    glob(e->pattern, e->patlen, target, plen, 1)) {
			decided(d, POLICY_DENY, POLICY_R_REQUEST_DENIED, e);
			return;
		}
	}
	if (r->nreq_allow == 0)
		return;
	for (i = 0; i < r->nreq_allow; i++) {
		const struct policy_reqrule *e = &r->req_allow[i];

		if (method_is(e, m, mlen) &&
		    glob(e->pattern, e->patlen, target, plen, 0)) {
			decided(d, POLICY_ALLOW, POLICY_R_ALLOWED, e);
			return;
		}
	}
	decided(d, POLICY_DENY, POLICY_R_REQUEST_NOT_ALLOWED, NULL);
}

void
policy_decide_request(const struct policy_rule *r, const char *m,
    size_t mlen, const char *target, size_t tlen,
    struct policy_request_decision *d)
{
	char		 bare[POLICY_MAX_REQ_PATH];
	const char	*q;
	size_t		 plen;

	memset(d, 0, sizeof(*d));
	decided(d, POLICY_ALLOW, POLICY_R_ALLOWED, NULL);
	if (r == NULL || !r->inspect)
		return;
	if ((mlen == 5 && memcmp(m, "TRACE", 5) == 0) ||
	    (mlen == 5 && memcmp(m, "TRACK", 5) == 0)) {
		decided(d, POLICY_DENY, POLICY_R_REQUEST_METHOD, NULL);
		d->detail = "TRACE and TRACK echo the request back, with what "
		    "the gate adds to it: never sent to an inspected host";
		return;
	}
	if (r->nreq_allow == 0 && r->nreq_deny == 0)
		return;
	q = memchr(target, '?', tlen);
	plen = q != NULL ? (size_t)(q - target) : tlen;
	if ((d->detail = path_abnormal(target, plen)) != NULL) {
		decided(d, POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, NULL);
		return;
	}
	decide_path(r, m, mlen, target, plen, d);
	if (d->verdict != POLICY_ALLOW || memchr(target, ';', plen) == NULL)
		return;
	/* and as a server that drops the parameters reads it: both pass */
	if (plen > POLICY_MAX_REQ_PATH) {
		decided(d, POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, NULL);
		d->detail = "a path with parameters (;) longer than the gate "
		    "decides";
		return;
	}
	decide_path(r, m, mlen, bare, path_unparam(target, plen, bare), d);
	if (d->verdict != POLICY_ALLOW)
		d->detail = "the path without its parameters (;...), as "
		    "servlet containers read it, is refused";
}

/*
 * p[0..len), a query parameter's name or value, percent-decoded ('+' a
 * space) and trimmed of spaces, compared with word in any case:
 * 1 equal, 0 not, -1 a malformed escape or an escaped control byte.
 * Every byte is looked at, however long: only what is kept is bounded.
 */
static int
decoded_is(const char *p, size_t len, const char *word)
{
	char		 buf[32];
	size_t		 i, n = 0, end = 0;
	unsigned char	 ch;
	int		 hi, lo;

	for (i = 0; i < len; i++) {
		ch = (unsigned char)p[i];
		if (ch == '%') {
			if (len - i < 3 || (hi = hex(p[i + 1])) == -1 ||
			    (lo = hex(p[i + 2])) == -1)
				return -1;
			ch = (unsigned char)(hi << 4 | lo);
			if (ch < 0x20 || ch == 0x7f)
				return -1;
			i += 2;
		} else if (ch == '+')
			ch = ' ';
		if (n == 0 && ch == ' ')
			continue;		/* leading: trimmed */
		if (n < sizeof(buf))
			buf[n] = (char)ch;
		n++;
		if (ch != ' ')
			end = n;		/* trailing ones are not */
	}
	return end <= sizeof(buf) && end == strlen(word) &&
	    strncasecmp(buf, word, end) == 0;
}

int
policy_push_discovery(const char *t, size_t len, size_t *repolen)
{
	static const char	 tail[] = "/info/refs";
	const size_t		 tl = sizeof(tail) - 1;
	const char		*q;
	size_t			 n, s, e, eq, v, nsvc = 0;
	int			 push = 0, svc, r;

	if ((q = memchr(t, '?', len)) == NULL)
		return 0;		/* git's discovery names its service */
	n = (size_t)(q - t);
	if (n > tl && t[n - 1] == '/')
		n--;
	/* the last segment without its ;parameters, as servlets route it */
	for (e = n; e > 0 && t[e - 1] != '/'; e--)
		;
	for (; e < n && t[e] != ';'; e++)
		;
	n = e;
	if (n < tl || strncasecmp(t + n - tl, tail, tl) != 0)
		return 0;
	for (s = (size_t)(q - t) + 1; s <= len; s = e + 1) {
		for (e = s; e < len && t[e] != '&' && t[e] != ';' &&
		    t[e] != '#'; e++)
			;
		for (eq = s; eq < e && t[eq] != '='; eq++)
			;
		v = eq < e ? eq + 1 : e;
		if ((svc = decoded_is(t + s, eq - s, "service")) == -1 ||
		    (r = decoded_is(t + v, e - v, "git-receive-pack")) == -1)
			return -1;
		if (svc == 1 && ++nsvc > 1)
			return -1;	/* which one a server takes: a guess */
		if (svc == 1 && r == 1)
			push = 1;
	}
	*repolen = n - tl;
	return push;
}

int
policy_decide_push_discovery(const struct policy_rule *r, const char *t,
    size_t len, char *rpc, size_t rpcmax, size_t *rpclen,
    struct policy_request_decision *d)
{
	size_t	 rl;
	int	 push;

	if ((push = policy_push_discovery(t, len, &rl)) != 1)
		return push;
	if (rl + sizeof(POLICY_PUSH_RPC) > rpcmax)
		return -1;	/* no room to decide it: refused all the same */
	memcpy(rpc, t, rl);
	memcpy(rpc + rl, POLICY_PUSH_RPC, sizeof(POLICY_PUSH_RPC));
	rl += sizeof(POLICY_PUSH_RPC) - 1;
	policy_decide_request(r, "POST", 4, rpc, rl, d);
	if (d->verdict == POLICY_ALLOW)
		return 0;
	*rpclen = rl;
	return 1;
}

void
policy_push_detail(const struct policy_request_decision *o, const char *rpc,
    size_t len, char *out, size_t outlen)
{
	char	 why[128];

	if (o->reason == POLICY_R_REQUEST_DENIED && o->entry != NULL)
		snprintf(why, sizeof(why), "denied by requests: entry %.64s "
		    "(line %u, column %u)", o->entry, o->line, o->column);
	else if (o->reason == POLICY_R_REQUEST_NOT_ALLOWED)
		snprintf(why, sizeof(why), "allowed by no requests: entry");
	else
		snprintf(why, sizeof(why), "refused: %s", o->detail != NULL ?
		    o->detail : policy_reason_str(o->reason));
	snprintf(out, outlen, "git push refused at its discovery: the push it "
	    "announces, POST %.*s%s, is %s", (int)(len > 96 ? 96 : len), rpc,
	    len > 96 ? "..." : "", why);
}

/*
 * The entry that allows method and path: at most FIX_PATH_MAX bytes of
 * the path and fewer stars than an entry may have (a literal '*' of a
 * path is a wildcard in a pattern: harmless, it only widens), cut ones
 * ending in '*'.  Quoted for YAML: double quotes, or single in the flow
 * form.
 */
static void
put_entry(struct buf *o, const char *m, size_t mlen, const char *p,
    size_t plen, int flow)
{
	size_t	 i, stars = 0;
	int	 cut = plen > FIX_PATH_MAX;

	buf_printf(o, "%c%.*s ", flow ? '\'' : '"', (int)mlen, m);
	for (i = 0; i < plen && i < FIX_PATH_MAX; i++) {
		if (p[i] == '*' && ++stars >= POLICY_MAX_REQ_STARS) {
			cut = 1;
			break;
		}
		if (flow && p[i] == '\'')
			buf_printf(o, "''");
		else if (!flow && (p[i] == '"' || p[i] == '\\'))
			buf_printf(o, "\\%c", p[i]);
		else
			buf_add(o, &p[i], 1);
	}
	buf_printf(o, "%s%c", cut ? "*" : "", flow ? '\'' : '"');
}

int
policy_request_fix_yaml(const struct policy_rule *r, const char *m,
    size_t mlen, const char *target, size_t tlen, enum policy_reason reason,
    int flow, char *buf, size_t len)
{
	struct buf	 o;
	const char	*q;
	size_t		 plen;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	if (r == NULL || mlen == 0 || mlen > POLICY_MAX_METHOD)
		return 0;
	q = memchr(target, '?', tlen);
	plen = q != NULL ? (size_t)(q - target) : tlen;
	buf_fixed(&o, buf, len);	/* the caller's: never grown */
	switch (reason) {
	case POLICY_R_REQUEST_DENIED:
		buf_printf(&o, "# a requests: deny entry refuses it: remove or "
		    "narrow that entry%s", flow ? "" : "\n");
		break;
	case POLICY_R_REQUEST_NOT_ALLOWED:
		if (path_abnormal(target, plen) != NULL)
			return 0;
		if (flow) {
			buf_printf(&o, "{requests: {allow: [");
			put_entry(&o, m, mlen, target, plen, 1);
			buf_printf(&o, "]}}");
		} else {
			buf_printf(&o, "# add to requests: allow: of the rule "
			    "at line %u, column %u\n- ", r->line, r->column);
			put_entry(&o, m, mlen, target, plen, 0);
			buf_printf(&o, "\n");
		}
		break;
	default:
		return 0;
	}
	if (o.failed) {
		buf[0] = '\0';
		return -1;
	}
	return (int)o.len;
}
