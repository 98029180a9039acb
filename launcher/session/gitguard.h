/*
 * Git in a bind session (docs/launcher.md, "Git in a bind session"): the
 * command works in the user's own tree, so without more it could write
 * .git/hooks/ or .git/config (core.fsmonitor, core.hooksPath, filters,
 * credential helpers, include.path...) and the user's next git status
 * would run them.  So every repository of the workspace (its .git, a
 * nested clone's, a bare one, a submodule's and a worktree's git folders
 * under them) is seen inside through a PRIVATE git folder in the session
 * folder: its files (config, HEAD, index, packed-refs, ...) are copies,
 * what git's own work writes into folders (objects, refs, logs, lfs) is
 * the host's, mounted read-write, and hooks/, info/ and every other
 * folder are the host's read-only (an empty one where the host has
 * none); a .git file and objects/info/alternates are read-only too.  So
 * commit, branch, checkout -b, fetch, remote add and push -u work inside,
 * and nothing the command writes is code the host runs:
 *
 *   - at the end, the files git's own work writes (snap_git_back_name:
 *     HEAD, index, packed-refs, ORIG_HEAD, FETCH_HEAD, ...) go back when
 *     the host's copy is still the one copied (else they are kept in the
 *     session folder, and said);
 *   - the config's changes are offered, only the keys that cannot run
 *     code (snap_git_key_back), at a terminal or with the git config
 *     commands that apply them (gitback.c);
 *   - nothing else of the private folder goes back (a rebase's todo
 *     list, commondir, config.worktree, a new hook): it is named.
 *
 * Why a private folder and not podman's overlay of .git: an overlay's
 * upper layer would hold every object a fetch brings (copied back at the
 * end), its lower folder must not change while mounted (the user's own
 * git on the host), and rootless it needs native overlay in the user
 * namespace or fuse-overlayfs.  A private folder costs the copy of a few
 * small files and a handful of bind mounts, whatever the repository's
 * size (measured: docs/launcher.md).
 */
#ifndef AISB_SESSION_GITGUARD_H
#define AISB_SESSION_GITGUARD_H

#include <stddef.h>
#include <stdint.h>

#include "session/wsscan.h"

#define LAUNCH_GIT_REPOS_MAX	64	/* git folders guarded, nested too */
#define LAUNCH_GIT_NODES_MAX	4096	/* their entries copied or mounted */

struct launch_gitguard;
struct launch_mounts;

/*
 * The plan for the repositories scan found in the workspace ws (a real
 * path): their private folders under sdir ("<session>" in a dry run),
 * the mounts from src (the workspace's mount source: the idmapped clone,
 * or ws itself).  Reads the host's git folders; writes nothing.  NULL
 * with err: a .git that is a link, a bound (say so: --snapshot or
 * --read-only guard what a bind session cannot).
 */
struct launch_gitguard *launch_gitguard_new(const char *ws, const char *src,
	    const char *sdir, const struct launch_wsscan *scan, char *err,
	    size_t errlen);
void	 launch_gitguard_free(struct launch_gitguard *);
/* How many git folders it guards. */
size_t	 launch_gitguard_count(const struct launch_gitguard *);
/*
 * Makes the private folders (copies, the empty folder, and on the host
 * the mount points git itself would make: objects/info/alternates empty,
 * logs/), the copies given to uid:gid (the sandbox user's host ids).
 * 0, or -1 with err.
 */
int	 launch_gitguard_make(struct launch_gitguard *, uint32_t uid,
	    uint32_t gid, char *err, size_t errlen);
/* Its mounts appended to m, parents first.  0, or -1 (memory). */
int	 launch_gitguard_mounts(const struct launch_gitguard *,
	    struct launch_mounts *m);
/*
 * The end, once the container is gone: the files back, the config's
 * keys offered (apply: LAUNCH_APPLY_*), what stays said on stderr.
 * id names the session in the question's mark line.
 */
void	 launch_gitguard_end(struct launch_gitguard *, const char *id,
	    int apply);

#endif
