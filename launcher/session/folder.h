/*
 * A session's files: its folder under $XDG_STATE_HOME/aisb/sessions/<id>/
 * (mode 0700), the proxy credential, and the environment file the
 * container reads (mode 0600: the only way values reach the container).
 */
#ifndef AISB_SESSION_H
#define AISB_SESSION_H

#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "host/paths.h"
#include "session/options.h"

#define LAUNCH_SECRET_HEX	64	/* 256 random bits */
#define LAUNCH_MAX_ENVFILE	(1024 * 1024)

struct launch_session {
	char	 id[LAUNCH_ID_HEX + 1];
	char	 dir[PATH_MAX];
	char	 secret[LAUNCH_SECRET_HEX + 1];	/* wiped by launch_session_wipe */
};

/* Makes a new id, the folder (0700) and the secret.  -1 with err. */
int	 launch_session_new(struct launch_session *, char **envp, char *err,
	    size_t errlen);
/* dir/name into path; -1 when it does not fit. */
int	 launch_session_path(const struct launch_session *, const char *name,
	    char *path, size_t pathlen);
/* Writes dir/name with mode 0600, refusing to follow or reuse a file. */
int	 launch_session_write(const struct launch_session *, const char *name,
	    const char *data, size_t len, char *path, size_t pathlen,
	    char *err, size_t errlen);
/*
 * The environment file: the proxy variables in every spelling tools read
 * (HTTP_PROXY, http_proxy, HTTPS_PROXY, ... NO_PROXY), the placeholder
 * of each secret of ss (NULL: none; secrets.h) under its name, then the
 * --env entries.  proxy_url may be NULL (--net none/direct).  Values come
 * from envp for --env NAME.  The text is built in memory and written
 * once.
 */
struct launch_secrets;
int	 launch_env_file(const struct launch_session *, const struct launch_opts *,
	    char **envp, const char *proxy_url, const struct launch_secrets *ss,
	    char *path, size_t pathlen, char *err, size_t errlen);
/* The token file aisb-gate reads: "session-<id>:<secret>". */
int	 launch_token_file(const struct launch_session *, char *path,
	    size_t pathlen, char *err, size_t errlen);
void	 launch_session_wipe(struct launch_session *);

/* ---- every session of the state folder --------------------------------- */

#define LAUNCH_SESSIONS_MAX	4096	/* listed at most */

/* STATE/sessions into out.  0, or -1 after a line on stderr. */
int	 launch_sessions_dir(char *out, size_t len);
/* 1 when s may be (a prefix of) a session id: lower-case hex. */
int	 launch_session_id_ok(const char *s);

struct launch_sess {
	char	 id[LAUNCH_ID_HEX + 1];
	time_t	 mtime;
};
/*
 * Every session folder under dir, oldest first, at most
 * LAUNCH_SESSIONS_MAX; their count in *np.  NULL when out of memory.
 */
struct launch_sess *launch_sessions_list(const char *dir, size_t *np);
/*
 * The folder of the one session whose id starts with want (aisb
 * sessions, policy suggest and the snapshot commands take such an ID).
 * 0, or the exit code after a line on stderr.
 */
int	 launch_session_find(const char *want, char *path, size_t pathlen);
/*
 * 1 while the launcher of session id (under dir) runs, as its
 * "launcher" file says; 0 when it is gone; -1 when no file tells.
 */
int	 launch_session_launcher(const char *dir, const char *id);

#endif
