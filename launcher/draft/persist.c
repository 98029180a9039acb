/*
 * Drafts that persist (draft.h, "drafts that persist"; docs/snapshot.md):
 * a draft bound to a workspace and a name, which sessions continue in
 * (aisb --draft NAME) and aisb draft status|changes|commit|discard|recover
 * work on.  Its folder is laid out as a snapshot session's, so that the
 * commands of a session's draft serve it: the state file (with its name
 * and revision), manifest (the base: what the workspace held when the
 * draft last took it), stage/ (the draft's tree), changes (the tree
 * against the base), tx/N (its commits: draft_apply into the workspace).
 *
 * A session on the draft stages the tree, not the workspace; when its
 * command succeeds, its change set goes into the tree (draft_end with
 * DRAFT_APPLY_DRAFT: a transaction into the tree, never asked); when it
 * fails, the tree is as before the session.  Before the session the
 * draft is brought up to date with the workspace (sync_tree, three-way):
 * when the workspace moved on since the base (snap_manifest_current),
 * the workspace is staged afresh into next/, the tree's own changes
 * against the base are applied onto it by a transaction (its checks are
 * the conflicts: a file both changed, a file under a folder the other
 * removed, a file where the other made a folder), and next/ becomes the
 * tree with the fresh manifest as its base.  The swap is journalled in
 * the state ("syncing"): recover, or the next open, finishes it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft-int.h"
#include "exitcode.h"
#include "snap/fs.h"

#define DRAFT_SYNCING	"syncing"	/* next/ becoming the tree */
#define DRAFTS_MAX	4096		/* folders aisb draft ls reads */

int
draft_name_ok(const char *name)
{
	size_t	n = strlen(name);

	return n > 0 && n <= DRAFT_NAME_MAX && name[0] != '.' &&
	    name[0] != '-' && strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int
draft_persist_path(const char *drafts_dir, const char *workspace,
    const char *name, char *out)
{
	char	 hex[SNAP_SHA256_HEX + 1];
	int	 n;

	if (!draft_name_ok(name)) {
		fprintf(stderr, "aisb: draft name \"%.80s\": 1 to %d letters, "
		    "digits, '.', '_' or '-', not starting with '.' or '-'\n",
		    name, DRAFT_NAME_MAX);
		return -1;
	}
	if (snap_sha256_hex(workspace, strlen(workspace), hex) == -1) {
		fprintf(stderr, "aisb: draft %s: no hash\n", name);
		return -1;
	}
	n = snprintf(out, DRAFT_PATH_MAX, "%s/%.16s-%s", drafts_dir, hex,
	    name);
	if (n < 0 || n >= DRAFT_PATH_MAX) {
		fprintf(stderr, "aisb: %s: path too long\n", drafts_dir);
		return -1;
	}
	return 0;
}

/* draft_stage's prepare: the tree given to the owner (arg: the uid, the
 * gid after it) where that means something (draft_os_own_tree). */
static int
own_tree(const char *tree, void *arg, char *err, size_t errlen)
{
	const unsigned	*ug = arg;

	return draft_os_own_tree(tree, ug[0], ug[1], err, errlen);
}

/* ddir/name removed, a tree or a file, whatever is there. */
static void
drop(const char *ddir, const char *name)
{
	char	 path[DRAFT_PATH_MAX], err[256];

	if (draft_path(path, ddir, name) == 0 &&
	    snap_tree_remove(path, err, sizeof(err)) != SNAP_OK)
		fprintf(stderr, "aisb: %s\n", err);
}

/* The tree against the base: st's count and digest, ddir/changes. */
static int
recount(const char *ddir, struct dstate *st)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL;
	struct snap_rules	*rules = NULL;
	char			 err[2048], path[DRAFT_PATH_MAX];
	int			 rc = -1;

	if (draft_path(path, ddir, "manifest") == -1)
		return -1;
	if (snap_manifest_load(path, &m, err, sizeof(err)) != SNAP_OK ||
	    (rules = draft_rules_of(st, err, sizeof(err))) == NULL ||
	    snap_changes_compute(m, st->stage, rules, &st->lim, &ch, err,
	    sizeof(err)) != SNAP_OK ||
	    draft_path(path, ddir, "changes") == -1 ||
	    snap_changes_save(ch, path, err, sizeof(err)) != SNAP_OK)
		fprintf(stderr, "aisb: draft %s: %s\n", st->name, err);
	else {
		st->nchanges = snap_changes_effective(ch);
		snprintf(st->digest, sizeof(st->digest), "%s",
		    snap_changes_digest(ch));
		rc = 0;
	}
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_rules_free(rules);
	return rc;
}

/* st as it is now, saved: 0, or -1 (said). */
static int
save(const char *ddir, const struct dstate *st)
{
	char	 err[DRAFT_PATH_MAX + 128];

	if (dstate_save(ddir, st, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "aisb: %s\n", err);
	return -1;
}

/*
 * A new draft (or the next one after a commit or a discard): the
 * workspace staged into ddir/stage, its manifest the base.  0, or an
 * exit code (said).
 */
static int
make(const char *ddir, const char *workspace, const char *name,
    const struct draft_conf *conf, unsigned uid, unsigned gid,
    int quiet, unsigned long revision, struct dstate *st)
{
	struct draft_info	 info;
	char			 err[2048];
	unsigned		 tx = st->tx, ug[2] = { uid, gid };
	int			 rc;

	drop(ddir, "stage");
	drop(ddir, "next");
	/* the tree is the workspace owner's, as a session's stage is:
	 * the sessions stage it with that owner's reading */
	if ((rc = draft_stage(ddir, workspace, conf, uid, gid,
	    own_tree, ug, 1, &info, err, sizeof(err))) != 0) {
		fprintf(stderr, "aisb: draft %s: %s\n", name, err);
		return rc;
	}
	dstate_free(st);
	if (dstate_load(ddir, st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->revision = revision;
	st->tx = tx;		/* its commits go on being numbered */
	st->nchanges = 0;
	st->digest[0] = '\0';
	dstate_set(st, DRAFT_KEPT);
	if (save(ddir, st) == -1)
		return EXIT_ENFORCE;
	if (!quiet)
		fprintf(stderr, "aisb: draft %s: made from %s (%llu entries); "
		    "revision %lu\n", name, workspace, info.entries, revision);
	return 0;
}

/* make() again with what st was made with (the next draft, after a
 * commit or a discard; st is that one's afterwards). */
static int
remake(const char *ddir, const char *name, struct dstate *st)
{
	struct draft_conf	 c;
	char			 ws[DRAFT_PATH_MAX];

	draft_conf_of(st, &c);
	snprintf(ws, sizeof(ws), "%s", st->workspace);
	return make(ddir, ws, name, &c, st->owner_uid, st->owner_gid, 0,
	    st->revision + 1, st);
}

/*
 * The swap of a sync whose next/ is ready (st "syncing"): the tree set
 * aside, next/ in its place, its manifest the base.  Each step looks
 * before it moves, so that finishing it again after a crash is right.
 */
static int
finish_sync(const char *ddir, struct dstate *st)
{
	char			 next[DRAFT_PATH_MAX], old[DRAFT_PATH_MAX];
	char			 mnext[DRAFT_PATH_MAX], base[DRAFT_PATH_MAX];
	struct snap_stat	 sb;

	if (draft_path(next, ddir, "next") == -1 ||
	    draft_path(old, ddir, "stage.old") == -1 ||
	    draft_path(mnext, ddir, "manifest.next") == -1 ||
	    draft_path(base, ddir, "manifest") == -1)
		return -1;
	if (snap_fs_lstat(next, &sb) == 0) {
		if (snap_fs_lstat(old, &sb) == -1 &&
		    snap_fs_rename(st->stage, old) == -1 && errno != ENOENT)
			goto fail;
		if (snap_fs_rename(next, st->stage) == -1)
			goto fail;
	}
	if (snap_fs_lstat(mnext, &sb) == 0 && snap_fs_rename(mnext, base) == -1)
		goto fail;
	st->revision++;
	dstate_set(st, DRAFT_KEPT);
	if (recount(ddir, st) == -1 || save(ddir, st) == -1)
		return -1;
	drop(ddir, "stage.old");
	drop(ddir, "sync.tx");
	return 0;
fail:
	fprintf(stderr, "aisb: draft %s: finishing its update: %s (aisb draft "
	    "recover %s)\n", st->name, strerror(errno), st->name);
	return -1;
}

/*
 * The error of the sync's transaction (it names next/'s paths) with the
 * workspace's path in their place, on stderr.
 */
static void
say_conflict(const struct dstate *st, const char *next, const char *err)
{
	const char	*p = strstr(err, next);

	fprintf(stderr, "aisb: draft %s: the workspace changed where the "
	    "draft did: ", st->name);
	if (p != NULL)
		fprintf(stderr, "%.*s%s%s", (int)(p - err), err, st->workspace,
		    p + strlen(next));
	else
		fputs(err, stderr);
	fprintf(stderr, "; nothing runs: the draft is as it was (aisb draft "
	    "changes %s --diff; commit it, or discard it)\n", st->name);
}

/*
 * Three-way (this file's comment): the workspace's edits since the base
 * taken into the tree when they touch nothing the tree changed.  0 (up
 * to date, or brought up to date), 65 a conflict, or an exit code; said.
 */
static int
sync_tree(const char *ddir, struct dstate *st, int quiet)
{
	struct snap_manifest	*m = NULL, *nm = NULL;
	struct snap_changes	*ch = NULL;
	struct snap_rules	*rules = NULL;
	const struct snap_limits *lim = &st->lim;
	char			 err[2048], path[DRAFT_PATH_MAX];
	char			 next[DRAFT_PATH_MAX], stx[DRAFT_PATH_MAX];
	int			 rc, code = EXIT_ENFORCE;

	if (draft_path(path, ddir, "manifest") == -1 ||
	    draft_path(next, ddir, "next") == -1 ||
	    draft_path(stx, ddir, "sync.tx") == -1)
		return EXIT_ENFORCE;
	if (snap_manifest_load(path, &m, err, sizeof(err)) != SNAP_OK ||
	    (rc = snap_manifest_current(m, lim, err, sizeof(err))) < 0) {
		fprintf(stderr, "aisb: draft %s: %s\n", st->name, err);
		goto out;
	}
	if (rc == 1) {
		code = 0;	/* the workspace is as the base says */
		goto out;
	}
	drop(ddir, "next");
	drop(ddir, "sync.tx");
	drop(ddir, "manifest.next");
	/* without writeback_deny: the draft's own changes all go on into
	 * the next tree (that they never reach the workspace is commit's) */
	if ((rules = draft_rules(st->exclude, st->nexclude, st->owner_uid,
	    st->owner_gid, err, sizeof(err))) == NULL ||
	    snap_changes_compute(m, st->stage, rules, lim, &ch, err,
	    sizeof(err)) != SNAP_OK ||
	    (rc = snap_stage_create(st->workspace, next, rules, lim, &nm, err,
	    sizeof(err))) != SNAP_OK ||
	    draft_os_own_tree(next, st->owner_uid, st->owner_gid, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: draft %s: %s\n", st->name, err);
		code = rc == SNAP_EBOUND ? EXIT_CONFIG : EXIT_ENFORCE;
		goto out;
	}
	/* the draft's own changes onto the workspace as it is now */
	if (snap_changes_effective(ch) > 0) {
		rc = snap_tx_apply(stx, next, st->stage, m, ch, err,
		    sizeof(err));
		if (rc != SNAP_OK) {
			if (rc == SNAP_ECONFLICT)
				say_conflict(st, next, err);
			else
				fprintf(stderr, "aisb: draft %s: %s\n", st->name,
				    err);
			code = rc == SNAP_ECONFLICT ? EXIT_CONFLICT :
			    EXIT_ENFORCE;
			drop(ddir, "next");
			drop(ddir, "sync.tx");
			goto out;
		}
		draft_os_own_applied(next, st->owner_uid, st->owner_gid, ch, 0);
	}
	if (draft_path(path, ddir, "manifest.next") == -1 ||
	    snap_manifest_save(nm, path, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: draft %s: %s\n", st->name, err);
		goto out;
	}
	dstate_set(st, DRAFT_SYNCING);
	if (save(ddir, st) == -1 || finish_sync(ddir, st) == -1)
		goto out;
	if (!quiet)
		fprintf(stderr, "aisb: draft %s: took in the workspace's edits "
		    "since its base; revision %lu\n", st->name, st->revision);
	code = 0;
out:
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_manifest_free(nm);
	snap_rules_free(rules);
	return code;
}

/* Whether st (loaded) is a draft that a session or a command may go on
 * with: 0, or an exit code (said). */
static int
usable(const char *ddir, struct dstate *st)
{
	if (dstate_is(st, DRAFT_SYNCING))
		return finish_sync(ddir, st) == -1 ? EXIT_IOERR : 0;
	if (dstate_is(st, DRAFT_APPLYING) || dstate_is(st, DRAFT_RECOVERY) ||
	    dstate_is(st, DRAFT_UNDOING)) {
		fprintf(stderr, "aisb: draft %s: its commit (transaction %u) "
		    "was interrupted; aisb draft recover %s brings it to an "
		    "end first\n", st->name, st->tx, st->name);
		return EXIT_IOERR;
	}
	return 0;
}

/* The lock of ddir, naming the session that holds it when busy. */
static int
take(const char *ddir, const char *name, intptr_t *lock)
{
	char	*who, path[DRAFT_PATH_MAX];
	size_t	 len;
	int	 rc;

	if ((rc = draft_os_lock(ddir, lock, 1)) == 0)
		return 0;
	if (rc == -2) {
		who = draft_path(path, ddir, "session") == 0 ?
		    snap_file_read(path, 64, &len) : NULL;
		fprintf(stderr, "aisb: draft %s is in use%s%.*s; aisb draft "
		    "status %s says when it is free\n", name, who != NULL ?
		    " by session " : " by another aisb", who != NULL ?
		    (int)strcspn(who, "\n") : 0, who != NULL ? who : "", name);
		free(who);
		return EXIT_BUSY;
	}
	return EXIT_ENFORCE;
}

int
draft_persist_open(const char *ddir, const char *workspace, const char *name,
    const char *session_id, const struct draft_conf *conf,
    unsigned owner_uid, unsigned owner_gid, int quiet,
    struct draft_info *info)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128], path[DRAFT_PATH_MAX];
	int		 rc, fresh;

	memset(&st, 0, sizeof(st));
	info->draft_lock = -1;
	if (snap_fs_mkdir(ddir, 0700) == -1 && errno != EEXIST) {
		fprintf(stderr, "aisb: %s: %s\n", ddir, strerror(errno));
		return EXIT_ENFORCE;
	}
	if ((rc = take(ddir, name, &info->draft_lock)) != 0)
		return rc;
	/* who holds it, for aisb draft status and a refused second one */
	if (draft_path(path, ddir, "session") == -1 ||
	    snap_file_write(path, session_id, strlen(session_id)) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
		rc = EXIT_ENFORCE;
		goto fail;
	}
	if (dstate_load(ddir, &st, err, sizeof(err)) == -1 && errno != ENOENT) {
		fprintf(stderr, "aisb: %s\n", err);
		rc = EXIT_CONFIG;
		goto fail;
	}
	fresh = st.state[0] == '\0' || dstate_is(&st, DRAFT_DISCARDED) ||
	    dstate_is(&st, DRAFT_APPLIED) || dstate_is(&st, DRAFT_STAGED) ||
	    dstate_is(&st, DRAFT_FAILED);
	if (!fresh && strcmp(st.workspace, workspace) != 0) {
		fprintf(stderr, "aisb: draft %s: bound to %s, not %s\n", name,
		    st.workspace, workspace);
		rc = EXIT_CONFIG;
		goto fail;
	}
	if (fresh)
		rc = make(ddir, workspace, name, conf, owner_uid, owner_gid,
		    quiet, st.revision + 1, &st);
	else if ((rc = usable(ddir, &st)) == 0)
		rc = sync_tree(ddir, &st, quiet);
	if (rc != 0)
		goto fail;
	snprintf(info->draft_dir, sizeof(info->draft_dir), "%s", ddir);
	snprintf(info->draft_name, sizeof(info->draft_name), "%s", name);
	info->draft_revision = st.revision;
	dstate_free(&st);
	return 0;
fail:
	dstate_free(&st);
	drop(ddir, "session");
	draft_os_unlock(info->draft_lock);
	info->draft_lock = -1;
	return rc;
}

void
draft_persist_close(struct draft_info *info, int quiet)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128];

	if (info->draft_dir[0] == '\0')
		return;
	if (dstate_load(info->draft_dir, &st, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: %s\n", err);
	else {
		/* the session's changes went into the tree */
		if (strcmp(info->outcome, DRAFT_APPLIED) == 0)
			st.revision++;
		if (recount(info->draft_dir, &st) == 0 &&
		    save(info->draft_dir, &st) == 0 && !quiet)
			fprintf(stderr, "aisb: draft %s: revision %lu, %llu "
			    "change(s) waiting (aisb draft changes %s --diff; "
			    "aisb draft commit %s writes them into %s)\n",
			    st.name, st.revision, st.nchanges, st.name, st.name,
			    st.workspace);
		info->draft_revision = st.revision;
		dstate_free(&st);
	}
	drop(info->draft_dir, "session");
	draft_os_unlock(info->draft_lock);
	info->draft_lock = -1;
}

/* ---- the commands ------------------------------------------------------- */

/* ddir's draft taken and loaded for a command: 0, or an exit code. */
static int
open_cmd(const char *ddir, const char *name, struct dstate *st,
    intptr_t *lock)
{
	int	 rc;

	if ((rc = take(ddir, name, lock)) != 0)
		return rc;
	if (dstate_load_said(ddir, st) == -1) {
		draft_os_unlock(*lock);
		return EXIT_CONFIG;
	}
	return 0;
}

int
draft_persist_status(const char *ddir, const char *name)
{
	struct snap_manifest	*m = NULL;
	struct dstate		 st;
	intptr_t		 lock;
	char			 err[2048], path[DRAFT_PATH_MAX], *who;
	size_t			 len;
	int			 busy, cur = -1;

	if (dstate_load_said(ddir, &st) == -1)
		return EXIT_CONFIG;
	/* a session holds it: busy, never waited for */
	if ((busy = draft_os_lock(ddir, &lock, 1)) == 0)
		draft_os_unlock(lock);
	printf("draft %s\nworkspace %s\nstate %s\nrevision %lu\nchanges "
	    "%llu\ndigest %.12s\n", name, st.workspace, st.state,
	    st.revision, st.nchanges, st.digest[0] != '\0' ? st.digest : "-");
	if (busy == -2) {
		who = draft_path(path, ddir, "session") == 0 ?
		    snap_file_read(path, 64, &len) : NULL;
		printf("busy %.*s\n", who != NULL ? (int)strcspn(who, "\n") :
		    14, who != NULL ? who : "(another aisb)");
		free(who);
	} else if (dstate_is(&st, DRAFT_KEPT) || dstate_is(&st,
	    DRAFT_CONFLICT)) {
		if (draft_path(path, ddir, "manifest") == 0 &&
		    snap_manifest_load(path, &m, err, sizeof(err)) == SNAP_OK)
			cur = snap_manifest_current(m, &st.lim, err,
			    sizeof(err));
		printf("workspace_moved %s\n", cur == 1 ? "no" : cur == 0 ?
		    "yes (the next session takes its edits in)" : err);
		snap_manifest_free(m);
	}
	dstate_free(&st);
	return 0;
}

int
draft_persist_changes(const char *ddir, const char *name, int diff)
{
	struct dstate	 st;
	intptr_t	 lock;
	int		 rc;

	if ((rc = open_cmd(ddir, name, &st, &lock)) != 0)
		return rc;
	if (dstate_is(&st, DRAFT_KEPT) || dstate_is(&st, DRAFT_CONFLICT))
		rc = recount(ddir, &st) == -1 || save(ddir, &st) == -1 ?
		    EXIT_ENFORCE : 0;
	dstate_free(&st);
	draft_os_unlock(lock);
	return rc != 0 ? rc : draft_changes(ddir, name, diff);
}

int
draft_persist_commit(const char *ddir, const char *name, long expect)
{
	struct dstate	 st;
	intptr_t	 lock;
	int		 rc;

	if ((rc = open_cmd(ddir, name, &st, &lock)) != 0)
		return rc;
	if ((rc = usable(ddir, &st)) != 0)
		goto out;
	if (!dstate_is(&st, DRAFT_KEPT) && !dstate_is(&st, DRAFT_CONFLICT)) {
		fprintf(stderr, "aisb: draft %s: nothing to commit (it is "
		    "%s)\n", name, st.state);
		rc = EXIT_CONFIG;
		goto out;
	}
	if (expect >= 0 && (unsigned long)expect != st.revision) {
		fprintf(stderr, "aisb: draft %s is at revision %lu, not %ld: "
		    "nothing is written (aisb draft changes %s --diff shows "
		    "what it holds now)\n", name, st.revision, expect, name);
		rc = EXIT_CONFLICT;
		goto out;
	}
	if (recount(ddir, &st) == -1 || save(ddir, &st) == -1) {
		rc = EXIT_ENFORCE;
		goto out;
	}
	if (st.nchanges == 0) {
		printf("draft %s: nothing to commit\n", name);
		goto out;
	}
	/* typing commit is the approval; then a fresh base for what comes */
	if ((rc = draft_apply_locked(ddir, name, &st, 0)) == 0)
		rc = remake(ddir, name, &st);
out:
	dstate_free(&st);
	draft_os_unlock(lock);
	return rc;
}

int
draft_persist_discard(const char *ddir, const char *name)
{
	struct dstate	 st;
	intptr_t	 lock;
	int		 rc;

	if ((rc = open_cmd(ddir, name, &st, &lock)) != 0)
		return rc;
	rc = usable(ddir, &st);
	dstate_free(&st);
	draft_os_unlock(lock);
	/* draft_discard takes the lock itself */
	return rc != 0 ? rc : draft_discard(ddir, name);
}

int
draft_persist_recover(const char *ddir, const char *name)
{
	struct dstate	 st;
	intptr_t	 lock;
	int		 rc, commit;

	if ((rc = open_cmd(ddir, name, &st, &lock)) != 0)
		return rc;
	if (dstate_is(&st, DRAFT_SYNCING)) {
		rc = finish_sync(ddir, &st) == -1 ? EXIT_IOERR : 0;
		if (rc == 0)
			printf("draft %s: its update finished; revision %lu\n",
			    name, st.revision);
		goto out;
	}
	commit = dstate_is(&st, DRAFT_APPLYING) ||
	    dstate_is(&st, DRAFT_RECOVERY);
	dstate_free(&st);
	draft_os_unlock(lock);
	if ((rc = draft_recover(ddir, name)) != 0 || !commit)
		return rc;
	/* a commit that turns out done: a fresh base, as commit makes */
	if ((rc = open_cmd(ddir, name, &st, &lock)) != 0)
		return rc;
	if (dstate_is(&st, DRAFT_APPLIED))
		rc = remake(ddir, name, &st);
out:
	dstate_free(&st);
	draft_os_unlock(lock);
	return rc;
}

int
draft_persist_list(const char *drafts_dir)
{
	char		 ddir[DRAFT_PATH_MAX], err[DRAFT_PATH_MAX + 128];
	const char	*name;
	struct snap_dir	*d;
	struct dstate	 st;
	size_t		 seen = 0;

	printf("%-24s %-9s %-8s %-7s %s\n", "DRAFT", "STATE", "REVISION",
	    "CHANGES", "WORKSPACE");
	if ((d = snap_fs_opendir(drafts_dir)) == NULL)
		return 0;
	while ((name = snap_fs_readdir(d)) != NULL && seen++ < DRAFTS_MAX) {
		if (snprintf(ddir, sizeof(ddir), "%s/%s", drafts_dir, name) >=
		    (int)sizeof(ddir) || dstate_load(ddir, &st, err,
		    sizeof(err)) == -1)
			continue;
		printf("%-24s %-9s %-8lu %-7llu %s\n", st.name, st.state,
		    st.revision, st.nchanges, st.workspace);
		dstate_free(&st);
	}
	snap_fs_closedir(d);
	return 0;
}
