/*
 * A policy as YAML again, with rules added (polyaml.c): the merges of an
 * agent's hosts and of the lockfiles' share it.
 */
#ifndef AISB_POLICYTOOLS_POLYAML_H
#define AISB_POLICYTOOLS_POLYAML_H

#include <stddef.h>
#include <stdio.h>

struct policy;
/*
 * base as policy YAML from its "allow:" on, with the entries
 * extra writes (it returns how many) after base's allow rules; s as a
 * double-quoted YAML string.
 */
void	launch_policy_yaml(FILE *, const struct policy *base,
	    size_t (*extra)(FILE *, void *), void *ctx);
void	launch_yaml_str(FILE *, const char *s);

#endif
