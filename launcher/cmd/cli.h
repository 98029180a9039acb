/*
 * The help and flag table of aisb (cli.c): every command and subcommand,
 * its arguments and its flags, in one place; main.c's table dispatches
 * each first word to its handler.  Each command's parser is
 * launch_cli_parse() over its entry, and --help, aisb help TOPIC and the
 * completion test print the same entry: a flag cannot be accepted
 * without being listed.  The session's own flags (aisb [flags] COMMAND)
 * are the option table of session/options.c, printed by
 * launch_opts_help().
 */
#ifndef AISB_CLI_H
#define AISB_CLI_H

#include <stdio.h>

#define CLI_MAX_GOT	256	/* flags and positionals on one command line */

enum cli_arg {
	CLI_SWITCH = 0,		/* --flag */
	CLI_VALUE,		/* --flag VALUE, --flag=VALUE */
	CLI_OPTIONAL,		/* --flag, --flag=VALUE */
};

struct cli_opt {
	const char	*flag;		/* "--root" or "-v" */
	enum cli_arg	 kind;
	const char	*arg;		/* the value's name in help: "DIR" */
	const char	*def;		/* the default as help says it; NULL */
	const char	*help;		/* one line */
};

struct cli_cmd {
	const char	*name;		/* "policy derive" */
	const char	*args;		/* the positionals: "apt|npm" */
	const char	*desc;		/* one line */
	const struct cli_opt *opts;	/* NULL-terminated by flag == NULL */
	int		 minpos, maxpos;
	int		 passthrough;	/* unknown --flags stay positional
					   (gate up hands them to the
					   session option table) */
	const char	*more;		/* a line after the options, or NULL */
};

/* What one command line said, in order. */
struct cli_args {
	const struct cli_cmd *cmd;
	struct {
		const struct cli_opt *opt;	/* NULL: a positional */
		const char	*val;		/* NULL for a switch */
	} got[CLI_MAX_GOT];
	int		 ngot;
	char		*pos[CLI_MAX_GOT];
	int		 npos;
};

const struct cli_cmd *launch_cli_find(const char *name);
/*
 * Parses argv (the words after the command's name) for the command
 * name.  0: parsed into a; 1: --help or -h was given and the help is
 * printed on stdout (exit 0); -1: one line on stderr saying what is wrong
 * (exit 78).
 */
int	 launch_cli_parse(const char *name, int argc, char **argv,
	    struct cli_args *a);
/*
 * A group's first word (aisb gate up): 0 when argv[1] names one of its
 * commands, 1 when --help printed the group's help, -1 with one line on
 * stderr.
 */
int	 launch_cli_group(const char *group, int argc, char **argv);
/* The last value of flag, "" for a switch given, or NULL if absent. */
const char *launch_cli_get(const struct cli_args *, const char *flag);
void	 launch_cli_help(const struct cli_cmd *, FILE *);
/*
 * aisb --help / aisb help [TOPIC]: 0, or 78 with one line on stderr for
 * an unknown topic.
 */
int	 launch_cli_usage(const char *topic, FILE *);
/*
 * aisb help [--commands | --flags COMMAND | TOPIC...]: help, or the lists
 * of commands and flags the completion scripts read, from the same table.
 */
int	 launch_cli_help_cmd(int argc, char **argv);
/* A flag's duration: "7d", "12h", "30m", "90s", "3600" into seconds. */
int	 launch_duration_parse(const char *, long long *secs);

#endif
