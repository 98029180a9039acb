/*
 * --record: every connection of the gate as a TCP stream in a pcapng file
 * (common/pcapng.h), synthesized from what the gate relays rather than
 * captured from an interface: the gate sees two sockets per connection,
 * the capture shows the one stream a reviewer thinks in, from the
 * client's address and port to the address and port that was dialled.
 *
 *   allowed   SYN, SYN-ACK, ACK when the upstream connect succeeded; the
 *             bytes of each direction exactly as relayed (a forwarded
 *             request: the head as sent upstream, then the body); a FIN
 *             for each side's EOF as it is passed on; a RST when the
 *             connection ended otherwise (an error, a timeout, a deny
 *             after the connect such as sni_mismatch)
 *   refused   SYN, then RST-ACK from the destination: to the address that
 *             was last dialled, or, when none was, to the placeholder
 *             0.0.0.0 (:: for an IPv6 client) and the requested port
 *
 * The first packet of a stream (its SYN) carries the comment
 *   aisb conn=ID session=LABEL decision=D reason=R host=NAME:PORT rule="..."
 * with the conn id of its audit lines (docs/record.md).  A client and a
 * destination of different families are written as IPv6, the IPv4 side
 * as its IPv4-mapped address (::ffff:a.b.c.d): one packet has one family.
 *
 * Every packet is one pcapng block written by one write(2), at the time
 * of the event (CLOCK_REALTIME), so a gate killed at any point leaves a
 * file that reads up to its last complete packet.  When the bound is
 * reached (--record-max) or a write fails, recording stops for good with
 * one log line (and, for the bound, one audit line); the gate goes on.
 *
 * Sizes: a packet is at most PCAPNG_SNAPLEN bytes, so a segment carries at
 * most REC_MSS bytes; one struct conn_rec (~80 bytes) per connection.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/util.h>

#include "log.h"
#include "pcapng.h"
#include "termsafe.h"
#include "gate/gate.h"
#include "gate/conn/conn-int.h"

#define IP4_HDR		20
#define IP6_HDR		40
#define TCP_HDR		20
/* the payload of one segment: the largest packet less the biggest headers */
#define REC_MSS		(PCAPNG_SNAPLEN - IP6_HDR - TCP_HDR)
#define REC_WINDOW	65535

#define TH_FIN		0x01
#define TH_SYN		0x02
#define TH_RST		0x04
#define TH_PSH		0x08
#define TH_ACK		0x10

struct gate_record {
	struct pcapng	*w;
	int		 fd;		/* the writer's: for fchown only */
	char		*path;
	uint64_t	 max;
	int		 stopped;	/* full or failed: nothing more is written */
	uint16_t	 ipid;
	unsigned char	 pkt[PCAPNG_SNAPLEN];
};

/* One connection's stream.  [0] is the client's side, [1] the destination's. */
struct conn_rec {
	struct policy_addr	 addr[2];
	uint16_t		 port[2];
	uint32_t		 seq[2];	/* the next sequence number sent */
	uint8_t			 open;		/* the handshake is written */
	uint8_t			 fin[2];	/* side i sent its FIN */
	uint8_t			 last_fin;	/* the side whose FIN came last */
	uint8_t			 done;		/* ended: nothing more */
	struct timespec		 t_syn;		/* CLOCK_REALTIME */
};

/* --- the file ---------------------------------------------------------------- */

/*
 * Created, never reused: O_EXCL and O_NOFOLLOW, so that a file or a link
 * planted at the path is refused rather than written through; 0600, the
 * capture holds everything the clients sent.
 */
struct gate_record *
gate_record_open(const char *path, uint64_t max)
{
	struct gate_record	*r;
	int			 fd, saved;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->path = strdup(path)) == NULL) {
		free(r);
		return NULL;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		saved = errno;
		free(r->path);
		free(r);
		errno = saved;
		return NULL;
	}
	r->max = max;
	r->fd = fd;
	if ((r->w = pcapng_open(fd, max, "aisb-gate " PACKAGE_VERSION)) ==
	    NULL) {
		saved = errno;
		(void)unlink(path);
		free(r->path);
		free(r);
		errno = saved;
		return NULL;
	}
	return r;
}

int
gate_record_chown(struct gate_record *r, uid_t uid, gid_t gid)
{
	if (r == NULL)
		return 0;
	/* the file opened, never a name looked up again (no link race) */
	return fchown(r->fd, uid, gid);
}

void
gate_record_close(struct gate_record *r)
{
	if (r == NULL)
		return;
	pcapng_close(r->w);
	free(r->path);
	free(r);
}

/* --- packets ----------------------------------------------------------------- */

/*
 * The Internet checksum (RFC 1071) in the host's byte order, 32 bits at a
 * time: the one's complement sum does not depend on the order of the bytes
 * in a word, so the folded result, stored as it is (memcpy), is right on
 * the wire.  Numbers added to it go in network order (htons).
 */
static uint64_t
sum_bytes(uint64_t sum, const unsigned char *p, size_t len)
{
	uint32_t	 w;
	uint16_t	 h = 0;

	while (len >= 4) {
		memcpy(&w, p, 4);
		sum += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		sum += h;
		p += 2;
		len -= 2;
	}
	if (len == 1) {
		h = 0;
		memcpy(&h, p, 1);	/* the byte, then a zero pad */
		sum += h;
	}
	return sum;
}

/* The checksum field's two bytes, from the sum. */
static void
put_sum(unsigned char *p, uint64_t sum)
{
	uint16_t	 v;

	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	v = (uint16_t)~sum;
	memcpy(p, &v, 2);
}

static void
put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

/* a as 16 bytes of IPv6: itself, or its IPv4-mapped form */
static void
as6(const struct policy_addr *a, unsigned char *out)
{
	if (a->family == AF_INET6) {
		memcpy(out, a->bytes, 16);
		return;
	}
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a->bytes, 4);
}

/* The recording stops: once, with one log line (and an audit line). */
static void
rec_stop(struct gate *g, uint64_t conn, int rc)
{
	struct gate_record	*r = g->record;
	struct gate_audit_rec	 a;
	char			 detail[128];

	r->stopped = 1;
	if (rc == -1) {
		log_warn("record %s: recording stopped", r->path);
		return;
	}
	snprintf(detail, sizeof(detail), "record limit reached at %llu "
	    "bytes; recording stopped",
	    (unsigned long long)pcapng_size(r->w));
	log_warnx("record %s: %s (--record-max %llu)", r->path, detail,
	    (unsigned long long)r->max);
	memset(&a, 0, sizeof(a));
	a.event = "record";
	a.conn = conn;
	a.reason = "record_limit";
	a.detail = detail;
	a.dns_ms = a.connect_ms = a.duration_ms = -1;
	gate_audit_write(g->audit, &a, &g->num->ctr.audit_errors);
}

/*
 * One segment from side `from` of the stream: flags, len bytes of data
 * (at most REC_MSS), the comment on it (NULL: none), seen at ts.  Its
 * sequence number is the side's next; data and SYN/FIN advance it.
 */
static void
rec_segment(struct gate_conn *c, int from, uint8_t flags, const void *data,
    size_t len, const char *comment, const struct timespec *ts)
{
	struct gate		*g = c->g;
	struct gate_record	*r = g->record;
	struct conn_rec		*s = c->rec;
	unsigned char		*p = r->pkt, *tcp, src[16], dst[16];
	const struct policy_addr *a = &s->addr[from], *b = &s->addr[!from];
	int			 v6 = a->family == AF_INET6 ||
				    b->family == AF_INET6;
	size_t			 ip = v6 ? IP6_HDR : IP4_HDR;
	size_t			 tlen = TCP_HDR + len;
	uint64_t		 sum;
	int			 rc;

	if (r->stopped)
		return;
	if (v6) {
		as6(a, src);
		as6(b, dst);
		p[0] = 0x60;
		p[1] = p[2] = p[3] = 0;
		put16(p + 4, (uint16_t)tlen);
		p[6] = IPPROTO_TCP;
		p[7] = 64;
		memcpy(p + 8, src, 16);
		memcpy(p + 24, dst, 16);
	} else {
		p[0] = 0x45;
		p[1] = 0;
		put16(p + 2, (uint16_t)(ip + tlen));
		put16(p + 4, r->ipid++);
		put16(p + 6, 0x4000);		/* DF */
		p[8] = 64;
		p[9] = IPPROTO_TCP;
		put16(p + 10, 0);
		memcpy(p + 12, a->bytes, 4);
		memcpy(p + 16, b->bytes, 4);
		put_sum(p + 10, sum_bytes(0, p, IP4_HDR));
	}
	tcp = p + ip;
	put16(tcp, s->port[from]);
	put16(tcp + 2, s->port[!from]);
	put32(tcp + 4, s->seq[from]);
	put32(tcp + 8, (flags & TH_ACK) ? s->seq[!from] : 0);
	tcp[12] = (TCP_HDR / 4) << 4;
	tcp[13] = flags;
	put16(tcp + 14, REC_WINDOW);
	put16(tcp + 16, 0);
	put16(tcp + 18, 0);
	if (len > 0)
		memcpy(tcp + TCP_HDR, data, len);
	/* the pseudo header: addresses, protocol, TCP length */
	if (v6)
		sum = sum_bytes(0, p + 8, 32);
	else
		sum = sum_bytes(0, p + 12, 8);
	sum += htons(IPPROTO_TCP) + htons((uint16_t)tlen);
	put_sum(tcp + 16, sum_bytes(sum, tcp, tlen));

	s->seq[from] += (uint32_t)len + ((flags & (TH_SYN | TH_FIN)) ? 1 : 0);
	if ((rc = pcapng_write(r->w, ts, p, ip + tlen, comment)) != 0)
		rec_stop(g, c->id, rc);
}

static void
now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* --- a connection ------------------------------------------------------------ */

/*
 * A comment value s into buf (termsafe.h): printable ASCII, no quote or
 * backslash, and no space unless quoted, so that the line splits where
 * its reader expects.
 */
static void
comment_value(char *buf, size_t len, const char *s, int quoted)
{
	(void)term_clean(buf, len, s, strlen(s), TERM_ASCII | (quoted ?
	    TERM_QUOTED : TERM_WORD), NULL);
}

static void
rec_comment(struct gate_conn *c, const char *decision, const char *reason,
    char *buf, size_t len)
{
	char	 session[GATE_SESSION_MAX], host[sizeof(c->d->hostport)];
	char	 rule[RULE_MAX], user[sizeof(c->d->user)];

	comment_value(session, sizeof(session), c->d->session[0] ?
	    c->d->session : "-", 0);
	comment_value(user, sizeof(user), c->d->user, 0);
	comment_value(host, sizeof(host), c->d->tgt.hostlen ?
	    c->d->hostport : "-", 0);
	comment_value(rule, sizeof(rule), c->d->rule, 1);
	/* --users: whose policy decided (absent otherwise, as in the audit) */
	snprintf(buf, len, "aisb conn=%llu session=%s%s%s decision=%s "
	    "reason=%s host=%s rule=\"%s\"", (unsigned long long)c->id,
	    session, user[0] ? " user=" : "", user, decision, reason, host,
	    rule);
}

/* 32 bits no one guesses from the capture (initial sequence numbers). */
static uint32_t
isn(void)
{
	uint32_t	 v;

	evutil_secure_rng_get_bytes(&v, sizeof(v));
	return v;
}

int
conn_rec_new(struct gate_conn *c, const struct policy_addr *client,
    uint16_t port)
{
	struct conn_rec	*s;

	if (c->g->record->stopped)
		return 0;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	s->addr[0] = *client;
	s->port[0] = port;
	/* the placeholder destination until one is dialled */
	s->addr[1].family = client->family;
	s->seq[0] = isn();
	s->seq[1] = isn();
	now(&s->t_syn);
	c->rec = s;
	return 0;
}

void
conn_rec_free(struct gate_conn *c)
{
	free(c->rec);
	c->rec = NULL;
}

void
conn_rec_dial(struct gate_conn *c, const struct policy_addr *a,
    uint16_t port)
{
	c->rec->addr[1] = *a;
	c->rec->port[1] = port;
	now(&c->rec->t_syn);
}

/* The upstream connect succeeded: the handshake, the SYN commented. */
void
conn_rec_open(struct gate_conn *c)
{
	struct conn_rec	*s = c->rec;
	char		 comment[PCAPNG_COMMENT_MAX];
	struct timespec	 ts;

	if (s->open || s->done)
		return;
	rec_comment(c, "allow", "allowed", comment, sizeof(comment));
	now(&ts);
	rec_segment(c, 0, TH_SYN, NULL, 0, comment, &s->t_syn);
	rec_segment(c, 1, TH_SYN | TH_ACK, NULL, 0, NULL, &ts);
	rec_segment(c, 0, TH_ACK, NULL, 0, NULL, &ts);
	s->open = 1;
}

/*
 * Refused (or failed) before a stream existed: a SYN, commented, and the
 * destination's RST-ACK.  The stream ends here.
 */
void
conn_rec_refused(struct gate_conn *c, const char *decision,
    const char *reason)
{
	struct conn_rec	*s = c->rec;
	char		 comment[PCAPNG_COMMENT_MAX];
	struct timespec	 ts;

	if (s->open || s->done)
		return;
	if (s->port[1] == 0)
		s->port[1] = c->d->tgt.port;
	rec_comment(c, decision, reason, comment, sizeof(comment));
	now(&ts);
	rec_segment(c, 0, TH_SYN, NULL, 0, comment, &s->t_syn);
	rec_segment(c, 1, TH_RST | TH_ACK, NULL, 0, NULL, &ts);
	s->done = 1;
}

/* len bytes relayed from side `from`, in segments. */
void
conn_rec_data(struct gate_conn *c, int from, const void *data, size_t len)
{
	const unsigned char	*p = data;
	struct timespec		 ts;
	size_t			 n;

	if (!c->rec->open || c->rec->done || c->rec->fin[from])
		return;
	now(&ts);
	while (len > 0) {
		n = len > REC_MSS ? REC_MSS : len;
		rec_segment(c, from, TH_PSH | TH_ACK, p, n, NULL, &ts);
		p += n;
		len -= n;
	}
}

/* The last len bytes of buf, relayed from side `from`. */
void
conn_rec_tail(struct gate_conn *c, int from, struct evbuffer *buf,
    size_t len)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v[16];
	size_t			 have = evbuffer_get_length(buf);
	int			 n, i;

	if (!c->rec->open || c->rec->done || len == 0 || len > have)
		return;
	if (evbuffer_ptr_set(buf, &pos, have - len, EVBUFFER_PTR_SET) == -1)
		return;
	while (len > 0) {
		if ((n = evbuffer_peek(buf, (ev_ssize_t)len, &pos, v,
		    16)) <= 0)
			return;
		if (n > 16)
			n = 16;
		for (i = 0; i < n && len > 0; i++) {
			size_t	 k = v[i].iov_len < len ? v[i].iov_len : len;

			conn_rec_data(c, from, v[i].iov_base, k);
			len -= k;
			if (evbuffer_ptr_set(buf, &pos, k,
			    EVBUFFER_PTR_ADD) == -1 && len > 0)
				return;
		}
	}
}

/* Side `from` sent its EOF, and it was passed on. */
void
conn_rec_fin(struct gate_conn *c, int from)
{
	struct timespec	 ts;

	if (!c->rec->open || c->rec->done || c->rec->fin[from])
		return;
	now(&ts);
	rec_segment(c, from, TH_FIN | TH_ACK, NULL, 0, NULL, &ts);
	c->rec->fin[from] = 1;
	c->rec->last_fin = (uint8_t)from;
}

/*
 * An inspected connection's client leg: one line of its TLS keys (NSS
 * key log format, from OpenSSL's keylog callback), written as a
 * Decryption Secrets Block before the records it decrypts, so that
 * tshark and Wireshark show the HTTP inside.  Only that leg's keys come
 * here (inspect.c): it carries the sandbox's placeholders, never the
 * secrets the gate adds on the upstream leg.
 */
void
conn_rec_keylog(struct gate_conn *c, const char *line)
{
	struct gate_record	*r = c->g->record;
	char			 buf[PCAPNG_SECRETS_MAX];
	size_t			 n = strlen(line);
	int			 rc;

	if (r->stopped || c->rec->done || n + 1 > sizeof(buf))
		return;
	memcpy(buf, line, n);
	buf[n++] = '\n';
	if ((rc = pcapng_write_secrets(r->w, PCAPNG_SECRETS_TLS, buf, n)) != 0)
		rec_stop(c->g, c->id, rc);
	explicit_bzero(buf, sizeof(buf));
}

/*
 * The connection ends, as its close_end says (conn_close_as), not its
 * reason's words.  After a clean end (END_DONE, or none given: a
 * forwarded answer complete) the FINs not yet written are, the
 * destination's first, then the ACK of the last; after anything else a
 * RST, from the client for a client's error, else from the destination
 * (the gate cut the stream).
 */
void
conn_rec_end(struct gate_conn *c)
{
	struct conn_rec	*s = c->rec;
	struct timespec	 ts;

	if (!s->open || s->done)
		return;
	now(&ts);
	if (c->close_end == END_NONE || c->close_end == END_DONE) {
		conn_rec_fin(c, 1);
		conn_rec_fin(c, 0);
		rec_segment(c, !s->last_fin, TH_ACK, NULL, 0, NULL, &ts);
	} else
		rec_segment(c, c->close_end == END_CLIENT_ERROR ? 0 : 1,
		    TH_RST | TH_ACK, NULL, 0, NULL, &ts);
	s->done = 1;
}
