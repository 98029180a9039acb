/*
 * A policy file's YAML to the tree the schema walks (common/yamltree.c,
 * bounded: YAML_MAX_DEPTH levels, YAML_MAX_NODES nodes, one document, no
 * anchors or aliases), its first problem reported through the loading
 * context with the line and column and what to write instead.
 */
#include "config.h"

#include "load-int.h"

/* Returns the document's root (NULL for an empty one); 1 in *failed on error. */
struct ynode *
policy_yaml_tree(struct ctx *c, const char *buf, size_t len, int *failed)
{
	struct ytree_error	 e;
	struct ynode		*root;

	root = ytree_parse(buf, len, YAML_MAX_NODES, YAML_MAX_DEPTH, 0, &e);
	*failed = e.fault != YTREE_OK;
	switch (e.fault) {
	case YTREE_OK:
	case YTREE_NUL:		/* not asked for: a value may hold NULs */
		break;
	case YTREE_NOMEM:
		policy_error_at(c, 0, 0, NULL, "out of memory");
		break;
	case YTREE_SYNTAX:
		policy_error_at(c, e.line, e.col, "check indentation and "
		    "quoting; quote values that start with * or contain ': '",
		    "YAML syntax: %s%s%s", e.problem, e.context[0] != '\0' ?
		    " " : "", e.context);
		break;
	case YTREE_ALIAS:
		policy_error_at(c, e.line, e.col, "write the value out in full",
		    "YAML anchors and aliases are not allowed");
		break;
	case YTREE_DOCS:
		policy_error_at(c, e.line, e.col, "remove the second '---' and "
		    "what follows", "a policy file holds one YAML document");
		break;
	case YTREE_NODES:
		policy_error_at(c, e.line, e.col, NULL, "too many YAML nodes");
		break;
	case YTREE_DEPTH:
		policy_error_at(c, e.line, e.col, NULL, "YAML nested deeper "
		    "than %d levels", YAML_MAX_DEPTH);
		break;
	}
	return root;
}
