/*
 * The canonical form: rules sorted (allow before deny, then by kind and
 * pattern), the same pattern written twice folded into one rule with the
 * union of its ports (the first written stays the one cited), allow_ranges
 * sorted and deduplicated; then the lookup structures the matcher uses
 * (exact names and suffixes by hash, unindexed regexes and CIDRs in lists)
 * and the canonical dump whose SHA-256 names the policy.  Two files that
 * say the same thing compile to the same policy.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load-int.h"

static int
range_cmp(const void *a, const void *b)
{
	const struct policy_port_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Sorts and coalesces in place; adjacent ranges merge (80, 81 -> 80-81). */
size_t
policy_ports_normalize(struct policy_port_range *r, size_t n)
{
	size_t	 i, out = 0;

	if (n == 0)
		return 0;
	qsort(r, n, sizeof(*r), range_cmp);
	for (i = 1; i < n; i++) {
		if ((unsigned)r[i].lo <= (unsigned)r[out].hi + 1) {
			if (r[i].hi > r[out].hi)
				r[out].hi = r[i].hi;
		} else
			r[++out] = r[i];
	}
	return out + 1;
}

void
policy_rule_free(struct policy_rule *r)
{
	if (r == NULL)
		return;
	policy_inspect_free(r);
	pcre2_code_free(r->re);
	free(r->re_key);
	free(r->pattern);
	free(r->ports);
	free(r);
}

static int
rule_cmp(const void *a, const void *b)
{
	const struct policy_rule	*x = *(struct policy_rule * const *)a;
	const struct policy_rule	*y = *(struct policy_rule * const *)b;
	int				 d;

	if (x->action != y->action)
		return x->action == POLICY_ALLOW ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->kind == POLICY_RULE_CIDR) {
		if ((d = policy_addr_cmp(&x->net, &y->net)) != 0)
			return d;
		return (int)x->prefix - (int)y->prefix;
	}
	if ((d = memcmp(x->pattern, y->pattern,
	    x->patlen < y->patlen ? x->patlen : y->patlen)) != 0)
		return d;
	if (x->patlen != y->patlen)
		return x->patlen < y->patlen ? -1 : 1;
	/* same rule twice: the first written stays the one cited */
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (int)x->column - (int)y->column;
}

/* Folds b's ports into a.  Returns -1 on ENOMEM. */
static int
merge_ports(struct policy_rule *a, const struct policy_rule *b)
{
	struct policy_port_range *r;

	r = reallocarray(a->ports, a->nports + b->nports, sizeof(*r));
	if (r == NULL)
		return -1;
	memcpy(r + a->nports, b->ports, b->nports * sizeof(*r));
	a->ports = r;
	a->nports = policy_ports_normalize(r, a->nports + b->nports);
	return 0;
}

static int
range_sort_cmp(const void *a, const void *b)
{
	const struct policy_range	*x = a, *y = b;
	int				 d;

	if ((d = policy_addr_cmp(&x->net, &y->net)) != 0)
		return d;
	return (int)x->prefix - (int)y->prefix;
}

/*
 * A name written twice is one rule (its ports united), so both must say
 * the same of inspection: which of two different requests: lists would
 * apply is no question a policy should leave open.  Reported at the
 * second, as an error of the file; -1 when there was one.
 */
static int
check_merges(struct ctx *c)
{
	size_t	 i;
	int	 rc = 0;

	for (i = 1; i < c->nrules; i++) {
		const struct policy_rule *a = c->rules[i - 1], *b = c->rules[i];

		if (a->action != b->action || a->kind != b->kind ||
		    a->patlen != b->patlen ||
		    memcmp(a->pattern, b->pattern, a->patlen) != 0 ||
		    policy_inspect_same(a, b))
			continue;
		policy_error_at(c, b->line, b->column, "write the host once, "
		    "with the ports of both", "host '%.64s' is written twice "
		    "(first at line %u) with different inspect, requests or "
		    "secrets", a->pattern, a->line);
		rc = -1;
	}
	return rc;
}

int
policy_compile(struct ctx *c)
{
	struct policy	*p = c->p;
	size_t		 i, out = 0, nexact = 0, nsfx = 0;

	if (c->nrules > 0)
		qsort(c->rules, c->nrules, sizeof(*c->rules), rule_cmp);
	if (check_merges(c) == -1)
		return -1;
	for (i = 0; i < c->nrules; i++) {
		struct policy_rule *r = c->rules[i], *prev;

		prev = out > 0 ? c->rules[out - 1] : NULL;
		if (prev != NULL && prev->action == r->action &&
		    prev->kind == r->kind && prev->patlen == r->patlen &&
		    memcmp(prev->pattern, r->pattern, r->patlen) == 0) {
			if (merge_ports(prev, r) == -1)
				return -1;
			policy_rule_free(r);
			continue;
		}
		c->rules[out++] = r;
	}
	p->rules = c->rules;
	p->nrules = out;
	c->rules = NULL;
	c->nrules = 0;

	if (p->nallow_ranges > 0) {
		qsort(p->allow_ranges, p->nallow_ranges,
		    sizeof(*p->allow_ranges), range_sort_cmp);
		for (i = 1, out = 1; i < p->nallow_ranges; i++)
			if (range_sort_cmp(&p->allow_ranges[i],
			    &p->allow_ranges[out - 1]) != 0)
				p->allow_ranges[out++] = p->allow_ranges[i];
		p->nallow_ranges = out;
	}

	for (i = 0; i < p->nrules; i++) {
		struct policy_rule *r = p->rules[i];

		switch (r->kind) {
		case POLICY_RULE_EXACT:
			nexact++;
			break;
		case POLICY_RULE_WILDCARD:
			nsfx++;
			break;
		case POLICY_RULE_REGEX:
			if (r->re_key != NULL)
				nsfx++;
			else if (r->action == POLICY_ALLOW)
				p->nre_allow++;
			else
				p->nre_deny++;
			break;
		case POLICY_RULE_CIDR:
			if (r->action == POLICY_ALLOW)
				p->ncidr_allow++;
			else
				p->ncidr_deny++;
			break;
		}
	}
	if (policy_htab_init(&p->exact, nexact) == -1 ||
	    policy_htab_init(&p->sfx, nsfx) == -1 ||
	    (p->re_allow = calloc(p->nre_allow + 1, sizeof(void *))) == NULL ||
	    (p->re_deny = calloc(p->nre_deny + 1, sizeof(void *))) == NULL ||
	    (p->cidr_allow = calloc(p->ncidr_allow + 1, sizeof(void *))) == NULL ||
	    (p->cidr_deny = calloc(p->ncidr_deny + 1, sizeof(void *))) == NULL)
		return -1;
	p->nre_allow = p->nre_deny = p->ncidr_allow = p->ncidr_deny = 0;
	for (i = 0; i < p->nrules; i++) {
		struct policy_rule	*r = p->rules[i];
		struct policy_hslot	*s;
		struct policy_rule	**re;

		switch (r->kind) {
		case POLICY_RULE_EXACT:
		case POLICY_RULE_WILDCARD:
			if (r->kind == POLICY_RULE_EXACT)
				s = policy_htab_slot(&p->exact, r->pattern,
				    r->patlen);
			else
				s = policy_htab_slot(&p->sfx, r->pattern + 2,
				    r->patlen - 2);
			if (r->action == POLICY_ALLOW)
				s->allow = r;
			else
				s->deny = r;
			break;
		case POLICY_RULE_REGEX:
			if (r->re_key != NULL) {
				s = policy_htab_slot(&p->sfx, r->re_key,
				    r->re_keylen);
				re = reallocarray(s->re, s->nre + 1,
				    sizeof(*re));
				if (re == NULL)
					return -1;
				re[s->nre++] = r;
				s->re = re;
			} else if (r->action == POLICY_ALLOW)
				p->re_allow[p->nre_allow++] = r;
			else
				p->re_deny[p->nre_deny++] = r;
			break;
		case POLICY_RULE_CIDR:
			if (r->action == POLICY_ALLOW)
				p->cidr_allow[p->ncidr_allow++] = r;
			else
				p->cidr_deny[p->ncidr_deny++] = r;
			break;
		}
	}
	return policy_build_dump(p);
}
