/*
 * aisb-gate's request parser, chunked framing, forwarded head, JSON
 * escaping, proxy credentials and TLS server names: pure functions, tested
 * byte by byte.
 */
#include "config.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gate.h"
#include "http.h"
#include "tls.h"
#include "ctlcmd.h"
#include "json.h"

/* Parse whole, then again fed one byte at a time: same result. */
static ssize_t
parse_both(const char *buf, size_t len, struct gate_http_req *out)
{
	struct gate_http_req	 a, b;
	ssize_t			 ra, rb = 0;
	size_t			 i;

	gate_http_req_init(&a);
	ra = gate_http_parse(&a, buf, len);
	gate_http_req_init(&b);
	for (i = 1; i <= len; i++) {
		rb = gate_http_parse(&b, buf, i);
		if (rb != 0)
			break;
	}
	assert_int_equal(ra, rb);
	if (ra == -1) {
		assert_int_equal(a.status, b.status);
		assert_string_equal(a.error, b.error);
	} else if (ra > 0) {
		assert_int_equal(a.nhdrs, b.nhdrs);
		assert_int_equal(a.content_length, b.content_length);
	}
	*out = a;
	return ra;
}

static void
test_good(void **state)
{
	static const char	 req[] =
	    "GET http://example.com/a?b HTTP/1.1\r\n"
	    "Host:  example.com \r\n"
	    "Proxy-Authorization: Basic eDp5\r\n"
	    "Content-Length: 12\r\n"
	    "\r\nbody follows";
	struct gate_http_req	 r;
	ssize_t			 n;

	n = parse_both(req, sizeof(req) - 1, &r);
	assert_int_equal(n, sizeof(req) - 1 - 12);
	assert_true(gate_http_span_eq(req, r.method, "GET"));
	assert_true(gate_http_span_eq(req, r.target, "http://example.com/a?b"));
	assert_int_equal(r.minor, 1);
	assert_int_equal(r.nhdrs, 3);
	assert_int_equal(r.host, 0);
	assert_true(gate_http_span_eq(req, r.hdrs[0].value, "example.com"));
	assert_int_equal(r.proxy_auth, 1);
	assert_int_equal(r.content_length, 12);
	assert_false(r.chunked);
}

static void
test_incomplete(void **state)
{
	static const char	 req[] = "CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n\r";
	struct gate_http_req	 r;

	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req, sizeof(req) - 1), 0);
}

struct bad {
	const char	*req;
	int		 status;
	const char	*error;
};

static void
test_bad(void **state)
{
	static const struct bad	 cases[] = {
		{ "GET http://a/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400,
		    "obsolete line folding" },
		{ "GET http://a/ HTTP/1.1\nX: 1\r\n\r\n", 400,
		    "bare LF in request head" },
		{ "GET http://a/ HTTP/1.1\r\nX: 1\rY: 2\r\n\r\n", 400,
		    "bare CR in request head" },
		{ "GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 400,
		    "both Content-Length and Transfer-Encoding" },
		{ "GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\n"
		    "Content-Length: 1\r\n\r\n", 400, "duplicate Content-Length" },
		{ "GET http://a/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 400,
		    "bad Content-Length" },
		{ "GET http://a/ HTTP/1.1\r\nContent-Length: "
		    "1234567890123456789\r\n\r\n", 400, "bad Content-Length" },
		{ "GET http://a/ HTTP/1.1\r\nContent-Length:\r\n\r\n", 400,
		    "bad Content-Length" },
		{ "POST http://a/ HTTP/1.1\r\nContent-Length: 2147483648\r\n"
		    "\r\n", 400, "Content-Length over 2^31 - 1" },
		{ "POST http://a/ HTTP/1.1\r\nContent-Length: 4294967301\r\n"
		    "\r\n", 400, "Content-Length over 2^31 - 1" },
		{ "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
		    400, "unsupported Transfer-Encoding" },
		{ "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 400,
		    "duplicate Transfer-Encoding" },
		/* RFC 9112 6.1: an HTTP/1.0 message's framing is faulty */
		{ "POST http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n"
		    "\r\n", 400, "Transfer-Encoding in an HTTP/1.0 message" },
		{ "POST /x HTTP/1.0\r\nHost: a\r\ntransfer-encoding: CHUNKED"
		    "\r\n\r\n", 400, "Transfer-Encoding in an HTTP/1.0 message" },
		{ "GET http://a/ HTTP/1.1\r\nX : 1\r\n\r\n", 400,
		    "malformed header field" },
		{ "GET http://a/ HTTP/1.1\r\n: 1\r\n\r\n", 400,
		    "malformed header field" },
		{ "GET http://a/ HTTP/1.1\r\nX: \x7f\r\n\r\n", 400,
		    "control character in field value" },
		{ "GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400,
		    "duplicate Host" },
		{ "GET http://a/ HTTP/1.2\r\n\r\n", 400,
		    "unsupported HTTP version" },
		{ "GET http://a/ http/1.1\r\n\r\n", 400,
		    "unsupported HTTP version" },
		{ "GET http://a/\r\n\r\n", 400, "malformed request target" },
		{ "G(T http://a/ HTTP/1.1\r\n\r\n", 400, "malformed method" },
		{ "connect a:443 HTTP/1.1\r\n\r\n", 400, "unknown method" },
		{ "Connect a:443 HTTP/1.1\r\n\r\n", 400, "unknown method" },
		{ "get http://a/ HTTP/1.1\r\n\r\n", 400, "unknown method" },
		{ "GET_ http://a/ HTTP/1.1\r\n\r\n", 400, "unknown method" },
		{ "ABCDEFGHIJKLMNOPQRSTU http://a/ HTTP/1.1\r\n\r\n", 400,
		    "unknown method" },
		{ "GET http://a/\x80 HTTP/1.1\r\n\r\n", 400,
		    "malformed request target" },
		{ "\r\n", 400, "empty request line" },
	};
	struct gate_http_req	 r;
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse_both(cases[i].req, strlen(cases[i].req), &r) != -1)
			fail_msg("case %zu accepted: %s", i, cases[i].req);
		assert_int_equal(r.status, cases[i].status);
		assert_string_equal(r.error, cases[i].error);
	}
	/* NUL cannot go through strlen */
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, "GET \0", 5), -1);
	assert_string_equal(r.error, "NUL byte in request head");
}

static void
test_bounds(void **state)
{
	struct gate_http_req	 r;
	char			*buf;
	size_t			 n, i;

	buf = malloc(GATE_HTTP_MAX_HEAD * 2);
	assert_non_null(buf);

	/* a request line of GATE_HTTP_MAX_LINE bytes (CRLF included) fits */
	for (i = 0; i < 2; i++) {
		size_t	 pre = strlen("GET http://a/"), post = strlen(" HTTP/1.1\r\n");

		n = GATE_HTTP_MAX_LINE + i;
		memcpy(buf, "GET http://a/", pre);
		memset(buf + pre, 'a', n - pre - post);
		memcpy(buf + n - post, " HTTP/1.1\r\n\r\n", post + 2);
		gate_http_req_init(&r);
		if (i == 0)
			assert_int_equal(gate_http_parse(&r, buf, n + 2),
			    (ssize_t)n + 2);
		else {
			assert_int_equal(gate_http_parse(&r, buf, n + 2), -1);
			assert_int_equal(r.status, 414);
		}
	}

	/* 100 fields fit, 101 do not */
	n = (size_t)sprintf(buf, "GET http://a/ HTTP/1.1\r\n");
	for (i = 0; i < GATE_HTTP_MAX_HEADERS; i++)
		n += (size_t)sprintf(buf + n, "X-%zu: 1\r\n", i);
	memcpy(buf + n, "\r\n", 2);
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, buf, n + 2), (ssize_t)n + 2);
	n += (size_t)sprintf(buf + n, "X-last: 1\r\n\r\n");
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, buf, n), -1);
	assert_int_equal(r.status, 431);

	/* the header section: 32 KiB in all */
	n = (size_t)sprintf(buf, "GET http://a/ HTTP/1.1\r\n");
	for (i = 0; i < 40; i++) {
		n += (size_t)sprintf(buf + n, "X: ");
		memset(buf + n, 'v', 1000);
		n += 1000;
		n += (size_t)sprintf(buf + n, "\r\n");
	}
	memcpy(buf + n, "\r\n", 2);
	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, buf, n + 2), -1);
	assert_int_equal(r.status, 431);
	free(buf);
}

static void
test_split_url(void **state)
{
	struct gate_http_span	 a, p;
	const char		*t;

	t = "http://Example.com:8080/x?y";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), 0);
	assert_int_equal(a.off, 7);
	assert_int_equal(a.len, strlen("Example.com:8080"));
	assert_true(gate_http_span_eq(t, p, "/x?y"));
	t = "HTTP://a?q";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), 0);
	assert_true(gate_http_span_eq(t, p, "?q"));
	t = "http://a";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), 0);
	assert_int_equal(p.len, 0);
	t = "https://a/";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), -1);
	t = "http://user:pw@a/";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), -1);
	t = "http:///x";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), -1);
	t = "http://a/#frag";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), -1);
	t = "/x";
	assert_int_equal(gate_http_split_url(t, strlen(t), &a, &p), -1);
}

static void
test_forward_head(void **state)
{
	static const char	 req[] =
	    "POST http://a.example/p?q HTTP/1.0\r\n"
	    "Connection: keep-alive, X-Secret\r\n"
	    "X-Secret: 1\r\n"
	    "Keep-Alive: 300\r\n"
	    "Proxy-Connection: keep-alive\r\n"
	    "Proxy-Authorization: Basic eDp5\r\n"
	    "TE: trailers\r\n"
	    "Upgrade: h2c\r\n"
	    "X-Keep: yes\r\n"
	    "\r\n";
	struct gate_http_req	 r;
	struct gate_http_span	 a, p;
	char			 out[1024];
	ssize_t			 n;

	gate_http_req_init(&r);
	assert_int_equal(gate_http_parse(&r, req, sizeof(req) - 1),
	    sizeof(req) - 1);
	assert_int_equal(gate_http_split_url(req + r.target.off, r.target.len,
	    &a, &p), 0);
	p.off += r.target.off;
	n = gate_http_forward_head(&r, req, p, "a.example:80", out,
	    sizeof(out) - 1);
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "POST /p?q HTTP/1.1\r\n"
	    "Host: a.example:80\r\n"
	    "X-Keep: yes\r\n"
	    "Connection: close\r\n\r\n");
	/* too small a buffer is an error, not a truncation */
	assert_int_equal(gate_http_forward_head(&r, req, p, "a.example:80",
	    out, 20), -1);
}

static ssize_t
chunk_all(const char *s, size_t len, size_t step, int *done)
{
	struct gate_http_chunk	 c;
	size_t			 off = 0;
	ssize_t			 n;

	gate_http_chunk_init(&c);
	*done = 0;
	while (off < len && !*done) {
		size_t	 k = len - off < step ? len - off : step;

		if ((n = gate_http_chunk_scan(&c, s + off, k, done)) == -1)
			return -1;
		off += (size_t)n;
		if ((size_t)n < k && !*done)
			return -2;	/* must take everything until done */
	}
	return (ssize_t)off;
}

static void
test_chunked(void **state)
{
	static const char	 body[] = "5;ext=1\r\nhello\r\n"
	    "A \t;e\r\n0123456789\r\n2 \r\nhi\r\n"
	    "0\r\nTrailer: x\r\n\r\n";
	static const char	*bad[] = {
		"x\r\n", "5\r\nhelloX\r\n", "5\nhello\r\n0\r\n\r\n",
		"1234567890123456\r\n", "0\r\nT: \x01\r\n\r\n",
		"80000000\r\n", "100000000\r\n", "0080000000\r\n",
		"ffffffff\r\n",
		/* after the size: whitespace, then ';' or the line's end */
		"5 6\r\nabcde\r\n", "5\t0\r\n", "5 x;e\r\n", "5 ;e\n",
	};
	size_t	 step, i;
	int	 done;

	for (step = 1; step <= sizeof(body); step++) {
		assert_int_equal(chunk_all(body, sizeof(body) - 1, step, &done),
		    sizeof(body) - 1);
		assert_true(done);
	}
	/* bytes after the end are not the body's */
	{
		char	 more[sizeof(body) + 16];

		snprintf(more, sizeof(more), "%sGET /", body);
		assert_int_equal(chunk_all(more, strlen(more), 1000, &done),
		    sizeof(body) - 1);
		assert_true(done);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (chunk_all(bad[i], strlen(bad[i]), 1, &done) != -1)
			fail_msg("chunk framing accepted: %s", bad[i]);
	/* the largest chunk is 2^31 - 1 bytes; the size line is accepted */
	assert_int_equal(chunk_all("7fffffff\r\nab", 12, 1, &done), 12);
	assert_false(done);
}

/* gate_json_str of in, then read back as the launcher reads audit lines */
static void
json_back(const char *in, const char *want)
{
	char	 buf[256], back[128], err[128];
	size_t	 n, i;

	n = gate_json_str(buf, sizeof(buf), in);
	assert_string_equal(buf, want);
	for (i = 0; i < n; i++)	/* pure ASCII, no control byte */
		assert_true(buf[i] >= 0x20 && buf[i] < 0x7f);
	assert_int_equal(json_string(buf, n, back, sizeof(back), NULL,
	    JSON_BYTES, err, sizeof(err)), (ssize_t)n);
	assert_string_equal(back, in);
}

static void
test_json_str(void **state)
{
	char		 buf[64], in[8];
	unsigned	 a, b;

	(void)state;
	json_back("a\"b\\c\n\x01\x7f", "\"a\\\"b\\\\c\\n\\u0001\\u007f\"");
	/* valid UTF-8: the code point, a surrogate pair above U+FFFF */
	json_back("caf\xc3\xa9", "\"caf\\u00e9\"");
	json_back("\xe2\x82\xac\xef\xbf\xbf", "\"\\u20ac\\uffff\"");
	json_back("\xf0\x9f\x98\x80", "\"\\ud83d\\ude00\"");
	json_back("\xf4\x8f\xbf\xbf", "\"\\udbff\\udfff\"");	/* U+10FFFF */
	json_back("\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80",	/* each lowest */
	    "\"\\u0080\\u0800\\ud800\\udc00\"");
	/* not UTF-8: each byte \udcXX, and what follows read afresh */
	json_back("\xff\xfe", "\"\\udcff\\udcfe\"");
	json_back("a\x80z", "\"a\\udc80z\"");			/* stray */
	json_back("\xc3(", "\"\\udcc3(\"");			/* cut short */
	json_back("\xc3", "\"\\udcc3\"");			/* at the end */
	json_back("\xe2\x82", "\"\\udce2\\udc82\"");
	json_back("\xf0\x9f\x98", "\"\\udcf0\\udc9f\\udc98\"");
	/* overlong forms */
	json_back("\xc0\xaf", "\"\\udcc0\\udcaf\"");		/* '/' */
	json_back("\xc1\xbf", "\"\\udcc1\\udcbf\"");
	json_back("\xe0\x80\xaf", "\"\\udce0\\udc80\\udcaf\"");
	json_back("\xe0\x9f\xbf", "\"\\udce0\\udc9f\\udcbf\"");
	json_back("\xf0\x80\x80\xaf", "\"\\udcf0\\udc80\\udc80\\udcaf\"");
	json_back("\xf0\x8f\xbf\xbf", "\"\\udcf0\\udc8f\\udcbf\\udcbf\"");
	/* UTF-8 of a surrogate (CESU-8 too), and past U+10FFFF */
	json_back("\xed\xa0\x80", "\"\\udced\\udca0\\udc80\"");
	json_back("\xed\xb2\x80", "\"\\udced\\udcb2\\udc80\"");
	json_back("\xed\x9f\xbf", "\"\\ud7ff\"");		/* below them */
	json_back("\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\"");
	json_back("\xf5\x80\x80\x80", "\"\\udcf5\\udc80\\udc80\\udc80\"");
	/* every two bytes come back as they were, ASCII all the way */
	for (a = 1; a < 256; a++)
		for (b = 1; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			in[2] = '\0';
			gate_json_str(buf, sizeof(buf), in);
			json_back(in, buf);
		}
	/* truncation keeps the quotes, and never cuts an escape */
	gate_json_str(buf, 8, "abcdefghijkl");
	assert_string_equal(buf, "\"abcde\"");
	gate_json_str(buf, 15, "ab\xf0\x9f\x98\x80");
	assert_string_equal(buf, "\"ab\"");
	gate_json_str(buf, 17, "ab\xf0\x9f\x98\x80");
	assert_string_equal(buf, "\"ab\\ud83d\\ude00\"");
}

static struct gate_auth *
auth_from(const char *text)
{
	struct gate_auth	*a;
	char			 err[256];
	int			 fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, strlen(text)),
	    (ssize_t)strlen(text));
	close(fds[1]);
	a = gate_auth_load_fd(fds[0], err, sizeof(err));
	if (a == NULL)
		fail_msg("token: %s", err);
	return a;
}

static void
test_auth(void **state)
{
	struct gate_auth	*a;
	char			 sess[GATE_SESSION_MAX], err[256];
	const char		*v;
	int			 fds[2];

	/* "s1:secret1", "anyone:bare", "s1:bare", "s1:wrong" */
	a = auth_from("# comment\ns1:secret1\r\nbare\n");
	v = "Basic czE6c2VjcmV0MQ==";
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), 0);
	assert_string_equal(sess, "s1");
	v = "basic   YW55b25lOmJhcmU=";
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), 0);
	assert_string_equal(sess, "anyone");
	v = "Basic czE6d3Jvbmc=";
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), -1);
	v = "Basic czI6c2VjcmV0MQ==";		/* s2:secret1 */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), -1);
	v = "Basic czE6c2VjcmV0MQ";		/* no padding */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), -1);
	v = "Bearer czE6c2VjcmV0MQ==";
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), -1);
	v = "Basic c2VjcmV0MQ==";		/* no colon */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), -1);
	/* a user name is a label of printable ASCII (termsafe.h): ESC, an
	 * e acute and U+202E (RLO), "a\x1b[2J\xc3\xa9\xe2\x80\xaez:bare",
	 * each one '?'; cut to the buffer */
	v = "Basic YRtbMkrDqeKArno6YmFyZQ==";
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess), NULL), 0);
	assert_string_equal(sess, "a?[2J??z");
	v = "basic   YW55b25lOmJhcmU=";		/* anyone:bare */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, 4, NULL), 0);
	assert_string_equal(sess, "any");
	gate_auth_free(a);

	/* an empty file and an empty secret are refused */
	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	assert_null(gate_auth_load_fd(fds[0], err, sizeof(err)));
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "s:\n", 3), 3);
	close(fds[1]);
	assert_null(gate_auth_load_fd(fds[0], err, sizeof(err)));
}

/*
 * The line a credential matched, by its key, across a reload: a line of
 * any user name removed while another stays is gone (by session name
 * alone every name is still some line's); the same line, moved, stays;
 * a labelled line of the same secret is another line.
 */
static void
test_auth_holds(void **state)
{
	struct gate_auth	*a, *b;
	unsigned char		 kbare[GATE_AUTH_KEY], ks1[GATE_AUTH_KEY];
	char			 sess[GATE_SESSION_MAX];
	const char		*v;

	(void)state;
	a = auth_from("s1:secret1\nbare\n");
	v = "Basic YW55b25lOmJhcmU=";		/* anyone:bare */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess),
	    kbare), 0);
	v = "Basic czE6c2VjcmV0MQ==";		/* s1:secret1 */
	assert_int_equal(gate_auth_check(a, v, strlen(v), sess, sizeof(sess),
	    ks1), 0);
	assert_memory_not_equal(kbare, ks1, GATE_AUTH_KEY);
	assert_true(gate_auth_holds(a, kbare));
	assert_true(gate_auth_holds(a, ks1));
	gate_auth_free(a);

	b = auth_from("other\ns1:secret1\n");
	assert_false(gate_auth_holds(b, kbare));
	assert_true(gate_auth_holds(b, ks1));
	gate_auth_free(b);
	b = auth_from("# moved\ns1:secret1\nbare\n");
	assert_true(gate_auth_holds(b, kbare));
	gate_auth_free(b);
	b = auth_from("anyone:bare\ns1:other\nsecret1\n");
	assert_false(gate_auth_holds(b, kbare));
	assert_false(gate_auth_holds(b, ks1));
	gate_auth_free(b);
}

/* A minimal ClientHello: one record, the given extensions block. */
static size_t
hello(uint8_t *out, const uint8_t *ext, size_t extlen, int with_ext)
{
	size_t	 n = 0, hs, body;

	body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + (with_ext ? 2 + extlen : 0);
	hs = 4 + body;
	out[n++] = 0x16; out[n++] = 0x03; out[n++] = 0x01;
	out[n++] = (uint8_t)(hs >> 8); out[n++] = (uint8_t)hs;
	out[n++] = 0x01; out[n++] = 0;
	out[n++] = (uint8_t)(body >> 8); out[n++] = (uint8_t)body;
	out[n++] = 0x03; out[n++] = 0x03;
	memset(out + n, 0xaa, 32);
	n += 32;
	out[n++] = 0;				/* session id */
	out[n++] = 0; out[n++] = 2;		/* cipher suites */
	out[n++] = 0x13; out[n++] = 0x01;
	out[n++] = 1; out[n++] = 0;		/* compression */
	if (with_ext) {
		out[n++] = (uint8_t)(extlen >> 8); out[n++] = (uint8_t)extlen;
		memcpy(out + n, ext, extlen);
		n += extlen;
	}
	return n;
}

/* A server_name extension for name. */
static size_t
sni_ext(uint8_t *out, const char *name)
{
	size_t	 l = strlen(name), n = 0;

	out[n++] = 0; out[n++] = 0;		/* type server_name */
	out[n++] = (uint8_t)((l + 5) >> 8); out[n++] = (uint8_t)(l + 5);
	out[n++] = (uint8_t)((l + 3) >> 8); out[n++] = (uint8_t)(l + 3);
	out[n++] = 0;				/* host_name */
	out[n++] = (uint8_t)(l >> 8); out[n++] = (uint8_t)l;
	memcpy(out + n, name, l);
	return n + l;
}

/* The Content-Length of an answer is the length of its body. */
static void
check_reply(const char *r, size_t n, const char *what)
{
	const char	*end = strstr(r, "\r\n\r\n"), *cl = NULL;
	unsigned long	 want;

	if (end == NULL || (cl = strstr(r, "\r\nContent-Length: ")) == NULL ||
	    cl > end)
		fail_msg("%s: no head or no Content-Length: %s", what, r);
	want = strtoul(cl + 18, NULL, 10);
	if (want != n - (size_t)(end + 4 - r))
		fail_msg("%s: Content-Length %lu, body %zu bytes", what, want,
		    n - (size_t)(end + 4 - r));
	assert_int_equal(strlen(r), n);
}

static void
test_replies(void **state)
{
	char		 buf[GATE_HTTP_REPLY_MAX], dec[128];
	ssize_t		 n;
	size_t		 i;
	const int	*s;

	(void)state;
	/* every fixed answer, as the accept path sends it */
	for (i = 0; i < gate_http_ncanned; i++) {
		snprintf(dec, sizeof(dec), "error; reason=%s",
		    gate_http_canned[i].reason);
		n = gate_http_reply(buf, sizeof(buf), gate_http_canned[i].status,
		    dec, gate_http_canned[i].body);
		assert_true(n > 0);
		check_reply(buf, (size_t)n, gate_http_canned[i].reason);
		assert_ptr_equal(gate_http_canned_find(
		    gate_http_canned[i].reason), &gate_http_canned[i]);
	}
	/* every status, with and without a decision, empty and long bodies */
	for (s = gate_http_statuses; *s != 0; s++) {
		static const char *bodies[] = { "", "x\n",
		    ("aisb-gate: CONNECT a.example:443 denied: port not "
		    "allowed\nrule: t.yaml:3:5 allow host: a.example\n"
		    "fix: add 443\n") };

		assert_string_not_equal(gate_http_status_text(*s), "Error");
		for (i = 0; i < 3; i++) {
			n = gate_http_reply(buf, sizeof(buf), *s,
			    i ? "deny; reason=x" : "", bodies[i]);
			assert_true(n > 0);
			check_reply(buf, (size_t)n, gate_http_status_text(*s));
		}
	}
	/* too small a buffer is an error, not a cut answer */
	assert_int_equal(gate_http_reply(buf, 40, 503, "", "body\n"), -1);
}

static void
test_ctl_parse(void **state)
{
	char	 line[GATE_CTL_MAX_LINE + 2];
	size_t	 used = 0;
	uint64_t id = 0;

	(void)state;
	assert_int_equal(gate_ctl_parse("status\n", 7, &used, &id), GATE_CTL_STATUS);
	assert_int_equal(used, 7);
	assert_int_equal(gate_ctl_parse("reload\r\nx", 9, &used, &id),
	    GATE_CTL_RELOAD);
	assert_int_equal(used, 8);
	assert_int_equal(gate_ctl_parse("reopen\n", 7, &used, &id),
	    GATE_CTL_REOPEN);
	assert_int_equal(used, 7);
	assert_int_equal(gate_ctl_parse("status", 6, &used, &id), GATE_CTL_MORE);
	assert_int_equal(gate_ctl_parse("STATUS\n", 7, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("status\0x\n", 9, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("\n", 1, &used, &id), GATE_CTL_UNKNOWN);
	memset(line, 'a', sizeof(line));
	assert_int_equal(gate_ctl_parse(line, GATE_CTL_MAX_LINE, &used, &id),
	    GATE_CTL_MORE);
	assert_int_equal(gate_ctl_parse(line, GATE_CTL_MAX_LINE + 1, &used, &id),
	    GATE_CTL_TOO_LONG);
	line[GATE_CTL_MAX_LINE] = '\n';	/* 256 bytes, then the LF */
	assert_int_equal(gate_ctl_parse(line, sizeof(line), &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(used, GATE_CTL_MAX_LINE + 1);

	/* --ask: the held requests, and the answers to one by its id */
	assert_int_equal(gate_ctl_parse("pending\n", 8, &used, &id),
	    GATE_CTL_PENDING);
	assert_int_equal(gate_ctl_parse("watch\r\n", 7, &used, &id),
	    GATE_CTL_WATCH);
	assert_int_equal(gate_ctl_parse("approve 17 once\n", 16, &used, &id),
	    GATE_CTL_APPROVE_ONCE);
	assert_int_equal(id, 17);
	assert_int_equal(used, 16);
	assert_int_equal(gate_ctl_parse("approve 9007199254740991 session\n",
	    33, &used, &id), GATE_CTL_APPROVE_SESSION);
	assert_true(id == GATE_CTL_MAX_ID);
	assert_int_equal(gate_ctl_parse("deny 3\r\n", 8, &used, &id),
	    GATE_CTL_DENY);
	assert_int_equal(id, 3);
	/* one space, digits without sign or leading zero, within the bound */
	assert_int_equal(gate_ctl_parse("deny 0\n", 7, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(id, 0);
	assert_int_equal(gate_ctl_parse("deny 03\n", 8, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("deny +3\n", 8, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("deny  3\n", 8, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("deny 3 \n", 8, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("deny\n", 5, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("approve 9007199254740992 once\n",
	    30, &used, &id), GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("approve 99999999999999999999 once\n",
	    34, &used, &id), GATE_CTL_UNKNOWN);
	assert_int_equal(id, 0);
	assert_int_equal(gate_ctl_parse("approve 5 always\n", 17, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("approve 5\n", 10, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("approve 5 once x\n", 17, &used, &id),
	    GATE_CTL_UNKNOWN);
	assert_int_equal(gate_ctl_parse("approve 5 once", 14, &used, &id),
	    GATE_CTL_MORE);
	assert_int_equal(gate_ctl_parse("pending \n", 9, &used, &id),
	    GATE_CTL_UNKNOWN);
}

static void
test_tls_sni(void **state)
{
	uint8_t	 buf[1024], ext[512];
	char	 name[254];
	size_t	 n, e, i;

	/* an unrelated extension, then the name */
	ext[0] = 0; ext[1] = 0x2b; ext[2] = 0; ext[3] = 3;
	ext[4] = 2; ext[5] = 3; ext[6] = 4;
	e = 7 + sni_ext(ext + 7, "WWW.Example.COM.");
	n = hello(buf, ext, e, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_NAME);
	assert_string_equal(name, "www.example.com");
	for (i = 0; i < n; i++)			/* every prefix: more */
		assert_int_equal(gate_tls_sni(buf, i, name, sizeof(name)),
		    GATE_TLS_MORE);
	/* bytes after the record do not matter */
	buf[n] = 0x17;
	assert_int_equal(gate_tls_sni(buf, n + 1, name, sizeof(name)),
	    GATE_TLS_NAME);

	/* no extensions, no server_name: no name */
	n = hello(buf, NULL, 0, 0);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_NO_NAME);
	n = hello(buf, ext, 7, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_NO_NAME);

	/* two server_name extensions, a bad character, a long name */
	e = sni_ext(ext, "a.example");
	e += sni_ext(ext + e, "b.example");
	n = hello(buf, ext, e, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	/* one server_name extension, two host_name entries (RFC 6066) */
	e = sni_ext(ext, "a.example");
	ext[3] += 12; ext[5] += 12;		/* extension and list lengths */
	ext[e++] = 0; ext[e++] = 0; ext[e++] = 9;
	memcpy(ext + e, "b.example", 9);
	e += 9;
	n = hello(buf, ext, e, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	/* ... the same list with the second entry of another type passes */
	ext[e - 12] = 1;
	n = hello(buf, ext, e, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_NAME);
	assert_string_equal(name, "a.example");
	/* an empty list */
	ext[0] = 0; ext[1] = 0; ext[2] = 0; ext[3] = 2; ext[4] = 0; ext[5] = 0;
	n = hello(buf, ext, 6, 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	/* empty labels */
	n = hello(buf, ext, sni_ext(ext, "a.example.."), 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	n = hello(buf, ext, sni_ext(ext, ".a.example"), 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	n = hello(buf, ext, sni_ext(ext, "a..example"), 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	n = hello(buf, ext, sni_ext(ext, "a b.example"), 1);
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	n = hello(buf, ext, sni_ext(ext, "a.example"), 1);
	assert_int_equal(gate_tls_sni(buf, n, name, 5), GATE_TLS_BAD);

	/* not TLS; not a ClientHello; a hello longer than its record */
	assert_int_equal(gate_tls_sni((const uint8_t *)"SSH-2.0", 7, name,
	    sizeof(name)), GATE_TLS_NOT_TLS);
	n = hello(buf, ext, sni_ext(ext, "a.example"), 1);
	buf[5] = 0x02;
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	n = hello(buf, ext, sni_ext(ext, "a.example"), 1);
	buf[7] = 0xff;
	assert_int_equal(gate_tls_sni(buf, n, name, sizeof(name)),
	    GATE_TLS_BAD);
	/* a record longer than TLS allows */
	buf[3] = 0x40; buf[4] = 0x01;
	assert_int_equal(gate_tls_sni(buf, 5, name, sizeof(name)),
	    GATE_TLS_BAD);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_split_url),
		cmocka_unit_test(test_forward_head),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_ctl_parse),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_auth_holds),
		cmocka_unit_test(test_tls_sni),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
