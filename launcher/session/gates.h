/*
 * Named gates: one aisb-gate shared by many sessions, started by
 * `aisb gate up NAME`, kept by a small supervisor that reaps it when no
 * session has used it for a while (docs/launcher.md, "Named gates").
 */
#ifndef AISB_GATES_H
#define AISB_GATES_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define LAUNCH_GATE_NAME_MAX	32
/* the gate's CA certificate in its folder (--ca-out), for its sessions */
#define LAUNCH_GATE_CA		"gate-ca.pem"
#define LAUNCH_TOKENS_MAX	65536	/* the gate's own bound (auth.c) */

struct launch_session;

/* What a session needs of the named gate it attached to. */
struct launch_shared {
	char			 name[LAUNCH_GATE_NAME_MAX + 1];
	char			 dir[PATH_MAX];
	pid_t			 gate_pid;
	unsigned long long	 gate_start;	/* /proc start time: pid reuse */
	uint16_t		 port;
	off_t			 audit_off;	/* the gate's audit log at attach */
	int			 attached;
};

/* [a-z0-9][a-z0-9_-]{0,31} */
int	 launch_gate_name_ok(const char *);

/*
 * The policy file the named gate enforces, into path.  0, or -1 with err
 * (no such gate up).
 */
int	 launch_gate_policy(const char *name, char *path, size_t len,
	    char *err, size_t errlen);

/*
 * Adds the session's credential to the named gate and has it reload.
 * -1 with err when the gate is not up or does not take it.
 */
int	 launch_gate_attach(const char *name, const struct launch_session *,
	    struct launch_shared *, char *err, size_t errlen);

/*
 * Takes the credential back, and copies the session's audit lines from
 * the gate's log into the session folder (audit.jsonl).
 */
void	 launch_gate_detach(struct launch_shared *, const struct launch_session *);

/*
 * The gate's credential file without the lines of drop_session
 * ("session-<id>"; NULL: none), with add appended (NULL: nothing), into
 * out.  Comments and other lines are kept.  Returns the length, or -1
 * when it does not fit outlen (including the NUL).
 */
ssize_t	 launch_tokens_edit(const char *in, const char *drop_session,
	    const char *add, char *out, size_t outlen);

#endif
