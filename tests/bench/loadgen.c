/*
 * loadgen: the load generator of the proxy benchmark.  One process, one
 * level-triggered epoll loop, every socket non-blocking; traffic only to
 * 127.0.0.1 (the proxy, or tests/bench/target directly with -x none).
 *
 *   loadgen -x 127.0.0.1:PORT|none -e ECHO -s SOURCE -h HTTP MODE [options]
 *
 * Modes (each bounded in count and in time, each ends by itself):
 *
 *   setup -c CONC -d SECONDS
 *	CONC slots, each in a loop: connect, "CONNECT 127.0.0.1:ECHO
 *	HTTP/1.1" + Host, read the response head and require 200, send one
 *	byte, read the echo, close.  Tunnels/s and the p50/p99 latency in
 *	microseconds from the start of connect() to the echo received.
 *   bulk -c N -d SECONDS
 *	N tunnels to the source port, read as fast as they come; MB/s
 *	(10^6 bytes) over SECONDS, counted once all N are established.
 *   idle -n N [-c INFLIGHT] [-p PID[,PID...]] [-H SECONDS]
 *	N tunnels to the echo port, each checked by a one-byte echo, at most
 *	INFLIGHT (default 256) being opened at a time; the VmRSS of PID (the
 *	proxy; the sum over several PIDs, for a proxy of several processes)
 *	is read before the first and after the last (1 s to settle);
 *	prints the growth per established tunnel and the failures, holds the
 *	tunnels for -H seconds (default 1; a tunnel the proxy closes while
 *	held is a failure) and closes them.
 *   http -c CONC -d SECONDS
 *	one "GET http://127.0.0.1:HTTP/ HTTP/1.1" (origin-form with -x none)
 *	per connection, response read to its Content-Length; requests/s.
 *   tsetup -c CONC -d SECONDS
 *	setup's transparent twin (aisb-gate only, issue 16): each slot
 *	connects, sends "AISB-TRANSPARENT ECHO HTTP/1.1" and, in the same
 *	write as a relay does, a TLS ClientHello whose server name is
 *	127.0.0.1 (TLS_HELLO_LEN bytes), and reads them back from the
 *	echo.  Same figures as setup; the exchange is the ClientHello
 *	rather than one byte after a 200.
 *
 * Output is one line of key=value pairs on stdout, e.g.
 *   mode=setup conc=50 seconds=5.00 ok=51234 rate=10246.8 p50_us=4512
 *   p99_us=9876 errors=0 e_connect=0 e_status=0 e_eof=0 e_reset=0
 *   e_timeout=0 e_other=0
 * Errors are counted by kind and always printed; the exit status is 0
 * when the run completed (errors or not), 1 on a broken setup, 64 on a
 * usage error.  A connection that makes no progress for -t SECONDS
 * (default 10) is a timeout error.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX	4096		/* a proxy's response head */
#define REQ_MAX		256
#define BULK_BUF	(256 * 1024)
#define HIST_MAX_US	2000000		/* latencies above go to the last bucket */
#define MAX_EVENTS	512
#define MAX_CONNS	200000

enum mode { M_SETUP, M_BULK, M_IDLE, M_HTTP, M_TSETUP };
enum state { S_FREE, S_CONNECTING, S_HEAD, S_ECHO, S_BULK, S_IDLE, S_BODY,
    S_TECHO };

/*
 * tsetup: the smallest ClientHello that names a server: TLS 1.2, one
 * cipher suite, no compression, one extension (server_name 127.0.0.1).
 */
static const unsigned char tls_hello[] = {
	0x16, 0x03, 0x01, 0x00, 0x41,		/* handshake record, 65 bytes */
	0x01, 0x00, 0x00, 0x3d,			/* ClientHello, 61 bytes */
	0x03, 0x03,				/* TLS 1.2 */
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
	0x00,					/* no session id */
	0x00, 0x02, 0xc0, 0x2f,			/* one cipher suite */
	0x01, 0x00,				/* null compression */
	0x00, 0x12,				/* extensions, 18 bytes */
	0x00, 0x00, 0x00, 0x0e,			/* server_name, 14 bytes */
	0x00, 0x0c, 0x00, 0x00, 0x09,		/* host_name, 9 bytes */
	'1', '2', '7', '.', '0', '.', '0', '.', '1',
};
#define TLS_HELLO_LEN	sizeof(tls_hello)
enum err { E_CONNECT, E_STATUS, E_EOF, E_RESET, E_TIMEOUT, E_OTHER, E_N };

static const char *err_names[E_N] = {
	"connect", "status", "eof", "reset", "timeout", "other"
};

struct lconn {
	int		 fd;
	enum state	 state;
	uint64_t	 t_start;	/* ns, connect() called */
	uint64_t	 t_last;	/* ns, last progress */
	size_t		 len;		/* bytes in head */
	size_t		 sent;		/* bytes of the request sent */
	long long	 body_left;	/* http: -1 = read to EOF */
	char		 head[HEAD_MAX];
};

static enum mode	 mode;
static int		 direct, ep = -1;
static struct sockaddr_in proxy_sa;
static uint16_t		 port_echo, port_source, port_http;
static char		 req[REQ_MAX];
static size_t		 req_len;
static struct lconn	*conns;
static unsigned		 nslots;
static uint64_t		 ok, errs[E_N], established, lost;
static unsigned long long bytes;
static uint32_t		 hist[HIST_MAX_US + 1];
static char		 bulk_buf[BULK_BUF];
static uint64_t		 conn_timeout_ns = 10ULL * 1000000000ULL;
static unsigned		 inflight;	/* idle: being opened */

static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
usage(void)
{
	fprintf(stderr,
"usage: loadgen -x 127.0.0.1:PORT|none -e ECHO -s SOURCE -h HTTP\n"
"	setup|bulk|idle|http|tsetup [-c n] [-n n] [-d seconds] [-p pid[,pid...]]\n"
"	[-H seconds] [-t seconds]\n");
	exit(64);
}

static unsigned long
num(const char *s, unsigned long lo, unsigned long hi)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < lo ||
	    v > hi) {
		fprintf(stderr, "loadgen: \"%s\" is not a number from %lu to "
		    "%lu\n", s, lo, hi);
		exit(64);
	}
	return v;
}

/* VmRSS of pid in bytes, or -1. */
static long long
rss_one(long pid)
{
	char		 path[64], line[256];
	FILE		*f;
	long long	 kb = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kb = strtoll(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * The summed VmRSS of "PID[,PID...]" (a proxy of several processes, as
 * aisb-gate --workers), or -1 when one cannot be read.
 */
static long long
rss_of(const char *pids)
{
	long long	 sum = 0, r;
	char		*end;
	long		 pid;

	for (;;) {
		pid = strtol(pids, &end, 10);
		if (end == pids || pid <= 0 || (r = rss_one(pid)) < 0)
			return -1;
		sum += r;
		if (*end != ',')
			return sum;
		pids = end + 1;
	}
}

static int
reg(struct lconn *c, int op, unsigned events)
{
	struct epoll_event	 ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = c;
	return epoll_ctl(ep, op, c->fd, &ev);
}

/*
 * The client aborts (RST) rather than closes: over a run of 50,000
 * tunnels a graceful close would leave each client port in TIME_WAIT and
 * slow down connect() as the ephemeral range fills, for every proxy alike,
 * measuring the kernel rather than the proxy.  Every proxy sees the same
 * abort after the exchange is complete.
 */
static void
conn_close(struct lconn *c)
{
	struct linger	 lg = { 1, 0 };

	if (c->fd != -1) {
		(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
		close(c->fd);
	}
	if (mode == M_IDLE && c->state != S_IDLE && c->state != S_FREE)
		inflight--;
	c->fd = -1;
	c->state = S_FREE;
}

static void
fail(struct lconn *c, enum err e)
{
	errs[e]++;
	if (mode == M_IDLE && c->state == S_IDLE) {
		lost++;
		established--;
	}
	conn_close(c);
}

static int
conn_start(struct lconn *c)
{
	struct sockaddr_in	 sin = proxy_sa;
	int			 one = 1;

	c->len = c->sent = 0;
	c->body_left = -1;
	c->t_start = c->t_last = now_ns();
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		errs[E_CONNECT]++;
		return -1;
	}
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (direct)
		sin.sin_port = htons(mode == M_BULK ? port_source :
		    mode == M_HTTP ? port_http : port_echo);
	c->state = S_CONNECTING;
	if (mode == M_IDLE)
		inflight++;
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 &&
	    errno != EINPROGRESS) {
		fail(c, E_CONNECT);
		return -1;
	}
	if (reg(c, EPOLL_CTL_ADD, EPOLLOUT) == -1) {
		fail(c, E_OTHER);
		return -1;
	}
	return 0;
}

static void
record_latency(struct lconn *c, uint64_t t)
{
	uint64_t	 us = (t - c->t_start) / 1000;

	hist[us > HIST_MAX_US ? HIST_MAX_US : us]++;
}

/* The tunnel is up (200 read, or connected with -x none). */
static void
tunnel_up(struct lconn *c)
{
	ssize_t	 n;

	if (mode == M_BULK) {
		c->state = S_BULK;
		established++;
		if (reg(c, EPOLL_CTL_MOD, EPOLLIN) == -1)
			fail(c, E_OTHER);
		return;
	}
	/* setup, idle: one byte through, one byte back */
	n = send(c->fd, "x", 1, MSG_NOSIGNAL);
	if (n != 1) {
		fail(c, n == -1 && (errno == ECONNRESET || errno == EPIPE) ?
		    E_RESET : E_OTHER);
		return;
	}
	c->state = S_ECHO;
	if (reg(c, EPOLL_CTL_MOD, EPOLLIN) == -1)
		fail(c, E_OTHER);
}

static int
read_err(ssize_t n)
{
	if (n == 0)
		return E_EOF;
	return errno == ECONNRESET ? E_RESET : E_OTHER;
}

/* Parse the status code and Content-Length of a complete head. */
static int
parse_head(struct lconn *c, size_t headlen, int *status)
{
	char	*p, *end = c->head + headlen;

	if (headlen < 12 || strncmp(c->head, "HTTP/1.", 7) != 0)
		return -1;
	*status = atoi(c->head + 9);
	c->body_left = -1;
	for (p = c->head; p < end; p++) {
		if (*p != '\n')
			continue;
		if (end - p > 16 && strncasecmp(p + 1, "content-length:", 15)
		    == 0)
			c->body_left = strtoll(p + 16, NULL, 10);
	}
	return 0;
}

static void
on_head(struct lconn *c, uint64_t t)
{
	char	*e;
	size_t	 headlen, extra;
	ssize_t	 n;
	int	 status;

	if (c->len == HEAD_MAX) {
		fail(c, E_OTHER);
		return;
	}
	n = read(c->fd, c->head + c->len, HEAD_MAX - 1 - c->len);
	if (n <= 0) {
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		fail(c, read_err(n));
		return;
	}
	c->len += (size_t)n;
	c->head[c->len] = '\0';
	if ((e = strstr(c->head, "\r\n\r\n")) == NULL) {
		if (c->len == HEAD_MAX - 1)
			fail(c, E_OTHER);
		return;
	}
	headlen = (size_t)(e - c->head) + 4;
	extra = c->len - headlen;
	if (parse_head(c, headlen, &status) == -1 || status != 200) {
		fail(c, E_STATUS);
		return;
	}
	if (mode == M_HTTP) {
		c->state = S_BODY;
		if (c->body_left >= 0) {
			c->body_left -= (long long)extra;
			if (c->body_left <= 0) {
				record_latency(c, t);
				ok++;
				conn_close(c);
			}
		}
		return;
	}
	if (mode == M_BULK) {
		bytes += extra;
		tunnel_up(c);
		return;
	}
	if (extra != 0) {	/* nothing was sent yet: nothing may come */
		fail(c, E_OTHER);
		return;
	}
	tunnel_up(c);
}

static void
on_event(struct lconn *c, unsigned events)
{
	uint64_t	 t = now_ns();
	socklen_t	 sl;
	ssize_t		 n;
	char		 b[64];
	int		 soerr;

	c->t_last = t;
	switch (c->state) {
	case S_CONNECTING:
		sl = sizeof(soerr);
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1
		    || soerr != 0) {
			fail(c, E_CONNECT);
			return;
		}
		if (req_len == 0) {	/* direct, tunnel modes */
			tunnel_up(c);
			return;
		}
		n = send(c->fd, req + c->sent, req_len - c->sent,
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno != EAGAIN && errno != EINTR)
				fail(c, read_err(n));
			return;
		}
		c->sent += (size_t)n;
		if (c->sent < req_len)
			return;
		c->state = mode == M_TSETUP ? S_TECHO : S_HEAD;
		if (reg(c, EPOLL_CTL_MOD, EPOLLIN) == -1)
			fail(c, E_OTHER);
		return;
	case S_HEAD:
		on_head(c, t);
		return;
	case S_TECHO:	/* tsetup: the ClientHello comes back whole */
		n = read(c->fd, c->head + c->len, TLS_HELLO_LEN - c->len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			fail(c, read_err(n));
			return;
		}
		c->len += (size_t)n;
		if (c->len < TLS_HELLO_LEN)
			return;
		if (memcmp(c->head, tls_hello, TLS_HELLO_LEN) != 0) {
			fail(c, E_OTHER);
			return;
		}
		record_latency(c, t);
		ok++;
		conn_close(c);
		return;
	case S_ECHO:
		n = read(c->fd, b, sizeof(b));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != 1) {
			fail(c, n > 1 ? E_OTHER : read_err(n));
			return;
		}
		if (mode == M_SETUP) {
			record_latency(c, t);
			ok++;
			conn_close(c);
			return;
		}
		/* idle: held, watched for the proxy closing it */
		inflight--;
		c->state = S_IDLE;
		established++;
		return;
	case S_BULK:
		n = read(c->fd, bulk_buf, sizeof(bulk_buf));
		if (n > 0)
			bytes += (unsigned long long)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			fail(c, read_err(n));
		return;
	case S_BODY:
		n = read(c->fd, bulk_buf, sizeof(bulk_buf));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n > 0 && c->body_left >= 0) {
			c->body_left -= n;
			if (c->body_left > 0)
				return;
		} else if (n > 0)
			return;
		else if (c->body_left >= 0 || n == -1) {
			fail(c, read_err(n));
			return;
		}
		record_latency(c, t);
		ok++;
		conn_close(c);
		return;
	case S_IDLE:
		n = read(c->fd, b, sizeof(b));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		fail(c, n > 0 ? E_OTHER : read_err(n));
		return;
	default:
		return;
	}
}

static uint64_t
percentile(uint64_t total, double p)
{
	uint64_t	 want, seen = 0;
	size_t		 i;

	if (total == 0)
		return 0;
	want = (uint64_t)(p * (double)total);
	if (want >= total)
		want = total - 1;
	for (i = 0; i <= HIST_MAX_US; i++) {
		seen += hist[i];
		if (seen > want)
			return i;
	}
	return HIST_MAX_US;
}

static void
sweep(uint64_t t)
{
	unsigned	 i;

	for (i = 0; i < nslots; i++) {
		struct lconn	*c = &conns[i];

		if (c->state != S_FREE && c->state != S_IDLE &&
		    c->state != S_BULK && t > c->t_last &&
		    t - c->t_last > conn_timeout_ns)
			fail(c, E_TIMEOUT);
	}
}

/*
 * Run the loop until t_end.  setup/http: keep every slot busy.  idle: open
 * the slots from *next_idle to idle_n, at most maxinfl at a time, and
 * return once all are open or failed.  bulk with until_up: return once
 * every slot is established or failed.
 */
static void
loop(uint64_t t_end, unsigned *next_idle, unsigned idle_n, unsigned maxinfl,
    int until_up)
{
	struct epoll_event	 evs[MAX_EVENTS];
	uint64_t		 t, t_sweep = now_ns();
	unsigned		 i;
	int			 n;

	while ((t = now_ns()) < t_end) {
		if (mode == M_IDLE) {
			while (*next_idle < idle_n && inflight < maxinfl) {
				conn_start(&conns[*next_idle]);
				(*next_idle)++;
			}
			if (*next_idle == idle_n && inflight == 0)
				return;
		} else if (mode != M_BULK) {
			for (i = 0; i < nslots; i++)
				if (conns[i].state == S_FREE)
					conn_start(&conns[i]);
		}
		n = epoll_wait(ep, evs, MAX_EVENTS, 50);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			perror("loadgen: epoll_wait");
			exit(1);
		}
		for (i = 0; i < (unsigned)n; i++)
			on_event(evs[i].data.ptr, evs[i].events);
		if (t - t_sweep > 200000000ULL) {
			t_sweep = now_ns();
			sweep(t_sweep);
		}
		if (until_up && established + errs[E_CONNECT] +
		    errs[E_STATUS] + errs[E_EOF] + errs[E_RESET] +
		    errs[E_TIMEOUT] + errs[E_OTHER] >= nslots)
			return;	/* all bulk tunnels up (or failed) */
	}
}

static void
print_errors(void)
{
	uint64_t	 total = 0;
	int		 i;

	for (i = 0; i < E_N; i++)
		total += errs[i];
	printf(" errors=%" PRIu64, total);
	for (i = 0; i < E_N; i++)
		printf(" e_%s=%" PRIu64, err_names[i], errs[i]);
	printf("\n");
}

int
main(int argc, char **argv)
{
	struct rlimit	 rl;
	struct sigaction sa;
	const char	*x = NULL, *colon;
	unsigned long	 conc = 1, n_idle = 0, secs = 5, hold = 1;
	const char	*pid = NULL;
	unsigned long	 maxinfl = 256;
	unsigned	 i, next = 0, zero = 0;
	uint64_t	 t0, t1, total;
	long long	 rss0 = -1, rss1 = -1;
	int		 ch;

	while ((ch = getopt(argc, argv, "x:e:s:h:c:n:d:p:H:t:")) != -1) {
		switch (ch) {
		case 'x': x = optarg; break;
		case 'e': port_echo = (uint16_t)num(optarg, 1, 65535); break;
		case 's': port_source = (uint16_t)num(optarg, 1, 65535); break;
		case 'h': port_http = (uint16_t)num(optarg, 1, 65535); break;
		case 'c': conc = num(optarg, 1, MAX_CONNS); break;
		case 'n': n_idle = num(optarg, 1, MAX_CONNS); break;
		case 'd': secs = num(optarg, 1, 3600); break;
		case 'p': pid = optarg; break;
		case 'H': hold = num(optarg, 0, 3600); break;
		case 't':
			conn_timeout_ns = num(optarg, 1, 600) * 1000000000ULL;
			break;
		default: usage();
		}
	}
	if (x == NULL || optind + 1 != argc)
		usage();
	if (strcmp(argv[optind], "setup") == 0)
		mode = M_SETUP;
	else if (strcmp(argv[optind], "bulk") == 0)
		mode = M_BULK;
	else if (strcmp(argv[optind], "idle") == 0)
		mode = M_IDLE;
	else if (strcmp(argv[optind], "http") == 0)
		mode = M_HTTP;
	else if (strcmp(argv[optind], "tsetup") == 0)
		mode = M_TSETUP;
	else
		usage();
	if (mode == M_TSETUP && strcmp(x, "none") == 0) {
		fprintf(stderr, "loadgen: tsetup needs aisb-gate (-x)\n");
		return 64;
	}

	/* Only loopback: the proxy address must be 127.0.0.1. */
	memset(&proxy_sa, 0, sizeof(proxy_sa));
	proxy_sa.sin_family = AF_INET;
	proxy_sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (strcmp(x, "none") == 0)
		direct = 1;
	else if ((colon = strchr(x, ':')) == NULL ||
	    (size_t)(colon - x) != strlen("127.0.0.1") ||
	    strncmp(x, "127.0.0.1", strlen("127.0.0.1")) != 0) {
		fprintf(stderr, "loadgen: -x takes 127.0.0.1:PORT or none\n");
		return 64;
	} else
		proxy_sa.sin_port = htons((uint16_t)num(colon + 1, 1, 65535));
	if ((mode != M_BULK && mode != M_HTTP && port_echo == 0) ||
	    (mode == M_BULK && port_source == 0) ||
	    (mode == M_HTTP && port_http == 0) ||
	    (mode == M_IDLE && n_idle == 0)) {
		fprintf(stderr, "loadgen: a port or -n is missing\n");
		return 64;
	}

	if (mode == M_HTTP && direct)	/* origin-form */
		req_len = (size_t)snprintf(req, sizeof(req),
		    "GET / HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		    "User-Agent: aisb-loadgen\r\n\r\n", port_http);
	else if (mode == M_HTTP)	/* absolute-form, to a proxy */
		req_len = (size_t)snprintf(req, sizeof(req),
		    "GET http://127.0.0.1:%u/ HTTP/1.1\r\n"
		    "Host: 127.0.0.1:%u\r\nUser-Agent: aisb-loadgen\r\n\r\n",
		    port_http, port_http);
	else if (mode == M_TSETUP) {	/* the head, then the client's bytes */
		req_len = (size_t)snprintf(req, sizeof(req),
		    "AISB-TRANSPARENT %u HTTP/1.1\r\nX-Aisb-Tool: loadgen\r\n"
		    "\r\n", port_echo);
		memcpy(req + req_len, tls_hello, TLS_HELLO_LEN);
		req_len += TLS_HELLO_LEN;
	} else if (!direct)
		req_len = (size_t)snprintf(req, sizeof(req),
		    "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		    "\r\n", mode == M_BULK ? port_source : port_echo,
		    mode == M_BULK ? port_source : port_echo);

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	nslots = (unsigned)(mode == M_IDLE ? n_idle : conc);
	if ((conns = calloc(nslots, sizeof(*conns))) == NULL ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		perror("loadgen");
		return 1;
	}
	for (i = 0; i < nslots; i++) {
		conns[i].fd = -1;
		conns[i].state = S_FREE;
	}

	switch (mode) {
	case M_SETUP:
	case M_HTTP:
	case M_TSETUP:
		t0 = now_ns();
		loop(t0 + secs * 1000000000ULL, &zero, 0, 0, 0);
		t1 = now_ns();
		printf("mode=%s conc=%lu seconds=%.2f ok=%" PRIu64
		    " rate=%.1f p50_us=%" PRIu64 " p99_us=%" PRIu64,
		    mode == M_SETUP ? "setup" : mode == M_TSETUP ? "tsetup" :
		    "http", conc,
		    (double)(t1 - t0) / 1e9, ok,
		    (double)ok * 1e9 / (double)(t1 - t0),
		    percentile(ok, 0.50), percentile(ok, 0.99));
		print_errors();
		break;
	case M_BULK:
		for (i = 0; i < nslots; i++)
			conn_start(&conns[i]);
		/* establish all first, within the connection timeout */
		loop(now_ns() + conn_timeout_ns, &zero, 0, 0, 1);
		bytes = 0;
		t0 = now_ns();
		loop(t0 + secs * 1000000000ULL, &zero, 0, 0, 0);
		t1 = now_ns();
		printf("mode=bulk conc=%lu established=%" PRIu64
		    " seconds=%.2f bytes=%llu mbps=%.1f", conc, established,
		    (double)(t1 - t0) / 1e9, bytes,
		    (double)bytes / 1e6 / ((double)(t1 - t0) / 1e9));
		print_errors();
		break;
	case M_IDLE:
		if (pid != NULL)
			rss0 = rss_of(pid);
		t0 = now_ns();
		/* a bound on opening: 10 ms a tunnel, at least 60 s */
		loop(t0 + (60 + n_idle / 100) * 1000000000ULL, &next,
		    (unsigned)n_idle, (unsigned)maxinfl, 0);
		t1 = now_ns();
		/* stragglers still opening are failures */
		for (i = 0; i < nslots; i++)
			if (conns[i].state != S_FREE &&
			    conns[i].state != S_IDLE)
				fail(&conns[i], E_TIMEOUT);
		total = established;
		loop(now_ns() + 1000000000ULL, &next, 0, 0, 0);	/* settle */
		if (pid != NULL)
			rss1 = rss_of(pid);
		loop(now_ns() + hold * 1000000000ULL, &next, 0, 0, 0);
		printf("mode=idle n=%lu established=%" PRIu64 " held=%" PRIu64
		    " lost=%" PRIu64 " open_seconds=%.2f rss_before=%lld "
		    "rss_after=%lld per_tunnel=%lld failures=%" PRIu64,
		    n_idle, total, established, lost,
		    (double)(t1 - t0) / 1e9, rss0, rss1,
		    (rss0 >= 0 && rss1 >= 0 && established > 0) ?
		    (rss1 - rss0) / (long long)established : -1,
		    (uint64_t)n_idle - established);
		print_errors();
		break;
	}
	fflush(stdout);
	for (i = 0; i < nslots; i++)
		conn_close(&conns[i]);
	return 0;
}
