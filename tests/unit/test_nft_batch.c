/*
 * Unit tests of the batch builder (enforcer/batch.c): the netlink messages are
 * produced without a socket and read back with libnftnl's own parsers.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>

#include "nft.h"
#include "plan.h"

#define MSG(t)	((NFNL_SUBSYS_NFTABLES << 8) | (t))

struct walked {
	uint16_t		 types[NFT_BATCH_MSGS];
	struct nftnl_rule	*rules[NFT_MAX_RULES];
	size_t			 n, nrules;
	struct nftnl_chain	*chain;		/* the first: output */
	struct nftnl_chain	*chains[4];
	size_t			 nchains;
};

static struct enf_plan *
plan_of(const char *text)
{
	char		 err[256];
	struct enf_plan	*p = enf_plan_parse(text, strlen(text), err,
			    sizeof(err));

	if (p == NULL)
		fail_msg("plan: %s", err);
	return p;
}

/* Walks every message, checking framing, flags and sequence numbers. */
static void
walk(const struct nft_batch *b, struct walked *w)
{
	const struct nlmsghdr	*nlh;
	int			 left = (int)b->len;
	size_t			 acks = 0;

	memset(w, 0, sizeof(*w));
	for (nlh = (const struct nlmsghdr *)b->buf; mnl_nlmsg_ok(nlh, left);
	    nlh = mnl_nlmsg_next(nlh, &left)) {
		assert_true(w->n < NFT_BATCH_MSGS);
		assert_int_equal(nlh->nlmsg_seq, b->seq + w->n);
		w->types[w->n++] = nlh->nlmsg_type;
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		/* Every real message asks for its ACK: nft_send counts them. */
		assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
		acks++;
		if (nlh->nlmsg_type == MSG(NFT_MSG_NEWRULE)) {
			struct nftnl_rule *r = nftnl_rule_alloc();

			assert_non_null(r);
			assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
			assert_true(nlh->nlmsg_flags & NLM_F_APPEND);
			w->rules[w->nrules++] = r;
		} else if (nlh->nlmsg_type == MSG(NFT_MSG_NEWCHAIN)) {
			struct nftnl_chain *c = nftnl_chain_alloc();

			assert_non_null(c);
			assert_true(w->nchains < 4);
			assert_int_equal(nftnl_chain_nlmsg_parse(nlh, c), 0);
			w->chains[w->nchains++] = c;
			w->chain = w->chains[0];
		}
	}
	assert_int_equal(left, 0);
	assert_int_equal(w->n, b->nmsgs);
	assert_int_equal(acks, b->nacks);
	assert_int_equal(w->types[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(w->types[w->n - 1], NFNL_MSG_BATCH_END);
}

static void
walked_free(struct walked *w)
{
	size_t	 i;

	for (i = 0; i < w->nrules; i++)
		nftnl_rule_free(w->rules[i]);
	for (i = 0; i < w->nchains; i++)
		nftnl_chain_free(w->chains[i]);
}

/* The expression names of a rule, space separated. */
static void
rule_shape(const struct nftnl_rule *r, char *buf, size_t len)
{
	struct nftnl_expr_iter	*it = nftnl_expr_iter_create(r);
	struct nftnl_expr	*e;
	size_t			 off = 0;

	buf[0] = '\0';
	while ((e = nftnl_expr_iter_next(it)) != NULL)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    off ? " " : "", nftnl_expr_get_str(e, NFTNL_EXPR_NAME));
	nftnl_expr_iter_destroy(it);
}

/* The text of the whole rule, as libnftnl prints it. */
static void
rule_text(const struct nftnl_rule *r, char *buf, size_t len)
{
	nftnl_rule_snprintf(buf, len, r, NFTNL_OUTPUT_DEFAULT, 0);
}

static void
test_gate_batch(void **state)
{
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];

	p = plan_of("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "gate 10.199.0.1 5353 udp\nlog-prefix aisb-drop:\n");
	rs = nft_ruleset_new(p, 0, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_batch_init(&b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 1000, &b, err, sizeof(err)), 0);
	walk(&b, &w);

	/* begin, add/delete/create table, chain, 5 rules, end */
	assert_int_equal(w.n, 11);
	assert_int_equal(w.types[1], MSG(NFT_MSG_NEWTABLE));
	assert_int_equal(w.types[2], MSG(NFT_MSG_DELTABLE));
	assert_int_equal(w.types[3], MSG(NFT_MSG_NEWTABLE));
	assert_int_equal(w.types[4], MSG(NFT_MSG_NEWCHAIN));
	assert_int_equal(w.nrules, 5);
	assert_int_equal(nft_ruleset_nrules(rs), 5);

	assert_non_null(w.chain);
	assert_string_equal(nftnl_chain_get_str(w.chain, NFTNL_CHAIN_NAME),
	    NFT_CHAIN);
	assert_string_equal(nftnl_chain_get_str(w.chain, NFTNL_CHAIN_TABLE),
	    NFT_TABLE);
	assert_int_equal(nftnl_chain_get_u32(w.chain, NFTNL_CHAIN_HOOKNUM),
	    NF_INET_LOCAL_OUT);
	assert_int_equal(nftnl_chain_get_u32(w.chain, NFTNL_CHAIN_POLICY),
	    NF_DROP);
	assert_string_equal(nftnl_chain_get_str(w.chain, NFTNL_CHAIN_TYPE),
	    "filter");

	/* loopback, and only to a local address */
	rule_shape(w.rules[0], shape, sizeof(shape));
	assert_string_equal(shape, "meta cmp fib cmp immediate");
	rule_text(w.rules[0], text, sizeof(text));
	assert_non_null(strstr(text, "load oifname"));
	assert_non_null(strstr(text, "0x00006f6c 0x00000000 0x00000000 "
	    "0x00000000"));	/* "lo" padded to IFNAMSIZ */
	assert_non_null(strstr(text, "fib daddr type"));
	assert_non_null(strstr(text, "0x00000002 ]"));	/* RTN_LOCAL */

	/* only flows opened from inside: ct direction original first */
	rule_shape(w.rules[1], shape, sizeof(shape));
	assert_string_equal(shape, "ct cmp ct bitwise cmp immediate");
	rule_text(w.rules[1], text, sizeof(text));
	assert_non_null(strstr(text, "load direction"));
	assert_non_null(strstr(text, "load state"));

	/* tcp to 10.199.0.1 port 43127 (0xa877) */
	rule_shape(w.rules[2], shape, sizeof(shape));
	assert_string_equal(shape,
	    "meta cmp meta cmp payload cmp payload cmp immediate");
	rule_text(w.rules[2], text, sizeof(text));
	assert_non_null(strstr(text, "0x00000002 ]"));	/* nfproto ipv4 */
	assert_non_null(strstr(text, "0x00000006 ]"));	/* tcp */
	assert_non_null(strstr(text, "0x0100c70a"));	/* 10.199.0.1 */
	assert_non_null(strstr(text, "0x000077a8"));	/* 43127 */
	assert_non_null(strstr(text, "accept"));

	rule_text(w.rules[3], text, sizeof(text));
	assert_non_null(strstr(text, "0x00000011 ]"));	/* udp */
	assert_non_null(strstr(text, "0x0000e914"));	/* 5353 */

	rule_shape(w.rules[4], shape, sizeof(shape));
	assert_string_equal(shape, "counter log immediate");
	rule_text(w.rules[4], text, sizeof(text));
	assert_non_null(strstr(text, "prefix aisb-drop:"));
	assert_non_null(strstr(text, "drop"));

	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	nft_ruleset_free(NULL);
	enf_plan_free(p);
}

static void
test_none_batch(void **state)
{
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256];

	p = plan_of("aisb-plan 1\nmode none\n");
	rs = nft_ruleset_new(p, 0, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_batch_init(&b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 7, &b, err, sizeof(err)), 0);
	walk(&b, &w);
	assert_int_equal(w.nrules, 3);	/* lo, established, drop */
	rule_shape(w.rules[2], shape, sizeof(shape));
	assert_string_equal(shape, "counter immediate");
	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

static void
test_direct_batch(void **state)
{
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];
	size_t			 i, sets = 0;

	p = plan_of("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name example.com 443\n");
	rs = nft_ruleset_new(p, 4242, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_batch_init(&b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 1, &b, err, sizeof(err)), 0);
	walk(&b, &w);
	for (i = 0; i < w.n; i++)
		if (w.types[i] == MSG(NFT_MSG_NEWSET)) {
			sets++;
			/* sets are created before the rules that use them */
			assert_true(i < 6);
		}
	assert_int_equal(sets, 2);
	/*
	 * resolver udp accept+drop, tcp accept+drop, lo, est, nd x2,
	 * lookup4, lookup6, drop.  The resolver's rules come before every
	 * accept that does not look at the uid: loopback, the established
	 * shortcut (conntrack outlives the refresher's sockets) and the sets.
	 */
	assert_int_equal(w.nrules, 11);
	for (i = 0; i < 4; i++) {
		rule_text(w.rules[i], text, sizeof(text));
		assert_non_null(strstr(text, "0x0100c70a"));	/* 10.199.0.1 */
		assert_non_null(strstr(text, "0x00003500"));	/* port 53 */
		assert_non_null(strstr(text, i < 2 ? "0x00000011 ]" :
		    "0x00000006 ]"));				/* udp, tcp */
		rule_shape(w.rules[i], shape, sizeof(shape));
		if (i % 2 == 0) {
			/* the refresher's uid only */
			assert_string_equal(shape, "meta cmp meta cmp meta cmp "
			    "payload cmp payload cmp immediate");
			assert_non_null(strstr(text, "load skuid"));
			assert_non_null(strstr(text, "0x00001092"));
			assert_non_null(strstr(text, "accept"));
		} else {
			/* then every other uid, whatever conntrack holds */
			assert_string_equal(shape, "meta cmp meta cmp "
			    "payload cmp payload cmp counter immediate");
			assert_null(strstr(text, "load skuid"));
			assert_non_null(strstr(text, "drop"));
		}
	}
	rule_text(w.rules[4], text, sizeof(text));
	assert_non_null(strstr(text, "load oifname"));
	rule_text(w.rules[5], text, sizeof(text));
	assert_non_null(strstr(text, "load state"));

	rule_shape(w.rules[8], shape, sizeof(shape));
	assert_string_equal(shape,
	    "meta cmp meta cmp payload payload lookup immediate");
	rule_text(w.rules[8], text, sizeof(text));
	assert_non_null(strstr(text, "set " NFT_SET4));
	assert_non_null(strstr(text, "=> reg 9"));	/* port after addr */
	rule_text(w.rules[9], text, sizeof(text));
	assert_non_null(strstr(text, "set " NFT_SET6));
	assert_non_null(strstr(text, "=> reg 2"));

	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

/*
 * A record line: the drops log to the recorder's group too, and two chains
 * after the filter log what passes; the output chain's rules are the same
 * in number and order as without it.
 */
static void
test_record_batch(void **state)
{
	struct enf_plan		*p, *q;
	struct nft_ruleset	*rs, *plain;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];
	const char		*chain;
	size_t			 i, nout = 0, nrout = 0, nrin = 0;

	p = plan_of("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name example.com 443\nrecord /r/c.pcapng 4096\n");
	q = plan_of("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name example.com 443\n");
	rs = nft_ruleset_new(p, 4242, err, sizeof(err));
	plain = nft_ruleset_new(q, 4242, err, sizeof(err));
	assert_non_null(rs);
	assert_non_null(plain);
	assert_int_equal(nft_batch_init(&b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 1, &b, err, sizeof(err)), 0);
	walk(&b, &w);
	assert_int_equal(w.nchains, 3);
	assert_string_equal(nftnl_chain_get_str(w.chains[1], NFTNL_CHAIN_NAME),
	    NFT_REC_OUT);
	assert_int_equal(nftnl_chain_get_u32(w.chains[1], NFTNL_CHAIN_HOOKNUM),
	    NF_INET_LOCAL_OUT);
	assert_int_equal(nftnl_chain_get_s32(w.chains[1], NFTNL_CHAIN_PRIO),
	    NFT_REC_PRIO);
	assert_int_equal(nftnl_chain_get_u32(w.chains[1], NFTNL_CHAIN_POLICY),
	    NF_ACCEPT);
	assert_string_equal(nftnl_chain_get_str(w.chains[2], NFTNL_CHAIN_NAME),
	    NFT_REC_IN);
	assert_int_equal(nftnl_chain_get_u32(w.chains[2], NFTNL_CHAIN_HOOKNUM),
	    NF_INET_LOCAL_IN);
	assert_int_equal(nftnl_chain_get_u32(w.chains[2], NFTNL_CHAIN_POLICY),
	    NF_ACCEPT);

	for (i = 0; i < w.nrules; i++) {
		chain = nftnl_rule_get_str(w.rules[i], NFTNL_RULE_CHAIN);
		rule_shape(w.rules[i], shape, sizeof(shape));
		rule_text(w.rules[i], text, sizeof(text));
		if (strcmp(chain, NFT_CHAIN) == 0) {
			nout++;
			if (strstr(text, "drop") == NULL)
				assert_null(strstr(text, "log"));
			continue;
		}
		/* nothing in the recording chains drops */
		assert_null(strstr(text, "drop"));
		if (strstr(shape, "log") != NULL)
			assert_non_null(strstr(text, "group 41307"));
		if (strcmp(chain, NFT_REC_OUT) == 0)
			nrout++;
		else if (strcmp(chain, NFT_REC_IN) == 0)
			nrin++;
		else
			fail_msg("rule in chain %s", chain);
	}
	assert_int_equal(nout, nft_ruleset_nrules(plain));
	assert_int_equal(nrout, 3);
	assert_int_equal(nrin, 2);
	/* the resolver's drops and the last rule log to the group */
	rule_shape(w.rules[1], shape, sizeof(shape));
	assert_string_equal(shape, "meta cmp meta cmp payload cmp payload cmp "
	    "log counter immediate");
	rule_text(w.rules[1], text, sizeof(text));
	assert_non_null(strstr(text, "prefix " NFT_REC_DROP_DNS));
	rule_shape(w.rules[nout - 1], shape, sizeof(shape));
	assert_string_equal(shape, "counter log immediate");
	rule_text(w.rules[nout - 1], text, sizeof(text));
	assert_non_null(strstr(text, "prefix " NFT_REC_DROP " group 41307"));
	/* record_out: lo, ct state new with its comment, then everything */
	rule_text(w.rules[nout], text, sizeof(text));
	assert_non_null(strstr(text, "load oifname"));
	rule_shape(w.rules[nout + 1], shape, sizeof(shape));
	assert_string_equal(shape, "ct bitwise cmp log immediate");
	rule_text(w.rules[nout + 1], text, sizeof(text));
	assert_non_null(strstr(text, "prefix " NFT_REC_ACCEPT " group 41307"));
	rule_shape(w.rules[nout + 2], shape, sizeof(shape));
	assert_string_equal(shape, "log");
	rule_text(w.rules[nout + 3], text, sizeof(text));
	assert_non_null(strstr(text, "load iifname"));
	rule_shape(w.rules[nout + 4], shape, sizeof(shape));
	assert_string_equal(shape, "log");

	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	nft_ruleset_free(plain);
	enf_plan_free(p);
	enf_plan_free(q);
}

static void
test_elems_batch(void **state)
{
	struct nft_elem		 el[300];
	struct nft_batch	 b;
	const struct nlmsghdr	*nlh;
	char			 err[256];
	size_t			 i, total = 0, msgs = 0;
	ssize_t			 k;
	int			 left;

	memset(el, 0, sizeof(el));
	for (i = 0; i < 300; i++) {
		el[i].addr.family = i < 200 ? AF_INET : AF_INET6;
		el[i].addr.addr[0] = (uint8_t)(i < 200 ? 10 : 0xfd);
		el[i].addr.addr[3] = (uint8_t)i;
		el[i].port = 443;
		el[i].timeout_ms = 30000;
	}
	assert_int_equal(nft_batch_init(&b), 0);
	k = nft_batch_elems(el, 300, 50, &b, err, sizeof(err));
	assert_int_equal(k, 300);
	left = (int)b.len;
	for (nlh = (const struct nlmsghdr *)b.buf; mnl_nlmsg_ok(nlh, left);
	    nlh = mnl_nlmsg_next(nlh, &left)) {
		const struct nlattr	*a, *ea, *ka;
		const char		*set = NULL;
		size_t			 off = sizeof(struct nfgenmsg);

		if (nlh->nlmsg_type != MSG(NFT_MSG_NEWSETELEM))
			continue;
		/* Elements are added, never exclusively: re-adding refreshes. */
		assert_false(nlh->nlmsg_flags & NLM_F_EXCL);
		msgs++;
		/*
		 * Walked with libmnl: libnftnl 1.2.4's own element parser
		 * fails on messages carrying more than one element.
		 */
		mnl_attr_for_each(a, nlh, off) {
			if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET)
				set = mnl_attr_get_str(a);
			if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
				continue;
			assert_non_null(set);
			mnl_attr_for_each_nested(ea, a) {
				const uint8_t	*key = NULL;
				uint16_t	 klen = 0;
				uint64_t	 timeout = 0;

				mnl_attr_for_each_nested(ka, ea) {
					if (mnl_attr_get_type(ka) ==
					    NFTA_SET_ELEM_TIMEOUT)
						timeout = be64toh(
						    mnl_attr_get_u64(ka));
					if (mnl_attr_get_type(ka) !=
					    NFTA_SET_ELEM_KEY)
						continue;
					key = mnl_attr_get_payload(
					    mnl_attr_get_payload(ka));
					klen = mnl_attr_get_payload_len(
					    mnl_attr_get_payload(ka));
				}
				assert_non_null(key);
				if (strcmp(set, NFT_SET4) == 0) {
					assert_int_equal(klen, 8);
					assert_int_equal(key[0], 10);
					assert_int_equal(key[4], 443 >> 8);
					assert_int_equal(key[5], 443 & 0xff);
					assert_int_equal(key[6] | key[7], 0);
				} else {
					assert_string_equal(set, NFT_SET6);
					assert_int_equal(klen, 20);
					assert_int_equal(key[0], 0xfd);
					assert_int_equal(key[16], 443 >> 8);
				}
				assert_int_equal(timeout, 30000);
				total++;
			}
		}
	}
	assert_int_equal(total, 300);
	assert_int_equal(msgs, 3);	/* 100 + 100 v4, 100 v6 */
	nft_batch_release(&b);
}

/*
 * p's ruleset, its rules described as want (n of them), made one batch
 * and walked into w; the caller frees the ruleset, b and w.
 */
static struct nft_ruleset *
ruleset_walked(struct enf_plan *p, const char *const *want, size_t n,
    struct nft_batch *b, struct walked *w)
{
	struct nft_ruleset	*rs;
	char			 err[256];
	size_t			 i;

	rs = nft_ruleset_new(p, 0, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_ruleset_nrules(rs), n);
	for (i = 0; i < n; i++)
		assert_string_equal(nft_ruleset_rule_desc(rs, i), want[i]);
	assert_int_equal(nft_batch_init(b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 1000, b, err, sizeof(err)), 0);
	walk(b, w);
	assert_int_equal(w->nrules, n);
	return rs;
}

/*
 * transparent + dns-gate: the filter takes what the nat chain sent to the
 * relay, and the nat chain redirects, gate first; no ports, no ruleset.
 */
static void
test_transparent_batch(void **state)
{
	static const char *const want[] = {
		"oifname lo fib daddr type local accept",
		"ct status dnat fib daddr type local tcp dport 15001 accept",
		"ct status dnat fib daddr type local udp dport 15053 accept",
		"ct status dnat fib daddr type local tcp dport 15053 accept",
		"ct direction original ct state established,related accept",
		"gate: tcp 10.199.0.1 port 43127 accept",
		"counter drop",
		"udp dport 53 redirect to :15053",
		"tcp dport 53 redirect to :15053",
		"ip daddr 10.199.0.1 return",
		"fib daddr type local return",
		"tcp dport 80 redirect to :15001",
		"tcp dport 443 redirect to :15001",
	};
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];

	(void)state;
	p = plan_of("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "transparent 80,443\ndns-gate\n");
	/* the relay's ports come from aisb-enforce, never from the text */
	assert_null(nft_ruleset_new(p, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "relay"));
	p->relay_port = 15001;
	p->relay_dns_port = 15053;
	rs = ruleset_walked(p, want, sizeof(want) / sizeof(want[0]), &b, &w);
	assert_int_equal(w.nchains, 2);
	assert_string_equal(nftnl_chain_get_str(w.chains[1], NFTNL_CHAIN_NAME),
	    NFT_NAT_CHAIN);
	assert_string_equal(nftnl_chain_get_str(w.chains[1], NFTNL_CHAIN_TYPE),
	    "nat");
	assert_int_equal(nftnl_chain_get_u32(w.chains[1], NFTNL_CHAIN_HOOKNUM),
	    NF_INET_LOCAL_OUT);
	assert_int_equal(nftnl_chain_get_s32(w.chains[1], NFTNL_CHAIN_PRIO),
	    NFT_NAT_PRIO);
	assert_int_equal(nftnl_chain_get_u32(w.chains[1], NFTNL_CHAIN_POLICY),
	    NF_ACCEPT);
	/* the relay accept: ct status, fib, l4proto, dport */
	rule_shape(w.rules[1], shape, sizeof(shape));
	assert_string_equal(shape,
	    "ct bitwise cmp fib cmp meta cmp payload cmp immediate");
	rule_text(w.rules[1], text, sizeof(text));
	assert_non_null(strstr(text, "load status"));
	assert_non_null(strstr(text, "0x0000993a"));	/* 15001 */
	/* the redirect: port into a register, then redir with it */
	rule_shape(w.rules[11], shape, sizeof(shape));
	assert_string_equal(shape, "meta cmp payload cmp immediate redir");
	rule_text(w.rules[11], text, sizeof(text));
	assert_non_null(strstr(text, "0x00005000"));	/* dport 80 */
	assert_non_null(strstr(text, "0x0000993a"));	/* to 15001 */
	assert_non_null(strstr(text, "proto_min reg 1"));
	assert_string_equal(nftnl_rule_get_str(w.rules[11], NFTNL_RULE_CHAIN),
	    NFT_NAT_CHAIN);
	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

/*
 * transparent-range: every TCP port of the gate's synthetic addresses to
 * the relay, after the gate's and the local returns, before the ports;
 * the relay's accept is there without a transparent port too.
 */
static void
test_transparent_range_batch(void **state)
{
	static const char *const want[] = {
		"oifname lo fib daddr type local accept",
		"ct status dnat fib daddr type local tcp dport 15001 accept",
		"ct direction original ct state established,related accept",
		"gate: tcp 10.199.0.1 port 43127 accept",
		"counter drop",
		"ip daddr 10.199.0.1 return",
		"fib daddr type local return",
		"ip daddr 198.18.0.0/15 tcp redirect to :15001",
	};
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];

	(void)state;
	p = plan_of("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "transparent-range 198.18.0.0/15\n");
	assert_null(nft_ruleset_new(p, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "relay"));
	p->relay_port = 15001;
	rs = ruleset_walked(p, want, sizeof(want) / sizeof(want[0]), &b, &w);
	assert_int_equal(w.nchains, 2);
	/* nfproto, the address under its /15 mask, l4proto, the redirect */
	rule_shape(w.rules[7], shape, sizeof(shape));
	assert_string_equal(shape,
	    "meta cmp payload bitwise cmp meta cmp immediate redir");
	rule_text(w.rules[7], text, sizeof(text));
	assert_non_null(strstr(text, "0x0000feff"));	/* 255.254.0.0 */
	assert_non_null(strstr(text, "0x000012c6"));	/* 198.18.0.0 */
	assert_non_null(strstr(text, "0x0000993a"));	/* to 15001 */
	assert_string_equal(nftnl_rule_get_str(w.rules[7], NFTNL_RULE_CHAIN),
	    NFT_NAT_CHAIN);
	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

/*
 * --init with gate-uid and serve: the gate's uid first, the other uids'
 * drop before the established shortcut, neighbour discovery for the gate;
 * every other plan keeps its order (the tests above).
 */
static void
test_pod_batch(void **state)
{
	static const char *const want[] = {
		"meta skuid == 65532 accept",
		"oifname lo fib daddr type local accept",
		"ct direction reply tcp sport 8080 accept",
		"gate: tcp 127.0.0.1 port 3128 accept",
		"meta skuid != 65532 counter drop",
		"ct direction original ct state established,related accept",
		"icmpv6 type 135 accept",
		"icmpv6 type 136 accept",
		"counter drop",
	};
	struct enf_plan		*p;
	struct nft_ruleset	*rs;
	struct nft_batch	 b;
	struct walked		 w;
	char			 err[256], shape[256], text[2048];
	size_t			 i;

	(void)state;
	p = plan_of("aisb-plan 1\nmode gate\ngate 127.0.0.1 3128\n"
	    "gate-uid 65532\nserve 8080\n");
	rs = nft_ruleset_new(p, 0, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_ruleset_nrules(rs), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(nft_ruleset_rule_desc(rs, i), want[i]);
	assert_int_equal(nft_batch_init(&b), 0);
	assert_int_equal(nft_batch_ruleset(rs, 1000, &b, err, sizeof(err)), 0);
	walk(&b, &w);
	assert_int_equal(w.nrules, sizeof(want) / sizeof(want[0]));
	rule_shape(w.rules[0], shape, sizeof(shape));
	assert_string_equal(shape, "meta cmp immediate");
	rule_text(w.rules[0], text, sizeof(text));
	assert_non_null(strstr(text, "load skuid"));
	assert_non_null(strstr(text, "eq reg 1 0x0000fffc"));	/* 65532 */
	rule_shape(w.rules[4], shape, sizeof(shape));
	assert_string_equal(shape, "meta cmp counter immediate");
	rule_text(w.rules[4], text, sizeof(text));
	assert_non_null(strstr(text, "neq reg 1 0x0000fffc"));
	assert_non_null(strstr(text, "drop"));
	rule_shape(w.rules[2], shape, sizeof(shape));
	assert_string_equal(shape, "ct cmp meta cmp payload cmp immediate");
	rule_text(w.rules[2], text, sizeof(text));
	assert_non_null(strstr(text, "0x0000901f"));	/* sport 8080 */
	walked_free(&w);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* serve alone (a shared gate): no uid rules, the usual order */
	p = plan_of("aisb-plan 1\nmode gate\ngate 10.96.0.20 3128\n"
	    "serve 8080\n");
	rs = nft_ruleset_new(p, 0, err, sizeof(err));
	assert_non_null(rs);
	assert_int_equal(nft_ruleset_nrules(rs), 5);
	assert_string_equal(nft_ruleset_rule_desc(rs, 1),
	    "ct direction reply tcp sport 8080 accept");
	assert_string_equal(nft_ruleset_rule_desc(rs, 2),
	    "ct direction original ct state established,related accept");
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_batch),
		cmocka_unit_test(test_transparent_batch),
		cmocka_unit_test(test_transparent_range_batch),
		cmocka_unit_test(test_pod_batch),
		cmocka_unit_test(test_none_batch),
		cmocka_unit_test(test_direct_batch),
		cmocka_unit_test(test_record_batch),
		cmocka_unit_test(test_elems_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
