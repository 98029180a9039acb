/*
 * podman's storage driver, checked and fixed.  A new rootless user's
 * store is made with the vfs driver on hosts whose system storage.conf
 * names none, and vfs copies an image in full for every container:
 * measured on Debian 12 (podman 4.3.1, kernel 6.x), a rootless session of
 * `true` took 10-12 s where the overlay driver, which such a kernel gives
 * unprivileged users natively, takes about what rootful podman takes.
 * aisb doctor says so (launch_storage_check) and `aisb doctor --fix`
 * switches a user whose store holds nothing yet (launch_storage_fix).
 * See docs/launcher.md, "Doctor".
 */
#ifndef AISB_HOST_STORAGE_H
#define AISB_HOST_STORAGE_H

#include <stddef.h>

#include "host/facts.h"

/*
 * The driver of the store podman uses, on aisb doctor's "storage" line:
 * ok for any but vfs; a warning with what it costs and the fix for vfs.
 */
void	 launch_storage_check(struct launch_host_facts *, int verbose);

/*
 * aisb doctor --fix: for a rootless user whose store uses vfs, writes
 * the user's storage.conf (driver = "overlay") when there is none, after
 * `podman system reset` of a store that holds no image, container,
 * volume or network of its own (a store remembers its driver, so even an
 * empty one must be reset), then asks podman whether overlay works and
 * takes the file back if not.  A store with something in it is not
 * touched: the lines say what a reset would delete and what to run.
 * Prints what it did or why not on stdout.  0 when the store uses
 * another driver than vfs now (or did already), -1 otherwise.
 */
int	 launch_storage_fix(char **envp);

#endif
