/*
 * The nftables half of aisb-enforce: table `inet aisb`, built with libnftnl,
 * sent through libmnl as one atomic batch, read back and verified.
 *
 * nft_ruleset_new() turns a plan into the expected objects once; the same
 * objects are serialised into the batch (nft_batch_ruleset) and compared with
 * what the kernel reports (nft_verify), so what is checked is what was sent.
 */
#ifndef AISB_ENF_NFT_H
#define AISB_ENF_NFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "enforcer/plan.h"

#define NFT_TABLE	"aisb"
#define NFT_CHAIN	"output"
#define NFT_SET4	"allowed4"	/* ipv4_addr . inet_service, timeout */
#define NFT_SET6	"allowed6"	/* ipv6_addr . inet_service, timeout */

#define NFT_MAX_RULES	48

/*
 * With transparent or dns-gate lines (gate mode, tproxy.h): a nat chain
 * that redirects the sandbox's TCP to the transparent ports, and its DNS,
 * to the relay's local ports.  Priority -100 (dstnat): before the filter,
 * which then sees the redirected packet going to a local address on lo.
 */
#define NFT_NAT_CHAIN	"transparent"
#define NFT_NAT_PRIO	(-100)

/*
 * With a record line (direct mode): the NFLOG group the table logs to and
 * the recorder (record.h) reads, the two chains that log what passes, and
 * the prefixes that become the capture's comments (docs/record.md).  The
 * group is per network namespace: nothing else in the sandbox's uses it.
 */
#define NFT_RECORD_GROUP	41307	/* 0xa15b */
#define NFT_REC_OUT		"record_out"	/* hook output, priority 100 */
#define NFT_REC_IN		"record_in"	/* hook input, priority 100 */
#define NFT_REC_PRIO		100	/* after the filter (0) */
#define NFT_REC_ACCEPT		"aisb accept"	/* a packet opening a flow */
#define NFT_REC_DROP		"aisb drop"	/* dropped: not allowed */
#define NFT_REC_DROP_DNS	"aisb drop dns"	/* raw DNS, not the refresher's */

/*
 * One batch ready to send: buf holds len bytes of netlink messages, nacks of
 * which ask for an ACK (all but the batch begin/end markers); desc[i] names
 * the message of sequence number seq + i for error messages.
 */
#define NFT_BATCH_LIMIT	(64 * 1024)
#define NFT_BATCH_MSGS	(NFT_MAX_RULES + 16)

struct nft_batch {
	char		*buf;		/* 2 * NFT_BATCH_LIMIT, see nft.c */
	size_t		 len;
	uint32_t	 seq;		/* of the batch begin marker */
	size_t		 nmsgs;		/* all messages, markers included */
	size_t		 nacks;
	const char	*desc[NFT_BATCH_MSGS];
};

/*
 * One element of allowed4/allowed6.  renew: the element is believed to be
 * in the set already, so it is deleted and added again in the same batch;
 * kernels before 6.10 do not move the expiry of an element added twice.
 */
struct nft_elem {
	struct enf_addr	 addr;
	uint16_t	 port;		/* host order */
	uint32_t	 timeout_ms;
	int		 renew;
};

struct nft_ruleset;

/*
 * Builds the expected table, chain, sets and rules for plan.  refresher_uid
 * is the uid whose DNS queries to the plan's resolvers are let out (direct
 * mode).  Returns NULL with a message in err.
 */
struct nft_ruleset	*nft_ruleset_new(const struct enf_plan *plan,
			    uid_t refresher_uid, char *err, size_t errlen);
void			 nft_ruleset_free(struct nft_ruleset *);
size_t			 nft_ruleset_nrules(const struct nft_ruleset *);
const char		*nft_ruleset_rule_desc(const struct nft_ruleset *,
			    size_t);

/*
 * Serialises rs as one batch: replace any table inet aisb, create sets,
 * chain and rules.  b must come from nft_batch_init().  0 or -1.
 */
int	nft_batch_init(struct nft_batch *b);
void	nft_batch_release(struct nft_batch *b);
int	nft_batch_ruleset(const struct nft_ruleset *rs, uint32_t seq,
	    struct nft_batch *b, char *err, size_t errlen);
/*
 * Serialises up to n elements into one batch (a delete message for the
 * renewed ones, then an add message with timeout and expiration); returns
 * how many were taken (the rest go into a next batch), -1 on error.
 */
ssize_t	nft_batch_elems(const struct nft_elem *elems, size_t n, uint32_t seq,
	    struct nft_batch *b, char *err, size_t errlen);

/*
 * Sends b on a new NETLINK_NETFILTER socket and waits for every ACK.  The
 * kernel applies all of the batch or nothing; any error message or a missing
 * ACK returns -1 with the failing message named in err.
 */
int	nft_send(const struct nft_batch *b, char *err, size_t errlen);

/*
 * Adds elements in as many batches as needed (nft_batch_elems).  0 or -1;
 * a renewed element that expired meanwhile fails its batch with ENOENT.
 */
int	nft_add_elems(const struct nft_elem *elems, size_t n, char *err,
	    size_t errlen);

/*
 * Reads table inet aisb back from the kernel: the table is active, the chain
 * hooks output with policy drop, the sets exist with their types, and the
 * rules are exactly the expected ones in order.  0 or -1 with err.
 */
int	nft_verify(const struct nft_ruleset *rs, char *err, size_t errlen);

/*
 * Whether table inet aisb is owned by a process (NFT_TABLE_F_OWNER): such a
 * table refuses every change from any other netlink socket with EPERM, as
 * a missing CAP_NET_ADMIN does, and goes away only when its owner closes
 * its socket.  1 (portid set, 0 when not reported), 0 (not owned, or no
 * table), -1 (cannot tell; errno).
 */
int	nft_table_owner(uint32_t *portid);

#endif
