/*
 * The pure parts of an inspecting gate: the secrets file (every error
 * with its line, each bound at its limit and past it, no value in any
 * message), the head written upstream (every secret mode; a query
 * secret's value only as the whole value of its parameter, its
 * placeholder anywhere else left and named; what else is left as the
 * client wrote it), the
 * response head parser, the methods and paths an override names decided
 * as the line is, and the CA (a session CA's certificate, a leaf
 * that verifies for its name, the cache and its bound, --ca-key files
 * refused for what they lack).
 */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "buf.h"
#include "gate.h"
#include "http.h"
#include "inject.h"
#include "mint.h"
#include "override.h"

#define PH_A	"aisb-ph-A-0123456789abcdef"
#define PH_B	"aisb-ph-B-fedcba9876543210"
#define PH_R	"aisb-ph-R-00112233445566778"
#define VAL_A	"sk-value-of-a"
#define VAL_B	"value:of+b/="
#define VAL_R	"replaced-value-r"

static const char secrets_text[] =
    "aisb-secrets 1\n"
    "A " PH_A " " VAL_A "\n"
    "B " PH_B " " VAL_B "\n"
    "R " PH_R " " VAL_R "\n";

/* --- the secrets file ------------------------------------------------------- */

static void
refused(const char *text, size_t len, const char *want, const char *never)
{
	struct gate_secrets	*ss;
	char			 err[256];

	ss = gate_secrets_parse(text, len, err, sizeof(err));
	if (ss != NULL) {
		gate_secrets_free(ss);
		fail_msg("accepted: %s", text);
	}
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' lacks '%s'", err, want);
	if (never != NULL && strstr(err, never) != NULL)
		fail_msg("error '%s' shows '%s'", err, never);
}

#define REFUSED(t, want, never)	refused(t, sizeof(t) - 1, want, never)

static void
test_secrets_parse(void **state)
{
	struct gate_secrets		*ss;
	const struct gate_secret	*s;
	char				 err[256], *big, *p;
	size_t				 i;

	(void)state;
	ss = gate_secrets_parse(secrets_text, sizeof(secrets_text) - 1, err,
	    sizeof(err));
	assert_non_null(ss);
	assert_int_equal(gate_secrets_count(ss), 3);
	s = gate_secrets_find(ss, "B");
	assert_non_null(s);
	assert_string_equal(s->placeholder, PH_B);
	assert_string_equal(s->value, VAL_B);
	assert_int_equal(s->vlen, strlen(VAL_B));
	assert_null(gate_secrets_find(ss, "C"));
	assert_null(gate_secrets_at(ss, 3));
	gate_secrets_free(ss);
	gate_secrets_free(NULL);
	assert_int_equal(gate_secrets_count(NULL), 0);

	/* an empty set is a set */
	ss = gate_secrets_parse("aisb-secrets 1\n", 15, err, sizeof(err));
	assert_non_null(ss);
	assert_int_equal(gate_secrets_count(ss), 0);
	gate_secrets_free(ss);

	REFUSED("", "line 1: \"aisb-secrets 1\" expected", NULL);
	REFUSED("aisb-secrets 2\n", "line 1", NULL);
	REFUSED("aisb-secrets 1\nA " PH_A " " VAL_A, "line 2: no line feed",
	    VAL_A);
	REFUSED("aisb-secrets 1\nA " PH_A "\n", "line 2: NAME PLACEHOLDER VALUE",
	    NULL);
	REFUSED("aisb-secrets 1\n9A " PH_A " v\n", "line 2: the name", NULL);
	REFUSED("aisb-secrets 1\nA-B " PH_A " v\n", "line 2: the name", NULL);
	REFUSED("aisb-secrets 1\nA short v\n", "line 2: the placeholder", NULL);
	REFUSED("aisb-secrets 1\nA " PH_A " two words\n", "line 2: the value",
	    "two");
	REFUSED("aisb-secrets 1\nA " PH_A " tab\tvalue\n", "line 2: the value",
	    "tab");
	REFUSED("aisb-secrets 1\nA " PH_A " \n", "line 2: the value", NULL);
	REFUSED("aisb-secrets 1\nA " PH_A " v1\nA " PH_B " v2\n",
	    "line 3: the name is given twice", "v2");
	REFUSED("aisb-secrets 1\nA " PH_A " v1\nB " PH_A " v2\n",
	    "line 3: the placeholder is, or holds, the placeholder of A", NULL);
	REFUSED("aisb-secrets 1\nA " PH_A " v1\nB x" PH_A "y v2\n",
	    "line 3: the placeholder", NULL);

	/* bounds: a value of SECRETS_MAX_VALUE bytes, and one more */
	big = malloc(SECRETS_MAX_FILE + 64);
	assert_non_null(big);
	p = big + sprintf(big, "aisb-secrets 1\nA " PH_A " ");
	memset(p, 'v', SECRETS_MAX_VALUE);
	strcpy(p + SECRETS_MAX_VALUE, "\n");
	ss = gate_secrets_parse(big, strlen(big), err, sizeof(err));
	assert_non_null(ss);
	gate_secrets_free(ss);
	memset(p, 'v', SECRETS_MAX_VALUE + 1);
	strcpy(p + SECRETS_MAX_VALUE + 1, "\n");
	refused(big, strlen(big), "line 2: the value must be 1 to 4096", "vvv");
	/* placeholders of 16 and 128 bytes; 15 and 129 refused */
	for (i = 15; i <= 129; i++) {
		p = big + sprintf(big, "aisb-secrets 1\nA ");
		memset(p, 'p', i);
		strcpy(p + i, " v\n");
		ss = gate_secrets_parse(big, strlen(big), err, sizeof(err));
		if ((ss != NULL) != (i >= 16 && i <= 128))
			fail_msg("placeholder of %zu bytes: %s", i,
			    ss != NULL ? "accepted" : err);
		gate_secrets_free(ss);
	}
	/* SECRETS_MAX secrets, and one more */
	p = big + sprintf(big, "aisb-secrets 1\n");
	for (i = 0; i < SECRETS_MAX; i++)
		p += sprintf(p, "S%zu aisb-placeholder-%04zux v%zu\n", i, i, i);
	ss = gate_secrets_parse(big, strlen(big), err, sizeof(err));
	assert_non_null(ss);
	assert_int_equal(gate_secrets_count(ss), SECRETS_MAX);
	gate_secrets_free(ss);
	sprintf(p, "S99 aisb-placeholder-9999x v99\n");
	refused(big, strlen(big), "more than 32 secrets", NULL);
	/* the file's bound */
	memset(big, 'x', SECRETS_MAX_FILE + 1);
	refused(big, SECRETS_MAX_FILE + 1, "more than 163840 bytes", NULL);
	free(big);
}

/* A descriptor is read to its end and closed; a value never echoes. */
static void
test_secrets_read(void **state)
{
	struct gate_secrets	*ss;
	char			 err[256];
	int			 fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], secrets_text, sizeof(secrets_text) - 1),
	    (ssize_t)sizeof(secrets_text) - 1);
	close(fds[1]);
	ss = gate_secrets_read(fds[0], err, sizeof(err));
	assert_non_null(ss);
	assert_int_equal(gate_secrets_count(ss), 3);
	assert_int_equal(fcntl(fds[0], F_GETFD), -1);	/* closed */
	gate_secrets_free(ss);
	assert_null(gate_secrets_read(-1, err, sizeof(err)));
	assert_non_null(strstr(err, "reading descriptor -1"));
}

/* --- the head written upstream ----------------------------------------------- */

static struct gate_secrets	*ss;
static struct policy		*pol;

static const char inject_yaml[] =
    "version: 1\n"
    "allow:\n"
    "  - host: hdr.test\n"
    "    inspect: true\n"
    "    secrets: [{name: A, header: X-Api-Key}, {name: MISSING, header: x-m}]\n"
    "  - host: bearer.test\n"
    "    inspect: true\n"
    "    secrets: [{name: A, scheme: bearer}]\n"
    "  - host: basic.test\n"
    "    inspect: true\n"
    "    secrets: [{name: B, scheme: basic, user: x-access-token}]\n"
    "  - host: repl.test\n"
    "    inspect: true\n"
    "    secrets: [{name: R, query: key}]\n"
    "  - host: none.test\n"
    "    inspect: true\n";

static int
setup(void **state)
{
	struct policy_errors	 errs;
	char			 err[256];

	(void)state;
	if ((ss = gate_secrets_parse(secrets_text, sizeof(secrets_text) - 1,
	    err, sizeof(err))) == NULL)
		return -1;
	return policy_load_buffer("t.yaml", inject_yaml, sizeof(inject_yaml) - 1,
	    &pol, &errs);
}

static int
teardown(void **state)
{
	(void)state;
	gate_secrets_free(ss);
	policy_free(pol);
	return 0;
}

/* The head of req (CRLFs written \r\n) for host, rewritten; parsed again. */
static char *
inject(const char *host, const char *req, struct gate_inject_info *info)
{
	struct gate_http_req	 r, again;
	struct policy_decision	 d;
	struct buf		 out;
	char			*copy;

	policy_decide_name(pol, host, strlen(host), 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req, strlen(req)),
	    (ssize_t)strlen(req));
	buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
	assert_int_equal(gate_inject_head(&r, req, d.rule, ss, &out, info), 0);
	/* what goes upstream is one whole head, by the gate's own parser */
	gate_http_req_init(&again);
	assert_int_equal(gate_http_parse(&again, out.p, out.len),
	    (ssize_t)out.len);
	assert_non_null(copy = strdup(out.p));
	buf_free(&out);
	return copy;
}

static void
test_inject_header(void **state)
{
	struct gate_inject_info	 info;
	char			*h;

	(void)state;
	h = inject("hdr.test", "POST /v1/x?q=1 HTTP/1.1\r\nHost: hdr.test\r\n"
	    "x-api-key: " PH_A "\r\nX-API-KEY: mine\r\nAccept: */*\r\n"
	    "Content-Length: 0\r\n\r\n", &info);
	assert_string_equal(h, "POST /v1/x?q=1 HTTP/1.1\r\nHost: hdr.test\r\n"
	    "Accept: */*\r\nContent-Length: 0\r\nx-api-key: " VAL_A "\r\n\r\n");
	assert_string_equal(info.added, "A");
	assert_string_equal(info.missing, "MISSING");
	assert_string_equal(info.foreign, "");
	free(h);
	/* set even when the client sent none; HTTP/1.0 stays 1.0 */
	h = inject("hdr.test", "GET / HTTP/1.0\r\nHost: hdr.test\r\n\r\n",
	    &info);
	assert_string_equal(h, "GET / HTTP/1.0\r\nHost: hdr.test\r\n"
	    "x-api-key: " VAL_A "\r\n\r\n");
	free(h);
}

/*
 * A client's 100 fields (the parser's bound) and a header secret would be
 * 101: refused (the gate's 431), never a head its own parser would not read
 */
static void
test_inject_fields_bound(void **state)
{
	struct gate_http_req	 r;
	struct gate_inject_info	 info;
	struct policy_decision	 d;
	struct buf		 req, out;
	int			 i;

	(void)state;
	buf_init(&req, 8192, 0);
	buf_printf(&req, "GET / HTTP/1.1\r\nHost: hdr.test\r\n");
	for (i = 1; i < GATE_HTTP_MAX_HEADERS; i++)
		buf_printf(&req, "X-%d: v\r\n", i);
	buf_printf(&req, "\r\n");
	assert_false(req.failed);
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req.p, req.len), (ssize_t)req.len);
	assert_int_equal(r.nhdrs, GATE_HTTP_MAX_HEADERS);
	policy_decide_name(pol, "hdr.test", 8, 443, &d);
	buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
	assert_int_equal(gate_inject_head(&r, req.p, d.rule, ss, &out, &info),
	    -1);
	buf_free(&out);
	/* one field fewer fits (the same head, its last field not counted) */
	r.nhdrs--;
	buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
	assert_int_equal(gate_inject_head(&r, req.p, d.rule, ss, &out, &info),
	    0);
	buf_free(&out);
	buf_free(&req);
}

static void
test_inject_bearer_basic(void **state)
{
	struct gate_inject_info	 info;
	unsigned char		 b64[256];
	char			 want[512], *h;

	(void)state;
	h = inject("bearer.test", "GET / HTTP/1.1\r\nHost: bearer.test\r\n"
	    "Authorization: Bearer " PH_A "\r\n\r\n", &info);
	assert_string_equal(h, "GET / HTTP/1.1\r\nHost: bearer.test\r\n"
	    "authorization: Bearer " VAL_A "\r\n\r\n");
	assert_string_equal(info.foreign, "");	/* its own placeholder */
	free(h);
	h = inject("basic.test", "GET /r.git/info/refs HTTP/1.1\r\n"
	    "Host: basic.test\r\nauthorization: Basic eDp5\r\n\r\n", &info);
	EVP_EncodeBlock(b64, (const unsigned char *)"x-access-token:" VAL_B,
	    (int)strlen("x-access-token:" VAL_B));
	snprintf(want, sizeof(want), "GET /r.git/info/refs HTTP/1.1\r\n"
	    "Host: basic.test\r\nauthorization: Basic %s\r\n\r\n", b64);
	assert_string_equal(h, want);
	assert_string_equal(info.added, "B");
	free(h);
}

static void
test_inject_query(void **state)
{
	struct gate_inject_info	 info;
	unsigned char		 b64[256];
	char			 req[1024], *h;

	(void)state;
	/*
	 * Only key=<placeholder>, the parameter's whole value: never the
	 * path, another parameter, a longer value, a header, a Basic
	 * credential (any of which an echoing endpoint would return).
	 */
	EVP_EncodeBlock(b64, (const unsigned char *)"me:" PH_R,
	    (int)strlen("me:" PH_R));
	snprintf(req, sizeof(req), "GET /m/" PH_R "/key=" PH_R "?k2=" PH_R
	    "&key=" PH_R "&KEY=" PH_R "&key2=" PH_R "&xkey=" PH_R "&key="
	    PH_R "x&key=" PH_R " HTTP/1.1\r\nHost: repl.test\r\n"
	    "x-goog-api-key: " PH_R "\r\nAuthorization: Basic %s\r\n"
	    "X-Other: " PH_A "\r\n\r\n", b64);
	h = inject("repl.test", req, &info);
	assert_string_equal(h, "GET /m/" PH_R "/key=" PH_R "?k2=" PH_R
	    "&key=" VAL_R "&KEY=" PH_R "&key2=" PH_R "&xkey=" PH_R "&key="
	    PH_R "x&key=" VAL_R " HTTP/1.1\r\nHost: repl.test\r\n"
	    "x-goog-api-key: " PH_R "\r\nAuthorization: Basic "
	    "bWU6YWlzYi1waC1SLTAwMTEyMjMzNDQ1NTY2Nzc4\r\n"
	    "X-Other: " PH_A "\r\n\r\n");
	assert_string_equal(info.added, "R");
	/* what was left is worth nothing there, and named */
	assert_string_equal(info.foreign, "R,A");
	free(h);
	/* first, alone, and empty parameters around it */
	h = inject("repl.test", "GET /?key=" PH_R " HTTP/1.1\r\n"
	    "Host: repl.test\r\n\r\n", &info);
	assert_non_null(strstr(h, "GET /?key=" VAL_R " HTTP/1.1\r\n"));
	assert_string_equal(info.foreign, "");
	free(h);
	h = inject("repl.test", "GET /x?&key=" PH_R "&&=" PH_R "& HTTP/1.1\r\n"
	    "Host: repl.test\r\n\r\n", &info);
	assert_non_null(strstr(h, "GET /x?&key=" VAL_R "&&=" PH_R "& "
	    "HTTP/1.1\r\n"));
	assert_string_equal(info.foreign, "R");
	free(h);
	/* nothing to replace: the credential goes as it came */
	h = inject("repl.test", "GET /?key=mine HTTP/1.1\r\nHost: repl.test\r\n"
	    "Authorization: Basic bWU6eW91\r\n\r\n", &info);
	assert_non_null(strstr(h, "GET /?key=mine HTTP/1.1\r\n"));
	assert_non_null(strstr(h, "Authorization: Basic bWU6eW91\r\n"));
	assert_string_equal(info.added, "");
	free(h);
}

static void
test_inject_foreign(void **state)
{
	struct gate_http_req	 r;
	struct buf		 out;
	struct gate_inject_info	 info;
	unsigned char		 b64[256];
	char			 req[1024], *h;

	(void)state;
	/* no secrets on this host: every placeholder is named, none replaced */
	EVP_EncodeBlock(b64, (const unsigned char *)"u:" PH_B,
	    (int)strlen("u:" PH_B));
	snprintf(req, sizeof(req), "POST /gist?t=" PH_R " HTTP/1.1\r\n"
	    "Host: none.test\r\nx-api-key: " PH_A "\r\n"
	    "Authorization: Basic %s\r\n\r\n", b64);
	h = inject("none.test", req, &info);
	assert_string_equal(h, req);
	assert_string_equal(info.added, "");
	assert_string_equal(info.foreign, "R,A,B");
	assert_null(strstr(h, VAL_A));
	free(h);
	/* no rule (--learn passing what the rules refuse): the same */
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req, strlen(req)),
	    (ssize_t)strlen(req));
	buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
	assert_int_equal(gate_inject_head(&r, req, NULL, ss, &out, &info), 0);
	assert_int_equal(out.len, strlen(req));
	assert_memory_equal(out.p, req, out.len);
	assert_string_equal(info.added, "");
	assert_string_equal(info.foreign, "R,A,B");
	buf_free(&out);
	/* gate_inject_scan, for heads that are not written again */
	info.foreign[0] = '\0';
	gate_inject_scan(ss, req, strlen(req), info.foreign,
	    sizeof(info.foreign));
	assert_string_equal(info.foreign, "A,R");	/* B is in base64 there */
	/* and with no secrets at all, nothing is done */
	h = inject("hdr.test", "GET / HTTP/1.1\r\nHost: hdr.test\r\n\r\n",
	    &info);
	free(h);
}

/* --- the response head --------------------------------------------------------- */

static void
resp(const char *head, ssize_t want, int code)
{
	struct gate_http_req	 r;

	gate_http_resp_init(&r);
	if (gate_http_parse(&r, head, strlen(head)) != want)
		fail_msg("%s: not %zd (%s)", head, want, r.error ? r.error : "");
	if (want > 0)
		assert_int_equal(r.code, code);
}

static void
test_response_head(void **state)
{
	struct gate_http_req	 r;
	const char		*h;

	(void)state;
	resp("HTTP/1.1 200 OK\r\n\r\n", 19, 200);
	resp("HTTP/1.0 204\r\n\r\n", 16, 204);
	resp("HTTP/1.1 101 \r\n\r\n", 17, 101);
	resp("HTTP/1.1 100 Continue\r\n\r\n", 25, 100);
	resp("HTTP/1.1 599 Custom Reason, with text\r\n\r\n", 41, 599);
	resp("HTTP/1.1 20 OK\r\n\r\n", -1, 0);
	resp("HTTP/1.1 099 Low\r\n\r\n", -1, 0);
	resp("HTTP/1.1 2000 OK\r\n\r\n", -1, 0);
	resp("HTTP/2 200 OK\r\n\r\n", -1, 0);
	resp("HTTP/1.1 200 OK\x01\r\n\r\n", -1, 0);
	resp("http/1.1 200 OK\r\n\r\n", -1, 0);
	resp("HTTP/1.1 200 OK\nX: y\r\n\r\n", -1, 0);
	resp("HTTP/1.1 200 OK\r\n", 0, 0);
	/* a length past 2^31 is a download, not a smuggling risk */
	h = "HTTP/1.1 200 OK\r\nContent-Length: 5000000000\r\n\r\n";
	gate_http_resp_init(&r);
	assert_int_equal(gate_http_parse(&r, h, strlen(h)), (ssize_t)strlen(h));
	assert_true(r.content_length == 5000000000LL);
	/* framing refusals are the request's */
	resp("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n", -1, 0);
	resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -1, 0);
	/* RFC 9112 6.1: chunked in an HTTP/1.0 message is faulty framing */
	resp("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", -1, 0);
	/* Connection tokens and fields */
	h = "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n"
	    "Upgrade: websocket\r\n\r\n";
	gate_http_resp_init(&r);
	assert_true(gate_http_parse(&r, h, strlen(h)) > 0);
	assert_true(gate_http_conn_has(&r, h, "close"));
	assert_true(gate_http_conn_has(&r, h, "KEEP-ALIVE"));
	assert_false(gate_http_conn_has(&r, h, "upgrade"));
	assert_int_equal(gate_http_field(&r, h, "upgrade"), 1);
	assert_int_equal(gate_http_field(&r, h, "x-none"), -1);
}

/* --- the CA and its leaves --------------------------------------------------- */

/* Whether leaf verifies for name against the CA alone. */
static int
verifies(X509 *ca, X509 *leaf, const char *name)
{
	X509_STORE	*st = X509_STORE_new();
	X509_STORE_CTX	*ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *vp;
	int		 ok;

	assert_non_null(st);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(st, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, st, leaf, NULL), 1);
	vp = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_purpose(vp, X509_PURPOSE_SSL_SERVER);
	assert_int_equal(X509_VERIFY_PARAM_set1_host(vp, name, 0), 1);
	ok = X509_verify_cert(ctx) == 1;
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return ok;
}

static void
test_ca_session(void **state)
{
	struct gate_ca	*ca;
	X509		*a, *b, *c;
	char		 err[256], name[300], *pem;
	size_t		 len, i;

	(void)state;
	ca = gate_ca_new(err, sizeof(err));
	assert_non_null(ca);
	assert_int_equal(X509_check_ca(gate_ca_cert(ca)), 1);
	assert_true(gate_ca_is_root(ca));	/* not sent with its leaves */
	pem = gate_ca_pem(ca, &len);
	assert_non_null(pem);
	assert_int_equal(strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	assert_null(strstr(pem, "PRIVATE"));
	free(pem);

	a = gate_ca_leaf(ca, "api.example.test");
	assert_non_null(a);
	assert_true(verifies(gate_ca_cert(ca), a, "api.example.test"));
	assert_false(verifies(gate_ca_cert(ca), a, "other.example.test"));
	assert_int_equal(X509_check_ca(a), 0);
	assert_int_equal(X509_check_private_key(a, gate_ca_leaf_key(ca)), 1);
	b = gate_ca_leaf(ca, "api.example.test");
	assert_ptr_equal(a, b);			/* from the cache */
	assert_int_equal(gate_ca_cached(ca), 1);
	/* a name too long for a CN: the SAN alone, critical */
	memset(name, 'a', 70);
	strcpy(name + 70, ".example.test");
	c = gate_ca_leaf(ca, name);
	assert_non_null(c);
	assert_true(verifies(gate_ca_cert(ca), c, name));
	assert_int_equal(X509_NAME_entry_count(X509_get_subject_name(c)), 0);
	X509_free(c);
	/* the cache's bound: the oldest go */
	for (i = 0; i < 1100; i++) {
		snprintf(name, sizeof(name), "n%zu.example.test", i);
		assert_non_null(c = gate_ca_leaf(ca, name));
		X509_free(c);
	}
	assert_int_equal(gate_ca_cached(ca), 1024);
	/* a was evicted; its reference keeps it whole */
	c = gate_ca_leaf(ca, "api.example.test");
	assert_ptr_not_equal(c, a);
	assert_true(verifies(gate_ca_cert(ca), a, "api.example.test"));
	X509_free(a);
	X509_free(b);
	X509_free(c);
	gate_ca_free(ca);
	gate_ca_free(NULL);
}

/* A PEM file of the pieces given (NULL: left out), mode 0600 or 0644. */
static void
pem_file(const char *path, X509 *cert, EVP_PKEY *key, mode_t mode)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	if (cert != NULL)
		assert_int_equal(PEM_write_X509(f, cert), 1);
	if (key != NULL)
		assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0,
		    NULL, NULL), 1);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* An operator's CA, made as openssl req -x509 would: CA:TRUE, a month. */
static X509 *
operator_ca(EVP_PKEY *key)
{
	X509		*c = X509_new();
	X509_NAME	*n;
	X509_EXTENSION	*e;

	assert_non_null(c);
	assert_int_equal(X509_set_version(c, 2), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(c), 7), 1);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(c), 0));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(c), 30 * 86400L));
	n = X509_get_subject_name(c);
	assert_int_equal(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)"operator CA", -1, -1, 0), 1);
	assert_int_equal(X509_set_issuer_name(c, n), 1);
	assert_int_equal(X509_set_pubkey(c, key), 1);
	e = X509V3_EXT_conf_nid(NULL, NULL, NID_basic_constraints,
	    "critical,CA:TRUE");
	assert_non_null(e);
	assert_int_equal(X509_add_ext(c, e, -1), 1);
	X509_EXTENSION_free(e);
	e = X509V3_EXT_conf_nid(NULL, NULL, NID_key_usage,
	    "critical,keyCertSign");
	assert_non_null(e);
	assert_int_equal(X509_add_ext(c, e, -1), 1);
	X509_EXTENSION_free(e);
	assert_true(X509_sign(c, key, EVP_sha256()) > 0);
	return c;
}

static void
test_ca_key_file(void **state)
{
	struct gate_ca	*src, *ca;
	char		 dir[] = "/tmp/test_gate_inspect.XXXXXX", path[128];
	char		 err[512];
	EVP_PKEY	*key, *other;
	X509		*cert, *leaf, *inter;
	X509_NAME	*n;
	int		 loose;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	assert_non_null(key = EVP_EC_gen("P-256"));
	assert_non_null(other = EVP_EC_gen("P-256"));
	cert = operator_ca(key);

	/* the CA and its key: its leaves verify against it */
	pem_file(path, cert, key, 0600);
	ca = gate_ca_load(path, &loose, err, sizeof(err));
	assert_non_null(ca);
	assert_false(loose);
	leaf = gate_ca_leaf(ca, "op.test");
	assert_non_null(leaf);
	assert_true(verifies(cert, leaf, "op.test"));
	assert_true(gate_ca_is_root(ca));
	X509_free(leaf);
	gate_ca_free(ca);

	/* a CA below another one is sent with its leaves */
	inter = operator_ca(key);
	n = X509_NAME_new();
	assert_non_null(n);
	assert_int_equal(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)"operator root", -1, -1, 0), 1);
	assert_int_equal(X509_set_issuer_name(inter, n), 1);
	assert_true(X509_sign(inter, other, EVP_sha256()) > 0);
	pem_file(path, inter, key, 0600);
	ca = gate_ca_load(path, &loose, err, sizeof(err));
	assert_non_null(ca);
	assert_false(gate_ca_is_root(ca));
	gate_ca_free(ca);
	X509_NAME_free(n);
	X509_free(inter);
	/* its group may read it: said; every user may: refused */
	pem_file(path, cert, key, 0640);
	ca = gate_ca_load(path, &loose, err, sizeof(err));
	assert_non_null(ca);
	assert_true(loose);
	gate_ca_free(ca);
	pem_file(path, cert, key, 0644);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "open to every user (mode 0644)"));

	/* what a CA file may lack */
	pem_file(path, cert, other, 0600);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "the key is not the certificate's"));
	src = gate_ca_new(err, sizeof(err));
	assert_non_null(src);
	leaf = gate_ca_leaf(src, "x.test");
	pem_file(path, leaf, gate_ca_leaf_key(src), 0600);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "not a CA's"));
	X509_free(leaf);
	gate_ca_free(src);
	pem_file(path, cert, NULL, 0600);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "no private key"));
	pem_file(path, NULL, key, 0600);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "no certificate"));
	assert_int_equal(unlink(path), 0);
	assert_null(gate_ca_load(path, &loose, err, sizeof(err)));
	assert_non_null(strstr(err, "--ca-key"));
	assert_int_equal(rmdir(dir), 0);
	X509_free(cert);
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
}

/*
 * override decides req (\r\n written as such) on host of ov_yaml: its
 * status, the decision and what a refusal was for
 */
static const char ov_yaml[] =
    "version: 1\n"
    "allow:\n"
    "  - host: api.test\n"
    "    inspect: true\n"
    "    requests: {allow: [\"POST /v1/*\", \"GET /*\"], deny: [\"* */admin*\"]}\n"
    "  - host: open.test\n"
    "    inspect: true\n"
    "  - host: git.test\n"
    "    inspect: true\n"
    "    requests: {deny: [\"POST */git-receive-pack\"]}\n"
    "  - host: fetch.test\n"
    "    inspect: true\n"
    "    requests: {allow: [\"GET *\", \"POST */git-upload-pack\"]}\n";

static int
override(struct policy *p, const char *host, const char *req,
    struct policy_request_decision *rd, struct gate_override_pair *pair)
{
	struct gate_http_req	 r;
	struct policy_decision	 d;
	const char		*err = NULL;
	int			 rc;

	policy_decide_name(p, host, strlen(host), 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req, strlen(req)),
	    (ssize_t)strlen(req));
	policy_decide_request(d.rule, req + r.method.off, r.method.len,
	    req + r.target.off, r.target.len, rd);
	assert_int_equal(rd->verdict, POLICY_ALLOW);	/* the line passes */
	memset(pair, 0, sizeof(*pair));
	rc = gate_override_decide(d.rule, &r, req, req + r.target.off,
	    r.target.len, rd, pair, &err);
	if (rc == -1)
		assert_non_null(err);
	return rc;
}

static void
test_override(void **state)
{
	struct policy_request_decision	 rd;
	struct gate_override_pair	 pair;
	struct policy_errors		 errs;
	struct policy			*p;

	(void)state;
	assert_int_equal(policy_load_buffer("o.yaml", ov_yaml,
	    sizeof(ov_yaml) - 1, &p, &errs), 0);
	/* none: the line's decision stands */
	assert_int_equal(override(p, "api.test", "POST /v1/x HTTP/1.1\r\n"
	    "Host: api.test\r\n\r\n", &rd, &pair), 0);
	assert_int_equal(rd.verdict, POLICY_ALLOW);
	/* a method the entries do not allow, as the upstream upper-cases it */
	assert_int_equal(override(p, "api.test", "POST /v1/x HTTP/1.1\r\n"
	    "Host: api.test\r\nX-HTTP-Method-Override: delete\r\n\r\n", &rd,
	    &pair), 0);
	assert_int_equal(rd.verdict, POLICY_DENY);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_NOT_ALLOWED);
	assert_int_equal(pair.mlen, 6);
	assert_memory_equal(pair.method, "DELETE", 6);
	assert_memory_equal(pair.target, "/v1/x", pair.tlen);
	/* a path a deny entry refuses */
	assert_int_equal(override(p, "api.test", "GET /ok HTTP/1.1\r\n"
	    "Host: api.test\r\nX-Original-URL: /Admin/x?y\r\n\r\n", &rd,
	    &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_DENIED);
	assert_memory_equal(pair.target, "/Admin/x?y", pair.tlen);
	/* the query's _method; and the two combined */
	assert_int_equal(override(p, "api.test", "POST /v1/x?a=1&_method=put "
	    "HTTP/1.1\r\nHost: api.test\r\n\r\n", &rd, &pair), 0);
	assert_int_equal(rd.verdict, POLICY_DENY);
	assert_memory_equal(pair.method, "PUT", 3);
	assert_int_equal(override(p, "api.test", "POST /v1/x HTTP/1.1\r\n"
	    "Host: api.test\r\nX-Method-Override: GET\r\n"
	    "X-Rewrite-URL: /v1/admin\r\n\r\n", &rd, &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_DENIED);
	/* what the entries allow passes */
	assert_int_equal(override(p, "api.test", "POST /v1/x HTTP/1.1\r\n"
	    "Host: api.test\r\nX-HTTP-Method: get\r\n"
	    "X-Original-URL: /v1/y\r\n\r\n", &rd, &pair), 0);
	assert_int_equal(rd.verdict, POLICY_ALLOW);
	/* TRACE by any name is refused, entries or none */
	assert_int_equal(override(p, "open.test", "POST /x HTTP/1.1\r\n"
	    "Host: open.test\r\nX-HTTP-Method-Override: trace\r\n\r\n",
	    &rd, &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_METHOD);
	/* no method, no path, too many: 400 */
	assert_int_equal(override(p, "open.test", "POST /x HTTP/1.1\r\n"
	    "Host: open.test\r\nX-HTTP-Method-Override: DE LETE\r\n\r\n",
	    &rd, &pair), -1);
	assert_int_equal(override(p, "open.test", "POST /x HTTP/1.1\r\n"
	    "Host: open.test\r\nX-Original-URL: http://o.test/\r\n\r\n",
	    &rd, &pair), -1);
	assert_int_equal(override(p, "open.test", "POST /x?_method= HTTP/1.1"
	    "\r\nHost: open.test\r\n\r\n", &rd, &pair), -1);
	assert_int_equal(override(p, "open.test", "POST /x HTTP/1.1\r\n"
	    "Host: open.test\r\nX-HTTP-Method: GET\r\nX-HTTP-Method: GET\r\n"
	    "X-HTTP-Method: GET\r\nX-HTTP-Method: GET\r\n"
	    "X-HTTP-Method: GET\r\n\r\n", &rd, &pair), -1);
	policy_free(p);
}

/* t's push discovery verdict, the repository's length when it is one */
static void
push(const char *t, int want, size_t want_repo)
{
	size_t	 repo = 12345;

	assert_int_equal(policy_push_discovery(t, strlen(t), &repo),
	    want);
	if (want == 1)
		assert_int_equal(repo, want_repo);
}

static void
test_push_discovery(void **state)
{
	const char	*t = "/o/r.git/info/refs?service=git-receive-pack";
	size_t		 repo;

	(void)state;
	push(t, 1, 8);
	push("/info/refs?service=git-receive-pack", 1, 0);
	push("/o/r.git/info/refs?service=git-upload-pack", 0, 0);
	push("/o/r.git/info/refs", 0, 0);
	push("/o/r.git/info/refs?", 0, 0);
	push("/o/r.git/info/refsx?service=git-receive-pack", 0, 0);
	push("/o/r.git/xinfo/refs?service=git-receive-pack", 0, 0);
	push("/o/r.git/info/refs/x?service=git-receive-pack", 0, 0);
	push("/a?p=/info/refs&service=git-receive-pack", 0, 0);
	push("/o/r.git/info/refs?service=git-receive-packs", 0, 0);
	push("/o/r.git/info/refs?xservice=git-receive-pack", 0, 0);
	push("/o/r.git/info/refs?service", 0, 0);
	/* any case, a trailing '/', other parameters around it */
	push("/o/r.git/INFO/Refs/?service=git-receive-pack", 1, 8);
	push("/o/r.git/info/refs?SERVICE=Git-Receive-Pack", 1, 8);
	push("/o/r.git/info/refs?a=1&service=git-receive-pack&b", 1, 8);
	push("/o/r.git/info/refs?&&service=git-receive-pack&", 1, 8);
	/* the separators and decodings some server or other applies */
	push("/o/r.git/info/refs?a=1;service=git-receive-pack", 1, 8);
	push("/o/r.git/info/refs?service=git-receive-pack#x", 1, 8);
	push("/o/r.git/info/refs?s%65rvice=git%2Dreceive%2dpack", 1, 8);
	push("/o/r.git/info/refs?service=+git-receive-pack%20", 1, 8);
	push("/o/r.git/info/refs?service=git-receive-pack+++++++++++++++++++"
	    "++++++++++++++++++++++", 1, 8);
	push("/o/r.git/info/refs?service=git-upload-pack&x=%41", 0, 0);
	/* servlet containers (JGit's) drop a segment's ;parameters */
	push("/o/r.git/info/refs;x?service=git-receive-pack", 1, 8);
	push("/o/r.git/info/refs;x/?service=git-receive-pack", 1, 8);
	push("/o/r.git;a/info/refs;?service=git-receive-pack", 1, 10);
	push("/o/r.git/info/refsx;y?service=git-receive-pack", 0, 0);
	push("/o/r.git/info/re;fs?service=git-receive-pack", 0, 0);
	/* ambiguous: a 400 */
	push("/o/r.git/info/refs?service=git-upload-pack&service=git-receive-"
	    "pack", -1, 0);
	push("/o/r.git/info/refs?service=git-upload-pack;SERVICE=x", -1, 0);
	push("/o/r.git/info/refs?service=git-upload-pack&service=git-upload-"
	    "pack", -1, 0);
	push("/o/r.git/info/refs?service=git-receive-pack%00x", -1, 0);
	push("/o/r.git/info/refs?service%00=git-receive-pack", -1, 0);
	push("/o/r.git/info/refs?service=git-receive-pac%", -1, 0);
	push("/o/r.git/info/refs?service=git-receive-pac%6", -1, 0);
	push("/o/r.git/info/refs?x=%zz&service=git-upload-pack", -1, 0);
	push("/o/r.git/info/refs?x=%7f", -1, 0);
	push("/o/r.git/info/refs?service=git-receive-pack%09", -1, 0);
	/* a query elsewhere is none of this function's business */
	push("/api?service=a&service=b%zz", 0, 0);
	/* only len bytes are looked at */
	assert_int_equal(policy_push_discovery(t, strlen(t) - 1, &repo),
	    0);
	assert_int_equal(policy_push_discovery(t, 18, &repo), 0);
}

/* a push's discovery decided as the POST it announces */
static void
test_override_push(void **state)
{
	struct policy_request_decision	 rd;
	struct gate_override_pair	 pair;
	struct policy_errors		 errs;
	struct policy			*p;

	(void)state;
	assert_int_equal(policy_load_buffer("o.yaml", ov_yaml,
	    sizeof(ov_yaml) - 1, &p, &errs), 0);
	assert_int_equal(override(p, "git.test", "GET /o/r.git/info/refs?"
	    "service=git-receive-pack HTTP/1.1\r\nHost: git.test\r\n\r\n",
	    &rd, &pair), 0);
	assert_int_equal(rd.verdict, POLICY_DENY);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_DENIED);
	assert_int_equal(pair.mlen, 4);
	assert_memory_equal(pair.method, "POST", 4);
	assert_int_equal(pair.tlen, strlen("/o/r.git/git-receive-pack"));
	assert_memory_equal(pair.target, "/o/r.git/git-receive-pack",
	    pair.tlen);
	assert_ptr_equal(rd.detail, pair.detail);
	assert_string_equal(rd.detail, "git push refused at its discovery: "
	    "the push it announces, POST /o/r.git/git-receive-pack, is denied "
	    "by requests: entry POST */git-receive-pack (line 10, column 23)");
	/* fetch's discovery passes; the RPC's path decided as it is */
	assert_int_equal(override(p, "git.test", "GET /o/r.git/info/refs?"
	    "service=git-upload-pack HTTP/1.1\r\nHost: git.test\r\n\r\n",
	    &rd, &pair), 0);
	assert_int_equal(rd.verdict, POLICY_ALLOW);
	assert_int_equal(override(p, "git.test", "HEAD /O/R/Info/Refs/?"
	    "Service=GIT-RECEIVE-PACK HTTP/1.1\r\nHost: git.test\r\n\r\n",
	    &rd, &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_DENIED);
	assert_memory_equal(pair.target, "/O/R/git-receive-pack", pair.tlen);
	/* a path an override field names is a discovery too */
	assert_int_equal(override(p, "git.test", "GET /x HTTP/1.1\r\n"
	    "Host: git.test\r\nX-Original-URL: /r/info/refs?service=git-"
	    "receive-pack\r\n\r\n", &rd, &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_DENIED);
	assert_memory_equal(pair.target, "/r/git-receive-pack", pair.tlen);
	/* allow entries without the push: not allowed, the POST the fix */
	assert_int_equal(override(p, "fetch.test", "GET /r/info/refs?service="
	    "git-receive-pack HTTP/1.1\r\nHost: fetch.test\r\n\r\n", &rd,
	    &pair), 0);
	assert_int_equal(rd.reason, POLICY_R_REQUEST_NOT_ALLOWED);
	assert_memory_equal(pair.target, "/r/git-receive-pack", pair.tlen);
	assert_non_null(strstr(rd.detail, "allowed by no requests: entry"));
	/* a rule without requests: pushes */
	assert_int_equal(override(p, "open.test", "GET /r/info/refs?service="
	    "git-receive-pack HTTP/1.1\r\nHost: open.test\r\n\r\n", &rd,
	    &pair), 0);
	assert_int_equal(rd.verdict, POLICY_ALLOW);
	/* ambiguous, on any host: 400 */
	assert_int_equal(override(p, "open.test", "GET /r/info/refs?service="
	    "git-upload-pack&service=git-receive-pack HTTP/1.1\r\n"
	    "Host: open.test\r\n\r\n", &rd, &pair), -1);
	assert_int_equal(override(p, "git.test", "GET /r/info/refs?service="
	    "git-receive-pack%00 HTTP/1.1\r\nHost: git.test\r\n\r\n", &rd,
	    &pair), -1);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_parse),
		cmocka_unit_test(test_secrets_read),
		cmocka_unit_test(test_inject_header),
		cmocka_unit_test(test_inject_fields_bound),
		cmocka_unit_test(test_inject_bearer_basic),
		cmocka_unit_test(test_inject_query),
		cmocka_unit_test(test_inject_foreign),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_push_discovery),
		cmocka_unit_test(test_override_push),
		cmocka_unit_test(test_response_head),
		cmocka_unit_test(test_ca_session),
		cmocka_unit_test(test_ca_key_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
