/*
 * Schema version 1: what a policy may say, checked on the YAML tree and
 * turned into rules.  The rules of the schema, and why:
 *
 *   - The top level is a mapping with version (required, 1), allow, deny,
 *     allow_ranges and dns; any other key is an error that names the
 *     nearest known key, so a typo ("alow") never silently allows less
 *     or denies less than the user wrote.
 *   - allow and deny are lists of rules; a rule has exactly one of host
 *     (a name, "*.domain" or "~regex") and cidr, and optional ports.  A
 *     host written as an IP address is refused: addresses are cidr rules,
 *     so that a name rule never matches an address by accident.
 *   - Without ports, allow means 80 and 443 (the web) and deny means every
 *     port: the narrow default on the side that opens, the wide one on the
 *     side that closes.
 *   - A wildcard covers the names below a domain of two or more labels
 *     ("*.com" would be the whole top-level domain); a regex must compile
 *     with PCRE2, is ASCII, is matched caseless and anchored by the
 *     matcher, and its work is bounded by the match context's limits.
 *   - An allow rule for a name may ask for inspection (inspect: true;
 *     its requests: and secrets: need it): inspect.c reads those keys.
 *   - allow_ranges lists CIDRs that lift the built-in denied address
 *     classes (loopback, private, ...); dns names resolvers as addresses
 *     (never names: resolving the resolver would need a resolver) and
 *     bounds the TTLs the gate honours.
 *
 * Loading goes on after an error so that one run reports as many problems
 * as it can; every error carries the node's line and column.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load-int.h"
#include "near.h"

const char *
policy_ytype_name(const struct ynode *n)
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
int
policy_ynull(const struct ynode *n)
{
	return n->type == Y_SCALAR && n->plain &&
	    (n->len == 0 || strcmp(n->val, "~") == 0 ||
	    strcmp(n->val, "null") == 0);
}

/*
 * Checks a mapping's keys against a list; reports unknown and duplicate
 * keys.  Fills vals[i] with the value for keys[i] (or NULL).
 */
int
policy_map_keys(struct ctx *c, const struct ynode *map, const char *const *keys,
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
			/* the keys valid here, ranked by distance */
			int near = near_pick(key->val, key->len, keys, nkeys);

			if (near != -1)
				snprintf(hint, sizeof(hint), "did you mean '%s'?",
				    keys[near]);
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
		ERR(c, n, hint, "ports must be a list, not %s",
		    policy_ytype_name(n));
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
			    "not %s", policy_ytype_name(p));
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
	r->nports = policy_ports_normalize(r->ports, r->nports);
	return ok ? 0 : -1;
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
		policy_error_at(c, n->line, n->col, "see pcre2pattern(3); escape "
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
	static const char *const keys[] = { "host", "cidr", "ports",
		"inspect", "requests", "secrets" };
	const struct ynode	*v[6];
	struct policy_rule	*r;
	char			 err[160], hint[160];
	int			 ok = 1;

	if (n->type != Y_MAP) {
		ERR(c, n, "write - host: example.com", "a rule must be a "
		    "mapping with host: or cidr:, not %s",
		    policy_ytype_name(n));
		return;
	}
	if (policy_map_keys(c, n, keys, 6, v, "a rule") == -1)
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
	if (ok && (v[3] != NULL || v[4] != NULL || v[5] != NULL))
		ok = policy_inspect_read(c, r, v[3], v[4], v[5]) == 0;
	if (!ok || add_rule(c, r) == -1)
		policy_rule_free(r);
}

static void
parse_rules(struct ctx *c, const struct ynode *n, enum policy_verdict action)
{
	size_t	 i;

	if (policy_ynull(n))
		return;
	if (n->type != Y_SEQ) {
		ERR(c, n, "write a list: one '- host: name' per line",
		    "%s must be a list, not %s",
		    action == POLICY_ALLOW ? "allow" : "deny",
		    policy_ytype_name(n));
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

	if (policy_ynull(n))
		return;
	if (n->type != Y_SEQ) {
		ERR(c, n, "write allow_ranges: [127.0.0.1/32]",
		    "allow_ranges must be a list, not %s", policy_ytype_name(n));
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
			    "CIDR, not %s", policy_ytype_name(k));
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

	if (policy_ynull(n))
		return;
	if (n->type != Y_MAP) {
		ERR(c, n, "write dns: { servers: [\"127.0.0.1:53\"] }",
		    "dns must be a mapping, not %s", policy_ytype_name(n));
		return;
	}
	if (policy_map_keys(c, n, keys, 3, v, "dns") == -1)
		return;
	if (v[0] != NULL && !policy_ynull(v[0])) {
		if (v[0]->type != Y_SEQ) {
			ERR(c, v[0], "write servers: [\"127.0.0.1:53\"]",
			    "dns servers must be a list, not %s",
			    policy_ytype_name(v[0]));
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

void
policy_schema_read(struct ctx *c, const struct ynode *root)
{
	static const char *const keys[] = {
		"version", "allow", "deny", "allow_ranges", "dns"
	};
	const struct ynode	*v[5];
	unsigned long		 version;

	if (root == NULL || policy_ynull(root)) {
		policy_error_at(c, 1, 1, "start the file with 'version: 1'",
		    "empty policy");
		return;
	}
	if (root->type != Y_MAP) {
		ERR(c, root, "start the file with 'version: 1'",
		    "a policy is a mapping, not %s", policy_ytype_name(root));
		return;
	}
	if (policy_map_keys(c, root, keys, 5, v, "the policy") == -1 && v[0] == NULL)
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
