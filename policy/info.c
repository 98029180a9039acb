/*
 * Introspection: what a loaded policy holds, read-only, for the gate, the
 * enforcer, aisb policy and the tests.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "policy-int.h"

size_t
policy_rule_count(const struct policy *p)
{
	return p->nrules;
}

const struct policy_rule *
policy_rule_at(const struct policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i] : NULL;
}

void
policy_rule_info(const struct policy_rule *r, struct policy_rule_info *info)
{
	memset(info, 0, sizeof(*info));
	info->kind = r->kind;
	info->action = r->action;
	info->pattern = r->pattern;
	info->ports = r->ports;
	info->nports = r->nports;
	info->net = r->net;
	info->prefix = r->prefix;
	info->file = r->file;
	info->line = r->line;
	info->column = r->column;
	info->inspect = r->inspect;
	info->nreq_allow = r->nreq_allow;
	info->nreq_deny = r->nreq_deny;
	info->nsecrets = r->nsecrets;
}

const char *
policy_rule_describe(const struct policy_rule *r, char *buf, size_t len)
{
	if (r == NULL)
		snprintf(buf, len, "no rule matches");
	else
		snprintf(buf, len, "%s:%u:%u %s %s: %s", r->file, r->line,
		    r->column, r->action == POLICY_ALLOW ? "allow" : "deny",
		    r->kind == POLICY_RULE_CIDR ? "cidr" : "host", r->pattern);
	return buf;
}

size_t
policy_allow_range_count(const struct policy *p)
{
	return p->nallow_ranges;
}

void
policy_allow_range_at(const struct policy *p, size_t i, struct policy_addr *net,
    unsigned *prefix)
{
	*net = p->allow_ranges[i].net;
	*prefix = p->allow_ranges[i].prefix;
}

size_t
policy_dns_server_count(const struct policy *p)
{
	return p->ndns_servers;
}

const char *
policy_dns_server_at(const struct policy *p, size_t i)
{
	return i < p->ndns_servers ? p->dns_servers[i] : NULL;
}

unsigned
policy_dns_min_ttl(const struct policy *p)
{
	return p->dns_min_ttl;
}

unsigned
policy_dns_max_ttl(const struct policy *p)
{
	return p->dns_max_ttl;
}

const char *
policy_file(const struct policy *p)
{
	return p->file;
}

