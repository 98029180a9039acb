/*
 * Finding the seccomp profile of a session.  The profile itself is data
 * (contrib/seccomp.json); podman hands it to the OCI runtime, which loads
 * it before the enforcer, the container's first process, starts.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/paths.h"
#include "session/seccomp.h"

#ifndef AISB_SECCOMP_PROFILE
#define AISB_SECCOMP_PROFILE	"/usr/local/share/aisb/seccomp.json"
#endif

/*
 * 0 when path is a readable regular file that only its owner and group
 * can rewrite; 1 when it is absent; -1 with err when it is there but
 * unusable, which stops the search: a broken profile is not silently
 * replaced by another one.
 */
static int
usable(const char *path, char *err, size_t errlen)
{
	struct stat	 st;

	if (stat(path, &st) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		snprintf(err, errlen, "seccomp profile %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "seccomp profile %s: not a regular file",
		    path);
		return -1;
	}
	if (st.st_mode & S_IWOTH) {
		snprintf(err, errlen, "seccomp profile %s: writable by every "
		    "user (mode %03o); chmod o-w it", path,
		    (unsigned)(st.st_mode & 0777));
		return -1;
	}
	if (access(path, R_OK) == -1) {
		snprintf(err, errlen, "seccomp profile %s: %s", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
launch_seccomp_profile(char *buf, size_t len, char *err, size_t errlen)
{
	char	 built[PATH_MAX];
	int	 rc;

	if (launch_beside_self(LAUNCH_SECCOMP_BUILT, built,
	    sizeof(built)) == -1)
		built[0] = '\0';
	if (built[0] != '\0') {
		if ((rc = usable(built, err, errlen)) == -1)
			return -1;
		if (rc == 0) {
			if ((size_t)snprintf(buf, len, "%s", built) >= len)
				goto toolong;
			return 0;
		}
	}
	if ((rc = usable(AISB_SECCOMP_PROFILE, err, errlen)) == -1)
		return -1;
	if (rc == 0) {
		if ((size_t)snprintf(buf, len, "%s", AISB_SECCOMP_PROFILE) >=
		    len)
			goto toolong;
		return 0;
	}
	snprintf(err, errlen, "no seccomp profile: looked for %s%s%s; "
	    "build it (make) or install it (make install); aisb runs no "
	    "session without it", built[0] != '\0' ? built : "",
	    built[0] != '\0' ? " and " : "", AISB_SECCOMP_PROFILE);
	return -1;
toolong:
	snprintf(err, errlen, "seccomp profile path too long");
	return -1;
}
