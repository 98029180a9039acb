/*
 * A rule's inspection keys, checked on the YAML tree (schema.c calls
 * policy_inspect_read() for a rule that has any of them):
 *
 *   inspect: true       the gate terminates TLS for the rule's host with a
 *                       certificate of its own CA, and sees each request
 *   requests:           allow: and deny: lists of "METHOD PATH" entries,
 *                       decided per request (request.c); deny wins
 *   secrets:            what the gate adds to an allowed request: a header
 *                       it sets, or the session's placeholder it replaces
 *
 * Why the checks:
 *   - Only an allow rule for a name may inspect: a deny rule lets nothing
 *     through to look at, and a certificate is minted for a name (a cidr
 *     rule's target has none to check the client's server name against).
 *   - requests: and secrets: need inspect: true, so that a secret is never
 *     meant for a tunnel the gate cannot open (it would silently not be
 *     added) and a request rule never promises what the gate cannot see.
 *   - An entry is METHOD, one space, PATH: METHOD is '*' or upper-case
 *     letters and '-' (what the gate reads as a method); PATH starts with
 *     '/' or '*', is printable ASCII without '?', '#' and '\' (the query
 *     is never matched: appending one must not slip past a deny entry),
 *     and '*' matches any bytes, '/' included.
 *   - A secret's header is never one that frames or routes the request
 *     (Host, Content-Length, Connection, ...): a secret must not be able
 *     to change where the request goes or how it is read.
 *
 * Bounds (policy.h): POLICY_MAX_REQ_RULES entries a list, patterns of
 * POLICY_MAX_REQ_PATTERN bytes and POLICY_MAX_REQ_STARS stars,
 * POLICY_MAX_SECRETS secrets a rule; names of POLICY_MAX_SECRET_NAME,
 * headers of POLICY_MAX_HEADER_NAME, users of POLICY_MAX_BASIC_USER bytes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load-int.h"

static const char *const hop_headers[] = {
	"host", "content-length", "transfer-encoding", "connection",
	"keep-alive", "proxy-connection", "proxy-authorization",
	"proxy-authenticate", "te", "trailer", "upgrade", "expect",
};

void
policy_inspect_free(struct policy_rule *r)
{
	size_t	 i;

	for (i = 0; i < r->nreq_allow; i++) {
		free(r->req_allow[i].pattern);
		free(r->req_allow[i].text);
	}
	for (i = 0; i < r->nreq_deny; i++) {
		free(r->req_deny[i].pattern);
		free(r->req_deny[i].text);
	}
	for (i = 0; i < r->nsecrets; i++) {
		free(r->secrets[i].name);
		free(r->secrets[i].header);
		free(r->secrets[i].user);
	}
	free(r->req_allow);
	free(r->req_deny);
	free(r->secrets);
	r->req_allow = r->req_deny = NULL;
	r->secrets = NULL;
	r->nreq_allow = r->nreq_deny = r->nsecrets = 0;
}

static int
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static int
reqs_same(const struct policy_reqrule *a, const struct policy_reqrule *b,
    size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(a[i].text, b[i].text) != 0)
			return 0;
	return 1;
}

/* Whether two rules inspect alike: the same keys, the same entries. */
int
policy_inspect_same(const struct policy_rule *a, const struct policy_rule *b)
{
	size_t	 i;

	if (a->inspect != b->inspect || a->nreq_allow != b->nreq_allow ||
	    a->nreq_deny != b->nreq_deny || a->nsecrets != b->nsecrets)
		return 0;
	if (!reqs_same(a->req_allow, b->req_allow, a->nreq_allow) ||
	    !reqs_same(a->req_deny, b->req_deny, a->nreq_deny))
		return 0;
	for (i = 0; i < a->nsecrets; i++) {
		const struct policy_secret *x = &a->secrets[i], *y = &b->secrets[i];

		if (strcmp(x->name, y->name) != 0 || x->mode != y->mode ||
		    !str_eq(x->header, y->header) || !str_eq(x->user, y->user))
			return 0;
	}
	return 1;
}

/* A plain true or false; anything else (yes, on, 1, "true") is refused. */
static int
parse_bool(struct ctx *c, const struct ynode *n, int *out)
{
	if (n->type == Y_SCALAR && n->plain && strcmp(n->val, "true") == 0)
		*out = 1;
	else if (n->type == Y_SCALAR && n->plain &&
	    strcmp(n->val, "false") == 0)
		*out = 0;
	else {
		ERR(c, n, "write inspect: true", "inspect must be true or "
		    "false");
		return -1;
	}
	return 0;
}

static int
method_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || ch == '-';
}

/* RFC 9110 tchar: what a header's name is made of. */
static int
token_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') ||
	    (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

/* "METHOD PATH" into e; the pattern's runs of '*' become one. */
static int
req_entry(struct ctx *c, const struct ynode *n, struct policy_reqrule *e)
{
	const char	*hint = "write \"POST /v1/messages*\": a method (or *), "
			    "one space, a path pattern";
	const char	*sp, *pat;
	size_t		 mlen, plen, i, stars = 0, out = 0;

	if (n->type != Y_SCALAR || n->len == 0 ||
	    memchr(n->val, '\0', n->len) != NULL) {
		ERR(c, n, hint, "a request entry is METHOD PATH, not %s",
		    n->type == Y_SCALAR ? "an empty string" :
		    policy_ytype_name(n));
		return -1;
	}
	if ((sp = memchr(n->val, ' ', n->len)) == NULL) {
		ERR(c, n, hint, "request entry '%.64s' has no path", n->val);
		return -1;
	}
	mlen = (size_t)(sp - n->val);
	pat = sp + 1;
	plen = n->len - mlen - 1;
	if (mlen == 0 || mlen > POLICY_MAX_METHOD) {
		ERR(c, n, hint, "request entry '%.64s': the method must be * or "
		    "1 to %d letters", n->val, POLICY_MAX_METHOD);
		return -1;
	}
	if (!(mlen == 1 && n->val[0] == '*'))
		for (i = 0; i < mlen; i++)
			if (!method_char(n->val[i])) {
				ERR(c, n, "methods are upper case, as sent: GET, "
				    "POST, ...; * is any method",
				    "request entry '%.64s': '%.*s' is not a "
				    "method", n->val, (int)mlen, n->val);
				return -1;
			}
	if (plen > 0 && pat[0] == ' ') {
		ERR(c, n, hint, "request entry '%.64s': one space between the "
		    "method and the path", n->val);
		return -1;
	}
	if (plen == 0 || plen > POLICY_MAX_REQ_PATTERN ||
	    (pat[0] != '/' && pat[0] != '*')) {
		ERR(c, n, hint, "request entry '%.64s': the path must start "
		    "with / or * and be at most %d bytes", n->val,
		    POLICY_MAX_REQ_PATTERN);
		return -1;
	}
	if ((e->pattern = malloc(plen + 1)) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	for (i = 0; i < plen; i++) {
		char	 ch = pat[i];

		if (ch == '?' || ch == '#') {
			ERR(c, n, "patterns match the path only; a query "
			    "string is never matched", "request entry "
			    "'%.64s': '%c' in the path", n->val, ch);
			return -1;
		}
		if ((unsigned char)ch <= 0x20 || (unsigned char)ch >= 0x7f ||
		    ch == '\\') {
			ERR(c, n, "a path is printable ASCII without spaces "
			    "or '\\': percent-encode the rest", "request entry "
			    "'%.64s': byte 0x%02x in the path", n->val,
			    (unsigned char)ch);
			return -1;
		}
		if (ch == '*' && out > 0 && e->pattern[out - 1] == '*')
			continue;
		if (ch == '*' && ++stars > POLICY_MAX_REQ_STARS) {
			ERR(c, n, NULL, "request entry '%.64s': more than %d "
			    "'*' in the path", n->val, POLICY_MAX_REQ_STARS);
			return -1;
		}
		e->pattern[out++] = ch;
	}
	e->pattern[out] = '\0';
	e->patlen = out;
	if (mlen == 1 && n->val[0] == '*')
		e->method[0] = '\0';
	else
		memcpy(e->method, n->val, mlen);
	e->method[mlen] = '\0';
	e->line = n->line;
	e->column = n->col;
	if (asprintf(&e->text, "%s %s", e->method[0] ? e->method : "*",
	    e->pattern) == -1) {
		e->text = NULL;
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	return 0;
}

static int
req_cmp(const void *a, const void *b)
{
	const struct policy_reqrule	*x = a, *y = b;
	int				 d;

	if ((d = strcmp(x->text, y->text)) != 0)
		return d;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (int)x->column - (int)y->column;
}

/* One of requests:' lists, sorted, each entry once (the first written). */
static int
req_list(struct ctx *c, const struct ynode *n, const char *which,
    struct policy_reqrule **out, size_t *nout)
{
	struct policy_reqrule	*e;
	size_t			 i, k;
	int			 ok = 1;

	if (policy_ynull(n))
		return 0;
	if (n->type != Y_SEQ) {
		ERR(c, n, "write [\"GET /*\", \"HEAD /*\"]",
		    "requests: %s must be a list, not %s", which,
		    policy_ytype_name(n));
		return -1;
	}
	if (n->nkids > POLICY_MAX_REQ_RULES) {
		ERR(c, n, "use '*' in the paths", "more than %d entries in "
		    "requests: %s", POLICY_MAX_REQ_RULES, which);
		return -1;
	}
	if (n->nkids == 0)
		return 0;
	if ((e = calloc(n->nkids, sizeof(*e))) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	*out = e;
	for (i = 0; i < n->nkids; i++) {
		if (req_entry(c, n->kids[i], &e[*nout]) == -1) {
			free(e[*nout].pattern);
			free(e[*nout].text);
			memset(&e[*nout], 0, sizeof(e[*nout]));
			ok = 0;
			continue;
		}
		(*nout)++;
	}
	if (*nout > 1)
		qsort(e, *nout, sizeof(*e), req_cmp);
	for (i = 1, k = *nout ? 1 : 0; i < *nout; i++) {
		if (strcmp(e[i].text, e[k - 1].text) == 0) {
			free(e[i].pattern);
			free(e[i].text);
			continue;
		}
		e[k++] = e[i];
	}
	*nout = k;
	return ok ? 0 : -1;
}

static int
parse_requests(struct ctx *c, const struct ynode *n, struct policy_rule *r)
{
	static const char *const keys[] = { "allow", "deny" };
	const struct ynode	*v[2];
	int			 ok = 1;

	if (n->type != Y_MAP) {
		ERR(c, n, "write requests: {allow: [\"GET /*\"]}", "requests "
		    "must be a mapping with allow: and deny:, not %s",
		    policy_ytype_name(n));
		return -1;
	}
	if (policy_map_keys(c, n, keys, 2, v, "requests") == -1)
		return -1;
	if (v[0] != NULL && req_list(c, v[0], "allow", &r->req_allow,
	    &r->nreq_allow) == -1)
		ok = 0;
	if (v[1] != NULL && req_list(c, v[1], "deny", &r->req_deny,
	    &r->nreq_deny) == -1)
		ok = 0;
	if (ok && r->nreq_allow == 0 && r->nreq_deny == 0) {
		ERR(c, n, "leave requests: out to allow every request, or list "
		    "entries", "requests: lists no entry");
		return -1;
	}
	return ok ? 0 : -1;
}

/* A scalar of 1..max bytes, each accepted by ok(); copied to *out. */
static int
scalar_of(struct ctx *c, const struct ynode *n, size_t max,
    int (*ok)(char), const char *what, const char *hint, char **out)
{
	size_t	 i;

	if (n->type != Y_SCALAR || n->len == 0 || n->len > max) {
		ERR(c, n, hint, "%s must be 1 to %zu bytes", what, max);
		return -1;
	}
	for (i = 0; i < n->len; i++)
		if (!ok(n->val[i])) {
			ERR(c, n, hint, "%s '%.64s': byte 0x%02x not allowed",
			    what, n->val, (unsigned char)n->val[i]);
			return -1;
		}
	if ((*out = strdup(n->val)) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	return 0;
}

static int
name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= '0' && ch <= '9') || ch == '_';
}

/* RFC 7617: a user-id has no ':'; printable ASCII here. */
static int
user_char(char ch)
{
	return (unsigned char)ch >= 0x20 && (unsigned char)ch < 0x7f &&
	    ch != ':';
}

static int
header_check(struct ctx *c, const struct ynode *n, char *h)
{
	size_t	 i;

	for (i = 0; h[i] != '\0'; i++)
		if (h[i] >= 'A' && h[i] <= 'Z')
			h[i] = (char)(h[i] - 'A' + 'a');
	for (i = 0; i < sizeof(hop_headers) / sizeof(hop_headers[0]); i++)
		if (strcmp(h, hop_headers[i]) == 0) {
			ERR(c, n, "a secret goes into a header such as "
			    "authorization or x-api-key", "header '%s' frames "
			    "or routes the request: no secret goes there", h);
			return -1;
		}
	return 0;
}

static int
parse_secret(struct ctx *c, const struct ynode *n, struct policy_secret *s)
{
	static const char *const keys[] = { "name", "header", "scheme",
		"user" };
	const struct ynode	*v[4];

	if (n->type != Y_MAP) {
		ERR(c, n, "write - name: API_KEY\n    header: x-api-key",
		    "a secret must be a mapping with name:, not %s",
		    policy_ytype_name(n));
		return -1;
	}
	if (policy_map_keys(c, n, keys, 4, v, "a secret") == -1)
		return -1;
	if (v[0] == NULL) {
		ERR(c, n, "add name: THE_VARIABLE", "a secret needs a name");
		return -1;
	}
	if (scalar_of(c, v[0], POLICY_MAX_SECRET_NAME, name_char,
	    "secret name", "a name is letters, digits and '_', as an "
	    "environment variable's", &s->name) == -1)
		return -1;
	if (s->name[0] >= '0' && s->name[0] <= '9') {
		ERR(c, v[0], "an environment variable's name starts with a "
		    "letter or '_'", "secret name '%s' starts with a digit",
		    s->name);
		return -1;
	}
	if (v[1] != NULL && (scalar_of(c, v[1], POLICY_MAX_HEADER_NAME,
	    token_char, "header", "write header: x-api-key", &s->header) == -1 ||
	    header_check(c, v[1], s->header) == -1))
		return -1;
	s->mode = s->header != NULL ? POLICY_SECRET_HEADER :
	    POLICY_SECRET_REPLACE;
	if (v[2] != NULL) {
		if (v[2]->type == Y_SCALAR && strcmp(v[2]->val, "bearer") == 0)
			s->mode = POLICY_SECRET_BEARER;
		else if (v[2]->type == Y_SCALAR &&
		    strcmp(v[2]->val, "basic") == 0)
			s->mode = POLICY_SECRET_BASIC;
		else {
			ERR(c, v[2], "scheme: bearer (Authorization: Bearer "
			    "VALUE) or scheme: basic (with user:)",
			    "unknown scheme '%.32s'", v[2]->type == Y_SCALAR ?
			    v[2]->val : "");
			return -1;
		}
		if (s->header == NULL &&
		    (s->header = strdup("authorization")) == NULL) {
			ERR(c, v[2], NULL, "out of memory");
			return -1;
		}
	}
	if (s->mode == POLICY_SECRET_BASIC) {
		if (v[3] == NULL) {
			ERR(c, n, "add user: x-access-token (GitHub), or the "
			    "user the service expects", "scheme: basic needs "
			    "user:");
			return -1;
		}
		if (scalar_of(c, v[3], POLICY_MAX_BASIC_USER, user_char,
		    "user", "a user is printable ASCII without ':'",
		    &s->user) == -1)
			return -1;
	} else if (v[3] != NULL) {
		ERR(c, v[3], "user: goes with scheme: basic", "user: without "
		    "scheme: basic");
		return -1;
	}
	return 0;
}

static int
secret_cmp(const void *a, const void *b)
{
	const struct policy_secret	*x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int
parse_secrets(struct ctx *c, const struct ynode *n, struct policy_rule *r)
{
	struct policy_secret	*s;
	size_t			 i, j;
	int			 ok = 1;

	if (n->type != Y_SEQ || n->nkids == 0) {
		ERR(c, n, "write secrets: [{name: API_KEY, header: x-api-key}]",
		    "secrets must be a list of secrets");
		return -1;
	}
	if (n->nkids > POLICY_MAX_SECRETS) {
		ERR(c, n, NULL, "more than %d secrets in one rule",
		    POLICY_MAX_SECRETS);
		return -1;
	}
	if ((s = calloc(n->nkids, sizeof(*s))) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	r->secrets = s;
	for (i = 0; i < n->nkids; i++) {
		struct policy_secret	*e = &s[r->nsecrets++];

		if (parse_secret(c, n->kids[i], e) == -1) {
			ok = 0;
			continue;
		}
		for (j = 0; j + 1 < r->nsecrets; j++) {
			if (s[j].name == NULL)
				continue;	/* refused above */
			if (strcmp(s[j].name, e->name) == 0) {
				ERR(c, n->kids[i], "name each secret once",
				    "secret %s is listed twice in this rule",
				    e->name);
				ok = 0;
			} else if (e->header != NULL && s[j].header != NULL &&
			    strcmp(s[j].header, e->header) == 0) {
				ERR(c, n->kids[i], "one secret a header",
				    "secrets %s and %s both set header %s",
				    s[j].name, e->name, e->header);
				ok = 0;
			}
		}
	}
	if (ok)
		qsort(s, r->nsecrets, sizeof(*s), secret_cmp);
	return ok ? 0 : -1;
}

int
policy_inspect_read(struct ctx *c, struct policy_rule *r,
    const struct ynode *inspect, const struct ynode *requests,
    const struct ynode *secrets)
{
	const struct ynode	*first = inspect != NULL ? inspect :
				    requests != NULL ? requests : secrets;
	int			 ok = 1;

	if (r->action != POLICY_ALLOW) {
		ERR(c, first, "move inspect:, requests: and secrets: to an "
		    "allow rule", "a deny rule lets nothing through to "
		    "inspect");
		return -1;
	}
	if (r->kind == POLICY_RULE_CIDR) {
		ERR(c, first, "write the host's name: host: api.example.com",
		    "inspection is by host name: the gate mints a certificate "
		    "for the name the client asks for");
		return -1;
	}
	if (inspect != NULL && parse_bool(c, inspect, &r->inspect) == -1)
		return -1;
	if (requests != NULL && parse_requests(c, requests, r) == -1)
		ok = 0;
	if (secrets != NULL && parse_secrets(c, secrets, r) == -1)
		ok = 0;
	if (!r->inspect && requests != NULL) {
		ERR(c, requests, "add inspect: true to this rule", "requests: "
		    "needs inspect: true: the gate sees a request's method and "
		    "path only inside TLS it terminates");
		ok = 0;
	}
	if (!r->inspect && secrets != NULL) {
		ERR(c, secrets, "add inspect: true to this rule", "secrets: "
		    "needs inspect: true: the gate adds a secret only inside "
		    "TLS it terminates, never to a tunnel it cannot open");
		ok = 0;
	}
	return ok ? 0 : -1;
}
