/*
 * Child processes of the launcher: argv arrays only, never a shell.
 */
#ifndef AISB_PROC_H
#define AISB_PROC_H

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

int	 launch_find_program(const char *name, char *out, size_t len);
pid_t	 launch_spawn(char *const argv[], const int fds[3], int extra_src,
	    int extra_dst);
int	 launch_wait(pid_t, int *status);
int	 launch_exit_code(int status);
/* A process's start time (/proc/PID/stat), 0 when it is gone. */
unsigned long long	 launch_proc_start(pid_t);
/* True while pid runs and is still the process that started at start. */
int	 launch_proc_alive(pid_t, unsigned long long start);

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
int	 launch_gate_ready(struct launch_gate *, char *err, size_t errlen);
void	 launch_gate_stop(struct launch_gate *);

/* ---- the session's watcher (watch.c) ----------------------------------- */

#define LAUNCH_WATCH_MAX_FILES	4

struct launch_watch_spec {
	const char		*podman;
	const char		*container;	/* podman stop NAME */
	pid_t			 gate_pid;	/* <= 0: no gate of our own */
	unsigned long long	 gate_start;	/* its /proc start time */
	const char		*unlink[LAUNCH_WATCH_MAX_FILES]; /* NULL-ended */
	const char		*umount;	/* idmapped workspace, or NULL */
};

/*
 * Forks a process, in a session of its own and not aisb's child, that
 * does what w says if aisb dies before launch_watch_dismiss(): podman
 * stop of the container (LAUNCH_STOP_GRACE_S, then SIGKILL), SIGTERM to
 * the gate, the files unlinked, the workspace detached.  *fd is the pipe
 * that ties it to aisb (close-on-exec: no other child holds it).  0, or
 * -1 with err.
 */
int	 launch_watch_start(const struct launch_watch_spec *w, int *fd,
	    char *err, size_t errlen);
/* The session was torn down: the watcher exits without doing anything. */
void	 launch_watch_dismiss(int *fd);

#endif
