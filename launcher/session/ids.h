/*
 * Who the sandbox user is on the host.
 *
 * Inside, the command is always uid/gid 1000.  Outside it is the owner of
 * the workspace, so that what it creates belongs to that user and what
 * that user may edit, it may edit; every other container id (root
 * included) is a subordinate id that no host user has.
 *
 *   rootless podman: --userns=keep-id:uid=1000,gid=1000 maps the invoking
 *	user to 1000 and the rest to the user's subordinate range, and
 *	--user 0:0 starts the container as its root (the first subordinate
 *	id), as rootful podman does, not as 1000 (podman.c).
 *   rootful podman: the container gets the contiguous subordinate range
 *	of the system user "aisb" (/etc/subuid, /etc/subgid; created with
 *	useradd on first use), and the workspace is bind-mounted through an
 *	idmapped mount that shows the owner's files as owned by the sandbox
 *	user's host id (base + 1000) and writes that id back as the owner.
 *	runc 1.1 has no idmapped mounts of its own, and a --uidmap that
 *	splits the range around the owner's uid fails in podman 4.3's
 *	overlay mount, hence the mount made here (docs/threat-model.md).
 */
#ifndef AISB_IDS_H
#define AISB_IDS_H

#include <sys/types.h>

#include <stddef.h>

#define LAUNCH_SUBID_USER	"aisb"	/* whose subordinate range rootful uses */
#define LAUNCH_SUBID_COUNT	65536u	/* ids a rootful container maps */
#define LAUNCH_SUBID_FILE_MAX	(1024 * 1024)	/* bytes of /etc/sub[ug]id */

enum launch_idmode {
	LAUNCH_IDS_KEEPID = 1,		/* rootless: podman's keep-id */
	LAUNCH_IDS_MAPPED,		/* rootful: range + idmapped mount */
};

struct launch_ids {
	enum launch_idmode	 mode;
	uid_t			 owner_uid;	/* the workspace's owner */
	gid_t			 owner_gid;
	uid_t			 uid_base;	/* MAPPED: container 0 on the host */
	gid_t			 gid_base;
	unsigned		 count;		/* MAPPED: ids mapped from base */
};

/*
 * Decides the mapping for a session in workspace.  Rootless: keep-id and
 * the invoking user.  Rootful: the owner of the workspace folder (so under
 * sudo the folder's owner wins over SUDO_UID: the files must stay the
 * repository owner's) and the subordinate range of LAUNCH_SUBID_USER; with
 * create, that user and its range are made with useradd when missing.
 * 0, or -1 with err (what is wrong and how to fix it).
 */
int	 launch_ids_resolve(struct launch_ids *, int rootless,
	    const char *workspace, int create, char *err, size_t errlen);

/*
 * Makes the system user LAUNCH_SUBID_USER and its subordinate ranges with
 * useradd (shadow allocates them, locked).  0, or -1 with err.
 */
int	 launch_ids_create_user(char *err, size_t errlen);

/*
 * The unprivileged user a gate started by root drops to once its sockets
 * are bound (aisb-gate --user): LAUNCH_SUBID_USER, made when missing,
 * else nobody.  name "" when not root (nothing to drop); *gid (may be
 * NULL) its group.  0, or -1 with err.
 */
int	 launch_gate_user(char *name, size_t len, gid_t *gid, char *err,
	    size_t errlen);

/* The host uid and gid of the sandbox user's files in the workspace. */
uid_t	 launch_ids_host_uid(const struct launch_ids *);
gid_t	 launch_ids_host_gid(const struct launch_ids *);
/* The host uid and gid of the container's root (the enforcer). */
uid_t	 launch_ids_root_uid(const struct launch_ids *);

/*
 * MAPPED only: an idmapped, nosuid, nodev clone of the folder src (not
 * its submounts) at target (created mode 0700), on which owner_uid/gid
 * read and write as uid_base + 1000.  0, or -1 with err.
 */
int	 launch_ids_mount(const struct launch_ids *, const char *src,
	    const char *target, char *err, size_t errlen);
/*
 * What a container of this mapping needs on the host before podman runs,
 * for sessions and doctor alike: in MAPPED mode the idmapped workspace at
 * mountpoint (*mounted set to 1), and the env file given to the sandbox
 * user's host ids (the enforcer reads it as the command); the plan made
 * readable by the container's root, which owns no host file (it holds no
 * secret).  0, or -1 with err; the caller unmounts on every path.
 */
int	 launch_ids_prepare(const struct launch_ids *, const char *workspace,
	    const char *mountpoint, const char *envfile, const char *planfile,
	    int *mounted, char *err, size_t errlen);
/*
 * The folder path given to the container's root, for what the command
 * (uid 1000 inside) must not touch (docs/record.md): rootful, chown to
 * uid_base; rootless, `podman unshare chown` to the namespace's uid 1,
 * which keep-id maps to the container's 0 (the user's first subordinate
 * id).  0, or -1 with err.
 */
int	 launch_ids_give_root(const struct launch_ids *, const char *podman,
	    const char *path, char *err, size_t errlen);
/*
 * Once the container is gone: rootless, the folder and what the
 * container's root made in it given back to the user (podman unshare
 * chown -R, no link followed), who reads them and writes beside them;
 * rootful, nothing (root reads them as they are).  0, or -1 with err.
 */
int	 launch_ids_take_back(const struct launch_ids *, const char *podman,
	    const char *path, char *err, size_t errlen);
/*
 * Detaches the mount at target, if any, and removes the (then empty)
 * folder.  1 unmounted, 0 nothing was mounted there, -1 (said on stderr).
 */
int	 launch_ids_umount(const char *target);

/*
 * Parses one /etc/subuid-style text for the first range of the user
 * named name or numbered id.  1 found (start, count filled), 0 not.
 * Exposed for the unit tests.
 */
int	 launch_subid_find(const char *text, size_t len, const char *name,
	    unsigned long id, unsigned long *start, unsigned long *count);

#endif
