/*
 * Where a configured source resolves, as the gate would judge it
 * (reach.h).  The lookup is the host's own resolver: the policies
 * derived here name no resolver of their own, so the gate asks the same
 * one.  At most LAUNCH_REACH_ADDRS addresses of a name are looked at.
 */
#include "config.h"

#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "policytools/reach.h"

void
launch_reach_check(const char *host, struct launch_reach_res *r)
{
	struct addrinfo		 hints, *res = NULL, *ai;
	struct policy_addr	 a;
	const char		*cls;
	char			 ip[64];
	size_t			 nok = 0, nall = 0;
	int			 rc;

	memset(r, 0, sizeof(*r));
	if (policy_parse_addr(host, strlen(host), &a) == 0) {
		/* a literal: classified, not looked up */
		if ((cls = policy_classify(NULL, &a)) == NULL)
			return;
		r->denied[r->ndenied++] = a;
		snprintf(r->why, sizeof(r->why), "%s is %s",
		    policy_addr_str(&a, ip, sizeof(ip)), cls);
		r->verdict = LAUNCH_REACH_DENIED;
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		r->verdict = rc == EAI_NONAME || rc == EAI_NODATA ?
		    LAUNCH_REACH_NOT_FOUND : LAUNCH_REACH_UNKNOWN;
		snprintf(r->why, sizeof(r->why), "%s", rc == EAI_NONAME ||
		    rc == EAI_NODATA ? "name not found" : gai_strerror(rc));
		return;
	}
	for (ai = res; ai != NULL && nall < LAUNCH_REACH_ADDRS;
	    ai = ai->ai_next) {
		memset(&a, 0, sizeof(a));
		if (ai->ai_family == AF_INET) {
			a.family = AF_INET;
			memcpy(a.bytes, &((struct sockaddr_in *)(void *)
			    ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			a.family = AF_INET6;
			memcpy(a.bytes, &((struct sockaddr_in6 *)(void *)
			    ai->ai_addr)->sin6_addr, 16);
		} else
			continue;
		nall++;
		if ((cls = policy_classify(NULL, &a)) == NULL) {
			nok++;
			continue;
		}
		if (r->ndenied > 0 && memcmp(&r->denied[r->ndenied - 1], &a,
		    sizeof(a)) == 0)
			continue;	/* getaddrinfo's one per socket type */
		if (r->ndenied == 0)
			snprintf(r->why, sizeof(r->why), "%s is %s",
			    policy_addr_str(&a, ip, sizeof(ip)), cls);
		r->denied[r->ndenied++] = a;
	}
	freeaddrinfo(res);
	if (nall > 0 && nok == 0)
		r->verdict = LAUNCH_REACH_DENIED;
}

void
launch_reach_note(FILE *f, const char *const *hosts, size_t n)
{
	struct launch_reach_res	 r;
	struct policy_addr	 lit;
	char			 ip[64], line[1024];
	size_t			 i, k, off = 0;

	for (i = 0; i < n; i++) {
		launch_reach_check(hosts[i], &r);
		if (r.ndenied == 0)
			continue;
		fprintf(f, "# %s %s an address the gate denies by default "
		    "(%s%s)\n", hosts[i], policy_parse_addr(hosts[i],
		    strlen(hosts[i]), &lit) == 0 ? "is" : "resolves to", r.why, r.ndenied > 1 ? ", and more" :
		    "");
		for (k = 0; k < r.ndenied && off < sizeof(line); k++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
			    "%s%s%s/%u%s", off > 0 ? ", " : "",
			    r.denied[k].family == AF_INET6 ? "\"" : "",
			    policy_addr_str(&r.denied[k], ip, sizeof(ip)),
			    r.denied[k].family == AF_INET ? 32 : 128,
			    r.denied[k].family == AF_INET6 ? "\"" : "");
	}
	if (off == 0 || off >= sizeof(line))
		return;
	fprintf(f, "# you configured it: to let the gate dial exactly these "
	    "addresses, uncomment\n# allow_ranges: [%s]\n", line);
}
