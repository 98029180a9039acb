/*
 * target: the far end of the proxy benchmark.  One epoll loop on
 * 127.0.0.1 with three listeners on ephemeral ports:
 *
 *   echo    writes back what it reads (a 4 KiB buffer per connection:
 *           reading stops while the buffer is full, so a slow reader
 *           costs memory bounded by 4 KiB);
 *   source  writes one static 64 KiB buffer for as long as the peer
 *           reads, and discards whatever the peer sends;
 *   http    reads one request head (at most 8 KiB), answers
 *           "200, Content-Length: 2, ok" and closes.
 *
 * The ports go to stdout as "echo PORT", "source PORT", "http PORT", one a
 * line, then the stream is flushed; a script reads them and then drives
 * the loop with tests/bench/loadgen.  It runs until SIGTERM or SIGINT, or
 * until -t SECONDS have passed (a bound, so that a forgotten target does
 * not outlive its script).  Level-triggered epoll; every connection is a
 * malloc'ed struct freed on close; at most -m connections are held
 * (default 60,000), more are accepted and closed at once.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ECHO_BUF	4096
#define HTTP_HEAD_MAX	8192
#define SOURCE_BUF	65536
#define MAX_EVENTS	512

enum kind { K_ECHO, K_SOURCE, K_HTTP, K_LISTEN };

struct tconn {
	int		 fd;
	enum kind	 kind;
	enum kind	 accepts;	/* K_LISTEN: the kind it accepts */
	unsigned	 events;	/* as registered with epoll */
	size_t		 len;		/* bytes in buf */
	size_t		 off;		/* echo/http: first unsent byte */
	int		 responding;	/* http: head read, answer going out */
	char		 buf[];		/* ECHO_BUF or HTTP_HEAD_MAX */
};

static const char http_reply[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n"
    "Connection: close\r\n\r\nok";

static char		 source_buf[SOURCE_BUF];
static volatile sig_atomic_t stop;
static int		 ep = -1;
static unsigned long	 nconns, maxconns = 60000, refused, accept_err;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
listener(uint16_t *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 4096) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
reg(struct tconn *c, int op, unsigned events)
{
	struct epoll_event	 ev;

	if (op == EPOLL_CTL_MOD && c->events == events)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = c;
	if (epoll_ctl(ep, op, c->fd, &ev) == -1)
		return -1;
	c->events = events;
	return 0;
}

static void
drop(struct tconn *c)
{
	close(c->fd);	/* also removes it from the epoll set */
	free(c);
	nconns--;
}

static void
do_accept(struct tconn *l)
{
	struct tconn	*c;
	size_t		 bufsz;
	unsigned	 ev;
	int		 fd, one = 1;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				accept_err++;
			return;
		}
		if (nconns >= maxconns) {
			refused++;
			close(fd);
			continue;
		}
		bufsz = l->accepts == K_ECHO ? ECHO_BUF :
		    l->accepts == K_HTTP ? HTTP_HEAD_MAX : 0;
		if ((c = calloc(1, sizeof(*c) + bufsz)) == NULL) {
			close(fd);
			refused++;
			continue;
		}
		c->fd = fd;
		c->kind = l->accepts;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		ev = c->kind == K_SOURCE ? EPOLLIN | EPOLLOUT : EPOLLIN;
		if (reg(c, EPOLL_CTL_ADD, ev) == -1) {
			close(fd);
			free(c);
			refused++;
			continue;
		}
		nconns++;
	}
}

/* Returns -1 when the connection is to be closed. */
static int
do_echo(struct tconn *c, unsigned events)
{
	ssize_t	 n;

	if ((events & EPOLLIN) && c->len < ECHO_BUF) {
		n = read(c->fd, c->buf + c->len, ECHO_BUF - c->len);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (n > 0)
			c->len += (size_t)n;
	}
	if (c->len > c->off) {
		n = send(c->fd, c->buf + c->off, c->len - c->off,
		    MSG_NOSIGNAL);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n > 0)
			c->off += (size_t)n;
		if (c->off == c->len)
			c->off = c->len = 0;
	} else if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN))
		return -1;
	return reg(c, EPOLL_CTL_MOD, (c->len < ECHO_BUF ? EPOLLIN : 0) |
	    (c->len > c->off ? EPOLLOUT : 0));
}

static int
do_source(struct tconn *c, unsigned events)
{
	char	 sink[4096];
	ssize_t	 n;

	if (events & EPOLLIN) {
		n = read(c->fd, sink, sizeof(sink));
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return -1;
	}
	if (events & (EPOLLERR | EPOLLHUP))
		return -1;
	if (events & EPOLLOUT) {
		n = send(c->fd, source_buf, sizeof(source_buf), MSG_NOSIGNAL);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	return 0;
}

static int
do_http(struct tconn *c, unsigned events)
{
	ssize_t	 n;

	if (!c->responding) {
		if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
			return 0;
		if (c->len == HTTP_HEAD_MAX)
			return -1;	/* head too large */
		n = read(c->fd, c->buf + c->len, HTTP_HEAD_MAX - c->len);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (n > 0)
			c->len += (size_t)n;
		if (memmem(c->buf, c->len, "\r\n\r\n", 4) == NULL)
			return 0;
		c->responding = 1;
		c->off = 0;
	}
	n = send(c->fd, http_reply + c->off, sizeof(http_reply) - 1 - c->off,
	    MSG_NOSIGNAL);
	if (n == -1 && errno != EAGAIN && errno != EINTR)
		return -1;
	if (n > 0)
		c->off += (size_t)n;
	if (c->off == sizeof(http_reply) - 1)
		return -1;	/* one response, then close */
	return reg(c, EPOLL_CTL_MOD, EPOLLOUT);
}

int
main(int argc, char **argv)
{
	struct epoll_event	 evs[MAX_EVENTS];
	struct tconn		 ls[3];
	struct rlimit		 rl;
	struct sigaction	 sa;
	struct timespec		 t0, now;
	const char		*names[3] = { "echo", "source", "http" };
	uint16_t		 port;
	long			 limit_s = 3600;
	int			 i, n, ch;

	while ((ch = getopt(argc, argv, "m:t:")) != -1) {
		switch (ch) {
		case 'm':
			maxconns = strtoul(optarg, NULL, 10);
			break;
		case 't':
			limit_s = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: target [-m maxconns] "
			    "[-t seconds]\n");
			return 64;
		}
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	memset(source_buf, 'x', sizeof(source_buf));

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		perror("target: epoll_create1");
		return 1;
	}
	for (i = 0; i < 3; i++) {
		memset(&ls[i], 0, sizeof(ls[i]));
		ls[i].kind = K_LISTEN;
		ls[i].accepts = (enum kind)i;	/* K_ECHO, K_SOURCE, K_HTTP */
		if ((ls[i].fd = listener(&port)) == -1 ||
		    reg(&ls[i], EPOLL_CTL_ADD, EPOLLIN) == -1) {
			perror("target: listen");
			return 1;
		}
		printf("%s %u\n", names[i], port);
	}
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		n = epoll_wait(ep, evs, MAX_EVENTS, 1000);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			perror("target: epoll_wait");
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct tconn	*c = evs[i].data.ptr;
			int		 rc;

			switch (c->kind) {
			case K_LISTEN:
				do_accept(c);
				continue;
			case K_ECHO:
				rc = do_echo(c, evs[i].events);
				break;
			case K_SOURCE:
				rc = do_source(c, evs[i].events);
				break;
			default:
				rc = do_http(c, evs[i].events);
				break;
			}
			if (rc == -1)
				drop(c);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > limit_s)
			break;
	}
	fprintf(stderr, "target: exit, %lu open, %lu refused, %lu accept "
	    "errors\n", nconns, refused, accept_err);
	return 0;
}
