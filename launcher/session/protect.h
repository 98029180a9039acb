/*
 * What a session says and keeps about files other tools run on their own
 * (docs/launcher.md, "Files that run on their own"), from the walk of
 * wsscan.h and snap's one table of them (snap_autorun):
 *
 *   - a direct session lists, loudly, at its end, each such file (and
 *     each repository, .git file, and path of the user's protect: list)
 *     that the command made or changed: .envrc, .vscode/tasks.json,
 *     .idea/, .pre-commit-config.yaml, .husky/, package.json, Makefile,
 *     .aisb.yaml...; read them before an editor, a shell, git or a build
 *     does;
 *   - the user's protect: patterns (never a project's) are read-only
 *     inside where they exist (a bind mount of each: at most
 *     LAUNCH_PROTECT_MAX), and listed at the end either way;
 *   - a quarantined session warns, before the command runs, of the
 *     repository's hooks, the config keys that run code, and its files
 *     that run on their own.
 */
#ifndef AISB_SESSION_PROTECT_H
#define AISB_SESSION_PROTECT_H

#include <stddef.h>

#include "session/wsscan.h"

#define LAUNCH_PROTECT_MAX	64	/* protected paths mounted read-only */
#define LAUNCH_GITPATHS_MAX	256	/* hooks folders, included configs */
#define LAUNCH_REPORT_MAX	1000	/* lines of the end's list */

struct launch_mounts;

/*
 * What git itself runs or reads as config from the work tree: the
 * folders core.hooksPath names inside it (husky's .husky), the config
 * files inside it that a config includes (include.path =
 * ../.gitconfig), as snap resolves them (snap_git_guarded: every config
 * git reads for the workspace's owner).  Read-only where they exist,
 * listed at the end when made.
 */
struct launch_gitpaths {
	char		**rel;
	unsigned char	 *hooks;	/* a folder of hooks */
	unsigned char	 *existed;	/* at the start */
	size_t		  n;
};

/*
 * gp from the repositories scan found in ws, for the owner owner_uid:
 * owner_gid (whose global git config counts).  0, or -1 with err.
 */
int	 launch_protect_git(struct launch_gitpaths *gp, const char *ws,
	    const struct launch_wsscan *scan, unsigned owner_uid,
	    unsigned owner_gid, char *err, size_t errlen);
void	 launch_gitpaths_free(struct launch_gitpaths *);
/*
 * The protected paths scan found in ws and the paths of gp that exist,
 * read-only from src (the mount source) into m.  0, or -1 with err (more
 * than LAUNCH_PROTECT_MAX protected paths).
 */
int	 launch_protect_mounts(const struct launch_wsscan *,
	    const struct launch_gitpaths *gp, const char *ws, const char *src,
	    struct launch_mounts *m, char *err, size_t errlen);
/*
 * The end of a direct session: ws walked again and compared with before,
 * gp's paths that were missing looked at again; what was made or changed
 * listed on stderr.
 */
void	 launch_protect_report(const struct launch_wsscan *before,
	    const struct launch_gitpaths *gp, const char *ws,
	    char *const *protect, size_t nprotect);
/* --quarantine: the warning before the command runs. */
void	 launch_protect_warn(const struct launch_wsscan *, const char *ws);

#endif
