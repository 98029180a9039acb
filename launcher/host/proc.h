/*
 * Child processes of the launcher: argv arrays only, never a shell.
 */
#ifndef AISB_PROC_H
#define AISB_PROC_H

#include <sys/types.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

int	 launch_find_program(const char *name, char *out, size_t len);
/*
 * fork + execv of a child of its own process group that dies with aisb:
 * fds[i] (-1: inherited) its descriptor i for i < 3, extra[k] its
 * descriptor 3 + k (at most 8), nothing else open.  The pid, or -1.
 */
pid_t	 launch_spawn_fds(char *const argv[], const int fds[3],
	    const int *extra, size_t nextra);
/* The same with one extra descriptor (-1: none), which must go to 3. */
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

/*
 * A process's start time (/proc/PID/stat), 0 when it is gone; with state,
 * also its state letter ('R', 'S', 'Z', ...).
 */
unsigned long long	 launch_proc_stat(pid_t, char *state);
unsigned long long	 launch_proc_start(pid_t);
/* True while pid runs and is still the process that started at start. */
int	 launch_proc_alive(pid_t, unsigned long long start);

#endif
