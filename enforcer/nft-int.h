/* The expected table, shared by its builder (nft.c), the batch that
 * sends it (batch.c) and its read-back (verify.c) only. */
#ifndef AISB_ENF_NFT_INT_H
#define AISB_ENF_NFT_INT_H

#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "enforcer/nft.h"

#define NFT_DESC_LEN	96

struct nft_ruleset {
	struct nftnl_table	*table;
	struct nftnl_chain	*chain;
	/* record only: hooks output and input, policy accept, log only */
	struct nftnl_chain	*rec_out;
	struct nftnl_chain	*rec_in;
	int			 record;	/* the plan has a record line */
	/* transparent / dns-gate only: hooks output, type nat (tproxy.h) */
	struct nftnl_chain	*nat;
	const char		*cur_chain;	/* of the rules rule_new makes */
	const char		*chain_of[NFT_MAX_RULES];
	struct nftnl_set	*set4;		/* direct mode only */
	struct nftnl_set	*set6;		/* direct mode only */
	struct nftnl_rule	*rules[NFT_MAX_RULES];
	char			 desc[NFT_MAX_RULES][NFT_DESC_LEN];
	size_t			 nrules;
};

/* Key of a concatenation ipv4_addr . inet_service (nft's type ids). */
#define NFT_TYPE_IPADDR		7
#define NFT_TYPE_IP6ADDR	8
#define NFT_TYPE_INETSERVICE	13
#define NFT_CONCAT(a, b)	(((a) << 6) | (b))
#define NFT_SET4_KEYLEN		8	/* 4 + port padded to 4 */
#define NFT_SET6_KEYLEN		20	/* 16 + port padded to 4 */

#endif
