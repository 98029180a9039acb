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
 * prints none for a refused POST: "RPC failed; HTTP 403" is all); the
 * policy library reads the discovery and words the refusal
 * (policy_decide_push_discovery), so that aisb policy test says the same.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

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
		if ((r = policy_decide_push_discovery(rule, t[j].p, t[j].len,
		    pair->rpc, sizeof(pair->rpc), &rl, &o)) == -1) {
			*err = "a git discovery (info/refs) with an ambiguous "
			    "query: service= twice, a malformed "
			    "percent-encoding or an escaped control byte";
			return -1;
		}
		if (r == 0)
			continue;
		*d = o;
		policy_push_detail(&o, pair->rpc, rl, pair->detail,
		    sizeof(pair->detail));
		d->detail = pair->detail;
		pair->method = "POST";
		pair->mlen = 4;
		pair->target = pair->rpc;
		pair->tlen = rl;
		return 0;
	}
	return 0;
}
