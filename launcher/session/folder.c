/*
 * Session files.  Everything secret is written once, 0600, into a 0700
 * folder the user owns, and never passes through argv or a log.  And the
 * sessions of the state folder: listed, found by an id's prefix, their
 * launcher alive or not (aisb sessions, clean, the snapshot commands).
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "file.h"
#include "host/paths.h"
#include "exitcode.h"
#include "host/proc.h"
#include "session/folder.h"
#include "session/secrets.h"

extern char **environ;

int
launch_session_new(struct launch_session *s, char **envp, char *err,
    size_t errlen)
{
	char	 base[PATH_MAX];
	int	 n;

	memset(s, 0, sizeof(*s));
	if (launch_state_dir(envp, base, sizeof(base) - 64) == -1) {
		snprintf(err, errlen, "cannot find a state folder: set "
		    "XDG_STATE_HOME or HOME to an absolute path");
		return -1;
	}
	if (launch_random_hex(s->id, LAUNCH_ID_HEX) == -1 ||
	    launch_random_hex(s->secret, LAUNCH_SECRET_HEX) == -1) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	n = snprintf(s->dir, sizeof(s->dir), "%s/sessions/%s", base, s->id);
	if (n < 0 || (size_t)n >= sizeof(s->dir) || launch_mkdirs(s->dir) == -1) {
		snprintf(err, errlen, "%s: %s", s->dir, strerror(errno));
		launch_session_wipe(s);
		return -1;
	}
	return 0;
}

void
launch_session_wipe(struct launch_session *s)
{
	explicit_bzero(s->secret, sizeof(s->secret));
}

int
launch_session_path(const struct launch_session *s, const char *name,
    char *path, size_t pathlen)
{
	int	 n = snprintf(path, pathlen, "%s/%s", s->dir, name);

	return n < 0 || (size_t)n >= pathlen ? -1 : 0;
}

int
launch_session_write(const struct launch_session *s, const char *name,
    const char *data, size_t len, char *path, size_t pathlen, char *err,
    size_t errlen)
{
	int	 fd;

	if (launch_session_path(s, name, path, pathlen) == -1) {
		snprintf(err, errlen, "%s/%s: path too long", s->dir, name);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (file_write_all(fd, data, len) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	if (close(fd) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

static void
buf_var(struct buf *b, const char *name, size_t nlen, const char *val)
{
	buf_add(b, name, nlen);
	buf_add(b, "=", 1);
	buf_add(b, val, strlen(val));
	buf_add(b, "\n", 1);
}

int
launch_env_file(const struct launch_session *s, const struct launch_opts *o,
    char **envp, const char *proxy_url, const struct launch_secrets *ss,
    char *path, size_t pathlen, char *err, size_t errlen)
{
	static const char *const proxy_vars[] = {
		"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
		"ALL_PROXY", "all_proxy",
	};
	static const char no_proxy[] = "localhost,127.0.0.1,::1";
	struct buf	 b;
	size_t		 i;
	int		 rc;

	/* the proxy credential and --env values: wiped when freed */
	buf_init(&b, LAUNCH_MAX_ENVFILE - 1, BUF_SECRET);

	if (proxy_url != NULL) {
		for (i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
			buf_var(&b, proxy_vars[i], strlen(proxy_vars[i]),
			    proxy_url);
		buf_var(&b, "NO_PROXY", 8, no_proxy);
		buf_var(&b, "no_proxy", 8, no_proxy);
	}
	/* the sandbox's stand-in for each secret, which the gate swaps */
	for (i = 0; ss != NULL && i < ss->n; i++)
		buf_var(&b, ss->v[i].name, strlen(ss->v[i].name),
		    ss->v[i].placeholder);
	for (i = 0; i < o->nenv; i++) {
		const char	*e = o->env[i].text, *eq = strchr(e, '=');
		const char	*v;
		size_t		 nlen = eq != NULL ? (size_t)(eq - e) : strlen(e);
		int		 optional = eq == NULL && e[nlen - 1] == '?';

		if (optional)
			nlen--;
		if (eq != NULL)
			v = eq + 1;
		else if ((v = launch_getenv(envp, e, nlen)) == NULL) {
			if (optional)
				continue;
			snprintf(err, errlen, "--env %.*s: not set here",
			    (int)nlen, e);
			buf_free(&b);
			return -1;
		}
		if (strpbrk(v, "\n\r") != NULL) {
			snprintf(err, errlen, "--env %.*s: the value holds a line "
			    "break, which an env file cannot carry", (int)nlen,
			    e);
			buf_free(&b);
			return -1;
		}
		buf_var(&b, e, nlen, v);
	}
	if (b.failed) {
		snprintf(err, errlen, "environment larger than %d bytes",
		    LAUNCH_MAX_ENVFILE);
		buf_free(&b);
		return -1;
	}
	rc = launch_session_write(s, "env", b.p != NULL ? b.p : "", b.len,
	    path, pathlen, err, errlen);
	buf_free(&b);
	return rc;
}

int
launch_token_file(const struct launch_session *s, char *path, size_t pathlen,
    char *err, size_t errlen)
{
	char	 line[LAUNCH_ID_HEX + LAUNCH_SECRET_HEX + 16];
	int	 n, rc;

	n = snprintf(line, sizeof(line), "session-%s:%s\n", s->id, s->secret);
	if (n < 0 || (size_t)n >= sizeof(line)) {
		snprintf(err, errlen, "token too long");
		return -1;
	}
	rc = launch_session_write(s, "token", line, (size_t)n, path, pathlen,
	    err, errlen);
	explicit_bzero(line, sizeof(line));
	return rc;
}

/* ---- every session of the state folder --------------------------------- */

int
launch_sessions_dir(char *out, size_t len)
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

int
launch_session_id_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n <= LAUNCH_ID_HEX &&
	    strspn(s, "0123456789abcdef") == n;
}

int
launch_session_launcher(const char *dir, const char *id)
{
	char			 path[PATH_MAX], err[PATH_MAX + 64], *text;
	long			 pid;
	unsigned long long	 start;
	size_t			 len;
	int			 alive = -1;

	if (file_path_join(path, sizeof(path), dir, id) == -1 ||
	    (text = file_read_in(path, "launcher", 64, &len, err,
	    sizeof(err))) == NULL)
		return -1;
	if (sscanf(text, "%ld %llu", &pid, &start) == 2 && pid > 1)
		alive = launch_proc_alive((pid_t)pid, start);
	free(text);
	return alive;
}

static int
sess_cmp(const void *a, const void *b)
{
	const struct launch_sess *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

struct launch_sess *
launch_sessions_list(const char *dir, size_t *np)
{
	struct launch_sess	*v;
	struct dirent		*de;
	struct stat		 st;
	char			 path[PATH_MAX];
	DIR			*d;
	size_t			 n = 0;

	*np = 0;
	if ((v = calloc(LAUNCH_SESSIONS_MAX, sizeof(*v))) == NULL)
		return NULL;
	if ((d = opendir(dir)) == NULL)
		return v;	/* no session yet */
	while ((de = readdir(d)) != NULL && n < LAUNCH_SESSIONS_MAX) {
		if (!launch_session_id_ok(de->d_name) ||
		    strlen(de->d_name) != LAUNCH_ID_HEX)
			continue;
		if (file_path_join(path, sizeof(path), dir, de->d_name) == -1 ||
		    lstat(path, &st) == -1 ||
		    !S_ISDIR(st.st_mode))
			continue;
		/* LAUNCH_ID_HEX characters, checked above */
		memcpy(v[n].id, de->d_name, LAUNCH_ID_HEX);
		v[n].id[LAUNCH_ID_HEX] = '\0';
		v[n].mtime = st.st_mtime;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), sess_cmp);
	*np = n;
	return v;
}

int
launch_session_find(const char *want, char *path, size_t pathlen)
{
	struct launch_sess	*v;
	char			 dir[PATH_MAX];
	size_t			 n, i, found = 0;
	const char		*id = NULL;
	int			 rc = 0;

	if (!launch_session_id_ok(want)) {
		fprintf(stderr, "aisb: '%.32s' is not a session id (hex, as "
		    "aisb sessions ls prints)\n", want);
		return EXIT_CONFIG;
	}
	if (launch_sessions_dir(dir, sizeof(dir)) == -1)
		return EXIT_CONFIG;
	if ((v = launch_sessions_list(dir, &n)) == NULL)
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
