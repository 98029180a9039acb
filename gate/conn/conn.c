/*
 * One client connection of aisb-gate, from accept to close.
 *
 *   S_HEAD     reading the request head (header timeout)
 *   S_RESOLVE  waiting for the resolver (client reads paused)
 *   S_CONNECT  dialling one classified address (connect timeout)
 *   S_RELAY    CONNECT tunnel or forwarded request (idle timeout)
 *   S_LINGER   answer flushed, write side shut, input drained until the
 *              client closes (so the answer is not lost to a RST)
 *
 * The connection object owns both bufferevents, after libevent's
 * le-proxy.c: when the output of one side holds RELAY_MAX bytes, reading
 * from the other stops until it drains to half; an EOF is passed on as a
 * shutdown(SHUT_WR) once everything before it has been written.
 *
 * The decision order is fixed: parse -> authenticate -> policy on the name
 * and port -> resolve -> classify every answer -> dial only the classified
 * addresses this connection holds.  A request never reaches a socket that
 * was not decided on, and every decision writes one audit line.
 *
 * This file has the life cycle, the answers and the callbacks; the
 * decision is decide.c's, the relays are relay.c's (bufferevents) and
 * splice.c's (raw), all sharing the types of conn-int.h.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "log.h"
#include "termsafe.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/tls.h"
#include "gate/conn/conn-int.h"

#define CLIENT_BUCKETS	256

struct gate_client {
	struct gate_client	*next;
	struct policy_addr	 addr;
	unsigned		 n;
};

static void	client_read_cb(struct bufferevent *, void *);
static void	client_event_cb(struct bufferevent *, short, void *);
static void	timer_cb(evutil_socket_t, short, void *);

double
gate_ms_since(const struct timespec *t)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - t->tv_nsec) / 1e6;
}

/* A relay adds no delay of its own: small writes (TLS records) go at once. */
void
conn_nodelay(int fd)
{
	int	 one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_debug("TCP_NODELAY: %s", strerror(errno));
}

/*
 * (Re)start the connection's one timer.  A connection must never live
 * without it (no header, connect or idle timeout): when evtimer_add fails
 * the timer is made active at once instead, and timer_cb closes the
 * connection on the next turn of the loop.
 */
static void
arm_tv(struct gate_conn *c, const struct timeval *tv)
{
	if (evtimer_add(c->timer, tv) == 0)
		return;
	log_warnx("conn %llu: cannot arm its timer, closing",
	    (unsigned long long)c->id);
	c->no_timer = 1;
	event_active(c->timer, EV_TIMEOUT, 1);
}

void
conn_arm(struct gate_conn *c, unsigned secs)
{
	struct timeval	 tv = { (time_t)secs, 0 };

	arm_tv(c, &tv);
}

/*
 * Connection ids are unique in one run of the gate, across its workers
 * too: worker w of n numbers its connections w + 1, w + 1 + n, ...
 */
static uint64_t
gate_next_id(struct gate *g)
{
	return g->next_id++ * g->cfg.workers + g->worker + 1;
}

/* --- per-client counts ------------------------------------------------------ */

static unsigned
client_hash(const struct policy_addr *a)
{
	uint32_t	 h = 2166136261u;
	size_t		 i;

	for (i = 0; i < 16; i++)
		h = (h ^ a->bytes[i]) * 16777619u;
	return h % CLIENT_BUCKETS;
}

static struct gate_client *
client_get(struct gate *g, const struct policy_addr *a)
{
	struct gate_client	*cl;
	unsigned		 h = client_hash(a);

	for (cl = g->clients[h]; cl != NULL; cl = cl->next)
		if (cl->addr.family == a->family &&
		    memcmp(cl->addr.bytes, a->bytes, 16) == 0)
			return cl;
	if ((cl = calloc(1, sizeof(*cl))) == NULL)
		return NULL;
	cl->addr = *a;
	cl->next = g->clients[h];
	g->clients[h] = cl;
	return cl;
}

static void
client_put(struct gate *g, struct gate_client *cl)
{
	struct gate_client	**pp;

	if (cl == NULL || --cl->n != 0)
		return;
	for (pp = &g->clients[client_hash(&cl->addr)]; *pp != cl;
	    pp = &(*pp)->next)
		;
	*pp = cl->next;
	free(cl);
}

int
gate_clients_init(struct gate *g)
{
	if ((g->clients = calloc(CLIENT_BUCKETS, sizeof(*g->clients))) == NULL)
		return -1;
	return 0;
}

void
gate_clients_free(struct gate *g)
{
	struct gate_client	*cl;
	size_t			 i;

	if (g->clients == NULL)
		return;
	for (i = 0; i < CLIENT_BUCKETS; i++)
		while ((cl = g->clients[i]) != NULL) {
			g->clients[i] = cl->next;
			free(cl);
		}
	free(g->clients);
	g->clients = NULL;
}

/* --- life cycle -------------------------------------------------------------- */

void
conn_dec_free(struct conn_dec *d)
{
	if (d == NULL)
		return;
	gate_dns_cancel(&d->dnsw);
	free(d->head);
	free(d->req);
	policy_free(d->pol);
	free(d);
}

/* Why the connection closes, and how (enum conn_end): the one setter. */
void
conn_close_as(struct gate_conn *c, const char *reason, enum conn_end end)
{
	c->close_reason = reason;
	c->close_end = (uint8_t)end;
}

void
conn_free(struct gate_conn *c)
{
	struct gate	*g = c->g;

	if (c->state == S_RELAY) {
		g->num->ctr.tunnels--;
		conn_audit(c, "close", NULL, 0, c->close_reason ?
		    c->close_reason : "closed", NULL, NULL);
	}
	if (c->rec != NULL) {
		conn_rec_end(c);
		conn_rec_free(c);
	}
	log_debug("conn %llu: closed (%s)", (unsigned long long)c->id,
	    c->close_reason ? c->close_reason : "done");
	conn_inspect_free(c);	/* its TLS ends before its sockets close */
	if (c->cbev != NULL)
		bufferevent_free(c->cbev);
	if (c->ubev != NULL)
		bufferevent_free(c->ubev);
	if (c->timer != NULL)
		event_free(c->timer);
	conn_raw_free(c);	/* the upstream socket while dialling, too */
	conn_dns_free(c);	/* AISB-DNS: its timer */
	conn_ask_forget(c);	/* --ask: off the held list */
	conn_dec_free(c->d);
	free(c->tags);
	client_put(g, c->client);
	TAILQ_REMOVE(&g->conns, c, entry);
	g->num->ctr.active--;
	free(c);
	if (g->draining && TAILQ_EMPTY(&g->conns))
		event_base_loopexit(g->base, NULL);
}

void
gate_conn_close_all(struct gate *g)
{
	struct gate_conn	*c;

	while ((c = TAILQ_FIRST(&g->conns)) != NULL) {
		conn_close_as(c, "shutdown", END_FAULT);
		conn_free(c);
	}
	gate_inspect_pool_flush(g);
}

/*
 * The answer has been queued on the client's output: stop talking to the
 * upstream, and once the output is written shut our side and wait (bounded)
 * for the client to close, discarding what it still sends.
 */
void
conn_finish(struct gate_conn *c)
{
	if (c->state == S_RELAY) {
		c->g->num->ctr.tunnels--;
		conn_audit(c, "close", NULL, 0, c->close_reason ?
		    c->close_reason : "closed", NULL, NULL);
		if (c->rec != NULL)
			conn_rec_end(c);
	}
	gate_dns_cancel(&c->d->dnsw);
	conn_up_drop(c);
	c->state = S_LINGER;
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
	bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	evbuffer_drain(bufferevent_get_input(c->cbev),
	    evbuffer_get_length(bufferevent_get_input(c->cbev)));
	conn_arm(c, LINGER_SECS + 3);
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		conn_write_cb(c->cbev, c);
}

/*
 * s (NULL: none) into buf as a quoted header parameter may hold it:
 * printable ASCII, no quote or backslash (termsafe.h), cut between
 * characters.  The body shows the same text.
 */
static void
hdr_value(char *buf, size_t len, const char *s)
{
	(void)term_clean(buf, len, s != NULL ? s : "", s != NULL ? strlen(s) :
	    0, TERM_ASCII | TERM_QUOTED, NULL);
}

/*
 * Answer the client with status and a short text body, then finish.
 * decision is the X-Aisb-Decision value ("" for none); it and body must
 * hold nothing the client should not see (no internals, no secrets).
 */
void
conn_reply(struct gate_conn *c, int status, const char *decision,
    const char *body)
{
	char	 buf[GATE_HTTP_REPLY_MAX];
	ssize_t	 n;

	/* SOCKS5: the reply of the step it came at */
	if (c->d != NULL && c->d->socks != SOCKS_ST_NONE) {
		conn_socks_reply(c, status, decision);
		conn_finish(c);
		return;
	}
	/* AISB-TRANSPARENT: a TLS stream gets an alert; an unknown, nothing */
	if (c->d != NULL && c->d->tp != TP_NONE && c->d->tp != TP_HTTP) {
		if (c->d->tp == TP_TLS)
			conn_transparent_alert(c, decision);
		conn_finish(c);
		return;
	}
	/* conn_refuse() bounds header and body to 2 KiB each: it fits */
	if ((n = gate_http_reply(buf, sizeof(buf), status, decision,
	    body)) == -1)
		n = gate_http_reply(buf, sizeof(buf), status, "",
		    "aisb-gate: refused\n");
	if (n > 0 && evbuffer_add(bufferevent_get_output(c->cbev), buf,
	    (size_t)n) == -1)
		log_warnx("conn %llu: cannot queue the answer",
		    (unsigned long long)c->id);
	conn_finish(c);
}

/*
 * What a refusal says, as every refusal of the gate says it: the
 * X-Aisb-Decision value into hdr, and into body for people what was
 * refused (what, or the request's method and target), why, the rule
 * that decided, and the policy change that would allow it (fix: YAML,
 * several lines; fixline: the same on one line, for the header; both
 * NULL for what no policy change allows).  Nothing in them may hold what
 * the client should not see (no internals, no secrets).
 */
void
conn_refusal_text(struct gate_conn *c, const char *what,
    const char *decision, const char *reason, const char *detail,
    const char *fix, const char *fixline, char *hdr, size_t hdrlen,
    char *body, size_t bodylen)
{
	char	 d[DETAIL_MAX], f[POLICY_FIX_MAX], rule[RULE_MAX];
	char	 req[sizeof(c->d->method) + sizeof(c->d->hostport) + 1];
	size_t	 n;

	hdr_value(d, sizeof(d), detail);
	hdr_value(f, sizeof(f), fixline);
	hdr_value(rule, sizeof(rule), c->d->rule);
	snprintf(hdr, hdrlen, "%s; reason=%s%s%s%s%s%s%s%s%s%s",
	    decision, reason,
	    d[0] ? "; detail=\"" : "", d, d[0] ? "\"" : "",
	    rule[0] ? "; rule=\"" : "", rule, rule[0] ? "\"" : "",
	    f[0] ? "; fix=\"" : "", f, f[0] ? "\"" : "");
	if (what == NULL) {
		snprintf(req, sizeof(req), "%s%s%s", c->d->method[0] ?
		    c->d->method : "request", c->d->tgt.hostlen ? " " : "",
		    c->d->tgt.hostlen ? c->d->hostport : "");
		what = req;
	}
	/* For people: what was refused, why, the rule, the fix. */
	n = (size_t)snprintf(body, bodylen, "aisb-gate: %s %s: %s\n", what,
	    strcmp(decision, "deny") == 0 ? "denied" : "failed",
	    d[0] ? d : reason);
	if (rule[0] && n < bodylen)
		n += (size_t)snprintf(body + n, bodylen - n, "rule: %s\n",
		    rule);
	/* a fix that is a comment changes what is there: not "add to" */
	if (fix != NULL && fix[0] && n < bodylen)
		snprintf(body + n, bodylen - n, "to allow it, %s %s:\n%s",
		    fix[0] == '#' ? "in" : "add to", policy_file(c->d->pol),
		    fix);
}

/*
 * Refuse the request: one audit line, the answer, the close.
 * reason is a stable token (docs/gate.md); detail is for people.  fix is
 * the policy change that would allow it (policy_fix_yaml: YAML, several
 * lines) and fixline the same on one line, for the header; both NULL for
 * what no policy change allows (auth, malformed requests, upstreams).
 */
void
conn_refuse_fix(struct gate_conn *c, int status, const char *decision,
    const char *reason, const char *detail, const char *fix,
    const char *fixline)
{
	char	 hdr[2048], body[2048];

	conn_refusal_text(c, NULL, decision, reason, detail, fix, fixline,
	    hdr, sizeof(hdr), body, sizeof(body));
	if (strcmp(decision, "deny") == 0)
		c->g->num->ctr.denied++;
	conn_audit(c, "decision", decision, status, reason, detail,
	    fix != NULL && fix[0] ? fix : NULL);
	if (c->rec != NULL)
		conn_rec_refused(c, decision, reason);
	log_info("conn %llu: %s %s %s: %s %d %s%s%s",
	    (unsigned long long)c->id, c->d->peer, c->d->method,
	    c->d->tgt.hostlen ? c->d->hostport : "-", decision, status, reason,
	    detail ? ": " : "", detail ? detail : "");
	conn_reply(c, status, hdr, body);
}

void
conn_refuse(struct gate_conn *c, int status, const char *decision,
    const char *reason, const char *detail)
{
	conn_refuse_fix(c, status, decision, reason, detail, NULL, NULL);
}

/*
 * Deny by policy (403), with the change that would allow it.  refused is
 * the address refused by class, NULL when it is not about an address.
 */
void
conn_deny(struct gate_conn *c, enum policy_reason why, const char *reason,
    const char *detail, const struct policy_addr *refused)
{
	char	 fix[POLICY_FIX_MAX], line[POLICY_FIX_MAX];

	if (policy_fix_yaml(c->d->pol, &c->d->tgt, why, refused, 0, fix,
	    sizeof(fix)) <= 0 ||
	    policy_fix_yaml(c->d->pol, &c->d->tgt, why, refused, 1, line,
	    sizeof(line)) <= 0)
		fix[0] = line[0] = '\0';
	conn_refuse_fix(c, 403, "deny", reason, detail, fix, line);
}

/* A fixed answer (gate_http_canned) into buf; its length, or -1. */
static ssize_t
canned(const char *reason, char *buf, size_t len)
{
	const struct gate_http_canned	*k = gate_http_canned_find(reason);
	char				 dec[64];

	if (k == NULL)
		return -1;
	snprintf(dec, sizeof(dec), "error; reason=%s", reason);
	return gate_http_reply(buf, len, k->status, dec, k->body);
}

void
gate_accept(struct gate *g, int fd, const struct sockaddr *sa, int salen)
{
	struct gate_conn	*c;
	struct policy_addr	 pa;
	char			 ip[INET6_ADDRSTRLEN], msg[512];
	const char		*limit = NULL;
	uint16_t		 port = 0;
	struct gate_client	*cl = NULL;

	memset(&pa, 0, sizeof(pa));
	if (sa->sa_family == AF_INET && salen >= (int)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const void *)sa;

		pa.family = AF_INET;
		memcpy(pa.bytes, &sin->sin_addr, 4);
		port = ntohs(sin->sin_port);
	} else if (sa->sa_family == AF_INET6 &&
	    salen >= (int)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		pa.family = AF_INET6;
		memcpy(pa.bytes, &sin6->sin6_addr, 16);
		port = ntohs(sin6->sin6_port);
	} else {
		close(fd);
		return;
	}
	policy_addr_str(&pa, ip, sizeof(ip));

	if (g->num->ctr.active >= g->cfg.max_conns)
		limit = "limit_total";
	else if ((cl = client_get(g, &pa)) == NULL ||
	    cl->n >= g->cfg.max_per_client)
		limit = "limit_client";
	else if (!g->cfg.audit_failure_allow && gate_audit_failing(g->audit))
		/* No decision is made that cannot be recorded. */
		limit = "audit_unavailable";
	if (limit != NULL) {
		struct gate_audit_rec	 r;
		ssize_t			 n;
		char			 peer[INET6_ADDRSTRLEN + 8];

		if (limit[0] == 'a')
			g->num->ctr.rejected_audit++;
		else
			g->num->ctr.rejected_limit++;
		if (cl != NULL && cl->n == 0) {
			cl->n = 1;	/* so that client_put() frees it */
			client_put(g, cl);
		}
		n = canned(limit, msg, sizeof(msg));
		/* Best effort on a fresh socket: it has room for this. */
		if (n > 0 && write(fd, msg, (size_t)n) == -1)
			log_debug("limit answer: %s", strerror(errno));
		close(fd);
		snprintf(peer, sizeof(peer), pa.family == AF_INET6 ?
		    "[%s]:%u" : "%s:%u", ip, port);
		memset(&r, 0, sizeof(r));
		r.event = "decision";
		r.conn = gate_next_id(g);
		r.client = peer;
		r.decision = "error";
		r.status = 503;
		r.reason = limit;
		r.dns_ms = r.connect_ms = r.duration_ms = -1;
		gate_metrics_decision(g, r.decision, r.reason);
		gate_audit_write(g->audit, &r, &g->num->ctr.audit_errors);
		log_warnx("%s: connection refused: %s", peer, limit);
		return;
	}

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->d = calloc(1, sizeof(*c->d))) == NULL ||
	    (c->d->req = malloc(sizeof(*c->d->req))) == NULL) {
		if (c != NULL)
			free(c->d);
		free(c);
		log_warn("accept: calloc");
		if (cl->n == 0) {
			cl->n = 1;
			client_put(g, cl);
		}
		close(fd);
		return;
	}
	gate_http_req_init(c->d->req);
	c->g = g;
	c->id = gate_next_id(g);
	c->state = S_HEAD;
	c->fd[0] = c->fd[1] = -1;
	c->dns_ms = c->connect_ms = -1;
	c->client = cl;
	cl->n++;
	if (g->record != NULL && conn_rec_new(c, &pa, port) == -1)
		log_warnx("conn %llu: out of memory: not recorded",
		    (unsigned long long)c->id);
	snprintf(c->d->peer, sizeof(c->d->peer), pa.family == AF_INET6 ?
	    "[%s]:%u" : "%s:%u", ip, port);
	clock_gettime(CLOCK_MONOTONIC, &c->t_start);
	TAILQ_INSERT_TAIL(&g->conns, c, entry);
	g->num->ctr.accepted++;
	g->num->ctr.active++;

	if (g->accept_nodelay)
		conn_nodelay(fd);
	if ((c->cbev = bufferevent_socket_new(g->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		conn_free(c);
		return;
	}
	if ((c->timer = evtimer_new(g->base, timer_cb, c)) == NULL) {
		conn_free(c);
		return;
	}
	bufferevent_setcb(c->cbev, client_read_cb, conn_write_cb,
	    client_event_cb, c);
	/* The parser never needs more than this much buffered. */
	bufferevent_setwatermark(c->cbev, EV_READ, 0, GATE_HTTP_MAX_HEAD + 1);
	bufferevent_enable(c->cbev, EV_READ);
	conn_arm(c, g->cfg.header_timeout);
	log_debug("conn %llu: accepted from %s", (unsigned long long)c->id,
	    c->d->peer);
}

/* --- callbacks ----------------------------------------------------------------- */

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	size_t			 len;
	ssize_t			 r;
	const char		*p;

	switch (c->state) {
	case S_HEAD:
		if (c->d->tp != TP_NONE) {	/* AISB-TRANSPARENT */
			conn_transparent_read(c);
			return;
		}
		if (conn_socks_read(c))		/* SOCKS5 */
			return;
		len = evbuffer_get_length(in);
		if (len > GATE_HTTP_MAX_HEAD)
			len = GATE_HTTP_MAX_HEAD;
		if ((p = (const char *)evbuffer_pullup(in,
		    (ev_ssize_t)len)) == NULL && len > 0) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		r = gate_http_parse(c->d->req, p, len);
		if (r == 0)
			return;
		if (r == -1) {
			/* the method lies in the len bytes parsed */
			if (c->d->req->have_line)
				snprintf(c->d->method, sizeof(c->d->method), "%.*s",
				    (int)c->d->req->method.len,
				    p + c->d->req->method.off);
			c->g->num->ctr.bad_request++;
			conn_refuse(c, c->d->req->status, "error", "bad_request",
			    c->d->req->error);
			return;
		}
		c->d->headlen = (size_t)r;
		if ((c->d->head = malloc(c->d->headlen + 1)) == NULL) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		if (evbuffer_remove(in, c->d->head, c->d->headlen) !=
		    (int)c->d->headlen) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		c->d->head[c->d->headlen] = '\0';
		evtimer_del(c->timer);
		conn_head_complete(c);
		return;
	case S_RELAY:
		if (conn_relay_up(c) == 0)
			(void)conn_maybe_raw(c, NULL, 0);
		return;
	case S_LINGER:
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	default:
		return;
	}
}

/*
 * The output towards one side (bev: the client's or the upstream's) was
 * written down to its watermark.  The same for both directions: resume
 * reading the other side once the output has drained to half, pass the
 * other side's EOF on as a shutdown once all before it is written, and go
 * raw once nothing is queued.  Only the client's side lingers, and only a
 * tunnel passes an EOF on to the upstream; a forwarded answer ends in the
 * lingering close (conn_maybe_done) rather than in a shutdown.
 */
void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	int			 to_client = bev == c->cbev;
	struct bufferevent	*from = to_client ? c->ubev : c->cbev;
	uint8_t			*paused = to_client ? &c->down_paused :
				    &c->up_paused;
	uint8_t			*shut = to_client ? &c->c_shut : &c->u_shut;
	int			 from_eof = to_client ? c->u_eof : c->c_eof;
	size_t			 left = evbuffer_get_length(
				    bufferevent_get_output(bev));

	if (c->state == S_LINGER) {
		if (to_client && left == 0 && !c->c_shut) {
			c->c_shut = 1;
			shutdown(bufferevent_getfd(bev), SHUT_WR);
			if (c->c_eof) {		/* the client is done: written */
				conn_free(c);
				return;
			}
			conn_arm(c, LINGER_SECS);
		}
		return;
	}
	if (c->state != S_RELAY)
		return;
	if (*paused && left <= RELAY_MAX / 2) {
		*paused = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		if (!from_eof)
			bufferevent_enable(from, EV_READ);
	}
	if (left == 0 && from_eof && !*shut && (c->tunnel || to_client)) {
		if (c->tunnel) {
			*shut = 1;
			shutdown(bufferevent_getfd(bev), SHUT_WR);
			if (c->rec != NULL)
				conn_rec_fin(c, to_client);
		}
		conn_maybe_done(c);
		return;
	}
	if (left == 0)
		(void)conn_maybe_raw(c, NULL, 0);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if (c->state == S_LINGER) {
		/*
		 * A client that half-closed before its answer was written
		 * (it sent the request, maybe more, then its FIN) still gets
		 * the answer: the close waits for the write.
		 */
		if ((what & BEV_EVENT_EOF) && !c->c_shut &&
		    evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
			c->c_eof = 1;
			return;
		}
		conn_free(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY && c->tunnel) {
		c->c_eof = 1;
		bufferevent_disable(bev, EV_READ);
		if (conn_relay_up(c) == -1)
			return;
		if (evbuffer_get_length(bufferevent_get_output(c->ubev)) == 0 &&
		    !c->u_shut) {
			c->u_shut = 1;
			shutdown(bufferevent_getfd(c->ubev), SHUT_WR);
			if (c->rec != NULL)
				conn_rec_fin(c, 0);
		}
		conn_maybe_done(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY && !c->tunnel &&
	    c->d->body_done) {
		/*
		 * The client half-closed after its request, or closed
		 * altogether: the two look the same from here.  The answer
		 * is relayed on (what is queued, and what the upstream still
		 * sends) until the upstream's EOF; a client that is gone
		 * answers the next write with a reset.  An upstream that
		 * ignores "Connection: close" and falls silent would hold the
		 * connection until the idle timeout: once the answer has
		 * begun, CLIENT_EOF_SECS of upstream silence end it instead.
		 */
		c->c_eof = 1;
		bufferevent_disable(bev, EV_READ);
		if (c->down > 0)
			conn_arm(c, CLIENT_EOF_SECS);
		return;
	}
	if (what & BEV_EVENT_EOF)
		conn_close_as(c, "client closed", END_DONE);
	else
		conn_close_as(c, "client error", END_CLIENT_ERROR);
	conn_free(c);
}

void
conn_up_read_cb(struct bufferevent *bev, void *arg)
{
	(void)conn_relay_down(arg);
}

void
conn_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY) {
		c->u_eof = 1;
		bufferevent_disable(bev, EV_READ);
		if (conn_relay_down(c) == -1)
			return;
		if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
			conn_write_cb(c->cbev, c);
		else
			conn_maybe_done(c);
		return;
	}
	conn_close_as(c, "upstream error", END_FAULT);
	conn_free(c);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_conn	*c = arg;
	const char		*reason = "idle_timeout";
	enum conn_end		 end = END_FAULT;
	double			 idle, limit;

	if (c->no_timer) {
		conn_close_as(c, "no timer", END_FAULT);
		conn_free(c);
		return;
	}
	switch (c->state) {
	case S_HEAD:
		c->g->num->ctr.header_timeout++;
		conn_refuse(c, 408, "error", "header_timeout",
		    "the request head did not arrive in time");
		return;
	case S_RESOLVE:
		c->g->num->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", "timeout");
		return;
	case S_CONNECT:
		log_debug("conn %llu: %s port %u: connect timeout",
		    (unsigned long long)c->id, c->d->addrstr, c->d->tgt.port);
		/* a TLS leg (inspect.c): the connect was done, its
		 * handshake was not */
		c->d->timed_out = c->ubev != NULL ? 2 : 1;
		conn_up_drop(c);
		conn_dial(c);
		return;
	case S_RELAY:
		idle = gate_ms_since(&c->t_active) / 1e3;
		limit = c->g->cfg.idle_timeout;
		if (!c->tunnel && c->c_eof && c->down > 0) {
			if (limit > CLIENT_EOF_SECS)
				limit = CLIENT_EOF_SECS;
			reason = "client closed";
			end = END_DONE;
		}
		if (idle + 0.01 < limit) {
			struct timeval	 tv;
			double		 left = limit - idle;

			tv.tv_sec = (time_t)left;
			tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) *
			    1e6);
			arm_tv(c, &tv);
			return;
		}
		if (end == END_FAULT)	/* the timeout, not the client */
			c->g->num->ctr.idle_timeout++;
		conn_close_as(c, reason, end);
		conn_free(c);
		return;
	case S_LINGER:
		conn_free(c);
		return;
	case S_ASK:
		conn_ask_expire(c);	/* no answer in time: a deny */
		return;
	}
}
