/*
 * The relay of transparent capture: listeners, the poll loop, DNS over
 * UDP (tproxy.h, docs/enforcer.md).  What it sends the gate is built in
 * tproxy_head.c; the tool's name comes from tproxy_tool.c.
 *
 * One process, one poll(2) loop, no allocation but one object per TCP
 * client (two bounded buffers).  A failure costs the one connection it
 * happened on; only a broken loop ends the relay, and then the sandbox
 * loses transparent capture, nothing else (the filter is unchanged).
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "log.h"
#include "enforcer/tproxy.h"

#define NLISTEN		6	/* tcp4, tcp6, dns tcp4, dns tcp6, udp4, udp6 */
_Static_assert(ENF_TPROXY_MAX_UDP <= DNSMSG_EDNS_SIZE,
    "a query the relay forwards must be one the gate accepts");

#define DNS_OUT		(ENF_TPROXY_MAX_QUERIES * (ENF_TPROXY_MAX_UDP + 2))

enum lkind { L_TCP, L_DNS_TCP, L_DNS_UDP };

struct listener {
	int		 fd;
	enum lkind	 kind;
};

struct enf_tproxy {
	struct listener	 l[NLISTEN];
	size_t		 nl;
	struct sockaddr_storage gate;
	socklen_t	 gatelen;
	char		 auth[ENF_TPROXY_MAX_AUTH];	/* "" when none */
};

/* One direction of a pair: bytes read from one side, not yet written. */
struct pipebuf {
	char	 buf[ENF_TPROXY_BUF];
	size_t	 off, len;
	int	 eof;		/* the reading side said EOF */
	int	 shut;		/* shutdown(SHUT_WR) passed it on */
};

struct pair {
	int		 cfd, gfd;
	int		 connecting;	/* the gate's connect in progress */
	time_t		 last;		/* of the last byte moved */
	unsigned long	 id;
	struct pipebuf	 up;		/* client -> gate (head first) */
	struct pipebuf	 down;		/* gate -> client */
};

/* A UDP query sent to the gate, awaiting its answer (FIFO). */
struct query {
	int			 fd;	/* the listener it came on */
	struct sockaddr_storage	 from;
	socklen_t		 fromlen;
	uint16_t		 id;
	size_t			 limit;
};

struct dnsconn {
	int		 fd;		/* -1: none yet */
	int		 connecting;
	char		 out[DNS_OUT];
	size_t		 outoff, outlen;
	uint8_t		 in[ENF_TPROXY_MAX_ANSWER + 2];
	size_t		 inlen;
	struct query	 q[ENF_TPROXY_MAX_QUERIES];
	size_t		 qhead, qn;
	int		 said_http;	/* the gate's refusal logged once */
	size_t		 answered;	/* on this connection */
};

struct loop {
	struct enf_tproxy *t;
	struct pair	*pairs[ENF_TPROXY_MAX_CONNS];
	size_t		 npairs;
	unsigned long	 nextid;
	struct dnsconn	 dns;
};

/* ---- set-up ---------------------------------------------------------- */

static int
listen_on(struct enf_tproxy *t, int family, int type, uint16_t *port,
    enum lkind kind, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len;
	int			 fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(*port);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		sin6->sin6_port = htons(*port);
		len = sizeof(*sin6);
	}
	if ((fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) ==
	    -1) {
		if (family == AF_INET6 && errno == EAFNOSUPPORT)
			return 0;	/* no IPv6 at all: nothing to catch */
		snprintf(err, errlen, "relay socket: %s", strerror(errno));
		return -1;
	}
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1) {
		int	 e = errno;

		close(fd);
		/* a sandbox without ::1 has no IPv6 for us to redirect */
		if (family == AF_INET6 && (e == EADDRNOTAVAIL ||
		    e == EAFNOSUPPORT))
			return 0;
		snprintf(err, errlen, "relay bind %s port %u: %s",
		    family == AF_INET ? "127.0.0.1" : "::1", *port,
		    strerror(e));
		return -1;
	}
	if (type == SOCK_STREAM && listen(fd, 128) == -1) {
		snprintf(err, errlen, "relay listen: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		snprintf(err, errlen, "relay getsockname: %s", strerror(errno));
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? sin->sin_port : sin6->sin6_port);
	t->l[t->nl].fd = fd;
	t->l[t->nl].kind = kind;
	t->nl++;
	return 0;
}

/* The credential from the first proxy variable that names the gate. */
static void
find_auth(struct enf_tproxy *t, const struct enf_endpoint *gate)
{
	static const char *const vars[] = { "HTTPS_PROXY", "https_proxy",
	    "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy" };
	const char	*v;
	size_t		 i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if ((v = getenv(vars[i])) != NULL &&
		    enf_tproxy_auth(v, gate, t->auth, sizeof(t->auth)) == 0)
			return;
	t->auth[0] = '\0';
	log_warnx("relay: no proxy variable names the gate with a "
	    "credential; transparent connections carry none");
}

struct enf_tproxy *
enf_tproxy_open(struct enf_plan *plan, char *err, size_t errlen)
{
	struct enf_tproxy		*t;
	const struct enf_endpoint	*g;
	struct sockaddr_in		*sin;
	struct sockaddr_in6		*sin6;
	uint16_t			 port;
	size_t				 i;

	if ((g = enf_plan_relay_gate(plan)) == NULL) {
		snprintf(err, errlen, "relay: the plan has no tcp gate");
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errlen, "relay: out of memory");
		return NULL;
	}
	for (i = 0; i < NLISTEN; i++)
		t->l[i].fd = -1;
	if (g->addr.family == AF_INET) {
		sin = (struct sockaddr_in *)&t->gate;
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, g->addr.addr, 4);
		sin->sin_port = htons(g->port);
		t->gatelen = sizeof(*sin);
	} else {
		sin6 = (struct sockaddr_in6 *)&t->gate;
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, g->addr.addr, 16);
		sin6->sin6_port = htons(g->port);
		t->gatelen = sizeof(*sin6);
	}
	/* the IPv6 listener takes the port its IPv4 twin got */
	if (enf_plan_catches_tcp(plan)) {
		port = 0;
		if (listen_on(t, AF_INET, SOCK_STREAM, &port, L_TCP, err,
		    errlen) == -1 || listen_on(t, AF_INET6, SOCK_STREAM, &port,
		    L_TCP, err, errlen) == -1)
			goto fail;
		plan->relay_port = port;
	}
	if (plan->dns_gate) {
		port = 0;
		if (listen_on(t, AF_INET, SOCK_DGRAM, &port, L_DNS_UDP, err,
		    errlen) == -1 || listen_on(t, AF_INET, SOCK_STREAM, &port,
		    L_DNS_TCP, err, errlen) == -1 ||
		    listen_on(t, AF_INET6, SOCK_DGRAM, &port, L_DNS_UDP, err,
		    errlen) == -1 || listen_on(t, AF_INET6, SOCK_STREAM, &port,
		    L_DNS_TCP, err, errlen) == -1)
			goto fail;
		plan->relay_dns_port = port;
	}
	find_auth(t, g);
	return t;
fail:
	enf_tproxy_free(t);
	return NULL;
}

void
enf_tproxy_free(struct enf_tproxy *t)
{
	size_t	 i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nl; i++)
		if (t->l[i].fd != -1)
			close(t->l[i].fd);
	explicit_bzero(t->auth, sizeof(t->auth));
	free(t);
}

/* ---- the loop -------------------------------------------------------- */

static int
gate_connect(const struct enf_tproxy *t, int *connecting)
{
	int	 fd;

	if ((fd = socket(t->gate.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	*connecting = 0;
	if (connect(fd, (const struct sockaddr *)&t->gate, t->gatelen) ==
	    -1) {
		if (errno != EINPROGRESS) {
			close(fd);
			return -1;
		}
		*connecting = 1;
	}
	return fd;
}

static void
pair_free(struct loop *lp, size_t i)
{
	struct pair	*p = lp->pairs[i];

	if (p->cfd != -1)
		close(p->cfd);
	if (p->gfd != -1)
		close(p->gfd);
	free(p);
	lp->pairs[i] = lp->pairs[--lp->npairs];
	lp->pairs[lp->npairs] = NULL;
}

int
enf_tproxy_same_endpoint(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		a4 = (const struct sockaddr_in *)a;
		b4 = (const struct sockaddr_in *)b;
		return a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		a6 = (const struct sockaddr_in6 *)a;
		b6 = (const struct sockaddr_in6 *)b;
		return a6->sin6_port == b6->sin6_port &&
		    memcmp(&a6->sin6_addr, &b6->sin6_addr,
		    sizeof(a6->sin6_addr)) == 0;
	}
	return 0;
}

static void
accept_tcp(struct loop *lp, const struct listener *l)
{
	struct sockaddr_storage	 peer, orig, self;
	struct pair		*p;
	socklen_t		 plen = sizeof(peer), olen = sizeof(orig);
	socklen_t		 slen = sizeof(self);
	char			 tool[ENF_TPROXY_MAX_TOOL + 1] = "";
	char			 dialled[INET6_ADDRSTRLEN] = "";
	uint16_t		 port = 0;
	size_t			 n;
	int			 fd, rc;

	if ((fd = accept4(l->fd, (struct sockaddr *)&peer, &plen,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
		if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("relay: accept");
		return;
	}
	if (lp->npairs == ENF_TPROXY_MAX_CONNS) {
		log_warnx("relay: %d connections already; one refused",
		    ENF_TPROXY_MAX_CONNS);
		close(fd);
		return;
	}
	if (l->kind == L_TCP) {
		memset(&orig, 0, sizeof(orig));
		memset(&self, 0, sizeof(self));
		if (peer.ss_family == AF_INET6)
			rc = getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST,
			    &orig, &olen);
		else
			rc = getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &orig,
			    &olen);
		if (rc == -1) {
			/* not redirected: someone dialled the relay itself */
			log_debug("relay: a connection without an original "
			    "destination closed");
			close(fd);
			return;
		}
		/* the relay's own address: dialled, not redirected (the
		 * kernel leaves olen as it was: compare the fields) */
		if (getsockname(fd, (struct sockaddr *)&self, &slen) == 0 &&
		    enf_tproxy_same_endpoint(&self, &orig)) {
			log_debug("relay: a connection to the relay itself "
			    "closed");
			close(fd);
			return;
		}
		if (orig.ss_family == AF_INET) {
			port = ntohs(((struct sockaddr_in *)&orig)->sin_port);
			inet_ntop(AF_INET, &((struct sockaddr_in *)&orig)->
			    sin_addr, dialled, sizeof(dialled));
		} else {
			port = ntohs(((struct sockaddr_in6 *)&orig)->sin6_port);
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&orig)->
			    sin6_addr, dialled, sizeof(dialled));
		}
		enf_tproxy_tool_of(&peer, tool, sizeof(tool));
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_warnx("relay: out of memory; one connection refused");
		close(fd);
		return;
	}
	p->cfd = fd;
	p->id = ++lp->nextid;
	p->last = time(NULL);
	n = enf_tproxy_head(p->up.buf, sizeof(p->up.buf), l->kind != L_TCP,
	    port, lp->t->auth, tool, dialled);
	if (n == 0 || (p->gfd = gate_connect(lp->t, &p->connecting)) == -1) {
		log_warn("relay: connection %lu: to the gate", p->id);
		close(fd);
		explicit_bzero(p->up.buf, sizeof(p->up.buf));
		free(p);
		return;
	}
	p->up.len = n;
	lp->pairs[lp->npairs++] = p;
	log_debug("relay: connection %lu: %s port %u%s%s", p->id,
	    l->kind == L_TCP ? "transparent" : "dns", port,
	    tool[0] ? " from " : "", tool);
}

/* Moves what it can from rfd into b, and from b to wfd.  -1: pair done. */
static int
pump(int rfd, int wfd, struct pipebuf *b, short rev, short wev)
{
	ssize_t	 n;

	if ((rev & (POLLIN | POLLHUP | POLLERR)) && !b->eof &&
	    b->off + b->len < sizeof(b->buf)) {
		n = read(rfd, b->buf + b->off + b->len,
		    sizeof(b->buf) - b->off - b->len);
		if (n == 0)
			b->eof = 1;
		else if (n > 0)
			b->len += (size_t)n;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
	if ((wev & POLLOUT) && b->len > 0) {
		n = send(wfd, b->buf + b->off, b->len, MSG_NOSIGNAL);
		if (n > 0) {
			b->off += (size_t)n;
			b->len -= (size_t)n;
		} else if (n == -1 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	if (b->len == 0)
		b->off = 0;
	else if (b->off + b->len == sizeof(b->buf) && b->off > 0) {
		memmove(b->buf, b->buf + b->off, b->len);
		b->off = 0;
	}
	if (b->eof && b->len == 0 && !b->shut) {
		(void)shutdown(wfd, SHUT_WR);
		b->shut = 1;
	}
	return 0;
}

static short
want_read(const struct pipebuf *b)
{
	return !b->eof && b->off + b->len < sizeof(b->buf) ? POLLIN : 0;
}

/* ---- DNS over UDP ---------------------------------------------------- */

static void
dns_close(struct dnsconn *d, const char *why)
{
	if (d->fd == -1)
		return;
	if (d->qn > 0)
		log_debug("relay: dns connection closed (%s); %zu queries "
		    "unanswered", why, d->qn);
	close(d->fd);
	d->fd = -1;
	d->connecting = 0;
	d->outoff = d->outlen = d->inlen = 0;
	d->qhead = d->qn = 0;
	d->answered = 0;
}

static void
udp_query(struct loop *lp, const struct listener *l)
{
	struct dnsconn	*d = &lp->dns;
	struct query	*q;
	uint8_t		 msg[ENF_TPROXY_MAX_UDP + 1];
	struct sockaddr_storage from;
	socklen_t	 fromlen = sizeof(from);
	ssize_t		 n;
	size_t		 head;

	if ((n = recvfrom(l->fd, msg, sizeof(msg), 0,
	    (struct sockaddr *)&from, &fromlen)) == -1)
		return;
	/* a runt has no id to answer; an oversized query is no query */
	if (n < 12 || n > ENF_TPROXY_MAX_UDP || (msg[2] & 0x80))
		return;
	if (d->outoff > 0 && d->outoff + d->outlen + 2 + (size_t)n >
	    sizeof(d->out)) {
		memmove(d->out, d->out + d->outoff, d->outlen);
		d->outoff = 0;
	}
	if (d->qn == ENF_TPROXY_MAX_QUERIES ||
	    d->outoff + d->outlen + 2 + (size_t)n > sizeof(d->out)) {
		log_debug("relay: dns queue full; a query dropped");
		return;
	}
	if (d->fd == -1) {
		if ((d->fd = gate_connect(lp->t, &d->connecting)) == -1) {
			log_warn("relay: dns: to the gate");
			return;
		}
		head = enf_tproxy_head(d->out, sizeof(d->out), 1, 0,
		    lp->t->auth, NULL, NULL);
		d->outoff = 0;
		d->outlen = head;
	}
	q = &d->q[(d->qhead + d->qn) % ENF_TPROXY_MAX_QUERIES];
	q->fd = l->fd;
	memcpy(&q->from, &from, sizeof(from));
	q->fromlen = fromlen;
	q->id = (uint16_t)(msg[0] << 8 | msg[1]);
	q->limit = enf_tproxy_udp_limit(msg, (size_t)n);
	d->qn++;
	d->out[d->outoff + d->outlen++] = (char)(n >> 8);
	d->out[d->outoff + d->outlen++] = (char)(n & 0xff);
	memcpy(d->out + d->outoff + d->outlen, msg, (size_t)n);
	d->outlen += (size_t)n;
}

/* Each whole answer in d->in goes to the client of the oldest query. */
static void
dns_answers(struct dnsconn *d)
{
	static uint8_t	 tc[ENF_TPROXY_MAX_ANSWER];
	size_t		 off = 0;

	if (d->answered == 0 && d->inlen >= 5 &&
	    memcmp(d->in, "HTTP/", 5) == 0) {
		/* 407 or another refusal instead of an answer */
		if (!d->said_http)
			log_warnx("relay: the gate refused the DNS "
			    "connection (an HTTP answer, not DNS)");
		d->said_http = 1;
		dns_close(d, "refused");
		return;
	}
	while (d->inlen - off >= 2) {
		size_t		 len = (size_t)(d->in[off] << 8 | d->in[off + 1]);
		const uint8_t	*a = d->in + off + 2, *send_p;
		struct query	*q;
		size_t		 slen;

		if (d->inlen - off - 2 < len)
			break;
		off += 2 + len;
		if (d->qn == 0 || len < 12) {
			dns_close(d, "an answer nobody asked for");
			return;
		}
		q = &d->q[d->qhead];
		d->answered++;
		d->qhead = (d->qhead + 1) % ENF_TPROXY_MAX_QUERIES;
		d->qn--;
		if ((uint16_t)(a[0] << 8 | a[1]) != q->id) {
			dns_close(d, "answers out of order");
			return;
		}
		send_p = a;
		slen = len;
		if (len > q->limit) {
			slen = dnsmsg_truncate(a, len, tc, sizeof(tc), q->limit);
			send_p = tc;
		}
		if (slen > 0)
			(void)sendto(q->fd, send_p, slen, MSG_NOSIGNAL,
			    (struct sockaddr *)&q->from, q->fromlen);
	}
	if (off > 0) {
		memmove(d->in, d->in + off, d->inlen - off);
		d->inlen -= off;
	}
}

static void
dns_io(struct dnsconn *d, short rev)
{
	ssize_t	 n;
	int	 e = 0;
	socklen_t el = sizeof(e);

	if (d->connecting && (rev & (POLLOUT | POLLERR | POLLHUP))) {
		if (getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &e, &el) == -1 ||
		    e != 0) {
			log_warnx("relay: dns: to the gate: %s",
			    strerror(e != 0 ? e : errno));
			dns_close(d, "connect");
			return;
		}
		d->connecting = 0;
	}
	if (d->connecting)
		return;
	if ((rev & POLLOUT) && d->outlen > 0) {
		n = send(d->fd, d->out + d->outoff, d->outlen, MSG_NOSIGNAL);
		if (n > 0) {
			d->outoff += (size_t)n;
			d->outlen -= (size_t)n;
			if (d->outlen == 0)
				d->outoff = 0;
		} else if (n == -1 && errno != EAGAIN && errno != EINTR) {
			dns_close(d, "write");
			return;
		}
	}
	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		n = read(d->fd, d->in + d->inlen, sizeof(d->in) - d->inlen);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			dns_close(d, n == 0 ? "closed by the gate" : "read");
			return;
		}
		if (n > 0) {
			d->inlen += (size_t)n;
			dns_answers(d);
		}
	}
}

/* ---- main loop ------------------------------------------------------- */

static void __attribute__((noreturn))
serve(struct enf_tproxy *t)
{
	static struct loop	 lp;
	struct pollfd		 pfd[NLISTEN + 1 + 2 * ENF_TPROXY_MAX_CONNS];
	size_t			 i, n;

	lp.t = t;
	lp.dns.fd = -1;
	for (;;) {
		time_t	 now;

		n = 0;
		for (i = 0; i < t->nl; i++) {
			pfd[n].fd = t->l[i].fd;
			pfd[n].events = POLLIN;
			n++;
		}
		pfd[n].fd = lp.dns.fd;
		pfd[n].events = lp.dns.fd == -1 ? 0 : lp.dns.connecting ?
		    POLLOUT : (short)(POLLIN | (lp.dns.outlen ? POLLOUT : 0));
		n++;
		/*
		 * A side with nothing to wait for is left out (fd -1): a
		 * hung-up socket would otherwise wake the loop at once,
		 * every time, until the other side moved.
		 */
		for (i = 0; i < lp.npairs; i++) {
			struct pair	*p = lp.pairs[i];

			pfd[n].events = p->connecting ? 0 :
			    (short)(want_read(&p->up) |
			    (p->down.len ? POLLOUT : 0));
			pfd[n].fd = pfd[n].events ? p->cfd : -1;
			n++;
			pfd[n].events = p->connecting ? POLLOUT :
			    (short)(want_read(&p->down) |
			    (p->up.len ? POLLOUT : 0));
			pfd[n].fd = pfd[n].events ? p->gfd : -1;
			n++;
		}
		if (poll(pfd, n, 1000) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("relay: poll");
			_exit(1);
		}
		now = time(NULL);
		/* pairs first: accepting moves the array */
		for (i = lp.npairs; i-- > 0; ) {
			struct pair	*p = lp.pairs[i];
			struct pollfd	*c = &pfd[t->nl + 1 + 2 * i];
			struct pollfd	*g = c + 1;
			int		 e = 0;
			socklen_t	 el = sizeof(e);

			if (c->revents | g->revents)
				p->last = now;
			if (p->connecting && g->revents) {
				if (getsockopt(p->gfd, SOL_SOCKET, SO_ERROR,
				    &e, &el) == -1 || e != 0) {
					log_warnx("relay: connection %lu: to "
					    "the gate: %s", p->id,
					    strerror(e ? e : errno));
					pair_free(&lp, i);
					continue;
				}
				p->connecting = 0;
				g->revents = POLLOUT;
			}
			if (p->connecting) {
				if (now - p->last > ENF_TPROXY_IDLE_S)
					pair_free(&lp, i);
				continue;
			}
			if (pump(p->cfd, p->gfd, &p->up, c->revents,
			    g->revents) == -1 ||
			    pump(p->gfd, p->cfd, &p->down, g->revents,
			    c->revents) == -1 ||
			    (p->up.shut && p->down.shut) ||
			    now - p->last > ENF_TPROXY_IDLE_S) {
				pair_free(&lp, i);
				continue;
			}
		}
		if (lp.dns.fd != -1 && pfd[t->nl].revents)
			dns_io(&lp.dns, pfd[t->nl].revents);
		for (i = 0; i < t->nl; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (t->l[i].kind == L_DNS_UDP)
				udp_query(&lp, &t->l[i]);
			else
				accept_tcp(&lp, &t->l[i]);
		}
	}
}

pid_t
enf_tproxy_start(struct enf_tproxy *t, const struct enf_creds *creds,
    char *err, size_t errlen)
{
	int	 ready[2], keep[NLISTEN + 1];
	pid_t	 pid, parent = getpid();
	size_t	 i;
	ssize_t	 n;
	char	 c;

	if (pipe2(ready, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "relay: pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "relay: fork: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0) {
		char	 e[256];

		close(ready[0]);
		for (i = 0; i < t->nl; i++)
			keep[i] = t->l[i].fd;
		keep[t->nl] = ready[1];
		if (enf_close_fds(keep, t->nl + 1, e, sizeof(e)) == -1 ||
		    enf_drop_all(creds, e, sizeof(e)) == -1) {
			log_warnx("relay: %s", e);
			_exit(1);
		}
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
		    getppid() != parent)
			_exit(1);
		signal(SIGPIPE, SIG_IGN);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		serve(t);
	}
	close(ready[1]);
	while ((n = read(ready[0], &c, 1)) == -1 && errno == EINTR)
		;
	close(ready[0]);
	if (n != 1) {
		snprintf(err, errlen, "the relay of transparent capture did "
		    "not start (see its message above)");
		return -1;
	}
	return pid;
}
