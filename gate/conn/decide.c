/*
 * The decision path of a connection, in its fixed order: the complete
 * request head -> authenticate -> policy on the name and port -> resolve
 * (or the cache) -> classify every answer -> dial only the classified
 * addresses this connection holds, one after the other.  Each refusal on
 * the way is one audit line and one answer (conn_refuse, conn_deny); a
 * connect that ends goes on in relay (conn_connected).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/conn/conn-int.h"

/*
 * The address the kernel really connects to for a: an IPv4-mapped IPv6
 * address is its IPv4 address, and the unspecified addresses 0.0.0.0 and
 * :: are the loopback address of their family (Linux: ip_route_connect,
 * ip6_dst_lookup).
 */
static void
reached(const struct policy_addr *a, struct policy_addr *out)
{
	static const uint8_t	 mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t	 zero[16];

	*out = *a;
	if (a->family == AF_INET6 && memcmp(a->bytes, mapped, 12) == 0) {
		memset(out, 0, sizeof(*out));
		out->family = AF_INET;
		memcpy(out->bytes, a->bytes + 12, 4);
	}
	if (out->family == AF_INET && memcmp(out->bytes, zero, 4) == 0) {
		out->bytes[0] = 127;
		out->bytes[3] = 1;
	} else if (out->family == AF_INET6 &&
	    memcmp(out->bytes, zero, 16) == 0)
		out->bytes[15] = 1;
}

/*
 * Would dialling a:port reach this gate's own listener?  (A policy that
 * exempts loopback must still not let a client loop the gate into itself.)
 * Both sides are compared as the kernel sees them (reached()): a gate on
 * 0.0.0.0 is reached by any IPv4 address of the host, one on [::] by any
 * address (dual stack), one on 127.x by all of 127/8 (a listener on
 * another 127/8 address of the same port may be a worker, or will be;
 * refusing the block costs nothing).
 */
static int
gate_is_self(const struct gate *g, const struct policy_addr *a, uint16_t port)
{
	struct policy_addr	 b, t;
	uint16_t		 bport;

	memset(&b, 0, sizeof(b));
	if (g->bound.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&g->bound;

		b.family = AF_INET;
		memcpy(b.bytes, &sin->sin_addr, 4);
		bport = ntohs(sin->sin_port);
	} else if (g->bound.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)&g->bound;
		static const uint8_t	 any[16];

		bport = ntohs(sin6->sin6_port);
		if (memcmp(&sin6->sin6_addr, any, 16) == 0)
			return port == bport;	/* [::]: every address */
		b.family = AF_INET6;
		memcpy(b.bytes, &sin6->sin6_addr, 16);
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			/* [::ffff:a.b.c.d] listens as a.b.c.d */
			memset(&b, 0, sizeof(b));
			b.family = AF_INET;
			memcpy(b.bytes, (const uint8_t *)&sin6->sin6_addr + 12,
			    4);
		}
	} else
		return 0;
	if (port != bport)
		return 0;
	reached(a, &t);
	if (t.family != b.family)
		return 0;
	if (b.family == AF_INET && b.bytes[0] == 0)
		return 1;			/* 0.0.0.0: every IPv4 address */
	if (b.family == AF_INET && b.bytes[0] == 127)
		return t.bytes[0] == 127;
	return memcmp(t.bytes, b.bytes, b.family == AF_INET ? 4 : 16) == 0;
}

/* --- deciding ----------------------------------------------------------------- */

const char *
conn_reason_token(enum policy_reason r)
{
	switch (r) {
	case POLICY_R_ALLOWED:		return "allowed";
	case POLICY_R_DENY_RULE:	return "deny_rule";
	case POLICY_R_HOST_NOT_ALLOWED:	return "host_not_allowed";
	case POLICY_R_PORT_NOT_ALLOWED:	return "port_not_allowed";
	case POLICY_R_ADDR_CLASS:	return "address_denied";
	case POLICY_R_REQUEST_DENIED:	return "request_denied";
	case POLICY_R_REQUEST_NOT_ALLOWED: return "request_not_allowed";
	case POLICY_R_REQUEST_BAD_PATH:	return "bad_path";
	case POLICY_R_REQUEST_METHOD:	return "method_refused";
	}
	return "denied";
}

static void
deny_decision(struct gate_conn *c, const struct policy_decision *d)
{
	if (d->rule != NULL)
		policy_rule_describe(d->rule, c->d->rule, sizeof(c->d->rule));
	conn_deny(c, d->reason, conn_reason_token(d->reason),
	    policy_reason_str(d->reason), NULL);
}

/*
 * --learn: the policy's decision on the name and port is kept for the
 * audit lines ("would") and the connection goes on as if allowed, with
 * the rule that decided (a deny rule too) as its rule.  Nothing after this
 * changes: every address is still classified, and the denied ranges and
 * the gate's own address are refused as ever.
 */
static void
learn(struct gate_conn *c, struct policy_decision *d)
{
	c->would = conn_reason_token(d->reason);
	d->verdict = POLICY_ALLOW;
}

/* The socket address of a, port: conn_dial_addr's. */
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
 * many; when none, detail says why the first was refused and *first is
 * the first refused that allow_ranges could exempt (family 0: none; the
 * gate's own address never is).
 */
static size_t
classify(struct gate_conn *c, const struct policy_addr *in, size_t n,
    char *detail, size_t dlen, struct policy_addr *first)
{
	size_t		 i, kept = 0;
	char		 ip[INET6_ADDRSTRLEN];
	const char	*cls;

	detail[0] = '\0';
	memset(first, 0, sizeof(*first));
	for (i = 0; i < n; i++) {
		policy_addr_str(&in[i], ip, sizeof(ip));
		if ((cls = policy_classify(c->d->pol, &in[i])) == NULL &&
		    gate_is_self(c->g, &in[i], c->d->tgt.port))
			cls = "the gate itself";
		else if (cls != NULL && first->family == 0)
			*first = in[i];
		if (cls != NULL) {
			log_debug("conn %llu: %s: %s is %s, not dialled",
			    (unsigned long long)c->id, c->d->tgt.host, ip, cls);
			if (detail[0] == '\0')
				snprintf(detail, dlen, "%s is %s", ip, cls);
			continue;
		}
		c->d->addrs[kept++] = in[i];
	}
	c->d->naddrs = kept;
	return kept;
}

/*
 * The one way from addresses to a socket: the answer for a name (stale:
 * past its TTL), or the address a target names itself.  Dial those that
 * classify() keeps, or deny by address class when it keeps none.
 */
static void
dial_classified(struct gate_conn *c, const struct policy_addr *addrs,
    size_t n, int stale)
{
	char			 detail[DETAIL_MAX];
	struct policy_addr	 first;

	if (stale) {
		c->g->num->ctr.dns_stale++;
		c->d->stale = 1;
	}
	if (classify(c, addrs, n, detail, sizeof(detail), &first) == 0) {
		conn_deny(c, POLICY_R_ADDR_CLASS, "address_denied", detail,
		    first.family != 0 ? &first : NULL);
		return;
	}
	conn_dial(c);
}

static void
dns_done(void *arg, int status, const char *err,
    const struct policy_addr *addrs, size_t n, int stale)
{
	struct gate_conn	*c = arg;

	c->dns_ms = gate_ms_since(&c->d->t_dns);
	if (status == -1) {
		c->g->num->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", err);
		return;
	}
	dial_classified(c, addrs, n, stale);
}

static void
resolve(struct gate_conn *c)
{
	struct policy_addr	 addrs[GATE_MAX_ADDRS];
	size_t			 n;
	int			 stale = 0;

	clock_gettime(CLOCK_MONOTONIC, &c->d->t_dns);
	if ((n = gate_dns_cached(c->g->dns, c->d->tgt.host, addrs,
	    &stale)) != 0) {
		c->dns_ms = 0;
		dial_classified(c, addrs, n, stale);
		return;
	}
	c->state = S_RESOLVE;
	conn_arm(c, c->g->cfg.dns_timeout + 2);
	if (gate_dns_resolve(c->g->dns, c->d->tgt.host, &c->d->dnsw, dns_done,
	    c) == -1) {
		c->g->num->ctr.dns_failed++;
		conn_refuse(c, 502, "error", "dns_failed", "resolver busy");
	}
}

/*
 * The upstream socket is the gate's own until the tunnel needs
 * bufferevents: one edge-triggered event (conn_raw_cb) sees the connect
 * end and then, for a raw tunnel, carries on as its relay event: no
 * epoll_ctl between the connect and the close.
 */
void
conn_up_drop(struct gate_conn *c)
{
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	if (c->ev[1] != NULL) {
		event_free(c->ev[1]);
		c->ev[1] = NULL;
	}
	if (c->fd[1] != -1) {
		close(c->fd[1]);
		c->fd[1] = -1;
	}
	c->rd[1] = c->wr[1] = c->hup[1] = 0;
}

/*
 * A new socket to address a, the request's port, its connect under way
 * (non-blocking) or done: the one way the gate dials an upstream, for a
 * connection's dials (conn_dial) and for an inspected connection's dial
 * again when its kept leg went stale (conn_inspect_redial), so that the
 * two cannot differ.  The socket is TCP_NODELAY from the start (a relay
 * adds no delay of its own), and the connect's time (connect_ms) counts
 * from here.  Returns the socket, or -1 with errno set.
 */
int
conn_dial_addr(struct gate_conn *c, const struct policy_addr *a)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	int			 fd, e;

	sockaddr_of(a, c->d->tgt.port, &ss, &sslen);
	clock_gettime(CLOCK_MONOTONIC, &c->d->t_connect);
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	conn_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&ss, sslen) == -1 &&
	    errno != EINPROGRESS) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void
conn_dial(struct gate_conn *c)
{
	struct gate		*g = c->g;
	int			 fd;

	while (c->d->next < c->d->naddrs && c->d->tries < GATE_MAX_DIALS) {
		const struct policy_addr *a = &c->d->addrs[c->d->next++];

		c->d->tries++;
		policy_addr_str(a, c->d->addrstr, sizeof(c->d->addrstr));
		/* an inspected host: a kept upstream leg, if one waits */
		if (c->d->irule != NULL && c->tunnel &&
		    conn_inspect_reuse(c, a))
			return;
		if ((fd = conn_dial_addr(c, a)) == -1) {
			c->d->dial_errno = errno;
			c->d->timed_out = 0;
			continue;
		}
		c->fd[1] = fd;
		if (c->rec != NULL)
			conn_rec_dial(c, a, c->d->tgt.port);
		if ((c->ev[1] = event_new(g->base, fd, EV_READ | EV_WRITE |
		    EV_CLOSED | EV_PERSIST | EV_ET, conn_raw_cb, c)) == NULL ||
		    event_add(c->ev[1], NULL) == -1) {
			c->d->dial_errno = ENOMEM;
			conn_up_drop(c);
			break;
		}
		c->state = S_CONNECT;
		conn_arm(c, g->cfg.connect_timeout);
		log_debug("conn %llu: dialling %s port %u",
		    (unsigned long long)c->id, c->d->addrstr, c->d->tgt.port);
		return;
	}
	if (c->d->timed_out) {
		g->num->ctr.connect_timeout++;
		conn_refuse(c, 504, "error", "connect_timeout",
		    c->d->timed_out == 2 ? "the upstream took the connection "
		    "but its TLS handshake did not end in time (not a TLS "
		    "server?)" : "upstream did not answer");
	} else {
		g->num->ctr.connect_failed++;
		conn_refuse(c, 502, "error", "connect_failed",
		    c->d->dial_errno == ECONNREFUSED ? "connection refused" :
		    "upstream unreachable");
	}
}

/*
 * The connect of fd[1] ended (conn_raw_cb in S_CONNECT).  "Writable" alone is
 * a connect that succeeded (epoll reports a failure as EPOLLERR, which
 * libevent passes on as readable and writable): SO_ERROR is asked only
 * otherwise.
 */
void
conn_dial_done(struct gate_conn *c, short what)
{
	int		 err = 0;
	socklen_t	 len = sizeof(err);

	if ((what & (EV_READ | EV_WRITE | EV_CLOSED)) != EV_WRITE &&
	    getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == 0 && !c->wr[1])
		return;		/* not the end of the connect */
	if (err != 0) {
		c->d->dial_errno = err;
		c->d->timed_out = 0;
		log_debug("conn %llu: %s port %u: %s",
		    (unsigned long long)c->id, c->d->addrstr, c->d->tgt.port,
		    strerror(err));
		conn_up_drop(c);
		conn_dial(c);
		return;
	}
	evtimer_del(c->timer);
	conn_connected(c);
}

/* --- the request ------------------------------------------------------------- */

static void
hostport_set(struct gate_conn *c)
{
	if (c->d->tgt.is_ip && c->d->tgt.addr.family == AF_INET6)
		snprintf(c->d->hostport, sizeof(c->d->hostport), "[%s]:%u",
		    c->d->tgt.host, c->d->tgt.port);
	else
		snprintf(c->d->hostport, sizeof(c->d->hostport), "%s:%u",
		    c->d->tgt.host, c->d->tgt.port);
}

/*
 * 407: the audit line names the target the request asked for, when it
 * parses, so that a client's proxy-auth probe (libcurl's anyauth sends
 * the request without credentials first, then again with them) can be
 * told from a refusal: the launcher pairs it with the same request sent
 * again with credentials (docs/launcher.md, "Denials").  Parsed into
 * c->d->tgt before conn_auth, which names it on a 407, and cleared when
 * the credentials pass: nothing is decided on a target parsed here.
 */
static void
auth_target(struct gate_conn *c, const struct gate_http_req *req)
{
	struct gate_http_span	 auth, path;
	const char		*t = c->d->head + req->target.off;
	char			 err[128];
	int			 rc;

	if (gate_http_span_is(c->d->head, req->method, "CONNECT"))
		rc = policy_parse_target(t, req->target.len, 0, &c->d->tgt,
		    err, sizeof(err));
	else if ((rc = gate_http_split_url(t, req->target.len, &auth,
	    &path)) == 0)
		rc = policy_parse_target(t + auth.off, auth.len, 80,
		    &c->d->tgt, err, sizeof(err));
	if (rc == -1)
		memset(&c->d->tgt, 0, sizeof(c->d->tgt));
	else
		hostport_set(c);
}

/*
 * The connection's policy, and its credential checked: a Proxy-Authorization
 * value ("Basic ..."; NULL: none given) against --users (whose user's
 * policy the connection then holds) or the token file; anything goes
 * without either.  0, or -1 once refused with 407 (and answered).
 */
int
conn_auth(struct gate_conn *c, const char *value, size_t len)
{
	struct gate	*g = c->g;
	struct policy	*up = NULL;
	int		 bad = 0;

	c->d->pol = policy_ref(g->policy);
	if (g->users != NULL) {
		/* the user's own policy; the ref is the connection's */
		bad = value == NULL || gate_users_check(g->users, value, len,
		    c->d->user, sizeof(c->d->user), &up) == -1;
		if (!bad && up != NULL) {
			policy_free(c->d->pol);
			c->d->pol = policy_ref(up);
		}
	} else if (g->auth != NULL)
		bad = value == NULL || gate_auth_check(g->auth, value, len,
		    c->d->session, sizeof(c->d->session), c->cred_key) == -1;
	if (!bad)
		return 0;
	g->num->ctr.auth_failed++;
	conn_refuse(c, 407, "deny", "auth_required", value == NULL ?
	    "no credentials" : "wrong credentials");
	return -1;
}

void
conn_head_complete(struct gate_conn *c)
{
	struct gate		*g = c->g;
	struct gate_http_req	*req = c->d->req;
	struct gate_http_span	 auth;
	char			 err[128], *t;
	size_t			 tlen;

	/*
	 * Reading pauses while deciding: bytes sent early wait in the socket,
	 * and a client that half-closes after its request is still served.
	 */
	bufferevent_disable(c->cbev, EV_READ);
	snprintf(c->d->method, sizeof(c->d->method), "%.*s", (int)req->method.len,
	    c->d->head + req->method.off);
	auth_target(c, req);
	if (conn_auth(c, req->proxy_auth == -1 ? NULL : c->d->head +
	    req->hdrs[req->proxy_auth].value.off, req->proxy_auth == -1 ? 0 :
	    req->hdrs[req->proxy_auth].value.len) == -1)
		return;
	memset(&c->d->tgt, 0, sizeof(c->d->tgt));
	c->d->hostport[0] = '\0';

	/* the gate's own heads: each parses its target itself */
	if (gate_http_span_is(c->d->head, req->method, "AISB-DNS")) {
		/* DNS answered from the policy, no reply to the head */
		conn_dns_start(c);
		return;
	}
	if (gate_http_span_is(c->d->head, req->method, "AISB-TRANSPARENT")) {
		conn_transparent_start(c);
		return;
	}

	t = c->d->head + req->target.off;
	tlen = req->target.len;
	if (gate_http_span_is(c->d->head, req->method, "CONNECT")) {
		c->tunnel = 1;
		if (policy_parse_target(t, tlen, 0, &c->d->tgt, err,
		    sizeof(err)) == -1) {
			memset(&c->d->tgt, 0, sizeof(c->d->tgt));
			g->num->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target", err);
			return;
		}
	} else {
		if (gate_http_split_url(t, tlen, &auth, &c->d->path) == -1) {
			g->num->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target",
			    "only http://authority/path targets are proxied; "
			    "use CONNECT for TLS");
			return;
		}
		c->d->path.off += req->target.off;
		if (policy_parse_target(t + auth.off, auth.len, 80, &c->d->tgt,
		    err, sizeof(err)) == -1) {
			memset(&c->d->tgt, 0, sizeof(c->d->tgt));
			g->num->ctr.bad_request++;
			conn_refuse(c, 400, "error", "bad_target", err);
			return;
		}
		if (req->host != -1) {
			struct policy_target	 h;
			struct gate_http_span	 v = req->hdrs[req->host].value;

			if (policy_parse_target(c->d->head + v.off, v.len, 80, &h,
			    err, sizeof(err)) == -1 ||
			    strcmp(h.host, c->d->tgt.host) != 0 ||
			    h.port != c->d->tgt.port) {
				g->num->ctr.bad_request++;
				snprintf(c->d->hostport, sizeof(c->d->hostport),
				    "%s:%u", c->d->tgt.host, c->d->tgt.port);
				conn_refuse(c, 400, "error", "host_mismatch",
				    "the Host header does not match the "
				    "request target");
				return;
			}
		}
	}
	conn_decide(c);
}

/*
 * The target (d->tgt) is known: policy on the name and port, then the
 * address (a literal) or the resolver.  CONNECT, forwarded requests and
 * AISB-TRANSPARENT (transparent.c) all come this one way.
 */
void
conn_decide(struct gate_conn *c)
{
	struct policy_decision	 d;

	hostport_set(c);
	policy_decide(c->d->pol, &c->d->tgt, &d);
	if (c->g->cfg.learn)
		learn(c, &d);
	if (d.verdict != POLICY_ALLOW && conn_ask_covers(c, d.reason)) {
		/* --ask: a "session" answer granted this host:port */
		d.verdict = POLICY_ALLOW;
		snprintf(c->d->rule, sizeof(c->d->rule), "ask: session");
	}
	if (d.verdict != POLICY_ALLOW) {
		/* --ask: held for a person's answer, or denied now */
		if (conn_ask(c, &d) == 0)
			deny_decision(c, &d);
		return;
	}
	if (d.rule != NULL)
		policy_rule_describe(d.rule, c->d->rule, sizeof(c->d->rule));
	conn_decided(c, d.rule);
}

/*
 * Allowed, by rule (NULL: by a person's answer, ask.c): the address (a
 * literal) or the resolver, as for every allowed request.
 */
void
conn_decided(struct gate_conn *c, const struct policy_rule *rule)
{
	if (policy_rule_inspect(rule)) {
		/* inspect.c: TLS terminated; a forward: its request decided */
		c->d->irule = rule;
		if (!c->tunnel && conn_inspect_forward(c) == -1)
			return;
	}

	if (c->d->tgt.is_ip) {
		dial_classified(c, &c->d->tgt.addr, 1, 0);
		return;
	}
	resolve(c);
}
