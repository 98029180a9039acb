/*
 * Child processes of the launcher: argv arrays only, never a shell.
 */
#ifndef AISB_PROC_H
#define AISB_PROC_H

#include <sys/types.h>

#include <signal.h>
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
/*
 * fork + execv of a foreground child (a session's podman): own_group puts
 * it in a process group of its own, mask is the signal mask it execs
 * with.  The pid, or -1 with errno.
 */
pid_t	 launch_spawn_fg(char *const argv[], int own_group,
	    const sigset_t *mask);
int	 launch_wait(pid_t, int *status);
int	 launch_exit_code(int status);
/* A podman query (images, inspect, rmi): seconds, not a build. */
#define LAUNCH_QUICK_TIMEOUT_MS	(60 * 1000)

/*
 * Runs argv (PATH search, no shell) and returns its exit status, 128+N
 * when killed by signal N, or -1 with err filled in when it could not be
 * run or ran past timeout_ms (then it is killed; 0 means no limit).
 * in/inlen, if in is not NULL, is fed to its stdin, else stdin is
 * /dev/null.  Its stdout is kept in out (at most outlen - 1 bytes, NUL-
 * terminated; the rest is read and dropped) unless out is NULL, and then
 * goes to our stderr when LAUNCH_EXEC_SHOW is set.  Its stderr goes to our
 * stderr with LAUNCH_EXEC_SHOW; otherwise its last line lands in err
 * whenever the status is not 0.  err must not be NULL.  SIGPIPE is ignored
 * while it runs (and restored), the child starts with default signals.
 */
#define LAUNCH_EXEC_SHOW	0x01
/* stdout (when out is NULL) and stderr to ours, stderr's tail into err */
#define LAUNCH_EXEC_TEE		0x02
int	launch_exec(char *const argv[], const char *in, size_t inlen,
	    char *out, size_t outlen, int timeout_ms, int flags, char *err,
	    size_t errlen);
/* The same with the child's environment given (NULL: ours). */
int	launch_exec_env(char *const argv[], char *const envp[], const char *in,
	    size_t inlen, char *out, size_t outlen, int timeout_ms, int flags,
	    char *err, size_t errlen);
/*
 * launch_exec() with no input, its output shown with verbose: 0 when it
 * exited 0, else -1 with err.
 */
int	launch_run_quiet(char *const argv[], char *out, size_t outlen,
	    int timeout_ms, int verbose, char *err, size_t errlen);

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
