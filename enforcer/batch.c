/*
 * The batches (nft.h): the expected table (nft.c) as one transaction, and
 * set elements in as many as they need.  What is serialised is the very
 * objects verify.c compares with the kernel's.
 *
 * The ruleset's batch replaces any table inet aisb inside the one
 * transaction (add, delete, create), so a table left from an earlier run
 * goes without a window and without ENOENT when there is none.  Every
 * message between the markers asks for its ACK, which nft_send
 * (netlink.c) counts; desc[] names each for the kernel's refusal.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>

#include "enforcer/nft-int.h"

#define ELEMS_PER_MSG	100	/* at most 56 bytes each */
#define MSGS_PER_BATCH	8	/* 8 * 100 * 56 bytes stay inside NFT_BATCH_LIMIT */

/*
 * libmnl's batch lets the last message run past the limit and reports it
 * full afterwards, so the buffer is twice the limit (mnl_nlmsg_batch_start).
 */
int
nft_batch_init(struct nft_batch *b)
{
	memset(b, 0, sizeof(*b));
	if ((b->buf = malloc(2 * NFT_BATCH_LIMIT)) == NULL)
		return -1;
	return 0;
}

void
nft_batch_release(struct nft_batch *b)
{
	free(b->buf);
	b->buf = NULL;
}

struct builder {
	struct nft_batch	*b;
	struct mnl_nlmsg_batch	*mb;
	uint32_t		 seq;
};

static void
builder_start(struct builder *bd, struct nft_batch *b, uint32_t seq)
{
	b->len = 0;
	b->nmsgs = 0;
	b->nacks = 0;
	b->seq = seq;
	bd->b = b;
	bd->seq = seq;
	bd->mb = mnl_nlmsg_batch_start(b->buf, NFT_BATCH_LIMIT);
	nftnl_batch_begin(mnl_nlmsg_batch_current(bd->mb), bd->seq++);
	b->desc[b->nmsgs++] = "batch begin";
	mnl_nlmsg_batch_next(bd->mb);
}

/* Header for the next message; NULL when the batch has no room left. */
static struct nlmsghdr *
builder_msg(struct builder *bd, uint16_t type, uint16_t flags, const char *desc)
{
	if (bd->b->nmsgs >= NFT_BATCH_MSGS - 1)	/* keep room for the end */
		return NULL;
	bd->b->desc[bd->b->nmsgs++] = desc;
	bd->b->nacks++;
	return nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(bd->mb), type,
	    NFPROTO_INET, flags | NLM_F_ACK, bd->seq++);
}

/* Closes the message just built; -1 when it did not fit. */
static int
builder_next(struct builder *bd)
{
	return mnl_nlmsg_batch_next(bd->mb) ? 0 : -1;
}

/* One NEWCHAIN of c into the batch: 0, or -1 when full. */
static int
builder_chain(struct builder *bd, struct nftnl_chain *c, const char *desc)
{
	struct nlmsghdr	*nlh;

	if ((nlh = builder_msg(bd, NFT_MSG_NEWCHAIN, NLM_F_CREATE |
	    NLM_F_EXCL, desc)) == NULL)
		return -1;
	nftnl_chain_nlmsg_build_payload(nlh, c);
	return builder_next(bd);
}

/* One NEWSET of set into the batch (none for NULL): 0, or -1 when full. */
static int
builder_set(struct builder *bd, struct nftnl_set *set, const char *desc)
{
	struct nlmsghdr	*nlh;

	if (set == NULL)
		return 0;
	if ((nlh = builder_msg(bd, NFT_MSG_NEWSET, NLM_F_CREATE |
	    NLM_F_EXCL, desc)) == NULL)
		return -1;
	nftnl_set_nlmsg_build_payload(nlh, set);
	return builder_next(bd);
}

static int
builder_end(struct builder *bd)
{
	nftnl_batch_end(mnl_nlmsg_batch_current(bd->mb), bd->seq++);
	bd->b->desc[bd->b->nmsgs++] = "batch end";
	if (!mnl_nlmsg_batch_next(bd->mb)) {
		mnl_nlmsg_batch_stop(bd->mb);
		return -1;
	}
	bd->b->len = mnl_nlmsg_batch_size(bd->mb);
	mnl_nlmsg_batch_stop(bd->mb);
	return 0;
}

int
nft_batch_ruleset(const struct nft_ruleset *rs, uint32_t seq,
    struct nft_batch *b, char *err, size_t errlen)
{
	struct builder	 bd;
	struct nlmsghdr	*nlh;
	size_t		 i;

	builder_start(&bd, b, seq);

	/*
	 * Add, delete, add: a table left from an earlier run is replaced as a
	 * whole inside the same transaction, without ENOENT when there is none.
	 */
	if ((nlh = builder_msg(&bd, NFT_MSG_NEWTABLE, NLM_F_CREATE,
	    "add table")) == NULL)
		goto full;
	nftnl_table_nlmsg_build_payload(nlh, rs->table);
	if (builder_next(&bd) == -1)
		goto full;
	if ((nlh = builder_msg(&bd, NFT_MSG_DELTABLE, 0,
	    "delete old table")) == NULL)
		goto full;
	nftnl_table_nlmsg_build_payload(nlh, rs->table);
	if (builder_next(&bd) == -1)
		goto full;
	if ((nlh = builder_msg(&bd, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL,
	    "create table inet " NFT_TABLE)) == NULL)
		goto full;
	nftnl_table_nlmsg_build_payload(nlh, rs->table);
	if (builder_next(&bd) == -1)
		goto full;

	if (builder_set(&bd, rs->set4, "create set " NFT_SET4) == -1 ||
	    builder_set(&bd, rs->set6, "create set " NFT_SET6) == -1)
		goto full;

	/* the filter chain always; the others when the plan asks */
	if (builder_chain(&bd, rs->chain, "create chain " NFT_CHAIN
	    " (hook output, policy drop)") == -1 ||
	    (rs->rec_out != NULL && builder_chain(&bd, rs->rec_out,
	    "create chain " NFT_REC_OUT " (hook output, policy accept)") == -1) ||
	    (rs->rec_in != NULL && builder_chain(&bd, rs->rec_in,
	    "create chain " NFT_REC_IN " (hook input, policy accept)") == -1) ||
	    (rs->nat != NULL && builder_chain(&bd, rs->nat,
	    "create chain " NFT_NAT_CHAIN " (nat, hook output)") == -1))
		goto full;

	for (i = 0; i < rs->nrules; i++) {
		if ((nlh = builder_msg(&bd, NFT_MSG_NEWRULE,
		    NLM_F_CREATE | NLM_F_APPEND, rs->desc[i])) == NULL)
			goto full;
		nftnl_rule_nlmsg_build_payload(nlh, rs->rules[i]);
		if (builder_next(&bd) == -1)
			goto full;
	}
	if (builder_end(&bd) == -1)
		goto full_stopped;
	return 0;
full:
	mnl_nlmsg_batch_stop(bd.mb);
full_stopped:
	snprintf(err, errlen, "ruleset does not fit in one batch");
	return -1;
}

static int
elem_key(const struct nft_elem *el, uint8_t *key, uint32_t *keylen)
{
	uint16_t	 port = htons(el->port);
	size_t		 alen = el->addr.family == AF_INET ? 4 : 16;

	if (el->addr.family != AF_INET && el->addr.family != AF_INET6)
		return -1;
	memset(key, 0, NFT_SET6_KEYLEN);
	memcpy(key, el->addr.addr, alen);
	memcpy(key + alen, &port, sizeof(port));	/* + 2 bytes of padding */
	*keylen = (uint32_t)alen + 4;
	return 0;
}

/*
 * One NEWSETELEM (or, for the renewed ones, DELSETELEM) message for the n
 * elements, all of one family; n is at most ELEMS_PER_MSG.  0 or -1.
 */
static int
batch_elem_msg(struct builder *bd, const struct nft_elem *elems, size_t n,
    uint16_t type)
{
	struct nftnl_set	*s;
	struct nftnl_set_elem	*e;
	struct nlmsghdr		*nlh;
	uint8_t			 key[NFT_SET6_KEYLEN];
	uint32_t		 keylen;
	size_t			 i, taken = 0;
	int			 v4 = elems[0].addr.family == AF_INET, rc = -1;

	if ((s = nftnl_set_alloc()) == NULL)
		return -1;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) == -1 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, v4 ? NFT_SET4 : NFT_SET6) ==
	    -1)
		goto out;
	for (i = 0; i < n; i++) {
		if (type == NFT_MSG_DELSETELEM && !elems[i].renew)
			continue;
		if (elem_key(&elems[i], key, &keylen) == -1 ||
		    (e = nftnl_set_elem_alloc()) == NULL)
			goto out;
		if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, keylen) ==
		    -1) {
			nftnl_set_elem_free(e);
			goto out;
		}
		if (type == NFT_MSG_NEWSETELEM) {
			/* Expiration too: 6.10+ then renews in place. */
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT,
			    elems[i].timeout_ms);
			nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_EXPIRATION,
			    elems[i].timeout_ms);
		}
		nftnl_set_elem_add(s, e);
		taken++;
	}
	if (taken > 0) {
		if (type == NFT_MSG_NEWSETELEM)
			nlh = builder_msg(bd, type, NLM_F_CREATE, v4 ?
			    "add elements to " NFT_SET4 :
			    "add elements to " NFT_SET6);
		else
			nlh = builder_msg(bd, type, 0, v4 ?
			    "renew elements of " NFT_SET4 :
			    "renew elements of " NFT_SET6);
		if (nlh == NULL)
			goto out;
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
		if (builder_next(bd) == -1)
			goto out;
	}
	rc = 0;
out:
	nftnl_set_free(s);
	return rc;
}

/*
 * Runs of one family, ELEMS_PER_MSG at most, each as a delete message (when
 * some are renewed) and an add message; MSGS_PER_BATCH messages at most.
 */
ssize_t
nft_batch_elems(const struct nft_elem *elems, size_t n, uint32_t seq,
    struct nft_batch *b, char *err, size_t errlen)
{
	struct builder	 bd;
	size_t		 off = 0, msgs = 0;

	builder_start(&bd, b, seq);
	while (off < n && msgs + 2 <= MSGS_PER_BATCH) {
		size_t	 run = 0, renew = 0;

		while (off + run < n && run < ELEMS_PER_MSG &&
		    elems[off + run].addr.family == elems[off].addr.family) {
			if (elems[off + run].renew)
				renew++;
			run++;
		}
		if ((renew > 0 && batch_elem_msg(&bd, elems + off, run,
		    NFT_MSG_DELSETELEM) == -1) ||
		    batch_elem_msg(&bd, elems + off, run,
		    NFT_MSG_NEWSETELEM) == -1) {
			mnl_nlmsg_batch_stop(bd.mb);
			snprintf(err, errlen, "bad element or out of memory");
			return -1;
		}
		off += run;
		msgs += renew > 0 ? 2 : 1;
	}
	if (builder_end(&bd) == -1) {
		snprintf(err, errlen, "elements do not fit in one batch");
		return -1;
	}
	return (ssize_t)off;
}

int
nft_add_elems(const struct nft_elem *elems, size_t n, char *err,
    size_t errlen)
{
	struct nft_batch	 b;
	size_t			 off = 0;
	ssize_t			 k;
	uint32_t		 seq = (uint32_t)time(NULL);
	int			 rc = -1;

	if (nft_batch_init(&b) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (off < n) {
		if ((k = nft_batch_elems(elems + off, n - off, seq, &b, err,
		    errlen)) == -1)
			goto out;
		if (k == 0) {
			snprintf(err, errlen, "element batch made no progress");
			goto out;
		}
		if (nft_send(&b, err, errlen) == -1)
			goto out;
		off += (size_t)k;
		seq += (uint32_t)b.nmsgs;
	}
	rc = 0;
out:
	nft_batch_release(&b);
	return rc;
}
