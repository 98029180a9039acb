/*
 * Whether the tree a manifest was staged from is still as staged
 * (snap_manifest_current, snap.h): a persistent draft takes the host's
 * edits in only when the host moved on (docs/snapshot.md, "Drafts that
 * persist").  Stat only, nothing read: every entry of the source is
 * looked up in the manifest and compared by its identity when staged
 * (type, device, inode, and for files and links size, mtime and ctime);
 * an entry more or less is a move.  What the stage left out (excluded,
 * unreadable, a mount) is not looked into: nothing of it reaches a draft.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap-int.h"

struct look {
	const struct snap_manifest	*m;
	const char			*root;
	unsigned char			*seen;
	uint64_t			 entries, max;
	char				*err;
	size_t				 errlen;
};

static int	look_dir(struct look *, const char *);

/* 1 the entry rel is as staged (and so is all below it), 0 not,
 * SNAP_E* */
static int
look_entry(struct look *l, const char *rel)
{
	char			 full[SNAP_PATH_MAX];
	struct snap_stat	 st, was;
	const struct snap_ment	*e;

	if (++l->entries > l->max)
		return 0;	/* past the bound: staging again says it */
	if ((e = snap_manifest_find(l->m, rel)) == NULL)
		return 0;
	l->seen[e - l->m->v] = 1;
	if (e->excluded != NULL)
		return 1;
	if (snap_join(full, l->root, rel) == -1)
		return snap_err(l->err, l->errlen, SNAP_EINVAL, "%s/%s: path "
		    "too long", l->root, rel);
	if (snap_fs_lstat(full, &st) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return snap_err(l->err, l->errlen, SNAP_ESYS, "%s: %s", full,
		    strerror(errno));
	}
	memset(&was, 0, sizeof(was));
	was.type = e->pub.type == SNAP_FILE ? SNAP_FS_FILE : e->pub.type ==
	    SNAP_DIR ? SNAP_FS_DIR : e->pub.type == SNAP_LINK ? SNAP_FS_LINK :
	    SNAP_FS_OTHER;
	was.dev = e->src.dev;
	was.ino = e->src.ino;
	was.size = e->src.size;
	was.mtime_ns = e->src.mtime_ns;
	was.ctime_ns = e->src.ctime_ns;
	/* a chmod moves the ctime too */
	if (!snap_fs_same(&st, &was, SNAP_SAME_CTIME))
		return 0;
	return st.type == SNAP_FS_DIR ? look_dir(l, rel) : 1;
}

static int
look_dir(struct look *l, const char *rel)
{
	char	 child[SNAP_PATH_MAX];
	char	**names;
	long	 n, i;
	int	 rc = 1, len;

	if ((n = snap_list_dir(l->root, rel, &names)) == -1)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
		    snap_err(l->err, l->errlen, SNAP_ESYS, "%s/%s: %s",
		    l->root, rel, strerror(errno));
	for (i = 0; i < n && rc == 1; i++) {
		len = rel[0] == '\0' ?
		    snprintf(child, sizeof(child), "%s", names[i]) :
		    snprintf(child, sizeof(child), "%s/%s", rel, names[i]);
		rc = len < 0 || (size_t)len >= SNAP_REL_MAX ? 0 :
		    look_entry(l, child);
	}
	snap_names_free(names, n);
	return rc;
}

int
snap_manifest_current(const struct snap_manifest *m,
    const struct snap_limits *lim, char *err, size_t errlen)
{
	struct look	 l;
	size_t		 i;
	int		 rc;

	if (m->source == NULL)
		return snap_err(err, errlen, SNAP_EINVAL, "the manifest names "
		    "no source (a version 1 file)");
	memset(&l, 0, sizeof(l));
	l.m = m;
	l.root = m->source;
	l.max = lim->entries;
	l.err = err;
	l.errlen = errlen;
	if ((l.seen = calloc(m->n + 1, 1)) == NULL)
		return snap_err(err, errlen, SNAP_ESYS, "out of memory");
	rc = look_dir(&l, "");
	/* an entry gone (what is under a folder left out is not listed) */
	for (i = 0; rc == 1 && i < m->n; i++)
		if (!l.seen[i])
			rc = 0;
	free(l.seen);
	return rc;
}
