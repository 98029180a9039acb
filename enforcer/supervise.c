/*
 * The command's parent: process group, forwarding, reaping (supervise.h).
 *
 *	catatonit (PID 1, container root)
 *	  `- aisb-enforce: uid 0, CAP_KILL only (direct mode: + NET_ADMIN)
 *	       `- COMMAND: uid 1000, no capability, its own process group
 *
 * A stop signal reaches catatonit (podman's signal proxy, podman stop,
 * podman kill); catatonit passes it to its child, which it may signal
 * without a capability (same uid); the enforcer passes it to the command's
 * group with CAP_KILL.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <linux/capability.h>

#include "exitcode.h"
#include "log.h"
#include "enforcer/plan.h"
#include "enforcer/supervise.h"

const int enf_forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT
};
const size_t enf_nforwarded = sizeof(enf_forwarded) / sizeof(enf_forwarded[0]);

int
enf_is_foreground(void)
{
	pid_t	 fg;

	return isatty(STDIN_FILENO) && (fg = tcgetpgrp(STDIN_FILENO)) != -1 &&
	    fg == getpgrp();
}

/*
 * Own process group; with fg, the terminal's foreground group too, so
 * that the command reads the terminal (no SIGTTIN) and gets its Ctrl-C.
 * tcsetpgrp from what is then a background group raises SIGTTOU: blocked
 * for the call.
 */
static int
own_group(int fg, char *err, size_t errlen)
{
	sigset_t	 tt, old;
	int		 rc = 0;

	if (setpgid(0, 0) == -1 && getpgrp() != getpid()) {
		snprintf(err, errlen, "setpgid: %s", strerror(errno));
		return -1;
	}
	if (!fg)
		return 0;
	sigemptyset(&tt);
	sigaddset(&tt, SIGTTOU);
	if (sigprocmask(SIG_BLOCK, &tt, &old) == -1) {
		snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
		return -1;
	}
	if (tcsetpgrp(STDIN_FILENO, getpid()) == -1) {
		snprintf(err, errlen, "tcsetpgrp: %s", strerror(errno));
		rc = -1;
	}
	if (sigprocmask(SIG_SETMASK, &old, NULL) == -1) {
		snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
		rc = -1;
	}
	return rc;
}

/*
 * Why the command could not be run, in one or two lines that say what to
 * do: a bare name not found is a package missing from the image; a path
 * that exists but cannot be run gets its mode, or the noexec mount, or
 * its #! interpreter that is missing.  Runs as the sandbox user, after
 * the drop: it sees what the command would have seen.
 */
/*
 * Where execvp would have found name: the first file of that name in a
 * PATH folder, into buf.  0, or -1 when there is none (folders the user
 * cannot search count as not having it, as in the shell).
 */
static int
path_lookup(const char *name, char *buf, size_t len)
{
	const char	*path = getenv("PATH"), *p, *end;
	struct stat	 st;
	int		 n;

	if (path == NULL)
		path = "/bin:/usr/bin";
	for (p = path; ; p = end + 1) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		n = snprintf(buf, len, "%.*s/%s", (int)(end - p), p, name);
		if (end > p && n > 0 && (size_t)n < len &&
		    stat(buf, &st) == 0 && !S_ISDIR(st.st_mode))
			return 0;
		if (*end == '\0')
			return -1;
	}
}

int
enf_exec_failed(const char *name, int e)
{
	struct stat	 st;
	struct statvfs	 vfs;
	char		 line[128], found[4096];
	ssize_t		 n;
	int		 fd;

	if (strchr(name, '/') == NULL) {
		/*
		 * execvp says EACCES for a name it did not find when a PATH
		 * folder was not searchable: not found, for the shell too.
		 */
		if (e == ENOENT || (e == EACCES &&
		    path_lookup(name, found, sizeof(found)) == -1)) {
			/* the launcher names the package: it can ask dpkg */
			log_warnx("%s: command not found in the sandbox's image;"
			    " add the Debian package that provides it (aisb "
			    "--package PACKAGE -- ...)", name);
			return 127;
		}
		if (e == EACCES)
			name = found;	/* say why that file is not run */
		else {
			log_warnx("%s: found in PATH but cannot be run: %s",
			    name, strerror(e));
			return 126;
		}
	}
	if (stat(name, &st) == -1) {
		log_warnx("%s: %s", name, strerror(errno));
		return e == ENOENT ? 127 : 126;
	}
	if (e == ENOENT) {
		/* the file is there: its interpreter or loader is not */
		line[0] = '\0';
		if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
		    O_NONBLOCK)) != -1) {
			if ((n = read(fd, line, sizeof(line) - 1)) > 2 &&
			    line[0] == '#' && line[1] == '!') {
				line[n] = '\0';
				line[strcspn(line, "\r\n")] = '\0';
			} else
				line[0] = '\0';
			close(fd);
		}
		if (line[0] != '\0') {
			log_warnx("%s: its interpreter is not in the sandbox's "
			    "image: %.100s", name, line);
			return 127;
		} else
			log_warnx("%s: a program whose loader or libraries "
			    "are not in the sandbox's image", name);
		return 127;
	}
	if (e == EACCES && S_ISDIR(st.st_mode))
		log_warnx("%s: is a directory", name);
	else if (e == EACCES && !S_ISREG(st.st_mode))
		log_warnx("%s: not a regular file (mode %04o)", name,
		    (unsigned)(st.st_mode & 07777));
	else if (e == EACCES && (st.st_mode & 0111) == 0)
		log_warnx("%s: not executable (mode %04o); make it so: "
		    "chmod +x %s", name, (unsigned)(st.st_mode & 07777),
		    name);
	else if (e == EACCES && statvfs(name, &vfs) == 0 &&
	    (vfs.f_flag & ST_NOEXEC))
		log_warnx("%s: its file system is mounted noexec; run it "
		    "with its interpreter (sh %s, python3 %s)", name, name,
		    name);
	else if (e == EACCES)
		log_warnx("%s: mode %04o, owner %u:%u: not executable by uid "
		    "%u", name, (unsigned)(st.st_mode & 07777),
		    (unsigned)st.st_uid, (unsigned)st.st_gid,
		    (unsigned)getuid());
	else
		log_warnx("%s: %s", name, strerror(e));
	return 126;
}

void
enf_cmd_child(int go, const sigset_t *oldmask, pid_t parent, int fg,
    const struct enf_creds *creds, const int *keep, size_t nkeep, char **cmd)
{
	char	 err[256], c;
	ssize_t	 n;
	int	 e;

	while ((n = read(go, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 1) {
		log_warnx("the command's parent failed; not running the "
		    "command");
		_exit(EXIT_ENFORCE);
	}
	if (own_group(fg, err, sizeof(err)) == -1) {
		log_warnx("before the command: %s", err);
		_exit(EXIT_ENFORCE);
	}
	if (sigprocmask(SIG_SETMASK, oldmask, NULL) == -1) {
		/* the command must not start with its signals blocked */
		log_warn("restoring the signal mask");
		_exit(EXIT_ENFORCE);
	}
	if (enf_close_fds(keep, nkeep, err, sizeof(err)) == -1 ||
	    enf_drop_all(creds, err, sizeof(err)) == -1) {
		log_warnx("before the command: %s", err);
		_exit(EXIT_ENFORCE);
	}
	/* After the drop: changing credentials clears the death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent) {
		log_warnx("the command's parent is gone; not running the "
		    "command");
		_exit(EXIT_ENFORCE);
	}
	execvp(cmd[0], cmd);
	e = errno;
	_exit(enf_exec_failed(cmd[0], e));
}

void
enf_forward(pid_t cmd, int sig)
{
	/*
	 * The group is the command's pid (setpgid by both sides of the
	 * fork).  A command that moved itself elsewhere (a job-control
	 * shell, setsid) still gets it by pid.
	 */
	if (kill(-cmd, sig) == -1 || getpgid(cmd) != cmd) {
		if (kill(cmd, sig) == -1 && errno != ESRCH)
			log_warn("forwarding signal %d", sig);
	}
}

int
enf_reap(pid_t cmd, int *status)
{
	pid_t	 p;
	int	 st, done = 0;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == cmd) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) :
			    128 + WTERMSIG(st);
			done = 1;
		}
	return done;
}

int
enf_supervise(const struct enf_creds *creds, const int *keep, size_t nkeep,
    char **cmd)
{
	siginfo_t	 si;
	sigset_t	 set, oldmask;
	char		 err[256];
	pid_t		 pid, parent = getpid();
	size_t		 i;
	int		 go[2] = { -1, -1 }, fg, status = EXIT_ENFORCE;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < enf_nforwarded; i++)
		sigaddset(&set, enf_forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, &oldmask) == -1 ||
	    pipe2(go, O_CLOEXEC) == -1) {
		log_warn("signals");
		return EXIT_ENFORCE;
	}
	/* before the fork: the child's group may exist by the time we look */
	fg = enf_is_foreground();
	if ((pid = fork()) == -1) {
		log_warn("fork");
		close(go[0]);
		close(go[1]);
		return EXIT_ENFORCE;
	}
	if (pid == 0) {
		close(go[1]);
		enf_cmd_child(go[0], &oldmask, parent, fg, creds, keep, nkeep,
		    cmd);
	}
	close(go[0]);
	/* both sides: a signal forwarded before the child runs finds it */
	(void)setpgid(pid, pid);

	{
		int	 mine[1] = { go[1] };

		if (enf_close_fds(mine, 1, err, sizeof(err)) == -1 ||
		    enf_drop_keep(1ULL << CAP_KILL, err, sizeof(err)) == -1) {
			log_warnx("the command's parent: %s", err);
			kill(pid, SIGKILL);
			close(go[1]);
			(void)waitpid(pid, NULL, 0);
			return EXIT_ENFORCE;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (write(go[1], "g", 1) != 1) {
		log_warn("go");
		kill(pid, SIGKILL);
	}
	close(go[1]);

	for (;;) {
		if (sigwaitinfo(&set, &si) == -1) {
			if (errno == EINTR)
				continue;
			/* cannot happen; still, never leave the command */
			log_warn("sigwaitinfo");
			while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
				;
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status);
		}
		if (si.si_signo == SIGCHLD) {
			if (enf_reap(pid, &status))
				break;
			continue;
		}
		enf_forward(pid, si.si_signo);
	}
	return status;
}
