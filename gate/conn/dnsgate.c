/*
 * AISB-DNS: the sandbox's DNS, answered by the gate from its policy.
 *
 * The relay inside the container sends "AISB-DNS * HTTP/1.1" with the
 * session's Proxy-Authorization on the ordinary listener; decide.c
 * authenticates it as any request and hands the connection here.  No
 * reply to the head: from its blank line on the connection is DNS over
 * TCP (RFC 7766: a 2-byte big-endian length, then the message) both ways,
 * queries pipelined and answered in order, until the client's EOF,
 * DNSGATE_IDLE_SECS without a query, or DNSGATE_MAX_QUERIES queries.
 *
 * Nothing is ever asked upstream.  A name some rule allows on any port
 * (policy_name_allowed_any: exact, *.suffix, regex) gets for A one
 * synthetic address of 198.18.0.0/15 (dnsmsg_synth_v4), TTL DNSGATE_TTL,
 * and for every other type NOERROR with no answer; any other name
 * NXDOMAIN.  The synthetic address is only a place for the client to
 * dial: the transparent capture takes the real name from SNI or Host and
 * the gate resolves and pins it then, exactly as for CONNECT (198.18/15
 * is a denied range, so a CONNECT to the literal is refused).  So no
 * query, for an allowed name or not, ever leaves the machine.
 *
 * Each query is one audit line ({"event":"dns", name, qtype, answer});
 * a name the policy refuses carries the reason, the detail and the fix
 * YAML of a denied CONNECT to it, so that the session's summary shows it
 * as a denial: a tool that resolves first never connects, and its
 * NXDOMAIN was otherwise the only trace.
 * A token bucket per session (--dns-rate per second, --dns-burst) bounds
 * them: over it a query is answered REFUSED and counted, and one audit
 * line a second per session says how many were.  A session, for the
 * buckets and the names handed out (synth.c), is a credential and the
 * name it gave: its token file line's key (c->cred_key) and its label
 * (conn_label), so that another credential giving the same name (a line
 * of any user name accepts every name) neither spends this one's queries
 * nor is told or given what this one resolved.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "dnsmsg.h"
#include "log.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/conn/conn-int.h"

#define DNSGATE_FRAME_MAX	DNSMSG_EDNS_SIZE /* bytes of one query; larger: close */
#define DNSGATE_MAX_QUERIES	10000	/* per connection, then it is closed */
#define DNSGATE_IDLE_SECS	30	/* without a query: closed */
#define DNSGATE_LINGER_SECS	2	/* after our FIN, for the client's */
#define DNSGATE_OUT_MAX		(64 * 1024)	/* answers queued: reading stops */
#define DNSGATE_TTL		30	/* s, of a synthetic address */
#define DNSGATE_BUCKETS		256	/* sessions with a rate bucket, per process */

struct conn_dns {
	struct gate_conn	*c;
	struct event		*timer;		/* idle, then linger */
	uint32_t		 queries;
	uint8_t			 closing;	/* answer what is queued, then close */
	uint8_t			 shut;		/* our FIN is sent: lingering */
	const char		*why;		/* the close's reason */
	uint8_t			 end;		/* ... how: enum conn_end */
};

struct dns_bucket {
	unsigned char		 key[GATE_AUTH_KEY];	/* its token line */
	char			 label[GATE_SESSION_MAX];
	int			 used;
	double			 tokens;
	struct timespec		 last;		/* of the last refill */
	struct timespec		 logged;	/* the last refusal's audit line */
	uint64_t		 unlogged;	/* refusals since that line */
};

struct gate_dnsgate {
	struct dns_bucket	 b[DNSGATE_BUCKETS];
};

static void	dns_pump(struct gate_conn *);

/*
 * Whose a connection is, for the rate buckets and the names handed out
 * (synth.c): the session label, the --users user, or without credentials
 * (a standalone gate) "@ADDR", the client's address, in buf.  Never alone:
 * always with c->cred_key, the token file line the label came through (a
 * line of any user name takes the label from the client; all zero under
 * --users, whose names are each one line's, and without credentials).
 */
const char *
conn_label(const struct gate_conn *c, char *buf, size_t len)
{
	const char	*colon;

	if (c->d->session[0] != '\0')
		return c->d->session;
	if (c->d->user[0] != '\0')
		return c->d->user;
	colon = strrchr(c->d->peer, ':');
	snprintf(buf, len, "@%.*s", colon != NULL ?
	    (int)(colon - c->d->peer) : (int)strlen(c->d->peer), c->d->peer);
	return buf;
}

static double
secs_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void
gate_dnsgate_free(struct gate *g)
{
	free(g->dnsgate);
	g->dnsgate = NULL;
}

/*
 * The bucket of a session: the key of its token file line and its label
 * (conn_label), made full when new.  When all are taken the one used
 * least recently is given up: a bucket left alone long enough is full
 * again anyway, and sessions are authenticated credentials, not a
 * client's choice alone.  A reload that removes or changes a line leaves
 * its bucket to be given up so (a changed line is another key: a fresh
 * bucket, which only who edits the token file can cause).  NULL only when
 * out of memory.
 */
static struct dns_bucket *
bucket_get(struct gate *g, const unsigned char key[GATE_AUTH_KEY],
    const char *label, const struct timespec *now)
{
	struct dns_bucket	*b, *lru = NULL;
	size_t			 i;

	if (g->dnsgate == NULL &&
	    (g->dnsgate = calloc(1, sizeof(*g->dnsgate))) == NULL)
		return NULL;
	for (i = 0; i < DNSGATE_BUCKETS; i++) {
		b = &g->dnsgate->b[i];
		if (b->used && strcmp(b->label, label) == 0 &&
		    memcmp(b->key, key, GATE_AUTH_KEY) == 0)
			return b;
		if (lru == NULL || !b->used || (lru->used &&
		    secs_between(&b->last, &lru->last) > 0))
			lru = b;
	}
	memset(lru, 0, sizeof(*lru));
	memcpy(lru->key, key, GATE_AUTH_KEY);
	snprintf(lru->label, sizeof(lru->label), "%s", label);
	lru->used = 1;
	lru->tokens = g->cfg.dns_burst;
	lru->last = *now;
	return lru;
}

/* Takes a token: 1, or 0 when the session is over its rate. */
static int
bucket_take(struct gate *g, struct dns_bucket *b, const struct timespec *now)
{
	double	 dt = secs_between(&b->last, now);

	if (dt > 0) {
		b->tokens += dt * g->cfg.dns_rate;
		if (b->tokens > g->cfg.dns_burst)
			b->tokens = g->cfg.dns_burst;
		b->last = *now;
	}
	if (b->tokens < 1)
		return 0;
	b->tokens -= 1;
	return 1;
}

/*
 * What one question gets: the rcode, the answer as the audit says it,
 * and for a name the policy refuses the reason, the rule (a deny rule)
 * and the allow rule that would admit it, so that the launcher counts
 * and shows the refusal as it does a denied CONNECT.
 */
struct dns_verdict {
	int			 rcode;
	const char		*answer;
	const char		*reason;	/* NULL: not refused by policy */
	const char		*detail;
	char			 rule[RULE_MAX];
	char			 fix[POLICY_FIX_MAX];
	char			 addr[INET6_ADDRSTRLEN];
	struct dnsmsg_rr	 rr;
	size_t			 nrr;
};

static void
dns_audit(struct gate_conn *c, const struct dnsmsg_query *q,
    const struct dns_verdict *v, uint64_t refused)
{
	struct gate_audit_rec	 r;
	char			 qt[16];

	memset(&r, 0, sizeof(r));
	r.event = "dns";
	r.conn = c->id;
	r.session = c->d->session[0] ? c->d->session : NULL;
	r.user = c->d->user[0] ? c->d->user : NULL;
	r.client = c->d->peer;
	r.rule = v->rule[0] ? v->rule : NULL;
	r.reason = v->reason;
	r.detail = v->detail;
	r.fix = v->fix[0] ? v->fix : NULL;
	r.dns_ms = r.connect_ms = r.duration_ms = -1;
	r.name = q->qend != 0 ? q->name : NULL;
	r.qtype = q->qend != 0 ? dnsmsg_type_str(q->qtype, qt, sizeof(qt)) :
	    NULL;
	r.answer = v->answer;
	r.refused = refused;
	r.learn = c->g->cfg.learn;
	gate_audit_write(c->g->audit, &r, &c->g->num->ctr.audit_errors);
}

/*
 * The policy's answer to a valid IN question: a synthetic address or
 * NODATA for a name some rule allows on any port (every valid name with
 * --learn), NXDOMAIN with the reason and the fix for any other.
 */
static void
dns_decide(struct gate_conn *c, const char *label,
    const struct dnsmsg_query *q, struct dns_verdict *v)
{
	struct gate		*g = c->g;
	struct policy_decision	 d;
	struct policy_target	 t;
	const struct policy	*pol = g->users != NULL ? c->d->pol : g->policy;
	char			 err[128];

	memset(&t, 0, sizeof(t));
	if (!q->ldh || policy_normalize_name(q->name, q->namelen, t.host,
	    &t.hostlen, err, sizeof(err)) == -1) {
		v->rcode = DNSMSG_R_NXDOMAIN;
		v->answer = "NXDOMAIN";
		v->reason = "bad_name";
		v->detail = "not a host name a policy can allow";
		g->num->ctr.dns_q_nxdomain++;
		return;
	}
	if (!policy_name_allowed_any(pol, t.host, t.hostlen, &d) &&
	    !g->cfg.learn) {
		v->rcode = DNSMSG_R_NXDOMAIN;
		v->answer = "NXDOMAIN";
		v->reason = conn_reason_token(d.reason);
		v->detail = policy_reason_str(d.reason);
		if (d.rule != NULL)
			policy_rule_describe(d.rule, v->rule, sizeof(v->rule));
		/* the ports of transparent capture are an allow rule's own */
		t.port = 443;
		if (policy_fix_yaml(pol, &t, d.reason, NULL, 0, v->fix,
		    sizeof(v->fix)) <= 0)
			v->fix[0] = '\0';
		g->num->ctr.dns_q_nxdomain++;
		return;
	}
	/* --learn: every valid name gets its address, so that a tool
	 * that resolves first is caught connecting and learnt */
	v->rcode = DNSMSG_R_NOERROR;
	if (d.rule != NULL)
		policy_rule_describe(d.rule, v->rule, sizeof(v->rule));
	if (q->qtype != DNSMSG_T_A) {
		v->answer = "NODATA";
		g->num->ctr.dns_q_nodata++;
		return;
	}
	v->rr.type = DNSMSG_T_A;
	v->rr.ttl = DNSGATE_TTL;
	v->rr.rdlen = 4;
	dnsmsg_synth_v4(t.host, t.hostlen, v->rr.rdata);
	/* the name a caught connection to it gets */
	if (gate_synth_note(g->synth, c->cred_key, label, t.host,
	    v->rr.rdata) == -1)
		log_warnx("conn %llu: AISB-DNS: out of memory: %s not "
		    "remembered", (unsigned long long)c->id, t.host);
	v->nrr = 1;
	snprintf(v->addr, sizeof(v->addr), "%u.%u.%u.%u", v->rr.rdata[0],
	    v->rr.rdata[1], v->rr.rdata[2], v->rr.rdata[3]);
	v->answer = v->addr;
	g->num->ctr.dns_q_addr++;
}

/*
 * Answers one query (len bytes at m) onto out, framed.  Returns 0, or -1
 * when the stream is not DNS queries (a runt, a response): it is closed.
 */
static int
dns_query(struct gate_conn *c, const uint8_t *m, size_t len,
    struct evbuffer *out)
{
	struct gate		*g = c->g;
	struct dnsmsg_query	 q;
	struct dns_bucket	*b;
	struct dns_verdict	 vd, *v = &vd;
	struct timespec		 now;
	uint8_t			 ans[2 + DNSGATE_FRAME_MAX + 64];
	char			 byaddr[INET6_ADDRSTRLEN + 8];
	const char		*label;
	size_t			 n;
	int			 rc;

	if ((rc = dnsmsg_parse(m, len, &q)) == -1)
		return -1;
	memset(v, 0, sizeof(*v));
	clock_gettime(CLOCK_MONOTONIC, &now);
	label = conn_label(c, byaddr, sizeof(byaddr));
	if ((b = bucket_get(g, c->cred_key, label, &now)) == NULL)
		return -1;
	if (!bucket_take(g, b, &now)) {
		/* over the bound: REFUSED, one audit line a second */
		g->num->ctr.dns_q_ratelimited++;
		b->unlogged++;
		if (secs_between(&b->logged, &now) >= 1 ||
		    (b->logged.tv_sec == 0 && b->logged.tv_nsec == 0)) {
			v->answer = "REFUSED";
			v->reason = "dns_rate_limited";
			v->detail = "over the gate's --dns-rate";
			dns_audit(c, &q, v, b->unlogged);
			b->unlogged = 0;
			b->logged = now;
		}
		rc = rc == 0 ? DNSMSG_R_REFUSED : rc;
		n = dnsmsg_answer(m, &q, rc, NULL, 0, 0, ans + 2,
		    sizeof(ans) - 2, DNSMSG_TCP_MAX);
		goto send;
	}

	if (rc != 0) {				/* FORMERR, NOTIMP, BADVERS */
		v->rcode = rc;
		v->answer = dnsmsg_rcode_str(rc);
		g->num->ctr.dns_q_error++;
	} else if (q.qclass != DNSMSG_C_IN || q.name[0] == '\0') {
		v->rcode = DNSMSG_R_REFUSED;
		v->answer = "REFUSED";
		g->num->ctr.dns_q_error++;
	} else
		dns_decide(c, label, &q, v);
	dns_audit(c, &q, v, 0);
	n = dnsmsg_answer(m, &q, v->rcode, &v->rr, v->nrr, 0, ans + 2,
	    sizeof(ans) - 2, DNSMSG_TCP_MAX);
send:
	if (n == 0)
		return -1;	/* cannot be: the question fitted the query */
	ans[0] = (uint8_t)(n >> 8);
	ans[1] = (uint8_t)n;
	if (evbuffer_add(out, ans, n + 2) == -1)
		return -1;
	c->down += n + 2;
	return 0;
}

static void
dns_close(struct gate_conn *c, const char *why, enum conn_end end)
{
	conn_close_as(c, why, end);
	log_debug("conn %llu: AISB-DNS: %u queries, closed (%s)",
	    (unsigned long long)c->id, c->dns->queries, why);
	conn_free(c);
}

/*
 * Nothing more is read: the answers queued are written, then our FIN,
 * then the client's is waited for (bounded), what it still sends thrown
 * away, so that no answer is lost to a reset.  Returns 1 when the
 * connection is freed already (a timer could not be set): the caller
 * touches nothing of it then.
 */
static int
dns_finish(struct gate_conn *c, const char *why, enum conn_end end)
{
	struct conn_dns	*ds = c->dns;
	struct timeval	 flush = { DNSGATE_LINGER_SECS + 3, 0 };
	struct timeval	 linger = { DNSGATE_LINGER_SECS, 0 };

	if (!ds->closing) {
		ds->closing = 1;
		ds->why = why;
		ds->end = (uint8_t)end;
		/* a client that reads nothing is not waited for long */
		if (evtimer_add(ds->timer, &flush) == -1) {
			dns_close(c, ds->why, ds->end);
			return 1;
		}
	}
	if (ds->shut ||
	    evbuffer_get_length(bufferevent_get_output(c->cbev)) != 0)
		return 0;		/* the write callback comes back */
	ds->shut = 1;
	shutdown(bufferevent_getfd(c->cbev), SHUT_WR);
	bufferevent_enable(c->cbev, EV_READ);
	if (evtimer_add(ds->timer, &linger) == -1) {
		dns_close(c, ds->why, ds->end);
		return 1;
	}
	return 0;
}

static void
dns_read_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);

	if (c->dns->closing) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	dns_pump(c);
}

static void
dns_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct conn_dns		*ds = c->dns;
	size_t			 left = evbuffer_get_length(
				    bufferevent_get_output(bev));

	if (ds->closing) {
		if (left == 0)
			dns_finish(c, ds->why, ds->end);
		return;
	}
	if (left <= DNSGATE_OUT_MAX / 2 &&
	    !(bufferevent_get_enabled(bev) & EV_READ)) {
		bufferevent_enable(bev, EV_READ);
		dns_pump(c);		/* frames may wait in the input */
	}
}

static void
dns_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if ((what & BEV_EVENT_EOF) && !c->dns->closing) {
		/* every whole query is answered already: flush, close */
		dns_finish(c, "client closed", END_DONE);
		return;
	}
	if (c->dns->closing)
		dns_close(c, c->dns->why, c->dns->end);
	else if (what & BEV_EVENT_EOF)
		dns_close(c, "client closed", END_DONE);
	else
		dns_close(c, "client error", END_CLIENT_ERROR);
}

static void
dns_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if (c->dns->closing) {
		dns_close(c, c->dns->why, c->dns->end);
		return;
	}
	c->g->num->ctr.idle_timeout++;
	dns_finish(c, "idle_timeout", END_FAULT);
}

/* Answers every whole frame in the input, as far as the output has room. */
static void
dns_pump(struct gate_conn *c)
{
	struct conn_dns	*ds = c->dns;
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct timeval	 tv = { DNSGATE_IDLE_SECS, 0 };
	uint8_t		 m[DNSGATE_FRAME_MAX], hdr[2];
	size_t		 flen, answered = 0;

	while (!ds->closing) {
		if (evbuffer_get_length(out) >= DNSGATE_OUT_MAX) {
			/* the client does not read: neither do we */
			bufferevent_disable(c->cbev, EV_READ);
			break;
		}
		if (evbuffer_copyout(in, hdr, 2) != 2)
			break;
		flen = (size_t)hdr[0] << 8 | hdr[1];
		if (flen < DNSMSG_HDR || flen > DNSGATE_FRAME_MAX) {
			log_info("conn %llu: %s AISB-DNS: a frame of %zu "
			    "bytes (%d-%d): closed", (unsigned long long)c->id,
			    c->d->peer, flen, DNSMSG_HDR, DNSGATE_FRAME_MAX);
			c->g->num->ctr.bad_request++;
			if (dns_finish(c, "bad_frame", END_FAULT))
				return;	/* freed */
			break;
		}
		if (evbuffer_get_length(in) < 2 + flen)
			break;
		evbuffer_drain(in, 2);
		if (evbuffer_remove(in, m, flen) != (int)flen) {
			if (dns_finish(c, "out of memory", END_FAULT))
				return;	/* freed */
			break;
		}
		c->up += 2 + flen;
		ds->queries++;
		answered++;
		if (dns_query(c, m, flen, out) == -1) {
			log_info("conn %llu: %s AISB-DNS: not a query: closed",
			    (unsigned long long)c->id, c->d->peer);
			c->g->num->ctr.bad_request++;
			if (dns_finish(c, "bad_query", END_FAULT))
				return;	/* freed */
			break;
		}
		if (ds->queries >= DNSGATE_MAX_QUERIES &&
		    dns_finish(c, "query_limit", END_FAULT))
			return;		/* freed */
	}
	if (answered > 0 && !ds->closing && evtimer_add(ds->timer, &tv) == -1)
		dns_finish(c, "no timer", END_FAULT);
}

void
conn_dns_free(struct gate_conn *c)
{
	if (c->dns == NULL)
		return;
	if (c->dns->timer != NULL)
		event_free(c->dns->timer);
	free(c->dns);
	c->dns = NULL;
}

void
conn_dns_start(struct gate_conn *c)
{
	struct gate		*g = c->g;
	struct gate_http_req	*req = c->d->req;
	struct timeval		 tv = { DNSGATE_IDLE_SECS, 0 };

	if (!gate_http_span_is(c->d->head, req->target, "*")) {
		g->num->ctr.bad_request++;
		conn_refuse(c, 400, "error", "bad_target",
		    "AISB-DNS takes the target *");
		return;
	}
	if ((c->dns = calloc(1, sizeof(*c->dns))) == NULL ||
	    (c->dns->timer = evtimer_new(g->base, dns_timer_cb, c)) == NULL ||
	    evtimer_add(c->dns->timer, &tv) == -1) {
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return;
	}
	c->dns->c = c;
	log_debug("conn %llu: %s AISB-DNS", (unsigned long long)c->id,
	    c->d->peer);
	/* the head's watermark; a few frames may wait, no more */
	bufferevent_setwatermark(c->cbev, EV_READ, 0,
	    4 * (2 + DNSGATE_FRAME_MAX));
	bufferevent_setcb(c->cbev, dns_read_cb, dns_write_cb, dns_event_cb, c);
	bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	dns_pump(c);		/* queries sent with the head wait already */
}
