/*
 * The special-purpose address table: the one list of address blocks that
 * aisb never dials by default, shared by the policy library (the gate) and
 * the enforcer (direct mode).  libc only, so that the enforcer, which is
 * carried into the image, gains no library by it.
 *
 * The table follows the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (tests/unit/test_addr.c checks it entry by entry) plus
 * multicast, site-local and IPv4-compatible IPv6.  What a caller does with
 * an entry is its own policy: the gate lets allow_ranges open any of them,
 * the enforcer never opens the ADDRCLASS_LOCAL and ADDRCLASS_CARRIES ones.
 */
#ifndef AISB_ADDRCLASS_H
#define AISB_ADDRCLASS_H

#include <stddef.h>
#include <stdint.h>

#define ADDRCLASS_DENY		0x01	/* not globally reachable */
#define ADDRCLASS_LOCAL		0x02	/* this host, its link, multicast */
#define ADDRCLASS_CARRIES	0x04	/* IPv6 judged by the IPv4 it carries */

struct addrclass {
	uint8_t		 v6;		/* 0: IPv4 (net[0..3]), 1: IPv6 */
	uint8_t		 prefix;
	uint8_t		 flags;
	uint8_t		 net[16];	/* network byte order */
	const char	*what;		/* "private 10.0.0.0/8" */
};

extern const struct addrclass	 addrclass_table[];
extern const size_t		 addrclass_count;

/* Most IPv4 addresses one IPv6 address can carry (RFC 6052 layouts). */
#define ADDRCLASS_MAX_CARRIED	4

/*
 * The most specific entry covering the address (4 or 16 bytes, network
 * order), or NULL for an address in none.
 */
const struct addrclass	*addrclass_find(int v6, const uint8_t *b);

/*
 * The IPv4 addresses an IPv6 address in an ADDRCLASS_CARRIES entry may
 * stand for, into v4[]: one for mapped, SIIT, the NAT64 well-known prefix
 * and 6to4; two for Teredo (server, client); four for the NAT64 local-use
 * prefix 64:ff9b:1::/48, whose operator may use any RFC 6052 layout of
 * /48, /56, /64 or /96.  Returns how many (0: the address carries none).
 */
size_t	 addrclass_carried(const uint8_t b[16],
	    uint8_t v4[ADDRCLASS_MAX_CARRIED][4]);

/* Whether b (4 or 16 bytes) lies in net/prefix. */
int	 addrclass_in(const uint8_t *b, const uint8_t *net, unsigned prefix);

#endif
