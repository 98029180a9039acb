/*
 * Snapshot sessions, the Linux launcher's side (snapshot.h); the commands
 * on their drafts are cmd/snapshot.c.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draft/draft.h"
#include "exitcode.h"
#include "session/snapshot.h"

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
 * (draft_stage's prepare hook; arg: the launch_ids.)
 */
static int
own_stage(const char *stage, void *arg, char *err, size_t errlen)
{
	const struct launch_ids	*ids = arg;

	if (ids->mode != LAUNCH_IDS_MAPPED || ids->owner_uid == geteuid())
		return 0;
	chown_uid = ids->owner_uid;
	chown_gid = ids->owner_gid;
	if (nftw(stage, chown_one, 64, FTW_PHYS) != 0) {
		snprintf(err, errlen, "giving the stage %s to uid %u: %s", stage,
		    (unsigned)ids->owner_uid, strerror(errno));
		return -1;
	}
	return 0;
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
launch_snap_stage(struct draft_info *sn, const struct launch_session *s,
    const struct launch_opts *o, const struct launch_ids *ids, char *err,
    size_t errlen)
{
	char	 ws[PATH_MAX], sdir[PATH_MAX], *exclude[DRAFT_MAX_EXCLUDE];
	size_t	 i, n = 0;

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
	if (o->nexclude > DRAFT_MAX_EXCLUDE) {
		snprintf(err, errlen, "more than %d snapshot_exclude patterns",
		    DRAFT_MAX_EXCLUDE);
		return EXIT_CONFIG;
	}
	for (i = 0; i < o->nexclude; i++)
		exclude[n++] = o->exclude[i].text;
	return draft_stage(sdir, ws, exclude, n, (unsigned)ids->owner_uid,
	    (unsigned)ids->owner_gid, own_stage, (void *)(uintptr_t)ids,
	    o->quiet, sn, err, errlen);
}

int
launch_snap_end(struct draft_info *sn, const struct launch_session *s,
    const struct launch_opts *o, int code)
{
	enum draft_apply	 apply;
	char			 sdir[PATH_MAX];

	apply = o->apply == LAUNCH_APPLY_ASK ? DRAFT_APPLY_ASK :
	    o->apply == LAUNCH_APPLY_NEVER ? DRAFT_APPLY_NEVER :
	    DRAFT_APPLY_AUTO;
	if (launch_snap_real(s->dir, sdir) == -1) {
		fprintf(stderr, "aisb: snapshot: session folder %s: %s\n",
		    s->dir, strerror(errno));
		return code != 0 ? code : EXIT_ENFORCE;
	}
	return draft_end(sdir, s->id, code, apply, o->quiet, sn);
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
