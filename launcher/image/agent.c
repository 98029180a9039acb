/*
 * Agent recipes (agent.h, docs/agents.md): the loader, the field checks,
 * the user's field-level overrides, and what a recipe adds to a session:
 * allow rules in its policy, packages in its image.
 *
 * A recipe file is YAML:
 *
 *	version: 1
 *	agents:
 *	  NAME:
 *	    command: claude
 *	    npm: "@scope/pkg@1.2.3"
 *	    ...
 *
 * read with libyaml into a small tree (bounded: file size, nodes, depth,
 * every string), then checked field by field.  Loading stops at the first
 * problem: one line is easier to act on than a list, and a recipe file is
 * short.
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "host/paths.h"
#include "image/agent.h"
#include "file.h"
#include "image/image.h"
#include "image/names.h"
#include "image/tools.h"
#include "policytools/polyaml.h"
#include "yamltree.h"

#ifndef AISB_AGENTS_FILE
#define AISB_AGENTS_FILE	"/usr/local/share/aisb/agents.yaml"
#endif

#define AG_MAX_NODES	4096	/* a recipe file has a few hundred */
#define AG_MAX_DEPTH	6	/* the format needs 4 */
#define AG_SCHEMA	1

static const char *const field_names[LAF__COUNT] = {
	[LAF_COMMAND] = "command",
	[LAF_NODE] = "node",
	[LAF_NPM] = "npm",
	[LAF_PIP] = "pip",
	[LAF_HOSTS] = "hosts",
	[LAF_ENV] = "env",
	[LAF_SETENV] = "setenv",
	[LAF_CONFIG] = "config",
};

const char *
launch_agent_field_name(enum launch_agent_field f)
{
	return f < LAF__COUNT ? field_names[f] : "?";
}

/* What one load is doing, for its error line. */
struct agctx {
	const char	*file;
	unsigned	 fileno;	/* index in launch_agents.files */
	char		*err;
	size_t		 errlen;
	int		 failed;
};

static void __attribute__((format(printf, 4, 5)))
fail_at(struct agctx *c, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (c->failed)
		return;		/* the first problem is the one reported */
	c->failed = 1;
	if (line > 0)
		n = snprintf(c->err, c->errlen, "%s:%u:%u: ", c->file, line,
		    col);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->file);
	if (n < 0 || (size_t)n >= c->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* ---- YAML to a small tree (common/yamltree.c) ------------------------- */

/* The document's root, or NULL (empty file, or c->failed). */
static struct ynode *
yaml_tree(struct agctx *c, const char *buf, size_t len)
{
	struct ytree_error	 e;
	struct ynode		*root;

	root = ytree_parse(buf, len, AG_MAX_NODES, AG_MAX_DEPTH, YTREE_NO_NUL,
	    &e);
	switch (e.fault) {
	case YTREE_OK:
		break;
	case YTREE_NOMEM:
		fail_at(c, 0, 0, "out of memory");
		break;
	case YTREE_SYNTAX:
		fail_at(c, e.line, e.col, "YAML syntax: %s", e.problem);
		break;
	case YTREE_ALIAS:
		fail_at(c, e.line, e.col, "YAML anchors and aliases are not "
		    "allowed; write each value out");
		break;
	case YTREE_DOCS:
		fail_at(c, e.line, e.col, "one YAML document per file; drop "
		    "this '---' and what follows");
		break;
	case YTREE_NODES:
		fail_at(c, e.line, e.col, "more than %d YAML nodes; a recipe "
		    "file is short", AG_MAX_NODES);
		break;
	case YTREE_DEPTH:
		fail_at(c, e.line, e.col, "nested deeper than a recipe is");
		break;
	case YTREE_NUL:
		fail_at(c, e.line, e.col, "NUL byte in a value");
		break;
	}
	return root;
}


/* ---- field checks ------------------------------------------------------ */

static int
is_null(const struct ynode *n)
{
	return n->type == Y_SCALAR && (n->len == 0 ||
	    strcmp(n->val, "~") == 0 || strcmp(n->val, "null") == 0);
}

static const char *
type_name(const struct ynode *n)
{
	return n->type == Y_MAP ? "a mapping" : n->type == Y_SEQ ? "a list" :
	    "a scalar";
}

static int
span(const char *s, const char *set)
{
	return s[strspn(s, set)] == '\0';
}

/* The npm name of "name@version", at its version's '@' (names.h). */
static int
npm_name_in(const char *v, const char *at)
{
	char	 name[LAUNCH_TOOL_MAX + 1];

	if ((size_t)(at - v) > LAUNCH_TOOL_MAX)
		return 0;
	memcpy(name, v, (size_t)(at - v));
	name[at - v] = '\0';
	return launch_npm_name_ok(name);
}

/* A variable's name (names.h) that fits a recipe's field. */
static int
var_ok(const char *s)
{
	size_t	 len = strlen(s);

	return len <= LAUNCH_AGENT_NAME_MAX * 2 && launch_env_name_ok(s, len);
}

#define LOWER	"abcdefghijklmnopqrstuvwxyz"
#define UPPER	"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS	"0123456789"

/*
 * HOST, HOST:PORT, *.DOMAIN or *.DOMAIN:PORT (443 when absent).  No IP
 * literal (a recipe names services), no regex.  0 or -1 with why.
 */
static int
parse_host(const char *v, size_t len, struct launch_agent_host *h,
    char *why, size_t whylen)
{
	struct policy_target	 t;
	char			 name[POLICY_MAX_NAME + 1], e[128];
	const char		*colon;
	size_t			 nlen, hlen = len;
	unsigned long		 port = 443;

	if (len == 0 || len > POLICY_MAX_NAME + 6) {
		snprintf(why, whylen, "empty or too long");
		return -1;
	}
	if (v[0] == '~' || v[0] == '[' || strchr(v, '/') != NULL) {
		snprintf(why, whylen, "a host is a name, not a regex, an "
		    "address or a URL");
		return -1;
	}
	if (v[0] != '*') {
		if (policy_parse_target(v, len, 443, &t, e, sizeof(e)) == -1) {
			snprintf(why, whylen, "%s", e);
			return -1;
		}
		if (t.is_ip || t.port == 0) {
			snprintf(why, whylen, t.is_ip ? "an IP address; a "
			    "recipe names hosts" : "port 0");
			return -1;
		}
		snprintf(h->host, sizeof(h->host), "%s", t.host);
		h->port = t.port;
		return 0;
	}
	if ((colon = memchr(v, ':', len)) != NULL) {
		char	*end;

		hlen = (size_t)(colon - v);
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (!isdigit((unsigned char)colon[1]) || *end != '\0' ||
		    port == 0 || port > 65535) {
			snprintf(why, whylen, "bad port '%s'", colon + 1);
			return -1;
		}
	}
	if (hlen < 3 || v[1] != '.' || memchr(v + 1, '*', hlen - 1) != NULL ||
	    policy_normalize_name(v + 2, hlen - 2, name, &nlen, e,
	    sizeof(e)) == -1 || memchr(name, '.', nlen) == NULL) {
		snprintf(why, whylen, "a wildcard is *. and a domain of two or "
		    "more labels");
		return -1;
	}
	snprintf(h->host, sizeof(h->host), "*.%s", name);
	h->port = (uint16_t)port;
	return 0;
}

static int
is_proxy_var(const char *s)
{
	return strcasecmp(s, "http_proxy") == 0 ||
	    strcasecmp(s, "https_proxy") == 0 ||
	    strcasecmp(s, "all_proxy") == 0 || strcasecmp(s, "no_proxy") == 0;
}

/* ---- one agent --------------------------------------------------------- */

/* A scalar field's value, or NULL after an error. */
static const char *
scalar(struct agctx *c, const struct ynode *n, const char *agent,
    const char *field, const char *example)
{
	if (n->type != Y_SCALAR) {
		fail_at(c, n->line, n->col, "agent '%s': %s: %s where a value "
		    "belongs; write %s", agent, field, type_name(n), example);
		return NULL;
	}
	if (n->len >= LAUNCH_AGENT_VALUE_MAX) {
		fail_at(c, n->line, n->col, "agent '%s': %s: longer than %d "
		    "bytes; write %s", agent, field, LAUNCH_AGENT_VALUE_MAX - 1,
		    example);
		return NULL;
	}
	return n->val;
}

/* A list field: the node is a list (or empty), at most max items. */
static int
list_of(struct agctx *c, const struct ynode *n, const char *agent,
    const char *field, size_t max, const char *example)
{
	if (is_null(n))
		return 0;
	if (n->type != Y_SEQ) {
		fail_at(c, n->line, n->col, "agent '%s': %s: %s where a list "
		    "belongs; write %s", agent, field, type_name(n), example);
		return -1;
	}
	if (n->nkids > max) {
		fail_at(c, n->line, n->col, "agent '%s': %s: more than %zu "
		    "entries", agent, field, max);
		return -1;
	}
	return 0;
}

#define EX_HOSTS	"hosts: [api.example.com:443] (a name or *.domain, " \
			"optional :PORT, 443 when absent)"
#define EX_ENV		"env: [EXAMPLE_API_KEY] (variable names only)"
#define EX_CONFIG	"config: [.example] (folders under the home)"
#define EX_SETENV	"setenv: { NAME: value }"

/*
 * Reads the mapping n of agent name into a (whose other fields it leaves
 * alone) and marks the fields it wrote in a->field.  -1 after an error.
 */
static int
parse_agent(struct agctx *c, const char *name, const struct ynode *n,
    struct launch_agent *a)
{
	const char	*v;
	char		 why[160];
	size_t		 i, k;
	int		 f;

	if (n->type != Y_MAP) {
		fail_at(c, n->line, n->col, "agent '%s': %s where its fields "
		    "belong; write command:, npm:, hosts: ... under it "
		    "(docs/agents.md)", name, is_null(n) ? "nothing" :
		    type_name(n));
		return -1;
	}
	for (i = 0; i + 1 < n->nkids; i += 2) {
		const struct ynode *key = n->kids[i], *val = n->kids[i + 1];

		if (key->type != Y_SCALAR) {
			fail_at(c, key->line, key->col, "agent '%s': a field "
			    "name must be a word", name);
			return -1;
		}
		for (f = 0; f < LAF__COUNT; f++)
			if (strcmp(key->val, field_names[f]) == 0)
				break;
		if (f == LAF__COUNT) {
			fail_at(c, key->line, key->col, "agent '%s': unknown "
			    "field '%.40s'; write one of command, node, npm, "
			    "pip, hosts, env, setenv, config", name, key->val);
			return -1;
		}
		for (k = 0; k < i; k += 2)
			if (strcmp(n->kids[k]->val, key->val) == 0) {
				fail_at(c, key->line, key->col, "agent '%s': "
				    "%s: given twice; keep one", name,
				    key->val);
				return -1;
			}
		/* the pins file holds versions, which aisb writes */
		if (c->fileno == LAUNCH_AGENTS_PINS && f != LAF_NODE &&
		    f != LAF_NPM && f != LAF_PIP) {
			fail_at(c, key->line, key->col, "agent '%s': %s: the "
			    "pins file holds node, npm and pip only; write "
			    "other fields in agents.yaml", name, key->val);
			return -1;
		}
		a->field[f].file = c->fileno;
		a->field[f].line = val->line;
		a->field[f].col = val->col;
		switch (f) {
		case LAF_COMMAND:
			if ((v = scalar(c, val, name, "command",
			    "command: NAME")) == NULL)
				return -1;
			if (strlen(v) > LAUNCH_AGENT_NAME_MAX * 2 ||
			    v[0] == '-' || v[0] == '.' ||
			    !span(v, LOWER UPPER DIGITS "._+-") || v[0] == '\0') {
				fail_at(c, val->line, val->col, "agent '%s': "
				    "command: '%.64s' is not a program name; "
				    "write the name the agent runs as "
				    "(command: claude), no path", name, v);
				return -1;
			}
			snprintf(a->command, sizeof(a->command), "%s", v);
			break;
		case LAF_NODE:
			if ((v = scalar(c, val, name, "node",
			    "node: \"22.23.5\"")) == NULL)
				return -1;
			if (!is_null(val) && (!launch_node_version_ok(v) ||
			    strlen(v) >= sizeof(a->node))) {
				fail_at(c, val->line, val->col, "agent '%s': "
				    "node: '%.32s' is not an exact version; "
				    "write node: \"22.23.5\" (quoted), or "
				    "leave node out for Debian's nodejs", name,
				    v);
				return -1;
			}
			snprintf(a->node, sizeof(a->node), "%s",
			    is_null(val) ? "" : v);
			break;
		case LAF_NPM:
			if ((v = scalar(c, val, name, "npm",
			    "npm: \"@scope/name@1.2.3\"")) == NULL)
				return -1;
			if (!is_null(val)) {
				const char *at = launch_npm_at(v);

				if (at == NULL || !npm_name_in(v, at)) {
					fail_at(c, val->line, val->col,
					    "agent '%s': npm: '%.64s' is not a "
					    "package with a version; write npm: "
					    "\"@scope/name@1.2.3\" or \"name@"
					    "1.2.3\" (quoted)", name, v);
					return -1;
				}
				if (!launch_npm_version_ok(at + 1)) {
					fail_at(c, val->line, val->col,
					    "agent '%s': npm: '%.64s' is not an "
					    "exact version (no ranges, tags or "
					    "x); write npm: \"%.*s@1.2.3\"",
					    name, at + 1, (int)(at - v), v);
					return -1;
				}
			}
			snprintf(a->npm, sizeof(a->npm), "%s",
			    is_null(val) ? "" : v);
			break;
		case LAF_PIP:
			if ((v = scalar(c, val, name, "pip",
			    "pip: \"name==1.2.3\"")) == NULL)
				return -1;
			if (!is_null(val) && launch_pip_entry_ok(v, why,
			    sizeof(why)) == -1) {
				fail_at(c, val->line, val->col, "agent '%s': "
				    "pip: '%.64s' is not a package pinned to "
				    "an exact version; write pip: "
				    "\"name==1.2.3\"", name, v);
				return -1;
			}
			snprintf(a->pip, sizeof(a->pip), "%s",
			    is_null(val) ? "" : v);
			break;
		case LAF_HOSTS:
			if (list_of(c, val, name, "hosts",
			    LAUNCH_AGENT_MAX_HOSTS, EX_HOSTS) == -1)
				return -1;
			a->nhosts = 0;
			for (k = 0; k < val->nkids; k++) {
				const struct ynode *h = val->kids[k];
				struct launch_agent_host *ah =
				    &a->hosts[a->nhosts];

				if ((v = scalar(c, h, name, "hosts",
				    EX_HOSTS)) == NULL)
					return -1;
				if (parse_host(v, h->len, ah, why,
				    sizeof(why)) == -1) {
					fail_at(c, h->line, h->col, "agent "
					    "'%s': hosts: '%.64s': %s; write "
					    EX_HOSTS, name, v, why);
					return -1;
				}
				ah->pos.file = c->fileno;
				ah->pos.line = h->line;
				ah->pos.col = h->col;
				a->nhosts++;
			}
			break;
		case LAF_ENV:
			if (list_of(c, val, name, "env", LAUNCH_AGENT_MAX_ENV,
			    EX_ENV) == -1)
				return -1;
			a->nenv = 0;
			for (k = 0; k < val->nkids; k++) {
				const struct ynode *e = val->kids[k];

				if ((v = scalar(c, e, name, "env",
				    EX_ENV)) == NULL)
					return -1;
				if (!var_ok(v)) {
					fail_at(c, e->line, e->col, "agent "
					    "'%s': env: '%.64s' is not a "
					    "variable name; write " EX_ENV
					    " and pass values with --env NAME",
					    name, v);
					return -1;
				}
				snprintf(a->env[a->nenv++], sizeof(a->env[0]),
				    "%s", v);
			}
			break;
		case LAF_SETENV:
			if (is_null(val)) {
				a->nsetenv = 0;
				break;
			}
			if (val->type != Y_MAP) {
				fail_at(c, val->line, val->col, "agent '%s': "
				    "setenv: %s where a mapping belongs; write "
				    EX_SETENV, name, type_name(val));
				return -1;
			}
			if (val->nkids / 2 > LAUNCH_AGENT_MAX_SETENV) {
				fail_at(c, val->line, val->col, "agent '%s': "
				    "setenv: more than %d variables", name,
				    LAUNCH_AGENT_MAX_SETENV);
				return -1;
			}
			a->nsetenv = 0;
			for (k = 0; k + 1 < val->nkids; k += 2) {
				const struct ynode *sk = val->kids[k];
				const struct ynode *sv = val->kids[k + 1];
				struct launch_agent_setenv *se =
				    &a->setenv[a->nsetenv];

				if (sk->type != Y_SCALAR ||
				    !var_ok(sk->val) ||
				    is_proxy_var(sk->val)) {
					fail_at(c, sk->line, sk->col, "agent "
					    "'%s': setenv: '%.64s' is not a "
					    "variable a recipe may set (a name; "
					    "not a proxy variable, which the "
					    "gate owns); write " EX_SETENV,
					    name, sk->type == Y_SCALAR ?
					    sk->val : "?");
					return -1;
				}
				if ((v = scalar(c, sv, name, "setenv",
				    EX_SETENV)) == NULL)
					return -1;
				if (strpbrk(v, "\n\r") != NULL) {
					fail_at(c, sv->line, sv->col, "agent "
					    "'%s': setenv: %s: a line break, "
					    "which an env file cannot carry; "
					    "write one line", name, sk->val);
					return -1;
				}
				snprintf(se->name, sizeof(se->name), "%s",
				    sk->val);
				snprintf(se->value, sizeof(se->value), "%s", v);
				a->nsetenv++;
			}
			break;
		case LAF_CONFIG:
			if (list_of(c, val, name, "config",
			    LAUNCH_AGENT_MAX_CONFIG, EX_CONFIG) == -1)
				return -1;
			a->nconfig = 0;
			for (k = 0; k < val->nkids; k++) {
				const struct ynode *e = val->kids[k];

				if ((v = scalar(c, e, name, "config",
				    EX_CONFIG)) == NULL)
					return -1;
				if (!launch_homedir_ok(v)) {
					fail_at(c, e->line, e->col, "agent "
					    "'%s': config: '%.64s' is not a "
					    "folder under the home; write "
					    EX_CONFIG, name, v);
					return -1;
				}
				snprintf(a->config[a->nconfig++],
				    sizeof(a->config[0]), "%s", v);
			}
			break;
		}
	}
	return 0;
}

/* ---- files ------------------------------------------------------------- */

static int
read_file(const char *path, char **out, size_t *outlen, int *missing,
    char *err, size_t errlen)
{
	*missing = 0;
	if ((*out = file_read_bounded(path, LAUNCH_AGENTS_MAX_FILE, outlen,
	    err, errlen)) == NULL) {
		if (errno != ENOENT)
			return -1;
		*missing = 1;
	}
	return 0;
}

static struct launch_agent *
find_mut(struct launch_agents *set, const char *name)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->a[i].name, name) == 0)
			return &set->a[i];
	return NULL;
}

/* The fields src wrote (src->field[f].line != 0) copied into dst. */
static void
override(struct launch_agent *dst, const struct launch_agent *src)
{
	int	 f;

	for (f = 0; f < LAF__COUNT; f++) {
		if (src->field[f].line == 0)
			continue;
		dst->field[f] = src->field[f];
		switch (f) {
		case LAF_COMMAND:
			memcpy(dst->command, src->command, sizeof(dst->command));
			break;
		case LAF_NODE:
			memcpy(dst->node, src->node, sizeof(dst->node));
			break;
		case LAF_NPM:
			memcpy(dst->npm, src->npm, sizeof(dst->npm));
			break;
		case LAF_PIP:
			memcpy(dst->pip, src->pip, sizeof(dst->pip));
			break;
		case LAF_HOSTS:
			memcpy(dst->hosts, src->hosts, sizeof(dst->hosts));
			dst->nhosts = src->nhosts;
			break;
		case LAF_ENV:
			memcpy(dst->env, src->env, sizeof(dst->env));
			dst->nenv = src->nenv;
			break;
		case LAF_SETENV:
			memcpy(dst->setenv, src->setenv, sizeof(dst->setenv));
			dst->nsetenv = src->nsetenv;
			break;
		case LAF_CONFIG:
			memcpy(dst->config, src->config, sizeof(dst->config));
			dst->nconfig = src->nconfig;
			break;
		}
	}
	dst->overridden = 1;
}

/*
 * The text of one file (len bytes; path names it in messages) into set.
 * fileno 0 (shipped) adds agents; 1 (the user's) adds new ones and
 * overrides the fields it writes of known ones.
 */
static int
load_text(struct launch_agents *set, const char *path, const char *buf,
    size_t len, unsigned fileno, char *err, size_t errlen)
{
	struct agctx		 c;
	struct ynode		*root = NULL, *agents = NULL, *version = NULL;
	struct launch_agent	*scratch = NULL, *dst;
	size_t			 i, k;
	int			 rc = -1;

	snprintf(set->files[fileno], sizeof(set->files[fileno]), "%s", path);
	memset(&c, 0, sizeof(c));
	c.file = path;
	c.fileno = fileno;
	c.err = err;
	c.errlen = errlen;
	root = yaml_tree(&c, buf, len);
	if (c.failed)
		goto out;
	if (root == NULL || is_null(root)) {
		rc = 0;		/* an empty file: no agents */
		goto out;
	}
	if (root->type != Y_MAP) {
		fail_at(&c, root->line, root->col, "a recipe file is a mapping; "
		    "start it with 'version: 1' and 'agents:'");
		goto out;
	}
	for (i = 0; i + 1 < root->nkids; i += 2) {
		struct ynode *key = root->kids[i];

		if (key->type == Y_SCALAR && strcmp(key->val, "version") == 0)
			version = root->kids[i + 1];
		else if (key->type == Y_SCALAR &&
		    strcmp(key->val, "agents") == 0)
			agents = root->kids[i + 1];
		else {
			fail_at(&c, key->line, key->col, "unknown key '%.40s'; "
			    "a recipe file has version: 1 and agents:",
			    key->type == Y_SCALAR ? key->val : "?");
			goto out;
		}
	}
	if (version == NULL || version->type != Y_SCALAR ||
	    strcmp(version->val, "1") != 0) {
		fail_at(&c, version != NULL ? version->line : root->line,
		    version != NULL ? version->col : root->col,
		    "this aisb reads recipe files of 'version: %d'; write it at "
		    "the top", AG_SCHEMA);
		goto out;
	}
	if (agents == NULL || is_null(agents)) {
		rc = 0;
		goto out;
	}
	if (agents->type != Y_MAP) {
		fail_at(&c, agents->line, agents->col, "agents: %s; write one "
		    "NAME: mapping per agent under it", type_name(agents));
		goto out;
	}
	if ((scratch = malloc(sizeof(*scratch))) == NULL) {
		fail_at(&c, 0, 0, "out of memory");
		goto out;
	}
	for (i = 0; i + 1 < agents->nkids; i += 2) {
		struct ynode	*key = agents->kids[i];
		const char	*name = key->type == Y_SCALAR ? key->val : "";

		if (!launch_agent_name_ok(name) || strcmp(name, "none") == 0) {
			fail_at(&c, key->line, key->col, "agent name '%.40s': "
			    "write a lower-case word of at most %d letters, "
			    "digits, '-', '_', '.' ('none' is taken: "
			    "--agent none)", name, LAUNCH_AGENT_NAME_MAX);
			goto out;
		}
		for (k = 0; k < i; k += 2)
			if (strcmp(agents->kids[k]->val, name) == 0) {
				fail_at(&c, key->line, key->col, "agent '%s' "
				    "is named twice in this file; keep one",
				    name);
				goto out;
			}
		memset(scratch, 0, sizeof(*scratch));
		snprintf(scratch->name, sizeof(scratch->name), "%s", name);
		scratch->pos.file = fileno;
		scratch->pos.line = key->line;
		scratch->pos.col = key->col;
		if (parse_agent(&c, name, agents->kids[i + 1], scratch) == -1)
			goto out;
		if ((dst = find_mut(set, name)) != NULL) {
			override(dst, scratch);
			continue;
		}
		if (set->n >= LAUNCH_AGENTS_MAX) {
			fail_at(&c, key->line, key->col, "more than %d agents",
			    LAUNCH_AGENTS_MAX);
			goto out;
		}
		set->a[set->n++] = *scratch;
	}
	rc = 0;
out:
	ytree_free(root);
	free(scratch);
	return c.failed ? -1 : rc;
}

/* One file (at most LAUNCH_AGENTS_MAX_FILE bytes) into set: load_text. */
static int
load_one(struct launch_agents *set, const char *path, unsigned fileno,
    char *err, size_t errlen)
{
	char	*buf = NULL;
	size_t	 len = 0;
	int	 missing, rc;

	if (path == NULL || path[0] == '\0')
		return 0;
	if (read_file(path, &buf, &len, &missing, err, errlen) == -1)
		return -1;
	if (missing)
		return 0;
	rc = load_text(set, path, buf, len, fileno, err, errlen);
	free(buf);
	return rc;
}

/* What a whole recipe needs, once the files are merged. */
static int
check_merged(const struct launch_agents *set, char *err, size_t errlen)
{
	char	 where[1100];
	size_t	 i;

	for (i = 0; i < set->n; i++) {
		const struct launch_agent *a = &set->a[i];

		if (a->node[0] != '\0' && a->npm[0] == '\0') {
			snprintf(err, errlen, "%s: agent '%s': node: a Node "
			    "runtime with no npm package; add npm: "
			    "\"name@1.2.3\" or drop node:",
			    launch_agent_where(set, &a->field[LAF_NODE], where,
			    sizeof(where)), a->name);
			return -1;
		}
	}
	return 0;
}

int
launch_agents_load_files(struct launch_agents *set, const char *shipped,
    const char *user, char *err, size_t errlen)
{
	return launch_agents_load_pinned(set, shipped, NULL, user, err,
	    errlen);
}

int
launch_agents_load_pinned(struct launch_agents *set, const char *shipped,
    const char *pins, const char *user, char *err, size_t errlen)
{
	size_t	 i;

	memset(set, 0, sizeof(*set));
	if (load_one(set, shipped, LAUNCH_AGENTS_SHIPPED, err, errlen) == -1 ||
	    load_one(set, pins, LAUNCH_AGENTS_PINS, err, errlen) == -1 ||
	    load_one(set, user, LAUNCH_AGENTS_USER, err, errlen) == -1)
		return -1;
	for (i = 0; i < set->n; i++)
		if (set->a[i].command[0] == '\0')
			snprintf(set->a[i].command, sizeof(set->a[i].command),
			    "%s", set->a[i].name);
	return check_merged(set, err, errlen);
}

int
launch_agents_shipped(char *buf, size_t len)
{
	/* a copy beside aisb means uninstalled (paths.h) */
	if (launch_beside_self(LAUNCH_AGENTS_BUILT_NAME, buf, len) == 0 &&
	    access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s", AISB_AGENTS_FILE);
	return access(buf, R_OK) == 0 ? 0 : -1;
}

void
launch_agents_user(char **envp, char *buf, size_t len)
{
	const char	*xdg = launch_getenv(envp, "XDG_CONFIG_HOME", 15);
	const char	*home = launch_getenv(envp, "HOME", 4);

	if (xdg != NULL && xdg[0] == '/')
		snprintf(buf, len, "%s/aisb/agents.yaml", xdg);
	else if (home != NULL && home[0] == '/')
		snprintf(buf, len, "%s/.config/aisb/agents.yaml", home);
	else
		buf[0] = '\0';
}

void
launch_agents_pins_path(char **envp, char *buf, size_t len)
{
	char	*slash;

	launch_agents_user(envp, buf, len);
	if ((slash = strrchr(buf, '/')) != NULL)
		snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "%s",
		    "agent-pins.yaml");
}

int
launch_agents_load(struct launch_agents *set, char **envp, char *err,
    size_t errlen)
{
	char	 shipped[PATH_MAX], user[PATH_MAX], pins[PATH_MAX];

	(void)launch_agents_shipped(shipped, sizeof(shipped));
	launch_agents_user(envp, user, sizeof(user));
	launch_agents_pins_path(envp, pins, sizeof(pins));
	return launch_agents_load_pinned(set, shipped, pins, user, err,
	    errlen);
}

/*
 * Rewrites the pins file with agent's field set to value: the file is
 * aisb's own (no comments of the user's to keep), so it is generated
 * whole from what it held, checked by loading the text as the file would
 * be loaded, and only then written (file_write_atomic: whole or not at
 * all).  value "" drops the pin.
 */
int
launch_agent_pin_write(const char *path, const char *agent,
    enum launch_agent_field f, const char *value, char *err, size_t errlen)
{
	struct launch_agents	*cur;
	struct launch_agent	*a;
	char			*text = NULL, dir[PATH_MAX];
	size_t			 len = 0, i;
	int			 rc = -1, k;
	FILE			*out;
	static const enum launch_agent_field pinned[] = { LAF_NODE, LAF_NPM,
	    LAF_PIP };

	if (f != LAF_NODE && f != LAF_NPM && f != LAF_PIP) {
		snprintf(err, errlen, "only node, npm and pip are pinned");
		return -1;
	}
	if (!launch_agent_name_ok(agent) || strlen(value) >= LAUNCH_AGENT_VALUE_MAX ||
	    strpbrk(value, "\"\\\n\r") != NULL) {
		snprintf(err, errlen, "pin: bad agent name or value");
		return -1;
	}
	if ((cur = calloc(1, sizeof(*cur))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (load_one(cur, path, LAUNCH_AGENTS_PINS, err, errlen) == -1)
		goto out;
	if ((a = find_mut(cur, agent)) == NULL) {
		if (cur->n >= LAUNCH_AGENTS_MAX) {
			snprintf(err, errlen, "%s: more than %d agents", path,
			    LAUNCH_AGENTS_MAX);
			goto out;
		}
		a = &cur->a[cur->n++];
		snprintf(a->name, sizeof(a->name), "%s", agent);
	}
	a->field[f].line = value[0] != '\0';
	snprintf(f == LAF_NODE ? a->node : f == LAF_NPM ? a->npm : a->pip,
	    f == LAF_NODE ? sizeof(a->node) : sizeof(a->npm), "%s", value);
	if ((out = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fprintf(out, "# Versions pinned by aisb (image build --update): "
	    "rewritten whole by aisb.\n# Your own pins and changes go in "
	    "agents.yaml next to it, which wins.\nversion: 1\nagents:\n");
	for (i = 0; i < cur->n; i++) {
		a = &cur->a[i];
		for (k = 0; k < 3; k++)
			if (a->field[pinned[k]].line != 0)
				break;
		if (k == 3)
			continue;	/* nothing pinned any more */
		fprintf(out, "  %s:\n", a->name);
		for (k = 0; k < 3; k++) {
			enum launch_agent_field pf = pinned[k];

			if (a->field[pf].line == 0)
				continue;
			fprintf(out, "    %s: \"%s\"\n", field_names[pf],
			    pf == LAF_NODE ? a->node : pf == LAF_NPM ? a->npm :
			    a->pip);
		}
	}
	if (fclose(out) != 0 || text == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if (strrchr(dir, '/') != NULL) {
		*strrchr(dir, '/') = '\0';
		if (dir[0] != '\0' && launch_mkdirs(dir) == -1) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			goto out;
		}
	}
	/* what is written must load, with the checks of any recipe */
	memset(cur, 0, sizeof(*cur));
	if (len > LAUNCH_AGENTS_MAX_FILE) {
		snprintf(err, errlen, "%s: would be larger than %d bytes", path,
		    LAUNCH_AGENTS_MAX_FILE);
		goto out;
	}
	if (load_text(cur, path, text, len, LAUNCH_AGENTS_PINS, err,
	    errlen) == -1)
		goto out;
	if (file_write_atomic(path, text, len, 0644, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(text);
	free(cur);
	return rc;
}

const struct launch_agent *
launch_agent_find(const struct launch_agents *set, const char *name)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->a[i].name, name) == 0)
			return &set->a[i];
	return NULL;
}

const struct launch_agent *
launch_agent_by_command(const struct launch_agents *set, const char *cmd)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->a[i].command, cmd) == 0)
			return &set->a[i];
	return NULL;
}

const char *
launch_agent_where(const struct launch_agents *set,
    const struct launch_agent_pos *pos, char *buf, size_t len)
{
	const char	*file = pos->file < 3 ? set->files[pos->file] : "?";

	if (pos->line == 0)
		snprintf(buf, len, "%s", file);
	else
		snprintf(buf, len, "%s:%u:%u", file, pos->line, pos->col);
	return buf;
}

/* ---- the session's policy ---------------------------------------------- */

struct agent_hosts {
	const struct launch_agents	*set;
	const struct launch_agent	*a;
};

/* The recipe's hosts, as allow rules (launch_policy_yaml's extra). */
static size_t
agent_hosts(FILE *f, void *ctx)
{
	const struct agent_hosts	*h = ctx;
	char				 where[1100];
	size_t				 i;

	for (i = 0; i < h->a->nhosts; i++) {
		fprintf(f, "  # agent %s, %s\n  - host: ", h->a->name,
		    launch_agent_where(h->set, &h->a->hosts[i].pos, where,
		    sizeof(where)));
		launch_yaml_str(f, h->a->hosts[i].host);
		fprintf(f, "\n    ports: [%u]\n", h->a->hosts[i].port);
	}
	return h->a->nhosts;
}

int
launch_agent_policy(const struct launch_agents *set,
    const struct launch_agent *a, const struct policy *base,
    const char *name, char **yaml, struct policy **out, char *err,
    size_t errlen)
{
	struct agent_hosts	 h = { set, a };
	struct policy_errors	*errs;
	char			*text = NULL, where[1100];
	size_t			 len = 0;
	FILE			*f;

	*yaml = NULL;
	*out = NULL;
	if ((f = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "# %s with the hosts of agent %s (%s) added as allow "
	    "rules;\n# written by aisb for one session.  Each rule's comment "
	    "says where it was written.\nversion: %d\n",
	    policy_file(base), a->name, launch_agent_where(set, &a->pos, where,
	    sizeof(where)), POLICY_SCHEMA_VERSION);
	launch_policy_yaml(f, base, agent_hosts, &h);
	if (fclose(f) != 0 || text == NULL) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((errs = calloc(1, sizeof(*errs))) == NULL) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (policy_load_buffer(name, text, len, out, errs) == -1) {
		/* a recipe's hosts are checked as the loader does: a bug */
		snprintf(err, errlen, "agent %s: the merged policy does not "
		    "load: %s", a->name, errs->count > 0 ? errs->err[0].msg :
		    "?");
		free(errs);
		free(text);
		return -1;
	}
	free(errs);
	*yaml = text;
	return 0;
}

size_t
launch_agent_missing(const struct launch_agent *a, const struct policy *p,
    char *buf, size_t len)
{
	struct policy_decision	 d;
	char			 name[POLICY_MAX_NAME + 16];
	size_t			 i, n = 0, off = 0;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; i < a->nhosts; i++) {
		const struct launch_agent_host *h = &a->hosts[i];

		/* a name under the wildcard stands for all of them */
		if (h->host[0] == '*')
			snprintf(name, sizeof(name), "aisb-check%s", h->host + 1);
		else
			snprintf(name, sizeof(name), "%s", h->host);
		policy_decide_name(p, name, strlen(name), h->port, &d);
		if (d.verdict == POLICY_ALLOW)
			continue;
		n++;
		if (off < len) {
			int k = snprintf(buf + off, len - off, "%s%s:%u",
			    off ? " " : "", h->host, h->port);

			if (k > 0)
				off += (size_t)k;
		}
	}
	return n;
}

/* ---- the image --------------------------------------------------------- */

/* The package name of "name@ver" / "@s/name@ver" / "name==ver". */
static size_t
pkg_name_len(const char *spec, int pip)
{
	const char	*p;

	if (pip)
		return (p = strstr(spec, "==")) != NULL ? (size_t)(p - spec) :
		    strlen(spec);
	return (p = launch_npm_at(spec)) != NULL ? (size_t)(p - spec) :
	    strlen(spec);
}

/* pip names compare case-blind with '-', '_' and '.' alike (PEP 503). */
static int
same_pkg(const char *a, const char *b, int pip)
{
	size_t	 la = pkg_name_len(a, pip), lb = pkg_name_len(b, pip), i;

	if (la != lb)
		return 0;
	if (!pip)
		return strncmp(a, b, la) == 0;
	for (i = 0; i < la; i++) {
		int x = tolower((unsigned char)a[i]);
		int y = tolower((unsigned char)b[i]);

		if (x == '_' || x == '.')
			x = '-';
		if (y == '_' || y == '.')
			y = '-';
		if (x != y)
			return 0;
	}
	return 1;
}

static size_t
merge_list(const char *mine, const char *const *theirs, size_t ntheirs,
    const char **out, int pip)
{
	size_t	 i, n = 0;

	if (mine[0] != '\0') {
		for (i = 0; i < ntheirs; i++)
			if (same_pkg(mine, theirs[i], pip))
				break;
		if (i == ntheirs)
			out[n++] = mine;	/* the user's own entry wins */
	}
	for (i = 0; i < ntheirs && n < LAUNCH_AGENT_SPEC_MAX; i++)
		out[n++] = theirs[i];
	return n;
}

void
launch_agent_spec(const struct launch_agent *a, struct launch_agent_lists *l,
    struct launch_image_spec *spec)
{
	size_t	 i;

	if (a == NULL)
		return;
	spec->nnpm = merge_list(a->npm, spec->npm, spec->nnpm, l->npm, 0);
	spec->npm = l->npm;
	spec->npip = merge_list(a->pip, spec->pip, spec->npip, l->pip, 1);
	spec->pip = l->pip;
	if (a->node[0] != '\0')
		spec->node = a->node;
	for (i = 0; i < a->nconfig; i++)
		l->homedirs[i] = a->config[i];
	spec->homedirs = l->homedirs;
	spec->nhomedirs = a->nconfig;
}

int
launch_agent_update(struct launch_agents *set, char **envp, const char *name,
    char *err, size_t errlen)
{
	const struct launch_agent	*a;
	char				 pins[PATH_MAX], where[1100];
	char				 pkg[LAUNCH_AGENT_VALUE_MAX], ver[64];
	char				 want[LAUNCH_AGENT_VALUE_MAX + 64];
	const char			*at;

	if ((a = launch_agent_find(set, name)) == NULL) {
		snprintf(err, errlen, "agent %.40s: no recipe (aisb agents "
		    "lists them)", name);
		return -1;
	}
	if (a->npm[0] == '\0') {
		snprintf(err, errlen, "agent %s: no npm package to update%s",
		    a->name, a->pip[0] != '\0' ? " (pip versions are not "
		    "looked up: write pip: NAME==VERSION in agents.yaml)" : "");
		return -1;
	}
	if (a->field[LAF_NPM].line != 0 &&
	    a->field[LAF_NPM].file == LAUNCH_AGENTS_USER) {
		snprintf(err, errlen, "agent %s: npm is pinned by your own "
		    "recipe (%s), which wins over aisb's pins: change the "
		    "version there", a->name, launch_agent_where(set,
		    &a->field[LAF_NPM], where, sizeof(where)));
		return -1;
	}
	/* "@scope/pkg@1.2.3": the version is after the last '@' past 0 */
	at = strrchr(a->npm, '@');
	if (at == NULL || at == a->npm)
		at = a->npm + strlen(a->npm);
	snprintf(pkg, sizeof(pkg), "%.*s", (int)(at - a->npm), a->npm);
	if (launch_npm_latest(pkg, ver, sizeof(ver), err, errlen) == -1)
		return -1;
	if (*at == '@' && strcmp(at + 1, ver) == 0) {
		fprintf(stderr, "aisb: agent %s: %s is the newest\n", a->name,
		    a->npm);
		return 0;
	}
	snprintf(want, sizeof(want), "%s@%s", pkg, ver);
	launch_agents_pins_path(envp, pins, sizeof(pins));
	if (launch_agent_pin_write(pins, a->name, LAF_NPM, want, err,
	    errlen) == -1)
		return -1;
	fprintf(stderr, "aisb: agent %s: %s -> %s (pinned in %s; the old "
	    "image stays until aisb clean --images)\n", a->name, a->npm, want,
	    pins);
	return launch_agents_load(set, envp, err, errlen);
}

/* ---- listing ----------------------------------------------------------- */
