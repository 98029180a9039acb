/*
 * The buffered relay: a connection from its connect to the raw relay
 * (splice.c), or to its end.  conn_connected() starts it: the 200 of a
 * tunnel, or the forwarded head of a request; then the bytes move between
 * the two bufferevents with the backpressure described in conn.c, a
 * forwarded request's body only as far as its framing says, a tunnel's
 * first bytes only once its TLS server name is checked, and each side's
 * EOF passed on as a half-close.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

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
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/tls.h"
#include "gate/conn/conn-int.h"

/* --- relaying ---------------------------------------------------------------- */

void
conn_maybe_done(struct gate_conn *c)
{
	if (c->tunnel) {
		if (c->c_eof && c->u_eof && c->c_shut && c->u_shut) {
			conn_close_as(c, "eof", END_DONE);
			conn_free(c);
		}
	} else if (c->u_eof &&
	    evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0) {
		/* The response is complete: hand over to the lingering close. */
		conn_close_as(c, "eof", END_DONE);
		conn_finish(c);
	}
}

/*
 * How many of the bytes buffered in in belong to a body right now, and
 * whether they end it (*done): *left bytes of a Content-Length (counted
 * down), or -1 for chunked framing followed in ch (bounds: http.h), or
 * RS_UNTIL_CLOSE (-2: all of them, until the EOF; responses only).
 * -1 when the chunked framing is malformed, -2 when out of memory.
 */
ssize_t
conn_body_take(int64_t *left, struct gate_http_chunk *ch, struct evbuffer *in,
    int *done)
{
	size_t		 len = evbuffer_get_length(in);
	const char	*p;

	*done = 0;
	if (*left == -2)
		return (ssize_t)len;
	if (*left >= 0) {
		if ((uint64_t)len >= (uint64_t)*left) {
			len = (size_t)*left;
			*done = 1;
		}
		*left -= (int64_t)len;
		return (ssize_t)len;
	}
	/* chunked: scan what is buffered, in place */
	if (len > RELAY_MAX)
		len = RELAY_MAX;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL &&
	    len > 0)
		return -2;
	return gate_http_chunk_scan(ch, p, len, done);
}

/* How many of the client's buffered bytes belong upstream right now. */
static size_t
body_bytes(struct gate_conn *c, struct evbuffer *in, int *bad)
{
	ssize_t	 n;
	int	 done;

	*bad = 0;
	if (c->tunnel)
		return evbuffer_get_length(in);
	if (c->d->body_done)
		return 0;
	if ((n = conn_body_take(&c->d->body_left, &c->d->chunk, in,
	    &done)) < 0) {
		*bad = n == -2 ? 2 : 1;
		return 0;
	}
	c->d->body_done = done;
	return (size_t)n;
}

/*
 * libevent 2.1 reads at most 4 KiB per read(2) (EVBUFFER_MAX_READ; 2.2 makes
 * it settable), which costs a trip through the loop per 4 KiB of a bulk
 * tunnel.  So after each of its reads, read up to RELAY_IO more of what the
 * socket holds, straight into the other side's output (only after a full
 * 4 KiB read: a shorter one emptied the socket).  An EOF is left for
 * libevent to find on its next read; a hard error is returned as -1.
 * An inspected connection's TLS legs read their sockets the same way
 * (inspect.c).
 */
ssize_t
conn_read_more(struct bufferevent *from, struct evbuffer *to)
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
 * An inspected tunnel's hello is checked the same way (inspect.c).
 */
int
conn_check_sni(struct gate_conn *c, struct evbuffer *in)
{
	size_t	 len = evbuffer_get_length(in);
	const uint8_t	*p;
	char	 name[POLICY_MAX_NAME + 2], detail[DETAIL_MAX + POLICY_MAX_NAME];
	int	 r;

	if (len > 5 + GATE_TLS_MAX_RECORD)
		len = 5 + GATE_TLS_MAX_RECORD;
	if ((p = evbuffer_pullup(in, (ev_ssize_t)len)) == NULL && len > 0) {
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return -1;
	}
	r = gate_tls_sni(p, len, name, sizeof(name));
	if (r == GATE_TLS_MORE)
		return 1;
	c->d->sni_check = 0;
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	if (r == GATE_TLS_NAME && strcmp(name, c->d->tgt.host) == 0)
		return 0;
	if (r == GATE_TLS_NO_NAME || r == GATE_TLS_NOT_TLS)
		return 0;
	if (r == GATE_TLS_NAME)
		snprintf(detail, sizeof(detail), "TLS server name %s", name);
	else
		snprintf(detail, sizeof(detail), "malformed TLS ClientHello");
	c->g->num->ctr.denied++;
	conn_audit(c, "decision", "deny", 0, r == GATE_TLS_NAME ?
	    "sni_mismatch" : "tls_malformed", detail, NULL);
	log_info("conn %llu: %s CONNECT %s: deny: %s", (unsigned long long)c->id,
	    c->d->peer, c->d->hostport, detail);
	conn_close_as(c, r == GATE_TLS_NAME ? "sni_mismatch" : "tls_malformed",
	    END_FAULT);
	conn_free(c);
	return -1;
}

/* Returns -1 when the connection was closed (and freed). */
int
conn_relay_up(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	struct evbuffer	*out = bufferevent_get_output(c->ubev);
	size_t		 n;
	int		 bad;

	if (c->d->sni_check && (bad = conn_check_sni(c, in)) != 0)
		return bad == 1 ? 0 : -1;
	n = body_bytes(c, in, &bad);
	if (bad == 2) {
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return -1;
	}
	if (bad) {
		c->g->num->ctr.bad_request++;
		conn_close_as(c, "bad_chunked_body", END_FAULT);
		if (c->down == 0) {
			/* No answer has begun: the client learns why. */
			log_info("conn %llu: %s %s %s: malformed chunked body",
			    (unsigned long long)c->id, c->d->peer,
			    c->d->method, c->d->hostport);
			conn_reply(c, 400, "error; reason=bad_chunked_body",
			    "aisb-gate: malformed chunked request body\n");
		} else
			conn_free(c);
		return -1;
	}
	if (n > 0) {
		evbuffer_remove_buffer(in, out, n);
		if (c->tunnel && !c->c_eof && n >= LIBEVENT_READ) {
			ssize_t	 r = conn_read_more(c->cbev, out);

			if (r == -1) {
				conn_close_as(c, "client error",
				    END_CLIENT_ERROR);
				conn_free(c);
				return -1;
			}
			n += (size_t)r;
		}
		if (c->rec != NULL)
			conn_rec_tail(c, 0, out, n);
		c->up += n;
		c->g->num->ctr.bytes_up += n;
		clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	}
	if (!c->tunnel && c->d->body_done) {
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

int
conn_relay_down(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->ubev);
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	size_t		 n = evbuffer_get_length(in);

	if (n > 0) {
		evbuffer_add_buffer(out, in);
		if (!c->u_eof && n >= LIBEVENT_READ) {
			ssize_t	 r = conn_read_more(c->ubev, out);

			if (r == -1) {
				conn_close_as(c, "upstream error", END_FAULT);
				conn_free(c);
				return -1;
			}
			n += (size_t)r;
		}
		if (c->rec != NULL)
			conn_rec_tail(c, 1, out, n);
		c->down += n;
		c->g->num->ctr.bytes_down += n;
		clock_gettime(CLOCK_MONOTONIC, &c->t_active);
		if (!c->tunnel && c->c_eof && c->down == n)
			conn_arm(c, CLIENT_EOF_SECS);	/* see client_event_cb */
	}
	if (evbuffer_get_length(out) >= RELAY_MAX) {
		bufferevent_disable(c->ubev, EV_READ);
		bufferevent_setwatermark(c->cbev, EV_WRITE, RELAY_MAX / 2, 0);
		c->down_paused = 1;
	}
	return 0;
}

/*
 * The connection is allowed and its upstream reached: it relays from now
 * on.  Its counts, its timer, its decision line and its stream in the
 * capture (and for an inspected host, once both TLS legs stand).
 */
void
conn_allowed(struct gate_conn *c)
{
	struct gate	*g = c->g;

	c->state = S_RELAY;
	g->num->ctr.allowed++;
	g->num->ctr.tunnels++;
	clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	conn_arm(c, g->cfg.idle_timeout);
	conn_audit(c, "decision", "allow",
	    c->tunnel && !c->transparent ? 200 : 0, "allowed",
	    c->d->stale ? "stale DNS answer" : NULL, NULL);
	log_info("conn %llu: %s %s %s: allow via %s", (unsigned long long)c->id,
	    c->d->peer, c->d->method, c->d->hostport, c->d->addrstr);
	if (c->rec != NULL)
		conn_rec_open(c);
}

/*
 * What a proxy client is told once its tunnel stands: HTTP's 200 to a
 * CONNECT, SOCKS5's success to a SOCKS request (socks.c); its length in
 * *len.  A transparent client speaks no proxy and is told nothing.
 */
const char *
conn_tunnel_ok(const struct gate_conn *c, size_t *len)
{
	static const char	 established[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n";

	if (c->socks) {
		*len = sizeof(conn_socks_ok);
		return (const char *)conn_socks_ok;
	}
	*len = sizeof(established) - 1;
	return established;
}

void
conn_connected(struct gate_conn *c)
{
	struct gate		*g = c->g;
	char			*fwd;
	const char		*ok;
	ssize_t			 n;
	size_t			 cap, oklen;
	int			 sni;

	ok = conn_tunnel_ok(c, &oklen);
	c->connect_ms = gate_ms_since(&c->d->t_connect);
	if (c->d->irule != NULL && c->tunnel) {
		/* inspect.c: TLS to the upstream first, then the client */
		conn_inspect_connected(c);
		return;
	}
	conn_allowed(c);

	/* The head and its parse are not needed by a relay: 1.7 KiB less. */
	if (c->tunnel) {
		free(c->d->head);
		c->d->head = NULL;
		free(c->d->req);
		c->d->req = NULL;
	}
	/*
	 * A tunnel with no server name to check is raw from the start; so is
	 * a transparent one named by its ClientHello (waiting in the
	 * client's input).  No transparent tunnel gets a 200: no proxy is
	 * spoken.  One named by its synthetic address (transparent.c) has
	 * its first bytes checked as a CONNECT's.
	 */
	sni = c->tunnel && g->cfg.sni_check && !c->d->tgt.is_ip &&
	    (!c->transparent || c->d->tp == TP_ADDR);
	if (c->tunnel && !sni && conn_maybe_raw(c, c->transparent ? NULL :
	    ok, c->transparent ? 0 : oklen))
		return;

	/* Otherwise the upstream socket goes to a bufferevent too. */
	event_free(c->ev[1]);
	c->ev[1] = NULL;
	c->rd[1] = c->wr[1] = c->hup[1] = 0;
	if ((c->ubev = bufferevent_socket_new(g->base, c->fd[1],
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return;
	}
	c->fd[1] = -1;
	bufferevent_setcb(c->ubev, conn_up_read_cb, conn_write_cb,
	    conn_up_event_cb, c);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 0);
	bufferevent_set_max_single_read(c->cbev, RELAY_IO);
	bufferevent_set_max_single_write(c->cbev, RELAY_IO);
	bufferevent_set_max_single_read(c->ubev, RELAY_IO);
	bufferevent_set_max_single_write(c->ubev, RELAY_IO);

	if (c->tunnel) {
		if (!c->transparent && evbuffer_add(bufferevent_get_output(
		    c->cbev), ok, oklen) == -1) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		if (sni) {
			c->d->sni_check = 1;
			/* a ClientHello is one record at most */
			bufferevent_setwatermark(c->cbev, EV_READ, 0,
			    5 + GATE_TLS_MAX_RECORD);
		}
	} else {
		/* ": " may add a byte per field; Host and Connection lines */
		cap = c->d->headlen + c->d->req->nhdrs + sizeof(c->d->hostport) + 64;
		if ((fwd = malloc(cap)) == NULL) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		n = gate_http_forward_head(c->d->req, c->d->head, c->d->path,
		    c->d->hostport, fwd, cap);
		if (n == -1) {
			free(fwd);
			conn_close_as(c, "forward head too large", END_FAULT);
			conn_free(c);
			return;
		}
		if (bufferevent_write(c->ubev, fwd, (size_t)n) == -1) {
			free(fwd);
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return;
		}
		if (c->rec != NULL)
			conn_rec_data(c, 0, fwd, (size_t)n);
		free(fwd);
		c->up += (uint64_t)n;
		g->num->ctr.bytes_up += (uint64_t)n;
		c->d->body_left = c->d->req->chunked ? -1 :
		    (c->d->req->content_length > 0 ? c->d->req->content_length : 0);
		c->d->body_done = c->d->body_left == 0;
		gate_http_chunk_init(&c->d->chunk);
		free(c->d->head);
		c->d->head = NULL;
		free(c->d->req);
		c->d->req = NULL;
	}
	bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	/* Bytes the client sent behind the head go first (or are dropped). */
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		(void)conn_relay_up(c);
}
