/*
 * aisb agents [NAME]: the recipes a session here would read (agent.c),
 * one line each with whether its image is built, or one recipe with
 * where each field was written.  The one-line list is doctor's too.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "image/agent.h"
#include "image/image-t.h"
#include "session/options.h"
#include "session/spec.h"

void
launch_agents_print(const struct launch_agents *set,
    const struct launch_opts *o, FILE *f)
{
	char	 where[1100], pkg[LAUNCH_AGENT_VALUE_MAX + 48];
	char	 tag[LAUNCH_TAG_MAX], err[512], img[LAUNCH_TAG_MAX + 32];
	size_t	 i;
	int	 built;

	for (i = 0; i < set->n; i++) {
		const struct launch_agent *a = &set->a[i];

		if (a->npm[0] != '\0')
			snprintf(pkg, sizeof(pkg), "npm %s, node %s", a->npm,
			    a->node[0] != '\0' ? a->node : "from Debian");
		else if (a->pip[0] != '\0')
			snprintf(pkg, sizeof(pkg), "pip %s", a->pip);
		else
			snprintf(pkg, sizeof(pkg), "no package");
		img[0] = '\0';
		if (o != NULL) {
			built = launch_agent_image(o, a, tag, sizeof(tag), err,
			    sizeof(err));
			snprintf(img, sizeof(img), "; image %s", built == -1 ?
			    "unknown" : built ? "built" : "not built yet");
		}
		fprintf(f, "  %-8s %s; %zu host%s%s (%s%s)\n", a->name, pkg,
		    a->nhosts, a->nhosts == 1 ? "" : "s", img,
		    launch_agent_where(set, &a->pos, where, sizeof(where)),
		    a->overridden ? ", changed by the user's file" : "");
	}
}


/* One recipe in full, each field with where it was written. */
static void
print_agent(const struct launch_agents *set, const struct launch_agent *a,
    FILE *f)
{
	char	 where[1100];
	size_t	 i;

#define FROM(fld) (a->field[fld].line != 0 ? launch_agent_where(set, \
	&a->field[fld], where, sizeof(where)) : "default")
	fprintf(f, "agent %s (%s%s)\n", a->name, launch_agent_where(set,
	    &a->pos, where, sizeof(where)), a->overridden ?
	    ", changed by the user's file" : "");
	fprintf(f, "  command  %s (%s)\n", a->command, FROM(LAF_COMMAND));
	fprintf(f, "  node     %s (%s)\n", a->node[0] != '\0' ? a->node :
	    "Debian's nodejs", FROM(LAF_NODE));
	fprintf(f, "  npm      %s (%s)\n", a->npm[0] != '\0' ? a->npm : "-",
	    FROM(LAF_NPM));
	fprintf(f, "  pip      %s (%s)\n", a->pip[0] != '\0' ? a->pip : "-",
	    FROM(LAF_PIP));
	for (i = 0; i < a->nhosts; i++)
		fprintf(f, "  %-8s %s:%u (%s)\n", i == 0 ? "hosts" : "",
		    a->hosts[i].host, a->hosts[i].port, launch_agent_where(set,
		    &a->hosts[i].pos, where, sizeof(where)));
	fprintf(f, "  env     ");
	for (i = 0; i < a->nenv; i++)
		fprintf(f, " %s", a->env[i]);
	fprintf(f, "%s (passed only with --secret NAME or --env NAME)\n",
	    a->nenv ? "" : " -");
	for (i = 0; i < a->nsecrets; i++)
		fprintf(f, "  %-8s %s: %s %s%s%s (%s)\n", i == 0 ? "secrets" :
		    "", a->secrets[i].name, a->secrets[i].host,
		    a->secrets[i].mode == POLICY_SECRET_HEADER ? "header " :
		    a->secrets[i].mode == POLICY_SECRET_BEARER ? "bearer" :
		    a->secrets[i].mode == POLICY_SECRET_BASIC ? "basic " :
		    "replace", a->secrets[i].header, a->secrets[i].user,
		    launch_agent_where(set, &a->secrets[i].pos, where,
		    sizeof(where)));
	for (i = 0; i < a->nsetenv; i++)
		fprintf(f, "  %-8s %s=%s\n", i == 0 ? "setenv" : "",
		    a->setenv[i].name, a->setenv[i].value);
	fprintf(f, "  config  ");
	for (i = 0; i < a->nconfig; i++)
		fprintf(f, " ~/%s", a->config[i]);
	fprintf(f, "%s\n", a->nconfig ? "" : " -");
#undef FROM
}


int
launch_cmd_agents(int argc, char **argv)
{
	extern char			**environ;
	struct launch_agents		*set;
	const struct launch_agent	*a;
	struct cli_args			 ca;
	char				 err[1400];
	int				 rc;

	if ((rc = launch_cli_parse("agents", argc - 1, argv + 1, &ca)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if ((set = malloc(sizeof(*set))) == NULL) {
		fprintf(stderr, "aisb agents: out of memory\n");
		return EXIT_CONFIG;
	}
	if (launch_agents_load(set, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		free(set);
		return EXIT_CONFIG;
	}
	rc = 0;
	if (ca.npos == 0) {
		struct launch_opts	o;
		int			have;

		printf("recipes: %s%s%s%s%s\n", set->files[0][0] != '\0' ?
		    set->files[0] : "(no shipped file)", set->files[2][0] !=
		    '\0' ? ", pins " : "", set->files[2], set->files[1][0] !=
		    '\0' ? ", " : "", set->files[1]);
		/* the images a session started here would use */
		if (!(have = launch_spec_opts(&o, err, sizeof(err)) == 0))
			fprintf(stderr, "aisb agents: images unknown: %s\n",
			    err);
		launch_agents_print(set, have ? &o : NULL, stdout);
		launch_opts_free(&o);
	} else if ((a = launch_agent_find(set, ca.pos[0])) != NULL)
		print_agent(set, a, stdout);
	else {
		fprintf(stderr, "aisb agents: no recipe named '%.40s'; aisb "
		    "agents lists them\n", ca.pos[0]);
		rc = EXIT_CONFIG;
	}
	free(set);
	return rc;
}
