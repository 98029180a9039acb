/*
 * Whether a name is allowed on some port: the question a DNS stub asks
 * (the gate's AISB-DNS entry), which knows a name but not yet the port the
 * client will dial.
 *
 * The ports allowed for a name are A \ D: the union of the port ranges of
 * the allow rules that match it, less the union of those of the deny
 * rules that match it.  When A \ D is not empty, the lowest port of any of
 * its runs is the low end of an allow range or one past the high end of
 * a deny range.  So asking policy_decide_name() at those ports, of every
 * rule (a superset of the matching ones), answers exactly, with the very
 * decision a CONNECT to that port would get: no second matcher to keep in
 * step with match.c.
 */
#include "config.h"

#include <string.h>

#include "policy-int.h"

int
policy_name_allowed_any(const struct policy *p, const char *name, size_t len,
    struct policy_decision *d)
{
	uint8_t		 seen[65536 / 8];	/* ports already asked */
	size_t		 i, k;

	memset(seen, 0, sizeof(seen));
	d->verdict = POLICY_DENY;
	d->reason = POLICY_R_HOST_NOT_ALLOWED;
	d->rule = NULL;
	for (i = 0; i < p->nrules; i++) {
		const struct policy_rule	*r = p->rules[i];

		if (r->kind == POLICY_RULE_CIDR)
			continue;
		for (k = 0; k < r->nports; k++) {
			unsigned	 port;

			if (r->action == POLICY_ALLOW)
				port = r->ports[k].lo;
			else if (r->ports[k].hi < 65535)
				port = r->ports[k].hi + 1u;
			else
				continue;
			if (seen[port / 8] & (1u << (port % 8)))
				continue;
			seen[port / 8] |= (uint8_t)(1u << (port % 8));
			policy_decide_name(p, name, len, (uint16_t)port, d);
			if (d->verdict == POLICY_ALLOW)
				return 1;
		}
	}
	/* none: the denial a CONNECT to 443 would get, for the record */
	policy_decide_name(p, name, len, 443, d);
	return 0;
}
