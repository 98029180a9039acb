/*
 * What the three stages of loading share (yaml.c, schema.c, compile.c,
 * load.c): the YAML tree, the loading context and its error collector.
 * Only the files of policy/ include this.
 */
#ifndef AISB_POLICY_LOAD_INT_H
#define AISB_POLICY_LOAD_INT_H

#include <stddef.h>

#include "policy-int.h"
#include "yamltree.h"	/* struct ynode (common/) */

#define YAML_MAX_DEPTH		16	/* the schema needs 5 */
#define YAML_MAX_NODES		(1u << 20)
#define POLICY_MAX_PORT_ITEMS	1024	/* entries in one ports: list */

struct ctx {
	struct policy_errors	*errs;
	const char		*file;
	struct policy_rule	**rules;
	size_t			 nrules, caprules;
	struct policy		*p;
	pcre2_compile_context	*cctx;
};

/* errors.c: one error at line:col (0:0 for none), with an optional hint. */
void	 policy_error_at(struct ctx *c, unsigned line, unsigned col,
	    const char *hint, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
#define ERR(c, n, hint, ...) \
	policy_error_at(c, (n)->line, (n)->col, hint, __VA_ARGS__)

/*
 * yaml.c: the document's tree (NULL for an empty one); *failed is set on
 * a syntax error, an alias or anchor, a second document, too deep or too
 * many nodes, each reported through c.  Free it with ytree_free().
 */
struct ynode	*policy_yaml_tree(struct ctx *c, const char *buf, size_t len,
		    int *failed);

/* schema.c: checks the tree against schema version 1, fills c->p and c->rules. */
void	 policy_schema_read(struct ctx *c, const struct ynode *root);
/* schema.c's helpers, for inspect.c too */
const char *policy_ytype_name(const struct ynode *);
int	 policy_ynull(const struct ynode *);
int	 policy_map_keys(struct ctx *c, const struct ynode *map,
	    const char *const *keys, size_t nkeys, const struct ynode **vals,
	    const char *where);

/*
 * inspect.c: a rule's inspect:, requests: and secrets: (any may be NULL),
 * checked against the rest of the rule r (its action and kind are set).
 * 0, or -1 with the errors reported through c.
 */
int	 policy_inspect_read(struct ctx *c, struct policy_rule *r,
	    const struct ynode *inspect, const struct ynode *requests,
	    const struct ynode *secrets);

/* compile.c */
size_t	 policy_ports_normalize(struct policy_port_range *, size_t n);
void	 policy_rule_free(struct policy_rule *);
int	 policy_compile(struct ctx *c);	/* canonical order, indexes, dump */

#endif
