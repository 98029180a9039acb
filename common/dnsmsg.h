/*
 * DNS messages, bounded: the query parser and the answer builder shared by
 * the enforcer's direct-mode stub (enforcer/stub.c), the gate's AISB-DNS
 * entry (gate/conn/dnsgate.c) and the in-container relay (dnsmsg_truncate).
 *
 * Pure: no I/O, no allocation, only libc (the enforcer is carried into the
 * image with its shared libraries; this adds none).  Every read is bounded
 * by the message length; a name is at most 255 bytes on the wire and 253
 * as text, at most DNSMSG_MAX_HOPS compression pointers, each pointing
 * strictly backwards (so no loop can be followed).
 */
#ifndef AISB_DNSMSG_H
#define AISB_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define DNSMSG_HDR		12	/* bytes of the header */
#define DNSMSG_UDP_MAX		512	/* plain DNS over UDP (RFC 1035) */
#define DNSMSG_EDNS_SIZE	1232	/* the UDP size we advertise (DNS flag day 2020) */
#define DNSMSG_TCP_MAX		65535	/* a TCP frame's length field */
#define DNSMSG_MAX_WIRE		255	/* bytes of a name on the wire */
#define DNSMSG_MAX_NAME		253	/* bytes of a name as text, no final dot */
#define DNSMSG_MAX_HOPS		16	/* compression pointers in one name */
#define DNSMSG_MAX_ADDITIONAL	4	/* records in a query's additional section */

#define DNSMSG_T_A		1
#define DNSMSG_T_CNAME		5
#define DNSMSG_T_AAAA		28
#define DNSMSG_T_OPT		41
#define DNSMSG_C_IN		1

#define DNSMSG_R_NOERROR	0
#define DNSMSG_R_FORMERR	1
#define DNSMSG_R_SERVFAIL	2
#define DNSMSG_R_NXDOMAIN	3
#define DNSMSG_R_NOTIMP		4
#define DNSMSG_R_REFUSED	5
#define DNSMSG_R_BADVERS	16	/* extended: needs the OPT record */

/* A query, as dnsmsg_parse() found it. */
struct dnsmsg_query {
	uint16_t	 id;
	uint8_t		 opcode;
	uint8_t		 rd;		/* recursion desired: echoed */
	/*
	 * The question's name: lower case, dots between labels, no final
	 * dot, "" for the root.  A byte other than a letter, digit, '-' or
	 * '_' (a dot inside a label too) is written '?' and clears ldh: no
	 * host name of a policy can equal such a name.
	 */
	char		 name[DNSMSG_MAX_NAME + 1];
	size_t		 namelen;
	int		 ldh;
	uint16_t	 qtype, qclass;
	size_t		 qend;		/* offset after the question; 0: none */
	int		 edns;		/* an OPT record came with it */
	uint8_t		 edns_version;
	uint16_t	 edns_size;	/* its UDP payload size, at least 512 */
};

/* One answer record: the question's name, class IN. */
struct dnsmsg_rr {
	uint16_t	 type;		/* DNSMSG_T_A or DNSMSG_T_AAAA */
	uint32_t	 ttl;
	uint8_t		 rdlen;		/* 4 or 16 */
	uint8_t		 rdata[16];
};

/*
 * Parses a query of len bytes.  Returns
 *   -1  nothing may be answered: shorter than a header, or a response
 *       (QR set; answering it could start a loop);
 *    0  a query with exactly one question, q filled;
 *   >0  the rcode to answer with dnsmsg_answer() and no records:
 *       DNSMSG_R_NOTIMP (opcode not QUERY), DNSMSG_R_FORMERR (anything
 *       malformed: not one question, answer or authority records, a bad
 *       name, a cut record, two OPT records, trailing bytes),
 *       DNSMSG_R_BADVERS (an EDNS version other than 0).  q->qend is 0
 *       unless the question was read whole (it is echoed then); after
 *       FORMERR the name is "" and edns 0.
 * Bounds: the first DNSMSG_TCP_MAX bytes at most are looked at; at most
 * DNSMSG_MAX_ADDITIONAL additional records.
 */
int	 dnsmsg_parse(const uint8_t *msg, size_t len, struct dnsmsg_query *q);

#define DNSMSG_PARTIAL	0x01	/* records that do not fit are left out, no TC */

/*
 * Writes the answer to the query q (from msg, as parsed) into out: the
 * header (id, opcode and RD copied; QR, AA, RA set), the question when
 * q->qend != 0, the n records (a pointer to the question's name each),
 * and an OPT record (UDP size DNSMSG_EDNS_SIZE) when the query had one.
 * The answer is at most limit bytes (and outlen): when the records do
 * not fit, none is written and TC is set, or with DNSMSG_PARTIAL as many
 * as fit are written and TC is not set.  Returns the length written, or
 * 0 when not even the header and question fit.
 */
size_t	 dnsmsg_answer(const uint8_t *msg, const struct dnsmsg_query *q,
	    int rcode, const struct dnsmsg_rr *rrs, size_t n, int flags,
	    uint8_t *out, size_t outlen, size_t limit);

/*
 * The most a UDP client of q takes: its EDNS size (at most max), or 512.
 */
size_t	 dnsmsg_udp_limit(const struct dnsmsg_query *q, size_t max);

/*
 * For a UDP client whose limit is 512 or its EDNS size: msg unchanged
 * (copied to out) when len <= limit; else the header and question only,
 * with TC set and the other counts 0.  Returns the length written, 0 if
 * msg is malformed or out is too small.
 */
size_t	 dnsmsg_truncate(const uint8_t *msg, size_t len, uint8_t *out,
	    size_t outlen, size_t limit);

/*
 * The synthetic address the gate answers for name (text as in
 * dnsmsg_query.name): 198.18.0.0/15 + 1 + (FNV-1a 32-bit of the name mod
 * 131070), never the range's first or last address.  out: 4 bytes.
 */
void	 dnsmsg_synth_v4(const char *name, size_t len, uint8_t out[4]);
/* Whether a (4 bytes) lies in that range, as text DNSMSG_SYNTH_RANGE. */
int	 dnsmsg_synth_is(const uint8_t a[4]);
#define DNSMSG_SYNTH_RANGE	"198.18.0.0/15"

/* "A", "AAAA", ... or "TYPE<n>" into buf (at least 12 bytes); returns buf. */
const char *dnsmsg_type_str(unsigned type, char *buf, size_t len);

/* "NOERROR", "NXDOMAIN", ... or "RCODE<n>". */
const char *dnsmsg_rcode_str(int rcode);

#endif /* AISB_DNSMSG_H */
