/*
 * What a session and its previews (--dry-run, --print-policy) share
 * before anything runs: the session's policy loaded and said, a named
 * gate's policy taken, the agent recipe picked and its hosts merged, its
 * settings put in the environment (prepare.h).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/agent.h"
#include "image/image-t.h"
#include "image/image.h"
#include "policy.h"
#include "session/gates.h"
#include "session/options.h"
#include "session/prepare.h"
#include "session/secrets.h"
#include "session/trust.h"

extern char **environ;

struct policy *
launch_load_policy(const struct launch_opts *o)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			*out;

	if ((errs = calloc(1, sizeof(*errs))) == NULL ||
	    (out = malloc(64 * 1024)) == NULL) {
		free(errs);
		fprintf(stderr, "aisb: out of memory\n");
		return NULL;
	}
	if (launch_trust_check(environ, o->val[LO_POLICY], out,
	    64 * 1024) == -1)
		fprintf(stderr, "aisb: %s\n", out);
	else if (policy_load_file(o->val[LO_POLICY], &p, errs) == -1) {
		policy_errors_format(errs, out, 64 * 1024);
		fprintf(stderr, "%s(policy from %s: %s)\n", out,
		    launch_src_str(o->src[LO_POLICY]), o->where[LO_POLICY]);
		if (o->src[LO_POLICY] == LAUNCH_SRC_DEFAULT &&
		    access(o->val[LO_POLICY], F_OK) != 0)
			fprintf(stderr, "aisb: no policy: pass --policy FILE, "
			    "write %s, or run make install for the shipped "
			    "default\n", o->user_policy);
	}
	free(out);
	free(errs);
	return p;
}


/*
 * A session under a policy nobody named starts by saying so, and how to
 * write one's own: otherwise the shipped default decides in silence.
 */
void
launch_say_default_policy(const struct launch_opts *o, const struct policy *p)
{
	if (o->policy_origin == LAUNCH_POLICY_GATE) {
		fprintf(stderr, "aisb: policy: the one gate %s enforces, %s "
		    "(sha256:%.12s)\n", o->val[LO_GATE], o->val[LO_POLICY],
		    policy_sha256(p));
		return;
	}
	if (o->policy_origin != LAUNCH_POLICY_BUILT &&
	    o->policy_origin != LAUNCH_POLICY_INSTALLED)
		return;
	fprintf(stderr, "aisb: policy: the shipped default, %s (%s copy, "
	    "sha256:%.12s)\n"
	    "aisb: to write your own: copy it to %s and edit it "
	    "(docs/policy.md), or pass --policy FILE\n", o->val[LO_POLICY],
	    o->policy_origin == LAUNCH_POLICY_BUILT ? "build tree" :
	    "installed", policy_sha256(p), o->user_policy);
}


/*
 * A base image a file or the environment chose is said at the start,
 * as the shipped policy is: the base's programs run in every session,
 * and a line the user did not type should not choose them in silence
 * (a user config, or AISB_IMAGE set by whatever set up the shell).
 */
void
launch_say_image(const struct launch_opts *o)
{
	const char	*from;

	switch (o->src[LO_IMAGE]) {
	case LAUNCH_SRC_USER:
	case LAUNCH_SRC_PROJECT:
		from = "the config file";
		break;
	case LAUNCH_SRC_ENV:
		from = "the environment,";
		break;
	default:
		return;
	}
	fprintf(stderr, "aisb: image: base %s, from %s %s%s\n",
	    o->val[LO_IMAGE], from, o->where[LO_IMAGE],
	    strcmp(o->val[LO_IMAGE], LAUNCH_DEFAULT_BASE) == 0 ||
	    launch_image_base(o->val[LO_IMAGE]) == NULL ? "" :
	    " (not aisb's own base: its build steps run without network, "
	    "and it takes no --package)");
}


/*
 * --gate NAME: the session's policy is the one that gate enforces.  A
 * policy chosen anywhere but the defaults must be that very file.
 */
int
launch_use_named_gate(struct launch_opts *o)
{
	char	 gpath[PATH_MAX], mine[PATH_MAX], err[512], *copy;

	if (o->net != LAUNCH_NET_GATE) {
		fprintf(stderr, "aisb: --gate %s (%s: %s) needs --net gate; "
		    "--net is %s (%s: %s)\n", o->val[LO_GATE],
		    launch_src_str(o->src[LO_GATE]), o->where[LO_GATE],
		    o->val[LO_NET], launch_src_str(o->src[LO_NET]),
		    o->where[LO_NET]);
		return -1;
	}
	if (launch_gate_policy(o->val[LO_GATE], gpath, sizeof(gpath), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: --gate (%s: %s): %s\n",
		    launch_src_str(o->src[LO_GATE]), o->where[LO_GATE], err);
		return -1;
	}
	if (o->src[LO_POLICY] != LAUNCH_SRC_DEFAULT &&
	    (realpath(o->val[LO_POLICY], mine) == NULL ||
	    strcmp(mine, gpath) != 0)) {
		fprintf(stderr, "aisb: the policy %s (%s: %s) is not the one "
		    "gate %s enforces (%s); drop it, or start a gate with it: "
		    "aisb gate up NAME --policy %s\n", o->val[LO_POLICY],
		    launch_src_str(o->src[LO_POLICY]), o->where[LO_POLICY],
		    o->val[LO_GATE], gpath, o->val[LO_POLICY]);
		return -1;
	}
	if ((copy = strdup(gpath)) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	free(o->val[LO_POLICY]);
	o->val[LO_POLICY] = copy;
	snprintf(o->where[LO_POLICY], sizeof(o->where[LO_POLICY]), "gate %s",
	    o->val[LO_GATE]);
	/* not the shipped default any more, whatever the defaults said */
	o->policy_origin = LAUNCH_POLICY_GATE;
	return 0;
}


void
launch_run_agent_free(struct launch_run_agent *ra)
{
	free(ra->yaml);
	free(ra->set);
	memset(ra, 0, sizeof(*ra));
}


/*
 * Which recipe applies: the one --agent (config agent:, AISB_AGENT)
 * names, else the one whose command is the command's argv[0], saying
 * so; agent none: neither.  The recipes are read only when one may
 * apply, and a broken file stops the session (78) even when it would
 * not: a recipe file that does not load is not ignored in silence.
 * 0 (ra->a may be NULL) or -1 after one line on stderr.
 */
int
launch_pick_agent(const struct launch_opts *o, struct launch_run_agent *ra)
{
	const char	*name = o->val[LO_AGENT];
	char		 err[1400], where[1100];
	size_t		 i;

	memset(ra, 0, sizeof(*ra));
	if ((name != NULL && strcmp(name, "none") == 0) ||
	    (name == NULL && o->ncmd == 0))
		return 0;
	if ((ra->set = malloc(sizeof(*ra->set))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	if (launch_agents_load(ra->set, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		launch_run_agent_free(ra);
		return -1;
	}
	if (name != NULL) {
		if ((ra->a = launch_agent_find(ra->set, name)) != NULL)
			return 0;
		fprintf(stderr, "aisb: agent %s (%s: %s) has no recipe; known:",
		    name, launch_src_str(o->src[LO_AGENT]), o->where[LO_AGENT]);
		for (i = 0; i < ra->set->n; i++)
			fprintf(stderr, " %s", ra->set->a[i].name);
		fprintf(stderr, "%s (from %s%s%s); write one in %s, or pass "
		    "--agent none\n", ra->set->n == 0 ? " none" : "",
		    ra->set->files[0][0] != '\0' ? ra->set->files[0] :
		    "no shipped file", ra->set->files[1][0] != '\0' ? " and " :
		    "", ra->set->files[1], "~/.config/aisb/agents.yaml");
		launch_run_agent_free(ra);
		return -1;
	}
	if ((ra->a = launch_agent_by_command(ra->set, o->cmd[0])) == NULL) {
		launch_run_agent_free(ra);
		return 0;
	}
	/*
	 * Said even with --quiet: the recipe widens the policy, and nobody
	 * asked for it by name.
	 */
	fprintf(stderr, "aisb: agent %s: its recipe (%s) applies, picked by "
	    "the command's name; --agent none runs without it\n",
	    ra->a->name, launch_agent_where(ra->set, &ra->a->pos, where,
	    sizeof(where)));
	return 0;
}


/* 1 when an --env entry (NAME, NAME=VALUE, NAME?) names name. */
static int
env_named(const struct launch_opts *o, const char *name)
{
	size_t	 k, n, len = strlen(name);

	for (k = 0; k < o->nenv; k++) {
		n = strcspn(o->env[k].text, "=?");
		if (n == len && strncmp(o->env[k].text, name, n) == 0)
			return 1;
	}
	return 0;
}


/* 1 when a --secret entry names name. */
static int
secret_named(const struct launch_opts *o, const char *name)
{
	char	 n[POLICY_MAX_SECRET_NAME + 1];
	size_t	 k;

	for (k = 0; k < o->nsecrets; k++) {
		launch_secret_entry_name(o->secrets[k].text, n, sizeof(n));
		if (strcmp(n, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * The recipe in the session: its hosts allowed (merged into *pp, or
 * checked against a named gate's policy, which a session never widens),
 * its setenv ahead of the user's --env (which wins for the same name),
 * and a hint when none of its credential variables is passed.  0 or -1
 * after a line on stderr.
 */
int
launch_apply_agent(struct launch_opts *o, struct launch_run_agent *ra, int named,
    int hint, struct policy **pp)
{
	const struct launch_agent	*a = ra->a;
	struct policy_decision		 d;
	struct launch_item		*l;
	struct policy			*merged;
	const char			*names[LAUNCH_SECRETS_MAX];
	char				 err[1024], buf[2048], name[1200];
	char				 sn[LAUNCH_SECRETS_MAX][POLICY_MAX_SECRET_NAME + 1];
	size_t				 i, k, n, add = 0, passed = 0;

	if (named) {
		if (launch_agent_missing(a, *pp, buf, sizeof(buf)) > 0) {
			fprintf(stderr, "aisb: agent %s needs %s, which the "
			    "policy of gate %s (%s) does not allow, and a "
			    "session does not widen a shared gate's policy: add "
			    "them to that file as allow rules (the gate reloads "
			    "it when a session attaches), or run without "
			    "--gate\n", a->name, buf, o->val[LO_GATE],
			    o->val[LO_POLICY]);
			return -1;
		}
	} else {
		snprintf(name, sizeof(name), "%s + agent %s",
		    o->val[LO_POLICY], a->name);
		/* the recipe's secrets the session passes: inspected hosts */
		for (i = 0; i < o->nsecrets && i < LAUNCH_SECRETS_MAX; i++) {
			launch_secret_entry_name(o->secrets[i].text, sn[i],
			    sizeof(sn[i]));
			names[i] = sn[i];
		}
		if (launch_agent_policy(ra->set, a, *pp, name, names, i,
		    &ra->yaml, &merged, err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			return -1;
		}
		/*
		 * The user's deny rules win: say which of its hosts lose,
		 * citing the rule where the user wrote it (the base).
		 */
		for (i = 0; i < a->nhosts && !o->quiet; i++) {
			if (a->hosts[i].host[0] == '*')
				continue;
			policy_decide_name(*pp, a->hosts[i].host,
			    strlen(a->hosts[i].host), a->hosts[i].port, &d);
			if (d.verdict == POLICY_DENY &&
			    d.reason == POLICY_R_DENY_RULE && d.rule != NULL)
				fprintf(stderr, "aisb: agent %s: %s:%u stays "
				    "denied by %s\n", a->name, a->hosts[i].host,
				    a->hosts[i].port, policy_rule_describe(d.rule,
				    buf, sizeof(buf)));
		}
		policy_free(*pp);
		*pp = merged;
	}

	/* setenv: before the user's entries, skipped where the user names it */
	for (i = 0; i < a->nsetenv; i++)
		if (!env_named(o, a->setenv[i].name))
			add++;
	if (add > 0) {
		if (o->nenv + add > LAUNCH_MAX_LIST ||
		    (l = calloc(o->nenv + add, sizeof(*l))) == NULL) {
			fprintf(stderr, "aisb: agent %s: too many variables\n",
			    a->name);
			return -1;
		}
		for (i = 0, n = 0; i < a->nsetenv; i++) {
			if (env_named(o, a->setenv[i].name))
				continue;
			if (asprintf(&l[n].text, "%s=%s", a->setenv[i].name,
			    a->setenv[i].value) == -1) {
				while (n > 0)
					free(l[--n].text);
				free(l);
				fprintf(stderr, "aisb: out of memory\n");
				return -1;
			}
			l[n].src = LAUNCH_SRC_DEFAULT;
			snprintf(l[n].where, sizeof(l[n].where), "agent %s",
			    a->name);
			n++;
		}
		for (k = 0; k < o->nenv; k++)
			l[n++] = o->env[k];
		free(o->env);
		o->env = l;
		o->nenv = n;
	}

	/* credentials: only what the user passes; a hint when none is */
	for (i = 0; i < a->nenv; i++)
		passed += (size_t)(env_named(o, a->env[i]) ||
		    secret_named(o, a->env[i]));
	if (hint && a->nenv > 0 && passed == 0 && !o->quiet) {
		buf[0] = '\0';
		for (i = 0; i < a->nenv; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			    "%s%s", i ? ", " : "", a->env[i]);
		fprintf(stderr, "aisb: agent %s reads its credentials from %s; "
		    "none is passed: add --secret NAME (the gate adds it, the "
		    "sandbox holds a placeholder%s), --env NAME (the value "
		    "inside), or log in inside%s%s%s\n", a->name, buf,
		    a->nsecrets > 0 ? "" : "; needs secrets: in the recipe",
		    a->nconfig > 0 ? " (kept in ~/" : "",
		    a->nconfig > 0 ? a->config[0] : "", a->nconfig > 0 ?
		    " of the home volume)" : "");
	}
	return 0;
}
