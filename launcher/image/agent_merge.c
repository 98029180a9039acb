/*
 * What a loaded recipe (agent.c) adds to a session: its hosts as allow
 * rules in the session's policy, each citing where it was written; its
 * package, runtime and home folders in the image spec, beside the user's
 * own --npm/--pip; and, for aisb image build --agent NAME --update, the
 * newest version of its npm package pinned.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/agent.h"
#include "image/image-t.h"
#include "image/names.h"
#include "image/tools.h"
#include "policy.h"
#include "policytools/polyaml.h"

/* ---- the session's policy ---------------------------------------------- */

struct agent_hosts {
	const struct launch_agents	*set;
	const struct launch_agent	*a;
	const struct policy		*base;
	struct launch_yaml_secret	 add[LAUNCH_AGENT_MAX_SECRETS];
	size_t				 nadd;
};

/*
 * The recipe's hosts, as allow rules (launch_policy_yaml's extra), each
 * inspected as base's rule of the name is, with the session's secrets.
 */
static ssize_t
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
		if (h->a->hosts[i].host[0] != '*' && launch_yaml_inspect(f,
		    h->base, h->a->hosts[i].host, h->add, h->nadd) == -1)
			return -1;
	}
	return (ssize_t)h->a->nhosts;
}

const struct launch_agent_secret *
launch_agent_secret(const struct launch_agent *a, const char *name)
{
	size_t	 i;

	for (i = 0; i < a->nsecrets; i++)
		if (strcmp(a->secrets[i].name, name) == 0)
			return &a->secrets[i];
	return NULL;
}

/*
 * The recipe's secrets the session passes, as the merge adds them.  0,
 * or -1 with err when one names a host the recipe does not list.
 */
static int
session_secrets(struct agent_hosts *h, const char *const *names, size_t n,
    char *err, size_t errlen)
{
	const struct launch_agent_secret	*se;
	struct launch_yaml_secret		*y;
	char					 where[1100];
	size_t					 i, k;

	for (i = 0; i < n; i++) {
		if ((se = launch_agent_secret(h->a, names[i])) == NULL)
			continue;
		for (k = 0; k < h->a->nhosts; k++)
			if (strcmp(h->a->hosts[k].host, se->host) == 0)
				break;
		if (k == h->a->nhosts) {
			snprintf(err, errlen, "%s: agent '%s': secrets: %s: "
			    "%s is not one of its hosts; add it to hosts: or "
			    "name one of them", launch_agent_where(h->set,
			    &se->pos, where, sizeof(where)), h->a->name,
			    se->name, se->host);
			return -1;
		}
		y = &h->add[h->nadd++];
		y->host = se->host;
		y->s.name = se->name;
		y->s.mode = se->mode;
		y->s.header = se->header[0] != '\0' ? se->header :
		    se->mode == POLICY_SECRET_BEARER ? "authorization" : NULL;
		y->s.user = se->user[0] != '\0' ? se->user : NULL;
		y->s.query = se->query[0] != '\0' ? se->query : NULL;
	}
	return 0;
}

int
launch_agent_policy(const struct launch_agents *set,
    const struct launch_agent *a, const struct policy *base,
    const char *name, const char *const *secrets, size_t nsecrets,
    char **yaml, struct policy **out, char *err, size_t errlen)
{
	struct agent_hosts	*h;
	struct policy_errors	*errs;
	char			*text = NULL, where[1100];
	size_t			 len = 0;
	FILE			*f;
	int			 rc;

	*yaml = NULL;
	*out = NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	h->set = set;
	h->a = a;
	h->base = base;
	if (session_secrets(h, secrets, nsecrets, err, errlen) == -1) {
		free(h);
		return -1;
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		free(h);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "# %s with the hosts of agent %s (%s) added as allow "
	    "rules;\n# written by aisb for one session.  Each rule's comment "
	    "says where it was written.\nversion: %d\n",
	    policy_file(base), a->name, launch_agent_where(set, &a->pos, where,
	    sizeof(where)), POLICY_SCHEMA_VERSION);
	rc = launch_policy_yaml(f, base, h->add, h->nadd, agent_hosts, h);
	free(h);
	if (fclose(f) != 0 || text == NULL || rc == -1) {
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
		/* a recipe's hosts are checked as the loader does */
		snprintf(err, errlen, "agent %s: the merged policy does not "
		    "load: %s%s%s", a->name, errs->count > 0 ?
		    errs->err[0].msg : "?", errs->count > 0 &&
		    errs->err[0].hint[0] != '\0' ? "; " : "", errs->count > 0 ?
		    errs->err[0].hint : "");
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
    const char *base, char *err, size_t errlen)
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
	if (launch_npm_latest(pkg, base, ver, sizeof(ver), err, errlen) == -1)
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
