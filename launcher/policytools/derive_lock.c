/*
 * aisb policy derive lockfile|env, and aisb --allow-from-lockfile: the
 * files of lockfile.h read from disk, their hosts printed as a policy or
 * merged into the session's.
 *
 *   lockfile [PATH...]  the lockfiles named, or those found at the top
 *                       of the workspace (--workspace DIR; a yarn.lock or
 *                       pnpm-lock.yaml brings the workspace's .yarnrc.yml
 *                       and .npmrc, which name their registry)
 *   env                 the user's tool configurations: .npmrc,
 *                       .yarnrc.yml, pip (as derive pip), cargo's
 *                       config.toml, git's url.*.insteadOf, apt's sources
 *                       (as derive apt), and the workspace's .npmrc,
 *                       .yarnrc.yml and .cargo/config.toml
 *
 * A file of the workspace (an untrusted repository's) is read never
 * through a symbolic link; a file the user names or keeps in $HOME is.
 * Every file is read whole, at most LOCKFILE_MAX_SIZE bytes: a larger or
 * malformed one stops everything (exit 78) naming the file and the line;
 * nothing is derived from half a lockfile.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "file.h"
#include "policytools/derive.h"
#include "policytools/polyaml.h"
#include "policytools/lockfile.h"
#include "policy.h"
#include "termsafe.h"
#include "host/proc.h"

#define LOCK_MAX_GOPROXY	1024	/* bytes of go env GOPROXY's answer */

struct lockset {
	struct lockfile_hosts	 hosts;
	char			 files[LOCKFILE_MAX_FILES][PATH_MAX];
	size_t			 nfiles;
	unsigned		 flags;
	char			 goproxy[LOCK_MAX_GOPROXY];
	const char		*goproxy_from;
	int			 have_goproxy;
};

/* s to f, terminal-safe (termsafe.h; no '\n'): paths in comments. */
static void
put_clean(FILE *f, const char *s)
{
	(void)term_fputs(s, f, 0);
}

/* FILE:LINE of host i (FILE alone: GOPROXY's, a configuration's). */
static void
put_where(FILE *f, const struct lockset *s, size_t i)
{
	put_clean(f, s->files[s->hosts.h[i].file]);
	if (s->hosts.h[i].line > 0)
		fprintf(f, ":%u", s->hosts.h[i].line);
}

/*
 * go env GOPROXY with GOTOOLCHAIN=local: in a module whose go.mod asks
 * for a newer go, go would otherwise fetch that toolchain first, over
 * the network, because an untrusted repository said so.  The exit
 * status, or -1.
 */
static int
go_env(char **argv, char *out, size_t outlen, char *err, size_t errlen)
{
	extern char	**environ;
	char		**envp;
	size_t		 n, i, k = 0;
	int		 rc;

	for (n = 0; environ[n] != NULL; n++)
		;
	if ((envp = calloc(n + 2, sizeof(*envp))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "GOTOOLCHAIN=", 12) != 0)
			envp[k++] = environ[i];
	envp[k++] = (char *)"GOTOOLCHAIN=local";
	envp[k] = NULL;
	rc = launch_exec_env(argv, envp, NULL, 0, out, outlen, 10000, 0, err,
	    errlen);
	free(envp);
	return rc;
}

/*
 * go.sum's proxy: go env GOPROXY when go is installed, else $GOPROXY,
 * else go's default (lockfile.c), and which one it was.
 */
static void
lock_goproxy(struct lockset *s)
{
	char	*argv[] = { "go", "env", "GOPROXY", NULL };
	char	 prog[PATH_MAX], err[256];
	const char *v;
	size_t	 n;

	if (s->have_goproxy)
		return;
	s->have_goproxy = 1;
	s->goproxy[0] = '\0';
	if (launch_find_program("go", prog, sizeof(prog)) == 0 &&
	    go_env(argv, s->goproxy, sizeof(s->goproxy), err,
	    sizeof(err)) == 0) {
		n = strcspn(s->goproxy, "\r\n");
		s->goproxy[n] = '\0';
		s->goproxy_from = "go env GOPROXY";
		if (n > 0)
			return;
	}
	if ((v = getenv("GOPROXY")) != NULL && v[0] != '\0') {
		snprintf(s->goproxy, sizeof(s->goproxy), "%s", v);
		s->goproxy_from = "$GOPROXY (go is not installed)";
		return;
	}
	s->goproxy[0] = '\0';
	s->goproxy_from = "go's default GOPROXY (no go, no $GOPROXY)";
}

/*
 * dir/name (dir NULL: name is a path) of kind, parsed into s.  nofollow:
 * the workspace's, never through a link.  0; 1 when it is missing and
 * optional; -1 after one line on stderr.
 */
static int
lock_file(struct lockset *s, const char *dir, const char *name, int kind,
    int optional, int nofollow)
{
	char	 path[PATH_MAX], err[PATH_MAX + 256], *buf;
	size_t	 len;
	int	 e;

	if (dir != NULL) {
		if (file_path_join(path, sizeof(path), dir, name) == -1) {
			fprintf(stderr, "aisb: %s/%s: path too long\n", dir,
			    name);
			return -1;
		}
	} else
		snprintf(path, sizeof(path), "%s", name);
	if (kind < 0) {
		fprintf(stderr, "aisb: policy derive lockfile: %s: not a "
		    "lockfile aisb reads (package-lock.json, npm-shrinkwrap."
		    "json, yarn.lock, pnpm-lock.yaml, Cargo.lock, poetry.lock, "
		    "requirements*.txt, go.sum, Gemfile.lock, .yarnrc.yml, "
		    ".npmrc)\n", path);
		return -1;
	}
	if (nofollow && dir != NULL)
		buf = file_read_in(dir, name, LOCKFILE_MAX_SIZE, &len, err,
		    sizeof(err));
	else
		buf = file_read_bounded(path, LOCKFILE_MAX_SIZE, &len, err,
		    sizeof(err));
	if (buf == NULL) {
		e = errno;
		if (e == ENOENT && optional)
			return 1;
		if (e == EFBIG)
			fprintf(stderr, "aisb: %s: larger than %d MiB, the most "
			    "aisb reads of a lockfile: nothing derived\n", path,
			    LOCKFILE_MAX_SIZE >> 20);
		else
			fprintf(stderr, "aisb: %s\n", err);
		return -1;
	}
	if (s->nfiles == LOCKFILE_MAX_FILES) {
		free(buf);
		fprintf(stderr, "aisb: more than %d files: derive them in "
		    "parts\n", LOCKFILE_MAX_FILES);
		return -1;
	}
	if (kind == LOCKFILE_GOSUM)
		lock_goproxy(s);
	snprintf(s->files[s->nfiles], sizeof(s->files[0]), "%s", path);
	if (lockfile_parse(kind, buf, len, s->flags, s->goproxy,
	    (unsigned)s->nfiles, &s->hosts, err, sizeof(err)) == -1) {
		free(buf);
		fprintf(stderr, "aisb: %s: %s; nothing derived (fix the file, "
		    "or leave it out)\n", path, err);
		return -1;
	}
	free(buf);
	s->nfiles++;
	return 0;
}

/* The lockfiles at the top of ws; 0 (s->nfiles may be 0) or -1. */
static int
lock_workspace(struct lockset *s, const char *ws)
{
	static const char *const names[] = {
		"package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
		"pnpm-lock.yaml", "Cargo.lock", "poetry.lock", "go.sum",
		"Gemfile.lock", "gems.locked",
	};
	char		*req[LOCKFILE_MAX_FILES];
	size_t		 i, nreq = 0;
	int		 rc, js = 0;
	DIR		*d;
	struct dirent	*de;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((rc = lock_file(s, ws, names[i], lockfile_kind_of(names[i]),
		    1, 1)) == -1)
			return -1;
		if (rc == 0 && (i == 2 || i == 3))
			js = 1;
	}
	/* requirements*.txt, in name order */
	if ((d = opendir(ws)) == NULL) {
		fprintf(stderr, "aisb: %s: %s\n", ws, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (lockfile_kind_of(de->d_name) != LOCKFILE_PIPREQ)
			continue;
		if (nreq == LOCKFILE_MAX_FILES / 2) {
			fprintf(stderr, "aisb: %s: more than %d requirements*.txt"
			    ": name the ones to read (aisb policy derive "
			    "lockfile PATH...)\n", ws, LOCKFILE_MAX_FILES / 2);
			closedir(d);
			while (nreq > 0)
				free(req[--nreq]);
			return -1;
		}
		if ((req[nreq] = strdup(de->d_name)) == NULL) {
			fprintf(stderr, "aisb: out of memory\n");
			closedir(d);
			while (nreq > 0)
				free(req[--nreq]);
			return -1;
		}
		nreq++;
	}
	closedir(d);
	for (i = 0; i + 1 < nreq; i++) {	/* few: a plain sort */
		size_t j;

		for (j = i + 1; j < nreq; j++)
			if (strcmp(req[j], req[i]) < 0) {
				char *t = req[i];

				req[i] = req[j];
				req[j] = t;
			}
	}
	for (i = 0, rc = 0; i < nreq; i++) {
		if (rc != -1)
			rc = lock_file(s, ws, req[i], LOCKFILE_PIPREQ, 1, 1);
		free(req[i]);
	}
	if (rc == -1)
		return -1;
	/* berry and pnpm name no registry: the project's config does */
	if (js && (lock_file(s, ws, ".yarnrc.yml", LOCKFILE_YARNRC, 1,
	    1) == -1 || lock_file(s, ws, ".npmrc", LOCKFILE_NPMRC, 1, 1) == -1))
		return -1;
	return 0;
}

/* derive env: the user's and the workspace's tool configurations. */
static int
lock_env(struct lockset *s, const char *ws, const char *root)
{
	const char	*home = getenv("HOME"), *v;
	char		 path[PATH_MAX], from[8192] = "";
	int		 rc;

	if ((v = getenv("NPM_CONFIG_USERCONFIG")) != NULL ||
	    (v = getenv("npm_config_userconfig")) != NULL) {
		if (lock_file(s, NULL, v, LOCKFILE_NPMRC, 1, 0) == -1)
			return -1;
	} else if (home != NULL && home[0] != '\0') {
		snprintf(path, sizeof(path), "%s/.npmrc", home);
		if (lock_file(s, NULL, path, LOCKFILE_NPMRC, 1, 0) == -1)
			return -1;
	}
	if (home != NULL && home[0] != '\0') {
		snprintf(path, sizeof(path), "%s/.yarnrc.yml", home);
		if (lock_file(s, NULL, path, LOCKFILE_YARNRC, 1, 0) == -1)
			return -1;
		snprintf(path, sizeof(path), "%s/.gitconfig", home);
		if (lock_file(s, NULL, path, LOCKFILE_GITCONFIG, 1, 0) == -1)
			return -1;
	}
	if ((v = getenv("XDG_CONFIG_HOME")) != NULL && v[0] == '/')
		snprintf(path, sizeof(path), "%s/git/config", v);
	else if (home != NULL && home[0] != '\0')
		snprintf(path, sizeof(path), "%s/.config/git/config", home);
	else
		path[0] = '\0';
	if (path[0] != '\0' && lock_file(s, NULL, path, LOCKFILE_GITCONFIG, 1,
	    0) == -1)
		return -1;
	if ((v = getenv("CARGO_HOME")) != NULL && v[0] == '/')
		snprintf(path, sizeof(path), "%s/config.toml", v);
	else if (home != NULL && home[0] != '\0')
		snprintf(path, sizeof(path), "%s/.cargo/config.toml", home);
	else
		path[0] = '\0';
	if (path[0] != '\0' && lock_file(s, NULL, path, LOCKFILE_CARGOCFG, 1,
	    0) == -1)
		return -1;
	/* the workspace's own, read by the tools run in it */
	if (lock_file(s, ws, ".npmrc", LOCKFILE_NPMRC, 1, 1) == -1 ||
	    lock_file(s, ws, ".yarnrc.yml", LOCKFILE_YARNRC, 1, 1) == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/.cargo", ws);
	if (lock_file(s, path, "config.toml", LOCKFILE_CARGOCFG, 1, 1) == -1)
		return -1;
	/* pip and apt as derive pip|apt read them (derive.c) */
	if (s->nfiles + 2 > LOCKFILE_MAX_FILES)
		return -1;
	rc = launch_derive_env_pip_apt(root, &s->hosts, (unsigned)s->nfiles,
	    (unsigned)s->nfiles + 1, from, sizeof(from));
	if (rc == -1)
		return -1;
	snprintf(s->files[s->nfiles++], sizeof(s->files[0]), "pip's "
	    "configuration");
	snprintf(s->files[s->nfiles++], sizeof(s->files[0]), "%s/etc/apt",
	    root);
	return 0;
}

static void
print_lockset(FILE *f, const struct lockset *s, const char *kind)
{
	const struct lockfile_hosts *h = &s->hosts;
	size_t	 i;
	int	 any = 0;

	fprintf(f, "# derived by aisb from ");
	for (i = 0; i < s->nfiles; i++) {
		/* every file read, whether it gave a host or not */
		fprintf(f, "%s", i ? ", " : "");
		put_clean(f, s->files[i]);
	}
	fputc('\n', f);
	if (h->http + h->ip + h->port + h->other > 0) {
		fprintf(f, "# left out:");
		if (h->http)
			fprintf(f, " %u http URL(s) (--allow-http adds them on "
			    "port 80)%s", h->http, h->ip + h->port + h->other ?
			    "," : "");
		if (h->ip)
			fprintf(f, " %u IP literal(s)%s", h->ip, h->port +
			    h->other ? "," : "");
		if (h->port)
			fprintf(f, " %u on another port%s", h->port,
			    h->other ? "," : "");
		if (h->other)
			fprintf(f, " %u other scheme(s) or local path(s)",
			    h->other);
		fputc('\n', f);
	}
	if (s->have_goproxy)
		fprintf(f, "# go.sum's modules come through %s%s%s\n",
		    s->goproxy_from, s->goproxy[0] ? ": " : "", s->goproxy);
	lockfile_notes(h->notes, "# note: ", f);
	fprintf(f, "version: 1\nallow:\n");
	for (i = 0; i < h->n; i++) {
		fprintf(f, "  - host: %s\n    ports: [%u]    # ", h->h[i].host,
		    h->h[i].port);
		put_where(f, s, i);
		fputc('\n', f);
		any = 1;
	}
	if (!any)
		fprintf(f, "  []\n");
	fprintf(f, "# save as %s.yaml and run: aisb --policy %s.yaml -- "
	    "COMMAND%s\n", kind, kind, strcmp(kind, "lockfile") == 0 ?
	    "\n# (aisb --allow-from-lockfile -- COMMAND adds the workspace's "
	    "to your own policy)" : "");
}

int
launch_derive_lock(const char *kind, const char *ws, const char *root,
    char *const *paths, int npaths, int allow_http)
{
	struct lockset	*s;
	int		 i, rc = EXIT_CONFIG, lock = strcmp(kind, "lockfile") == 0;
	struct stat	 st;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return 1;
	}
	if (allow_http)
		s->flags |= LOCKFILE_HTTP;
	if (!lock) {
		if (lock_env(s, ws, root) == -1)
			goto out;
	} else if (npaths > 0) {
		for (i = 0; i < npaths; i++)
			if (lock_file(s, NULL, paths[i],
			    lockfile_kind_of(paths[i]), 0, 0) == -1)
				goto out;
	} else {
		if (stat(ws, &st) == -1 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "aisb: %s: not a folder (--workspace "
			    "DIR)\n", ws);
			goto out;
		}
		if (lock_workspace(s, ws) == -1)
			goto out;
		if (s->nfiles == 0) {
			fprintf(stderr, "aisb: no lockfile in %s (package-lock."
			    "json, yarn.lock, pnpm-lock.yaml, Cargo.lock, "
			    "poetry.lock, requirements*.txt, go.sum, "
			    "Gemfile.lock): name one, or --workspace DIR\n", ws);
			goto out;
		}
	}
	if (s->hosts.n == 0) {
		fprintf(stderr, "aisb: no https host in %s", lock ?
		    "the lockfiles" : "the tool configurations");
		for (i = 0; i < (int)s->nfiles; i++)
			fprintf(stderr, "%s%s", i ? ", " : " (", s->files[i]);
		fprintf(stderr, "%s: nothing to allow\n", s->nfiles ? ")" : "");
		lockfile_notes(s->hosts.notes, "aisb: note: ", stderr);
		goto out;
	}
	print_lockset(stdout, s, kind);
	rc = 0;
	if (fflush(stdout) == EOF) {
		perror("aisb: stdout");
		rc = 1;
	}
out:
	free(s);
	return rc;
}

/* --- --allow-from-lockfile ------------------------------------------------- */

/* The lockfiles and the policy they are added to */
struct lock_merge {
	const struct lockset	*s;
	const struct policy	*base;
};

/*
 * The lockfiles' hosts, as allow rules (launch_policy_yaml's extra),
 * each inspected as base's rule of the same name is.
 */
static ssize_t
lock_hosts(FILE *f, void *ctx)
{
	const struct lock_merge	*m = ctx;
	const struct lockset	*s = m->s;
	size_t			 i;

	for (i = 0; i < s->hosts.n; i++) {
		fprintf(f, "  # lockfile ");
		put_where(f, s, i);
		fprintf(f, "\n  - host: ");
		launch_yaml_str(f, s->hosts.h[i].host);
		fprintf(f, "\n    ports: [%u]\n", s->hosts.h[i].port);
		if (launch_yaml_inspect(f, m->base, s->hosts.h[i].host, NULL,
		    0) == -1)
			return -1;
	}
	return (ssize_t)s->hosts.n;
}

/* base with s's hosts added as allow rules, as YAML text. */
static char *
merged_yaml(const struct policy *base, const struct lockset *s, size_t *lenp)
{
	struct lock_merge	 m = { s, base };
	char			*text = NULL;
	size_t			 len = 0;
	FILE			*f;
	int			 rc;

	if ((f = open_memstream(&text, &len)) == NULL)
		return NULL;
	fprintf(f, "# %s with the hosts of the workspace's lockfiles added "
	    "as allow rules\n# (--allow-from-lockfile); written by aisb for "
	    "one session.\nversion: %d\n", policy_file(base),
	    POLICY_SCHEMA_VERSION);
	rc = launch_policy_yaml(f, base, NULL, 0, lock_hosts, &m);
	if (fclose(f) != 0 || rc == -1) {
		free(text);
		return NULL;
	}
	*lenp = len;
	return text;
}

int
launch_lockfile_apply(const char *ws, const char *gate, struct policy **pp,
    char **yaml, FILE *cf)
{
	struct lockset		*s;
	struct policy_errors	*errs = NULL;
	struct policy_decision	 d;
	struct policy		*merged = NULL;
	char			*text = NULL, name[PATH_MAX + 64];
	size_t			 i, len, missing = 0;
	int			 rc = -1;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	if (lock_workspace(s, ws) == -1) {
		fprintf(stderr, "aisb: --allow-from-lockfile: the session does "
		    "not start\n");
		goto out;
	}
	if (s->hosts.n == 0) {
		fprintf(stderr, "aisb: --allow-from-lockfile: %s in %s%s\n",
		    s->nfiles == 0 ? "no lockfile" : "no https host in the "
		    "lockfiles", ws, s->nfiles == 0 ? " (package-lock.json, "
		    "yarn.lock, pnpm-lock.yaml, Cargo.lock, poetry.lock, "
		    "requirements*.txt, go.sum, Gemfile.lock): drop the flag "
		    "or add one" : "");
		lockfile_notes(s->hosts.notes, "aisb: note: ", stderr);
		goto out;
	}
	for (i = 0; cf != NULL && i < s->hosts.n; i++) {
		fprintf(cf, "# lockfile ");
		put_where(cf, s, i);
		fprintf(cf, ": %s:%u\n", s->hosts.h[i].host,
		    s->hosts.h[i].port);
	}
	if (gate != NULL) {
		/* a session never widens a shared gate's policy */
		for (i = 0; i < s->hosts.n; i++) {
			policy_decide_name(*pp, s->hosts.h[i].host,
			    strlen(s->hosts.h[i].host), s->hosts.h[i].port, &d);
			if (d.verdict != POLICY_ALLOW) {
				fprintf(stderr, "aisb: --allow-from-lockfile: "
				    "%s:%u (", s->hosts.h[i].host,
				    s->hosts.h[i].port);
				put_where(stderr, s, i);
				fprintf(stderr, ") is not allowed by gate %s's "
				    "policy, and a session does not widen a "
				    "shared gate's policy\n", gate);
				missing++;
			}
		}
		if (missing > 0) {
			fprintf(stderr, "aisb: add them to that policy (aisb "
			    "policy derive lockfile prints them), or run "
			    "without --gate\n");
			goto out;
		}
		rc = 0;
		goto out;
	}
	/* the user's deny rules win: say which hosts lose, and to what */
	for (i = 0; i < s->hosts.n; i++) {
		char	 rule[1024];

		policy_decide_name(*pp, s->hosts.h[i].host,
		    strlen(s->hosts.h[i].host), s->hosts.h[i].port, &d);
		if (d.verdict == POLICY_DENY && d.reason ==
		    POLICY_R_DENY_RULE && d.rule != NULL) {
			fprintf(stderr, "aisb: --allow-from-lockfile: %s:%u (",
			    s->hosts.h[i].host, s->hosts.h[i].port);
			put_where(stderr, s, i);
			fprintf(stderr, ") stays denied by %s\n",
			    policy_rule_describe(d.rule, rule, sizeof(rule)));
		}
	}
	if ((text = merged_yaml(*pp, s, &len)) == NULL ||
	    (errs = calloc(1, sizeof(*errs))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		goto out;
	}
	snprintf(name, sizeof(name), "%s + lockfiles", policy_file(*pp));
	if (policy_load_buffer(name, text, len, &merged, errs) == -1) {
		/* every host passed policy_parse_target: a bug */
		fprintf(stderr, "aisb: --allow-from-lockfile: the merged policy "
		    "does not load: %s\n", errs->count > 0 ? errs->err[0].msg :
		    "?");
		goto out;
	}
	policy_free(*pp);
	*pp = merged;
	free(*yaml);
	*yaml = text;
	text = NULL;
	rc = 0;
out:
	free(errs);
	free(text);
	free(s);
	return rc;
}
