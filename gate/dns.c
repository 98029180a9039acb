/*
 * Name resolution for aisb-gate: c-ares driven by the gate's event loop,
 * and a per-name cache that is also the pin.
 *
 * c-ares tells us which sockets it wants watched through its socket-state
 * callback; each becomes a persistent libevent event, and one timer follows
 * ares_timeout().  Queries are only ever started from a zero-delay event
 * (dns_kick), so a caller of gate_dns_resolve() is never called back before
 * it returns.
 *
 * The cache keeps the last good answer of each name for its TTL clamped to
 * the policy's [min_ttl, max_ttl].  Within that time every request for the
 * name gets the same addresses, and each connection classifies the copy it
 * is given and dials only addresses of that copy: a later answer can never
 * reach a dial without being classified first (DNS rebinding).  When an
 * expired name fails to resolve again, its last answer is served for a
 * grace period and the fact logged.  Failures are not cached.
 *
 * When the policy's DNS servers change on reload, a new c-ares channel is
 * made and the old one retired: c-ares 1.18 cannot change servers while
 * queries are outstanding, so the old channel finishes them and is
 * destroyed once idle.
 *
 * Bounds: DNS_MAX_ENTRIES names (least recently used evicted),
 * GATE_MAX_ADDRS addresses per name, names of POLICY_MAX_NAME bytes.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ares.h>
#include <event2/event.h>

#include "log.h"
#include "gate/gate.h"

#define DNS_MAX_ENTRIES		4096
#define DNS_BUCKETS		1024
#define DNS_TRIES		2
#define DNS_SERVERS_CSV		(POLICY_MAX_DNS_SERVERS * 64)

struct dns_resolver;

struct gate_dns_entry {
	char				 name[POLICY_MAX_NAME + 1];
	struct gate_dns_entry		*hnext;
	TAILQ_ENTRY(gate_dns_entry)	 lru;
	TAILQ_ENTRY(gate_dns_entry)	 kick;		/* waiting to be sent */
	TAILQ_HEAD(, gate_dns_wait)	 waiters;
	struct gate_dns			*dns;
	struct policy_addr		 addrs[GATE_MAX_ADDRS];
	size_t				 naddrs;	/* 0: no good answer yet */
	struct timespec			 expires;	/* resolve again from then */
	struct timespec			 good_until;	/* end of the answer's TTL */
	int				 queued;
	int				 resolving;
};

struct dns_sock {
	LIST_ENTRY(dns_sock)	 entry;
	ares_socket_t		 fd;
	struct event		*ev;
};

struct dns_resolver {
	TAILQ_ENTRY(dns_resolver)	 entry;
	struct gate_dns			*dns;
	ares_channel			 ch;
	struct event			*timer;
	LIST_HEAD(, dns_sock)		 socks;
	unsigned			 pending;
	char				 servers[DNS_SERVERS_CSV];
};

struct gate_dns {
	struct event_base		*base;
	struct dns_resolver		*cur;
	TAILQ_HEAD(, dns_resolver)	 retired;
	struct event			*kick;
	struct event			*reaper;
	TAILQ_HEAD(, gate_dns_entry)	 kickq;
	TAILQ_HEAD(, gate_dns_entry)	 lru;
	struct gate_dns_entry		*buckets[DNS_BUCKETS];
	size_t				 nentries;
	unsigned			 min_ttl, max_ttl, grace, timeout;
	struct gate_stats		*stats;		/* NULL: not counted */
};

static void	 resolver_timer_update(struct dns_resolver *);

static void
now_mono(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static int
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static unsigned
hash_name(const char *s)
{
	uint32_t	 h = 2166136261u;	/* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % DNS_BUCKETS;
}

/* --- c-ares in the event loop ------------------------------------------ */

static void
sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_resolver	*r = arg;

	ares_process_fd(r->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	resolver_timer_update(r);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_resolver	*r = arg;

	ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	resolver_timer_update(r);
}

static void
resolver_timer_update(struct dns_resolver *r)
{
	struct timeval	 tv, *tvp;

	if ((tvp = ares_timeout(r->ch, NULL, &tv)) != NULL)
		evtimer_add(r->timer, tvp);
	else
		evtimer_del(r->timer);
}

static void
sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct dns_resolver	*r = data;
	struct dns_sock		*s;
	short			 what;

	LIST_FOREACH(s, &r->socks, entry)
		if (s->fd == fd)
			break;
	if (!readable && !writable) {
		if (s != NULL) {
			LIST_REMOVE(s, entry);
			event_free(s->ev);
			free(s);
		}
		return;
	}
	what = EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL) {
			log_warn("dns: socket watch");
			return;		/* the query times out */
		}
		s->fd = fd;
		LIST_INSERT_HEAD(&r->socks, s, entry);
	} else {
		event_free(s->ev);
		s->ev = NULL;
	}
	if ((s->ev = event_new(r->dns->base, fd, what, sock_cb, r)) == NULL ||
	    event_add(s->ev, NULL) == -1)
		log_warnx("dns: cannot watch socket %d", (int)fd);
}

static void
resolver_free(struct dns_resolver *r)
{
	struct dns_sock	*s;

	if (r == NULL)
		return;
	if (r->ch != NULL)
		ares_destroy(r->ch);	/* fails what is left: ARES_EDESTRUCTION */
	while ((s = LIST_FIRST(&r->socks)) != NULL) {
		LIST_REMOVE(s, entry);
		event_free(s->ev);
		free(s);
	}
	if (r->timer != NULL)
		event_free(r->timer);
	free(r);
}

static void
servers_csv(const struct policy *p, char *buf, size_t len)
{
	size_t	 i, n = 0;

	buf[0] = '\0';
	for (i = 0; p != NULL && i < policy_dns_server_count(p); i++) {
		int	 w = snprintf(buf + n, len - n, "%s%s", i ? "," : "",
		    policy_dns_server_at(p, i));

		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

static struct dns_resolver *
resolver_new(struct gate_dns *dns, const char *servers)
{
	struct dns_resolver	*r;
	struct ares_options	 o;
	char			 lookups[] = "b";	/* DNS only, no hosts file */
	int			 rc;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->dns = dns;
	LIST_INIT(&r->socks);
	snprintf(r->servers, sizeof(r->servers), "%s", servers);
	if ((r->timer = evtimer_new(dns->base, timer_cb, r)) == NULL)
		goto fail;

	memset(&o, 0, sizeof(o));
	o.flags = ARES_FLAG_NOSEARCH;
	/* c-ares doubles the timeout on the second round: t/3 + 2t/3 = t */
	o.timeout = (int)(dns->timeout * 1000 / 3);
	o.tries = DNS_TRIES;
	o.lookups = lookups;
	o.sock_state_cb = sock_state_cb;
	o.sock_state_cb_data = r;
	rc = ares_init_options(&r->ch, &o, ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS |
	    ARES_OPT_TRIES | ARES_OPT_LOOKUPS | ARES_OPT_SOCK_STATE_CB);
	if (rc != ARES_SUCCESS) {
		log_warnx("dns: ares_init_options: %s", ares_strerror(rc));
		r->ch = NULL;
		goto fail;
	}
	if (servers[0] != '\0' &&
	    (rc = ares_set_servers_ports_csv(r->ch, servers)) != ARES_SUCCESS) {
		log_warnx("dns: servers \"%s\": %s", servers, ares_strerror(rc));
		goto fail;
	}
	return r;
 fail:
	resolver_free(r);
	return NULL;
}

static void
reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_dns		*dns = arg;
	struct dns_resolver	*r, *next;

	for (r = TAILQ_FIRST(&dns->retired); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->pending != 0)
			continue;
		TAILQ_REMOVE(&dns->retired, r, entry);
		resolver_free(r);
	}
}

/* --- the cache ----------------------------------------------------------- */

static struct gate_dns_entry *
entry_find(struct gate_dns *dns, const char *name)
{
	struct gate_dns_entry	*e;

	for (e = dns->buckets[hash_name(name)]; e != NULL; e = e->hnext)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static void
entry_unlink(struct gate_dns *dns, struct gate_dns_entry *e)
{
	struct gate_dns_entry	**pp;

	for (pp = &dns->buckets[hash_name(e->name)]; *pp != e;
	    pp = &(*pp)->hnext)
		;
	*pp = e->hnext;
	TAILQ_REMOVE(&dns->lru, e, lru);
	dns->nentries--;
}

static int
entry_busy(const struct gate_dns_entry *e)
{
	return e->queued || e->resolving || !TAILQ_EMPTY(&e->waiters);
}

static struct gate_dns_entry *
entry_new(struct gate_dns *dns, const char *name)
{
	struct gate_dns_entry	*e;
	unsigned		 h;

	if (dns->nentries >= DNS_MAX_ENTRIES) {
		TAILQ_FOREACH(e, &dns->lru, lru)
			if (!entry_busy(e))
				break;
		if (e == NULL)
			return NULL;
		entry_unlink(dns, e);
		free(e);
	}
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->dns = dns;
	TAILQ_INIT(&e->waiters);
	h = hash_name(name);
	e->hnext = dns->buckets[h];
	dns->buckets[h] = e;
	TAILQ_INSERT_TAIL(&dns->lru, e, lru);
	dns->nentries++;
	return e;
}

/*
 * Call every waiter of e once.  Each is unlinked before its callback runs,
 * so a callback may free its connection (and cancel other waits) safely.
 */
static void
entry_dispatch(struct gate_dns_entry *e, int status, const char *err,
    int stale)
{
	struct gate_dns_wait	*w;
	struct policy_addr	 copy[GATE_MAX_ADDRS];
	size_t			 n = status == 0 ? e->naddrs : 0;

	memcpy(copy, e->addrs, n * sizeof(copy[0]));
	while ((w = TAILQ_FIRST(&e->waiters)) != NULL) {
		TAILQ_REMOVE(&e->waiters, w, entry);
		w->owner = NULL;
		w->cb(w->arg, status, err, copy, n, stale);
	}
}

static const char *
dns_strerror(int status)
{
	switch (status) {
	case ARES_ENOTFOUND:
		return "name not found";
	case ARES_ENODATA:
		return "no address for the name";
	case ARES_ETIMEOUT:
		return "timeout";
	case ARES_ECONNREFUSED:
		return "server refused";
	case ARES_ESERVFAIL:
		return "server failure";
	default:
		return ares_strerror(status);
	}
}

/* One query in flight: which entry it fills, which channel carries it. */
struct dns_query {
	struct gate_dns_entry	*e;
	struct dns_resolver	*r;
	struct timespec		 sent;		/* for the latency histogram */
};

static void
addrinfo_cb(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct dns_query		*q = arg;
	struct gate_dns_entry		*e = q->e;
	struct gate_dns			*dns = e->dns;
	struct ares_addrinfo_node	*node;
	struct policy_addr		 a[GATE_MAX_ADDRS];
	struct timespec			 now;
	size_t				 n = 0, i;
	long				 ttl = -1;
	struct timespec			 sent = q->sent;

	q->r->pending--;
	if (q->r != dns->cur && q->r->pending == 0)
		event_active(dns->reaper, 0, 0);
	free(q);
	if (status == ARES_EDESTRUCTION) {
		e->resolving = 0;
		entry_dispatch(e, -1, "resolver shut down", 0);
		return;
	}

	for (node = res != NULL ? res->nodes : NULL; node != NULL && n <
	    GATE_MAX_ADDRS; node = node->ai_next) {
		struct policy_addr	 pa;

		memset(&pa, 0, sizeof(pa));
		if (node->ai_family == AF_INET) {
			pa.family = AF_INET;
			memcpy(pa.bytes, &((struct sockaddr_in *)
			    (void *)node->ai_addr)->sin_addr, 4);
		} else if (node->ai_family == AF_INET6) {
			pa.family = AF_INET6;
			memcpy(pa.bytes, &((struct sockaddr_in6 *)
			    (void *)node->ai_addr)->sin6_addr, 16);
		} else
			continue;
		for (i = 0; i < n; i++)
			if (a[i].family == pa.family &&
			    memcmp(a[i].bytes, pa.bytes, 16) == 0)
				break;
		if (i < n)
			continue;
		a[n++] = pa;
		if (ttl == -1 || node->ai_ttl < ttl)
			ttl = node->ai_ttl < 0 ? 0 : node->ai_ttl;
	}
	if (res != NULL)
		ares_freeaddrinfo(res);
	if (status == ARES_SUCCESS && n == 0)
		status = ARES_ENODATA;

	now_mono(&now);
	gate_metrics_dns(dns->stats, (double)(now.tv_sec - sent.tv_sec) +
	    (double)(now.tv_nsec - sent.tv_nsec) / 1e9, status != ARES_SUCCESS);
	if (status == ARES_SUCCESS) {
		if (ttl < (long)dns->min_ttl)
			ttl = dns->min_ttl;
		if (ttl > (long)dns->max_ttl)
			ttl = dns->max_ttl;
		memcpy(e->addrs, a, n * sizeof(a[0]));
		e->naddrs = n;
		e->expires = now;
		e->expires.tv_sec += ttl;
		e->good_until = e->expires;
		log_debug("dns: %s: %zu address(es), pinned for %lds",
		    e->name, n, ttl);
		e->resolving = 0;
		entry_dispatch(e, 0, NULL, 0);
		return;
	}

	e->resolving = 0;
	if (e->naddrs != 0) {
		struct timespec	 until = e->good_until;

		until.tv_sec += dns->grace;
		if (ts_before(&now, &until)) {
			log_warnx("dns: %s: refresh failed (%s), serving the "
			    "last answer for up to %lds more", e->name,
			    dns_strerror(status),
			    (long)(until.tv_sec - now.tv_sec));
			/*
			 * Do not make every request of an outage wait for a
			 * look-up to fail: try again after min_ttl (at least
			 * a second), never past the grace period.
			 */
			e->expires = now;
			e->expires.tv_sec += dns->min_ttl ? dns->min_ttl : 1;
			if (ts_before(&until, &e->expires))
				e->expires = until;
			entry_dispatch(e, 0, NULL, 1);
			return;
		}
		e->naddrs = 0;	/* past the grace period: forget it */
	}
	entry_dispatch(e, -1, dns_strerror(status), 0);
}

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_dns			*dns = arg;
	struct gate_dns_entry		*e;
	struct ares_addrinfo_hints	 hints;
	char				 fqdn[POLICY_MAX_NAME + 2];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_flags = ARES_AI_NOSORT;	/* no probing connect(2)s */
	while ((e = TAILQ_FIRST(&dns->kickq)) != NULL) {
		struct dns_query	*q;

		TAILQ_REMOVE(&dns->kickq, e, kick);
		e->queued = 0;
		if ((q = malloc(sizeof(*q))) == NULL) {
			entry_dispatch(e, -1, "out of memory", 0);
			continue;
		}
		q->e = e;
		q->r = dns->cur;
		now_mono(&q->sent);
		/* A trailing dot: exactly this name, never a search domain. */
		snprintf(fqdn, sizeof(fqdn), "%s.", e->name);
		e->resolving = 1;
		dns->cur->pending++;
		ares_getaddrinfo(dns->cur->ch, fqdn, NULL, &hints,
		    addrinfo_cb, q);
	}
	if (dns->cur != NULL)
		resolver_timer_update(dns->cur);
}

/* --- API ------------------------------------------------------------------- */

struct gate_dns *
gate_dns_new(struct event_base *base, const struct policy *p, unsigned grace,
    unsigned timeout)
{
	struct gate_dns	*dns;
	char		 servers[DNS_SERVERS_CSV];
	int		 rc;

	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		log_warnx("dns: ares_library_init: %s", ares_strerror(rc));
		return NULL;
	}
	if ((dns = calloc(1, sizeof(*dns))) == NULL)
		return NULL;
	dns->base = base;
	dns->grace = grace;
	dns->timeout = timeout ? timeout : 1;
	dns->min_ttl = policy_dns_min_ttl(p);
	dns->max_ttl = policy_dns_max_ttl(p);
	TAILQ_INIT(&dns->retired);
	TAILQ_INIT(&dns->kickq);
	TAILQ_INIT(&dns->lru);
	if ((dns->kick = event_new(base, -1, 0, kick_cb, dns)) == NULL ||
	    (dns->reaper = event_new(base, -1, 0, reaper_cb, dns)) == NULL)
		goto fail;
	servers_csv(p, servers, sizeof(servers));
	if ((dns->cur = resolver_new(dns, servers)) == NULL)
		goto fail;
	return dns;
 fail:
	gate_dns_free(dns);
	return NULL;
}

/*
 * Apply a new policy's DNS settings.  New servers mean a new channel and an
 * empty cache (answers of the old servers are not pins of the new policy).
 * Returns -1, keeping the old settings, when the new channel cannot be made.
 */
int
gate_dns_configure(struct gate_dns *dns, const struct policy *p)
{
	struct dns_resolver	*r;
	struct gate_dns_entry	*e, *next;
	char			 servers[DNS_SERVERS_CSV];

	servers_csv(p, servers, sizeof(servers));
	if (strcmp(servers, dns->cur->servers) != 0) {
		if ((r = resolver_new(dns, servers)) == NULL)
			return -1;
		/* Queries in flight finish on the old channel. */
		for (e = TAILQ_FIRST(&dns->lru); e != NULL; e = next) {
			next = TAILQ_NEXT(e, lru);
			if (!entry_busy(e)) {
				entry_unlink(dns, e);
				free(e);
			} else
				e->naddrs = 0;
		}
		TAILQ_INSERT_TAIL(&dns->retired, dns->cur, entry);
		dns->cur = r;
		event_active(dns->reaper, 0, 0);
	}
	dns->min_ttl = policy_dns_min_ttl(p);
	dns->max_ttl = policy_dns_max_ttl(p);
	return 0;
}

void
gate_dns_free(struct gate_dns *dns)
{
	struct dns_resolver	*r;
	struct gate_dns_entry	*e;

	if (dns == NULL)
		return;
	TAILQ_INIT(&dns->kickq);
	while ((r = TAILQ_FIRST(&dns->retired)) != NULL) {
		TAILQ_REMOVE(&dns->retired, r, entry);
		resolver_free(r);
	}
	resolver_free(dns->cur);
	dns->cur = NULL;
	while ((e = TAILQ_FIRST(&dns->lru)) != NULL) {
		entry_unlink(dns, e);
		free(e);
	}
	if (dns->kick != NULL)
		event_free(dns->kick);
	if (dns->reaper != NULL)
		event_free(dns->reaper);
	free(dns);
	ares_library_cleanup();
}

/*
 * The pinned answer for name, if it is not due to be resolved again:
 * copies it to out (GATE_MAX_ADDRS entries) and returns how many, or 0.
 * *stale is set when the answer is past its TTL (served for the grace
 * period after a failed refresh).
 */
size_t
gate_dns_cached(struct gate_dns *dns, const char *name,
    struct policy_addr *out, int *stale)
{
	struct gate_dns_entry	*e;
	struct timespec		 now;

	if ((e = entry_find(dns, name)) == NULL || e->naddrs == 0)
		return 0;
	now_mono(&now);
	if (!ts_before(&now, &e->expires))
		return 0;
	TAILQ_REMOVE(&dns->lru, e, lru);
	TAILQ_INSERT_TAIL(&dns->lru, e, lru);
	memcpy(out, e->addrs, e->naddrs * sizeof(out[0]));
	*stale = !ts_before(&now, &e->good_until);
	if (dns->stats != NULL)
		dns->stats->dns_hits++;
	return e->naddrs;
}

/*
 * Resolve name (normalised, no trailing dot) and call cb(arg, ...) later,
 * from the event loop, never from inside this function.  w is the caller's
 * storage for the wait; gate_dns_cancel(w) withdraws it.  Returns 0, or -1
 * when the cache is full of names being resolved.
 */
int
gate_dns_resolve(struct gate_dns *dns, const char *name,
    struct gate_dns_wait *w, gate_dns_cb cb, void *arg)
{
	struct gate_dns_entry	*e;

	if (dns->stats != NULL)
		dns->stats->dns_misses++;
	if ((e = entry_find(dns, name)) == NULL &&
	    (e = entry_new(dns, name)) == NULL)
		return -1;
	TAILQ_REMOVE(&dns->lru, e, lru);
	TAILQ_INSERT_TAIL(&dns->lru, e, lru);
	w->cb = cb;
	w->arg = arg;
	w->owner = e;
	TAILQ_INSERT_TAIL(&e->waiters, w, entry);
	if (!e->queued && !e->resolving) {
		e->queued = 1;
		TAILQ_INSERT_TAIL(&dns->kickq, e, kick);
		event_active(dns->kick, 0, 0);
	}
	return 0;
}

void
gate_dns_cancel(struct gate_dns_wait *w)
{
	if (w->owner == NULL)
		return;
	TAILQ_REMOVE(&w->owner->waiters, w, entry);
	w->owner = NULL;
}

/* --- the health probe (health.c) ---------------------------------------- */

struct probe_query {
	struct gate_dns_probe	*p;	/* NULL once cancelled */
	struct dns_resolver	*r;
};

static void
probe_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct probe_query	*q = arg;
	struct gate_dns_probe	*p = q->p;
	struct gate_dns		*dns = q->r->dns;

	(void)timeouts;
	(void)abuf;
	(void)alen;
	q->r->pending--;
	if (q->r != dns->cur && q->r->pending == 0)
		event_active(dns->reaper, 0, 0);
	free(q);
	if (p == NULL)
		return;
	p->q = NULL;
	switch (status) {
	case ARES_SUCCESS:
	case ARES_ENODATA:
	case ARES_ENOTFOUND:
	case ARES_ESERVFAIL:
	case ARES_EREFUSED:
	case ARES_ENOTIMP:
	case ARES_EFORMERR:
		/* a response came back, whatever its rcode */
		p->cb(p->arg, 1, NULL);
		break;
	default:
		p->cb(p->arg, 0, dns_strerror(status));
		break;
	}
}

/*
 * Ask the resolver for the root's NS records, to learn whether it
 * answers at all (health.c).  cb(arg, 1, NULL) once any DNS response came
 * back, cb(arg, 0, why) on a time-out or a refused or broken exchange,
 * maybe before this returns (c-ares fails some queries at once: call it
 * from a callback of the loop's).  p is the caller's until then, or
 * until gate_dns_probe_cancel(p).  0, or -1 (out of memory).
 */
int
gate_dns_probe(struct gate_dns *dns, struct gate_dns_probe *p,
    void (*cb)(void *, int, const char *), void *arg)
{
	struct probe_query	*q;

	if ((q = malloc(sizeof(*q))) == NULL)
		return -1;
	q->p = p;
	q->r = dns->cur;
	p->cb = cb;
	p->arg = arg;
	p->q = q;
	dns->cur->pending++;
	ares_query(dns->cur->ch, ".", 1 /* C_IN */, 2 /* T_NS */, probe_cb, q);
	resolver_timer_update(dns->cur);
	return 0;
}

void
gate_dns_probe_cancel(struct gate_dns_probe *p)
{
	if (p->q != NULL)
		p->q->p = NULL;
	p->q = NULL;
}

void
gate_dns_stats(struct gate_dns *dns, struct gate_stats *st)
{
	dns->stats = st;
}

size_t
gate_dns_cache_size(const struct gate_dns *dns)
{
	return dns->nentries;
}
