/*
 * libFuzzer: the request path of an inspected connection, pure.  The
 * first byte picks what the rest is:
 *
 *   0  a request head: parsed (gate_http_parse), decided by each rule's
 *      requests: entries, and when allowed written upstream with the
 *      rule's secrets (gate_inject_head).  What is written parses again
 *      as one whole head; a rule without secrets writes the head it was
 *      given, byte for byte; a secret's value is written only for a
 *      rule that has that secret (none leaks to another host's head),
 *      and a query secret's only as the value of its parameter in the
 *      query (never in the path or a header, where the client put it).
 *      Its overrides (gate_override_decide) are decided too: a refusal
 *      names a method of at most GATE_HTTP_MAX_METHOD upper-case bytes
 *      and a path of the head, or a push's discovery's POST
 *      REPO/git-receive-pack (REPO a prefix of a path of the head), and
 *      such a request goes nowhere.
 *   1  a response head (gate_http_resp_init): fed whole or in two
 *      pieces, the same answer; a status in 100..999.
 *   2  a secrets file (gate_secrets_parse): all or nothing, and what it
 *      holds within the bounds of secrets.c.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gate.h"
#include "http.h"
#include "inject.h"
#include "override.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char	 yaml[] =
    "version: 1\n"
    "allow:\n"
    "  - host: hdr.test\n"
    "    inspect: true\n"
    "    requests: {allow: [\"POST /v1/*\", \"GET /*\"], deny: [\"* */admin*\"]}\n"
    "    secrets: [{name: A, header: x-api-key}]\n"
    "  - host: basic.test\n"
    "    inspect: true\n"
    "    requests: {deny: [\"POST */git-receive-pack\"]}\n"
    "    secrets: [{name: B, scheme: basic, user: u}]\n"
    "  - host: repl.test\n"
    "    inspect: true\n"
    "    secrets: [{name: R, query: key}, {name: A, scheme: bearer}]\n"
    "  - host: none.test\n"
    "    inspect: true\n";
static const char	 secrets[] =
    "aisb-secrets 1\n"
    "A aisb-ph-AAAAAAAAAAAAAAAA VALUE-OF-A-1\n"
    "B aisb-ph-BBBBBBBBBBBBBBBB VALUE-OF-B-2\n"
    "R aisb-ph-RRRRRRRRRRRRRRRR VALUE-OF-R-3\n";
static const char *const hosts[] = {
	"hdr.test", "basic.test", "repl.test", "none.test"
};

static struct policy		*pol;
static struct gate_secrets	*ss;

static void
init(void)
{
	struct policy_errors	 errs;
	char			 err[256];

	if (pol != NULL)
		return;
	if (policy_load_buffer("f.yaml", yaml, sizeof(yaml) - 1, &pol,
	    &errs) == -1 || (ss = gate_secrets_parse(secrets,
	    sizeof(secrets) - 1, err, sizeof(err))) == NULL)
		abort();
}

/*
 * Whether every value of R the head out holds, and the client's head in
 * did not, is the whole value of a "key" parameter of the query.
 */
static int
query_only(const char *out, size_t len, const char *in, size_t inlen)
{
	static const char	 v[] = "VALUE-OF-R-3";
	const char		*p = out, *q, *eol;
	size_t			 n = sizeof(v) - 1;

	if (memmem(in, inlen, v, n) != NULL)
		return 1;
	if ((eol = memchr(out, '\n', len)) == NULL ||
	    (q = memchr(out, '?', (size_t)(eol - out))) == NULL)
		q = eol = out;
	while ((p = memmem(p, len - (size_t)(p - out), v, n)) != NULL) {
		if (p < q + 4 || p > eol || memcmp(p - 4, "key=", 4) != 0 ||
		    (p[-5] != '?' && p[-5] != '&') ||
		    (p[n] != '&' && p[n] != ' '))
			return 0;
		p += n;
	}
	return 1;
}

/* Whether the rule names the secret. */
static int
has_secret(const struct policy_rule *r, const char *name)
{
	struct policy_secret_info	 s;
	size_t				 i;

	for (i = 0; i < policy_rule_secret_count(r); i++) {
		policy_rule_secret(r, i, &s);
		if (strcmp(s.name, name) == 0)
			return 1;
	}
	return 0;
}

static void
request(const char *buf, size_t size)
{
	struct gate_http_req		 req, again;
	struct policy_decision		 d;
	struct policy_request_decision	 rd;
	struct gate_override_pair	 pair;
	struct gate_inject_info		 info;
	const char			*err;
	const struct gate_secret	*s;
	struct buf			 out;
	ssize_t				 n;
	size_t				 h, k;

	gate_http_req_init(&req);
	if ((n = gate_http_parse(&req, buf, size)) <= 0)
		return;
	for (h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
		policy_decide_name(pol, hosts[h], strlen(hosts[h]), 443, &d);
		if (d.verdict != POLICY_ALLOW)
			abort();
		policy_decide_request(d.rule, buf + req.method.off,
		    req.method.len, buf + req.target.off, req.target.len,
		    &rd);
		if (rd.verdict != POLICY_ALLOW)
			continue;
		if (gate_override_decide(d.rule, &req, buf, buf +
		    req.target.off, req.target.len, &rd, &pair, &err) == -1)
			continue;
		if (rd.verdict != POLICY_ALLOW && pair.target == pair.rpc) {
			k = sizeof(GATE_OVERRIDE_RPC) - 1;
			if (pair.mlen != 4 || memcmp(pair.method, "POST", 4) ||
			    rd.detail != pair.detail || pair.tlen < k ||
			    pair.tlen >= sizeof(pair.rpc) ||
			    strcmp(pair.rpc + pair.tlen - k, GATE_OVERRIDE_RPC) ||
			    memchr(pair.rpc, '?', pair.tlen) != NULL)
				abort();
			continue;
		}
		if (rd.verdict != POLICY_ALLOW) {
			if (pair.mlen == 0 || pair.mlen > GATE_HTTP_MAX_METHOD ||
			    pair.target < buf || pair.target + pair.tlen >
			    buf + n)
				abort();
			for (k = 0; k < pair.mlen; k++)
				if ((pair.method[k] < 'A' ||
				    pair.method[k] > 'Z') && pair.method[k] != '-')
					abort();
			continue;
		}
		buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
		if (gate_inject_head(&req, buf, d.rule, ss, &out, &info) == -1) {
			/* a head within the parser's bounds fits, unless its
			   secrets' fields take it past the parser's count */
			if (req.nhdrs + policy_rule_secret_count(d.rule) <=
			    GATE_HTTP_MAX_HEADERS)
				abort();
			buf_free(&out);
			continue;
		}
		gate_http_req_init(&again);
		if (gate_http_parse(&again, out.p, out.len) != (ssize_t)out.len)
			abort();
		if (policy_rule_secret_count(d.rule) == 0 &&
		    (out.len != (size_t)n || memcmp(out.p, buf, out.len) != 0))
			abort();
		if (!query_only(out.p, out.len, buf, (size_t)n))
			abort();
		for (k = 0; (s = gate_secrets_at(ss, k)) != NULL; k++)
			if (!has_secret(d.rule, s->name) &&
			    memmem(out.p, out.len, s->value, s->vlen) != NULL &&
			    memmem(buf, (size_t)n, s->value, s->vlen) == NULL)
				abort();
		buf_free(&out);
	}
}

static void
response(const char *buf, size_t size, size_t split)
{
	struct gate_http_req	 a, b;
	ssize_t			 ra, rb;

	gate_http_resp_init(&a);
	ra = gate_http_parse(&a, buf, size);
	gate_http_resp_init(&b);
	if ((rb = gate_http_parse(&b, buf, split)) == 0)
		rb = gate_http_parse(&b, buf, size);
	if (ra != rb)
		abort();
	if (ra > 0 && (a.code < 100 || a.code > 999 || a.code != b.code))
		abort();
}

static void
secrets_file(const char *buf, size_t size)
{
	struct gate_secrets		*p;
	const struct gate_secret	*s;
	char				 err[256];
	size_t				 i, j;

	if ((p = gate_secrets_parse(buf, size, err, sizeof(err))) == NULL)
		return;
	if (gate_secrets_count(p) > SECRETS_MAX)
		abort();
	for (i = 0; (s = gate_secrets_at(p, i)) != NULL; i++) {
		if (s->vlen == 0 || s->vlen > SECRETS_MAX_VALUE ||
		    s->plen < SECRETS_MIN_PLACEHOLDER ||
		    s->plen > SECRETS_MAX_PLACEHOLDER ||
		    strlen(s->value) != s->vlen)
			abort();
		for (j = 0; j < s->vlen; j++)
			if ((unsigned char)s->value[j] <= 0x20 ||
			    (unsigned char)s->value[j] >= 0x7f)
				abort();
		for (j = 0; j < i; j++)
			if (strcmp(gate_secrets_at(p, j)->name, s->name) == 0)
				abort();
	}
	gate_secrets_free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data + 1;

	if (size < 2)
		return 0;
	init();
	switch (data[0] % 3) {
	case 0:
		request(buf, size - 1);
		break;
	case 1:
		response(buf, size - 1, data[1] % (size - 1));
		break;
	case 2:
		secrets_file(buf, size - 1);
		break;
	}
	return 0;
}
