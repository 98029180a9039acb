/*
 * A snapshot session's draft, shared by the Linux and the Windows
 * launcher (draft.h): the commands on it (changes, apply, discard,
 * recover, the reap of a killed session's stage, the list) and its state
 * file; its stage and the session's end are stage.c.  Portable C:
 * files through libaisbsnap (snap/fs.h), the rest through draft_os_*.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "draft/draft.h"
#include "draft/draft-int.h"
#include "exitcode.h"
#include "snap/fs.h"

/* ---- the state file ---------------------------------------------------- */

/* sdir/name into out[DRAFT_PATH_MAX]: 0, or -1 (said) when too long. */
int
draft_path(char *out, const char *sdir, const char *name)
{
	int	 n;

	n = snprintf(out, DRAFT_PATH_MAX, "%s/%s", sdir, name);
	if (n < 0 || n >= DRAFT_PATH_MAX) {
		fprintf(stderr, "aisb: %s/%s: path too long\n", sdir, name);
		return -1;
	}
	return 0;
}


void
dstate_free(struct dstate *st)
{
	size_t	 i;

	if (!st->borrowed) {
		for (i = 0; i < st->nexclude; i++)
			free(st->exclude[i]);
		for (i = 0; i < st->ndeny; i++)
			free(st->deny[i]);
	}
	st->nexclude = st->ndeny = 0;
}


void
dstate_set(struct dstate *st, const char *state)
{
	snprintf(st->state, sizeof(st->state), "%s", state);
}


int
dstate_is(const struct dstate *st, const char *state)
{
	return strcmp(st->state, state) == 0;
}


int
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
	    "changes %llu\ndigest %s\ntx %u\napplied %u\nupdated %lld\n",
	    st->workspace, st->stage, st->owner_uid, st->owner_gid, st->state,
	    st->exitcode, st->nchanges, st->digest[0] != '\0' ? st->digest :
	    "-", st->tx, st->applied, (long long)time(NULL));
	if (st->name[0] != '\0')
		buf_printf(&b, "name %s\nrevision %lu\n", st->name,
		    st->revision);
	for (i = 0; i < st->nexclude; i++)
		buf_printf(&b, "exclude %s\n", st->exclude[i]);
	for (i = 0; i < st->ndeny; i++)
		buf_printf(&b, "deny %s\n", st->deny[i]);
	buf_printf(&b, "limits %llu %llu %llu %zu\n",
	    (unsigned long long)st->lim.entries,
	    (unsigned long long)st->lim.bytes,
	    (unsigned long long)st->lim.file_bytes, st->lim.depth);
	if (st->no_writeback)
		buf_printf(&b, "writeback off\n");
	if (st->policy[0] != '\0')
		buf_printf(&b, "policy %s %s\n", st->policy_sha, st->policy);
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


/* "ENTRIES BYTES FILE_BYTES DEPTH" into lim: 0, or -1 when it is not
 * that or a bound is past the built-in one. */
static int
limits_parse(const char *v, struct snap_limits *lim)
{
	unsigned long long	 e, b, f;
	size_t			 d;
	int			 n = -1;

	if (sscanf(v, "%llu %llu %llu %zu%n", &e, &b, &f, &d, &n) != 4 ||
	    n < 0 || v[n] != '\0')
		return -1;
	lim->entries = e;
	lim->bytes = b;
	lim->file_bytes = f;
	lim->depth = d;
	return draft_limits_ok(lim, NULL, 0);
}

int
draft_limits_ok(const struct snap_limits *lim, char *err, size_t errlen)
{
	struct snap_limits	 max;
	const char		*name = NULL;
	unsigned long long	 v = 0, m = 0;

	snap_limits_default(&max);
	if (lim->entries < 1 || lim->entries > max.entries)
		name = "snapshot_max_entries", v = lim->entries,
		    m = max.entries;
	else if (lim->bytes < 1 || lim->bytes > max.bytes)
		name = "snapshot_max_bytes", v = lim->bytes, m = max.bytes;
	else if (lim->file_bytes < 1 || lim->file_bytes > max.file_bytes)
		name = "snapshot_max_file_bytes", v = lim->file_bytes,
		    m = max.file_bytes;
	else if (lim->depth < 1 || lim->depth > max.depth)
		name = "snapshot_max_depth", v = lim->depth, m = max.depth;
	else if (lim->path_len != max.path_len)
		name = "the path length bound", v = lim->path_len,
		    m = max.path_len;
	if (name == NULL)
		return 0;
	if (err != NULL)
		snprintf(err, errlen, "%s: %llu is not between 1 and the "
		    "built-in maximum, %llu: the user config may tighten a "
		    "snapshot's bounds, never loosen them", name, v, m);
	return -1;
}

void
draft_conf_default(struct draft_conf *c)
{
	memset(c, 0, sizeof(*c));
	snap_limits_default(&c->lim);
}

void
draft_conf_of(const struct dstate *st, struct draft_conf *c)
{
	draft_conf_default(c);
	c->exclude = st->exclude;
	c->nexclude = st->nexclude;
	c->deny = st->deny;
	c->ndeny = st->ndeny;
	c->lim = st->lim;
	c->no_writeback = st->no_writeback;
}

/* The state of the session in sdir.  0, or -1 with err (errno ENOENT: a
 * session that is not a snapshot session). */
int
dstate_load(const char *sdir, struct dstate *st, char *err, size_t errlen)
{
	char		*text, *line, *next, *v, path[DRAFT_PATH_MAX];
	size_t		 len;
	unsigned	 seen = 0;

	memset(st, 0, sizeof(*st));
	snap_limits_default(&st->lim);	/* a state of before "limits" */
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
		else if (strcmp(line, "applied") == 0)
			st->applied = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(line, "name") == 0) {
			if (st->name[0] != '\0' || !draft_name_ok(v))
				seen |= 8;
			snprintf(st->name, sizeof(st->name), "%s", v);
		} else if (strcmp(line, "revision") == 0)
			st->revision = strtoul(v, NULL, 10);
		else if (strcmp(line, "exclude") == 0 &&
		    st->nexclude < DRAFT_MAX_EXCLUDE &&
		    (st->exclude[st->nexclude] = strdup(v)) != NULL)
			st->nexclude++;
		else if (strcmp(line, "deny") == 0) {
			/* fail closed: a deny kept, or the file refused */
			if (st->ndeny == DRAFT_MAX_EXCLUDE ||
			    (st->deny[st->ndeny] = strdup(v)) == NULL)
				seen |= 8;
			else
				st->ndeny++;
		} else if (strcmp(line, "limits") == 0) {
			if (limits_parse(v, &st->lim) == -1)
				seen |= 8;
		} else if (strcmp(line, "writeback") == 0)
			st->no_writeback = strcmp(v, "off") == 0;
		else if (strcmp(line, "policy") == 0) {
			/* "SHA PATH": a path that is not absolute, or a
			 * second line, is a corrupt file */
			if (st->policy[0] != '\0' || strlen(v) <
			    SNAP_SHA256_HEX + 2 || v[SNAP_SHA256_HEX] != ' ' ||
			    !draft_os_path_absolute(v + SNAP_SHA256_HEX + 1))
				seen |= 8;
			else {
				memcpy(st->policy_sha, v, SNAP_SHA256_HEX);
				st->policy_sha[SNAP_SHA256_HEX] = '\0';
				snprintf(st->policy, sizeof(st->policy), "%s",
				    v + SNAP_SHA256_HEX + 1);
			}
		}
	}
	free(text);
	/* a state file of before "applied": its last transaction */
	if (st->applied == 0 && strcmp(st->state, DRAFT_APPLIED) == 0)
		st->applied = st->tx;
	if (seen != 7 || st->tx > DRAFT_MAX_TX || st->applied > st->tx) {
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
int
dstate_load_said(const char *sdir, struct dstate *st)
{
	char	 err[DRAFT_PATH_MAX + 128];

	if (dstate_load(sdir, st, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "aisb: %s\n", errno == ENOENT ? "not a snapshot "
	    "session (aisb --snapshot makes one)" : err);
	return -1;
}


/* The default rules, the patterns the user configured, the reading of
 * owner_uid:owner_gid, and where git reads its configuration for them. */
struct snap_rules *
draft_rules(char *const *exclude, size_t n, unsigned owner_uid,
    unsigned owner_gid, char *err, size_t errlen)
{
	struct snap_rules	*r;
	char			 home[DRAFT_PATH_MAX];
	size_t			 i;
	int			 self;

	if ((r = snap_rules_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (snap_rules_add(r, exclude[i], err, errlen) != SNAP_OK) {
			snap_rules_free(r);
			return NULL;
		}
	/* the stage holds what a bind session of the owner could read */
	snap_rules_reader(r, owner_uid, owner_gid);
	/* git, for the tree's owner: that user's home (the launcher's own
	 * XDG_CONFIG_HOME only when it runs as that user) */
	self = draft_os_owner_home(owner_uid, home, sizeof(home));
	if (snap_rules_git_environ(r, self >= 0 ? home : NULL, self == 1 ?
	    getenv("XDG_CONFIG_HOME") : NULL, draft_os_git_system(), err,
	    errlen) != SNAP_OK) {
		snap_rules_free(r);
		return NULL;
	}
	return r;
}

struct snap_rules *
draft_rules_of(const struct dstate *st, char *err, size_t errlen)
{
	struct snap_rules	*r;
	size_t			 i;

	if ((r = draft_rules(st->exclude, st->nexclude, st->owner_uid,
	    st->owner_gid, err, errlen)) == NULL)
		return NULL;
	for (i = 0; i < st->ndeny; i++)
		if (snap_rules_deny(r, st->deny[i], err, errlen) != SNAP_OK) {
			snap_rules_free(r);
			return NULL;
		}
	return r;
}

/* ---- the commands ------------------------------------------------------- */

int
draft_lock(const char *sdir, intptr_t *lock)
{
	int	 rc;

	if ((rc = draft_os_lock(sdir, lock, 0)) == 0)
		return 0;
	return rc == -2 ? EXIT_IOERR : EXIT_ENFORCE;
}

int
draft_take(const char *sdir, const char *id, struct dstate *st,
    intptr_t *lock)
{
	int	 rc;

	memset(st, 0, sizeof(*st));
	if ((rc = draft_lock(sdir, lock)) != 0)
		return rc;
	rc = EXIT_CONFIG;
	if (dstate_load_said(sdir, st) == -1)
		goto fail;
	if (dstate_is(st, DRAFT_RECOVERY) || dstate_is(st, DRAFT_APPLYING) ||
	    dstate_is(st, DRAFT_UNDOING)) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s brings it to an end first\n",
		    id, st->tx, id);
		rc = EXIT_IOERR;
		goto fail;
	}
	return 0;
fail:
	dstate_free(st);
	draft_os_unlock(*lock);
	return rc;
}

int
draft_tx_path(const char *sdir, unsigned n, char *out)
{
	char	 name[32];

	snprintf(name, sizeof(name), "tx/%u", n);
	return draft_path(out, sdir, name);
}

const char *
draft_cmd(const struct dstate *st)
{
	return st->name[0] != '\0' ? "draft " : "";
}

/* The change set of st's draft as shown, and its stage still holding
 * exactly it, into *m and *ch: 0, or -1 (said). */
static int
shown(const char *sdir, const char *id, const struct dstate *st,
    struct snap_manifest **m, struct snap_changes **ch)
{
	struct snap_changes	*now = NULL;
	struct snap_rules	*rules = NULL;
	char			 err[2048], path[DRAFT_PATH_MAX];
	int			 rc = -1;

	if (draft_path(path, sdir, "manifest") == -1)
		return -1;
	if (snap_manifest_load(path, m, err, sizeof(err)) != SNAP_OK ||
	    draft_path(path, sdir, "changes") == -1 ||
	    snap_changes_load(path, ch, err, sizeof(err)) != SNAP_OK ||
	    (rules = draft_rules_of(st, err, sizeof(err))) == NULL ||
	    snap_changes_compute(*m, st->stage, rules, &st->lim, &now, err,
	    sizeof(err)) != SNAP_OK)
		fprintf(stderr, "aisb: %s%s: %s\n", draft_cmd(st), id, err);
	else if (strcmp(snap_changes_digest(*ch), st->digest) != 0 ||
	    strcmp(snap_changes_digest(now), st->digest) != 0)
		fprintf(stderr, "aisb: %s%s: the stage %s no longer holds the "
		    "change set shown (sha256 %.12s); nothing is written; aisb "
		    "%sdiscard %s drops it\n", draft_cmd(st), id, st->stage,
		    st->digest, draft_cmd(st), id);
	else
		rc = 0;
	snap_changes_free(now);
	snap_rules_free(rules);
	return rc;
}

enum snap_tx_state
draft_tx_outcome(const char *tx, int rc)
{
	enum snap_tx_state	 txs;
	char			 e2[256];

	if (rc == SNAP_OK)
		return SNAP_TX_APPLIED;
	if (snap_tx_state(tx, &txs, NULL, e2, sizeof(e2)) != SNAP_OK)
		return SNAP_TX_APPLYING;	/* unknown: to be recovered */
	return txs;
}

/* The state after apply's transaction tx returned rc with err. */
static int
applied(struct dstate *st, const char *id, const char *tx,
    const struct snap_changes *ch, int rc, const char *err, int quiet)
{
	enum snap_tx_state	 txs = draft_tx_outcome(tx, rc);
	char			 e2[256];

	if (txs == SNAP_TX_APPLIED) {
		draft_os_own_applied(st->workspace, st->owner_uid,
		    st->owner_gid, ch, 0);
		dstate_set(st, DRAFT_APPLIED);
		st->applied = st->tx;
		if (snap_tree_remove(st->stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		if (!quiet)
			fprintf(stderr, "aisb: applied %llu change(s) to %s "
			    "(sha256 %.12s; journal and backups: %s)\n",
			    st->nchanges, st->workspace, st->digest, tx);
		return 0;
	}
	if (txs == SNAP_TX_ROLLED_BACK || txs == SNAP_TX_NONE) {
		/* what a roll back put back (nothing, when refused before
		 * the first write) */
		if (snap_tx_wrote(tx) == 1)
			draft_os_own_applied(st->workspace, st->owner_uid,
			    st->owner_gid, ch, 1);
		if (rc == SNAP_ECONFLICT) {
			/* refused at the check, or at a step and rolled
			 * back */
			dstate_set(st, DRAFT_CONFLICT);
			/* (a refusal at the check says nothing was written:
			 * once is enough) */
			fprintf(stderr, "aisb: conflict: %s; %sthe draft is "
			    "kept: aisb %schanges %s --diff shows the sandbox's "
			    "version against the host's now, to merge by hand; "
			    "aisb %sdiscard %s\n", err, strstr(err,
			    "nothing was written") != NULL ? "" : "nothing is "
			    "applied; ", draft_cmd(st), id, draft_cmd(st), id);
			return EXIT_CONFLICT;
		}
		dstate_set(st, DRAFT_KEPT);
		fprintf(stderr, "aisb: apply: %s; rolled back, nothing applied; "
		    "the draft is kept\n", err);
		return EXIT_IOERR;
	}
	dstate_set(st, DRAFT_RECOVERY);
	fprintf(stderr, "aisb: apply: %s; transaction %s is %s: aisb %srecover "
	    "%s brings %s to all applied or nothing applied\n", err, tx,
	    snap_tx_state_name(txs), draft_cmd(st), id, st->workspace);
	return EXIT_IOERR;
}

int
draft_apply_locked(const char *sdir, const char *id, struct dstate *st,
    int flags)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL;
	char			 err[2048], path[DRAFT_PATH_MAX];
	char			 tx[DRAFT_PATH_MAX];
	int			 rc, code = EXIT_CONFIG;

	if (dstate_is(st, DRAFT_APPLIED)) {
		fprintf(stderr, "aisb: %s%s: already applied (transaction "
		    "%u)\n", draft_cmd(st), id, st->tx);
		return 0;
	}
	if (!dstate_is(st, DRAFT_KEPT) && !dstate_is(st, DRAFT_CONFLICT)) {
		fprintf(stderr, "aisb: %s%s: nothing to apply (its draft is "
		    "%s)\n", draft_cmd(st), id, st->state);
		return EXIT_CONFIG;
	}
	if (st->tx >= DRAFT_MAX_TX) {
		fprintf(stderr, "aisb: %s%s: %u attempts already\n",
		    draft_cmd(st), id, st->tx);
		return EXIT_CONFIG;
	}
	if (st->no_writeback) {
		fprintf(stderr, "aisb: %s%s: never written back: its session "
		    "ran with the user config's writeback: false; aisb %s"
		    "changes %s --diff shows it, aisb %sdiscard %s drops it\n",
		    draft_cmd(st), id, draft_cmd(st), id, draft_cmd(st), id);
		return EXIT_CONFIG;
	}
	/* made under a policy that is no longer the one in force: what
	 * the command fetched then may be what the policy now refuses */
	if (!(flags & DRAFT_REVIEWED) && draft_policy_moved(st, err,
	    sizeof(err))) {
		fprintf(stderr, "aisb: %s: made under another policy: %s; look "
		    "at it again (aisb changes %s --diff), then aisb apply %s "
		    "--reviewed\n", id, err, id, id);
		return EXIT_CONFIG;
	}
	/* what is applied is what was shown */
	if (shown(sdir, id, st, &m, &ch) == -1)
		goto out;
	if (draft_path(path, sdir, "tx") == -1 ||
	    (snap_fs_mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    draft_tx_path(sdir, st->tx + 1, tx) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
		code = EXIT_ENFORCE;
		goto out;
	}
	st->tx++;
	dstate_set(st, DRAFT_APPLYING);
	if (dstate_save(sdir, st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		code = EXIT_ENFORCE;
		goto out;
	}
	rc = snap_tx_apply(tx, st->workspace, st->stage, m, ch, err,
	    sizeof(err));
	code = applied(st, id, tx, ch, rc, err, flags & DRAFT_QUIET);
	if (dstate_save(sdir, st, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		if (code == 0)
			code = EXIT_ENFORCE;
	}
out:
	snap_changes_free(ch);
	snap_manifest_free(m);
	return code;
}

int
draft_apply(const char *sdir, const char *id, int flags)
{
	struct dstate	 st;
	intptr_t	 lock;
	int		 rc;

	if ((rc = draft_take(sdir, id, &st, &lock)) != 0)
		return rc;
	rc = draft_apply_locked(sdir, id, &st, flags);
	dstate_free(&st);
	draft_os_unlock(lock);
	return rc;
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
	if (draft_path(path, sdir, "changes") == -1)
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

	if ((rc = draft_lock(sdir, &lock)) != 0)
		return rc;
	if (dstate_load_said(sdir, &st) == -1) {
		draft_os_unlock(lock);
		return EXIT_CONFIG;
	}
	if (dstate_is(&st, DRAFT_APPLYING) || dstate_is(&st, DRAFT_RECOVERY) ||
	    dstate_is(&st, DRAFT_UNDOING)) {
		fprintf(stderr, "aisb: session %s: transaction %u was "
		    "interrupted; aisb recover %s first (its backups are what "
		    "restores the workspace)\n", id, st.tx, id);
		code = EXIT_IOERR;
	} else if (dstate_is(&st, DRAFT_APPLIED) || dstate_is(&st,
	    DRAFT_UNDONE) || (dstate_is(&st, DRAFT_STAGED) &&
	    draft_os_launcher_running(sdir))) {
		fprintf(stderr, "aisb: session %s: %s; nothing to discard\n", id,
		    dstate_is(&st, DRAFT_STAGED) ? "its command is still "
		    "running" : dstate_is(&st, DRAFT_APPLIED) ? "already "
		    "applied (aisb undo takes it back)" : "applied, then "
		    "undone");
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

/* draft_os_own_applied over the change set transaction tx kept. */
void
draft_own_settled(const struct dstate *st, const char *tx, int rolled_back)
{
	struct snap_changes	*ch = NULL;
	char			 path[DRAFT_PATH_MAX], err[2048];

	if (draft_path(path, tx, "changes") == -1)
		return;
	if (snap_changes_load(path, &ch, err, sizeof(err)) != SNAP_OK) {
		fprintf(stderr, "aisb: recover: %s; the files are not given to "
		    "uid %u\n", err, st->owner_uid);
		return;
	}
	draft_os_own_applied(st->workspace, st->owner_uid, st->owner_gid, ch,
	    rolled_back);
	snap_changes_free(ch);
}

int
draft_recover(const char *sdir, const char *id)
{
	struct dstate		 st;
	struct snap_stat	 sb;
	enum snap_tx_state	 txs = SNAP_TX_NONE;
	char			 err[2048], tx[DRAFT_PATH_MAX], e2[256];
	intptr_t		 lock;
	int			 rc, code = 0, undo;

	if ((rc = draft_lock(sdir, &lock)) != 0)
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
	if (draft_tx_path(sdir, st.tx, tx) == -1) {
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
	/* an apply that ended before the draft said so (a crash after the
	 * journal's done, or during it): what it wrote, or what the roll
	 * back put back, goes to the tree's owner as apply's would */
	if ((dstate_is(&st, DRAFT_APPLYING) || dstate_is(&st, DRAFT_RECOVERY) ||
	    dstate_is(&st, DRAFT_UNDOING)) && (txs == SNAP_TX_APPLIED ||
	    txs == SNAP_TX_ROLLED_BACK))
		draft_own_settled(&st, tx, txs == SNAP_TX_ROLLED_BACK);
	if ((undo = snap_tx_undoes(tx, e2, sizeof(e2))) == 1) {
		/* an undo: done, the draft is undone; rolled back, it is
		 * applied as before */
		if (txs == SNAP_TX_APPLIED || txs == SNAP_TX_ROLLED_BACK)
			dstate_set(&st, txs == SNAP_TX_APPLIED ? DRAFT_UNDONE :
			    DRAFT_APPLIED);
	} else if (txs == SNAP_TX_APPLIED) {
		if (!dstate_is(&st, DRAFT_APPLIED) &&
		    snap_tree_remove(st.stage, e2, sizeof(e2)) != SNAP_OK)
			fprintf(stderr, "aisb: %s\n", e2);
		dstate_set(&st, DRAFT_APPLIED);
		st.applied = st.tx;
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
	printf("session %s: %s %u %s; draft %s\n", id, undo == 1 ? "undo, "
	    "transaction" : "transaction", st.tx, txs == SNAP_TX_APPLIED ?
	    "applied: all of it is in the workspace" : "rolled back: none of "
	    "it is in the workspace", st.state);
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
	if (draft_os_lock(sdir, &lock, 0) != 0)
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
	const char		*txdir = arg;
	enum snap_tx_state	 s2;
	char			 path[DRAFT_PATH_MAX], of[32];
	unsigned long		 n = strtoul(name, NULL, 10);

	printf("  tx %-4s %-12s %.12s", name, snap_tx_state_name(s),
	    digest[0] != '\0' ? digest : "-");
	/* an undo says which; an applied one says it was undone (a draft's
	 * undo is the transaction after the one it undoes) */
	if (snprintf(path, sizeof(path), "%s/%s", txdir, name) <
	    (int)sizeof(path) && snap_tx_undoes(path, of, sizeof(of)) == 1)
		printf("  undo of tx %s", of);
	else if (s == SNAP_TX_APPLIED && snprintf(path, sizeof(path),
	    "%s/%lu", txdir, n + 1) < (int)sizeof(path) &&
	    snap_tx_undoes(path, of, sizeof(of)) == 1 &&
	    strcmp(of, name) == 0 && snap_tx_state(path, &s2, NULL, NULL,
	    0) == SNAP_OK && s2 == SNAP_TX_APPLIED)
		printf("  undone by tx %lu", n + 1);
	putchar('\n');
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
		    (int)sizeof(txdir) && snap_tx_list(txdir, print_tx, txdir,
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
