/*
 * YAML to a bounded tree (yamltree.h), one libyaml event at a time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yamltree.h"

struct build {
	struct ytree_error	*err;
	unsigned		 nodes, max_nodes;
};

static void
fault(struct build *b, enum ytree_fault f, const yaml_mark_t *m)
{
	if (b->err->fault != YTREE_OK)
		return;	/* the first problem is the one reported */
	b->err->fault = f;
	b->err->line = m != NULL ? (unsigned)m->line + 1 : 0;
	b->err->col = m != NULL ? (unsigned)m->column + 1 : 0;
}

static struct ynode *
node_new(struct build *b, enum ytype t, const yaml_mark_t *m)
{
	struct ynode	*n;

	if (++b->nodes > b->max_nodes) {
		fault(b, YTREE_NODES, m);
		return NULL;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		fault(b, YTREE_NOMEM, NULL);
		return NULL;
	}
	n->type = t;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	return n;
}

static int
node_add(struct build *b, struct ynode *parent, struct ynode *kid)
{
	if (parent->nkids == parent->cap) {
		size_t		 ncap = parent->cap ? parent->cap * 2 : 4;
		struct ynode	**k = reallocarray(parent->kids, ncap,
		    sizeof(*k));

		if (k == NULL) {
			fault(b, YTREE_NOMEM, NULL);
			return -1;
		}
		parent->kids = k;
		parent->cap = ncap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

void
ytree_free(struct ynode *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		ytree_free(n->kids[i]);
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

/* A scalar event's node, or NULL after a fault. */
static struct ynode *
scalar(struct build *b, const yaml_event_t *ev, int flags)
{
	struct ynode	*n;

	if ((n = node_new(b, Y_SCALAR, &ev->start_mark)) == NULL)
		return NULL;
	if ((flags & YTREE_NO_NUL) && memchr(ev->data.scalar.value, '\0',
	    ev->data.scalar.length) != NULL) {
		fault(b, YTREE_NUL, &ev->start_mark);
		free(n);
		return NULL;
	}
	n->len = ev->data.scalar.length;
	if ((n->val = malloc(n->len + 1)) == NULL) {
		fault(b, YTREE_NOMEM, NULL);
		free(n);
		return NULL;
	}
	memcpy(n->val, ev->data.scalar.value, n->len);
	n->val[n->len] = '\0';
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	return n;
}

/*
 * One event into the tree: 1 at the stream's end, 0 to go on, -1 after
 * a fault.  stack[0..*depth-1] are the open collections.
 */
static int
event(struct build *b, const yaml_event_t *ev, int flags,
    struct ynode **stack, int *depth, unsigned max_depth, int *docs,
    struct ynode **root)
{
	struct ynode	*n = NULL;

	if (ev->type == YAML_ALIAS_EVENT || has_anchor(ev)) {
		fault(b, YTREE_ALIAS, &ev->start_mark);
		return -1;
	}
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1) {
			fault(b, YTREE_DOCS, &ev->start_mark);
			return -1;
		}
		return 0;
	case YAML_SCALAR_EVENT:
		n = scalar(b, ev, flags);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if ((unsigned)*depth >= max_depth) {
			fault(b, YTREE_DEPTH, &ev->start_mark);
			return -1;
		}
		n = node_new(b, ev->type == YAML_SEQUENCE_START_EVENT ? Y_SEQ :
		    Y_MAP, &ev->start_mark);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		(*depth)--;
		return 0;
	default:
		return 0;
	}
	if (n == NULL)
		return -1;
	if (*depth == 0)
		*root = n;
	else if (node_add(b, stack[*depth - 1], n) == -1) {
		ytree_free(n);
		return -1;
	}
	if (n->type != Y_SCALAR)
		stack[(*depth)++] = n;
	return 0;
}

struct ynode *
ytree_parse(const char *buf, size_t len, unsigned max_nodes,
    unsigned max_depth, int flags, struct ytree_error *err)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	struct ynode	*stack[YTREE_DEPTH_MAX], *root = NULL;
	struct build	 b = { err, 0, max_nodes };
	int		 depth = 0, docs = 0, rc = 0;

	memset(err, 0, sizeof(*err));
	if (max_depth > YTREE_DEPTH_MAX)
		max_depth = YTREE_DEPTH_MAX;
	if (!yaml_parser_initialize(&parser)) {
		fault(&b, YTREE_NOMEM, NULL);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (rc == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			fault(&b, YTREE_SYNTAX, &parser.problem_mark);
			snprintf(err->problem, sizeof(err->problem), "%s",
			    parser.problem != NULL ? parser.problem : "error");
			snprintf(err->context, sizeof(err->context), "%s",
			    parser.context != NULL ? parser.context : "");
			rc = -1;
			break;
		}
		rc = event(&b, &ev, flags, stack, &depth, max_depth, &docs,
		    &root);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (rc == -1) {
		ytree_free(root);
		return NULL;
	}
	return root;
}
