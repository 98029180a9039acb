/*
 * aisb trust FILE...: the user accepts, as they are now, files of a
 * workspace that a bind session's command created, changed or deleted
 * (session/trust.h); sessions read them again from then on.  Typing it
 * is the review's end: nothing is shown or asked here.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "session/trust.h"

extern char **environ;

int
launch_cmd_trust(int argc, char **argv)
{
	struct cli_args	 a;
	char		 err[PATH_MAX * 2 + 256];
	int		 i, rc = 0;

	if ((i = launch_cli_parse("trust", argc - 1, argv + 1, &a)) != 0)
		return i == 1 ? 0 : EXIT_CONFIG;
	for (i = 0; i < a.npos; i++)
		if (launch_trust_accept(environ, a.pos[i], stdout, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "aisb: trust: %s\n", err);
			rc = EXIT_CONFIG;
		}
	return rc;
}
