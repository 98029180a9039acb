/*
 * splice_relay: the least a CONNECT proxy can do for bulk, to tell what
 * the machine allows from what the gate costs.
 *
 *	splice_relay TARGET_PORT	(prints its own port on 127.0.0.1)
 *
 * A process per connection: read the request head, connect to
 * 127.0.0.1:TARGET_PORT whatever was asked, answer 200, then move bytes
 * socket -> pipe -> socket with splice(2) in blocking calls, 256 KiB
 * pipes, no event loop, no policy, no accounting.  Not a proxy: a bench
 * reference only (docs/performance.md, "Bulk: the ceiling").  Bounded: the
 * head is at most 4 KiB, and it serves until killed.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK	(256 * 1024)

/* Moves what one readable socket has through p to out.  0 at EOF/error. */
static int
pass(int in, int p[2], int out)
{
	ssize_t	 n, w;

	if ((n = splice(in, NULL, p[1], NULL, CHUNK, SPLICE_F_MOVE)) <= 0)
		return 0;
	while (n > 0) {
		if ((w = splice(p[0], NULL, out, NULL, (size_t)n,
		    SPLICE_F_MOVE)) <= 0)
			return 0;
		n -= w;
	}
	return 1;
}

static void __attribute__((noreturn))
serve(int c, int tport)
{
	struct sockaddr_in	 sin;
	struct pollfd		 pf[2];
	char			 head[4096];
	size_t			 off = 0;
	ssize_t			 n;
	int			 u, up[2], down[2];

	while (off < sizeof(head) - 1 &&
	    (n = read(c, head + off, sizeof(head) - 1 - off)) > 0) {
		off += (size_t)n;
		head[off] = '\0';
		if (strstr(head, "\r\n\r\n") != NULL)
			break;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)tport);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((u = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(u, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    write(c, "HTTP/1.1 200 OK\r\n\r\n", 19) != 19 ||
	    pipe(up) == -1 || pipe(down) == -1)
		_exit(1);
	(void)fcntl(up[0], F_SETPIPE_SZ, CHUNK);
	(void)fcntl(down[0], F_SETPIPE_SZ, CHUNK);
	pf[0].fd = c;
	pf[1].fd = u;
	pf[0].events = pf[1].events = POLLIN;
	while (poll(pf, 2, -1) > 0) {
		if (pf[0].revents != 0 && !pass(c, up, u))
			break;
		if (pf[1].revents != 0 && !pass(u, down, c))
			break;
	}
	_exit(0);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 l, c, tport, one = 1;

	if (argc != 2 || (tport = atoi(argv[1])) <= 0 || tport > 65535) {
		fprintf(stderr, "usage: splice_relay TARGET_PORT\n");
		return 2;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(l, 128) == -1 ||
	    getsockname(l, (struct sockaddr *)&sin, &len) == -1) {
		perror("splice_relay");
		return 1;
	}
	printf("%u\n", ntohs(sin.sin_port));
	fflush(stdout);
	signal(SIGCHLD, SIG_IGN);	/* no zombies */
	for (;;) {
		if ((c = accept(l, NULL, NULL)) == -1)
			continue;
		if (fork() == 0) {
			close(l);
			serve(c, tport);
		}
		close(c);
	}
}
