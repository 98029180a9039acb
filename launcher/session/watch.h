/*
 * The session's watcher (watch.c): what happens to a session whose aisb
 * is killed.
 */
#ifndef AISB_SESSION_WATCH_H
#define AISB_SESSION_WATCH_H

#include <sys/types.h>

#include <stddef.h>

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
