/*
 * The workspace's writer lock (writer.h).  It is an flock(2) on the
 * workspace's folder itself, opened O_RDONLY: no file is made in the
 * user's tree, and every user's aisb takes the same lock (root under
 * sudo and the user's own rootless sessions exclude each other).  The
 * lock goes with the last descriptor (O_CLOEXEC: no child of aisb
 * carries it), so a killed launcher leaves nothing behind.  Who holds it
 * is written beside, in the user's state folder (writers/KEY: 16 hex
 * digits of the SHA-256 of the workspace's real path), only to be named
 * in a refusal; a holder of another user is named as such.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "host/paths.h"
#include "host/proc.h"
#include "session/writer.h"
#include "snap/snap.h"

extern char **environ;

#define WHO_MAX	256	/* bytes of a writers/KEY file */

/* state/aisb/writers/KEY into out[PATH_MAX], its folder made: 0, -1.
 * KEY is of the real path: one name however the workspace is named. */
static int
who_path(const char *workspace, char *out)
{
	char	 base[PATH_MAX], hex[SNAP_SHA256_HEX + 1], real[PATH_MAX];

	if (realpath(workspace, real) == NULL ||
	    launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    snap_sha256_hex(real, strlen(real), hex) == -1 ||
	    snprintf(out, PATH_MAX, "%s/writers", base) >= PATH_MAX)
		return -1;
	if ((mkdir(base, 0700) == -1 && errno != EEXIST) ||
	    (mkdir(out, 0700) == -1 && errno != EEXIST))
		return -1;
	if (snprintf(out, PATH_MAX, "%s/writers/%.16s", base, hex) >= PATH_MAX)
		return -1;
	return 0;
}

/* Who holds the lock, as far as this user can tell, into err. */
static void
name_holder(const char *workspace, char *err, size_t errlen)
{
	char			 path[PATH_MAX], id[64], e[PATH_MAX + 64];
	char			*text = NULL, *slash;
	size_t			 len;
	long			 pid;
	unsigned long long	 start;

	if (who_path(workspace, path) == 0 &&
	    (slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		text = file_read_in(path, slash + 1, WHO_MAX, &len, e,
		    sizeof(e));
	}
	if (text != NULL && sscanf(text, "%63s %ld %llu", id, &pid,
	    &start) == 3 && pid > 1 && launch_proc_alive((pid_t)pid, start))
		snprintf(err, errlen, "%s is being written by session %s (its "
		    "aisb is pid %ld)", workspace, id, pid);
	else
		snprintf(err, errlen, "%s is being written by a session of "
		    "another user (or by a program holding the folder's "
		    "flock)", workspace);
	free(text);
	snprintf(err + strlen(err), errlen - strlen(err), "; one writing "
	    "session at a time: wait for it to end, or run this one with "
	    "--snapshot (a copy, written back by aisb apply)");
}

int
launch_writer_take(const char *workspace, const char *id, int *fd,
    char *err, size_t errlen)
{
	char	 path[PATH_MAX], who[WHO_MAX];
	int	 n;

	*fd = -1;
	if ((*fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "workspace %s: %s", workspace,
		    strerror(errno));
		return -1;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) == -1) {
		int	 busy = errno == EWOULDBLOCK;

		if (busy)
			name_holder(workspace, err, errlen);
		else
			snprintf(err, errlen, "workspace %s: its writer lock: "
			    "%s", workspace, strerror(errno));
		close(*fd);
		*fd = -1;
		return busy ? 1 : -1;
	}
	/* only to be named: a failure here costs the name, not the lock */
	n = snprintf(who, sizeof(who), "%s %ld %llu\n", id, (long)getpid(),
	    launch_proc_start(getpid()));
	if (who_path(workspace, path) == 0 && n > 0 && n < (int)sizeof(who))
		(void)file_write_atomic(path, who, (size_t)n, 0600,
		    (gid_t)-1);
	return 0;
}

void
launch_writer_release(const char *workspace, int *fd)
{
	char	 path[PATH_MAX];

	if (*fd == -1)
		return;
	if (who_path(workspace, path) == 0)
		(void)unlink(path);
	close(*fd);
	*fd = -1;
}
