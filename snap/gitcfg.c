/*
 * core.hooksPath as git resolves it, for every repository of the tree,
 * and the config files git reads from inside the tree (docs/snapshot.md,
 * "core.hooksPath"): what the command writes into such a folder is a
 * hook the user's next git command runs, and what it writes into such a
 * file is git configuration (core.fsmonitor runs at the next git status).
 *
 * Git reads, for a repository with worktree W and git folder G (W/.git,
 * or what a .git file's "gitdir:" names) and common folder C (what
 * G/commondir names, else G): the system files ($GIT_CONFIG_SYSTEM, else
 * /etc/gitconfig; none with $GIT_CONFIG_NOSYSTEM), the global ones
 * (~/.gitconfig and $XDG_CONFIG_HOME/git/config, or $GIT_CONFIG_GLOBAL),
 * C/config, G/config.worktree, the $GIT_CONFIG_KEY_n pairs, and every file
 * their include.path and includeIf.*.path name, relative to the including
 * file, "~/" the home.  A relative core.hooksPath is relative to where
 * hooks run: W, or G for a bare repository.
 *
 * Read as the safe side, not as git decides: every value any of those
 * files sets counts (not only the last), every file of each kind is read
 * (the launcher's environment need not be the next git command's), every
 * includeIf is taken as if
 * its condition held (an "onbranch:" condition depends on HEAD, which the
 * change set itself may rewrite), config.worktree whatever
 * extensions.worktreeConfig says, and relative values against both W and
 * G.  A hooks folder too many is a change listed as skipped; one too few
 * is a hook that runs.  Why not ask the host's git: as root it refuses a
 * user's repository (safe.directory) and reads root's global files, not
 * the tree owner's; it answers for one repository, as of now; and it
 * would run with the repository's config.
 *
 * The repositories: those the tree is in (a .git in the tree's root or
 * any folder above it), every folder holding a .git in the tree as staged
 * or in the stage (the tree as it will be: a repository the command
 * makes reads the global files too), every folder holding HEAD (a bare
 * one).  Bounds: GCFG_FILE_MAX bytes a file, GCFG_FILES_MAX files, include
 * depth GCFG_DEPTH_MAX (git's), GCFG_REPOS_MAX repositories; past the
 * first two and the last, SNAP_EBOUND (nothing is proposed).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"

#define GCFG_FILE_MAX	((size_t)1 << 20)	/* bytes of one config file */
#define GCFG_FILES_MAX	1024			/* config files read */
#define GCFG_DEPTH_MAX	10			/* include depth, as git */
#define GCFG_REPOS_MAX	4096			/* repositories in a tree */
#define GCFG_UP_MAX	256			/* folders above the tree */

struct strv {
	char	**v;
	size_t	  n, cap;
};

struct snap_gitguard {
	struct strv	hooks;		/* relative folders ("" the top) */
	struct strv	files;		/* relative config files */
};

struct gcfg {
	char			 root[SNAP_PATH_MAX];	/* normalized */
	const struct snap_git_env *env;
	struct snap_gitguard	*g;
	struct strv		 outer;	/* hooksPath values outside repos */
	struct strv		*vals;	/* where values go now */
	size_t			 files;
	char			*err;
	size_t			 errlen;
	int			 rc;	/* the first error, else SNAP_OK */
};

/* A file being read: for its includes. */
struct frame {
	struct gcfg	*c;
	const char	*path;
	int		 depth;
};

static int	read_cfg(struct gcfg *, const char *path, int depth);

static void
strv_free(struct strv *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int
strv_add(struct strv *s, const char *str)
{
	char	**nv;

	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 16 : s->cap * 2;
		if ((nv = realloc(s->v, s->cap * sizeof(*nv))) == NULL)
			return -1;
		s->v = nv;
	}
	if ((s->v[s->n] = strdup(str)) == NULL)
		return -1;
	s->n++;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
strv_uniq(struct strv *s)
{
	size_t	i, j;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	for (i = j = 0; i < s->n; i++) {
		if (j > 0 && strcmp(s->v[j - 1], s->v[i]) == 0)
			free(s->v[i]);
		else
			s->v[j++] = s->v[i];
	}
	s->n = j;
}

/* The first error is kept (c->rc, c->err); -1. */
static int __attribute__((format(printf, 3, 4)))
fail(struct gcfg *c, int code, const char *fmt, ...)
{
	char	 msg[SNAP_PATH_MAX + 256];
	va_list	 ap;

	if (c->rc != SNAP_OK)
		return -1;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->rc = snap_err(c->err, c->errlen, code, "%s", msg);
	return -1;
}

/* ---- paths ---------------------------------------------------------------- */

static int
is_abs(const char *p)
{
#ifdef _WIN32
	return p[0] == '/' || (p[0] != '\0' && p[1] == ':');
#else
	return p[0] == '/';
#endif
}

/*
 * p made canonical in place, lexically: one separator '/', no "." and no
 * ".." component (one past the top stays at the top).  0, or -1 when p
 * is not absolute.
 */
static int
normalize(char *p)
{
	char	*src, *dst, *start, *e;
	size_t	 n;

#ifdef _WIN32
	for (e = p; *e != '\0'; e++)
		if (*e == '\\')
			*e = '/';
#endif
	if (!is_abs(p))
		return -1;
	start = p[0] == '/' ? p + 1 : p + 3;	/* after "/" or "C:/" */
	if (p[0] != '/' && p[2] != '/')
		return -1;
	/* each component is written after a '/' (none before the first):
	 * src stays past dst, so the writes never overtake the reads */
	src = dst = start;
	while (*src != '\0') {
		e = strchr(src, '/');
		n = e != NULL ? (size_t)(e - src) : strlen(src);
		if (n == 0 || (n == 1 && src[0] == '.')) {
			;
		} else if (n == 2 && src[0] == '.' && src[1] == '.') {
			while (dst > start && *--dst != '/')
				;
		} else {
			if (dst > start)
				*dst++ = '/';
			memmove(dst, src, n);
			dst += n;
		}
		src += n;
		if (*src == '/')
			src++;
	}
	*dst = '\0';
	return 0;
}

/*
 * value as a path: "~" and "~/" at the home, absolute as it is, else
 * under base; normalized into out[SNAP_PATH_MAX].  0, or -1 (no home, a
 * "~user" form, too long).
 */
static int
expand(const struct gcfg *c, const char *base, const char *value,
    char *out)
{
	const char	*home = c->env != NULL ? c->env->home : NULL;
	int		 n;

	if (value[0] == '~') {
		if (home == NULL || (value[1] != '/' && value[1] != '\0'))
			return -1;
		n = snprintf(out, SNAP_PATH_MAX, "%s%s", home, value + 1);
	} else if (is_abs(value))
		n = snprintf(out, SNAP_PATH_MAX, "%s", value);
	else if (base != NULL)
		n = snprintf(out, SNAP_PATH_MAX, "%s/%s", base, value);
	else
		return -1;
	if (n < 0 || n >= SNAP_PATH_MAX)
		return -1;
	return normalize(out);
}

/* abs (normalized) relative to the tree into rel; 0, or -1 outside. */
static int
inside(const struct gcfg *c, const char *abs, const char **rel)
{
	size_t	n = strlen(c->root);

#ifdef _WIN32
	if (_strnicmp(abs, c->root, n) != 0)
		return -1;
#else
	if (strncmp(abs, c->root, n) != 0)
		return -1;
#endif
	if (abs[n] == '\0')
		*rel = abs + n;
	else if (abs[n] == '/' || (n > 0 && c->root[n - 1] == '/'))
		*rel = abs + n + (abs[n] == '/');
	else
		return -1;
	return 0;
}

/* The folder part of path into out[SNAP_PATH_MAX]. */
static void
dir_of(const char *path, char *out)
{
	const char	*e = strrchr(path, '/');

	snprintf(out, SNAP_PATH_MAX, "%.*s", e == NULL ? 0 : e == path ? 1 :
	    (int)(e - path), path);
}

/* ---- what the files say --------------------------------------------------- */

static int	on_value(struct frame *, const char *sect, const char *key,
		    const char *value);

static char
lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
}

/* snap_gitcfg_parse's callback: the subsection is not needed (only core,
 * include and includeif are read), nor a key without a value. */
static int
frame_value(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	struct frame	*f = arg;

	(void)sub;
	if (value != NULL)
		(void)on_value(f, sect, key, value);
	return f->c->rc == SNAP_OK ? 0 : -1;
}


static int
on_value(struct frame *f, const char *sect, const char *key,
    const char *value)
{
	char	 dir[SNAP_PATH_MAX], path[SNAP_PATH_MAX];

	if (strcmp(sect, "core") == 0 && strcmp(key, "hookspath") == 0) {
		if (strv_add(f->c->vals, value) == -1)
			return fail(f->c, SNAP_ESYS, "git config %s: out of "
			    "memory", f->path);
		return 0;
	}
	if ((strcmp(sect, "include") != 0 && strcmp(sect, "includeif") != 0) ||
	    strcmp(key, "path") != 0 || value[0] == '\0')
		return 0;
	/* relative to the including file; from the environment (no file),
	 * git refuses a relative one */
	if (f->path != NULL)
		dir_of(f->path, dir);
	if (expand(f->c, f->path != NULL ? dir : NULL, value, path) == -1)
		return 0;
	return read_cfg(f->c, path, f->depth + 1);
}

/*
 * The config file at path (absolute), links followed as git does, its
 * values into c->vals and its includes read in turn; a file inside the
 * tree is one the command must not write.  A missing file is nothing.
 */
static int
read_cfg(struct gcfg *c, const char *path, int depth)
{
	struct frame	 f;
	const char	*rel;
	char		 norm[SNAP_PATH_MAX], *text;
	size_t		 len;

	if (depth > GCFG_DEPTH_MAX)
		return 0;		/* git stops there, with an error */
	if (snprintf(norm, sizeof(norm), "%s", path) >= (int)sizeof(norm) ||
	    normalize(norm) == -1)
		return 0;
	if (inside(c, norm, &rel) == 0 && rel[0] != '\0' &&
	    strv_add(&c->g->files, rel) == -1)
		return fail(c, SNAP_ESYS, "git config %s: out of memory", norm);
	if (++c->files > GCFG_FILES_MAX)
		return fail(c, SNAP_EBOUND, "git: more than 1024 config files "
		    "to read, at %s (limit of the change set): nothing is "
		    "proposed", norm);
	if ((text = snap_file_read_follow(norm, GCFG_FILE_MAX, &len)) == NULL) {
		if (errno == EFBIG)
			return fail(c, SNAP_EBOUND, "git config %s: over 1 MiB "
			    "(limit of the change set): nothing is proposed",
			    norm);
		return 0;		/* none, or not a file: git skips it */
	}
	f.c = c;
	f.path = norm;
	f.depth = depth;
	if (snap_gitcfg_parse(text, len, frame_value, &f) == -1 &&
	    c->rc == SNAP_OK)
		(void)fail(c, SNAP_ESYS, "git config %s: out of memory", norm);
	free(text);
	return c->rc == SNAP_OK ? 0 : -1;
}

/* The environment's pairs, "key=value": as a file without a folder. */
static void
read_pairs(struct gcfg *c)
{
	struct frame	 f = { c, NULL, 0 };
	const char	*kv, *eq;
	char		 sect[64], key[64];
	size_t		 i, n;

	for (i = 0; i < c->env->npairs && c->rc == SNAP_OK; i++) {
		kv = c->env->pairs[i];
		if ((eq = strchr(kv, '=')) == NULL ||
		    (n = strcspn(kv, ".")) >= (size_t)(eq - kv) ||
		    n >= sizeof(sect))
			continue;
		snprintf(sect, sizeof(sect), "%.*s", (int)n, kv);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
		/* "section.sub.key": the key is the last part */
		memmove(key, strrchr(key, '.') + 1, strlen(strrchr(key, '.')));
		for (n = 0; sect[n] != '\0'; n++)
			sect[n] = lower(sect[n]);
		for (n = 0; key[n] != '\0'; n++)
			key[n] = lower(key[n]);
		(void)on_value(&f, sect, key, eq + 1);
	}
}

/* The files outside every repository, once. */
static void
read_outer(struct gcfg *c)
{
	const struct snap_git_env	*e = c->env;
	char				 path[SNAP_PATH_MAX];
	size_t				 i;

	c->vals = &c->outer;
	if (e == NULL)
		return;
	/* all of them: $GIT_CONFIG_GLOBAL and $GIT_CONFIG_NOSYSTEM of the
	 * launcher need not be those of the user's next git command */
	for (i = 0; i < SNAP_GIT_SYSTEM_MAX && e->system[i] != NULL; i++)
		(void)read_cfg(c, e->system[i], 0);
	if (e->global != NULL)
		(void)read_cfg(c, e->global, 0);
	if (e->xdg_config != NULL && is_abs(e->xdg_config) &&
	    snprintf(path, sizeof(path), "%s/git/config", e->xdg_config) <
	    (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	if (e->home != NULL && snprintf(path, sizeof(path),
	    "%s/.config/git/config", e->home) < (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	if (e->home != NULL && snprintf(path, sizeof(path), "%s/.gitconfig",
	    e->home) < (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	read_pairs(c);
}

/* ---- the repositories ----------------------------------------------------- */

/* The git hooks' names: a hooks folder that is the tree's top guards
 * these only (githooks(5)). */
static const char *const hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout",
	"pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change", NULL
};

/* A hooksPath value, where hooks run at base: its folder when inside. */
static void
add_hook(struct gcfg *c, const char *base, const char *value)
{
	char		 abs[SNAP_PATH_MAX], rel[SNAP_PATH_MAX];
	const char	*r;
	size_t		 n;

	if (value[0] == '\0' || expand(c, base, value, abs) == -1 ||
	    inside(c, abs, &r) == -1)
		return;
	snprintf(rel, sizeof(rel), "%s", r);
	/* husky 9: hooksPath .husky/_, whose scripts run the hooks in
	 * .husky itself: the folder above is the hooks' too */
	n = strlen(rel);
	if (n >= 2 && strcmp(rel + n - 2, "/_") == 0)
		rel[n - 2] = '\0';
	else if (strcmp(rel, "_") == 0)
		rel[0] = '\0';
	if (strv_add(&c->g->hooks, rel) == -1)
		(void)fail(c, SNAP_ESYS, "git: out of memory");
}

/* The first line of the file at path (links followed) into out, when it
 * starts with prefix (which is left out): 0, or -1. */
static int
first_line(const char *path, const char *prefix, char *out)
{
	char	*text, *e;
	size_t	 len, n = strlen(prefix);

	if ((text = snap_file_read_follow(path, 4096, &len)) == NULL)
		return -1;
	if (strncmp(text, prefix, n) != 0) {
		free(text);
		return -1;
	}
	e = text + n + strcspn(text + n, "\r\n");
	*e = '\0';
	snprintf(out, SNAP_PATH_MAX, "%s", text + n);
	free(text);
	return 0;
}

/*
 * One repository: its worktree w (NULL for a bare one) and git folder g
 * (absolute, normalized): its configs read, and every value (its own and
 * the outer ones) resolved where its hooks run.
 */
static void
one_repo(struct gcfg *c, const char *w, const char *g)
{
	struct strv	 own;
	char		 common[SNAP_PATH_MAX], path[SNAP_PATH_MAX];
	char		 line[SNAP_PATH_MAX];
	size_t		 i;

	memset(&own, 0, sizeof(own));
	c->vals = &own;
	snprintf(common, sizeof(common), "%s", g);
	if (snprintf(path, sizeof(path), "%s/commondir", g) <
	    (int)sizeof(path) && first_line(path, "", line) == 0 &&
	    line[0] != '\0')
		(void)expand(c, g, line, common);
	if (snprintf(path, sizeof(path), "%s/config", common) <
	    (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	if (strcmp(common, g) != 0 && snprintf(path, sizeof(path),
	    "%s/config", g) < (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	if (snprintf(path, sizeof(path), "%s/config.worktree", g) <
	    (int)sizeof(path))
		(void)read_cfg(c, path, 0);
	for (i = 0; i < own.n; i++) {
		if (w != NULL)
			add_hook(c, w, own.v[i]);
		add_hook(c, g, own.v[i]);
	}
	for (i = 0; i < c->outer.n; i++) {
		if (w != NULL)
			add_hook(c, w, c->outer.v[i]);
		add_hook(c, g, c->outer.v[i]);
	}
	strv_free(&own);
}

/* The worktree at w (absolute, normalized), if it has a .git: 1 when it
 * has one, 0 when not.  known: w holds a .git in the tree as staged or
 * in the change set: without one on the host now (the command makes it),
 * the outer values hold for it all the same. */
static int
worktree(struct gcfg *c, const char *w, int known)
{
	struct snap_file	*f;
	char			 dotgit[SNAP_PATH_MAX], line[SNAP_PATH_MAX];
	char			 g[SNAP_PATH_MAX];

	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", w) >=
	    (int)sizeof(dotgit))
		return 0;
	if ((f = snap_fs_open_follow(dotgit)) != NULL) {
		snap_fs_close(f);
		/* a .git file: "gitdir: PATH", relative to w */
		if (first_line(dotgit, "gitdir: ", line) == -1 ||
		    expand(c, w, line, g) == -1)
			return 1;
	} else if (errno == EISDIR || known)
		snprintf(g, sizeof(g), "%s", dotgit);
	else
		return 0;
	one_repo(c, w, g);
	return 1;
}

/* The repositories the tree is in: a .git at its top or in any folder
 * above (not only the nearest: a git command run up there runs that
 * repository's hooks, which may be in the tree). */
static void
enclosing(struct gcfg *c)
{
	char	 d[SNAP_PATH_MAX], *e;
	int	 i;

	snprintf(d, sizeof(d), "%s", c->root);
	for (i = 0; i < GCFG_UP_MAX && c->rc == SNAP_OK; i++) {
		(void)worktree(c, d, 0);
		if ((e = strrchr(d, '/')) == NULL || e == d || (e == d + 2 &&
		    d[1] == ':'))
			break;
		*e = '\0';
	}
	/* and "/" itself */
	if (d[0] == '/' && d[1] != '\0' && strchr(d + 1, '/') == NULL) {
		d[1] = '\0';
		(void)worktree(c, d, 0);
	}
}

/* rel's last component is name, in any ASCII case. */
static int
last_is(const char *rel, const char *name)
{
	const char	*b = strrchr(rel, '/');
	size_t		 i;

	b = b != NULL ? b + 1 : rel;
	for (i = 0; name[i] != '\0'; i++)
		if (lower(b[i]) != lower(name[i]))
			return 0;
	return b[i] == '\0';
}

/* The folders of the tree holding a .git (worktrees) or, not inside a
 * .git, HEAD (bare), in the tree as staged and in the change set. */
static int
collect(const struct snap_manifest *m, const struct snap_changes *ch,
    struct strv *wt, struct strv *bare)
{
	char		 dir[SNAP_PATH_MAX];
	const char	*p;
	size_t		 i, n = m->n + ch->n;

	for (i = 0; i < n; i++) {
		p = i < m->n ? m->v[i].path : ch->v[i - m->n].path;
		if (i >= m->n && ch->v[i - m->n].pub.kind != SNAP_CREATE)
			continue;
		snap_dirname(dir, p);
		if (last_is(p, ".git")) {
			if (strv_add(wt, dir) == -1)
				return -1;
		} else if (last_is(p, "HEAD") && !last_is(dir, ".git") &&
		    strv_add(bare, dir) == -1)
			return -1;
	}
	strv_uniq(wt);
	strv_uniq(bare);
	return 0;
}

/* The guard of the repositories wt (worktrees) and bare (git folders),
 * relative to root, and those the tree is in. */
static struct snap_gitguard *
build(const char *root, struct strv *wt, struct strv *bare,
    const struct snap_git_env *env, char *err, size_t errlen, int *rc)
{
	struct gcfg	 c;
	char		 abs[SNAP_PATH_MAX];
	size_t		 i;

	memset(&c, 0, sizeof(c));
	c.env = env;
	c.err = err;
	c.errlen = errlen;
	c.rc = SNAP_OK;
	if ((c.g = calloc(1, sizeof(*c.g))) == NULL) {
		*rc = snap_err(err, errlen, SNAP_ESYS, "git: out of memory");
		return NULL;
	}
	/* no tree to read (a version 1 manifest): the tree's top only */
	if (root == NULL || snprintf(c.root, sizeof(c.root), "%s", root) >=
	    (int)sizeof(c.root) || normalize(c.root) == -1)
		goto done;
	read_outer(&c);
	enclosing(&c);
	if (wt->n + bare->n > GCFG_REPOS_MAX) {
		(void)fail(&c, SNAP_EBOUND, "git: more than 4096 repositories "
		    "in %s (limit of the change set): nothing is proposed",
		    c.root);
		goto done;
	}
	for (i = 0; i < wt->n && c.rc == SNAP_OK; i++)
		if (snprintf(abs, sizeof(abs), "%s%s%s", c.root,
		    wt->v[i][0] != '\0' ? "/" : "", wt->v[i]) <
		    (int)sizeof(abs) && normalize(abs) == 0)
			(void)worktree(&c, abs, 1);
	for (i = 0; i < bare->n && c.rc == SNAP_OK; i++)
		if (snprintf(abs, sizeof(abs), "%s%s%s", c.root,
		    bare->v[i][0] != '\0' ? "/" : "", bare->v[i]) <
		    (int)sizeof(abs) && normalize(abs) == 0)
			one_repo(&c, NULL, abs);
	strv_uniq(&c.g->hooks);
	strv_uniq(&c.g->files);
done:
	strv_free(&c.outer);
	*rc = c.rc;
	if (c.rc != SNAP_OK) {
		snap_gitguard_free(c.g);
		return NULL;
	}
	return c.g;
}

struct snap_gitguard *
snap_gitguard_new(const char *root, const struct snap_manifest *m,
    const struct snap_changes *ch, const struct snap_git_env *env,
    char *err, size_t errlen, int *rc)
{
	struct snap_gitguard	*g = NULL;
	struct strv		 wt, bare;

	memset(&wt, 0, sizeof(wt));
	memset(&bare, 0, sizeof(bare));
	if (root != NULL && collect(m, ch, &wt, &bare) == -1)
		*rc = snap_err(err, errlen, SNAP_ESYS, "git: out of memory");
	else
		g = build(root, &wt, &bare, env, err, errlen, rc);
	strv_free(&wt);
	strv_free(&bare);
	return g;
}

int
snap_git_guarded(const char *root, char *const *wt, size_t nwt,
    char *const *bare, size_t nbare, const struct snap_rules *rules,
    snap_guarded_fn fn, void *arg, char *err, size_t errlen)
{
	struct snap_gitguard	*g = NULL;
	struct strv		 w, b;
	size_t			 i, j;
	int			 rc = SNAP_OK;

	memset(&w, 0, sizeof(w));
	memset(&b, 0, sizeof(b));
	for (i = 0; i < nwt && rc == SNAP_OK; i++)
		if (strv_add(&w, wt[i]) == -1)
			rc = snap_err(err, errlen, SNAP_ESYS, "out of memory");
	for (i = 0; i < nbare && rc == SNAP_OK; i++)
		if (strv_add(&b, bare[i]) == -1)
			rc = snap_err(err, errlen, SNAP_ESYS, "out of memory");
	if (rc == SNAP_OK && (g = build(root, &w, &b, rules != NULL ?
	    snap_rules_git_env(rules) : NULL, err, errlen, &rc)) != NULL) {
		for (i = 0; i < g->hooks.n && rc == SNAP_OK; i++) {
			if (g->hooks.v[i][0] != '\0') {
				rc = fn(arg, g->hooks.v[i], 1);
				continue;
			}
			/* the top itself: its hooks by name */
			for (j = 0; hook_names[j] != NULL && rc == SNAP_OK; j++)
				rc = fn(arg, hook_names[j], 0);
		}
		for (i = 0; i < g->files.n && rc == SNAP_OK; i++)
			rc = fn(arg, g->files.v[i], 0);
		if (rc != SNAP_OK)
			rc = snap_err(err, errlen, SNAP_ESYS, "out of memory");
	}
	snap_gitguard_free(g);
	strv_free(&w);
	strv_free(&b);
	return rc;
}

void
snap_gitguard_free(struct snap_gitguard *g)
{
	if (g == NULL)
		return;
	strv_free(&g->hooks);
	strv_free(&g->files);
	free(g);
}

const char *
snap_gitguard_refuses(const struct snap_gitguard *g, const char *rel)
{
	size_t	 i, j, n;

	for (i = 0; i < g->hooks.n; i++) {
		n = strlen(g->hooks.v[i]);
		if (n == 0) {
			/* the top itself: its hooks by name */
			for (j = 0; hook_names[j] != NULL; j++)
				if (strcmp(rel, hook_names[j]) == 0)
					return "git hooks run code "
					    "(core.hooksPath)";
			continue;
		}
		if (strncmp(rel, g->hooks.v[i], n) == 0 &&
		    (rel[n] == '/' || rel[n] == '\0'))
			return "git hooks run code (core.hooksPath)";
	}
	for (i = 0; i < g->files.n; i++)
		if (strcmp(rel, g->files.v[i]) == 0)
			return "git config runs code (a file git includes)";
	return NULL;
}

int
snap_rules_git_environ(struct snap_rules *r, const char *home,
    const char *xdg_config, const char *const *system, char *err,
    size_t errlen)
{
	struct snap_git_env	 e;
	char			 name[40], *pairs[SNAP_GIT_PAIRS_MAX];
	const char		*k, *v;
	size_t			 i, n = 0, count;
	int			 rc;

	memset(&e, 0, sizeof(e));
	e.home = home;
	e.xdg_config = xdg_config;
	e.global = getenv("GIT_CONFIG_GLOBAL");
	if ((v = getenv("GIT_CONFIG_SYSTEM")) != NULL && v[0] != '\0')
		e.system[n++] = v;
	for (i = 0; system != NULL && system[i] != NULL &&
	    n < SNAP_GIT_SYSTEM_MAX; i++)
		e.system[n++] = system[i];
	/* at most SNAP_GIT_PAIRS_MAX pairs: git's own -c bound is larger,
	 * and a launcher's environment holding more is refused */
	count = (v = getenv("GIT_CONFIG_COUNT")) != NULL ?
	    strtoul(v, NULL, 10) : 0;
	if (count > SNAP_GIT_PAIRS_MAX)
		return snap_err(err, errlen, SNAP_EINVAL, "GIT_CONFIG_COUNT "
		    "%zu: more than %d pairs; unset it", count,
		    SNAP_GIT_PAIRS_MAX);
	for (i = n = 0; i < count; i++) {
		snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%zu", i);
		k = getenv(name);
		snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%zu", i);
		if (k == NULL || (v = getenv(name)) == NULL)
			continue;
		if ((pairs[n] = malloc(strlen(k) + strlen(v) + 2)) == NULL) {
			rc = snap_err(err, errlen, SNAP_ESYS, "git: out of "
			    "memory");
			goto out;
		}
		snprintf(pairs[n], strlen(k) + strlen(v) + 2, "%s=%s", k, v);
		n++;
	}
	e.pairs = (const char *const *)pairs;
	e.npairs = n;
	rc = snap_rules_git(r, &e, err, errlen);
out:
	for (i = 0; i < n; i++)
		free(pairs[i]);
	return rc;
}
