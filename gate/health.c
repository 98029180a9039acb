/*
 * The gate's health, for the probes of an orchestrator (Kubernetes'
 * kubelet, a load balancer): answered on the metrics listener (metrics.c)
 * as GET /healthz and GET /readyz.
 *
 *   /healthz  200 "ok": the process is up and its event loop answers.
 *             Nothing else is asked: a liveness probe that failed on a
 *             dependency would restart a gate that is fine.
 *   /readyz   200 "ready: ..." when the gate listens (not draining after
 *             SIGTERM), holds a policy, and its resolver answers; else
 *             503 "not ready: WHY".  The resolver is asked for the root's
 *             NS records; any DNS response within --dns-timeout, whatever
 *             its rcode, is an answer (the resolver is reachable and speaks
 *             DNS; which names it resolves is the policy's business), a
 *             time-out or a refused exchange is none.
 *
 * One probe at a time per process: scrapes that arrive while it is out
 * wait for it (their deadline is the scrape's, metrics.c), and its result
 * serves every /readyz of the next HEALTH_DNS_FRESH_MS, so a flood of
 * probes costs at most one DNS query every two seconds.  The probe is
 * started from a zero-delay event of the loop, never from inside
 * gate_health_ready(): c-ares fails some queries at once, and a scrape
 * must not be answered (and maybe freed) while it is being read.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "gate/gate.h"

#define HEALTH_DNS_FRESH_MS	2000	/* a result serves this long */

struct gate_health {
	struct gate			*g;
	struct event			*kick;		/* starts the probe */
	struct gate_dns_probe		 probe;
	int				 in_flight;
	int				 have;		/* a result is known */
	int				 answered;
	char				 why[64];
	struct timespec			 at;		/* of the result */
	TAILQ_HEAD(, gate_health_wait)	 waiters;
};

static long
ms_since(const struct timespec *t)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000;
}

/*
 * The answer from what is known now: 1 ready, 0 not, with the text of the
 * body (one line) in buf.
 */
static int
status(const struct gate_health *h, char *buf, size_t len)
{
	const struct gate	*g = h->g;
	char			 addr[128];

	if (g->draining || g->listener == NULL) {
		snprintf(buf, len, "not ready: draining (SIGTERM): new "
		    "connections are refused\n");
		return 0;
	}
	if (g->policy == NULL) {
		snprintf(buf, len, "not ready: no policy\n");
		return 0;
	}
	if (!h->answered) {
		snprintf(buf, len, "not ready: DNS not answering (%s)\n",
		    h->why);
		return 0;
	}
	gate_sockaddr_str(&g->bound, addr, sizeof(addr));
	snprintf(buf, len, "ready: listening on %s, policy sha256:%.12s "
	    "(%zu rule%s), DNS answering\n", addr, policy_sha256(g->policy),
	    policy_rule_count(g->policy),
	    policy_rule_count(g->policy) == 1 ? "" : "s");
	return 1;
}

/* Every waiting scrape gets the result; each is unlinked before its call. */
static void
probe_done(void *arg, int answered, const char *why)
{
	struct gate_health	*h = arg;
	struct gate_health_wait	*w;
	char			 text[256];
	int			 ready;

	h->in_flight = 0;
	h->have = 1;
	h->answered = answered;
	snprintf(h->why, sizeof(h->why), "%s", why != NULL ? why : "");
	clock_gettime(CLOCK_MONOTONIC, &h->at);
	if (!answered)
		log_debug("health: the resolver does not answer: %s", h->why);
	while ((w = TAILQ_FIRST(&h->waiters)) != NULL) {
		TAILQ_REMOVE(&h->waiters, w, entry);
		w->h = NULL;
		ready = status(h, text, sizeof(text));
		w->cb(w->arg, ready, text);
	}
}

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_health	*h = arg;

	(void)fd;
	(void)what;
	if (h->in_flight || TAILQ_EMPTY(&h->waiters))
		return;
	h->in_flight = 1;
	if (gate_dns_probe(h->g->dns, &h->probe, probe_done, h) == -1)
		probe_done(h, 0, "out of memory");
}

struct gate_health *
gate_health_new(struct gate *g)
{
	struct gate_health	*h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->g = g;
	TAILQ_INIT(&h->waiters);
	if ((h->kick = event_new(g->base, -1, 0, kick_cb, h)) == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

/* Waiters must have been cancelled (their scrapes freed) first. */
void
gate_health_free(struct gate_health *h)
{
	struct gate_health_wait	*w;

	if (h == NULL)
		return;
	while ((w = TAILQ_FIRST(&h->waiters)) != NULL) {
		TAILQ_REMOVE(&h->waiters, w, entry);
		w->h = NULL;
	}
	gate_dns_probe_cancel(&h->probe);
	event_free(h->kick);
	free(h);
}

/*
 * /readyz: 1 (ready) or 0 (not), with the body's line in text; or -1:
 * the resolver is being asked, and cb(arg, ready, text) follows from the
 * loop, unless gate_health_cancel(w) comes first.
 */
int
gate_health_ready(struct gate_health *h, struct gate_health_wait *w,
    void (*cb)(void *, int, const char *), void *arg, char *text,
    size_t len)
{
	int	 ready = status(h, text, len);

	/* what does not depend on DNS is answered at once */
	if (h->g->draining || h->g->listener == NULL || h->g->policy == NULL)
		return ready;
	if (h->have && !h->in_flight && ms_since(&h->at) < HEALTH_DNS_FRESH_MS)
		return ready;
	w->h = h;
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&h->waiters, w, entry);
	if (!h->in_flight)
		event_active(h->kick, 0, 0);
	return -1;
}

void
gate_health_cancel(struct gate_health_wait *w)
{
	if (w->h == NULL)
		return;
	TAILQ_REMOVE(&w->h->waiters, w, entry);
	w->h = NULL;
}
