/*
 * A session's policy written out as YAML with hosts added (agent.c: an
 * agent recipe's; derive_lock.c: the workspace's lockfiles'): the base's
 * allow rules, the added ones, then the base's deny rules, allow_ranges
 * and dns, each rule under a comment saying where it was written, with
 * its inspection (and the secrets an agent adds for the session).  The
 * text is loaded again by the caller, so what it says is checked as any
 * policy file is.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* base's allow rule of that kind and pattern, or NULL */
static const struct policy_rule *
base_rule(const struct policy *base, enum policy_rule_kind kind,
    const char *pattern)
{
	struct policy_rule_info	 ri;
	size_t			 i;

	for (i = 0; i < policy_rule_count(base); i++) {
		policy_rule_info(policy_rule_at(base, i), &ri);
		if (ri.action == POLICY_ALLOW && ri.kind == kind &&
		    strcmp(ri.pattern, pattern) == 0)
			return policy_rule_at(base, i);
	}
	return NULL;
}

/* 1 when r (may be NULL) names a secret of that name */
static int
has_secret(const struct policy_rule *r, const char *name)
{
	struct policy_secret_info	 si;
	size_t				 i;

	for (i = 0; i < policy_rule_secret_count(r); i++) {
		policy_rule_secret(r, i, &si);
		if (strcmp(si.name, name) == 0)
			return 1;
	}
	return 0;
}

static void
secret(FILE *f, const struct policy_secret_info *s)
{
	fprintf(f, "      - name: ");
	launch_yaml_str(f, s->name);
	fprintf(f, "\n");
	if (s->header != NULL) {
		fprintf(f, "        header: ");
		launch_yaml_str(f, s->header);
		fprintf(f, "\n");
	}
	if (s->mode == POLICY_SECRET_BEARER || s->mode == POLICY_SECRET_BASIC)
		fprintf(f, "        scheme: %s\n", s->mode ==
		    POLICY_SECRET_BEARER ? "bearer" : "basic");
	if (s->user != NULL) {
		fprintf(f, "        user: ");
		launch_yaml_str(f, s->user);
		fprintf(f, "\n");
	}
}

/* r's inspection (r may be NULL), with add's secrets for host (may be NULL) */
static int
inspection(FILE *f, const struct policy_rule *r, const char *host,
    const struct launch_yaml_secret *add, size_t nadd)
{
	char	*own = r != NULL ? policy_rule_inspect_yaml(r) : strdup("");
	size_t	 i, n = 0;

	if (own == NULL)
		return -1;
	for (i = 0; host != NULL && i < nadd; i++)
		n += strcmp(add[i].host, host) == 0 &&
		    !has_secret(r, add[i].s.name);
	fputs(own[0] == '\0' && n > 0 ? "    inspect: true\n" : own, f);
	free(own);
	if (n > 0 && policy_rule_secret_count(r) == 0)
		fprintf(f, "    secrets:\n");
	for (i = 0; n > 0 && i < nadd; i++)
		if (strcmp(add[i].host, host) == 0 &&
		    !has_secret(r, add[i].s.name))
			secret(f, &add[i].s);
	return 0;
}

int
launch_yaml_inspect(FILE *f, const struct policy *base, const char *host,
    const struct launch_yaml_secret *add, size_t nadd)
{
	return inspection(f, base_rule(base, POLICY_RULE_EXACT, host), host,
	    add, nadd);
}

static int
rule(FILE *f, const struct policy_rule *r, const struct launch_yaml_secret *add,
    size_t nadd)
{
	struct policy_rule_info	 ri;
	size_t			 i;

	policy_rule_info(r, &ri);
	fprintf(f, "  # %s:%u:%u\n  - %s: ", ri.file != NULL ? ri.file :
	    "?", ri.line, ri.column, ri.kind == POLICY_RULE_CIDR ? "cidr" :
	    "host");
	launch_yaml_str(f, ri.pattern);	/* "*.x", "~re": as written */
	fprintf(f, "\n    ports: [");
	for (i = 0; i < ri.nports; i++) {
		if (ri.ports[i].lo == ri.ports[i].hi)
			fprintf(f, "%s%u", i ? ", " : "", ri.ports[i].lo);
		else
			fprintf(f, "%s\"%u-%u\"", i ? ", " : "",
			    ri.ports[i].lo, ri.ports[i].hi);
	}
	fprintf(f, "]\n");
	return inspection(f, r, ri.kind == POLICY_RULE_EXACT ? ri.pattern :
	    NULL, add, nadd);
}

int
launch_policy_yaml(FILE *f, const struct policy *base,
    const struct launch_yaml_secret *add, size_t nadd,
    ssize_t (*extra)(FILE *, void *), void *ctx)
{
	struct policy_rule_info	 ri;
	struct policy_addr	 net;
	char			 addr[64];
	size_t			 i, n = policy_rule_count(base), rules = 0;
	ssize_t			 k;
	unsigned		 prefix;
	int			 section = 0;

	fprintf(f, "allow:\n");
	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(base, i), &ri);
		if (ri.action != POLICY_ALLOW)
			continue;
		if (rule(f, policy_rule_at(base, i), add, nadd) == -1)
			return -1;
		rules++;
	}
	if ((k = extra(f, ctx)) == -1)
		return -1;
	rules += (size_t)k;
	if (rules == 0)
		fprintf(f, "  []\n");
	for (i = 0; i < n; i++) {
		policy_rule_info(policy_rule_at(base, i), &ri);
		if (ri.action != POLICY_DENY)
			continue;
		if (!section)
			fprintf(f, "deny:\n");
		section = 1;
		if (rule(f, policy_rule_at(base, i), NULL, 0) == -1)
			return -1;
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
	return 0;
}
