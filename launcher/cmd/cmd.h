/*
 * aisb's commands (cmd/): the front of the launcher.  A command parses
 * its argv with cli.c's table, calls the engine below it and prints;
 * main.c's table dispatches to it (and says, beside the table, how to add
 * one).  The layers, each including only those below it (docs/
 * launcher.md, "Layout"; tests/cli/layout.sh):
 *
 *	main.c -> cmd/ -> session/ -> image/, win32/ -> policytools/,
 *	draft/ -> host/
 *
 * Every handler takes argv from its own name on (aisb run: aisb's whole
 * argv) and returns the process's exit status.
 */
#ifndef AISB_CMD_H
#define AISB_CMD_H

#include <stdio.h>

#include "exitcode.h"	/* EXIT_ENFORCE, EXIT_CONFIG */

/* aisb [flags] [--] COMMAND, aisb run (run.c) */
int	launch_cmd_run(int argc, char **argv);
/* aisb sessions ls|show|verify (sessions.c) */
int	launch_cmd_sessions(int argc, char **argv);
/* aisb clean (clean.c) */
int	launch_cmd_clean(int argc, char **argv);
/* aisb doctor [--image REF] (doctor.c) */
int	launch_cmd_doctor(int argc, char **argv);
/* aisb image build|containerfile|ls (image.c) */
int	launch_cmd_image(int argc, char **argv);
/* aisb gate up|down|ls|status (gate.c) */
int	launch_cmd_gate(int argc, char **argv);
/* run.c: AISB_TEST_UPSTREAM_CA said on stderr when set (gate NULL: a
 * session's own gate, else that named gate's) */
void	launch_warn_test_env(const char *gate);
/* aisb policy check|print|test|derive|suggest (policy.c) */
int	launch_cmd_policy(int argc, char **argv);
/* aisb agents [NAME]: the list, or one recipe with where each field is */
int	launch_cmd_agents(int argc, char **argv);
/* aisb changes|apply|discard|recover|undo ID, aisb transactions
 * (snapshot.c) */
int	launch_cmd_draft(int argc, char **argv);
/* aisb draft status|changes|commit|discard|recover NAME, aisb draft ls
 * (draft.c) */
int	launch_cmd_snapshot(int argc, char **argv);
/* aisb trust FILE...: accept what a bind session wrote (trust.c) */
int	launch_cmd_trust(int argc, char **argv);
/* aisb pending, approve ID once|session|always, deny ID (ask.c) */
int	launch_cmd_ask(int argc, char **argv);
/* aisb version, aisb --version; aisb --help (cli.c) */
int	launch_cmd_version(int argc, char **argv);
int	launch_cmd_usage(int argc, char **argv);

/*
 * aisb doctor, aisb agents (agents.c): one line per agent; with o
 * (spec.h, launch_spec_opts), whether the image a session here would use
 * for it is built.
 */
struct launch_agents;
struct launch_opts;
void	launch_agents_print(const struct launch_agents *,
	    const struct launch_opts *, FILE *);

/*
 * aisb doctor's identity lines (doctorid.c): aisb's version and plan
 * protocol, the SHA-256 of aisb, aisb-gate and aisb-enforce as sessions
 * find them, the enforcer's state, the image a session would use; each
 * hash into id ("" when unknown).  A program not found or an enforcer
 * sessions refuse is a FAIL in f.
 */
struct launch_host_facts;
struct launch_doctor_id {
	char	 aisb[65];
	char	 gate[65];
	char	 enforce[65];
};
void	launch_doctor_identity(struct launch_host_facts *, const char *image,
	    struct launch_doctor_id *);
/*
 * The container checks, probe(f, 1), or their stored passing run under
 * the same identity (id, podman, image, options; doctorid.c), said as
 * stored; fresh: run them whatever is stored.  A passing run is stored.
 * probe's value, or 0 for a stored run.
 */
int	launch_doctor_stored(struct launch_host_facts *,
	    const struct launch_doctor_id *, int fresh,
	    int (*probe)(struct launch_host_facts *, int));

#endif
