/*
 * aisb sessions ls|show ID, and aisb clean [--all] [--volumes[=GLOB]]
 * [--images [--older-than DURATION]].
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "host/paths.h"
#include "image/store.h"
#include "policytools/denials.h"
#include "file.h"
#include "session/ids.h"
#include "image/image.h"
#include "cmd/cmd.h"
#include "host/proc.h"
#include "session/record.h"
#include "session/folder.h"
#include "session/snapshot.h"

#define MANAGE_MAX_RECORD	(64 * 1024)	/* bytes of a record read */
#define MANAGE_MAX_SESSIONS	4096		/* listed at most */
#define MANAGE_MAX_PODMAN_OUT	(256 * 1024)	/* bytes of a podman listing */

extern char **environ;

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
 * dir/name whole into a NUL-terminated malloc'd buffer, or NULL with err
 * and errno (ENOENT: there is none).  One over max bytes is refused, not
 * cut short: a record read in part would show another session's end.
 */
static char *
read_bounded(const char *dir, const char *name, size_t max, char *err,
    size_t errlen)
{
	size_t	len;

	return file_read_in(dir, name, max, &len, err, errlen);
}

/* The value of "key value" in a record, into out. */
static const char *
record_field(const char *rec, const char *key, char *out, size_t len)
{
	size_t		 klen = strlen(key);
	const char	*p = rec, *eol;

	out[0] = '\0';
	while (p != NULL && *p != '\0') {
		eol = strchr(p, '\n');
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			size_t n = eol != NULL ? (size_t)(eol - p - klen - 1) :
			    strlen(p + klen + 1);

			snprintf(out, len, "%.*s", (int)n, p + klen + 1);
			break;
		}
		p = eol != NULL ? eol + 1 : NULL;
	}
	return out;
}

static int
sessions_dir(char *out, size_t len)
{
	char	 base[PATH_MAX];

	if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    file_path_join(out, len, base, "sessions") == -1) {
		fprintf(stderr, "aisb: no state folder: set XDG_STATE_HOME or "
		    "HOME to an absolute path\n");
		return -1;
	}
	return 0;
}

struct sess {
	char	 id[LAUNCH_ID_HEX + 1];
	time_t	 mtime;
};

static int
sess_cmp(const void *a, const void *b)
{
	const struct sess *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

static int
is_id(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n <= LAUNCH_ID_HEX &&
	    strspn(s, "0123456789abcdef") == n;
}

/*
 * 1 while the launcher of session id runs (its "launcher" file), 0 when
 * it is gone, -1 when there is no such file to tell.
 */
static int
launcher_state(const char *dir, const char *id)
{
	char			 path[PATH_MAX], err[PATH_MAX + 64], *text;
	long			 pid;
	unsigned long long	 start;
	int			 alive = -1;

	if (file_path_join(path, sizeof(path), dir, id) == -1 ||
	    (text = read_bounded(path, "launcher", 64, err,
	    sizeof(err))) == NULL)
		return -1;
	if (sscanf(text, "%ld %llu", &pid, &start) == 2 && pid > 1)
		alive = launch_proc_alive((pid_t)pid, start);
	free(text);
	return alive;
}

static int
launcher_alive(const char *dir, const char *id)
{
	return launcher_state(dir, id) == 1;
}

static int
launcher_dead(const char *dir, const char *id)
{
	return launcher_state(dir, id) == 0;
}

/* Every session folder, oldest first.  *np on return; NULL on error. */
static struct sess *
list_sessions(const char *dir, size_t *np)
{
	struct sess	*v;
	struct dirent	*de;
	struct stat	 st;
	char		 path[PATH_MAX];
	DIR		*d;
	size_t		 n = 0;

	*np = 0;
	if ((v = calloc(MANAGE_MAX_SESSIONS, sizeof(*v))) == NULL)
		return NULL;
	if ((d = opendir(dir)) == NULL)
		return v;	/* no session yet */
	while ((de = readdir(d)) != NULL && n < MANAGE_MAX_SESSIONS) {
		if (!is_id(de->d_name) || strlen(de->d_name) != LAUNCH_ID_HEX)
			continue;
		if (file_path_join(path, sizeof(path), dir, de->d_name) == -1 ||
		    lstat(path, &st) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		snprintf(v[n].id, sizeof(v[n].id), "%s", de->d_name);
		v[n].mtime = st.st_mtime;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), sess_cmp);
	*np = n;
	return v;
}

static int
sessions_ls(void)
{
	struct sess	*v;
	char		 dir[PATH_MAX], path[PATH_MAX], when[32], exitc[16];
	char		 cmd[256], start[32], err[PATH_MAX + 64], *rec;
	size_t		 n, i;
	time_t		 t;

	if (sessions_dir(dir, sizeof(dir)) == -1)
		return EXIT_CONFIG;
	if ((v = list_sessions(dir, &n)) == NULL)
		return 1;
	printf("%-24s  %-20s  %-7s  %s\n", "SESSION", "STARTED (UTC)", "EXIT",
	    "COMMAND");
	for (i = 0; i < n; i++) {
		if (file_path_join(path, sizeof(path), dir, v[i].id) == -1)
			continue;
		rec = read_bounded(path, "record", MANAGE_MAX_RECORD, err,
		    sizeof(err));
		t = v[i].mtime;
		if (rec == NULL && errno != ENOENT) {
			fprintf(stderr, "aisb: %s\n", err);
			snprintf(exitc, sizeof(exitc), "?");
			snprintf(cmd, sizeof(cmd), "?");
		} else if (rec != NULL) {
			record_field(rec, "started", start, sizeof(start));
			t = (time_t)strtoll(start, NULL, 10);
			record_field(rec, "exit", exitc, sizeof(exitc));
			record_field(rec, "command", cmd, sizeof(cmd));
		} else {
			/* no record: running, or its launcher was killed */
			snprintf(exitc, sizeof(exitc), "%s",
			    launcher_dead(dir, v[i].id) ? "killed" : "running");
			snprintf(cmd, sizeof(cmd), "?");
		}
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime(&t));
		printf("%-24s  %-20s  %-7s  %s\n", v[i].id, when, exitc, cmd);
		free(rec);
	}
	free(v);
	return 0;
}

/*
 * A record as it is, but its times (seconds since the epoch in the file,
 * for programs) as people read them: "started 2026-11-30 23:10:04 UTC".
 */
static void
print_record(const char *rec)
{
	const char	*line, *nl;
	char		*end, when[40];
	long long	 secs;
	time_t		 t;
	struct tm	 tm;
	size_t		 len;

	for (line = rec; *line != '\0'; line = nl != NULL ? nl + 1 :
	    line + len) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		if ((strncmp(line, "started ", 8) == 0 ||
		    strncmp(line, "ended ", 6) == 0) &&
		    (secs = strtoll(strchr(line, ' ') + 1, &end, 10)) >= 0 &&
		    end == line + len && end[-1] != ' ' &&
		    (t = (time_t)secs, gmtime_r(&t, &tm) != NULL) &&
		    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC",
		    &tm) > 0) {
			printf("%.*s %s\n", (int)(strchr(line, ' ') - line),
			    line, when);
			continue;
		}
		printf("%.*s\n", (int)len, line);
	}
}

/*
 * The folder of the one session whose id starts with want, into path.
 * 0, or the exit code after a line on stderr.
 */
static int
find_session(const char *want, char *path, size_t pathlen)
{
	struct sess	*v;
	char		 dir[PATH_MAX];
	size_t		 n, i, found = 0;
	const char	*id = NULL;
	int		 rc = 0;

	if (!is_id(want)) {
		fprintf(stderr, "aisb: '%.32s' is not a session id (hex, as "
		    "aisb sessions ls prints)\n", want);
		return EXIT_CONFIG;
	}
	if (sessions_dir(dir, sizeof(dir)) == -1)
		return EXIT_CONFIG;
	if ((v = list_sessions(dir, &n)) == NULL)
		return 1;
	for (i = 0; i < n; i++)
		if (strncmp(v[i].id, want, strlen(want)) == 0) {
			id = v[i].id;
			found++;
		}
	if (found != 1) {
		fprintf(stderr, "aisb: %s session matches '%s'\n",
		    found == 0 ? "no" : "more than one", want);
		rc = EXIT_CONFIG;
	} else if (file_path_join(path, pathlen, dir, id) == -1)
		rc = 1;
	free(v);
	return rc;
}

int
launch_session_find(const char *want, char *path, size_t pathlen)
{
	return find_session(want, path, pathlen);
}

/* aisb sessions verify ID: 0 all match, 1 something differs, 78 no record */
static int
sessions_verify(const char *want)
{
	char	 path[PATH_MAX], err[PATH_MAX + 256];
	int	 rc;

	if ((rc = find_session(want, path, sizeof(path))) != 0)
		return rc;
	if ((rc = launch_record_verify(path, stdout, err, sizeof(err))) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}
	return rc;
}

static int
sessions_show(const char *want)
{
	struct launch_denials	*d;
	char		 path[PATH_MAX], logpath[PATH_MAX], *rec;
	char		 err[PATH_MAX + 64];
	int		 rc;

	if ((rc = find_session(want, path, sizeof(path))) != 0)
		return rc;
	printf("folder %s\n", path);
	if ((rec = read_bounded(path, "record", MANAGE_MAX_RECORD, err,
	    sizeof(err))) != NULL)
		print_record(rec);
	else if (errno != ENOENT)
		printf("(record refused: %s)\n", err);
	else
		printf("(no record: the session is running, or its launcher "
		    "was killed)\n");
	launch_record_show(path, stdout);
	launch_snap_show(path, stdout);	/* a snapshot session's draft now */
	if (file_path_join(logpath, sizeof(logpath), path,
	    "audit.jsonl") == 0 &&
	    (d = malloc(sizeof(*d))) != NULL) {
		launch_denials_init(d);
		if (launch_denials_read(d, logpath) == 0) {
			printf("# audit: %lu allowed, %lu denied, %lu failed; "
			    "lines in %s\n", d->allowed, d->denied, d->failed,
			    logpath);
			/* the very lines the session ended with */
			launch_denials_print(d, stdout, "# ", NULL);
			launch_denials_print_tools(d, stdout, "# ");
		}
		free(d);
	}
	free(rec);
	return 0;
}

int
launch_cmd_sessions(int argc, char **argv)
{
	struct cli_args	 a;
	char		 name[32];
	int		 rc;

	if ((rc = launch_cli_group("sessions", argc, argv)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	snprintf(name, sizeof(name), "sessions %s", argv[1]);
	if ((rc = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "ls") == 0)
		return sessions_ls();
	if (strcmp(argv[1], "verify") == 0)
		return sessions_verify(a.pos[0]);
	return sessions_show(a.pos[0]);
}

/* ---- clean --------------------------------------------------------------- */

static int
podman_lines(char *const argv[], char *out, size_t outlen)
{
	char	 err[512];
	int	 rc;

	rc = launch_exec(argv, NULL, 0, out, outlen, 60000, 0, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "aisb: %s: %s\n", argv[1], err);
		return -1;
	}
	return 0;
}

/* Is pid an aisb-gate?  (So that a recycled pid is never killed.) */
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

static int
is_gate(pid_t pid)
{
	char	 link[64], exe[PATH_MAX];
	ssize_t	 n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if ((n = readlink(link, exe, sizeof(exe) - 1)) <= 0)
		return 0;
	exe[n] = '\0';
	n = (ssize_t)strlen(exe);
	return n >= 9 && strcmp(exe + n - 9, "aisb-gate") == 0;
}

int
launch_cmd_clean(int argc, char **argv)
{
	char		 podman[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	char		*out, *line, *save = NULL, *pidtxt, *running;
	const char	*glob = NULL;
	struct sess	*v;
	size_t		 n, i, ncont = 0, ngate = 0, nscratch = 0, nvol = 0;
	size_t		 nmount = 0, nstage = 0;
	struct cli_args	 ca;
	const char	*dur;
	int		 all = 0, volumes = 0, rc = 0, have_dir;
	int		 images = 0;
	long long	 older = 7 * 86400;	/* clean --images: a week */
	size_t		 nimg = 0;

	if ((rc = launch_cli_parse("clean", argc - 1, argv + 1, &ca)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	all = launch_cli_get(&ca, "--all") != NULL;
	images = launch_cli_get(&ca, "--images") != NULL;
	if ((dur = launch_cli_get(&ca, "--older-than")) != NULL &&
	    launch_duration_parse(dur, &older) == -1) {
		fprintf(stderr, "aisb: clean: --older-than '%.32s': not a "
		    "duration (7d, 12h, 30m, 90s)\n", dur);
		return EXIT_CONFIG;
	}
	if ((glob = launch_cli_get(&ca, "--volumes")) != NULL) {
		volumes = 1;
		if (glob[0] == '\0')
			glob = NULL;
	}
	if (launch_find_program("podman", podman, sizeof(podman)) == -1) {
		fprintf(stderr, "aisb: podman not found\n");
		return EXIT_ENFORCE;
	}
	if ((out = malloc(MANAGE_MAX_PODMAN_OUT)) == NULL)
		return 1;

	/*
	 * 1. session containers: stopped ones, and with --all running ones.
	 * Running ones are listed apart (podman ps without -a), since the
	 * state column is prose ("Up 2 seconds ago") on podman 4.
	 */
	{
		char *ps[] = { podman, (char *)"ps",
		    (char *)"--filter=label=io.aisb.kind=session",
		    (char *)"--format={{.Names}}", NULL };

		if (podman_lines(ps, out, MANAGE_MAX_PODMAN_OUT) == -1) {
			free(out);
			return 1;
		}
		/* "\nname\nname\n...", so that "\nname\n" finds one exactly */
		if ((running = malloc(strlen(out) + 3)) == NULL) {
			free(out);
			return 1;
		}
		snprintf(running, strlen(out) + 3, "\n%s\n", out);
	}
	{
		char *ps[] = { podman, (char *)"ps", (char *)"-a",
		    (char *)"--filter=label=io.aisb.kind=session",
		    (char *)"--format={{.Names}}", NULL };

		if (podman_lines(ps, out, MANAGE_MAX_PODMAN_OUT) == -1) {
			free(running);
			free(out);
			return 1;
		}
	}
	have_dir = sessions_dir(dir, sizeof(dir)) == 0;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char err[512], key[128], *hit;
		char *rm[] = { podman, (char *)"rm", (char *)"-f", line, NULL };
		int orphan = 0;

		snprintf(key, sizeof(key), "\n%s\n", line);
		hit = strstr(running, key);
		/*
		 * A running container whose launcher (and watcher) is gone:
		 * nothing will stop it but this.  Only a session of this
		 * state folder, whose launcher file says so, is judged.
		 */
		if (hit != NULL && have_dir && strncmp(line, "aisb-", 5) == 0 &&
		    is_id(line + 5) && launcher_dead(dir, line + 5))
			orphan = 1;
		if (!all && !orphan && hit != NULL)
			continue;
		if (podman_rm(rm, err, sizeof(err)) == 0) {
			if (orphan)
				printf("removed container %s: running, but its "
				    "launcher is gone\n", line);
			else
				printf("removed container %s\n", line);
			ncont++;
			/* no longer running: step 2 cleans up after it */
			if (hit != NULL)
				memset(hit + 1, '-', strlen(line));
		} else {
			fprintf(stderr, "aisb: podman rm %s: %s\n", line, err);
			rc = 1;
		}
	}

	/* 2. gates and secrets of sessions whose container is gone */
	if (have_dir && (v = list_sessions(dir, &n)) != NULL) {
		for (i = 0; i < n; i++) {
			char name[LAUNCH_ID_HEX + 8], err[PATH_MAX + 64];

			snprintf(name, sizeof(name), "\naisb-%s\n", v[i].id);
			if (strstr(running, name) != NULL)
				continue;
			if (file_path_join(path, sizeof(path), dir,
			    v[i].id) == -1)
				continue;
			if ((pidtxt = read_bounded(path, "gate.pid", 32, err,
			    sizeof(err))) != NULL) {
				pid_t pid = (pid_t)strtol(pidtxt, NULL, 10);

				if (pid > 1 && is_gate(pid) &&
				    kill(pid, SIGTERM) == 0) {
					printf("stopped gate %d of session %s\n",
					    (int)pid, v[i].id);
					ngate++;
				}
				free(pidtxt);
			}
			if (join3(path, sizeof(path), dir, v[i].id, "token") == 0 &&
			    unlink(path) == 0)
				nscratch++;
			if (join3(path, sizeof(path), dir, v[i].id, "env") == 0 &&
			    unlink(path) == 0)
				nscratch++;
			if (join3(path, sizeof(path), dir, v[i].id, "gate.pid") == 0)
				(void)unlink(path);
			/* a killed launcher's idmapped workspace (ids.h) */
			if (!launcher_alive(dir, v[i].id) &&
			    join3(path, sizeof(path), dir, v[i].id,
			    "workspace") == 0 && launch_ids_umount(path) == 1) {
				printf("unmounted the workspace of session "
				    "%s\n", v[i].id);
				nmount++;
			}
			/* a killed snapshot session's stage (draft.h) */
			if (launcher_dead(dir, v[i].id) && file_path_join(path,
			    sizeof(path), dir, v[i].id) == 0) {
				int r = launch_snap_reap(path, v[i].id);

				if (r == 1)
					nstage++;
				else if (r == -1)
					rc = 1;
			}
		}
		free(v);
	}

	/* 3. home volumes no container refers to */
	if (volumes) {
		char *ls[] = { podman, (char *)"volume", (char *)"ls",
		    (char *)"--filter=label=io.aisb.kind=home",
		    (char *)"--format={{.Name}}", NULL };
		char *names;

		if (podman_lines(ls, out, MANAGE_MAX_PODMAN_OUT) == -1 ||
		    (names = strdup(out)) == NULL) {
			free(running);
			free(out);
			return 1;
		}
		save = NULL;
		for (line = strtok_r(names, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			char filt[300], err[512], users[256];
			char *ps[] = { podman, (char *)"ps", (char *)"-a",
			    filt, (char *)"--format={{.Names}}", NULL };
			char *rm[] = { podman, (char *)"volume", (char *)"rm",
			    line, NULL };

			if (glob != NULL && fnmatch(glob, line, 0) != 0)
				continue;
			snprintf(filt, sizeof(filt), "--filter=volume=%s", line);
			if (launch_exec(ps, NULL, 0, users, sizeof(users),
			    60000, 0, err, sizeof(err)) != 0) {
				fprintf(stderr, "aisb: podman ps: %s\n", err);
				rc = 1;
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
				nvol++;
			} else {
				fprintf(stderr, "aisb: podman volume rm %s: "
				    "%s\n", line, err);
				rc = 1;
			}
		}
		free(names);
	}
	free(running);
	/* 4. after the containers: podman keeps what a container uses */
	if (images) {
		if (launch_image_clean(older, &nimg) == -1)
			rc = 1;
		printf("clean: %zu image(s) removed\n", nimg);
	}
	printf("clean: %zu container(s), %zu gate(s), %zu secret file(s), "
	    "%zu workspace mount(s), %zu snapshot stage(s), %zu volume(s) "
	    "removed\n", ncont, ngate, nscratch, nmount, nstage, nvol);
	free(out);
	return rc;
}
