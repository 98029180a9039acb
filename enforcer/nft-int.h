/* The expected table, shared by its builder (nft.c), the batch that
 * sends it (batch.c) and its read-back (verify.c) only. */
#ifndef AISB_ENF_NFT_INT_H
#define AISB_ENF_NFT_INT_H

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
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

/*
 * nft_expr.c: the expressions of a rule, shared by the filter (nft.c) and
 * the nat chain (nft_nat.c).  Each appends to r and returns 0, or -1 when
 * out of memory; nft_rule_new() makes a rule in rs->cur_chain, described
 * by fmt (for messages and verify.c), NULL when out of memory or rules.
 */
struct nftnl_rule	*nft_rule_new(struct nft_ruleset *, const char *fmt, ...)
			    __attribute__((format(printf, 2, 3)));
int	 nft_add_expr(struct nftnl_rule *, struct nftnl_expr *);
int	 nft_x_meta(struct nftnl_rule *, uint32_t key, uint32_t dreg);
int	 nft_x_cmp(struct nftnl_rule *, uint32_t sreg, uint32_t op,
	    const void *data, uint32_t len);
int	 nft_x_payload(struct nftnl_rule *, uint32_t base, uint32_t off,
	    uint32_t len, uint32_t dreg);
int	 nft_x_verdict(struct nftnl_rule *, uint32_t verdict);
int	 nft_x_meta_cmp(struct nftnl_rule *, uint32_t key, const void *v,
	    uint32_t len);
int	 nft_x_nfproto(struct nftnl_rule *, int family);
int	 nft_x_l4proto(struct nftnl_rule *, uint8_t proto);
int	 nft_x_daddr(struct nftnl_rule *, const struct enf_addr *);
int	 nft_x_daddr_in(struct nftnl_rule *, const struct enf_range *);
int	 nft_x_dport(struct nftnl_rule *, uint16_t port);
int	 nft_x_log_group(struct nftnl_rule *, const char *prefix);
int	 nft_x_fib_local(struct nftnl_rule *);
int	 nft_x_ct(struct nftnl_rule *, uint32_t key);
int	 nft_x_ct_state(struct nftnl_rule *, uint32_t mask);
int	 nft_x_ct_bits(struct nftnl_rule *, uint32_t key, uint32_t mask);
int	 nft_x_redir(struct nftnl_rule *, uint16_t port);

/* nft_nat.c: the rules of the nat chain rs->nat; 0 or -1 */
int	 nft_nat_rules(struct nft_ruleset *, const struct enf_plan *);

/* Key of a concatenation ipv4_addr . inet_service (nft's type ids). */
#define NFT_TYPE_IPADDR		7
#define NFT_TYPE_IP6ADDR	8
#define NFT_TYPE_INETSERVICE	13
#define NFT_CONCAT(a, b)	(((a) << 6) | (b))
#define NFT_SET4_KEYLEN		8	/* 4 + port padded to 4 */
#define NFT_SET6_KEYLEN		20	/* 16 + port padded to 4 */

#endif
