/*
 * Session files.  Everything secret is written once, 0600, into a 0700
 * folder the user owns, and never passes through argv or a log.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "file.h"
#include "host/paths.h"
#include "session/folder.h"

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
    char **envp, const char *proxy_url, char *path, size_t pathlen,
    char *err, size_t errlen)
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
