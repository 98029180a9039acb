/*
 * snap/fs.h for Linux and other POSIX systems.  The only file of snap/
 * that includes system headers beyond the C library.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#ifdef __linux__
#include <linux/fs.h>
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

struct snap_file {
	int	fd;
};

struct snap_dir {
	DIR	*d;
};

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
}

int
snap_fs_lstat(const char *path, struct snap_stat *out)
{
	struct stat	st;

	if (lstat(path, &st) == -1)
		return -1;
	stat_from(&st, out);
	return 0;
}

struct snap_dir *
snap_fs_opendir(const char *path)
{
	struct snap_dir	*d;
	int		 fd, e;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return NULL;
	if ((d = malloc(sizeof(*d))) == NULL) {
		close(fd);
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

struct snap_file *
snap_fs_open_read(const char *path)
{
	struct stat	st;
	int		fd, e;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) == -1)
		return NULL;
	/* a fifo opened by mistake must not block; a folder is no file */
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
snap_fs_create(const char *path, uint32_t mode)
{
	return file_of(open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, (mode_t)(mode & 07777)));
}

struct snap_file *
snap_fs_open_append(const char *path)
{
	return file_of(open(path, O_WRONLY | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC));
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
	return mkdir(path, (mode_t)(mode & 07777));
}

int
snap_fs_rmdir(const char *path)
{
	return rmdir(path);
}

int
snap_fs_unlink(const char *path)
{
	return unlink(path);
}

int
snap_fs_rename(const char *from, const char *to)
{
	return rename(from, to);
}

int
snap_fs_chmod(const char *path, uint32_t mode)
{
	struct stat	st;

	/* chmod(2) follows links; a link's own mode means nothing here */
	if (lstat(path, &st) == -1)
		return -1;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return -1;
	}
	return chmod(path, (mode_t)(mode & 07777));
}

long
snap_fs_readlink(const char *path, char *buf, size_t len)
{
	ssize_t	n;

	if (len == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((n = readlink(path, buf, len)) == -1)
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
	return symlink(target, path);
}

int
snap_fs_fsync_dir(const char *path)
{
	int	fd, rc, e;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int
snap_fs_sync_fs(const char *path)
{
#if defined(__linux__)
	int	fd, rc, e;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	rc = syncfs(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
#else
	(void)path;
	sync();
	return 0;
#endif
}
