/*
 * The files aisb reads from a workspace for its sessions, watched across
 * bind sessions: the command of such a session writes the workspace, and
 * what it wrote there must not choose the next session's settings
 * (docs/launcher.md, "Files a session may not choose").  A file a
 * session created, changed or deleted is read again only once the user
 * has accepted it: aisb trust FILE.
 */
#ifndef AISB_SESSION_TRUST_H
#define AISB_SESSION_TRUST_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/* Files watched in one session, at most: project config, policy, user's. */
#define LAUNCH_TRUST_FILES	4
/* A file's state: "absent", "sha256:<64 hex>", "link-..." and the like. */
#define LAUNCH_TRUST_STATE	96

struct launch_trust {
	char	 dir[PATH_MAX];			/* the markers' folder */
	size_t	 n;
	struct {
		char	 path[PATH_MAX];	/* absolute, its folder real */
		char	 marker[64];		/* name in dir */
		char	 before[LAUNCH_TRUST_STATE];
	} f[LAUNCH_TRUST_FILES];
};

/*
 * Before path is read for a session (the project config, the policy,
 * the user config): -1 with err (what, which session, how to accept it)
 * when a session created, changed or deleted it and the user has not
 * accepted that yet, or a running session is changing it; 0 otherwise,
 * also when a change was undone since (its marker then goes).  envp
 * gives the state folder.
 */
int	 launch_trust_check(char **envp, const char *path, char *err,
	    size_t errlen);

/*
 * At a bind session's start, before its container: the state of each of
 * files[0..nfiles) (those aisb read for it; NULL entries skipped) that
 * lies in workspace, at most LAUNCH_TRUST_FILES, recorded in a marker
 * that names the session and its launcher (so that a launcher killed
 * before its end leaves the marker behind, and the check above
 * compares).  0, or -1 with err: the session does not start.
 */
int	 launch_trust_begin(struct launch_trust *, char **envp,
	    const char *workspace, const char *const *files, size_t nfiles,
	    const char *session, char *err, size_t errlen);

/*
 * At its end, after the container: each file compared with its state at
 * the start.  Unchanged: its marker goes.  Changed: the marker stays,
 * with the new state, and a line on out says which file, how, and the
 * command that accepts it.  The number of files changed.
 */
int	 launch_trust_end(struct launch_trust *, const char *session, FILE *out);

/*
 * aisb trust PATH: the user accepts path as it is now; the markers of
 * the sessions that changed it go, and a line on out says what was
 * accepted.  0; 1 when no session had changed it; -1 with err (a
 * session still running is changing it, the folder cannot be read).
 */
int	 launch_trust_accept(char **envp, const char *path, FILE *out,
	    char *err, size_t errlen);

#endif
