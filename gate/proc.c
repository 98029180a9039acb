/*
 * The gate as a process: its listening sockets, the event loop of each
 * worker (accepting, signals, the drain on SIGTERM), and the supervisor
 * of --workers.  main.c calls it in order: gate_proc_prepare, gate_listen,
 * gate_announce, then (privileges dropped, daemonized) gate_proc_run.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "file.h"
#include "exitcode.h"
#include "log.h"
#include "gate/gate.h"

#define LISTEN_BACKLOG	511
#define NSIGS		4	/* watched by a worker's loop (run) */

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	gate_accept(arg, fd, sa, salen);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate	*g = arg;

	if (g->listener != NULL)
		evconnlistener_enable(g->listener);
}

/*
 * EMFILE and friends.  The listening socket stays readable, so retrying at
 * once would spin: pause accepting for a second instead.
 */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct gate	*g = arg;
	struct timeval	 tv = { 1, 0 };
	int		 e = EVUTIL_SOCKET_ERROR();

	log_warnx("accept: %s; pausing for a second",
	    evutil_socket_error_to_string(e));
	/* Without the timer to resume it, a paused listener stays paused. */
	if (evtimer_add(g->accept_pause, &tv) == -1) {
		log_warnx("accept: cannot arm the pause timer, not pausing");
		return;
	}
	evconnlistener_disable(l);
}

static void
drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gate	*g = arg;

	log_warnx("drain: %llu connection(s) still open after %us, closing",
	    (unsigned long long)g->num->ctr.active, g->cfg.drain_timeout);
	gate_conn_close_all(g);
	event_base_loopexit(g->base, NULL);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct gate	*g = arg;
	struct timeval	 tv;

	switch (sig) {
	case SIGHUP:
		gate_reload(g);
		break;
	case SIGTERM:
		if (g->draining)
			break;
		g->draining = 1;
		gate_inspect_pool_flush(g);	/* kept upstream legs */
		if (g->listener != NULL) {
			evconnlistener_free(g->listener);
			g->listener = NULL;
		}
		log_warnx("SIGTERM: draining %llu connection(s) for up to %us",
		    (unsigned long long)g->num->ctr.active, g->cfg.drain_timeout);
		/* --ask: nothing held outlives the gate; each is denied */
		gate_ask_deny_all(g);
		if (TAILQ_EMPTY(&g->conns)) {
			event_base_loopexit(g->base, NULL);
			break;
		}
		tv.tv_sec = g->cfg.drain_timeout;
		tv.tv_usec = 0;
		g->drain_timer = evtimer_new(g->base, drain_timeout_cb, g);
		if (g->drain_timer == NULL ||
		    evtimer_add(g->drain_timer, &tv) == -1)
			event_base_loopexit(g->base, NULL);
		break;
	case SIGINT:
		log_warnx("SIGINT: exiting now");
		event_base_loopbreak(g->base);
		break;
	case SIGUSR1:
		/* logrotate's postrotate: the audit log only, no reload */
		if (gate_audit_rotate(g) == 0 && g->audit != NULL)
			log_info("SIGUSR1: audit log reopened");
		break;
	}
}

/* The port file appears complete or not at all: write, then rename. */
static int
write_port_file(const char *path, const char *line)
{
	char	 tmp[PATH_MAX];
	int	 fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) ==
	    -1)
		return -1;
	if (file_write_all(fd, line, strlen(line)) == -1 || close(fd) == -1 ||
	    rename(tmp, path) == -1) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void
raise_nofile(struct gate *g, struct gate_config *cfg)
{
	struct rlimit	 rl;
	rlim_t		 need;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1 &&
	    getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	g->fd_limit = rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX :
	    (unsigned long)rl.rlim_cur;
	need = (rlim_t)cfg->max_conns * 2 + GATE_FD_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		cfg->max_conns = rl.rlim_cur > 2 * GATE_FD_RESERVE ?
		    (unsigned)((rl.rlim_cur - GATE_FD_RESERVE) / 2) : 16;
		log_warnx("open file limit %llu: max connections lowered to %u",
		    (unsigned long long)rl.rlim_cur, cfg->max_conns);
	}
}

/*
 * A listening TCP socket on ss.  With reuseport, several sockets share the
 * address (SO_REUSEPORT) and the kernel spreads connections over them:
 * one per worker.
 */
static int
listen_on(struct gate *g, const struct sockaddr_storage *ss, socklen_t len,
    int reuseport)
{
	int	 fd, one = 1;

	if ((fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
	    sizeof(one)) == -1) ||
	    bind(fd, (const struct sockaddr *)ss, len) == -1 ||
	    listen(fd, LISTEN_BACKLOG) == -1) {
		int	 e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	/* Linux: accepted sockets inherit it, one setsockopt a tunnel less */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		g->accept_nodelay = 1;
	return fd;
}

/*
 * One event loop: the connections of one listening socket (and of the
 * control socket, when ctlfd is not -1) until SIGTERM drained them or
 * SIGINT.  Without --workers it runs in the only process.
 */
static int
run(struct gate *g, int lfd, int ctlfd)
{
	struct gate_config	*cfg = &g->cfg;
	struct event		*sigs[NSIGS];
	sigset_t		 set;
	int			 i, rc = EXIT_SUCCESS;
	int			 signums[NSIGS] = { SIGHUP, SIGTERM, SIGINT,
				    SIGUSR1 };
	char			 addr[128];

	clock_gettime(CLOCK_MONOTONIC, &g->started);
	TAILQ_INIT(&g->conns);
	if (gate_clients_init(g) == -1 ||
	    (g->scratch = malloc(GATE_SCRATCH)) == NULL ||
	    (g->synth = gate_synth_new()) == NULL ||
	    gate_ask_init(g) == -1)
		fatal("malloc");
	if ((g->base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	if (gate_audit_batch(g->audit, g->base) == -1)
		fatalx("event_new failed");
	if ((g->dns = gate_dns_new(g->base, g->policy, cfg->dns_grace,
	    cfg->dns_timeout)) == NULL)
		fatalx("cannot start the resolver");
	if ((g->listener = evconnlistener_new(g->base, accept_cb, g,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, lfd)) == NULL)
		fatalx("cannot watch the listening socket");
	evconnlistener_set_error_cb(g->listener, accept_error_cb);
	if ((g->accept_pause = evtimer_new(g->base, accept_resume_cb, g)) ==
	    NULL)
		fatalx("evtimer_new failed");
	if (ctlfd != -1 && (g->control = gate_control_open(g,
	    cfg->control_path, ctlfd)) == NULL)
		fatalx("cannot serve the control socket %s", cfg->control_path);
	/* --watch: one watcher, worker 0's (the others get its SIGHUP) */
	if (cfg->watch && g->worker == 0 &&
	    (g->watch = gate_watch_open(g)) == NULL)
		fatalx("--watch: out of memory");
	if (g->metrics_fd != -1) {
		if ((g->metrics = gate_metrics_open(g, g->metrics_fd)) == NULL)
			fatalx("cannot serve the metrics socket %s",
			    cfg->metrics_listen);
		g->metrics_fd = -1;	/* the listener's now */
		gate_dns_stats(g->dns, &g->num->st);
	}
	for (i = 0; i < NSIGS; i++)
		if ((sigs[i] = evsignal_new(g->base, signums[i], signal_cb,
		    g)) == NULL || evsignal_add(sigs[i], NULL) == -1)
			fatalx("cannot watch signal %d", signums[i]);
	/* a worker's signals were blocked by the supervisor: watched now */
	sigemptyset(&set);
	for (i = 0; i < NSIGS; i++)
		sigaddset(&set, signums[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_UNBLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	gate_sockaddr_str(&g->bound, addr, sizeof(addr));
	/* (a single worker's "up" line is main's) */
	if (cfg->workers > 1)
		log_info("worker %u (pid %ld) listening on %s", g->worker,
		    (long)getpid(), addr);

	if (event_base_dispatch(g->base) == -1) {
		log_warnx("event loop failed");
		rc = 1;
	}

	gate_conn_close_all(g);
	gate_ask_free(g);
	gate_metrics_close(g->metrics);
	g->metrics = NULL;
	for (i = 0; i < NSIGS; i++)
		event_free(sigs[i]);
	if (g->drain_timer != NULL)
		event_free(g->drain_timer);
	event_free(g->accept_pause);
	if (g->listener != NULL)
		evconnlistener_free(g->listener);
	gate_control_close(g->control);
	gate_watch_close(g->watch);
	g->watch = NULL;
	gate_dns_free(g->dns);
	gate_audit_close(g->audit);
	gate_record_close(g->record);
	g->record = NULL;
	gate_auth_free(g->auth);
	gate_users_free(g->users);
	gate_clients_free(g);
	gate_pipes_free(g);
	gate_dnsgate_free(g);
	gate_synth_free(g->synth);
	free(g->scratch);
	policy_free(g->policy);
	event_base_free(g->base);
	return rc;
}

/*
 * --workers N: N processes, each with its own loop, listening socket
 * (SO_REUSEPORT) and descriptor table, forked after everything that may
 * need root.  The supervisor only passes signals on: SIGHUP and SIGUSR1
 * to every worker (but the one that sent it: a control "reload" or
 * "reopen" in worker 0 does its own part), SIGTERM and SIGINT to all;
 * it exits when the last worker has,
 * 0 when they all exited 0.  A worker that dies is not replaced (its
 * socket closes with it, so the kernel stops giving it connections); a
 * supervisor that is killed outright takes its workers along: each gets
 * a SIGTERM (PR_SET_PDEATHSIG) and drains.
 */
static int
supervise(struct gate *g, int *lfds, int ctlfd)
{
	struct gate_config	*cfg = &g->cfg;
	pid_t			 pids[GATE_MAX_WORKERS], p;
	sigset_t		 set;
	siginfo_t		 si;
	unsigned		 i, live = 0;
	int			 st, rc = EXIT_SUCCESS;
	pid_t			 parent = getpid();

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGCHLD);
	/* blocked before the fork: a signal then waits for sigwaitinfo */
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	for (i = 0; i < cfg->workers; i++) {
		switch ((p = fork())) {
		case -1:
			log_warn("fork of worker %u", i);
			pids[i] = -1;
			continue;
		case 0:
			/*
			 * A supervisor killed outright (SIGKILL) leaves no
			 * worker behind holding the port: they drain.
			 */
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 ||
			    getppid() != parent)
				_exit(1);
			/* --metrics: its numbers in the shared slot */
			gate_metrics_worker(g, i);
			g->worker = i;
			for (unsigned j = 0; j < cfg->workers; j++)
				if (j != i)
					close(lfds[j]);
			if (i != 0 && ctlfd != -1)
				close(ctlfd);
			_exit(run(g, lfds[i], i == 0 ? ctlfd : -1));
		default:
			pids[i] = p;
			live++;
		}
	}
	/* the workers hold the sockets now */
	for (i = 0; i < cfg->workers; i++)
		close(lfds[i]);
	if (ctlfd != -1)
		close(ctlfd);
	if (g->metrics_fd != -1) {
		close(g->metrics_fd);
		g->metrics_fd = -1;
	}
	log_info("%u workers listening, policy %s sha256:%s", live,
	    cfg->policy_path, policy_sha256(g->policy));
	while (live > 0) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		switch (si.si_signo) {
		case SIGHUP:
		case SIGUSR1:
		case SIGTERM:
		case SIGINT:
			for (i = 0; i < cfg->workers; i++)
				if (pids[i] > 0 && !((si.si_signo == SIGHUP ||
				    si.si_signo == SIGUSR1) &&
				    si.si_pid == pids[i]))
					kill(pids[i], si.si_signo);
			break;
		case SIGCHLD:
			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				for (i = 0; i < cfg->workers; i++) {
					if (pids[i] != p)
						continue;
					pids[i] = -1;
					live--;
					gate_metrics_worker_gone(i);
					if (!WIFEXITED(st) ||
					    WEXITSTATUS(st) != 0) {
						log_warnx("worker %u (pid %ld) "
						    "ended with status %d", i,
						    (long)p, st);
						rc = 1;
					}
				}
			break;
		}
	}
	return rc;
}

/*
 * Before the sockets: SIGPIPE ignored (a write to a closed peer is an
 * error of that connection, not the end of the gate), as many descriptors
 * as the hard limit allows, and the audit log opened.
 */
void
gate_proc_prepare(struct gate *g)
{
	struct gate_config	*cfg = &g->cfg;

	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal");
	g->fd_limit = 1024;
	raise_nofile(g, cfg);
	if (cfg->audit_path != NULL &&
	    (g->audit = gate_audit_open(cfg->audit_path)) == NULL)
		fatal("audit log %s", cfg->audit_path);
}

/*
 * The listening socket of each worker, and the control socket: still as
 * root, where --user may not bind.  ss is -l's address.
 */
void
gate_listen(struct gate *g, const struct sockaddr_storage *ss, socklen_t sslen)
{
	struct gate_config	*cfg = &g->cfg;
	unsigned		 i;

	/*
	 * The first socket settles the port (0: any free one); the sockets of
	 * the other workers share it.
	 */
	if ((g->lfds[0] = listen_on(g, ss, sslen, cfg->workers > 1)) == -1)
		fatal("listen on %s", cfg->listen);
	g->boundlen = sizeof(g->bound);
	if (getsockname(g->lfds[0], (struct sockaddr *)&g->bound,
	    &g->boundlen) == -1)
		fatal("getsockname");
	for (i = 1; i < cfg->workers; i++)
		if ((g->lfds[i] = listen_on(g, &g->bound, g->boundlen,
		    1)) == -1)
			fatal("listen on %s (worker %u)", cfg->listen, i);
	g->ctlfd = -1;
	if (cfg->control_path != NULL &&
	    (g->ctlfd = gate_control_listen(cfg->control_path)) == -1)
		fatalx("cannot open the control socket %s", cfg->control_path);
	g->metrics_fd = -1;
	if (cfg->metrics_listen != NULL) {
		if ((g->metrics_fd = gate_metrics_listen(cfg->metrics_listen)) ==
		    -1)
			fatalx("cannot open the metrics socket %s",
			    cfg->metrics_listen);
		gate_metrics_prepare(g);
	}
	/*
	 * The capture last of what may fail at start: a gate that cannot
	 * listen leaves no file behind to refuse its restart.  Created here,
	 * never opened again: no folder permission is kept.
	 */
	if (cfg->record_path != NULL &&
	    (g->record = gate_record_open(cfg->record_path,
	    cfg->record_max)) == NULL)
		fatal("record %s%s", cfg->record_path, errno == EEXIST ?
		    " (it exists: a record is never overwritten)" : "");
}

/*
 * The listener is bound and listening: connections made from now on
 * are accepted, so this is the moment to say where.  It is said before
 * privileges are dropped so that the port file may live in a directory
 * only root can write; nothing after this point is expected to fail.
 */
void
gate_announce(struct gate *g)
{
	struct gate_config	*cfg = &g->cfg;
	char			 line[32], addr[128];

	snprintf(line, sizeof(line), "%u\n", g->bound.ss_family == AF_INET ?
	    ntohs(((struct sockaddr_in *)&g->bound)->sin_port) :
	    ntohs(((struct sockaddr_in6 *)&g->bound)->sin6_port));
	if (cfg->port_file != NULL && write_port_file(cfg->port_file, line) == -1)
		fatal("port file %s", cfg->port_file);
	if (cfg->ready_fd != -1) {
		if (file_write_all(cfg->ready_fd, line, strlen(line)) == -1)
			log_warn("ready fd %d", cfg->ready_fd);
		close(cfg->ready_fd);
	}
	/*
	 * One line without -v, before stderr is let go: where the gate
	 * listens and which policy it enforces, by the identity aisb policy
	 * check prints (the hash of its meaning, not of its bytes).
	 */
	gate_sockaddr_str(&g->bound, addr, sizeof(addr));
	log_notice("up: listening on %s%s, policy %s sha256:%.12s (%zu "
	    "rule%s)", addr, cfg->workers > 1 ? " (workers share it)" :
	    "", cfg->policy_path, policy_sha256(g->policy),
	    policy_rule_count(g->policy),
	    policy_rule_count(g->policy) == 1 ? "" : "s");
	if (g->metrics_fd != -1) {
		struct sockaddr_storage	 ms;
		socklen_t		 mslen = sizeof(ms);

		/* the port bound, when --metrics asked for port 0 */
		if (getsockname(g->metrics_fd, (struct sockaddr *)&ms,
		    &mslen) == 0)
			gate_sockaddr_str(&ms, addr, sizeof(addr));
		else
			snprintf(addr, sizeof(addr), "%s", cfg->metrics_listen);
		log_info("metrics on %s (GET /metrics)", addr);
	}
}

/*
 * The loop, or the workers' loops under their supervisor, until the end;
 * then the port file goes (and, of a supervisor, the control socket its
 * worker 0 served).  Returns the exit status.
 */
int
gate_proc_run(struct gate *g)
{
	struct gate_config	*cfg = &g->cfg;
	int			 rc;

	if (cfg->workers > 1)
		rc = supervise(g, g->lfds, g->ctlfd);
	else
		rc = run(g, g->lfds[0], g->ctlfd);
	if (cfg->port_file != NULL && unlink(cfg->port_file) == -1)
		log_debug("unlink %s: %s", cfg->port_file, strerror(errno));
	if (cfg->workers > 1) {
		if (cfg->control_path != NULL && unlink(cfg->control_path) == -1 &&
		    errno != ENOENT)
			log_debug("unlink %s: %s", cfg->control_path,
			    strerror(errno));
		gate_audit_close(g->audit);
		gate_auth_free(g->auth);
		gate_users_free(g->users);
		policy_free(g->policy);
	}
	return rc;
}
