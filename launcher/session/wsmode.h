/*
 * The workspace as a session sees it, beyond the one mount of it
 * (docs/launcher.md, "The workspace"): in a direct session its
 * repositories guarded (gitguard.h) and the user's protected paths
 * read-only (protect.h); a read-only or quarantined session's workspace
 * mounted read-only (a quarantine warns of what runs on its own there);
 * the user's --mount entries beside it (mounts.h).  The one place that
 * puts these mounts together, for the session and its dry run alike.
 */
#ifndef AISB_SESSION_WSMODE_H
#define AISB_SESSION_WSMODE_H

#include <limits.h>
#include <stddef.h>

#include "session/podman.h"
#include "session/protect.h"
#include "session/wsscan.h"

struct launch_gitguard;
struct launch_ids;
struct launch_opts;

struct launch_wsmode {
	char			 ws[PATH_MAX];	/* the workspace's real path */
	char			 sdir[PATH_MAX];
	struct launch_wsscan	 scan;
	int			 scanned;	/* direct: for the end's list */
	struct launch_gitguard	*git;
	struct launch_gitpaths	 gitpaths;	/* protect.h */
	struct launch_mounts	 mounts;	/* for launch_run_src */
	size_t			 umade;		/* --mount idmapped, made */
};

/*
 * w for a session of o whose folder is sdir ("<session>" with preview,
 * a dry run: nothing is made) and whose workspace podman mounts from
 * clone (the idmapped clone, rootful) or the workspace itself (NULL).
 * 0, or an exit code (78: the workspace cannot be guarded, or a mount
 * is refused; 77: the host said no) after err is filled.
 */
int	 launch_wsmode_prepare(struct launch_wsmode *w,
	    const struct launch_opts *o, const struct launch_ids *ids,
	    const char *sdir, const char *clone, int preview, char *err,
	    size_t errlen);
/*
 * The end: the mounts undone and, when the command ran (ran: the
 * container started, and is gone), the git guard's end and the list of
 * what runs on its own.  id names the session.
 */
void	 launch_wsmode_end(struct launch_wsmode *w,
	    const struct launch_opts *o, const char *id, int ran);
void	 launch_wsmode_free(struct launch_wsmode *w);

#endif
