/*
 * What an upstream may act on besides its request line (override.h): the
 * protocol an Upgrade names, and other methods and paths.  Frameworks and
 * front ends read a method from a field (X-HTTP-Method-Override: Google's
 * APIs, ASP.NET, Express's method-override; X-HTTP-Method,
 * X-Method-Override) or from the query's _method (Symfony, Laravel),
 * upper-casing it, and a path from X-Original-URL or X-Rewrite-URL (IIS,
 * older Symfony): "POST /allowed" with "X-HTTP-Method-Override: delete" is a
 * DELETE there.  Each such method and path is decided with the others as
 * policy_decide_request decides the line; a body's _method is not looked at
 * (bodies never are: docs/policy.md says so).  A git push over smart HTTP
 * begins with GET REPO/info/refs?service=git-receive-pack: decided as the
 * POST REPO/git-receive-pack it announces, a refused push stops there,
 * where git prints a refusal's text/plain body as "remote:" lines (it
 * prints none for a refused POST: "RPC failed; HTTP 403" is all).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gate/http.h"
#include "gate/override.h"

static const char *const method_fields[] = {
	"x-http-method-override", "x-http-method", "x-method-override",
};
static const char *const path_fields[] = {
	"x-original-url", "x-rewrite-url",
};

struct alt {
	const char	*p;
	size_t		 len;
	int		 over;		/* an override's, not the line's */
};

static int
is_one_of(const char *buf, struct gate_http_span name,
    const char *const *list, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (gate_http_span_eq(buf, name, list[i]))
			return 1;
	return 0;
}

/* p[0..len) upper-cased into out: 1 to GATE_HTTP_MAX_METHOD letters, '-' */
static int
method_upper(const char *p, size_t len, char *out)
{
	size_t	 i;

	if (len == 0 || len > GATE_HTTP_MAX_METHOD)
		return -1;
	for (i = 0; i < len; i++) {
		if (p[i] >= 'a' && p[i] <= 'z')
			out[i] = (char)(p[i] - 'a' + 'A');
		else if ((p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-')
			out[i] = p[i];
		else
			return -1;
	}
	out[len] = '\0';
	return 0;
}

/* an origin-form target: '/', then printable ASCII without spaces */
static int
is_path(const char *p, size_t len)
{
	size_t	 i;

	if (len == 0 || p[0] != '/' || len > GATE_HTTP_MAX_LINE)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			return 0;
	return 1;
}

/* the next "_method=" parameter of the query t[*i..len), its value */
static int
query_method(const char *t, size_t len, size_t *i, struct gate_http_span *v)
{
	static const char	 key[] = "_method=";
	size_t			 s, e;

	while (*i < len) {
		s = *i;
		for (e = s; e < len && t[e] != '&'; e++)
			;
		*i = e + 1;
		if (e - s >= sizeof(key) - 1 &&
		    memcmp(t + s, key, sizeof(key) - 1) == 0) {
			v->off = (uint32_t)(s + sizeof(key) - 1);
			v->len = (uint32_t)(e - v->off);
			return 1;
		}
	}
	return 0;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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
			if (len - i < 3 || (hi = hexval(p[i + 1])) == -1 ||
			    (lo = hexval(p[i + 2])) == -1)
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
gate_override_push_discovery(const char *t, size_t len, size_t *repolen)
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

/*
 * Why a push's discovery was refused, into pair->detail: the POST it
 * announces (pair->rpc[0..len)) and what refused that, for the "remote:"
 * lines git prints.
 */
static void
push_detail(struct gate_override_pair *pair,
    const struct policy_request_decision *o, size_t len)
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
	snprintf(pair->detail, sizeof(pair->detail), "git push refused at its "
	    "discovery: the push it announces, POST %.*s%s, is %s",
	    (int)(len > 96 ? 96 : len), pair->rpc, len > 96 ? "..." : "",
	    why);
}

int
gate_override_upgrade(const struct gate_http_req *h, const char *head,
    char *out, size_t max)
{
	size_t	 i;

	out[0] = '\0';
	for (i = 0; i < h->nhdrs; i++) {
		struct gate_http_span v = h->hdrs[i].value;

		if (!gate_http_span_eq(head, h->hdrs[i].name, "upgrade"))
			continue;
		snprintf(out, max + 4, "%.*s%s", (int)(v.len > max ? max :
		    v.len), head + v.off, v.len > max ? "..." : "");
		if (!gate_http_span_eq(head, v, "websocket"))
			return -1;
	}
	return 0;
}

int
gate_override_decide(const struct policy_rule *rule,
    const struct gate_http_req *req, const char *head, const char *tg,
    size_t tglen, struct policy_request_decision *d,
    struct gate_override_pair *pair, const char **err)
{
	char				 up[GATE_OVERRIDE_MAX][GATE_HTTP_MAX_METHOD + 1];
	struct alt			 m[GATE_OVERRIDE_MAX + 1];
	struct alt			 t[GATE_OVERRIDE_MAX + 1];
	struct policy_request_decision	 o;
	struct gate_http_span		 v;
	const char			*q;
	size_t				 nm = 1, nt = 1, i, j, qi, rl;
	int				 r;

	m[0] = (struct alt){ head + req->method.off, req->method.len, 0 };
	t[0] = (struct alt){ tg, tglen, 0 };
	for (i = 0; i < req->nhdrs; i++) {
		struct gate_http_span	 name = req->hdrs[i].name;
		int			 ism;

		ism = is_one_of(head, name, method_fields,
		    sizeof(method_fields) / sizeof(method_fields[0]));
		if (!ism && !is_one_of(head, name, path_fields,
		    sizeof(path_fields) / sizeof(path_fields[0])))
			continue;
		if (nm + nt - 2 == GATE_OVERRIDE_MAX) {
			*err = "more method or URL override fields than the "
			    "gate decides";
			return -1;
		}
		v = req->hdrs[i].value;
		if (ism) {
			if (method_upper(head + v.off, v.len, up[nm - 1]) == -1) {
				*err = "a method override field that is no "
				    "method";
				return -1;
			}
			m[nm] = (struct alt){ up[nm - 1], v.len, 1 };
			nm++;
		} else {
			if (!is_path(head + v.off, v.len)) {
				*err = "a URL override field that is no path";
				return -1;
			}
			t[nt] = (struct alt){ head + v.off, v.len, 1 };
			nt++;
		}
	}
	if ((q = memchr(tg, '?', tglen)) != NULL) {
		qi = 0;
		while (query_method(q + 1, tglen - (size_t)(q + 1 - tg), &qi,
		    &v)) {
			if (nm + nt - 2 == GATE_OVERRIDE_MAX ||
			    method_upper(q + 1 + v.off, v.len, up[nm - 1]) == -1) {
				*err = "a _method query parameter that is no "
				    "method, or one override too many";
				return -1;
			}
			m[nm] = (struct alt){ up[nm - 1], v.len, 1 };
			nm++;
		}
	}
	for (i = 0; i < nm; i++)
		for (j = 0; j < nt; j++) {
			if (i == 0 && j == 0)
				continue;	/* the line: decided already */
			policy_decide_request(rule, m[i].p, m[i].len, t[j].p,
			    t[j].len, &o);
			if (o.verdict == POLICY_ALLOW)
				continue;
			*d = o;
			d->detail = m[i].over ? "the method an override names "
			    "(X-HTTP-Method-Override, _method and the like) is "
			    "refused: the upstream may act on it" : "the path "
			    "an override field names (X-Original-URL, "
			    "X-Rewrite-URL) is refused: the upstream may act "
			    "on it";
			/* the upper-cased copy is this function's: the pair's own */
			memcpy(pair->upper, m[i].p, m[i].len);
			pair->upper[m[i].len] = '\0';
			pair->method = pair->upper;
			pair->mlen = m[i].len;
			pair->target = t[j].p;
			pair->tlen = t[j].len;
			return 0;
		}
	for (j = 0; j < nt; j++) {
		if ((r = gate_override_push_discovery(t[j].p, t[j].len,
		    &rl)) == -1 || (r == 1 && rl + sizeof(GATE_OVERRIDE_RPC) >
		    sizeof(pair->rpc))) {
			*err = "a git discovery (info/refs) with an ambiguous "
			    "query: service= twice, a malformed "
			    "percent-encoding or an escaped control byte";
			return -1;
		}
		if (r == 0)
			continue;
		memcpy(pair->rpc, t[j].p, rl);
		memcpy(pair->rpc + rl, GATE_OVERRIDE_RPC,
		    sizeof(GATE_OVERRIDE_RPC));
		rl += sizeof(GATE_OVERRIDE_RPC) - 1;
		policy_decide_request(rule, "POST", 4, pair->rpc, rl, &o);
		if (o.verdict == POLICY_ALLOW)
			continue;
		*d = o;
		push_detail(pair, &o, rl);
		d->detail = pair->detail;
		pair->method = "POST";
		pair->mlen = 4;
		pair->target = pair->rpc;
		pair->tlen = rl;
		return 0;
	}
	return 0;
}
