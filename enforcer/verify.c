/*
 * Read table inet aisb back from the kernel and compare it with what was
 * sent.  The batch was acknowledged, but only what the kernel reports now is
 * the ruleset packets meet: a dormant table, another hook or policy, a rule
 * missing, changed or added would each let something out.
 *
 * Rules are compared expression by expression with libnftnl's own text form,
 * except counters, whose values move.  The kernel answers are bounded: at
 * most NFT_MAX_RULES + 1 rules are kept, more is a mismatch.
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>

#include "enforcer/netlink.h"
#include "enforcer/nft-int.h"

#define EXPR_TEXT	512

struct rule_dump {
	struct nftnl_rule	*rules[NFT_MAX_RULES + 1];
	size_t			 n;
	int			 overflow;
	int			 bad;
};

static int
chain_cb(const struct nlmsghdr *nlh, void *arg)
{
	return nftnl_chain_nlmsg_parse(nlh, arg) == -1 ? MNL_CB_ERROR :
	    MNL_CB_OK;
}

static int
set_cb(const struct nlmsghdr *nlh, void *arg)
{
	return nftnl_set_nlmsg_parse(nlh, arg) == -1 ? MNL_CB_ERROR :
	    MNL_CB_OK;
}

static int
rule_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct rule_dump	*d = arg;
	struct nftnl_rule	*r;

	if (d->n == NFT_MAX_RULES + 1) {
		d->overflow = 1;
		return MNL_CB_OK;	/* drain the dump, then fail */
	}
	if ((r = nftnl_rule_alloc()) == NULL) {
		d->bad = 1;
		return MNL_CB_ERROR;
	}
	if (nftnl_rule_nlmsg_parse(nlh, r) == -1) {
		nftnl_rule_free(r);
		d->bad = 1;
		return MNL_CB_ERROR;
	}
	d->rules[d->n++] = r;
	return MNL_CB_OK;
}

static int
cmp_rule(const struct nftnl_rule *want, const struct nftnl_rule *got,
    char *err, size_t errlen)
{
	struct nftnl_expr_iter	*iw = NULL, *ig = NULL;
	struct nftnl_expr	*ew, *eg;
	char			 tw[EXPR_TEXT], tg[EXPR_TEXT];
	int			 rc = -1;

	if ((iw = nftnl_expr_iter_create(want)) == NULL ||
	    (ig = nftnl_expr_iter_create(got)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (;;) {
		ew = nftnl_expr_iter_next(iw);
		eg = nftnl_expr_iter_next(ig);
		if (ew == NULL && eg == NULL)
			break;
		if (ew == NULL || eg == NULL) {
			snprintf(err, errlen, "the kernel's rule has %s "
			    "expressions", ew == NULL ? "more" : "fewer");
			goto out;
		}
		if (strcmp(nftnl_expr_get_str(ew, NFTNL_EXPR_NAME),
		    nftnl_expr_get_str(eg, NFTNL_EXPR_NAME)) != 0) {
			snprintf(err, errlen, "expected a %s expression, the "
			    "kernel has %s",
			    nftnl_expr_get_str(ew, NFTNL_EXPR_NAME),
			    nftnl_expr_get_str(eg, NFTNL_EXPR_NAME));
			goto out;
		}
		if (strcmp(nftnl_expr_get_str(ew, NFTNL_EXPR_NAME),
		    "counter") == 0)
			continue;
		nftnl_expr_snprintf(tw, sizeof(tw), ew, NFTNL_OUTPUT_DEFAULT, 0);
		nftnl_expr_snprintf(tg, sizeof(tg), eg, NFTNL_OUTPUT_DEFAULT, 0);
		if (strcmp(tw, tg) != 0) {
			snprintf(err, errlen, "expected [%s], the kernel has "
			    "[%s]", tw, tg);
			goto out;
		}
	}
	rc = 0;
out:
	if (iw != NULL)
		nftnl_expr_iter_destroy(iw);
	if (ig != NULL)
		nftnl_expr_iter_destroy(ig);
	return rc;
}

static int
verify_set(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
    const struct nftnl_set *want, char *err, size_t errlen)
{
	struct nftnl_set	*got;
	struct nlmsghdr		*nlh;
	const char		*name = nftnl_set_get_str(want, NFTNL_SET_NAME);
	int			 rc = -1;

	if ((got = nftnl_set_alloc()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSET, NFPROTO_INET,
	    NLM_F_ACK, seq);
	nftnl_set_nlmsg_build_payload(nlh, (struct nftnl_set *)want);
	if (nft_query(nl, buf, bufsz, seq, set_cb, got) == -1) {
		snprintf(err, errlen, "set %s: %s", name, strerror(errno));
		goto out;
	}
	if (nftnl_set_get_u32(got, NFTNL_SET_KEY_TYPE) !=
	    nftnl_set_get_u32(want, NFTNL_SET_KEY_TYPE) ||
	    nftnl_set_get_u32(got, NFTNL_SET_KEY_LEN) !=
	    nftnl_set_get_u32(want, NFTNL_SET_KEY_LEN) ||
	    !(nftnl_set_get_u32(got, NFTNL_SET_FLAGS) & NFT_SET_TIMEOUT)) {
		snprintf(err, errlen, "set %s has another type or no "
		    "timeouts", name);
		goto out;
	}
	rc = 0;
out:
	nftnl_set_free(got);
	return rc;
}

/*
 * A recording chain (nft.c): a filter on its hook with its priority and
 * policy accept.  It only logs; what matters is that it is there.  The
 * transparent chain likewise, of type nat: its rules only rewrite.
 */
static int
verify_rec_chain(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
    const struct nftnl_chain *want, char *err, size_t errlen)
{
	struct nftnl_chain	*got;
	struct nlmsghdr		*nlh;
	const char		*name = nftnl_chain_get_str(want, NFTNL_CHAIN_NAME);
	int			 rc = -1;

	if ((got = nftnl_chain_alloc()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, NFPROTO_INET,
	    NLM_F_ACK, seq);
	nftnl_chain_nlmsg_build_payload(nlh, (struct nftnl_chain *)want);
	if (nft_query(nl, buf, bufsz, seq, chain_cb, got) == -1) {
		snprintf(err, errlen, "chain %s: %s", name, strerror(errno));
		goto out;
	}
	if (!nftnl_chain_is_set(got, NFTNL_CHAIN_HOOKNUM) ||
	    nftnl_chain_get_u32(got, NFTNL_CHAIN_HOOKNUM) !=
	    nftnl_chain_get_u32(want, NFTNL_CHAIN_HOOKNUM) ||
	    !nftnl_chain_is_set(got, NFTNL_CHAIN_POLICY) ||
	    nftnl_chain_get_u32(got, NFTNL_CHAIN_POLICY) != NF_ACCEPT ||
	    !nftnl_chain_is_set(got, NFTNL_CHAIN_TYPE) ||
	    strcmp(nftnl_chain_get_str(got, NFTNL_CHAIN_TYPE),
	    nftnl_chain_get_str(want, NFTNL_CHAIN_TYPE)) != 0 ||
	    nftnl_chain_get_s32(got, NFTNL_CHAIN_PRIO) !=
	    nftnl_chain_get_s32(want, NFTNL_CHAIN_PRIO)) {
		snprintf(err, errlen, "chain %s is not the %s chain that was "
		    "sent", name, nftnl_chain_get_str(want, NFTNL_CHAIN_TYPE));
		goto out;
	}
	rc = 0;
out:
	nftnl_chain_free(got);
	return rc;
}

/* Every rule of chain, in order, and nothing else. */
static int
verify_rules(struct mnl_socket *nl, char *buf, size_t bufsz, uint32_t seq,
    const struct nft_ruleset *rs, const char *chain, char *err, size_t errlen)
{
	struct nftnl_rule	*filter;
	struct nlmsghdr		*nlh;
	struct rule_dump	 d;
	size_t			 i, k, want = 0;
	int			 rc = -1;

	memset(&d, 0, sizeof(d));
	for (i = 0; i < rs->nrules; i++)
		if (strcmp(rs->chain_of[i], chain) == 0)
			want++;
	if ((filter = nftnl_rule_alloc()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nftnl_rule_set_u32(filter, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(filter, NFTNL_RULE_TABLE, NFT_TABLE) == -1 ||
	    nftnl_rule_set_str(filter, NFTNL_RULE_CHAIN, chain) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, NFPROTO_INET,
	    NLM_F_DUMP, seq);
	nftnl_rule_nlmsg_build_payload(nlh, filter);
	if (nft_query(nl, buf, bufsz, seq, rule_cb, &d) == -1 || d.bad) {
		snprintf(err, errlen, "listing rules: %s",
		    d.bad ? "unparsable rule" : strerror(errno));
		goto out;
	}
	if (d.overflow || d.n != want) {
		snprintf(err, errlen, "chain %s has %s%zu rules, expected %zu",
		    chain, d.overflow ? "more than " : "", d.n, want);
		goto out;
	}
	for (i = 0, k = 0; i < rs->nrules; i++) {
		char	 why[EXPR_TEXT * 2 + 64];

		if (strcmp(rs->chain_of[i], chain) != 0)
			continue;
		/* The filter is a hint the kernel may ignore: check it. */
		if (strcmp(nftnl_rule_get_str(d.rules[k], NFTNL_RULE_TABLE),
		    NFT_TABLE) != 0 ||
		    strcmp(nftnl_rule_get_str(d.rules[k], NFTNL_RULE_CHAIN),
		    chain) != 0) {
			snprintf(err, errlen, "rule %zu is not in %s/%s", k,
			    NFT_TABLE, chain);
			goto out;
		}
		if (cmp_rule(rs->rules[i], d.rules[k], why, sizeof(why)) == -1) {
			snprintf(err, errlen, "rule %zu (%s): %s", k,
			    rs->desc[i], why);
			goto out;
		}
		k++;
	}
	rc = 0;
out:
	for (i = 0; i < d.n; i++)
		nftnl_rule_free(d.rules[i]);
	nftnl_rule_free(filter);
	return rc;
}

int
nft_verify(const struct nft_ruleset *rs, char *err, size_t errlen)
{
	struct mnl_socket	*nl;
	struct nftnl_table	*t = NULL;
	struct nftnl_chain	*c = NULL;
	struct nlmsghdr		*nlh;
	char			*buf = NULL;
	size_t			 bufsz = 64 * 1024;
	uint32_t		 seq = (uint32_t)time(NULL);
	int			 rc = -1;

	if ((nl = nft_socket_open(err, errlen)) == NULL)
		return -1;
	if ((buf = malloc(bufsz)) == NULL || (t = nftnl_table_alloc()) == NULL ||
	    (c = nftnl_chain_alloc()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}

	/* The table exists and is not dormant (a dormant table hooks nothing). */
	if (nft_query_table(nl, buf, bufsz, ++seq, rs->table, t) == -1) {
		snprintf(err, errlen, "table inet %s: %s", NFT_TABLE,
		    strerror(errno));
		goto out;
	}
	if (nftnl_table_get_u32(t, NFTNL_TABLE_FLAGS) & NFT_TABLE_F_DORMANT) {
		snprintf(err, errlen, "table inet %s is dormant", NFT_TABLE);
		goto out;
	}

	/* The chain hooks output as a filter with policy drop. */
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, NFPROTO_INET,
	    NLM_F_ACK, ++seq);
	nftnl_chain_nlmsg_build_payload(nlh, rs->chain);
	if (nft_query(nl, buf, bufsz, seq, chain_cb, c) == -1) {
		snprintf(err, errlen, "chain %s: %s", NFT_CHAIN,
		    strerror(errno));
		goto out;
	}
	if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM) ||
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM) != NF_INET_LOCAL_OUT ||
	    !nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY) ||
	    nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY) != NF_DROP ||
	    !nftnl_chain_is_set(c, NFTNL_CHAIN_TYPE) ||
	    strcmp(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE), "filter") != 0 ||
	    nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO) != 0) {
		snprintf(err, errlen, "chain %s is not a filter on hook output "
		    "with priority 0 and policy drop", NFT_CHAIN);
		goto out;
	}

	if (rs->set4 != NULL && verify_set(nl, buf, bufsz, ++seq, rs->set4,
	    err, errlen) == -1)
		goto out;
	if (rs->set6 != NULL && verify_set(nl, buf, bufsz, ++seq, rs->set6,
	    err, errlen) == -1)
		goto out;

	if (rs->rec_out != NULL && verify_rec_chain(nl, buf, bufsz, ++seq,
	    rs->rec_out, err, errlen) == -1)
		goto out;
	if (rs->rec_in != NULL && verify_rec_chain(nl, buf, bufsz, ++seq,
	    rs->rec_in, err, errlen) == -1)
		goto out;

	if (verify_rules(nl, buf, bufsz, ++seq, rs, NFT_CHAIN, err,
	    errlen) == -1)
		goto out;
	if (rs->rec_out != NULL && (verify_rules(nl, buf, bufsz, ++seq, rs,
	    NFT_REC_OUT, err, errlen) == -1 || verify_rules(nl, buf, bufsz,
	    ++seq, rs, NFT_REC_IN, err, errlen) == -1))
		goto out;
	if (rs->nat != NULL && (verify_rec_chain(nl, buf, bufsz, ++seq,
	    rs->nat, err, errlen) == -1 || verify_rules(nl, buf, bufsz, ++seq,
	    rs, NFT_NAT_CHAIN, err, errlen) == -1))
		goto out;
	rc = 0;
out:
	if (c != NULL)
		nftnl_chain_free(c);
	if (t != NULL)
		nftnl_table_free(t);
	free(buf);
	mnl_socket_close(nl);
	return rc;
}
