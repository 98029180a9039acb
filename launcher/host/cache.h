/*
 * What podman answers the same way session after session, kept in the
 * state folder so that a session does not ask again: podman's version,
 * where its store lives, and the listing of its images.  Every entry is
 * filed under a key, the SHA-256 of everything the answer depends on
 * (docs/performance.md, "What is cached"); an entry under another key, a
 * file that does not parse, is too large, or is not the user's own is
 * ignored and the question asked again.  The cache only saves time: no
 * decision that keeps a session enforced rests on it.
 */
#ifndef AISB_CACHE_H
#define AISB_CACHE_H

#include <limits.h>
#include <stddef.h>

#define LAUNCH_CACHE_MAX	(64u * 1024)	/* a facts file */
#define LAUNCH_CACHE_KEYHEX	64

struct launch_podman_facts {
	char	 version[32];		/* podman's client version */
	char	 graphroot[PATH_MAX];	/* the store podman uses */
	char	 driver[32];		/* its graph driver ("overlay") */
	char	 volume_path[PATH_MAX];	/* where local volumes live */
};

/*
 * The key of podman's answers for this user: the identity (device, inode,
 * size, mtime, ctime) of the podman binary and of every storage.conf and
 * containers.conf it may read, the environment variables that choose
 * them, and the effective uid.  0 or -1.
 */
int	 launch_cache_podman_key(const char *podman, char **envp,
	    char hex[LAUNCH_CACHE_KEYHEX + 1]);

/*
 * podman's facts: from the cache under the current key, else (or with
 * refresh) from `podman info`, then stored.  0, or -1 with err when
 * podman could not be asked.  Memoised for the process.
 */
int	 launch_cache_podman_facts(const char *podman, char **envp,
	    int refresh, struct launch_podman_facts *, char *err,
	    size_t errlen);

/*
 * The text of `podman images --no-trunc --noheading --format
 * "{{.Repository}}:{{.Tag}} {{.ID}}"` into buf (at most len - 1 bytes and
 * a NUL): from the cache when the store's image list (images.json) is the
 * very file it was when the cached listing was made, else from podman,
 * then stored.  0, or -1 with err (podman failed, or the listing does
 * not fit).
 */
int	 launch_cache_images(const char *podman, char **envp, char *buf,
	    size_t len, char *err, size_t errlen);

/*
 * 1 when the podman volume name has its folder in the store's volume
 * path (a local volume podman made), 0 when not or when unknown.
 */
int	 launch_cache_volume_known(const char *podman, char **envp,
	    const char *name);

/*
 * The SHA-256 of what the open file fd reads from its offset to its end,
 * as hex: 0, or -1 with err (a read error, or more than max bytes).
 */
int	 launch_sha256_fd(int fd, unsigned long long max,
	    char hex[LAUNCH_CACHE_KEYHEX + 1], char *err, size_t errlen);

/* Forgets the facts memoised for the process (doctor, tests). */
void	 launch_cache_forget(void);

/*
 * Low level, for the tests: read the body of a cache file filed under
 * key (-1: missing, another key, corrupt, oversize, not ours), and write
 * one atomically (mode 0600, in a 0700 folder).
 */
char	*launch_cache_read(const char *path, const char *key, size_t max,
	    size_t *len);
int	 launch_cache_write(const char *path, const char *key,
	    const char *body, size_t len);
/* The cache file name in the state folder ("$XDG_STATE_HOME/aisb/cache/"). */
int	 launch_cache_path(char **envp, const char *name, char *out,
	    size_t len);

#endif
