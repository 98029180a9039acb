/*
 * Who the sandbox user is on the host (ids.h): the mapping a session
 * passes to podman, and the idmapped workspace mount of rootful sessions.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "session/ids.h"
#include "image/image-t.h"
#include "host/proc.h"

#define SUBUID_PATH	"/etc/subuid"
#define SUBGID_PATH	"/etc/subgid"
#define USERADD_TIMEOUT_MS	(30 * 1000)
#define SUBID_TRIES		20	/* 100 ms apart */
#define USERADD_LOCK		"/run/aisb-useradd.lock"

int
launch_subid_find(const char *text, size_t len, const char *name,
    unsigned long id, unsigned long *start, unsigned long *count)
{
	char		 idstr[24], line[256], *f[3], *end;
	size_t		 off = 0, n, nl = strlen(name);
	int		 i;

	snprintf(idstr, sizeof(idstr), "%lu", id);
	while (off < len) {
		const char	*p = text + off, *e = memchr(p, '\n', len - off);

		n = e != NULL ? (size_t)(e - p) : len - off;
		off += n + (e != NULL);
		if (n == 0 || n >= sizeof(line) || p[0] == '#')
			continue;	/* a longer line is no subid entry */
		memcpy(line, p, n);
		line[n] = '\0';
		f[0] = line;
		for (i = 1; i < 3; i++) {
			if ((f[i] = strchr(f[i - 1], ':')) == NULL)
				break;
			*f[i]++ = '\0';
		}
		if (i < 3 || strchr(f[2], ':') != NULL)
			continue;
		if (!((nl > 0 && strcmp(f[0], name) == 0) ||
		    strcmp(f[0], idstr) == 0))
			continue;
		errno = 0;
		*start = strtoul(f[1], &end, 10);
		if (errno != 0 || end == f[1] || *end != '\0')
			continue;
		*count = strtoul(f[2], &end, 10);
		if (errno != 0 || end == f[2] || *end != '\0' || *count == 0)
			continue;
		return 1;
	}
	return 0;
}

/* The range of LAUNCH_SUBID_USER (uid) in path.  1, 0, or -1 with err. */
static int
subid_range(const char *path, uid_t uid, unsigned long *start,
    unsigned long *count, char *err, size_t errlen)
{
	char	*text;
	size_t	 len;
	int	 found;

	if (access(path, F_OK) == -1 && errno == ENOENT)
		return 0;
	if ((text = file_read_bounded(path, LAUNCH_SUBID_FILE_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	found = launch_subid_find(text, len, LAUNCH_SUBID_USER, uid, start,
	    count);
	free(text);
	return found;
}

/*
 * Makes the system user LAUNCH_SUBID_USER with subordinate ranges, as
 * shadow's useradd allocates them (locked, never overlapping another
 * user's range).  -1 with err.
 */
static int
run_useradd(char *err, size_t errlen)
{
	char	 useradd[PATH_MAX], out[512];
	char	*argv[] = { useradd, (char *)"--system",
	    (char *)"--add-subids-for-system", (char *)"--no-create-home",
	    (char *)"--home-dir", (char *)"/nonexistent", (char *)"--shell",
	    (char *)"/usr/sbin/nologin", (char *)"--comment",
	    (char *)"aisb sandboxes and gates", (char *)LAUNCH_SUBID_USER,
	    NULL };

	if (launch_find_program("useradd", useradd, sizeof(useradd)) == -1)
		snprintf(useradd, sizeof(useradd), "/usr/sbin/useradd");
	if (launch_exec(argv, NULL, 0, out, sizeof(out), USERADD_TIMEOUT_MS,
	    0, err, errlen) != 0)
		return -1;
	fprintf(stderr, "aisb: created the system user %s and its "
	    "subordinate ids (%s, %s) for the containers' other users\n",
	    LAUNCH_SUBID_USER, SUBUID_PATH, SUBGID_PATH);
	return 0;
}

int
launch_ids_create_user(char *err, size_t errlen)
{
	int	 fd, rc;

	/*
	 * Two useradd of one name at once both succeed here (shadow checks
	 * before it locks), leaving two passwd lines: aisb serialises its
	 * own, under a lock in /run (root's alone to write), and looks
	 * again once it holds it.
	 */
	if ((fd = open(USERADD_LOCK, O_RDWR | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || flock(fd, LOCK_EX) == -1) {
		snprintf(err, errlen, "%s: %s", USERADD_LOCK, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	rc = getpwnam(LAUNCH_SUBID_USER) != NULL ? 0 : run_useradd(err, errlen);
	close(fd);
	return rc;
}

/*
 * Refuses a range that holds the uid of a host account: then a container
 * id would be a real user after all.
 */
static int
range_is_free(unsigned long ustart, unsigned long gstart, unsigned long n,
    char *err, size_t errlen)
{
	struct passwd	*pw;
	int		 rc = 0;

	setpwent();
	while ((pw = getpwent()) != NULL) {
		if ((pw->pw_uid >= ustart && pw->pw_uid - ustart < n) ||
		    (pw->pw_gid >= gstart && pw->pw_gid - gstart < n)) {
			snprintf(err, errlen, "the subordinate ids of %s "
			    "(%lu-%lu) hold the host account %s (uid %u); "
			    "give %s a range no account uses in %s and %s",
			    LAUNCH_SUBID_USER, ustart, ustart + n - 1,
			    pw->pw_name, (unsigned)pw->pw_uid,
			    LAUNCH_SUBID_USER, SUBUID_PATH, SUBGID_PATH);
			rc = -1;
			break;
		}
	}
	endpwent();
	return rc;
}

static int
resolve_mapped(struct launch_ids *ids, int create, char *err, size_t errlen)
{
	struct passwd	*pw;
	struct timespec	 pause = { 0, 100 * 1000 * 1000 };
	unsigned long	 us = 0, uc = 0, gs = 0, gc = 0;
	char		 why[256] = "";
	int		 fu, fg, tries;

	/*
	 * Two first sessions at once both find no user: one useradd wins,
	 * the other fails ("exists") and finds the winner's user, whose
	 * ranges useradd writes a moment after its passwd line.  So with
	 * create, a missing piece is looked for again for a second or two.
	 */
	for (tries = 0;; tries++) {
		pw = getpwnam(LAUNCH_SUBID_USER);
		fu = fg = 0;
		if (pw != NULL &&
		    ((fu = subid_range(SUBUID_PATH, pw->pw_uid, &us, &uc, err,
		    errlen)) == -1 ||
		    (fg = subid_range(SUBGID_PATH, pw->pw_uid, &gs, &gc, err,
		    errlen)) == -1))
			return -1;
		if (fu && fg)
			break;
		if (!create || tries == SUBID_TRIES) {
			snprintf(err, errlen, "rootful sessions run the "
			    "container's other users in the subordinate ids of "
			    "the user %s, and %s%s%s; fix: %s", LAUNCH_SUBID_USER,
			    pw == NULL ? "there is no such user" :
			    "it has none in " SUBUID_PATH " and " SUBGID_PATH,
			    why[0] != '\0' ? ": " : "", why,
			    pw == NULL ? "useradd --system "
			    "--add-subids-for-system " LAUNCH_SUBID_USER :
			    "usermod --add-subuids START-END --add-subgids "
			    "START-END " LAUNCH_SUBID_USER " (65536 ids no "
			    "other user has)");
			return -1;
		}
		if (pw == NULL && tries == 0)
			(void)launch_ids_create_user(why, sizeof(why));
		else
			nanosleep(&pause, NULL);
	}
	if (uc < LAUNCH_SUBID_COUNT || gc < LAUNCH_SUBID_COUNT) {
		snprintf(err, errlen, "the user %s has %lu subordinate uids and "
		    "%lu gids; containers need %u of each (%s, %s)",
		    LAUNCH_SUBID_USER, uc, gc, LAUNCH_SUBID_COUNT, SUBUID_PATH,
		    SUBGID_PATH);
		return -1;
	}
	if (us + LAUNCH_SUBID_COUNT - 1 > (uid_t)-2 ||
	    gs + LAUNCH_SUBID_COUNT - 1 > (gid_t)-2) {
		snprintf(err, errlen, "the subordinate ids of %s end past the "
		    "largest id", LAUNCH_SUBID_USER);
		return -1;
	}
	if (range_is_free(us, gs, LAUNCH_SUBID_COUNT, err, errlen) == -1)
		return -1;
	ids->uid_base = (uid_t)us;
	ids->gid_base = (gid_t)gs;
	ids->count = LAUNCH_SUBID_COUNT;
	if ((ids->owner_uid >= ids->uid_base &&
	    ids->owner_uid - ids->uid_base < ids->count) ||
	    (ids->owner_gid >= ids->gid_base &&
	    ids->owner_gid - ids->gid_base < ids->count)) {
		snprintf(err, errlen, "the workspace belongs to uid %u gid %u, "
		    "inside the subordinate ids of %s: a container's file; "
		    "run aisb in a folder of a host user", (unsigned)
		    ids->owner_uid, (unsigned)ids->owner_gid, LAUNCH_SUBID_USER);
		return -1;
	}
	return 0;
}

int
launch_ids_resolve(struct launch_ids *ids, int rootless, const char *workspace,
    int create, char *err, size_t errlen)
{
	struct stat	 st;
	char		 real[PATH_MAX];

	memset(ids, 0, sizeof(*ids));
	if (realpath(workspace, real) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", workspace,
		    strerror(errno));
		return -1;
	}

	if (rootless) {
		ids->mode = LAUNCH_IDS_KEEPID;
		ids->owner_uid = getuid();
		ids->owner_gid = getgid();
		return 0;
	}
	if (stat(real, &st) == -1) {
		snprintf(err, errlen, "workspace %s: %s", workspace,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "workspace %s is not a folder", workspace);
		return -1;
	}
	ids->mode = LAUNCH_IDS_MAPPED;
	ids->owner_uid = st.st_uid;
	ids->owner_gid = st.st_gid;
	return resolve_mapped(ids, create, err, errlen);
}

int
launch_gate_user(char *name, size_t len, gid_t *gid, char *err,
    size_t errlen)
{
	struct passwd	*pw;
	char		 why[256];

	name[0] = '\0';
	if (gid != NULL)
		*gid = (gid_t)-1;
	if (geteuid() != 0)
		return 0;
	/* made by another session meanwhile when our useradd fails */
	if ((pw = getpwnam(LAUNCH_SUBID_USER)) == NULL) {
		(void)launch_ids_create_user(why, sizeof(why));
		pw = getpwnam(LAUNCH_SUBID_USER);
	}
	if (pw == NULL) {
		if ((pw = getpwnam("nobody")) == NULL) {
			snprintf(err, errlen, "no user for the gate to drop to: "
			    "neither %s nor nobody exists; fix: useradd "
			    "--system --add-subids-for-system %s",
			    LAUNCH_SUBID_USER, LAUNCH_SUBID_USER);
			return -1;
		}
		fprintf(stderr, "aisb: the gate runs as nobody: no user %s "
		    "(useradd --system --add-subids-for-system %s)\n",
		    LAUNCH_SUBID_USER, LAUNCH_SUBID_USER);
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "the user %s is uid 0: a gate must not "
		    "run as root", pw->pw_name);
		return -1;
	}
	if ((size_t)snprintf(name, len, "%s", pw->pw_name) >= len) {
		snprintf(err, errlen, "user name too long");
		return -1;
	}
	if (gid != NULL)
		*gid = pw->pw_gid;
	return 0;
}

uid_t
launch_ids_host_uid(const struct launch_ids *ids)
{
	return ids->mode == LAUNCH_IDS_MAPPED ? ids->uid_base +
	    LAUNCH_SANDBOX_ID : ids->owner_uid;
}

gid_t
launch_ids_host_gid(const struct launch_ids *ids)
{
	return ids->mode == LAUNCH_IDS_MAPPED ? ids->gid_base +
	    LAUNCH_SANDBOX_ID : ids->owner_gid;
}

uid_t
launch_ids_root_uid(const struct launch_ids *ids)
{
	return ids->mode == LAUNCH_IDS_MAPPED ? ids->uid_base : (uid_t)-1;
}

/* Writes text to /proc/pid/name.  0 or -1. */
static int
write_proc(pid_t pid, const char *name, const char *text)
{
	char	 path[64];
	size_t	 len = strlen(text);
	int	 fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -1;
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

/*
 * A user namespace whose only ids are owner_uid -> uid and owner_gid ->
 * gid, as an open descriptor: a child enters a new namespace and waits
 * while its maps are written, then is killed; the descriptor keeps the
 * namespace.  -1 with err.
 */
static int
userns_fd(uid_t owner_uid, gid_t owner_gid, uid_t uid, gid_t gid, char *err,
    size_t errlen)
{
	char	 map[64], path[64], c;
	pid_t	 pid;
	int	 ready[2], fd = -1, status;

	if (pipe2(ready, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0) {
		c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		snprintf(err, errlen, "cannot create a user namespace for the "
		    "workspace mount (kernel.unprivileged_userns_clone, "
		    "user.max_user_namespaces?)");
		goto out;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner_uid,
	    (unsigned)uid);
	if (write_proc(pid, "uid_map", map) == -1) {
		snprintf(err, errlen, "uid_map: %s", strerror(errno));
		goto out;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner_gid,
	    (unsigned)gid);
	if (write_proc(pid, "gid_map", map) == -1) {
		snprintf(err, errlen, "gid_map: %s", strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
out:
	close(ready[0]);
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return fd;
}

int
launch_ids_mount(const struct launch_ids *ids, const char *src,
    const char *target, char *err, size_t errlen)
{
	struct mount_attr	 attr;
	int			 nsfd, tree = -1, rc = -1;

	if (ids->mode != LAUNCH_IDS_MAPPED) {
		snprintf(err, errlen, "no idmapped mount without a mapped "
		    "range");
		return -1;
	}
	if ((nsfd = userns_fd(ids->owner_uid, ids->owner_gid,
	    launch_ids_host_uid(ids), launch_ids_host_gid(ids), err,
	    errlen)) == -1)
		return -1;
	/*
	 * Only the folder itself: a submount under it would need an idmap
	 * of its own, and a filesystem that cannot take one must not fail
	 * the session in the middle of the tree.
	 */
	if ((tree = open_tree(AT_FDCWD, src, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open_tree %s: %s", src, strerror(errno));
		goto out;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV;
	attr.userns_fd = (uint64_t)nsfd;
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == -1) {
		snprintf(err, errlen, "an idmapped mount of the workspace %s "
		    "failed (%s); its filesystem or this kernel (5.12 or later "
		    "needed) cannot map ids; work in a folder on ext4, xfs, "
		    "btrfs or tmpfs", src, strerror(errno));
		goto out;
	}
	if (mkdir(target, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", target, strerror(errno));
		goto out;
	}
	if (move_mount(tree, "", AT_FDCWD, target,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1) {
		snprintf(err, errlen, "move_mount to %s: %s", target,
		    strerror(errno));
		(void)rmdir(target);
		goto out;
	}
	rc = 0;
out:
	if (tree != -1)
		close(tree);
	close(nsfd);
	return rc;
}

/*
 * Under keep-id:uid=1000 the container's ids 0..999 are the user
 * namespace's 1..1000 (0 is the user): its root is the namespace's 1.
 */
#define KEEPID_ROOT_IN_NS	"1:1"

/* podman unshare chown [-R] owner path: in the user's namespace. */
static int
unshare_chown(const char *podman, int recursive, const char *owner,
    const char *path, char *err, size_t errlen)
{
	char	 why[256];
	/* -h, and -P under -R: a link is changed itself, never followed */
	char	*argv[] = { (char *)podman, (char *)"unshare", (char *)"chown",
	    (char *)(recursive ? "-RPh" : "-h"), (char *)owner, (char *)"--",
	    (char *)path, NULL };

	if (launch_exec(argv, NULL, 0, NULL, 0, LAUNCH_QUICK_TIMEOUT_MS, 0,
	    why, sizeof(why)) != 0) {
		snprintf(err, errlen, "podman unshare chown %s %s: %s", owner,
		    path, why);
		return -1;
	}
	return 0;
}

int
launch_ids_give_root(const struct launch_ids *ids, const char *podman,
    const char *path, char *err, size_t errlen)
{
	if (ids->mode == LAUNCH_IDS_KEEPID)
		return unshare_chown(podman, 0, KEEPID_ROOT_IN_NS, path, err,
		    errlen);
	if (chown(path, ids->uid_base, ids->gid_base) == -1) {
		snprintf(err, errlen, "chown of %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
launch_ids_take_back(const struct launch_ids *ids, const char *podman,
    const char *path, char *err, size_t errlen)
{
	if (ids->mode != LAUNCH_IDS_KEEPID)
		return 0;
	return unshare_chown(podman, 1, "0:0", path, err, errlen);
}

int
launch_ids_umount(const char *target)
{
	int	 rc = 1;

	if (umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) == -1) {
		rc = 0;
		if (errno != EINVAL && errno != ENOENT) {
			fprintf(stderr, "aisb: umount %s: %s\n", target,
			    strerror(errno));
			return -1;
		}
	}
	/* never a recursive removal: it could reach the user's files */
	(void)rmdir(target);
	return rc;
}

int
launch_ids_prepare(const struct launch_ids *ids, const char *workspace,
    const char *mountpoint, const char *envfile, const char *planfile,
    int *mounted, char *err, size_t errlen)
{
	*mounted = 0;
	if (chmod(planfile, 0644) == -1) {
		snprintf(err, errlen, "chmod of the plan: %s", strerror(errno));
		return -1;
	}
	if (ids->mode != LAUNCH_IDS_MAPPED)
		return 0;
	if (chown(envfile, launch_ids_host_uid(ids),
	    launch_ids_host_gid(ids)) == -1) {
		snprintf(err, errlen, "chown of the env file: %s",
		    strerror(errno));
		return -1;
	}
	if (launch_ids_mount(ids, workspace, mountpoint, err, errlen) == -1)
		return -1;
	*mounted = 1;
	return 0;
}
