/*
 * Kept upstream legs of inspected hosts (inspect-int.h: their key and
 * bounds; docs/gate.md, "Kept upstream connections").  A connection of an
 * inspected host that ends with a clean upstream leg leaves it here
 * (conn_inspect_pool_put, from conn_inspect_free); the next inspected
 * connection of its key takes it instead of dialling (conn_inspect_reuse,
 * from conn_dial).  A kept leg reads nothing: a byte, its close, an error or
 * INSP_POOL_IDLE seconds free it.  A reused leg that ends before a byte
 * of the answer to its first request has that request sent again on a
 * fresh leg to the same address (conn_inspect_redial): the stale race of
 * an upstream closing a kept connection as the request goes out.  And
 * what a failed upstream handshake is called (conn_inspect_up_error).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/conn/inspect-int.h"

/* Why the upstream's handshake failed, for the 502 and the audit line. */
void
conn_inspect_up_error(struct bufferevent *bev, short what, char *buf,
    size_t len)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	long		 vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long	 e = bufferevent_get_openssl_error(bev);

	if (vr != X509_V_OK)
		snprintf(buf, len, "the upstream's certificate failed "
		    "verification: %s", X509_verify_cert_error_string(vr));
	else if (e != 0)
		snprintf(buf, len, "TLS with the upstream failed: %s",
		    ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "unknown error");
	else if (what & BEV_EVENT_EOF)
		snprintf(buf, len, "the upstream closed the connection during "
		    "the TLS handshake");
	else
		snprintf(buf, len, "TLS with the upstream failed: %s",
		    errno != 0 ? strerror(errno) : "connection error");
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	ERR_clear_error();
}


/* The key of a connection's upstream leg to address a: see inspect-int.h. */
static void
pool_key(const struct gate_conn *c, const struct policy_addr *a, char *key)
{
	char	 ip[INET6_ADDRSTRLEN], line[2 * GATE_AUTH_KEY + 1];
	size_t	 i;

	policy_addr_str(a, ip, sizeof(ip));
	for (i = 0; i < GATE_AUTH_KEY; i++)
		snprintf(line + 2 * i, 3, "%02x", c->cred_key[i]);
	snprintf(key, INSP_KEY_MAX, "%s\n%s\n%s\n%s\n%s", c->d->user,
	    c->d->session, line, c->d->hostport, ip);
}

/* A kept leg goes: its close_notify (best effort), its socket closed. */
static void
pool_drop(struct insp_idle *e)
{
	TAILQ_REMOVE(&e->in->pool, e, entry);
	e->in->npool--;
	if (e->timer != NULL)
		event_free(e->timer);
	conn_inspect_notify(e->bev);
	ERR_clear_error();
	bufferevent_free(e->bev);
	free(e);
}

/* Anything read on a kept leg (bytes, its close, an error), or its time. */
static void
pool_read_cb(struct bufferevent *bev, void *arg)
{
	pool_drop(arg);
}

static void
pool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	pool_drop(arg);
}

static void
pool_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	pool_drop(arg);
}

void
conn_inspect_pool_free(struct gate_inspect *in)
{
	while (!TAILQ_EMPTY(&in->pool))
		pool_drop(TAILQ_FIRST(&in->pool));
}

void
gate_inspect_pool_flush(struct gate *g)
{
	if (g->insp != NULL)
		conn_inspect_pool_free(g->insp);
}

/*
 * Whether the connection's upstream leg may serve another connection:
 * its exchanges over (none in flight, the last framed by its length or
 * chunks, neither side asked for the close), nothing pending either way,
 * its TLS standing, and the connection ending as connections end (the
 * client's close or error, or the end of its last exchange: END_DONE and
 * END_CLIENT_ERROR, set with the close reason).  An end without a reason
 * keeps nothing: no path that leaves a clean leg comes without one.
 */
static int
poolable(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct bufferevent	*f = c->ubev, *under;
	SSL			*ssl;

	if (c->g->insp == NULL || c->g->cfg.no_reuse || c->g->draining ||
	    f == NULL || c->d == NULL || x->phase != IP_HTTP ||
	    x->up_dirty || x->redialing || c->u_eof || x->rq != RQ_HEAD ||
	    x->req != NULL || x->rs != RS_IDLE || x->resp != NULL ||
	    (c->close_end != END_DONE && c->close_end != END_CLIENT_ERROR))
		return 0;
	/* decided under a policy a reload has since replaced: the pool was
	 * emptied for the new one, and no connection of it may take this */
	if (conn_policy_for(c->g, c->d->user) != c->d->pol)
		return 0;
	if ((ssl = bufferevent_openssl_get_ssl(f)) == NULL ||
	    (under = bufferevent_get_underlying(f)) == NULL ||
	    SSL_get_shutdown(ssl) != 0 || SSL_pending(ssl) > 0 ||
	    evbuffer_get_length(bufferevent_get_input(f)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(f)) > 0 ||
	    evbuffer_get_length(bufferevent_get_input(under)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(under)) > 0)
		return 0;
	return 1;
}

/*
 * The connection ends (conn_inspect_free): its upstream leg, if clean,
 * into the pool instead of closed; the oldest of its key, or of all,
 * goes when the pool is full.
 */
void
conn_inspect_pool_put(struct gate_conn *c)
{
	struct gate_inspect	*in = c->g->insp;
	struct insp_idle	*e, *old, *next;
	struct timeval		 tv = { INSP_POOL_IDLE, 0 };
	size_t			 same = 0;

	if (!poolable(c) || (e = calloc(1, sizeof(*e))) == NULL)
		return;
	pool_key(c, &c->insp->addr, e->key);
	e->in = in;
	e->rule = c->insp->rule;
	if ((e->timer = evtimer_new(c->g->base, pool_timer_cb, e)) == NULL ||
	    evtimer_add(e->timer, &tv) == -1) {
		if (e->timer != NULL)
			event_free(e->timer);
		free(e);
		return;
	}
	for (old = TAILQ_LAST(&in->pool, insp_pool); old != NULL; old = next) {
		next = TAILQ_PREV(old, insp_pool, entry);
		if (old->rule == e->rule && strcmp(old->key, e->key) == 0 &&
		    ++same >= INSP_POOL_PER_KEY)
			pool_drop(old);
	}
	if (in->npool >= INSP_POOL_MAX)
		pool_drop(TAILQ_FIRST(&in->pool));
	e->bev = c->ubev;
	c->ubev = NULL;
	conn_inspect_owner(e->bev, NULL);
	bufferevent_setcb(e->bev, pool_read_cb, NULL, pool_event_cb, e);
	bufferevent_setwatermark(e->bev, EV_READ, 0, 0);
	bufferevent_setwatermark(e->bev, EV_WRITE, 0, 0);
	(void)bufferevent_enable(e->bev, EV_READ | EV_WRITE);
	conn_inspect_idle(e->bev);
	TAILQ_INSERT_TAIL(&in->pool, e, entry);
	in->npool++;
	log_debug("conn %llu: %s: upstream connection kept (%zu kept)",
	    (unsigned long long)c->id, c->d->hostport, in->npool);
}

/* The newest kept leg of the connection's key to address a; NULL: none. */
static struct bufferevent *
pool_take(struct gate_conn *c, const struct policy_addr *a)
{
	struct gate_inspect	*in = c->g->insp;
	struct insp_idle	*e;
	struct bufferevent	*bev;
	char			 key[INSP_KEY_MAX];

	if (in == NULL || in->npool == 0)
		return NULL;
	pool_key(c, a, key);
	TAILQ_FOREACH_REVERSE(e, &in->pool, insp_pool, entry)
		if (e->rule == c->d->irule && strcmp(e->key, key) == 0)
			break;
	if (e == NULL)
		return NULL;
	TAILQ_REMOVE(&in->pool, e, entry);
	in->npool--;
	event_free(e->timer);
	bev = e->bev;
	explicit_bzero(e, sizeof(*e));
	free(e);
	return bev;
}

/*
 * An inspected CONNECT about to dial address a: the kept leg of its key,
 * if there is one, and the connection goes on as after the upstream's
 * handshake, without the dial, the handshake and its verification.
 */
int
conn_inspect_reuse(struct gate_conn *c, const struct policy_addr *a)
{
	struct bufferevent	*bev;
	struct conn_insp	*x;

	if (c->g->insp == NULL || c->g->cfg.no_reuse || !c->tunnel ||
	    c->d->irule == NULL || (bev = pool_take(c, a)) == NULL)
		return 0;
	if ((x = conn_inspect_state(c)) == NULL) {
		conn_inspect_notify(bev);
		bufferevent_free(bev);
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return 1;
	}
	x->addr = *a;
	x->reused = 1;
	c->ubev = bev;
	conn_inspect_owner(bev, c);
	c->up_reused = 1;
	c->connect_ms = 0;
	c->g->num->ctr.insp_reused++;
	if (c->rec != NULL)
		conn_rec_dial(c, a, c->d->tgt.port);
	log_debug("conn %llu: %s: a kept upstream connection to %s",
	    (unsigned long long)c->id, c->d->hostport, c->d->addrstr);
	conn_inspect_ready(c);
	return 1;
}

/*
 * A kept leg given to a connection whose client is still in its
 * handshake: its close then (the upstream's idle timeout) is noted, so
 * that the first request dials afresh instead of going to a dead leg
 * (whose close was read, and which would say nothing more).
 */
static void
kept_gone_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	(void)what;
	c->insp->up_gone = 1;
	bufferevent_disable(bev, EV_READ);
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	ERR_clear_error();
	log_debug("conn %llu: %s: the kept upstream connection closed before "
	    "the first request", (unsigned long long)c->id, c->d->hostport);
}

void
conn_inspect_kept_watch(struct gate_conn *c)
{
	bufferevent_setcb(c->ubev, NULL, NULL, kept_gone_cb, c);
	(void)bufferevent_enable(c->ubev, EV_READ);
}

/* The same once the exchanges began, before the first request: 1 noted. */
int
conn_inspect_kept_closed(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	if (!x->reused || x->rq != RQ_HEAD || x->rs != RS_IDLE)
		return 0;
	kept_gone_cb(c->ubev, 0, c);
	return 1;
}

/*
 * The stale race: a kept leg the upstream closed (its idle timeout) just
 * as the first request of its new connection went out.  When the leg
 * ends (EOF or error) before a byte of the answer, the whole request
 * sent (x->replay) and the client waiting for the answer, the request is
 * sent again on a fresh leg to the same address: dial, TLS and its
 * verification as for any new connection.
 */
int
conn_inspect_stale(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	return x->reused && x->replay.p != NULL && !x->closing &&
	    x->rq == RQ_WAIT && x->rs == RS_HEAD && x->resp == NULL &&
	    evbuffer_get_length(bufferevent_get_input(c->ubev)) == 0;
}

static void
redial_tls_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;
	struct conn_insp	*x = c->insp;
	char			 detail[DETAIL_MAX];

	x->redialing = 0;
	if ((what & BEV_EVENT_CONNECTED) == 0) {
		conn_inspect_up_error(bev, what, detail, sizeof(detail));
		conn_inspect_replay_drop(x);
		(void)conn_inspect_up_failed(c, detail);
		return;
	}
	conn_arm(c, c->g->cfg.idle_timeout);
	conn_inspect_up_http(c);
	(void)bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	/* no copy: a leg that closed before its first request (up_gone),
	 * whose request goes to the new leg as it comes */
	if (x->replay.p == NULL)
		return;
	/* the copy is libevent's now, wiped and freed by conn_inspect_wipe */
	if (evbuffer_add_reference(bufferevent_get_output(c->ubev),
	    x->replay.p, x->replay.len, conn_inspect_wipe, NULL) == -1) {
		conn_inspect_replay_drop(x);
		(void)conn_inspect_up_failed(c, "out of memory");
		return;
	}
	memset(&x->replay, 0, sizeof(x->replay));
}

int
conn_inspect_redial(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct bufferevent	*under;
	int			 fd;

	x->up_gone = 0;
	c->g->num->ctr.insp_redialed++;
	log_info("conn %llu: %s: the kept upstream connection closed under "
	    "the request: sending it again on a new one",
	    (unsigned long long)c->id, c->d->hostport);
	x->reused = 0;
	bufferevent_free(c->ubev);
	c->ubev = NULL;
	/* as every dial of the gate (decide.c), to the same address */
	if ((fd = conn_dial_addr(c, &x->addr)) == -1) {
		conn_inspect_replay_drop(x);
		return conn_inspect_up_failed(c, "the upstream could not be "
		    "dialled again");
	}
	/* writes wait (EAGAIN) until the connect is done */
	if ((under = bufferevent_socket_new(c->g->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		conn_inspect_replay_drop(x);
		return conn_inspect_up_failed(c, "out of memory");
	}
	x->redialing = 1;
	if ((c->ubev = conn_inspect_up_new(c, under)) == NULL) {
		conn_inspect_replay_drop(x);
		return conn_inspect_up_failed(c, "out of memory");
	}
	x->redialing = 1;
	bufferevent_setcb(c->ubev, NULL, NULL, redial_tls_cb, c);
	(void)bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	conn_arm(c, c->g->cfg.connect_timeout);
	return 0;
}

/* (gate.h: beside the pool, the other state the gate's inspection holds) */
const struct gate_secrets *
gate_inspect_secrets(const struct gate *g)
{
	return g->insp != NULL ? g->insp->secrets : NULL;
}
