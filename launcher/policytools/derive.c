/*
 * aisb policy derive apt|npm|pip|git: a policy allowing the sources the
 * user's own tools are configured with, so that nobody has to copy a
 * registry or mirror name into a policy by hand (and no name is written
 * into aisb itself, except pip's documented default index).
 *
 *   apt: the http(s) URIs of /etc/apt/sources.list, the .list files of
 *        sources.list.d (one-line format) and its .sources files (deb822).
 *   npm: the registry `npm config get registry` prints (run with an argv,
 *        never a shell), which honours .npmrc files and npm_config_*.
 *   pip: index-url, extra-index-url and find-links as pip install would
 *        see them: PIP_* variables over the configuration files, a later
 *        file over an earlier one, [install] over [global]; pypi.org and
 *        files.pythonhosted.org when no index is configured.
 *   git: the remotes' url and pushurl of the workspace's .git/config
 *        (a worktree's .git file is followed to the common folder):
 *        http(s), ssh:// and scp-like user@host:path.
 *
 * After the YAML, a comment says the one session command that uses it,
 * so that `derive apt > apt.yaml` is still a policy.  Every file is read
 * whole and bounded (DERIVE_MAX_FILE: a larger one is refused, nothing is
 * derived); credentials in URLs are never copied.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "file.h"
#include "policytools/derive.h"
#include "policytools/lockfile.h"
#include "policytools/reach.h"
#include "policy.h"
#include "host/proc.h"

#define DERIVE_MAX_FILE		(256 * 1024)	/* bytes of one sources file */
#define DERIVE_MAX_FILES	256		/* files in sources.list.d */
#define DERIVE_MAX_HOSTS	256		/* distinct sources */
#define DERIVE_MAX_NPM_OUT	4096		/* bytes of npm's answer */

struct source {
	char		 host[POLICY_MAX_NAME + 3];	/* [v6] fits too */
	uint16_t	 port;
	int		 ssh;		/* reached by ssh, not http(s) */
};

struct sources {
	struct source	 s[DERIVE_MAX_HOSTS];
	size_t		 n;
	int		 skipped;	/* URIs that are not http(s) */
	int		 refused;	/* a file over DERIVE_MAX_FILE was read */
};

/* Adds host[:port] (len bytes), once; what does not parse is counted. */
static void
add_host(struct sources *out, const char *p, size_t len, uint16_t defport,
    int ssh)
{
	struct policy_target	 t;
	char			 err[128];
	size_t			 i;

	if (policy_parse_target(p, len, defport, &t, err, sizeof(err)) == -1) {
		out->skipped++;
		return;
	}
	for (i = 0; i < out->n; i++)
		if (strcmp(out->s[i].host, t.host) == 0 &&
		    out->s[i].port == t.port)
			return;
	if (out->n == DERIVE_MAX_HOSTS) {
		out->skipped++;
		return;
	}
	snprintf(out->s[out->n].host, sizeof(out->s[out->n].host), "%s",
	    t.host);
	out->s[out->n].port = t.port;
	out->s[out->n].ssh = ssh;
	out->n++;
}

/*
 * Adds the host of an http(s) URI.  Other schemes (file:, cdrom:, tor+,
 * mirror+) are counted and left out: they need no network or need more
 * than a host rule.
 */
static void
add_uri(struct sources *out, const char *uri, size_t len)
{
	const char		*p, *end;
	uint16_t		 defport;

	if (len > 7 && strncasecmp(uri, "http://", 7) == 0) {
		p = uri + 7;
		defport = 80;
	} else if (len > 8 && strncasecmp(uri, "https://", 8) == 0) {
		p = uri + 8;
		defport = 443;
	} else {
		out->skipped++;
		return;
	}
	for (end = p; end < uri + len && *end != '/' && *end != '?' &&
	    *end != '#'; end++)
		;
	if (memchr(p, '@', (size_t)(end - p)) != NULL) {
		/* credentials in a URI: never copy them into a policy */
		p = (const char *)memchr(p, '@', (size_t)(end - p)) + 1;
	}
	add_host(out, p, (size_t)(end - p), defport, 0);
}

/*
 * A file whole (file.h), at most DERIVE_MAX_FILE bytes, NUL-terminated.
 * NULL when it is missing or cannot be read: derive skips it, as it
 * skips a source it cannot use.  A larger file is refused, never cut (a
 * policy derived from half a sources file would silently lack the rest):
 * NULL, a line on stderr naming the file and the bound, and *refused set
 * so that derive fails.
 */
static char *
read_checked(char *buf, const char *err, int *refused)
{
	if (buf == NULL && errno == EFBIG) {
		fprintf(stderr, "aisb: policy derive: %s, the most it reads of "
		    "one file: nothing derived; trim the file or split it "
		    "(apt reads every file in sources.list.d)\n", err);
		*refused = 1;
	}
	return buf;
}

/* dir/name, never through a link in name's place: apt's and git's own files. */
static char *
read_in(const char *dir, const char *name, size_t *lenp, int *refused)
{
	char	 err[4200];

	return read_checked(file_read_in(dir, name, DERIVE_MAX_FILE, lenp,
	    err, sizeof(err)), err, refused);
}

/* path, through links: a user's pip.conf often is one (dotfile managers). */
static char *
read_path(const char *path, size_t *lenp, int *refused)
{
	char	 err[4200];

	return read_checked(file_read_bounded(path, DERIVE_MAX_FILE, lenp,
	    err, sizeof(err)), err, refused);
}

/* One-line format: "deb [opts] URI suite [component...]". */
static void
parse_list(struct sources *out, char *buf)
{
	char	*line, *save = NULL, *tok, *s2;

	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash != NULL)
			*hash = '\0';
		tok = strtok_r(line, " \t", &s2);
		if (tok == NULL || (strcmp(tok, "deb") != 0 &&
		    strcmp(tok, "deb-src") != 0))
			continue;
		tok = strtok_r(NULL, " \t", &s2);
		if (tok != NULL && tok[0] == '[') {
			/* options: skip to the token that closes them */
			while (tok != NULL && strchr(tok, ']') == NULL)
				tok = strtok_r(NULL, " \t", &s2);
			if (tok != NULL && tok[strlen(tok) - 1] != ']')
				continue;
			tok = strtok_r(NULL, " \t", &s2);
		}
		if (tok != NULL)
			add_uri(out, tok, strlen(tok));
	}
}

/* deb822: stanzas split by blank lines; "URIs:" unless "Enabled: no". */
static void
parse_deb822(struct sources *out, char *buf)
{
	char	*stanza = buf, *next, *line, *save, *tok, *s2;
	int	 enabled;

	while (stanza != NULL && *stanza != '\0') {
		char	*uris = NULL;

		next = strstr(stanza, "\n\n");
		if (next != NULL) {
			*next = '\0';
			next += 2;
		}
		enabled = 1;
		save = NULL;
		for (line = strtok_r(stanza, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (strncasecmp(line, "URIs:", 5) == 0)
				uris = line + 5;
			else if (strncasecmp(line, "Enabled:", 8) == 0 &&
			    strstr(line + 8, "no") != NULL)
				enabled = 0;
		}
		if (enabled && uris != NULL)
			for (tok = strtok_r(uris, " \t", &s2); tok != NULL;
			    tok = strtok_r(NULL, " \t", &s2))
				add_uri(out, tok, strlen(tok));
		stanza = next;
	}
}

static int
endswith(const char *s, const char *sfx)
{
	size_t	 a = strlen(s), b = strlen(sfx);

	return a >= b && strcmp(s + a - b, sfx) == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static int
derive_apt(const char *root, struct sources *out, char *from, size_t fromlen)
{
	char		 path[4096], *buf, *names[DERIVE_MAX_FILES];
	size_t		 len, n = 0, i;
	DIR		*d;
	struct dirent	*de;

	snprintf(path, sizeof(path), "%s/etc/apt", root);
	if ((buf = read_in(path, "sources.list", &len,
	    &out->refused)) != NULL) {
		parse_list(out, buf);
		free(buf);
		snprintf(from, fromlen, "%s/sources.list", path);
	}
	snprintf(path, sizeof(path), "%s/etc/apt/sources.list.d", root);
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL && n < DERIVE_MAX_FILES) {
			if (de->d_name[0] == '.' ||
			    (!endswith(de->d_name, ".list") &&
			    !endswith(de->d_name, ".sources")))
				continue;
			if ((names[n] = strdup(de->d_name)) != NULL)
				n++;
		}
		closedir(d);
		qsort(names, n, sizeof(*names), name_cmp);
		for (i = 0; i < n; i++) {
			if ((buf = read_in(path, names[i], &len,
			    &out->refused)) != NULL) {
				if (endswith(names[i], ".list"))
					parse_list(out, buf);
				else
					parse_deb822(out, buf);
				free(buf);
			}
			free(names[i]);
		}
		if (n > 0) {
			size_t l = strlen(from);

			snprintf(from + l, fromlen - l, "%s%s/etc/apt/"
			    "sources.list.d", l ? ", " : "", root);
		}
	}
	if (out->refused)
		return -1;
	if (out->n == 0) {
		fprintf(stderr, "aisb: no http(s) sources found under "
		    "%s/etc/apt\n", root);
		return -1;
	}
	return 0;
}

static int
derive_npm(struct sources *out, char *from, size_t fromlen, char *url,
    size_t urllen)
{
	char		*argv[] = { "npm", "config", "get", "registry", NULL };
	char		 buf[DERIVE_MAX_NPM_OUT + 1], err[256];
	size_t		 off;
	int		 rc;

	/* npm's own complaints go to our stderr */
	rc = launch_exec(argv, NULL, 0, buf, sizeof(buf), 0, LAUNCH_EXEC_SHOW,
	    err, sizeof(err));
	if (rc == -1) {
		fprintf(stderr, "aisb: cannot run npm: %s\n", err);
		return -1;
	}
	if (rc != 0) {
		fprintf(stderr, "aisb: npm config get registry failed\n");
		return -1;
	}
	off = strlen(buf);
	while (off > 0 && isspace((unsigned char)buf[off - 1]))
		buf[--off] = '\0';
	add_uri(out, buf, off);
	if (url != NULL)
		snprintf(url, urllen, "%s", buf);
	if (out->n == 0) {
		fprintf(stderr, "aisb: npm's registry is not an http(s) URL\n");
		return -1;
	}
	snprintf(from, fromlen, "npm config get registry");
	return 0;
}

/* --- pip ------------------------------------------------------------------ */

#define PIP_KEYS	3	/* index-url, extra-index-url, find-links */

struct pipcfg {
	char	*val[PIP_KEYS];		/* malloc'd; NULL: not set */
	char	 from[PIP_KEYS][1024];	/* where each came from */
	int	 refused;		/* a file over DERIVE_MAX_FILE */
};

static const char *const pip_keys[PIP_KEYS] = {
	"index-url", "extra-index-url", "find-links"
};

static void
pip_set(struct pipcfg *c, int k, const char *v, size_t len, const char *from)
{
	free(c->val[k]);
	c->val[k] = strndup(v, len);
	snprintf(c->from[k], sizeof(c->from[k]), "%s", from);
}

/* "index_url" and "index-url" are the same key to pip. */
static int
pip_key(const char *s, size_t len)
{
	int	 k;
	size_t	 i;

	for (k = 0; k < PIP_KEYS; k++) {
		if (strlen(pip_keys[k]) != len)
			continue;
		for (i = 0; i < len; i++)
			if (tolower((unsigned char)s[i]) != pip_keys[k][i] &&
			    !(s[i] == '_' && pip_keys[k][i] == '-'))
				break;
		if (i == len)
			return k;
	}
	return -1;
}

/*
 * One pip configuration file (INI): the keys of [global], then of
 * [install], which pip install prefers.  A value may go on over indented
 * lines (several URLs).
 */
static void
pip_file(struct pipcfg *c, const char *path)
{
	char		*buf, *line, *save = NULL, *eq, *v;
	char		 val[PIP_KEYS][4096];
	int		 have[2][PIP_KEYS] = { { 0 } }, sect = -1, k = -1;
	int		 pass, kk;
	size_t		 len, l, n;
	char		*copy;

	if ((buf = read_path(path, &len, &c->refused)) == NULL)
		return;
	for (pass = 0; pass < 2; pass++) {
		if ((copy = strdup(buf)) == NULL)
			break;
		sect = -1;
		k = -1;
		save = NULL;
		for (line = strtok_r(copy, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			l = strlen(line);
			while (l > 0 && isspace((unsigned char)line[l - 1]))
				line[--l] = '\0';
			if (l == 0 || line[0] == '#' || line[0] == ';')
				continue;
			if (line[0] == '[') {
				sect = strncasecmp(line, "[global]", 8) == 0 ?
				    0 : strncasecmp(line, "[install]", 9) == 0 ?
				    1 : -1;
				k = -1;
				continue;
			}
			if (isspace((unsigned char)line[0])) {
				/* a continuation of the last value */
				if (k >= 0 && sect == pass) {
					for (v = line; isspace((unsigned char)*v);
					    v++)
						;
					n = strlen(val[k]);
					snprintf(val[k] + n, sizeof(val[k]) - n,
					    " %s", v);
				}
				continue;
			}
			k = -1;
			if (sect != pass || (eq = strpbrk(line, "=:")) == NULL)
				continue;
			for (l = (size_t)(eq - line); l > 0 &&
			    isspace((unsigned char)line[l - 1]); l--)
				;
			if ((k = pip_key(line, l)) == -1)
				continue;
			for (v = eq + 1; isspace((unsigned char)*v); v++)
				;
			snprintf(val[k], sizeof(val[k]), "%s", v);
			have[pass][k] = 1;
		}
		free(copy);
		for (kk = 0; kk < PIP_KEYS; kk++)
			if (have[pass][kk])
				pip_set(c, kk, val[kk], strlen(val[kk]), path);
	}
	free(buf);
}

/* Each whitespace-separated http(s) URL of v. */
static void
add_uris(struct sources *out, const char *v)
{
	size_t	 n;

	while (*v != '\0') {
		while (isspace((unsigned char)*v))
			v++;
		n = strcspn(v, " \t\r\n");
		if (n > 0)
			add_uri(out, v, n);
		v += n;
	}
}

static int
derive_pip(struct sources *out, char *from, size_t fromlen, char *use,
    size_t uselen, char **vals)
{
	static const char *const envs[PIP_KEYS] = {
		"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"
	};
	struct pipcfg	 c;
	const char	*home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	const char	*v;
	char		 path[4096], envflags[128] = "";
	size_t		 i, l;
	int		 k;

	memset(&c, 0, sizeof(c));
	/* pip's order: site-wide, legacy user, user, PIP_CONFIG_FILE */
	pip_file(&c, "/etc/xdg/pip/pip.conf");
	pip_file(&c, "/etc/pip.conf");
	if (home != NULL && home[0] != '\0') {
		snprintf(path, sizeof(path), "%s/.pip/pip.conf", home);
		pip_file(&c, path);
	}
	if (xdg != NULL && xdg[0] == '/')
		snprintf(path, sizeof(path), "%s/pip/pip.conf", xdg);
	else if (home != NULL && home[0] != '\0')
		snprintf(path, sizeof(path), "%s/.config/pip/pip.conf", home);
	else
		path[0] = '\0';
	if (path[0] != '\0')
		pip_file(&c, path);
	if ((v = getenv("PIP_CONFIG_FILE")) != NULL && v[0] != '\0' &&
	    strcmp(v, "os.devnull") != 0)
		pip_file(&c, v);
	if (c.refused) {
		out->refused = 1;
		for (k = 0; k < PIP_KEYS; k++)
			free(c.val[k]);
		return -1;
	}
	for (k = 0; k < PIP_KEYS; k++)
		if ((v = getenv(envs[k])) != NULL && v[0] != '\0') {
			pip_set(&c, k, v, strlen(v), envs[k]);
			l = strlen(envflags);
			/* the name only: the value (it may hold a token) stays */
			snprintf(envflags + l, sizeof(envflags) - l, " --env %s",
			    envs[k]);
		}
	if (c.val[0] == NULL) {
		/* pip's documented default index and where it keeps files */
		add_uri(out, "https://pypi.org/simple", 23);
		add_uri(out, "https://files.pythonhosted.org/", 31);
		snprintf(from, fromlen, "pip's default index (nothing "
		    "configured)");
	}
	for (k = 0; k < PIP_KEYS; k++) {
		if (c.val[k] == NULL)
			continue;
		add_uris(out, c.val[k]);
		l = strlen(from);
		snprintf(from + l, fromlen - l, "%s%s (%s)", l ? ", " : "",
		    c.from[k], pip_keys[k]);
	}
	for (i = 0; i < PIP_KEYS; i++) {
		if (vals != NULL)
			vals[i] = c.val[i];	/* the caller's now */
		else
			free(c.val[i]);
	}
	if (out->n == 0) {
		fprintf(stderr, "aisb: pip's index is not an http(s) URL "
		    "(%s)\n", from);
		return -1;
	}
	/* Debian's pip refuses system installs (PEP 668): a venv */
	snprintf(use, uselen, "aisb --policy pip.yaml%s --package python3-venv "
	    "-- sh -c 'python3 -m venv ~/venv && ~/venv/bin/pip install -r "
	    "requirements.txt'", envflags);
	return 0;
}

/* --- git ------------------------------------------------------------------ */

/*
 * The host of a git remote URL: http(s)://, ssh:// (git+ssh://,
 * ssh+git://), or scp-like [user@]host:path.  git:// and local paths are
 * counted and left out.
 */
static void
add_git_url(struct sources *out, const char *u)
{
	const char	*p, *end, *at;

	if (strncasecmp(u, "http://", 7) == 0 ||
	    strncasecmp(u, "https://", 8) == 0) {
		add_uri(out, u, strlen(u));
		return;
	}
	if ((p = strstr(u, "://")) != NULL) {
		if ((p - u == 3 && strncasecmp(u, "ssh", 3) == 0) ||
		    (p - u == 7 && (strncasecmp(u, "git+ssh", 7) == 0 ||
		    strncasecmp(u, "ssh+git", 7) == 0))) {
			p += 3;
			end = p + strcspn(p, "/");
			if ((at = memchr(p, '@', (size_t)(end - p))) != NULL)
				p = at + 1;
			add_host(out, p, (size_t)(end - p), 22, 1);
		} else
			out->skipped++;	/* git://, file://, ext:: ... */
		return;
	}
	/* scp-like: a ':' before any '/'; else a local path */
	end = u + strcspn(u, ":/");
	if (*end != ':' || end == u) {
		out->skipped++;
		return;
	}
	p = u;
	if ((at = memchr(u, '@', (size_t)(end - u))) != NULL)
		p = at + 1;
	if (*p == '[') {	/* [host]:path, [host:port]:path */
		const char *close = strchr(p, ']');

		if (close == NULL || close[1] != ':') {
			out->skipped++;
			return;
		}
		add_host(out, p + 1, (size_t)(close - p - 1), 22, 1);
		return;
	}
	add_host(out, p, (size_t)(end - p), 22, 1);
}

/*
 * The folder that holds the repository's config: ws/.git, or where a
 * .git file (a worktree, a submodule) points, and its commondir.
 */
static int
git_dir(const char *ws, char *dir, size_t len)
{
	char	 path[4096], *buf, *p;
	size_t	 n;
	int	 refused = 0;
	struct stat st;

	snprintf(path, sizeof(path), "%s/.git", ws);
	if (stat(path, &st) == -1) {
		fprintf(stderr, "aisb: %s: no git repository here (use "
		    "--workspace DIR)\n", ws);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(dir, len, "%s", path);
		return 0;
	}
	if ((buf = read_in(ws, ".git", &n, &refused)) == NULL ||
	    strncmp(buf, "gitdir: ", 8) != 0) {
		if (!refused)
			fprintf(stderr, "aisb: %s: not a git directory nor a "
			    "gitdir file\n", path);
		free(buf);
		return -1;
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	p = buf + 8;
	if (p[0] == '/')
		snprintf(dir, len, "%s", p);
	else
		snprintf(dir, len, "%s/%s", ws, p);
	free(buf);
	/* a worktree's config is the main repository's */
	if ((buf = read_in(dir, "commondir", &n, &refused)) != NULL) {
		buf[strcspn(buf, "\r\n")] = '\0';
		if ((buf[0] == '/' ? snprintf(path, sizeof(path), "%s", buf) :
		    snprintf(path, sizeof(path), "%s/%s", dir, buf)) <
		    (int)sizeof(path))
			snprintf(dir, len, "%s", path);
		free(buf);
	}
	return refused ? -1 : 0;
}

static int
derive_git(const char *ws, struct sources *out, char *from, size_t fromlen,
    char *use, size_t uselen)
{
	char	 dir[4096], path[4200], *buf, *line, *save = NULL, *v, *q;
	size_t	 len, l, i;
	int	 remote = 0, nurls = 0, ssh = 0, refused = 0;

	if (git_dir(ws, dir, sizeof(dir)) == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/config", dir);
	if ((buf = read_in(dir, "config", &len, &refused)) == NULL) {
		if (!refused)
			fprintf(stderr, "aisb: %s: %s\n", path,
			    strerror(errno));
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		while (isspace((unsigned char)*line))
			line++;
		if (*line == '[') {
			remote = strncasecmp(line, "[remote ", 8) == 0 ||
			    strncasecmp(line, "[remote\t", 8) == 0;
			continue;
		}
		if (!remote || (strncasecmp(line, "url", 3) != 0 &&
		    strncasecmp(line, "pushurl", 7) != 0))
			continue;
		v = line + (tolower((unsigned char)line[0]) == 'u' ? 3 : 7);
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v == '"' && (q = strchr(v + 1, '"')) != NULL) {
			v++;
			*q = '\0';
		}
		l = strlen(v);
		while (l > 0 && isspace((unsigned char)v[l - 1]))
			v[--l] = '\0';
		if (l > 0) {
			add_git_url(out, v);
			nurls++;
		}
	}
	free(buf);
	if (out->n == 0) {
		fprintf(stderr, "aisb: %s: no remote with an http(s) or ssh "
		    "URL (%d URL(s) left out)\n", path, nurls);
		return -1;
	}
	snprintf(from, fromlen, "the remotes in %s", path);
	for (i = 0; i < out->n; i++)
		ssh |= out->s[i].ssh;
	/*
	 * git over ssh ignores proxy variables: through the gate it cannot
	 * go; --net direct lets the enforcer open exactly these ports.
	 */
	snprintf(use, uselen, "aisb %s--policy git.yaml --package git%s -- "
	    "git fetch", ssh ? "--net direct " : "",
	    ssh ? " --package openssh-client" : "");
	return 0;
}

/* --- the command ------------------------------------------------------------ */

static void	print_policy(FILE *, const char *, const struct sources *,
		    const char *, const char *);



int
launch_derive(const char *kind, const char *root, const char *ws, FILE *out)
{
	struct sources	*src;
	char		 from[8192] = "", use[512] = "";
	int		 rc;

	if ((src = calloc(1, sizeof(*src))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	if (strcmp(kind, "apt") == 0) {
		rc = derive_apt(root, src, from, sizeof(from));
		snprintf(use, sizeof(use), "aisb --policy apt.yaml -- "
		    "apt-get update");
	} else if (strcmp(kind, "npm") == 0) {
		rc = derive_npm(src, from, sizeof(from), NULL, 0);
		snprintf(use, sizeof(use), "aisb --policy npm.yaml --package "
		    "npm -- npm ci");
	} else if (strcmp(kind, "pip") == 0)
		rc = derive_pip(src, from, sizeof(from), use, sizeof(use),
		    NULL);
	else
		rc = derive_git(ws, src, from, sizeof(from), use, sizeof(use));
	if (rc == 0)
		print_policy(out, kind, src, from, use);
	free(src);
	return rc;
}

int
launch_derive_npm(FILE *f, char *registry, size_t reglen)
{
	struct sources	*src;
	char		 from[64] = "";
	int		 rc;

	if ((src = calloc(1, sizeof(*src))) == NULL)
		return -1;
	if ((rc = derive_npm(src, from, sizeof(from), registry,
	    reglen)) == 0)
		print_policy(f, "npm", src, from, "aisb --policy npm.yaml "
		    "--package npm -- npm ci");
	free(src);
	return rc;
}

int
launch_derive_pip(FILE *f, char **vals)
{
	struct sources	*src;
	char		 from[8192] = "", use[512];
	int		 rc, k;

	for (k = 0; k < 3; k++)
		vals[k] = NULL;
	if ((src = calloc(1, sizeof(*src))) == NULL)
		return -1;
	if ((rc = derive_pip(src, from, sizeof(from), use, sizeof(use),
	    vals)) == 0)
		print_policy(f, "pip", src, from, use);
	free(src);
	return rc;
}

/* The policy YAML of src, and how to use it, to f. */
static void
print_policy(FILE *f, const char *kind, const struct sources *src,
    const char *from, const char *use)
{
	size_t	 i;

	fprintf(f, "# derived by aisb from %s\n", from);
	if (src->skipped > 0)
		fprintf(f, "# %d source(s) left out: not http(s)%s, or not a host\n",
		    src->skipped, strcmp(kind, "git") == 0 ? " or ssh" : "");
	fprintf(f, "version: 1\nallow:\n");
	for (i = 0; i < src->n; i++) {
		const char *h = src->s[i].host;

		if (strchr(h, ':') != NULL)
			fprintf(f, "  - cidr: \"%s\"\n", h);
		else if (policy_parse_addr(h, strlen(h), &(struct policy_addr){ 0 }) == 0)
			fprintf(f, "  - cidr: %s\n", h);
		else
			fprintf(f, "  - host: %s\n", h);
		fprintf(f, "    ports: [%u]%s\n", src->s[i].port,
		    src->s[i].ssh ? "    # ssh" : "");
	}
	for (i = 0; i < src->n && !src->s[i].ssh; i++)
		;
	if (i < src->n)
		fprintf(f, "# ssh remotes: git over ssh ignores proxy variables, so "
		    "the gate never\n# carries it; --net direct lets out exactly "
		    "these hosts and ports.\n");
	/* the sources that resolve into a denied range (reach.h) */
	if (strcmp(kind, "git") != 0) {
		const char	*hosts[DERIVE_MAX_HOSTS];

		for (i = 0; i < src->n; i++)
			hosts[i] = src->s[i].host;
		launch_reach_note(f, hosts, src->n);
	}
	/* a comment: `derive KIND > KIND.yaml` stays a policy */
	fprintf(f, "# save as %s.yaml and run: %s\n", kind, use);
}


/* --- derive env's pip and apt (lockfile.h; issue 19) ----------------------- */

static void
env_copy(const struct sources *src, struct lockfile_hosts *out, unsigned file)
{
	size_t	 i;

	for (i = 0; i < src->n; i++)
		if (!src->s[i].ssh)
			(void)lockfile_add(out, src->s[i].host, src->s[i].port,
			    file, 0);
}

int
launch_derive_env_pip_apt(const char *root, struct lockfile_hosts *out,
    unsigned pipfile, unsigned aptfile, char *from, size_t fromlen)
{
	struct sources	*src;
	char		*vals[PIP_KEYS] = { NULL }, use[512], path[4096];
	struct stat	 st;
	int		 k, configured = 0, rc = 0;

	if ((src = calloc(1, sizeof(*src))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	/* pip: only what the user configured, not pip's default index */
	if (derive_pip(src, from, fromlen, use, sizeof(use), vals) == 0) {
		for (k = 0; k < PIP_KEYS; k++)
			configured |= vals[k] != NULL;
		if (configured)
			env_copy(src, out, pipfile);
	} else if (src->refused)
		rc = -1;
	for (k = 0; k < PIP_KEYS; k++)
		free(vals[k]);
	memset(src, 0, sizeof(*src));
	snprintf(path, sizeof(path), "%s/etc/apt", root);
	if (rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (derive_apt(root, src, from, fromlen) == 0)
			env_copy(src, out, aptfile);
		else if (src->refused)
			rc = -1;
	}
	free(src);
	return rc;
}
