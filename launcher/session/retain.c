/*
 * Retention (retain.h).  A folder's size is what its files take on disk
 * (st_blocks), walked without following a link or leaving its
 * filesystem (nftw FTW_PHYS | FTW_MOUNT): a stage's reflinked copies
 * count in full, as du would say, so the cap errs on the side of
 * removing sooner.  A folder without a record whose last write is
 * recent is a session starting (its launcher file not written yet):
 * kept.  Removal is draft_retire's, under the draft's lock.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "draft/draft.h"
#include "file.h"
#include "session/folder.h"
#include "session/retain.h"
#include "session/snapshot.h"

#define STARTING_S	3600	/* a record-less folder this young: starting */

static uint64_t	 walked;	/* du's sum, for the nftw callback */

static int
add_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)path;
	(void)type;
	(void)ftw;
	walked += (uint64_t)sb->st_blocks * 512;
	return 0;
}

static uint64_t
du(const char *path)
{
	walked = 0;
	(void)nftw(path, add_one, 16, FTW_PHYS | FTW_MOUNT);
	return walked;
}

/* 1 when session id's folder may be judged at all: its launcher is
 * gone, and it is not a session starting. */
static int
judged(const char *dir, const char *id, const char *path, time_t mtime,
    time_t now)
{
	char		 rec[PATH_MAX];
	struct stat	 sb;

	if (launch_session_launcher(dir, id) == 1)
		return 0;
	if (file_path_join(rec, sizeof(rec), path, "record") == 0 &&
	    lstat(rec, &sb) == 0)
		return 1;
	return now - mtime > STARTING_S;
}

int
launch_retain(const char *dir, const char *skip, long long older,
    uint64_t cap, FILE *say, struct launch_retained *r)
{
	struct launch_sess	*v;
	char			 path[PATH_MAX], real[PATH_MAX];
	const char		*why;
	uint64_t		*size, total = 0;
	time_t			 now = time(NULL);
	size_t			 n, i;
	int			 rc = 0, due, got;

	memset(r, 0, sizeof(*r));
	if ((v = launch_sessions_list(dir, &n)) == NULL)
		return -1;
	if ((size = calloc(n + 1, sizeof(*size))) == NULL) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (file_path_join(path, sizeof(path), dir, v[i].id) == 0)
			total += size[i] = du(path);
	for (i = 0; i < n; i++) {
		due = (older >= 0 && now - v[i].mtime > older) ||
		    (cap > 0 && total > cap);
		if (!due || (skip != NULL && strcmp(v[i].id, skip) == 0) ||
		    file_path_join(path, sizeof(path), dir, v[i].id) == -1 ||
		    !judged(dir, v[i].id, path, v[i].mtime, now))
			continue;
		if (launch_snap_real(path, real) == -1) {
			fprintf(stderr, "aisb: %s: %s\n", path, strerror(errno));
			rc = -1;
			continue;
		}
		if ((got = draft_retire(real, &why)) == -1) {
			rc = -1;
			continue;
		}
		if (got == 0) {
			r->kept++;
			if (say != NULL)
				fprintf(say, "kept session %s: %s\n", v[i].id,
				    why);
			continue;
		}
		r->removed++;
		r->freed += size[i];
		total -= size[i];
		if (say != NULL)
			fprintf(say, "removed session %s (%llu KiB): %s\n",
			    v[i].id, (unsigned long long)(size[i] >> 10),
			    older >= 0 && now - v[i].mtime > older ? "older "
			    "than --older-than" : "over the retention cap");
	}
	r->left = total;
	free(size);
	free(v);
	return rc;
}

void
launch_retain_end(const char *id, uint64_t cap, int quiet)
{
	struct launch_retained	 r;
	char			 dir[PATH_MAX];

	if (cap == 0 || launch_sessions_dir(dir, sizeof(dir)) == -1)
		return;
	(void)launch_retain(dir, id, -1, cap, NULL, &r);
	if (quiet)
		return;
	if (r.removed > 0)
		fprintf(stderr, "aisb: retention: %zu older session folder(s) "
		    "removed (%llu KiB) to stay under %llu KiB\n", r.removed,
		    (unsigned long long)(r.freed >> 10),
		    (unsigned long long)(cap >> 10));
	if (r.left > cap)
		fprintf(stderr, "aisb: retention: the sessions hold %llu KiB, "
		    "over the cap of %llu KiB: what is left is this session, "
		    "or waits for approval or recovery (aisb transactions)\n",
		    (unsigned long long)(r.left >> 10),
		    (unsigned long long)(cap >> 10));
}
