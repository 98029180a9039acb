/*
 * Unit tests of common/dnsmsg.c: every rcode path, EDNS, names with
 * compression (and its loops), the size limit, dnsmsg_truncate and the
 * synthetic address.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsmsg.h"

/* A query: id 0x1234, RD, the dotted name, qtype, class IN. */
static size_t
query(uint8_t *q, const char *name, unsigned qtype)
{
	const char	*s = name, *dot;
	size_t		 off = 12, l;

	memset(q, 0, 12);
	q[0] = 0x12;
	q[1] = 0x34;
	q[2] = 0x01;
	q[5] = 1;
	while (*s != '\0') {
		dot = strchr(s, '.');
		l = dot ? (size_t)(dot - s) : strlen(s);
		q[off++] = (uint8_t)l;
		memcpy(q + off, s, l);
		off += l;
		s += l + (dot ? 1 : 0);
	}
	q[off++] = 0;
	q[off++] = (uint8_t)(qtype >> 8);
	q[off++] = (uint8_t)qtype;
	q[off++] = 0;
	q[off++] = 1;
	return off;
}

/* An OPT record (UDP size, version, options of olen bytes) appended. */
static size_t
add_opt(uint8_t *q, size_t off, unsigned size, unsigned version, size_t olen)
{
	q[11]++;
	q[off++] = 0;
	q[off++] = 0;
	q[off++] = 41;
	q[off++] = (uint8_t)(size >> 8);
	q[off++] = (uint8_t)size;
	q[off++] = 0;
	q[off++] = (uint8_t)version;
	q[off++] = 0;
	q[off++] = 0;
	q[off++] = (uint8_t)(olen >> 8);
	q[off++] = (uint8_t)olen;
	memset(q + off, 0, olen);
	if (olen >= 4) {		/* one option: COOKIE, olen - 4 bytes */
		q[off + 1] = 10;
		q[off + 3] = (uint8_t)(olen - 4);
	}
	return off + olen;
}

static unsigned
u16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void
test_parse_ok(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600];
	size_t			 ml;

	ml = query(m, "Api.Example.COM", DNSMSG_T_AAAA);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_string_equal(q.name, "api.example.com");
	assert_int_equal(q.namelen, 15);
	assert_int_equal(q.ldh, 1);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.rd, 1);
	assert_int_equal(q.qtype, DNSMSG_T_AAAA);
	assert_int_equal(q.qclass, DNSMSG_C_IN);
	assert_int_equal(q.qend, ml);
	assert_int_equal(q.edns, 0);

	ml = query(m, "", DNSMSG_T_A);		/* the root */
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_string_equal(q.name, "");

	ml = query(m, "a_b.x-y.test", DNSMSG_T_A);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.ldh, 1);

	/* a dot inside a label, a space, a byte >= 0x80: not LDH, shown '?' */
	ml = query(m, "svcXtest", DNSMSG_T_A);
	m[13 + 3] = '.';
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.ldh, 0);
	assert_string_equal(q.name, "svc?test");
	ml = query(m, "a b.test", DNSMSG_T_A);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.ldh, 0);
	ml = query(m, "caf\xc3\xa9.test", DNSMSG_T_A);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.ldh, 0);
}

static void
test_parse_silent(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600];
	size_t			 ml;

	ml = query(m, "x.test", 1);
	assert_int_equal(dnsmsg_parse(m, 11, &q), -1);	/* runt */
	assert_int_equal(dnsmsg_parse(m, 0, &q), -1);
	m[2] |= 0x80;					/* a response */
	assert_int_equal(dnsmsg_parse(m, ml, &q), -1);
}

static void
test_parse_formerr(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600];
	size_t			 ml, i;
	char			 longname[300];

	ml = query(m, "x.test", 1);
	for (i = 12; i < ml; i++) {			/* every cut */
		assert_int_equal(dnsmsg_parse(m, i, &q), DNSMSG_R_FORMERR);
		assert_int_equal(q.qend, 0);
		assert_string_equal(q.name, "");	/* none half read */
		assert_int_equal(q.namelen, 0);
		assert_int_equal(q.id, 0x1234);
	}
	m[5] = 0;					/* no question */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[5] = 2;					/* two */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[5] = 1;
	m[7] = 1;					/* an answer */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[7] = 0;
	m[9] = 1;					/* authority */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[9] = 0;
	m[11] = DNSMSG_MAX_ADDITIONAL + 1;		/* too many */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[11] = 1;					/* promised, absent */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[11] = 0;
	m[ml] = 0;					/* a trailing byte */
	assert_int_equal(dnsmsg_parse(m, ml + 1, &q), DNSMSG_R_FORMERR);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);

	m[12] = 0x40;					/* label type 01 */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[12] = 0x80;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[12] = 40;					/* a label past the end */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);

	/* 5 labels of 60 bytes: over 255 on the wire */
	memset(longname, 'a', sizeof(longname));
	for (i = 60; i < 300; i += 61)
		longname[i] = '.';
	longname[299] = '\0';
	ml = query(m, longname, 1);
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	/* 253 bytes as text is the most: 4 x 63 + 1 */
	memset(longname, 'b', sizeof(longname));
	for (i = 63; i < 253; i += 64)
		longname[i] = '.';
	longname[253] = '\0';
	ml = query(m, longname, 1);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.namelen, 253);
	longname[253] = 'b';
	longname[254] = '\0';
	ml = query(m, longname, 1);
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
}

/* Pointers: to itself, forwards, into the header, in a loop. */
static void
test_compression(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600];
	size_t			 ml, off;

	ml = query(m, "x.test", 1);
	m[12] = 0xc0;					/* to itself */
	m[13] = 12;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[13] = 2;					/* into the header */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[13] = 20;					/* forwards */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	m[12] = 0xc1;					/* past the end */
	m[13] = 0xff;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);

	/*
	 * An additional record whose name points back at the question's:
	 * fine.  One whose name is a label then a pointer back to that
	 * label: a loop, which the wire bound ends.
	 */
	ml = query(m, "x.test", 1);
	off = ml;
	m[11] = 1;
	m[off++] = 0xc0;
	m[off++] = 12;
	memset(m + off, 0, 10);
	m[off + 1] = 16;				/* TXT, rdlen 0 */
	off += 10;
	assert_int_equal(dnsmsg_parse(m, off, &q), 0);
	assert_int_equal(q.qend, ml);

	off = ml;
	m[off++] = 1;					/* label "a" at ml */
	m[off++] = 'a';
	m[off++] = 0xc0 | (uint8_t)(ml >> 8);		/* back to it */
	m[off++] = (uint8_t)ml;
	memset(m + off, 0, 10);
	off += 10;
	assert_int_equal(dnsmsg_parse(m, off, &q), DNSMSG_R_FORMERR);

	/*
	 * A chain of pointers, each back to the one before, in the rdata of
	 * a first record; a second record's name starts the walk at its
	 * end.  DNSMSG_MAX_HOPS hops are followed, one more is FORMERR.
	 */
	{
		size_t	 hops, i, rd, prev;

		for (hops = DNSMSG_MAX_HOPS; hops <= DNSMSG_MAX_HOPS + 1;
		    hops++) {
			ml = query(m, "x.test", 1);
			off = ml;
			m[11] = 2;
			m[off++] = 0;			/* root, TXT */
			memset(m + off, 0, 10);
			m[off + 1] = 16;
			m[off + 9] = (uint8_t)(2 * (hops - 1));
			off += 10;
			rd = off;
			prev = 12;
			for (i = 0; i + 1 < hops; i++) {
				m[off] = 0xc0;
				m[off + 1] = (uint8_t)prev;
				prev = off;
				off += 2;
			}
			m[off] = 0xc0;			/* the second's name */
			m[off + 1] = (uint8_t)prev;
			off += 2;
			memset(m + off, 0, 10);
			off += 10;
			assert_true(off < 256 && rd > 0);
			assert_int_equal(dnsmsg_parse(m, off, &q),
			    hops <= DNSMSG_MAX_HOPS ? 0 : DNSMSG_R_FORMERR);
		}
	}
}

static void
test_notimp(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600], r[600];
	size_t			 ml, rl;

	ml = query(m, "x.test", 1);
	m[2] = (uint8_t)(2 << 3 | 1);			/* STATUS, RD */
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_NOTIMP);
	rl = dnsmsg_answer(m, &q, DNSMSG_R_NOTIMP, NULL, 0, 0, r, sizeof(r),
	    512);
	assert_int_equal(rl, 12);
	assert_int_equal(r[2], 0x80 | 2 << 3 | 0x04 | 1);
	assert_int_equal(r[3] & 0x0f, DNSMSG_R_NOTIMP);
	assert_int_equal(u16(r + 4), 0);
}

static void
test_edns(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[600], r[600];
	size_t			 ml, rl;

	ml = query(m, "x.test", 1);
	ml = add_opt(m, ml, 4096, 0, 12);		/* a cookie */
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(q.edns, 1);
	assert_int_equal(q.edns_size, 4096);
	assert_int_equal(dnsmsg_udp_limit(&q, 1232), 1232);
	assert_int_equal(q.qend, 12 + 8 + 4);
	rl = dnsmsg_answer(m, &q, DNSMSG_R_NXDOMAIN, NULL, 0, 0, r, sizeof(r),
	    512);
	assert_int_equal(rl, q.qend + 11);
	assert_int_equal(u16(r + 10), 1);		/* ARCOUNT */
	assert_int_equal(r[q.qend], 0);
	assert_int_equal(u16(r + q.qend + 1), 41);
	assert_int_equal(u16(r + q.qend + 3), DNSMSG_EDNS_SIZE);
	assert_int_equal(r[3] & 0x0f, DNSMSG_R_NXDOMAIN);

	ml = query(m, "x.test", 1);			/* a small size: 512 */
	ml = add_opt(m, ml, 100, 0, 0);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	assert_int_equal(dnsmsg_udp_limit(&q, 1232), 512);

	ml = query(m, "x.test", 1);			/* version 1: BADVERS */
	ml = add_opt(m, ml, 1232, 1, 0);
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_BADVERS);
	rl = dnsmsg_answer(m, &q, DNSMSG_R_BADVERS, NULL, 0, 0, r, sizeof(r),
	    512);
	assert_int_equal(rl, q.qend + 11);
	assert_int_equal(r[3] & 0x0f, 0);		/* 16: low bits 0 */
	assert_int_equal(r[q.qend + 5], 1);		/* extended: 1 << 4 */
	assert_int_equal(u16(r + 4), 1);

	ml = query(m, "x.test", 1);			/* two OPT */
	ml = add_opt(m, ml, 1232, 0, 0);
	ml = add_opt(m, ml, 1232, 0, 0);
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	assert_int_equal(q.edns, 0);

	ml = query(m, "x.test", 1);			/* an option cut */
	ml = add_opt(m, ml, 1232, 0, 8);
	m[ml - 8 + 3] = 9;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);

	ml = query(m, "x.test", 1);			/* OPT not on the root */
	ml = add_opt(m, ml, 1232, 0, 0);
	m[ml - 11] = 0xc0;
	memmove(m + ml - 9, m + ml - 10, 10);
	m[ml - 10] = 12;
	ml++;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
}

static void
test_answer(void **state)
{
	struct dnsmsg_query	 q;
	struct dnsmsg_rr	 rr[40];
	uint8_t			 m[600], r[2048];
	size_t			 ml, rl, i;

	ml = query(m, "x.test", DNSMSG_T_A);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	memset(rr, 0, sizeof(rr));
	rr[0].type = DNSMSG_T_A;
	rr[0].ttl = 70000;
	rr[0].rdlen = 4;
	memcpy(rr[0].rdata, "\xc6\x12\x00\x01", 4);
	rl = dnsmsg_answer(m, &q, 0, rr, 1, 0, r, sizeof(r), 512);
	assert_int_equal(rl, ml + 16);
	assert_int_equal(u16(r), 0x1234);
	assert_int_equal(r[2], 0x85);			/* QR AA RD */
	assert_int_equal(r[3], 0x80);			/* RA NOERROR */
	assert_int_equal(u16(r + 4), 1);
	assert_int_equal(u16(r + 6), 1);
	assert_int_equal(u16(r + 10), 0);
	assert_memory_equal(r + 12, m + 12, ml - 12);
	assert_int_equal(u16(r + ml), 0xc00c);
	assert_int_equal(u16(r + ml + 2), 1);
	assert_int_equal(u16(r + ml + 4), 1);
	assert_int_equal(u16(r + ml + 6) << 16 | u16(r + ml + 8), 70000);
	assert_int_equal(u16(r + ml + 10), 4);
	assert_memory_equal(r + ml + 12, "\xc6\x12\x00\x01", 4);

	/* NODATA: NOERROR and no record */
	rl = dnsmsg_answer(m, &q, 0, NULL, 0, 0, r, sizeof(r), 512);
	assert_int_equal(rl, ml);
	assert_int_equal(r[3], 0x80);
	assert_int_equal(u16(r + 6), 0);

	/* REFUSED, SERVFAIL: the question echoed, nothing else */
	rl = dnsmsg_answer(m, &q, DNSMSG_R_REFUSED, NULL, 0, 0, r, sizeof(r),
	    512);
	assert_int_equal(rl, ml);
	assert_int_equal(r[3] & 0x0f, 5);
	rl = dnsmsg_answer(m, &q, DNSMSG_R_SERVFAIL, NULL, 0, 0, r,
	    sizeof(r), 512);
	assert_int_equal(r[3] & 0x0f, 2);

	/* 40 AAAA: over 512 -> TC and none; PARTIAL -> as many as fit */
	for (i = 0; i < 40; i++) {
		rr[i].type = DNSMSG_T_AAAA;
		rr[i].ttl = 5;
		rr[i].rdlen = 16;
		rr[i].rdata[15] = (uint8_t)i;
	}
	rl = dnsmsg_answer(m, &q, 0, rr, 40, 0, r, sizeof(r), 512);
	assert_int_equal(rl, ml);
	assert_int_equal(r[2] & 0x02, 0x02);
	assert_int_equal(u16(r + 6), 0);
	rl = dnsmsg_answer(m, &q, 0, rr, 40, DNSMSG_PARTIAL, r, sizeof(r),
	    512);
	assert_int_equal(u16(r + 6), (512 - ml) / 28);
	assert_int_equal(rl, ml + (512 - ml) / 28 * 28);
	assert_int_equal(r[2] & 0x02, 0);
	/* over TCP they fit */
	rl = dnsmsg_answer(m, &q, 0, rr, 40, 0, r, sizeof(r), DNSMSG_TCP_MAX);
	assert_int_equal(rl, ml + 40 * 28);
	assert_int_equal(u16(r + 6), 40);

	/* FORMERR: the header only */
	m[5] = 2;
	assert_int_equal(dnsmsg_parse(m, ml, &q), DNSMSG_R_FORMERR);
	rl = dnsmsg_answer(m, &q, DNSMSG_R_FORMERR, NULL, 0, 0, r, sizeof(r),
	    512);
	assert_int_equal(rl, 12);
	assert_int_equal(u16(r + 4), 0);
	assert_int_equal(r[3] & 0x0f, 1);

	/* not even the header fits: 0 */
	assert_int_equal(dnsmsg_answer(m, &q, 1, NULL, 0, 0, r, 11, 512), 0);
}

static void
test_truncate(void **state)
{
	struct dnsmsg_query	 q;
	struct dnsmsg_rr	 rr[40];
	uint8_t			 m[600], big[2048], out[2048];
	size_t			 ml, bl, n, i;

	ml = query(m, "x.test", DNSMSG_T_AAAA);
	assert_int_equal(dnsmsg_parse(m, ml, &q), 0);
	memset(rr, 0, sizeof(rr));
	for (i = 0; i < 40; i++) {
		rr[i].type = DNSMSG_T_AAAA;
		rr[i].rdlen = 16;
	}
	bl = dnsmsg_answer(m, &q, 0, rr, 40, 0, big, sizeof(big), 2048);
	assert_true(bl > 512);

	/* fits: unchanged */
	n = dnsmsg_truncate(big, bl, out, sizeof(out), 2048);
	assert_int_equal(n, bl);
	assert_memory_equal(out, big, bl);
	/* over 512: header and question, TC, counts 0 but QD */
	n = dnsmsg_truncate(big, bl, out, sizeof(out), 512);
	assert_int_equal(n, ml);
	assert_memory_equal(out + 12, m + 12, ml - 12);
	assert_int_equal(out[2] & 0x02, 0x02);
	assert_int_equal(out[2] & 0x80, 0x80);
	assert_int_equal(u16(out + 4), 1);
	assert_int_equal(u16(out + 6), 0);
	assert_int_equal(u16(out + 8), 0);
	assert_int_equal(u16(out + 10), 0);
	/* in place works too */
	memcpy(out, big, bl);
	assert_int_equal(dnsmsg_truncate(out, bl, out, sizeof(out), 512), ml);
	assert_int_equal(out[2] & 0x02, 0x02);
	/* out too small, runts and cut questions: 0 */
	assert_int_equal(dnsmsg_truncate(big, bl, out, 10, 2048), 0);
	assert_int_equal(dnsmsg_truncate(big, 11, out, sizeof(out), 5), 0);
	big[12] = 0xc0;				/* a looping question */
	big[13] = 12;
	assert_int_equal(dnsmsg_truncate(big, bl, out, sizeof(out), 512), 0);
	big[5] = 0;				/* no question: the header */
	assert_int_equal(dnsmsg_truncate(big, bl, out, sizeof(out), 512), 12);
}

static void
test_synth(void **state)
{
	uint8_t		 a[4], b[4];
	char		 name[32];
	unsigned	 i, off;

	dnsmsg_synth_v4("example.com", 11, a);
	dnsmsg_synth_v4("example.com", 11, b);
	assert_memory_equal(a, b, 4);
	dnsmsg_synth_v4("example.org", 11, b);
	assert_memory_not_equal(a, b, 4);
	/* the FNV-1a the docs give, by hand for "a": 0xe40c292c */
	dnsmsg_synth_v4("a", 1, a);
	off = 0xe40c292cu % 131070u + 1;
	assert_int_equal(a[0], 198);
	assert_int_equal(((unsigned)(a[1] - 18) << 16 | (unsigned)a[2] << 8 |
	    a[3]), off);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "h%u.test", i);
		dnsmsg_synth_v4(name, strlen(name), a);
		assert_int_equal(a[0], 198);
		assert_true(a[1] == 18 || a[1] == 19);
		assert_false(a[1] == 18 && a[2] == 0 && a[3] == 0);
		assert_false(a[1] == 19 && a[2] == 255 && a[3] == 255);
	}
}

static void
test_strings(void **state)
{
	char	 b[16];

	assert_string_equal(dnsmsg_type_str(1, b, sizeof(b)), "A");
	assert_string_equal(dnsmsg_type_str(28, b, sizeof(b)), "AAAA");
	assert_string_equal(dnsmsg_type_str(65, b, sizeof(b)), "HTTPS");
	assert_string_equal(dnsmsg_type_str(999, b, sizeof(b)), "TYPE999");
	assert_string_equal(dnsmsg_rcode_str(3), "NXDOMAIN");
	assert_string_equal(dnsmsg_rcode_str(16), "BADVERS");
}

/* Arbitrary bytes: never a read or write out of bounds (ASan), no hang. */
static void
test_noise(void **state)
{
	struct dnsmsg_query	 q;
	uint8_t			 m[700], r[1232];
	uint32_t		 x = 2463534242u;
	size_t			 i, j, ml, rl;
	int			 rc;

	for (i = 0; i < 50000; i++) {
		ml = 12 + i % 600;
		for (j = 0; j < ml; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			m[j] = (uint8_t)(x & 0xff);
			/* many pointers and short labels: deep walks */
			if ((x >> 8) % 4 == 0)
				m[j] = (uint8_t)(0xc0 | ((x >> 12) & 1));
			else if ((x >> 8) % 4 == 1)
				m[j] = (uint8_t)((x >> 16) % 8);
		}
		if (i % 2 == 0) {
			m[2] &= 0x01;
			m[4] = 0;
			m[5] = 1;
			memset(m + 6, 0, 4);
			m[10] = 0;
			m[11] = (uint8_t)(i % 3);
		}
		rc = dnsmsg_parse(m, ml, &q);
		if (rc == -1)
			continue;
		assert_true(q.qend <= ml);
		assert_true(q.namelen <= DNSMSG_MAX_NAME);
		rl = dnsmsg_answer(m, &q, rc, NULL, 0, 0, r, sizeof(r), 512);
		assert_true(rl <= 512);
		assert_true(dnsmsg_truncate(m, ml, r, sizeof(r), 64) <= 64);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_silent),
		cmocka_unit_test(test_parse_formerr),
		cmocka_unit_test(test_compression),
		cmocka_unit_test(test_notimp),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_synth),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_noise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
