/*
 * Files of a workspace that aisb reads, watched across bind sessions
 * (trust.h).  A bind-mounted workspace cannot hide a file that does not
 * exist yet (a mount over .aisb.yaml would create it on the host), nor
 * make one read-only without changing what the user's tools see; so the
 * launcher watches instead.  Each watched file has, per session, a
 * marker in $XDG_STATE_HOME/aisb/trust/, named by a hash of the file's
 * path and the session's id (0600, at most MARKER_MAX bytes):
 *
 *	file /home/u/proj/.aisb.yaml
 *	session <id>
 *	launcher <pid> <start time>
 *	before sha256:<hex>			(or absent, link-..., other)
 *	after absent				(once the session changed it)
 *
 * written before the container starts, and removed at the session's end
 * when the file is as it was, or completed with "after" when it is not.
 * A marker without "after" whose launcher is gone is a session killed
 * before its end, and is judged by the file alone.  Whoever reads the
 * file for a session asks launch_trust_check() first: a marker whose
 * file is not as it was "before" refuses it, until the user runs aisb
 * trust (launch_trust_accept) or undoes the change.  Changes made while
 * a bind session of the workspace runs count as the session's: the
 * launcher cannot tell them apart, and the user accepts them in one word.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file.h"
#include "hex.h"
#include "host/cache.h"
#include "host/paths.h"
#include "host/proc.h"
#include "session/trust.h"

#define MARKER_MAX	(8u * 1024)		/* bytes of one marker */
#define MARKERS_MAX	4096			/* entries of the folder read */
#define HASHED_MAX	(64ull * 1024 * 1024)	/* bytes of a file hashed */
#define KEY_HEX		16			/* of the path's SHA-256 */

struct marker {
	char			 file[PATH_MAX];
	char			 session[64];
	long			 pid;
	unsigned long long	 start;
	char			 before[LAUNCH_TRUST_STATE];
	char			 after[LAUNCH_TRUST_STATE];	/* "": none */
};

/* The markers' folder, made (0700) when create.  0 or -1 with err. */
static int
marker_dir(char **envp, char *dir, size_t len, int create, char *err,
    size_t errlen)
{
	char	 state[PATH_MAX];

	if (launch_state_dir(envp, state, sizeof(state)) == -1 ||
	    file_path_join(dir, len, state, "trust") == -1) {
		snprintf(err, errlen, "no state folder for aisb's trust "
		    "markers (set XDG_STATE_HOME or HOME)");
		return -1;
	}
	if (create && launch_mkdirs(dir) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * path with its folder resolved (the file itself may be missing or a
 * link: it is what is watched), into out.  0, or -1 when the folder
 * does not exist or the result would not fit on a marker's line.
 */
static int
canon(const char *path, char *out, size_t len)
{
	char		 dir[PATH_MAX], real[PATH_MAX];
	const char	*slash = strrchr(path, '/'), *base;

	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = path;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path +
		    (slash == path)), path);
		base = slash + 1;
	}
	if (base[0] == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || realpath(dir, real) == NULL)
		return -1;
	if ((size_t)snprintf(out, len, "%s%s%s", real, strcmp(real, "/") == 0 ?
	    "" : "/", base) >= len || strchr(out, '\n') != NULL)
		return -1;
	return 0;
}

/* KEY_HEX digits of the SHA-256 of the canonical path, for names. */
static int
path_key(const char *path, char key[KEY_HEX + 1])
{
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0;

	if (EVP_Digest(path, strlen(path), md, &mdlen, EVP_sha256(),
	    NULL) != 1 || mdlen * 2 < KEY_HEX)
		return -1;
	hex_encode(md, KEY_HEX / 2, key);
	return 0;
}

/* "sha256:<hex>" of the open regular file fd, at most HASHED_MAX bytes. */
static int
hash_fd(int fd, char *out, size_t len, char *err, size_t errlen)
{
	if (len < 8 + LAUNCH_CACHE_KEYHEX) {
		snprintf(err, errlen, "SHA-256: no room");
		return -1;
	}
	memcpy(out, "sha256:", 7);
	return launch_sha256_fd(fd, HASHED_MAX, out + 7, err, errlen);
}

/*
 * What path is now, as one word: absent, sha256:<hex> of a regular
 * file, other (a folder, a fifo...), each prefixed link- when path is a
 * symbolic link (then of its target).  Never blocks on a fifo.  0, or
 * -1 with err.
 */
static int
file_state(const char *path, char *state, size_t len, char *err,
    size_t errlen)
{
	struct stat	 st;
	const char	*link = "";
	char		 why[128];
	size_t		 off;
	int		 fd;

	if (lstat(path, &st) == -1) {
		if (errno != ENOENT && errno != ENOTDIR)
			goto fail;
		snprintf(state, len, "absent");
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		link = "link-";
	off = (size_t)snprintf(state, len, "%s", link);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			goto fail;
		snprintf(state + off, len - off, "absent");
		return 0;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(state + off, len - off, "other");
		return 0;
	}
	if (hash_fd(fd, state + off, len - off, why, sizeof(why)) == -1) {
		close(fd);
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return -1;
}

/* One marker, parsed; -1 when it is not one (it is then left alone). */
static int
marker_read(int dirfd, const char *name, const char *dir, struct marker *m)
{
	char		*text, *line, *save = NULL, err[256];
	size_t		 len;
	int		 have = 0;

	memset(m, 0, sizeof(*m));
	if ((text = file_read_bounded_at(dirfd, name, dir, MARKER_MAX, &len,
	    err, sizeof(err))) == NULL)
		return -1;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "file ", 5) == 0 &&
		    (size_t)snprintf(m->file, sizeof(m->file), "%s",
		    line + 5) < sizeof(m->file))
			have |= 1;
		else if (strncmp(line, "session ", 8) == 0)
			snprintf(m->session, sizeof(m->session), "%s",
			    line + 8);
		else if (strncmp(line, "launcher ", 9) == 0 &&
		    sscanf(line + 9, "%ld %llu", &m->pid, &m->start) == 2)
			have |= 2;
		else if (strncmp(line, "before ", 7) == 0)
			have |= snprintf(m->before, sizeof(m->before), "%s",
			    line + 7) > 0 ? 4 : 0;
		else if (strncmp(line, "after ", 6) == 0)
			snprintf(m->after, sizeof(m->after), "%s", line + 6);
	}
	free(text);
	return have == 7 ? 0 : -1;
}

static int
marker_write(const char *dir, const char *name, const struct marker *m,
    char *err, size_t errlen)
{
	char	 path[PATH_MAX], text[MARKER_MAX];
	int	 n;

	n = snprintf(text, sizeof(text), "file %s\nsession %s\nlauncher %ld "
	    "%llu\nbefore %s\n%s%s%s", m->file, m->session, m->pid, m->start,
	    m->before, m->after[0] != '\0' ? "after " : "", m->after,
	    m->after[0] != '\0' ? "\n" : "");
	if (n < 0 || (size_t)n >= sizeof(text) ||
	    file_path_join(path, sizeof(path), dir, name) == -1) {
		snprintf(err, errlen, "%s: marker too long", dir);
		return -1;
	}
	if (file_write_atomic(path, text, (size_t)n, 0600, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* How a file went from before to now, in a word. */
static const char *
how(const char *before, const char *now)
{
	if (strcmp(before, "absent") == 0)
		return "created";
	if (strcmp(now, "absent") == 0)
		return "deleted";
	return "changed";
}

/*
 * Each marker of path in dir, to fn (which may unlink it by name),
 * until fn returns non-zero (then that).  now is path's state; fn is
 * not called for a marker of another path under the same key.
 */
static int
each_marker(const char *dir, const char *path,
    int (*fn)(int dirfd, const char *name, const struct marker *,
    void *arg), void *arg, char *err, size_t errlen)
{
	struct marker	*m;
	struct dirent	*de;
	DIR		*d;
	char		 key[KEY_HEX + 1];
	int		 rc = 0, seen = 0;

	if (path_key(path, key) == -1) {
		snprintf(err, errlen, "SHA-256 failed");
		return -1;
	}
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if ((m = malloc(sizeof(*m))) == NULL) {
		closedir(d);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (++seen > MARKERS_MAX) {
			snprintf(err, errlen, "%s: more than %d entries; "
			    "remove the markers of sessions long gone", dir,
			    MARKERS_MAX);
			rc = -1;
			break;
		}
		if (strncmp(de->d_name, key, KEY_HEX) != 0 ||
		    de->d_name[KEY_HEX] != '.' ||
		    marker_read(dirfd(d), de->d_name, dir, m) == -1 ||
		    strcmp(m->file, path) != 0)
			continue;
		rc = fn(dirfd(d), de->d_name, m, arg);
	}
	free(m);
	closedir(d);
	return rc;
}

struct judge {
	const char	*now;
	char		*err;
	size_t		 errlen;
};

/*
 * A marker against the file as it is now: undone (or never changed by
 * a session that is gone) is forgotten; changed is refused.
 */
static int
judge(int dirfd, const char *name, const struct marker *m, void *arg)
{
	struct judge	*j = arg;
	int		 live;

	live = m->after[0] == '\0' && launch_proc_alive((pid_t)m->pid,
	    m->start);
	if (strcmp(m->before, j->now) == 0) {
		if (!live)
			(void)unlinkat(dirfd, name, 0);
		return 0;
	}
	if (live)
		snprintf(j->err, j->errlen, "%s was %s while bind session %s "
		    "runs, whose command may write it; aisb reads it again "
		    "once that session has ended and you have accepted it "
		    "(aisb trust %s)", m->file, how(m->before, j->now),
		    m->session, m->file);
	else
		snprintf(j->err, j->errlen, "%s was %s by the sandboxed command "
		    "of session %s (aisb sessions show %s), or while it ran; "
		    "aisb reads no such file for a session until you accept "
		    "it: look at it, then run aisb trust %s (or undo the "
		    "change)", m->file, how(m->before, j->now), m->session,
		    m->session, m->file);
	return -1;
}

int
launch_trust_check(char **envp, const char *path, char *err, size_t errlen)
{
	struct judge	 j;
	char		 dir[PATH_MAX], cpath[PATH_MAX], now[LAUNCH_TRUST_STATE];
	char		 key[KEY_HEX + 1];
	struct dirent	*de;
	DIR		*d;
	int		 any = 0;

	if (canon(path, cpath, sizeof(cpath)) == -1)
		return 0;	/* no such folder: nothing read, no marker */
	if (marker_dir(envp, dir, sizeof(dir), 0, err, errlen) == -1 ||
	    path_key(cpath, key) == -1)
		return -1;
	/* the file is hashed only when a marker names it */
	if ((d = opendir(dir)) != NULL) {
		while (!any && (de = readdir(d)) != NULL)
			any = strncmp(de->d_name, key, KEY_HEX) == 0;
		closedir(d);
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!any)
		return 0;
	if (file_state(cpath, now, sizeof(now), err, errlen) == -1)
		return -1;
	j.now = now;
	j.err = err;
	j.errlen = errlen;
	return each_marker(dir, cpath, judge, &j, err, errlen) == 0 ? 0 : -1;
}

/* 1 when path lies below the folder ws (both canonical). */
static int
inside(const char *path, const char *ws)
{
	size_t	 n = strlen(ws);

	return strncmp(path, ws, n) == 0 && (path[n] == '/' ||
	    strcmp(ws, "/") == 0);
}

/* The file at path, watched when it lies in the workspace ws. */
static int
watch(struct launch_trust *t, const char *path, const char *ws,
    const char *session, char *err, size_t errlen)
{
	struct marker	 m;
	char		 key[KEY_HEX + 1];
	size_t		 i;

	if (path == NULL || t->n == LAUNCH_TRUST_FILES ||
	    canon(path, t->f[t->n].path, sizeof(t->f[t->n].path)) == -1 ||
	    !inside(t->f[t->n].path, ws))
		return 0;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->f[i].path, t->f[t->n].path) == 0)
			return 0;
	if (path_key(t->f[t->n].path, key) == -1 ||
	    file_state(t->f[t->n].path, t->f[t->n].before,
	    sizeof(t->f[t->n].before), err, errlen) == -1)
		return -1;
	snprintf(t->f[t->n].marker, sizeof(t->f[t->n].marker), "%s.%s", key,
	    session);
	memset(&m, 0, sizeof(m));
	snprintf(m.file, sizeof(m.file), "%s", t->f[t->n].path);
	snprintf(m.session, sizeof(m.session), "%s", session);
	m.pid = (long)getpid();
	m.start = launch_proc_start(getpid());
	snprintf(m.before, sizeof(m.before), "%s", t->f[t->n].before);
	if (marker_write(t->dir, t->f[t->n].marker, &m, err, errlen) == -1)
		return -1;
	t->n++;
	return 0;
}

int
launch_trust_begin(struct launch_trust *t, char **envp, const char *workspace,
    const char *const *files, size_t nfiles, const char *session, char *err,
    size_t errlen)
{
	char	 ws[PATH_MAX];
	size_t	 i;

	memset(t, 0, sizeof(*t));
	if (realpath(workspace, ws) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", workspace,
		    strerror(errno));
		return -1;
	}
	if (marker_dir(envp, t->dir, sizeof(t->dir), 1, err, errlen) == -1)
		return -1;
	for (i = 0; i < nfiles; i++)
		if (watch(t, files[i], ws, session, err, errlen) == -1)
			return -1;
	return 0;
}

int
launch_trust_end(struct launch_trust *t, const char *session, FILE *out)
{
	struct marker	 m;
	char		 now[LAUNCH_TRUST_STATE], err[PATH_MAX + 128];
	char		 path[PATH_MAX];
	size_t		 i;
	int		 changed = 0;

	for (i = 0; i < t->n; i++) {
		if (file_path_join(path, sizeof(path), t->dir,
		    t->f[i].marker) == -1)
			continue;
		if (file_state(t->f[i].path, now, sizeof(now), err,
		    sizeof(err)) == -1)
			snprintf(now, sizeof(now), "unreadable");
		else if (strcmp(now, t->f[i].before) == 0) {
			(void)unlink(path);
			continue;
		}
		memset(&m, 0, sizeof(m));
		snprintf(m.file, sizeof(m.file), "%s", t->f[i].path);
		snprintf(m.session, sizeof(m.session), "%s", session);
		m.pid = (long)getpid();
		m.start = launch_proc_start(getpid());
		snprintf(m.before, sizeof(m.before), "%s", t->f[i].before);
		snprintf(m.after, sizeof(m.after), "%s", now);
		/* should it fail, the marker says the same without "after" */
		if (marker_write(t->dir, t->f[i].marker, &m, err,
		    sizeof(err)) == -1)
			fprintf(out, "aisb: %s\n", err);
		fprintf(out, "aisb: the command %s %s, which aisb reads for "
		    "the sessions here; no session reads it until you have "
		    "looked at it and run: aisb trust %s\n",
		    how(t->f[i].before, now), t->f[i].path, t->f[i].path);
		changed++;
	}
	return changed;
}

struct accept {
	FILE		*out;
	const char	*now;
	char		*err;
	size_t		 errlen;
	int		 n;
};

static int
accept_one(int dirfd, const char *name, const struct marker *m, void *arg)
{
	struct accept	*a = arg;

	if (m->after[0] == '\0' && launch_proc_alive((pid_t)m->pid,
	    m->start)) {
		snprintf(a->err, a->errlen, "%s: bind session %s still runs, "
		    "and its command may write it yet; run aisb trust once it "
		    "has ended", m->file, m->session);
		return -1;
	}
	if (unlinkat(dirfd, name, 0) == -1) {
		snprintf(a->err, a->errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (strcmp(m->before, a->now) != 0) {
		fprintf(a->out, "aisb: accepted %s as it is now (%s; it was "
		    "%s by session %s)\n", m->file, a->now, how(m->before,
		    a->now), m->session);
		a->n++;
	}
	return 0;
}

int
launch_trust_accept(char **envp, const char *path, FILE *out, char *err,
    size_t errlen)
{
	struct accept	 a;
	char		 dir[PATH_MAX], cpath[PATH_MAX], now[LAUNCH_TRUST_STATE];

	if (canon(path, cpath, sizeof(cpath)) == -1) {
		snprintf(err, errlen, "%s: no such folder", path);
		return -1;
	}
	if (marker_dir(envp, dir, sizeof(dir), 0, err, errlen) == -1 ||
	    file_state(cpath, now, sizeof(now), err, errlen) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.out = out;
	a.now = now;
	a.err = err;
	a.errlen = errlen;
	if (each_marker(dir, cpath, accept_one, &a, err, errlen) != 0)
		return -1;
	if (a.n == 0) {
		fprintf(out, "aisb: %s: no session changed it; nothing to "
		    "accept\n", cpath);
		return 1;
	}
	return 0;
}
