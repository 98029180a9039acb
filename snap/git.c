/*
 * Git's metadata on the way back (docs/snapshot.md, "Git's metadata on the
 * way back"): the change set's last pass.  In a repository's folder only
 * what git's own work writes goes back; nothing goes into a folder git
 * takes hooks from (core.hooksPath, as gitcfg.c resolves it) or into a
 * config file git includes; no change makes a folder a repository of
 * what it already holds.  Judged against the tree as it will be: the
 * tree as staged, the stage, and the host's tree as it is now.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"

#define HEAD_CACHE	256	/* folders whose HEAD was looked for */

struct gitw {
	struct snap_changes	*c;
	const struct snap_manifest *m;
	const char		*stage;
	struct snap_gitguard	*guard;
	char			*err;
	size_t			 errlen;
	char			 why[SNAP_REL_MAX + 160];	/* a reason
							   made here */
	/* head_where's answers by folder, direct-mapped: the changes of
	 * one folder come together, and each asks for every folder above */
	struct {
		char	*dir;
		int	 at;
	}			 cache[HEAD_CACHE];
};

/*
 * What a command's git work (commit, fetch, merge, rebase, gc, git-lfs)
 * writes in a repository's folder, and nothing else is written back
 * there (a bind session's private git folder takes the same list: its
 * folders are shared, its files come back, snap_git_back_name): git
 * reads code to run, or a folder to take its config and hooks from, from
 * most of the rest (config, hooks, commondir, gitdir, worktrees, modules,
 * info, objects/info/alternates...).
 */
static const char *const git_back[] = {
	"objects", "refs", "logs", "index", "HEAD", "packed-refs",
	"ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE",
	"COMMIT_EDITMSG", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
	"AUTO_MERGE", "shallow", "description", "lfs", NULL
};

/* s equals t (lower case) in any ASCII case, as case-insensitive
 * volumes compare names. */
static int
name_fold_eq(const char *s, const char *t)
{
	for (; *s != '\0' && *t != '\0'; s++, t++)
		if (*s != *t && !(*s >= 'A' && *s <= 'Z' && *s + 32 == *t))
			return 0;
	return *s == *t;
}

/* n bytes at s are ".git", in any case (as case-insensitive volumes
 * take it). */
static int
is_dotgit(const char *s, size_t n)
{
	static const char	 g[] = ".git";
	size_t			 i;

	if (n != 4)
		return 0;
	for (i = 0; i < 4; i++)
		if (s[i] != g[i] && s[i] != g[i] - 'a' + 'A')
			return 0;
	return 1;
}

/* The n bytes at name are one of git_back's: its index, or -1. */
static int
git_back_of(const char *name, size_t n)
{
	int	i;

	for (i = 0; git_back[i] != NULL; i++)
		if (strlen(git_back[i]) == n && strncmp(git_back[i], name,
		    n) == 0)
			return i;
	return -1;
}

int
snap_git_back_name(const char *name)
{
	return git_back_of(name, strlen(name)) != -1;
}

/* Where HEAD of the folder rel[0..n) is: in the tree as staged (1), in
 * the host's tree now (2), in the stage (4), as a mask. */
static int
head_where(struct gitw *w, const char *rel, size_t n)
{
	char			 full[SNAP_PATH_MAX], sub[SNAP_PATH_MAX];
	struct snap_stat	 st;
	unsigned		 h = 5381;
	size_t			 i;
	int			 len, at = 0;

	for (i = 0; i < n; i++)
		h = h * 33 + (unsigned char)rel[i];
	h %= HEAD_CACHE;
	if (w->cache[h].dir != NULL && strlen(w->cache[h].dir) == n &&
	    memcmp(w->cache[h].dir, rel, n) == 0)
		return w->cache[h].at;

	len = snprintf(sub, sizeof(sub), "%.*s%sHEAD", (int)n, rel,
	    n > 0 ? "/" : "");
	if (len < 0 || (size_t)len >= sizeof(sub))
		return 1;		/* cannot say: taken for one */
	if (snap_manifest_find(w->m, sub) != NULL)
		at |= 1;
	/* a link on the way, or any doubt: taken for one */
	if (w->m->source != NULL && (snap_join(full, w->m->source, sub) ==
	    -1 || snap_fs_lstat(full, &st) == 0 || (errno != ENOENT &&
	    errno != ENOTDIR)))
		at |= 2;
	if (snap_join(full, w->stage, sub) == 0 && snap_fs_lstat(full,
	    &st) == 0)
		at |= 4;
	free(w->cache[h].dir);
	if ((w->cache[h].dir = malloc(n + 1)) != NULL) {
		memcpy(w->cache[h].dir, rel, n);
		w->cache[h].dir[n] = '\0';
		w->cache[h].at = at;
	}
	return at;
}

/*
 * The folder rel[0..n) ("" the top) is one git would take for a
 * repository's: it holds an entry named HEAD, of any type (git takes a
 * file, a link, and an "objects" that is an executable file), in the
 * tree as staged, in the host's tree now or in the stage (a command that
 * deletes HEAD in its stage still writes into the host's repository).
 * What git needs besides (objects, refs) may be anywhere a commondir
 * points.
 */
static int
holds_repo(struct gitw *w, const char *rel, size_t n)
{
	return head_where(w, rel, n) != 0;
}

/*
 * The first entry of the folder dir on the host (as staged, or now) that
 * git would read code or another folder from once dir is a repository
 * (any name but git_back's), into w->why; NULL when none.
 */
static const char *
holds_code(struct gitw *w, const char *dir)
{
	const struct snap_manifest	*m = w->m;
	char				**names;
	const char			*p, *e;
	size_t				 i, n = strlen(dir);
	long				 k, nn;

	for (i = 0; i < m->n; i++) {
		p = m->v[i].path;
		if (n > 0 && (strncmp(p, dir, n) != 0 || p[n] != '/'))
			continue;
		p += n > 0 ? n + 1 : 0;
		e = strchr(p, '/');
		if (git_back_of(p, e != NULL ? (size_t)(e - p) : strlen(p)) ==
		    -1)
			return p;
	}
	if (m->source == NULL || (nn = snap_list_dir(m->source, dir,
	    &names)) == -1)
		return NULL;
	for (k = 0; k < nn; k++)
		if (git_back_of(names[k], strlen(names[k])) == -1) {
			snprintf(w->why, sizeof(w->why), "%s", names[k]);
			snap_names_free(names, nn);
			return w->why;
		}
	snap_names_free(names, nn);
	return NULL;
}

/*
 * A HEAD the change set creates where the host has none makes its folder
 * a repository: refused when the folder already holds what git would run
 * code from (a config planted by an earlier session, when the folder was
 * no repository and took it).  A repository the command makes whole (git
 * init, clone) holds nothing on the host: it comes back.
 */
static const char *
makes_repo(struct gitw *w, const struct snap_chg *x)
{
	const char	*base, *what;
	char		 dir[SNAP_REL_MAX + 1];	/* a relative path's folder */
	size_t		 n;

	base = strrchr(x->path, '/');
	base = base != NULL ? base + 1 : x->path;
	if (x->pub.kind != SNAP_CREATE || strcmp(base, "HEAD") != 0)
		return NULL;
	n = (size_t)(base - x->path);
	n = n > 0 ? n - 1 : 0;
	if (n > SNAP_REL_MAX) {	/* the limits' bound it: fail closed */
		snprintf(w->why, sizeof(w->why), "git: a folder path longer "
		    "than %d bytes", SNAP_REL_MAX);
		return w->why;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)n, x->path);
	if ((head_where(w, dir, n) & 3) != 0 || (what = holds_code(w,
	    dir)) == NULL)
		return NULL;
	snprintf(w->why, sizeof(w->why), "git: would make %s%s a repository "
	    "of what it holds (%.*s): git runs code from that", n > 0 ? dir :
	    "the top", n > 0 ? "/" : "", (int)strcspn(what, "/"), what);
	return w->why;
}

/* Why the change x may not reach the host for git's sake, or NULL. */
static const char *
git_refused(struct gitw *w, const struct snap_chg *x)
{
	const char	*rel = x->path, *c, *next, *base, *alast = rel, *why;
	size_t		 clen;
	int		 repo, i;

	if (w->guard != NULL && (why = snap_gitguard_refuses(w->guard,
	    rel)) != NULL)
		return why;
	base = strrchr(rel, '/');
	base = base != NULL ? base + 1 : rel;
	if (is_dotgit(base, strlen(base)) && x->pub.type != SNAP_DIR)
		return "git: a .git file or link points git at another folder";
	if ((why = makes_repo(w, x)) != NULL)
		return why;
	/* c: each component; the folder above it, rel[0 .. c - 1), is a
	 * repository's when it is named .git or holds HEAD */
	for (c = rel;; c = next + 1) {
		next = strchr(c, '/');
		clen = next != NULL ? (size_t)(next - c) : strlen(c);
		if (c == rel)
			repo = holds_repo(w, rel, 0);
		else
			repo = is_dotgit(alast, (size_t)(c - 1 - alast)) ||
			    holds_repo(w, rel, (size_t)(c - 1 - rel));
		if (repo) {
			if (x->pub.type == SNAP_LINK)
				return "git: a link in a repository's folder";
			if ((i = git_back_of(c, clen)) == -1)
				return "git: repository metadata that can run "
				    "code (only objects, refs, logs, index, "
				    "HEAD and the like are written back)";
			if (i == 0 && next != NULL &&
			    (name_fold_eq(next + 1, "info/alternates") ||
			    name_fold_eq(next + 1, "info/http-alternates")))
				return "git: alternates point git at other "
				    "folders";
		}
		if (next == NULL)
			break;
		alast = c;
	}
	return NULL;
}

/* The change x becomes SKIP for why. */
static int
refuse(struct gitw *w, struct snap_chg *x, const char *why)
{
	free(x->old_link);
	free(x->new_link);
	x->old_link = x->new_link = NULL;
	x->pub.old_mode = x->pub.new_mode = 0;
	x->pub.old_size = x->pub.new_size = 0;
	x->old_sha[0] = x->new_sha[0] = '\0';
	x->pub.kind = SNAP_SKIP;
	if ((x->reason = strdup(why)) == NULL)
		return snap_err(w->err, w->errlen, SNAP_ESYS, "git: out of "
		    "memory");
	return SNAP_OK;
}

/*
 * The changes git's rules (and the user's writeback_deny) refuse become
 * SKIP; then a folder delete over
 * anything kept is kept too (its rmdir could not happen).  Sorted on
 * return.
 */
int
snap_git_pass(struct snap_changes *ch, const struct snap_manifest *m,
    const char *stage, const struct snap_rules *rules, char *err,
    size_t errlen)
{
	struct gitw	 w;
	struct snap_chg	*x;
	const char	*why;
	char		 deny[300];	/* a pattern is at most 255 bytes */
	size_t		 i, j, len;
	int		 rc = SNAP_OK;

	memset(&w, 0, sizeof(w));
	w.c = ch;
	w.m = m;
	w.stage = stage;
	w.err = err;
	w.errlen = errlen;
	if ((w.guard = snap_gitguard_new(m->source, m, ch,
	    snap_rules_git_env(rules), err, errlen, &rc)) == NULL)
		return rc;
	for (i = 0; i < ch->n && rc == SNAP_OK; i++) {
		x = &ch->v[i];
		if (x->pub.kind == SNAP_SKIP)
			continue;
		/* the user's writeback_deny: shown, never written back */
		if ((why = snap_rules_denied(rules, x->path)) != NULL) {
			snprintf(deny, sizeof(deny), "writeback denied: %s",
			    why);
			rc = refuse(&w, x, deny);
			continue;
		}
#ifdef _WIN32
		if ((why = snap_win_name_bad(x->path)) == NULL &&
		    (why = git_refused(&w, x)) == NULL)
			continue;
#else
		if ((why = git_refused(&w, x)) == NULL)
			continue;
#endif
		rc = refuse(&w, x, why);
	}
	snap_gitguard_free(w.guard);
	for (i = 0; i < HEAD_CACHE; i++)
		free(w.cache[i].dir);
	if (rc != SNAP_OK)
		return rc;
	snap_changes_sort(ch);
	/* children sort after their folder: from the end, a folder sees
	 * its children settled */
	for (i = ch->n; i-- > 0;) {
		x = &ch->v[i];
		if (x->pub.kind != SNAP_DELETE || x->pub.type != SNAP_DIR)
			continue;
		len = strlen(x->path);
		for (j = i + 1; j < ch->n; j++) {
			if (strncmp(ch->v[j].path, x->path, len) != 0)
				break;
			if (ch->v[j].path[len] != '/' ||
			    ch->v[j].pub.kind != SNAP_SKIP)
				continue;
			x->pub.kind = SNAP_SKIP;
			x->pub.old_mode = 0;
			x->old_sha[0] = '\0';
			if ((x->reason = strdup("folder holds entries that are "
			    "kept: kept")) == NULL)
				return snap_err(err, errlen, SNAP_ESYS, "git: "
				    "out of memory");
			break;
		}
	}
	return SNAP_OK;
}
