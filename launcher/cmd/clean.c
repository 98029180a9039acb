/*
 * aisb clean [--all] [--volumes[=GLOB]] [--images] [--older-than
 * DURATION]: what sessions left, in order: their containers (stopped
 * ones; running ones with --all, or whose launcher is gone), then the
 * gates, secrets, mounts and stages of sessions whose container is gone,
 * then the session folders --older-than and the user config's retention
 * cap let go (retain.h), then home volumes no container uses, then
 * images (podman keeps what a container uses, so they come last).
 */
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "file.h"
#include "host/paths.h"
#include "host/proc.h"
#include "image/store.h"
#include "session/folder.h"
#include "session/ids.h"
#include "session/mounts.h"
#include "session/options.h"
#include "session/retain.h"
#include "session/snapshot.h"
#include "session/spec.h"

/* bytes of a podman listing */
#define CLEAN_MAX_PODMAN_OUT	(256 * 1024)

/* What one clean did, for its last line, and whether all of it worked. */
struct clean {
	const char	*podman;
	char		 dir[PATH_MAX];	/* the sessions folder */
	int		 have_dir;
	char		*running;		/* "\nname\nname\n" */
	size_t		 ncont, ngate, nscratch, nmount, nstage, nvol, nsess;
	size_t		 ntx;		/* drafts' transactions */
	int		 rc;
};

static int
podman_lines(char *const argv[], char *out, size_t outlen)
{
	char	 err[512];
	int	 rc;

	rc = launch_exec(argv, NULL, 0, out, outlen, 60000, 0, err,
	    sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "aisb: %s: %s\n", argv[1], err);
		return -1;
	}
	return 0;
}

/*
 * podman rm, again while it says "device or resource busy": podman 4.3
 * leaves the shm mount of a container that ran in a user namespace busy
 * for a moment after it exits (measured: the first rm a second after the
 * exit fails, the same rm three seconds later succeeds).  At most ~5 s.
 */
#define RM_TRIES	10
#define RM_WAIT_NS	(500L * 1000 * 1000)

static int
podman_rm(char **argv, char *err, size_t errlen)
{
	struct timespec	 ts = { 0, RM_WAIT_NS };
	int		 i, rc = -1;

	for (i = 0; i < RM_TRIES; i++) {
		if ((rc = launch_exec(argv, NULL, 0, NULL, 0, 60000, 0, err,
		    errlen)) == 0 || strstr(err, "resource busy") == NULL)
			break;
		nanosleep(&ts, NULL);
	}
	return rc == 0 ? 0 : -1;
}

/*
 * Is pid an aisb-gate?  (So that a recycled pid is never killed.)  An
 * inspecting gate is not dumpable, which hides its exe link from its own
 * user: then its name, which /proc shows to anyone.
 */
static int
is_gate(pid_t pid)
{
	char	 link[64], exe[PATH_MAX];
	ssize_t	 n;
	FILE	*f;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if ((n = readlink(link, exe, sizeof(exe) - 1)) <= 0 && errno == EACCES) {
		snprintf(link, sizeof(link), "/proc/%d/comm", (int)pid);
		if ((f = fopen(link, "re")) == NULL)
			return 0;
		n = fgets(exe, sizeof(exe), f) != NULL &&
		    strcmp(exe, "aisb-gate\n") == 0;
		fclose(f);
		return (int)n;
	}
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	n = (ssize_t)strlen(exe);
	return n >= 9 && strcmp(exe + n - 9, "aisb-gate") == 0;
}

/* dir/a/b into out; -1 when it does not fit. */
static int
join3(char *out, size_t len, const char *dir, const char *a, const char *b)
{
	char	sub[PATH_MAX];

	if (file_path_join(sub, sizeof(sub), dir, a) == -1)
		return -1;
	return file_path_join(out, len, sub, b);
}

/*
 * The running session containers, as "\nname\nname\n" in c->running (so
 * that "\nname\n" finds one exactly).  Listed apart (podman ps without
 * -a), since the state column is prose ("Up 2 seconds ago") on podman 4.
 * 0 or -1.
 */
static int
list_running(struct clean *c, char *out)
{
	char *ps[] = { (char *)c->podman, (char *)"ps",
	    (char *)"--filter=label=io.aisb.kind=session",
	    (char *)"--format={{.Names}}", NULL };

	if (podman_lines(ps, out, CLEAN_MAX_PODMAN_OUT) == -1 ||
	    (c->running = malloc(strlen(out) + 3)) == NULL)
		return -1;
	snprintf(c->running, strlen(out) + 3, "\n%s\n", out);
	return 0;
}

/*
 * 1. session containers: stopped ones, and with all running ones, and
 * running ones whose launcher (and watcher) is gone.  0 or -1.
 */
static int
clean_containers(struct clean *c, int all, char *out)
{
	char	*line, *save = NULL;
	char	*ps[] = { (char *)c->podman, (char *)"ps", (char *)"-a",
	    (char *)"--filter=label=io.aisb.kind=session",
	    (char *)"--format={{.Names}}", NULL };

	if (podman_lines(ps, out, CLEAN_MAX_PODMAN_OUT) == -1)
		return -1;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char err[512], key[128], *hit;
		char *rm[] = { (char *)c->podman, (char *)"rm", (char *)"-f",
		    line, NULL };
		int orphan = 0;

		snprintf(key, sizeof(key), "\n%s\n", line);
		hit = strstr(c->running, key);
		/*
		 * A running container whose launcher (and watcher) is gone:
		 * nothing will stop it but this.  Only a session of this
		 * state folder, whose launcher file says so, is judged.
		 */
		if (hit != NULL && c->have_dir && strncmp(line, "aisb-", 5) ==
		    0 && launch_session_id_ok(line + 5) &&
		    launch_session_launcher(c->dir, line + 5) == 0)
			orphan = 1;
		if (!all && !orphan && hit != NULL)
			continue;
		if (podman_rm(rm, err, sizeof(err)) == 0) {
			if (orphan)
				printf("removed container %s: running, but its "
				    "launcher is gone\n", line);
			else
				printf("removed container %s\n", line);
			c->ncont++;
			/* no longer running: step 2 cleans up after it */
			if (hit != NULL)
				memset(hit + 1, '-', strlen(line));
		} else {
			fprintf(stderr, "aisb: podman rm %s: %s\n", line, err);
			c->rc = 1;
		}
	}
	return 0;
}

/*
 * 2. what one session whose container is gone left: its gate, secrets,
 * workspace mount and stage
 */
static void
clean_session(struct clean *c, const char *id)
{
	char	 path[PATH_MAX], err[PATH_MAX + 64], *pidtxt;
	size_t	 len;
	int	 launcher = launch_session_launcher(c->dir, id);

	if (file_path_join(path, sizeof(path), c->dir, id) == -1)
		return;
	if ((pidtxt = file_read_in(path, "gate.pid", 32, &len, err,
	    sizeof(err))) != NULL) {
		pid_t pid = (pid_t)strtol(pidtxt, NULL, 10);

		if (pid > 1 && is_gate(pid) && kill(pid, SIGTERM) == 0) {
			printf("stopped gate %d of session %s\n", (int)pid, id);
			c->ngate++;
		}
		free(pidtxt);
	}
	if (join3(path, sizeof(path), c->dir, id, "token") == 0 &&
	    unlink(path) == 0)
		c->nscratch++;
	if (join3(path, sizeof(path), c->dir, id, "env") == 0 &&
	    unlink(path) == 0)
		c->nscratch++;
	if (join3(path, sizeof(path), c->dir, id, "gate.pid") == 0)
		(void)unlink(path);
	/* a killed launcher's idmapped workspace (ids.h) and --mount
	 * sources (mounts.h) */
	if (launcher != 1 && join3(path, sizeof(path), c->dir, id,
	    "workspace") == 0 && launch_ids_umount(path) == 1) {
		printf("unmounted the workspace of session %s\n", id);
		c->nmount++;
	}
	if (launcher != 1 && file_path_join(path, sizeof(path), c->dir,
	    id) == 0 && launch_mounts_detach(path, LAUNCH_MOUNT_MAX) > 0) {
		printf("unmounted the --mount sources of session %s\n", id);
		c->nmount++;
	}
	/* a killed snapshot session's stage (draft.h) */
	if (launcher == 0 && file_path_join(path, sizeof(path), c->dir,
	    id) == 0) {
		int r = launch_snap_reap(path, id);

		if (r == 1)
			c->nstage++;
		else if (r == -1)
			c->rc = 1;
	}
}

/*
 * 3. session folders untouched for older seconds (-1: none given), then
 * the oldest while they hold more than the user config's retention
 */
static void
clean_retain(struct clean *c, long long older)
{
	struct launch_opts	 o;
	struct launch_retained	 r;
	char			 err[1024];
	uint64_t		 cap = 0;

	memset(&o, 0, sizeof(o));
	if (launch_spec_opts(&o, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: clean: no retention cap (the options "
		    "do not resolve: %s)\n", err);
	else
		cap = o.retention;
	launch_opts_free(&o);
	if (older < 0 && cap == 0)
		return;
	if (launch_retain(c->dir, NULL, older, cap, stdout, &r) == -1)
		c->rc = 1;
	c->nsess = r.removed;
	c->ntx = r.txs;
	if (cap > 0 && r.left > cap)
		printf("clean: the sessions and drafts' transactions hold %llu "
		    "KiB, over the retention cap of %llu KiB: what is left "
		    "waits for approval or recovery, or runs\n",
		    (unsigned long long)(r.left >> 10),
		    (unsigned long long)(cap >> 10));
}

/* 4. home volumes no container refers to (only those matching glob) */
static int
clean_volumes(struct clean *c, const char *glob, char *out)
{
	char	*ls[] = { (char *)c->podman, (char *)"volume", (char *)"ls",
	    (char *)"--filter=label=io.aisb.kind=home",
	    (char *)"--format={{.Name}}", NULL };
	char	*names, *line, *save = NULL;

	if (podman_lines(ls, out, CLEAN_MAX_PODMAN_OUT) == -1 ||
	    (names = strdup(out)) == NULL)
		return -1;
	for (line = strtok_r(names, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char filt[300], err[512], users[256];
		char *ps[] = { (char *)c->podman, (char *)"ps", (char *)"-a",
		    filt, (char *)"--format={{.Names}}", NULL };
		char *rm[] = { (char *)c->podman, (char *)"volume",
		    (char *)"rm", line, NULL };

		if (glob != NULL && fnmatch(glob, line, 0) != 0)
			continue;
		snprintf(filt, sizeof(filt), "--filter=volume=%s", line);
		if (launch_exec(ps, NULL, 0, users, sizeof(users), 60000, 0,
		    err, sizeof(err)) != 0) {
			fprintf(stderr, "aisb: podman ps: %s\n", err);
			c->rc = 1;
			continue;
		}
		if (users[0] != '\0') {
			printf("kept volume %s: used by %.*s\n", line,
			    (int)strcspn(users, "\n"), users);
			continue;
		}
		if (launch_exec(rm, NULL, 0, NULL, 0, 60000, 0, err,
		    sizeof(err)) == 0) {
			printf("removed volume %s\n", line);
			c->nvol++;
		} else {
			fprintf(stderr, "aisb: podman volume rm %s: %s\n",
			    line, err);
			c->rc = 1;
		}
	}
	free(names);
	return 0;
}

int
launch_cmd_clean(int argc, char **argv)
{
	struct clean	 c;
	struct launch_sess *v;
	char		 podman[PATH_MAX], name[LAUNCH_ID_HEX + 8];
	char		*out = NULL;
	const char	*glob, *dur;
	struct cli_args	 ca;
	size_t		 n, i, nimg = 0;
	long long	 older = 7 * 86400;	/* clean --images: a week */
	long long	 sold = -1;		/* sessions: none by age */
	int		 rc;

	if ((rc = launch_cli_parse("clean", argc - 1, argv + 1, &ca)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if ((dur = launch_cli_get(&ca, "--older-than")) != NULL &&
	    launch_duration_parse(dur, &older) == -1) {
		fprintf(stderr, "aisb: clean: --older-than '%.32s': not a "
		    "duration (7d, 12h, 30m, 90s)\n", dur);
		return EXIT_CONFIG;
	}
	if (dur != NULL)
		sold = older;
	if ((glob = launch_cli_get(&ca, "--volumes")) != NULL && glob[0] ==
	    '\0')
		glob = "";	/* --volumes alone: every volume */
	if (launch_find_program("podman", podman, sizeof(podman)) == -1) {
		fprintf(stderr, "aisb: podman not found\n");
		return EXIT_ENFORCE;
	}
	memset(&c, 0, sizeof(c));
	c.podman = podman;
	if ((out = malloc(CLEAN_MAX_PODMAN_OUT)) == NULL ||
	    list_running(&c, out) == -1)
		goto fail;
	c.have_dir = launch_sessions_dir(c.dir, sizeof(c.dir)) == 0;
	if (clean_containers(&c, launch_cli_get(&ca, "--all") != NULL,
	    out) == -1)
		goto fail;
	if (c.have_dir && (v = launch_sessions_list(c.dir, &n)) != NULL) {
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "\naisb-%s\n", v[i].id);
			if (strstr(c.running, name) == NULL)
				clean_session(&c, v[i].id);
		}
		free(v);
	}
	if (c.have_dir)
		clean_retain(&c, sold);
	if (glob != NULL && clean_volumes(&c, glob[0] != '\0' ? glob : NULL,
	    out) == -1)
		goto fail;
	free(c.running);
	c.running = NULL;
	if (launch_cli_get(&ca, "--images") != NULL) {
		if (launch_image_clean(older, &nimg) == -1)
			c.rc = 1;
		printf("clean: %zu image(s) removed\n", nimg);
	}
	printf("clean: %zu container(s), %zu gate(s), %zu secret file(s), "
	    "%zu workspace mount(s), %zu snapshot stage(s), %zu session "
	    "folder(s), %zu draft transaction(s), %zu volume(s) removed\n",
	    c.ncont, c.ngate, c.nscratch, c.nmount, c.nstage, c.nsess, c.ntx,
	    c.nvol);
	free(out);
	return c.rc;
fail:
	free(c.running);
	free(out);
	return 1;
}
