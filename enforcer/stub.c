/*
 * Direct mode's DNS stub (stub.h).
 *
 * Raw DNS leaves the sandbox only from the refresher's uid, so the command
 * resolves through this stub on a loopback address.  It answers A and AAAA
 * for the plan's names with what the refresher has pinned in the sets (so
 * the command never learns an address it may not dial), NODATA for other
 * types of those names, NXDOMAIN for every other name, SERVFAIL for a plan
 * name nothing is pinned for yet.  Queries are parsed with bounds on every
 * read: one question, no compression in it, a name of at most 255 bytes;
 * anything else is FORMERR or NOTIMP.  Replies fit 512 bytes: addresses
 * that do not fit are left out (a resolver would get nothing more from TC).
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

#include "stub.h"

#define HDR		12
#define T_A		1
#define T_AAAA		28
#define C_IN		1
#define R_FORMERR	1
#define R_SERVFAIL	2
#define R_NXDOMAIN	3
#define R_NOTIMP	4
#define R_REFUSED	5

static void
put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The reply header: the query's id, opcode and RD; QR, AA and RA set. */
static size_t
header(const uint8_t *q, uint8_t *out, int rcode, unsigned qd, unsigned an)
{
	out[0] = q[0];
	out[1] = q[1];
	out[2] = (uint8_t)(0x80 | (q[2] & 0x78) | 0x04 | (q[2] & 0x01));
	out[3] = (uint8_t)(0x80 | rcode);
	put16(out + 4, qd);
	put16(out + 6, an);
	put16(out + 8, 0);
	put16(out + 10, 0);
	return HDR;
}

/*
 * The question's name into name (lower case, dots, no final dot); *ldh is
 * cleared when a label holds anything but letters, digits, '-' and '_'
 * (no plan name can match it then).  Returns the offset after the name,
 * or 0 when the name is malformed.
 */
static size_t
qname(const uint8_t *q, size_t qlen, char *name, size_t namesz, int *ldh)
{
	size_t	 off = HDR, nl = 0, len, i;

	*ldh = 1;
	for (;;) {
		if (off >= qlen)
			return 0;
		len = q[off++];
		if (len == 0)
			break;
		if ((len & 0xc0) != 0 || len > qlen - off ||
		    nl + len + 1 >= namesz)
			return 0;	/* compression, overrun, too long */
		if (nl > 0)
			name[nl++] = '.';
		for (i = 0; i < len; i++) {
			uint8_t	 c = q[off + i];

			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_')) {
				*ldh = 0;
				c = '?';
			}
			name[nl++] = (char)c;
		}
		off += len;
	}
	name[nl] = '\0';
	return off;
}

size_t
enf_stub_answer(const uint8_t *q, size_t qlen, uint8_t *out, size_t outlen,
    enf_stub_lookup_fn lookup, void *ctx)
{
	struct enf_stub_answer	 ans;
	char			 name[256];
	size_t			 off, end, i, an = 0;
	unsigned		 qtype, qclass;
	int			 ldh, family, found;

	if (qlen < HDR || outlen < ENF_STUB_MAX_MSG || (q[2] & 0x80) != 0)
		return 0;		/* a runt or a reply: say nothing */
	if (((q[2] >> 3) & 0x0f) != 0)
		return header(q, out, R_NOTIMP, 0, 0);
	/* exactly one question; answers or authority in a query are junk */
	if (q[4] != 0 || q[5] != 1 || q[6] != 0 || q[7] != 0 || q[8] != 0 ||
	    q[9] != 0)
		return header(q, out, R_FORMERR, 0, 0);
	if ((off = qname(q, qlen, name, sizeof(name), &ldh)) == 0 ||
	    qlen - off < 4)
		return header(q, out, R_FORMERR, 0, 0);
	qtype = (unsigned)q[off] << 8 | q[off + 1];
	qclass = (unsigned)q[off + 2] << 8 | q[off + 3];
	end = off + 4;
	if (end > ENF_STUB_MAX_MSG)
		return header(q, out, R_FORMERR, 0, 0);
	memcpy(out + HDR, q + HDR, end - HDR);
	if (qclass != C_IN || name[0] == '\0')
		return header(q, out, R_REFUSED, 1, 0) + (end - HDR);

	family = qtype == T_A ? AF_INET : qtype == T_AAAA ? AF_INET6 : 0;
	memset(&ans, 0, sizeof(ans));
	found = ldh ? lookup(ctx, name, family, &ans) : -1;
	if (found == -1)
		return header(q, out, R_NXDOMAIN, 1, 0) + (end - HDR);
	if (found == 0)
		return header(q, out, R_SERVFAIL, 1, 0) + (end - HDR);

	off = end;
	for (i = 0; i < ans.n && i < ENF_STUB_MAX_ADDRS; i++) {
		size_t	 alen = ans.addrs[i].family == AF_INET ? 4 : 16;

		if (ans.addrs[i].family != family)
			continue;
		if (off + 12 + alen > ENF_STUB_MAX_MSG)
			break;
		put16(out + off, 0xc000 | HDR);	/* the question's name */
		put16(out + off + 2, qtype);
		put16(out + off + 4, C_IN);
		put16(out + off + 6, ans.ttl[i] >> 16);
		put16(out + off + 8, ans.ttl[i] & 0xffff);
		put16(out + off + 10, (unsigned)alen);
		memcpy(out + off + 12, ans.addrs[i].addr, alen);
		off += 12 + alen;
		an++;
	}
	header(q, out, 0, 1, (unsigned)an);
	return off;
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
