/*
 * Built-in denied ranges: the first and last address of each range are
 * denied, the addresses just outside are not (unless another range covers
 * them); embedded IPv4 forms; allow_ranges exemptions; CIDR parsing.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "policy.h"

/* The ranges as the issue lists them; kept apart from the code under test. */
static const struct { const char *net; unsigned prefix; } spec4[] = {
	{ "0.0.0.0", 8 }, { "10.0.0.0", 8 }, { "100.64.0.0", 10 },
	{ "127.0.0.0", 8 }, { "169.254.0.0", 16 }, { "172.16.0.0", 12 },
	{ "192.0.0.0", 24 }, { "192.168.0.0", 16 }, { "198.18.0.0", 15 },
	{ "224.0.0.0", 4 }, { "240.0.0.0", 4 }, { "255.255.255.255", 32 },
};

static uint32_t
v4(const char *s)
{
	struct in_addr	 a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return ntohl(a.s_addr);
}

static int
spec_denied4(uint32_t x)
{
	size_t	 i;

	for (i = 0; i < sizeof(spec4) / sizeof(spec4[0]); i++) {
		uint32_t mask = 0xffffffffu << (32 - spec4[i].prefix);

		if ((x & mask) == v4(spec4[i].net))
			return 1;
	}
	return 0;
}

static struct policy_addr
mk4(uint32_t x)
{
	struct policy_addr	 a = { .family = AF_INET };

	a.bytes[0] = (uint8_t)(x >> 24);
	a.bytes[1] = (uint8_t)(x >> 16);
	a.bytes[2] = (uint8_t)(x >> 8);
	a.bytes[3] = (uint8_t)x;
	return a;
}

static struct policy_addr
mk(const char *s)
{
	struct policy_addr	 a;

	if (policy_parse_addr(s, strlen(s), &a) != 0)
		fail_msg("bad test address %s", s);
	return a;
}

static void
expect(const struct policy *p, const struct policy_addr *a, int denied)
{
	const char	*c = policy_classify(p, a);
	char		 buf[64];

	if ((c != NULL) != denied)
		fail_msg("%s: expected %s, got %s", policy_addr_str(a, buf,
		    sizeof(buf)), denied ? "denied" : "permitted",
		    c ? c : "permitted");
}

static void
test_v4_boundaries(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(spec4) / sizeof(spec4[0]); i++) {
		uint32_t	 first = v4(spec4[i].net);
		uint32_t	 last = first | (spec4[i].prefix == 32 ? 0 :
		    0xffffffffu >> spec4[i].prefix);
		struct policy_addr a;

		a = mk4(first);
		expect(NULL, &a, 1);
		a = mk4(last);
		expect(NULL, &a, 1);
		if (first > 0) {
			a = mk4(first - 1);
			expect(NULL, &a, spec_denied4(first - 1));
		}
		if (last < 0xffffffffu) {
			a = mk4(last + 1);
			expect(NULL, &a, spec_denied4(last + 1));
		}
	}
	/* a few everyday public addresses */
	{
		struct policy_addr a = mk("93.184.216.34");

		expect(NULL, &a, 0);
		a = mk("192.0.2.1");	/* TEST-NET-1 is not in the list */
		expect(NULL, &a, 0);
		a = mk("9.255.255.255");
		expect(NULL, &a, 0);
		a = mk("11.0.0.0");
		expect(NULL, &a, 0);
	}
}

static void
test_v6(void **state)
{
	static const struct { const char *a; int denied; } cases[] = {
		{ "::", 1 }, { "::1", 1 }, { "::2", 1 },
		{ "::8.8.8.8", 1 },		/* IPv4-compatible: all denied */
		{ "::ffff:ffff:ffff", 1 },	/* ::/96 ends below mapped */
		{ "fc00::", 1 }, { "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
		{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 }, { "fe00::", 0 },
		{ "fe80::", 1 }, { "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
		{ "fec0::1", 1 }, { "ff00::", 1 },
		{ "ff02::1", 1 }, { "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
		{ "2001:db8::1", 0 }, { "2606:4700::1", 0 },
		/* IPv4-mapped */
		{ "::ffff:127.0.0.1", 1 }, { "::ffff:10.0.0.1", 1 },
		{ "::ffff:169.254.169.254", 1 }, { "::ffff:8.8.8.8", 0 },
		/* NAT64 well-known and local-use prefixes */
		{ "64:ff9b::7f00:1", 1 }, { "64:ff9b::a9fe:a9fe", 1 },
		{ "64:ff9b::808:808", 0 }, { "64:ff9b:1::a00:1", 1 },
		/* 6to4 */
		{ "2002:7f00:1::", 1 }, { "2002:c0a8:101::1", 1 },
		{ "2002:808:808::", 0 },
		/* Teredo: server 4..7, client inverted 12..15 */
		{ "2001:0:7f00:1::", 1 },
		{ "2001:0:808:808::80ff:fffe", 1 },	/* client 127.0.0.1 */
		{ "2001:0:808:808::f7f7:f7f7", 0 },	/* client 8.8.8.8 */
		{ "2001:1::1", 0 },			/* not Teredo */
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_addr a = mk(cases[i].a);

		expect(NULL, &a, cases[i].denied);
	}
}

static struct policy *
load(const char *yaml)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 buf[4096];

	if (policy_load_buffer("t.yaml", yaml, strlen(yaml), &p, &errs) != 0) {
		policy_errors_format(&errs, buf, sizeof(buf));
		fail_msg("load failed: %s", buf);
	}
	return p;
}

static void
test_allow_ranges(void **state)
{
	struct policy		*p;
	struct policy_addr	 a;

	(void)state;
	p = load("version: 1\nallow_ranges: [127.0.0.1/32, \"fd00::/8\"]\n");
	a = mk("127.0.0.1");
	expect(p, &a, 0);
	a = mk("127.0.0.2");
	expect(p, &a, 1);
	a = mk("::ffff:127.0.0.1");	/* the same destination */
	expect(p, &a, 0);
	a = mk("::ffff:127.0.0.2");
	expect(p, &a, 1);
	a = mk("fd12::1");
	expect(p, &a, 0);
	a = mk("fc00::1");
	expect(p, &a, 1);
	a = mk("10.0.0.1");
	expect(p, &a, 1);
	policy_free(p);
}

static void
test_cidr_decide(void **state)
{
	struct policy		*p;
	struct policy_addr	 a;
	struct policy_decision	 d;

	(void)state;
	p = load("version: 1\nallow:\n  - cidr: 192.0.2.0/24\n    ports: [22]\n"
	    "  - cidr: \"2001:db8::/32\"\ndeny:\n  - cidr: 192.0.2.128/25\n");
	a = mk("192.0.2.0");
	policy_decide_addr(p, &a, 22, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	a = mk("192.0.2.127");
	policy_decide_addr(p, &a, 22, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_decide_addr(p, &a, 443, &d);
	assert_int_equal(d.reason, POLICY_R_PORT_NOT_ALLOWED);
	a = mk("192.0.2.128");
	policy_decide_addr(p, &a, 22, &d);
	assert_int_equal(d.reason, POLICY_R_DENY_RULE);
	a = mk("192.0.3.0");
	policy_decide_addr(p, &a, 22, &d);
	assert_int_equal(d.reason, POLICY_R_HOST_NOT_ALLOWED);
	assert_null(d.rule);
	a = mk("2001:db8:ffff::1");
	policy_decide_addr(p, &a, 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	a = mk("2001:db9::1");
	policy_decide_addr(p, &a, 443, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_boundaries),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_allow_ranges),
		cmocka_unit_test(test_cidr_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
