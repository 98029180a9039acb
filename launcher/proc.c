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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ids.h"
#include "proc.h"

#define GATE_READY_TIMEOUT_MS	10000

/*
 * A program installed with aisb is looked for next to aisb's own binary
 * first (the same build or the same prefix), then on PATH.
 */
int
launch_find_program(const char *name, char *out, size_t len)
{
	char		 self[PATH_MAX], *slash;
	const char	*path, *p, *end;
	ssize_t		 n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/%s", self, name) < len &&
			    access(out, X_OK) == 0)
				return 0;
		}
	}
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
 * Closes every descriptor above low but keep (-1: none), however high the
 * open file limit lets them go: close_range(2), or a loop up to the soft
 * limit where the kernel has none (before 5.9).  0 or -1.
 */
static int
close_above(int low, int keep)
{
	struct rlimit	 rl;
	unsigned	 first = (unsigned)low + 1;
	int		 fd;

	if (keep > low) {
		if ((unsigned)keep > first &&
		    close_range(first, (unsigned)keep - 1, 0) == -1)
			goto loop;
		first = (unsigned)keep + 1;
	}
	if (close_range(first, ~0U, 0) == 0)
		return 0;
loop:
	if (errno != ENOSYS)
		return -1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	for (fd = low + 1; (rlim_t)fd < rl.rlim_cur && fd < INT_MAX; fd++)
		if (fd != keep)
			(void)close(fd);
	return 0;
}

/*
 * fork + execv.  fds[i] (or -1: inherit) becomes descriptor i of the child
 * for i < 3; extra_src (or -1) becomes descriptor extra_dst; every other
 * descriptor is closed.  The child runs in a process group of its own,
 * and gets SIGTERM when the launcher dies.
 */
pid_t
launch_spawn(char *const argv[], const int fds[3], int extra_src,
    int extra_dst)
{
	pid_t	 pid, parent = getpid();
	int	 i;

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
	if (extra_src != -1) {
		if (extra_src == extra_dst) {
			if (fcntl(extra_dst, F_SETFD, 0) == -1)
				_exit(127);
		} else if (dup2(extra_src, extra_dst) == -1)
			_exit(127);
	}
	if (close_above(2, extra_src != -1 ? extra_dst : -1) == -1)
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	_exit(127);
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

unsigned long long
launch_proc_start(pid_t pid)
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
	/* after the command name, which may hold anything: field 3 on */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

int
launch_proc_alive(pid_t pid, unsigned long long start)
{
	return pid > 0 && start != 0 && launch_proc_start(pid) == start;
}

int
launch_gate_start(struct launch_gate *g, const char *policy,
    const char *tokenfile, const char *auditfile, const char *logfile,
    const char *control, char *err, size_t errlen)
{
	if (launch_gate_spawn(g, policy, tokenfile, auditfile, logfile,
	    control, err, errlen) == -1)
		return -1;
	return launch_gate_ready(g, err, errlen);
}

int
launch_gate_spawn(struct launch_gate *g, const char *policy,
    const char *tokenfile, const char *auditfile, const char *logfile,
    const char *control, char *err, size_t errlen)
{
	char		 bin[PATH_MAX], user[64];
	char		*argv[24];
	int		 p[2], fds[3], logfd, argc = 0;

	memset(g, 0, sizeof(*g));
	g->pid = -1;
	g->readyfd = -1;
	g->logfile = logfile;
	if (launch_find_program("aisb-gate", bin, sizeof(bin)) == -1) {
		snprintf(err, errlen, "aisb-gate not found next to aisb or on "
		    "PATH; build it (make) or install it (make install)");
		return -1;
	}
	/* it parses what sandboxed commands send: never as root */
	if (launch_gate_user(user, sizeof(user), NULL, err, errlen) == -1)
		return -1;
	if ((logfd = open(logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", logfile, strerror(errno));
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	argv[argc++] = bin;
	argv[argc++] = (char *)"-d";
	argv[argc++] = (char *)"-v";
	argv[argc++] = (char *)"-f";
	argv[argc++] = (char *)policy;
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)"127.0.0.1:0";
	argv[argc++] = (char *)"--ready-fd";
	argv[argc++] = (char *)"3";
	argv[argc++] = (char *)"--token-file";
	argv[argc++] = (char *)tokenfile;
	argv[argc++] = (char *)"--audit";
	argv[argc++] = (char *)auditfile;
	if (control != NULL) {
		argv[argc++] = (char *)"--control";
		argv[argc++] = (char *)control;
	}
	if (user[0] != '\0') {
		argv[argc++] = (char *)"--user";
		argv[argc++] = user;
	}
	argv[argc] = NULL;

	fds[0] = -1;
	fds[1] = logfd;
	fds[2] = logfd;
	/* the ready pipe is descriptor 3 in the child */
	g->pid = launch_spawn(argv, fds, p[1], 3);
	close(p[1]);
	close(logfd);
	logfd = -1;
	if (g->pid == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		return -1;
	}
	g->readyfd = p[0];
	g->pending = 1;
	return 0;
}

int
launch_gate_ready(struct launch_gate *g, char *err, size_t errlen)
{
	struct pollfd	 pfd;
	char		 buf[16], *end;
	const char	*logfile = g->logfile;
	size_t		 off = 0;
	ssize_t		 n;
	unsigned long	 port;
	int		 rc, p[1];

	if (!g->pending) {
		snprintf(err, errlen, "aisb-gate was not started");
		return -1;
	}
	p[0] = g->readyfd;
	g->pending = 0;
	g->readyfd = -1;
	/* Ready when the port arrives; EOF first means the gate died. */
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		rc = poll(&pfd, 1, GATE_READY_TIMEOUT_MS);
		if (rc == -1 && errno == EINTR)
			continue;
		if (rc <= 0) {
			snprintf(err, errlen, "aisb-gate did not become ready "
			    "within %d s; see %s", GATE_READY_TIMEOUT_MS / 1000,
			    logfile);
			goto fail_child;
		}
		n = read(p[0], buf + off, sizeof(buf) - 1 - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
		if (memchr(buf, '\n', off) != NULL || off == sizeof(buf) - 1)
			break;
	}
	close(p[0]);
	buf[off] = '\0';
	port = strtoul(buf, &end, 10);
	if (off == 0 || *end != '\n' || port == 0 || port > 65535) {
		snprintf(err, errlen, "aisb-gate failed to start; see %s",
		    logfile);
		launch_gate_stop(g);
		return -1;
	}
	g->port = (uint16_t)port;
	return 0;

fail_child:
	close(p[0]);
	launch_gate_stop(g);
	return -1;
}

/* SIGTERM, a bounded wait, then SIGKILL. */
void
launch_gate_stop(struct launch_gate *g)
{
	struct timespec	 ts;
	long		 waited = 0, step = 1;	/* ms */
	int		 status;

	if (g->pending) {
		close(g->readyfd);
		g->readyfd = -1;
		g->pending = 0;
	}
	if (g->pid <= 0 || g->shared)
		return;		/* a named gate is its supervisor's to stop */
	kill(g->pid, SIGTERM);
	/* a gate exits in a few ms: look again soon, then less often */
	while (waited < 3000) {
		if (waitpid(g->pid, &status, WNOHANG) == g->pid) {
			g->pid = -1;
			return;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = step * 1000 * 1000;
		nanosleep(&ts, NULL);
		waited += step;
		if (step < 50)
			step *= 2;
	}
	kill(g->pid, SIGKILL);
	launch_wait(g->pid, &status);
	g->pid = -1;
}
