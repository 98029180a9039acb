/*
 * The expressions the table is made of (libnftnl), shared by the filter
 * (nft.c) and the nat chain (nft_nat.c): each appends one or two
 * expressions to a rule and returns 0, or -1 when out of memory.  A rule
 * is made by nft_rule_new(), which names it for the error messages and
 * for verify.c.  Registers and lengths are as the kernel dumps them back,
 * so that verify.c compares like with like.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/rtnetlink.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <libnftnl/expr.h>

#include "enforcer/nft-int.h"

int
nft_add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
	if (e == NULL)
		return -1;
	nftnl_rule_add_expr(r, e);
	return 0;
}

int
nft_x_meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("meta");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	return nft_add_expr(r, e);
}

int
nft_x_cmp(struct nftnl_rule *r, uint32_t sreg, uint32_t op, const void *data,
    uint32_t len)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("cmp");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	if (nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len) == -1) {
		nftnl_expr_free(e);
		return -1;
	}
	return nft_add_expr(r, e);
}

int
nft_x_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len,
    uint32_t dreg)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("payload");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	return nft_add_expr(r, e);
}

int
nft_x_verdict(struct nftnl_rule *r, uint32_t verdict)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("immediate");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, verdict);
	return nft_add_expr(r, e);
}

int
nft_x_meta_cmp(struct nftnl_rule *r, uint32_t key, const void *v, uint32_t len)
{
	if (nft_x_meta(r, key, NFT_REG_1) == -1)
		return -1;
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, v, len);
}

int
nft_x_nfproto(struct nftnl_rule *r, int family)
{
	uint8_t	 v = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;

	return nft_x_meta_cmp(r, NFT_META_NFPROTO, &v, sizeof(v));
}

int
nft_x_l4proto(struct nftnl_rule *r, uint8_t proto)
{
	return nft_x_meta_cmp(r, NFT_META_L4PROTO, &proto, sizeof(proto));
}

/* ip daddr / ip6 daddr == a; the caller matched nfproto first. */
int
nft_x_daddr(struct nftnl_rule *r, const struct enf_addr *a)
{
	uint32_t	 off = a->family == AF_INET ? 16 : 24;
	uint32_t	 len = a->family == AF_INET ? 4 : 16;

	if (nft_x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, off, len,
	    NFT_REG_1) == -1)
		return -1;
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, a->addr, len);
}

/* th dport == port; the caller matched l4proto tcp or udp first. */
int
nft_x_dport(struct nftnl_rule *r, uint16_t port)
{
	uint16_t	 p = htons(port);

	if (nft_x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2,
	    NFT_REG_1) == -1)
		return -1;
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &p, sizeof(p));
}

/* log group NFT_RECORD_GROUP [prefix prefix]: to the recorder (record.c). */
int
nft_x_log_group(struct nftnl_rule *r, const char *prefix)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("log");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, NFT_RECORD_GROUP);
	if (prefix != NULL &&
	    nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix) == -1) {
		nftnl_expr_free(e);
		return -1;
	}
	return nft_add_expr(r, e);
}

struct nftnl_rule *
nft_rule_new(struct nft_ruleset *rs, const char *fmt, ...)
{
	struct nftnl_rule	*r;
	va_list			 ap;

	if (rs->nrules == NFT_MAX_RULES || (r = nftnl_rule_alloc()) == NULL)
		return NULL;
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	/* The string setters copy, so they can fail. */
	if (nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE) == -1 ||
	    nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, rs->cur_chain) == -1) {
		nftnl_rule_free(r);
		return NULL;
	}
	va_start(ap, fmt);
	vsnprintf(rs->desc[rs->nrules], NFT_DESC_LEN, fmt, ap);
	va_end(ap);
	rs->chain_of[rs->nrules] = rs->cur_chain;
	rs->rules[rs->nrules++] = r;
	return r;
}

/* fib daddr type local: the destination is an address of this host. */
int
nft_x_fib_local(struct nftnl_rule *r)
{
	struct nftnl_expr	*e;
	uint32_t		 local = RTN_LOCAL;

	if ((e = nftnl_expr_alloc("fib")) == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &local, sizeof(local));
}

int
nft_x_ct(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr	*e = nftnl_expr_alloc("ct");

	if (e == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	return nft_add_expr(r, e);
}

/* ct state & mask != 0: the flow is in one of the states of mask. */
int
nft_x_ct_state(struct nftnl_rule *r, uint32_t mask)
{
	return nft_x_ct_bits(r, NFT_CT_STATE, mask);
}

/* NFT_REG_1 &= mask (len bytes, at most 16), as nft writes "& mask". */
static int
x_and(struct nftnl_rule *r, const void *mask, uint32_t len)
{
	static const uint8_t	 zero[16];
	struct nftnl_expr	*e;

	if ((e = nftnl_expr_alloc("bitwise")) == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_OP, NFT_BITWISE_BOOL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	if (nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len) == -1 ||
	    nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len) == -1) {
		nftnl_expr_free(e);
		return -1;
	}
	nftnl_rule_add_expr(r, e);
	return 0;
}

/* ct KEY & mask != 0 (state or status). */
int
nft_x_ct_bits(struct nftnl_rule *r, uint32_t key, uint32_t mask)
{
	uint32_t	 zero = 0;

	if (nft_x_ct(r, key) == -1 || x_and(r, &mask, sizeof(mask)) == -1)
		return -1;
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &zero, sizeof(zero));
}

/* nat: redirect to :port, the relay's (proto_min in NFT_REG_1). */
int
nft_x_redir(struct nftnl_rule *r, uint16_t port)
{
	struct nftnl_expr	*e;
	uint16_t		 p = htons(port);

	if ((e = nftnl_expr_alloc("immediate")) == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	if (nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &p, sizeof(p)) == -1) {
		nftnl_expr_free(e);
		return -1;
	}
	nftnl_rule_add_expr(r, e);
	if ((e = nftnl_expr_alloc("redir")) == NULL)
		return -1;
	/* max as the kernel reports it back: one port, min == max */
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MAX, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_FLAGS,
	    NF_NAT_RANGE_PROTO_SPECIFIED);
	return nft_add_expr(r, e);
}

/*
 * ip daddr / ip6 daddr within r (network & mask == network); the caller
 * matched nfproto first.  A /32 or /128 is a plain nft_x_daddr().
 */
int
nft_x_daddr_in(struct nftnl_rule *r, const struct enf_range *rg)
{
	uint32_t		 len = rg->net.family == AF_INET ? 4 : 16;
	uint8_t			 mask[16];
	unsigned		 i;

	if (rg->prefix == len * 8)
		return nft_x_daddr(r, &rg->net);
	memset(mask, 0, sizeof(mask));
	for (i = 0; i < rg->prefix; i++)
		mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	if (nft_x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, len == 4 ? 16 : 24,
	    len, NFT_REG_1) == -1 || x_and(r, mask, len) == -1)
		return -1;
	return nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, rg->net.addr, len);
}
