/*
 * What an install of npm or pip tools says when it cannot work, and
 * why (install_why.c): before any image is built, the sources of a
 * derived install policy resolved as the gate would judge them; after a
 * failed install session, what its gate refused or could not reach, the
 * fix, and the tool's own log kept in the session folder.
 */
#ifndef AISB_IMAGE_INSTALL_WHY_H
#define AISB_IMAGE_INSTALL_WHY_H

#include <stddef.h>

/*
 * A policy file used instead of the derived ones (e.g. to add a host):
 * the option install_policy's variable, read here too by aisb image build
 * and npm view, which resolve no session options.
 */
#define LAUNCH_INSTALL_POLICY_ENV	"AISB_INSTALL_POLICY"
/* How to give the install sessions a policy of one's own. */
#define LAUNCH_INSTALL_POLICY_HOW "--install-policy FILE (install_policy: " \
	"in ~/.config/aisb/config.yaml, AISB_INSTALL_POLICY)"

/*
 * The sources of the derived install policies, resolved on this host and
 * judged against the denied ranges (policytools/reach.h): npm's registry
 * URL (NULL: no npm tools), and with pip its index-url, extra-index-url
 * and find-links (pipvals[0..2], words of http(s) URLs; all NULL: pip's
 * default index).  0 when each could be reached; -1 with err naming the
 * source, the reason (name not found, the address and its range) and the
 * fix, when one cannot: the derived policy would fail there, after the
 * image builds.
 */
int	 launch_install_preflight(const char *registry, int pip,
	    const char *const *pipvals, char *err, size_t errlen);

/*
 * The same for spec's tools, their sources derived as the install does
 * (npm's registry asked from the root folder, so that no project's
 * .npmrc speaks), unless the user gave an install policy (spec's, or
 * LAUNCH_INSTALL_POLICY_ENV): called before any image of theirs is
 * built.  0, or -1 with err.
 */
struct launch_image_spec;
int	 launch_tools_preflight(const struct launch_image_spec *, char *err,
	    size_t errlen);

/*
 * The failure of the install session sid (what: "npm install"), status
 * st, as err: what the session's gate denied or failed (its audit log),
 * the fix, and with logs (a folder of the tool's logs in the scratch, or
 * NULL) those logs moved into the session folder, named.  serr: the
 * session's last line, when there was no session.
 */
void	 launch_install_failed(const char *kind, const char *what, int st,
	    const char *sid, const char *serr, const char *logs, char *err,
	    size_t errlen);

#endif
