/*
 * aisb-enforce: the first process inside the sandbox.
 *
 *	aisb-enforce [-nv] [--plan FILE | --plan-fd N] [--uid U] [--gid G]
 *	    [--groups G,...] [--keep-fd N]... [--env-file FILE] -- CMD [ARG...]
 *	aisb-enforce --init [-nv] --plan FILE | --plan-fd N
 *
 * Loads table inet aisb from the plan as one batch, reads it back, forks
 * CMD, which drops every privilege and execs, and stays as its parent.
 * Exit 78 for a bad plan or usage, 77 when enforcement failed; CMD never
 * runs in either case.  --init (the init container of a Kubernetes pod)
 * loads and verifies the table and exits 0, leaving it in the network
 * namespace for the containers after it.  This file only wires argv to
 * envfile.c, plan.c, nft.c, verify.c, privdrop.c, supervise.c,
 * record.c, refresh.c and tproxy.c.
 */
#include "config.h"

#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enforcer/envfile.h"
#include "enforcer/hostca.h"
#include "exitcode.h"
#include "log.h"
#include "enforcer/nft.h"
#include "enforcer/plan.h"
#include "enforcer/privdrop.h"
#include "enforcer/record.h"
#include "enforcer/refresh.h"
#include "enforcer/supervise.h"
#include "enforcer/tproxy.h"

#define DEFAULT_ID	1000

struct options {
	const char	*plan_path;
	const char	*env_path;
	int		 plan_fd;
	struct enf_creds creds;
	int		 keep[ENF_MAX_KEEP_FDS];
	size_t		 nkeep;
	int		 check_only;
	int		 init;		/* --init: the table, then exit */
	int		 verbose;
	char		**cmd;
};

static void __attribute__((noreturn))
usage(const char *why)
{
	if (why != NULL)
		log_warnx("%s", why);
	fprintf(stderr, "usage: aisb-enforce [-nv] [--plan FILE | --plan-fd N] "
	    "[--uid U] [--gid G]\n\t[--groups G,...] [--keep-fd N]... "
	    "[--env-file FILE] -- CMD [ARG...]\n"
	    "       aisb-enforce --init [-nv] --plan FILE | --plan-fd N\n");
	exit(EXIT_CONFIG);
}

/* A decimal id in 1..max; 0 and (uid_t)-1 are never sandbox ids. */
static int
parse_id(const char *s, unsigned long max, unsigned long *out)
{
	char		*end;
	unsigned long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

static void
parse_groups(struct options *o, const char *arg)
{
	char		 buf[ENF_MAX_GROUPS * 12];
	char		*tok, *save = NULL;
	unsigned long	 v;

	if (strlen(arg) >= sizeof(buf))
		usage("--groups: list too long");
	memcpy(buf, arg, strlen(arg) + 1);
	o->creds.ngroups = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (parse_id(tok, UINT_MAX - 1, &v) == -1 || v == 0)
			usage("--groups: bad group id");
		if (o->creds.ngroups == ENF_MAX_GROUPS)
			usage("--groups: too many groups");
		o->creds.groups[o->creds.ngroups++] = (gid_t)v;
	}
}

static void
parse_args(struct options *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plan",	required_argument,	NULL, 'p' },
		{ "plan-fd",	required_argument,	NULL, 'P' },
		{ "uid",	required_argument,	NULL, 'u' },
		{ "gid",	required_argument,	NULL, 'g' },
		{ "groups",	required_argument,	NULL, 'G' },
		{ "keep-fd",	required_argument,	NULL, 'k' },
		{ "env-file",	required_argument,	NULL, 'e' },
		{ "check",	no_argument,		NULL, 'n' },
		{ "init",	no_argument,		NULL, 'I' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL,		0,			NULL, 0 }
	};
	unsigned long	 v;
	int		 ch, groups_given = 0, ids_given = 0;

	memset(o, 0, sizeof(*o));
	o->plan_fd = -1;
	o->creds.uid = DEFAULT_ID;
	o->creds.gid = DEFAULT_ID;
	/* '+': stop at the first non-option, never permute CMD's argv. */
	while ((ch = getopt_long(argc, argv, "+nv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			o->plan_path = optarg;
			break;
		case 'P':
			/* It is closed after reading: never stdio. */
			if (parse_id(optarg, INT_MAX, &v) == -1 || v < 3)
				usage("--plan-fd: a descriptor above 2");
			o->plan_fd = (int)v;
			break;
		case 'u':
			if (parse_id(optarg, UINT_MAX - 1, &v) == -1 || v == 0)
				usage("--uid: a numeric uid other than 0");
			o->creds.uid = (uid_t)v;
			ids_given = 1;
			break;
		case 'g':
			if (parse_id(optarg, UINT_MAX - 1, &v) == -1 || v == 0)
				usage("--gid: a numeric gid other than 0");
			o->creds.gid = (gid_t)v;
			ids_given = 1;
			break;
		case 'G':
			parse_groups(o, optarg);
			groups_given = 1;
			break;
		case 'k':
			if (parse_id(optarg, INT_MAX, &v) == -1 || v < 3)
				usage("--keep-fd: a descriptor above 2");
			if (o->nkeep == ENF_MAX_KEEP_FDS)
				usage("--keep-fd: too many");
			o->keep[o->nkeep++] = (int)v;
			break;
		case 'e':
			o->env_path = optarg;
			break;
		case 'n':
			o->check_only = 1;
			break;
		case 'I':
			o->init = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			/* GNU's: the version on stdout, nothing else done */
			printf("aisb-enforce %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			usage(NULL);
		}
	}
	if ((o->plan_path == NULL) == (o->plan_fd == -1))
		usage("exactly one of --plan and --plan-fd");
	if (!groups_given) {
		o->creds.groups[0] = o->creds.gid;
		o->creds.ngroups = 1;
	}
	/* --init runs nothing: what only a command uses is a mistake */
	if (o->init && (ids_given || groups_given || o->nkeep > 0 ||
	    o->env_path != NULL))
		usage("--init runs no command: --uid, --gid, --groups, "
		    "--keep-fd and --env-file do not apply");
	if (o->init && optind != argc)
		usage("--init takes no command");
	if (o->check_only || o->init) {
		if (optind != argc)
			usage("-n takes no command");
		return;
	}
	/* The command must follow "--": no guessing where options end. */
	if (optind < 2 || optind >= argc || strcmp(argv[optind - 1], "--") != 0)
		usage("the command must follow --");
	o->cmd = argv + optind;
}

/* The plan, or NULL after saying why. */
static struct enf_plan *
load_plan(const struct options *o)
{
	struct enf_plan	*plan = NULL;
	char		*buf;
	char		 err[256];
	const char	*what = o->plan_path != NULL ? o->plan_path : "plan fd";
	ssize_t		 n;
	int		 fd = o->plan_fd;

	if ((buf = malloc(ENF_PLAN_MAX_BYTES + 1)) == NULL) {
		log_warn("plan");
		return NULL;
	}
	if (o->plan_path != NULL &&
	    (fd = open(o->plan_path, O_RDONLY | O_CLOEXEC)) == -1) {
		log_warn("%s", o->plan_path);
		goto out;
	}
	n = enf_plan_read(fd, buf, ENF_PLAN_MAX_BYTES + 1, err, sizeof(err));
	/* The plan descriptor is ours to close: --keep-fd cannot name it. */
	(void)close(fd);
	if (n == -1) {
		log_warnx("%s: %s", what, err);
		goto out;
	}
	if ((plan = enf_plan_parse(buf, (size_t)n, err, sizeof(err))) == NULL)
		log_warnx("%s: %s", what, err);
out:
	free(buf);
	return plan;
}

/*
 * A resolver at one of the sandbox's own addresses is a server inside it:
 * the command reaches it through other local addresses that no rule on the
 * resolver's address names, or takes its port.  An address is local when
 * it can be bound.  0, or -1 after saying why.
 */
static int
resolvers_remote(const struct enf_plan *plan)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	char			 as[INET6_ADDRSTRLEN];
	size_t			 i;
	socklen_t		 len;
	int			 fd, rc, saved;

	for (i = 0; i < plan->nresolvers; i++) {
		const struct enf_addr	*a = &plan->resolvers[i].addr;

		enf_addr_str(a, as, sizeof(as));
		memset(&ss, 0, sizeof(ss));
		if (a->family == AF_INET) {
			sin->sin_family = AF_INET;
			memcpy(&sin->sin_addr, a->addr, 4);
			len = sizeof(*sin);
		} else {
			sin6->sin6_family = AF_INET6;
			memcpy(&sin6->sin6_addr, a->addr, 16);
			len = sizeof(*sin6);
		}
		if ((fd = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) ==
		    -1) {
			if (errno == EAFNOSUPPORT)
				continue;	/* no such family: not ours */
			log_warn("resolver %s: socket", as);
			return -1;
		}
		rc = bind(fd, (struct sockaddr *)&ss, len);
		saved = errno;
		(void)close(fd);
		if (rc == 0) {
			log_warnx("resolver %s is an address of the sandbox "
			    "itself; the resolver must be outside it", as);
			return -1;
		}
		if (saved != EADDRNOTAVAIL) {
			errno = saved;
			log_warn("resolver %s: is it local", as);
			return -1;
		}
	}
	return 0;
}

/*
 * The env file holds the command's own environment, and the launcher
 * gives it to the sandbox user: under a user namespace the container's
 * root is a subordinate id that owns nothing of the host's, and has no
 * CAP_DAC_OVERRIDE.  So it is read with the command's file identity
 * (setfsuid: nothing else about the process changes), falling back to
 * our own when that identity cannot read it (a root-owned file, as the
 * tests and a hand-run enforcer use).  0 or -1 with err.
 */
static int
env_file_as(const struct enf_creds *c, const char *path, char *err,
    size_t errlen)
{
	uid_t	 uid = getuid();
	gid_t	 gid = getgid();
	int	 rc;

	(void)setfsgid(c->gid);
	(void)setfsuid(c->uid);
	rc = enf_env_file(path, err, errlen);
	(void)setfsuid(uid);
	(void)setfsgid(gid);
	/* setfsuid reports nothing: prove the identity came back */
	if ((uid_t)setfsuid((uid_t)-1) != uid ||
	    (gid_t)setfsgid((gid_t)-1) != gid) {
		snprintf(err, errlen, "cannot restore the file identity");
		return -1;
	}
	if (rc == -1 && access(path, R_OK) == 0)
		rc = enf_env_file(path, err, errlen);
	return rc;
}

/*
 * The plan's home-dir folders under ENF_SANDBOX_HOME, made when missing,
 * each part mode 0700, with the command's file identity (setfsuid): what
 * the sandbox user could make itself, never more (the fs capabilities go
 * with fsuid 0).  A folder that cannot be made costs its warning, not
 * the session.  0, or -1 when the identity did not come back (nothing
 * may run then).
 */
static int
home_dirs_as(const struct enf_creds *c, const struct enf_plan *plan)
{
	char	 path[sizeof(ENF_SANDBOX_HOME) + ENF_PLAN_MAX_HOMEDIR + 1];
	char	*slash;
	uid_t	 uid = getuid();
	gid_t	 gid = getgid();
	size_t	 i;

	if (plan->nhomedirs == 0)
		return 0;
	(void)setfsgid(c->gid);
	(void)setfsuid(c->uid);
	for (i = 0; i < plan->nhomedirs; i++) {
		snprintf(path, sizeof(path), "%s/%s", ENF_SANDBOX_HOME,
		    plan->homedirs[i]);
		slash = path + sizeof(ENF_SANDBOX_HOME);
		for (;;) {
			slash = strchr(slash, '/');
			if (slash != NULL)
				*slash = '\0';
			if (mkdir(path, 0700) == -1 && errno != EEXIST) {
				log_warn("home-dir %s", path);
				break;
			}
			if (slash == NULL)
				break;
			*slash++ = '/';
		}
	}
	(void)setfsuid(uid);
	(void)setfsgid(gid);
	if ((uid_t)setfsuid((uid_t)-1) != uid ||
	    (gid_t)setfsgid((gid_t)-1) != gid) {
		log_warnx("home-dir: cannot restore the file identity");
		return -1;
	}
	return 0;
}

/* Loads the ruleset as one batch and proves it is in place.  0 or -1. */
static int
apply(const struct nft_ruleset *rs)
{
	struct nft_batch	 b;
	char			 err[1024];
	int			 rc = -1;

	if (nft_batch_init(&b) == -1) {
		log_warn("batch");
		return -1;
	}
	if (nft_batch_ruleset(rs, (uint32_t)time(NULL), &b, err,
	    sizeof(err)) == -1 || nft_send(&b, err, sizeof(err)) == -1) {
		log_warnx("loading table inet %s: %s", NFT_TABLE, err);
		goto out;
	}
	rc = 0;
out:
	nft_batch_release(&b);
	return rc;
}

static int
verify(const struct nft_ruleset *rs)
{
	char	 err[1200];

	if (nft_verify(rs, err, sizeof(err)) == -1) {
		log_warnx("verifying table inet %s: %s", NFT_TABLE, err);
		return -1;
	}
	return 0;
}

/*
 * What the plan asks of the process against how it was started.  --init
 * exits once the table is verified, so nothing may need a process of the
 * enforcer's after it: no refresher (direct mode), no relay (transparent,
 * dns-gate).  gate-uid and serve describe a pod (docs/kubernetes.md), and
 * a session's launcher never writes them.  0, or -1 after saying why.
 */
static int
plan_fits(const struct options *o, const struct enf_plan *plan)
{
	if (!o->init && (plan->gate_uid != 0 || plan->nserve > 0)) {
		log_warnx("gate-uid and serve lines are for --init (the init "
		    "container of a pod) only");
		return -1;
	}
	if (!o->init)
		return 0;
	if (plan->mode == ENF_MODE_DIRECT) {
		log_warnx("--init: mode direct needs the refresher, which "
		    "would have to outlive the init container; use mode gate "
		    "with a gate in the pod (gate-uid) or a shared one");
		return -1;
	}
	if (enf_plan_catches_tcp(plan) || plan->dns_gate) {
		log_warnx("--init: transparent, transparent-range and "
		    "dns-gate need the relay, which would have to outlive the "
		    "init container; leave them out (the app uses the proxy "
		    "variables)");
		return -1;
	}
	return 0;
}

/* --init: the table, verified, left in the namespace; 0 or EXIT_ENFORCE. */
static int
init_table(const struct enf_plan *plan)
{
	struct nft_ruleset	*rs;
	char			 err[256];
	int			 rc = EXIT_ENFORCE;

	if ((rs = nft_ruleset_new(plan, getuid(), err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return EXIT_ENFORCE;
	}
	if (apply(rs) == 0 && verify(rs) == 0) {
		log_notice("table inet %s loaded and verified: mode %s, %zu "
		    "rules; exiting (--init)", NFT_TABLE,
		    enf_mode_name(plan->mode), nft_ruleset_nrules(rs));
		rc = 0;
	}
	nft_ruleset_free(rs);
	return rc;
}

int
main(int argc, char **argv)
{
	struct options		 o;
	struct enf_plan		*plan;
	struct nft_ruleset	*rs = NULL;
	struct enf_recorder	*rec = NULL;
	struct enf_tproxy	*relay = NULL;
	char			 err[256];
	size_t			 i;
	int			 status = EXIT_ENFORCE;

	log_init("aisb-enforce", 0);
	parse_args(&o, argc, argv);
	log_setverbose(o.verbose);
	for (i = 0; i < o.nkeep; i++)
		if (o.keep[i] == o.plan_fd)
			usage("--keep-fd names the plan descriptor");
	/* before anything is loaded: a bad file costs nothing but a 78 */
	if (o.env_path != NULL &&
	    env_file_as(&o.creds, o.env_path, err, sizeof(err)) == -1) {
		log_warnx("--env-file %s", err);
		return EXIT_CONFIG;
	}
	if ((plan = load_plan(&o)) == NULL)
		return EXIT_CONFIG;
	if (plan_fits(&o, plan) == -1) {
		status = EXIT_CONFIG;
		goto out;
	}
	if (o.init && !o.check_only) {
		status = init_table(plan);
		goto out;
	}
	/*
	 * The host's CAs, before any drop; a failure costs TLS to hosts
	 * they sign, which the command then reports, not the session.
	 */
	if (!o.check_only && !o.init) {
		int rc = enf_host_ca(ENF_HOST_CA_PATH, ENF_CA_BUNDLE, err,
		    sizeof(err));

		if (rc == -1)
			log_warnx("host CAs not added: %s", err);
		else if (rc == 0 && setenv("NODE_EXTRA_CA_CERTS",
		    ENF_HOST_CA_PATH, 0) == -1)
			log_warn("NODE_EXTRA_CA_CERTS");
	}
	/*
	 * The enforcer stays as the command's parent in every mode (the
	 * refresher in direct mode, whose uid the resolver rule lets out):
	 * under the command's own uid the command could signal it, and in
	 * direct mode reach the resolver.  --init runs no command.
	 */
	if (!o.init && (o.creds.uid == getuid() ||
	    o.creds.uid == geteuid())) {
		log_warnx("the sandbox uid must differ from the enforcer's "
		    "(%u): the command could signal its parent%s; start the "
		    "enforcer as another uid (podman --user 0:0)",
		    (unsigned)getuid(), plan->mode == ENF_MODE_DIRECT ?
		    " and reach the resolver" : "");
		status = EXIT_CONFIG;
		goto out;
	}
	if (!o.check_only && !o.init && home_dirs_as(&o.creds, plan) == -1)
		goto out;
	if (o.check_only) {
		/* "OK" that nobody could read is no answer */
		if (printf("plan OK (mode %s%s)\n", enf_mode_name(plan->mode),
		    o.init ? ", --init" : "") < 0 || fflush(stdout) == EOF) {
			log_warn("stdout");
			status = EXIT_CONFIG;
		} else
			status = 0;
		goto out;
	}

	if (plan->mode == ENF_MODE_DIRECT && resolvers_remote(plan) == -1)
		goto out;
	/*
	 * Transparent capture (gate mode): the relay's listeners first, for
	 * their ports are in the nat rules; the relay itself starts once the
	 * table is verified.  Asked for and not running: nothing runs.
	 */
	if ((enf_plan_catches_tcp(plan) || plan->dns_gate) &&
	    (relay = enf_tproxy_open(plan, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		goto out;
	}
	if ((rs = nft_ruleset_new(plan, getuid(), err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		goto out;
	}
	if (apply(rs) == -1)
		goto out;
	log_info("table inet %s loaded: mode %s, %zu rules", NFT_TABLE,
	    enf_mode_name(plan->mode), nft_ruleset_nrules(rs));

	/*
	 * The recorder runs before anything is sent (the refresher's first
	 * look-ups included); fail closed: asked for and not running, the
	 * command does not run either.
	 */
	if (plan->record_path[0] != '\0' &&
	    (rec = enf_record_start(plan, o.creds.uid)) == NULL)
		goto out;
	if (plan->mode == ENF_MODE_DIRECT) {
		/* Returns only in the refresher, with the command's status. */
		status = enf_direct_run(plan, rs, rec, &o.creds, o.keep,
		    o.nkeep, o.cmd);
		goto out;
	}
	if (verify(rs) == -1)
		goto out;
	if (relay != NULL) {
		if (enf_tproxy_start(relay, &o.creds, err, sizeof(err)) ==
		    -1) {
			log_warnx("%s", err);
			goto out;
		}
		log_info("relay: transparent ports %zu%s, dns %s",
		    plan->ntports, plan->has_trange ? " and every port of "
		    "the gate's range" : "", plan->dns_gate ? "to the gate" :
		    "not caught");
		/* the relay has its own copies; the command gets none */
		enf_tproxy_free(relay);
		relay = NULL;
	}
	nft_ruleset_free(rs);
	enf_plan_free(plan);
	rs = NULL;
	plan = NULL;

	/* The command's parent: signals reach its whole group (supervise.h). */
	status = enf_supervise(&o.creds, o.keep, o.nkeep, o.cmd);
out:
	enf_tproxy_free(relay);
	enf_record_free(rec);
	nft_ruleset_free(rs);
	enf_plan_free(plan);
	return status;
}
