/*
 * Snapshot sessions, the launcher's side (snapshot.h): the stage of a
 * session, its end, and the commands on its draft.  What is copied,
 * compared and written back, and how a crash is recovered, is
 * libaisbsnap's (snap/snap.h); here: where the files live, who owns
 * them, what the user is told and asked, and the exit codes.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "exitcode.h"
#include "file.h"
#include "launch.h"
#include "proc.h"
#include "snap.h"
#include "snapshot.h"

extern char **environ;

static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the state file ---------------------------------------------------- */

/*
 * SESSION/snapshot, "key value" lines (LAUNCH_SNAP_STATE_MAX bytes):
 *   workspace PATH   stage PATH   owner UID:GID   state WORD   exit N
 *   changes N   digest HEX   tx N   updated EPOCH   exclude PATTERN...
 * Paths hold no newline (refused when staging).
 */
#define SNAP_MAX_EXCLUDE	LAUNCH_MAX_LIST

struct sstate {
	char		 workspace[PATH_MAX];
	char		 stage[PATH_MAX];
	char		 state[16];
	char		 digest[SNAP_SHA256_HEX + 1];
	unsigned	 owner_uid, owner_gid;
	int		 exitcode;
	unsigned long long nchanges;
	unsigned	 tx;		/* the last transaction's number; 0 none */
	char		*exclude[SNAP_MAX_EXCLUDE];
	size_t		 nexclude;
};

static void
sstate_free(struct sstate *st)
{
	size_t	 i;

	for (i = 0; i < st->nexclude; i++)
		free(st->exclude[i]);
	st->nexclude = 0;
}

static int
sstate_save(const char *sdir, const struct sstate *st, char *err,
    size_t errlen)
{
	char	*text = NULL, path[PATH_MAX];
	size_t	 len = 0, i;
	FILE	*f;
	int	 rc = -1;

	if (file_path_join(path, sizeof(path), sdir, "snapshot") == -1) {
		snprintf(err, errlen, "%s/snapshot: path too long", sdir);
		return -1;
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "# aisb snapshot state 1 (docs/snapshot.md)\n"
	    "workspace %s\nstage %s\nowner %u:%u\nstate %s\nexit %d\n"
	    "changes %llu\ndigest %s\ntx %u\nupdated %lld\n", st->workspace,
	    st->stage, st->owner_uid, st->owner_gid, st->state, st->exitcode,
	    st->nchanges, st->digest[0] != '\0' ? st->digest : "-", st->tx,
	    (long long)time(NULL));
	for (i = 0; i < st->nexclude; i++)
		fprintf(f, "exclude %s\n", st->exclude[i]);
	if (fclose(f) != 0 || text == NULL) {
		snprintf(err, errlen, "out of memory");
		free(text);
		return -1;
	}
	if (len > LAUNCH_SNAP_STATE_MAX)
		snprintf(err, errlen, "%s: longer than %d bytes", path,
		    LAUNCH_SNAP_STATE_MAX);
	else if (file_write_atomic(path, text, len, 0600, (gid_t)-1) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else
		rc = 0;
	free(text);
	return rc;
}

/* The state of the session in sdir.  0, or -1 with err (errno ENOENT: a
 * session that is not a snapshot session). */
static int
sstate_load(const char *sdir, struct sstate *st, char *err, size_t errlen)
{
	char		*text, *line, *save = NULL, *v;
	size_t		 len;
	unsigned	 seen = 0;

	memset(st, 0, sizeof(*st));
	if ((text = file_read_in(sdir, "snapshot", LAUNCH_SNAP_STATE_MAX, &len,
	    err, errlen)) == NULL)
		return -1;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || (v = strchr(line, ' ')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, "workspace") == 0 && v[0] == '/') {
			snprintf(st->workspace, sizeof(st->workspace), "%s", v);
			seen |= 1;
		} else if (strcmp(line, "stage") == 0 && v[0] == '/') {
			snprintf(st->stage, sizeof(st->stage), "%s", v);
			seen |= 2;
		} else if (strcmp(line, "state") == 0) {
			snprintf(st->state, sizeof(st->state), "%s", v);
			seen |= 4;
		} else if (strcmp(line, "owner") == 0)
			(void)sscanf(v, "%u:%u", &st->owner_uid, &st->owner_gid);
		else if (strcmp(line, "exit") == 0)
			st->exitcode = atoi(v);
		else if (strcmp(line, "changes") == 0)
			st->nchanges = strtoull(v, NULL, 10);
		else if (strcmp(line, "digest") == 0 &&
		    strlen(v) == SNAP_SHA256_HEX)
			snprintf(st->digest, sizeof(st->digest), "%s", v);
		else if (strcmp(line, "tx") == 0)
			st->tx = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(line, "exclude") == 0 &&
		    st->nexclude < SNAP_MAX_EXCLUDE &&
		    (st->exclude[st->nexclude] = strdup(v)) != NULL)
			st->nexclude++;
	}
	free(text);
	if (seen != 7 || st->tx > LAUNCH_SNAP_MAX_TX) {
		snprintf(err, errlen, "%s/snapshot: not a snapshot state (no "
		    "workspace, stage or state line)", sdir);
		sstate_free(st);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The default rules and the patterns the user configured. */
static struct snap_rules *
make_rules(char *const *exclude, size_t n, char *err, size_t errlen)
{
	struct snap_rules	*r;
	size_t			 i;

	if ((r = snap_rules_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (snap_rules_add(r, exclude[i], err, errlen) != SNAP_OK) {
			snap_rules_free(r);
			return NULL;
		}
	return r;
}

/* ---- ownership ---------------------------------------------------------- */

static uid_t	chown_uid;
static gid_t	chown_gid;

static int
chown_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_uid, chown_gid) == -1 ? -1 : 0;
}

/*
 * The stage, made by root in a workspace of another user (sudo), given
 * to that user: the idmapped mount shows the owner's files as the
 * sandbox's, and root's as nobody's.  The stage is in root's 0700
 * session folder: nobody else can swap a link into it meanwhile.
 */
static int
own_stage(const char *stage, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	chown_uid = uid;
	chown_gid = gid;
	if (nftw(stage, chown_one, 64, FTW_PHYS) != 0) {
		snprintf(err, errlen, "giving the stage %s to uid %u: %s", stage,
		    (unsigned)uid, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * rel (relative, '/'-separated) under the folder rootfd given to
 * uid:gid, opening each folder on the way without following a link: the
 * owner of the tree may swap a component for a link at any time, and
 * root must not chown what it points to.  0 or -1.
 */
static int
own_path(int rootfd, const char *rel, uid_t uid, gid_t gid)
{
	char	 buf[PATH_MAX], *p, *slash;
	int	 fd, next, rc;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -1;
	if ((fd = dup(rootfd)) == -1)
		return -1;
	for (p = buf; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = '\0';
		next = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		if (next == -1)
			return -1;
		fd = next;
	}
	rc = fchownat(fd, p, uid, gid, AT_SYMLINK_NOFOLLOW);
	close(fd);
	return rc;
}

/*
 * After root applied a change set to another user's tree: what it
 * created or replaced is root's; given back to the tree's owner.
 * Failures are said, not fatal: the content is written.
 */
static void
own_applied(const struct sstate *st, const struct snap_changes *ch)
{
	const struct snap_change	*c;
	size_t				 i, n = snap_changes_count(ch), bad = 0;
	int				 rootfd;

	if (geteuid() != 0 || st->owner_uid == 0)
		return;
	if ((rootfd = open(st->workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		fprintf(stderr, "aisb: %s: %s; the files applied stay root's\n",
		    st->workspace, strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		c = snap_changes_get(ch, i);
		if (c->kind != SNAP_CREATE && c->kind != SNAP_MODIFY &&
		    c->kind != SNAP_MODE)
			continue;
		if (own_path(rootfd, c->path, (uid_t)st->owner_uid,
		    (gid_t)st->owner_gid) == -1)
			bad++;
	}
	close(rootfd);
	if (bad > 0)
		fprintf(stderr, "aisb: %zu file(s) applied could not be given "
		    "to uid %u; they are root's\n", bad, st->owner_uid);
}

/* ---- the session ------------------------------------------------------- */

static int
snap_code(int rc)
{
	return rc == SNAP_EBOUND || rc == SNAP_EINVAL ? EXIT_CONFIG :
	    rc == SNAP_ECONFLICT ? EXIT_CONFLICT : EXIT_ENFORCE;
}

int
launch_snap_stage(struct launch_snap *sn, const struct launch_session *s,
    const struct launch_opts *o, const struct launch_ids *ids, char *err,
    size_t errlen)
{
	struct snap_limits	 lim;
	struct snap_rules	*rules = NULL;
	struct snap_manifest	*m = NULL;
	struct snap_stage_stats	 stats;
	struct sstate		 st;
	char			 path[PATH_MAX];
	size_t			 i;
	int			 rc, code = EXIT_ENFORCE;

	memset(sn, 0, sizeof(*sn));
	memset(&st, 0, sizeof(st));
	if (realpath(o->val[LO_WORKSPACE], sn->workspace) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", o->val[LO_WORKSPACE],
		    strerror(errno));
		return EXIT_CONFIG;
	}
	if (strchr(sn->workspace, '\n') != NULL) {
		snprintf(err, errlen, "workspace %s: a line break in its path",
		    sn->workspace);
		return EXIT_CONFIG;
	}
	if (launch_session_path(s, "stage", sn->stage, sizeof(sn->stage)) == -1 ||
	    launch_session_path(s, "manifest", path, sizeof(path)) == -1) {
		snprintf(err, errlen, "session folder path too long");
		return EXIT_ENFORCE;
	}
	/* borrowed from o, saved with the state, never freed here */
	for (i = 0; i < o->nexclude && i < SNAP_MAX_EXCLUDE; i++)
		st.exclude[st.nexclude++] = o->exclude[i].text;
	if ((rules = make_rules(st.exclude, st.nexclude, err, errlen)) == NULL) {
		code = EXIT_CONFIG;
		goto fail;
	}
	snap_limits_default(&lim);
	sn->stage_ms = now_ms();
	if ((rc = snap_stage_create(sn->workspace, sn->stage, rules, &lim, &m,
	    err, errlen)) != SNAP_OK) {
		code = snap_code(rc);
		goto fail;
	}
	if (ids->mode == LAUNCH_IDS_MAPPED && ids->owner_uid != geteuid() &&
	    own_stage(sn->stage, ids->owner_uid, ids->owner_gid, err,
	    errlen) == -1)
		goto fail;
	if (snap_manifest_save(m, path, err, errlen) != SNAP_OK)
		goto fail;
	sn->stage_ms = now_ms() - sn->stage_ms;
	snap_manifest_stats(m, &stats);
	sn->entries = stats.entries;
	sn->bytes = stats.bytes;
	sn->excluded = stats.excluded;
	sn->cloned = stats.cloned;
	snprintf(st.workspace, sizeof(st.workspace), "%s", sn->workspace);
	snprintf(st.stage, sizeof(st.stage), "%s", sn->stage);
	snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_STAGED);
	snprintf(sn->outcome, sizeof(sn->outcome), "%s", LAUNCH_SNAP_STAGED);
	st.owner_uid = (unsigned)ids->owner_uid;
	st.owner_gid = (unsigned)ids->owner_gid;
	if (sstate_save(s->dir, &st, err, errlen) == -1)
		goto fail;
	sn->staged = 1;
	if (!o->quiet)
		fprintf(stderr, "aisb: snapshot: %llu entries, %llu bytes staged "
		    "in %lld ms (%llu left out); the command sees the copy, not "
		    "%s\n", sn->entries, sn->bytes, sn->stage_ms, sn->excluded,
		    sn->workspace);
	snap_manifest_free(m);
	snap_rules_free(rules);
	return 0;
fail:
	{
		char	 e2[256];

		(void)snap_tree_remove(sn->stage, e2, sizeof(e2));
	}
	/* the record says the stage was refused; nothing ran on it */
	snprintf(sn->outcome, sizeof(sn->outcome), "%s", LAUNCH_SNAP_FAILED);
	sn->stage_ms = 0;
	snap_manifest_free(m);
	snap_rules_free(rules);
	return code;
}

static int	 apply_draft(const char *sdir, const char *id, int quiet);

/*
 * The question at the end of a session: 1 apply, 0 keep.  On stdin when
 * it is a terminal, else (ask) on /dev/tty; with neither, keep.
 */
static int
ask_apply(const struct sstate *st, const char *sdir, int always)
{
	struct snap_changes	*ch = NULL;
	char			 line[LAUNCH_SNAP_ANSWER], path[PATH_MAX];
	char			 err[1024];
	FILE			*in = NULL;
	int			 fd, yes = 0;

	if (isatty(STDIN_FILENO) && (always || isatty(STDERR_FILENO)))
		in = fdopen(dup(STDIN_FILENO), "r");
	else if (always && (fd = open("/dev/tty", O_RDWR | O_NOCTTY |
	    O_CLOEXEC)) != -1)
		in = fdopen(fd, "r");
	if (in == NULL) {
		if (always)
			fprintf(stderr, "aisb: --apply=ask: no terminal to ask "
			    "on; the draft is kept\n");
		return 0;
	}
	for (;;) {
		fprintf(stderr, "aisb: write these %llu change(s) into %s? "
		    "[y]es, [n]o: keep the draft, [d]iff: ", st->nchanges,
		    st->workspace);
		fflush(stderr);
		if (fgets(line, sizeof(line), in) == NULL)
			break;
		if (strchr(line, '\n') == NULL) {
			int c;

			while ((c = fgetc(in)) != EOF && c != '\n')
				;
		}
		if (line[0] == 'y' || line[0] == 'Y') {
			yes = 1;
			break;
		}
		if (line[0] == 'n' || line[0] == 'N' || line[0] == '\n')
			break;
		if (line[0] != 'd' && line[0] != 'D')
			continue;
		if (ch == NULL && (file_path_join(path, sizeof(path), sdir,
		    "changes") == -1 || snap_changes_load(path, &ch, err,
		    sizeof(err)) != SNAP_OK)) {
			fprintf(stderr, "aisb: %s\n", err);
			continue;
		}
		if (snap_changes_print_diff(ch, st->workspace, st->stage, 0,
		    stderr, err, sizeof(err)) != SNAP_OK)
			fprintf(stderr, "aisb: diff: %s\n", err);
	}
	snap_changes_free(ch);
	fclose(in);
	return yes;
}

int
launch_snap_end(struct launch_snap *sn, const struct launch_session *s,
    const struct launch_opts *o, const struct launch_ids *ids, int code)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL;
	struct snap_rules	*rules = NULL;
	struct snap_limits	 lim;
	struct sstate		 st;
	char			 err[2048], path[PATH_MAX], e2[256];
	long long		 t0;
	int			 rc, out = code;

	(void)ids;
	if (!sn->staged)
		return code;
	if (sstate_load(s->dir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: snapshot: %s\n", err);
		return code != 0 ? code : EXIT_ENFORCE;
	}
	st.exitcode = code;
	if (code != 0) {
		/* failed, timed out, stopped: proposes nothing */
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_FAILED);
		if (snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: snapshot: %s\n", e2);
		if (!o->quiet)
			fprintf(stderr, "aisb: snapshot: the command exited %d: "
			    "nothing is proposed, the stage is removed, %s is "
			    "as it was\n", code, st.workspace);
		goto save;
	}
	snap_limits_default(&lim);
	t0 = now_ms();
	if (file_path_join(path, sizeof(path), s->dir, "manifest") == -1 ||
	    (rc = snap_manifest_load(path, &m, err, sizeof(err))) != SNAP_OK ||
	    (rules = make_rules(st.exclude, st.nexclude, err,
	    sizeof(err))) == NULL ||
	    (rc = snap_changes_compute(m, st.stage, rules, &lim, &ch, err,
	    sizeof(err))) != SNAP_OK) {
		fprintf(stderr, "aisb: snapshot: %s; nothing is proposed\n",
		    err);
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_FAILED);
		(void)snap_tree_remove(st.stage, e2, sizeof(e2));
		out = EXIT_CONFIG;
		goto save;
	}
	st.nchanges = snap_changes_effective(ch);
	snprintf(st.digest, sizeof(st.digest), "%s", snap_changes_digest(ch));
	if (file_path_join(path, sizeof(path), s->dir, "changes") == -1 ||
	    snap_changes_save(ch, path, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: snapshot: %s; the stage stays at %s\n",
		    err, st.stage);
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_FAILED);
		out = EXIT_ENFORCE;
		goto save;
	}
	sn->changes_ms = now_ms() - t0;
	if (st.nchanges == 0) {
		snprintf(st.state, sizeof(st.state), "%s",
		    LAUNCH_SNAP_UNCHANGED);
		(void)snap_tree_remove(st.stage, e2, sizeof(e2));
		if (!o->quiet) {
			if (snap_changes_count(ch) > 0)
				(void)snap_changes_print_summary(ch, stderr,
				    LAUNCH_SNAP_SUMMARY);
			fprintf(stderr, "aisb: snapshot: nothing to write back\n");
		}
		goto save;
	}
	snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_KEPT);
	if (!o->quiet) {
		fprintf(stderr, "aisb: snapshot: the command changed:\n");
		(void)snap_changes_print_summary(ch, stderr, LAUNCH_SNAP_SUMMARY);
	}
	if (sstate_save(s->dir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: snapshot: %s\n", err);
		out = EXIT_ENFORCE;
		goto done;
	}
	if (o->apply != LAUNCH_APPLY_NEVER &&
	    ask_apply(&st, s->dir, o->apply == LAUNCH_APPLY_ASK)) {
		rc = apply_draft(s->dir, s->id, o->quiet);
		if (rc != 0)
			out = rc;
	} else
		fprintf(stderr, "aisb: snapshot: kept as a draft; aisb changes "
		    "%s --diff shows it, aisb apply %s writes it into %s, aisb "
		    "discard %s drops it\n", s->id, s->id, st.workspace, s->id);
	sstate_free(&st);
	if (sstate_load(s->dir, &st, err, sizeof(err)) == 0)
		snprintf(sn->outcome, sizeof(sn->outcome), "%s", st.state);
	goto done;
save:
	if (sstate_save(s->dir, &st, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: snapshot: %s\n", err);
	snprintf(sn->outcome, sizeof(sn->outcome), "%s", st.state);
done:
	sn->nchanges = st.nchanges;
	snprintf(sn->digest, sizeof(sn->digest), "%s", st.digest);
	sstate_free(&st);
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_rules_free(rules);
	return out;
}

/* ---- the commands ------------------------------------------------------- */

/* flock(2) on SESSION/snapshot.lock: one writer of a draft at a time. */
static int
lock_draft(const char *sdir)
{
	char	 path[PATH_MAX];
	int	 fd;

	if (file_path_join(path, sizeof(path), sdir, "snapshot.lock") == -1 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		fprintf(stderr, "aisb: another aisb works on this draft (%s); "
		    "try again when it is done\n", path);
		close(fd);
		return -2;
	}
	return fd;
}

static int
tx_path(const char *sdir, unsigned n, char *out, size_t len)
{
	char	 name[32];

	snprintf(name, sizeof(name), "tx/%u", n);
	return file_path_join(out, len, sdir, name);
}

/*
 * Applies the draft of the session in sdir (its lock held by none):
 * 0 applied (or already), 65 conflict, 74 interrupted or failed, 78 no
 * draft to apply.
 */
static int
apply_draft(const char *sdir, const char *id, int quiet)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL, *now = NULL;
	struct snap_rules	*rules = NULL;
	struct snap_limits	 lim;
	struct sstate		 st;
	enum snap_tx_state	 txs = SNAP_TX_NONE;
	char			 err[2048], path[PATH_MAX], tx[PATH_MAX];
	char			 e2[256];
	int			 lock, rc, code = EXIT_CONFIG;

	memset(&st, 0, sizeof(st));
	if ((lock = lock_draft(sdir)) < 0)
		return lock == -2 ? EXIT_IOERR : EXIT_ENFORCE;
	if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a "
		    "snapshot session (aisb --snapshot makes one)" : err);
		goto out;
	}
	if (strcmp(st.state, LAUNCH_SNAP_APPLIED) == 0) {
		fprintf(stderr, "aisb: session %s: already applied "
		    "(transaction %u)\n", id, st.tx);
		code = 0;
		goto out;
	}
	if (strcmp(st.state, LAUNCH_SNAP_RECOVERY) == 0 ||
	    strcmp(st.state, LAUNCH_SNAP_APPLYING) == 0) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s brings it to an end first\n",
		    id, st.tx, id);
		code = EXIT_IOERR;
		goto out;
	}
	if (strcmp(st.state, LAUNCH_SNAP_KEPT) != 0 &&
	    strcmp(st.state, LAUNCH_SNAP_CONFLICT) != 0) {
		fprintf(stderr, "aisb: session %s: nothing to apply (its draft "
		    "is %s)\n", id, st.state);
		goto out;
	}
	if (st.tx >= LAUNCH_SNAP_MAX_TX) {
		fprintf(stderr, "aisb: session %s: %u attempts already\n", id,
		    st.tx);
		goto out;
	}
	/*
	 * What is applied is what was shown: the change set on file, and
	 * the stage still holding exactly it.
	 */
	snap_limits_default(&lim);
	if (file_path_join(path, sizeof(path), sdir, "manifest") == -1 ||
	    snap_manifest_load(path, &m, err, sizeof(err)) != SNAP_OK ||
	    file_path_join(path, sizeof(path), sdir, "changes") == -1 ||
	    snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK ||
	    (rules = make_rules(st.exclude, st.nexclude, err,
	    sizeof(err))) == NULL ||
	    (rc = snap_changes_compute(m, st.stage, rules, &lim, &now, err,
	    sizeof(err))) != SNAP_OK) {
		fprintf(stderr, "aisb: session %s: %s\n", id, err);
		goto out;
	}
	if (strcmp(snap_changes_digest(ch), st.digest) != 0 ||
	    strcmp(snap_changes_digest(now), st.digest) != 0) {
		fprintf(stderr, "aisb: session %s: the stage %s no longer holds "
		    "the change set shown at the end of the session (sha256 "
		    "%.12s); nothing is written; aisb discard %s drops it\n",
		    id, st.stage, st.digest, id);
		goto out;
	}
	if (file_path_join(path, sizeof(path), sdir, "tx") == -1 ||
	    (mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    tx_path(sdir, st.tx + 1, tx, sizeof(tx)) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
		code = EXIT_ENFORCE;
		goto out;
	}
	st.tx++;
	snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_APPLYING);
	if (sstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	rc = snap_tx_apply(tx, st.workspace, st.stage, m, ch, err, sizeof(err));
	if (rc == SNAP_OK) {
		own_applied(&st, ch);
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_APPLIED);
		if (snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		if (!quiet)
			fprintf(stderr, "aisb: applied %llu change(s) to %s "
			    "(sha256 %.12s; journal and backups: %s)\n",
			    st.nchanges, st.workspace, st.digest, tx);
		code = 0;
	} else if (rc == SNAP_ECONFLICT) {
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_CONFLICT);
		fprintf(stderr, "aisb: conflict: %s; nothing was written; the "
		    "draft is kept (aisb changes %s --diff, aisb discard %s)\n",
		    err, id, id);
		code = EXIT_CONFLICT;
	} else {
		if (snap_tx_state(tx, &txs, NULL, e2, sizeof(e2)) != SNAP_OK)
			txs = SNAP_TX_APPLYING;
		if (txs == SNAP_TX_APPLIED) {
			snprintf(st.state, sizeof(st.state), "%s",
			    LAUNCH_SNAP_APPLIED);
			code = 0;
		} else if (txs == SNAP_TX_ROLLED_BACK || txs == SNAP_TX_NONE) {
			snprintf(st.state, sizeof(st.state), "%s",
			    LAUNCH_SNAP_KEPT);
			fprintf(stderr, "aisb: apply: %s; rolled back, nothing "
			    "applied; the draft is kept\n", err);
			code = EXIT_IOERR;
		} else {
			snprintf(st.state, sizeof(st.state), "%s",
			    LAUNCH_SNAP_RECOVERY);
			fprintf(stderr, "aisb: apply: %s; transaction %s is "
			    "%s: aisb recover %s brings %s to all applied or "
			    "nothing applied\n", err, tx, snap_tx_state_name(txs),
			    id, st.workspace);
			code = EXIT_IOERR;
		}
	}
	if (sstate_save(sdir, &st, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: %s\n", err);
out:
	sstate_free(&st);
	snap_changes_free(now);
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_rules_free(rules);
	close(lock);
	return code;
}

static int
cmd_changes(const char *sdir, const char *id, int diff)
{
	struct snap_changes	*ch = NULL;
	struct sstate		 st;
	struct stat		 sb;
	char			 err[2048], path[PATH_MAX];
	int			 code = EXIT_CONFIG;

	if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a "
		    "snapshot session (aisb --snapshot makes one)" : err);
		return EXIT_CONFIG;
	}
	printf("session %s\nworkspace %s\ndraft %s\n", id, st.workspace,
	    st.state);
	if (file_path_join(path, sizeof(path), sdir, "changes") == -1 ||
	    snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK) {
		if (errno == ENOENT || strcmp(st.state, LAUNCH_SNAP_FAILED) == 0 ||
		    strcmp(st.state, LAUNCH_SNAP_STAGED) == 0) {
			printf("(no change set: the command %s)\n",
			    strcmp(st.state, LAUNCH_SNAP_STAGED) == 0 ?
			    "is running, or its launcher was killed" :
			    "did not succeed");
			code = 0;
		} else
			fprintf(stderr, "aisb: %s\n", err);
		goto out;
	}
	if (snap_changes_print_summary(ch, stdout, 0) != SNAP_OK)
		goto out;
	code = 0;
	if (!diff)
		goto out;
	if (lstat(st.stage, &sb) == -1) {
		printf("(no diff: the stage is gone, the draft is %s)\n",
		    st.state);
		goto out;
	}
	fflush(stdout);
	if (snap_changes_print_diff(ch, st.workspace, st.stage, 0, stdout, err,
	    sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: diff: %s\n", err);
		code = EXIT_ENFORCE;
	}
out:
	sstate_free(&st);
	snap_changes_free(ch);
	return code;
}

/*
 * 1 while the launcher of the session in sdir runs (its "launcher" file:
 * pid and start time), or when that cannot be told: a stage in use is
 * not removed under its command.
 */
static int
launcher_running(const char *sdir)
{
	char			*text, err[PATH_MAX + 64];
	long			 pid;
	unsigned long long	 start;
	size_t			 len;
	int			 alive = 1;

	if ((text = file_read_in(sdir, "launcher", 64, &len, err,
	    sizeof(err))) == NULL)
		return 1;
	if (sscanf(text, "%ld %llu", &pid, &start) == 2 && pid > 1)
		alive = launch_proc_alive((pid_t)pid, start);
	free(text);
	return alive;
}

static int
cmd_discard(const char *sdir, const char *id)
{
	struct sstate	 st;
	char		 err[2048];
	int		 lock, code = EXIT_CONFIG;

	if ((lock = lock_draft(sdir)) < 0)
		return lock == -2 ? EXIT_IOERR : EXIT_ENFORCE;
	if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a "
		    "snapshot session (aisb --snapshot makes one)" : err);
		close(lock);
		return EXIT_CONFIG;
	}
	if (strcmp(st.state, LAUNCH_SNAP_APPLYING) == 0 ||
	    strcmp(st.state, LAUNCH_SNAP_RECOVERY) == 0) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s first (its backups are what "
		    "restores the workspace)\n", id, st.tx, id);
		code = EXIT_IOERR;
	} else if (strcmp(st.state, LAUNCH_SNAP_APPLIED) == 0 ||
	    (strcmp(st.state, LAUNCH_SNAP_STAGED) == 0 &&
	    launcher_running(sdir))) {
		fprintf(stderr, "aisb: session %s: %s; nothing to discard\n", id,
		    strcmp(st.state, LAUNCH_SNAP_APPLIED) == 0 ? "already "
		    "applied" : "its command is still running");
	} else if (snap_tree_remove(st.stage, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
	} else {
		if (strcmp(st.state, LAUNCH_SNAP_KEPT) == 0 ||
		    strcmp(st.state, LAUNCH_SNAP_CONFLICT) == 0)
			snprintf(st.state, sizeof(st.state), "%s",
			    LAUNCH_SNAP_DISCARDED);
		code = sstate_save(sdir, &st, err, sizeof(err)) == -1 ?
		    EXIT_ENFORCE : 0;
		if (code != 0)
			fprintf(stderr, "aisb: %s\n", err);
		else
			printf("session %s: draft %s, stage removed; %s is "
			    "unchanged\n", id, st.state, st.workspace);
	}
	sstate_free(&st);
	close(lock);
	return code;
}

static int
cmd_recover(const char *sdir, const char *id)
{
	struct sstate		 st;
	struct stat		 sb;
	enum snap_tx_state	 txs = SNAP_TX_NONE;
	char			 err[2048], tx[PATH_MAX], e2[256];
	int			 lock, rc, code = 0;

	if ((lock = lock_draft(sdir)) < 0)
		return lock == -2 ? EXIT_IOERR : EXIT_ENFORCE;
	if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a "
		    "snapshot session (aisb --snapshot makes one)" : err);
		close(lock);
		return EXIT_CONFIG;
	}
	if (st.tx == 0) {
		printf("session %s: no transaction; nothing to recover (draft "
		    "%s)\n", id, st.state);
		goto out;
	}
	if (tx_path(sdir, st.tx, tx, sizeof(tx)) == -1) {
		code = EXIT_ENFORCE;
		goto out;
	}
	rc = snap_tx_recover(tx, st.workspace, &txs, err, sizeof(err));
	if (rc == SNAP_ECONFLICT) {
		fprintf(stderr, "aisb: recover: %s; nothing was written; the "
		    "transaction stays %s (%s)\n", err,
		    snap_tx_state_name(txs), tx);
		code = EXIT_CONFLICT;
		goto out;
	}
	if (rc != SNAP_OK) {
		fprintf(stderr, "aisb: recover: %s (%s)\n", err, tx);
		code = rc == SNAP_EINVAL ? EXIT_CONFIG : EXIT_IOERR;
		goto out;
	}
	if (txs == SNAP_TX_APPLIED) {
		if (strcmp(st.state, LAUNCH_SNAP_APPLIED) != 0 &&
		    snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		snprintf(st.state, sizeof(st.state), "%s", LAUNCH_SNAP_APPLIED);
	} else if (strcmp(st.state, LAUNCH_SNAP_APPLYING) == 0 ||
	    strcmp(st.state, LAUNCH_SNAP_RECOVERY) == 0)
		/* nothing applied: the draft may be applied again */
		snprintf(st.state, sizeof(st.state), "%s",
		    lstat(st.stage, &sb) == 0 ? LAUNCH_SNAP_KEPT :
		    LAUNCH_SNAP_FAILED);
	if (sstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	printf("session %s: transaction %u %s; draft %s\n", id, st.tx,
	    txs == SNAP_TX_APPLIED ? "applied: all of it is in the workspace" :
	    "rolled back: none of it is in the workspace", st.state);
out:
	sstate_free(&st);
	close(lock);
	return code;
}

static int
print_tx(const char *name, enum snap_tx_state s, const char *digest,
    void *arg)
{
	(void)arg;
	printf("  tx %-4s %-12s %.12s\n", name, snap_tx_state_name(s),
	    digest[0] != '\0' ? digest : "-");
	return 0;
}

static int
cmd_transactions(void)
{
	char		 dir[PATH_MAX], base[PATH_MAX], sdir[PATH_MAX];
	char		 txdir[PATH_MAX], err[2048];
	struct dirent	*de;
	struct sstate	 st;
	DIR		*d;
	size_t		 n = 0;

	if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    file_path_join(dir, sizeof(dir), base, "sessions") == -1) {
		fprintf(stderr, "aisb: no state folder: set XDG_STATE_HOME or "
		    "HOME to an absolute path\n");
		return EXIT_CONFIG;
	}
	printf("%-24s  %-9s  %-7s  %-12s  %s\n", "SESSION", "DRAFT", "CHANGES",
	    "SHA256", "WORKSPACE");
	if ((d = opendir(dir)) == NULL)
		return 0;
	/* bounded: the sessions folder's entries, as aisb sessions ls */
	while ((de = readdir(d)) != NULL && n < 4096) {
		if (strlen(de->d_name) != LAUNCH_ID_HEX ||
		    strspn(de->d_name, "0123456789abcdef") != LAUNCH_ID_HEX ||
		    file_path_join(sdir, sizeof(sdir), dir, de->d_name) == -1)
			continue;
		if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
			if (errno != ENOENT)
				fprintf(stderr, "aisb: %s\n", err);
			continue;
		}
		n++;
		printf("%-24s  %-9s  %-7llu  %-12.12s  %s\n", de->d_name,
		    st.state, st.nchanges, st.digest[0] != '\0' ? st.digest :
		    "-", st.workspace);
		if (st.tx > 0 && file_path_join(txdir, sizeof(txdir), sdir,
		    "tx") == 0 && snap_tx_list(txdir, print_tx, NULL, err,
		    sizeof(err)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", err);
		sstate_free(&st);
	}
	closedir(d);
	return 0;
}

void
launch_snap_show(const char *sdir, FILE *out)
{
	struct sstate	 st;
	char		 err[1024];

	if (sstate_load(sdir, &st, err, sizeof(err)) == -1) {
		if (errno != ENOENT)
			fprintf(out, "# snapshot: %s\n", err);
		return;
	}
	fprintf(out, "# snapshot: draft %s now, %llu change(s), %u "
	    "transaction(s); aisb changes %s\n", st.state, st.nchanges, st.tx,
	    strrchr(sdir, '/') != NULL ? strrchr(sdir, '/') + 1 : sdir);
	sstate_free(&st);
}

int
launch_cmd_snapshot(int argc, char **argv)
{
	struct cli_args	 a;
	char		 sdir[PATH_MAX];
	const char	*id;
	int		 rc;

	if ((rc = launch_cli_parse(argv[0], argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[0], "transactions") == 0)
		return cmd_transactions();
	if ((rc = launch_session_find(a.pos[0], sdir, sizeof(sdir))) != 0)
		return rc;
	if ((id = strrchr(sdir, '/')) == NULL)
		return EXIT_CONFIG;
	id++;
	if (strcmp(argv[0], "changes") == 0)
		return cmd_changes(sdir, id, launch_cli_get(&a, "--diff") !=
		    NULL);
	if (strcmp(argv[0], "apply") == 0)
		return apply_draft(sdir, id, 0);
	if (strcmp(argv[0], "discard") == 0)
		return cmd_discard(sdir, id);
	return cmd_recover(sdir, id);
}
