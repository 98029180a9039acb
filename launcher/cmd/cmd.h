/*
 * aisb, the launcher: subcommand entry points.  Each returns the process
 * exit status.
 */
#ifndef AISB_LAUNCH_H
#define AISB_LAUNCH_H

#include "exitcode.h"	/* EXIT_ENFORCE, EXIT_CONFIG */

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
/*
 * The same for pip: the policy `aisb policy derive pip` prints, and pip's
 * index-url, extra-index-url and find-links as pip install would see them
 * into vals[0..2] (malloc'd, the caller frees; NULL: not configured).
 */
int	launch_derive_pip(FILE *, char **vals);
int	launch_cmd_run(int argc, char **argv);
/* aisb policy suggest ID|LOG (suggest.c; suggest.h) */
int	launch_cmd_suggest(int argc, char **argv);
/*
 * A session's folder from its id or a unique prefix (manage.c): 0, or an
 * exit status after one line on stderr.
 */
int	launch_session_find(const char *want, char *path, size_t pathlen);
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

struct policy;
/*
 * polyaml.c: base as policy YAML from its "allow:" on, with the entries
 * extra writes (it returns how many) after base's allow rules; s as a
 * double-quoted YAML string.
 */
void	launch_policy_yaml(FILE *, const struct policy *base,
	    size_t (*extra)(FILE *, void *), void *ctx);
void	launch_yaml_str(FILE *, const char *s);

#endif
