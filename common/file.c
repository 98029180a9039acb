/*
 * Whole small files, read with a bound or replaced at once (file.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

static char	*read_at(int, const char *, const char *, int, size_t,
		    size_t *, char *, size_t);

char *
file_read_bounded(const char *path, size_t max, size_t *lenp, char *err,
    size_t errlen)
{
	return read_at(AT_FDCWD, path, path, 0, max, lenp, err, errlen);
}

char *
file_read_bounded_at(int dirfd, const char *name, const char *path,
    size_t max, size_t *lenp, char *err, size_t errlen)
{
	return read_at(dirfd, name, path, 0, max, lenp, err, errlen);
}

char *
file_read_in(const char *dir, const char *name, size_t max, size_t *lenp,
    char *err, size_t errlen)
{
	char	path[PATH_MAX];

	if (file_path_join(path, sizeof(path), dir, name) == -1) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		errno = ENAMETOOLONG;
		return NULL;
	}
	return read_at(AT_FDCWD, path, path, O_NOFOLLOW, max, lenp, err,
	    errlen);
}

int
file_path_join(char *out, size_t len, const char *dir, const char *name)
{
	int	n = snprintf(out, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
file_dir_open(const char *path, const char **name)
{
	char		 dir[PATH_MAX];
	const char	*slash = strrchr(path, '/');
	size_t		 n;
	int		 fd;

	*name = path;
	if (slash == NULL)
		n = 0;
	else
		n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir))
		return AT_FDCWD;
	if (n == 0)
		snprintf(dir, sizeof(dir), ".");
	else {
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return AT_FDCWD;
	*name = slash != NULL ? slash + 1 : path;
	return fd;
}

/* The readers above, with oflags added to the open; errno says why not. */
static char *
read_at(int dirfd, const char *name, const char *path, int oflags,
    size_t max, size_t *lenp, char *err, size_t errlen)
{
	char	*buf;
	int	 fd, e;

	/* O_NONBLOCK: a FIFO in the file's place must not hang the open */
	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK | oflags)) == -1) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	buf = file_read_fd(fd, path, max, lenp, err, errlen);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}

char *
file_read_fd(int fd, const char *path, size_t max, size_t *lenp, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 e;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		e = EINVAL;
		goto fail;
	}
	if ((uintmax_t)st.st_size > max) {
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		e = EFBIG;
		goto fail;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		goto fail;
	}
	/* Reads to EOF, but never past what was allocated; from the start
	 * whatever the descriptor's offset. */
	while (len < (size_t)st.st_size) {
		n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
fail:
	free(buf);
	errno = e;
	return NULL;
}

int
file_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 w;

	while (len > 0) {
		if ((w = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int
file_write_atomic(const char *path, const void *data, size_t len,
    mode_t mode, gid_t group)
{
	char	 tmp[PATH_MAX];
	int	 fd, e;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* a name of its own: two writers never share a temporary */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	if (file_write_all(fd, data, len) == -1 ||
	    (group != (gid_t)-1 && fchown(fd, (uid_t)-1, group) == -1) ||
	    fchmod(fd, mode) == -1 || fsync(fd) == -1) {
		e = errno;
		(void)close(fd);
		goto fail;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno;
		goto fail;
	}
	return 0;
fail:
	(void)unlink(tmp);
	errno = e;
	return -1;
}
