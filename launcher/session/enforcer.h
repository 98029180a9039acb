/*
 * The enforcer a session runs: the host's aisb-enforce, beside aisb,
 * mounted read-only into the container and named its entrypoint, never
 * a file of the image (docs/enforcer.md, "Nothing of the image").
 */
#ifndef AISB_SESSION_ENFORCER_H
#define AISB_SESSION_ENFORCER_H

#include <stddef.h>

/* Where the container sees it: LAUNCH_ENFORCER_IN_CONTAINER (image-t.h). */

/*
 * The variables of the image's environment that podman drops for the
 * whole container (--unsetenv), NULL-terminated: those the static glibc
 * in aisb-enforce reads while it starts, before its main (the tunables
 * and their aliases); docs/enforcer.md says why these and no others.
 */
extern const char *const launch_enforcer_unsetenv[];

/*
 * The enforcer beside the running aisb, its real path into buf, checked
 * by launch_enforcer_check().  0, or -1 with err saying what and how to
 * fix it: a session stops with 77.
 */
int	 launch_enforcer_find(char *buf, size_t len, char *err, size_t errlen);

/*
 * The same file, found but not checked: for a preview, which shows the
 * check's verdict instead of stopping on it.  0, or -1 with err.
 */
int	 launch_enforcer_locate(char *buf, size_t len, char *err,
	    size_t errlen);

/*
 * path is a regular file, executable by every user (the container's
 * root is no host user), writable by no other user, and an ELF
 * executable of this machine without a program interpreter: statically
 * linked, so that the image's loader, libraries, ld.so.preload and LD_*
 * play no part in it.  0, or -1 with err.
 */
int	 launch_enforcer_check(const char *path, char *err, size_t errlen);

#endif
