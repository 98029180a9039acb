/*
 * Whole small files, read with a bound (file.h).
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

char *
file_read_bounded(const char *path, size_t max, size_t *lenp, char *err,
    size_t errlen)
{
	return file_read_bounded_at(AT_FDCWD, path, path, max, lenp, err,
	    errlen);
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

char *
file_read_bounded_at(int dirfd, const char *name, const char *path,
    size_t max, size_t *lenp, char *err, size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	/* O_NONBLOCK: a FIFO in the file's place must not hang the open */
	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((uintmax_t)st.st_size > max) {
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		goto fail;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/* Reads to EOF, but never past what was allocated. */
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
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
