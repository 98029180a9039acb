/*
 * The bind session's walk of its workspace (wsscan.h): folders opened
 * one below the other with O_NOFOLLOW, entries told apart by their
 * d_type (a stat only for what is kept, or when the filesystem does not
 * say), so that a tree of a million files costs a readdir each, not a
 * stat each.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/wsscan.h"
#include "snap/snap.h"

#define REL_MAX	4096		/* bytes of a relative path */

struct walk {
	struct launch_wsscan	*s;
	char *const		*protect;
	size_t			 nprotect;
	uint64_t		 dev;		/* the workspace's filesystem */
	char			 rel[REL_MAX];
	char			*err;
	size_t			 errlen;
};

static int
cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct launch_wsent *)a)->rel,
	    ((const struct launch_wsent *)b)->rel);
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* w->rel, of identity st, kept with flags (or'ed into the last entry
 * kept when that is w->rel already: a bare repository's folder). */
static int
keep(struct walk *w, const struct stat *st, unsigned flags, const char *why,
    const char *pattern)
{
	struct launch_wsscan	*s = w->s;
	struct launch_wsent	*e, *nv;

	if (s->n > 0 && strcmp(s->v[s->n - 1].rel, w->rel) == 0) {
		s->v[s->n - 1].flags |= flags;
		return 0;
	}
	if (s->n == LAUNCH_WSSCAN_KEEP) {
		snprintf(w->err, w->errlen, "more than %d git folders, files "
		    "that run on their own and protected paths in the "
		    "workspace", LAUNCH_WSSCAN_KEEP);
		return -1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 64 : s->cap * 2;
		if ((nv = reallocarray(s->v, s->cap, sizeof(*nv))) == NULL) {
			snprintf(w->err, w->errlen, "out of memory");
			return -1;
		}
		s->v = nv;
	}
	e = &s->v[s->n];
	memset(e, 0, sizeof(*e));
	if ((e->rel = strdup(w->rel)) == NULL) {
		snprintf(w->err, w->errlen, "out of memory");
		return -1;
	}
	e->flags = flags;
	e->why = why;
	e->pattern = pattern;
	e->isdir = S_ISDIR(st->st_mode);
	e->dev = (uint64_t)st->st_dev;
	e->ino = (uint64_t)st->st_ino;
	e->size = (uint64_t)st->st_size;
	e->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
	    st->st_mtim.tv_nsec;
	e->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 +
	    st->st_ctim.tv_nsec;
	s->n++;
	return 0;
}

/* The names of the open folder dfd (which it closes), sorted; their
 * types in types (DT_*).  The count, or -1 with errno. */
static long
names_of(int dfd, char ***names, unsigned char **types)
{
	DIR		*d;
	struct dirent	*de;
	char		**v = NULL, **nv;
	unsigned char	*t = NULL, *nt;
	size_t		 n = 0, cap = 0, i, j;
	int		 e;

	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 32 : cap * 2;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				goto fail;
			v = nv;
			if ((nt = realloc(t, cap)) == NULL)
				goto fail;
			t = nt;
		}
		if ((v[n] = malloc(strlen(de->d_name) + 2)) == NULL)
			goto fail;
		/* the type rides behind the name's NUL through the sort */
		strcpy(v[n], de->d_name);
		v[n][strlen(de->d_name) + 1] = (char)de->d_type;
		n++;
	}
	if (errno != 0)
		goto fail;
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_name);
	for (i = 0; i < n; i++)
		t[i] = (unsigned char)v[i][strlen(v[i]) + 1];
	*names = v;
	*types = t;
	return (long)n;
fail:
	e = errno != 0 ? errno : ENOMEM;
	for (j = 0; j < n; j++)
		free(v[j]);
	free(v);
	free(t);
	closedir(d);
	errno = e;
	return -1;
}

static void
names_free(char **v, unsigned char *t, long n)
{
	long	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(t);
}

/* The type of dfd/name: DT_DIR, DT_REG, DT_LNK, DT_UNKNOWN (gone). */
static unsigned char
type_of(int dfd, const char *name, unsigned char t)
{
	struct stat	 st;

	if (t != DT_UNKNOWN)
		return t;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG :
	    S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
}

static int	walk_dir(struct walk *, int dfd, size_t depth);

/* A name of the folder dfd (w->rel is its path): kept when it is one of
 * those wsscan.h names, walked into when it is a folder to walk. */
static int
one_entry(struct walk *w, int dfd, const char *name, unsigned char t,
    size_t depth)
{
	struct stat	 st;
	const char	*why = NULL, *pat = NULL;
	unsigned	 flags = 0;
	size_t		 i;
	int		 fd;

	if (++w->s->walked > LAUNCH_WSSCAN_ENTRIES) {
		snprintf(w->err, w->errlen, "more than %d entries (node_modules "
		    "not counted)", LAUNCH_WSSCAN_ENTRIES);
		return -1;
	}
	t = type_of(dfd, name, t);
	if (strcmp(name, ".git") == 0)
		flags |= t == DT_DIR ? LAUNCH_WS_GITDIR : t == DT_LNK ?
		    LAUNCH_WS_GITLINK : LAUNCH_WS_GITFILE;
	if ((why = snap_autorun(w->rel)) != NULL)
		flags |= LAUNCH_WS_AUTORUN;
	for (i = 0; i < w->nprotect; i++)
		if (snap_glob(w->protect[i], w->rel)) {
			flags |= LAUNCH_WS_PROTECT;
			pat = w->protect[i];
			break;
		}
	if (flags != 0) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno == ENOENT)
				return 0;	/* gone meanwhile */
			snprintf(w->err, w->errlen, "%s: %s", w->rel,
			    strerror(errno));
			return -1;
		}
		if (keep(w, &st, flags, why, pat) == -1)
			return -1;
	}
	/* a repository is guarded whole; a protected folder cannot change */
	if (t != DT_DIR || (flags & (LAUNCH_WS_GITDIR | LAUNCH_WS_PROTECT)) ||
	    strcmp(name, "node_modules") == 0)
		return 0;
	if (depth + 1 > LAUNCH_WSSCAN_DEPTH) {
		snprintf(w->err, w->errlen, "%s: more than %d folders deep",
		    w->rel, LAUNCH_WSSCAN_DEPTH);
		return -1;
	}
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
			return 0;	/* changed under the walk */
		snprintf(w->err, w->errlen, "%s: %s", w->rel, strerror(errno));
		return -1;
	}
	return walk_dir(w, fd, depth + 1);
}

/* 1 when the sorted names hold HEAD, objects and refs: git takes the
 * folder for a (bare) repository. */
static int
is_bare(char **names, long n)
{
	int	 have = 0;
	long	 i;

	for (i = 0; i < n; i++)
		have |= strcmp(names[i], "HEAD") == 0 ? 1 :
		    strcmp(names[i], "objects") == 0 ? 2 :
		    strcmp(names[i], "refs") == 0 ? 4 : 0;
	return have == 7;
}

/* The folder open at dfd (closed here), whose path is w->rel. */
static int
walk_dir(struct walk *w, int dfd, size_t depth)
{
	struct stat	 st;
	char		**names;
	unsigned char	*types;
	size_t		 base = strlen(w->rel);
	long		 n, i;
	int		 rc = 0, sub;

	if (fstat(dfd, &st) == -1 || (uint64_t)st.st_dev != w->dev) {
		close(dfd);		/* another filesystem: not walked */
		return 0;
	}
	if ((sub = dup(dfd)) == -1) {
		close(dfd);
		snprintf(w->err, w->errlen, "dup: %s", strerror(errno));
		return -1;
	}
	if ((n = names_of(dfd, &names, &types)) == -1) {
		snprintf(w->err, w->errlen, "%s: %s", base > 0 ? w->rel : ".",
		    strerror(errno));
		close(sub);
		return -1;
	}
	/* a bare repository: guarded whole, as a .git folder is */
	if (depth > 0 && is_bare(names, n)) {
		rc = keep(w, &st, LAUNCH_WS_BARE, NULL, NULL);
		names_free(names, types, n);
		close(sub);
		return rc;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if (base + 1 + strlen(names[i]) >= sizeof(w->rel)) {
			snprintf(w->err, w->errlen, "%s/%s: path too long",
			    w->rel, names[i]);
			rc = -1;
			break;
		}
		snprintf(w->rel + base, sizeof(w->rel) - base, "%s%s",
		    base > 0 ? "/" : "", names[i]);
		rc = one_entry(w, sub, names[i], types[i], depth);
		w->rel[base] = '\0';
	}
	names_free(names, types, n);
	close(sub);
	return rc;
}

int
launch_wsscan(const char *ws, char *const *protect, size_t nprotect,
    struct launch_wsscan *s, char *err, size_t errlen)
{
	struct walk	 w;
	struct stat	 st;
	int		 fd;

	memset(s, 0, sizeof(*s));
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.protect = protect;
	w.nprotect = nprotect;
	w.err = err;
	w.errlen = errlen;
	if ((fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", ws, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	w.dev = (uint64_t)st.st_dev;
	if (walk_dir(&w, fd, 0) == -1) {
		launch_wsscan_free(s);
		return -1;
	}
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_ent);
	return 0;
}

void
launch_wsscan_free(struct launch_wsscan *s)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].rel);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct launch_wsent *
launch_wsscan_find(const struct launch_wsscan *s, const char *rel)
{
	struct launch_wsent	 key;

	if (s->n == 0)
		return NULL;
	key.rel = (char *)rel;
	return bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_ent);
}
