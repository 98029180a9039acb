/*
 * Files that run on their own (protect.h): the user's protected paths
 * mounted read-only, the end's list of what the command made or changed,
 * the quarantine's warning.  Names come from the workspace, which the
 * command writes: printed escaped (snap_print_name).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/podman.h"
#include "session/protect.h"
#include "snap/fs.h"
#include "snap/snap.h"

#define WARN_MAX	40	/* lines of the quarantine's warning */
#define CFG_MAX		((size_t)1 << 20)	/* bytes of a config read */

int
launch_protect_mounts(const struct launch_wsscan *s, const char *ws,
    const char *src, struct launch_mounts *m, char *err, size_t errlen)
{
	char	 from[PATH_MAX], to[PATH_MAX];
	size_t	 i, n = 0;

	for (i = 0; i < s->n; i++) {
		if (!(s->v[i].flags & LAUNCH_WS_PROTECT))
			continue;
		if (++n > LAUNCH_PROTECT_MAX) {
			snprintf(err, errlen, "protect: more than %d paths of "
			    "the workspace match (%s matches %s): name fewer",
			    LAUNCH_PROTECT_MAX, s->v[i].pattern, s->v[i].rel);
			return -1;
		}
		if (snprintf(from, sizeof(from), "%s/%s", src, s->v[i].rel) >=
		    (int)sizeof(from) || snprintf(to, sizeof(to), "%s/%s", ws,
		    s->v[i].rel) >= (int)sizeof(to)) {
			snprintf(err, errlen, "protect: %s: path too long",
			    s->v[i].rel);
			return -1;
		}
		if (launch_mounts_add(m, from, to, 1) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
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
launch_protect_report(const struct launch_wsscan *before, const char *ws,
    char *const *protect, size_t nprotect)
{
	struct launch_wsscan		 after;
	const struct launch_wsent	*a, *b;
	char				 err[PATH_MAX + 128];
	size_t				 i, n = 0;

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
