/*
 * libFuzzer: common/dnsmsg.c.  Any bytes as a query: the parser reads
 * nothing past them (ASan), the name it gives is what dnsmsg.h promises,
 * an answer is never larger than its limit and is never taken for a
 * query; dnsmsg_truncate of any bytes writes at most its limit, with TC
 * when it cut.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dnsmsg_query	 q, again;
	struct dnsmsg_rr	 rr[40];
	uint8_t			 out[DNSMSG_EDNS_SIZE];
	size_t			 n, i, limit;
	int			 rc;

	rc = dnsmsg_parse(data, size, &q);
	if (rc == -1) {
		if (size >= DNSMSG_HDR && (data[2] & 0x80) == 0)
			abort();	/* silent only for runts and responses */
		return 0;
	}
	if (size < DNSMSG_HDR || q.qend > size || q.namelen != strlen(q.name) ||
	    q.namelen > DNSMSG_MAX_NAME)
		abort();
	for (i = 0; i < q.namelen; i++) {
		char	 c = q.name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '?'))
			abort();
		if (c == '?' && q.ldh)
			abort();
	}
	if (rc != 0 && rc != DNSMSG_R_FORMERR && rc != DNSMSG_R_NOTIMP &&
	    rc != DNSMSG_R_BADVERS)
		abort();
	if (rc == DNSMSG_R_FORMERR && (q.qend != 0 || q.edns))
		abort();
	if (q.edns && q.edns_size < DNSMSG_UDP_MAX)
		abort();

	/* as many records as the first byte says, to overflow a limit */
	memset(rr, 0, sizeof(rr));
	for (i = 0; i < 40; i++) {
		rr[i].type = i % 2 ? DNSMSG_T_AAAA : DNSMSG_T_A;
		rr[i].rdlen = i % 2 ? 16 : 4;
		rr[i].ttl = (uint32_t)i;
	}
	limit = dnsmsg_udp_limit(&q, sizeof(out));
	n = dnsmsg_answer(data, &q, rc, rr, size > 0 ? data[0] % 41 : 0,
	    size > 1 && (data[1] & 1) ? DNSMSG_PARTIAL : 0, out, sizeof(out),
	    limit);
	if (n > limit || (n > 0 && n < DNSMSG_HDR))
		abort();
	if (n > 0 && dnsmsg_parse(out, n, &again) != -1)
		abort();		/* an answer is a response */

	/* the relay's use: any bytes, a limit of 512 or less */
	limit = size > 2 ? 12 + data[2] * 2 : 512;
	n = dnsmsg_truncate(data, size, out, sizeof(out), limit);
	if (n > limit || n > sizeof(out))
		abort();
	if (n > 0 && size > limit && (out[2] & 0x02) == 0)
		abort();
	if (n > 0 && size <= limit && memcmp(out, data, n) != 0)
		abort();
	return 0;
}
