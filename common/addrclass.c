/*
 * The special-purpose address table (addrclass.h).
 *
 * One row per block that is denied, or judged by the IPv4 address it
 * carries.  A block the registries mark "globally reachable" inside one
 * that is not (the PCP, TURN and DNS-SD anycast addresses in 192.0.0.0/24
 * and 2001::/23, AMT, AS112-v6, ORCHIDv2 and DETs in 2001::/23) is denied
 * with its block: anycast reaches the nearest server, often on the local
 * network, and no agent needs the others; allow_ranges opens them.
 */
#include "config.h"

#include <string.h>

#include "addrclass.h"

#define D	ADDRCLASS_DENY
#define L	(ADDRCLASS_DENY | ADDRCLASS_LOCAL)
#define C	ADDRCLASS_CARRIES

const struct addrclass addrclass_table[] = {
	/* IPv4: RFC 6890 and the registry since */
	{ 0, 8,  L, { 0 },		"this-network 0.0.0.0/8" },
	{ 0, 8,  D, { 10 },		"private 10.0.0.0/8" },
	{ 0, 10, D, { 100, 64 },	"shared CGNAT 100.64.0.0/10" },
	{ 0, 8,  L, { 127 },		"loopback 127.0.0.0/8" },
	{ 0, 16, L, { 169, 254 },	"link-local 169.254.0.0/16" },
	{ 0, 12, D, { 172, 16 },	"private 172.16.0.0/12" },
	{ 0, 24, D, { 192, 0, 0 },	"IETF protocol assignments 192.0.0.0/24" },
	{ 0, 24, D, { 192, 0, 2 },	"documentation 192.0.2.0/24" },
	{ 0, 24, D, { 192, 88, 99 },	"deprecated 6to4 relay anycast 192.88.99.0/24" },
	{ 0, 16, D, { 192, 168 },	"private 192.168.0.0/16" },
	{ 0, 15, D, { 198, 18 },	"benchmarking 198.18.0.0/15" },
	{ 0, 24, D, { 198, 51, 100 },	"documentation 198.51.100.0/24" },
	{ 0, 24, D, { 203, 0, 113 },	"documentation 203.0.113.0/24" },
	{ 0, 4,  L, { 224 },		"multicast 224.0.0.0/4" },
	{ 0, 4,  L, { 240 },		"reserved 240.0.0.0/4" },
	{ 0, 32, L, { 255, 255, 255, 255 }, "broadcast 255.255.255.255/32" },

	/* IPv6: RFC 6890 and the registry since */
	{ 1, 128, L, { 0 },		"unspecified ::/128" },
	{ 1, 128, L, { [15] = 1 },	"loopback ::1/128" },
	/* ::a.b.c.d, deprecated by RFC 4291 and never routed: all of it */
	{ 1, 96, L, { 0 },		"IPv4-compatible ::/96" },
	{ 1, 96, C, { [10] = 0xff, [11] = 0xff }, "IPv4-mapped ::ffff:0:0/96" },
	{ 1, 96, C, { [8] = 0xff, [9] = 0xff }, "SIIT ::ffff:0:0:0/96" },
	{ 1, 96, C, { 0, 0x64, 0xff, 0x9b }, "NAT64 64:ff9b::/96" },
	{ 1, 48, C, { 0, 0x64, 0xff, 0x9b, 0, 1 }, "NAT64 local-use 64:ff9b:1::/48" },
	{ 1, 64, D, { 0x01 },		"discard-only 100::/64" },
	{ 1, 64, D, { 0x01, [7] = 1 },	"dummy prefix 100:0:0:1::/64" },
	{ 1, 23, D, { 0x20, 0x01 },	"IETF protocol assignments 2001::/23" },
	{ 1, 32, C, { 0x20, 0x01 },	"Teredo 2001::/32" },
	{ 1, 32, D, { 0x20, 0x01, 0x0d, 0xb8 }, "documentation 2001:db8::/32" },
	{ 1, 16, C, { 0x20, 0x02 },	"6to4 2002::/16" },
	{ 1, 20, D, { 0x3f, 0xff },	"documentation 3fff::/20" },
	{ 1, 16, D, { 0x5f, 0x00 },	"SRv6 SIDs 5f00::/16" },
	{ 1, 7,  D, { 0xfc },		"unique-local fc00::/7" },
	{ 1, 10, L, { 0xfe, 0x80 },	"link-local fe80::/10" },
	{ 1, 10, D, { 0xfe, 0xc0 },	"site-local fec0::/10" },
	{ 1, 8,  L, { 0xff },		"multicast ff00::/8" },
};

const size_t addrclass_count = sizeof(addrclass_table) /
    sizeof(addrclass_table[0]);

int
addrclass_in(const uint8_t *b, const uint8_t *net, unsigned prefix)
{
	unsigned	 whole = prefix / 8, rest = prefix % 8;

	if (memcmp(b, net, whole) != 0)
		return 0;
	return rest == 0 ||
	    ((b[whole] ^ net[whole]) & (uint8_t)(0xff00 >> rest)) == 0;
}

const struct addrclass *
addrclass_find(int v6, const uint8_t *b)
{
	const struct addrclass	*best = NULL;
	size_t			 i;

	for (i = 0; i < addrclass_count; i++) {
		const struct addrclass *e = &addrclass_table[i];

		if (e->v6 != (v6 != 0) || !addrclass_in(b, e->net, e->prefix))
			continue;
		if (best == NULL || e->prefix > best->prefix)
			best = e;
	}
	return best;
}

static void
take(uint8_t *v4, const uint8_t *b, unsigned i0, unsigned i1, unsigned i2,
    unsigned i3)
{
	v4[0] = b[i0];
	v4[1] = b[i1];
	v4[2] = b[i2];
	v4[3] = b[i3];
}

size_t
addrclass_carried(const uint8_t b[16], uint8_t v4[ADDRCLASS_MAX_CARRIED][4])
{
	const struct addrclass	*e = addrclass_find(1, b);
	size_t			 i;

	if (e == NULL || !(e->flags & ADDRCLASS_CARRIES))
		return 0;
	switch (e->net[0] << 8 | e->net[1]) {
	case 0x2002:			/* 6to4: bits 16..47 */
		take(v4[0], b, 2, 3, 4, 5);
		return 1;
	case 0x2001:			/* Teredo: server, client inverted */
		take(v4[0], b, 4, 5, 6, 7);
		for (i = 0; i < 4; i++)
			v4[1][i] = (uint8_t)~b[12 + i];
		return 2;
	}
	if (e->prefix == 48) {
		/*
		 * 64:ff9b:1::/48 (RFC 8215): the operator picks the prefix
		 * length; RFC 6052 section 2.2 puts the IPv4 address around
		 * the u octet (byte 8) for /48, /56 and /64.
		 */
		take(v4[0], b, 6, 7, 9, 10);	/* /48 */
		take(v4[1], b, 7, 9, 10, 11);	/* /56 */
		take(v4[2], b, 9, 10, 11, 12);	/* /64 */
		take(v4[3], b, 12, 13, 14, 15);	/* /96 */
		return 4;
	}
	take(v4[0], b, 12, 13, 14, 15);	/* mapped, SIIT, 64:ff9b::/96 */
	return 1;
}
