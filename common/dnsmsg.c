/*
 * DNS messages (dnsmsg.h): a query parser and an answer builder that read
 * nothing past the message and write nothing past the limit they are
 * given.  One question, answers that point at it, an OPT record; nothing
 * more is needed by a stub that answers from a policy.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dnsmsg.h"

#define OPT_LEN		11	/* root name, type, class, TTL, rdlen 0 */

static unsigned
get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void
put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/*
 * Reads the name at off.  A compression pointer must point past the
 * header and strictly before itself, and at most DNSMSG_MAX_HOPS are
 * followed; the name is at most DNSMSG_MAX_WIRE bytes on the wire (the
 * bytes of its labels as followed, so a loop that slips past the pointer
 * rule ends there too).  *next is the offset after the name where it was
 * written (after its first pointer, if any).  With text != NULL the name
 * is written there (DNSMSG_MAX_NAME + 1 bytes) as dnsmsg_query.name says.
 * Returns 0, or -1 when the name is malformed.
 */
static int
read_name(const uint8_t *m, size_t len, size_t off, size_t *next,
    char *text, size_t *textlen, int *ldh)
{
	size_t	 pos = off, wire = 0, nl = 0, i, hops = 0;
	int	 jumped = 0;
	unsigned b, ptr;

	if (ldh != NULL)
		*ldh = 1;
	for (;;) {
		if (pos >= len)
			return -1;
		b = m[pos];
		if ((b & 0xc0) == 0xc0) {
			if (pos + 1 >= len || ++hops > DNSMSG_MAX_HOPS)
				return -1;
			ptr = (b & 0x3f) << 8 | m[pos + 1];
			if (ptr < DNSMSG_HDR || ptr >= pos)
				return -1;
			if (!jumped)
				*next = pos + 2;
			jumped = 1;
			pos = ptr;
			continue;
		}
		if ((b & 0xc0) != 0)
			return -1;		/* 0x40, 0x80: no such labels */
		if (b == 0) {
			if (!jumped)
				*next = pos + 1;
			break;
		}
		if (b > len - pos - 1 || (wire += 1 + b) + 1 > DNSMSG_MAX_WIRE)
			return -1;
		if (text != NULL) {
			if (nl > 0)
				text[nl++] = '.';
			for (i = 0; i < b; i++) {
				uint8_t	 c = m[pos + 1 + i];

				if (c >= 'A' && c <= 'Z')
					c = (uint8_t)(c - 'A' + 'a');
				if (!((c >= 'a' && c <= 'z') ||
				    (c >= '0' && c <= '9') || c == '-' ||
				    c == '_')) {
					*ldh = 0;
					c = '?';
				}
				text[nl++] = (char)c;
			}
		}
		pos += 1 + b;
	}
	if (text != NULL) {
		text[nl] = '\0';	/* wire <= 254: nl <= 253 */
		*textlen = nl;
	}
	return 0;
}

/* The OPT record's options: each within the record, nothing left over. */
static int
opt_ok(const uint8_t *p, size_t len)
{
	size_t	 off = 0, olen;

	while (off < len) {
		if (len - off < 4)
			return 0;
		olen = get16(p + off + 2);
		if (olen > len - off - 4)
			return 0;
		off += 4 + olen;
	}
	return 1;
}

int
dnsmsg_parse(const uint8_t *m, size_t len, struct dnsmsg_query *q)
{
	size_t		 off, qend, next = 0, i, rdlen;
	unsigned	 ar, type;

	memset(q, 0, sizeof(*q));
	if (len < DNSMSG_HDR || (m[2] & 0x80) != 0)
		return -1;		/* a runt or a response: say nothing */
	q->id = (uint16_t)get16(m);
	q->opcode = (m[2] >> 3) & 0x0f;
	q->rd = m[2] & 0x01;
	if (q->opcode != 0)
		return DNSMSG_R_NOTIMP;
	ar = get16(m + 10);
	if (get16(m + 4) != 1 || get16(m + 6) != 0 || get16(m + 8) != 0 ||
	    ar > DNSMSG_MAX_ADDITIONAL)
		return DNSMSG_R_FORMERR;
	if (read_name(m, len, DNSMSG_HDR, &next, q->name, &q->namelen,
	    &q->ldh) == -1 || len - next < 4)
		goto formerr;
	q->qtype = (uint16_t)get16(m + next);
	q->qclass = (uint16_t)get16(m + next + 2);
	off = qend = next + 4;

	for (i = 0; i < ar; i++) {
		size_t	 start = off;

		if (read_name(m, len, off, &next, NULL, NULL, NULL) == -1 ||
		    len - next < 10)
			goto formerr;
		type = get16(m + next);
		rdlen = get16(m + next + 8);
		if (rdlen > len - next - 10)
			goto formerr;
		if (type == DNSMSG_T_OPT) {
			/* one, on the root name, with well-framed options */
			if (q->edns || m[start] != 0 ||
			    !opt_ok(m + next + 10, rdlen))
				goto formerr;
			q->edns = 1;
			q->edns_size = (uint16_t)get16(m + next + 2);
			if (q->edns_size < DNSMSG_UDP_MAX)
				q->edns_size = DNSMSG_UDP_MAX;
			q->edns_version = m[next + 5];
		}
		off = next + 10 + rdlen;
	}
	if (off != len)
		goto formerr;		/* trailing bytes */
	q->qend = qend;		/* the question alone is echoed */
	if (q->edns && q->edns_version != 0)
		return DNSMSG_R_BADVERS;
	return 0;
formerr:
	/* nothing of a malformed query is kept: no name half read */
	q->name[0] = '\0';
	q->namelen = 0;
	q->ldh = 0;
	q->qend = 0;
	q->edns = 0;
	return DNSMSG_R_FORMERR;
}

size_t
dnsmsg_udp_limit(const struct dnsmsg_query *q, size_t max)
{
	size_t	 l = q->edns ? q->edns_size : DNSMSG_UDP_MAX;

	return l < max ? l : max;
}

size_t
dnsmsg_answer(const uint8_t *msg, const struct dnsmsg_query *q, int rcode,
    const struct dnsmsg_rr *rrs, size_t n, int flags, uint8_t *out,
    size_t outlen, size_t limit)
{
	size_t	 qlen = q->qend > DNSMSG_HDR ? q->qend - DNSMSG_HDR : 0;
	size_t	 off, base, fit, i;
	int	 tc = 0;

	if (limit > outlen)
		limit = outlen;
	base = DNSMSG_HDR + qlen + (q->edns ? OPT_LEN : 0);
	if (base > limit)
		return 0;
	for (i = 0, off = base; i < n; i++) {
		if (rrs[i].rdlen > sizeof(rrs[i].rdata) ||
		    12 + (size_t)rrs[i].rdlen > limit - off)
			break;
		off += 12 + rrs[i].rdlen;
	}
	fit = i;
	if (fit < n && !(flags & DNSMSG_PARTIAL)) {
		fit = 0;
		tc = 1;
	}

	out[0] = (uint8_t)(q->id >> 8);
	out[1] = (uint8_t)q->id;
	out[2] = (uint8_t)(0x80 | (q->opcode & 0x0f) << 3 | 0x04 |
	    (tc ? 0x02 : 0) | (q->rd & 0x01));
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));
	put16(out + 4, qlen > 0 ? 1 : 0);
	put16(out + 6, (unsigned)fit);
	put16(out + 8, 0);
	put16(out + 10, q->edns ? 1 : 0);
	off = DNSMSG_HDR;
	memcpy(out + off, msg + DNSMSG_HDR, qlen);
	off += qlen;
	for (i = 0; i < fit; i++) {
		put16(out + off, 0xc000 | DNSMSG_HDR);	/* the question's name */
		put16(out + off + 2, rrs[i].type);
		put16(out + off + 4, DNSMSG_C_IN);
		put32(out + off + 6, rrs[i].ttl);
		put16(out + off + 10, rrs[i].rdlen);
		memcpy(out + off + 12, rrs[i].rdata, rrs[i].rdlen);
		off += 12 + rrs[i].rdlen;
	}
	if (q->edns) {
		out[off] = 0;				/* the root */
		put16(out + off + 1, DNSMSG_T_OPT);
		put16(out + off + 3, DNSMSG_EDNS_SIZE);
		/* extended rcode, version 0, no DO: no DNSSEC here */
		put32(out + off + 5, (uint32_t)((rcode >> 4) & 0xff) << 24);
		put16(out + off + 9, 0);
		off += OPT_LEN;
	}
	return off;
}

size_t
dnsmsg_truncate(const uint8_t *msg, size_t len, uint8_t *out, size_t outlen,
    size_t limit)
{
	size_t		 off = DNSMSG_HDR, next, i;
	unsigned	 qd;

	if (len <= limit) {
		if (len > outlen)
			return 0;
		memmove(out, msg, len);
		return len;
	}
	if (len < DNSMSG_HDR)
		return 0;
	qd = get16(msg + 4);
	for (i = 0; i < qd; i++) {
		if (read_name(msg, len, off, &next, NULL, NULL, NULL) == -1 ||
		    len - next < 4)
			return 0;
		off = next + 4;
	}
	if (off > limit || off > outlen)
		return 0;
	memmove(out, msg, off);
	out[2] |= 0x02;				/* TC */
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	return off;
}

void
dnsmsg_synth_v4(const char *name, size_t len, uint8_t out[4])
{
	uint32_t	 h = 2166136261u, a;
	size_t		 i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	/* 198.18.0.0 + 1 .. 198.19.255.254 */
	a = (198u << 24 | 18u << 16) + h % 131070u + 1;
	out[0] = (uint8_t)(a >> 24);
	out[1] = (uint8_t)(a >> 16);
	out[2] = (uint8_t)(a >> 8);
	out[3] = (uint8_t)a;
}

const char *
dnsmsg_type_str(unsigned type, char *buf, size_t len)
{
	static const struct { unsigned t; const char *s; } k[] = {
		{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" },
		{ 12, "PTR" }, { 15, "MX" }, { 16, "TXT" }, { 28, "AAAA" },
		{ 33, "SRV" }, { 41, "OPT" }, { 64, "SVCB" }, { 65, "HTTPS" },
		{ 255, "ANY" }, { 257, "CAA" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].t == type) {
			snprintf(buf, len, "%s", k[i].s);
			return buf;
		}
	snprintf(buf, len, "TYPE%u", type);
	return buf;
}

const char *
dnsmsg_rcode_str(int rcode)
{
	switch (rcode) {
	case DNSMSG_R_NOERROR:	return "NOERROR";
	case DNSMSG_R_FORMERR:	return "FORMERR";
	case DNSMSG_R_SERVFAIL:	return "SERVFAIL";
	case DNSMSG_R_NXDOMAIN:	return "NXDOMAIN";
	case DNSMSG_R_NOTIMP:	return "NOTIMP";
	case DNSMSG_R_REFUSED:	return "REFUSED";
	case DNSMSG_R_BADVERS:	return "BADVERS";
	}
	return "RCODE";
}

int
dnsmsg_synth_is(const uint8_t a[4])
{
	return a[0] == 198 && (a[1] & 0xfe) == 18;
}
