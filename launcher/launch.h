/*
 * aisb, the launcher: subcommand entry points.  Each returns the process
 * exit status.
 */
#ifndef AISB_LAUNCH_H
#define AISB_LAUNCH_H

#define EXIT_ENFORCE	77	/* enforcement could not be set up */
#define EXIT_CONFIG	78	/* usage, configuration or policy error */

int	launch_cmd_policy(int argc, char **argv);
int	launch_cmd_derive(int argc, char **argv);
/* aisb policy derive --help: every kind, its options (derive.c) */
#include <stdio.h>
/*
 * The policy `aisb policy derive npm` prints, written to f, and the
 * registry URL npm is configured with into registry (derive.c; the
 * install session of tools.c uses both).  0, or -1 with a line on stderr.
 */
int	launch_derive_npm(FILE *, char *registry, size_t reglen);
int	launch_cmd_run(int argc, char **argv);
int	launch_cmd_sessions(int argc, char **argv);
int	launch_cmd_clean(int argc, char **argv);

#endif
