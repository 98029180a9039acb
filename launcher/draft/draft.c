/*
 * A snapshot session's draft, shared by the Linux and the Windows
 * launcher (launcher/draft.h).  Portable C: files through libaisbsnap
 * (snap/fs.h), the rest through draft_os_*.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "draft/draft.h"
#include "exitcode.h"
#include "snap/fs.h"

/* ---- the state file ---------------------------------------------------- */

/*
 * SESSION/snapshot, "key value" lines (DRAFT_STATE_MAX bytes):
 *   workspace PATH   stage PATH   owner UID:GID   state WORD   exit N
 *   changes N   digest HEX   tx N   updated EPOCH   exclude PATTERN...
 * Paths hold no line break (refused when staging).
 */
struct dstate {
	char		 workspace[DRAFT_PATH_MAX];
	char		 stage[DRAFT_PATH_MAX];
	char		 state[16];
	char		 digest[SNAP_SHA256_HEX + 1];
	unsigned	 owner_uid, owner_gid;
	int		 exitcode;
	unsigned long long nchanges;
	unsigned	 tx;		/* the last transaction's number; 0 none */
	char		*exclude[DRAFT_MAX_EXCLUDE];
	size_t		 nexclude;
	int		 borrowed;	/* exclude[] is the caller's */
};

/* sdir/name into out[DRAFT_PATH_MAX]: 0, or -1 (said) when too long. */
static int
dpath(char *out, const char *sdir, const char *name)
{
	int	 n;

	n = snprintf(out, DRAFT_PATH_MAX, "%s/%s", sdir, name);
	if (n < 0 || n >= DRAFT_PATH_MAX) {
		fprintf(stderr, "aisb: %s/%s: path too long\n", sdir, name);
		return -1;
	}
	return 0;
}

static void
dstate_free(struct dstate *st)
{
	size_t	 i;

	if (!st->borrowed)
		for (i = 0; i < st->nexclude; i++)
			free(st->exclude[i]);
	st->nexclude = 0;
}

static void
dstate_set(struct dstate *st, const char *state)
{
	snprintf(st->state, sizeof(st->state), "%s", state);
}

static int
dstate_is(const struct dstate *st, const char *state)
{
	return strcmp(st->state, state) == 0;
}

static int
dstate_save(const char *sdir, const struct dstate *st, char *err,
    size_t errlen)
{
	struct buf	 b;
	char		 path[DRAFT_PATH_MAX];
	size_t		 i;
	int		 rc = -1;

	if (snprintf(path, sizeof(path), "%s/snapshot", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "%s/snapshot: path too long", sdir);
		return -1;
	}
	buf_init(&b, DRAFT_STATE_MAX, 0);
	buf_printf(&b, "# aisb snapshot state 1 (docs/snapshot.md)\n"
	    "workspace %s\nstage %s\nowner %u:%u\nstate %s\nexit %d\n"
	    "changes %llu\ndigest %s\ntx %u\nupdated %lld\n", st->workspace,
	    st->stage, st->owner_uid, st->owner_gid, st->state, st->exitcode,
	    st->nchanges, st->digest[0] != '\0' ? st->digest : "-", st->tx,
	    (long long)time(NULL));
	for (i = 0; i < st->nexclude; i++)
		buf_printf(&b, "exclude %s\n", st->exclude[i]);
	if (b.failed)
		snprintf(err, errlen, "%s: more than %d bytes, or out of "
		    "memory", path, DRAFT_STATE_MAX);
	else if (snap_file_write(path, b.p, b.len) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else
		rc = 0;
	buf_free(&b);
	return rc;
}

/* The state of the session in sdir.  0, or -1 with err (errno ENOENT: a
 * session that is not a snapshot session). */
static int
dstate_load(const char *sdir, struct dstate *st, char *err, size_t errlen)
{
	char		*text, *line, *next, *v, path[DRAFT_PATH_MAX];
	size_t		 len;
	unsigned	 seen = 0;

	memset(st, 0, sizeof(*st));
	if (snprintf(path, sizeof(path), "%s/snapshot", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "%s/snapshot: path too long", sdir);
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((text = snap_file_read(path, DRAFT_STATE_MAX, &len)) == NULL) {
		int	 e = errno;

		snprintf(err, errlen, "%s: %s", path, e == EFBIG ? "longer "
		    "than the state file may be" : strerror(e));
		errno = e;
		return -1;
	}
	for (line = text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (line[0] == '#' || (v = strchr(line, ' ')) == NULL)
			continue;
		*v++ = '\0';
		/* each of these once: a second would retarget the draft */
		if (strcmp(line, "workspace") == 0) {
			if ((seen & 1) || !draft_os_path_absolute(v))
				seen |= 8;
			snprintf(st->workspace, sizeof(st->workspace), "%s", v);
			seen |= 1;
		} else if (strcmp(line, "stage") == 0) {
			if ((seen & 2) || !draft_os_path_absolute(v))
				seen |= 8;
			snprintf(st->stage, sizeof(st->stage), "%s", v);
			seen |= 2;
		} else if (strcmp(line, "state") == 0) {
			if (seen & 4)
				seen |= 8;
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
		    st->nexclude < DRAFT_MAX_EXCLUDE &&
		    (st->exclude[st->nexclude] = strdup(v)) != NULL)
			st->nexclude++;
	}
	free(text);
	if (seen != 7 || st->tx > DRAFT_MAX_TX) {
		snprintf(err, errlen, "%s: not a snapshot state (a workspace, "
		    "stage or state line missing, repeated or not absolute)",
		    path);
		dstate_free(st);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* dstate_load, saying why on stderr: 0 or -1. */
static int
dstate_load_said(const char *sdir, struct dstate *st)
{
	char	 err[DRAFT_PATH_MAX + 128];

	if (dstate_load(sdir, st, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a snapshot "
	    "session (aisb --snapshot makes one)" : err);
	return -1;
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

static int
snap_code(int rc)
{
	return rc == SNAP_EBOUND || rc == SNAP_EINVAL ? EXIT_CONFIG :
	    rc == SNAP_ECONFLICT ? EXIT_CONFLICT : EXIT_ENFORCE;
}

/* ---- the session -------------------------------------------------------- */

int
draft_stage(const char *sdir, const char *workspace, char *const *exclude,
    size_t nexclude, unsigned owner_uid, unsigned owner_gid,
    int (*prepare)(const char *, void *, char *, size_t), void *arg,
    int quiet, struct draft_info *info, char *err, size_t errlen)
{
	struct snap_limits	 lim;
	struct snap_rules	*rules = NULL;
	struct snap_manifest	*m = NULL;
	struct snap_stage_stats	 stats;
	struct dstate		 st;
	char			 path[DRAFT_PATH_MAX], e2[256];
	size_t			 i;
	int			 rc, code = EXIT_ENFORCE;

	memset(info, 0, sizeof(*info));
	memset(&st, 0, sizeof(st));
	if (!draft_os_path_absolute(workspace) || strchr(workspace, '\n') !=
	    NULL || strlen(workspace) >= sizeof(info->workspace)) {
		snprintf(err, errlen, "workspace %s: not an absolute path "
		    "without a line break, under %d bytes", workspace,
		    DRAFT_PATH_MAX);
		return EXIT_CONFIG;
	}
	snprintf(info->workspace, sizeof(info->workspace), "%s", workspace);
	if (snprintf(info->stage, sizeof(info->stage), "%s/stage", sdir) >=
	    (int)sizeof(info->stage) || snprintf(path, sizeof(path),
	    "%s/manifest", sdir) >= (int)sizeof(path)) {
		snprintf(err, errlen, "session folder %s: path too long", sdir);
		return EXIT_ENFORCE;
	}
	if (nexclude > DRAFT_MAX_EXCLUDE) {
		snprintf(err, errlen, "more than %d snapshot_exclude patterns",
		    DRAFT_MAX_EXCLUDE);
		return EXIT_CONFIG;
	}
	/* borrowed from the caller, saved with the state, never freed here */
	st.borrowed = 1;
	for (i = 0; i < nexclude; i++)
		st.exclude[st.nexclude++] = exclude[i];
	if ((rules = make_rules(st.exclude, st.nexclude, err, errlen)) == NULL) {
		code = EXIT_CONFIG;
		goto fail;
	}
	snap_limits_default(&lim);
	info->stage_ms = draft_os_now_ms();
	if ((rc = snap_stage_create(workspace, info->stage, rules, &lim, &m,
	    err, errlen)) != SNAP_OK) {
		code = snap_code(rc);
		goto fail;
	}
	if (prepare != NULL && prepare(info->stage, arg, err, errlen) == -1)
		goto fail;
	if (snap_manifest_save(m, path, err, errlen) != SNAP_OK)
		goto fail;
	info->stage_ms = draft_os_now_ms() - info->stage_ms;
	snap_manifest_stats(m, &stats);
	info->entries = stats.entries;
	info->bytes = stats.bytes;
	info->excluded = stats.excluded;
	info->cloned = stats.cloned;
	snprintf(st.workspace, sizeof(st.workspace), "%s", workspace);
	snprintf(st.stage, sizeof(st.stage), "%s", info->stage);
	dstate_set(&st, DRAFT_STAGED);
	snprintf(info->outcome, sizeof(info->outcome), "%s", DRAFT_STAGED);
	st.owner_uid = owner_uid;
	st.owner_gid = owner_gid;
	if (dstate_save(sdir, &st, err, errlen) == -1)
		goto fail;
	info->staged = 1;
	if (!quiet)
		fprintf(stderr, "aisb: snapshot: %llu entries, %llu bytes staged "
		    "in %lld ms (%llu left out); the command sees the copy, not "
		    "%s\n", info->entries, info->bytes, info->stage_ms,
		    info->excluded, workspace);
	snap_manifest_free(m);
	snap_rules_free(rules);
	return 0;
fail:
	(void)snap_tree_remove(info->stage, e2, sizeof(e2));
	/* the record says the stage was refused; nothing ran on it */
	snprintf(info->outcome, sizeof(info->outcome), "%s", DRAFT_FAILED);
	info->stage_ms = 0;
	snap_manifest_free(m);
	snap_rules_free(rules);
	return code;
}

/*
 * The question at the end of a session: 1 apply, 0 keep (no terminal to
 * ask on keeps, and with always says so).
 */
static int
ask_apply(const struct dstate *st, const char *sdir, int always)
{
	struct snap_changes	*ch = NULL;
	char			 line[DRAFT_ANSWER], path[DRAFT_PATH_MAX];
	char			 err[2048];
	FILE			*in;
	int			 c, yes = 0;

	if ((in = draft_os_terminal(always)) == NULL) {
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
		if (strchr(line, '\n') == NULL)
			while ((c = fgetc(in)) != EOF && c != '\n')
				;
		if (line[0] == 'y' || line[0] == 'Y') {
			yes = 1;
			break;
		}
		if (line[0] == 'n' || line[0] == 'N' || line[0] == '\n' ||
		    line[0] == '\r')
			break;
		if (line[0] != 'd' && line[0] != 'D')
			continue;
		if (ch == NULL && (dpath(path, sdir, "changes") == -1 ||
		    snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK)) {
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
draft_end(const char *sdir, const char *id, int code, enum draft_apply apply,
    int quiet, struct draft_info *info)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL;
	struct snap_rules	*rules = NULL;
	struct snap_limits	 lim;
	struct dstate		 st;
	char			 err[2048], path[DRAFT_PATH_MAX], e2[256];
	long long		 t0;
	int			 rc, out = code;

	snprintf(err, sizeof(err), "%s/changes: path too long", sdir);
	if (!info->staged)
		return code;
	if (dstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: snapshot: %s\n", err);
		return code != 0 ? code : EXIT_ENFORCE;
	}
	st.exitcode = code;
	if (code != 0) {
		/* failed, timed out, stopped: proposes nothing */
		dstate_set(&st, DRAFT_FAILED);
		if (snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: snapshot: %s\n", e2);
		if (!quiet)
			fprintf(stderr, "aisb: snapshot: the command exited %d: "
			    "nothing is proposed, the stage is removed, %s is "
			    "as it was\n", code, st.workspace);
		goto save;
	}
	snap_limits_default(&lim);
	t0 = draft_os_now_ms();
	if (snprintf(path, sizeof(path), "%s/manifest", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, sizeof(err), "%s: path too long", sdir);
		rc = SNAP_EINVAL;
	} else if ((rc = snap_manifest_load(path, &m, err, sizeof(err))) ==
	    SNAP_OK && (rules = make_rules(st.exclude, st.nexclude, err,
	    sizeof(err))) == NULL)
		rc = SNAP_EINVAL;
	else if (rc == SNAP_OK)
		rc = snap_changes_compute(m, st.stage, rules, &lim, &ch, err,
		    sizeof(err));
	if (rc != SNAP_OK) {
		fprintf(stderr, "aisb: snapshot: %s; nothing is proposed\n",
		    err);
		dstate_set(&st, DRAFT_FAILED);
		(void)snap_tree_remove(st.stage, e2, sizeof(e2));
		out = EXIT_CONFIG;
		goto save;
	}
	st.nchanges = snap_changes_effective(ch);
	snprintf(st.digest, sizeof(st.digest), "%s", snap_changes_digest(ch));
	if (dpath(path, sdir, "changes") == -1 ||
	    snap_changes_save(ch, path, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: snapshot: %s; the stage stays at %s\n",
		    err, st.stage);
		dstate_set(&st, DRAFT_FAILED);
		out = EXIT_ENFORCE;
		goto save;
	}
	info->changes_ms = draft_os_now_ms() - t0;
	if (st.nchanges == 0) {
		dstate_set(&st, DRAFT_UNCHANGED);
		(void)snap_tree_remove(st.stage, e2, sizeof(e2));
		if (!quiet) {
			if (snap_changes_count(ch) > 0)
				(void)snap_changes_print_summary(ch, stderr,
				    DRAFT_SUMMARY);
			fprintf(stderr, "aisb: snapshot: nothing to write back\n");
		}
		goto save;
	}
	dstate_set(&st, DRAFT_KEPT);
	if (!quiet) {
		fprintf(stderr, "aisb: snapshot: the command changed:\n");
		(void)snap_changes_print_summary(ch, stderr, DRAFT_SUMMARY);
	}
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: snapshot: %s\n", err);
		out = EXIT_ENFORCE;
		goto done;
	}
	if (apply != DRAFT_APPLY_NEVER &&
	    ask_apply(&st, sdir, apply == DRAFT_APPLY_ASK)) {
		rc = draft_apply(sdir, id, quiet);
		if (rc != 0)
			out = rc;
	} else
		fprintf(stderr, "aisb: snapshot: kept as a draft; aisb changes "
		    "%s --diff shows it, aisb apply %s writes it into %s, aisb "
		    "discard %s drops it\n", id, id, st.workspace, id);
	dstate_free(&st);
	if (dstate_load(sdir, &st, err, sizeof(err)) == 0)
		snprintf(info->outcome, sizeof(info->outcome), "%s", st.state);
	goto done;
save:
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: snapshot: %s\n", err);
	snprintf(info->outcome, sizeof(info->outcome), "%s", st.state);
done:
	info->nchanges = st.nchanges;
	snprintf(info->digest, sizeof(info->digest), "%s", st.digest);
	dstate_free(&st);
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_rules_free(rules);
	return out;
}

/* ---- the commands ------------------------------------------------------- */

static int
lock_draft(const char *sdir, intptr_t *lock)
{
	int	 rc;

	if ((rc = draft_os_lock(sdir, lock)) == 0)
		return 0;
	return rc == -2 ? EXIT_IOERR : EXIT_ENFORCE;
}

static int
tx_path(const char *sdir, unsigned n, char *out)
{
	char	 name[32];

	snprintf(name, sizeof(name), "tx/%u", n);
	return dpath(out, sdir, name);
}

int
draft_apply(const char *sdir, const char *id, int quiet)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL, *now = NULL;
	struct snap_rules	*rules = NULL;
	struct snap_limits	 lim;
	struct dstate		 st;
	enum snap_tx_state	 txs = SNAP_TX_NONE;
	char			 err[2048], path[DRAFT_PATH_MAX];
	char			 tx[DRAFT_PATH_MAX], e2[256];
	intptr_t		 lock;
	int			 rc, code = EXIT_CONFIG;

	memset(&st, 0, sizeof(st));
	if ((rc = lock_draft(sdir, &lock)) != 0)
		return rc;
	if (dstate_load_said(sdir, &st) == -1)
		goto out;
	if (dstate_is(&st, DRAFT_APPLIED)) {
		fprintf(stderr, "aisb: session %s: already applied "
		    "(transaction %u)\n", id, st.tx);
		code = 0;
		goto out;
	}
	if (dstate_is(&st, DRAFT_RECOVERY) || dstate_is(&st, DRAFT_APPLYING)) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s brings it to an end first\n",
		    id, st.tx, id);
		code = EXIT_IOERR;
		goto out;
	}
	if (!dstate_is(&st, DRAFT_KEPT) && !dstate_is(&st, DRAFT_CONFLICT)) {
		fprintf(stderr, "aisb: session %s: nothing to apply (its draft "
		    "is %s)\n", id, st.state);
		goto out;
	}
	if (st.tx >= DRAFT_MAX_TX) {
		fprintf(stderr, "aisb: session %s: %u attempts already\n", id,
		    st.tx);
		goto out;
	}
	/*
	 * What is applied is what was shown: the change set on file, and
	 * the stage still holding exactly it.
	 */
	snap_limits_default(&lim);
	if (dpath(path, sdir, "manifest") == -1)
		goto out;
	if (snap_manifest_load(path, &m, err, sizeof(err)) != SNAP_OK ||
	    dpath(path, sdir, "changes") == -1 ||
	    snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK ||
	    (rules = make_rules(st.exclude, st.nexclude, err,
	    sizeof(err))) == NULL ||
	    snap_changes_compute(m, st.stage, rules, &lim, &now, err,
	    sizeof(err)) != SNAP_OK) {
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
	if (dpath(path, sdir, "tx") == -1 ||
	    (snap_fs_mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    tx_path(sdir, st.tx + 1, tx) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
		code = EXIT_ENFORCE;
		goto out;
	}
	st.tx++;
	dstate_set(&st, DRAFT_APPLYING);
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	rc = snap_tx_apply(tx, st.workspace, st.stage, m, ch, err, sizeof(err));
	if (rc == SNAP_OK) {
		draft_os_own_applied(st.workspace, st.owner_uid, st.owner_gid,
		    ch);
		dstate_set(&st, DRAFT_APPLIED);
		if (snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		if (!quiet)
			fprintf(stderr, "aisb: applied %llu change(s) to %s "
			    "(sha256 %.12s; journal and backups: %s)\n",
			    st.nchanges, st.workspace, st.digest, tx);
		code = 0;
	} else if (rc == SNAP_ECONFLICT) {
		dstate_set(&st, DRAFT_CONFLICT);
		fprintf(stderr, "aisb: conflict: %s; nothing was written; the "
		    "draft is kept (aisb changes %s --diff, aisb discard %s)\n",
		    err, id, id);
		code = EXIT_CONFLICT;
	} else {
		if (snap_tx_state(tx, &txs, NULL, e2, sizeof(e2)) != SNAP_OK)
			txs = SNAP_TX_APPLYING;
		if (txs == SNAP_TX_APPLIED) {
			dstate_set(&st, DRAFT_APPLIED);
			code = 0;
		} else if (txs == SNAP_TX_ROLLED_BACK || txs == SNAP_TX_NONE) {
			dstate_set(&st, DRAFT_KEPT);
			fprintf(stderr, "aisb: apply: %s; rolled back, nothing "
			    "applied; the draft is kept\n", err);
			code = EXIT_IOERR;
		} else {
			dstate_set(&st, DRAFT_RECOVERY);
			fprintf(stderr, "aisb: apply: %s; transaction %s is "
			    "%s: aisb recover %s brings %s to all applied or "
			    "nothing applied\n", err, tx, snap_tx_state_name(txs),
			    id, st.workspace);
			code = EXIT_IOERR;
		}
	}
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: %s\n", err);
out:
	dstate_free(&st);
	snap_changes_free(now);
	snap_changes_free(ch);
	snap_manifest_free(m);
	snap_rules_free(rules);
	draft_os_unlock(lock);
	return code;
}

int
draft_changes(const char *sdir, const char *id, int diff)
{
	struct snap_changes	*ch = NULL;
	struct snap_stat	 sb;
	struct dstate		 st;
	char			 err[2048], path[DRAFT_PATH_MAX];
	int			 code = EXIT_CONFIG;

	if (dstate_load_said(sdir, &st) == -1)
		return EXIT_CONFIG;
	printf("session %s\nworkspace %s\ndraft %s\n", id, st.workspace,
	    st.state);
	if (dpath(path, sdir, "changes") == -1)
		goto out;
	if (snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK) {
		if (errno == ENOENT || dstate_is(&st, DRAFT_FAILED) ||
		    dstate_is(&st, DRAFT_STAGED)) {
			printf("(no change set: the command %s)\n",
			    dstate_is(&st, DRAFT_STAGED) ? "is running, or its "
			    "launcher was killed" : "did not succeed");
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
	if (snap_fs_lstat(st.stage, &sb) == -1) {
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
	dstate_free(&st);
	snap_changes_free(ch);
	return code;
}

int
draft_discard(const char *sdir, const char *id)
{
	struct dstate	 st;
	char		 err[2048];
	intptr_t	 lock;
	int		 rc, code = EXIT_CONFIG;

	if ((rc = lock_draft(sdir, &lock)) != 0)
		return rc;
	if (dstate_load_said(sdir, &st) == -1) {
		draft_os_unlock(lock);
		return EXIT_CONFIG;
	}
	if (dstate_is(&st, DRAFT_APPLYING) || dstate_is(&st, DRAFT_RECOVERY)) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s first (its backups are what "
		    "restores the workspace)\n", id, st.tx, id);
		code = EXIT_IOERR;
	} else if (dstate_is(&st, DRAFT_APPLIED) || (dstate_is(&st,
	    DRAFT_STAGED) && draft_os_launcher_running(sdir))) {
		fprintf(stderr, "aisb: session %s: %s; nothing to discard\n", id,
		    dstate_is(&st, DRAFT_APPLIED) ? "already applied" :
		    "its command is still running");
	} else if (snap_tree_remove(st.stage, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
	} else {
		if (dstate_is(&st, DRAFT_KEPT) || dstate_is(&st, DRAFT_CONFLICT))
			dstate_set(&st, DRAFT_DISCARDED);
		code = dstate_save(sdir, &st, err, sizeof(err)) == -1 ?
		    EXIT_ENFORCE : 0;
		if (code != 0)
			fprintf(stderr, "aisb: %s\n", err);
		else
			printf("session %s: draft %s, stage removed; %s is "
			    "unchanged\n", id, st.state, st.workspace);
	}
	dstate_free(&st);
	draft_os_unlock(lock);
	return code;
}

int
draft_recover(const char *sdir, const char *id)
{
	struct dstate		 st;
	struct snap_stat	 sb;
	enum snap_tx_state	 txs = SNAP_TX_NONE;
	char			 err[2048], tx[DRAFT_PATH_MAX], e2[256];
	intptr_t		 lock;
	int			 rc, code = 0;

	if ((rc = lock_draft(sdir, &lock)) != 0)
		return rc;
	if (dstate_load_said(sdir, &st) == -1) {
		draft_os_unlock(lock);
		return EXIT_CONFIG;
	}
	if (st.tx == 0) {
		printf("session %s: no transaction; nothing to recover (draft "
		    "%s)\n", id, st.state);
		goto out;
	}
	if (tx_path(sdir, st.tx, tx) == -1) {
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
		if (!dstate_is(&st, DRAFT_APPLIED) &&
		    snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		dstate_set(&st, DRAFT_APPLIED);
	} else if (dstate_is(&st, DRAFT_APPLYING) ||
	    dstate_is(&st, DRAFT_RECOVERY))
		/* nothing applied: the draft may be applied again */
		dstate_set(&st, snap_fs_lstat(st.stage, &sb) == 0 ?
		    DRAFT_KEPT : DRAFT_FAILED);
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	printf("session %s: transaction %u %s; draft %s\n", id, st.tx,
	    txs == SNAP_TX_APPLIED ? "applied: all of it is in the workspace" :
	    "rolled back: none of it is in the workspace", st.state);
out:
	dstate_free(&st);
	draft_os_unlock(lock);
	return code;
}

int
draft_reap(const char *sdir, const char *id)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128];
	intptr_t	 lock;
	int		 rc = 0;

	/* most sessions are not snapshot sessions: no lock file for them */
	if (dstate_load(sdir, &st, err, sizeof(err)) == -1)
		return errno == ENOENT ? 0 : (fprintf(stderr, "aisb: %s\n",
		    err), -1);
	rc = dstate_is(&st, DRAFT_STAGED);
	dstate_free(&st);
	if (!rc || draft_os_launcher_running(sdir))
		return 0;
	if (draft_os_lock(sdir, &lock) != 0)
		return -1;
	rc = 0;
	if (dstate_load(sdir, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		rc = -1;
	} else if (dstate_is(&st, DRAFT_STAGED)) {
		if (snap_tree_remove(st.stage, err, sizeof(err)) != SNAP_OK) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = -1;
		} else {
			dstate_set(&st, DRAFT_FAILED);
			if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
				fprintf(stderr, "aisb: %s\n", err);
				rc = -1;
			} else {
				printf("removed the stage of session %s: its "
				    "launcher is gone, nothing is proposed\n",
				    id);
				rc = 1;
			}
		}
	}
	dstate_free(&st);
	draft_os_unlock(lock);
	return rc;
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

int
draft_list(const char *dir, size_t idlen)
{
	char		 sdir[DRAFT_PATH_MAX], txdir[DRAFT_PATH_MAX];
	char		 err[2048];
	const char	*name;
	struct snap_dir	*d;
	struct dstate	 st;
	size_t		 seen = 0;

	printf("%-*s  %-9s  %-7s  %-12s  %s\n", (int)idlen, "SESSION", "DRAFT",
	    "CHANGES", "SHA256", "WORKSPACE");
	if ((d = snap_fs_opendir(dir)) == NULL)
		return 0;
	/* bounded: the sessions folder's entries, as aisb sessions ls */
	while ((name = snap_fs_readdir(d)) != NULL && seen++ < 4096) {
		if (strlen(name) != idlen ||
		    strspn(name, "0123456789abcdef") != idlen ||
		    snprintf(sdir, sizeof(sdir), "%s/%s", dir, name) >=
		    (int)sizeof(sdir))
			continue;
		if (dstate_load(sdir, &st, err, sizeof(err)) == -1) {
			if (errno != ENOENT)
				fprintf(stderr, "aisb: %s\n", err);
			continue;
		}
		printf("%-*s  %-9s  %-7llu  %-12.12s  %s\n", (int)idlen, name,
		    st.state, st.nchanges, st.digest[0] != '\0' ? st.digest :
		    "-", st.workspace);
		if (st.tx > 0 && snprintf(txdir, sizeof(txdir), "%s/tx", sdir) <
		    (int)sizeof(txdir) && snap_tx_list(txdir, print_tx, NULL,
		    err, sizeof(err)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", err);
		dstate_free(&st);
	}
	snap_fs_closedir(d);
	return 0;
}

void
draft_show(const char *sdir, FILE *out)
{
	struct dstate	 st;
	char		 err[DRAFT_PATH_MAX + 128];
	const char	*id;

	if (dstate_load(sdir, &st, err, sizeof(err)) == -1) {
		if (errno != ENOENT)
			fprintf(out, "# snapshot: %s\n", err);
		return;
	}
	id = strrchr(sdir, '/') != NULL ? strrchr(sdir, '/') + 1 : sdir;
	fprintf(out, "# snapshot: draft %s now, %llu change(s), %u "
	    "transaction(s); aisb changes %s\n", st.state, st.nchanges, st.tx,
	    id);
	dstate_free(&st);
}
