/*
 * The DNS stub of direct mode: the command's resolver asks it, and it
 * answers only the plan's names, with the addresses the refresher has put
 * in the sets.  Every other name is NXDOMAIN.  See docs/enforcer.md.
 */
#ifndef AISB_ENF_STUB_H
#define AISB_ENF_STUB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "enforcer/plan.h"

#define ENF_STUB_MAX_MSG	1232	/* EDNS over UDP (plain DNS: 512); no TCP */
#define ENF_STUB_MAX_ADDRS	32	/* per answer, before the size cap */

struct enf_stub_answer {
	struct enf_addr	 addrs[ENF_STUB_MAX_ADDRS];
	uint32_t	 ttl[ENF_STUB_MAX_ADDRS];
	size_t		 n;
};

/*
 * Looks up a name (lower case, no final dot) for one family (AF_INET,
 * AF_INET6, or 0 for a type the stub does not serve).  Returns -1 when the
 * plan does not allow the name, 0 when it does but has no address in the
 * sets (of any family) now, 1 with the family's addresses in *ans (maybe
 * none).
 */
typedef int	(*enf_stub_lookup_fn)(void *ctx, const char *name, int family,
		    struct enf_stub_answer *ans);

/*
 * Answers one query: q/qlen in, the reply written to out (outlen at least
 * ENF_STUB_MAX_MSG).  Returns the reply's length, or 0 when nothing must
 * be sent (a reply, a runt).  Pure: no I/O besides the callback.
 */
size_t	enf_stub_answer(const uint8_t *q, size_t qlen, uint8_t *out,
	    size_t outlen, enf_stub_lookup_fn lookup, void *ctx);

/* A non-blocking UDP socket bound to the plan's stub, or -1 with err. */
int	enf_stub_open(const struct enf_endpoint *, char *err, size_t errlen);

#endif
