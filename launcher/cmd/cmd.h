/*
 * aisb, the launcher: subcommand entry points.  Each returns the process
 * exit status.
 */
#ifndef AISB_LAUNCH_H
#define AISB_LAUNCH_H

#include "exitcode.h"	/* EXIT_ENFORCE, EXIT_CONFIG */

int	launch_cmd_policy(int argc, char **argv);
int	launch_cmd_run(int argc, char **argv);
int	launch_cmd_sessions(int argc, char **argv);
int	launch_cmd_clean(int argc, char **argv);
/* aisb image build|ls. */
int	launch_cmd_image(int argc, char **argv);
/* aisb doctor [--image REF]. */
int	launch_cmd_doctor(int argc, char **argv);
/* aisb gate up|down|ls|status */
int	launch_cmd_gate(int argc, char **argv);
/* aisb agents [NAME]: the list, or one recipe with where each field is. */
int	launch_cmd_agents(int argc, char **argv);
/* aisb changes|apply|discard|recover ID, aisb transactions (snapshot.c) */
int	launch_cmd_snapshot(int argc, char **argv);


/*
 * aisb doctor, aisb agents (agents.c): one line per agent; with o
 * (spec.h, launch_spec_opts), whether the image a session here would use
 * for it is built.
 */
struct launch_agents;
struct launch_opts;
void	launch_agents_print(const struct launch_agents *,
	    const struct launch_opts *, FILE *);

#endif
