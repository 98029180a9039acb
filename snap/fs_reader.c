/*
 * The reader of snap/fs.h on POSIX (snap_fs_reader_new; docs/snapshot.md,
 * "Who may read"): a helper process with exactly the workspace owner's
 * ids answers, for each file or folder aisb opened, whether that owner
 * may read it (its access(2) on the descriptor passed over a socket).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "fs-posix.h"

struct snap_reader {
	int	 self;		/* the kernel checks: no helper */
	uint32_t uid;
	int	 sock;		/* SOCK_SEQPACKET to the helper */
	pid_t	 pid;
};

/* "/proc/self/fd/N" into path[64] without stdio (after fork). */
static void
fd_path(char *path, int fd)
{
	static const char	 pre[] = "/proc/self/fd/";
	char			 digits[16];
	size_t			 n = 0, i;
	unsigned		 v = (unsigned)fd;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0 && n < sizeof(digits));
	memcpy(path, pre, sizeof(pre) - 1);
	for (i = 0; i < n; i++)
		path[sizeof(pre) - 1 + i] = digits[n - 1 - i];
	path[sizeof(pre) - 1 + n] = '\0';
}

/*
 * The helper: ids dropped for good (no group but gid), then for each
 * descriptor received one byte back, 'y' when access(2) lets it read
 * (a folder: read and search) through /proc/self/fd, else 'n'.  Ends
 * when the socket closes, or with the parent.  Only system calls: it
 * runs after fork.
 */
static void __attribute__((noreturn))
reader_main(int sock, uint32_t uid, uint32_t gid)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	}		 u;
	char		 kind, ans, path[64];
	int		 fd;
	ssize_t		 n;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1 || geteuid() != uid)
		_exit(1);
	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = &kind;
		iov.iov_len = 1;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		if ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) <= 0)
			_exit(0);
		cm = CMSG_FIRSTHDR(&mh);
		if (cm == NULL || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len != CMSG_LEN(sizeof(int)))
			_exit(1);
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		fd_path(path, fd);
		ans = access(path, kind == 'd' ? R_OK | X_OK : R_OK) == 0 ?
		    'y' : 'n';
		close(fd);
		if (write(sock, &ans, 1) != 1)
			_exit(1);
	}
}

struct snap_reader *
snap_fs_reader_new(uint32_t uid, uint32_t gid)
{
	struct snap_reader	*r;
	int			 sv[2], e;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->uid = uid;
	r->sock = -1;
	if (geteuid() != 0 || uid == 0) {
		r->self = 1;
		return r;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		goto fail;
	if ((r->pid = fork()) == -1) {
		e = errno;
		close(sv[0]);
		close(sv[1]);
		errno = e;
		goto fail;
	}
	if (r->pid == 0) {
		close(sv[0]);
		reader_main(sv[1], uid, gid);
	}
	close(sv[1]);
	r->sock = sv[0];
	return r;
fail:
	free(r);
	return NULL;
}

void
snap_fs_reader_free(struct snap_reader *r)
{
	int	 st;

	if (r == NULL)
		return;
	if (r->sock != -1)
		close(r->sock);		/* the helper ends */
	if (r->pid > 0)
		while (waitpid(r->pid, &st, 0) == -1 && errno == EINTR)
			;
	free(r);
}

int
snap_fs_reader_self(const struct snap_reader *r)
{
	return r->self;
}

/* The helper's answer for fd: 1, 0, or -1 (EIO: it is gone). */
static int
reader_ask(struct snap_reader *r, int fd, char kind)
{
	struct stat	 st;
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	}		 u;
	char		 ans;
	ssize_t		 n;

	if (r->self)
		return 1;
	if (fstat(fd, &st) == -1)
		return -1;
	if (st.st_uid == r->uid)
		return 1;
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	iov.iov_base = &kind;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	while ((n = sendmsg(r->sock, &mh, MSG_NOSIGNAL)) == -1 &&
	    errno == EINTR)
		;
	if (n != 1)
		goto gone;
	while ((n = read(r->sock, &ans, 1)) == -1 && errno == EINTR)
		;
	if (n != 1)
		goto gone;
	return ans == 'y';
gone:
	errno = EIO;	/* fail closed: staging stops */
	return -1;
}

int
snap_fs_reader_file(struct snap_reader *r, struct snap_file *f)
{
	return reader_ask(r, f->fd, 'f');
}

int
snap_fs_reader_dir(struct snap_reader *r, struct snap_dir *d)
{
	return reader_ask(r, dirfd(d->d), 'd');
}
