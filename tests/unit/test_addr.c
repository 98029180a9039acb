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

#include "addrclass.h"
#include "policy.h"

/* The ranges as the issue lists them; kept apart from the code under test. */
static const struct { const char *net; unsigned prefix; } spec4[] = {
	{ "0.0.0.0", 8 }, { "10.0.0.0", 8 }, { "100.64.0.0", 10 },
	{ "127.0.0.0", 8 }, { "169.254.0.0", 16 }, { "172.16.0.0", 12 },
	{ "192.0.0.0", 24 }, { "192.168.0.0", 16 }, { "198.18.0.0", 15 },
	{ "224.0.0.0", 4 }, { "240.0.0.0", 4 }, { "255.255.255.255", 32 },
	{ "192.0.2.0", 24 }, { "198.51.100.0", 24 }, { "203.0.113.0", 24 },
	{ "192.88.99.0", 24 },
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
		a = mk("192.0.3.1");
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
		{ "2001:db8::1", 1 }, { "2606:4700::1", 0 },
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
		{ "2001:1::1", 1 },	/* not Teredo: PCP anycast in 2001::/23 */
		{ "2001:200::1", 0 },	/* just past 2001::/23 */
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

/*
 * The IANA special-purpose address registries, entry by entry, as of
 * 2025 (iana-ipv4-special-registry, iana-ipv6-special-registry), with the
 * decision the gate makes for each:
 *   DENY     every address of the block is denied (first and last tried);
 *   ALLOW    the registry marks it globally reachable: not denied;
 *   CARRIES  judged by the IPv4 address it carries: "pub" is allowed,
 *            "priv" is denied.
 * Where the decision differs from the registry's "Globally Reachable"
 * column the row says why.  EXTRA rows are the table's blocks that are not
 * in the registries.  Kept apart from the table under test: a block added
 * to one without the other fails here.
 */
enum { DENY, ALLOW, CARRIES };

static const struct reg {
	const char	*net;
	unsigned	 prefix;
	const char	*name;
	const char	*rfc;
	int		 expect;
	const char	*pub, *priv;	/* CARRIES only */
} registry[] = {
	/* IPv4 Special-Purpose Address Registry */
	{ "0.0.0.0", 8, "This network", "RFC 791", DENY, NULL, NULL },
	{ "0.0.0.0", 32, "This host on this network", "RFC 1122", DENY, NULL, NULL },
	{ "10.0.0.0", 8, "Private-Use", "RFC 1918", DENY, NULL, NULL },
	{ "100.64.0.0", 10, "Shared Address Space", "RFC 6598", DENY, NULL, NULL },
	{ "127.0.0.0", 8, "Loopback", "RFC 1122", DENY, NULL, NULL },
	{ "169.254.0.0", 16, "Link Local", "RFC 3927", DENY, NULL, NULL },
	{ "172.16.0.0", 12, "Private-Use", "RFC 1918", DENY, NULL, NULL },
	{ "192.0.0.0", 24, "IETF Protocol Assignments", "RFC 6890", DENY, NULL, NULL },
	{ "192.0.0.0", 29, "IPv4 Service Continuity Prefix", "RFC 7335", DENY, NULL, NULL },
	{ "192.0.0.8", 32, "IPv4 dummy address", "RFC 7600", DENY, NULL, NULL },
	/* globally reachable, but anycast to the nearest (local) server */
	{ "192.0.0.9", 32, "Port Control Protocol Anycast", "RFC 7723", DENY, NULL, NULL },
	{ "192.0.0.10", 32, "TURN Anycast", "RFC 8155", DENY, NULL, NULL },
	{ "192.0.0.170", 32, "NAT64/DNS64 Discovery", "RFC 8880", DENY, NULL, NULL },
	{ "192.0.0.171", 32, "NAT64/DNS64 Discovery", "RFC 8880", DENY, NULL, NULL },
	{ "192.0.2.0", 24, "Documentation (TEST-NET-1)", "RFC 5737", DENY, NULL, NULL },
	{ "192.31.196.0", 24, "AS112-v4", "RFC 7535", ALLOW, NULL, NULL },
	{ "192.52.193.0", 24, "AMT", "RFC 7450", ALLOW, NULL, NULL },
	{ "192.88.99.0", 24, "Deprecated (6to4 Relay Anycast)", "RFC 7526",
	    DENY, NULL, NULL },
	{ "192.88.99.2", 32, "6a44-relay anycast address", "RFC 6751", DENY, NULL, NULL },
	{ "192.168.0.0", 16, "Private-Use", "RFC 1918", DENY, NULL, NULL },
	{ "192.175.48.0", 24, "Direct Delegation AS112 Service", "RFC 7534",
	    ALLOW, NULL, NULL },
	{ "198.18.0.0", 15, "Benchmarking", "RFC 2544", DENY, NULL, NULL },
	{ "198.51.100.0", 24, "Documentation (TEST-NET-2)", "RFC 5737", DENY, NULL, NULL },
	{ "203.0.113.0", 24, "Documentation (TEST-NET-3)", "RFC 5737", DENY, NULL, NULL },
	{ "240.0.0.0", 4, "Reserved", "RFC 1112", DENY, NULL, NULL },
	{ "255.255.255.255", 32, "Limited Broadcast", "RFC 919, RFC 8190",
	    DENY, NULL, NULL },
	/* EXTRA: the multicast registry's whole block */
	{ "224.0.0.0", 4, "Multicast", "RFC 5771", DENY, NULL, NULL },

	/* IPv6 Special-Purpose Address Registry */
	{ "::1", 128, "Loopback Address", "RFC 4291", DENY, NULL, NULL },
	{ "::", 128, "Unspecified Address", "RFC 4291", DENY, NULL, NULL },
	{ "::ffff:0:0", 96, "IPv4-mapped Address", "RFC 4291", CARRIES,
	    "::ffff:8.8.8.8", "::ffff:10.0.0.1" },
	{ "64:ff9b::", 96, "IPv4-IPv6 Translat.", "RFC 6052", CARRIES,
	    "64:ff9b::808:808", "64:ff9b::a9fe:a9fe" },
	/* not globally reachable: allowed only when every layout is public */
	{ "64:ff9b:1::", 48, "IPv4-IPv6 Translat.", "RFC 8215", CARRIES,
	    "64:ff9b:1:808:8:808:808:808", "64:ff9b:1:a08:8:808:808:808" },
	{ "100::", 64, "Discard-Only Address Block", "RFC 6666", DENY, NULL, NULL },
	{ "100:0:0:1::", 64, "Dummy IPv6 Prefix", "RFC 9780", DENY, NULL, NULL },
	{ "2001::", 23, "IETF Protocol Assignments", "RFC 2928", DENY, NULL, NULL },
	{ "2001::", 32, "TEREDO", "RFC 4380, RFC 8190", CARRIES,
	    "2001:0:808:808::f7f7:f7f7", "2001:0:808:808::80ff:fffe" },
	/* globally reachable, but anycast to the nearest (local) server */
	{ "2001:1::1", 128, "Port Control Protocol Anycast", "RFC 7723", DENY, NULL, NULL },
	{ "2001:1::2", 128, "TURN Anycast", "RFC 8155", DENY, NULL, NULL },
	{ "2001:1::3", 128, "DNS-SD Service Registration Protocol Anycast",
	    "RFC 9665", DENY, NULL, NULL },
	{ "2001:2::", 48, "Benchmarking", "RFC 5180", DENY, NULL, NULL },
	/* globally reachable; denied with 2001::/23: no agent needs them */
	{ "2001:3::", 32, "AMT", "RFC 7450", DENY, NULL, NULL },
	{ "2001:4:112::", 48, "AS112-v6", "RFC 7535", DENY, NULL, NULL },
	{ "2001:10::", 28, "Deprecated (previously ORCHID)", "RFC 4843", DENY, NULL, NULL },
	{ "2001:20::", 28, "ORCHIDv2", "RFC 7343", DENY, NULL, NULL },
	{ "2001:30::", 28, "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
	    "RFC 9374", DENY, NULL, NULL },
	{ "2001:db8::", 32, "Documentation", "RFC 3849", DENY, NULL, NULL },
	{ "2002::", 16, "6to4", "RFC 3056", CARRIES,
	    "2002:808:808::", "2002:7f00:1::" },
	{ "2620:4f:8000::", 48, "Direct Delegation AS112 Service", "RFC 7534",
	    ALLOW, NULL, NULL },
	{ "3fff::", 20, "Documentation", "RFC 9637", DENY, NULL, NULL },
	{ "5f00::", 16, "Segment Routing (SRv6) SIDs", "RFC 9602", DENY, NULL, NULL },
	{ "fc00::", 7, "Unique-Local", "RFC 4193, RFC 8190", DENY, NULL, NULL },
	{ "fe80::", 10, "Link-Local Unicast", "RFC 4291", DENY, NULL, NULL },
	/* EXTRA */
	{ "::", 96, "IPv4-compatible (deprecated)", "RFC 4291", DENY, NULL, NULL },
	{ "::ffff:0:0:0", 96, "SIIT IPv4-translated", "RFC 2765", CARRIES,
	    "::ffff:0:808:808", "::ffff:0:7f00:1" },
	{ "fec0::", 10, "Site-local (deprecated)", "RFC 3879", DENY, NULL, NULL },
	{ "ff00::", 8, "Multicast", "RFC 4291", DENY, NULL, NULL },
};

/* The first (last = 0) or last address of net/prefix. */
static struct policy_addr
edge(const struct reg *r, int last)
{
	struct policy_addr	 a = mk(r->net);
	unsigned		 bits = a.family == AF_INET ? 32 : 128, i;

	if (last)
		for (i = r->prefix; i < bits; i++)
			a.bytes[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	return a;
}

static void
expect_reg(const struct reg *r, const char *addr, int denied)
{
	struct policy_addr	 a = mk(addr);
	const char		*c = policy_classify(NULL, &a);

	if ((c != NULL) != denied)
		fail_msg("%s/%u (%s, %s): %s: expected %s, got %s", r->net,
		    r->prefix, r->name, r->rfc, addr, denied ? "denied" :
		    "permitted", c ? c : "permitted");
}

static void
test_registry(void **state)
{
	size_t	 i, j;
	char	 buf[64];

	(void)state;
	for (i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
		const struct reg	*r = &registry[i];
		struct policy_addr	 a;

		if (r->expect == CARRIES) {
			expect_reg(r, r->pub, 0);
			expect_reg(r, r->priv, 1);
			continue;
		}
		a = edge(r, 0);
		expect_reg(r, policy_addr_str(&a, buf, sizeof(buf)),
		    r->expect == DENY);
		a = edge(r, 1);
		expect_reg(r, policy_addr_str(&a, buf, sizeof(buf)),
		    r->expect == DENY);
	}
	/* And the other way: each row of the table is a block above. */
	for (j = 0; j < addrclass_count; j++) {
		const struct addrclass	*t = &addrclass_table[j];
		int			 found = 0;

		for (i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
			struct policy_addr a = mk(registry[i].net);

			if ((a.family == AF_INET6) == t->v6 &&
			    registry[i].prefix == t->prefix &&
			    memcmp(a.bytes, t->net, t->v6 ? 16 : 4) == 0 &&
			    (registry[i].expect == CARRIES) ==
			    ((t->flags & ADDRCLASS_CARRIES) != 0))
				found = 1;
		}
		if (!found)
			fail_msg("table row \"%s\" is not a registry block",
			    t->what);
	}
}

/* Every RFC 6052 layout of 64:ff9b:1::/48 is judged, and the gate's. */
static void
test_carried(void **state)
{
	static const struct { const char *a; int denied; } cases[] = {
		/* one private layout each, the three others public */
		{ "64:ff9b:1:a08:8:808:808:808", 1 },	/* /48: 10.8.8.8 */
		{ "64:ff9b:1:87f:1:101:808:808", 1 },	/* /56: 127.1.1.1 */
		{ "64:ff9b:1:808:c0:a801:808:808", 1 },	/* /64: 192.168.1.8 */
		{ "64:ff9b:1:808:8:808:a00:1", 1 },	/* /96: 10.0.0.1 */
		{ "64:ff9b:1:808:8:808:808:808", 0 },
		/* SIIT (::ffff:0:0:0/96) carries its IPv4 in the last 32 bits */
		{ "::ffff:0:127.0.0.1", 1 },
		{ "::ffff:0:169.254.169.254", 1 },
		{ "::ffff:0:8.8.8.8", 0 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_addr a = mk(cases[i].a);

		expect(NULL, &a, cases[i].denied);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_boundaries),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_allow_ranges),
		cmocka_unit_test(test_cidr_decide),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_carried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
