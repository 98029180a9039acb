/*
 * aisb doctor: can aisb run here, and how?  One line per check, with the
 * fix when it fails.  The checks that matter run for real: a container
 * under the chosen runtime and limits, a connection from inside to a
 * listener on the host's 127.0.0.1, the enforcer loading its table, a file
 * written by uid 1000 through a bind mount.  What is learned lands in
 * struct launch_host_facts so that the launcher adapts instead of failing.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/vfs.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <linux/magic.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/paths.h"
#include "image/agent.h"
#include "session/spec.h"
#include "host/cache.h"
#include "cmd/cli.h"
#include "session/ids.h"
#include "host/facts.h"
#include "image/image.h"
#include "session/options.h"
#include "session/podman.h"
#include "host/proc.h"
#include "session/seccomp.h"
#include "cmd/cmd.h"
#include "log.h"

#define PROBE_TIMEOUT_MS	(90 * 1000)	/* one probe container */
#define INFO_TIMEOUT_MS		(60 * 1000)
#define INFO_MAX		512		/* podman info we parse */
#define IMAGES_MAX		(64 * 1024)	/* podman images we parse */
#define ULIMIT_MIN		1024UL		/* below: aisb cannot run */
#define PROBE_WORD		"aisb-doctor"
#define PASTA_HOST		"169.254.1.2"
#define PASTA_NETWORK		"pasta:--map-host-loopback," PASTA_HOST

enum verdict { V_OK, V_WARN, V_FAIL, V_SKIP };

static void __attribute__((format(printf, 4, 5)))
report(struct launch_host_facts *f, int verbose, enum verdict v,
    const char *fmt, ...)
{
	static const char *const word[] = { "ok", "warn", "FAIL", "skip" };
	va_list	ap;

	if (v == V_FAIL)
		f->nfail++;
	if (v == V_SKIP)
		f->nskip++;
	if (!verbose)
		return;
	printf("%-5s", word[v]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Cuts s at its first newline or carriage return. */
static void
chomp(char *s)
{
	s[strcspn(s, "\r\n")] = '\0';
}

/* 1 when an executable named name is on PATH. */
static int
in_path(const char *name)
{
	const char	*path = getenv("PATH"), *p, *e;
	char		 buf[PATH_MAX];

	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	for (p = path; *p != '\0'; p = *e == ':' ? e + 1 : e) {
		e = p + strcspn(p, ":");
		if (e == p)
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p),
		    p, name) < sizeof(buf) && access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* ---- host checks ----------------------------------------------------- */

/*
 * podman's version.  A session takes it from the cache (cache.h: keyed by
 * the binary and its configuration), which costs no podman run; doctor
 * asks podman for real, and refreshes the cache.
 */
static int
check_podman(struct launch_host_facts *f, int verbose)
{
	extern char			**environ;
	struct launch_podman_facts	 pf;
	char *const	argv[] = { "podman", "version", "--format",
	    "{{.Client.Version}}", NULL };
	char		out[sizeof(f->podman_version)], err[256];
	char		podman[PATH_MAX];
	int		major = 0, rc;

	if (launch_find_program("podman", podman, sizeof(podman)) == -1) {
		report(f, verbose, V_FAIL, "podman     not found; fix: apt-get "
		    "install podman (4.3 or later)");
		return -1;
	}
	if (verbose) {
		rc = launch_exec(argv, NULL, 0, out, sizeof(out),
		    INFO_TIMEOUT_MS, 0, err, sizeof(err)) != 0 ? -1 : 0;
		if (rc == 0)
			(void)launch_cache_podman_facts(podman, environ, 1, &pf,
			    err, sizeof(err));
	} else if ((rc = launch_cache_podman_facts(podman, environ, 0, &pf,
	    err, sizeof(err))) == 0)
		snprintf(out, sizeof(out), "%s", pf.version);
	if (rc == -1) {
		report(f, verbose, V_FAIL, "podman     %s; fix: apt-get install "
		    "podman (4.3 or later)", err);
		return -1;
	}
	chomp(out);
	snprintf(f->podman_version, sizeof(f->podman_version), "%s", out);
	major = atoi(out);
	if (major < 4) {
		report(f, verbose, V_FAIL, "podman     %s is too old; fix: "
		    "podman 4.3 or later", f->podman_version);
		return -1;
	}
	report(f, verbose, V_OK, "podman     %s%s", f->podman_version,
	    f->rootless ? " (rootless)" : "");
	return 0;
}

static void
check_info(struct launch_host_facts *f, int verbose)
{
	char *const	argv[] = { "podman", "info", "--format",
	    "{{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}} "
	    "{{.Host.Security.Rootless}}", NULL };
	char		out[INFO_MAX], err[256], cg[16], rt[32], rl[16];

	if (launch_exec(argv, NULL, 0, out, sizeof(out), INFO_TIMEOUT_MS, 0,
	    err, sizeof(err)) != 0 ||
	    sscanf(out, "%15s %31s %15s", cg, rt, rl) != 3) {
		report(f, verbose, V_FAIL, "info       podman info: %s; fix: "
		    "run `podman info` and repair what it says", err);
		return;
	}
	f->rootless = strcmp(rl, "true") == 0;
	f->cgroups_version = strcmp(cg, "v2") == 0 ? 2 :
	    strcmp(cg, "v1") == 0 ? 1 : 0;
	/*
	 * crun cannot run containers on a cgroups v1/hybrid host like the
	 * Debian 12 machines aisb was measured on; runc can.  The container
	 * check below tries the choice for real and falls back.
	 */
	if (f->cgroups_version != 2 && in_path("runc"))
		snprintf(f->runtime, sizeof(f->runtime), "runc");
	else
		snprintf(f->runtime, sizeof(f->runtime), "%s", rt);
	report(f, verbose, V_OK, "cgroups    %s%s; OCI runtime %s (podman's "
	    "default %s): aisb passes --runtime %s", cg,
	    f->cgroups_version == 1 ? " (v1 or hybrid)" : "",
	    f->runtime, rt, f->runtime);
}

/*
 * What check_info() learns, without asking podman: `podman info` looks up
 * its helpers' Debian packages and costs seconds, too much for every
 * session.  The cgroup version is the type of /sys/fs/cgroup; the runtime
 * is runc on v1 or hybrid hosts, else podman's own default (left empty).
 */
static void
check_info_fast(struct launch_host_facts *f)
{
	struct statfs	 sf;

	f->cgroups_version = statfs("/sys/fs/cgroup", &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC ? 2 : 1;
	if (f->cgroups_version != 2 && in_path("runc"))
		snprintf(f->runtime, sizeof(f->runtime), "runc");
}

static void
check_limits(struct launch_host_facts *f, int verbose)
{
	struct rlimit	nofile, nproc;

	if (getrlimit(RLIMIT_NOFILE, &nofile) == -1 ||
	    getrlimit(RLIMIT_NPROC, &nproc) == -1) {
		report(f, verbose, V_FAIL, "limits     getrlimit: %s",
		    strerror(errno));
		return;
	}
	/* the builder's choice, which a dry run shows too (podman.c) */
	f->nofile = launch_ulimit(RLIMIT_NOFILE);
	f->nproc = launch_ulimit(RLIMIT_NPROC);
	/*
	 * podman asks the runtime for nofile 1048576 unless told otherwise,
	 * and the runtime fails ("error setting rlimit type 7") when that is
	 * above the hard limit; aisb always passes limits inside it.
	 */
	if (f->nofile < ULIMIT_MIN || f->nproc < ULIMIT_MIN) {
		report(f, verbose, V_FAIL, "limits     hard nofile %lu, nproc "
		    "%lu: below %lu; fix: raise the hard limits "
		    "(/etc/security/limits.conf, LimitNOFILE= in a unit)",
		    f->nofile, f->nproc, ULIMIT_MIN);
		return;
	}
	report(f, verbose, V_OK, "limits     hard nofile %lu, nproc %lu: aisb "
	    "passes --ulimit nofile=%lu:%lu --ulimit nproc=%lu:%lu",
	    (unsigned long)(nofile.rlim_max == RLIM_INFINITY ? 0 :
	    nofile.rlim_max), (unsigned long)(nproc.rlim_max ==
	    RLIM_INFINITY ? 0 : nproc.rlim_max), f->nofile, f->nofile,
	    f->nproc, f->nproc);
}

static void
check_tun(struct launch_host_facts *f, int verbose)
{
	struct stat	st;

	if (stat("/dev/net/tun", &st) == -1 || !S_ISCHR(st.st_mode)) {
		report(f, verbose, V_FAIL, "tun        /dev/net/tun missing; "
		    "fix: modprobe tun (slirp4netns and pasta need it)");
		return;
	}
	if (!f->rootless) {
		f->tun_ok = 1;
		report(f, verbose, V_OK, "tun        /dev/net/tun mode %04o "
		    "(rootful podman opens it as root)",
		    (unsigned)(st.st_mode & 07777));
		return;
	}
	if (access("/dev/net/tun", R_OK | W_OK) == -1) {
		report(f, verbose, V_FAIL, "tun        /dev/net/tun mode %04o: "
		    "slirp4netns fails with \"open(/dev/net/tun): Permission "
		    "denied\"; fix: chmod 0666 /dev/net/tun, kept across boots "
		    "by a udev rule KERNEL==\"tun\", MODE=\"0666\"",
		    (unsigned)(st.st_mode & 07777));
		return;
	}
	f->tun_ok = 1;
	report(f, verbose, V_OK, "tun        /dev/net/tun mode %04o, usable",
	    (unsigned)(st.st_mode & 07777));
}

int
launch_doctor_host(struct launch_host_facts *f, int verbose)
{
	f->rootless = geteuid() != 0;
	if (check_podman(f, verbose) == -1)
		return -1;
	if (verbose)
		check_info(f, verbose);
	else
		check_info_fast(f);
	check_limits(f, verbose);
	check_tun(f, verbose);
	/* A guess until the network check confirms it. */
	snprintf(f->network, sizeof(f->network), "%s", LAUNCH_SLIRP_NETWORK);
	snprintf(f->host_loopback, sizeof(f->host_loopback), "%s",
	    LAUNCH_SLIRP_HOST);
	return f->nfail == 0 ? 0 : -1;
}

/* ---- container checks ------------------------------------------------ */

static int
podman_at_least(const struct launch_host_facts *f, int major, int minor)
{
	int	ma = 0, mi = 0;

	if (sscanf(f->podman_version, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/* The newest image aisb built, into f->image.  0 or -1. */
static int
find_image(struct launch_host_facts *f)
{
	char *const	 argv[] = { "podman", "images", "--filter",
	    "label=" LAUNCH_LABEL_KIND "=sandbox", "--format",
	    "{{.Repository}}:{{.Tag}}", NULL };
	char		*out, err[256];
	int		 rc = -1;

	if ((out = malloc(IMAGES_MAX)) == NULL)
		return -1;
	if (launch_exec(argv, NULL, 0, out, IMAGES_MAX, INFO_TIMEOUT_MS, 0,
	    err, sizeof(err)) == 0) {
		chomp(out);
		if (out[0] != '\0' && strlen(out) < sizeof(f->image) &&
		    strstr(out, "<none>") == NULL) {
			snprintf(f->image, sizeof(f->image), "%s", out);
			rc = 0;
		}
	}
	free(out);
	return rc;
}

/*
 * The common head of every probe container: removed on exit, labelled,
 * never pulled, under the runtime and limits aisb will use.  Writes at
 * most 16 entries into argv (which the caller sizes) and returns the count.
 */
struct probe_args {
	char	rt[48], nofile[64], nproc[64];
};

static size_t
probe_head(const struct launch_host_facts *f, const char *runtime,
    struct probe_args *pa, char **argv)
{
	size_t	a = 0;

	snprintf(pa->nofile, sizeof(pa->nofile), "--ulimit=nofile=%lu:%lu",
	    f->nofile, f->nofile);
	snprintf(pa->nproc, sizeof(pa->nproc), "--ulimit=nproc=%lu:%lu",
	    f->nproc, f->nproc);
	argv[a++] = "podman";
	argv[a++] = "run";
	argv[a++] = "--rm";
	/* Empty when podman info failed: podman's default then. */
	if (runtime[0] != '\0') {
		snprintf(pa->rt, sizeof(pa->rt), "--runtime=%s", runtime);
		argv[a++] = pa->rt;
	}
	argv[a++] = pa->nofile;
	argv[a++] = pa->nproc;
	argv[a++] = "--pull=never";
	argv[a++] = "--label=" LAUNCH_LABEL_MANAGED "=1";
	argv[a++] = "--label=" LAUNCH_LABEL_KIND "=doctor";
	return a;
}

static int
try_runtime(const struct launch_host_facts *f, const char *runtime,
    char *err, size_t errlen)
{
	struct probe_args	 pa;
	char			*argv[24];
	size_t			 a;

	a = probe_head(f, runtime, &pa, argv);
	argv[a++] = "--network=none";
	argv[a++] = "--entrypoint=/bin/true";
	argv[a++] = (char *)f->image;
	argv[a] = NULL;
	return launch_exec(argv, NULL, 0, NULL, 0, PROBE_TIMEOUT_MS, 0, err,
	    errlen) == 0 ? 0 : -1;
}

/*
 * try_runtime(), halving a limit the runtime cannot set until it can: the
 * hard limits podman's own processes (conmon) run with are not ours to
 * read, and a runtime can only lower them.
 */
static int
try_runtime_limits(struct launch_host_facts *f, const char *runtime,
    int *lowered, char *err, size_t errlen)
{
	for (;;) {
		if (try_runtime(f, runtime, err, errlen) == 0)
			return 0;
		if (strstr(err, "rlimit type 6") != NULL &&
		    f->nproc / 2 >= ULIMIT_MIN)
			f->nproc /= 2;
		else if (strstr(err, "rlimit type 7") != NULL &&
		    f->nofile / 2 >= ULIMIT_MIN)
			f->nofile /= 2;
		else
			return -1;
		*lowered = 1;
	}
}

static int
check_runtime(struct launch_host_facts *f, int verbose)
{
	static const char *const candidates[] = { "runc", "crun" };
	char		first[sizeof(f->runtime)], err[256], why[320];
	size_t		i;
	int		lowered = 0;

	snprintf(first, sizeof(first), "%s", f->runtime);
	if (try_runtime_limits(f, first, &lowered, err, sizeof(err)) == 0) {
		report(f, verbose, V_OK, "runtime    a container runs under %s "
		    "with --ulimit nofile=%lu:%lu --ulimit nproc=%lu:%lu%s",
		    first, f->nofile, f->nofile, f->nproc, f->nproc, lowered ?
		    " (lowered until the runtime could set them)" : "");
		return 0;
	}
	snprintf(why, sizeof(why), "%s: %s", first, err);
	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (strcmp(candidates[i], first) == 0 ||
		    !in_path(candidates[i]))
			continue;
		if (try_runtime_limits(f, candidates[i], &lowered, err,
		    sizeof(err)) == 0) {
			snprintf(f->runtime, sizeof(f->runtime), "%s",
			    candidates[i]);
			report(f, verbose, V_OK, "runtime    %s fails (%s); %s "
			    "works: aisb passes --runtime %s", first, why,
			    candidates[i], candidates[i]);
			return 0;
		}
	}
	report(f, verbose, V_FAIL, "runtime    no container runs (%s); fix: "
	    "apt-get install runc, and on a cgroups v1/hybrid host use runc "
	    "(crun fails there)", why);
	return -1;
}

/* A listener on 127.0.0.1, port 0.  The descriptor or -1. */
static int
listen_loopback(unsigned *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 8) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/*
 * 1 when a connection that said PROBE_WORD is waiting on the listener.
 * The kernel finished the handshake and queued the bytes while the
 * container ran, so they are read now, with a short grace period.
 */
static int
heard_probe(int lfd)
{
	struct pollfd	pfd;
	char		buf[64];
	size_t		len = 0;
	ssize_t		n;
	int		cfd, ok = 0;

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 2000) <= 0)
		return 0;
	if ((cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return 0;
	pfd.fd = cfd;
	while (len < sizeof(buf) - 1 && poll(&pfd, 1, 2000) > 0) {
		if ((n = read(cfd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	ok = strstr(buf, PROBE_WORD) != NULL;
	close(cfd);
	return ok;
}

/*
 * Connects from a container to host:port with bash's /dev/tcp.  The
 * script is a constant; address and port travel as its arguments.
 */
static int
try_network(const struct launch_host_facts *f, const char *network,
    const char *host, unsigned port, char *err, size_t errlen)
{
	struct probe_args	 pa;
	char			*argv[32], net[128], portstr[16];
	size_t			 a;

	snprintf(net, sizeof(net), "--network=%s", network);
	snprintf(portstr, sizeof(portstr), "%u", port);
	a = probe_head(f, f->runtime, &pa, argv);
	argv[a++] = net;
	argv[a++] = "--entrypoint=/bin/bash";
	argv[a++] = (char *)f->image;
	argv[a++] = "-c";
	argv[a++] = "exec 3<>\"/dev/tcp/$1/$2\" && printf %s \"$0\" >&3";
	argv[a++] = PROBE_WORD;
	argv[a++] = (char *)host;
	argv[a++] = portstr;
	argv[a] = NULL;
	return launch_exec(argv, NULL, 0, NULL, 0, PROBE_TIMEOUT_MS, 0, err,
	    errlen) == 0 ? 0 : -1;
}

static int
check_network(struct launch_host_facts *f, int verbose)
{
	static const struct {
		enum launch_netmode	 mode;
		const char		*network, *host, *tool;
	} modes[] = {
		{ LAUNCH_NET_PASTA, PASTA_NETWORK, PASTA_HOST, "pasta" },
		{ LAUNCH_NET_SLIRP, LAUNCH_SLIRP_NETWORK, LAUNCH_SLIRP_HOST,
		    "slirp4netns" },
	};
	char		err[256], why[600] = "";
	size_t		i, off = 0;
	unsigned	port;
	int		lfd;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char	*skip = NULL;

		if (!in_path(modes[i].tool) &&
		    (modes[i].mode != LAUNCH_NET_SLIRP || access(
		    "/usr/libexec/podman/slirp4netns", X_OK) == -1))
			skip = "not installed";
		else if (modes[i].mode == LAUNCH_NET_PASTA && !podman_at_least(
		    f, 4, 4))
			skip = "podman before 4.4 has no pasta";
		if (skip != NULL) {
			off += (size_t)snprintf(why + off, sizeof(why) - off,
			    "%s%s: %s", off ? "; " : "", modes[i].tool, skip);
			continue;
		}
		if ((lfd = listen_loopback(&port)) == -1) {
			report(f, verbose, V_FAIL, "network    listen on "
			    "127.0.0.1: %s", strerror(errno));
			return -1;
		}
		if (try_network(f, modes[i].network, modes[i].host, port, err,
		    sizeof(err)) == 0 && heard_probe(lfd)) {
			close(lfd);
			f->netmode = modes[i].mode;
			snprintf(f->network, sizeof(f->network), "%s",
			    modes[i].network);
			snprintf(f->host_loopback, sizeof(f->host_loopback),
			    "%s", modes[i].host);
			report(f, verbose, V_OK, "network    %s: the host's "
			    "127.0.0.1:%u answers at %s:%u inside%s%s%s",
			    modes[i].network, port, modes[i].host, port,
			    off ? " (" : "", why, off ? ")" : "");
			return 0;
		}
		close(lfd);
		off += (size_t)snprintf(why + off, sizeof(why) - off,
		    "%s%s: %s", off ? "; " : "", modes[i].tool,
		    err[0] != '\0' ? err : "connected to nothing");
		if (off >= sizeof(why))
			off = sizeof(why) - 1;
	}
	report(f, verbose, V_FAIL, "network    no mode reaches the host's "
	    "loopback (%s); fix: apt-get install slirp4netns (podman 4.3) or "
	    "passt (podman 4.4+)", why);
	return -1;
}

/* A private scratch directory for a probe, under $TMPDIR or /var/tmp. */
static int
probe_dir(char *dir, size_t len)
{
	const char	*tmp = getenv("TMPDIR");
	int		 n;

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/var/tmp";
	n = snprintf(dir, len, "%s/aisb-doctor.XXXXXX", tmp);
	if (n < 0 || (size_t)n >= len || mkdtemp(dir) == NULL)
		return -1;
	return 0;
}

/* Removes dir/a, dir/b, dir/c (files or empty folders), then dir. */
static void
remove_names(const char *dir, const char *a, const char *b, const char *c)
{
	const char	*names[] = { a, b, c };
	char		 path[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) == -1)
			(void)rmdir(path);
	}
	(void)rmdir(dir);
}

/*
 * The cgroup limits the options ask for that this host will not apply:
 * rootless podman on cgroups v1 ignores them all and only warns.
 */
int
launch_limits_unheld(const struct launch_opts *o,
    const struct launch_host_facts *f, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!f->rootless || f->cgroups_version == 2)
		return 0;
	snprintf(buf, len, "%s%s%s", o->memory > 0 ? " memory" : "",
	    o->cpus_milli > 0 ? " cpus" : "", o->pids > 0 ? " pids" : "");
	return buf[0] != '\0';
}

static void
check_limits_held(struct launch_host_facts *f, int verbose)
{
	if (!f->rootless || f->cgroups_version == 2) {
		report(f, verbose, V_OK, "cgroups    --memory, --cpus and "
		    "--pids are applied by podman");
		return;
	}
	report(f, verbose, V_WARN, "cgroups    rootless podman on cgroups v1 "
	    "cannot apply --memory, --cpus or --pids: sessions say so and run "
	    "without them (the nofile and nproc ulimits hold); fix: cgroups "
	    "v2 (systemd.unified_cgroup_hierarchy=1) with the controllers "
	    "delegated to the user, or rootful podman");
}

/* Writes len bytes of text to path (mode 0600, a new file).  0 or -1. */
static int
write_new(const char *path, const char *text, size_t len)
{
	int	 fd, rc = 0;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return -1;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -1;
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

/* The owner and the text of dir/name, for the workspace check. */
static int
probe_file(const char *dir, const char *name, uid_t *uid, char *text,
    size_t len)
{
	struct stat	 st;
	char		 path[PATH_MAX];
	ssize_t		 n = 0;
	int		 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) == -1)
		return -1;
	*uid = st.st_uid;
	if (text == NULL)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, text, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	return 0;
}

/*
 * One container exactly as a session runs it: the options resolved as
 * for `aisb -- CMD` (user config included), the mapping and mounts of
 * ids.c, and the argv of launch_podman_argv(), in a fresh 0700 folder of
 * the invoking user.  The enforcer loads the gate table (--net none
 * without a working network mode), drops to 1000, and the command edits a
 * file of the folder's owner, creates a file and a folder.  Outside, they
 * must belong to that owner.
 */
#define SESSION_SCRIPT \
	"id -u && printf x >> existing && echo new > created && mkdir made"

static void
check_session(struct launch_host_facts *f, int verbose)
{
	struct launch_opts	 o;
	struct launch_ids	 ids;
	struct launch_run	 r;
	struct launch_strv	 v = { 0 };
	char			 ws[PATH_MAX], run[PATH_MAX], podman[PATH_MAX];
	char			 env[PATH_MAX + 8], plan[PATH_MAX + 8];
	char			 mnt[PATH_MAX + 16], vol[64], id[40];
	char			 ptext[128], out[64], err[1024], text[16], uid[16];
	char			 path[PATH_MAX + 16], seccomp[PATH_MAX];
	char			*av[] = { (char *)"aisb", (char *)"--net", NULL,
	    (char *)"--workspace", ws, (char *)"--home-volume", vol,
	    (char *)"--", (char *)"/bin/sh", (char *)"-c",
	    (char *)SESSION_SCRIPT, NULL };
	char			*rmvol[] = { podman, (char *)"volume",
	    (char *)"rm", (char *)"--force", vol, NULL };
	extern char		**environ;
	uid_t			 owner;
	int			 n, rc, mounted = 0, have_opts = 0;

	ws[0] = run[0] = '\0';
	if (launch_find_program("podman", podman, sizeof(podman)) == -1 ||
	    launch_random_hex(id, 16) == -1) {
		report(f, verbose, V_FAIL, "session    podman or randomness "
		    "not available");
		return;
	}
	snprintf(vol, sizeof(vol), "aisb-doctor-%s", id);
	if (probe_dir(ws, sizeof(ws)) == -1 || probe_dir(run,
	    sizeof(run)) == -1) {
		report(f, verbose, V_FAIL, "session    scratch folder: %s",
		    strerror(errno));
		goto out;
	}
	/* Without a network mode that works, the table of --net none. */
	av[2] = f->netmode != LAUNCH_NET_UNKNOWN ? (char *)"gate" :
	    (char *)"none";
	n = f->netmode != LAUNCH_NET_UNKNOWN ? snprintf(ptext, sizeof(ptext),
	    "aisb-plan 1\nmode gate\ngate %s 9\n", f->host_loopback) :
	    snprintf(ptext, sizeof(ptext), "aisb-plan 1\nmode none\n");
	snprintf(env, sizeof(env), "%s/env", run);
	snprintf(plan, sizeof(plan), "%s/plan", run);
	snprintf(mnt, sizeof(mnt), "%s/workspace", run);
	if (write_new(env, "", 0) == -1 || write_new(plan, ptext,
	    (size_t)n) == -1) {
		report(f, verbose, V_FAIL, "session    %s: %s", run,
		    strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/existing", ws);
	if (write_new(path, "hi", 2) == -1) {
		report(f, verbose, V_FAIL, "session    %s: %s", ws,
		    strerror(errno));
		goto out;
	}
	if (launch_opts_resolve(&o, (int)(sizeof(av) / sizeof(av[0])) - 1, av,
	    environ, err, sizeof(err)) == -1) {
		report(f, verbose, V_FAIL, "session    the options a session "
		    "would use: %s", err);
		goto out;
	}
	have_opts = 1;
	if (launch_seccomp_profile(seccomp, sizeof(seccomp), err,
	    sizeof(err)) == -1) {
		report(f, verbose, V_FAIL, "session    %s", err);
		goto out;
	}
	if (launch_ids_resolve(&ids, f->rootless, ws, 1, err,
	    sizeof(err)) == -1 || launch_ids_prepare(&ids, ws, mnt, env,
	    plan, &mounted, err, sizeof(err)) == -1) {
		report(f, verbose, V_FAIL, "session    user namespace: %s",
		    err);
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.opts = &o;
	r.podman = podman;
	r.runtime = f->runtime[0] != '\0' ? f->runtime : NULL;
	r.network = f->network;
	r.nofile = f->nofile;
	r.nproc = f->nproc;
	r.session_id = id;
	r.image = f->image;
	r.envfile = env;
	r.planfile = plan;
	r.ids = &ids;
	r.workspace_src = mounted ? mnt : NULL;
	r.no_limits = launch_limits_unheld(&o, f, err, sizeof(err));
	r.seccomp = seccomp;
	if (launch_podman_argv(&r, &v) == -1) {
		report(f, verbose, V_FAIL, "session    out of memory");
		goto out;
	}
	rc = launch_exec(v.s, NULL, 0, out, sizeof(out), PROBE_TIMEOUT_MS, 0,
	    err, sizeof(err));
	chomp(out);
	/* `id -u` of the script: the sandbox user */
	snprintf(uid, sizeof(uid), "%d", LAUNCH_SANDBOX_ID);
	if (rc != 0 || strcmp(out, uid) != 0) {
		if (rc == EXIT_CONFIG)
			report(f, verbose, V_FAIL, "nftables   aisb-enforce "
			    "refused the plan or its arguments (%s); fix: "
			    "rebuild the image with the aisb-enforce of this "
			    "aisb (aisb image build)", err);
		else if (rc == EXIT_ENFORCE)
			report(f, verbose, V_FAIL, "nftables   aisb-enforce "
			    "could not set up the sandbox (%s); fix: the "
			    "kernel needs nf_tables (modprobe nf_tables), and "
			    "podman must grant --cap-add NET_ADMIN", err);
		else
			report(f, verbose, V_FAIL, "session    a session's "
			    "container exited %d, printing uid '%s' (%s)", rc,
			    out, err);
		goto out;
	}
	f->nft_ok = 1;
	report(f, verbose, V_OK, "nftables   aisb-enforce loaded table inet "
	    "aisb (--net %s) and ran the command as uid %s", av[2], out);
	if (probe_file(ws, "existing", &owner, text, sizeof(text)) == -1 ||
	    strcmp(text, "hix") != 0 || owner != ids.owner_uid ||
	    probe_file(ws, "created", &owner, NULL, 0) == -1 ||
	    owner != ids.owner_uid || probe_file(ws, "made", &owner, NULL,
	    0) == -1 || owner != ids.owner_uid) {
		report(f, verbose, V_FAIL, "workspace  uid 1000 edited, created "
		    "and made a folder in a 0700 folder of uid %u, but outside "
		    "they are not that user's as they should be (%s)",
		    (unsigned)ids.owner_uid, strerror(errno));
		goto out;
	}
	f->bind_uid_ok = 1;
	report(f, verbose, V_OK, "workspace  in a 0700 folder of uid %u, the "
	    "command (uid 1000 inside, %s) edited a file and created a file "
	    "and a folder, owned by uid %u outside", (unsigned)ids.owner_uid,
	    ids.mode == LAUNCH_IDS_KEEPID ? "--userns=keep-id" :
	    "the aisb subordinate range and an idmapped mount",
	    (unsigned)ids.owner_uid);
out:
	if (mounted)
		launch_ids_umount(mnt);
	launch_strv_free(&v);
	if (have_opts) {
		(void)launch_exec(rmvol, NULL, 0, NULL, 0, INFO_TIMEOUT_MS, 0,
		    err, sizeof(err));
		launch_opts_free(&o);
	}
	/* what the probe may have left, and nothing else */
	if (ws[0] != '\0')
		remove_names(ws, "existing", "created", "made");
	if (run[0] != '\0')
		remove_names(run, "env", "plan", "workspace");
}

int
launch_doctor_probe(struct launch_host_facts *f, int verbose)
{
	if (launch_doctor_host(f, verbose) == -1 && f->podman_version[0] ==
	    '\0')
		return -1;
	if (f->image[0] == '\0' && find_image(f) == -1) {
		report(f, verbose, V_SKIP, "containers no aisb image here; "
		    "run `aisb image build`, then `aisb doctor` again to run "
		    "the container checks");
		return f->nfail == 0 ? 0 : -1;
	}
	if (verbose)
		printf("%-5simage      %s (for the container checks)\n", "",
		    f->image);
	if (check_runtime(f, verbose) == -1) {
		report(f, verbose, V_SKIP, "network    needs a container that "
		    "runs");
		return -1;
	}
	(void)check_network(f, verbose);
	check_limits_held(f, verbose);
	check_session(f, verbose);
	return f->nfail == 0 ? 0 : -1;
}

/*
 * The agent recipes a session would read: a file that does not load
 * stops every session that could use one (run.c), so it is a failure
 * here too.  Lists name, package@version and where each came from.
 */
static int
check_agents(struct launch_host_facts *f, int verbose)
{
	struct launch_agents	*set;
	char			 shipped[PATH_MAX], user[PATH_MAX];
	char			 pins[PATH_MAX], err[1400];
	int			 have;

	if ((set = malloc(sizeof(*set))) == NULL)
		return -1;
	have = launch_agents_shipped(shipped, sizeof(shipped)) == 0;
	launch_agents_user(environ, user, sizeof(user));
	launch_agents_pins_path(environ, pins, sizeof(pins));
	if (launch_agents_load_pinned(set, have ? shipped : NULL, pins, user,
	    err, sizeof(err)) == -1) {
		report(f, verbose, V_FAIL, "agents     %s; fix: that line "
		    "(docs/agents.md)", err);
		free(set);
		return -1;
	}
	report(f, verbose, have ? V_OK : V_WARN, "agents     %zu recipe%s "
	    "(%s%s; %s%s)", set->n, set->n == 1 ? "" : "s", have ? "" :
	    "no shipped file: ", shipped, set->files[1][0] != '\0' ?
	    "yours: " : "none of yours in ", user);
	if (verbose) {
		struct launch_opts	o;
		int			known;

		/* the images a session started here would use */
		if (!(known = launch_spec_opts(&o, err, sizeof(err)) == 0))
			printf("  (images unknown: %s)\n", err);
		launch_agents_print(set, known ? &o : NULL, stdout);
		launch_opts_free(&o);
	}
	free(set);
	return 0;
}

int
launch_cmd_doctor(int argc, char **argv)
{
	struct launch_host_facts	f;
	struct cli_args			a;
	const char			*image;
	int				rc;

	memset(&f, 0, sizeof(f));
	if ((rc = launch_cli_parse("doctor", argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if ((image = launch_cli_get(&a, "--image")) != NULL) {
		if (image[0] == '\0' || strlen(image) >= sizeof(f.image)) {
			fprintf(stderr, "aisb doctor: --image: empty or longer "
			    "than %zu bytes\n", sizeof(f.image) - 1);
			return EXIT_CONFIG;
		}
		snprintf(f.image, sizeof(f.image), "%s", image);
	}
	rc = launch_doctor_probe(&f, 1);
	if (check_agents(&f, 1) == -1)
		rc = -1;
	if (rc == 0)
		printf("aisb can run here%s\n", f.nskip > 0 ?
		    " (some checks were skipped)" : "");
	else
		printf("aisb cannot run here: %d check%s failed\n", f.nfail,
		    f.nfail == 1 ? "" : "s");
	return rc == 0 ? 0 : 1;
}
