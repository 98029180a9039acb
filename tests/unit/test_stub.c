/* Unit tests of direct mode's DNS stub (enforcer/stub.c). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

/* The model the stub asks: svc.test has two A, empty.test nothing yet. */
static int
lookup(void *ctx, const char *name, int family, struct enf_stub_answer *ans)
{
	int	*calls = ctx;
	size_t	 i;

	(*calls)++;
	if (strcmp(name, "empty.test") == 0)
		return 0;
	if (strcmp(name, "many.test") == 0) {
		for (i = 0; i < ENF_STUB_MAX_ADDRS; i++) {
			ans->addrs[i].family = AF_INET6;
			ans->addrs[i].addr[0] = 0x20;
			ans->addrs[i].addr[1] = 0x01;
			ans->addrs[i].addr[15] = (uint8_t)i;
			ans->ttl[i] = 60;
		}
		ans->n = ENF_STUB_MAX_ADDRS;
		return 1;
	}
	if (strcmp(name, "svc.test") != 0)
		return -1;
	if (family == AF_INET) {
		ans->addrs[0].family = AF_INET;
		inet_pton(AF_INET, "192.0.2.1", ans->addrs[0].addr);
		ans->ttl[0] = 30;
		ans->addrs[1].family = AF_INET;
		inet_pton(AF_INET, "192.0.2.2", ans->addrs[1].addr);
		ans->ttl[1] = 70000;
		ans->n = 2;
	}
	return 1;
}

/* A query: id 0xbeef, RD, the name as dotted text, qtype, class IN. */
static size_t
query(uint8_t *q, const char *name, unsigned qtype)
{
	const char	*s = name, *dot;
	size_t		 off = 12;

	memset(q, 0, 12);
	q[0] = 0xbe;
	q[1] = 0xef;
	q[2] = 0x01;		/* RD */
	q[5] = 1;		/* QDCOUNT */
	while (*s != '\0') {
		dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);

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

static unsigned
rcode(const uint8_t *r)
{
	return r[3] & 0x0f;
}

static unsigned
ancount(const uint8_t *r)
{
	return (unsigned)r[6] << 8 | r[7];
}

static size_t
ask(const uint8_t *q, size_t qlen, uint8_t *r)
{
	int	 calls = 0;

	return enf_stub_answer(q, qlen, r, ENF_STUB_MAX_MSG, lookup, &calls);
}

static void
test_a(void **state)
{
	uint8_t		 q[512], r[ENF_STUB_MAX_MSG];
	size_t		 ql, rl;
	const uint8_t	 a1[4] = { 192, 0, 2, 1 };

	ql = query(q, "SVC.Test", 1);
	rl = ask(q, ql, r);
	assert_int_equal(rl, ql + 2 * 16);
	assert_int_equal(r[0], 0xbe);
	assert_int_equal(r[1], 0xef);
	assert_int_equal(r[2], 0x85);		/* QR, AA, RD */
	assert_int_equal(r[3], 0x80);		/* RA, NOERROR */
	assert_int_equal(ancount(r), 2);
	assert_memory_equal(r + 12, q + 12, ql - 12);	/* the question */
	/* first answer: pointer to the name, A, IN, TTL 30, 4 bytes */
	assert_int_equal(r[ql], 0xc0);
	assert_int_equal(r[ql + 1], 12);
	assert_int_equal(r[ql + 3], 1);
	assert_int_equal(r[ql + 5], 1);
	assert_int_equal(r[ql + 9], 30);
	assert_int_equal(r[ql + 11], 4);
	assert_memory_equal(r + ql + 12, a1, 4);
	/* second: TTL 70000 across both halves */
	assert_int_equal(((unsigned)r[ql + 16 + 6] << 24 |
	    (unsigned)r[ql + 16 + 7] << 16 | (unsigned)r[ql + 16 + 8] << 8 |
	    r[ql + 16 + 9]), 70000);
}

static void
test_nodata_nxdomain_servfail(void **state)
{
	uint8_t	 q[512], r[ENF_STUB_MAX_MSG];
	size_t	 ql;

	ql = query(q, "svc.test", 28);		/* AAAA: none */
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 0);
	assert_int_equal(ancount(r), 0);

	ql = query(q, "svc.test", 16);		/* TXT: not served */
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 0);
	assert_int_equal(ancount(r), 0);

	ql = query(q, "other.test", 1);
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 3);
	assert_int_equal(r[2] & 0x04, 0x04);	/* authoritative: no search */

	ql = query(q, "sub.svc.test", 1);	/* no wildcard behind a name */
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 3);

	ql = query(q, "empty.test", 1);
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 2);

	ql = query(q, "", 1);			/* the root */
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 5);

	ql = query(q, "svc.test", 1);
	q[ql - 1] = 3;				/* class CH */
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(rcode(r), 5);
}

/* "svc.test" as ONE label must not pass for the two-label name. */
static void
test_label_with_dot(void **state)
{
	uint8_t	 q[512], r[ENF_STUB_MAX_MSG];
	int	 calls = 0;
	size_t	 ql;

	ql = query(q, "svcXtest", 1);
	q[12 + 1 + 3] = '.';
	assert_int_equal(enf_stub_answer(q, ql, r, sizeof(r), lookup, &calls),
	    ql);
	assert_int_equal(rcode(r), 3);
	assert_int_equal(calls, 0);

	ql = query(q, "svc.te\x01t", 1);	/* a control byte */
	assert_int_equal(enf_stub_answer(q, ql, r, sizeof(r), lookup, &calls),
	    ql);
	assert_int_equal(rcode(r), 3);
	assert_int_equal(calls, 0);
}

static void
test_malformed(void **state)
{
	uint8_t	 q[512], r[ENF_STUB_MAX_MSG];
	size_t	 ql, i;
	char	 longname[300];

	/* a runt and a reply get no answer at all */
	ql = query(q, "svc.test", 1);
	assert_int_equal(ask(q, 11, r), 0);
	q[2] |= 0x80;
	assert_int_equal(ask(q, ql, r), 0);

	/* truncated question: name, type or class cut off */
	ql = query(q, "svc.test", 1);
	for (i = 12; i < ql; i++) {
		assert_int_equal(ask(q, i, r), 12);
		assert_int_equal(rcode(r), 1);
		assert_int_equal(r[5], 0);	/* no question echoed */
	}

	ql = query(q, "svc.test", 1);		/* two questions */
	q[5] = 2;
	assert_int_equal(ask(q, ql, r), 12);
	assert_int_equal(rcode(r), 1);

	ql = query(q, "svc.test", 1);		/* an answer in a query */
	q[7] = 1;
	assert_int_equal(ask(q, ql, r), 12);
	assert_int_equal(rcode(r), 1);

	ql = query(q, "svc.test", 1);		/* opcode STATUS */
	q[2] = 2 << 3;
	assert_int_equal(ask(q, ql, r), 12);
	assert_int_equal(rcode(r), 4);

	ql = query(q, "svc.test", 1);		/* compression pointer */
	q[12] = 0xc0;
	q[13] = 12;
	assert_int_equal(ask(q, ql, r), 12);
	assert_int_equal(rcode(r), 1);

	/* 5 labels of 60 bytes: over 255 */
	memset(longname, 'a', sizeof(longname));
	for (i = 60; i < 300; i += 61)
		longname[i] = '.';
	longname[299] = '\0';
	ql = query(q, longname, 1);
	assert_int_equal(ask(q, ql, r), 12);
	assert_int_equal(rcode(r), 1);
}

/* 32 AAAA answers do not fit 512 bytes: as many as fit, no overrun. */
static void
test_size_cap(void **state)
{
	uint8_t	 q[512], r[ENF_STUB_MAX_MSG];
	size_t	 ql, rl;

	ql = query(q, "many.test", 28);
	rl = ask(q, ql, r);
	assert_true(rl <= 512);			/* no EDNS: plain DNS */
	assert_int_equal(ancount(r), (512 - ql) / 28);
	assert_int_equal(rl, ql + ancount(r) * 28);
	/* A for a name with only AAAA: nothing of the wrong family */
	ql = query(q, "many.test", 1);
	assert_int_equal(ask(q, ql, r), ql);
	assert_int_equal(ancount(r), 0);
}

/* An OPT record appended to a query of ql bytes: UDP size, version. */
static size_t
opt(uint8_t *q, size_t ql, unsigned size, unsigned version)
{
	q[11] = 1;
	memset(q + ql, 0, 11);
	q[ql + 2] = 41;
	q[ql + 3] = (uint8_t)(size >> 8);
	q[ql + 4] = (uint8_t)size;
	q[ql + 6] = (uint8_t)version;
	return ql + 11;
}

/* EDNS: an OPT back, the client's size (up to 1232) used; BADVERS. */
static void
test_edns(void **state)
{
	uint8_t	 q[512], r[ENF_STUB_MAX_MSG];
	size_t	 ql, q0, rl;

	q0 = query(q, "many.test", 28);
	ql = opt(q, q0, 4096, 0);
	rl = ask(q, ql, r);
	/* all 32 fit 1232 bytes: question, 32 x 28, OPT */
	assert_int_equal(ancount(r), ENF_STUB_MAX_ADDRS);
	assert_int_equal(rl, q0 + 32 * 28 + 11);
	assert_int_equal(r[11], 1);			/* ARCOUNT */
	assert_int_equal(r[rl - 11 + 2], 41);		/* the OPT */
	assert_true(rl <= 1232);

	ql = opt(q, q0, 600, 0);			/* a 600-byte client */
	rl = ask(q, ql, r);
	assert_true(rl <= 600);
	assert_int_equal(ancount(r), (600 - q0 - 11) / 28);

	ql = opt(q, q0, 1232, 1);			/* version 1 */
	rl = ask(q, ql, r);
	assert_int_equal(rl, q0 + 11);
	assert_int_equal(rcode(r), 0);			/* 16: in the OPT */
	assert_int_equal(r[q0 + 5], 1);
	assert_int_equal(ancount(r), 0);

	q0 = query(q, "other.test", 1);		/* NXDOMAIN keeps the OPT */
	ql = opt(q, q0, 1232, 0);
	rl = ask(q, ql, r);
	assert_int_equal(rcode(r), 3);
	assert_int_equal(rl, q0 + 11);

	q[ql] = 0;					/* a trailing byte */
	assert_int_equal(ask(q, ql + 1, r), 12);
	assert_int_equal(rcode(r), 1);
}

/* Arbitrary bytes: a reply is never larger than the cap. */
static void
test_noise(void **state)
{
	uint8_t		 q[600], r[ENF_STUB_MAX_MSG];
	uint32_t	 x = 2463534242u;
	size_t		 i, j, ql, rl;

	for (i = 0; i < 20000; i++) {
		ql = 12 + i % 500;
		for (j = 0; j < ql; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			q[j] = (uint8_t)x;
		}
		/* often a plausible header, so the parser gets deep */
		if (i % 2 == 0) {
			q[2] &= 0x01;
			q[4] = 0;
			q[5] = 1;
			memset(q + 6, 0, 6);
		}
		rl = ask(q, ql, r);
		assert_true(rl <= ENF_STUB_MAX_MSG);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a),
		cmocka_unit_test(test_nodata_nxdomain_servfail),
		cmocka_unit_test(test_label_with_dot),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_edns),
		cmocka_unit_test(test_noise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
