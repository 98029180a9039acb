/*
 * A snapshot session's side of its draft (draft.h): the stage made when
 * it starts, and at its end the change set, the question, the apply.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "draft/draft-int.h"
#include "exitcode.h"
#include "snap/fs.h"

static int
snap_code(int rc)
{
	return rc == SNAP_EBOUND || rc == SNAP_EINVAL ? EXIT_CONFIG :
	    rc == SNAP_ECONFLICT ? EXIT_CONFLICT : EXIT_ENFORCE;
}


/*
 * One line for what the stage left out for why (a reason of the
 * owner's reading or of a mount): how many, the first (escaped: the
 * names are the tree's), and why that is right.
 */
static void
left_out(const struct snap_manifest *m, const char *why, unsigned uid)
{
	const struct snap_entry	*e, *first = NULL;
	size_t			 i, n = 0;

	for (i = 0; (e = snap_manifest_entry(m, i)) != NULL; i++)
		if (e->excluded != NULL && strcmp(e->excluded, why) == 0 &&
		    n++ == 0)
			first = e;
	if (n == 0)
		return;
	fprintf(stderr, "aisb: snapshot: left out %zu %s (", n,
	    strcmp(why, SNAP_WHY_MOUNT) == 0 ? "mount point(s) in the "
	    "workspace: another filesystem, not the workspace's" :
	    "entries the workspace's owner cannot read: a bind session "
	    "could not read them either");
	if (strcmp(why, SNAP_WHY_MOUNT) != 0)
		fprintf(stderr, "; uid %u", uid);
	fputs("), first ", stderr);
	snap_print_name(stderr, first->path);
	fputs("; never written back, never deleted\n", stderr);
}

int
draft_stage(const char *sdir, const char *workspace,
    const struct draft_conf *conf, unsigned owner_uid, unsigned owner_gid,
    int (*prepare)(const char *, void *, char *, size_t), void *arg,
    int quiet, struct draft_info *info, char *err, size_t errlen)
{
	struct draft_conf	 none;
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
	if (conf == NULL) {
		draft_conf_default(&none);
		conf = &none;
	}
	if (conf->nexclude > DRAFT_MAX_EXCLUDE ||
	    conf->ndeny > DRAFT_MAX_EXCLUDE) {
		snprintf(err, errlen, "more than %d snapshot_exclude or "
		    "writeback_deny patterns", DRAFT_MAX_EXCLUDE);
		return EXIT_CONFIG;
	}
	if (draft_limits_ok(&conf->lim, err, errlen) == -1)
		return EXIT_CONFIG;
	/* borrowed from the caller, saved with the state, never freed here */
	st.borrowed = 1;
	for (i = 0; i < conf->nexclude; i++)
		st.exclude[st.nexclude++] = conf->exclude[i];
	for (i = 0; i < conf->ndeny; i++)
		st.deny[st.ndeny++] = conf->deny[i];
	st.lim = conf->lim;
	st.no_writeback = conf->no_writeback;
	if (conf->policy != NULL) {
		if (strlen(conf->policy) >= sizeof(st.policy) ||
		    !draft_os_path_absolute(conf->policy) ||
		    strchr(conf->policy, '\n') != NULL ||
		    draft_policy_sha(conf->policy, st.policy_sha) == -1) {
			snprintf(err, errlen, "policy %s: %s", conf->policy,
			    errno != 0 ? strerror(errno) : "not an absolute "
			    "path on one line");
			return EXIT_CONFIG;
		}
		snprintf(st.policy, sizeof(st.policy), "%s", conf->policy);
	}
	st.owner_uid = owner_uid;
	st.owner_gid = owner_gid;
	if ((rules = draft_rules_of(&st, err, errlen)) == NULL) {
		code = EXIT_CONFIG;
		goto fail;
	}
	info->stage_ms = draft_os_now_ms();
	if ((rc = snap_stage_create(workspace, info->stage, rules, &st.lim, &m,
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
	if (dstate_save(sdir, &st, err, errlen) == -1)
		goto fail;
	info->staged = 1;
	if (!quiet) {
		fprintf(stderr, "aisb: snapshot: %llu entries, %llu bytes staged "
		    "in %lld ms (%llu left out); the command sees the copy, not "
		    "%s\n", info->entries, info->bytes, info->stage_ms,
		    info->excluded, workspace);
		left_out(m, SNAP_WHY_UNREADABLE, owner_uid);
		left_out(m, SNAP_WHY_MOUNT, owner_uid);
	}
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


int
draft_end(const char *sdir, const char *id, int code, enum draft_apply apply,
    int quiet, struct draft_info *info)
{
	struct snap_manifest	*m = NULL;
	struct snap_changes	*ch = NULL;
	struct snap_rules	*rules = NULL;
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
	t0 = draft_os_now_ms();
	if (snprintf(path, sizeof(path), "%s/manifest", sdir) >=
	    (int)sizeof(path)) {
		snprintf(err, sizeof(err), "%s: path too long", sdir);
		rc = SNAP_EINVAL;
	} else if ((rc = snap_manifest_load(path, &m, err, sizeof(err))) ==
	    SNAP_OK && (rules = draft_rules_of(&st, err, sizeof(err))) ==
	    NULL)
		rc = SNAP_EINVAL;
	else if (rc == SNAP_OK)
		rc = snap_changes_compute(m, st.stage, rules, &st.lim, &ch, err,
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
	if (draft_path(path, sdir, "changes") == -1 ||
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
	if (dstate_save(sdir, &st, err, sizeof(err)) == -1) {
		if (!quiet)
			(void)snap_changes_print_summary(ch, stderr,
			    DRAFT_SUMMARY);
		fprintf(stderr, "aisb: snapshot: %s\n", err);
		out = EXIT_ENFORCE;
		goto done;
	}
	if (apply == DRAFT_APPLY_DRAFT) {
		/* into the persistent draft's own tree, never the workspace:
		 * nothing to ask (draft_persist_close says what it holds) */
		if (!quiet)
			(void)snap_changes_print_summary(ch, stderr,
			    DRAFT_SUMMARY);
		dstate_free(&st);
		if ((rc = draft_apply(sdir, id, DRAFT_QUIET |
		    DRAFT_REVIEWED)) != 0)
			out = rc;
		if (dstate_load(sdir, &st, err, sizeof(err)) == 0)
			snprintf(info->outcome, sizeof(info->outcome), "%s",
			    st.state);
		goto done;
	}
	if (draft_policy_moved(&st, err, sizeof(err))) {
		/* the policy changed while the command ran (a reload): not
		 * asked about; a fresh look first */
		if (!quiet)
			(void)snap_changes_print_summary(ch, stderr,
			    DRAFT_SUMMARY);
		fprintf(stderr, "aisb: snapshot: kept as a draft, not asked "
		    "about: the policy changed while the command ran (%s); "
		    "look at it again (aisb changes %s --diff), then aisb "
		    "apply %s --reviewed\n", err, id, id);
	} else if (st.no_writeback) {
		/* the user config's writeback: false: shown, kept, never
		 * asked about nor written back */
		if (!quiet)
			(void)snap_changes_print_summary(ch, stderr,
			    DRAFT_SUMMARY);
		fprintf(stderr, "aisb: snapshot: kept as a draft, never written "
		    "back (the user config's writeback: false); aisb changes "
		    "%s --diff shows it, aisb discard %s drops it\n", id, id);
	} else if (draft_end_ask(sdir, id, st.workspace, st.stage,
	    st.nchanges, ch, apply, quiet)) {
		rc = draft_apply(sdir, id, quiet ? DRAFT_QUIET : 0);
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

int
draft_policy_sha(const char *path, char *hex)
{
	char	*text;
	size_t	 len;
	int	 rc;

	errno = 0;
	/* a policy file is bounded well below this (policy/'s loader) */
	if ((text = snap_file_read(path, DRAFT_STATE_MAX * 8, &len)) == NULL)
		return -1;
	rc = snap_sha256_hex(text, len, hex);
	free(text);
	return rc;
}

int
draft_policy_moved(const struct dstate *st, char *why, size_t len)
{
	char	 now[SNAP_SHA256_HEX + 1];

	if (st->policy[0] == '\0')
		return 0;
	if (draft_policy_sha(st->policy, now) == -1) {
		snprintf(why, len, "%s: %s", st->policy, strerror(errno));
		return 1;
	}
	if (strcmp(now, st->policy_sha) == 0)
		return 0;
	snprintf(why, len, "%s was sha256:%.12s, is sha256:%.12s",
	    st->policy, st->policy_sha, now);
	return 1;
}
