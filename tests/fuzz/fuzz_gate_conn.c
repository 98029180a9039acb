/*
 * libFuzzer: the gate's whole connection state machine from one input:
 * request head, credentials, decision, dial, tunnel or forwarded request
 * (body, chunked framing, the TLS server name check), relay and close;
 * AISB-TRANSPARENT heads too (the client's stream named by SNI or Host,
 * or by a synthetic address: exact.fuzz.test's is known to the policy),
 * and SOCKS5 (greeting, user and password, request, reply).
 *
 * The input is two streams: a 16-bit length, that many bytes the client
 * sends, and the rest, which the upstream answers.  The client is one end
 * of a socketpair handed to gate_accept(); the upstream is a listener on
 * 127.0.0.1 whose port replaces every "PORT" in the client's bytes (and
 * every "PBIN" as two bytes in network order, a SOCKS5 request's).  The
 * policy allows 127.0.0.0/8 (exempted from the denied ranges) on every
 * port, names under fuzz.test on that port, and needs a credential for
 * session "s" when the client's bytes start with "AUTH" (removed).  DNS
 * goes to a closed port: names fail fast.  Timeouts are 1 s.
 *
 * Invariants: the loop ends with no connection left (every path closes),
 * and what the client got back is empty, starts as an HTTP status line,
 * or is the upstream's bytes as they were sent (a forwarded answer is
 * relayed verbatim); after an AISB-DNS head, DNS responses in TCP framing
 * (dnsgate.c); after a SOCKS5 greeting, SOCKS5's answers in their order
 * (socks.c), then the upstream's bytes as sent.  ASan and UBSan watch the
 * rest.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "gate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_STREAM	65536

static struct gate	 fg;
static struct gate_auth	*auth;
static struct evconnlistener *up_listener;
static uint16_t		 up_port;
static const uint8_t	*up_data;
static size_t		 up_len;
static int		 up_fds[64];
static size_t		 up_nfds;

static void
up_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	ssize_t	 w;

	/* the answer at once, then a half-close; closed after the run */
	if (up_len > 0 && (w = write(fd, up_data, up_len)) < 0)
		w = 0;
	shutdown(fd, SHUT_WR);
	if (up_nfds < sizeof(up_fds) / sizeof(up_fds[0]))
		up_fds[up_nfds++] = fd;
	else
		close(fd);
}

static void
init(void)
{
	struct policy_errors	 errs;
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	char			 yaml[1024], err[256];
	int			 lfd, tfd[2];
	static const char	 token[] = "s:fuzz-secret\n";

	signal(SIGPIPE, SIG_IGN);
	log_init("fuzz", getenv("FUZZ_GATE_VERBOSE") != NULL ? 2 : 0);
	memset(&fg, 0, sizeof(fg));
	fg.num = &fg.own;
	if ((fg.base = event_base_new()) == NULL)
		abort();
	/* the upstream */
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		abort();
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 64) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &sl) == -1)
		abort();
	up_port = ntohs(sin.sin_port);
	if ((up_listener = evconnlistener_new(fg.base, up_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE, -1, lfd)) == NULL)
		abort();

	snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n"
	    "  - cidr: 127.0.0.0/8\n    ports: [\"1-65535\"]\n"
	    "  - host: \"*.fuzz.test\"\n    ports: [%u]\n"
	    "  - host: exact.fuzz.test\n    ports: [%u]\n"
	    "allow_ranges: [127.0.0.0/8]\n"
	    "dns:\n  servers: [\"127.0.0.1:9\"]\n", up_port, up_port);
	if (policy_load_buffer("fuzz.yaml", yaml, strlen(yaml), &fg.policy,
	    &errs) != 0)
		abort();
	if (pipe(tfd) == -1 || write(tfd[1], token, sizeof(token) - 1) < 0)
		abort();
	close(tfd[1]);
	if ((auth = gate_auth_load_fd(tfd[0], err, sizeof(err))) == NULL)
		abort();
	close(tfd[0]);

	fg.cfg.max_conns = 64;
	fg.cfg.max_per_client = 64;
	fg.cfg.header_timeout = 1;
	fg.cfg.connect_timeout = 1;
	fg.cfg.idle_timeout = 1;
	fg.cfg.dns_timeout = 1;
	fg.cfg.sni_check = 1;
	fg.cfg.splice = 1;
	fg.cfg.max_pipes = 4;
	fg.cfg.workers = 1;
	fg.cfg.dns_rate = 1000;		/* AISB-DNS: answers, and REFUSED */
	fg.cfg.dns_burst = 1000;
	fg.cfg.socks = 1;		/* SOCKS5 on the listener (socks.c) */
	fg.fd_limit = 1024;
	TAILQ_INIT(&fg.conns);
	if (gate_clients_init(&fg) == -1 ||
	    (fg.scratch = malloc(GATE_SCRATCH)) == NULL ||
	    (fg.synth = gate_synth_new()) == NULL)
		abort();
	if ((fg.dns = gate_dns_new(fg.base, fg.policy, 0, 1)) == NULL)
		abort();
	/* the gate "listens" on 127.0.0.1:1: a target there is itself */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(1);
	memcpy(&fg.bound, &sin, sizeof(sin));
	fg.boundlen = sizeof(sin);
	clock_gettime(CLOCK_MONOTONIC, &fg.started);
}

/* One pass of the loop: until some events ran, or tick passed. */
static void
spin(const struct timeval *tick)
{
	event_base_loopexit(fg.base, tick);
	event_base_loop(fg.base, EVLOOP_ONCE);
}

static double
elapsed_ms(const struct timespec *t0)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The client's bytes with every "PORT" (text) and "PBIN" (binary) made
 * the upstream's port. */
static size_t
subst(const uint8_t *in, size_t len, char *out, size_t cap)
{
	char	 port[8];
	size_t	 i, n = 0, pl;

	pl = (size_t)snprintf(port, sizeof(port), "%u", up_port);
	for (i = 0; i < len && n + pl < cap; i++) {
		if (i + 4 <= len && memcmp(in + i, "PORT", 4) == 0) {
			memcpy(out + n, port, pl);
			n += pl;
			i += 3;
		} else if (i + 4 <= len && memcmp(in + i, "PBIN", 4) == 0) {
			out[n++] = (char)(up_port >> 8);
			out[n++] = (char)(up_port & 0xff);
			i += 3;
		} else
			out[n++] = (char)in[i];
	}
	return n;
}

/*
 * What a SOCKS5 client may get back (socks.c): the method chosen (0xff
 * ends it), RFC 1929's status after method 2 (not 0 ends it), the
 * request's reply (bound to 0.0.0.0:0; not 0 ends it), then only the
 * upstream's bytes as sent.  Any prefix of that: the gate may close
 * anywhere.  1 when got is such.
 */
static int
socks_answer_ok(const uint8_t *got, size_t n)
{
	static const uint8_t	 bound[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t			 i = 2;

	if (n < 2)
		return n == 0 || got[0] == 5;
	if (got[0] != 5 || (got[1] != 0 && got[1] != 2 && got[1] != 0xff))
		return 0;
	if (got[1] == 0xff)
		return n == 2;
	if (got[1] == 2) {
		if (n < 3)
			return 1;
		if (got[2] != 1)
			return 0;
		if (n < 4)
			return 1;
		if (got[3] != 0)
			return n == 4;
		i = 4;
	}
	if (n <= i)
		return 1;
	if (got[i] != 5)
		return 0;
	if (n < i + 10)
		return n <= i + 2 || memcmp(got + i + 2, bound, n - i - 2) == 0;
	if (memcmp(got + i + 2, bound, 8) != 0)
		return 0;
	if (got[i + 1] != 0)
		return n == i + 10;
	i += 10;
	return n - i <= up_len && memcmp(got + i, up_data, n - i) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	static char		 cbuf[MAX_STREAM + 4096];
	struct sockaddr_in	 peer;
	struct timeval		 tick = { 0, 20000 };
	char			 got[16];
	size_t			 clen, n, off = 0, gotn = 0, i;
	ssize_t			 r;
	int			 sv[2], turns;
	struct timespec		 t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ready) {
		init();
		ready = 1;
	}
	if (size < 2)
		return 0;
	clen = (size_t)data[0] << 8 | data[1];
	if (clen > size - 2)
		clen = size - 2;
	up_data = data + 2 + clen;
	up_len = size - 2 - clen;
	fg.auth = NULL;
	if (clen >= 4 && memcmp(data + 2, "AUTH", 4) == 0) {
		fg.auth = auth;
		n = subst(data + 6, clen - 4, cbuf, sizeof(cbuf));
	} else
		n = subst(data + 2, clen, cbuf, sizeof(cbuf));

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) == -1)
		return 0;
	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer.sin_port = htons(40000);
	gate_accept(&fg, sv[0], (struct sockaddr *)&peer, sizeof(peer));

	/* send, read what comes back, close once the gate closed */
	for (turns = 0; turns < 20000 && elapsed_ms(&t0) < 8000; turns++) {
		if (off < n) {
			r = write(sv[1], cbuf + off, n - off);
			if (r > 0)
				off += (size_t)r;
			else if (r == -1 && errno != EAGAIN)
				off = n;
			if (off == n)
				shutdown(sv[1], SHUT_WR);
		} else if (n == 0 && turns == 0)
			shutdown(sv[1], SHUT_WR);
		spin(&tick);
		for (;;) {
			char	 b[65536];

			r = read(sv[1], b, sizeof(b));
			if (r > 0) {
				for (i = 0; i < (size_t)r && gotn < sizeof(got);
				    i++)
					got[gotn++] = b[i];
				continue;
			}
			break;
		}
		if (fg.num->ctr.active == 0)
			break;
		if (r == 0 && off == n) {
			/* the gate closed our side: close ours */
			close(sv[1]);
			sv[1] = -1;
			/* let it see the close */
			event_base_loopexit(fg.base, &tick);
			event_base_loop(fg.base, 0);
			if (fg.num->ctr.active == 0)
				break;
		}
		if (sv[1] == -1)
			continue;
	}
	if (sv[1] != -1)
		close(sv[1]);
	/* whatever is left is closed now; then nothing may remain */
	for (turns = 0; fg.num->ctr.active != 0 && turns < 20000 &&
	    elapsed_ms(&t0) < 16000; turns++) {
		spin(&tick);
	}
	if (fg.num->ctr.active != 0)
		abort();	/* a connection that never ends */
	for (i = 0; i < up_nfds; i++)
		close(up_fds[i]);
	up_nfds = 0;
	/* AISB-DNS: a frame of at least a header holding a response */
	if (gotn > 0 && n >= 9 && memcmp(cbuf, "AISB-DNS ", 9) == 0 &&
	    memcmp(got, "HTTP/", gotn < 5 ? gotn : 5) != 0) {
		if (gotn >= 5 && (((unsigned)(uint8_t)got[0] << 8 |
		    (uint8_t)got[1]) < 12 || ((uint8_t)got[4] & 0x80) == 0))
			abort();
		return 0;
	}
	/* SOCKS5: its answers, in their order */
	if (n > 0 && (uint8_t)cbuf[0] == 5) {
		if (!socks_answer_ok((const uint8_t *)got, gotn))
			abort();
		return 0;
	}
	/*
	 * an answer of the gate's own, or the upstream's bytes as sent; an
	 * AISB-TRANSPARENT TLS stream refused gets one fatal TLS alert
	 */
	if (gotn > 0 && memcmp(got, "HTTP/", gotn < 5 ? gotn : 5) != 0 &&
	    (gotn > up_len || memcmp(got, up_data, gotn) != 0) &&
	    (gotn != 7 || memcmp(got, "\x15\x03\x01\x00\x02\x02", 6) != 0))
		abort();
	return 0;
}
