/*
 * aisb-gate: argv, privileges and daemonizing, and the order of start-up.
 * The configuration (policy, credentials, reload) is config.c's; the
 * sockets, the loop, signals, drain and workers are proc.c's; everything
 * that happens per connection is conn.c's and the files of conn-int.h.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"
#include "gate/gate.h"
#include "gate/inject.h"

/*
 * The one struct gate, static so that what it holds stays reachable until
 * exit (LeakSanitizer: the early exits free nothing, and need not).
 */
static struct gate	 gate;

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
"	[--record file [--record-max bytes[K|M|G]]]\n"
"	[--no-splice] [--max-pipes n] [--workers n]\n"
"	[--audit-failure deny|allow] [--metrics address:port]\n"
"	[--users file] [--learn] [--reload-closes]\n"
"	[--dns-rate n] [--dns-burst n] [--watch]\n"
"	[--ca-key file | --ca-out file] [--upstream-ca file]\n"
"	[--secrets-fd n] [--no-upstream-reuse] [--no-socks] [--ask s]\n");
	exit(EXIT_USAGE);
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
		exit(EXIT_USAGE);
	}
	return (unsigned)v;
}

/*
 * --record-max: bytes, with an optional K, M or G (powers of 1024, either
 * case); at least 4 KiB (the file's headers and a few packets), at most
 * 1 PiB.
 */
static uint64_t
size_arg(const char *opt, const char *s)
{
	char			*end;
	unsigned long long	 v, mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		mul = 1024ULL;
	else if (*end == 'M' || *end == 'm')
		mul = 1024ULL * 1024;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ULL * 1024 * 1024;
	if (mul != 1)
		end++;
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    v > (1ULL << 50) / mul || v * mul < 4096) {
		fprintf(stderr, "aisb-gate: %s: \"%s\" is not a size from "
		    "4096 bytes to 1P (a number of bytes, or with K, M or G)\n",
		    opt, s);
		exit(EXIT_USAGE);
	}
	return v * mul;
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
	if (gate_record_chown(g->record, uid, gid) == -1)
		fatal("chown of the record %s", g->cfg.record_path);
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
	OPT_RECORD, OPT_RECORD_MAX,
	OPT_TOKEN_FILE, OPT_TOKEN_FD, OPT_USER, OPT_MAX_CONNS,
	OPT_MAX_PER_CLIENT, OPT_HEADER_TIMEOUT, OPT_CONNECT_TIMEOUT,
	OPT_IDLE_TIMEOUT, OPT_DRAIN_TIMEOUT, OPT_DNS_GRACE, OPT_DNS_TIMEOUT,
	OPT_NO_SNI_CHECK, OPT_NO_SPLICE, OPT_MAX_PIPES, OPT_WORKERS,
	OPT_AUDIT_FAILURE,
	OPT_METRICS,
	OPT_USERS,
	OPT_DNS_RATE,
	OPT_DNS_BURST,
	OPT_LEARN,
	OPT_WATCH,
	OPT_RELOAD_CLOSES,
	OPT_CA_KEY, OPT_CA_OUT, OPT_UPSTREAM_CA, OPT_SECRETS_FD,
	OPT_NO_UPSTREAM_REUSE,
	OPT_VERSION,
	OPT_NO_SOCKS,
	OPT_ASK,
};

static const struct option longopts[] = {
	{ "audit",		required_argument, NULL, OPT_AUDIT },
	{ "record",		required_argument, NULL, OPT_RECORD },
	{ "record-max",		required_argument, NULL, OPT_RECORD_MAX },
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
	{ "metrics",		required_argument, NULL, OPT_METRICS },
	{ "users",		required_argument, NULL, OPT_USERS },
	{ "dns-rate",		required_argument, NULL, OPT_DNS_RATE },
	{ "dns-burst",		required_argument, NULL, OPT_DNS_BURST },
	{ "learn",		no_argument,	   NULL, OPT_LEARN },
	{ "watch",		no_argument,	   NULL, OPT_WATCH },
	{ "reload-closes",	no_argument,	   NULL, OPT_RELOAD_CLOSES },
	{ "ca-key",		required_argument, NULL, OPT_CA_KEY },
	{ "ca-out",		required_argument, NULL, OPT_CA_OUT },
	{ "upstream-ca",	required_argument, NULL, OPT_UPSTREAM_CA },
	{ "no-upstream-reuse",	no_argument,	   NULL, OPT_NO_UPSTREAM_REUSE },
	{ "secrets-fd",		required_argument, NULL, OPT_SECRETS_FD },
	{ "no-socks",		no_argument,	   NULL, OPT_NO_SOCKS },
	{ "ask",		required_argument, NULL, OPT_ASK },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ NULL,			0,		   NULL, 0 },
};

/* Every option's default (aisb-gate(8)). */
static void
config_defaults(struct gate_config *cfg)
{
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
	cfg->record_max = GATE_DEFAULT_RECORD_MAX;
	cfg->dns_rate = GATE_DEFAULT_DNS_RATE;
	cfg->dns_burst = GATE_DEFAULT_DNS_BURST;
	cfg->secrets_fd = -1;
	cfg->socks = 1;
}

/* One option from getopt_long, its value in optarg; usage() if unknown. */
static void
parse_option(struct gate_config *cfg, int ch)
{
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
	case OPT_RECORD:
		cfg->record_path = optarg;
		break;
	case OPT_RECORD_MAX:
		cfg->record_max = size_arg("--record-max", optarg);
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
		cfg->workers = num("--workers", optarg, 1,
		    GATE_MAX_WORKERS);
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
			exit(EXIT_USAGE);
		}
		break;
	case OPT_METRICS:
		cfg->metrics_listen = optarg;
		break;
	case OPT_DNS_RATE:
		cfg->dns_rate = num("--dns-rate", optarg, 1, 100000);
		break;
	case OPT_DNS_BURST:
		cfg->dns_burst = num("--dns-burst", optarg, 1, 1000000);
		break;
	case OPT_USERS:
		cfg->users_path = optarg;
		break;
	case OPT_RELOAD_CLOSES:
		cfg->reload_closes = 1;
		break;
	case OPT_LEARN:
		cfg->learn = 1;
		break;
	case OPT_CA_KEY:
		cfg->ca_key = optarg;
		break;
	case OPT_CA_OUT:
		cfg->ca_out = optarg;
		break;
	case OPT_UPSTREAM_CA:
		cfg->upstream_ca = optarg;
		break;
	case OPT_NO_UPSTREAM_REUSE:
		cfg->no_reuse = 1;
		break;
	case OPT_SECRETS_FD:
		cfg->secrets_fd = (int)num("--secrets-fd", optarg, 3, 65535);
		break;
	case OPT_WATCH:
		cfg->watch = 1;
		break;
	case OPT_VERSION:
		/* GNU's: the version on stdout, nothing else done */
		printf("aisb-gate %s\n", PACKAGE_VERSION);
		exit(0);
	case OPT_ASK:
		/* 0: off; else held at most this long (conn/ask.c) */
		cfg->ask = num("--ask", optarg, 0, GATE_ASK_MAX_SECS);
		break;
	case OPT_NO_SOCKS:
		cfg->socks = 0;
		break;
	default:
		usage();
	}
}

static void
parse_args(struct gate_config *cfg, int argc, char **argv)
{
	int	 ch;

	config_defaults(cfg);
	while ((ch = getopt_long(argc, argv, "df:hl:nv", longopts, NULL)) != -1)
		parse_option(cfg, ch);
	/*
	 * One capture file, written by one process: workers would need one
	 * file each (and a reviewer to merge them), so they are refused.
	 * A recording gate copies tunnels through userspace to see their
	 * bytes: splice(2) is off (docs/record.md).
	 */
	if (cfg->record_path != NULL && cfg->workers > 1) {
		fprintf(stderr, "aisb-gate: --record writes one file from one "
		    "process: leave out --workers (or use --workers 1)\n");
		exit(EXIT_CONFIG);
	}
	if (cfg->record_path != NULL)
		cfg->splice = 0;
	/*
	 * A held request lives in the worker that accepted it, and the
	 * control socket is served by one: --ask needs the one process.
	 */
	if (cfg->ask != 0 && cfg->workers > 1) {
		fprintf(stderr, "aisb-gate: --ask holds requests in one "
		    "process: leave out --workers (or use --workers 1)\n");
		exit(EXIT_CONFIG);
	}
	/* held requests nobody could answer would only wait to be denied */
	if (cfg->ask != 0 && cfg->control_path == NULL) {
		fprintf(stderr, "aisb-gate: --ask is answered on the control "
		    "socket: give --control PATH\n");
		exit(EXIT_USAGE);
	}
	if (optind != argc || cfg->policy_path == NULL)
		usage();
	if (cfg->token_file != NULL && cfg->token_fd != -1) {
		fprintf(stderr, "aisb-gate: --token-file and --token-fd "
		    "exclude each other\n");
		exit(EXIT_USAGE);
	}
	if (cfg->secrets_fd != -1 && (cfg->secrets_fd == cfg->token_fd ||
	    cfg->secrets_fd == cfg->ready_fd)) {
		fprintf(stderr, "aisb-gate: --secrets-fd %d is another option's "
		    "descriptor too\n", cfg->secrets_fd);
		exit(EXIT_USAGE);
	}
	if (cfg->users_path != NULL && (cfg->token_file != NULL ||
	    cfg->token_fd != -1)) {
		fprintf(stderr, "aisb-gate: --users holds the credentials: "
		    "it excludes --token-file and --token-fd (give each "
		    "session a line of the users file instead)\n");
		exit(EXIT_USAGE);
	}
}


int
main(int argc, char **argv)
{
	struct gate		*g = &gate;
	struct gate_config	*cfg = &g->cfg;
	struct sockaddr_storage	 ss, mss;
	socklen_t		 sslen, msslen;
	int			 rc;
	struct passwd		*pw;
	uid_t			 uid = 0;
	gid_t			 gid = 0;

	g->num = &g->own;	/* a worker's may move to a shared slot (metrics.c) */
	parse_args(cfg, argc, argv);
	log_init("aisb-gate", cfg->verbose);

	if (gate_config_load(g) == -1)
		return EXIT_CONFIG;
	if (gate_listen_parse(cfg->listen, &ss, &sslen) == -1) {
		fprintf(stderr, "aisb-gate: -l %s: expected an IP address and "
		    "port, such as 127.0.0.1:3128 or [::1]:3128\n", cfg->listen);
		return EXIT_CONFIG;
	}
	if (cfg->metrics_listen != NULL &&
	    gate_listen_parse(cfg->metrics_listen, &mss, &msslen) == -1) {
		fprintf(stderr, "aisb-gate: --metrics %s: expected an IP address "
		    "and port, such as 127.0.0.1:9128 or [::1]:9128\n",
		    cfg->metrics_listen);
		return EXIT_CONFIG;
	}
	/* port 0 is a free port each: the same text is two sockets then */
	if (cfg->metrics_listen != NULL &&
	    strcmp(cfg->metrics_listen, cfg->listen) == 0 &&
	    (mss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&mss)->sin_port :
	    ((struct sockaddr_in6 *)&mss)->sin6_port) != 0) {
		fprintf(stderr, "aisb-gate: --metrics %s: the proxy listens "
		    "there (-l); give the metrics a port of their own\n",
		    cfg->metrics_listen);
		return EXIT_CONFIG;
	}
	if (cfg->user != NULL) {
		if ((pw = getpwnam(cfg->user)) == NULL) {
			fprintf(stderr, "aisb-gate: --user %s: no such user\n",
			    cfg->user);
			return EXIT_CONFIG;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (gate_config_auth(g) == -1)
		return EXIT_CONFIG;
	/* inspected hosts: the CA (--ca-key is read as root), the secrets */
	if (gate_inspect_init(g) == -1)
		return EXIT_CONFIG;
	gate_inject_missing(g, gate_inspect_secrets(g), "start");
	if (cfg->audit_path != NULL && strcmp(cfg->audit_path, "-") == 0 &&
	    !cfg->foreground && !cfg->check_only) {
		fprintf(stderr, "aisb-gate: --audit - needs -d\n");
		return EXIT_CONFIG;
	}
	if (cfg->learn)
		log_warnx("LEARNING MODE (--learn): NOTHING IS BLOCKED BY THE "
		    "POLICY: every name and port is allowed; only the denied "
		    "address ranges and the gate's own address are refused. "
		    "Each audit line says what the policy would have decided "
		    "(\"would\")");
	if (cfg->check_only) {
		if (g->users != NULL)
			fprintf(stderr, "aisb-gate: configuration OK (policy "
			    "sha256:%s, %zu user%s)\n", policy_sha256(g->policy),
			    gate_users_count(g->users),
			    gate_users_count(g->users) == 1 ? "" : "s");
		else
			fprintf(stderr, "aisb-gate: configuration OK (policy "
			    "sha256:%s)\n", policy_sha256(g->policy));
		policy_free(g->policy);
		gate_auth_free(g->auth);
		gate_users_free(g->users);
		return EXIT_SUCCESS;
	}

	gate_proc_prepare(g);
	gate_listen(g, &ss, sslen);
	gate_announce(g);
	if (geteuid() == 0) {
		if (cfg->user != NULL)
			drop_privileges(g, uid, gid, cfg->user,
			    cfg->control_path);
		else
			log_info("running as root; --user drops privileges");
	}
	if (!cfg->foreground)
		daemonize();

	rc = gate_proc_run(g);
	log_info("exiting");
	return rc;
}
