/*
 * aisb: wires argv to the subcommands.  Nothing else lives here; the
 * commands, their flags and their help are the table of cli.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "image/agent.h"
#include "cmd/cli.h"
#include "session/gates.h"
#include "image/image.h"
#include "cmd/cmd.h"
#include "log.h"

int
main(int argc, char **argv)
{
	log_init("aisb", 0);
	if (argc < 2) {
		fprintf(stderr, "aisb: no command to run: aisb [options] [--] "
		    "COMMAND [ARGS...]; aisb --help lists the options\n");
		return EXIT_CONFIG;
	}
	if (strcmp(argv[1], "policy") == 0)
		return launch_cmd_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 ||
	    strcmp(argv[1], "--version") == 0) {
		struct cli_args	 a;
		int		 rc;

		if (argv[1][0] != '-' && (rc = launch_cli_parse("version",
		    argc - 2, argv + 2, &a)) != 0)
			return rc == 1 ? 0 : EXIT_CONFIG;
		printf("aisb %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		return launch_cli_usage(NULL, stdout);
	if (strcmp(argv[1], "help") == 0)
		return launch_cli_help_cmd(argc - 1, argv + 1);
	if (strcmp(argv[1], "image") == 0)
		return launch_cmd_image(argc - 1, argv + 1);
	if (strcmp(argv[1], "agents") == 0)
		return launch_cmd_agents(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return launch_cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "sessions") == 0)
		return launch_cmd_sessions(argc - 1, argv + 1);
	if (strcmp(argv[1], "clean") == 0)
		return launch_cmd_clean(argc - 1, argv + 1);
	if (strcmp(argv[1], "gate") == 0)
		return launch_cmd_gate(argc - 1, argv + 1);
	/* snapshot sessions' drafts (snapshot.c) */
	if (strcmp(argv[1], "changes") == 0 || strcmp(argv[1], "apply") == 0 ||
	    strcmp(argv[1], "discard") == 0 || strcmp(argv[1], "recover") == 0 ||
	    strcmp(argv[1], "transactions") == 0)
		return launch_cmd_snapshot(argc - 1, argv + 1);
	return launch_cmd_run(argc, argv);
}
