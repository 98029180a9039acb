/*
 * aisb image build|containerfile|ls: the flags into an image spec (with
 * an agent's recipe when one is named), then the image made (image.c) or
 * its Containerfile printed; ls lists the store (store.c).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "host/facts.h"
#include "image/agent.h"
#include "image/image.h"
#include "image/store.h"
#include "image/tools.h"
#include "log.h"

extern char **environ;

int
launch_cmd_image(int argc, char **argv)
{
	struct launch_image_spec  spec;
	struct launch_host_facts  facts;
	const char		**pk = NULL, **pip = NULL;
	char			**npm = NULL;
	char			  tag[LAUNCH_TAG_MAX];
	char			  err[1024], name[32];
	struct cli_args		  a;
	struct launch_agents	 *set = NULL;
	struct launch_agent_lists *lists = NULL;
	const struct launch_agent *ag;
	const char		 *agent = NULL;
	int			  i, containerfile_only = 0, rc = EXIT_CONFIG;
	int			  update = 0;

	if ((i = launch_cli_group("image", argc, argv)) != 0)
		return i == 1 ? 0 : EXIT_CONFIG;
	snprintf(name, sizeof(name), "image %s", argv[1]);
	if ((i = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return i == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "ls") == 0)
		return launch_image_ls() == 0 ? 0 : 1;
	containerfile_only = strcmp(argv[1], "containerfile") == 0;
	memset(&spec, 0, sizeof(spec));
	if ((pk = calloc((size_t)argc, sizeof(*pk))) == NULL) {
		log_warn("image");
		return 1;
	}
	spec.packages = pk;
	if ((npm = calloc((size_t)argc, sizeof(*npm))) == NULL ||
	    (pip = calloc((size_t)argc, sizeof(*pip))) == NULL) {
		log_warn("image");
		goto out;
	}
	spec.npm = (const char *const *)npm;
	spec.pip = pip;
	/* first: --npm's and --update's sessions run on it, wherever it is */
	spec.base = launch_image_base(launch_cli_get(&a, "--base"));
	for (i = 0; i < a.ngot; i++) {
		const char	*opt = a.got[i].opt->flag, *v = a.got[i].val;

		if (strcmp(opt, "-v") == 0)
			spec.verbose = 1;
		else if (strcmp(opt, "--package") == 0)
			pk[spec.npackages++] = v;
		else if (strcmp(opt, "--runtime") == 0)
			spec.runtime = v;
		else if (strcmp(opt, "--suite") == 0)
			spec.suite = v;
		else if (strcmp(opt, "--npm") == 0) {
			char	buf[LAUNCH_TOOL_MAX + LAUNCH_VERSION_MAX + 2];

			/* a preview asks no registry (tools.h) */
			if (launch_npm_resolve(v, spec.base, !containerfile_only,
			    buf, sizeof(buf), err, sizeof(err)) == -1 ||
			    (npm[spec.nnpm] = strdup(buf)) == NULL) {
				log_warnx("%s", err);
				goto out;
			}
			spec.nnpm++;
		} else if (strcmp(opt, "--pip") == 0)
			pip[spec.npip++] = v;
		else if (strcmp(opt, "--node") == 0)
			spec.node = v;
		else if (strcmp(opt, "--agent") == 0)
			agent = v;
		else if (strcmp(opt, "--update") == 0)
			update = 1;
		else if (strcmp(opt, "--install-policy") == 0)
			spec.install_policy = v;
	}
	if (update && (agent == NULL || containerfile_only)) {
		log_warnx("--update goes with image build --agent NAME");
		goto out;
	}
	if (agent != NULL) {
		/* the recipe's entries join the flags' (which win) */
		if ((set = malloc(sizeof(*set))) == NULL ||
		    (lists = malloc(sizeof(*lists))) == NULL) {
			log_warn("image");
			goto out;
		}
		if (launch_agents_load(set, environ, err, sizeof(err)) == -1 ||
		    (update && launch_agent_update(set, environ, agent,
		    spec.base, err, sizeof(err)) == -1)) {
			log_warnx("%s", err);
			goto out;
		}
		if ((ag = launch_agent_find(set, agent)) == NULL) {
			log_warnx("agent %.40s: no recipe (aisb agents lists "
			    "them)", agent);
			goto out;
		}
		launch_agent_spec(ag, lists, &spec);
	}
	if (launch_image_spec_check(&spec, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		goto out;
	}
	if (containerfile_only) {
		rc = launch_image_print_containerfile(&spec, stdout) == 0 ?
		    0 : 1;
		goto out;
	}
	if (spec.runtime == NULL) {
		/* What doctor would pick, without running a container. */
		memset(&facts, 0, sizeof(facts));
		if (launch_host_check(&facts, 0) == 0 &&
		    facts.runtime[0] != '\0')
			spec.runtime = facts.runtime;
	}
	if (launch_image_ensure(&spec, tag, sizeof(tag), err,
	    sizeof(err)) == -1) {
		log_warnx("image: %s", err);
		rc = 1;
		goto out;
	}
	printf("%s\n", tag);
	rc = 0;
out:
	for (i = 0; npm != NULL && (size_t)i < spec.nnpm; i++)
		free(npm[i]);
	free(npm);
	free(pip);
	free(pk);
	free(lists);
	free(set);
	return rc;
}
