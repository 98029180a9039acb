/*
 * The host's facts (facts.h): podman, the runtime by cgroups, the hard
 * limits, /dev/net/tun.  The checks that run no container, fast enough
 * for every session; aisb doctor prints them (verbose) and adds the
 * container checks (cmd/doctor.c).
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cache.h"
#include "host/facts.h"
#include "host/paths.h"
#include "host/proc.h"

#define INFO_MAX	512	/* bytes of podman info we parse */

void
launch_facts_say(struct launch_host_facts *f, int verbose,
    enum launch_verdict v, const char *fmt, ...)
{
	static const char *const word[] = { "ok", "warn", "FAIL", "skip" };
	va_list	ap;

	if (v == LAUNCH_V_FAIL)
		f->nfail++;
	if (v == LAUNCH_V_SKIP)
		f->nskip++;
	if (!verbose)
		return;
	printf("%-5s", word[v]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (f->copy != NULL) {
		fprintf(f->copy, "%-5s", word[v]);
		va_start(ap, fmt);
		vfprintf(f->copy, fmt, ap);
		va_end(ap);
		fputc('\n', f->copy);
	}
}




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
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "podman     not "
		    "found; fix: apt-get install podman (4.3 or later)");
		return -1;
	}
	if (verbose) {
		rc = launch_exec(argv, NULL, 0, out, sizeof(out),
		    LAUNCH_INFO_TIMEOUT_MS, 0, err, sizeof(err)) != 0 ? -1 : 0;
		if (rc == 0)
			(void)launch_cache_podman_facts(podman, environ, 1, &pf,
			    err, sizeof(err));
	} else if ((rc = launch_cache_podman_facts(podman, environ, 0, &pf,
	    err, sizeof(err))) == 0)
		snprintf(out, sizeof(out), "%s", pf.version);
	if (rc == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "podman     %s; "
		    "fix: apt-get install podman (4.3 or later)", err);
		return -1;
	}
	out[strcspn(out, "\r\n")] = '\0';
	snprintf(f->podman_version, sizeof(f->podman_version), "%s", out);
	major = atoi(out);
	if (major < 4) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "podman     %s is "
		    "too old; fix: podman 4.3 or later", f->podman_version);
		return -1;
	}
	launch_facts_say(f, verbose, LAUNCH_V_OK, "podman     %s%s",
	    f->podman_version, f->rootless ? " (rootless)" : "");
	return 0;
}


static void
check_info(struct launch_host_facts *f, int verbose)
{
	char *const	argv[] = { "podman", "info", "--format",
	    "{{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}} "
	    "{{.Host.Security.Rootless}}", NULL };
	char		out[INFO_MAX], err[256], cg[16], rt[32], rl[16];

	if (launch_exec(argv, NULL, 0, out, sizeof(out),
	    LAUNCH_INFO_TIMEOUT_MS, 0, err, sizeof(err)) != 0 ||
	    sscanf(out, "%15s %31s %15s", cg, rt, rl) != 3) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "info       podman info: %s; fix: run `podman info` and "
		    "repair what it says", err);
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
	if (f->cgroups_version != 2 && launch_on_path("runc"))
		snprintf(f->runtime, sizeof(f->runtime), "runc");
	else
		snprintf(f->runtime, sizeof(f->runtime), "%s", rt);
	launch_facts_say(f, verbose, LAUNCH_V_OK, "cgroups    %s%s; OCI "
	    "runtime %s (podman's default %s): aisb passes --runtime %s", cg,
	    f->cgroups_version == 1 ? " (v1 or hybrid)" : "", f->runtime, rt,
	    f->runtime);
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
	if (f->cgroups_version != 2 && launch_on_path("runc"))
		snprintf(f->runtime, sizeof(f->runtime), "runc");
}


static void
check_limits(struct launch_host_facts *f, int verbose)
{
	struct rlimit	nofile, nproc;

	if (getrlimit(RLIMIT_NOFILE, &nofile) == -1 ||
	    getrlimit(RLIMIT_NPROC, &nproc) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "limits     getrlimit: %s", strerror(errno));
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
	if (f->nofile < LAUNCH_ULIMIT_MIN || f->nproc < LAUNCH_ULIMIT_MIN) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "limits     hard "
		    "nofile %lu, nproc %lu: below %lu; fix: raise the hard "
		    "limits (/etc/security/limits.conf, LimitNOFILE= in a "
		    "unit)", f->nofile, f->nproc, LAUNCH_ULIMIT_MIN);
		return;
	}
	launch_facts_say(f, verbose, LAUNCH_V_OK, "limits     hard nofile "
	    "%lu, nproc %lu: aisb passes --ulimit nofile=%lu:%lu --ulimit "
	    "nproc=%lu:%lu", (unsigned long)(nofile.rlim_max ==
	    RLIM_INFINITY ? 0 : nofile.rlim_max), (unsigned long)
	    (nproc.rlim_max == RLIM_INFINITY ? 0 : nproc.rlim_max),
	    f->nofile, f->nofile, f->nproc, f->nproc);
}


static void
check_tun(struct launch_host_facts *f, int verbose)
{
	struct stat	st;

	if (stat("/dev/net/tun", &st) == -1 || !S_ISCHR(st.st_mode)) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "tun        /dev/net/tun missing; fix: modprobe tun "
		    "(slirp4netns and pasta need it)");
		return;
	}
	if (!f->rootless) {
		f->tun_ok = 1;
		launch_facts_say(f, verbose, LAUNCH_V_OK,
		    "tun        /dev/net/tun mode %04o (rootful podman opens "
		    "it as root)", (unsigned)(st.st_mode & 07777));
		return;
	}
	if (access("/dev/net/tun", R_OK | W_OK) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "tun        /dev/net/tun mode %04o: slirp4netns fails "
		    "with \"open(/dev/net/tun): Permission denied\"; fix: "
		    "chmod 0666 /dev/net/tun, kept across boots by a udev "
		    "rule KERNEL==\"tun\", MODE=\"0666\"",
		    (unsigned)(st.st_mode & 07777));
		return;
	}
	f->tun_ok = 1;
	launch_facts_say(f, verbose, LAUNCH_V_OK, "tun        /dev/net/tun "
	    "mode %04o, usable", (unsigned)(st.st_mode & 07777));
}


int
launch_host_check(struct launch_host_facts *f, int verbose)
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


unsigned long
launch_ulimit(int resource)
{
	struct rlimit	 rl;
	unsigned long	 cap = resource == RLIMIT_NPROC ? LAUNCH_NPROC_CAP :
			    LAUNCH_NOFILE_CAP;

	if (getrlimit(resource, &rl) == -1)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cap)
		return cap;
	return (unsigned long)rl.rlim_max;
}
