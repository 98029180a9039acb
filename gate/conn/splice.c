/*
 * The raw relay of an established CONNECT tunnel, and the pool of pipes it
 * splices through.  A tunnel comes here (conn_maybe_raw) once nothing
 * needs to look at its bytes any more; until then it relays on its
 * bufferevents (relay.c).  See the comment above RELAY_BUDGET for how the
 * bytes move, and the one above PIPE_SPARE for how pipes are shared.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/conn/conn-int.h"

#ifndef GATE_PIPE_SIZE
#define GATE_PIPE_SIZE	(256 * 1024)	/* asked of each pipe (F_SETPIPE_SZ) */
#endif

static void	count(struct gate_conn *, int, size_t);

/* --- the pipe pool ------------------------------------------------------------- */

/*
 * Pipes for splice(2), shared by all tunnels: a direction takes one when
 * bytes arrive and gives it back once it is empty, so an idle tunnel holds
 * none (a pipe is two descriptors).  At most --max-pipes exist; pipes only
 * use descriptors that the connection limit does not need now: when fewer
 * than PIPE_SPARE are left, no pipe is made and an empty one is closed
 * rather than kept.  Without a pipe a direction copies through g->scratch.
 */
#define PIPE_SPARE	256

struct gate_pipe {
	struct gate_pipe	*next;
	int			 fd[2];
	uint32_t		 size;		/* bytes it holds */
};

static long
fds_spare(const struct gate *g)
{
	return (long)g->fd_limit - GATE_FD_RESERVE - 2 * (long)g->num->ctr.active -
	    2 * (long)g->pipes_total;
}

static struct gate_pipe *
pipe_get(struct gate *g)
{
	struct gate_pipe	*p;

	if ((p = g->pipes_free) != NULL) {
		g->pipes_free = p->next;
		g->pipes_idle--;
		return p;
	}
	if (g->pipes_total >= g->cfg.max_pipes || fds_spare(g) < PIPE_SPARE)
		return NULL;
	if ((p = malloc(sizeof(*p))) == NULL)
		return NULL;
	if (pipe2(p->fd, O_NONBLOCK | O_CLOEXEC) == -1) {
		log_debug("pipe2: %s", strerror(errno));
		free(p);
		return NULL;
	}
	/*
	 * Bigger than the default 64 KiB, when the kernel agrees: fewer
	 * splice calls a byte (the size is kernel memory, used only while
	 * bytes are in transit, and returned with the pipe).
	 */
	if (fcntl(p->fd[0], F_SETPIPE_SZ, GATE_PIPE_SIZE) == -1)
		log_debug("F_SETPIPE_SZ: %s", strerror(errno));
	{
		int	 sz = fcntl(p->fd[0], F_GETPIPE_SZ);

		p->size = sz > 0 ? (uint32_t)sz : 65536;
	}
	g->pipes_total++;
	return p;
}

/* Back to the pool when empty; closed when it holds bytes or fds are short. */
static void
pipe_put(struct gate *g, struct gate_pipe *p, int empty)
{
	if (p == NULL)
		return;
	if (empty && fds_spare(g) >= PIPE_SPARE) {
		p->next = g->pipes_free;
		g->pipes_free = p;
		g->pipes_idle++;
		return;
	}
	close(p->fd[0]);
	close(p->fd[1]);
	free(p);
	g->pipes_total--;
}

void
gate_pipes_free(struct gate *g)
{
	struct gate_pipe	*p;

	while ((p = g->pipes_free) != NULL) {
		g->pipes_free = p->next;
		g->pipes_idle--;
		pipe_put(g, p, 0);
	}
}

void
conn_raw_free(struct gate_conn *c)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		struct relay_dir	*r = &c->dir[i];

		if (c->ev[i] != NULL)
			event_free(c->ev[i]);
		if (c->fd[i] != -1)
			close(c->fd[i]);
		pipe_put(c->g, r->pipe, r->len == 0);
		if (r->buf != c->g->scratch)
			free(r->buf);
	}
}

/* --- the raw relay ------------------------------------------------------------ */

/*
 * An established CONNECT tunnel whose bytes nothing needs to see any more
 * (the server name check passed or does not apply) leaves its
 * bufferevents: both sockets get one edge-triggered event each, for read
 * and write at once, so that no epoll_ctl follows, and each direction
 * moves bytes socket -> pipe -> socket with splice(2) (or read/write
 * through g->scratch without a pipe), one direction at a time:
 *
 *   fill the pipe from the source (at most RELAY_IO), empty it into the
 *   destination; when the destination is full (EAGAIN) stop reading the
 *   source until the destination is writable again.
 *
 * So at most one pipe (64 KiB) plus RELAY_IO of fallback buffer is queued
 * towards a side: that is the backpressure.  A source's EOF is passed on
 * as shutdown(SHUT_WR) once its bytes are written; both passed on closes
 * the tunnel ("eof").  rd/wr remember readiness that an edge reported and
 * that an EAGAIN has not yet used up.
 */
#define RELAY_BUDGET	(1024 * 1024)	/* per direction per wake-up: fairness */
#define SPLICE_SMALL	(16 * 1024)	/* a splice read below: back to copying */

/* The source (side d) or destination failed: close, saying which side. */
static int
raw_fail(struct gate_conn *c, int side)
{
	if (side == 0)
		conn_close_as(c, "client error", END_CLIENT_ERROR);
	else
		conn_close_as(c, "upstream error", END_FAULT);
	conn_free(c);
	return -1;
}

static void
dir_release(struct gate_conn *c, struct relay_dir *r)
{
	if (r->pipe != NULL) {
		pipe_put(c->g, r->pipe, 1);
		r->pipe = NULL;
	}
	if (r->buf != NULL && r->buf != c->g->scratch)
		free(r->buf);
	r->buf = NULL;
	r->off = 0;
}

/*
 * Move what direction d can move now.  Returns the bytes written, or -1
 * when the connection was closed (and freed).
 */
static ssize_t
pump(struct gate_conn *c, int d)
{
	struct gate		*g = c->g;
	struct relay_dir	*r = &c->dir[d];
	int			 src = c->fd[d], dst = c->fd[!d];
	size_t			 budget = RELAY_BUDGET, moved = 0;
	ssize_t			 n;

	for (;;) {
		if (r->len > 0) {
			if (!c->wr[!d])
				break;
			if (r->pipe != NULL)
				n = splice(r->pipe->fd[0], NULL, dst, NULL,
				    r->len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			else
				n = write(dst, r->buf + r->off, r->len);
			if (n == -1 && errno == EINTR)
				continue;
			if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				c->wr[!d] = 0;
				break;
			}
			if (n <= 0)
				return raw_fail(c, !d);
			r->len -= (uint32_t)n;
			r->off += (uint32_t)n;
			moved += (size_t)n;
			if (r->len == 0)
				dir_release(c, r);
			continue;
		}
		if (r->eof) {
			if (!r->shut) {
				r->shut = 1;
				shutdown(dst, SHUT_WR);
				if (c->rec != NULL)
					conn_rec_fin(c, d);
			}
			break;
		}
		if (!c->rd[d])
			break;
		if (budget == 0) {
			/* come back after the other connections had a turn */
			event_active(c->ev[d], EV_READ, 1);
			break;
		}
		if (r->pipe == NULL && r->bulk && g->cfg.splice &&
		    (r->pipe = pipe_get(g)) == NULL)
			g->num->ctr.pipe_shortage++;
		if (r->pipe != NULL)
			n = splice(src, NULL, r->pipe->fd[1], NULL,
			    r->pipe->size, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		else {
			n = read(src, g->scratch, RELAY_IO);
			g->num->ctr.relay_copies++;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			c->rd[d] = 0;
			dir_release(c, r);
			break;
		}
		if (r->pipe == NULL && n > 0) {
			/*
			 * A full read says a stream is flowing: splice its
			 * next reads.  A short one emptied the socket (TCP
			 * reads all its receive queue holds; data arriving
			 * later is a new edge), unless the peer's FIN is
			 * already there, which only a read of 0 consumes.
			 */
			if (n == RELAY_IO)
				r->bulk = 1;
			else if (!c->hup[d])
				c->rd[d] = 0;
		} else if (r->pipe != NULL && n > 0 && n < SPLICE_SMALL)
			r->bulk = 0;	/* a trickle: copying is cheaper */
		if (n == -1)
			return raw_fail(c, d);
		if (n == 0) {
			r->eof = 1;
			c->rd[d] = 0;
			dir_release(c, r);
			continue;
		}
		if (r->pipe == NULL) {
			r->buf = g->scratch;
			r->off = 0;
			/* --record turns splice off: every byte passes here */
			if (c->rec != NULL)
				conn_rec_data(c, d, g->scratch, (size_t)n);
		} else
			g->num->ctr.bytes_spliced += (uint64_t)n;
		r->len = (uint32_t)n;
		count(c, d, (size_t)n);
		budget = budget > (size_t)n ? budget - (size_t)n : 0;
	}
	/* bytes left in the shared scratch are copied out before it is reused */
	if (r->len > 0 && r->buf == g->scratch) {
		char	*keep;

		if ((keep = malloc(r->len)) == NULL) {
			conn_close_as(c, "out of memory", END_FAULT);
			conn_free(c);
			return -1;
		}
		memcpy(keep, r->buf + r->off, r->len);
		r->buf = keep;
		r->off = 0;
	}
	return (ssize_t)moved;
}

/* Bytes read from the source of direction d, as the bufferevents count. */
static void
count(struct gate_conn *c, int d, size_t n)
{
	if (d == 0) {
		c->up += n;
		c->g->num->ctr.bytes_up += n;
	} else {
		c->down += n;
		c->g->num->ctr.bytes_down += n;
	}
}

/* Returns -1 when the connection was closed (and freed). */
static int
relay_run(struct gate_conn *c)
{
	ssize_t	 up, down;

	if ((up = pump(c, 0)) == -1 || (down = pump(c, 1)) == -1)
		return -1;
	if (up + down > 0)
		clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	if (c->dir[0].shut && c->dir[1].shut) {
		conn_close_as(c, "eof", END_DONE);
		conn_free(c);
		return -1;
	}
	return 0;
}

void
conn_raw_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_conn	*c = arg;
	int			 side = fd == c->fd[1];

	if (what & EV_CLOSED)
		c->hup[side] = 1;
	if (what & (EV_READ | EV_CLOSED))
		c->rd[side] = 1;
	if (what & EV_WRITE)
		c->wr[side] = 1;
	if (c->state == S_CONNECT) {
		conn_dial_done(c, what);
		return;
	}
	(void)relay_run(c);
}

/*
 * What a direction's bufferevents still hold: first pre (the 200 answer
 * of a tunnel that never used its bufferevents for it), then the output
 * towards the destination, then the source's unread input (either may be
 * NULL).  carry_alloc() makes room (and may fail), carry() moves the
 * bytes (and cannot).
 */
static size_t
evlen(struct evbuffer *b)
{
	return b == NULL ? 0 : evbuffer_get_length(b);
}

static int
carry_alloc(struct relay_dir *r, size_t prelen, struct evbuffer *out,
    struct evbuffer *in)
{
	size_t	 n = prelen + evlen(out) + evlen(in);

	if (n == 0)
		return 0;
	if ((r->buf = malloc(n)) == NULL)
		return -1;
	r->len = (uint32_t)n;
	r->off = 0;
	return 0;
}

static void
carry(struct gate_conn *c, int d, const char *pre, size_t prelen,
    struct evbuffer *out, struct evbuffer *in)
{
	struct relay_dir	*r = &c->dir[d];
	size_t			 no = evlen(out), ni = evlen(in);

	if (r->buf == NULL)
		return;
	if (prelen > 0)
		memcpy(r->buf, pre, prelen);
	if (no > 0)
		evbuffer_remove(out, r->buf + prelen, no);
	if (ni > 0)
		evbuffer_remove(in, r->buf + prelen + no, ni);
	if (ni > 0 && c->rec != NULL)
		conn_rec_data(c, d, r->buf + prelen + no, ni);
	count(c, d, ni);	/* out was counted when it was read */
}

/*
 * Leave the bufferevents for the raw relay once a tunnel's bytes need no
 * look (the server name check is over), carrying over what they still
 * buffer; the decision state goes too.  A tunnel that saw an EOF, or that
 * cannot allocate, stays on its bufferevents (returns 0).  Returns 1 when
 * it switched, and then the connection may already be closed (and freed).
 */
int
conn_maybe_raw(struct gate_conn *c, const char *pre, size_t prelen)
{
	struct gate		*g = c->g;
	struct evbuffer		*uout = NULL, *uin = NULL;
	struct event		*ev[2] = { NULL, NULL };
	int			 fd[2], i;

	if (!c->tunnel || c->raw || c->state != S_RELAY || c->d->sni_check ||
	    c->c_eof || c->u_eof)
		return 0;
	fd[0] = bufferevent_getfd(c->cbev);
	if (c->ubev != NULL) {
		fd[1] = bufferevent_getfd(c->ubev);
		uout = bufferevent_get_output(c->ubev);
		uin = bufferevent_get_input(c->ubev);
	} else
		fd[1] = c->fd[1];	/* ours since the dial: ev[1] watches it */
	if ((c->tags = conn_tags_new(c)) == NULL)
		return 0;
	for (i = 0; i < 2; i++)
		if ((i == 0 || c->ubev != NULL) &&
		    (ev[i] = event_new(g->base, fd[i], EV_READ | EV_WRITE |
		    EV_CLOSED | EV_PERSIST | EV_ET, conn_raw_cb, c)) == NULL)
			goto fail;
	if (carry_alloc(&c->dir[0], 0, uout,
	    bufferevent_get_input(c->cbev)) == -1 ||
	    carry_alloc(&c->dir[1], prelen, bufferevent_get_output(c->cbev),
	    uin) == -1)
		goto fail;
	/*
	 * The sockets stay open: the bufferevents forget them first (which
	 * also thaws the ends of their buffers that a socket bufferevent
	 * keeps frozen: evbuffer_remove() would fail before).
	 */
	bufferevent_setfd(c->cbev, -1);
	if (c->ubev != NULL)
		bufferevent_setfd(c->ubev, -1);
	carry(c, 0, NULL, 0, uout, bufferevent_get_input(c->cbev));
	carry(c, 1, pre, prelen, bufferevent_get_output(c->cbev), uin);
	bufferevent_free(c->cbev);
	c->cbev = NULL;
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
		c->ev[1] = ev[1];
	}
	c->ev[0] = ev[0];
	c->fd[0] = fd[0];
	c->fd[1] = fd[1];
	c->raw = 1;
	g->num->ctr.raw++;
	log_debug("conn %llu: relaying raw (%s)", (unsigned long long)c->id,
	    g->cfg.splice ? "splice" : "read/write");
	conn_dec_free(c->d);
	c->d = NULL;
	for (i = 0; i < 2; i++)
		if (ev[i] != NULL && event_add(ev[i], NULL) == -1) {
			conn_close_as(c, "event_add failed", END_FAULT);
			conn_free(c);
			return 1;
		}
	/*
	 * Carried bytes (the 200 answer, say) are written now, without
	 * waiting for an epoll_wait to say the sockets are writable (an
	 * EAGAIN clears that, and the edge to come sets it again).
	 */
	if (c->dir[0].len > 0 || c->dir[1].len > 0) {
		c->wr[0] = c->wr[1] = 1;
		(void)relay_run(c);
	}
	return 1;
 fail:
	for (i = 0; i < 2; i++) {
		if (ev[i] != NULL)
			event_free(ev[i]);
		free(c->dir[i].buf);
		c->dir[i].buf = NULL;
		c->dir[i].len = 0;
	}
	free(c->tags);
	c->tags = NULL;
	return 0;
}
