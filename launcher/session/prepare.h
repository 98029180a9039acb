/*
 * Before a session runs, and for its previews: its policy, a named gate's,
 * the agent recipe and what it adds (prepare.c).  Each says what is wrong
 * on stderr, in one line, itself.
 */
#ifndef AISB_SESSION_PREPARE_H
#define AISB_SESSION_PREPARE_H

struct launch_opts;
struct launch_agents;
struct launch_agent;
struct policy;

/* The recipe a session uses, and the policy it adds its hosts to. */
struct launch_run_agent {
	struct launch_agents		*set;	/* NULL: no agent */
	const struct launch_agent	*a;
	char				*yaml;	/* the merged policy; NULL:
						   a named gate's, unchanged */
};

/* o's policy, or NULL after its errors (file:line:col) on stderr. */
struct policy	*launch_load_policy(const struct launch_opts *);
/*
 * A session under a policy nobody named says so first, and how to write
 * one's own; a --gate NAME session, that its policy is the gate's.
 */
void	 launch_say_default_policy(const struct launch_opts *,
	    const struct policy *);
/*
 * A base image from a config file or the environment is said first,
 * naming the file (and line) or the variable.
 */
void	 launch_say_image(const struct launch_opts *);
/*
 * --gate NAME: the session's policy becomes the one that gate enforces;
 * a policy chosen anywhere but the defaults must be that very file.
 * 0 or -1.
 */
int	 launch_use_named_gate(struct launch_opts *);
/*
 * Which recipe applies: --agent's, else the one whose command is the
 * command's argv[0] (said on stderr); none: neither.  0 (ra->a may be
 * NULL) or -1.  Free ra with launch_run_agent_free either way.
 */
int	 launch_pick_agent(const struct launch_opts *,
	    struct launch_run_agent *ra);
void	 launch_run_agent_free(struct launch_run_agent *);
/*
 * The recipe in the session: its hosts merged into *pp (or, named,
 * checked against a named gate's policy, never widened), its setenv
 * before the user's --env, and with hint a line when none of its
 * credential variables is passed.  0 or -1.
 */
int	 launch_apply_agent(struct launch_opts *, struct launch_run_agent *ra,
	    int named, int hint, struct policy **pp);

#endif
