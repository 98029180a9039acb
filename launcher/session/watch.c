/*
 * The session's watcher: a process that outlives the launcher by design.
 *
 * If aisb dies without its teardown (SIGKILL, the OOM killer, a crash),
 * its per-session gate dies with it (PR_SET_PDEATHSIG, host/proc.c), but
 * the container does not: podman's conmon keeps it running, with its way out
 * if the gate were a named one, and past any --timeout, which only the
 * launcher enforces.  The watcher is forked just before podman run, in a
 * session of its own (a kill of aisb's process group spares it), holding
 * the read end of a pipe whose only write end is aisb's.  A byte on the
 * pipe is aisb's teardown dismissing it; end of file without one is aisb's
 * death, and the watcher then stops the container as aisb would (podman
 * stop: the stop signal, LAUNCH_STOP_GRACE_S seconds, then SIGKILL), stops
 * the gate if it still runs, deletes the session's secrets and detaches
 * its idmapped workspace.  What is left after that, `aisb clean` removes.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/ids.h"
#include "image/image-t.h"
#include "session/podman.h"
#include "host/proc.h"
#include "session/watch.h"

/* The gate still runs: the same process, not yet a zombie. */
static int
gate_runs(const struct launch_watch_spec *w)
{
	char	 state = 0;

	return w->gate_pid > 0 && w->gate_start != 0 &&
	    launch_proc_stat(w->gate_pid, &state) == w->gate_start &&
	    state != 'Z';
}

static void __attribute__((noreturn))
watch(int fd, const struct launch_watch_spec *w)
{
	char		 c, err[256], grace[16];
	char		*stop[] = { (char *)w->podman, (char *)"stop",
	    (char *)"--time", grace, (char *)w->container, NULL };
	struct timespec	 ts = { 0, 100 * 1000 * 1000 };
	ssize_t		 n;
	size_t		 i;
	int		 k;

	while ((n = read(fd, &c, 1)) == -1 && errno == EINTR)
		;
	if (n == 1)
		_exit(0);	/* dismissed: aisb tore the session down */

	/* aisb is gone: what it would have done, without it */
	snprintf(grace, sizeof(grace), "%d", LAUNCH_STOP_GRACE_S);
	if (gate_runs(w))
		kill(w->gate_pid, SIGTERM);
	(void)launch_exec(stop, NULL, 0, NULL, 0,
	    (LAUNCH_STOP_GRACE_S + 30) * 1000, 0, err, sizeof(err));
	for (k = 0; k < 30 && gate_runs(w); k++)
		nanosleep(&ts, NULL);
	if (gate_runs(w))
		kill(w->gate_pid, SIGKILL);
	for (i = 0; i < LAUNCH_WATCH_MAX_FILES && w->unlink[i] != NULL; i++)
		(void)unlink(w->unlink[i]);
	if (w->umount != NULL)
		(void)launch_ids_umount(w->umount);
	_exit(0);
}

int
launch_watch_start(const struct launch_watch_spec *w, int *fdp, char *err,
    size_t errlen)
{
	sigset_t	 none;
	pid_t		 pid, mid;
	int		 p[2], devnull, status;

	*fdp = -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((mid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (mid == 0) {
		/* twice: the watcher is never aisb's child to reap */
		if ((pid = fork()) != 0)
			_exit(pid == -1 ? 1 : 0);
		close(p[1]);
		(void)setsid();
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		/* holds no terminal or pipe of the caller open (a `| tee`) */
		if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
		    dup2(devnull, 0) == -1 || dup2(devnull, 1) == -1 ||
		    dup2(devnull, 2) == -1)
			_exit(1);
		if (p[0] != 3 && (dup2(p[0], 3) == -1 ||
		    close_range(4, ~0U, 0) == -1))
			_exit(1);
		if (p[0] == 3 && close_range(4, ~0U, 0) == -1)
			_exit(1);
		/* it holds what aisb held: no core, no ptrace by others */
		(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		(void)prctl(PR_SET_NAME, "aisb-watch", 0, 0, 0);
		watch(3, w);
	}
	close(p[0]);
	while (waitpid(mid, &status, 0) == -1 && errno == EINTR)
		;
	if (launch_exit_code(status) != 0) {
		snprintf(err, errlen, "fork: the session watcher did not start");
		close(p[1]);
		return -1;
	}
	*fdp = p[1];
	return 0;
}

void
launch_watch_dismiss(int *fdp)
{
	if (*fdp == -1)
		return;
	if (write(*fdp, "d", 1) != 1) {
		/* then it sees end of file and stops what is left: harmless */
	}
	close(*fdp);
	*fdp = -1;
}
