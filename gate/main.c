/*
 * aisb-gate: argv, privileges, signals and the loop.  The configuration
 * (policy, credentials, reload) is config.c's; everything that happens
 * per connection is conn.c's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "file.h"
#include "log.h"
#include "gate.h"

#define LISTEN_BACKLOG	511
#define MAX_WORKERS	64

static struct gate	 gate;
static struct event	*drain_timer;
static struct event	*accept_pause;

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr,
"usage: aisb-gate -f policy [-dnv] [-l address:port] [--audit file|-]\n"
"	[--ready-fd n] [--port-file file] [--control path]\n"
"	[--token-file file | --token-fd n] [--user user]\n"
"	[--max-conns n] [--max-per-client n] [--header-timeout s]\n"
"	[--connect-timeout s] [--idle-timeout s] [--drain-timeout s]\n"
"	[--dns-grace s] [--dns-timeout s] [--no-sni-check]\n"
"	[--no-splice] [--max-pipes n] [--workers n]\n"
"	[--audit-failure deny|allow]\n");
	exit(EX_USAGE);
}

static unsigned
num(const char *opt, const char *s, unsigned lo, unsigned hi)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    v < lo || v > hi) {
		fprintf(stderr, "aisb-gate: %s: \"%s\" is not a number from "
		    "%u to %u\n", opt, s, lo, hi);
		exit(EX_USAGE);
	}
	return (unsigned)v;
}

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
	struct timeval	 tv = { 1, 0 };
	int		 e = EVUTIL_SOCKET_ERROR();

	log_warnx("accept: %s; pausing for a second",
	    evutil_socket_error_to_string(e));
	/* Without the timer to resume it, a paused listener stays paused. */
	if (evtimer_add(accept_pause, &tv) == -1) {
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
	    (unsigned long long)g->ctr.active, g->cfg.drain_timeout);
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
		if (g->listener != NULL) {
			evconnlistener_free(g->listener);
			g->listener = NULL;
		}
		log_warnx("SIGTERM: draining %llu connection(s) for up to %us",
		    (unsigned long long)g->ctr.active, g->cfg.drain_timeout);
		if (TAILQ_EMPTY(&g->conns)) {
			event_base_loopexit(g->base, NULL);
			break;
		}
		tv.tv_sec = g->cfg.drain_timeout;
		tv.tv_usec = 0;
		drain_timer = evtimer_new(g->base, drain_timeout_cb, g);
		if (drain_timer == NULL || evtimer_add(drain_timer, &tv) == -1)
			event_base_loopexit(g->base, NULL);
		break;
	case SIGINT:
		log_warnx("SIGINT: exiting now");
		event_base_loopbreak(g->base);
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
 * --user: the gate parses bytes that sandboxed commands control, so once
 * its sockets are bound it runs as an unprivileged user: no supplementary
 * groups, no way back (setuid(0) must fail), no_new_privs, not dumpable
 * (gates of several sessions share the user; none may trace another or
 * leave a core with credentials), no core files.  The control socket and
 * the audit log become the user's, so that it may answer and reopen them.
 */
static void
drop_privileges(struct gate *g, uid_t uid, gid_t gid, const char *user,
    const char *control_path)
{
	struct rlimit	 rl = { 0, 0 };
	pid_t		 parent = getppid();
	int		 deathsig = 0;

	/* the launcher's parent-death signal: a change of uid clears it */
	if (prctl(PR_GET_PDEATHSIG, &deathsig, 0, 0, 0) == -1)
		fatal("PR_GET_PDEATHSIG");
	if (control_path != NULL && chown(control_path, uid, gid) == -1)
		fatal("chown %s", control_path);
	if (gate_audit_chown(g->audit, uid, gid) == -1)
		fatal("chown of the audit log");
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		fatal("dropping privileges to %s", user);
	if (uid != 0 && (setuid(0) != -1 || geteuid() == 0))
		fatalx("still root after dropping privileges to %s", user);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    setrlimit(RLIMIT_CORE, &rl) == -1)
		fatal("no_new_privs, dumpable, core limit");
	if (deathsig != 0 && (prctl(PR_SET_PDEATHSIG, deathsig, 0, 0, 0) == -1 ||
	    getppid() != parent))
		fatalx("the process that started the gate is gone");
	log_info("running as %s (uid %ld)", user, (long)uid);
}

static void
daemonize(void)
{
	int	 fd;

	switch (fork()) {
	case -1:
		fatal("fork");
	case 0:
		break;
	default:
		_exit(0);
	}
	if (setsid() == -1)
		fatal("setsid");
	/* from here on nobody reads stderr: log to syslog */
	log_to_syslog();
	/*
	 * A standard descriptor left open on the terminal, or closed and then
	 * reused by a socket, would take bytes meant for nobody: all three
	 * must become /dev/null.
	 */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	if (dup2(fd, STDIN_FILENO) == -1 || dup2(fd, STDOUT_FILENO) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1)
		fatal("dup2");
	if (fd > STDERR_FILENO)
		close(fd);
}

enum {
	OPT_AUDIT = 256, OPT_READY_FD, OPT_PORT_FILE, OPT_CONTROL,
	OPT_TOKEN_FILE, OPT_TOKEN_FD, OPT_USER, OPT_MAX_CONNS,
	OPT_MAX_PER_CLIENT, OPT_HEADER_TIMEOUT, OPT_CONNECT_TIMEOUT,
	OPT_IDLE_TIMEOUT, OPT_DRAIN_TIMEOUT, OPT_DNS_GRACE, OPT_DNS_TIMEOUT,
	OPT_NO_SNI_CHECK, OPT_NO_SPLICE, OPT_MAX_PIPES, OPT_WORKERS,
	OPT_AUDIT_FAILURE,
};

static const struct option longopts[] = {
	{ "audit",		required_argument, NULL, OPT_AUDIT },
	{ "ready-fd",		required_argument, NULL, OPT_READY_FD },
	{ "port-file",		required_argument, NULL, OPT_PORT_FILE },
	{ "control",		required_argument, NULL, OPT_CONTROL },
	{ "token-file",		required_argument, NULL, OPT_TOKEN_FILE },
	{ "token-fd",		required_argument, NULL, OPT_TOKEN_FD },
	{ "user",		required_argument, NULL, OPT_USER },
	{ "max-conns",		required_argument, NULL, OPT_MAX_CONNS },
	{ "max-per-client",	required_argument, NULL, OPT_MAX_PER_CLIENT },
	{ "header-timeout",	required_argument, NULL, OPT_HEADER_TIMEOUT },
	{ "connect-timeout",	required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "idle-timeout",	required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "drain-timeout",	required_argument, NULL, OPT_DRAIN_TIMEOUT },
	{ "dns-grace",		required_argument, NULL, OPT_DNS_GRACE },
	{ "dns-timeout",	required_argument, NULL, OPT_DNS_TIMEOUT },
	{ "no-sni-check",	no_argument,	   NULL, OPT_NO_SNI_CHECK },
	{ "no-splice",		no_argument,	   NULL, OPT_NO_SPLICE },
	{ "max-pipes",		required_argument, NULL, OPT_MAX_PIPES },
	{ "workers",		required_argument, NULL, OPT_WORKERS },
	{ "audit-failure",	required_argument, NULL, OPT_AUDIT_FAILURE },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL,			0,		   NULL, 0 },
};

static void
parse_args(struct gate_config *cfg, int argc, char **argv)
{
	int	 ch;

	memset(cfg, 0, sizeof(*cfg));
	cfg->listen = GATE_DEFAULT_LISTEN;
	cfg->token_fd = -1;
	cfg->ready_fd = -1;
	cfg->max_conns = GATE_DEFAULT_MAX_CONNS;
	cfg->max_per_client = GATE_DEFAULT_MAX_PER_CLIENT;
	cfg->header_timeout = GATE_DEFAULT_HEADER_TIMEOUT;
	cfg->connect_timeout = GATE_DEFAULT_CONNECT_TIMEOUT;
	cfg->idle_timeout = GATE_DEFAULT_IDLE_TIMEOUT;
	cfg->drain_timeout = GATE_DEFAULT_DRAIN_TIMEOUT;
	cfg->dns_grace = GATE_DEFAULT_DNS_GRACE;
	cfg->dns_timeout = GATE_DEFAULT_DNS_TIMEOUT;
	cfg->sni_check = 1;
	cfg->splice = 1;
	cfg->max_pipes = GATE_DEFAULT_MAX_PIPES;
	cfg->workers = 1;

	while ((ch = getopt_long(argc, argv, "df:hl:nv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			cfg->foreground = 1;
			break;
		case 'f':
			cfg->policy_path = optarg;
			break;
		case 'l':
			cfg->listen = optarg;
			break;
		case 'n':
			cfg->check_only = 1;
			break;
		case 'v':
			cfg->verbose++;
			break;
		case OPT_AUDIT:
			cfg->audit_path = optarg;
			break;
		case OPT_READY_FD:
			cfg->ready_fd = (int)num("--ready-fd", optarg, 3, 65535);
			break;
		case OPT_PORT_FILE:
			cfg->port_file = optarg;
			break;
		case OPT_CONTROL:
			cfg->control_path = optarg;
			break;
		case OPT_TOKEN_FILE:
			cfg->token_file = optarg;
			break;
		case OPT_TOKEN_FD:
			cfg->token_fd = (int)num("--token-fd", optarg, 0, 65535);
			break;
		case OPT_USER:
			cfg->user = optarg;
			break;
		case OPT_MAX_CONNS:
			cfg->max_conns = num("--max-conns", optarg, 1, 1000000);
			break;
		case OPT_MAX_PER_CLIENT:
			cfg->max_per_client = num("--max-per-client", optarg,
			    1, 1000000);
			break;
		case OPT_HEADER_TIMEOUT:
			cfg->header_timeout = num("--header-timeout", optarg,
			    1, 3600);
			break;
		case OPT_CONNECT_TIMEOUT:
			cfg->connect_timeout = num("--connect-timeout", optarg,
			    1, 3600);
			break;
		case OPT_IDLE_TIMEOUT:
			cfg->idle_timeout = num("--idle-timeout", optarg, 1,
			    86400);
			break;
		case OPT_DRAIN_TIMEOUT:
			cfg->drain_timeout = num("--drain-timeout", optarg, 0,
			    3600);
			break;
		case OPT_DNS_GRACE:
			cfg->dns_grace = num("--dns-grace", optarg, 0, 86400);
			break;
		case OPT_DNS_TIMEOUT:
			cfg->dns_timeout = num("--dns-timeout", optarg, 1, 60);
			break;
		case OPT_NO_SNI_CHECK:
			cfg->sni_check = 0;
			break;
		case OPT_NO_SPLICE:
			cfg->splice = 0;
			break;
		case OPT_MAX_PIPES:
			cfg->max_pipes = num("--max-pipes", optarg, 0, 100000);
			break;
		case OPT_WORKERS:
			cfg->workers = num("--workers", optarg, 1, MAX_WORKERS);
			break;
		case OPT_AUDIT_FAILURE:
			if (strcmp(optarg, "deny") == 0)
				cfg->audit_failure_allow = 0;
			else if (strcmp(optarg, "allow") == 0)
				cfg->audit_failure_allow = 1;
			else {
				fprintf(stderr, "aisb-gate: --audit-failure: "
				    "\"%s\" is neither deny nor allow\n",
				    optarg);
				exit(EX_USAGE);
			}
			break;
		default:
			usage();
		}
	}
	if (optind != argc || cfg->policy_path == NULL)
		usage();
	if (cfg->token_file != NULL && cfg->token_fd != -1) {
		fprintf(stderr, "aisb-gate: --token-file and --token-fd "
		    "exclude each other\n");
		exit(EX_USAGE);
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
	struct event		*sigs[3];
	sigset_t		 set;
	int			 i, rc = EX_OK;
	int			 signums[3] = { SIGHUP, SIGTERM, SIGINT };
	char			 addr[128];

	clock_gettime(CLOCK_MONOTONIC, &g->started);
	TAILQ_INIT(&g->conns);
	if (gate_clients_init(g) == -1 ||
	    (g->scratch = malloc(GATE_SCRATCH)) == NULL)
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
	if ((accept_pause = evtimer_new(g->base, accept_resume_cb, g)) == NULL)
		fatalx("evtimer_new failed");
	if (ctlfd != -1 && (g->control = gate_control_open(g,
	    cfg->control_path, ctlfd)) == NULL)
		fatalx("cannot serve the control socket %s", cfg->control_path);
	for (i = 0; i < 3; i++)
		if ((sigs[i] = evsignal_new(g->base, signums[i], signal_cb,
		    g)) == NULL || evsignal_add(sigs[i], NULL) == -1)
			fatalx("cannot watch signal %d", signums[i]);
	/* a worker's signals were blocked by the supervisor: watched now */
	sigemptyset(&set);
	for (i = 0; i < 3; i++)
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
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	if (drain_timer != NULL)
		event_free(drain_timer);
	event_free(accept_pause);
	if (g->listener != NULL)
		evconnlistener_free(g->listener);
	gate_control_close(g->control);
	gate_dns_free(g->dns);
	gate_audit_close(g->audit);
	gate_auth_free(g->auth);
	gate_clients_free(g);
	gate_pipes_free(g);
	free(g->scratch);
	policy_free(g->policy);
	event_base_free(g->base);
	return rc;
}

/*
 * --workers N: N processes, each with its own loop, listening socket
 * (SO_REUSEPORT) and descriptor table, forked after everything that may
 * need root.  The supervisor only passes signals on: SIGHUP to every
 * worker (but the one that sent it: a control "reload" in worker 0 reloads
 * itself), SIGTERM and SIGINT to all; it exits when the last worker has,
 * 0 when they all exited 0.  A worker that dies is not replaced (its
 * socket closes with it, so the kernel stops giving it connections); a
 * supervisor that is killed outright takes its workers along: each gets
 * a SIGTERM (PR_SET_PDEATHSIG) and drains.
 */
static int
supervise(struct gate *g, int *lfds, int ctlfd)
{
	struct gate_config	*cfg = &g->cfg;
	pid_t			 pids[MAX_WORKERS], p;
	sigset_t		 set;
	siginfo_t		 si;
	unsigned		 i, live = 0;
	int			 st, rc = EX_OK;
	pid_t			 parent = getpid();

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
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
	log_info("%u workers listening, policy %s sha256:%s", live,
	    cfg->policy_path, policy_sha256(g->policy));
	while (live > 0) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		switch (si.si_signo) {
		case SIGHUP:
		case SIGTERM:
		case SIGINT:
			for (i = 0; i < cfg->workers; i++)
				if (pids[i] > 0 && !(si.si_signo == SIGHUP &&
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

int
main(int argc, char **argv)
{
	struct gate		*g = &gate;
	struct gate_config	*cfg = &g->cfg;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	int			 rc, lfds[MAX_WORKERS], ctlfd = -1;
	unsigned		 i;
	char			 line[32];
	struct passwd		*pw;
	uid_t			 uid = 0;
	gid_t			 gid = 0;

	parse_args(cfg, argc, argv);
	log_init("aisb-gate", cfg->verbose);

	if (gate_config_load(g) == -1)
		return EX_CONFIG;
	if (gate_listen_parse(cfg->listen, &ss, &sslen) == -1) {
		fprintf(stderr, "aisb-gate: -l %s: expected an IP address and "
		    "port, such as 127.0.0.1:3128 or [::1]:3128\n", cfg->listen);
		return EX_CONFIG;
	}
	if (cfg->user != NULL) {
		if ((pw = getpwnam(cfg->user)) == NULL) {
			fprintf(stderr, "aisb-gate: --user %s: no such user\n",
			    cfg->user);
			return EX_CONFIG;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (gate_config_auth(g) == -1)
		return EX_CONFIG;
	if (cfg->audit_path != NULL && strcmp(cfg->audit_path, "-") == 0 &&
	    !cfg->foreground && !cfg->check_only) {
		fprintf(stderr, "aisb-gate: --audit - needs -d\n");
		return EX_CONFIG;
	}
	if (cfg->check_only) {
		fprintf(stderr, "aisb-gate: configuration OK (policy sha256:%s)\n",
		    policy_sha256(g->policy));
		policy_free(g->policy);
		gate_auth_free(g->auth);
		return EX_OK;
	}

	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal");
	g->fd_limit = 1024;
	raise_nofile(g, cfg);
	if (cfg->audit_path != NULL &&
	    (g->audit = gate_audit_open(cfg->audit_path)) == NULL)
		fatal("audit log %s", cfg->audit_path);

	/*
	 * The first socket settles the port (0: any free one); the sockets of
	 * the other workers share it.
	 */
	if ((lfds[0] = listen_on(g, &ss, sslen, cfg->workers > 1)) == -1)
		fatal("listen on %s", cfg->listen);
	g->boundlen = sizeof(g->bound);
	if (getsockname(lfds[0], (struct sockaddr *)&g->bound,
	    &g->boundlen) == -1)
		fatal("getsockname");
	for (i = 1; i < cfg->workers; i++)
		if ((lfds[i] = listen_on(g, &g->bound, g->boundlen, 1)) == -1)
			fatal("listen on %s (worker %u)", cfg->listen, i);
	if (cfg->control_path != NULL &&
	    (ctlfd = gate_control_listen(cfg->control_path)) == -1)
		fatalx("cannot open the control socket %s", cfg->control_path);

	/*
	 * The listener is bound and listening: connections made from now on
	 * are accepted, so this is the moment to say where.  It is said before
	 * privileges are dropped so that the port file may live in a directory
	 * only root can write; nothing after this point is expected to fail.
	 */
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
	{
		char	 addr[128];

		gate_sockaddr_str(&g->bound, addr, sizeof(addr));
		log_notice("up: listening on %s%s, policy %s sha256:%.12s (%zu "
		    "rule%s)", addr, cfg->workers > 1 ? " (workers share it)" :
		    "", cfg->policy_path, policy_sha256(g->policy),
		    policy_rule_count(g->policy),
		    policy_rule_count(g->policy) == 1 ? "" : "s");
	}
	if (geteuid() == 0) {
		if (cfg->user != NULL)
			drop_privileges(g, uid, gid, cfg->user,
			    cfg->control_path);
		else
			log_info("running as root; --user drops privileges");
	}
	if (!cfg->foreground)
		daemonize();

	if (cfg->workers > 1)
		rc = supervise(g, lfds, ctlfd);
	else
		rc = run(g, lfds[0], ctlfd);
	if (cfg->port_file != NULL && unlink(cfg->port_file) == -1)
		log_debug("unlink %s: %s", cfg->port_file, strerror(errno));
	if (cfg->workers > 1) {
		if (cfg->control_path != NULL && unlink(cfg->control_path) == -1 &&
		    errno != ENOENT)
			log_debug("unlink %s: %s", cfg->control_path,
			    strerror(errno));
		gate_audit_close(g->audit);
		gate_auth_free(g->auth);
		policy_free(g->policy);
	}
	log_info("exiting");
	return rc;
}
