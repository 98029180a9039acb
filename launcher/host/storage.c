/*
 * podman's storage driver (storage.h): the doctor line, and the fix of a
 * rootless store that uses vfs.
 *
 * Why a reset even of an empty store: podman keeps the driver a store was
 * made with in its database and prefers it to storage.conf's ("User-
 * selected graph driver "overlay" overwritten by graph driver "vfs" from
 * database", podman 4.3.1), and every podman command, `podman info`
 * included, makes that database.  `podman system reset` removes it with
 * the store and keeps the user's storage.conf; on a store with no image,
 * container, volume or network of its own it deletes nothing anyone made.
 * The file is written after the reset, so that a reset that fails leaves
 * the user's configuration as it was.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "host/cache.h"
#include "host/facts.h"
#include "host/paths.h"
#include "host/proc.h"
#include "host/storage.h"

#define DF_MAX		1024	/* podman system df's three lines */
#define NETS_MAX	(16 * 1024)	/* podman network ls, a name a line */
#define RESET_TIMEOUT_MS (5 * 60 * 1000)	/* a vfs store's deletion */

/* What --fix writes; the comment says who wrote it and why. */
static const char conf_text[] =
    "# Written by aisb doctor --fix: the overlay driver instead of vfs,\n"
    "# which copies an image in full for every container (aisb's\n"
    "# docs/launcher.md, \"Doctor\").\n"
    "[storage]\n"
    "driver = \"overlay\"\n";

/*
 * The storage.conf podman reads for this user: CONTAINERS_STORAGE_CONF
 * when set (*env 1), else the user's own (rootless) or the system's.
 * 0, or -1 when no path can be made.
 */
static int
conf_path(char **envp, int rootless, char *out, size_t len, int *env)
{
	const char	*v = launch_getenv(envp, "CONTAINERS_STORAGE_CONF", 23);
	char		 dir[PATH_MAX];

	*env = v != NULL && v[0] != '\0';
	if (*env)
		return (size_t)snprintf(out, len, "%s", v) < len ? 0 : -1;
	if (!rootless)
		return (size_t)snprintf(out, len, "%s",
		    "/etc/containers/storage.conf") < len ? 0 : -1;
	if (launch_config_home(envp, "containers", dir, sizeof(dir)) == -1)
		return -1;
	return file_path_join(out, len, dir, "storage.conf");
}

/*
 * What the store holds that a reset would delete, as "Images 2, Local
 * Volumes 1, network ci" into what (empty when nothing): `podman system
 * df` counts images, containers and volumes, `podman network ls` names
 * the networks (podman's own "podman" is made again).  The count, or -1 with err when
 * podman could not say.
 */
static int
store_contents(char *what, size_t len, char *err, size_t errlen)
{
	char *const	 df[] = { "podman", "system", "df", "--format",
	    "{{.Type}} {{.Total}}", NULL };
	char *const	 nets[] = { "podman", "network", "ls", "--format",
	    "{{.Name}}", NULL };
	char		*out, *line, *save = NULL, name[32];
	unsigned long	 n;
	int		 total = 0, rc = -1, off = 0;

	what[0] = '\0';
	if ((out = malloc(NETS_MAX)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (launch_run_quiet(df, out, DF_MAX, LAUNCH_INFO_TIMEOUT_MS, 0, err,
	    errlen) == -1)
		goto fail;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		/* "Images 2", "Containers 0", "Local Volumes 1" */
		if (sscanf(line, "%*[A-Za-z ] %lu", &n) != 1 || n == 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line,
		    "0123456789") - 1, line);
		off += snprintf(what + off, len - off, "%s%s %lu", off > 0 ?
		    ", " : "", name, n);
		total += (int)(n > 1000 ? 1000 : n);
		if ((size_t)off >= len)
			goto fail;
	}
	if (launch_run_quiet(nets, out, NETS_MAX, LAUNCH_INFO_TIMEOUT_MS, 0,
	    err, errlen) == -1)
		goto fail;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, "podman") == 0)
			continue;
		off += snprintf(what + off, len - off, "%snetwork %.64s",
		    off > 0 ? ", " : "", line);
		total++;
		if ((size_t)off >= len)
			goto fail;
	}
	rc = total;
fail:
	if (rc == -1 && err[0] == '\0')
		snprintf(err, errlen, "podman's answer does not fit");
	free(out);
	return rc;
}

/* The store's driver, from podman (refresh) or the facts it gave. */
static int
store_driver(int refresh, struct launch_podman_facts *pf, char *err,
    size_t errlen)
{
	extern char	**environ;
	char		  podman[PATH_MAX];

	if (launch_find_program("podman", podman, sizeof(podman)) == -1) {
		snprintf(err, errlen, "podman not found");
		return -1;
	}
	if (refresh)
		launch_cache_forget();
	return launch_cache_podman_facts(podman, environ, refresh, pf, err,
	    errlen);
}

void
launch_storage_check(struct launch_host_facts *f, int verbose)
{
	extern char			**environ;
	struct launch_podman_facts	  pf;
	char				  err[256], what[512], conf[PATH_MAX];
	int				  n, env;

	if (store_driver(0, &pf, err, sizeof(err)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_SKIP, "storage    "
		    "podman info: %s", err);
		return;
	}
	if (strcmp(pf.driver, "vfs") != 0) {
		launch_facts_say(f, verbose, LAUNCH_V_OK, "storage    driver "
		    "%s (%s)", pf.driver, pf.graphroot);
		return;
	}
	if (conf_path(environ, f->rootless, conf, sizeof(conf), &env) == -1)
		snprintf(conf, sizeof(conf), "storage.conf");
	n = store_contents(what, sizeof(what), err, sizeof(err));
	launch_facts_say(f, verbose, LAUNCH_V_WARN, "storage    driver vfs "
	    "(%s): every container copies its image in full, a session "
	    "takes 10 s or more where the overlay driver takes about 1 s; "
	    "fix: %s", pf.graphroot, !f->rootless ? "driver = \"overlay\" "
	    "under [storage] in /etc/containers/storage.conf, then podman "
	    "system reset (it deletes every image, container and volume)" :
	    n == 0 ? "aisb doctor --fix (the store is empty: it resets it "
	    "and writes driver = \"overlay\" into your storage.conf)" :
	    "aisb doctor --fix says how (`podman system reset` first, which "
	    "deletes what the store holds)");
	if (verbose && f->rootless && n > 0)
		printf("     (the store holds %s; %s)\n", what, conf);
	else if (verbose && n == -1)
		printf("     (what the store holds: %s)\n", err);
}

/*
 * conf_text to path, made with its folder; never over an existing file.
 * 0, or -1 having said why.
 */
static int
write_conf(const char *path)
{
	char	 dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (launch_mkdirs(dir) == -1) {
			printf("aisb doctor --fix: mkdir %s: %s\n", dir,
			    strerror(errno));
			return -1;
		}
	}
	if (access(path, F_OK) == 0) {
		printf("aisb doctor --fix: %s appeared meanwhile; left as it "
		    "is\n", path);
		return -1;
	}
	if (file_write_atomic(path, conf_text, sizeof(conf_text) - 1, 0644,
	    (gid_t)-1) == -1) {
		printf("aisb doctor --fix: writing %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The reset of an empty store and the file, then podman asked again; on
 * failure the file is taken back.  0 or -1, having said which.
 */
static int
switch_empty(const char *conf)
{
	char *const			 reset[] = { "podman", "system",
	    "reset", "--force", NULL };
	struct launch_podman_facts	 pf;
	char				 err[512];

	printf("aisb doctor --fix: the store is empty: podman system reset "
	    "--force, then %s with driver = \"overlay\"\n", conf);
	fflush(stdout);
	if (launch_run_quiet(reset, NULL, 0, RESET_TIMEOUT_MS, 0, err,
	    sizeof(err)) == -1) {
		printf("aisb doctor --fix: podman system reset: %s; nothing "
		    "written\n", err);
		return -1;
	}
	if (write_conf(conf) == -1)
		return -1;
	if (store_driver(1, &pf, err, sizeof(err)) == -1 ||
	    strcmp(pf.driver, "overlay") != 0) {
		if (unlink(conf) == -1)
			printf("aisb doctor --fix: rm %s: %s\n", conf,
			    strerror(errno));
		printf("aisb doctor --fix: podman cannot use overlay here (%s); "
		    "%s taken back; fix: apt-get install fuse-overlayfs, then "
		    "aisb doctor --fix again\n", err[0] != '\0' ? err :
		    pf.driver, conf);
		return -1;
	}
	printf("aisb doctor --fix: podman's store uses overlay now (%s)\n",
	    pf.graphroot);
	return 0;
}

int
launch_storage_fix(char **envp)
{
	struct launch_podman_facts	 pf;
	char				 err[512], what[512], conf[PATH_MAX];
	const char			*drv;
	int				 n, env, rootless = geteuid() != 0;

	if (store_driver(1, &pf, err, sizeof(err)) == -1) {
		printf("aisb doctor --fix: podman info: %s; nothing changed\n",
		    err);
		return -1;
	}
	if (strcmp(pf.driver, "vfs") != 0) {
		printf("aisb doctor --fix: the store uses the %s driver; "
		    "nothing to fix\n", pf.driver);
		return 0;
	}
	if (conf_path(envp, rootless, conf, sizeof(conf), &env) == -1) {
		printf("aisb doctor --fix: no HOME or XDG_CONFIG_HOME to find "
		    "your storage.conf in; nothing changed\n");
		return -1;
	}
	if ((drv = launch_getenv(envp, "STORAGE_DRIVER", 14)) != NULL) {
		printf("aisb doctor --fix: STORAGE_DRIVER=%s in the environment "
		    "chooses the driver; unset it\n", drv);
		return -1;
	}
	if (!rootless || env || access(conf, F_OK) == 0) {
		/* a file someone wrote (or the system's) is theirs to edit */
		printf("aisb doctor --fix: %s %s: set driver = \"overlay\" "
		    "under [storage] in it, then podman system reset (it "
		    "deletes every image, container and volume of the "
		    "store)\n", conf, !rootless ? "is the system's" : env ?
		    "is named by CONTAINERS_STORAGE_CONF" : "exists");
		return -1;
	}
	if ((n = store_contents(what, sizeof(what), err, sizeof(err))) ==
	    -1) {
		printf("aisb doctor --fix: what the store holds: %s; nothing "
		    "changed\n", err);
		return -1;
	}
	if (n > 0) {
		printf("aisb doctor --fix: the store (%s) holds %s, which a "
		    "switch to overlay deletes: podman keeps a store's driver, "
		    "so it takes `podman system reset`.  When you can lose "
		    "them (aisb builds its images again): podman system reset, "
		    "then aisb doctor --fix\n", pf.graphroot, what);
		return -1;
	}
	return switch_empty(conf);
}
