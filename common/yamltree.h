/*
 * YAML text to a small tree, with libyaml's event parser: what the policy
 * library (policy/yaml.c) and the agent recipes (launcher/image/agent.c)
 * read their files with.  Every node keeps its line and column for the
 * errors.  Bounded: max_depth nested collections, max_nodes nodes, one
 * document.  Anchors and aliases are refused outright: neither format
 * has a use for them, and an alias "billion laughs" is the classic way
 * to make a small file expand into a huge tree.
 */
#ifndef AISB_COMMON_YAMLTREE_H
#define AISB_COMMON_YAMLTREE_H

#include <stddef.h>

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype	  type;
	unsigned	  line, col;	/* 1-based */
	int		  plain;	/* scalar written without quotes */
	char		 *val;		/* scalar, NUL-terminated (NULs
					   inside but with YTREE_NO_NUL) */
	size_t		  len;
	struct ynode	**kids;		/* seq: items; map: key, value */
	size_t		  nkids, cap;
};

/* Why a parse failed, and where (line 0: nowhere in the text). */
enum ytree_fault {
	YTREE_OK = 0,
	YTREE_NOMEM,
	YTREE_SYNTAX,		/* problem, context: libyaml's words */
	YTREE_ALIAS,		/* an anchor or an alias */
	YTREE_DOCS,		/* a second document */
	YTREE_NODES,		/* more than max_nodes */
	YTREE_DEPTH,		/* deeper than max_depth */
	YTREE_NUL,		/* a NUL byte in a scalar (YTREE_NO_NUL) */
};

struct ytree_error {
	enum ytree_fault fault;
	unsigned	 line, col;
	char		 problem[128], context[128];
};

#define YTREE_NO_NUL	0x01	/* a NUL byte in a scalar is an error */
#define YTREE_DEPTH_MAX	64	/* the largest max_depth */

/*
 * The document's root, or NULL: for an empty document (err->fault is
 * YTREE_OK) or after the first problem, which is in err (nothing is
 * kept then).  max_depth is at most YTREE_DEPTH_MAX.
 */
struct ynode	*ytree_parse(const char *buf, size_t len,
		    unsigned max_nodes, unsigned max_depth, int flags,
		    struct ytree_error *err);
/* The tree and everything under it; NULL does nothing. */
void		 ytree_free(struct ynode *);

#endif
