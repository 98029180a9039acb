/*
 * Named gates, private to the launcher: what `aisb gate` (cmd/gate.c)
 * needs of the machinery in gates.c (the gate's folder, its lock and
 * state file, its control socket, the supervisor).  Sessions use gates.h.
 */
#ifndef AISB_GATES_INT_H
#define AISB_GATES_INT_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>

/* The state file, written once by the supervisor when the gate is up. */
struct gates_state {
	pid_t			 sup, gate;
	unsigned long long	 sup_start, gate_start;
	unsigned		 port, idle;
	unsigned		 ask;		/* --ask SECONDS; 0: none */
	char			 policy[PATH_MAX];
};

/*
 * $XDG_STATE_HOME/aisb/gates/NAME into out.  0, or -1 with err (a bad
 * name, no state folder).
 */
int	 gates_dir(const char *name, char *out, size_t len, char *err,
	    size_t errlen);
/* The group the gate drops to, which reads its folder; (gid_t)-1: none. */
gid_t	 gates_group(void);
/* flock(2)s dir/lock; the descriptor to close, or -1. */
int	 gates_lock(const char *dir);
/* dir/state into st: 0, or -1 when missing or incomplete. */
int	 gates_state_read(const char *dir, struct gates_state *st);
/* 1 when both the supervisor and the gate of st are alive. */
int	 gates_state_up(const struct gates_state *st);
/*
 * One command on the gate's control socket; its answer (up to len - 1
 * bytes; the first line unless whole) into resp.  0 or -1.
 */
int	 gates_control(const char *dir, const char *cmd, char *resp,
	    size_t len, int whole);
/*
 * dir/control connected and cmd (one line) written on it: the descriptor
 * (close-on-exec), for an answer that streams (watch), or -1 with errno.
 */
int	 gates_control_open(const char *dir, const char *cmd);
/*
 * Takes back the credentials of sessions whose launcher is gone; returns
 * how many are attached.  Called with the lock held.
 */
int	 gates_reap(const char *dir);
/* Removes the run-time files; the audit log and gate.log stay. */
void	 gates_remove_runtime(const char *dir);
/*
 * Starts the supervisor (a grandchild in a session of its own; the lock
 * fd is closed in it) and waits for its word, "ok PORT\n" or why not,
 * into msg (NUL-terminated; empty when it died).  0, or -1 with errno
 * when it could not be started.  closes: the gate runs with
 * --reload-closes (aisb gate up --reload-closes); ask: with --ask ask
 * (seconds; 0: none).
 */
int	 gates_spawn(const char *dir, const char *policy, unsigned idle,
	    int closes, unsigned ask, int lockfd, char *msg, size_t msglen);

#endif
