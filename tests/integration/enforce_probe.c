/*
 * enforce_probe: run as the command under aisb-enforce, tries to get out in
 * every way the sandbox must refuse and prints one line per attempt:
 *
 *	ATTEMPT RESULT [detail]
 *
 * ATTEMPTs are argv words:
 *	tcp:ADDR:PORT	connect and read the peer's banner	open | blocked
 *	udp:ADDR:PORT	send a datagram, wait for the echo	open | blocked
 *	loudp:SRC,ADDR:PORT
 *			the same from a socket bound to local address SRC
 *			and to device lo (SO_BINDTODEVICE needs no privilege
 *			on an unbound socket): the packet leaves through the
 *			loopback rule; it must not reach ADDR	open | blocked
 *	dns:ADDR:PORT	an A query for probe.test over UDP	open | blocked
 *	ask:NAME:TYPE	a TYPE (A or AAAA) query for NAME to the DNS stub at
 *			127.0.0.1:53	answer rcode=N [ADDR,...] | blocked
 *	icmp:ADDR	echo request on a ping socket		open | blocked
 *	raw		socket(AF_INET, SOCK_RAW)		allowed | denied
 *	packet		socket(AF_PACKET, SOCK_RAW)		allowed | denied
 *	nft		delete table inet aisb over netlink	allowed | denied
 *	setuid		setuid(0)				allowed | denied
 *	caps		the Cap and NoNewPrivs lines of /proc/self/status
 *	ids		uid, gid and groups
 *	fds		open descriptors above 2
 *	sleep:N		sleep N seconds (between attempts)
 *	sweep:ADDR:PORT:SECS
 *			for SECS seconds, from every port of the ephemeral
 *			range in turn (bound explicitly), a UDP A query for
 *			pNNNNN.sweep.test to ADDR:PORT; the kernel refuses a
 *			datagram the rules drop (EPERM)	sent N refused M
 *
 * IPv6 addresses are written in brackets: tcp:[fd00:199::1]:80.  Every
 * network attempt gives up after TIMEOUT_MS.  Exit 0 unless the usage is
 * wrong: the test script judges the lines.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#define TIMEOUT_MS	2000

static int
parse_target(const char *s, struct sockaddr_storage *ss, socklen_t *len,
    int need_port)
{
	char			 host[64];
	const char		*port = NULL, *end;
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	size_t			 hl;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL)
			return -1;
		hl = (size_t)(end - s - 1);
		s++;
		if (end[1] == ':')
			port = end + 2;
	} else {
		end = strchr(s, ':');
		hl = end != NULL ? (size_t)(end - s) : strlen(s);
		if (end != NULL)
			port = end + 1;
	}
	if (hl >= sizeof(host) || (need_port && port == NULL))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port ? (uint16_t)atoi(port) : 0);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port ? (uint16_t)atoi(port) : 0);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

static int
wait_fd(int fd, short ev)
{
	struct pollfd	 pfd = { .fd = fd, .events = ev };
	int		 n;

	while ((n = poll(&pfd, 1, TIMEOUT_MS)) == -1 && errno == EINTR)
		;
	return n;
}

static void
result(const char *what, const char *res, const char *detail)
{
	printf("%s %s%s%s\n", what, res, detail ? " " : "",
	    detail ? detail : "");
	fflush(stdout);
}

static void
blocked_errno(const char *what, const char *step)
{
	char	 d[128];

	snprintf(d, sizeof(d), "(%s: %s)", step, strerror(errno));
	result(what, "blocked", d);
}

static void
try_tcp(const char *what, const char *spec)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			 buf[64];
	ssize_t			 n;
	int			 fd, soerr = 0;
	socklen_t		 sl = sizeof(soerr);

	if (parse_target(spec, &ss, &len, 1) == -1) {
		result(what, "usage", NULL);
		return;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1) {
		blocked_errno(what, "socket");
		return;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
	    errno != EINPROGRESS) {
		blocked_errno(what, "connect");
		goto out;
	}
	if (wait_fd(fd, POLLOUT) == 0) {
		result(what, "blocked", "(connect: timeout)");
		goto out;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1 ||
	    soerr != 0) {
		errno = soerr;
		blocked_errno(what, "connect");
		goto out;
	}
	if (wait_fd(fd, POLLIN) <= 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		result(what, "blocked", "(no banner)");
		goto out;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	result(what, "open", buf);
out:
	close(fd);
}

static void	try_dgram_from(const char *, const char *, int,
		    const void *, size_t, const char *);

/* Sends msg, waits for any answer. */
static void
try_dgram(const char *what, const char *spec, int proto, const void *msg,
    size_t msglen)
{
	try_dgram_from(what, spec, proto, msg, msglen, NULL);
}

static void
try_loudp(const char *what, const char *spec)
{
	char		 src[64];
	const char	*comma = strchr(spec, ',');

	if (comma == NULL || (size_t)(comma - spec) >= sizeof(src)) {
		result(what, "usage", NULL);
		return;
	}
	memcpy(src, spec, (size_t)(comma - spec));
	src[comma - spec] = '\0';
	try_dgram_from(what, comma + 1, IPPROTO_UDP, "ping", 4, src);
}

/* With src: bound to that address and to device lo first. */
static void
try_dgram_from(const char *what, const char *spec, int proto, const void *msg,
    size_t msglen, const char *src)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			 buf[512];
	int			 fd;

	if (parse_target(spec, &ss, &len, proto != IPPROTO_ICMP) == -1) {
		result(what, "usage", NULL);
		return;
	}
	if ((fd = socket(ss.ss_family, SOCK_DGRAM, proto == IPPROTO_ICMP ?
	    (ss.ss_family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6) : 0))
	    == -1) {
		blocked_errno(what, "socket");
		return;
	}
	if (src != NULL) {
		struct sockaddr_storage	 ls;
		socklen_t		 ll;

		if (parse_target(src, &ls, &ll, 0) == -1) {
			result(what, "usage", NULL);
			goto out;
		}
		if (bind(fd, (struct sockaddr *)&ls, ll) == -1) {
			blocked_errno(what, "bind");
			goto out;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) ==
		    -1) {
			blocked_errno(what, "SO_BINDTODEVICE");
			goto out;
		}
	}
	if (sendto(fd, msg, msglen, 0, (struct sockaddr *)&ss, len) == -1) {
		blocked_errno(what, "send");
		goto out;
	}
	if (wait_fd(fd, POLLIN) <= 0) {
		result(what, "blocked", "(no answer)");
		goto out;
	}
	if (recv(fd, buf, sizeof(buf), 0) == -1) {
		blocked_errno(what, "recv");
		goto out;
	}
	result(what, "open", NULL);
out:
	close(fd);
}

static void
try_dns(const char *what, const char *spec)
{
	static const unsigned char q[] = {
		0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
		5, 'p', 'r', 'o', 'b', 'e', 4, 't', 'e', 's', 't', 0,
		0x00, 0x01, 0x00, 0x01
	};

	try_dgram(what, spec, IPPROTO_UDP, q, sizeof(q));
}

/* Asks the stub and prints the rcode and the addresses answered. */
static void
try_ask(const char *what, const char *spec)
{
	struct sockaddr_in	 sin;
	unsigned char		 q[300], r[512];
	char			 name[256], out[512], a[INET6_ADDRSTRLEN];
	const char		*colon = strrchr(spec, ':'), *s, *dot;
	size_t			 off = 12, ol = 0, an, i, l;
	ssize_t			 n;
	int			 fd, aaaa;

	if (colon == NULL || (size_t)(colon - spec) >= sizeof(name)) {
		result(what, "usage", NULL);
		return;
	}
	memcpy(name, spec, (size_t)(colon - spec));
	name[colon - spec] = '\0';
	aaaa = strcmp(colon + 1, "AAAA") == 0;
	memset(q, 0, sizeof(q));
	q[0] = 0x42;
	q[2] = 0x01;
	q[5] = 1;
	for (s = name; *s != '\0'; s += l + (dot ? 1 : 0)) {
		dot = strchr(s, '.');
		l = dot ? (size_t)(dot - s) : strlen(s);
		if (l == 0 || l > 63 || off + l + 6 > sizeof(q)) {
			result(what, "usage", NULL);
			return;
		}
		q[off++] = (unsigned char)l;
		memcpy(q + off, s, l);
		off += l;
	}
	q[off++] = 0;
	q[off++] = 0;
	q[off++] = aaaa ? 28 : 1;
	q[off++] = 0;
	q[off++] = 1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(53);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_DGRAM, 0)) == -1) {
		blocked_errno(what, "socket");
		return;
	}
	if (sendto(fd, q, off, 0, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		blocked_errno(what, "send");
		goto out;
	}
	if (wait_fd(fd, POLLIN) <= 0) {
		result(what, "blocked", "(no answer)");
		goto out;
	}
	if ((n = recv(fd, r, sizeof(r), 0)) < 12 || r[0] != 0x42) {
		result(what, "blocked", "(bad answer)");
		goto out;
	}
	ol = (size_t)snprintf(out, sizeof(out), "rcode=%u", r[3] & 0x0f);
	an = (size_t)r[6] << 8 | r[7];
	/* the question is echoed as asked; answers follow, 12+4+rdata */
	for (i = 0; i < an; i++) {
		size_t	 rdl;

		if (off + 12 > (size_t)n)
			break;
		rdl = (size_t)r[off + 10] << 8 | r[off + 11];
		if (off + 12 + rdl > (size_t)n || (rdl != 4 && rdl != 16))
			break;
		inet_ntop(rdl == 4 ? AF_INET : AF_INET6, r + off + 12, a,
		    sizeof(a));
		if (ol < sizeof(out))
			ol += (size_t)snprintf(out + ol, sizeof(out) - ol,
			    "%s%s", i == 0 ? " " : ",", a);
		off += 12 + rdl;
	}
	result(what, "answer", out);
out:
	close(fd);
}

/*
 * What a command does to reuse the refresher's closed resolver flow:
 * conntrack keeps a UDP flow for 30 s after its socket is gone, so a
 * datagram from the same source port to the same server would match it.
 * The query names carry the source port so that the server's log says
 * which sweep datagram got through.
 */
static void
try_sweep(const char *what, const char *spec)
{
	struct sockaddr_storage	 ss, local;
	socklen_t		 len;
	struct timespec		 t0, t;
	unsigned char		 q[64];
	char			 spec2[128], *colon, d[64];
	unsigned long		 sent = 0, refused = 0;
	unsigned		 lo, hi, port, secs;
	size_t			 off;
	FILE			*f;
	int			 fd;

	if (strlen(spec) >= sizeof(spec2)) {
		result(what, "usage", NULL);
		return;
	}
	strcpy(spec2, spec);
	if ((colon = strrchr(spec2, ':')) == NULL) {
		result(what, "usage", NULL);
		return;
	}
	*colon = '\0';
	secs = (unsigned)atoi(colon + 1);
	if (parse_target(spec2, &ss, &len, 1) == -1) {
		result(what, "usage", NULL);
		return;
	}
	if ((f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) ==
	    NULL || fscanf(f, "%u %u", &lo, &hi) != 2 || lo > hi ||
	    hi > 65535) {
		if (f != NULL)
			fclose(f);
		result(what, "usage", "(ip_local_port_range)");
		return;
	}
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (port = lo; port <= hi; port++) {
			memset(q, 0, sizeof(q));
			q[0] = (unsigned char)(port >> 8);
			q[1] = (unsigned char)port;
			q[2] = 0x01;
			q[5] = 1;
			off = 12;
			q[off] = (unsigned char)snprintf((char *)q + off + 1,
			    sizeof(q) - off - 1, "p%05u", port);
			off += 1 + q[off];
			q[off++] = 5;
			memcpy(q + off, "sweep", 5);
			off += 5;
			q[off++] = 4;
			memcpy(q + off, "test", 4);
			off += 4;
			q[off++] = 0;
			q[off++] = 0;
			q[off++] = 1;	/* A */
			q[off++] = 0;
			q[off++] = 1;	/* IN */
			if ((fd = socket(ss.ss_family, SOCK_DGRAM |
			    SOCK_NONBLOCK, 0)) == -1)
				continue;
			memset(&local, 0, sizeof(local));
			local.ss_family = ss.ss_family;
			if (ss.ss_family == AF_INET)
				((struct sockaddr_in *)&local)->sin_port =
				    htons((uint16_t)port);
			else
				((struct sockaddr_in6 *)&local)->sin6_port =
				    htons((uint16_t)port);
			if (bind(fd, (struct sockaddr *)&local, len) == 0) {
				if (sendto(fd, q, off, 0,
				    (struct sockaddr *)&ss, len) == -1)
					refused++;
				else
					sent++;
			}
			close(fd);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < (time_t)secs);
	snprintf(d, sizeof(d), "%lu refused %lu", sent, refused);
	result(what, "sent", d);
}

static void
try_icmp(const char *what, const char *spec)
{
	struct icmphdr	 h;

	memset(&h, 0, sizeof(h));
	/* Echo request; the kernel fills in the id and the checksum. */
	h.type = spec[0] == '[' ? 128 : ICMP_ECHO;
	h.un.echo.sequence = htons(1);
	try_dgram(what, spec, IPPROTO_ICMP, &h, sizeof(h));
}

static void
try_socket(const char *what, int domain, int type, int proto)
{
	int	 fd;

	if ((fd = socket(domain, type, proto)) == -1) {
		char	 d[96];

		snprintf(d, sizeof(d), "(%s)", strerror(errno));
		result(what, "denied", d);
		return;
	}
	close(fd);
	result(what, "allowed", NULL);
}

static size_t
put_msg(char *buf, uint16_t type, uint16_t flags, uint32_t seq,
    uint16_t resid, const char *table)
{
	struct nlmsghdr	*nlh = (struct nlmsghdr *)buf;
	struct nfgenmsg	*nfg = (struct nfgenmsg *)NLMSG_DATA(nlh);
	struct nlattr	*a;
	size_t		 tl = table ? strlen(table) + 1 : 0;

	memset(buf, 0, NLMSG_SPACE(sizeof(*nfg) + NLA_HDRLEN + NLA_ALIGN(tl)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*nfg));
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	nfg->nfgen_family = 1;	/* NFPROTO_INET */
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(resid);
	if (table != NULL) {
		a = (struct nlattr *)(buf + NLMSG_ALIGN(nlh->nlmsg_len));
		a->nla_type = NFTA_TABLE_NAME;
		a->nla_len = (uint16_t)(NLA_HDRLEN + tl);
		memcpy((char *)a + NLA_HDRLEN, table, tl);
		nlh->nlmsg_len = (uint32_t)(NLMSG_ALIGN(nlh->nlmsg_len) +
		    NLA_ALIGN(a->nla_len));
	}
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

/* Hand-made batch: begin, DELTABLE inet aisb, end.  Must be refused. */
static void
try_nft(const char *what)
{
	char			 buf[512], d[96];
	struct sockaddr_nl	 sa = { .nl_family = AF_NETLINK };
	struct nlmsghdr		*nlh;
	size_t			 off = 0;
	ssize_t			 n;
	int			 fd;

	if ((fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER)) == -1) {
		snprintf(d, sizeof(d), "(socket: %s)", strerror(errno));
		result(what, "denied", d);
		return;
	}
	off += put_msg(buf + off, NFNL_MSG_BATCH_BEGIN, 0, 1,
	    NFNL_SUBSYS_NFTABLES, NULL);
	off += put_msg(buf + off, (NFNL_SUBSYS_NFTABLES << 8) |
	    NFT_MSG_DELTABLE, NLM_F_ACK, 2, 0, "aisb");
	off += put_msg(buf + off, NFNL_MSG_BATCH_END, 0, 3,
	    NFNL_SUBSYS_NFTABLES, NULL);
	if (sendto(fd, buf, off, 0, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		snprintf(d, sizeof(d), "(send: %s)", strerror(errno));
		result(what, "denied", d);
		goto out;
	}
	if (wait_fd(fd, POLLIN) <= 0 || (n = recv(fd, buf, sizeof(buf), 0))
	    < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		result(what, "denied", "(no answer)");
		goto out;
	}
	nlh = (struct nlmsghdr *)buf;
	if (nlh->nlmsg_type == NLMSG_ERROR &&
	    ((struct nlmsgerr *)NLMSG_DATA(nlh))->error != 0) {
		snprintf(d, sizeof(d), "(%s)", strerror(
		    -((struct nlmsgerr *)NLMSG_DATA(nlh))->error));
		result(what, "denied", d);
	} else
		result(what, "allowed", NULL);
out:
	close(fd);
}

static void
try_setuid(const char *what)
{
	char	 d[96];

	if (setuid(0) == 0) {
		result(what, "allowed", NULL);
		return;
	}
	snprintf(d, sizeof(d), "(%s)", strerror(errno));
	result(what, "denied", d);
}

static void
show_caps(const char *what)
{
	FILE	*f;
	char	 line[256], out[512] = "";
	size_t	 off = 0;

	if ((f = fopen("/proc/self/status", "r")) == NULL) {
		result(what, "error", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Cap", 3) != 0 &&
		    strncmp(line, "NoNewPrivs", 10) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*strchr(line, ':') = '=';
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s",
		    off ? " " : "", line + strspn(line, " \t"));
	}
	fclose(f);
	/* "CapInh=\t000..." : drop the tabs for the test's sake */
	for (off = 0; out[off] != '\0'; off++)
		if (out[off] == '\t') {
			memmove(out + off, out + off + 1, strlen(out + off));
			off--;
		}
	result(what, "is", out);
}

static void
show_ids(const char *what)
{
	gid_t	 g[64];
	char	 out[512];
	int	 n, i;
	size_t	 off;

	n = getgroups(64, g);
	off = (size_t)snprintf(out, sizeof(out), "uid=%u euid=%u gid=%u "
	    "groups=", (unsigned)getuid(), (unsigned)geteuid(),
	    (unsigned)getgid());
	for (i = 0; i < n && off < sizeof(out); i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%u",
		    i ? "," : "", (unsigned)g[i]);
	result(what, "is", out);
}

static void
show_fds(const char *what)
{
	DIR		*d;
	struct dirent	*de;
	char		 out[256] = "";
	size_t		 off = 0;
	int		 self;

	if ((d = opendir("/proc/self/fd")) == NULL) {
		result(what, "error", strerror(errno));
		return;
	}
	self = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		int	 fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd <= 2 || fd == self)
			continue;
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%d",
		    off ? "," : "", fd);
		if (off >= sizeof(out))
			break;
	}
	closedir(d);
	result(what, "is", off ? out : "none");
}

int
main(int argc, char **argv)
{
	int	 i;

	if (argc < 2) {
		fprintf(stderr, "usage: enforce_probe ATTEMPT...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		const char	*a = argv[i];

		if (strncmp(a, "tcp:", 4) == 0)
			try_tcp(a, a + 4);
		else if (strncmp(a, "udp:", 4) == 0)
			try_dgram(a, a + 4, IPPROTO_UDP, "ping", 4);
		else if (strncmp(a, "loudp:", 6) == 0)
			try_loudp(a, a + 6);
		else if (strncmp(a, "dns:", 4) == 0)
			try_dns(a, a + 4);
		else if (strncmp(a, "ask:", 4) == 0)
			try_ask(a, a + 4);
		else if (strncmp(a, "icmp:", 5) == 0)
			try_icmp(a, a + 5);
		else if (strcmp(a, "raw") == 0)
			try_socket(a, AF_INET, SOCK_RAW, IPPROTO_ICMP);
		else if (strcmp(a, "packet") == 0)
			try_socket(a, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
		else if (strcmp(a, "nft") == 0)
			try_nft(a);
		else if (strcmp(a, "setuid") == 0)
			try_setuid(a);
		else if (strcmp(a, "caps") == 0)
			show_caps(a);
		else if (strcmp(a, "ids") == 0)
			show_ids(a);
		else if (strcmp(a, "fds") == 0)
			show_fds(a);
		else if (strncmp(a, "sweep:", 6) == 0)
			try_sweep(a, a + 6);
		else if (strncmp(a, "sleep:", 6) == 0)
			sleep((unsigned)atoi(a + 6));
		else {
			fprintf(stderr, "enforce_probe: unknown attempt %s\n",
			    a);
			return 2;
		}
	}
	return 0;
}
