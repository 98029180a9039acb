/*
 * After a session's command was not found: which Debian package has it
 * (pkgof.c).  The enforcer, inside the container, knows only that the
 * name is on no PATH folder of the image; it used to suggest the name
 * itself as a package (`--package ps`, when ps is in procps, and apt then
 * failed the build with status 100).  The launcher knows more: it asks
 * the image whether the command is missing, and the host's dpkg database
 * which package installs it, and says "unknown" when the host does not
 * have it either.
 */
#ifndef AISB_IMAGE_PKGOF_H
#define AISB_IMAGE_PKGOF_H

#include <stddef.h>
#include <stdio.h>

#include "host/facts.h"

/*
 * The Debian package that installs the command name in a folder Debian
 * puts commands in (/usr/bin, /bin, /usr/sbin, /sbin, /usr/games), from
 * `dpkg-query -S` on this host, into pkg: 1; 0 when the host's dpkg
 * database has none (or there is no dpkg), pkg "".  name must be a bare
 * command name.
 */
int	 launch_package_of(const char *name, char *pkg, size_t len);

/*
 * The hint after a session's command exited 127: when argv0 is a bare
 * name that image (podman run of `command -v`, no network, under the
 * runtime and limits of f) does not have, one line on out with the
 * package to add (launch_package_of) or that it is unknown here.
 * Nothing when argv0 is a path, the image has the command (the 127 was
 * the command's own), or the image cannot be asked.
 */
void	 launch_missing_command_hint(const char *podman,
	    const struct launch_host_facts *f, const char *image,
	    const char *argv0, FILE *out);

#endif
