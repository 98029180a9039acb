/*
 * Table `inet aisb` from a plan, as libnftnl objects: the ones batch.c
 * sends as one libmnl batch and verify.c compares with the kernel's.
 *
 *	table inet aisb {
 *		set allowed4 { type ipv4_addr . inet_service; flags timeout; }
 *		set allowed6 { type ipv6_addr . inet_service; flags timeout; }
 *		chain output {
 *			type filter hook output priority 0; policy drop;
 *			meta skuid UID ip daddr RESOLVER udp|tcp dport 53 accept
 *			ip daddr RESOLVER udp|tcp dport 53 counter drop
 *			oifname "lo" fib daddr type local accept
 *			ct status dnat fib daddr type local tcp dport R accept
 *			ct status dnat fib daddr type local udp|tcp dport D accept
 *			ct direction original ct state established,related accept
 *			ip daddr GATE tcp dport PORT accept		(per gate)
 *			icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
 *			ip daddr . tcp dport @allowed4 accept
 *			ip6 daddr . tcp dport @allowed6 accept
 *			counter log prefix "..." drop
 *		}
 *	}
 *
 * Order matters.  Conntrack outlives sockets: once the refresher closes its
 * resolver socket, the flow stays "established" (UDP for 30 s), and a
 * datagram of the command's from the same source port would match it.  So
 * every packet to a resolver's address and port is decided by uid before
 * the established shortcut can see it, whatever conntrack holds.  The
 * shortcut itself takes only flows this side opened (direction original):
 * a flow someone else opens towards the sandbox gives the command no way
 * out through its replies.
 *
 * With a record line the drops above also log to NFLOG group
 * NFT_RECORD_GROUP ("aisb drop dns" on the resolver drops, "aisb drop" on
 * the last rule), and two chains that only log follow the filter:
 *
 *	chain record_out {
 *		type filter hook output priority 100; policy accept;
 *		oifname "lo" accept
 *		ct state new log group 41307 prefix "aisb accept" accept
 *		log group 41307
 *	}
 *	chain record_in {
 *		type filter hook input priority 100; policy accept;
 *		iifname "lo" accept
 *		log group 41307
 *	}
 *
 * (the two "ct status dnat" rules only with transparent / dns-gate lines,
 * below: the nat chain runs in the same pass of the output hook, where
 * meta oifname is still the first route's device, so the loopback rule
 * cannot take a redirected packet.)
 *
 * With transparent, transparent-range or dns-gate lines (gate mode; the
 * relay's local ports R and D are set by aisb-enforce once it has bound
 * them, tproxy.h), a nat chain (its rules: nft_nat.c):
 *
 *	chain transparent {
 *		type nat hook output priority -100; policy accept;
 *		udp dport 53 redirect to :D			(dns-gate)
 *		tcp dport 53 redirect to :D			(dns-gate)
 *		ip daddr GATE return				(per gate)
 *		fib daddr type local return
 *		ip daddr RANGE meta l4proto tcp redirect to :R	(transparent-range)
 *		tcp dport PORT redirect to :R			(per port)
 *	}
 *
 * DNS goes to the relay whatever the address asked, loopback and the
 * gates' included (the command's resolv.conf names 127.0.0.1; plan.c
 * refuses a tcp gate on port 53 with dns-gate, which would catch the
 * relay's own connection).  Otherwise a gate's address is never
 * redirected (the relay dials it, and the filter decides what else
 * reaches it), and a server inside the sandbox keeps its own ports.  A
 * redirected packet leaves the nat hook for 127.0.0.1 or ::1 through lo,
 * where the filter's loopback rule takes it: everything else meets the
 * filter exactly as before.  Nothing here accepts a packet: a nat chain
 * only rewrites, and its policy accept means "not rewritten".
 *
 * A packet the filter dropped never reaches record_out (a drop ends the
 * hook), so what it logs is what left; loopback stays inside the sandbox
 * and is not recorded.  Without a record line the table is exactly the
 * one above.
 *
 * aisb-enforce --init (a Kubernetes pod: the table outlives the enforcer)
 * with a gate-uid line, a gate runs in the pod as that uid (a sidecar):
 *
 *		meta skuid GATE accept			(first)
 *		oifname "lo" fib daddr type local accept
 *		ct direction reply tcp sport PORT accept	(per serve port)
 *		ip daddr GATE tcp dport PORT accept		(per gate)
 *		meta skuid != GATE counter drop
 *		ct direction original ct state established,related accept
 *		icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
 *		counter log prefix "..." drop
 *
 * The gate's flows are in conntrack like any: a datagram of another uid
 * from the source port of one of the gate's closed sockets (to the
 * cluster's DNS, say) would be "established", and so would a segment
 * forged on a raw socket into one of its tunnels.  So a packet with a
 * socket of any other uid meets the drop before the shortcut; only a
 * packet without a socket (an orphaned socket's last segments: meta skuid
 * matches neither way) reaches it.  meta skuid takes a SYN-ACK's
 * listener, so the gate answers its probes.  The serve lines (with or
 * without a gate-uid) let out the answers of a server in the pod to
 * connections opened to it, as a Kubernetes NetworkPolicy does.
 *
 * The sets exist only in direct mode; icmpv6 neighbour discovery only when an
 * IPv6 address may be reached (by a gate line, or by the gate of a gate-uid
 * line).  The sets key on address AND port, so a name
 * allowed on 443 does not open 22 on a neighbour that shares its address.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/netfilter.h>
#include <linux/rtnetlink.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>

#include "enforcer/nft-int.h"


/*
 * Loopback, to a local address only.  A socket bound to device lo
 * (SO_BINDTODEVICE needs no privilege on an unbound socket) sends to any
 * address through lo: today's kernels drop such a packet on its way back
 * in, but the rule does not rely on that.
 */
static int
rule_loopback(struct nft_ruleset *rs)
{
	struct nftnl_rule	*r;
	char			 lo[16] = "lo";	/* IFNAMSIZ, zero padded */

	if ((r = nft_rule_new(rs, "oifname lo fib daddr type local accept")) ==
	    NULL)
		return -1;
	if (nft_x_meta_cmp(r, NFT_META_OIFNAME, lo, sizeof(lo)) == -1)
		return -1;
	if (nft_x_fib_local(r) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/*
 * Only flows opened from this side: a reply to a flow opened from outside
 * (another container on a bridge, the host) is not a way out.
 */
static int
rule_established(struct nft_ruleset *rs)
{
	struct nftnl_rule	*r;
	uint32_t		 mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) |
				    NF_CT_STATE_BIT(IP_CT_RELATED);
	uint8_t			 orig = IP_CT_DIR_ORIGINAL;

	if ((r = nft_rule_new(rs, "ct direction original ct state "
	    "established,related accept")) == NULL)
		return -1;
	if (nft_x_ct(r, NFT_CT_DIRECTION) == -1 ||
	    nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &orig, sizeof(orig)) == -1)
		return -1;
	if (nft_x_ct_state(r, mask) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/*
 * [meta skuid == uid] nfproto, l4proto, daddr, dport, then accept, or
 * (verdict NF_DROP) counter and drop.
 */
static int
rule_endpoint(struct nft_ruleset *rs, const char *what,
    const struct enf_addr *a, uint16_t port, uint8_t proto, const uid_t *uid,
    uint32_t verdict)
{
	struct nftnl_rule	*r;
	char			 as[INET6_ADDRSTRLEN];
	uint32_t		 u;

	r = nft_rule_new(rs, "%s: %s %s port %u %s%s", what,
	    proto == IPPROTO_TCP ? "tcp" : "udp",
	    enf_addr_str(a, as, sizeof(as)), port,
	    verdict == NF_ACCEPT ? "accept" : "drop",
	    verdict == NF_DROP && rs->record ? " (recorded)" : "");
	if (r == NULL)
		return -1;
	if (uid != NULL) {
		u = (uint32_t)*uid;
		if (nft_x_meta_cmp(r, NFT_META_SKUID, &u, sizeof(u)) == -1)
			return -1;
	}
	if (nft_x_nfproto(r, a->family) == -1 ||
	    nft_x_l4proto(r, proto) == -1 || nft_x_daddr(r, a) == -1 ||
	    nft_x_dport(r, port) == -1)
		return -1;
	if (verdict == NF_DROP && rs->record &&
	    nft_x_log_group(r, NFT_REC_DROP_DNS) == -1)
		return -1;
	if (verdict == NF_DROP &&
	    nft_add_expr(r, nftnl_expr_alloc("counter")) == -1)
		return -1;
	return nft_x_verdict(r, verdict);
}

/*
 * The refresher's resolver traffic, then everyone else's to the same
 * address and port dropped, so that no later accept (loopback, the
 * established shortcut, an allowed set element on that port) can let it
 * out.  meta skuid is the uid that opened the socket; a packet with no
 * socket file (an orphaned socket's last segments) does not match it and
 * meets the drop: fail closed.
 */
static int
rule_resolver(struct nft_ruleset *rs, const struct enf_endpoint *d,
    uid_t refresher_uid)
{
	static const uint8_t	 protos[] = { IPPROTO_UDP, IPPROTO_TCP };
	size_t			 i;

	for (i = 0; i < sizeof(protos); i++)
		if (rule_endpoint(rs, "resolver", &d->addr, d->port, protos[i],
		    &refresher_uid, NF_ACCEPT) == -1 ||
		    rule_endpoint(rs, "resolver, other uids", &d->addr,
		    d->port, protos[i], NULL, NF_DROP) == -1)
			return -1;
	return 0;
}

/*
 * meta skuid == uid accept (the gate of a gate-uid line), or
 * meta skuid != uid counter drop (every other socket's packets).
 */
static int
rule_uid(struct nft_ruleset *rs, uid_t uid, uint32_t verdict)
{
	struct nftnl_rule	*r;
	uint32_t		 u = (uint32_t)uid;

	if ((r = nft_rule_new(rs, "meta skuid %s %u %s", verdict == NF_ACCEPT ?
	    "==" : "!=", u, verdict == NF_ACCEPT ? "accept" :
	    "counter drop")) == NULL)
		return -1;
	if (nft_x_meta(r, NFT_META_SKUID, NFT_REG_1) == -1 ||
	    nft_x_cmp(r, NFT_REG_1, verdict == NF_ACCEPT ? NFT_CMP_EQ :
	    NFT_CMP_NEQ, &u, sizeof(u)) == -1)
		return -1;
	if (verdict == NF_DROP &&
	    nft_add_expr(r, nftnl_expr_alloc("counter")) == -1)
		return -1;
	return nft_x_verdict(r, verdict);
}

/* ct direction reply tcp sport PORT accept: a server's answers. */
static int
rule_serve(struct nft_ruleset *rs, uint16_t port)
{
	struct nftnl_rule	*r;
	uint8_t			 reply = IP_CT_DIR_REPLY;
	uint16_t		 p = htons(port);

	if ((r = nft_rule_new(rs, "ct direction reply tcp sport %u accept",
	    port)) == NULL)
		return -1;
	if (nft_x_ct(r, NFT_CT_DIRECTION) == -1 ||
	    nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &reply, sizeof(reply)) == -1 ||
	    nft_x_l4proto(r, IPPROTO_TCP) == -1 ||
	    nft_x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2,
	    NFT_REG_1) == -1 ||
	    nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &p, sizeof(p)) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/* Without neighbour discovery no IPv6 destination is reachable at all. */
static int
rule_ndisc(struct nft_ruleset *rs, uint8_t type)
{
	struct nftnl_rule	*r;
	struct enf_addr		 v6 = { .family = AF_INET6 };

	if ((r = nft_rule_new(rs, "icmpv6 type %u accept", type)) == NULL)
		return -1;
	if (nft_x_nfproto(r, v6.family) == -1 ||
	    nft_x_l4proto(r, IPPROTO_ICMPV6) == -1)
		return -1;
	if (nft_x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1,
	    NFT_REG_1) == -1 ||
	    nft_x_cmp(r, NFT_REG_1, NFT_CMP_EQ, &type, sizeof(type)) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/*
 * ip daddr . tcp dport @set.  Concatenations use 32-bit registers: the
 * address from NFT_REG_1 on, the port in the register right after it
 * (NFT_REG32_01 for 4 bytes, NFT_REG_2 for 16).  Registers are named as the
 * kernel dumps them back, so that verify.c compares like with like.
 */
static int
rule_lookup(struct nft_ruleset *rs, int family, const char *set, uint32_t id)
{
	struct nftnl_rule	*r;
	struct nftnl_expr	*e;
	int			 v4 = family == AF_INET;

	if ((r = nft_rule_new(rs, "%s daddr . tcp dport @%s accept",
	    v4 ? "ip" : "ip6", set)) == NULL)
		return -1;
	if (nft_x_nfproto(r, family) == -1 ||
	    nft_x_l4proto(r, IPPROTO_TCP) == -1)
		return -1;
	if (nft_x_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24,
	    v4 ? 4 : 16, NFT_REG_1) == -1)
		return -1;
	if (nft_x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2,
	    v4 ? NFT_REG32_01 : NFT_REG_2) == -1)
		return -1;
	if ((e = nftnl_expr_alloc("lookup")) == NULL)
		return -1;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	if (nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set) == -1) {
		nftnl_expr_free(e);
		return -1;
	}
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
	/* Not inverted; set because the kernel always reports the flags. */
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, 0);
	nftnl_rule_add_expr(r, e);
	return nft_x_verdict(r, NF_ACCEPT);
}

static int
rule_final_drop(struct nft_ruleset *rs, const char *prefix)
{
	struct nftnl_rule	*r;
	struct nftnl_expr	*e;

	if ((r = nft_rule_new(rs, "counter%s%s%s drop", prefix[0] ?
	    " log prefix " : "", prefix, rs->record ? " (recorded)" : "")) ==
	    NULL)
		return -1;
	if (nft_add_expr(r, nftnl_expr_alloc("counter")) == -1)
		return -1;
	if (rs->record && nft_x_log_group(r, NFT_REC_DROP) == -1)
		return -1;
	if (prefix[0] != '\0') {
		if ((e = nftnl_expr_alloc("log")) == NULL)
			return -1;
		if (nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix) ==
		    -1) {
			nftnl_expr_free(e);
			return -1;
		}
		/* The kernel's default, set so that the dump reads the same. */
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, 4);	/* warning */
		nftnl_rule_add_expr(r, e);
	}
	return nft_x_verdict(r, NF_DROP);
}



/*
 * ct status dnat fib daddr type local [l4proto] dport RELAY accept: a
 * packet the nat chain redirected to the relay.  The filter runs in the
 * same pass of the output hook as the nat chain, and meta oifname is the
 * device the packet was first routed to, not lo: the loopback rule cannot
 * take it.  Only a rewritten packet (ct status dnat) whose new address is
 * local, to the relay's port, passes.
 */
static int
rule_relay_accept(struct nft_ruleset *rs, uint8_t proto, uint16_t port)
{
	struct nftnl_rule	*r;

	if ((r = nft_rule_new(rs, "ct status dnat fib daddr type local %s "
	    "dport %u accept", proto == IPPROTO_TCP ? "tcp" : "udp", port)) ==
	    NULL)
		return -1;
	if (nft_x_ct_bits(r, NFT_CT_STATUS, IPS_DST_NAT) == -1)
		return -1;
	if (nft_x_fib_local(r) == -1)
		return -1;
	if (nft_x_l4proto(r, proto) == -1 || nft_x_dport(r, port) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}


static struct nftnl_set *
set_new(const char *name, uint32_t id, uint32_t keytype, uint32_t keylen)
{
	struct nftnl_set	*s;

	if ((s = nftnl_set_alloc()) == NULL)
		return NULL;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) == -1 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, name) == -1) {
		nftnl_set_free(s);
		return NULL;
	}
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, NFT_SET_TIMEOUT);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, keytype);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, keylen);
	return s;
}

static struct nftnl_chain *
chain_typed(const char *name, const char *type, uint32_t hook, int32_t prio,
    uint32_t policy);

static struct nftnl_chain *
chain_new(const char *name, uint32_t hook, int32_t prio, uint32_t policy)
{
	return chain_typed(name, "filter", hook, prio, policy);
}

static struct nftnl_chain *
chain_typed(const char *name, const char *type, uint32_t hook, int32_t prio,
    uint32_t policy)
{
	struct nftnl_chain	*c;

	if ((c = nftnl_chain_alloc()) == NULL)
		return NULL;
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE) == -1 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name) == -1 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type) == -1) {
		nftnl_chain_free(c);
		return NULL;
	}
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
	return c;
}

/* oifname/iifname "lo" accept: loopback stays inside, unrecorded. */
static int
rule_rec_lo(struct nft_ruleset *rs, uint32_t key)
{
	struct nftnl_rule	*r;
	char			 lo[16] = "lo";	/* IFNAMSIZ, zero padded */

	if ((r = nft_rule_new(rs, "%s lo accept", key == NFT_META_OIFNAME ?
	    "oifname" : "iifname")) == NULL)
		return -1;
	if (nft_x_meta_cmp(r, key, lo, sizeof(lo)) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/* ct state new log group N prefix "aisb accept" accept */
static int
rule_rec_new(struct nft_ruleset *rs)
{
	struct nftnl_rule	*r;
	uint32_t		 mask = NF_CT_STATE_BIT(IP_CT_NEW);

	if ((r = nft_rule_new(rs, "ct state new log group %u prefix \"%s\" "
	    "accept", NFT_RECORD_GROUP, NFT_REC_ACCEPT)) == NULL)
		return -1;
	if (nft_x_ct_state(r, mask) == -1 ||
	    nft_x_log_group(r, NFT_REC_ACCEPT) == -1)
		return -1;
	return nft_x_verdict(r, NF_ACCEPT);
}

/* log group N, no prefix: recorded without a comment. */
static int
rule_rec_all(struct nft_ruleset *rs)
{
	struct nftnl_rule	*r;

	if ((r = nft_rule_new(rs, "log group %u", NFT_RECORD_GROUP)) == NULL)
		return -1;
	return nft_x_log_group(r, NULL);
}

/* The two chains that only log (see the top of this file). */
static int
record_chains(struct nft_ruleset *rs)
{
	if ((rs->rec_out = chain_new(NFT_REC_OUT, NF_INET_LOCAL_OUT,
	    NFT_REC_PRIO, NF_ACCEPT)) == NULL ||
	    (rs->rec_in = chain_new(NFT_REC_IN, NF_INET_LOCAL_IN,
	    NFT_REC_PRIO, NF_ACCEPT)) == NULL)
		return -1;
	rs->cur_chain = NFT_REC_OUT;
	if (rule_rec_lo(rs, NFT_META_OIFNAME) == -1 ||
	    rule_rec_new(rs) == -1 || rule_rec_all(rs) == -1)
		return -1;
	rs->cur_chain = NFT_REC_IN;
	if (rule_rec_lo(rs, NFT_META_IIFNAME) == -1 || rule_rec_all(rs) == -1)
		return -1;
	rs->cur_chain = NFT_CHAIN;
	return 0;
}

static struct nft_ruleset *ruleset_build(const struct enf_plan *, uid_t,
		    char *, size_t);


struct nft_ruleset *
nft_ruleset_new(const struct enf_plan *plan, uid_t refresher_uid, char *err,
    size_t errlen)
{
	/* the relay's ports come from aisb-enforce, never from the text */
	if ((enf_plan_catches_tcp(plan) && plan->relay_port == 0) ||
	    (plan->dns_gate && plan->relay_dns_port == 0)) {
		snprintf(err, errlen, "building the ruleset: the relay's "
		    "local ports are not set");
		return NULL;
	}
	return ruleset_build(plan, refresher_uid, err, errlen);
}

static struct nft_ruleset *
ruleset_build(const struct enf_plan *plan, uid_t refresher_uid, char *err,
    size_t errlen)
{
	struct nft_ruleset	*rs;
	size_t			 i;

	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		goto fail;
	rs->cur_chain = NFT_CHAIN;
	rs->record = plan->record_path[0] != '\0';
	if ((rs->table = nftnl_table_alloc()) == NULL)
		goto fail;
	nftnl_table_set_u32(rs->table, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(rs->table, NFTNL_TABLE_NAME, NFT_TABLE) == -1)
		goto fail;

	if ((rs->chain = nftnl_chain_alloc()) == NULL)
		goto fail;
	nftnl_chain_set_u32(rs->chain, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (nftnl_chain_set_str(rs->chain, NFTNL_CHAIN_TABLE, NFT_TABLE) ==
	    -1 ||
	    nftnl_chain_set_str(rs->chain, NFTNL_CHAIN_NAME, NFT_CHAIN) == -1 ||
	    nftnl_chain_set_str(rs->chain, NFTNL_CHAIN_TYPE, "filter") == -1)
		goto fail;
	nftnl_chain_set_u32(rs->chain, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
	nftnl_chain_set_s32(rs->chain, NFTNL_CHAIN_PRIO, 0);
	nftnl_chain_set_u32(rs->chain, NFTNL_CHAIN_POLICY, NF_DROP);

	if (plan->mode == ENF_MODE_DIRECT) {
		rs->set4 = set_new(NFT_SET4, 1,
		    NFT_CONCAT(NFT_TYPE_IPADDR, NFT_TYPE_INETSERVICE),
		    NFT_SET4_KEYLEN);
		rs->set6 = set_new(NFT_SET6, 2,
		    NFT_CONCAT(NFT_TYPE_IP6ADDR, NFT_TYPE_INETSERVICE),
		    NFT_SET6_KEYLEN);
		if (rs->set4 == NULL || rs->set6 == NULL)
			goto fail;
	}

	/* --init's gate in the pod: its sockets, anywhere (see the top) */
	if (plan->gate_uid != 0 && rule_uid(rs, plan->gate_uid, NF_ACCEPT) == -1)
		goto fail;
	/* Resolvers first: before every accept that ignores the uid. */
	for (i = 0; i < plan->nresolvers; i++)
		if (rule_resolver(rs, &plan->resolvers[i], refresher_uid) == -1)
			goto fail;
	if (rule_loopback(rs) == -1)
		goto fail;
	for (i = 0; i < plan->nserve; i++)
		if (rule_serve(rs, plan->serve[i]) == -1)
			goto fail;
	/* transparent / dns-gate: what the nat chain sent to the relay */
	if (enf_plan_catches_tcp(plan) &&
	    rule_relay_accept(rs, IPPROTO_TCP, plan->relay_port) == -1)
		goto fail;
	if (plan->dns_gate &&
	    (rule_relay_accept(rs, IPPROTO_UDP, plan->relay_dns_port) == -1 ||
	    rule_relay_accept(rs, IPPROTO_TCP, plan->relay_dns_port) == -1))
		goto fail;
	if (plan->gate_uid == 0 && rule_established(rs) == -1)
		goto fail;
	for (i = 0; i < plan->ngates; i++) {
		const struct enf_endpoint	*g = &plan->gates[i];

		if (rule_endpoint(rs, "gate", &g->addr, g->port,
		    (uint8_t)g->proto, NULL, NF_ACCEPT) == -1)
			goto fail;
	}
	/* other uids' packets never take the gate's flows (see the top) */
	if (plan->gate_uid != 0 && (rule_uid(rs, plan->gate_uid,
	    NF_DROP) == -1 || rule_established(rs) == -1))
		goto fail;
	if (plan->mode == ENF_MODE_DIRECT || enf_plan_uses_ipv6(plan) ||
	    plan->gate_uid != 0) {
		if (rule_ndisc(rs, 135) == -1 || rule_ndisc(rs, 136) == -1)
			goto fail;
	}
	if (plan->mode == ENF_MODE_DIRECT) {
		if (rule_lookup(rs, AF_INET, NFT_SET4, 1) == -1 ||
		    rule_lookup(rs, AF_INET6, NFT_SET6, 2) == -1)
			goto fail;
	}
	if (rule_final_drop(rs, plan->log_prefix) == -1)
		goto fail;
	if (rs->record && record_chains(rs) == -1)
		goto fail;
	if (enf_plan_catches_tcp(plan) || plan->dns_gate) {
		if ((rs->nat = chain_typed(NFT_NAT_CHAIN, "nat",
		    NF_INET_LOCAL_OUT, NFT_NAT_PRIO, NF_ACCEPT)) == NULL ||
		    nft_nat_rules(rs, plan) == -1)
			goto fail;
	}
	return rs;
fail:
	snprintf(err, errlen, "building the ruleset: %s",
	    rs != NULL && rs->nrules == NFT_MAX_RULES ? "too many rules" :
	    "out of memory");
	nft_ruleset_free(rs);
	return NULL;
}

void
nft_ruleset_free(struct nft_ruleset *rs)
{
	size_t	 i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->nrules; i++)
		nftnl_rule_free(rs->rules[i]);
	if (rs->set4 != NULL)
		nftnl_set_free(rs->set4);
	if (rs->set6 != NULL)
		nftnl_set_free(rs->set6);
	if (rs->chain != NULL)
		nftnl_chain_free(rs->chain);
	if (rs->rec_out != NULL)
		nftnl_chain_free(rs->rec_out);
	if (rs->rec_in != NULL)
		nftnl_chain_free(rs->rec_in);
	if (rs->nat != NULL)
		nftnl_chain_free(rs->nat);
	if (rs->table != NULL)
		nftnl_table_free(rs->table);
	free(rs);
}

size_t
nft_ruleset_nrules(const struct nft_ruleset *rs)
{
	return rs->nrules;
}

const char *
nft_ruleset_rule_desc(const struct nft_ruleset *rs, size_t i)
{
	return i < rs->nrules ? rs->desc[i] : "?";
}
