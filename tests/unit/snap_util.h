/*
 * Helpers of the snap/ unit tests: temporary trees and a dump of a tree
 * (independent of snap/: readdir and the bytes themselves) to compare
 * trees exactly.
 */
#ifndef AISB_TEST_SNAP_UTIL_H
#define AISB_TEST_SNAP_UTIL_H

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TU	static __attribute__((unused))
/* snprintf that never cuts silently */
#define xsnprintf(b, n, ...) do {					\
	if (snprintf((b), (n), __VA_ARGS__) >= (int)(n))		\
		abort();						\
} while (0)

/* base/rel with the parent folders made first; content NUL-terminated. */
TU void
put(const char *base, const char *rel, const char *content, mode_t mode)
{
	char	path[4096], *s;
	int	fd;

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	for (s = path + strlen(base) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(path, 0755);
		*s = '/';
	}
	(void)unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd == -1) {
		fprintf(stderr, "put %s: %s\n", path, strerror(errno));
		abort();
	}
	if (write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		abort();
	close(fd);
	if (chmod(path, mode) == -1)
		abort();
}

TU void
mkd(const char *base, const char *rel, mode_t mode)
{
	char	path[4096];

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		abort();
	if (chmod(path, mode) == -1)
		abort();
}

TU void
lnk(const char *base, const char *rel, const char *target)
{
	char	path[4096];

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	(void)unlink(path);
	if (symlink(target, path) == -1)
		abort();
}

TU char *
at(const char *base, const char *rel)
{
	static char	path[4][4096];
	static int	i;

	i = (i + 1) % 4;
	xsnprintf(path[i], sizeof(path[i]), "%s/%s", base, rel);
	return path[i];
}

TU int
exists(const char *base, const char *rel)
{
	struct stat	st;

	return lstat(at(base, rel), &st) == 0;
}

TU int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends one line per entry under dir (rel ""), sorted:
 * "path type mode size content-or-target". */
TU void
dump_rec(const char *root, const char *rel, char **out, size_t *len)
{
	char		 path[4096], child[4096], buf[8192], line[16384];
	char		*names[1024];
	size_t		 n = 0, i;
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	ssize_t		 r;
	int		 fd, k;

	xsnprintf(path, sizeof(path), "%s%s%s", root, rel[0] ? "/" : "", rel);
	if ((d = opendir(path)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL && n < 1024)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		xsnprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "",
		    names[i]);
		xsnprintf(path, sizeof(path), "%s/%s", root, child);
		if (lstat(path, &st) == -1)
			abort();
		buf[0] = '\0';
		if (S_ISREG(st.st_mode)) {
			if ((fd = open(path, O_RDONLY)) == -1)
				abort();
			r = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[r < 0 ? 0 : r] = '\0';
		} else if (S_ISLNK(st.st_mode)) {
			r = readlink(path, buf, sizeof(buf) - 1);
			buf[r < 0 ? 0 : r] = '\0';
		}
		k = snprintf(line, sizeof(line), "%s %c %04o [%s]\n", child,
		    S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' :
		    S_ISLNK(st.st_mode) ? 'l' : 's',
		    S_ISLNK(st.st_mode) ? 0777 : (unsigned)(st.st_mode & 07777),
		    buf);
		*out = realloc(*out, *len + (size_t)k + 1);
		memcpy(*out + *len, line, (size_t)k + 1);
		*len += (size_t)k;
		if (S_ISDIR(st.st_mode))
			dump_rec(root, child, out, len);
		free(names[i]);
	}
}

/* The whole tree as text; the caller frees. */
TU char *
dump(const char *root)
{
	char	*out = strdup("");
	size_t	 len = 0;

	dump_rec(root, "", &out, &len);
	return out;
}

TU void
rm_rf(const char *path)
{
	char		 child[4096];
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;

	if (lstat(path, &st) == -1)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			xsnprintf(child, sizeof(child), "%s/%s", path, de->d_name);
			rm_rf(child);
		}
		closedir(d);
	}
	rmdir(path);
}

/* A fresh folder under TMPDIR, by its real path (libaisbsnap refuses a
 * link anywhere on a path: a TMPDIR through a link is resolved here);
 * removed by rm_rf. */
TU char *
tmpdir(void)
{
	const char	*t = getenv("TMPDIR");
	char		*p, *r;

	if (asprintf(&p, "%s/aisb-snap.XXXXXX", t != NULL ? t : "/tmp") ==
	    -1 || mkdtemp(p) == NULL || (r = realpath(p, NULL)) == NULL)
		abort();
	free(p);
	return r;
}

#endif
