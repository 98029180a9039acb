/*
 * Direct mode's DNS stub (stub.h).
 *
 * Raw DNS leaves the sandbox only from the refresher's uid, so the command
 * resolves through this stub on a loopback address.  It answers A and AAAA
 * for the plan's names with what the refresher has pinned in the sets (so
 * the command never learns an address it may not dial), NODATA for other
 * types of those names, NXDOMAIN for every other name, SERVFAIL for a plan
 * name nothing is pinned for yet.  Queries are parsed by common/dnsmsg.c
 * with bounds on every read: one question, a name of at most 255 bytes,
 * an OPT record at most; anything else is FORMERR (NOTIMP for an opcode
 * other than QUERY, BADVERS for an EDNS version other than 0).  Replies
 * fit 512 bytes, or the client's EDNS size up to ENF_STUB_MAX_MSG, with an
 * OPT record when the query had one: addresses that do not fit are left
 * out (the stub has no TCP for a resolver to retry on after TC).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "enforcer/stub.h"

size_t
enf_stub_answer(const uint8_t *q, size_t qlen, uint8_t *out, size_t outlen,
    enf_stub_lookup_fn lookup, void *ctx)
{
	struct enf_stub_answer	 ans;
	struct dnsmsg_query	 dq;
	struct dnsmsg_rr	 rr[ENF_STUB_MAX_ADDRS];
	size_t			 limit, i, n = 0;
	int			 rc, family, found;

	if (outlen < ENF_STUB_MAX_MSG || (rc = dnsmsg_parse(q, qlen, &dq)) == -1)
		return 0;		/* a runt or a reply: say nothing */
	/* plain DNS: 512 bytes; with EDNS the client's size, at most ours */
	limit = dnsmsg_udp_limit(&dq, ENF_STUB_MAX_MSG);
	if (rc != 0)			/* FORMERR, NOTIMP, BADVERS */
		return dnsmsg_answer(q, &dq, rc, NULL, 0, 0, out, outlen,
		    limit);
	if (dq.qclass != DNSMSG_C_IN || dq.name[0] == '\0')
		return dnsmsg_answer(q, &dq, DNSMSG_R_REFUSED, NULL, 0, 0, out,
		    outlen, limit);

	family = dq.qtype == DNSMSG_T_A ? AF_INET :
	    dq.qtype == DNSMSG_T_AAAA ? AF_INET6 : 0;
	memset(&ans, 0, sizeof(ans));
	found = dq.ldh ? lookup(ctx, dq.name, family, &ans) : -1;
	if (found == -1)
		return dnsmsg_answer(q, &dq, DNSMSG_R_NXDOMAIN, NULL, 0, 0, out,
		    outlen, limit);
	if (found == 0)
		return dnsmsg_answer(q, &dq, DNSMSG_R_SERVFAIL, NULL, 0, 0, out,
		    outlen, limit);
	for (i = 0; i < ans.n && i < ENF_STUB_MAX_ADDRS; i++) {
		if (ans.addrs[i].family != family)
			continue;
		rr[n].type = dq.qtype;
		rr[n].ttl = ans.ttl[i];
		rr[n].rdlen = family == AF_INET ? 4 : 16;
		memcpy(rr[n].rdata, ans.addrs[i].addr, rr[n].rdlen);
		n++;
	}
	/* what does not fit is left out: the stub has no TCP to retry on */
	return dnsmsg_answer(q, &dq, DNSMSG_R_NOERROR, rr, n, DNSMSG_PARTIAL,
	    out, outlen, limit);
}

int
enf_stub_open(const struct enf_endpoint *e, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len;
	char			 a[INET6_ADDRSTRLEN];
	int			 fd, on = 1, saved;

	memset(&ss, 0, sizeof(ss));
	if (e->addr.family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(e->port);
		memcpy(&sin->sin_addr, e->addr.addr, 4);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(e->port);
		memcpy(&sin6->sin6_addr, e->addr.addr, 16);
		len = sizeof(*sin6);
	}
	if ((fd = socket(e->addr.family, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	if (e->addr.family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) == -1)
		goto fail;
	if (bind(fd, (struct sockaddr *)&ss, len) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	snprintf(err, errlen, "dns-stub %s port %u: %s",
	    enf_addr_str(&e->addr, a, sizeof(a)), e->port, strerror(saved));
	if (fd != -1)
		(void)close(fd);
	return -1;
}
