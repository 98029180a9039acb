/*
 * snap/fs.h for Linux and other POSIX systems; with fs_reader.c (the
 * owner's reader), the only files of snap/ that include system headers
 * beyond the C library.
 *
 * No call here goes through a symbolic link in any component of its path
 * (docs/snapshot.md, "Links on the way"): whoever owns the tree (or a
 * sandboxed command of another session in it) may swap a folder for a
 * link while aisb works, and aisb, maybe root, must not then write,
 * chmod, delete or read where the link points.  A path is opened with
 * openat2(RESOLVE_NO_SYMLINKS) (Linux 5.6), its parent folder when the
 * operation names an entry (mkdirat, unlinkat, renameat, ...); where
 * openat2 is missing (ENOSYS), the path is walked from "/" (or the
 * current folder) one component at a time with O_NOFOLLOW.  A link met
 * on the way fails with ELOOP.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <linux/fs.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "snap-test.h"

/* a path, and its parent folder's part, are at most this long (bytes) */
#define FS_PATH_MAX	8192

#include "fs-posix.h"

static int	no_openat2;	/* ENOSYS seen (or forced by a test) */
static int	no_exchange;	/* forced by a test */

void
snap_test_fs_walk(int on)
{
	no_openat2 = on;
}

void
snap_test_fs_noexchange(int on)
{
	no_exchange = on;
}

static void
stat_from(const struct stat *st, struct snap_stat *out)
{
	memset(out, 0, sizeof(*out));
	if (S_ISREG(st->st_mode))
		out->type = SNAP_FS_FILE;
	else if (S_ISDIR(st->st_mode))
		out->type = SNAP_FS_DIR;
	else if (S_ISLNK(st->st_mode))
		out->type = SNAP_FS_LINK;
	else
		out->type = SNAP_FS_OTHER;
	out->mode = (uint32_t)(st->st_mode & 07777);
	out->size = (uint64_t)st->st_size;
	out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
	    st->st_mtim.tv_nsec;
	out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 +
	    st->st_ctim.tv_nsec;
	out->dev = (uint64_t)st->st_dev;
	out->ino = (uint64_t)st->st_ino;
	out->nlink = (uint64_t)st->st_nlink;
	out->uid = (uint32_t)st->st_uid;
	out->gid = (uint32_t)st->st_gid;
}

static void
close_keep_errno(int fd)
{
	int	e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
}

/*
 * The walk without openat2: path (a folder, or with leaf_flags != -1 an
 * entry opened with those flags plus O_NOFOLLOW) from "/" or the current
 * folder, each folder on the way opened O_PATH|O_NOFOLLOW and checked to
 * be a folder: a link is ELOOP, anything else ENOTDIR.
 */
static int
walk_open(const char *path, int leaf_flags, mode_t mode)
{
	char		 buf[FS_PATH_MAX], *p, *slash;
	struct stat	 st;
	size_t		 len = strlen(path);
	int		 fd, next;

	if (len == 0) {
		errno = ENOENT;
		return -1;
	}
	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	if ((fd = open(buf[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -1;
	for (p = buf; ; p = slash + 1) {
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (slash != NULL)
			*slash = '\0';
		else if (leaf_flags != -1) {
			if (*p == '\0')
				p = (char *)".";
			next = openat(fd, p, leaf_flags | O_NOFOLLOW |
			    O_CLOEXEC, mode);
			close_keep_errno(fd);
			return next;
		}
		if (*p != '\0' && strcmp(p, ".") != 0) {
			next = openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			close_keep_errno(fd);
			if (next == -1)
				return -1;
			fd = next;
			if (fstat(fd, &st) == -1) {
				close_keep_errno(fd);
				return -1;
			}
			if (!S_ISDIR(st.st_mode)) {
				close(fd);
				errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
				return -1;
			}
		}
		if (slash == NULL)
			return fd;
	}
}

/*
 * openat2(AT_FDCWD, path, flags, RESOLVE_NO_SYMLINKS): the fd, -1 (errno),
 * or -2 when the kernel has no openat2 (the caller walks instead).  A
 * link anywhere is ELOOP, also the last component, unless flags hold
 * O_PATH|O_NOFOLLOW: then that link itself is opened.  (O_NOFOLLOW with
 * O_DIRECTORY would make a last link ENOTDIR: not added here.)
 */
static int
try_openat2(const char *path, int flags, mode_t mode)
{
#ifdef SYS_openat2
	struct open_how	 how;
	long		 fd;

	if (no_openat2)
		return -2;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & O_CREAT) ? (uint64_t)(mode & 07777) : 0;
	how.resolve = RESOLVE_NO_SYMLINKS;
	do
		fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	while (fd == -1 && errno == EINTR);
	if (fd != -1 || errno != ENOSYS)
		return (int)fd;
	no_openat2 = 1;
#else
	(void)path;
	(void)flags;
	(void)mode;
#endif
	return -2;
}

/*
 * path opened with flags (O_CLOEXEC added), no link followed in any
 * component: with O_PATH|O_NOFOLLOW a link in the last component is
 * opened itself (as openat2 does), else it is ELOOP.
 */
static int
open_nolink(const char *path, int flags, mode_t mode)
{
	struct stat	st;
	int		fd, lfd;

	if ((fd = try_openat2(path, flags, mode)) == -2)
		fd = walk_open(path, flags, mode);
	/* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR: say ELOOP, as
	 * for any other link met */
	if (fd == -1 && errno == ENOTDIR && (flags & O_DIRECTORY) &&
	    !(flags & O_PATH)) {
		if ((lfd = open_nolink(path, O_PATH | O_NOFOLLOW, 0)) != -1) {
			if (fstat(lfd, &st) == 0 && S_ISLNK(st.st_mode)) {
				close(lfd);
				errno = ELOOP;
				return -1;
			}
			close(lfd);
		}
		errno = ENOTDIR;
	}
	return fd;
}

/*
 * The folder that holds path's last component, opened O_PATH without a
 * link on the way, and that component (a pointer into name[FS_PATH_MAX],
 * "." when path is "/"): the fd, or -1 (errno).
 */
static int
open_parent(const char *path, char *name, const char **leaf)
{
	char	 dir[FS_PATH_MAX], *s;
	size_t	 len = strlen(path);
	int	 fd;

	if (len == 0) {
		errno = ENOENT;
		return -1;
	}
	if (len >= FS_PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, len + 1);
	while (len > 1 && dir[len - 1] == '/')	/* "a/b/" is "a/b" */
		dir[--len] = '\0';
	if ((s = strrchr(dir, '/')) == NULL) {
		memcpy(name, dir, len + 1);
		dir[0] = '.';
		dir[1] = '\0';
	} else if (s[1] == '\0') {		/* "/" */
		name[0] = '.';
		name[1] = '\0';
	} else {
		memcpy(name, s + 1, strlen(s + 1) + 1);
		if (s == dir)
			s[1] = '\0';
		else
			*s = '\0';
	}
	*leaf = name;
	if ((fd = try_openat2(dir, O_PATH | O_DIRECTORY, 0)) != -2)
		return fd;
	return walk_open(dir, -1, 0);
}

int
snap_fs_lstat(const char *path, struct snap_stat *out)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	struct stat	 st;
	int		 fd, rc;

	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	rc = fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW);
	close_keep_errno(fd);
	if (rc == -1)
		return -1;
	stat_from(&st, out);
	return 0;
}

struct snap_dir *
snap_fs_opendir(const char *path)
{
	struct snap_dir	*d;
	int		 fd, e;

	if ((fd = open_nolink(path, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return NULL;
	if ((d = malloc(sizeof(*d))) == NULL) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	if ((d->d = fdopendir(fd)) == NULL) {
		e = errno;
		close(fd);
		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

const char *
snap_fs_readdir(struct snap_dir *d)
{
	struct dirent	*de;

	for (;;) {
		errno = 0;
		if ((de = readdir(d->d)) == NULL)
			return NULL;
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			return de->d_name;
	}
}

void
snap_fs_closedir(struct snap_dir *d)
{
	if (d == NULL)
		return;
	closedir(d->d);
	free(d);
}

static struct snap_file *
file_of(int fd)
{
	struct snap_file	*f;

	if (fd == -1)
		return NULL;
	if ((f = malloc(sizeof(*f))) == NULL) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	f->fd = fd;
	return f;
}

/* fd (opened O_NONBLOCK: a fifo opened by mistake must not block) as a
 * file when it is a regular one; a folder is no file (EISDIR). */
static struct snap_file *
regular_of(int fd)
{
	struct stat	st;
	int		e;

	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	return file_of(fd);
}

struct snap_file *
snap_fs_open_read(const char *path)
{
	return regular_of(open_nolink(path, O_RDONLY | O_NONBLOCK | O_NOCTTY,
	    0));
}

struct snap_file *
snap_fs_open_follow(const char *path)
{
	return regular_of(open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC));
}

struct snap_file *
snap_fs_create(const char *path, uint32_t mode)
{
	return file_of(open_nolink(path, O_WRONLY | O_CREAT | O_EXCL,
	    (mode_t)(mode & 07777)));
}

struct snap_file *
snap_fs_open_append(const char *path)
{
	return file_of(open_nolink(path, O_WRONLY | O_APPEND | O_NOCTTY, 0));
}

long
snap_fs_read(struct snap_file *f, void *buf, size_t len)
{
	ssize_t	n;

	do
		n = read(f->fd, buf, len);
	while (n == -1 && errno == EINTR);
	return (long)n;
}

int
snap_fs_write(struct snap_file *f, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(f->fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
snap_fs_fstat(struct snap_file *f, struct snap_stat *out)
{
	struct stat	st;

	if (fstat(f->fd, &st) == -1)
		return -1;
	stat_from(&st, out);
	return 0;
}

int
snap_fs_fsync(struct snap_file *f)
{
	return fsync(f->fd);
}

int
snap_fs_close(struct snap_file *f)
{
	int	rc;

	if (f == NULL)
		return 0;
	rc = close(f->fd);
	free(f);
	return rc;
}

int
snap_fs_clone(struct snap_file *src, struct snap_file *dst)
{
#if defined(__linux__) && defined(FICLONE)
	return ioctl(dst->fd, FICLONE, src->fd);
#else
	errno = EOPNOTSUPP;
	return -1;
#endif
}

int
snap_fs_copy(struct snap_file *src, struct snap_file *dst)
{
#if defined(__linux__)
	ssize_t	n;

	/* 1 GiB at a time: a file is at most file_bytes (512 MiB) */
	while ((n = copy_file_range(src->fd, NULL, dst->fd, NULL,
	    (size_t)1 << 30, 0)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
	}
	return 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}


int
snap_fs_mkdir(const char *path, uint32_t mode)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	int		 fd, rc;

	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	rc = mkdirat(fd, leaf, (mode_t)(mode & 07777));
	close_keep_errno(fd);
	return rc;
}

static int
remove_at(const char *path, int flags)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	int		 fd, rc;

	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	rc = unlinkat(fd, leaf, flags);
	close_keep_errno(fd);
	return rc;
}

int
snap_fs_lchown(const char *path, uint32_t uid, uint32_t gid)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	int		 fd, rc;

	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	rc = fchownat(fd, leaf, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW);
	close_keep_errno(fd);
	return rc;
}

int
snap_fs_rmdir(const char *path)
{
	return remove_at(path, AT_REMOVEDIR);
}

int
snap_fs_unlink(const char *path)
{
	return remove_at(path, 0);
}

/* renameat2(2) through libc when it has it, else the system call. */
static int
rename2(int ffd, const char *from, int tfd, const char *to, unsigned flags)
{
#if defined(__linux__) && defined(SYS_renameat2)
	return (int)syscall(SYS_renameat2, ffd, from, tfd, to, flags);
#else
	(void)ffd;
	(void)from;
	(void)tfd;
	(void)to;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

/*
 * A rename without RENAME_NOREPLACE (an older kernel, some filesystems):
 * a hard link cannot replace either, then the old name goes.  A folder
 * cannot be linked: its name is looked at first (one call between the
 * look and the rename).
 */
static int
rename_new_by_link(int ffd, const char *from, int tfd, const char *to)
{
	struct stat	st;

	if (fstatat(ffd, from, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return linkat(ffd, from, tfd, to, 0) == -1 ? -1 :
		    unlinkat(ffd, from, 0);
	if (fstatat(tfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return errno == ENOENT ? renameat(ffd, from, tfd, to) : -1;
}

/* from renamed to to, both folders opened without a link on the way;
 * flags 0, RENAME_NOREPLACE or RENAME_EXCHANGE (snap/fs.h). */
static int
rename_flags(const char *from, const char *to, unsigned flags)
{
	char		 fname[FS_PATH_MAX], tname[FS_PATH_MAX];
	const char	*fleaf, *tleaf;
	int		 ffd, tfd, rc;

	if ((ffd = open_parent(from, fname, &fleaf)) == -1)
		return -1;
	if ((tfd = open_parent(to, tname, &tleaf)) == -1) {
		close_keep_errno(ffd);
		return -1;
	}
	if (flags == 0)
		rc = renameat(ffd, fleaf, tfd, tleaf);
	else if ((rc = rename2(ffd, fleaf, tfd, tleaf, flags)) == -1 &&
	    flags == RENAME_NOREPLACE && (errno == EINVAL || errno == ENOSYS))
		rc = rename_new_by_link(ffd, fleaf, tfd, tleaf);
	else if (rc == -1 && (errno == EINVAL || errno == EOPNOTSUPP))
		errno = ENOSYS;	/* no swap here: the caller's other way */
	close_keep_errno(ffd);
	close_keep_errno(tfd);
	return rc;
}

int
snap_fs_rename(const char *from, const char *to)
{
	return rename_flags(from, to, 0);
}

int
snap_fs_rename_new(const char *from, const char *to)
{
	return rename_flags(from, to, RENAME_NOREPLACE);
}

int
snap_fs_exchange(const char *a, const char *b)
{
	if (no_exchange) {
		errno = ENOSYS;
		return -1;
	}
	return rename_flags(a, b, RENAME_EXCHANGE);
}

int
snap_fs_move_checked(const char *path, const char *aside,
    const struct snap_stat *was)
{
	struct snap_stat	 st;

	if (snap_fs_lstat(path, &st) == -1)
		return -1;
	if (!snap_fs_same(&st, was, SNAP_SAME_CTIME)) {
		errno = ESTALE;
		return -1;
	}
	if (snap_fs_rename_new(path, aside) == -1)
		return -1;
	/* what was renamed is what was looked at: else it goes back */
	if (snap_fs_lstat(aside, &st) == -1)
		return -1;
	if (!snap_fs_same(&st, was, 0)) {
		(void)snap_fs_rename_new(aside, path);
		errno = ESTALE;
		return -1;
	}
	return 0;
}

/*
 * chmod(2) follows links, and so does fchmodat() of Linux before 6.6
 * (fchmodat2).  The entry is opened O_PATH|O_NOFOLLOW (no link anywhere
 * on its path), refused when it is a link itself, and the mode set on
 * that very inode through /proc/self/fd (a magic link to the open file,
 * not a path walk; as glibc's fchmodat(AT_SYMLINK_NOFOLLOW) does).
 * Without /proc, a file or folder is opened for reading (never a device
 * or fifo) and checked to be the same inode, then fchmod.
 */
int
snap_fs_chmod(const char *path, uint32_t mode)
{
	char		 proc[64];
	struct stat	 st, st2;
	int		 fd, fd2, rc;

	if ((fd = open_nolink(path, O_PATH | O_NOFOLLOW, 0)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		goto fail;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((rc = chmod(proc, (mode_t)(mode & 07777))) == 0 ||
	    errno != ENOENT) {
		close_keep_errno(fd);
		return rc;
	}
	/* no /proc */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		errno = EOPNOTSUPP;
		goto fail;
	}
	if ((fd2 = open_nolink(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0), 0)) == -1)
		goto fail;
	if (fstat(fd2, &st2) == -1) {
		close_keep_errno(fd2);
		goto fail;
	}
	if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd2);
		errno = ESTALE;		/* replaced meanwhile */
		goto fail;
	}
	rc = fchmod(fd2, (mode_t)(mode & 07777));
	close_keep_errno(fd2);
	close_keep_errno(fd);
	return rc;
fail:
	close_keep_errno(fd);
	return -1;
}

long
snap_fs_readlink(const char *path, char *buf, size_t len)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	ssize_t		 n;
	int		 fd;

	if (len == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	n = readlinkat(fd, leaf, buf, len);
	close_keep_errno(fd);
	if (n == -1)
		return -1;
	if ((size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[n] = '\0';
	return (long)n;
}

int
snap_fs_symlink(const char *target, const char *path)
{
	char		 name[FS_PATH_MAX];
	const char	*leaf;
	int		 fd, rc;

	if ((fd = open_parent(path, name, &leaf)) == -1)
		return -1;
	rc = symlinkat(target, fd, leaf);
	close_keep_errno(fd);
	return rc;
}

int
snap_fs_fsync_dir(const char *path)
{
	int	fd, rc;

	if ((fd = open_nolink(path, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return -1;
	rc = fsync(fd);
	close_keep_errno(fd);
	return rc;
}

int
snap_fs_sync_fs(const char *path)
{
#if defined(__linux__)
	int	fd, rc;

	if ((fd = open_nolink(path, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return -1;
	rc = syncfs(fd);
	close_keep_errno(fd);
	return rc;
#else
	int	fd;

	if ((fd = open_nolink(path, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return -1;
	close(fd);
	sync();
	return 0;
#endif
}

int
snap_fs_dirstat(struct snap_dir *d, struct snap_stat *out)
{
	struct stat	st;

	if (fstat(dirfd(d->d), &st) == -1)
		return -1;
	stat_from(&st, out);
	return 0;
}
