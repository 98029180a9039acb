/*
 * aisb: the table of its commands and the dispatch, nothing else.  The
 * first word of argv names a command of the table; anything else is a
 * sandboxed command line (aisb [flags] [--] COMMAND), which aisb run
 * takes.  Each command's flags, arguments and help are its rows in
 * cmd/cli.c's table; its code is cmd/NAME.c.
 *
 * Adding a command (see cmd/cmd.h for the layers below it):
 *
 *  1. Write cmd/NAME.c with int launch_cmd_NAME(int argc, char **argv):
 *     argv[0] is NAME (the whole argv with CMD_WHOLE_ARGV); it parses
 *     with launch_cli_parse(), calls the engine in session/, image/,
 *     policytools/, draft/ or host/, prints, and returns the exit
 *     status.  Add it to launcher/local.mk.
 *  2. Declare it in cmd/cmd.h.
 *  3. Give it a row in commands[] below: name, handler, flags.
 *  4. Give it its rows in cmd/cli.c's table: its (sub)commands, their
 *     arguments, flags and one-line help (aisb help, --help, the
 *     completion scripts and tests/cli/help.sh read them there).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "log.h"

#define CMD_WHOLE_ARGV	0x01	/* the handler gets aisb's own argv */

struct cmd {
	const char	*name;
	int		(*fn)(int argc, char **argv);
	int		 flags;
};

static const struct cmd commands[] = {
	{ "run", launch_cmd_run, CMD_WHOLE_ARGV },
	{ "sessions", launch_cmd_sessions, 0 },
	{ "clean", launch_cmd_clean, 0 },
	{ "doctor", launch_cmd_doctor, 0 },
	{ "image", launch_cmd_image, 0 },
	{ "gate", launch_cmd_gate, 0 },
	{ "policy", launch_cmd_policy, 0 },
	{ "agents", launch_cmd_agents, 0 },
	/* snapshot sessions' drafts */
	{ "changes", launch_cmd_snapshot, 0 },
	{ "apply", launch_cmd_snapshot, 0 },
	{ "discard", launch_cmd_snapshot, 0 },
	{ "recover", launch_cmd_snapshot, 0 },
	{ "undo", launch_cmd_snapshot, 0 },
	{ "draft", launch_cmd_draft, 0 },
	{ "transactions", launch_cmd_snapshot, 0 },
	/* a workspace's files a bind session wrote, accepted */
	{ "trust", launch_cmd_trust, 0 },
	/* requests held by gates run with --ask */
	{ "pending", launch_cmd_ask, 0 },
	{ "approve", launch_cmd_ask, 0 },
	{ "deny", launch_cmd_ask, 0 },
	{ "version", launch_cmd_version, 0 },
	{ "--version", launch_cmd_version, 0 },
	{ "help", launch_cli_help_cmd, 0 },
	{ "--help", launch_cmd_usage, 0 },
	{ "-h", launch_cmd_usage, 0 },
};

int
main(int argc, char **argv)
{
	size_t	 i;

	log_init("aisb", 0);
	if (argc < 2) {
		fprintf(stderr, "aisb: no command to run: aisb [options] [--] "
		    "COMMAND [ARGS...]; aisb --help lists the options\n");
		return EXIT_CONFIG;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return (commands[i].flags & CMD_WHOLE_ARGV) ?
			    commands[i].fn(argc, argv) :
			    commands[i].fn(argc - 1, argv + 1);
	/* aisb [flags] [--] COMMAND: a session */
	return launch_cmd_run(argc, argv);
}
