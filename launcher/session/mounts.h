/*
 * --mount SRC:DST[:ro|rw] (config mount:, AISB_MOUNT; never a project
 * config): more of the host beside the workspace, for an agent's skills
 * and plugins (docs/launcher.md, "Mounts").  Read-only unless :rw.
 *
 * Refused (78, nothing started): more than LAUNCH_MOUNT_MAX mounts; a
 * path over LAUNCH_MOUNT_PATH_MAX bytes, not absolute, with a "." or
 * ".." component, a doubled or trailing '/', a ',' or ':' (podman's
 * separators) or a control byte; a SRC that does not exist, that is the
 * workspace, inside it (its git folders read-write again) or above it,
 * or inside aisb's state folder; a DST that is "/", over, inside or above
 * aisb's own paths (LAUNCH_RUN_DIR, the enforcer), /proc, /sys, /dev,
 * the workspace or the home itself (inside the home is fine); a
 * read-write SRC holding a .git (its hooks would be the command's).
 * Rootful, each SRC is reached through an idmapped mount like the
 * workspace (ids.h), in the session folder.
 */
#ifndef AISB_SESSION_MOUNTS_H
#define AISB_SESSION_MOUNTS_H

#include <stddef.h>

#define LAUNCH_MOUNT_MAX	16	/* mounts of one session */
#define LAUNCH_MOUNT_PATH_MAX	1024	/* bytes of SRC or DST */

struct launch_ids;
struct launch_mounts;
struct launch_opts;

/*
 * One SRC:DST[:ro|rw] by its grammar alone: 0 with src and dst (each
 * LAUNCH_MOUNT_PATH_MAX + 1 bytes, may be NULL) and *ro, or -1 with err.
 */
int	 launch_mount_spec(const char *spec, char *src, char *dst, int *ro,
	    char *err, size_t errlen);
/*
 * o's --mount entries checked against the host and the session (ws the
 * workspace's real path, state aisb's state folder) and appended to m;
 * rootful (ids MAPPED), each SRC idmapped at sdir/mounts/N first unless
 * preview (a dry run: the paths only).  *made counts the idmapped
 * mounts made (launch_mounts_detach undoes them, also after an error).
 * 0, or -1 with err.
 */
int	 launch_mounts_user(const struct launch_opts *o, const char *ws,
	    const char *state, const struct launch_ids *ids, const char *sdir,
	    int preview, struct launch_mounts *m, size_t *made, char *err,
	    size_t errlen);
/* The first n idmapped mounts under sdir/mounts detached (aisb clean:
 * all there may be), the folder removed: how many were mounted. */
size_t	 launch_mounts_detach(const char *sdir, size_t n);

#endif
