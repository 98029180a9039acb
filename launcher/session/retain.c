/*
 * Retention (retain.h).  A folder's size is what its files take on disk
 * (st_blocks), walked without following a link or leaving its
 * filesystem (nftw FTW_PHYS | FTW_MOUNT): a stage's reflinked copies
 * count in full, as du would say, so the cap errs on the side of
 * removing sooner.  A folder without a record whose last write is
 * recent is a session starting (its launcher file not written yet):
 * kept.  Removal is draft_retire's, under the draft's lock.  The
 * transactions of persistent drafts (STATE/drafts/NAME/tx/N: a commit's
 * backups and new contents) are judged with the session folders, by
 * their own age, and count towards the cap; removal is draft_retire_tx's.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
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
#define RETAIN_TX_MAX	4096	/* drafts' transactions judged in one run */

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

/* A persistent draft's transaction: drafts/NAME/tx/N. */
struct dtx {
	char		 name[NAME_MAX + 1];	/* the draft's folder */
	unsigned	 n;
	time_t		 mtime;
	uint64_t	 size;
};

static int
dtx_cmp(const void *a, const void *b)
{
	const struct dtx *x = a, *y = b;

	/* a draft's earlier commit first when the clock says the same */
	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* The transactions of every draft under drafts (at most RETAIN_TX_MAX),
 * oldest first, sizes taken: NULL on error (*np 0: none). */
static struct dtx *
dtx_list(const char *drafts, size_t *np)
{
	struct dtx	*t;
	DIR		*d, *x;
	struct dirent	*de, *xe;
	struct stat	 sb;
	char		 path[PATH_MAX], txp[PATH_MAX], *end;
	unsigned long	 k;
	size_t		 n = 0;

	*np = 0;
	if ((t = calloc(RETAIN_TX_MAX, sizeof(*t))) == NULL)
		return NULL;
	if ((d = opendir(drafts)) == NULL)
		return t;	/* no draft yet */
	while ((de = readdir(d)) != NULL && n < RETAIN_TX_MAX) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > NAME_MAX ||
		    file_path_join(path, sizeof(path), drafts, de->d_name) ==
		    -1 || file_path_join(txp, sizeof(txp), path, "tx") == -1 ||
		    lstat(txp, &sb) == -1 || !S_ISDIR(sb.st_mode) ||
		    (x = opendir(txp)) == NULL)
			continue;
		while ((xe = readdir(x)) != NULL && n < RETAIN_TX_MAX) {
			errno = 0;
			k = strtoul(xe->d_name, &end, 10);
			if (xe->d_name[0] < '1' || xe->d_name[0] > '9' ||
			    *end != '\0' || errno != 0 || k > DRAFT_MAX_TX ||
			    file_path_join(path, sizeof(path), txp,
			    xe->d_name) == -1 || lstat(path, &sb) == -1 ||
			    !S_ISDIR(sb.st_mode))
				continue;
			memcpy(t[n].name, de->d_name, strlen(de->d_name) + 1);
			t[n].n = (unsigned)k;
			t[n].mtime = sb.st_mtime;
			t[n].size = du(path);
			n++;
		}
		closedir(x);
	}
	closedir(d);
	qsort(t, n, sizeof(*t), dtx_cmp);
	*np = n;
	return t;
}

/* dir's sibling "drafts", real, into out[PATH_MAX]: 0, or -1 (none). */
static int
drafts_of(const char *dir, char *out)
{
	char		 path[PATH_MAX];
	const char	*slash = strrchr(dir, '/');

	if (slash == NULL || snprintf(path, sizeof(path), "%.*s/drafts",
	    (int)(slash - dir), dir) >= (int)sizeof(path))
		return -1;
	return launch_snap_real(path, out);
}

int
launch_retain(const char *dir, const char *skip, long long older,
    uint64_t cap, FILE *say, struct launch_retained *r)
{
	struct launch_sess	*v;
	struct dtx		*t = NULL;
	char			 path[PATH_MAX], real[PATH_MAX];
	char			 drafts[PATH_MAX];
	const char		*why;
	uint64_t		*size, total = 0;
	time_t			 now = time(NULL);
	size_t			 n, m = 0, i, j, k;
	int			 rc = 0, due, got;

	memset(r, 0, sizeof(*r));
	if ((v = launch_sessions_list(dir, &n)) == NULL)
		return -1;
	if ((size = calloc(n + 1, sizeof(*size))) == NULL ||
	    (drafts_of(dir, drafts) == 0 &&
	    (t = dtx_list(drafts, &m)) == NULL)) {
		free(size);
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (file_path_join(path, sizeof(path), dir, v[i].id) == 0)
			total += size[i] = du(path);
	for (j = 0; j < m; j++)
		total += t[j].size;
	/* sessions and drafts' transactions together, oldest first */
	for (i = j = 0; i < n || j < m;) {
		if (j < m && (i == n || t[j].mtime < v[i].mtime)) {
			k = j++;
			due = (older >= 0 && now - t[k].mtime > older) ||
			    (cap > 0 && total > cap);
			if (!due || snprintf(path, sizeof(path), "%s/%s",
			    drafts, t[k].name) >= (int)sizeof(path))
				continue;
			if ((got = draft_retire_tx(path, t[k].n, &why)) == -1)
				rc = -1;
			if (got == 0 && say != NULL)
				fprintf(say, "kept draft %s transaction %u: "
				    "%s\n", t[k].name, t[k].n, why);
			if (got != 1)
				continue;
			r->txs++;
			r->freed += t[k].size;
			total -= t[k].size;
			if (say != NULL)
				fprintf(say, "removed draft %s transaction %u "
				    "(%llu KiB): %s\n", t[k].name, t[k].n,
				    (unsigned long long)(t[k].size >> 10),
				    older >= 0 && now - t[k].mtime > older ?
				    "older than --older-than" : "over the "
				    "retention cap");
			continue;
		}
		k = i++;
		due = (older >= 0 && now - v[k].mtime > older) ||
		    (cap > 0 && total > cap);
		if (!due || (skip != NULL && strcmp(v[k].id, skip) == 0) ||
		    file_path_join(path, sizeof(path), dir, v[k].id) == -1 ||
		    !judged(dir, v[k].id, path, v[k].mtime, now))
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
				fprintf(say, "kept session %s: %s\n", v[k].id,
				    why);
			continue;
		}
		r->removed++;
		r->freed += size[k];
		total -= size[k];
		if (say != NULL)
			fprintf(say, "removed session %s (%llu KiB): %s\n",
			    v[k].id, (unsigned long long)(size[k] >> 10),
			    older >= 0 && now - v[k].mtime > older ? "older "
			    "than --older-than" : "over the retention cap");
	}
	r->left = total;
	free(t);
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
	if (r.removed > 0 || r.txs > 0)
		fprintf(stderr, "aisb: retention: %zu older session folder(s) "
		    "and %zu draft transaction(s) removed (%llu KiB) to stay "
		    "under %llu KiB\n", r.removed, r.txs,
		    (unsigned long long)(r.freed >> 10),
		    (unsigned long long)(cap >> 10));
	if (r.left > cap)
		fprintf(stderr, "aisb: retention: the sessions hold %llu KiB, "
		    "over the cap of %llu KiB: what is left is this session, "
		    "or waits for approval or recovery (aisb transactions)\n",
		    (unsigned long long)(r.left >> 10),
		    (unsigned long long)(cap >> 10));
}
