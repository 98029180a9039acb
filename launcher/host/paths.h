/*
 * Where the launcher keeps and finds things on the host: the state
 * folder, folders made on the way, random names, the environment as
 * passed (envp), and the files that come with aisb, found beside its
 * executable.  Nothing here knows a session, an image or a policy.
 */
#ifndef AISB_HOST_PATHS_H
#define AISB_HOST_PATHS_H

#include <stddef.h>

/* The state folder: $XDG_STATE_HOME/aisb or ~/.local/state/aisb. */
int	 launch_state_dir(char **envp, char *out, size_t len);
/*
 * name in the user's configuration folder, $XDG_CONFIG_HOME/name or
 * ~/.config/name.  0, or -1 when neither is an absolute path or the path
 * does not fit.
 */
int	 launch_config_home(char **envp, const char *name, char *out,
	    size_t len);
/* The same in the user's cache folder: $XDG_CACHE_HOME or ~/.cache. */
int	 launch_cache_home(char **envp, const char *name, char *out,
	    size_t len);
/* mkdir -p with mode 0700 for the parts it creates; path is restored. */
int	 launch_mkdirs(char *path);
/* The ids aisb names sessions with: launch_random_hex of this many. */
#define LAUNCH_ID_HEX		24	/* 96 random bits */
/* nhex random hex digits (nhex even, at most 128) and a NUL.  0 or -1. */
int	 launch_random_hex(char *out, size_t nhex);
/* Finds NAME (namelen bytes) in envp; returns the value or NULL. */
const char *launch_getenv(char **envp, const char *name, size_t namelen);

/*
 * name beside the running aisb executable (the folder of /proc/self/exe)
 * into buf; name NULL: the executable itself.  The one place that asks:
 * make builds the enforcer, the default policy, the seccomp profile and
 * the agent recipes there, and make install installs none of them there,
 * so a file beside aisb means "this aisb runs from its build tree".  0
 * with the path in buf (which may not exist: the caller asks), or -1
 * when it cannot be made.
 */
int	 launch_beside_self(const char *name, char *buf, size_t len);
/*
 * 1 when an executable named name is on PATH (a default PATH when none
 * is set), else 0.
 */
int	 launch_on_path(const char *name);

#endif
