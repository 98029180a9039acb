/*
 * The nat chain of transparent capture (gate mode; tproxy.h and the top of
 * nft.c): the rules that send the sandbox's DNS, its TCP to the
 * transparent ports and its TCP to any port of the gate's synthetic
 * addresses to the relay's local ports.
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
 * The range is where the gate's DNS answers point (198.18.0.0/15): a tool
 * that resolved a name through the gate and dials any port of its
 * address reaches the relay, which tells the gate the port and the
 * address, and the gate maps the address back to the name it gave
 * (docs/gate.md, "Transparent entry").  Nothing here accepts a packet: a
 * nat chain only rewrites, and its policy accept means "not rewritten".
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <libnftnl/expr.h>

#include "enforcer/nft-int.h"

/* [l4proto] dport == port redirect to :to */
static int
rule_redirect(struct nft_ruleset *rs, uint8_t proto, uint16_t port,
    uint16_t to)
{
	struct nftnl_rule	*r;

	if ((r = nft_rule_new(rs, "%s dport %u redirect to :%u",
	    proto == IPPROTO_TCP ? "tcp" : "udp", port, to)) == NULL)
		return -1;
	if (nft_x_l4proto(r, proto) == -1 || nft_x_dport(r, port) == -1)
		return -1;
	return nft_x_redir(r, to);
}

/* ip daddr GATE return: the relay's own way to the gate. */
static int
rule_nat_gate(struct nft_ruleset *rs, const struct enf_addr *a)
{
	struct nftnl_rule	*r;
	char			 as[INET6_ADDRSTRLEN];

	if ((r = nft_rule_new(rs, "%s daddr %s return", a->family == AF_INET ?
	    "ip" : "ip6", enf_addr_str(a, as, sizeof(as)))) == NULL)
		return -1;
	if (nft_x_nfproto(r, a->family) == -1 || nft_x_daddr(r, a) == -1)
		return -1;
	return nft_x_verdict(r, (uint32_t)NFT_RETURN);
}

/* fib daddr type local return: a server inside keeps its ports. */
static int
rule_nat_local(struct nft_ruleset *rs)
{
	struct nftnl_rule	*r;

	if ((r = nft_rule_new(rs, "fib daddr type local return")) == NULL)
		return -1;
	if (nft_x_fib_local(r) == -1)
		return -1;
	return nft_x_verdict(r, (uint32_t)NFT_RETURN);
}

/* ip daddr RANGE meta l4proto tcp redirect to :to (any port) */
static int
rule_nat_range(struct nft_ruleset *rs, const struct enf_range *rg,
    uint16_t to)
{
	struct nftnl_rule	*r;
	char			 as[INET6_ADDRSTRLEN];

	if ((r = nft_rule_new(rs, "%s daddr %s/%u tcp redirect to :%u",
	    rg->net.family == AF_INET ? "ip" : "ip6",
	    enf_addr_str(&rg->net, as, sizeof(as)), rg->prefix, to)) == NULL)
		return -1;
	if (nft_x_nfproto(r, rg->net.family) == -1 ||
	    nft_x_daddr_in(r, rg) == -1 || nft_x_l4proto(r, IPPROTO_TCP) == -1)
		return -1;
	return nft_x_redir(r, to);
}

/* The rules of the nat chain rs->nat (see the top of this file). */
int
nft_nat_rules(struct nft_ruleset *rs, const struct enf_plan *plan)
{
	size_t	 i;

	rs->cur_chain = NFT_NAT_CHAIN;
	/* DNS to any address, a gate's too (none listens on 53: plan.c) */
	if (plan->dns_gate && (rule_redirect(rs, IPPROTO_UDP, 53,
	    plan->relay_dns_port) == -1 || rule_redirect(rs, IPPROTO_TCP, 53,
	    plan->relay_dns_port) == -1))
		return -1;
	for (i = 0; i < plan->ngates; i++)
		if (rule_nat_gate(rs, &plan->gates[i].addr) == -1)
			return -1;
	if (enf_plan_catches_tcp(plan) && rule_nat_local(rs) == -1)
		return -1;
	if (plan->has_trange && rule_nat_range(rs, &plan->trange,
	    plan->relay_port) == -1)
		return -1;
	for (i = 0; i < plan->ntports; i++)
		if (rule_redirect(rs, IPPROTO_TCP, plan->tports[i],
		    plan->relay_port) == -1)
			return -1;
	rs->cur_chain = NFT_CHAIN;
	return 0;
}
