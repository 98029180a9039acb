/*
 * One session (run.c): the options resolved and the policy prepared
 * (prepare.h), everything after that.
 */
#ifndef AISB_SESSION_RUN_H
#define AISB_SESSION_RUN_H

struct launch_opts;
struct launch_run_agent;
struct launch_secrets;
struct policy;

/*
 * Runs o's command in a session under p (and ra's recipe): the gate,
 * the image, the container, the teardown and the record.  ss holds the
 * secrets read (secrets.h): the gate gets them, the sandbox their
 * placeholders; their values are wiped once the gate has them.  Returns
 * the command's exit status, or aisb's own (77, 78, 124) after a line on
 * stderr.
 */
int	 launch_session_run(const struct launch_opts *o, struct policy *p,
	    const struct launch_run_agent *ra, struct launch_secrets *ss);

#endif
