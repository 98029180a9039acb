/*
 * aisb [flags] [--] COMMAND: option resolution, previews, and the session.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "options.h"
#include "policy.h"

extern char **environ;

static int
print_policy(const struct launch_opts *o)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			*out;
	int			 rc = EXIT_CONFIG;

	if ((errs = calloc(1, sizeof(*errs))) == NULL ||
	    (out = malloc(64 * 1024)) == NULL) {
		free(errs);
		fprintf(stderr, "aisb: out of memory\n");
		return 1;
	}
	if (policy_load_file(o->val[LO_POLICY], &p, errs) == -1) {
		policy_errors_format(errs, out, 64 * 1024);
		fprintf(stderr, "%s(policy from %s: %s)\n", out,
		    launch_src_str(o->src[LO_POLICY]), o->where[LO_POLICY]);
	} else {
		free(out);
		if ((out = policy_dump(p, NULL)) != NULL) {
			fputs(out, stdout);
			rc = 0;
		}
	}
	free(out);
	free(errs);
	policy_free(p);
	return rc;
}

int
launch_cmd_run(int argc, char **argv)
{
	struct launch_opts	 o;
	char			 err[8192];
	int			 rc = 0;

	if (launch_opts_resolve(&o, argc, argv, environ, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.print_config)
		launch_opts_print(&o, stdout);
	if (o.print_policy && rc == 0)
		rc = print_policy(&o);
	if (!o.print_config && !o.print_policy) {
		fprintf(stderr, "aisb: sessions are not available in this "
		    "build yet; --print-config and --print-policy are\n");
		rc = EXIT_CONFIG;
	}
	launch_opts_free(&o);
	return rc;
}
