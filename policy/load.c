/*
 * Loading: read the file (bounded), parse YAML with libyaml into a small
 * tree (no aliases, bounded depth), check it against schema version 1,
 * compile it into an immutable struct policy in canonical order.
 *
 * Every problem is reported with file:line:column and, where one exists,
 * what to write instead.  Loading goes on after an error so that one run
 * reports as many problems as it can (up to POLICY_MAX_ERRORS).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "policy-int.h"

#define YAML_MAX_DEPTH		16	/* the schema needs 5 */
#define YAML_MAX_NODES		(1u << 20)
#define POLICY_MAX_PORT_ITEMS	1024	/* entries in one ports: list */

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype	  type;
	unsigned	  line, col;
	int		  plain;	/* scalar written without quotes */
	char		 *val;		/* scalar, NUL-terminated (may hold NULs) */
	size_t		  len;
	struct ynode	**kids;		/* seq: items; map: key, value, key, value... */
	size_t		  nkids, cap;
};

struct ctx {
	struct policy_errors	*errs;
	const char		*file;
	unsigned		 nodes;
	struct policy_rule	**rules;
	size_t			 nrules, caprules;
	struct policy		*p;
	pcre2_compile_context	*cctx;
};

static void ynode_free(struct ynode *);

static void __attribute__((format(printf, 5, 6)))
error_at(struct ctx *c, unsigned line, unsigned col, const char *hint,
    const char *fmt, ...)
{
	struct policy_error	*e;
	va_list			 ap;

	if (c->errs->count >= POLICY_MAX_ERRORS) {
		c->errs->dropped++;
		return;
	}
	e = &c->errs->err[c->errs->count++];
	e->line = line;
	e->column = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	snprintf(e->hint, sizeof(e->hint), "%s", hint != NULL ? hint : "");
}

#define ERR(c, n, hint, ...)	error_at(c, (n)->line, (n)->col, hint, __VA_ARGS__)

size_t
policy_errors_format(const struct policy_errors *errs, char *buf, size_t len)
{
	size_t	 off = 0;
	unsigned i;
	int	 n;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; i < errs->count && off < len; i++) {
		const struct policy_error *e = &errs->err[i];

		if (e->line > 0)
			n = snprintf(buf + off, len - off, "%s:%u:%u: error: %s\n",
			    errs->file, e->line, e->column, e->msg);
		else
			n = snprintf(buf + off, len - off, "%s: error: %s\n",
			    errs->file, e->msg);
		if (n < 0)
			break;
		off += (size_t)n;
		if (e->hint[0] != '\0' && off < len) {
			n = snprintf(buf + off, len - off, "  hint: %s\n", e->hint);
			if (n < 0)
				break;
			off += (size_t)n;
		}
	}
	if (errs->dropped > 0 && off < len) {
		n = snprintf(buf + off, len - off, "%s: %u more errors not shown\n",
		    errs->file, errs->dropped);
		if (n > 0)
			off += (size_t)n;
	}
	return off < len ? off : len;
}

/* ---- YAML to tree ------------------------------------------------------ */

static struct ynode *
ynode_new(struct ctx *c, enum ytype t, const yaml_mark_t *m)
{
	struct ynode	*n;

	if (++c->nodes > YAML_MAX_NODES) {
		error_at(c, (unsigned)m->line + 1, (unsigned)m->column + 1, NULL,
		    "too many YAML nodes");
		return NULL;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		error_at(c, 0, 0, NULL, "out of memory");
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
			error_at(c, 0, 0, NULL, "out of memory");
			return -1;
		}
		parent->kids = k;
		parent->cap = ncap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

static void
ynode_free(struct ynode *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
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
static struct ynode *
yaml_to_tree(struct ctx *c, const char *buf, size_t len, int *failed)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	struct ynode	*stack[YAML_MAX_DEPTH + 1], *root = NULL, *n;
	int		 depth = 0, done = 0, docs = 0;

	*failed = 0;
	if (!yaml_parser_initialize(&parser)) {
		error_at(c, 0, 0, NULL, "out of memory");
		*failed = 1;
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			error_at(c, (unsigned)parser.problem_mark.line + 1,
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
			error_at(c, (unsigned)ev.start_mark.line + 1,
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
				error_at(c, (unsigned)ev.start_mark.line + 1,
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
				error_at(c, 0, 0, NULL, "out of memory");
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
				ynode_free(n);
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

/* ---- schema ------------------------------------------------------------ */

static const char *
type_name(const struct ynode *n)
{
	switch (n->type) {
	case Y_SCALAR:
		return "a scalar";
	case Y_SEQ:
		return "a list";
	case Y_MAP:
		return "a mapping";
	}
	return "?";
}

/* An empty plain scalar is YAML's null: "deny:" with nothing after it. */
static int
is_null(const struct ynode *n)
{
	return n->type == Y_SCALAR && n->plain &&
	    (n->len == 0 || strcmp(n->val, "~") == 0 ||
	    strcmp(n->val, "null") == 0);
}

static unsigned
edit_distance(const char *a, const char *b)
{
	size_t		 la = strlen(a), lb = strlen(b), i, j;
	unsigned	 row[32], prev, tmp;

	if (la >= 32 || lb >= 32)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/*
 * Checks a mapping's keys against a list; reports unknown and duplicate
 * keys.  Fills vals[i] with the value for keys[i] (or NULL).
 */
static int
map_keys(struct ctx *c, const struct ynode *map, const char *const *keys,
    size_t nkeys, const struct ynode **vals, const char *where)
{
	char	 hint[256];
	size_t	 i, k, off;
	int	 ok = 1;

	for (k = 0; k < nkeys; k++)
		vals[k] = NULL;
	for (i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *key = map->kids[i];

		if (key->type != Y_SCALAR) {
			ERR(c, key, NULL, "%s: keys must be plain words", where);
			ok = 0;
			continue;
		}
		for (k = 0; k < nkeys; k++)
			if (strcmp(key->val, keys[k]) == 0)
				break;
		if (k == nkeys) {
			const char *near = NULL;

			for (k = 0; k < nkeys; k++)
				if (edit_distance(key->val, keys[k]) <= 2)
					near = keys[k];
			if (near != NULL)
				snprintf(hint, sizeof(hint), "did you mean '%s'?",
				    near);
			else {
				off = (size_t)snprintf(hint, sizeof(hint),
				    "known keys:");
				for (k = 0; k < nkeys && off < sizeof(hint); k++)
					off += (size_t)snprintf(hint + off,
					    sizeof(hint) - off, " %s", keys[k]);
			}
			ERR(c, key, hint, "unknown key '%.64s' in %s",
			    key->val, where);
			ok = 0;
			continue;
		}
		if (vals[k] != NULL) {
			ERR(c, key, "keep one of them", "duplicate key '%s' "
			    "in %s (first at line %u)", keys[k], where,
			    vals[k]->line);
			ok = 0;
			continue;
		}
		vals[k] = map->kids[i + 1];
	}
	return ok ? 0 : -1;
}

static int
parse_uint(const struct ynode *n, unsigned long max, unsigned long *out)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (n->type != Y_SCALAR || n->len == 0 || n->len > 10)
		return -1;
	for (i = 0; i < n->len; i++) {
		if (n->val[i] < '0' || n->val[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(n->val[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct policy_port_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Sorts and coalesces in place; adjacent ranges merge (80, 81 -> 80-81). */
static size_t
ports_normalize(struct policy_port_range *r, size_t n)
{
	size_t	 i, out = 0;

	if (n == 0)
		return 0;
	qsort(r, n, sizeof(*r), range_cmp);
	for (i = 1; i < n; i++) {
		if ((unsigned)r[i].lo <= (unsigned)r[out].hi + 1) {
			if (r[i].hi > r[out].hi)
				r[out].hi = r[i].hi;
		} else
			r[++out] = r[i];
	}
	return out + 1;
}

static int
parse_one_port(const char *s, size_t len, uint16_t *out)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (len == 0 || len > 8)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int
parse_ports(struct ctx *c, const struct ynode *n, struct policy_rule *r)
{
	const char	*hint = "write ports: [443, 8443, \"1000-2000\"] "
	    "with ports from 1 to 65535";
	size_t		 i;
	int		 ok = 1;

	if (n->type != Y_SEQ) {
		ERR(c, n, hint, "ports must be a list, not %s", type_name(n));
		return -1;
	}
	if (n->nkids == 0) {
		ERR(c, n, "leave ports out for the default, or list some",
		    "empty ports list");
		return -1;
	}
	if (n->nkids > POLICY_MAX_PORT_ITEMS) {
		ERR(c, n, "use ranges such as \"1000-2000\"",
		    "more than %d entries in ports", POLICY_MAX_PORT_ITEMS);
		return -1;
	}
	if ((r->ports = calloc(n->nkids, sizeof(*r->ports))) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	for (i = 0; i < n->nkids; i++) {
		const struct ynode	*p = n->kids[i];
		const char		*dash;
		uint16_t		 lo, hi;

		if (p->type != Y_SCALAR) {
			ERR(c, p, hint, "a port must be a number or a range, "
			    "not %s", type_name(p));
			ok = 0;
			continue;
		}
		dash = memchr(p->val, '-', p->len);
		if (dash == NULL) {
			if (parse_one_port(p->val, p->len, &lo) == -1) {
				ERR(c, p, hint, "invalid port '%.32s'", p->val);
				ok = 0;
				continue;
			}
			hi = lo;
		} else if (parse_one_port(p->val, (size_t)(dash - p->val),
		    &lo) == -1 || parse_one_port(dash + 1,
		    p->len - (size_t)(dash - p->val) - 1, &hi) == -1 || lo > hi) {
			ERR(c, p, hint, "invalid port range '%.32s'", p->val);
			ok = 0;
			continue;
		}
		r->ports[r->nports].lo = lo;
		r->ports[r->nports].hi = hi;
		r->nports++;
	}
	r->nports = ports_normalize(r->ports, r->nports);
	return ok ? 0 : -1;
}

static void
rule_free(struct policy_rule *r)
{
	if (r == NULL)
		return;
	pcre2_code_free(r->re);
	free(r->re_key);
	free(r->pattern);
	free(r->ports);
	free(r);
}

static int
compile_regex(struct ctx *c, const struct ynode *n, struct policy_rule *r)
{
	PCRE2_UCHAR	 msg[160];
	PCRE2_SIZE	 off;
	const char	*re = r->pattern + 1;
	size_t		 len = r->patlen - 1;
	int		 code;

	size_t		 i;

	if (len == 0 || len > POLICY_MAX_REGEX) {
		ERR(c, n, NULL, "regular expression must be 1 to %d bytes",
		    POLICY_MAX_REGEX);
		return -1;
	}
	/* Names are printable ASCII; anything else could never match. */
	for (i = 0; i < len; i++)
		if ((unsigned char)re[i] < 0x20 || (unsigned char)re[i] >= 0x7f) {
			ERR(c, n, "host names are ASCII: write the punycode "
			    "(xn--) form", "non-ASCII or control byte in "
			    "regular expression at offset %zu", i);
			return -1;
		}
	r->re = pcre2_compile((PCRE2_SPTR)re, len,
	    PCRE2_CASELESS | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF |
	    PCRE2_NEVER_BACKSLASH_C, &code, &off, c->cctx);
	if (r->re == NULL) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		error_at(c, n->line, n->col, "see pcre2pattern(3); escape "
		    "dots as \\\\. inside double quotes",
		    "regular expression does not compile at offset %zu: %s",
		    (size_t)off, (char *)msg);
		return -1;
	}
	/* Without JIT (no executable memory) pcre2_match interprets: slower, same result. */
	(void)pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);
	(void)pcre2_pattern_info(r->re, PCRE2_INFO_MINLENGTH, &r->re_minlen);
	if (policy_re_index_key(r) == -1) {
		ERR(c, n, NULL, "out of memory");
		return -1;
	}
	return 0;
}

/* host: value, one of name, "*.suffix" or "~regex". */
static int
parse_host(struct ctx *c, const struct ynode *n, struct policy_rule *r)
{
	char			 name[POLICY_MAX_NAME + 1], err[128];
	const char		*v = n->val, *hint;
	struct policy_addr	 a;
	size_t			 len = n->len, nlen, i;

	if (n->type != Y_SCALAR || len == 0) {
		ERR(c, n, "write host: example.com", "host must be a name");
		return -1;
	}
	if (memchr(v, '\0', len) != NULL) {
		ERR(c, n, NULL, "NUL byte in host");
		return -1;
	}
	if (v[0] == '~') {
		r->kind = POLICY_RULE_REGEX;
		if ((r->pattern = strdup(v)) == NULL)
			return -1;
		r->patlen = len;
		return compile_regex(c, n, r);
	}
	if (policy_parse_addr(v, len, &a) == 0 ||
	    (len > 2 && v[0] == '[' && v[len - 1] == ']')) {
		ERR(c, n, "IP destinations are written as cidr: 192.0.2.1/32",
		    "host must be a name, not an IP address");
		return -1;
	}
	if (memchr(v, '*', len) != NULL) {
		hint = "a wildcard is \"*.\" followed by a domain of two or "
		    "more labels: \"*.example.org\"";
		if (len < 3 || v[0] != '*' || v[1] != '.' ||
		    memchr(v + 1, '*', len - 1) != NULL) {
			ERR(c, n, hint, "invalid wildcard '%.64s'", v);
			return -1;
		}
		if (policy_normalize_name(v + 2, len - 2, name, &nlen, err,
		    sizeof(err)) == -1) {
			ERR(c, n, strstr(err, "punycode") ? NULL : hint,
			    "invalid wildcard '%.64s': %s", v, err);
			return -1;
		}
		if (memchr(name, '.', nlen) == NULL) {
			ERR(c, n, "name the domain: \"*.example.com\"",
			    "wildcard over a bare top-level label '%.64s'", v);
			return -1;
		}
		r->kind = POLICY_RULE_WILDCARD;
		if ((r->pattern = malloc(nlen + 3)) == NULL)
			return -1;
		r->pattern[0] = '*';
		r->pattern[1] = '.';
		memcpy(r->pattern + 2, name, nlen + 1);
		r->patlen = nlen + 2;
		return 0;
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] >= 0x80)
			break;
	if (policy_normalize_name(v, len, name, &nlen, err,
	    sizeof(err)) == -1) {
		ERR(c, n, i < len ? "write the punycode (xn--) form of the name" :
		    "a host name is labels of letters, digits, '-' and '_' "
		    "joined by dots", "invalid host '%.64s': %s", v, err);
		return -1;
	}
	r->kind = POLICY_RULE_EXACT;
	if ((r->pattern = strdup(name)) == NULL)
		return -1;
	r->patlen = nlen;
	return 0;
}

static int
add_rule(struct ctx *c, struct policy_rule *r)
{
	if (c->nrules == c->caprules) {
		size_t			 ncap = c->caprules ? c->caprules * 2 : 16;
		struct policy_rule	**nr = reallocarray(c->rules, ncap,
		    sizeof(*nr));

		if (nr == NULL)
			return -1;
		c->rules = nr;
		c->caprules = ncap;
	}
	c->rules[c->nrules++] = r;
	return 0;
}

static void
parse_rule(struct ctx *c, const struct ynode *n, enum policy_verdict action)
{
	static const char *const keys[] = { "host", "cidr", "ports" };
	const struct ynode	*v[3];
	struct policy_rule	*r;
	char			 err[160], hint[160];
	int			 ok = 1;

	if (n->type != Y_MAP) {
		ERR(c, n, "write - host: example.com", "a rule must be a "
		    "mapping with host: or cidr:, not %s", type_name(n));
		return;
	}
	if (map_keys(c, n, keys, 3, v, "a rule") == -1)
		return;
	if ((v[0] == NULL) == (v[1] == NULL)) {
		ERR(c, n, "split it into two rules", v[0] == NULL ?
		    "a rule needs host: or cidr:" :
		    "a rule has host: or cidr:, not both");
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		ERR(c, n, NULL, "out of memory");
		return;
	}
	r->action = action;
	r->file = c->p->file;
	r->line = n->line;
	r->column = n->col;
	if (v[0] != NULL)
		ok = parse_host(c, v[0], r) == 0;
	else if (v[1]->type != Y_SCALAR || policy_parse_cidr(v[1]->val,
	    v[1]->len, &r->net, &r->prefix, err, sizeof(err), hint,
	    sizeof(hint)) == -1) {
		if (v[1]->type != Y_SCALAR)
			ERR(c, v[1], "write cidr: 192.0.2.0/24",
			    "cidr must be a scalar");
		else
			ERR(c, v[1], hint, "%s", err);
		ok = 0;
	} else {
		char buf[64];

		r->kind = POLICY_RULE_CIDR;
		policy_addr_str(&r->net, buf, sizeof(buf));
		if (asprintf(&r->pattern, "%s/%u", buf, r->prefix) == -1) {
			r->pattern = NULL;
			ok = 0;
		} else
			r->patlen = strlen(r->pattern);
	}
	if (ok && v[2] != NULL)
		ok = parse_ports(c, v[2], r) == 0;
	else if (ok) {
		/* allow: the web ports; deny: everything */
		if ((r->ports = calloc(2, sizeof(*r->ports))) == NULL)
			ok = 0;
		else if (action == POLICY_ALLOW) {
			r->ports[0].lo = r->ports[0].hi = 80;
			r->ports[1].lo = r->ports[1].hi = 443;
			r->nports = 2;
		} else {
			r->ports[0].lo = 1;
			r->ports[0].hi = 65535;
			r->nports = 1;
		}
	}
	if (!ok || add_rule(c, r) == -1)
		rule_free(r);
}

static void
parse_rules(struct ctx *c, const struct ynode *n, enum policy_verdict action)
{
	size_t	 i;

	if (is_null(n))
		return;
	if (n->type != Y_SEQ) {
		ERR(c, n, "write a list: one '- host: name' per line",
		    "%s must be a list, not %s",
		    action == POLICY_ALLOW ? "allow" : "deny", type_name(n));
		return;
	}
	for (i = 0; i < n->nkids; i++)
		parse_rule(c, n->kids[i], action);
}

static void
parse_allow_ranges(struct ctx *c, const struct ynode *n)
{
	struct policy	*p = c->p;
	char		 err[160], hint[160];
	size_t		 i;

	if (is_null(n))
		return;
	if (n->type != Y_SEQ) {
		ERR(c, n, "write allow_ranges: [127.0.0.1/32]",
		    "allow_ranges must be a list, not %s", type_name(n));
		return;
	}
	if ((p->allow_ranges = calloc(n->nkids ? n->nkids : 1,
	    sizeof(*p->allow_ranges))) == NULL)
		return;
	for (i = 0; i < n->nkids; i++) {
		const struct ynode	*k = n->kids[i];
		struct policy_range	*r = &p->allow_ranges[p->nallow_ranges];

		if (k->type != Y_SCALAR) {
			ERR(c, k, "write 127.0.0.1/32", "a range must be a "
			    "CIDR, not %s", type_name(k));
			continue;
		}
		if (policy_parse_cidr(k->val, k->len, &r->net, &r->prefix,
		    err, sizeof(err), hint, sizeof(hint)) == -1) {
			ERR(c, k, hint, "%s", err);
			continue;
		}
		p->nallow_ranges++;
	}
}

static void
parse_dns(struct ctx *c, const struct ynode *n)
{
	static const char *const keys[] = { "servers", "min_ttl", "max_ttl" };
	const struct ynode	*v[3];
	struct policy		*p = c->p;
	struct policy_target	 t;
	unsigned long		 ttl;
	char			 err[128];
	size_t			 i;

	if (is_null(n))
		return;
	if (n->type != Y_MAP) {
		ERR(c, n, "write dns: { servers: [\"127.0.0.1:53\"] }",
		    "dns must be a mapping, not %s", type_name(n));
		return;
	}
	if (map_keys(c, n, keys, 3, v, "dns") == -1)
		return;
	if (v[0] != NULL && !is_null(v[0])) {
		if (v[0]->type != Y_SEQ) {
			ERR(c, v[0], "write servers: [\"127.0.0.1:53\"]",
			    "dns servers must be a list, not %s",
			    type_name(v[0]));
		} else if (v[0]->nkids > POLICY_MAX_DNS_SERVERS) {
			ERR(c, v[0], NULL, "more than %d dns servers",
			    POLICY_MAX_DNS_SERVERS);
		} else for (i = 0; i < v[0]->nkids; i++) {
			const struct ynode *s = v[0]->kids[i];

			/* a bare IPv6 address needs no brackets here */
			if (s->type == Y_SCALAR && policy_parse_addr(s->val,
			    s->len, &t.addr) == 0) {
				policy_addr_str(&t.addr, t.host, sizeof(t.host));
				t.port = 53;
			} else if (s->type != Y_SCALAR ||
			    policy_parse_target(s->val, s->len, 53, &t, err,
			    sizeof(err)) == -1 || !t.is_ip) {
				ERR(c, s, "write an address with an optional "
				    "port: \"192.0.2.53\", \"127.0.0.1:5353\", "
				    "\"[2001:db8::53]:53\"",
				    "invalid dns server '%.64s'",
				    s->type == Y_SCALAR ? s->val : "");
				continue;
			}
			if (asprintf(&p->dns_servers[p->ndns_servers],
			    t.addr.family == AF_INET6 ? "[%s]:%u" : "%s:%u",
			    t.host, t.port) == -1) {
				p->dns_servers[p->ndns_servers] = NULL;
				continue;
			}
			p->ndns_servers++;
		}
	}
	if (v[1] != NULL) {
		if (parse_uint(v[1], POLICY_TTL_LIMIT, &ttl) == -1)
			ERR(c, v[1], NULL, "min_ttl must be 0 to %d seconds",
			    POLICY_TTL_LIMIT);
		else
			p->dns_min_ttl = (unsigned)ttl;
	}
	if (v[2] != NULL) {
		if (parse_uint(v[2], POLICY_TTL_LIMIT, &ttl) == -1 || ttl == 0)
			ERR(c, v[2], NULL, "max_ttl must be 1 to %d seconds",
			    POLICY_TTL_LIMIT);
		else
			p->dns_max_ttl = (unsigned)ttl;
	}
	if (p->dns_min_ttl > p->dns_max_ttl)
		ERR(c, n, "raise max_ttl or lower min_ttl",
		    "dns min_ttl (%u) is above max_ttl (%u)",
		    p->dns_min_ttl, p->dns_max_ttl);
}

static void
parse_top(struct ctx *c, const struct ynode *root)
{
	static const char *const keys[] = {
		"version", "allow", "deny", "allow_ranges", "dns"
	};
	const struct ynode	*v[5];
	unsigned long		 version;

	if (root == NULL || is_null(root)) {
		error_at(c, 1, 1, "start the file with 'version: 1'",
		    "empty policy");
		return;
	}
	if (root->type != Y_MAP) {
		ERR(c, root, "start the file with 'version: 1'",
		    "a policy is a mapping, not %s", type_name(root));
		return;
	}
	if (map_keys(c, root, keys, 5, v, "the policy") == -1 && v[0] == NULL)
		return;
	if (v[0] == NULL)
		ERR(c, root, "add 'version: 1' at the top", "missing version");
	else if (parse_uint(v[0], 1000, &version) == -1 ||
	    version != POLICY_SCHEMA_VERSION)
		ERR(c, v[0], "this aisb reads 'version: 1'",
		    "unsupported policy version '%.16s'",
		    v[0]->type == Y_SCALAR ? v[0]->val : "?");
	if (v[1] != NULL)
		parse_rules(c, v[1], POLICY_ALLOW);
	if (v[2] != NULL)
		parse_rules(c, v[2], POLICY_DENY);
	if (v[3] != NULL)
		parse_allow_ranges(c, v[3]);
	if (v[4] != NULL)
		parse_dns(c, v[4]);
}

/* ---- canonical form ---------------------------------------------------- */

static int
rule_cmp(const void *a, const void *b)
{
	const struct policy_rule	*x = *(struct policy_rule * const *)a;
	const struct policy_rule	*y = *(struct policy_rule * const *)b;
	int				 d;

	if (x->action != y->action)
		return x->action == POLICY_ALLOW ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->kind == POLICY_RULE_CIDR) {
		if ((d = policy_addr_cmp(&x->net, &y->net)) != 0)
			return d;
		return (int)x->prefix - (int)y->prefix;
	}
	if ((d = memcmp(x->pattern, y->pattern,
	    x->patlen < y->patlen ? x->patlen : y->patlen)) != 0)
		return d;
	if (x->patlen != y->patlen)
		return x->patlen < y->patlen ? -1 : 1;
	/* same rule twice: the first written stays the one cited */
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (int)x->column - (int)y->column;
}

/* Folds b's ports into a.  Returns -1 on ENOMEM. */
static int
merge_ports(struct policy_rule *a, const struct policy_rule *b)
{
	struct policy_port_range *r;

	r = reallocarray(a->ports, a->nports + b->nports, sizeof(*r));
	if (r == NULL)
		return -1;
	memcpy(r + a->nports, b->ports, b->nports * sizeof(*r));
	a->ports = r;
	a->nports = ports_normalize(r, a->nports + b->nports);
	return 0;
}

static int
range_sort_cmp(const void *a, const void *b)
{
	const struct policy_range	*x = a, *y = b;
	int				 d;

	if ((d = policy_addr_cmp(&x->net, &y->net)) != 0)
		return d;
	return (int)x->prefix - (int)y->prefix;
}

static int
canonicalize(struct ctx *c)
{
	struct policy	*p = c->p;
	size_t		 i, out = 0, nexact = 0, nsfx = 0;

	if (c->nrules > 0)
		qsort(c->rules, c->nrules, sizeof(*c->rules), rule_cmp);
	for (i = 0; i < c->nrules; i++) {
		struct policy_rule *r = c->rules[i], *prev;

		prev = out > 0 ? c->rules[out - 1] : NULL;
		if (prev != NULL && prev->action == r->action &&
		    prev->kind == r->kind && prev->patlen == r->patlen &&
		    memcmp(prev->pattern, r->pattern, r->patlen) == 0) {
			if (merge_ports(prev, r) == -1)
				return -1;
			rule_free(r);
			continue;
		}
		c->rules[out++] = r;
	}
	p->rules = c->rules;
	p->nrules = out;
	c->rules = NULL;
	c->nrules = 0;

	if (p->nallow_ranges > 0) {
		qsort(p->allow_ranges, p->nallow_ranges,
		    sizeof(*p->allow_ranges), range_sort_cmp);
		for (i = 1, out = 1; i < p->nallow_ranges; i++)
			if (range_sort_cmp(&p->allow_ranges[i],
			    &p->allow_ranges[out - 1]) != 0)
				p->allow_ranges[out++] = p->allow_ranges[i];
		p->nallow_ranges = out;
	}

	for (i = 0; i < p->nrules; i++) {
		struct policy_rule *r = p->rules[i];

		switch (r->kind) {
		case POLICY_RULE_EXACT:
			nexact++;
			break;
		case POLICY_RULE_WILDCARD:
			nsfx++;
			break;
		case POLICY_RULE_REGEX:
			if (r->re_key != NULL)
				nsfx++;
			else if (r->action == POLICY_ALLOW)
				p->nre_allow++;
			else
				p->nre_deny++;
			break;
		case POLICY_RULE_CIDR:
			if (r->action == POLICY_ALLOW)
				p->ncidr_allow++;
			else
				p->ncidr_deny++;
			break;
		}
	}
	if (policy_htab_init(&p->exact, nexact) == -1 ||
	    policy_htab_init(&p->sfx, nsfx) == -1 ||
	    (p->re_allow = calloc(p->nre_allow + 1, sizeof(void *))) == NULL ||
	    (p->re_deny = calloc(p->nre_deny + 1, sizeof(void *))) == NULL ||
	    (p->cidr_allow = calloc(p->ncidr_allow + 1, sizeof(void *))) == NULL ||
	    (p->cidr_deny = calloc(p->ncidr_deny + 1, sizeof(void *))) == NULL)
		return -1;
	p->nre_allow = p->nre_deny = p->ncidr_allow = p->ncidr_deny = 0;
	for (i = 0; i < p->nrules; i++) {
		struct policy_rule	*r = p->rules[i];
		struct policy_hslot	*s;
		struct policy_rule	**re;

		switch (r->kind) {
		case POLICY_RULE_EXACT:
		case POLICY_RULE_WILDCARD:
			if (r->kind == POLICY_RULE_EXACT)
				s = policy_htab_slot(&p->exact, r->pattern,
				    r->patlen);
			else
				s = policy_htab_slot(&p->sfx, r->pattern + 2,
				    r->patlen - 2);
			if (r->action == POLICY_ALLOW)
				s->allow = r;
			else
				s->deny = r;
			break;
		case POLICY_RULE_REGEX:
			if (r->re_key != NULL) {
				s = policy_htab_slot(&p->sfx, r->re_key,
				    r->re_keylen);
				re = reallocarray(s->re, s->nre + 1,
				    sizeof(*re));
				if (re == NULL)
					return -1;
				re[s->nre++] = r;
				s->re = re;
			} else if (r->action == POLICY_ALLOW)
				p->re_allow[p->nre_allow++] = r;
			else
				p->re_deny[p->nre_deny++] = r;
			break;
		case POLICY_RULE_CIDR:
			if (r->action == POLICY_ALLOW)
				p->cidr_allow[p->ncidr_allow++] = r;
			else
				p->cidr_deny[p->ncidr_deny++] = r;
			break;
		}
	}
	return policy_build_dump(p);
}

/* ---- entry points ------------------------------------------------------ */

static void
policy_destroy(struct policy *p)
{
	size_t	 i;

	for (i = 0; i < p->nrules; i++)
		rule_free(p->rules[i]);
	free(p->rules);
	policy_htab_free(&p->exact);
	policy_htab_free(&p->sfx);
	free(p->re_allow);
	free(p->re_deny);
	free(p->cidr_allow);
	free(p->cidr_deny);
	free(p->allow_ranges);
	for (i = 0; i < p->ndns_servers; i++)
		free(p->dns_servers[i]);
	pcre2_match_context_free(p->mctx);
	free(p->dump);
	free(p->file);
	free(p);
}

struct policy *
policy_ref(struct policy *p)
{
	if (p != NULL)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		policy_destroy(p);
}

int
policy_load_buffer(const char *name, const char *buf, size_t len,
    struct policy **out, struct policy_errors *errs)
{
	struct policy_errors	 scratch;
	struct ctx		 c;
	struct ynode		*root;
	struct policy		*p;
	size_t			 i;
	int			 failed;

	*out = NULL;
	if (errs == NULL)
		errs = &scratch;
	memset(errs, 0, sizeof(*errs));
	snprintf(errs->file, sizeof(errs->file), "%s", name);
	memset(&c, 0, sizeof(c));
	c.errs = errs;
	c.file = name;

	if (len > POLICY_MAX_FILE_SIZE) {
		error_at(&c, 0, 0, "split the policy or use wildcards and ranges",
		    "policy is larger than %d bytes", POLICY_MAX_FILE_SIZE);
		return -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->file = strdup(name)) == NULL) {
		free(p);
		error_at(&c, 0, 0, NULL, "out of memory");
		return -1;
	}
	p->refs = 1;
	p->dns_min_ttl = POLICY_DEFAULT_MIN_TTL;
	p->dns_max_ttl = POLICY_DEFAULT_MAX_TTL;
	c.p = p;
	if ((c.cctx = pcre2_compile_context_create(NULL)) == NULL ||
	    (p->mctx = pcre2_match_context_create(NULL)) == NULL) {
		error_at(&c, 0, 0, NULL, "out of memory");
		goto fail;
	}
	/* Bound the work a hostile name can cause in a backtracking regex. */
	pcre2_set_match_limit(p->mctx, 100000);
	pcre2_set_depth_limit(p->mctx, 1000);
	pcre2_set_max_pattern_length(c.cctx, POLICY_MAX_REGEX);

	root = yaml_to_tree(&c, buf, len, &failed);
	if (!failed)
		parse_top(&c, root);
	ynode_free(root);
	if (errs->count > 0 || failed)
		goto fail;
	if (canonicalize(&c) == -1) {
		error_at(&c, 0, 0, NULL, "out of memory");
		goto fail;
	}
	pcre2_compile_context_free(c.cctx);
	*out = p;
	return 0;

fail:
	if (errs->count == 0)
		error_at(&c, 0, 0, NULL, "invalid policy");
	for (i = 0; i < c.nrules; i++)
		rule_free(c.rules[i]);
	free(c.rules);
	pcre2_compile_context_free(c.cctx);
	policy_destroy(p);
	return -1;
}

int
policy_load_file(const char *path, struct policy **out,
    struct policy_errors *errs)
{
	struct policy_errors	 scratch;
	struct stat		 st;
	char			*buf = NULL;
	size_t			 off = 0;
	ssize_t			 n;
	int			 fd, rc, saved;

	*out = NULL;
	if (errs == NULL)
		errs = &scratch;
	memset(errs, 0, sizeof(*errs));
	snprintf(errs->file, sizeof(errs->file), "%s", path);
	errs->count = 1;
	/* O_NONBLOCK: a FIFO in the policy's place must not hang the open */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		/* st is undefined now: say why, not what it may hold */
		saved = errno;
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "cannot stat: %s", strerror(saved));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size > POLICY_MAX_FILE_SIZE) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "policy is larger than %d bytes", POLICY_MAX_FILE_SIZE);
		snprintf(errs->err[0].hint, sizeof(errs->err[0].hint),
		    "split the policy or use wildcards and ranges");
		close(fd);
		return -1;
	}
	/* Read up to one byte past the limit: the file may grow meanwhile. */
	if ((buf = malloc(POLICY_MAX_FILE_SIZE + 1)) == NULL) {
		snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
		    "out of memory");
		close(fd);
		return -1;
	}
	while (off <= POLICY_MAX_FILE_SIZE) {
		n = read(fd, buf + off, POLICY_MAX_FILE_SIZE + 1 - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(errs->err[0].msg, sizeof(errs->err[0].msg),
			    "read: %s", strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	errs->count = 0;
	rc = policy_load_buffer(path, buf, off, out, errs);
	free(buf);
	return rc;
}

/* ---- introspection ----------------------------------------------------- */

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
