/*
 * --watch: the gate reloads by itself when a file a reload reads changes
 * (the policy, the users file and the policies it names, the token file),
 * exactly as on SIGHUP.  Made for a policy mounted from a Kubernetes
 * ConfigMap or Secret, which the kubelet updates without changing a file
 * in place: it writes a new hidden folder (..2026_12_01_10_00_00.123) and
 * renames a symlink to it over ..data, which the visible names point
 * through (gate.yaml -> ..data/gate.yaml).
 *
 * So inotify watches the folders the files are named in, not the files,
 * whose inodes a link swap or an editor's rename replace.  Any event
 * there (re)starts a settle timer of WATCH_SETTLE_MS, so a burst is one
 * look.  The look stats every file, following links, and folds what it
 * sees (device, inode, size, both times to the nanosecond, or the error)
 * into a signature: the reload runs when that changed since the last
 * look, so events of other files in the folder cost a few stats.  A slow
 * poll (WATCH_POLL_S) runs beside inotify for what it cannot see (a link
 * into another folder, a file system without events); without inotify
 * (its per-user instance limit is often reached on busy nodes) the poll
 * runs every WATCH_POLL_FAST_S instead.
 *
 * A refused reload (an invalid file, one half written) keeps the old
 * policy as SIGHUP does; the signature it was tried with is kept too, so
 * the next change tries again.  Folders are watched by the descriptors
 * config.c opened before --user dropped privileges (/proc/self/fd/N),
 * so a gate that may only search them still watches them.  With
 * --workers, worker 0 watches: it asks the supervisor to pass a SIGHUP to
 * the others and reloads itself, as the control socket's "reload" does.
 * Bounds: WATCH_MAX_FOLDERS folders (more: the poll sees the rest), one
 * read of WATCH_READ bytes of events a turn (their contents are not
 * read: any event is a reason to look).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "gate/gate.h"

#define WATCH_SETTLE_MS		250	/* after the last event of a burst */
#define WATCH_POLL_S		30	/* beside inotify */
#define WATCH_POLL_FAST_S	2	/* without it */
#define WATCH_MAX_FOLDERS	32
#define WATCH_READ		4096	/* bytes of events read a turn */
#define WATCH_MASK	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | \
			IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct gate_watch {
	struct gate	*g;
	int		 ifd;		/* inotify; -1: polling */
	struct event	*ev;		/* ifd readable */
	struct event	*settle;
	struct event	*poll;
	uint64_t	 sig;		/* of the last look */
	int		 told;		/* the bound was said */
};

/* One file into the signature (FNV-1a, 64 bits: change, not trust). */
static uint64_t
fold(uint64_t h, int dirfd, const char *name)
{
	struct stat	 st;
	int64_t		 v[8];
	size_t		 i;
	unsigned char	*p = (unsigned char *)v;

	memset(v, 0, sizeof(v));
	if (fstatat(dirfd, name, &st, 0) == -1)
		v[0] = errno;
	else {
		v[1] = (int64_t)st.st_dev;
		v[2] = (int64_t)st.st_ino;
		v[3] = (int64_t)st.st_size;
		v[4] = st.st_mtim.tv_sec;
		v[5] = st.st_mtim.tv_nsec;
		v[6] = st.st_ctim.tv_sec;
		v[7] = st.st_ctim.tv_nsec;
	}
	for (i = 0; i < sizeof(v); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/*
 * Every file a reload reads, as config.c opens it: by name in the folder
 * opened at start, a user's relative policy path in the users file's.
 */
static uint64_t
signature(const struct gate *g)
{
	uint64_t	 h = 14695981039346656037ULL;
	const char	*pp;
	size_t		 i;

	h = fold(h, g->policy_dir, g->policy_name);
	if (g->cfg.token_file != NULL)
		h = fold(h, g->token_dir, g->token_name);
	if (g->cfg.users_path == NULL)
		return h;
	h = fold(h, g->users_dir, g->users_name);
	for (i = 0; g->users != NULL && i < gate_users_count(g->users); i++)
		if ((pp = gate_users_policy_path(g->users, i)) != NULL)
			h = fold(h, pp[0] == '/' ? AT_FDCWD : g->users_dir, pp);
	return h;
}

/*
 * inotify on the folder of name in dirfd (its descriptor's path under
 * /proc/self/fd; "." for AT_FDCWD).  0, or -1 with errno.
 */
static int
watch_folder(struct gate_watch *w, int dirfd, const char *name)
{
	char		 path[PATH_MAX + 32];
	const char	*slash = strrchr(name, '/');
	int		 n, len = slash == NULL ? 0 : slash == name ? 1 :
			    (int)(slash - name);

	if (name[0] == '/')
		n = snprintf(path, sizeof(path), "%.*s", len, name);
	else if (dirfd == AT_FDCWD)
		n = snprintf(path, sizeof(path), "./%.*s", len, name);
	else
		n = snprintf(path, sizeof(path), "/proc/self/fd/%d/%.*s",
		    dirfd, len, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return inotify_add_watch(w->ifd, path, WATCH_MASK) == -1 ? -1 : 0;
}

/*
 * A new inotify instance on today's folders (the users file may name
 * others than yesterday's): 0, or -1 (logged) and the fast poll.
 */
static int
watch_folders(struct gate_watch *w)
{
	const struct gate	*g = w->g;
	const char		*pp, *what = g->cfg.policy_path;
	size_t			 i, n = 0;
	int			 rc;

	if (w->ev != NULL) {
		event_free(w->ev);
		w->ev = NULL;
	}
	if (w->ifd != -1)
		close(w->ifd);
	if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		goto fail;
	rc = watch_folder(w, g->policy_dir, g->policy_name);
	if (rc == 0 && g->cfg.token_file != NULL) {
		what = g->cfg.token_file;
		rc = watch_folder(w, g->token_dir, g->token_name);
	}
	if (rc == 0 && g->cfg.users_path != NULL) {
		what = g->cfg.users_path;
		rc = watch_folder(w, g->users_dir, g->users_name);
	}
	for (i = 0; rc == 0 && g->users != NULL &&
	    i < gate_users_count(g->users); i++) {
		if ((pp = gate_users_policy_path(g->users, i)) == NULL)
			continue;
		if (++n > WATCH_MAX_FOLDERS - 3) {
			if (!w->told)
				log_warnx("--watch: more than %d folders; the "
				    "poll (every %ds) sees the others",
				    WATCH_MAX_FOLDERS, WATCH_POLL_S);
			w->told = 1;
			break;
		}
		what = pp;
		rc = watch_folder(w, pp[0] == '/' ? AT_FDCWD : g->users_dir, pp);
	}
	if (rc == -1) {
		log_warn("--watch: the folder of %s", what);
		goto fail;
	}
	return 0;
 fail:
	if (w->ifd != -1)
		close(w->ifd);
	w->ifd = -1;
	return -1;
}

static void
settle_arm(struct gate_watch *w)
{
	struct timeval	 tv = { 0, WATCH_SETTLE_MS * 1000 };

	if (evtimer_add(w->settle, &tv) == -1)
		log_warnx("--watch: cannot arm the settle timer");
}

static void
poll_arm(struct gate_watch *w)
{
	struct timeval	 tv = { w->ifd != -1 ? WATCH_POLL_S :
			    WATCH_POLL_FAST_S, 0 };

	if (evtimer_add(w->poll, &tv) == -1)
		log_warnx("--watch: cannot arm the poll");
}

/* Events: their contents do not matter, only that there were some. */
static void
events_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate_watch	*w = arg;
	char			 buf[WATCH_READ]
			    __attribute__((aligned(__alignof__(struct inotify_event))));

	(void)what;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	settle_arm(w);
}

static int
watch_events(struct gate_watch *w)
{
	if (watch_folders(w) == -1) {
		log_warnx("--watch: polling every %ds instead of inotify",
		    WATCH_POLL_FAST_S);
		return -1;
	}
	if ((w->ev = event_new(w->g->base, w->ifd, EV_READ | EV_PERSIST,
	    events_cb, w)) == NULL || event_add(w->ev, NULL) == -1) {
		log_warnx("--watch: cannot watch the inotify descriptor; "
		    "polling every %ds", WATCH_POLL_FAST_S);
		if (w->ev != NULL)
			event_free(w->ev);
		w->ev = NULL;
		close(w->ifd);
		w->ifd = -1;
		return -1;
	}
	return 0;
}

/* The settle timer or the poll: reload when the files changed. */
static void
look(evutil_socket_t fd, short what, void *arg)
{
	struct gate_watch	*w = arg;
	struct gate		*g = w->g;
	uint64_t		 sig = signature(g);

	(void)fd;
	(void)what;
	if (sig != w->sig) {
		w->sig = sig;
		log_info("--watch: a file of the configuration changed; "
		    "reloading");
		/* with workers, the supervisor passes a SIGHUP to the others */
		if (g->cfg.workers > 1 && kill(getppid(), SIGHUP) == -1)
			log_warn("--watch: telling the other workers");
		(void)gate_reload(g);
		/* the users file may name other folders now */
		if (g->cfg.users_path != NULL)
			(void)watch_events(w);
		/* changed while reloading: look again */
		if (signature(g) != w->sig)
			settle_arm(w);
	}
	/* without inotify (maybe lost just now) the poll is the fast one */
	if (w->ifd == -1 || !evtimer_pending(w->poll, NULL))
		poll_arm(w);
}

struct gate_watch *
gate_watch_open(struct gate *g)
{
	struct gate_watch	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->g = g;
	w->ifd = -1;
	w->sig = signature(g);
	if ((w->settle = evtimer_new(g->base, look, w)) == NULL ||
	    (w->poll = evtimer_new(g->base, look, w)) == NULL) {
		gate_watch_close(w);
		return NULL;
	}
	(void)watch_events(w);
	poll_arm(w);
	log_info("--watch: %s", w->ifd != -1 ? "inotify on the folders of "
	    "the configuration" : "polling");
	return w;
}

void
gate_watch_close(struct gate_watch *w)
{
	if (w == NULL)
		return;
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->ifd != -1)
		close(w->ifd);
	if (w->settle != NULL)
		event_free(w->settle);
	if (w->poll != NULL)
		event_free(w->poll);
	free(w);
}
