/*
 * --metrics ADDR:PORT: the gate's numbers in the Prometheus text
 * exposition format (version 0.0.4), answered on GET /metrics by a
 * listener of its own in the gate's event loop.
 *
 * What is counted lives in struct gate: the counters (g->num->ctr, bumped
 * where each event happens) and g->num->st (decisions by verdict and reason,
 * the DNS look-up histogram, audit reopens).  With --workers N each
 * worker's numbers (struct gate_numbers, g->num) live in a MAP_SHARED
 * anonymous mapping made before the fork (gate_metrics_prepare,
 * gate_metrics_worker): a worker writes only its own slot, and whichever worker accepts a scrape sums
 * all of them, so the numbers are the gate's, not one worker's.  Every
 * worker watches the one metrics socket (a dead worker does not take
 * the metrics with it); the supervisor zeroes the gauges of a worker
 * that ended.  Counters are 64-bit words written by one process and read
 * whole (aligned) by the others: a scrape may see one event more in one
 * counter than in another, never a torn value.
 *
 * Bounds: a request head of GATE_METRICS_MAX_HEAD bytes, read and
 * answered within GATE_METRICS_TIMEOUT seconds; GATE_METRICS_MAX_CLIENTS
 * scrapes at once per process (more are closed at once); the parser is
 * the proxy's own (http.c).  Only "GET /metrics" is answered 200 (a query
 * string is ignored); another path is 404, another method 405, anything
 * malformed or longer 400.  A scrape never touches a proxy connection.
 * GET /healthz and GET /readyz are the probes of health.c, on the same
 * listener, under the same bounds.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/http.h"

#define GATE_METRICS_MAX_HEAD		4096	/* bytes of a scrape's request */
#define GATE_METRICS_TIMEOUT		5	/* s, to read it and answer */
#define GATE_METRICS_MAX_CLIENTS	4	/* scrapes at once, per process */
#define METRICS_BACKLOG			16

/*
 * The reason tokens of docs/gate.md, in the order they are reported; a
 * reason not in the list is counted as "other" (the last slot).
 */
static const char *const reasons[] = {
	"allowed", "deny_rule", "host_not_allowed", "port_not_allowed",
	"address_denied", "sni_mismatch", "tls_malformed", "auth_required",
	"bad_request", "bad_target", "host_mismatch", "dns_failed",
	"connect_failed", "connect_timeout", "header_timeout", "limit_total",
	"limit_client", "audit_unavailable",
	"no_sni", "no_host", "transparent_unknown",	/* AISB-TRANSPARENT */
	"upstream_tls", "client_refused_ca", "client_tls", "inspect_not_tls",
	"request_denied", "request_not_allowed", "bad_path",	/* inspect */
	"method_refused", "upgrade_refused", "upgrade_mismatch",
	"unknown_address",		/* ... to a synthetic address not given */
	"ask_full",			/* --ask: too many held already */
	"other",
};
#define NREASONS	(sizeof(reasons) / sizeof(reasons[0]))
_Static_assert(NREASONS <= GATE_REASONS_MAX, "raise GATE_REASONS_MAX");

static const char *const verdicts[GATE_DEC_N] = { "allow", "deny", "error" };

/* Upper bounds (s) of the look-up histogram; the last bucket is +Inf. */
static const double dns_le[GATE_DNS_BUCKETS - 1] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
};

struct scrape {
	LIST_ENTRY(scrape)	 entry;
	struct gate_metrics	*m;
	struct bufferevent	*bev;
	struct event		*deadline;	/* the whole scrape's time */
	struct gate_http_req	 req;
	struct gate_health_wait	 hw;		/* /readyz, waiting for DNS */
};

struct gate_metrics {
	struct gate		*g;
	struct evconnlistener	*listener;
	struct event		*pause;		/* accept resumes (EMFILE) */
	LIST_HEAD(, scrape)	 scrapes;
	unsigned		 clients;	/* scrapes in progress */
	struct gate_health	*health;	/* /healthz, /readyz */
};

/* route()'s answers besides HTTP statuses */
#define ROUTE_HEALTHZ	1
#define ROUTE_READYZ	2

/* Before the fork: the workers' struct gate, shared (NULL: one process). */
static struct gate_numbers *slots;
static unsigned		 nslots;
static time_t		 start_wall;	/* process_start_time_seconds */

/* --- counting ----------------------------------------------------------- */

void
gate_metrics_decision(struct gate *g, const char *decision,
    const char *reason)
{
	size_t	 v, r;

	if (decision == NULL || reason == NULL)
		return;
	for (v = 0; v < GATE_DEC_N; v++)
		if (strcmp(decision, verdicts[v]) == 0)
			break;
	if (v == GATE_DEC_N)
		v = GATE_DEC_ERROR;
	for (r = 0; r < NREASONS - 1; r++)
		if (strcmp(reason, reasons[r]) == 0)
			break;
	g->num->st.decisions[v][r]++;
}

void
gate_metrics_dns(struct gate_stats *st, double secs, int failed)
{
	size_t	 i;

	if (st == NULL)
		return;
	if (secs < 0)
		secs = 0;
	for (i = 0; i < GATE_DNS_BUCKETS - 1; i++)
		if (secs <= dns_le[i])
			break;
	st->dns_buckets[i]++;
	st->dns_lookups++;
	st->dns_seconds += secs;
	if (failed)
		st->dns_failures++;
}

/* --- the shared slots of --workers ---------------------------------------- */

/*
 * Before the workers are forked: the numbers of each worker in a mapping
 * they all share.  Only the numbers: a worker's configuration, policy and
 * pointers stay in its own memory, so a worker taken over through a parser
 * can at worst falsify a sibling's counts, never change what it decides.
 * Without --metrics, or with one process, nothing.
 */
void
gate_metrics_prepare(struct gate *g)
{
	start_wall = time(NULL);
	if (g->cfg.metrics_listen == NULL || g->cfg.workers < 2)
		return;
	nslots = g->cfg.workers;
	if ((slots = mmap(NULL, nslots * sizeof(*slots), PROT_READ |
	    PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		fatal("metrics: mmap of %u worker slots", nslots);
}

/* In worker i, just forked: its numbers from now on in the shared slot. */
void
gate_metrics_worker(struct gate *g, unsigned i)
{
	if (slots == NULL || i >= nslots)
		return;
	memcpy(&slots[i], g->num, sizeof(slots[i]));
	g->num = &slots[i];
}

/* In the supervisor: worker i ended; its connections are gone with it. */
void
gate_metrics_worker_gone(unsigned i)
{
	if (slots == NULL || i >= nslots)
		return;
	slots[i].ctr.active = 0;
	slots[i].ctr.tunnels = 0;
}

/* --- the listener ---------------------------------------------------------- */

/* Before privileges are dropped: the listening socket, or -1 (logged). */
int
gate_metrics_listen(const char *addr)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 fd, one = 1;

	if (gate_listen_parse(addr, &ss, &len) == -1) {
		log_warnx("--metrics %s: expected an IP address and port",
		    addr);
		return -1;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		log_warn("metrics socket");
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&ss, len) == -1 ||
	    listen(fd, METRICS_BACKLOG) == -1) {
		log_warn("metrics: listen on %s", addr);
		close(fd);
		return -1;
	}
	return fd;
}

/* --- the answer ----------------------------------------------------------- */

static void
header(struct evbuffer *o, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

static void
one(struct evbuffer *o, const char *name, const char *type,
    const char *help, unsigned long long v)
{
	header(o, name, type, help);
	evbuffer_add_printf(o, "%s %llu\n", name, v);
}

/* The sum over the workers (or the one process) of what they counted. */
static void
sum(const struct gate *g, struct gate_counters *c, struct gate_stats *s)
{
	const struct gate_numbers *w;
	unsigned		 i, n = slots != NULL ? nslots : 1;
	size_t			 j, k;

	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		w = slots != NULL ? &slots[i] : g->num;
#define ADD(f)	c->f += w->ctr.f
		ADD(accepted); ADD(active); ADD(tunnels); ADD(rejected_limit);
		ADD(rejected_audit); ADD(allowed); ADD(denied);
		ADD(bad_request); ADD(auth_failed); ADD(dns_failed);
		ADD(dns_stale); ADD(connect_failed); ADD(connect_timeout);
		ADD(header_timeout); ADD(idle_timeout); ADD(audit_errors);
		ADD(reloads); ADD(reload_failures); ADD(bytes_up);
		ADD(bytes_down); ADD(raw); ADD(bytes_spliced);
		ADD(relay_copies); ADD(pipe_shortage);
		ADD(dns_q_addr); ADD(dns_q_nodata); ADD(dns_q_nxdomain);
		ADD(dns_q_ratelimited); ADD(dns_q_error);
		ADD(transparent);
		ADD(inspected); ADD(insp_requests); ADD(insp_refused);
		ADD(insp_reused); ADD(insp_redialed);
#undef ADD
		for (j = 0; j < GATE_DEC_N; j++)
			for (k = 0; k < GATE_REASONS_MAX; k++)
				s->decisions[j][k] += w->st.decisions[j][k];
		for (j = 0; j < GATE_DNS_BUCKETS; j++)
			s->dns_buckets[j] += w->st.dns_buckets[j];
		s->dns_lookups += w->st.dns_lookups;
		s->dns_failures += w->st.dns_failures;
		s->dns_seconds += w->st.dns_seconds;
		s->dns_hits += w->st.dns_hits;
		s->dns_misses += w->st.dns_misses;
		s->reopens += w->st.reopens;
		s->reopen_failures += w->st.reopen_failures;
	}
}

static void
render(const struct gate *g, struct evbuffer *o)
{
	struct gate_counters	 c;
	struct gate_stats	 s;
	unsigned long long	 cum;
	size_t			 v, r, i;

	sum(g, &c, &s);
	header(o, "aisb_gate_decisions_total", "counter",
	    "Decisions (audit decision lines) by verdict and reason.");
	for (v = 0; v < GATE_DEC_N; v++)
		for (r = 0; r < NREASONS; r++)
			if (s.decisions[v][r] != 0 || (v == GATE_DEC_ALLOW &&
			    r == 0))
				evbuffer_add_printf(o, "aisb_gate_decisions_total"
				    "{decision=\"%s\",reason=\"%s\"} %llu\n",
				    verdicts[v], reasons[r],
				    (unsigned long long)s.decisions[v][r]);
	one(o, "aisb_gate_connections_total", "counter",
	    "Client connections accepted.", c.accepted);
	one(o, "aisb_gate_connections_active", "gauge",
	    "Client connections open now.", c.active);
	one(o, "aisb_gate_tunnels_total", "counter",
	    "Allowed connections that relayed (CONNECT tunnels and forwarded "
	    "requests).", c.allowed);
	one(o, "aisb_gate_tunnels_active", "gauge",
	    "Connections relaying now.", c.tunnels);
	one(o, "aisb_gate_transparent_total", "counter",
	    "AISB-TRANSPARENT connections: a relay's capture of a tool that "
	    "ignored the proxy variables.", c.transparent);
	one(o, "aisb_gate_inspected_total", "counter",
	    "Connections to inspected hosts with both TLS legs up.",
	    c.inspected);
	one(o, "aisb_gate_inspected_requests_total", "counter",
	    "Requests on inspected connections (one request audit line "
	    "each).", c.insp_requests);
	one(o, "aisb_gate_inspected_refused_total", "counter",
	    "Requests on inspected connections the gate answered itself "
	    "(refused, malformed, upstream failed).", c.insp_refused);
	one(o, "aisb_gate_inspected_reused_total", "counter",
	    "Inspected connections that took a kept upstream TLS connection "
	    "(no dial, no upstream handshake).", c.insp_reused);
	one(o, "aisb_gate_inspected_redialed_total", "counter",
	    "Reused upstream connections that closed under their first "
	    "request: the request was sent again on a fresh one.",
	    c.insp_redialed);
	header(o, "aisb_gate_bytes_total", "counter",
	    "Bytes relayed: up from clients, down to them.");
	evbuffer_add_printf(o, "aisb_gate_bytes_total{direction=\"up\"} %llu\n"
	    "aisb_gate_bytes_total{direction=\"down\"} %llu\n",
	    (unsigned long long)c.bytes_up, (unsigned long long)c.bytes_down);

	header(o, "aisb_gate_dns_lookup_duration_seconds", "histogram",
	    "DNS look-ups sent to the resolver, by how long they took.");
	for (i = 0, cum = 0; i < GATE_DNS_BUCKETS; i++) {
		cum += s.dns_buckets[i];
		if (i < GATE_DNS_BUCKETS - 1)
			evbuffer_add_printf(o,
			    "aisb_gate_dns_lookup_duration_seconds_bucket"
			    "{le=\"%g\"} %llu\n", dns_le[i], cum);
		else
			evbuffer_add_printf(o,
			    "aisb_gate_dns_lookup_duration_seconds_bucket"
			    "{le=\"+Inf\"} %llu\n", cum);
	}
	evbuffer_add_printf(o, "aisb_gate_dns_lookup_duration_seconds_sum %.6f\n"
	    "aisb_gate_dns_lookup_duration_seconds_count %llu\n",
	    s.dns_seconds, (unsigned long long)s.dns_lookups);
	one(o, "aisb_gate_dns_lookup_failures_total", "counter",
	    "DNS look-ups that ended without an address.", s.dns_failures);
	one(o, "aisb_gate_dns_cache_hits_total", "counter",
	    "Requests answered from the DNS cache (the pin).", s.dns_hits);
	one(o, "aisb_gate_dns_cache_misses_total", "counter",
	    "Requests that waited for a look-up.", s.dns_misses);
	one(o, "aisb_gate_dns_stale_total", "counter",
	    "Requests served a stale answer after a failed refresh.",
	    c.dns_stale);

	header(o, "aisb_gate_dns_queries_total", "counter",
	    "AISB-DNS queries, by the answer the gate gave.");
#define Q(kind, v)	evbuffer_add_printf(o, \
	    "aisb_gate_dns_queries_total{answer=\"%s\"} %llu\n", kind, \
	    (unsigned long long)(v))
	Q("address", c.dns_q_addr);
	Q("nodata", c.dns_q_nodata);
	Q("nxdomain", c.dns_q_nxdomain);
	Q("ratelimited", c.dns_q_ratelimited);
	Q("error", c.dns_q_error);
#undef Q

	header(o, "aisb_gate_errors_total", "counter", "Errors by kind.");
#define E(kind, v)	evbuffer_add_printf(o, \
	    "aisb_gate_errors_total{kind=\"%s\"} %llu\n", kind, \
	    (unsigned long long)(v))
	E("bad_request", c.bad_request);
	E("auth_failed", c.auth_failed);
	E("dns_failed", c.dns_failed);
	E("connect_failed", c.connect_failed);
	E("connect_timeout", c.connect_timeout);
	E("header_timeout", c.header_timeout);
	E("idle_timeout", c.idle_timeout);
	E("limit", c.rejected_limit);
	E("audit_unavailable", c.rejected_audit);
	E("audit_lines_lost", c.audit_errors);
	E("pipe_shortage", c.pipe_shortage);
#undef E
	header(o, "aisb_gate_reloads_total", "counter",
	    "Reloads (SIGHUP, control reload) by outcome.");
	evbuffer_add_printf(o, "aisb_gate_reloads_total{outcome=\"ok\"} %llu\n"
	    "aisb_gate_reloads_total{outcome=\"failed\"} %llu\n",
	    (unsigned long long)(c.reloads - c.reload_failures),
	    (unsigned long long)c.reload_failures);
	header(o, "aisb_gate_audit_reopens_total", "counter",
	    "Audit log reopens (SIGUSR1, SIGHUP, control reopen) by outcome.");
	evbuffer_add_printf(o,
	    "aisb_gate_audit_reopens_total{outcome=\"ok\"} %llu\n"
	    "aisb_gate_audit_reopens_total{outcome=\"failed\"} %llu\n",
	    (unsigned long long)(s.reopens - s.reopen_failures),
	    (unsigned long long)s.reopen_failures);
	one(o, "aisb_gate_workers", "gauge", "Worker processes (--workers).",
	    g->cfg.workers);
	header(o, "process_start_time_seconds", "gauge",
	    "Start time of the gate since the Unix epoch, in seconds.");
	evbuffer_add_printf(o, "process_start_time_seconds %lld\n",
	    (long long)start_wall);
}

/* --- one scrape ------------------------------------------------------------ */

static void
scrape_free(struct scrape *s)
{
	s->m->clients--;
	gate_health_cancel(&s->hw);
	LIST_REMOVE(s, entry);
	if (s->deadline != NULL)
		event_free(s->deadline);
	bufferevent_free(s->bev);
	free(s);
}

/*
 * GATE_METRICS_TIMEOUT bounds the whole scrape, request and answer: the
 * bufferevent's own timeouts restart on every byte, so a client sending
 * one byte now and then would hold its slot for hours.
 */
static void
scrape_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	scrape_free(arg);
}

static void
scrape_written(struct bufferevent *bev, void *arg)
{
	struct scrape	*s = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		scrape_free(s);
}

static void
scrape_event(struct bufferevent *bev, short what, void *arg)
{
	scrape_free(arg);
}

/* The answer, and the close; text: the body of a probe (200 or 503). */
static void
answer(struct scrape *s, int status, const char *probe)
{
	struct evbuffer	*out = bufferevent_get_output(s->bev);
	struct evbuffer	*body;
	const char	*text = "";

	bufferevent_disable(s->bev, EV_READ);
	if ((body = evbuffer_new()) == NULL) {
		scrape_free(s);
		return;
	}
	switch (status) {
	case 200:
		if (probe != NULL)
			evbuffer_add(body, probe, strlen(probe));
		else
			render(s->m->g, body);
		text = "OK";
		break;
	case 503:
		evbuffer_add(body, probe, strlen(probe));
		text = "Service Unavailable";
		break;
	case 404:
		evbuffer_add_printf(body, "aisb-gate: only /metrics is here\n");
		text = "Not Found";
		break;
	case 405:
		evbuffer_add_printf(body, "aisb-gate: only GET is answered\n");
		text = "Method Not Allowed";
		break;
	default:
		status = 400;
		evbuffer_add_printf(body, "aisb-gate: malformed request\n");
		text = "Bad Request";
		break;
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\nContent-Length: %zu\r\n%s"
	    "Connection: close\r\n\r\n", status, text, status == 200 &&
	    probe == NULL ? "text/plain; version=0.0.4; charset=utf-8" :
	    "text/plain; charset=utf-8", evbuffer_get_length(body),
	    status == 405 ? "Allow: GET\r\n" : "");
	evbuffer_add_buffer(out, body);
	evbuffer_free(body);
	bufferevent_setcb(s->bev, NULL, scrape_written, scrape_event, s);
}

/* The status a complete head asks for (req parsed by gate_http_parse). */
static int
route(const struct gate_http_req *req, const char *p)
{
	struct gate_http_span	 t = req->target;
	const char		*q;
	size_t			 len;

	if (!gate_http_span_is(p, req->method, "GET"))
		return 405;
	len = t.len;
	if ((q = memchr(p + t.off, '?', t.len)) != NULL)
		len = (size_t)(q - (p + t.off));
	if (len == 8 && memcmp(p + t.off, "/metrics", 8) == 0)
		return 200;
	if (len == 8 && memcmp(p + t.off, "/healthz", 8) == 0)
		return ROUTE_HEALTHZ;
	if (len == 7 && memcmp(p + t.off, "/readyz", 7) == 0)
		return ROUTE_READYZ;
	return 404;
}

/* health.c's answer to a /readyz that waited for the resolver. */
static void
readyz_done(void *arg, int ready, const char *text)
{
	answer(arg, ready ? 200 : 503, text);
}

static void
respond(struct scrape *s, int route)
{
	char	 text[256];
	int	 r;

	switch (route) {
	case ROUTE_HEALTHZ:
		answer(s, 200, "ok\n");
		break;
	case ROUTE_READYZ:
		if (s->m->health == NULL) {
			answer(s, 503, "not ready: out of memory\n");
			break;
		}
		bufferevent_disable(s->bev, EV_READ);
		r = gate_health_ready(s->m->health, &s->hw, readyz_done, s,
		    text, sizeof(text));
		if (r != -1)
			answer(s, r ? 200 : 503, text);
		break;
	default:
		answer(s, route, NULL);
		break;
	}
}

static void
scrape_read(struct bufferevent *bev, void *arg)
{
	struct scrape	*s = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	size_t		 len = evbuffer_get_length(in);
	const char	*p;
	ssize_t		 r;

	if (len > GATE_METRICS_MAX_HEAD)
		len = GATE_METRICS_MAX_HEAD;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		scrape_free(s);
		return;
	}
	gate_http_req_init(&s->req);	/* parse again from the start: small */
	if ((r = gate_http_parse(&s->req, p, len)) == -1) {
		answer(s, 400, NULL);
		return;
	}
	if (r == 0) {
		if (len >= GATE_METRICS_MAX_HEAD)
			answer(s, 400, NULL);
		return;
	}
	respond(s, route(&s->req, p));
}

static void
metrics_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct gate_metrics	*m = arg;
	struct scrape		*s;
	struct timeval		 tv = { GATE_METRICS_TIMEOUT, 0 };

	if (m->clients >= GATE_METRICS_MAX_CLIENTS) {
		log_debug("metrics: %u scrapes at once, closing another",
		    m->clients);
		close(fd);
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		close(fd);
		return;
	}
	s->m = m;
	if ((s->deadline = evtimer_new(m->g->base, scrape_deadline, s)) ==
	    NULL || evtimer_add(s->deadline, &tv) == -1 ||
	    (s->bev = bufferevent_socket_new(m->g->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		if (s->deadline != NULL)
			event_free(s->deadline);
		close(fd);
		free(s);
		return;
	}
	m->clients++;
	LIST_INSERT_HEAD(&m->scrapes, s, entry);
	bufferevent_setcb(s->bev, scrape_read, NULL, scrape_event, s);
	bufferevent_setwatermark(s->bev, EV_READ, 0, GATE_METRICS_MAX_HEAD);
	bufferevent_set_timeouts(s->bev, &tv, &tv);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
}

static void
metrics_resume(evutil_socket_t fd, short what, void *arg)
{
	struct gate_metrics	*m = arg;

	evconnlistener_enable(m->listener);
}

/* EMFILE and friends: the socket stays readable; pause for a second. */
static void
metrics_error(struct evconnlistener *l, void *arg)
{
	struct gate_metrics	*m = arg;
	struct timeval		 tv = { 1, 0 };
	int			 e = EVUTIL_SOCKET_ERROR();

	log_warnx("metrics: accept: %s; pausing for a second",
	    evutil_socket_error_to_string(e));
	if (evtimer_add(m->pause, &tv) == -1)
		return;
	evconnlistener_disable(l);
}

/* Serve the socket of gate_metrics_listen() in g's loop; owns fd. */
struct gate_metrics *
gate_metrics_open(struct gate *g, int fd)
{
	struct gate_metrics	*m;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		close(fd);
		return NULL;
	}
	m->g = g;
	LIST_INIT(&m->scrapes);
	/* without it /readyz says so; the metrics are served all the same */
	if ((m->health = gate_health_new(g)) == NULL)
		log_warnx("metrics: no memory for /readyz");
	if ((m->pause = evtimer_new(g->base, metrics_resume, m)) == NULL) {
		close(fd);
		gate_health_free(m->health);
		free(m);
		return NULL;
	}
	if ((m->listener = evconnlistener_new(g->base, metrics_accept, m,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) == NULL) {
		close(fd);
		event_free(m->pause);
		gate_health_free(m->health);
		free(m);
		return NULL;
	}
	evconnlistener_set_error_cb(m->listener, metrics_error);
	return m;
}

/* The listener and the scrapes in progress. */
void
gate_metrics_close(struct gate_metrics *m)
{
	struct scrape	*s;

	if (m == NULL)
		return;
	while ((s = LIST_FIRST(&m->scrapes)) != NULL)
		scrape_free(s);
	gate_health_free(m->health);
	evconnlistener_free(m->listener);
	event_free(m->pause);
	free(m);
}
