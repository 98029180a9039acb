/*
 * Address classes: the built-in denied ranges, CIDR parsing, containment.
 *
 * The gate checks every address it might dial with policy_classify().
 * IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo) are
 * judged by the IPv4 address they carry, so ::ffff:127.0.0.1 and
 * 64:ff9b::a9fe:a9fe are as denied as 127.0.0.1 and 169.254.169.254.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-int.h"

struct denied4 {
	uint32_t	 net;		/* host byte order */
	unsigned	 prefix;
	const char	*what;
};

struct denied6 {
	uint8_t		 net[16];
	unsigned	 prefix;
	const char	*what;
};

static const struct denied4 denied4[] = {
	{ 0x00000000, 8,  "this-network 0.0.0.0/8" },
	{ 0x0a000000, 8,  "private 10.0.0.0/8" },
	{ 0x64400000, 10, "shared CGNAT 100.64.0.0/10" },
	{ 0x7f000000, 8,  "loopback 127.0.0.0/8" },
	{ 0xa9fe0000, 16, "link-local 169.254.0.0/16" },
	{ 0xac100000, 12, "private 172.16.0.0/12" },
	{ 0xc0000000, 24, "IETF protocol assignments 192.0.0.0/24" },
	{ 0xc0a80000, 16, "private 192.168.0.0/16" },
	{ 0xc6120000, 15, "benchmarking 198.18.0.0/15" },
	{ 0xe0000000, 4,  "multicast 224.0.0.0/4" },
	{ 0xffffffff, 32, "broadcast 255.255.255.255/32" },
	{ 0xf0000000, 4,  "reserved 240.0.0.0/4" },
};

/* Checked after the IPv4-carrying forms below have been handled. */
static const struct denied6 denied6[] = {
	{ { 0 }, 128, "unspecified ::/128" },
	{ { [15] = 1 }, 128, "loopback ::1/128" },
	/* ::a.b.c.d, deprecated by RFC 4291 and never routed: all of it */
	{ { 0 }, 96, "IPv4-compatible ::/96" },
	{ { 0xfc }, 7, "unique-local fc00::/7" },
	{ { 0xfe, 0x80 }, 10, "link-local fe80::/10" },
	{ { 0xfe, 0xc0 }, 10, "site-local fec0::/10" },
	{ { 0xff }, 8, "multicast ff00::/8" },
};

static const uint8_t mapped_pfx[12] = { [10] = 0xff, [11] = 0xff };
static const uint8_t nat64_pfx[12] = { 0x00, 0x64, 0xff, 0x9b };
static const uint8_t nat64l_pfx[6] = { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 };

int
policy_addr_in(const struct policy_addr *a, const struct policy_addr *net,
    unsigned prefix)
{
	unsigned	 full = prefix / 8, rem = prefix % 8;
	uint8_t		 mask;

	if (a->family != net->family)
		return 0;
	if (memcmp(a->bytes, net->bytes, full) != 0)
		return 0;
	if (rem == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - rem));
	return (a->bytes[full] & mask) == (net->bytes[full] & mask);
}

int
policy_addr_cmp(const struct policy_addr *a, const struct policy_addr *b)
{
	if (a->family != b->family)
		return a->family == AF_INET ? -1 : 1;
	return memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16);
}

static int
exempt(const struct policy *p, const struct policy_addr *a)
{
	size_t	 i;

	if (p == NULL)
		return 0;
	for (i = 0; i < p->nallow_ranges; i++)
		if (policy_addr_in(a, &p->allow_ranges[i].net,
		    p->allow_ranges[i].prefix))
			return 1;
	return 0;
}

static const char *
classify4(const struct policy *p, const uint8_t *b)
{
	struct policy_addr	 a;
	uint32_t		 v;
	size_t			 i;

	v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
	for (i = 0; i < sizeof(denied4) / sizeof(denied4[0]); i++) {
		uint32_t mask = denied4[i].prefix == 0 ? 0 :
		    0xffffffffu << (32 - denied4[i].prefix);

		if ((v & mask) == denied4[i].net) {
			memset(&a, 0, sizeof(a));
			a.family = AF_INET;
			memcpy(a.bytes, b, 4);
			return exempt(p, &a) ? NULL : denied4[i].what;
		}
	}
	return NULL;
}

const char *
policy_classify(const struct policy *p, const struct policy_addr *a)
{
	const uint8_t	*b = a->bytes;
	const char	*what;
	uint8_t		 client[4];
	size_t		 i;

	if (a->family == AF_INET)
		return classify4(p, b);
	if (a->family != AF_INET6)
		return "unknown address family";
	if (exempt(p, a))
		return NULL;

	/* IPv6 forms that carry an IPv4 address are judged by that address. */
	if (memcmp(b, mapped_pfx, 12) == 0 || memcmp(b, nat64_pfx, 12) == 0 ||
	    memcmp(b, nat64l_pfx, 6) == 0)
		return classify4(p, b + 12);
	if (b[0] == 0x20 && b[1] == 0x02)		/* 6to4 2002::/16 */
		return classify4(p, b + 2);
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
		/* Teredo 2001::/32: server at 4..7, client inverted at 12..15 */
		if ((what = classify4(p, b + 4)) != NULL)
			return what;
		for (i = 0; i < 4; i++)
			client[i] = (uint8_t)~b[12 + i];
		return classify4(p, client);
	}
	for (i = 0; i < sizeof(denied6) / sizeof(denied6[0]); i++) {
		struct policy_addr net = { .family = AF_INET6 };

		memcpy(net.bytes, denied6[i].net, 16);
		if (policy_addr_in(a, &net, denied6[i].prefix))
			return denied6[i].what;
	}
	return NULL;
}

/*
 * "192.0.2.0/24", "2001:db8::/32", or a bare address (a host route).
 * Host bits set is an error, with the network the user probably meant as
 * the hint.
 */
int
policy_parse_cidr(const char *in, size_t len, struct policy_addr *net,
    unsigned *prefix, char *err, size_t errlen, char *hint, size_t hintlen)
{
	const char		*slash = memchr(in, '/', len);
	struct policy_addr	 masked;
	size_t			 alen = slash != NULL ? (size_t)(slash - in) : len;
	unsigned		 max, v = 0, i, full, rem;
	char			 buf[64];

	if (policy_parse_addr(in, alen, net) == -1) {
		snprintf(err, errlen, "invalid address in CIDR '%.*s'",
		    (int)(len > 64 ? 64 : len), in);
		snprintf(hint, hintlen, "write 192.0.2.0/24 or 2001:db8::/32");
		return -1;
	}
	max = net->family == AF_INET ? 32 : 128;
	if (slash == NULL) {
		*prefix = max;
		return 0;
	}
	if (slash + 1 == in + len || len - alen - 1 > 3) {
		snprintf(err, errlen, "invalid prefix length in CIDR");
		snprintf(hint, hintlen, "a prefix length is 0-%u", max);
		return -1;
	}
	for (i = (unsigned)alen + 1; i < len; i++) {
		if (in[i] < '0' || in[i] > '9') {
			snprintf(err, errlen, "invalid prefix length in CIDR");
			snprintf(hint, hintlen, "a prefix length is 0-%u", max);
			return -1;
		}
		v = v * 10 + (unsigned)(in[i] - '0');
	}
	if (v > max) {
		snprintf(err, errlen, "prefix length %u is over %u", v, max);
		snprintf(hint, hintlen, "a prefix length is 0-%u", max);
		return -1;
	}
	masked = *net;
	full = v / 8;
	rem = v % 8;
	for (i = full; i < 16; i++) {
		if (i == full && rem != 0)
			masked.bytes[i] &= (uint8_t)(0xff << (8 - rem));
		else
			masked.bytes[i] = 0;
	}
	if (memcmp(masked.bytes, net->bytes, 16) != 0) {
		snprintf(err, errlen, "CIDR has host bits set");
		snprintf(hint, hintlen, "did you mean %s/%u?",
		    policy_addr_str(&masked, buf, sizeof(buf)), v);
		return -1;
	}
	*prefix = v;
	return 0;
}
