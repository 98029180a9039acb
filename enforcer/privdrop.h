/*
 * Dropping every privilege before the command runs, and proving it.
 * Raw prctl/capset system calls: no libcap.
 */
#ifndef AISB_ENF_PRIVDROP_H
#define AISB_ENF_PRIVDROP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ENF_MAX_GROUPS		32	/* --groups */
#define ENF_MAX_KEEP_FDS	16	/* --keep-fd */

struct enf_creds {
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 groups[ENF_MAX_GROUPS];	/* supplementary groups */
	size_t	 ngroups;
};

/*
 * Becomes creds with no capability in any set (effective, permitted,
 * inheritable, ambient, bounding) and no_new_privs, then checks that none
 * can be regained (setuid(0) and setgid(0) fail, every set reads empty).
 * Must run as root with CAP_SETUID, CAP_SETGID and CAP_SETPCAP.
 * 0, or -1 with err; on -1 the process is in an unknown state: exit.
 */
int	enf_drop_all(const struct enf_creds *creds, char *err, size_t errlen);

/*
 * The direct-mode refresher: stays uid 0 without supplementary groups and
 * keeps CAP_NET_ADMIN (to refresh the sets) and CAP_KILL (to forward
 * signals to a command that runs under another uid) in its effective and
 * permitted sets, nothing else anywhere; no_new_privs, locked securebits,
 * not dumpable.  0 or -1.
 */
int	enf_drop_to_refresher(char *err, size_t errlen);

/*
 * The same with keep (a mask of capabilities < 64) instead: the command's
 * parent in gate and none modes keeps CAP_KILL only (supervise.h).
 */
int	enf_drop_keep(uint64_t keep, char *err, size_t errlen);

/* Closes every fd above 2 except the keep[n] ones.  0 or -1. */
int	enf_close_fds(const int *keep, size_t n, char *err, size_t errlen);

#endif
