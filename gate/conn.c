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
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
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
#include "gate.h"
#include "http.h"
#include "tls.h"

#define RELAY_MAX	(256 * 1024)	/* bytes queued towards one side */
#define RELAY_IO	(64 * 1024)	/* bytes per read(2)/write(2); libevent: 4 KiB */
#define LIBEVENT_READ	4096		/* its most per read(2): more may wait */
#define LINGER_SECS	2		/* after an answer, wait for the close */
#define CLIENT_BUCKETS	256
#define RULE_MAX	512
#define DETAIL_MAX	256

enum conn_state { S_HEAD, S_RESOLVE, S_CONNECT, S_RELAY, S_LINGER };

struct gate_client {
	struct gate_client	*next;
	struct policy_addr	 addr;
	unsigned		 n;
};

struct gate_conn {
	TAILQ_ENTRY(gate_conn)	 entry;
	struct gate		*g;
	uint64_t		 id;
	enum conn_state		 state;
	int			 tunnel;	/* CONNECT rather than forward */
	struct bufferevent	*cbev, *ubev;
	struct event		*timer;
	struct gate_client	*client;
	char			 peer[INET6_ADDRSTRLEN + 8];
	char			 session[GATE_SESSION_MAX];
	char			 method[24];

	struct gate_http_req	*req;		/* until the head is dealt with */
	char			*head;
	size_t			 headlen;
	struct gate_http_span	 path;		/* forward: in head */

	struct policy		*pol;
	struct policy_target	 tgt;
	char			 hostport[POLICY_MAX_NAME + 16];
	char			 rule[RULE_MAX];

	struct gate_dns_wait	 dnsw;
	struct policy_addr	 addrs[GATE_MAX_ADDRS];
	size_t			 naddrs, next, tries;
	char			 addrstr[INET6_ADDRSTRLEN];
	int			 timed_out;	/* the last dial timed out */
	int			 dial_errno;
	int			 stale;		/* the answer was past its TTL */
	int			 sni_check;	/* the ClientHello is still to come */

	struct timespec		 t_start, t_dns, t_connect, t_active;
	double			 dns_ms, connect_ms;
	uint64_t		 up, down;

	/* forward: the request body still to pass upstream */
	int64_t			 body_left;	/* Content-Length bytes, -1: chunked */
	struct gate_http_chunk	 chunk;
	int			 body_done;

	int			 c_eof, u_eof, c_shut, u_shut;
	int			 up_paused, down_paused;
	const char		*close_reason;
};

static void	client_read_cb(struct bufferevent *, void *);
static void	client_write_cb(struct bufferevent *, void *);
static void	client_event_cb(struct bufferevent *, short, void *);
static void	up_read_cb(struct bufferevent *, void *);
static void	up_write_cb(struct bufferevent *, void *);
static void	up_event_cb(struct bufferevent *, short, void *);
static void	timer_cb(evutil_socket_t, short, void *);
static void	dial(struct gate_conn *);

double
gate_ms_since(const struct timespec *t)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - t->tv_nsec) / 1e6;
}

/* A relay adds no delay of its own: small writes (TLS records) go at once. */
static void
nodelay(int fd)
{
	int	 one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_debug("TCP_NODELAY: %s", strerror(errno));
}

static void
arm(struct gate_conn *c, unsigned secs)
{
	struct timeval	 tv = { (time_t)secs, 0 };

	evtimer_add(c->timer, &tv);
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

/* --- audit ------------------------------------------------------------------- */

static void
audit(struct gate_conn *c, const char *event, const char *decision,
    int status, const char *reason, const char *detail)
{
	struct gate_audit_rec	 r;

	memset(&r, 0, sizeof(r));
	r.event = event;
	r.conn = c->id;
	r.session = c->session[0] ? c->session : NULL;
	r.client = c->peer;
	r.method = c->method[0] ? c->method : NULL;
	r.host = c->tgt.hostlen ? c->tgt.host : NULL;
	r.port = c->tgt.port;
	r.addr = c->addrstr[0] ? c->addrstr : NULL;
	r.decision = decision;
	r.status = status;
	r.reason = reason;
	r.rule = c->rule[0] ? c->rule : NULL;
	r.detail = detail;
	r.dns_ms = c->dns_ms;
	r.connect_ms = c->connect_ms;
	r.bytes_up = c->up;
	r.bytes_down = c->down;
	r.duration_ms = strcmp(event, "close") == 0 ?
	    gate_ms_since(&c->t_start) : -1;
	gate_audit_write(c->g->audit, &r, &c->g->ctr.audit_errors);
}

/* --- life cycle -------------------------------------------------------------- */

static void
conn_free(struct gate_conn *c)
{
	struct gate	*g = c->g;

	if (c->state == S_RELAY) {
		g->ctr.tunnels--;
		audit(c, "close", NULL, 0, c->close_reason ? c->close_reason :
		    "closed", NULL);
	}
	log_debug("conn %llu: closed (%s)", (unsigned long long)c->id,
	    c->close_reason ? c->close_reason : "done");
	gate_dns_cancel(&c->dnsw);
	if (c->cbev != NULL)
		bufferevent_free(c->cbev);
	if (c->ubev != NULL)
		bufferevent_free(c->ubev);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c->head);
	free(c->req);
	policy_free(c->pol);
	client_put(g, c->client);
	TAILQ_REMOVE(&g->conns, c, entry);
	g->ctr.active--;
	free(c);
	if (g->draining && TAILQ_EMPTY(&g->conns))
		event_base_loopexit(g->base, NULL);
}

void
gate_conn_close_all(struct gate *g)
{
	struct gate_conn	*c;

	while ((c = TAILQ_FIRST(&g->conns)) != NULL) {
		c->close_reason = "shutdown";
		conn_free(c);
	}
}

/*
 * The answer has been queued on the client's output: stop talking to the
 * upstream, and once the output is written shut our side and wait (bounded)
 * for the client to close, discarding what it still sends.
 */
static void
conn_finish(struct gate_conn *c)
{
	if (c->state == S_RELAY) {
		c->g->ctr.tunnels--;
		audit(c, "close", NULL, 0, c->close_reason ? c->close_reason :
		    "closed", NULL);
	}
	gate_dns_cancel(&c->dnsw);
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	c->state = S_LINGER;
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
	bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	evbuffer_drain(bufferevent_get_input(c->cbev),
	    evbuffer_get_length(bufferevent_get_input(c->cbev)));
	arm(c, LINGER_SECS + 3);
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		client_write_cb(c->cbev, c);
}

static const char *
status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default:  return "Error";
	}
}

/* Make s safe inside a quoted header parameter: printable ASCII, no quote. */
static void
hdr_clean(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f ||
		    *s == '"' || *s == '\\')
			*s = '?';
}

/*
 * Answer the client with status and a short text body, then finish.
 * decision is the X-Aisb-Decision value ("" for none); it and body must
 * hold nothing the client should not see (no internals, no secrets).
 */
static void
conn_reply(struct gate_conn *c, int status, const char *decision,
    const char *body)
{
	struct evbuffer	*out = bufferevent_get_output(c->cbev);

	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=us-ascii\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s%s%s%s\r\n%s",
	    status, status_text(status), strlen(body),
	    status == 407 ? "Proxy-Authenticate: Basic realm=\"aisb\"\r\n" : "",
	    decision[0] ? "X-Aisb-Decision: " : "", decision,
	    decision[0] ? "\r\n" : "", body);
	conn_finish(c);
}

/*
 * Refuse the request: one audit line, the answer, the close.
 * reason is a stable token (docs/gate.md); detail and fix are for people.
 */
static void
conn_refuse(struct gate_conn *c, int status, const char *decision,
    const char *reason, const char *detail, const char *fix)
{
	char	 hdr[2048], body[2048], d[DETAIL_MAX], f[DETAIL_MAX];
	char	 rule[RULE_MAX];
	size_t	 n;

	snprintf(d, sizeof(d), "%s", detail ? detail : "");
	snprintf(f, sizeof(f), "%s", fix ? fix : "");
	snprintf(rule, sizeof(rule), "%s", c->rule);
	hdr_clean(d);
	hdr_clean(f);
	hdr_clean(rule);
	snprintf(hdr, sizeof(hdr), "%s; reason=%s%s%s%s%s%s%s%s%s%s",
	    decision, reason,
	    d[0] ? "; detail=\"" : "", d, d[0] ? "\"" : "",
	    rule[0] ? "; rule=\"" : "", rule, rule[0] ? "\"" : "",
	    f[0] ? "; fix=\"" : "", f, f[0] ? "\"" : "");
	/* For people: what was refused, why, the rule, the fix. */
	n = (size_t)snprintf(body, sizeof(body), "aisb-gate: %s%s%s %s: %s\n",
	    c->method[0] ? c->method : "request", c->tgt.hostlen ? " " : "",
	    c->tgt.hostlen ? c->hostport : "",
	    strcmp(decision, "deny") == 0 ? "denied" : "failed",
	    d[0] ? d : reason);
	if (rule[0] && n < sizeof(body))
		n += (size_t)snprintf(body + n, sizeof(body) - n, "rule: %s\n",
		    rule);
	if (f[0] && n < sizeof(body))
		snprintf(body + n, sizeof(body) - n, "fix: %s\n", f);
	if (strcmp(decision, "deny") == 0)
		c->g->ctr.denied++;
	audit(c, "decision", decision, status, reason, detail);
	log_info("conn %llu: %s %s %s: %s %d %s%s%s",
	    (unsigned long long)c->id, c->peer, c->method,
	    c->tgt.hostlen ? c->hostport : "-", decision, status, reason,
	    detail ? ": " : "", detail ? detail : "");
	conn_reply(c, status, hdr, body);
}

void
gate_accept(struct gate *g, int fd, const struct sockaddr *sa, int salen)
{
	static const char	 busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 23\r\n"
	    "Connection: close\r\nX-Aisb-Decision: error; reason=%s\r\n\r\n"
	    "aisb-gate: over limit\n";
	struct gate_conn	*c;
	struct policy_addr	 pa;
	char			 ip[INET6_ADDRSTRLEN], msg[256];
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

	if (g->ctr.active >= g->cfg.max_conns)
		limit = "limit_total";
	else if ((cl = client_get(g, &pa)) == NULL ||
	    cl->n >= g->cfg.max_per_client)
		limit = "limit_client";
	if (limit != NULL) {
		struct gate_audit_rec	 r;
		int			 n;
		char			 peer[INET6_ADDRSTRLEN + 8];

		g->ctr.rejected_limit++;
		if (cl != NULL && cl->n == 0) {
			cl->n = 1;	/* so that client_put() frees it */
			client_put(g, cl);
		}
		n = snprintf(msg, sizeof(msg), busy, limit);
		/* Best effort on a fresh socket: it has room for this. */
		if (n > 0 && write(fd, msg, (size_t)n) == -1)
			log_debug("limit answer: %s", strerror(errno));
		close(fd);
		snprintf(peer, sizeof(peer), pa.family == AF_INET6 ?
		    "[%s]:%u" : "%s:%u", ip, port);
		memset(&r, 0, sizeof(r));
		r.event = "decision";
		r.conn = ++g->next_id;
		r.client = peer;
		r.decision = "error";
		r.status = 503;
		r.reason = limit;
		r.dns_ms = r.connect_ms = r.duration_ms = -1;
		gate_audit_write(g->audit, &r, &g->ctr.audit_errors);
		log_warnx("%s: connection refused: %s", peer, limit);
		return;
	}

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->req = malloc(sizeof(*c->req))) == NULL) {
		free(c);
		log_warn("accept: calloc");
		if (cl->n == 0) {
			cl->n = 1;
			client_put(g, cl);
		}
		close(fd);
		return;
	}
	gate_http_req_init(c->req);
	c->g = g;
	c->id = ++g->next_id;
	c->state = S_HEAD;
	c->dns_ms = c->connect_ms = -1;
	c->client = cl;
	cl->n++;
	snprintf(c->peer, sizeof(c->peer), pa.family == AF_INET6 ?
	    "[%s]:%u" : "%s:%u", ip, port);
	clock_gettime(CLOCK_MONOTONIC, &c->t_start);
	TAILQ_INSERT_TAIL(&g->conns, c, entry);
	g->ctr.accepted++;
	g->ctr.active++;

	nodelay(fd);
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
	bufferevent_setcb(c->cbev, client_read_cb, client_write_cb,
	    client_event_cb, c);
	/* The parser never needs more than this much buffered. */
	bufferevent_setwatermark(c->cbev, EV_READ, 0, GATE_HTTP_MAX_HEAD + 1);
	bufferevent_enable(c->cbev, EV_READ);
	arm(c, g->cfg.header_timeout);
	log_debug("conn %llu: accepted from %s", (unsigned long long)c->id,
	    c->peer);
}

/* --- deciding ----------------------------------------------------------------- */

static const char *
reason_token(enum policy_reason r)
{
	switch (r) {
	case POLICY_R_ALLOWED:		return "allowed";
	case POLICY_R_DENY_RULE:	return "deny_rule";
	case POLICY_R_HOST_NOT_ALLOWED:	return "host_not_allowed";
	case POLICY_R_PORT_NOT_ALLOWED:	return "port_not_allowed";
	case POLICY_R_ADDR_CLASS:	return "address_denied";
	}
	return "denied";
}

static void
deny_decision(struct gate_conn *c, const struct policy_decision *d)
{
	char	 fix[DETAIL_MAX];

	fix[0] = '\0';
	if (d->rule != NULL)
		policy_rule_describe(d->rule, c->rule, sizeof(c->rule));
	switch (d->reason) {
	case POLICY_R_DENY_RULE:
		snprintf(fix, sizeof(fix), "remove or narrow the deny rule");
		break;
	case POLICY_R_PORT_NOT_ALLOWED:
		snprintf(fix, sizeof(fix), "add %u to the ports of the rule",
		    c->tgt.port);
		break;
	case POLICY_R_HOST_NOT_ALLOWED:
		if (c->tgt.is_ip)
			snprintf(fix, sizeof(fix), "add to allow in %s: "
			    "- cidr: %s/%d%s%u%s", policy_file(c->pol),
			    c->tgt.host, c->tgt.addr.family == AF_INET ? 32 :
			    128, "  ports: [", c->tgt.port, "]");
		else if (c->tgt.port == 80 || c->tgt.port == 443)
			snprintf(fix, sizeof(fix), "add to allow in %s: "
			    "- host: %s", policy_file(c->pol), c->tgt.host);
		else
			snprintf(fix, sizeof(fix), "add to allow in %s: "
			    "- host: %s  ports: [%u]", policy_file(c->pol),
			    c->tgt.host, c->tgt.port);
		break;
	default:
		break;
	}
	conn_refuse(c, 403, "deny", reason_token(d->reason),
	    policy_reason_str(d->reason), fix);
}

static void
sockaddr_of(const struct policy_addr *a, uint16_t port,
    struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in	*sin = (void *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->bytes, 4);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6	*sin6 = (void *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->bytes, 16);
		*len = sizeof(*sin6);
	}
}

/*
 * Keep the addresses of in[] that may be dialled, in order.  Returns how
 * many; when none, detail says why the first was refused.
 */
static size_t
classify(struct gate_conn *c, const struct policy_addr *in, size_t n,
    char *detail, size_t dlen)
{
	size_t		 i, kept = 0;
	char		 ip[INET6_ADDRSTRLEN];
	const char	*cls;

	detail[0] = '\0';
	for (i = 0; i < n; i++) {
		policy_addr_str(&in[i], ip, sizeof(ip));
		if ((cls = policy_classify(c->pol, &in[i])) == NULL &&
		    gate_is_self(c->g, &in[i], c->tgt.port))
			cls = "the gate itself";
		if (cls != NULL) {
			log_debug("conn %llu: %s: %s is %s, not dialled",
			    (unsigned long long)c->id, c->tgt.host, ip, cls);
			if (detail[0] == '\0')
				snprintf(detail, dlen, "%s is %s", ip, cls);
			continue;
		}
		c->addrs[kept++] = in[i];
	}
	c->naddrs = kept;
	return kept;
}

static void
dns_done(void *arg, int status, const char *err,
    const struct policy_addr *addrs, size_t n, int stale)
{
	struct gate_conn	*c = arg;
	char			 detail[DETAIL_MAX];

	c->dns_ms = gate_ms_since(&c->t_dns);
	if (status == -1) {
		c->g->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", err, NULL);
		return;
	}
	if (stale) {
		c->g->ctr.dns_stale++;
		c->stale = 1;
	}
	if (classify(c, addrs, n, detail, sizeof(detail)) == 0) {
		conn_refuse(c, 403, "deny", "address_denied", detail,
		    "if this destination is intended, add its address to "
		    "allow_ranges");
		return;
	}
	dial(c);
}

static void
resolve(struct gate_conn *c)
{
	struct policy_addr	 addrs[GATE_MAX_ADDRS];
	size_t			 n;
	char			 detail[DETAIL_MAX];
	int			 stale = 0;

	clock_gettime(CLOCK_MONOTONIC, &c->t_dns);
	if ((n = gate_dns_cached(c->g->dns, c->tgt.host, addrs,
	    &stale)) != 0) {
		c->dns_ms = 0;
		if (stale) {
			c->g->ctr.dns_stale++;
			c->stale = 1;
		}
		if (classify(c, addrs, n, detail, sizeof(detail)) == 0) {
			conn_refuse(c, 403, "deny", "address_denied", detail,
			    "if this destination is intended, add its "
			    "address to allow_ranges");
			return;
		}
		dial(c);
		return;
	}
	c->state = S_RESOLVE;
	arm(c, c->g->cfg.dns_timeout + 2);
	if (gate_dns_resolve(c->g->dns, c->tgt.host, &c->dnsw, dns_done,
	    c) == -1) {
		c->g->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", "resolver busy",
		    NULL);
	}
}

static void
dial(struct gate_conn *c)
{
	struct gate		*g = c->g;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;

	while (c->next < c->naddrs && c->tries < GATE_MAX_DIALS) {
		const struct policy_addr *a = &c->addrs[c->next++];

		c->tries++;
		policy_addr_str(a, c->addrstr, sizeof(c->addrstr));
		sockaddr_of(a, c->tgt.port, &ss, &sslen);
		if ((c->ubev = bufferevent_socket_new(g->base, -1,
		    BEV_OPT_CLOSE_ON_FREE)) == NULL)
			break;
		bufferevent_setcb(c->ubev, up_read_cb, up_write_cb,
		    up_event_cb, c);
		clock_gettime(CLOCK_MONOTONIC, &c->t_connect);
		if (bufferevent_socket_connect(c->ubev, (struct sockaddr *)&ss,
		    (int)sslen) == -1) {
			c->dial_errno = errno;
			c->timed_out = 0;
			bufferevent_free(c->ubev);
			c->ubev = NULL;
			continue;
		}
		c->state = S_CONNECT;
		arm(c, g->cfg.connect_timeout);
		log_debug("conn %llu: dialling %s port %u",
		    (unsigned long long)c->id, c->addrstr, c->tgt.port);
		return;
	}
	if (c->timed_out) {
		g->ctr.connect_timeout++;
		conn_refuse(c, 504, "error", "connect_timeout",
		    "upstream did not answer", NULL);
	} else {
		g->ctr.connect_failed++;
		conn_refuse(c, 502, "error", "connect_failed",
		    c->dial_errno == ECONNREFUSED ? "connection refused" :
		    "upstream unreachable", NULL);
	}
}

/* --- relaying ---------------------------------------------------------------- */

static void
maybe_done(struct gate_conn *c)
{
	if (c->tunnel) {
		if (c->c_eof && c->u_eof && c->c_shut && c->u_shut) {
			c->close_reason = "eof";
			conn_free(c);
		}
	} else if (c->u_eof &&
	    evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0) {
		/* The response is complete: hand over to the lingering close. */
		c->close_reason = "eof";
		conn_finish(c);
	}
}

/* How many of the client's buffered bytes belong upstream right now. */
static size_t
body_bytes(struct gate_conn *c, struct evbuffer *in, int *bad)
{
	size_t	 len = evbuffer_get_length(in);
	ssize_t	 n;
	int	 done;

	*bad = 0;
	if (c->tunnel)
		return len;
	if (c->body_done)
		return 0;
	if (c->body_left >= 0) {
		if ((uint64_t)len >= (uint64_t)c->body_left) {
			len = (size_t)c->body_left;
			c->body_done = 1;
		}
		c->body_left -= (int64_t)len;
		return len;
	}
	/* chunked: scan what is buffered, in place */
	if (len > RELAY_MAX)
		len = RELAY_MAX;
	n = gate_http_chunk_scan(&c->chunk,
	    (const char *)evbuffer_pullup(in, (ev_ssize_t)len), len, &done);
	if (n == -1) {
		*bad = 1;
		return 0;
	}
	c->body_done = done;
	return (size_t)n;
}

/*
 * libevent 2.1 reads at most 4 KiB per read(2) (EVBUFFER_MAX_READ; 2.2 makes
 * it settable), which costs a trip through the loop per 4 KiB of a bulk
 * tunnel.  So after each of its reads, read up to RELAY_IO more of what the
 * socket holds, straight into the other side's output (only after a full
 * 4 KiB read: a shorter one emptied the socket).  An EOF is left for
 * libevent to find on its next read; a hard error is returned as -1.
 */
static ssize_t
read_more(struct bufferevent *from, struct evbuffer *to)
{
	struct evbuffer_iovec	 v[2];
	struct iovec		 iov[2];
	size_t			 have = evbuffer_get_length(to), want, left;
	ssize_t			 r;
	int			 nv, i;

	if (have >= RELAY_MAX)
		return 0;
	want = RELAY_MAX - have < RELAY_IO ? RELAY_MAX - have : RELAY_IO;
	if ((nv = evbuffer_reserve_space(to, (ev_ssize_t)want, v, 2)) <= 0)
		return 0;
	for (i = 0, left = want; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	do {
		r = readv(bufferevent_getfd(from), iov, nv);
	} while (r == -1 && errno == EINTR);
	if (r <= 0) {
		evbuffer_commit_space(to, v, 0);
		return (r == -1 && errno != EAGAIN && errno != EWOULDBLOCK) ?
		    -1 : 0;
	}
	for (i = 0, left = (size_t)r; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(to, v, v[1].iov_len && nv == 2 ? 2 : 1);
	return r;
}

/*
 * A CONNECT to a name: the TLS server name the client sends, if any, must
 * be that name.  Returns 1 while the ClientHello is incomplete, 0 once the
 * tunnel may carry bytes, -1 when the connection was refused (and freed).
 */
static int
check_sni(struct gate_conn *c, struct evbuffer *in)
{
	size_t	 len = evbuffer_get_length(in);
	char	 name[POLICY_MAX_NAME + 2], detail[DETAIL_MAX + POLICY_MAX_NAME];
	int	 r;

	if (len > 5 + GATE_TLS_MAX_RECORD)
		len = 5 + GATE_TLS_MAX_RECORD;
	r = gate_tls_sni(evbuffer_pullup(in, (ev_ssize_t)len), len, name,
	    sizeof(name));
	if (r == GATE_TLS_MORE)
		return 1;
	c->sni_check = 0;
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	if (r == GATE_TLS_NAME && strcmp(name, c->tgt.host) == 0)
		return 0;
	if (r == GATE_TLS_NO_NAME || r == GATE_TLS_NOT_TLS)
		return 0;
	if (r == GATE_TLS_NAME)
		snprintf(detail, sizeof(detail), "TLS server name %s", name);
	else
		snprintf(detail, sizeof(detail), "malformed TLS ClientHello");
	c->g->ctr.denied++;
	audit(c, "decision", "deny", 0, r == GATE_TLS_NAME ? "sni_mismatch" :
	    "tls_malformed", detail);
	log_info("conn %llu: %s CONNECT %s: deny: %s", (unsigned long long)c->id,
	    c->peer, c->hostport, detail);
	c->close_reason = r == GATE_TLS_NAME ? "sni_mismatch" : "tls_malformed";
	conn_free(c);
	return -1;
}

/* Returns -1 when the connection was closed (and freed). */
static int
relay_up(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	struct evbuffer	*out = bufferevent_get_output(c->ubev);
	size_t		 n;
	int		 bad;

	if (c->sni_check && (bad = check_sni(c, in)) != 0)
		return bad == 1 ? 0 : -1;
	n = body_bytes(c, in, &bad);
	if (bad) {
		c->close_reason = "bad_chunked_body";
		conn_free(c);
		return -1;
	}
	if (n > 0) {
		evbuffer_remove_buffer(in, out, n);
		if (c->tunnel && !c->c_eof && n >= LIBEVENT_READ) {
			ssize_t	 r = read_more(c->cbev, out);

			if (r == -1) {
				c->close_reason = "client error";
				conn_free(c);
				return -1;
			}
			n += (size_t)r;
		}
		c->up += n;
		c->g->ctr.bytes_up += n;
		clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	}
	if (!c->tunnel && c->body_done) {
		/*
		 * Nothing after the one request goes upstream.  What else the
		 * client sends is read and dropped, so that its close is seen.
		 */
		evbuffer_drain(in, evbuffer_get_length(in));
		return 0;
	}
	if (evbuffer_get_length(out) >= RELAY_MAX) {
		bufferevent_disable(c->cbev, EV_READ);
		bufferevent_setwatermark(c->ubev, EV_WRITE, RELAY_MAX / 2, 0);
		c->up_paused = 1;
	}
	return 0;
}

static int
relay_down(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->ubev);
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	size_t		 n = evbuffer_get_length(in);

	if (n > 0) {
		evbuffer_add_buffer(out, in);
		if (!c->u_eof && n >= LIBEVENT_READ) {
			ssize_t	 r = read_more(c->ubev, out);

			if (r == -1) {
				c->close_reason = "upstream error";
				conn_free(c);
				return -1;
			}
			n += (size_t)r;
		}
		c->down += n;
		c->g->ctr.bytes_down += n;
		clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	}
	if (evbuffer_get_length(out) >= RELAY_MAX) {
		bufferevent_disable(c->ubev, EV_READ);
		bufferevent_setwatermark(c->cbev, EV_WRITE, RELAY_MAX / 2, 0);
		c->down_paused = 1;
	}
	return 0;
}

static void
connected(struct gate_conn *c)
{
	struct gate	*g = c->g;
	char		*fwd;
	ssize_t		 n;
	size_t		 cap;

	c->connect_ms = gate_ms_since(&c->t_connect);
	c->state = S_RELAY;
	nodelay(bufferevent_getfd(c->ubev));
	g->ctr.allowed++;
	g->ctr.tunnels++;
	clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	arm(c, g->cfg.idle_timeout);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	bufferevent_set_max_single_read(c->cbev, RELAY_IO);
	bufferevent_set_max_single_write(c->cbev, RELAY_IO);
	bufferevent_set_max_single_read(c->ubev, RELAY_IO);
	bufferevent_set_max_single_write(c->ubev, RELAY_IO);
	audit(c, "decision", "allow", c->tunnel ? 200 : 0, "allowed",
	    c->stale ? "stale DNS answer" : NULL);
	log_info("conn %llu: %s %s %s: allow via %s", (unsigned long long)c->id,
	    c->peer, c->method, c->hostport, c->addrstr);

	if (c->tunnel) {
		evbuffer_add_printf(bufferevent_get_output(c->cbev),
		    "HTTP/1.1 200 Connection established\r\n\r\n");
		if (g->cfg.sni_check && !c->tgt.is_ip) {
			c->sni_check = 1;
			/* a ClientHello is one record at most */
			bufferevent_setwatermark(c->cbev, EV_READ, 0,
			    5 + GATE_TLS_MAX_RECORD);
		}
	} else {
		/* ": " may add a byte per field; Host and Connection lines */
		cap = c->headlen + c->req->nhdrs + sizeof(c->hostport) + 64;
		if ((fwd = malloc(cap)) == NULL) {
			c->close_reason = "out of memory";
			conn_free(c);
			return;
		}
		n = gate_http_forward_head(c->req, c->head, c->path,
		    c->hostport, fwd, cap);
		if (n == -1) {
			free(fwd);
			c->close_reason = "forward head too large";
			conn_free(c);
			return;
		}
		bufferevent_write(c->ubev, fwd, (size_t)n);
		free(fwd);
		c->up += (uint64_t)n;
		g->ctr.bytes_up += (uint64_t)n;
		c->body_left = c->req->chunked ? -1 :
		    (c->req->content_length > 0 ? c->req->content_length : 0);
		c->body_done = c->body_left == 0;
		gate_http_chunk_init(&c->chunk);
	}
	/* The head and its parse are not needed by a relay: 1.7 KiB less. */
	free(c->head);
	c->head = NULL;
	free(c->req);
	c->req = NULL;
	bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	/* Bytes the client sent behind the head go first (or are dropped). */
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		(void)relay_up(c);
}

/* --- the request ------------------------------------------------------------- */

static void
head_complete(struct gate_conn *c)
{
	struct gate		*g = c->g;
	struct gate_http_req	*req = c->req;
	struct gate_http_span	 auth;
	struct policy_decision	 d;
	char			 err[128], *t;
	size_t			 tlen;

	/*
	 * Reading pauses while deciding: bytes sent early wait in the socket,
	 * and a client that half-closes after its request is still served.
	 */
	bufferevent_disable(c->cbev, EV_READ);
	snprintf(c->method, sizeof(c->method), "%.*s", (int)req->method.len,
	    c->head + req->method.off);
	c->pol = policy_ref(g->policy);

	if (g->auth != NULL) {
		if (req->proxy_auth == -1 || gate_auth_check(g->auth,
		    c->head + req->hdrs[req->proxy_auth].value.off,
		    req->hdrs[req->proxy_auth].value.len, c->session,
		    sizeof(c->session)) == -1) {
			g->ctr.auth_failed++;
			conn_refuse(c, 407, "deny", "auth_required",
			    req->proxy_auth == -1 ? "no credentials" :
			    "wrong credentials", NULL);
			return;
		}
	}

	t = c->head + req->target.off;
	tlen = req->target.len;
	if (gate_http_span_eq(c->head, req->method, "CONNECT")) {
		c->tunnel = 1;
		if (policy_parse_target(t, tlen, 0, &c->tgt, err,
		    sizeof(err)) == -1) {
			memset(&c->tgt, 0, sizeof(c->tgt));
			g->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target", err, NULL);
			return;
		}
	} else {
		if (gate_http_split_url(t, tlen, &auth, &c->path) == -1) {
			g->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target",
			    "only http://authority/path targets are proxied; "
			    "use CONNECT for TLS", NULL);
			return;
		}
		c->path.off += req->target.off;
		if (policy_parse_target(t + auth.off, auth.len, 80, &c->tgt,
		    err, sizeof(err)) == -1) {
			memset(&c->tgt, 0, sizeof(c->tgt));
			g->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target", err, NULL);
			return;
		}
		if (req->host != -1) {
			struct policy_target	 h;
			struct gate_http_span	 v = req->hdrs[req->host].value;

			if (policy_parse_target(c->head + v.off, v.len, 80, &h,
			    err, sizeof(err)) == -1 ||
			    strcmp(h.host, c->tgt.host) != 0 ||
			    h.port != c->tgt.port) {
				g->ctr.bad_request++;
				snprintf(c->hostport, sizeof(c->hostport),
				    "%s:%u", c->tgt.host, c->tgt.port);
				conn_refuse(c, 400, "error", "host_mismatch",
				    "the Host header does not match the "
				    "request target", NULL);
				return;
			}
		}
	}
	if (c->tgt.is_ip && c->tgt.addr.family == AF_INET6)
		snprintf(c->hostport, sizeof(c->hostport), "[%s]:%u",
		    c->tgt.host, c->tgt.port);
	else
		snprintf(c->hostport, sizeof(c->hostport), "%s:%u",
		    c->tgt.host, c->tgt.port);

	policy_decide(c->pol, &c->tgt, &d);
	if (d.verdict != POLICY_ALLOW) {
		deny_decision(c, &d);
		return;
	}
	if (d.rule != NULL)
		policy_rule_describe(d.rule, c->rule, sizeof(c->rule));

	if (c->tgt.is_ip) {
		char	 detail[DETAIL_MAX];

		if (classify(c, &c->tgt.addr, 1, detail, sizeof(detail)) == 0) {
			conn_refuse(c, 403, "deny", "address_denied", detail,
			    "if this destination is intended, add its address "
			    "to allow_ranges");
			return;
		}
		dial(c);
		return;
	}
	resolve(c);
}

/* --- callbacks ----------------------------------------------------------------- */

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	size_t			 len;
	ssize_t			 r;

	switch (c->state) {
	case S_HEAD:
		len = evbuffer_get_length(in);
		if (len > GATE_HTTP_MAX_HEAD)
			len = GATE_HTTP_MAX_HEAD;
		r = gate_http_parse(c->req,
		    (const char *)evbuffer_pullup(in, (ev_ssize_t)len), len);
		if (r == 0)
			return;
		if (r == -1) {
			if (c->req->have_line)
				snprintf(c->method, sizeof(c->method), "%.*s",
				    (int)c->req->method.len, (const char *)
				    evbuffer_pullup(in, -1) + c->req->method.off);
			c->g->ctr.bad_request++;
			conn_refuse(c, c->req->status, "error", "bad_request",
			    c->req->error, NULL);
			return;
		}
		c->headlen = (size_t)r;
		if ((c->head = malloc(c->headlen + 1)) == NULL) {
			c->close_reason = "out of memory";
			conn_free(c);
			return;
		}
		evbuffer_remove(in, c->head, c->headlen);
		c->head[c->headlen] = '\0';
		evtimer_del(c->timer);
		head_complete(c);
		return;
	case S_RELAY:
		(void)relay_up(c);
		return;
	case S_LINGER:
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	default:
		return;
	}
}

static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	size_t			 left = evbuffer_get_length(
				    bufferevent_get_output(bev));

	if (c->state == S_LINGER) {
		if (left == 0 && !c->c_shut) {
			c->c_shut = 1;
			shutdown(bufferevent_getfd(bev), SHUT_WR);
			arm(c, LINGER_SECS);
		}
		return;
	}
	if (c->state != S_RELAY)
		return;
	if (c->down_paused && left <= RELAY_MAX / 2) {
		c->down_paused = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		if (!c->u_eof)
			bufferevent_enable(c->ubev, EV_READ);
	}
	if (left == 0 && c->u_eof && !c->c_shut) {
		if (!c->tunnel) {
			maybe_done(c);
			return;
		}
		c->c_shut = 1;
		shutdown(bufferevent_getfd(bev), SHUT_WR);
		maybe_done(c);
	}
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if (c->state == S_LINGER) {
		conn_free(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY && c->tunnel) {
		c->c_eof = 1;
		bufferevent_disable(bev, EV_READ);
		if (relay_up(c) == -1)
			return;
		if (evbuffer_get_length(bufferevent_get_output(c->ubev)) == 0 &&
		    !c->u_shut) {
			c->u_shut = 1;
			shutdown(bufferevent_getfd(c->ubev), SHUT_WR);
		}
		maybe_done(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY && !c->tunnel &&
	    c->body_done && c->down == 0) {
		/*
		 * The client half-closed after its request: wait for the
		 * answer.  Once the answer has begun, an EOF means the client
		 * is done with it (an upstream that ignores "Connection:
		 * close" would otherwise hold the connection until the idle
		 * timeout).
		 */
		c->c_eof = 1;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	c->close_reason = (what & BEV_EVENT_EOF) ? "client closed" :
	    "client error";
	conn_free(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	(void)relay_down(arg);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	size_t			 left = evbuffer_get_length(
				    bufferevent_get_output(bev));

	if (c->state != S_RELAY)
		return;
	if (c->up_paused && left <= RELAY_MAX / 2) {
		c->up_paused = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		if (!c->c_eof)
			bufferevent_enable(c->cbev, EV_READ);
	}
	if (left == 0 && c->c_eof && c->tunnel && !c->u_shut) {
		c->u_shut = 1;
		shutdown(bufferevent_getfd(bev), SHUT_WR);
		maybe_done(c);
	}
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	if (c->state == S_CONNECT) {
		if (what & BEV_EVENT_CONNECTED) {
			evtimer_del(c->timer);
			connected(c);
			return;
		}
		c->dial_errno = EVUTIL_SOCKET_ERROR();
		c->timed_out = 0;
		log_debug("conn %llu: %s port %u: %s",
		    (unsigned long long)c->id, c->addrstr, c->tgt.port,
		    evutil_socket_error_to_string(c->dial_errno));
		bufferevent_free(c->ubev);
		c->ubev = NULL;
		dial(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && c->state == S_RELAY) {
		c->u_eof = 1;
		bufferevent_disable(bev, EV_READ);
		if (relay_down(c) == -1)
			return;
		if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
			client_write_cb(c->cbev, c);
		else
			maybe_done(c);
		return;
	}
	c->close_reason = "upstream error";
	conn_free(c);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_conn	*c = arg;
	double			 idle;

	switch (c->state) {
	case S_HEAD:
		c->g->ctr.header_timeout++;
		conn_refuse(c, 408, "error", "header_timeout",
		    "the request head did not arrive in time", NULL);
		return;
	case S_RESOLVE:
		c->g->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", "timeout", NULL);
		return;
	case S_CONNECT:
		log_debug("conn %llu: %s port %u: connect timeout",
		    (unsigned long long)c->id, c->addrstr, c->tgt.port);
		bufferevent_free(c->ubev);
		c->ubev = NULL;
		c->timed_out = 1;
		dial(c);
		return;
	case S_RELAY:
		idle = gate_ms_since(&c->t_active) / 1e3;
		if (idle + 0.01 < c->g->cfg.idle_timeout) {
			struct timeval	 tv;
			double		 left = c->g->cfg.idle_timeout - idle;

			tv.tv_sec = (time_t)left;
			tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) *
			    1e6);
			evtimer_add(c->timer, &tv);
			return;
		}
		c->g->ctr.idle_timeout++;
		c->close_reason = "idle_timeout";
		conn_free(c);
		return;
	case S_LINGER:
		conn_free(c);
		return;
	}
}

/* Append the live connections as a JSON array (for the control socket). */
void
gate_conns_status(struct gate *g, struct evbuffer *out)
{
	struct gate_conn	*c;
	char			 host[POLICY_MAX_NAME * 6 + 3];
	char			 sess[GATE_SESSION_MAX * 6 + 3];
	int			 first = 1;

	evbuffer_add_printf(out, "[");
	TAILQ_FOREACH(c, &g->conns, entry) {
		if (c->state != S_RELAY)
			continue;
		gate_json_str(host, sizeof(host), c->hostport);
		gate_json_str(sess, sizeof(sess), c->session);
		evbuffer_add_printf(out, "%s{\"conn\":%llu,\"client\":\"%s\","
		    "\"session\":%s,\"target\":%s,\"addr\":\"%s\","
		    "\"bytes_up\":%llu,\"bytes_down\":%llu,\"age_ms\":%.0f}",
		    first ? "" : ",", (unsigned long long)c->id, c->peer, sess,
		    host, c->addrstr, (unsigned long long)c->up,
		    (unsigned long long)c->down, gate_ms_since(&c->t_start));
		first = 0;
	}
	evbuffer_add_printf(out, "]");
}
