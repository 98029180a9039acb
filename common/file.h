/*
 * Whole small files, read with a bound, for the programs' configuration
 * and state files.
 */
#ifndef AISB_FILE_H
#define AISB_FILE_H

#include <stddef.h>

/*
 * A regular file of at most max bytes, whole, into a new NUL-terminated
 * buffer (its length in *lenp).  NULL with "path: why" in err when it
 * cannot be opened or read, is not a regular file, or is larger.
 */
char	*file_read_bounded(const char *path, size_t max, size_t *lenp,
	    char *err, size_t errlen);
/* The same for name in the folder dirfd (AT_FDCWD: name is a path);
 * path names the file in messages. */
char	*file_read_bounded_at(int dirfd, const char *name, const char *path,
	    size_t max, size_t *lenp, char *err, size_t errlen);

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

#endif
