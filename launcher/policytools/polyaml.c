/*
 * A session's policy written out as YAML with hosts added (agent.c: an
 * agent recipe's; derive_lock.c: the workspace's lockfiles'): the base's
 * allow rules, the added ones, then the base's deny rules, allow_ranges
 * and dns, each rule under a comment saying where it was written.  The
 * text is loaded again by the caller, so what it says is checked as any
 * policy file is.
 */
#include "config.h"

#include <stdio.h>

#include "policy.h"
#include "policytools/polyaml.h"

void
launch_yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
rule(FILE *f, const struct policy_rule_info *ri)
{
	size_t	 i;

	fprintf(f, "  # %s:%u:%u\n  - %s: ", ri->file != NULL ? ri->file :
	    "?", ri->line, ri->column, ri->kind == POLICY_RULE_CIDR ? "cidr" :
	    "host");
	launch_yaml_str(f, ri->pattern);	/* "*.x", "~re": as written */
	fprintf(f, "\n    ports: [");
	for (i = 0; i < ri->nports; i++) {
		if (ri->ports[i].lo == ri->ports[i].hi)
			fprintf(f, "%s%u", i ? ", " : "", ri->ports[i].lo);
		else
			fprintf(f, "%s\"%u-%u\"", i ? ", " : "",
			    ri->ports[i].lo, ri->ports[i].hi);
	}
	fprintf(f, "]\n");
}

void
launch_policy_yaml(FILE *f, const struct policy *base,
    size_t (*extra)(FILE *, void *), void *ctx)
{
	struct policy_rule_info	 ri;
	struct policy_addr	 net;
	char			 addr[64];
	size_t			 i, n = policy_rule_count(base), rules = 0;
	unsigned		 prefix;
	int			 section = 0;

	fprintf(f, "allow:\n");
	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(base, i), &ri);
		if (ri.action != POLICY_ALLOW)
			continue;
		rule(f, &ri);
		rules++;
	}
	rules += extra(f, ctx);
	if (rules == 0)
		fprintf(f, "  []\n");
	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(base, i), &ri);
		if (ri.action != POLICY_DENY)
			continue;
		if (!section)
			fprintf(f, "deny:\n");
		section = 1;
		rule(f, &ri);
	}
	fprintf(f, "allow_ranges: [");
	for (i = 0; i < policy_allow_range_count(base); i++) {
		policy_allow_range_at(base, i, &net, &prefix);
		fprintf(f, "%s\"%s/%u\"", i ? ", " : "",
		    policy_addr_str(&net, addr, sizeof(addr)), prefix);
	}
	fprintf(f, "]\ndns:\n  servers: [");
	for (i = 0; i < policy_dns_server_count(base); i++) {
		fprintf(f, "%s", i ? ", " : "");
		launch_yaml_str(f, policy_dns_server_at(base, i));
	}
	fprintf(f, "]\n  min_ttl: %u\n  max_ttl: %u\n",
	    policy_dns_min_ttl(base), policy_dns_max_ttl(base));
}
