/*
 * Running the other programs: finding them next to aisb, spawning them
 * with argv arrays (never a shell), and the per-session gate.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "termsafe.h"
#include "host/paths.h"
#include "host/proc.h"

extern char **environ;

/*
 * A program installed with aisb is looked for next to aisb's own binary
 * first (the same build or the same prefix), then on PATH.
 */
int
launch_find_program(const char *name, char *out, size_t len)
{
	const char	*path, *p, *end;

	if (launch_beside_self(name, out, len) == 0 && access(out, X_OK) == 0)
		return 0;
	if ((path = getenv("PATH")) == NULL)
		return -1;
	for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end > p && (size_t)snprintf(out, len, "%.*s/%s",
		    (int)(end - p), p, name) < len && out[0] == '/' &&
		    access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * Closes every descriptor above low, however high the open file limit
 * lets them go: close_range(2), or a loop up to the soft limit where the
 * kernel has none (before 5.9).  0 or -1.
 */
static int
close_above(int low)
{
	struct rlimit	 rl;
	int		 fd;

	if (close_range((unsigned)low + 1, ~0U, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	for (fd = low + 1; (rlim_t)fd < rl.rlim_cur && fd < INT_MAX; fd++)
		(void)close(fd);
	return 0;
}

/*
 * fork + execv.  fds[i] (or -1: inherit) becomes descriptor i of the child
 * for i < 3; extra[k] becomes descriptor 3 + k (k < nextra, at most 8);
 * every other descriptor is closed.  The child runs in a process group of
 * its own, and gets SIGTERM when the launcher dies.
 */
pid_t
launch_spawn_fds(char *const argv[], const int fds[3], const int *extra,
    size_t nextra)
{
	pid_t	 pid, parent = getpid();
	int	 i, tmp[8];
	size_t	 k;

	if (nextra > sizeof(tmp) / sizeof(tmp[0])) {
		errno = EINVAL;
		return -1;
	}
	if ((pid = fork()) == -1)
		return -1;
	if (pid > 0)
		return pid;
	/*
	 * Dies with its launcher, even one killed outright: a gate with no
	 * one to stop it would serve the container on.  getppid: the
	 * launcher may have died before the prctl.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(127);
	/*
	 * Out of aisb's process group: a signal to that group (timeout(1),
	 * a CI runner, Ctrl-C) is aisb's to pass on, and must not stop the
	 * gate under a session that is still ending.
	 */
	if (setpgid(0, 0) == -1)
		_exit(127);
	for (i = 0; i < 3; i++)
		if (fds[i] != -1 && fds[i] != i && dup2(fds[i], i) == -1)
			_exit(127);
	/* above every target first, so that no dup2 lands on a source */
	for (k = 0; k < nextra; k++)
		if ((tmp[k] = fcntl(extra[k], F_DUPFD_CLOEXEC, 3 +
		    (int)nextra)) == -1)
			_exit(127);
	for (k = 0; k < nextra; k++)
		if (dup2(tmp[k], 3 + (int)k) == -1)
			_exit(127);
	if (close_above(2 + (int)nextra) == -1)
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	_exit(127);
}

pid_t
launch_spawn(char *const argv[], const int fds[3], int extra_src,
    int extra_dst)
{
	if (extra_src != -1 && extra_dst != 3) {
		errno = EINVAL;
		return -1;
	}
	return launch_spawn_fds(argv, fds, &extra_src, extra_src != -1);
}

/*
 * fork + execv of a session's podman: a child of this terminal, unlike
 * launch_spawn's.  With own_group it leads a process group of its own
 * (set on both sides, so that neither races the other); mask is the
 * signal mask it gets back before the exec.
 */
pid_t
launch_spawn_fg(char *const argv[], int own_group, const sigset_t *mask)
{
	pid_t	pid;

	if ((pid = fork()) == 0) {
		if ((own_group && setpgid(0, 0) == -1) ||
		    sigprocmask(SIG_SETMASK, mask, NULL) == -1)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid != -1 && own_group)
		(void)setpgid(pid, pid);	/* as the child does */
	return pid;
}

int
launch_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* Exit status as a shell reports it: the code, or 128 + the signal. */
int
launch_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---- launch_exec: a child with pipes, a deadline and its stderr's tail -- */

#define ERRTAIL_MAX		1024		/* child stderr kept for err */

static int
ms_left(const struct timespec *deadline)
{
	struct timespec	now;
	long long	ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	if (ms < 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Keeps the last ERRTAIL_MAX bytes the child wrote to stderr. */
static void
tail_append(char *tail, size_t *tlen, const char *p, size_t n)
{
	if (n >= ERRTAIL_MAX) {
		memcpy(tail, p + n - ERRTAIL_MAX, ERRTAIL_MAX);
		*tlen = ERRTAIL_MAX;
		return;
	}
	if (*tlen + n > ERRTAIL_MAX) {
		memmove(tail, tail + (*tlen + n - ERRTAIL_MAX),
		    ERRTAIL_MAX - n);
		*tlen = ERRTAIL_MAX - n;
	}
	memcpy(tail + *tlen, p, n);
	*tlen += n;
}

/* The last non-empty line of the tail, terminal-safe (termsafe.h). */
static void
tail_last_line(const char *tail, size_t tlen, char *err, size_t errlen)
{
	size_t	end = tlen, start;

	while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == '\r' ||
	    tail[end - 1] == ' '))
		end--;
	start = end;
	while (start > 0 && tail[start - 1] != '\n')
		start--;
	if (errlen == 0)
		return;
	term_clean(err, errlen, tail + start, end - start, 0, NULL);
}

static int
reap(pid_t pid, int timeout_ms, int *status)
{
	struct timespec	deadline;
	pid_t		r;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	for (;;) {
		r = waitpid(pid, status, timeout_ms < 0 ? 0 : WNOHANG);
		if (r == pid)
			return 0;
		if (r == -1 && errno != EINTR)
			return -1;
		if (r == 0) {
			if (ms_left(&deadline) == 0)
				return 1;
			(void)poll(NULL, 0, 20);
		}
	}
}

static void
kill_and_reap(pid_t pid)
{
	int	status;

	(void)kill(pid, SIGTERM);
	if (reap(pid, 5000, &status) == 1) {
		(void)kill(pid, SIGKILL);
		(void)reap(pid, -1, &status);
	}
}

int
launch_exec(char *const argv[], const char *in, size_t inlen, char *out,
    size_t outlen, int timeout_ms, int flags, char *err, size_t errlen)
{
	return launch_exec_env(argv, NULL, in, inlen, out, outlen, timeout_ms,
	    flags, err, errlen);
}

/* The pipes and buffers of one launch_exec_env() while the child runs. */
struct exec_io {
	int		 inp[2], outp[2], errp[2];
	const char	*in;
	size_t		 inlen, inoff;
	char		*out;
	size_t		 outlen, olen;
	char		 tail[ERRTAIL_MAX];	/* the child's stderr's end */
	size_t		 tlen;
	int		 show, tee;
};

/*
 * The child of launch_exec_env(): its stdin, stdout and stderr from io's
 * pipes (or /dev/null, or ours), default signals and an empty mask.  Our
 * copies of its ends are closed.  0, or -1 with err.
 */
static int
exec_spawn(char *const argv[], char *const envp[], struct exec_io *io,
    pid_t *pid, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t	 attr;
	sigset_t		 set;
	int			 e;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0) {
		snprintf(err, errlen, "spawn: %s", strerror(e));
		return -1;
	}
	if (io->in != NULL)
		posix_spawn_file_actions_adddup2(&fa, io->inp[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		    O_RDONLY, 0);
	if (io->out != NULL)
		posix_spawn_file_actions_adddup2(&fa, io->outp[1], 1);
	else if (io->show || io->tee)
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
		    O_WRONLY, 0);
	if (!io->show)
		posix_spawn_file_actions_adddup2(&fa, io->errp[1], 2);

	/* The child starts with default signals and an empty mask. */
	posix_spawnattr_init(&attr);
	sigemptyset(&set);
	posix_spawnattr_setsigmask(&attr, &set);
	sigaddset(&set, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &set);
	posix_spawnattr_setflags(&attr,
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawnp(pid, argv[0], &fa, &attr, argv,
	    envp != NULL ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (e != 0) {
		snprintf(err, errlen, "%s: %s", argv[0], e == ENOENT ?
		    "not found in PATH" : strerror(e));
		return -1;
	}
	/* Our copies of the child's ends. */
	if (io->inp[0] != -1) {
		close(io->inp[0]);
		io->inp[0] = -1;
		(void)fcntl(io->inp[1], F_SETFL, O_NONBLOCK);
		if (io->inlen == 0) {
			close(io->inp[1]);
			io->inp[1] = -1;
		}
	}
	if (io->outp[1] != -1) {
		close(io->outp[1]);
		io->outp[1] = -1;
	}
	if (io->errp[1] != -1) {
		close(io->errp[1]);
		io->errp[1] = -1;
	}
	return 0;
}

/* One descriptor poll() said is ready: its input written, or read. */
static void
exec_ready(struct exec_io *io, int fd)
{
	char	 buf[4096];
	ssize_t	 n;

	if (fd == io->inp[1]) {
		n = write(io->inp[1], io->in + io->inoff, io->inlen - io->inoff);
		if (n > 0)
			io->inoff += (size_t)n;
		if ((n == -1 && errno != EAGAIN && errno != EINTR) ||
		    io->inoff == io->inlen) {
			close(io->inp[1]);
			io->inp[1] = -1;
		}
		return;
	}
	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (fd == io->outp[0]) {
			close(io->outp[0]);
			io->outp[0] = -1;
		} else {
			close(io->errp[0]);
			io->errp[0] = -1;
		}
		return;
	}
	if (fd == io->errp[0]) {
		if (io->tee)
			(void)file_write_all(2, buf, (size_t)n);
		tail_append(io->tail, &io->tlen, buf, (size_t)n);
	} else if (io->olen + 1 < io->outlen) {
		/* Bounded: the rest is read and dropped. */
		if ((size_t)n > io->outlen - 1 - io->olen)
			n = (ssize_t)(io->outlen - 1 - io->olen);
		memcpy(io->out + io->olen, buf, (size_t)n);
		io->olen += (size_t)n;
		io->out[io->olen] = '\0';
	}
}

/*
 * Feeds the child's stdin and reads its stdout and stderr until all are
 * closed: 0, or 1 when the deadline passed or poll failed (the child is
 * to be killed then; err says why for the latter).
 */
static int
exec_pump(struct exec_io *io, int timeout_ms,
    const struct timespec *deadline, char *err, size_t errlen)
{
	struct pollfd	 pfd[3];
	int		 i, nfd;

	for (;;) {
		nfd = 0;
		if (io->inp[1] != -1) {
			pfd[nfd].fd = io->inp[1];
			pfd[nfd++].events = POLLOUT;
		}
		if (io->outp[0] != -1) {
			pfd[nfd].fd = io->outp[0];
			pfd[nfd++].events = POLLIN;
		}
		if (io->errp[0] != -1) {
			pfd[nfd].fd = io->errp[0];
			pfd[nfd++].events = POLLIN;
		}
		if (nfd == 0)
			return 0;
		if (timeout_ms > 0 && ms_left(deadline) == 0)
			return 1;
		if (poll(pfd, (nfds_t)nfd, timeout_ms > 0 ?
		    ms_left(deadline) : -1) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return 1;	/* kill it: we cannot watch it */
		}
		for (i = 0; i < nfd; i++)
			if (pfd[i].revents != 0)
				exec_ready(io, pfd[i].fd);
	}
}

int
launch_exec_env(char *const argv[], char *const envp[], const char *in,
    size_t inlen, char *out, size_t outlen, int timeout_ms, int flags,
    char *err, size_t errlen)
{
	struct exec_io		 io_, *io = &io_;
	struct sigaction	 sa, osa;
	struct timespec		 deadline;
	pid_t			 pid;
	int			 status, rc = -1, e, i, timed_out;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out != NULL && outlen > 0)
		out[0] = '\0';
	memset(io, 0, sizeof(*io));
	for (i = 0; i < 2; i++)
		io->inp[i] = io->outp[i] = io->errp[i] = -1;
	io->in = in;
	io->inlen = inlen;
	io->out = out;
	io->outlen = outlen;
	io->tee = (flags & LAUNCH_EXEC_TEE) != 0;
	/* with tee, stderr is read here, and copied to ours */
	io->show = !io->tee && (flags & LAUNCH_EXEC_SHOW) != 0;
	if ((in != NULL && pipe2(io->inp, O_CLOEXEC) == -1) ||
	    (out != NULL && pipe2(io->outp, O_CLOEXEC) == -1) ||
	    (!io->show && pipe2(io->errp, O_CLOEXEC) == -1)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto closeall;
	}
	/* A child that stops reading its stdin must not kill us. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGPIPE, &sa, &osa);
	if (exec_spawn(argv, envp, io, &pid, err, errlen) == -1)
		goto restore;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	timed_out = exec_pump(io, timeout_ms, &deadline, err, errlen);
	if (!timed_out) {
		e = reap(pid, timeout_ms > 0 ? ms_left(&deadline) : -1,
		    &status);
		if (e == 1)
			timed_out = 1;
		else if (e == -1) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			goto restore;
		}
	}
	if (timed_out) {
		kill_and_reap(pid);
		if (err != NULL && errlen > 0 && err[0] == '\0')
			snprintf(err, errlen, "%s: still running after %d%s, "
			    "killed", argv[0], timeout_ms >= 1000 ?
			    timeout_ms / 1000 : timeout_ms,
			    timeout_ms >= 1000 ? " s" : " ms");
		goto restore;
	}
	rc = launch_exit_code(status);
	if (rc != 0 && err != NULL && errlen > 0) {
		tail_last_line(io->tail, io->tlen, err, errlen);
		if (err[0] == '\0')
			snprintf(err, errlen, "%s exited with status %d",
			    argv[0], rc);
	}
restore:
	(void)sigaction(SIGPIPE, &osa, NULL);
closeall:
	for (i = 0; i < 2; i++) {
		if (io->inp[i] != -1)
			close(io->inp[i]);
		if (io->outp[i] != -1)
			close(io->outp[i]);
		if (io->errp[i] != -1)
			close(io->errp[i]);
	}
	return rc;
}

int
launch_run_quiet(char *const argv[], char *out, size_t outlen, int timeout_ms,
    int verbose, char *err, size_t errlen)
{
	int	rc;

	rc = launch_exec(argv, NULL, 0, out, outlen, timeout_ms,
	    verbose ? LAUNCH_EXEC_SHOW : 0, err, errlen);
	if (rc == 0)
		return 0;
	if (rc > 0 && verbose)
		snprintf(err, errlen, "%s exited with status %d", argv[0], rc);
	return -1;
}

/*
 * Read once, so that the two fields are of one process: after the command
 * name, which may hold anything, the state is field 3 and the start time
 * field 22.
 */
unsigned long long
launch_proc_stat(pid_t pid, char *state)
{
	char			 path[64], buf[1024], *p;
	unsigned long long	 start = 0;
	ssize_t			 n;
	int			 fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return 0;
	if (state != NULL)
		*state = p[2];
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

unsigned long long
launch_proc_start(pid_t pid)
{
	return launch_proc_stat(pid, NULL);
}

int
launch_proc_alive(pid_t pid, unsigned long long start)
{
	return pid > 0 && start != 0 && launch_proc_start(pid) == start;
}
