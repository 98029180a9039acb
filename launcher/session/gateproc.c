/*
 * A session's own gate: aisb-gate started for it on 127.0.0.1:0, its
 * readiness read from a pipe, stopped at the end (a named gate's
 * supervisor starts its gate the same way: gates.c).
 */
#include "config.h"

#include <sys/types.h>
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

#include "host/proc.h"
#include "session/gateproc.h"
#include "session/ids.h"

#define GATE_READY_TIMEOUT_MS	10000

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
	return launch_gate_spawn_record(g, policy, tokenfile, auditfile,
	    logfile, control, NULL, 0, err, errlen);
}


int
launch_gate_spawn_record(struct launch_gate *g, const char *policy,
    const char *tokenfile, const char *auditfile, const char *logfile,
    const char *control, const char *capture, uint64_t capture_max,
    char *err, size_t errlen)
{
	return launch_gate_spawn_args(g, policy, tokenfile, auditfile,
	    logfile, control, capture, capture_max, NULL, err, errlen);
}


int
launch_gate_spawn_args(struct launch_gate *g, const char *policy,
    const char *tokenfile, const char *auditfile, const char *logfile,
    const char *control, const char *capture, uint64_t capture_max,
    const char *const *extra, char *err, size_t errlen)
{
	struct launch_gate_args	 a = { policy, tokenfile, auditfile, logfile,
	    control, capture, capture_max, extra, -1, NULL, NULL };

	return launch_gate_spawn_with(g, &a, err, errlen);
}

/* The gate's argv for a, into argv (room for GATE_ARGV); its length. */
#define GATE_ARGV	(34 + LAUNCH_GATE_EXTRA)
static int
gate_argv(char **argv, char *bin, char *user, char *maxarg, size_t maxlen,
    const struct launch_gate_args *a)
{
	int	 argc = 0, k;

	argv[argc++] = bin;
	argv[argc++] = (char *)"-d";
	argv[argc++] = (char *)"-v";
	argv[argc++] = (char *)"-f";
	argv[argc++] = (char *)a->policy;
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)"127.0.0.1:0";
	argv[argc++] = (char *)"--ready-fd";
	argv[argc++] = (char *)"3";
	argv[argc++] = (char *)"--token-file";
	argv[argc++] = (char *)a->tokenfile;
	argv[argc++] = (char *)"--audit";
	argv[argc++] = (char *)a->auditfile;
	if (a->control != NULL) {
		argv[argc++] = (char *)"--control";
		argv[argc++] = (char *)a->control;
	}
	if (user[0] != '\0') {
		argv[argc++] = (char *)"--user";
		argv[argc++] = user;
	}
	/* the gate creates it before its drop, as it does the audit file */
	if (a->capture != NULL) {
		snprintf(maxarg, maxlen, "%llu",
		    (unsigned long long)a->capture_max);
		argv[argc++] = (char *)"--record";
		argv[argc++] = (char *)a->capture;
		argv[argc++] = (char *)"--record-max";
		argv[argc++] = maxarg;
	}
	/* the values: on descriptor 4, never here (argv is visible) */
	if (a->secrets_fd != -1) {
		argv[argc++] = (char *)"--secrets-fd";
		argv[argc++] = (char *)"4";
	}
	if (a->ca_out != NULL) {
		argv[argc++] = (char *)"--ca-out";
		argv[argc++] = (char *)a->ca_out;
	}
	if (a->upstream_ca != NULL) {
		argv[argc++] = (char *)"--upstream-ca";
		argv[argc++] = (char *)a->upstream_ca;
	}
	for (k = 0; a->extra != NULL && a->extra[k] != NULL &&
	    k < LAUNCH_GATE_EXTRA; k++)
		argv[argc++] = (char *)a->extra[k];
	argv[argc] = NULL;
	return argc;
}

int
launch_gate_spawn_with(struct launch_gate *g, const struct launch_gate_args *a,
    char *err, size_t errlen)
{
	char		 bin[PATH_MAX], user[64], maxarg[24];
	char		*argv[GATE_ARGV];
	int		 p[2], fds[3], extra[2], logfd;

	memset(g, 0, sizeof(*g));
	g->pid = -1;
	g->readyfd = -1;
	g->logfile = a->logfile;
	if (launch_find_program("aisb-gate", bin, sizeof(bin)) == -1) {
		snprintf(err, errlen, "aisb-gate not found next to aisb or on "
		    "PATH; build it (make) or install it (make install)");
		return -1;
	}
	/* it parses what sandboxed commands send: never as root */
	if (launch_gate_user(user, sizeof(user), NULL, err, errlen) == -1)
		return -1;
	if ((logfd = open(a->logfile, O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", a->logfile, strerror(errno));
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	(void)gate_argv(argv, bin, user, maxarg, sizeof(maxarg), a);
	fds[0] = -1;
	fds[1] = logfd;
	fds[2] = logfd;
	/* the ready pipe is descriptor 3 in the child, the secrets 4 */
	extra[0] = p[1];
	extra[1] = a->secrets_fd;
	g->pid = launch_spawn_fds(argv, fds, extra, a->secrets_fd != -1 ?
	    2 : 1);
	close(p[1]);
	close(logfd);
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
