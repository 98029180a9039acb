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
	if ((rules = draft_rules(st.exclude, st.nexclude, err, errlen)) == NULL) {
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
		if (ch == NULL && (draft_path(path, sdir, "changes") == -1 ||
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
	    SNAP_OK && (rules = draft_rules(st.exclude, st.nexclude, err,
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
