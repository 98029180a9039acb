/*
 * Files that run on their own (protect.h): the user's protected paths
 * mounted read-only, the end's list of what the command made or changed,
 * the quarantine's warning.  Names come from the workspace, which the
 * command writes: printed escaped (snap_print_name).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft.h"
#include "session/podman.h"
#include "session/protect.h"
#include "snap/fs.h"
#include "snap/snap.h"

#define WARN_MAX	40	/* lines of the quarantine's warning */
#define CFG_MAX		((size_t)1 << 20)	/* bytes of a config read */

/* ---- what git runs from the work tree ------------------------------------- */

struct gpwalk {
	struct launch_gitpaths	*gp;
	const char		*ws;
};

/* rel is inside a repository's own folder (guarded whole already). */
static int
in_git_folder(const char *rel)
{
	const char	*p;

	for (p = rel; (p = strstr(p, ".git")) != NULL; p += 4)
		if ((p == rel || p[-1] == '/') && (p[4] == '\0' ||
		    p[4] == '/'))
			return 1;
	return 0;
}

static int
gp_add(void *arg, const char *rel, int hooks)
{
	struct gpwalk		*w = arg;
	struct launch_gitpaths	*gp = w->gp;
	struct stat		 st;
	char			 path[PATH_MAX], **nr;
	unsigned char		*nh, *ne;

	if (rel[0] == '\0' || in_git_folder(rel))
		return SNAP_OK;
	if (gp->n == LAUNCH_GITPATHS_MAX)
		return SNAP_EBOUND;
	if ((nr = reallocarray(gp->rel, gp->n + 1, sizeof(*nr))) == NULL)
		return SNAP_ESYS;
	gp->rel = nr;
	if ((nh = realloc(gp->hooks, gp->n + 1)) == NULL)
		return SNAP_ESYS;
	gp->hooks = nh;
	if ((ne = realloc(gp->existed, gp->n + 1)) == NULL)
		return SNAP_ESYS;
	gp->existed = ne;
	if ((gp->rel[gp->n] = strdup(rel)) == NULL)
		return SNAP_ESYS;
	gp->hooks[gp->n] = (unsigned char)hooks;
	gp->existed[gp->n] = snprintf(path, sizeof(path), "%s/%s", w->ws,
	    rel) < (int)sizeof(path) && lstat(path, &st) == 0;
	gp->n++;
	return SNAP_OK;
}

int
launch_protect_git(struct launch_gitpaths *gp, const char *ws,
    const struct launch_wsscan *scan, unsigned owner_uid,
    unsigned owner_gid, char *err, size_t errlen)
{
	struct snap_rules	*rules;
	struct gpwalk		 w;
	char			**wt = NULL, **bare = NULL, *e;
	size_t			 i, nwt = 0, nbare = 0;
	int			 rc = -1;

	memset(gp, 0, sizeof(*gp));
	if ((wt = calloc(scan->n + 1, sizeof(*wt))) == NULL ||
	    (bare = calloc(scan->n + 1, sizeof(*bare))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* the folders holding a .git, and the bare repositories */
	for (i = 0; i < scan->n; i++) {
		if (scan->v[i].flags & LAUNCH_WS_BARE)
			bare[nbare++] = scan->v[i].rel;
		if (!(scan->v[i].flags & (LAUNCH_WS_GITDIR |
		    LAUNCH_WS_GITFILE)))
			continue;
		if ((wt[nwt] = strdup(scan->v[i].rel)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		e = strrchr(wt[nwt], '/');
		*(e != NULL ? e : wt[nwt]) = '\0';
		nwt++;
	}
	if ((rules = draft_rules(NULL, 0, owner_uid, owner_gid, err,
	    errlen)) == NULL)
		goto out;
	w.gp = gp;
	w.ws = ws;
	rc = snap_git_guarded(ws, wt, nwt, bare, nbare, rules, gp_add, &w,
	    err, errlen) == SNAP_OK ? 0 : -1;
	snap_rules_free(rules);
out:
	for (i = 0; wt != NULL && i < nwt; i++)
		free(wt[i]);
	free(wt);
	free(bare);
	if (rc == -1)
		launch_gitpaths_free(gp);
	return rc;
}

void
launch_gitpaths_free(struct launch_gitpaths *gp)
{
	size_t	 i;

	for (i = 0; i < gp->n; i++)
		free(gp->rel[i]);
	free(gp->rel);
	free(gp->hooks);
	free(gp->existed);
	memset(gp, 0, sizeof(*gp));
}

/* ---- read-only inside ----------------------------------------------------- */

/* ws/rel read-only from src/rel into m. */
static int
ro(const char *ws, const char *src, const char *rel, struct launch_mounts *m,
    char *err, size_t errlen)
{
	char	 from[PATH_MAX], to[PATH_MAX];

	if (snprintf(from, sizeof(from), "%s/%s", src, rel) >=
	    (int)sizeof(from) || snprintf(to, sizeof(to), "%s/%s", ws, rel) >=
	    (int)sizeof(to)) {
		snprintf(err, errlen, "%s: path too long", rel);
		return -1;
	}
	if (launch_mounts_add(m, from, to, 1) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int
launch_protect_mounts(const struct launch_wsscan *s,
    const struct launch_gitpaths *gp, const char *ws, const char *src,
    struct launch_mounts *m, char *err, size_t errlen)
{
	size_t	 i, n = 0;

	for (i = 0; gp != NULL && i < gp->n; i++)
		if (gp->existed[i] && ro(ws, src, gp->rel[i], m, err,
		    errlen) == -1)
			return -1;
	for (i = 0; i < s->n; i++) {
		if (!(s->v[i].flags & LAUNCH_WS_PROTECT))
			continue;
		if (++n > LAUNCH_PROTECT_MAX) {
			snprintf(err, errlen, "protect: more than %d paths of "
			    "the workspace match (%s matches %s): name fewer",
			    LAUNCH_PROTECT_MAX, s->v[i].pattern, s->v[i].rel);
			return -1;
		}
		if (ro(ws, src, s->v[i].rel, m, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* One line of the end's list (its head before the first). */
static void
line(size_t *n, const char *ws, const char *kind,
    const struct launch_wsent *e)
{
	if ((*n)++ == 0) {
		fputs("aisb: READ BEFORE YOUR EDITOR, SHELL, GIT OR BUILD DOES: "
		    "the command made or changed files that run on their own "
		    "in ", stderr);
		snap_print_name(stderr, ws);
		fputs(":\n", stderr);
	}
	if (*n > LAUNCH_REPORT_MAX)
		return;
	fprintf(stderr, "aisb:   %s ", kind);
	snap_print_name(stderr, e->rel);
	fprintf(stderr, "%s  [!] %s\n", e->isdir ? "/" : "",
	    e->why != NULL ? e->why : (e->flags & LAUNCH_WS_PROTECT) ?
	    "protected (your protect: list)" : (e->flags & (LAUNCH_WS_GITDIR |
	    LAUNCH_WS_BARE)) ? "git takes it for a repository: its hooks "
	    "and config run code" : "git follows it to another folder");
}

void
launch_protect_report(const struct launch_wsscan *before,
    const struct launch_gitpaths *gp, const char *ws, char *const *protect,
    size_t nprotect)
{
	struct launch_wsscan		 after;
	struct launch_wsent		 e;
	const struct launch_wsent	*a, *b;
	struct stat			 st;
	char				 err[PATH_MAX + 128], path[PATH_MAX];
	size_t				 i, n = 0;

	/* what git would run or include, made by the command */
	for (i = 0; gp != NULL && i < gp->n; i++) {
		if (gp->existed[i] || snprintf(path, sizeof(path), "%s/%s", ws,
		    gp->rel[i]) >= (int)sizeof(path) || lstat(path, &st) == -1)
			continue;
		memset(&e, 0, sizeof(e));
		e.rel = gp->rel[i];
		e.isdir = S_ISDIR(st.st_mode);
		e.why = gp->hooks[i] ? "git runs what it holds: a folder "
		    "core.hooksPath names" : "git reads it as config (a "
		    "config includes it; core.hooksPath names it a hook)";
		line(&n, ws, "A", &e);
	}

	if (launch_wsscan(ws, protect, nprotect, &after, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: the files that run on their own could "
		    "not be listed (%s): look at what the command changed "
		    "before your tools do\n", err);
		return;
	}
	for (i = 0; i < after.n; i++) {
		a = &after.v[i];
		b = launch_wsscan_find(before, a->rel);
		if (b == NULL)
			line(&n, ws, "A", a);
		/* a folder changes with what is made in it: listed there */
		else if (!a->isdir && (a->dev != b->dev || a->ino != b->ino ||
		    a->size != b->size || a->mtime_ns != b->mtime_ns ||
		    a->ctime_ns != b->ctime_ns))
			line(&n, ws, "M", a);
	}
	if (n > LAUNCH_REPORT_MAX)
		fprintf(stderr, "aisb:   and %zu more\n", n - LAUNCH_REPORT_MAX);
	launch_wsscan_free(&after);
}

/* ---- --quarantine's warning ----------------------------------------------- */

struct warn {
	const char	*ws;
	size_t		 n;
};

static void
warn_line(struct warn *w, const char *rel, const char *name, const char *why)
{
	if (w->n++ == 0) {
		fputs("aisb: quarantine: this repository holds what runs on its "
		    "own when you work in it OUTSIDE the sandbox (git, your "
		    "editor, your shell, a build); read it first:\n", stderr);
	}
	if (w->n > WARN_MAX)
		return;
	fputs("aisb:   ", stderr);
	snap_print_name(stderr, rel);
	if (name != NULL) {
		fputc('/', stderr);
		snap_print_name(stderr, name);
	}
	fprintf(stderr, "  %s\n", why);
}

/* A config key that may run code or redirect git: named. */
static int
cfg_key(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	struct warn	*w = arg;
	char		 name[SNAP_GITCFG_NAME_MAX * 2 + SNAP_GITCFG_SUB_MAX];

	(void)value;
	if (snap_git_key_staged(sect, sub, key))
		return 0;
	snprintf(name, sizeof(name), "%s.%s%s%s", sect, sub != NULL ? sub :
	    "", sub != NULL ? "." : "", key);
	warn_line(w, "git config", name, "may run code or redirect git");
	return 0;
}

/* A repository's hooks (not the samples) and its config's keys. */
static void
warn_repo(struct warn *w, const char *rel)
{
	struct snap_dir	*d;
	const char	*name;
	char		 path[PATH_MAX], hooks[PATH_MAX], *text;
	size_t		 len, k, seen = 0;

	if (snprintf(hooks, sizeof(hooks), "%s/hooks", rel) >=
	    (int)sizeof(hooks) || snprintf(path, sizeof(path), "%s/%s",
	    w->ws, hooks) >= (int)sizeof(path))
		return;
	if ((d = snap_fs_opendir(path)) != NULL) {
		while ((name = snap_fs_readdir(d)) != NULL && seen++ < 4096) {
			k = strlen(name);
			if (k < 7 || strcmp(name + k - 7, ".sample") != 0)
				warn_line(w, hooks, name, "git runs it: a hook");
		}
		snap_fs_closedir(d);
	}
	if (snprintf(path, sizeof(path), "%s/%s/config", w->ws, rel) <
	    (int)sizeof(path) && (text = snap_file_read(path, CFG_MAX,
	    &len)) != NULL) {
		(void)snap_gitcfg_parse(text, len, cfg_key, w);
		free(text);
	}
}

void
launch_protect_warn(const struct launch_wsscan *s, const char *ws)
{
	struct warn	 w;
	size_t		 i;

	w.ws = ws;
	w.n = 0;
	for (i = 0; i < s->n; i++) {
		if (s->v[i].flags & (LAUNCH_WS_GITDIR | LAUNCH_WS_BARE))
			warn_repo(&w, s->v[i].rel);
		if (s->v[i].flags & (LAUNCH_WS_GITFILE | LAUNCH_WS_GITLINK))
			warn_line(&w, s->v[i].rel, NULL, "git follows it to "
			    "another folder");
		else if (s->v[i].why != NULL && !(s->v[i].flags &
		    (LAUNCH_WS_GITDIR | LAUNCH_WS_BARE)))
			warn_line(&w, s->v[i].rel, NULL, s->v[i].why);
	}
	if (w.n > WARN_MAX)
		fprintf(stderr, "aisb:   and %zu more\n", w.n - WARN_MAX);
}
