/*
 * What gitguard.c (the plan, the private folders, the mounts, the files
 * back) and gitback.c (the config's keys offered) share.  Only they
 * include this.
 */
#ifndef AISB_SESSION_GITGUARD_INT_H
#define AISB_SESSION_GITGUARD_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "session/gitguard.h"

#define GG_CONFIG_MAX	((size_t)1 << 20)	/* bytes of a config read */

enum gg_kind {
	GG_TOP = 1,	/* a private folder, mounted over the host's */
	GG_DIR,		/* a folder made in the private folder */
	GG_COPY,	/* a file copied into it */
	GG_LINK,	/* a link copied into it */
	GG_RW,		/* the host's folder, read-write */
	GG_RO,		/* the host's folder or file, read-only */
	GG_EMPTY,	/* the empty folder, read-only (none on the host) */
	GG_HOSTDIR,	/* a folder made on the host (logs), then GG_RW */
	GG_HOSTFILE	/* an empty file made on the host, then GG_RO */
};

/* The identity of a file: changed when any part differs. */
struct gg_ident {
	uint64_t	 dev, ino, size;
	int64_t		 mtime_ns, ctime_ns;
};

struct gg_node {
	enum gg_kind	 kind;
	char		*rel;		/* from the workspace: ".git/HEAD" */
	size_t		 repo;		/* its git folder in gg->repos */
	int		 back;		/* a file git's own work writes */
	int		 inpriv;	/* its mount point is in a private
					   folder (made there) */
	/* GG_COPY: the host's file when copied, and the copy */
	struct gg_ident	 host, copy;
	uint32_t	 mode, uid, gid;
	char		 sha[65];	/* of the host's file, hex */
};

struct gg_repo {
	char		*rel;		/* ".git", "vendor/x/.git", "b.git",
					   ".git/modules/sub" */
	int		 top;		/* a private folder of its own */
	int		 full;		/* a repository's folder (its config,
					   hooks), not a linked worktree's */
	char		*priv;		/* its private folder */
	uint64_t	 dev, ino;	/* the host's folder */
	uint32_t	 uid, gid;	/* its owner */
	char		*config;	/* full: the config's text when copied */
	size_t		 configlen;
	int		 hasconfig;
};

struct launch_gitguard {
	char		 ws[PATH_MAX];		/* real path */
	char		 src[PATH_MAX];		/* the mount source */
	char		 sdir[PATH_MAX];	/* the session folder */
	char		 empty[PATH_MAX];	/* sdir/git/empty */
	struct gg_repo	*repos;
	size_t		 nrepos;
	struct gg_node	*nodes;
	size_t		 nnodes, capnodes;
	char		 warn[512];		/* said at the end */
};

struct snap_stat;
/* 1 when the identity a is st's. */
int	 gg_same(const struct gg_ident *a, const struct snap_stat *st);
/* The SHA-256 of the file at path (never through a link) into sha[65]:
 * 0, or -1. */
int	 gg_hash(const char *path, char *sha);
/*
 * The file at priv (NULL: none, host removed) written over host as git
 * writes it: host.lock made (O_EXCL: a git at work there holds it), the
 * host's file then checked against want (NULL: there must be none),
 * written, synced, given mode and uid:gid, renamed over host.  0; 1 when
 * host is not what want says (nothing written); -1 with err.
 */
int	 gg_put(const char *priv, const char *host, const struct gg_ident *want,
	    uint32_t mode, uint32_t uid, uint32_t gid, char *err,
	    size_t errlen);
/* ws/rel (or priv/...) into out[PATH_MAX]; -1 when too long. */
int	 gg_path(char *out, const char *a, const char *b);
/* The private path of node n into out[PATH_MAX]. */
int	 gg_priv(const struct launch_gitguard *, const struct gg_node *,
	    char *out);
/* The config's keys of each repository, offered back (gitback.c). */
void	 gg_offer(struct launch_gitguard *, const char *id, int apply);

#endif
