/*
 * Policies derived from what the host's tools and a workspace are
 * configured with (derive.c: apt, npm, pip, git; derive_lock.c: lockfiles
 * and tool configurations, --allow-from-lockfile).
 */
#ifndef AISB_POLICYTOOLS_DERIVE_H
#define AISB_POLICYTOOLS_DERIVE_H

#include <stddef.h>
#include <stdio.h>

struct lockfile_hosts;
struct policy;

/*
 * aisb policy derive apt|npm|pip|git: the policy allowing the sources
 * apt (under root), npm, pip or the git remotes of ws are configured
 * with, on out, and the session command that uses it.  0, or -1 after a
 * line on stderr.
 */
int	launch_derive(const char *kind, const char *root, const char *ws,
	    FILE *out);
/*
 * The policy `aisb policy derive npm` prints, written to f, and the
 * registry URL npm is configured with into registry (the install
 * session of image/tools.c uses both).  0, or -1 with a line on stderr.
 */
int	launch_derive_npm(FILE *, char *registry, size_t reglen);
/*
 * The same for pip: the policy `aisb policy derive pip` prints, and pip's
 * index-url, extra-index-url and find-links as pip install would see them
 * into vals[0..2] (malloc'd, the caller frees; NULL: not configured).
 */
int	launch_derive_pip(FILE *, char **vals);
/*
 * aisb policy derive lockfile|env (derive_lock.c): the https hosts of the
 * lockfiles at paths (npaths of them; none: those at the top of ws), or
 * of the tool configurations of ws, root/etc/apt and pip's (env), as a
 * policy on stdout.  The exit status (0, 1, 78), after a line on stderr.
 */
int	 launch_derive_lock(const char *kind, const char *ws, const char *root,
	    char *const *paths, int npaths, int allow_http);
/*
 * --allow-from-lockfile: the https hosts of the lockfiles at the top of
 * ws added to *pp as allow rules; *yaml (freed first) is the merged
 * policy's text, the one the session's gate loads.  gate != NULL: a
 * named gate's policy is never widened: every host must be allowed by
 * *pp already, which stays as it is.  Comment lines (each host and where
 * it was found) to cf unless NULL.  0, or -1 after lines on stderr.
 */
int	 launch_lockfile_apply(const char *ws, const char *gate,
	    struct policy **pp, char **yaml, FILE *cf);
/*
 * derive env's pip and apt parts (derive.c): pip's configured index,
 * extra index and find-links (nothing when none is configured), and the
 * http(s) sources under root/etc/apt, into out tagged with the file
 * indexes given.  0, or -1 after a line on stderr.
 */
int	 launch_derive_env_pip_apt(const char *root,
	    struct lockfile_hosts *out, unsigned pipfile, unsigned aptfile,
	    char *from, size_t fromlen);

#endif
