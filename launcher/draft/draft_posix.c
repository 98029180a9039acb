/*
 * The draft's per-system part on Linux (launcher/draft.h, "what differs
 * between systems"): flock(2), the controlling terminal, the launcher's
 * pid and start time, and giving applied files back to the workspace's
 * owner when root applied them.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <termios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "draft/draft.h"
#include "file.h"
#include "snap/fs.h"
#include "host/paths.h"
#include "host/proc.h"

int
draft_os_lock(const char *sdir, intptr_t *lock, int quiet)
{
	char	 path[PATH_MAX];
	int	 fd;

	*lock = -1;
	if (file_path_join(path, sizeof(path), sdir, "snapshot.lock") == -1 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		fprintf(stderr, "aisb: %s/snapshot.lock: %s\n", sdir,
		    strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (!quiet)
			fprintf(stderr, "aisb: another aisb works on this draft "
			    "(%s); try again when it is done\n", path);
		close(fd);
		return -2;
	}
	*lock = fd;
	return 0;
}

void
draft_os_unlock(intptr_t lock)
{
	if (lock >= 0)
		close((int)lock);
}

FILE *
draft_os_terminal(int always)
{
	FILE	*in = NULL;
	int	 fd;

	if (isatty(STDIN_FILENO) && (always || isatty(STDERR_FILENO))) {
		if ((fd = dup(STDIN_FILENO)) != -1 &&
		    (in = fdopen(fd, "r")) == NULL)
			close(fd);
	} else if (always && (fd = open("/dev/tty", O_RDWR | O_NOCTTY |
	    O_CLOEXEC)) != -1 && (in = fdopen(fd, "r")) == NULL)
		close(fd);
	/* typed ahead, or a terminal's answer to a query the command
	 * printed (a cursor report, a title report): not a person's answer */
	if (in != NULL)
		(void)tcflush(fileno(in), TCIFLUSH);
	return in;
}

int
draft_os_is_terminal(FILE *out)
{
	return isatty(fileno(out));
}

int
draft_os_random_hex(char *out, size_t nhex)
{
	return launch_random_hex(out, nhex);
}

int
draft_os_launcher_running(const char *sdir)
{
	char			*text, err[PATH_MAX + 64];
	long			 pid;
	unsigned long long	 start;
	size_t			 len;
	int			 alive = 1;

	if ((text = file_read_in(sdir, "launcher", 64, &len, err,
	    sizeof(err))) == NULL)
		return 1;
	if (sscanf(text, "%ld %llu", &pid, &start) == 2 && pid > 1)
		alive = launch_proc_alive((pid_t)pid, start);
	free(text);
	return alive;
}

/*
 * After root applied a change set to another user's tree: what it
 * created or replaced is root's; given back to the tree's owner.  After
 * a roll back, what root put back from the backups (a new inode each)
 * is root's too: the entries modified or deleted that root owns now are
 * given back (one of another user that the transaction never reached
 * keeps its owner).  Failures are said, not fatal: the content is
 * written.
 */
void
draft_os_own_applied(const char *workspace, unsigned owner_uid,
    unsigned owner_gid, const struct snap_changes *ch, int rolled_back)
{
	const struct snap_change	*c;
	struct snap_stat		 st;
	char				 full[PATH_MAX + DRAFT_PATH_MAX];
	size_t				 i, n = snap_changes_count(ch), bad = 0;

	if (geteuid() != 0 || owner_uid == 0)
		return;
	/* by the snapshot core, which goes through no link on the way:
	 * the owner may swap a folder for one meanwhile, and root must not
	 * chown what it points to */
	for (i = 0; i < n; i++) {
		c = snap_changes_get(ch, i);
		if (rolled_back ? c->kind != SNAP_MODIFY &&
		    c->kind != SNAP_DELETE : c->kind != SNAP_CREATE &&
		    c->kind != SNAP_MODIFY && c->kind != SNAP_MODE)
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", workspace, c->path) >=
		    (int)sizeof(full)) {
			bad++;
			continue;
		}
		if (rolled_back && (snap_fs_lstat(full, &st) == -1 ||
		    st.uid != 0))
			continue;
		if (snap_fs_lchown(full, owner_uid, owner_gid) == -1)
			bad++;
	}
	if (bad > 0)
		fprintf(stderr, "aisb: %zu file(s) %s could not be given "
		    "to uid %u; they are root's\n", bad, rolled_back ?
		    "restored" : "applied", owner_uid);
}

static uid_t	chown_uid;
static gid_t	chown_gid;

static int
chown_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_uid, chown_gid) == -1 ? -1 : 0;
}

/*
 * nftw without following a link (FTW_PHYS), lchown: the tree is in
 * root's 0700 state folder, where nobody else can swap a link in.
 */
int
draft_os_own_tree(const char *root, unsigned owner_uid, unsigned owner_gid,
    char *err, size_t errlen)
{
	if (geteuid() != 0 || owner_uid == (unsigned)geteuid())
		return 0;
	chown_uid = (uid_t)owner_uid;
	chown_gid = (gid_t)owner_gid;
	if (nftw(root, chown_one, 64, FTW_PHYS) != 0) {
		snprintf(err, errlen, "giving %s to uid %u: %s", root, owner_uid,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
draft_os_owner_home(unsigned owner_uid, char *out, size_t len)
{
	struct passwd	 pw, *res = NULL;
	char		 buf[4096], real[PATH_MAX];
	const char	*home = NULL;
	int		 self = geteuid() == (uid_t)owner_uid;

	/* the owner's git reads the owner's HOME: the launcher's own when
	 * it runs as the owner; root's is not the owner's (sudo) */
	if (self)
		home = getenv("HOME");
	if ((home == NULL || home[0] != '/') && getpwuid_r((uid_t)owner_uid,
	    &pw, buf, sizeof(buf), &res) == 0 && res != NULL)
		home = pw.pw_dir;
	if (home == NULL || home[0] != '/')
		return -1;
	/* real: a tree named through it is compared with the tree's real
	 * path */
	if (realpath(home, real) != NULL)
		home = real;
	if (snprintf(out, len, "%s", home) >= (int)len)
		return -1;
	return self;
}

const char *const *
draft_os_git_system(void)
{
	static const char *const sys[] = { "/etc/gitconfig", NULL };

	return sys;
}

int
draft_os_path_absolute(const char *path)
{
	return path[0] == '/';
}

long long
draft_os_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
