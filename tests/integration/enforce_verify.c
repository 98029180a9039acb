/*
 * enforce_verify: drives enforcer/nft.c and verify.c directly so that
 * enforce_netns.sh can tamper with the table between loading and checking
 * it (with the nft tool) and see the read-back refuse it.
 *
 *	enforce_verify apply PLAN	load the table; exit 0 or 1
 *	enforce_verify verify PLAN	read it back; "verify ok" or
 *					"verify failed: WHY"; exit 0 or 1
 *	enforce_verify own READY	create table inet aisb owned by this
 *					process (NFT_TABLE_F_OWNER), as
 *					another firewall daemon may; touch
 *					READY, then hold it until killed
 */
#include "config.h"

#include <sys/socket.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/table.h>

#include "nft.h"
#include "plan.h"

/*
 * The owner flag holds while this socket is open: the process keeps it.  A
 * table left by an earlier step is replaced (the flag cannot be added to
 * an existing table).
 */
static int
own(const char *ready)
{
	struct mnl_socket	*nl;
	struct mnl_nlmsg_batch	*mb;
	struct nftnl_table	*t;
	struct nlmsghdr		*nlh;
	char			 buf[8192];
	uint32_t		 seq = (uint32_t)time(NULL);
	ssize_t			 n;
	int			 fd;

	if ((nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL ||
	    mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1 ||
	    (t = nftnl_table_alloc()) == NULL) {
		perror("own");
		return 2;
	}
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE);
	mb = mnl_nlmsg_batch_start(buf, sizeof(buf) / 2);
	nftnl_batch_begin(mnl_nlmsg_batch_current(mb), seq++);
	mnl_nlmsg_batch_next(mb);
	/* add, delete, add with the flag; only the last one asks an ACK */
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(mb),
	    NFT_MSG_NEWTABLE, NFPROTO_INET, NLM_F_CREATE, seq++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(mb);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(mb),
	    NFT_MSG_DELTABLE, NFPROTO_INET, 0, seq++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(mb);
	nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, NFT_TABLE_F_OWNER);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(mb),
	    NFT_MSG_NEWTABLE, NFPROTO_INET, NLM_F_CREATE | NLM_F_ACK, seq++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(mb);
	nftnl_batch_end(mnl_nlmsg_batch_current(mb), seq++);
	mnl_nlmsg_batch_next(mb);
	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(mb),
	    mnl_nlmsg_batch_size(mb)) == -1 ||
	    (n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) == -1 ||
	    mnl_cb_run(buf, (size_t)n, 0, mnl_socket_get_portid(nl), NULL,
	    NULL) == -1) {
		perror("own: new table");
		return 1;
	}
	mnl_nlmsg_batch_stop(mb);
	nftnl_table_free(t);
	if ((fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1) {
		perror(ready);
		return 2;
	}
	close(fd);
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	struct enf_plan		*plan;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	char			*buf, err[1200];
	ssize_t			 n;
	int			 fd, rc = 1;

	if (argc == 3 && strcmp(argv[1], "own") == 0)
		return own(argv[2]);
	if (argc != 3 || (strcmp(argv[1], "apply") != 0 &&
	    strcmp(argv[1], "verify") != 0)) {
		fprintf(stderr, "usage: enforce_verify apply|verify PLAN | "
		    "own READY\n");
		return 2;
	}
	if ((buf = malloc(ENF_PLAN_MAX_BYTES + 1)) == NULL ||
	    (fd = open(argv[2], O_RDONLY)) == -1) {
		perror(argv[2]);
		return 2;
	}
	n = enf_plan_read(fd, buf, ENF_PLAN_MAX_BYTES + 1, err, sizeof(err));
	close(fd);
	if (n == -1 || (plan = enf_plan_parse(buf, (size_t)n, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: %s\n", argv[2], err);
		free(buf);
		return 2;
	}
	free(buf);
	if ((rs = nft_ruleset_new(plan, getuid(), err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		enf_plan_free(plan);
		return 2;
	}
	if (strcmp(argv[1], "apply") == 0) {
		if (nft_batch_init(&b) == 0) {
			if (nft_batch_ruleset(rs, (uint32_t)time(NULL), &b, err,
			    sizeof(err)) == 0 &&
			    nft_send(&b, err, sizeof(err)) == 0)
				rc = 0;
			else
				fprintf(stderr, "apply: %s\n", err);
			nft_batch_release(&b);
		}
	} else if (nft_verify(rs, err, sizeof(err)) == 0) {
		printf("verify ok\n");
		rc = 0;
	} else
		printf("verify failed: %s\n", err);
	nft_ruleset_free(rs);
	enf_plan_free(plan);
	return rc;
}
