/*
 * tlsbench: the HTTPS server and the TLS load of the inspection
 * benchmark (inspect.sh).  Traffic only to 127.0.0.1.
 *
 *   tlsbench serve -c CERT -k KEY
 *	An HTTPS/1.1 server on 127.0.0.1, a free port (printed "port N");
 *	one epoll loop, non-blocking, keep-alive.  GET /small: 200, 2 bytes;
 *	GET /sse: 200, chunked, one event, the end; GET /bulk: 200 and bytes
 *	until the client goes.
 *
 *   tlsbench MODE -x PROXY|none -t PORT -n NAME -a CAFILE [options]
 *	Clients through PROXY (127.0.0.1:P: a CONNECT to NAME:PORT) or
 *	straight to 127.0.0.1:PORT, TLS with NAME as server name, verified
 *	against CAFILE for NAME.  Every handshake is a full one (no session
 *	is resumed).  Modes:
 *   setup -c CONC -d SECONDS
 *	CONC threads, each in a loop: connect, CONNECT, TLS, GET /small,
 *	its answer, close.  Connections/s and p50/p99 of connect to answer;
 *	with -P PIDS, the CPU time those processes (the proxy) spent per
 *	connection, a figure the load of a shared machine moves less;
 *	and this process's own (the load's: load_cpu_us_per_conn).
 *   ttfb -r REQUESTS
 *	one connection, REQUESTS times GET /sse: p50/p90/p99 of the time
 *	from the request written to the first byte of the body.
 *   bulk -c N -d SECONDS
 *	N connections each GET /bulk, read for SECONDS: MB/s (10^6 bytes),
 *	with -P the CPU time the proxy spent per MB, and the load's own.
 *	Every client socket times out after 10 s without progress.
 *   idle -N COUNT -P PID[,PID...]
 *	COUNT connections, each after one GET /small answered, held; the
 *	VmRSS of the PIDs (summed) before the first and after the last (1 s
 *	to settle): KiB per connection.
 * Output: one line of key=value pairs.  Exit 0 when the run completed
 * (errors are counted in it), 1 when it could not start, 64 on usage.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define MAX_CONC	512
#define SAMPLES_MAX	(1 << 20)
#define IO_BUF		(64 * 1024)

static const char	*proxy, *name, *cafile;
static unsigned		 port;
static SSL_CTX		*cctx;
static double		 t_end;
static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t		*samples;
static size_t		 nsamples;
static uint64_t		 nerrors, nbytes;

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
usage(void)
{
	fprintf(stderr, "usage: tlsbench serve -c CERT -k KEY\n"
	    "       tlsbench setup|ttfb|bulk|idle -x PROXY|none -t PORT "
	    "-n NAME -a CAFILE [-c N] [-d S] [-r N] [-N N] [-P PIDS]\n");
	exit(64);
}

/* --- the server ----------------------------------------------------------- */

struct sconn {
	SSL		*ssl;
	int		 fd;
	int		 open;		/* handshake done */
	int		 bulk;		/* /bulk: write until the client goes */
	char		 in[4096];
	size_t		 inlen;
	const char	*out;
	size_t		 outlen, outoff;
};

static const char small_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
    "\r\nok";
static const char sse_resp[] = "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    "f\r\ndata: event 0\n\n\r\n0\r\n\r\n";
static const char bulk_resp[] = "HTTP/1.1 200 OK\r\n"
    "Content-Length: 1000000000000\r\n\r\n";
static char	 zeros[IO_BUF];

static void
sclose(int ep, struct sconn *s)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
	SSL_free(s->ssl);
	close(s->fd);
	free(s);
}

/* Returns -1 when the connection is to go. */
static int
sstep(struct sconn *s, uint32_t *want)
{
	char	*e;
	int	 n, err;

	if (!s->open) {
		if ((n = SSL_accept(s->ssl)) != 1) {
			err = SSL_get_error(s->ssl, n);
			if (err == SSL_ERROR_WANT_READ) {
				*want = EPOLLIN;
				return 0;
			}
			if (err == SSL_ERROR_WANT_WRITE) {
				*want = EPOLLOUT;
				return 0;
			}
			return -1;
		}
		s->open = 1;
	}
	for (;;) {
		if (s->out != NULL || s->bulk) {
			const char *p = s->out != NULL ? s->out + s->outoff :
			    zeros;
			size_t len = s->out != NULL ? s->outlen - s->outoff :
			    sizeof(zeros);

			n = SSL_write(s->ssl, p, (int)len);
			if (n <= 0) {
				err = SSL_get_error(s->ssl, n);
				if (err == SSL_ERROR_WANT_WRITE) {
					*want = EPOLLOUT;
					return 0;
				}
				if (err == SSL_ERROR_WANT_READ) {
					*want = EPOLLIN;
					return 0;
				}
				return -1;
			}
			if (s->out != NULL && (s->outoff += (size_t)n) ==
			    s->outlen)
				s->out = NULL;
			continue;
		}
		n = SSL_read(s->ssl, s->in + s->inlen,
		    (int)(sizeof(s->in) - 1 - s->inlen));
		if (n <= 0) {
			err = SSL_get_error(s->ssl, n);
			if (err == SSL_ERROR_WANT_READ) {
				*want = EPOLLIN;
				return 0;
			}
			return -1;
		}
		s->inlen += (size_t)n;
		s->in[s->inlen] = '\0';
		if ((e = strstr(s->in, "\r\n\r\n")) == NULL) {
			if (s->inlen == sizeof(s->in) - 1)
				return -1;
			continue;
		}
		if (strncmp(s->in, "GET /bulk", 9) == 0) {
			s->out = bulk_resp;
			s->outlen = sizeof(bulk_resp) - 1;
			s->bulk = 1;
		} else if (strncmp(s->in, "GET /sse", 8) == 0) {
			s->out = sse_resp;
			s->outlen = sizeof(sse_resp) - 1;
		} else {
			s->out = small_resp;
			s->outlen = sizeof(small_resp) - 1;
		}
		s->outoff = 0;
		/* keep what followed the head: a pipelined request */
		s->inlen -= (size_t)(e + 4 - s->in);
		memmove(s->in, e + 4, s->inlen);
	}
}

static int
serve(const char *cert, const char *key)
{
	struct sockaddr_in	 sin;
	struct epoll_event	 ev, evs[256];
	socklen_t		 len = sizeof(sin);
	SSL_CTX			*ctx;
	int			 ls, ep, i, n, one = 1;

	signal(SIGPIPE, SIG_IGN);
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(ls, 4096) == -1 ||
	    getsockname(ls, (struct sockaddr *)&sin, &len) == -1 ||
	    (ep = epoll_create1(0)) == -1) {
		perror("tlsbench serve");
		return 1;
	}
	printf("port %u\n", ntohs(sin.sin_port));
	fflush(stdout);
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	for (;;) {
		if ((n = epoll_wait(ep, evs, 256, -1)) == -1) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct sconn	*s = evs[i].data.ptr;
			uint32_t	 want = EPOLLIN;
			int		 fd;

			if (s == NULL) {
				while ((fd = accept4(ls, NULL, NULL,
				    SOCK_NONBLOCK)) != -1) {
					if ((s = calloc(1, sizeof(*s))) == NULL ||
					    (s->ssl = SSL_new(ctx)) == NULL) {
						free(s);
						close(fd);
						continue;
					}
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof(one));
					s->fd = fd;
					SSL_set_fd(s->ssl, fd);
					ev.events = EPOLLIN;
					ev.data.ptr = s;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			if (sstep(s, &want) == -1) {
				sclose(ep, s);
				continue;
			}
			ev.events = want;
			ev.data.ptr = s;
			epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
		}
	}
}

/* --- the clients ---------------------------------------------------------- */

struct cconn {
	int	 fd;
	SSL	*ssl;
};

static void
cfree(struct cconn *c)
{
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	if (c->fd != -1)
		close(c->fd);
	c->ssl = NULL;
	c->fd = -1;
}

/* connect, CONNECT (unless none), TLS: 0, or -1 (c freed) */
static int
copen(struct cconn *c)
{
	struct sockaddr_in	 sin;
	struct timeval		 tmo = { 10, 0 };
	char			 head[1024];
	size_t			 have = 0;
	ssize_t			 n;
	unsigned		 p;
	int			 one = 1;

	c->ssl = NULL;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p = strcmp(proxy, "none") == 0 ? port :
	    (unsigned)atoi(strchr(proxy, ':') + 1);
	sin.sin_port = htons((uint16_t)p);
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* a proxy that holds an answer back must not hold the run */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		goto fail;
	if (strcmp(proxy, "none") != 0) {
		n = snprintf(head, sizeof(head), "CONNECT %s:%u HTTP/1.1\r\n"
		    "Host: %s:%u\r\n\r\n", name, port, name, port);
		if (write(c->fd, head, (size_t)n) != n)
			goto fail;
		/*
		 * The answer's head, and not a byte past it (the proxy's TLS
		 * records are the handshake's): looked at first, then taken
		 * to its end, two system calls where one a byte cost the
		 * load some 40 a connection.
		 */
		while (have < 4 || memcmp(head + have - 4, "\r\n\r\n", 4) != 0) {
			char	*e;

			if (have == sizeof(head) - 1 ||
			    (n = recv(c->fd, head + have, sizeof(head) - 1 -
			    have, MSG_PEEK)) <= 0)
				goto fail;
			head[have + (size_t)n] = '\0';
			e = strstr(have >= 3 ? head + have - 3 : head,
			    "\r\n\r\n");
			if (e != NULL)
				n = e + 4 - (head + have);
			if ((n = read(c->fd, head + have, (size_t)n)) <= 0)
				goto fail;
			have += (size_t)n;
		}
		if (strncmp(head, "HTTP/1.1 200", 12) != 0 &&
		    strncmp(head, "HTTP/1.0 200", 12) != 0)
			goto fail;
	}
	if ((c->ssl = SSL_new(cctx)) == NULL ||
	    SSL_set_tlsext_host_name(c->ssl, name) != 1 ||
	    SSL_set1_host(c->ssl, name) != 1 ||
	    SSL_set_fd(c->ssl, c->fd) != 1 || SSL_connect(c->ssl) != 1)
		goto fail;
	return 0;
 fail:
	ERR_clear_error();
	cfree(c);
	return -1;
}

/* GET path and its answer (Content-Length or chunked to its end). */
static int
cget(struct cconn *c, const char *path, double *t_first)
{
	char	 req[256], buf[8192], *e, *cl;
	size_t	 have = 0, body;
	int	 n, hn;
	double	 t0;

	hn = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%u\r\n"
	    "\r\n", path, name, port);
	t0 = now();
	if (SSL_write(c->ssl, req, hn) != hn)
		return -1;
	for (;;) {
		if (have == sizeof(buf) - 1 ||
		    (n = SSL_read(c->ssl, buf + have,
		    (int)(sizeof(buf) - 1 - have))) <= 0)
			return -1;
		have += (size_t)n;
		buf[have] = '\0';
		if ((e = strstr(buf, "\r\n\r\n")) == NULL)
			continue;
		body = have - (size_t)(e + 4 - buf);
		if (body > 0 && t_first != NULL && *t_first < 0)
			*t_first = now() - t0;
		if ((cl = strstr(buf, "Content-Length: ")) != NULL && cl < e) {
			if (body >= (size_t)atol(cl + 16))
				return 0;
		} else if (strstr(e, "0\r\n\r\n") != NULL)
			return 0;
	}
}

static void
sample(double secs)
{
	pthread_mutex_lock(&lock);
	if (nsamples < SAMPLES_MAX)
		samples[nsamples++] = (uint32_t)(secs * 1e6);
	pthread_mutex_unlock(&lock);
}

static void
error(void)
{
	pthread_mutex_lock(&lock);
	nerrors++;
	pthread_mutex_unlock(&lock);
}

static void *
setup_thread(void *arg)
{
	struct cconn	 c;
	double		 t0;

	(void)arg;
	while (now() < t_end) {
		t0 = now();
		if (copen(&c) == -1 || cget(&c, "/small", NULL) == -1) {
			error();
			cfree(&c);
			continue;
		}
		cfree(&c);
		sample(now() - t0);
	}
	return NULL;
}

static void *
bulk_thread(void *arg)
{
	struct cconn	 c;
	char		*buf = malloc(IO_BUF);
	char		 req[256];
	uint64_t	 got = 0;
	int		 n;

	(void)arg;
	snprintf(req, sizeof(req), "GET /bulk HTTP/1.1\r\nHost: %s:%u\r\n\r\n",
	    name, port);
	if (buf == NULL || copen(&c) == -1 ||
	    SSL_write(c.ssl, req, (int)strlen(req)) <= 0) {
		error();
		free(buf);
		return NULL;
	}
	while (now() < t_end && (n = SSL_read(c.ssl, buf, IO_BUF)) > 0)
		got += (uint64_t)n;
	cfree(&c);
	free(buf);
	pthread_mutex_lock(&lock);
	nbytes += got;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int
cmp32(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t
pct(double p)
{
	size_t	 i;

	if (nsamples == 0)
		return 0;
	i = (size_t)(p * (double)(nsamples - 1));
	return samples[i];
}

/* CPU time (user + system) of the PIDs, summed, in seconds. */
static double
cpu_secs(const char *pids)
{
	char		 path[64], buf[1024], *list, *p, *save = NULL, *e;
	unsigned long	 ut, st;
	double		 sum = 0;
	FILE		*f;

	if (pids == NULL || (list = strdup(pids)) == NULL)
		return 0;
	for (p = strtok_r(list, ",", &save); p != NULL;
	    p = strtok_r(NULL, ",", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/stat", p);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		/* after the command's ")": state, then 10 fields, utime stime */
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (e = strrchr(buf, ')')) != NULL &&
		    sscanf(e + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		    "%lu %lu", &ut, &st) == 2)
			sum += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		fclose(f);
	}
	free(list);
	return sum;
}

/* CPU time (user + system) of this process, all its threads: the load's. */
static double
self_secs(void)
{
	struct rusage	 ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long
rss_kib(const char *pids)
{
	char	 path[64], line[256], *list = strdup(pids), *p, *save = NULL;
	long	 sum = 0, v;
	FILE	*f;

	for (p = strtok_r(list, ",", &save); p != NULL;
	    p = strtok_r(NULL, ",", &save)) {
		snprintf(path, sizeof(path), "/proc/%s/status", p);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "VmRSS: %ld", &v) == 1)
				sum += v;
		fclose(f);
	}
	free(list);
	return sum;
}

static int
run_threads(void *(*fn)(void *), int conc, int secs)
{
	pthread_t	 t[MAX_CONC];
	int		 i;

	t_end = now() + secs;
	for (i = 0; i < conc; i++)
		if (pthread_create(&t[i], NULL, fn, NULL) != 0)
			return -1;
	for (i = 0; i < conc; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int
idle(int count, const char *pids)
{
	struct cconn	*cs = calloc((size_t)count, sizeof(*cs));
	struct rlimit	 rl;
	long		 before, after;
	int		 i, ok = 0;

	if (cs == NULL || pids == NULL)
		return 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	before = rss_kib(pids);
	for (i = 0; i < count; i++) {
		if (copen(&cs[i]) == -1 || cget(&cs[i], "/small", NULL) == -1) {
			cfree(&cs[i]);
			nerrors++;
			continue;
		}
		ok++;
	}
	sleep(1);
	after = rss_kib(pids);
	if (getenv("TLSBENCH_HOLD") != NULL)	/* look at the proxy meanwhile */
		sleep((unsigned)atoi(getenv("TLSBENCH_HOLD")));
	printf("mode=idle n=%d ok=%d rss_before_kib=%ld rss_after_kib=%ld "
	    "kib_per_conn=%.1f errors=%llu\n", count, ok, before, after,
	    ok > 0 ? (double)(after - before) / ok : 0.0,
	    (unsigned long long)nerrors);
	for (i = 0; i < count; i++)
		cfree(&cs[i]);
	free(cs);
	return 0;
}

int
main(int argc, char **argv)
{
	const char	*mode, *cert = NULL, *key = NULL, *pids = NULL;
	int		 ch, conc = 1, secs = 5, reqs = 1000, count = 1000, i;
	double		 t;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((ch = getopt(argc, argv, "a:c:d:k:n:r:t:x:N:P:")) != -1) {
		switch (ch) {
		case 'a': cafile = optarg; break;
		case 'c':
			if (strcmp(mode, "serve") == 0)
				cert = optarg;
			else
				conc = atoi(optarg);
			break;
		case 'd': secs = atoi(optarg); break;
		case 'k': key = optarg; break;
		case 'n': name = optarg; break;
		case 'r': reqs = atoi(optarg); break;
		case 't': port = (unsigned)atoi(optarg); break;
		case 'x': proxy = optarg; break;
		case 'N': count = atoi(optarg); break;
		case 'P': pids = optarg; break;
		default: usage();
		}
	}
	if (strcmp(mode, "serve") == 0) {
		if (cert == NULL || key == NULL)
			usage();
		return serve(cert, key);
	}
	if (proxy == NULL || name == NULL || cafile == NULL || port == 0 ||
	    conc < 1 || conc > MAX_CONC || secs < 1 || reqs < 1 || count < 1 ||
	    (strcmp(proxy, "none") != 0 && strchr(proxy, ':') == NULL))
		usage();
	signal(SIGPIPE, SIG_IGN);
	if ((cctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_load_verify_locations(cctx, cafile, NULL) != 1 ||
	    (samples = calloc(SAMPLES_MAX, sizeof(*samples))) == NULL) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(cctx, SSL_OP_NO_TICKET |
	    SSL_OP_IGNORE_UNEXPECTED_EOF);
	(void)SSL_CTX_set_alpn_protos(cctx, (const unsigned char *)
	    "\x08http/1.1", 9);
	if (strcmp(mode, "setup") == 0) {
		double	 cpu = cpu_secs(pids), self = self_secs();

		t = now();
		if (run_threads(setup_thread, conc, secs) == -1)
			return 1;
		t = now() - t;
		cpu = cpu_secs(pids) - cpu;
		self = self_secs() - self;
		qsort(samples, nsamples, sizeof(*samples), cmp32);
		printf("mode=setup conc=%d seconds=%.2f ok=%zu rate=%.1f "
		    "p50_us=%u p99_us=%u cpu_us_per_conn=%.0f "
		    "load_cpu_us_per_conn=%.0f errors=%llu\n", conc, t,
		    nsamples, (double)nsamples / t, pct(0.5), pct(0.99),
		    nsamples > 0 ? cpu * 1e6 / nsamples : 0.0,
		    nsamples > 0 ? self * 1e6 / nsamples : 0.0,
		    (unsigned long long)nerrors);
	} else if (strcmp(mode, "ttfb") == 0) {
		struct cconn	 c;

		if (copen(&c) == -1) {
			printf("mode=ttfb errors=1\n");
			return 0;
		}
		for (i = 0; i < reqs && nerrors < 10; i++) {
			t = -1;
			if (cget(&c, "/sse", &t) == -1 || t < 0) {
				/* a proxy that closed it: the next on a new one */
				nerrors++;
				cfree(&c);
				if (copen(&c) == -1)
					break;
				continue;
			}
			sample(t);
		}
		cfree(&c);
		qsort(samples, nsamples, sizeof(*samples), cmp32);
		printf("mode=ttfb n=%zu p50_us=%u p90_us=%u p99_us=%u "
		    "errors=%llu\n", nsamples, pct(0.5), pct(0.9), pct(0.99),
		    (unsigned long long)nerrors);
	} else if (strcmp(mode, "bulk") == 0) {
		double	 cpu = cpu_secs(pids), self = self_secs();
		double	 mb;

		if (run_threads(bulk_thread, conc, secs) == -1)
			return 1;
		cpu = cpu_secs(pids) - cpu;
		self = self_secs() - self;
		mb = (double)nbytes / 1e6;
		printf("mode=bulk conc=%d seconds=%d mbps=%.1f "
		    "cpu_us_per_mb=%.0f load_cpu_us_per_mb=%.0f errors=%llu\n",
		    conc, secs, mb / secs, mb > 0 ? cpu * 1e6 / mb : 0.0,
		    mb > 0 ? self * 1e6 / mb : 0.0,
		    (unsigned long long)nerrors);
	} else if (strcmp(mode, "idle") == 0)
		return idle(count, pids);
	else
		usage();
	return 0;
}
