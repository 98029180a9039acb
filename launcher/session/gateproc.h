/*
 * A session's own gate (gateproc.c): aisb-gate on 127.0.0.1:0, up before any
 * container, stopped with the session.
 */
#ifndef AISB_SESSION_GATEPROC_H
#define AISB_SESSION_GATEPROC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct launch_gate {
	pid_t			 pid;		/* -1: not running */
	uint16_t		 port;		/* on 127.0.0.1 */
	int			 shared;	/* a named gate: not our child */
	unsigned long long	 start;		/* shared: its /proc start time */
	int			 readyfd;	/* its ready pipe, while pending */
	int			 pending;	/* spawned, readiness not read */
	const char		*logfile;	/* for the messages */
};

/*
 * Starts aisb-gate on 127.0.0.1:0 for one session and waits until it
 * accepts connections (it reports its port on a pipe).  Its log goes to
 * logfile, its audit lines to auditfile; the credential stays in
 * tokenfile.  control, if not NULL, is its control socket.  -1 with err
 * when it does not come up.
 */
int	 launch_gate_start(struct launch_gate *, const char *policy,
	    const char *tokenfile, const char *auditfile, const char *logfile,
	    const char *control, char *err, size_t errlen);
/*
 * launch_gate_start() in two steps, so that a session prepares its image
 * while the gate starts: spawn returns once the gate runs (logfile must
 * outlive the gate), ready once it reported its port.  Nothing may reach
 * for the gate's port before ready returned 0; on -1 the gate is
 * stopped.
 */
int	 launch_gate_spawn(struct launch_gate *, const char *policy,
	    const char *tokenfile, const char *auditfile, const char *logfile,
	    const char *control, char *err, size_t errlen);
/*
 * The same, the gate recording every connection into capture (created by
 * the gate, O_EXCL, before its privilege drop; its folder must exist)
 * with a bound of capture_max bytes (aisb-gate --record, --record-max).
 * capture NULL: no recording.
 */
int	 launch_gate_spawn_record(struct launch_gate *, const char *policy,
	    const char *tokenfile, const char *auditfile, const char *logfile,
	    const char *control, const char *capture, uint64_t capture_max,
	    char *err, size_t errlen);
/*
 * The same with more aisb-gate flags after the others: extra is a
 * NULL-terminated list of at most LAUNCH_GATE_EXTRA words (no secret:
 * argv is visible), or NULL.  --learn passes "--learn" (run.c).
 */
#define LAUNCH_GATE_EXTRA	8
int	 launch_gate_spawn_args(struct launch_gate *, const char *policy,
	    const char *tokenfile, const char *auditfile, const char *logfile,
	    const char *control, const char *capture, uint64_t capture_max,
	    const char *const *extra, char *err, size_t errlen);
/*
 * All of the above, and an inspecting gate's (docs/gate.md, "Inspected
 * hosts"): the secrets on a descriptor of their own (secrets_fd, given
 * to the gate as its descriptor 4: --secrets-fd 4; -1: none), the CA's
 * certificate written to ca_out (NULL: none), upstreams' certificates
 * also checked against upstream_ca (NULL: the system's store only).
 */
struct launch_gate_args {
	const char		*policy, *tokenfile, *auditfile, *logfile;
	const char		*control;	/* NULL: none */
	const char		*capture;	/* NULL: no recording */
	uint64_t		 capture_max;
	const char *const	*extra;		/* NULL-terminated, or NULL */
	int			 secrets_fd;
	const char		*ca_out, *upstream_ca;
};
int	 launch_gate_spawn_with(struct launch_gate *,
	    const struct launch_gate_args *, char *err, size_t errlen);
int	 launch_gate_ready(struct launch_gate *, char *err, size_t errlen);
void	 launch_gate_stop(struct launch_gate *);

#endif
