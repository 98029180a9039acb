/*
 * Address classes: the built-in denied ranges, CIDR parsing, containment.
 *
 * The gate checks every address it might dial with policy_classify(),
 * against the one table of common/addrclass.c that the enforcer uses too.
 * IPv6 forms that carry an IPv4 address (mapped, SIIT, NAT64, 6to4,
 * Teredo) are judged by the IPv4 address they carry, so ::ffff:127.0.0.1
 * and 64:ff9b::a9fe:a9fe are as denied as 127.0.0.1 and 169.254.169.254.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrclass.h"
#include "policy-int.h"

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

/* An IPv4 address (4 bytes) in a denied block and not exempted. */
static const char *
classify4(const struct policy *p, const uint8_t *b)
{
	const struct addrclass	*e = addrclass_find(0, b);
	struct policy_addr	 a;

	if (e == NULL || !(e->flags & ADDRCLASS_DENY))
		return NULL;
	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	memcpy(a.bytes, b, 4);
	return exempt(p, &a) ? NULL : e->what;
}

const char *
policy_classify(const struct policy *p, const struct policy_addr *a)
{
	const struct addrclass	*e;
	const char		*what;
	uint8_t			 v4[ADDRCLASS_MAX_CARRIED][4];
	size_t			 i, n;

	if (a->family == AF_INET)
		return classify4(p, a->bytes);
	if (a->family != AF_INET6)
		return "unknown address family";
	if (exempt(p, a))
		return NULL;
	if ((e = addrclass_find(1, a->bytes)) == NULL)
		return NULL;
	if (!(e->flags & ADDRCLASS_CARRIES))
		return (e->flags & ADDRCLASS_DENY) ? e->what : NULL;
	/*
	 * Judged by the IPv4 address it carries: by every one it may carry
	 * (64:ff9b:1::/48 has four layouts), so it passes only when each
	 * of them would.
	 */
	n = addrclass_carried(a->bytes, v4);
	for (i = 0; i < n; i++)
		if ((what = classify4(p, v4[i])) != NULL)
			return what;
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
