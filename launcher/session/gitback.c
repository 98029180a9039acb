/*
 * The end of a bind session's git guard (gitguard.h): what git's own work
 * wrote into the private folders goes back to the host's git folders,
 * each file only while the host's copy is still the one copied at the
 * start (else the session's stays in the session folder, and is named);
 * what git reads code or another folder from (config.worktree,
 * commondir, a rebase's todo list, a new hook) stays, and is named; the
 * config's keys are offered (gitoffer.c).
 *
 * A file goes back the way git writes it: NAME.lock made next to it
 * (O_EXCL: a git running on the host meanwhile holds it, and the file
 * is kept instead), the host's file checked with the lock held, written,
 * synced, given the owner and mode of the file it replaces, renamed over
 * it.  Never through a link: the command
 * may have planted links anywhere in the workspace and in the private
 * folders (snap/fs.h refuses a link on the way).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/gitguard-int.h"
#include "snap/fs.h"
#include "snap/snap.h"

#define NOTES_MAX	32	/* lines of what stayed, then a count */

struct notes {
	const struct launch_gitguard	*g;
	size_t				 n;
	int				 head;
	int				 kept;	/* something stays in
						   SESSION/git */
};

/* One line of what did not go back, the block's head before the first. */
static void
note(struct notes *t, const char *rel, int dir, const char *what)
{
	t->kept = 1;
	if (t->n++ >= NOTES_MAX)
		return;
	if (!t->head) {
		t->head = 1;
		fputs("aisb: git: NOT written back into your repositories (git "
		    "runs code, or takes its config and hooks, from what is "
		    "here); kept under ", stderr);
		snap_print_name(stderr, t->g->sdir);
		fputs("/git:\n", stderr);
	}
	fputs("aisb:   ", stderr);
	snap_print_name(stderr, rel);
	fprintf(stderr, "%s (%s)\n", dir ? "/" : "", what);
}

/* The node of repo k at rel, or NULL. */
static const struct gg_node *
node_at(const struct launch_gitguard *g, size_t k, const char *rel)
{
	size_t	 i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].repo == k && strcmp(g->nodes[i].rel, rel) == 0)
			return &g->nodes[i];
	return NULL;
}

int
gg_put(const char *priv, const char *host, const struct gg_ident *want,
    uint32_t mode, uint32_t uid, uint32_t gid, char *err, size_t errlen)
{
	struct snap_file	*in = NULL, *out = NULL;
	struct snap_stat	 st;
	char			 lock[PATH_MAX + 8], buf[65536];
	long			 k = 0;
	int			 rc = -1, made = 0, at;

	if (snprintf(lock, sizeof(lock), "%s.lock", host) >=
	    (int)sizeof(lock)) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	if (priv != NULL && (in = snap_fs_open_read(priv)) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto out;
	}
	if ((out = snap_fs_create(lock, mode)) == NULL) {
		snprintf(err, errlen, errno == EEXIST ? "a git on the host "
		    "holds its .lock" : "%s", strerror(errno));
		goto out;
	}
	made = 1;
	/* with the lock held, no git of the host's changes it: still the
	 * one copied (or still none)? */
	at = snap_fs_lstat(host, &st) == 0;
	if (want != NULL ? !at || st.type != SNAP_FS_FILE || !gg_same(want,
	    &st) : at) {
		rc = 1;
		goto out;
	}
	if (priv == NULL) {
		if (snap_fs_unlink(host) == -1 && errno != ENOENT) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto out;
		}
		rc = 0;
		goto out;
	}
	while ((k = snap_fs_read(in, buf, sizeof(buf))) > 0)
		if (snap_fs_write(out, buf, (size_t)k) == -1)
			break;
	if (k != 0 || snap_fs_fsync(out) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto out;
	}
	if (snap_fs_close(out) == -1) {
		out = NULL;
		snprintf(err, errlen, "%s", strerror(errno));
		goto out;
	}
	out = NULL;
	if (snap_fs_lchown(lock, uid, gid) == -1 || snap_fs_chmod(lock,
	    mode) == -1 || snap_fs_rename(lock, host) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto out;
	}
	made = 0;
	rc = 0;
out:
	if (out != NULL)
		snap_fs_close(out);
	if (in != NULL)
		snap_fs_close(in);
	if (made)
		(void)snap_fs_unlink(lock);
	return rc;
}

/*
 * One file of git's own work back: n the node copied at the start, or
 * NULL for one the command made; gone: the command removed it.  The
 * host's must still be what was copied (or still absent), which gg_put
 * checks with the lock held.
 */
static void
back_one(struct launch_gitguard *g, const struct gg_repo *r,
    const struct gg_node *n, const char *rel, const char *priv, int gone,
    struct notes *t)
{
	char			 host[PATH_MAX], err[256];
	int			 rc;

	if (gg_path(host, g->ws, rel) == -1)
		return;
	err[0] = '\0';
	rc = gg_put(gone ? NULL : priv, host, n != NULL ? &n->host : NULL,
	    n != NULL ? n->mode & 0666 : 0644, n != NULL ? n->uid : r->uid,
	    n != NULL ? n->gid : r->gid, err, sizeof(err));
	if (rc == 0)
		return;
	t->kept = 1;
	fputs("aisb: git: ", stderr);
	snap_print_name(stderr, rel);
	if (rc == 1)
		fputs(" changed on the host during the session: yours is "
		    "kept, the session's is ", stderr);
	else
		fprintf(stderr, " not written back (%s): the session's is ",
		    err);
	snap_print_name(stderr, priv);
	fputc('\n', stderr);
}

/* rel is the config of its repository (offered, not noted). */
static int
is_config(const struct gg_repo *r, const char *rel)
{
	return r->full && strcmp(rel + strlen(r->rel), "/config") == 0;
}

/* The files copied into repository k's private folder, now. */
static void
back_copies(struct launch_gitguard *g, size_t k, struct notes *t)
{
	const struct gg_repo	*r = &g->repos[k];
	const struct gg_node	*n;
	struct snap_stat	 st;
	char			 priv[PATH_MAX], sha[65];
	size_t			 i;
	int			 gone;

	for (i = 0; i < g->nnodes; i++) {
		n = &g->nodes[i];
		if (n->repo != k || n->kind != GG_COPY ||
		    gg_priv(g, n, priv) == -1)
			continue;
		gone = snap_fs_lstat(priv, &st) == -1;
		if (!gone && st.type != SNAP_FS_FILE) {
			note(t, n->rel, 0, "replaced by a folder or link");
			continue;
		}
		if (!gone && (gg_same(&n->copy, &st) || (gg_hash(priv,
		    sha) == 0 && strcmp(sha, n->sha) == 0)))
			continue;	/* as copied */
		if (n->back)
			back_one(g, r, n, n->rel, priv, gone, t);
		else if (!is_config(r, n->rel))
			note(t, n->rel, 0, gone ? "removed" : "changed");
	}
}

/* What the command made in repository k's private folder: a file of
 * git's own work goes back, anything else is named. */
static void
back_made(struct launch_gitguard *g, size_t k, struct notes *t)
{
	const struct gg_repo	*r = &g->repos[k];
	struct snap_stat	 st;
	char			 rel[PATH_MAX], priv[PATH_MAX], **names;
	long			 n, j;
	size_t			 i;

	if ((n = snap_list_dir(r->priv, "", &names)) == -1)
		return;
	for (j = 0; j < n && j < LAUNCH_GIT_NODES_MAX; j++) {
		if (gg_path(rel, r->rel, names[j]) == -1 ||
		    gg_path(priv, r->priv, names[j]) == -1 ||
		    node_at(g, k, rel) != NULL)
			continue;
		/* a nested git folder's own entry is its parent's node */
		for (i = 0; i < g->nrepos; i++)
			if (strcmp(g->repos[i].rel, rel) == 0)
				break;
		if (i < g->nrepos || snap_fs_lstat(priv, &st) == -1)
			continue;
		if (st.type == SNAP_FS_FILE && snap_git_back_name(names[j]))
			back_one(g, r, NULL, rel, priv, 0, t);
		else
			note(t, rel, st.type == SNAP_FS_DIR, "made by the "
			    "command");
	}
	snap_names_free(names, n);
}

void
launch_gitguard_end(struct launch_gitguard *g, const char *id, int apply)
{
	struct notes		 t;
	struct snap_stat	 st;
	char			 host[PATH_MAX], err[PATH_MAX + 128];
	size_t			 k;

	if (g == NULL || g->nrepos == 0)
		return;
	memset(&t, 0, sizeof(t));
	t.g = g;
	for (k = 0; k < g->nrepos; k++) {
		/* the folder the files go into is still the one copied */
		if (gg_path(host, g->ws, g->repos[k].rel) == -1 ||
		    snap_fs_lstat(host, &st) == -1 || st.type != SNAP_FS_DIR ||
		    st.dev != g->repos[k].dev || st.ino != g->repos[k].ino) {
			fputs("aisb: git: ", stderr);
			snap_print_name(stderr, g->repos[k].rel);
			fputs(" is not the folder it was when the session "
			    "started: nothing goes back into it\n", stderr);
			t.kept = 1;
			continue;
		}
		back_copies(g, k, &t);
		back_made(g, k, &t);
	}
	if (t.n > NOTES_MAX)
		fprintf(stderr, "aisb:   and %zu more\n", t.n - NOTES_MAX);
	gg_offer(g, id, apply);
	/* all went back, or was nothing: the copies go (an index is often
	 * megabytes); what stayed is named above, with its folder */
	if (!t.kept && gg_path(host, g->sdir, "git") == 0 &&
	    snap_tree_remove(host, err, sizeof(err)) != SNAP_OK)
		fprintf(stderr, "aisb: git: %s\n", err);
}
