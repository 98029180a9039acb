/*
 * YAML to a small tree, with libyaml's event parser.  The tree is what the
 * schema walks; it keeps every node's line and column for the errors.
 * Bounded: YAML_MAX_DEPTH levels, YAML_MAX_NODES nodes, one document.
 * Anchors and aliases are refused outright: a policy has no use for them,
 * and an alias "billion laughs" is the classic way to make a small file
 * expand into a huge tree.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "load-int.h"

static struct ynode *
ynode_new(struct ctx *c, enum ytype t, const yaml_mark_t *m)
{
	struct ynode	*n;

	if (++c->nodes > YAML_MAX_NODES) {
		policy_error_at(c, (unsigned)m->line + 1, (unsigned)m->column + 1, NULL,
		    "too many YAML nodes");
		return NULL;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		policy_error_at(c, 0, 0, NULL, "out of memory");
		return NULL;
	}
	n->type = t;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	return n;
}

static int
ynode_add(struct ctx *c, struct ynode *parent, struct ynode *kid)
{
	if (parent->nkids == parent->cap) {
		size_t		 ncap = parent->cap ? parent->cap * 2 : 4;
		struct ynode	**k = reallocarray(parent->kids, ncap,
		    sizeof(*k));

		if (k == NULL) {
			policy_error_at(c, 0, 0, NULL, "out of memory");
			return -1;
		}
		parent->kids = k;
		parent->cap = ncap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

void
policy_ynode_free(struct ynode *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		policy_ynode_free(n->kids[i]);
	free(n->kids);
	free(n->val);
	free(n);
}

static int
has_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.anchor != NULL;
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.anchor != NULL;
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.anchor != NULL;
	default:
		return 0;
	}
}

/* Returns the document's root (NULL for an empty one); -1 in *failed on error. */
struct ynode *
policy_yaml_tree(struct ctx *c, const char *buf, size_t len, int *failed)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	struct ynode	*stack[YAML_MAX_DEPTH + 1], *root = NULL, *n;
	int		 depth = 0, done = 0, docs = 0;

	*failed = 0;
	if (!yaml_parser_initialize(&parser)) {
		policy_error_at(c, 0, 0, NULL, "out of memory");
		*failed = 1;
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			policy_error_at(c, (unsigned)parser.problem_mark.line + 1,
			    (unsigned)parser.problem_mark.column + 1,
			    "check indentation and quoting; quote values "
			    "that start with * or contain ': '",
			    "YAML syntax: %s%s%s",
			    parser.problem ? parser.problem : "error",
			    parser.context ? " " : "",
			    parser.context ? parser.context : "");
			*failed = 1;
			break;
		}
		if (ev.type == YAML_ALIAS_EVENT || has_anchor(&ev)) {
			policy_error_at(c, (unsigned)ev.start_mark.line + 1,
			    (unsigned)ev.start_mark.column + 1,
			    "write the value out in full",
			    "YAML anchors and aliases are not allowed");
			*failed = 1;
			yaml_event_delete(&ev);
			break;
		}
		n = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				policy_error_at(c, (unsigned)ev.start_mark.line + 1,
				    (unsigned)ev.start_mark.column + 1,
				    "remove the second '---' and what follows",
				    "a policy file holds one YAML document");
				*failed = 1;
				done = 1;
			}
			break;
		case YAML_SCALAR_EVENT:
			if ((n = ynode_new(c, Y_SCALAR, &ev.start_mark)) == NULL)
				break;
			n->len = ev.data.scalar.length;
			if ((n->val = malloc(n->len + 1)) == NULL) {
				free(n);
				n = NULL;
				policy_error_at(c, 0, 0, NULL, "out of memory");
				break;
			}
			memcpy(n->val, ev.data.scalar.value, n->len);
			n->val[n->len] = '\0';
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			n = ynode_new(c, ev.type == YAML_SEQUENCE_START_EVENT ?
			    Y_SEQ : Y_MAP, &ev.start_mark);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		if ((ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) && n == NULL)
			*failed = 1;
		if (n != NULL) {
			if (depth == 0) {
				root = n;
			} else if (ynode_add(c, stack[depth - 1], n) == -1) {
				policy_ynode_free(n);
				*failed = 1;
			}
			if (!*failed && n->type != Y_SCALAR) {
				if (depth == YAML_MAX_DEPTH) {
					ERR(c, n, NULL, "YAML nested deeper "
					    "than %d levels", YAML_MAX_DEPTH);
					*failed = 1;
				} else
					stack[depth++] = n;
			}
		}
		yaml_event_delete(&ev);
		if (*failed)
			break;
	}
	yaml_parser_delete(&parser);
	return root;
}
