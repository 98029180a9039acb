/*
 * The state folder, folders, random names, envp, and the files beside
 * the aisb executable (paths.h).
 */
#include "config.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/paths.h"

int
launch_random_hex(char *out, size_t nhex)
{
	unsigned char	 b[64];
	size_t		 i, n = nhex / 2;
	ssize_t		 r;

	if (n > sizeof(b))
		return -1;
	while ((r = getrandom(b, n, 0)) == -1 && errno == EINTR)
		;
	if (r != (ssize_t)n)
		return -1;
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	explicit_bzero(b, sizeof(b));
	return 0;
}

int
launch_mkdirs(char *path)
{
	char	*p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) == -1 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

int
launch_state_dir(char **envp, char *out, size_t len)
{
	const char	*xdg = launch_getenv(envp, "XDG_STATE_HOME", 14);
	const char	*home = launch_getenv(envp, "HOME", 4);
	int		 n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(out, len, "%s/aisb", xdg);
	else if (home != NULL && home[0] == '/')
		n = snprintf(out, len, "%s/.local/state/aisb", home);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* name in $var, else in ~/fallback: 0 or -1. */
static int
xdg_home(char **envp, const char *var, const char *fallback,
    const char *name, char *out, size_t len)
{
	const char	*xdg = launch_getenv(envp, var, strlen(var));
	const char	*home = launch_getenv(envp, "HOME", 4);
	int		 n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(out, len, "%s/%s", xdg, name);
	else if (home != NULL && home[0] == '/')
		n = snprintf(out, len, "%s/%s/%s", home, fallback, name);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
launch_config_home(char **envp, const char *name, char *out, size_t len)
{
	return xdg_home(envp, "XDG_CONFIG_HOME", ".config", name, out, len);
}

int
launch_cache_home(char **envp, const char *name, char *out, size_t len)
{
	return xdg_home(envp, "XDG_CACHE_HOME", ".cache", name, out, len);
}

const char *
launch_getenv(char **envp, const char *name, size_t namelen)
{
	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, name, namelen) == 0 &&
		    (*envp)[namelen] == '=')
			return *envp + namelen + 1;
	return NULL;
}

int
launch_beside_self(const char *name, char *buf, size_t len)
{
	char	 self[PATH_MAX], *slash;
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return -1;
	self[n] = '\0';
	if (name == NULL)
		return (size_t)snprintf(buf, len, "%s", self) < len ? 0 : -1;
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	return (size_t)snprintf(buf, len, "%s/%s", self, name) < len ? 0 : -1;
}

int
launch_on_path(const char *name)
{
	const char	*path = getenv("PATH"), *p, *e;
	char		 buf[PATH_MAX];

	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	for (p = path; *p != '\0'; p = *e == ':' ? e + 1 : e) {
		e = p + strcspn(p, ":");
		if (e == p)
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p),
		    p, name) < sizeof(buf) && access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}
