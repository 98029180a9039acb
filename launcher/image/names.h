/*
 * The names and versions a session's image is made of, one grammar each,
 * for every place they come from: the flags and config files
 * (session/options.c), the agent recipes (agent.c), the image spec
 * (image.c) and the tools' install sessions (tools.c).  What passes is
 * safe in an argv and in a Containerfile: no blank, quote, shell or
 * option character, never a leading '-'.
 */
#ifndef AISB_IMAGE_NAMES_H
#define AISB_IMAGE_NAMES_H

#include <stddef.h>

#define LAUNCH_PACKAGE_NAME_MAX	128	/* bytes of a Debian package name */
#define LAUNCH_TOOL_MAX		214	/* bytes of an npm or pip name (npm's
					   limit) */
#define LAUNCH_VERSION_MAX	64	/* bytes of one exact version */
#define LAUNCH_ENV_NAME_MAX	255	/* bytes of a variable's name */
#define LAUNCH_HOMEDIR_MAX	127	/* bytes of a folder under the home */
#define LAUNCH_AGENT_NAME_MAX	32	/* bytes of an agent's name */

/*
 * npm: a package name as npm's validate-npm-package-name takes new names
 * (lower case, URL-safe, @scope/name), and an exact semver version,
 * X.Y.Z[-pre][+build]: no range, tag or 'v', and no leading zero in X, Y
 * or Z (semver 2.0.0, item 2: "01.2.3" is not a version).  1 or 0.
 */
int	 launch_npm_name_ok(const char *name);
int	 launch_npm_version_ok(const char *ver);
/* X.Y.Z alone, as above (a Node release). */
int	 launch_node_version_ok(const char *ver);
/* Where the version's '@' is in "[@scope/]name@version", or NULL. */
const char *launch_npm_at(const char *entry);
/* "name@X.Y.Z": 0, or -1 with err naming the part that is wrong. */
int	 launch_npm_entry_ok(const char *entry, char *err, size_t errlen);

/*
 * pip: a PEP 508 name (letters, digits, '.', '_', '-', starting and
 * ending with a letter or digit, so "name-" is not one), and an exact
 * PEP 440 version: a digit first, then letters, digits and . ! + _ -
 * (the separators PEP 440 admits), no wildcard.  1 or 0.
 */
int	 launch_pip_name_ok(const char *name, size_t len);
int	 launch_pip_version_ok(const char *ver);
/* "name==version": 0, or -1 with err. */
int	 launch_pip_entry_ok(const char *entry, char *err, size_t errlen);

/*
 * A Debian package name (Policy 5.6.1): at least two of lower case
 * letters, digits, + - ., starting with a letter or digit.  Also a
 * suite's name.  1 or 0.
 */
int	 launch_deb_package_ok(const char *name);

/*
 * An environment variable's name: letters, digits, '_', no digit first,
 * len bytes (at most LAUNCH_ENV_NAME_MAX).  1 or 0.
 */
int	 launch_env_name_ok(const char *name, size_t len);

/*
 * A folder under the sandbox's home: relative ("a/b"), each part of
 * letters, digits, . _ -, none empty, "." or "..", no '/' at either end.
 * 1 or 0.
 */
int	 launch_homedir_ok(const char *path);

/*
 * An agent recipe's name: a lower-case letter or digit, then those and
 * - _ . (at most LAUNCH_AGENT_NAME_MAX bytes).  1 or 0.
 */
int	 launch_agent_name_ok(const char *name);

#endif
