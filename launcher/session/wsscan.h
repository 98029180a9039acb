/*
 * One bounded walk of a bind session's workspace (docs/launcher.md, "Git
 * in a bind session"): what the session guards and what it lists at its
 * end.  It finds every repository git would take (a folder .git, a .git
 * file that points git elsewhere, a bare repository: a folder holding
 * HEAD, objects/ and refs/), the files that run on their own (snap's
 * table, snap_autorun) and the paths the user's protect: list names,
 * each with its identity (device, inode, size, mtime, ctime), so that a
 * second walk after the command says what it created or changed.
 *
 * What is not walked: the inside of a repository's folder (the session
 * guards it whole), node_modules (npm's to judge: a package.json at every
 * depth of it would drown the list), another filesystem mounted in the
 * tree, and links (never followed).  Bounds: LAUNCH_WSSCAN_ENTRIES
 * entries walked, LAUNCH_WSSCAN_DEPTH folders deep, LAUNCH_WSSCAN_KEEP
 * entries kept; past one the walk fails (the caller says so: a
 * repository past the bound would be one left unguarded).
 */
#ifndef AISB_SESSION_WSSCAN_H
#define AISB_SESSION_WSSCAN_H

#include <stddef.h>
#include <stdint.h>

#define LAUNCH_WSSCAN_ENTRIES	1000000	/* entries walked */
#define LAUNCH_WSSCAN_DEPTH	128	/* folders deep */
#define LAUNCH_WSSCAN_KEEP	65536	/* entries kept (found) */

#define LAUNCH_WS_AUTORUN	0x01	/* snap_autorun names it */
#define LAUNCH_WS_PROTECT	0x02	/* a protect: pattern names it */
#define LAUNCH_WS_GITDIR	0x04	/* a folder named .git */
#define LAUNCH_WS_GITFILE	0x08	/* a file named .git (gitdir: ...) */
#define LAUNCH_WS_GITLINK	0x10	/* a link named .git */
#define LAUNCH_WS_BARE		0x20	/* HEAD, objects/, refs/ */

struct launch_wsent {
	char		*rel;		/* relative, '/'-separated */
	unsigned	 flags;		/* LAUNCH_WS_* */
	const char	*why;		/* snap_autorun's reason, or NULL */
	const char	*pattern;	/* the protect: pattern, or NULL */
	int		 isdir;
	uint64_t	 dev, ino, size;
	int64_t		 mtime_ns, ctime_ns;
};

struct launch_wsscan {
	struct launch_wsent	*v;	/* sorted by rel */
	size_t			 n, cap;
	uint64_t		 walked;
};

/*
 * Walks the folder ws (a real path) as above; protect (nprotect, may be
 * 0) are snap_glob patterns.  0, or -1 with err (a bound, a folder that
 * cannot be read, memory).
 */
int	 launch_wsscan(const char *ws, char *const *protect, size_t nprotect,
	    struct launch_wsscan *, char *err, size_t errlen);
void	 launch_wsscan_free(struct launch_wsscan *);
/* The entry at rel, or NULL. */
const struct launch_wsent *launch_wsscan_find(const struct launch_wsscan *,
	    const char *rel);

#endif
