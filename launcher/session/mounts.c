/*
 * --mount (mounts.h): the grammar of an entry, then each checked against
 * what aisb itself mounts and what the session guards, then the mounts.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/ids.h"
#include "session/mounts.h"
#include "session/options.h"
#include "session/podman.h"

/* A path of the grammar: absolute, canonical, no separator of podman's. */
static const char *
path_why(const char *p, size_t n)
{
	size_t	 i;

	if (n == 0 || p[0] != '/')
		return "not an absolute path";
	if (n > LAUNCH_MOUNT_PATH_MAX)
		return "longer than 1024 bytes";
	for (i = 0; i < n; i++) {
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return "a control byte";
		if (p[i] == ',')
			return "a ',' (podman's option separator)";
		if (p[i] == '/' && (i + 1 == n ? n > 1 : p[i + 1] == '/'))
			return "a doubled or trailing '/'";
		if (p[i] == '/' && p[i + 1] == '.' && (i + 2 == n ||
		    p[i + 2] == '/' || (p[i + 2] == '.' && (i + 3 == n ||
		    p[i + 3] == '/'))))
			return "a '.' or '..' component";
	}
	return NULL;
}

int
launch_mount_spec(const char *spec, char *src, char *dst, int *ro,
    char *err, size_t errlen)
{
	const char	*c1, *c2, *why;
	size_t		 ns, nd;
	int		 r = 1;

	if ((c1 = strchr(spec, ':')) == NULL) {
		snprintf(err, errlen, "mount: '%.64s' is not SRC:DST[:ro|rw]",
		    spec);
		return -1;
	}
	ns = (size_t)(c1 - spec);
	c2 = strchr(c1 + 1, ':');
	nd = c2 != NULL ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
	if (c2 != NULL) {
		if (strcmp(c2 + 1, "rw") == 0)
			r = 0;
		else if (strcmp(c2 + 1, "ro") != 0) {
			snprintf(err, errlen, "mount: '%.64s': after DST comes "
			    ":ro or :rw, and nothing else (no ':' in a path)",
			    spec);
			return -1;
		}
	}
	if ((why = path_why(spec, ns)) != NULL || (why = path_why(c1 + 1,
	    nd)) != NULL) {
		snprintf(err, errlen, "mount: '%.64s': %s", spec, why);
		return -1;
	}
	if (src != NULL)
		snprintf(src, LAUNCH_MOUNT_PATH_MAX + 1, "%.*s", (int)ns, spec);
	if (dst != NULL)
		snprintf(dst, LAUNCH_MOUNT_PATH_MAX + 1, "%.*s", (int)nd,
		    c1 + 1);
	if (ro != NULL)
		*ro = r;
	return 0;
}

/* a is b, inside b or above b (paths of the grammar, or real ones). */
static int
overlaps(const char *a, const char *b)
{
	size_t	 na = strlen(a), nb = strlen(b);

	if (na == 1 || nb == 1)
		return 1;		/* "/" */
	if (na <= nb)
		return strncmp(a, b, na) == 0 && (b[na] == '\0' ||
		    b[na] == '/');
	return strncmp(a, b, nb) == 0 && a[nb] == '/';
}

/* a is b or inside it. */
static int
inside(const char *a, const char *b)
{
	size_t	 nb = strlen(b);

	return strncmp(a, b, nb) == 0 && (a[nb] == '\0' || a[nb] == '/');
}

/* Why DST may not be: NULL when it may. */
static const char *
dst_why(const char *dst, const char *ws)
{
	static const char *const own[] = { LAUNCH_RUN_DIR, "/proc", "/sys",
	    "/dev" };
	size_t	 i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (overlaps(dst, own[i]))
			return "over aisb's own files (the enforcer, its plan "
			    "and env file), /proc, /sys or /dev";
	if (overlaps(dst, ws))
		return "over, inside or above the workspace";
	if (overlaps(LAUNCH_HOME, dst) && !(strncmp(dst, LAUNCH_HOME,
	    sizeof(LAUNCH_HOME) - 1) == 0 && dst[sizeof(LAUNCH_HOME) - 1] ==
	    '/'))
		return "over the home (inside it is fine: " LAUNCH_HOME
		    "/.claude/skills)";
	return NULL;
}

/* Why SRC (a real path) may not be: NULL when it may. */
static const char *
src_why(const char *src, const char *ws, const char *state, int ro)
{
	char		 git[PATH_MAX];
	struct stat	 st;

	if (overlaps(src, ws))
		return "the workspace, inside it or above it (its git folders "
		    "are guarded; mount them, and they are not)";
	if (state != NULL && (inside(src, state) || overlaps(state, src)))
		return "aisb's state folder, or above it";
	if (!ro && snprintf(git, sizeof(git), "%s/.git", src) <
	    (int)sizeof(git) && lstat(git, &st) == 0)
		return "read-write, and a repository (its hooks would be the "
		    "command's): mount it read-only";
	return NULL;
}

int
launch_mounts_user(const struct launch_opts *o, const char *ws,
    const char *state, const struct launch_ids *ids, const char *sdir,
    int preview, struct launch_mounts *m, size_t *made, char *err,
    size_t errlen)
{
	char		 src[LAUNCH_MOUNT_PATH_MAX + 1];
	char		 dst[LAUNCH_MOUNT_PATH_MAX + 1], real[PATH_MAX];
	char		 at[PATH_MAX];
	const char	*why;
	size_t		 i;
	int		 ro;

	*made = 0;
	for (i = 0; i < o->nmounts; i++) {
		if (launch_mount_spec(o->mounts[i].text, src, dst, &ro, err,
		    errlen) == -1)
			return -1;
		if (realpath(src, real) == NULL) {
			snprintf(err, errlen, "%s: mount %s: %s", o->mounts[i].
			    where, src, strerror(errno));
			return -1;
		}
		if ((why = src_why(real, ws, state, ro)) != NULL ||
		    (why = dst_why(dst, ws)) != NULL) {
			snprintf(err, errlen, "%s: mount %s: %s: %s",
			    o->mounts[i].where, o->mounts[i].text, strcmp(src,
			    real) != 0 ? real : src, why);
			return -1;
		}
		/* rootful: the owner's files as the sandbox's, as ws's */
		if (ids != NULL && ids->mode == LAUNCH_IDS_MAPPED) {
			if (snprintf(at, sizeof(at), "%s/mounts/%zu", sdir,
			    i) >= (int)sizeof(at)) {
				snprintf(err, errlen, "%s: path too long", sdir);
				return -1;
			}
			if (!preview && i == 0 && snprintf(real, sizeof(real),
			    "%s/mounts", sdir) < (int)sizeof(real) &&
			    mkdir(real, 0700) == -1 && errno != EEXIST) {
				snprintf(err, errlen, "%s: %s", real,
				    strerror(errno));
				return -1;
			}
			if (!preview) {
				if (realpath(src, real) == NULL ||
				    launch_ids_mount(ids, real, at, err,
				    errlen) == -1)
					return -1;
				(*made)++;
			}
			snprintf(real, sizeof(real), "%s", at);
		}
		if (launch_mounts_add(m, real, dst, ro) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

size_t
launch_mounts_detach(const char *sdir, size_t n)
{
	char	 at[PATH_MAX];
	size_t	 i, k = 0;

	for (i = 0; i < n; i++)
		if (snprintf(at, sizeof(at), "%s/mounts/%zu", sdir, i) <
		    (int)sizeof(at) && launch_ids_umount(at) == 1)
			k++;
	if (n > 0 && snprintf(at, sizeof(at), "%s/mounts", sdir) <
	    (int)sizeof(at))
		(void)rmdir(at);
	return k;
}
