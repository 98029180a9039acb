/*
 * Agent recipes (agent.h, docs/agents.md): the loader of one file's text,
 * the field checks (the names' grammar is names.c's), the user's
 * field-level overrides.  Which files are read is agent_files.c's; what a
 * recipe adds to a session (allow rules in its policy, packages in its
 * image) is agent_merge.c's.
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
 * read into a small tree (common/yamltree.c; bounded: file size, nodes,
 * depth, every string), then checked field by field.  Loading stops at the first
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

#include "image/agent.h"
#include "image/agent-int.h"
#include "image/names.h"
#include "yamltree.h"

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
	[LAF_SECRETS] = "secrets",
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
#define EX_SECRETS	"secrets: { NAME: HOST header|bearer|basic|query " \
			"[HEADER|USER|PARAM] }, e.g. { EXAMPLE_API_KEY: " \
			"api.example.com header x-api-key }"

/* One scalar field of agent name: command, node, npm or pip.  0 or -1. */
static int
scalar_field(struct agctx *c, const char *name, int f,
    const struct ynode *val, struct launch_agent *a)
{
	const char	*v;
	char		 why[160];

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
	}
	return 0;
}

/* One list field of agent name: hosts, env or config.  0 or -1. */
static int
list_field(struct agctx *c, const char *name, int f,
    const struct ynode *val, struct launch_agent *a)
{
	const char	*v;
	char		 why[160];
	size_t		 k;

	switch (f) {
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
	return 0;
}

/* The setenv mapping of agent name.  0 or -1. */
static int
setenv_field(struct agctx *c, const char *name, const struct ynode *val,
    struct launch_agent *a)
{
	const char	*v;
	size_t		 k;

	if (is_null(val)) {
		a->nsetenv = 0;
		return 0;
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
	return 0;
}

/*
 * One secrets: value, "HOST MODE [ARG]", into se; NULL, or why not.  The
 * header's and the user's own checks are the policy loader's, which
 * reads them again when the session's policy is merged.
 */
static const char *
secret_value(const char *v, struct launch_agent_secret *se)
{
	char	 host[POLICY_MAX_NAME + 2], mode[16], arg[LAUNCH_AGENT_HEADER_MAX + 2];
	char	 extra[2];
	int	 n;

	n = sscanf(v, "%254s %15s %65s %1s", host, mode, arg, extra);
	if (n < 2 || n == 4 || strlen(host) > POLICY_MAX_NAME ||
	    strlen(arg) > LAUNCH_AGENT_HEADER_MAX)
		return "not HOST MODE [HEADER|USER|PARAM]";
	if (strchr(host, '*') != NULL || strchr(host, ':') != NULL)
		return "the host is a name of the recipe's hosts, without a "
		    "port or *";
	memset(se->header, 0, sizeof(se->header));
	memset(se->user, 0, sizeof(se->user));
	memset(se->query, 0, sizeof(se->query));
	if (strcmp(mode, "query") == 0 && n == 3) {
		se->mode = POLICY_SECRET_QUERY;
		snprintf(se->query, sizeof(se->query), "%.*s",
		    LAUNCH_AGENT_HEADER_MAX, arg);
	} else if (strcmp(mode, "bearer") == 0 && n == 2)
		se->mode = POLICY_SECRET_BEARER;
	else if (strcmp(mode, "header") == 0 && n == 3) {
		se->mode = POLICY_SECRET_HEADER;
		snprintf(se->header, sizeof(se->header), "%.*s",
		    LAUNCH_AGENT_HEADER_MAX, arg);
	} else if (strcmp(mode, "basic") == 0 && n == 3) {
		se->mode = POLICY_SECRET_BASIC;
		snprintf(se->user, sizeof(se->user), "%.*s",
		    LAUNCH_AGENT_HEADER_MAX, arg);
	} else
		return "the mode is header NAME, bearer, basic USER or query "
		    "PARAM";
	/* the lengths were checked above; the precisions say so to gcc */
	snprintf(se->host, sizeof(se->host), "%.*s", POLICY_MAX_NAME, host);
	return NULL;
}

/* The secrets mapping of agent name.  0 or -1. */
static int
secrets_field(struct agctx *c, const char *name, const struct ynode *val,
    struct launch_agent *a)
{
	const char	*v, *why;
	size_t		 k;

	a->nsecrets = 0;
	if (is_null(val))
		return 0;
	if (val->type != Y_MAP || val->nkids / 2 > LAUNCH_AGENT_MAX_SECRETS) {
		fail_at(c, val->line, val->col, "agent '%s': secrets: %s; "
		    "write " EX_SECRETS, name, val->type != Y_MAP ?
		    "a mapping belongs here" : "more than 8 entries");
		return -1;
	}
	for (k = 0; k + 1 < val->nkids; k += 2) {
		const struct ynode *sk = val->kids[k];
		const struct ynode *sv = val->kids[k + 1];
		struct launch_agent_secret *se = &a->secrets[a->nsecrets];

		if (sk->type != Y_SCALAR || !var_ok(sk->val) ||
		    strlen(sk->val) > POLICY_MAX_SECRET_NAME) {
			fail_at(c, sk->line, sk->col, "agent '%s': secrets: "
			    "'%.64s' is not a variable name; write "
			    EX_SECRETS, name, sk->type == Y_SCALAR ?
			    sk->val : "?");
			return -1;
		}
		if ((v = scalar(c, sv, name, "secrets", EX_SECRETS)) == NULL)
			return -1;
		if ((why = secret_value(v, se)) != NULL) {
			fail_at(c, sv->line, sv->col, "agent '%s': secrets: "
			    "%s: '%.64s': %s; write " EX_SECRETS, name,
			    sk->val, v, why);
			return -1;
		}
		snprintf(se->name, sizeof(se->name), "%s", sk->val);
		se->pos.file = c->fileno;
		se->pos.line = sv->line;
		se->pos.col = sv->col;
		a->nsecrets++;
	}
	return 0;
}

/*
 * Reads the mapping n of agent name into a (whose other fields it leaves
 * alone) and marks the fields it wrote in a->field.  -1 after an error.
 */
static int
parse_agent(struct agctx *c, const char *name, const struct ynode *n,
    struct launch_agent *a)
{
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
			    "pip, hosts, env, setenv, config, secrets", name,
			    key->val);
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
		if ((f == LAF_SETENV ? setenv_field(c, name, val, a) :
		    f == LAF_SECRETS ? secrets_field(c, name, val, a) :
		    f == LAF_HOSTS || f == LAF_ENV || f == LAF_CONFIG ?
		    list_field(c, name, f, val, a) :
		    scalar_field(c, name, f, val, a)) == -1)
			return -1;
	}
	return 0;
}

/* ---- a file's text into the set ---------------------------------------- */

struct launch_agent *
agent_find_mut(struct launch_agents *set, const char *name)
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
		case LAF_SECRETS:
			memcpy(dst->secrets, src->secrets,
			    sizeof(dst->secrets));
			dst->nsecrets = src->nsecrets;
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
int
agent_load_text(struct launch_agents *set, const char *path, const char *buf,
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
		if ((dst = agent_find_mut(set, name)) != NULL) {
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
