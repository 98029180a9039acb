/*
 * Unit tests of the relay's pure parts (enforcer/tproxy_head.c): the
 * credential from a proxy URL, the heads, a UDP client's answer limit,
 * tool names.
 * The relay itself runs against the real kernel and a real gate in
 * tests/integration/enforce_transparent.sh.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>

#include "tproxy.h"

static struct enf_endpoint
gate4(void)
{
	struct enf_endpoint	 g;

	memset(&g, 0, sizeof(g));
	g.addr.family = AF_INET;
	inet_pton(AF_INET, "10.0.2.2", g.addr.addr);
	g.port = 40123;
	g.proto = ENF_PROTO_TCP;
	return g;
}

static void
test_auth(void **state)
{
	struct enf_endpoint	 g = gate4(), g6;
	char			 out[ENF_TPROXY_MAX_AUTH];

	(void)state;
	/* "session-abc:s3cret" */
	assert_int_equal(enf_tproxy_auth("http://session-abc:s3cret@10.0.2.2:"
	    "40123", &g, out, sizeof(out)), 0);
	assert_string_equal(out, "Basic c2Vzc2lvbi1hYmM6czNjcmV0");
	/* a path, upper-case scheme, escapes: "u:p@ss:w" */
	assert_int_equal(enf_tproxy_auth("HTTP://u:p%40ss%3aw@10.0.2.2:40123/",
	    &g, out, sizeof(out)), 0);
	assert_string_equal(out, "Basic dTpwQHNzOnc=");
	/* another host or port, no credential, a bad escape: none */
	assert_int_equal(enf_tproxy_auth("http://u:p@10.0.2.3:40123", &g, out,
	    sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("http://u:p@10.0.2.2:40124", &g, out,
	    sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("http://u:p@10.0.2.2:401234", &g,
	    out, sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("http://10.0.2.2:40123", &g, out,
	    sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("http://u@10.0.2.2:40123", &g, out,
	    sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("http://u:p%4@10.0.2.2:40123", &g,
	    out, sizeof(out)), -1);
	assert_int_equal(enf_tproxy_auth("https://u:p@10.0.2.2:40123", &g, out,
	    sizeof(out)), -1);
	/* a user name with ':' once decoded would change the pair */
	assert_int_equal(enf_tproxy_auth("http://a%3ab:p@10.0.2.2:40123", &g,
	    out, sizeof(out)), -1);
	/* an output too small */
	assert_int_equal(enf_tproxy_auth("http://session-abc:s3cret@10.0.2.2:"
	    "40123", &g, out, 12), -1);
	/* IPv6 gate: [addr]:port */
	memset(&g6, 0, sizeof(g6));
	g6.addr.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", g6.addr.addr);
	g6.port = 8080;
	assert_int_equal(enf_tproxy_auth("http://a:b@[fd00::2]:8080", &g6,
	    out, sizeof(out)), 0);
	assert_string_equal(out, "Basic YTpi");
}

static void
test_head(void **state)
{
	char	 out[ENF_TPROXY_MAX_HEAD];
	size_t	 n;

	(void)state;
	n = enf_tproxy_head(out, sizeof(out), 0, 443, "Basic eHg=", "curl",
	    "198.18.0.7");
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, "AISB-TRANSPARENT 443 HTTP/1.1\r\n"
	    "Proxy-Authorization: Basic eHg=\r\nX-Aisb-Tool: curl\r\n"
	    "X-Aisb-Dialled: 198.18.0.7\r\n\r\n");
	n = enf_tproxy_head(out, sizeof(out), 1, 0, "Basic eHg=", NULL, "");
	assert_string_equal(out, "AISB-DNS * HTTP/1.1\r\n"
	    "Proxy-Authorization: Basic eHg=\r\n\r\n");
	n = enf_tproxy_head(out, sizeof(out), 0, 80, "", "", NULL);
	assert_string_equal(out, "AISB-TRANSPARENT 80 HTTP/1.1\r\n\r\n");
	assert_int_equal(enf_tproxy_head(out, 20, 0, 80, "", "", NULL), 0);
}

/* A query for a.test A, with an OPT record of size opt (0: none). */
static size_t
query(uint8_t *q, unsigned opt)
{
	static const uint8_t	 head[] = {
		0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
		1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1
	};
	size_t			 n = sizeof(head);

	memcpy(q, head, n);
	if (opt == 0)
		return n;
	q[11] = 1;	/* arcount */
	q[n++] = 0;			/* root */
	q[n++] = 0;
	q[n++] = 41;			/* OPT */
	q[n++] = (uint8_t)(opt >> 8);
	q[n++] = (uint8_t)opt;
	memset(q + n, 0, 6);		/* ttl, rdlen 0 */
	return n + 6;
}

static void
test_udp_limit(void **state)
{
	uint8_t	 q[64];
	size_t	 n;

	(void)state;
	n = query(q, 0);
	assert_int_equal(enf_tproxy_udp_limit(q, n), 512);
	n = query(q, 1232);
	assert_int_equal(enf_tproxy_udp_limit(q, n), 1232);
	n = query(q, 4096);
	assert_int_equal(enf_tproxy_udp_limit(q, n), 4096);
	/* below the floor, cut short, runts: 512 */
	n = query(q, 100);
	assert_int_equal(enf_tproxy_udp_limit(q, n), 512);
	n = query(q, 4096);
	assert_int_equal(enf_tproxy_udp_limit(q, n - 7), 512);
	assert_int_equal(enf_tproxy_udp_limit(q, 5), 512);
	/* a compression loop in the question: walked no further */
	n = query(q, 0);
	q[12] = 0xc0;
	q[13] = 12;
	assert_int_equal(enf_tproxy_udp_limit(q, n), 512);
}

static void
test_tool_clean(void **state)
{
	char	 out[ENF_TPROXY_MAX_TOOL + 1];

	(void)state;
	enf_tproxy_tool_clean("node\n", out, sizeof(out));
	assert_string_equal(out, "node");
	enf_tproxy_tool_clean("a b\"c\r\nx", out, sizeof(out));
	assert_string_equal(out, "a_b_c_");
	enf_tproxy_tool_clean("python3.11", out, sizeof(out));
	assert_string_equal(out, "python3.11");
	enf_tproxy_tool_clean("0123456789012345678901234567890123456789",
	    out, sizeof(out));
	assert_int_equal(strlen(out), ENF_TPROXY_MAX_TOOL);
	enf_tproxy_tool_clean("", out, sizeof(out));
	assert_string_equal(out, "");
}

/* What the relay compares: getsockname's address against what
 * SO_ORIGINAL_DST filled, whose length the kernel leaves at the storage's
 * size and whose bytes past the sockaddr_in are whatever was there. */
static void
test_same_endpoint(void **state)
{
	struct sockaddr_storage	 a, b;
	struct sockaddr_in	*a4 = (struct sockaddr_in *)&a;
	struct sockaddr_in	*b4 = (struct sockaddr_in *)&b;
	struct sockaddr_in6	*a6 = (struct sockaddr_in6 *)&a;
	struct sockaddr_in6	*b6 = (struct sockaddr_in6 *)&b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0xa5, sizeof(b));	/* garbage past the sockaddr_in */
	a4->sin_family = b4->sin_family = AF_INET;
	a4->sin_port = b4->sin_port = htons(40000);
	inet_pton(AF_INET, "127.0.0.1", &a4->sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &b4->sin_addr);
	assert_true(enf_tproxy_same_endpoint(&a, &b));
	b4->sin_port = htons(443);
	assert_false(enf_tproxy_same_endpoint(&a, &b));
	b4->sin_port = htons(40000);
	inet_pton(AF_INET, "127.0.0.2", &b4->sin_addr);
	assert_false(enf_tproxy_same_endpoint(&a, &b));

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a6->sin6_family = b6->sin6_family = AF_INET6;
	a6->sin6_port = b6->sin6_port = htons(40000);
	inet_pton(AF_INET6, "::1", &a6->sin6_addr);
	inet_pton(AF_INET6, "::1", &b6->sin6_addr);
	b6->sin6_flowinfo = 7;		/* not part of the endpoint */
	assert_true(enf_tproxy_same_endpoint(&a, &b));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &b6->sin6_addr);
	assert_false(enf_tproxy_same_endpoint(&a, &b));
	b4->sin_family = AF_INET;
	assert_false(enf_tproxy_same_endpoint(&a, &b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_udp_limit),
		cmocka_unit_test(test_tool_clean),
		cmocka_unit_test(test_same_endpoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
