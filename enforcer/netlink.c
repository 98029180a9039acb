/*
 * The NETLINK_NETFILTER socket (netlink.h): what the table's builder and
 * its read-back both need, so that neither calls into the other.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libnftnl/common.h>

#include "enforcer/netlink.h"
#include "enforcer/nft.h"

#define ACK_TIMEOUT_SEC	5	/* the kernel answers at once; a hang is a bug */

/* ---- sending -------------------------------------------------------- */

struct mnl_socket *
nft_socket_open(char *err, size_t errlen)
{
	struct mnl_socket	*nl;
	struct timeval		 tv = { .tv_sec = ACK_TIMEOUT_SEC };
	int			 one = 1;

	if ((nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL) {
		snprintf(err, errlen, "netlink socket: %s", strerror(errno));
		return NULL;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		snprintf(err, errlen, "netlink bind: %s", strerror(errno));
		mnl_socket_close(nl);
		return NULL;
	}
	/* Errors echo our message unless capped; we only need the header. */
	(void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == -1) {
		snprintf(err, errlen, "SO_RCVTIMEO: %s", strerror(errno));
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

/*
 * The kernel's refusal of message desc.  EPERM has two causes that look
 * alike: no CAP_NET_ADMIN, or a table owned by another process's netlink
 * socket (NFT_TABLE_F_OWNER); the message names the one it is.
 */
static void
refused(const char *desc, int error, char *err, size_t errlen)
{
	uint32_t	 owner = 0;

	if (error == EPERM && nft_table_owner(&owner) == 1)
		snprintf(err, errlen, "kernel refused \"%s\": %s: table inet "
		    "%s is owned by another process (flag NFT_TABLE_F_OWNER, "
		    "netlink port id %u) and only that process may change it; "
		    "it goes away when that process closes its netlink socket",
		    desc, strerror(error), NFT_TABLE, owner);
	else
		snprintf(err, errlen, "kernel refused \"%s\": %s%s", desc,
		    strerror(error), error == EPERM ? " (no CAP_NET_ADMIN?)" :
		    "");
}

int
nft_send(const struct nft_batch *b, char *err, size_t errlen)
{
	struct mnl_socket	*nl;
	char			 seen[NFT_BATCH_MSGS];
	char			*rbuf = NULL;
	size_t			 acks = 0, rbufsz = 64 * 1024;
	uint32_t		 portid;
	ssize_t			 n;
	int			 rc = -1;

	if ((nl = nft_socket_open(err, errlen)) == NULL)
		return -1;
	portid = mnl_socket_get_portid(nl);
	memset(seen, 0, sizeof(seen));
	if ((rbuf = malloc(rbufsz)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (mnl_socket_sendto(nl, b->buf, b->len) == -1) {
		snprintf(err, errlen, "netlink send: %s", strerror(errno));
		goto out;
	}
	/*
	 * One ACK per message asked for: an error for any one message means
	 * the kernel dropped the whole transaction.  Stop at the first error;
	 * a reply that never comes is a failure too (SO_RCVTIMEO).
	 */
	while (acks < b->nacks) {
		const struct nlmsghdr	*nlh;
		int			 left;

		n = mnl_socket_recvfrom(nl, rbuf, rbufsz);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "netlink receive (%zu of %zu "
			    "acks): %s", acks, b->nacks,
			    errno == EAGAIN ? "timed out" : strerror(errno));
			goto out;
		}
		left = (int)n;
		for (nlh = (const struct nlmsghdr *)rbuf;
		    mnl_nlmsg_ok(nlh, left);
		    nlh = mnl_nlmsg_next(nlh, &left)) {
			const struct nlmsgerr	*e;
			uint32_t		 idx;

			if (nlh->nlmsg_pid != 0 && nlh->nlmsg_pid != portid)
				continue;
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;	/* no echo asked; ignore */
			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
				snprintf(err, errlen, "truncated netlink ack");
				goto out;
			}
			e = mnl_nlmsg_get_payload(nlh);
			idx = nlh->nlmsg_seq - b->seq;
			if (idx >= b->nmsgs) {
				snprintf(err, errlen, "netlink ack for an "
				    "unknown sequence number %u",
				    nlh->nlmsg_seq);
				goto out;
			}
			if (e->error != 0) {
				refused(b->desc[idx], -e->error, err, errlen);
				goto out;
			}
			/* Only the messages between the markers asked. */
			if (idx == 0 || idx == b->nmsgs - 1 || seen[idx]) {
				snprintf(err, errlen, "unexpected netlink ack "
				    "for \"%s\"", b->desc[idx]);
				goto out;
			}
			seen[idx] = 1;
			acks++;
		}
	}
	rc = 0;
out:
	free(rbuf);
	mnl_socket_close(nl);
	return rc;
}

/* ---- queries -------------------------------------------------------- */

int
nft_query(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
    mnl_cb_t cb, void *data)
{
	const struct nlmsghdr	*req = (const struct nlmsghdr *)buf;
	uint32_t		 portid = mnl_socket_get_portid(nl);
	ssize_t			 n;
	int			 ret = MNL_CB_OK;

	if (mnl_socket_sendto(nl, buf, req->nlmsg_len) == -1)
		return -1;
	do {
		n = mnl_socket_recvfrom(nl, buf, bufsz);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
	} while (ret > MNL_CB_STOP);
	return ret == -1 ? -1 : 0;
}

static int
table_cb(const struct nlmsghdr *nlh, void *arg)
{
	return nftnl_table_nlmsg_parse(nlh, arg) == -1 ? MNL_CB_ERROR :
	    MNL_CB_OK;
}

int
nft_query_table(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
    const struct nftnl_table *want, struct nftnl_table *got)
{
	struct nlmsghdr	*nlh;

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET,
	    NLM_F_ACK, seq);
	nftnl_table_nlmsg_build_payload(nlh, want);
	return nft_query(nl, buf, bufsz, seq, table_cb, got);
}

int
nft_table_owner(uint32_t *portid)
{
	struct mnl_socket	*nl;
	struct nftnl_table	*want = NULL, *got = NULL;
	char			*buf = NULL, err[256];
	size_t			 bufsz = 16 * 1024;
	uint32_t		 seq = (uint32_t)time(NULL);
	int			 rc = -1, saved;

	if ((nl = nft_socket_open(err, sizeof(err))) == NULL)
		return -1;
	if ((buf = malloc(bufsz)) == NULL ||
	    (want = nftnl_table_alloc()) == NULL ||
	    (got = nftnl_table_alloc()) == NULL)
		goto out;
	nftnl_table_set_u32(want, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(want, NFTNL_TABLE_NAME, NFT_TABLE) == -1)
		goto out;
	if (nft_query_table(nl, buf, bufsz, seq, want, got) == -1) {
		rc = errno == ENOENT ? 0 : -1;
		goto out;
	}
	rc = 0;
	if (nftnl_table_get_u32(got, NFTNL_TABLE_FLAGS) & NFT_TABLE_F_OWNER) {
		*portid = nftnl_table_is_set(got, NFTNL_TABLE_OWNER) ?
		    nftnl_table_get_u32(got, NFTNL_TABLE_OWNER) : 0;
		rc = 1;
	}
out:
	saved = errno;
	if (want != NULL)
		nftnl_table_free(want);
	if (got != NULL)
		nftnl_table_free(got);
	free(buf);
	mnl_socket_close(nl);
	errno = saved;
	return rc;
}
