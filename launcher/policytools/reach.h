/*
 * Where a configured source (a registry, an index, a mirror) resolves,
 * judged as the gate would: the built-in denied address ranges (policy.h,
 * policy_classify).  On these machines the public registries resolve into
 * a documentation range, and a company's mirror is often on 10.x: the
 * gate refuses both by default, and the derived policy alone then fails
 * with a 403 the tool reports as its own.  reach.c says so first.
 */
#ifndef AISB_POLICYTOOLS_REACH_H
#define AISB_POLICYTOOLS_REACH_H

#include <stddef.h>
#include <stdio.h>

#include "policy.h"

#define LAUNCH_REACH_ADDRS	16	/* addresses of one name looked at */

enum launch_reach {
	LAUNCH_REACH_OK = 0,	/* some address the gate would dial */
	LAUNCH_REACH_NOT_FOUND,	/* the name does not resolve */
	LAUNCH_REACH_DENIED,	/* every address is in a denied range */
	LAUNCH_REACH_UNKNOWN	/* the resolver failed otherwise */
};

struct launch_reach_res {
	enum launch_reach	 verdict;
	struct policy_addr	 denied[LAUNCH_REACH_ADDRS];	/* by class */
	size_t			 ndenied;
	char			 why[160];	/* for people: "203.0.113.5 is
						   documentation 203.0.113.0/24" */
};

/*
 * host (a name or an IP literal, as policy_parse_target normalises it)
 * resolved with the host's resolver (getaddrinfo; an IP literal is not
 * looked up) and each address classified.  Fills r; never fails.
 */
void	 launch_reach_check(const char *host, struct launch_reach_res *r);

/*
 * The commented allow_ranges line that would let the gate dial exactly
 * the denied addresses of the n hosts, each named with its range, on f;
 * nothing when none resolves into a denied range.  A comment: the user
 * configured these sources, and decides.
 */
void	 launch_reach_note(FILE *f, const char *const *hosts, size_t n);

#endif
