/*
 * The stage: a private copy of the source tree, made entry by entry
 * without following a link, leaving out what the rules match, recording
 * the stat identity of every source entry and of its copy in the manifest
 * (no hashing: the change set hashes only what changed; snap.h,
 * docs/snapshot.md).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"
#include "snap-test.h"

#define COPY_CHUNK	(1024 * 1024)	/* bytes read and written at once */
#define GITCONFIG_MAX	(1 << 20)	/* bytes of .git/config sanitized */
#define COPY_TRIES	3		/* a file changing while copied */
#define NAMES_MAX	((size_t)1 << 20)	/* names in one folder */

struct stage {
	const char			*src, *dst;
	const struct snap_rules		*rules;
	const struct snap_limits	*lim;
	struct snap_manifest		*m;
	struct snap_reader		*reader;	/* NULL: ours */
	uint64_t			 dev;	/* the top's filesystem */
	uint64_t			 entries, bytes;
	int				 no_clone, no_kcopy;
	unsigned char			*chunk;
	char				*err;
	size_t				 errlen;
};

void
snap_limits_default(struct snap_limits *l)
{
	l->entries = 100000;
	l->bytes = (uint64_t)2 << 30;
	l->file_bytes = (uint64_t)512 << 20;
	l->path_len = 4096;
	l->depth = 128;
}

static void
ident_of(const struct snap_stat *st, struct snap_ident *id)
{
	id->dev = st->dev;
	id->ino = st->ino;
	id->size = st->size;
	id->mtime_ns = st->mtime_ns;
	id->ctime_ns = st->ctime_ns;
}

static int
same_ident(const struct snap_stat *a, const struct snap_stat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/*
 * src to a new dst of mode, not hashed (the change set hashes only what
 * the command changed): cloned when the filesystem can, else copied in
 * the kernel (copy_file_range), else read and written.  The stage is
 * scratch: no fsync.  0 with *st the source's identity as it was copied,
 * 1 when the source changed meanwhile (try again), -1 on error (errno).
 */
static int
copy_file(struct stage *s, const char *src, const char *dst, uint32_t mode,
    struct snap_stat *st, struct snap_stat *dst_st, int *cloned)
{
	struct snap_file	*in = NULL, *out = NULL;
	struct snap_stat	 after;
	long			 n = 0;
	int			 e, rc = -1, done = 0;

	*cloned = 0;
	if ((in = snap_fs_open_read(src)) == NULL)
		return errno == EACCES ? 2 : -1;
	if (snap_fs_fstat(in, st) == -1)
		goto fail;
	/* the workspace's owner may read what is read here, this one
	 * open file: no other is copied in its place */
	if (s->reader != NULL && (rc = snap_fs_reader_file(s->reader,
	    in)) != 1) {
		if (rc == 0)
			rc = 2;
		goto fail;
	}
	rc = -1;
	if ((out = snap_fs_create(dst, mode)) == NULL)
		goto fail;
	if (!s->no_clone && st->size > 0) {
		if (snap_fs_clone(in, out) == 0)
			done = *cloned = 1;
		else if (errno == EOPNOTSUPP || errno == ENOTTY ||
		    errno == EXDEV || errno == EINVAL || errno == ENOSYS)
			s->no_clone = 1;	/* not here: never again */
		else
			goto fail;
	}
	if (!done && !s->no_kcopy && st->size > 0) {
		if (snap_fs_copy(in, out) == 0)
			done = 1;
		else if (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
		    errno == EOPNOTSUPP)
			s->no_kcopy = 1;	/* from the offsets it reached */
		else
			goto fail;
	}
	if (!done)
		while ((n = snap_fs_read(in, s->chunk, COPY_CHUNK)) > 0)
			if (snap_fs_write(out, s->chunk, (size_t)n) == -1)
				goto fail;
	if (n == -1 || snap_fs_fstat(in, &after) == -1 ||
	    snap_fs_fstat(out, dst_st) == -1)
		goto fail;
	/* the umask took bits from the mode created with (a 0664 file would
	 * come back as a mode change to 0644): given back, and the identity
	 * taken again (chmod moves the ctime) */
	if (dst_st->mode != (mode & 07777) &&
	    (snap_fs_chmod(dst, mode & 07777) == -1 ||
	    snap_fs_fstat(out, dst_st) == -1))
		goto fail;
	if (!same_ident(st, &after) || dst_st->size != st->size) {
		rc = 1;
		goto fail;
	}
	if (snap_fs_close(out) == -1) {
		out = NULL;
		goto fail;
	}
	out = NULL;
	snap_fs_close(in);
	return 0;
fail:
	e = errno;
	snap_fs_close(in);
	snap_fs_close(out);
	if (rc == 1)
		(void)snap_fs_unlink(dst);	/* the next try makes it anew */
	if (rc == -1)
		errno = e;
	return rc;
}

/*
 * The names in the folder rel of the source, into *vp, when the
 * workspace's owner may list it (s->reader) and it is still the folder
 * st says (the one checked is the one listed): their count, -2 when the
 * owner may not read it, -1 on error (errno; ESTALE: swapped since).
 */
static long
list_checked(struct stage *s, const char *rel, const struct snap_stat *st,
    char ***vp)
{
	struct snap_stat	 now;
	struct snap_dir		*d;
	char			 path[SNAP_PATH_MAX];
	int			 r, e;

	*vp = NULL;
	if (snap_join(path, s->src, rel) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((d = snap_fs_opendir(path)) == NULL)
		return errno == EACCES ? -2 : -1;
	if (s->reader != NULL && !snap_fs_reader_self(s->reader)) {
		if ((r = snap_fs_reader_dir(s->reader, d)) == 1) {
			if (snap_fs_dirstat(d, &now) == -1)
				r = -1;
			else if (now.dev != st->dev || now.ino != st->ino) {
				errno = ESTALE;	/* swapped since its lstat */
				r = -1;
			}
		}
		if (r != 1) {
			e = errno;
			snap_fs_closedir(d);
			errno = e;
			return r == 0 ? -2 : -1;
		}
	}
	return snap_list_open(d, vp);
}

/* A sanitized .git/config, or NULL (left out) when it is too large. */
static int
stage_gitconfig(struct stage *s, const char *src, const char *dst,
    uint32_t mode, struct snap_ment *e, struct snap_stat *st)
{
	struct snap_file	*out = NULL;
	struct snap_stat	 dst_st;
	char			*text = NULL, *clean = NULL;
	size_t			 len, clen;
	int			 rc = -1, e2;

	if ((text = snap_file_read(src, GITCONFIG_MAX, &len)) == NULL)
		return -1;
	if (snap_sha_buf(text, len, e->sha) == -1 ||
	    (clean = snap_git_config_sanitize(text, len, &clen)) == NULL)
		goto done;
	if ((out = snap_fs_create(dst, mode)) == NULL ||
	    snap_fs_write(out, clean, clen) == -1 ||
	    snap_fs_fstat(out, &dst_st) == -1)
		goto done;
	ident_of(&dst_st, &e->stg);
	e->pub.size = st->size;
	rc = 0;
done:
	e2 = errno;
	if (snap_fs_close(out) == -1 && rc == 0) {
		e2 = errno;
		rc = -1;
	}
	free(text);
	free(clean);
	errno = e2;
	return rc;
}

static int
add_excluded(struct stage *s, const char *rel, const struct snap_stat *st,
    const char *why)
{
	struct snap_ment	*e;

	if ((e = snap_manifest_add(s->m, rel)) == NULL ||
	    (e->excluded = strdup(why)) == NULL)
		return snap_err(s->err, s->errlen, SNAP_ESYS,
		    "stage: out of memory");
	e->pub.type = st->type == SNAP_FS_FILE ? SNAP_FILE :
	    st->type == SNAP_FS_DIR ? SNAP_DIR :
	    st->type == SNAP_FS_LINK ? SNAP_LINK : SNAP_SPECIAL;
	e->pub.mode = st->mode & 0777;
	e->pub.size = st->type == SNAP_FS_FILE ? st->size : 0;
	ident_of(st, &e->src);
	return SNAP_OK;
}

/* The bounds every walked entry is held to (util.c, with compare.c's). */
static int
check_path(struct stage *s, const char *rel)
{
	return snap_bound_entry(s->lim, &s->entries, s->src, rel, "",
	    "exclude folders or raise the limit", s->err, s->errlen);
}

static int	walk(struct stage *, const char *, char **, long);

/* The test hook (snap-test.h): a racing process, before each entry. */
static void	(*stage_hook)(void *, const char *);
static void	*stage_hook_arg;

void
snap_test_stage_hook(void (*fn)(void *, const char *), void *arg)
{
	stage_hook = fn;
	stage_hook_arg = arg;
}

/* A regular file of the tree (lstat'ed as *st) copied to the stage. */
static int
stage_file(struct stage *s, const char *rel, const char *src,
    const char *dst, struct snap_stat *st)
{
	struct snap_stat	 dst_st;
	struct snap_ment	*e;
	int			 rc, tries, cloned;

	if (st->nlink > 1)
		return add_excluded(s, rel, st, "multi-link file");
	if (st->size > s->lim->file_bytes)
		return snap_err(s->err, s->errlen, SNAP_EBOUND, "%s: %" PRIu64
		    " bytes, over %" PRIu64 " (limit file_bytes): exclude it "
		    "or raise the limit", src, st->size, s->lim->file_bytes);
	if ((e = snap_manifest_add(s->m, rel)) == NULL)
		return snap_err(s->err, s->errlen, SNAP_ESYS,
		    "stage: out of memory");
	for (tries = 0; ; tries++) {
		rc = copy_file(s, src, dst, st->mode & 0777, st, &dst_st,
		    &cloned);
		if (rc == 0)
			break;
		if (rc == 2) {
			/* the owner may not read it: listed, not staged */
			if ((e->excluded = strdup(SNAP_WHY_UNREADABLE)) == NULL)
				return snap_err(s->err, s->errlen, SNAP_ESYS,
				    "stage: out of memory");
			e->pub.type = SNAP_FILE;
			e->pub.mode = st->mode & 0777;
			ident_of(st, &e->src);
			return SNAP_OK;
		}
		if (rc == -1)
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s",
			    src, strerror(errno));
		if (tries + 1 == COPY_TRIES)
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: "
			    "changed while it was copied, %d times: stop "
			    "what writes it and start again", src, COPY_TRIES);
	}
	if (st->size > s->lim->file_bytes)
		return snap_err(s->err, s->errlen, SNAP_EBOUND, "%s: %" PRIu64
		    " bytes, over %" PRIu64 " (limit file_bytes)", src,
		    st->size, s->lim->file_bytes);
	s->bytes += st->size;
	if (s->bytes > s->lim->bytes)
		return snap_err(s->err, s->errlen, SNAP_EBOUND, "%s: more "
		    "than %" PRIu64 " bytes of files (limit bytes; %" PRIu64
		    " at %s): exclude folders or raise the limit", s->src,
		    s->lim->bytes, s->bytes, rel);
	if (cloned)
		s->m->stats.cloned++;
	e->pub.type = SNAP_FILE;
	e->pub.mode = st->mode & 0777;
	e->pub.size = st->size;
	ident_of(st, &e->src);
	ident_of(&dst_st, &e->stg);
	return SNAP_OK;
}

static int
stage_entry(struct stage *s, const char *rel)
{
	char			 src[SNAP_PATH_MAX], dst[SNAP_PATH_MAX];
	char			 link[SNAP_LINK_MAX];
	struct snap_stat	 st, dst_st;
	struct snap_ment	*e;
	const char		*why;
	char			**names;
	long			 n;
	int			 rc;

	if ((rc = check_path(s, rel)) != SNAP_OK)
		return rc;
	if (stage_hook != NULL)
		stage_hook(stage_hook_arg, rel);
	if (snap_join(src, s->src, rel) == -1 ||
	    snap_join(dst, s->dst, rel) == -1)
		return snap_err(s->err, s->errlen, SNAP_EBOUND, "%s/%s: path "
		    "too long", s->src, rel);
	if (snap_fs_lstat(src, &st) == -1)
		return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s", src,
		    strerror(errno));
	/* mounted over the workspace: not the workspace's */
	if (st.dev != s->dev)
		return add_excluded(s, rel, &st, SNAP_WHY_MOUNT);
	why = snap_rules_match_file(s->rules, rel, src,
	    st.type == SNAP_FS_DIR);
	if (why != NULL && strcmp(why, "sanitized copy") == 0 &&
	    st.type == SNAP_FS_FILE && st.nlink == 1) {
		if ((e = snap_manifest_add(s->m, rel)) == NULL ||
		    (e->excluded = strdup(why)) == NULL)
			return snap_err(s->err, s->errlen, SNAP_ESYS,
			    "stage: out of memory");
		e->pub.type = SNAP_FILE;
		e->pub.mode = st.mode & 0777;
		ident_of(&st, &e->src);
		if (stage_gitconfig(s, src, dst, st.mode & 0777, e, &st) == -1) {
			if (errno != EFBIG)
				return snap_err(s->err, s->errlen, SNAP_ESYS,
				    "%s: %s", src, strerror(errno));
			free(e->excluded);
			if ((e->excluded = strdup("git config too large")) ==
			    NULL)
				return snap_err(s->err, s->errlen, SNAP_ESYS,
				    "stage: out of memory");
		}
		return SNAP_OK;
	}
	if (why != NULL)
		return add_excluded(s, rel, &st, why);
	switch (st.type) {
	case SNAP_FS_OTHER:
		return add_excluded(s, rel, &st, "special file");
	case SNAP_FS_LINK:
		if (snap_fs_readlink(src, link, sizeof(link)) == -1)
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s",
			    src, strerror(errno));
		if (!snap_link_inside(rel, link))
			return add_excluded(s, rel, &st, "link leaves the tree");
		if (snap_fs_symlink(link, dst) == -1)
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s",
			    dst, strerror(errno));
		if ((e = snap_manifest_add(s->m, rel)) == NULL ||
		    (e->link = strdup(link)) == NULL)
			return snap_err(s->err, s->errlen, SNAP_ESYS,
			    "stage: out of memory");
		e->pub.type = SNAP_LINK;
		e->pub.mode = 0777;
		e->pub.size = strlen(link);
		ident_of(&st, &e->src);
		if (snap_fs_lstat(dst, &dst_st) == 0)
			ident_of(&dst_st, &e->stg);
		return SNAP_OK;
	case SNAP_FS_DIR:
		if ((n = list_checked(s, rel, &st, &names)) == -2)
			return add_excluded(s, rel, &st, SNAP_WHY_UNREADABLE);
		if (n < 0)
			return snap_err(s->err, s->errlen, errno == EFBIG ?
			    SNAP_EBOUND : SNAP_ESYS, "%s: %s", src, errno ==
			    EFBIG ? "too many names in one folder" :
			    errno == ESTALE ? "replaced while it was staged: "
			    "stop what changes it and start again" :
			    strerror(errno));
		/* writable while filled; its own mode once full */
		if (snap_fs_mkdir(dst, 0700) == -1 ||
		    (e = snap_manifest_add(s->m, rel)) == NULL) {
			snap_names_free(names, n);
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s",
			    dst, strerror(errno));
		}
		e->pub.type = SNAP_DIR;
		e->pub.mode = st.mode & 0777;
		ident_of(&st, &e->src);
		if ((rc = walk(s, rel, names, n)) != SNAP_OK)
			return rc;
		if (snap_fs_chmod(dst, st.mode & 0777) == -1)
			return snap_err(s->err, s->errlen, SNAP_ESYS, "%s: %s",
			    dst, strerror(errno));
		return SNAP_OK;
	case SNAP_FS_FILE:
		break;
	}
	return stage_file(s, rel, src, dst, &st);
}

/*
 * The names in the folder rel of root, sorted, into *names (one block of
 * NUL-separated names) and *v: their count, or -1 (errno).
 */
long
snap_list_open(struct snap_dir *d, char ***vp)
{
	const char	*name;
	char		**v = NULL, **nv;
	size_t		 n = 0, cap = 0, i;
	int		 e;

	*vp = NULL;
	while ((name = snap_fs_readdir(d)) != NULL) {
		if (n == NAMES_MAX) {
			errno = EFBIG;
			goto fail;
		}
		if (n == cap) {
			cap = cap == 0 ? 32 : cap * 2;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		if ((v[n] = strdup(name)) == NULL)
			goto fail;
		n++;
	}
	if (errno != 0)
		goto fail;
	snap_fs_closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), snap_cmp_path);
	*vp = v;
	return (long)n;
fail:
	e = errno;
	snap_fs_closedir(d);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	errno = e;
	return -1;
}

void
snap_names_free(char **v, long n)
{
	long	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static long
list_dir(const char *root, const char *rel, char ***vp)
{
	char		 path[SNAP_PATH_MAX];
	struct snap_dir	*d;

	*vp = NULL;
	if (snap_join(path, root, rel) == -1 ||
	    (d = snap_fs_opendir(path)) == NULL)
		return -1;
	return snap_list_open(d, vp);
}

long
snap_list_dir(const char *root, const char *rel, char ***vp)
{
	return list_dir(root, rel, vp);
}

/* The entries names[n] of the folder rel, staged; names freed. */
static int
walk(struct stage *s, const char *rel, char **names, long n)
{
	char	 child[SNAP_PATH_MAX];
	long	 i;
	int	 rc = SNAP_OK, len;

	for (i = 0; i < n && rc == SNAP_OK; i++) {
		len = rel[0] == '\0' ?
		    snprintf(child, sizeof(child), "%s", names[i]) :
		    snprintf(child, sizeof(child), "%s/%s", rel, names[i]);
		if (len < 0 || (size_t)len >= SNAP_REL_MAX) {
			rc = snap_err(s->err, s->errlen, SNAP_EBOUND, "%s/%s/"
			    "%s: path too long (limit path_len)", s->src, rel,
			    names[i]);
			break;
		}
		rc = stage_entry(s, child);
	}
	snap_names_free(names, n);
	return rc;
}

int
snap_stage_create(const char *src_root, const char *stage_root,
    const struct snap_rules *rules, const struct snap_limits *lim,
    struct snap_manifest **out, char *err, size_t errlen)
{
	struct stage		 s;
	struct snap_stat	 st;
	char			**names;
	uint32_t		 uid, gid;
	long			 n;
	int			 rc;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	if (snap_fs_lstat(src_root, &st) == -1)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: %s", src_root,
		    strerror(errno));
	if (st.type != SNAP_FS_DIR)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: not a folder "
		    "(give the workspace's real path, not a link)", src_root);
	if (snap_fs_lstat(stage_root, &st) == 0 || errno != ENOENT)
		return snap_err(err, errlen, SNAP_EINVAL, "%s: exists already "
		    "(a stage is made in a new folder)", stage_root);
	if (snap_fs_mkdir(stage_root, 0700) == -1)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s", stage_root,
		    strerror(errno));
	s.src = src_root;
	s.dst = stage_root;
	s.rules = rules;
	s.lim = lim;
	s.err = err;
	s.errlen = errlen;
	if ((s.m = snap_manifest_new()) == NULL ||
	    (s.m->source = strdup(src_root)) == NULL ||
	    (s.chunk = malloc(COPY_CHUNK)) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "stage: out of memory");
		goto fail;
	}
	if (snap_fs_lstat(src_root, &st) == -1) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s: %s", src_root,
		    strerror(errno));
		goto fail;
	}
	s.dev = st.dev;
	if (snap_rules_reader_of(rules, &uid, &gid) &&
	    (s.reader = snap_fs_reader_new(uid, gid)) == NULL) {
		rc = snap_err(err, errlen, SNAP_ESYS, "stage: a process to "
		    "check what uid %u may read: %s", (unsigned)uid,
		    strerror(errno));
		goto fail;
	}
	if ((n = list_checked(&s, "", &st, &names)) < 0) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s: %s", src_root,
		    n == -2 ? "the workspace's owner cannot read it" :
		    strerror(errno));
		goto fail;
	}
	if ((rc = walk(&s, "", names, n)) != SNAP_OK)
		goto fail;
	(void)snap_fs_lstat(src_root, &st);
	if (snap_fs_chmod(stage_root, st.mode & 0777) == -1) {
		rc = snap_err(err, errlen, SNAP_ESYS, "%s: %s", stage_root,
		    strerror(errno));
		goto fail;
	}
	free(s.chunk);
	snap_fs_reader_free(s.reader);
	snap_manifest_sort(s.m);
	*out = s.m;
	return SNAP_OK;
fail:
	free(s.chunk);
	snap_fs_reader_free(s.reader);
	snap_manifest_free(s.m);
	(void)snap_tree_remove(stage_root, NULL, 0);
	return rc;
}

static int
remove_rec(char *path, size_t len)
{
	struct snap_stat	  st;
	char			**names;
	long			  n, i;
	int			  k, rc = 0, e = 0;

	if (snap_fs_lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (st.type != SNAP_FS_DIR)
		return snap_fs_unlink(path);
	if ((st.mode & 0700) != 0700)
		(void)snap_fs_chmod(path, st.mode | 0700);
	if ((n = list_dir(path, "", &names)) == -1)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		k = snprintf(path + len, SNAP_PATH_MAX - len, "/%s", names[i]);
		if (k < 0 || (size_t)k >= SNAP_PATH_MAX - len) {
			e = ENAMETOOLONG;
			rc = -1;
		} else if ((rc = remove_rec(path, len + (size_t)k)) == -1)
			e = errno;
		path[len] = '\0';
	}
	snap_names_free(names, n);
	if (rc == -1) {
		errno = e;
		return -1;
	}
	return snap_fs_rmdir(path);
}

int
snap_tree_remove(const char *root, char *err, size_t errlen)
{
	char	path[SNAP_PATH_MAX];
	int	n;

	n = snprintf(path, sizeof(path), "%s", root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return snap_err(err, errlen, SNAP_ESYS, "%s: path too long",
		    root);
	if (remove_rec(path, (size_t)n) == -1)
		return snap_err(err, errlen, SNAP_ESYS, "%s: %s (removing "
		    "it)", path, strerror(errno));
	return SNAP_OK;
}
