/*
 * A policy as YAML again, with rules added (polyaml.c): the merges of an
 * agent's hosts and of the lockfiles' share it.
 */
#ifndef AISB_POLICYTOOLS_POLYAML_H
#define AISB_POLICYTOOLS_POLYAML_H

#include <sys/types.h>

#include <stddef.h>
#include <stdio.h>

#include "policy.h"

/*
 * Secrets added to the rules of one name (an agent recipe's, for the
 * --secret entries of the session): the gate inspects that host and adds
 * them (docs/policy.md, "Inspected hosts").
 */
struct launch_yaml_secret {
	const char		*host;		/* an exact name */
	struct policy_secret_info s;
};

/*
 * base as policy YAML from its "allow:" on, with the entries extra
 * writes (it returns how many, -1 when out of memory) after base's
 * allow rules.  Every rule keeps its inspect:, requests: and secrets:,
 * and gets add's secrets for its name (launch_yaml_inspect).  0, or -1
 * when out of memory (the text is then not to be used).
 */
int	launch_policy_yaml(FILE *, const struct policy *base,
	    const struct launch_yaml_secret *add, size_t nadd,
	    ssize_t (*extra)(FILE *, void *), void *ctx);
/*
 * The inspection lines of a rule for host, which extra writes: those of
 * base's allow rule of that very name, if any (a name written twice must
 * say the same), with add's secrets for host after base's own (a secret
 * base names already stays as base says it), and "inspect: true" when
 * there is a secret to add.  0, or -1 when out of memory.
 */
int	launch_yaml_inspect(FILE *, const struct policy *base,
	    const char *host, const struct launch_yaml_secret *add,
	    size_t nadd);
/* s as a double-quoted YAML string. */
void	launch_yaml_str(FILE *, const char *s);

#endif
