/*
 * Whole small files, read with a bound or replaced at once, for the
 * programs' configuration and state files, and the path join they use.
 */
#ifndef AISB_FILE_H
#define AISB_FILE_H

#include <sys/types.h>

#include <stddef.h>

/*
 * A regular file of at most max bytes, whole, into a new NUL-terminated
 * buffer (its length in *lenp).  NULL with "path: why" in err when it
 * cannot be opened or read, is not a regular file, or is larger.
 */
char	*file_read_bounded(const char *path, size_t max, size_t *lenp,
	    char *err, size_t errlen);
/* The same for the open descriptor fd (left open; read from its start),
 * path naming it in messages: what a lock holder reads. */
char	*file_read_fd(int fd, const char *path, size_t max, size_t *lenp,
	    char *err, size_t errlen);
/* The same for name in the folder dirfd (AT_FDCWD: name is a path);
 * path names the file in messages. */
char	*file_read_bounded_at(int dirfd, const char *name, const char *path,
	    size_t max, size_t *lenp, char *err, size_t errlen);

/*
 * name in the folder dir (aisb's own state: a session's, a gate's), as
 * file_read_bounded() of dir/name but never through a symbolic link.
 * On NULL, errno says why: ENOENT when there is no such file, EFBIG when
 * it is larger than max, EINVAL when it is not a regular file.
 */
char	*file_read_in(const char *dir, const char *name, size_t max,
	    size_t *lenp, char *err, size_t errlen);

/* dir/name into out[len]: 0, or -1 when it does not fit. */
int	 file_path_join(char *out, size_t len, const char *dir,
	    const char *name);

/*
 * The folder of path, opened O_PATH while the process may still be
 * privileged, so that it can open the file by name (*name, pointing into
 * path) after dropping to a user that may search that folder but not
 * walk the whole path (a root-only home, say).  The descriptor, or
 * AT_FDCWD with *name = path when the folder cannot be opened.
 */
int	 file_dir_open(const char *path, const char **name);

/* All len bytes of buf to fd, across short writes and EINTR: 0, or -1
 * with errno set. */
int	 file_write_all(int fd, const void *buf, size_t len);

/*
 * Replaces path by len bytes of data, whole or not at all: a temporary
 * next to it (path.XXXXXX), mode (and group, unless (gid_t)-1), fsync,
 * rename(2).  0, or -1 with errno; the temporary never stays.
 */
int	 file_write_atomic(const char *path, const void *data, size_t len,
	    mode_t mode, gid_t group);

#endif
