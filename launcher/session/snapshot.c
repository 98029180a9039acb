/*
 * Snapshot sessions, the Linux launcher's side (snapshot.h); the commands
 * on their drafts are cmd/snapshot.c.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draft/draft.h"
#include "exitcode.h"
#include "host/paths.h"
#include "session/snapshot.h"

extern char **environ;

/* ---- ownership ---------------------------------------------------------- */

/*
 * The stage, made by root in a workspace of another user (sudo), given
 * to that user: the idmapped mount shows the owner's files as the
 * sandbox's, and root's as nobody's.  The stage is in root's 0700
 * session folder: nobody else can swap a link into it meanwhile.
 * (draft_stage's prepare hook; arg: the launch_ids.)
 */
static int
own_stage(const char *stage, void *arg, char *err, size_t errlen)
{
	const struct launch_ids	*ids = arg;

	if (ids->mode != LAUNCH_IDS_MAPPED)
		return 0;
	return draft_os_own_tree(stage, (unsigned)ids->owner_uid,
	    (unsigned)ids->owner_gid, err, errlen);
}

/* ---- real paths --------------------------------------------------------- */

/*
 * sdir with its folder resolved (realpath) and its last component kept,
 * into out[PATH_MAX]: libaisbsnap never goes through a link on the way
 * (docs/snapshot.md, "Links on the way"), so a link in the state folder's
 * path (XDG_STATE_HOME or HOME under a linked /home) is resolved here,
 * once; the session folder itself must be no link (it is refused later).
 * 0, or -1 (errno).
 */
int
launch_snap_real(const char *sdir, char *out)
{
	char		 dir[PATH_MAX], real[PATH_MAX];
	const char	*base;
	size_t		 n;

	if ((base = strrchr(sdir, '/')) == NULL || base[1] == '\0') {
		errno = EINVAL;
		return -1;
	}
	n = (size_t)(base - sdir);
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, sdir, n);
	dir[n] = '\0';
	if (realpath(n == 0 ? "/" : dir, real) == NULL)
		return -1;
	if (snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") == 0 ? "" :
	    real, base + 1) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* ---- the session ------------------------------------------------------- */

int
launch_snap_drafts_dir(char *out, int make, char *err, size_t errlen)
{
	char	 base[PATH_MAX], dir[PATH_MAX];

	if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    snprintf(dir, sizeof(dir), "%s/drafts", base) >= (int)sizeof(dir)) {
		snprintf(err, errlen, "no state folder for the drafts: set "
		    "XDG_STATE_HOME or HOME to an absolute path");
		return -1;
	}
	if (make && mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/* real, as the session folder: nothing on its way is a link */
	if (launch_snap_real(dir, out) == -1) {
		if (make) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			return -1;
		}
		/* no state folder yet, so no drafts: named, not made */
		snprintf(out, PATH_MAX, "%s", dir);
	}
	return 0;
}

/*
 * --draft NAME: the persistent draft of ws taken (made, or brought up to
 * date with ws) for this session, and its tree, not ws, staged.
 */
static int
draft_session(struct draft_info *sn, const struct launch_session *s,
    const struct launch_opts *o, const char *ws, const char *sdir,
    const struct draft_conf *conf, const struct launch_ids *ids,
    char *err, size_t errlen)
{
	struct draft_conf	 into, mine;
	struct draft_info	 kept;
	char			 dir[PATH_MAX], ddir[DRAFT_PATH_MAX];
	char			 tree[DRAFT_PATH_MAX + 8];
	int			 rc;

	if (launch_snap_drafts_dir(dir, 1, err, errlen) == -1)
		return EXIT_ENFORCE;
	if (draft_persist_path(dir, ws, o->val[LO_DRAFT], ddir) == -1) {
		snprintf(err, errlen, "draft %s: no folder", o->val[LO_DRAFT]);
		return EXIT_CONFIG;
	}
	mine = *conf;
	mine.policy = NULL;
	if ((rc = draft_persist_open(ddir, ws, o->val[LO_DRAFT], s->id,
	    &mine, (unsigned)ids->owner_uid, (unsigned)ids->owner_gid,
	    o->quiet, sn)) != 0) {
		snprintf(err, errlen, "draft %s: not taken (said above)",
		    o->val[LO_DRAFT]);
		return rc;
	}
	snprintf(tree, sizeof(tree), "%s/stage", ddir);
	kept = *sn;
	/* the session's changes go into the draft's tree, not the
	 * workspace: what never goes back is the draft's commit's to say */
	into = *conf;
	into.deny = NULL;
	into.ndeny = 0;
	into.no_writeback = 0;
	into.policy = NULL;	/* a persistent draft's commit is its review */
	rc = draft_stage(sdir, tree, &into, (unsigned)ids->owner_uid,
	    (unsigned)ids->owner_gid, own_stage, (void *)(uintptr_t)ids,
	    o->quiet, sn, err, errlen);
	/* draft_stage starts the record afresh: the draft's part kept */
	memcpy(sn->draft_dir, kept.draft_dir, sizeof(sn->draft_dir));
	memcpy(sn->draft_name, kept.draft_name, sizeof(sn->draft_name));
	sn->draft_revision = kept.draft_revision;
	sn->draft_lock = kept.draft_lock;
	if (rc != 0)
		draft_persist_close(sn, 1);
	return rc;
}

int
launch_snap_stage(struct draft_info *sn, const struct launch_session *s,
    const struct launch_opts *o, const struct launch_ids *ids, char *err,
    size_t errlen)
{
	struct draft_conf	 conf;
	char			 ws[PATH_MAX], sdir[PATH_MAX];
	char			 policy[PATH_MAX];
	char			*exclude[DRAFT_MAX_EXCLUDE];
	char			*deny[DRAFT_MAX_EXCLUDE];
	size_t			 i;

	memset(sn, 0, sizeof(*sn));
	/* both real: nothing in either path is a link from here on */
	if (realpath(o->val[LO_WORKSPACE], ws) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", o->val[LO_WORKSPACE],
		    strerror(errno));
		return EXIT_CONFIG;
	}
	if (launch_snap_real(s->dir, sdir) == -1) {
		snprintf(err, errlen, "session folder %s: %s", s->dir,
		    strerror(errno));
		return EXIT_ENFORCE;
	}
	/* every pattern: one past the bound is draft_stage's error, never
	 * a pattern silently left out */
	_Static_assert(DRAFT_MAX_EXCLUDE >= LAUNCH_MAX_LIST,
	    "every snapshot_exclude entry reaches the stage's rules");
	if (o->nexclude > DRAFT_MAX_EXCLUDE || o->nwdeny > DRAFT_MAX_EXCLUDE) {
		snprintf(err, errlen, "more than %d snapshot_exclude or "
		    "writeback_deny patterns", DRAFT_MAX_EXCLUDE);
		return EXIT_CONFIG;
	}
	/* the user config's (docs/snapshot.md, "What the user config
	 * tightens"): 0 is the built-in bound */
	draft_conf_default(&conf);
	for (i = 0; i < o->nexclude; i++)
		exclude[i] = o->exclude[i].text;
	for (i = 0; i < o->nwdeny; i++)
		deny[i] = o->wdeny[i].text;
	conf.exclude = exclude;
	conf.nexclude = o->nexclude;
	conf.deny = deny;
	conf.ndeny = o->nwdeny;
	if (o->snap_max[0] != 0)
		conf.lim.entries = o->snap_max[0];
	if (o->snap_max[1] != 0)
		conf.lim.bytes = o->snap_max[1];
	if (o->snap_max[2] != 0)
		conf.lim.file_bytes = o->snap_max[2];
	if (o->snap_max[3] != 0)
		conf.lim.depth = (size_t)o->snap_max[3];
	conf.no_writeback = !o->writeback;
	/* the policy file, to tell later whether it changed (a shared
	 * gate's is not this session's to follow; one not found, which a
	 * session cannot have compiled, leaves nothing to compare with) */
	if ((o->val[LO_GATE] == NULL || o->val[LO_GATE][0] == '\0') &&
	    o->val[LO_POLICY] != NULL) {
		if (realpath(o->val[LO_POLICY], policy) != NULL)
			conf.policy = policy;
		else if (errno != ENOENT) {
			snprintf(err, errlen, "policy %s: %s",
			    o->val[LO_POLICY], strerror(errno));
			return EXIT_CONFIG;
		}
	}
	if (o->val[LO_DRAFT] != NULL)
		return draft_session(sn, s, o, ws, sdir, &conf, ids, err,
		    errlen);
	return draft_stage(sdir, ws, &conf, (unsigned)ids->owner_uid,
	    (unsigned)ids->owner_gid, own_stage, (void *)(uintptr_t)ids,
	    o->quiet, sn, err, errlen);
}

int
launch_snap_end(struct draft_info *sn, const struct launch_session *s,
    const struct launch_opts *o, int code)
{
	enum draft_apply	 apply;
	char			 sdir[PATH_MAX];

	apply = o->val[LO_DRAFT] != NULL ? DRAFT_APPLY_DRAFT :
	    o->apply == LAUNCH_APPLY_ASK ? DRAFT_APPLY_ASK :
	    o->apply == LAUNCH_APPLY_NEVER ? DRAFT_APPLY_NEVER :
	    DRAFT_APPLY_AUTO;
	if (launch_snap_real(s->dir, sdir) == -1) {
		fprintf(stderr, "aisb: snapshot: session folder %s: %s\n",
		    s->dir, strerror(errno));
		draft_persist_close(sn, 1);
		return code != 0 ? code : EXIT_ENFORCE;
	}
	code = draft_end(sdir, s->id, code, apply, o->quiet, sn);
	draft_persist_close(sn, o->quiet);
	return code;
}

void
launch_snap_show(const char *sdir, FILE *out)
{
	char	 real[PATH_MAX];

	if (launch_snap_real(sdir, real) == -1) {
		fprintf(out, "# snapshot: %s: %s\n", sdir, strerror(errno));
		return;
	}
	draft_show(real, out);
}

int
launch_snap_reap(const char *sdir, const char *id)
{
	char	 real[PATH_MAX];

	if (launch_snap_real(sdir, real) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", sdir, strerror(errno));
		return -1;
	}
	return draft_reap(real, id);
}
