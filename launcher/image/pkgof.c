/*
 * The package of a command that was not found (pkgof.h).
 *
 * `dpkg-query -S` answers "procps: /bin/ps" for each path pattern it
 * knows (a diversion adds "diversion by ..." lines, which are skipped)
 * and exits 1 when some pattern matched nothing, so its status says
 * nothing here: the lines do.  With usrmerge dpkg records /bin/ps while
 * the file is reached as /usr/bin/ps, so both folders are asked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/paths.h"
#include "host/proc.h"
#include "image/image-t.h"
#include "image/names.h"
#include "image/pkgof.h"

#define DPKG_OUT_MAX	4096	/* dpkg-query's lines for five paths */
#define CMD_NAME_MAX	255	/* bytes of a command's name */
#define HAS_TIMEOUT_MS	(60 * 1000)

/* A bare command name: no '/', no leading '-', printable, bounded. */
static int
bare_name(const char *name)
{
	size_t	 i, n = strlen(name);

	if (n == 0 || n > CMD_NAME_MAX || name[0] == '-' ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (name[i] == '/' || (unsigned char)name[i] <= ' ' ||
		    (unsigned char)name[i] >= 0x7f)
			return 0;
	return 1;
}

int
launch_package_of(const char *name, char *pkg, size_t len)
{
	static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/sbin",
	    "/sbin", "/usr/games" };
	char		 paths[5][CMD_NAME_MAX + 16], out[DPKG_OUT_MAX];
	char		 err[256], *line, *save = NULL, *colon;
	char		*argv[2 + 5 + 1];
	size_t		 i;

	pkg[0] = '\0';
	if (!bare_name(name))
		return 0;
	argv[0] = "dpkg-query";
	argv[1] = "-S";
	for (i = 0; i < 5; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", dirs[i], name);
		argv[2 + i] = paths[i];
	}
	argv[2 + 5] = NULL;
	if (!launch_on_path("dpkg-query") || launch_exec(argv, NULL, 0, out,
	    sizeof(out), HAS_TIMEOUT_MS, 0, err, sizeof(err)) < 0)
		return 0;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "diversion ", 10) == 0 ||
		    (colon = strstr(line, ": /")) == NULL)
			continue;
		*colon = '\0';
		/* "pkg:arch", or "pkg1, pkg2" for a shared path: the first */
		line[strcspn(line, ":, ")] = '\0';
		if (!launch_deb_package_ok(line) || strlen(line) >= len)
			continue;
		snprintf(pkg, len, "%s", line);
		return 1;
	}
	return 0;
}

/*
 * 1 when the image has name on its PATH, 0 when it has not, -1 when the
 * image could not be asked.  A container of its own: no network, the
 * session's runtime and limits, `sh -c 'command -v "$1"'` with the name
 * as $1 (an argv element, never part of the script).
 */
static int
image_has(const char *podman, const struct launch_host_facts *f,
    const char *image, const char *name)
{
	char	 rt[48], nofile[64], nproc[64], err[256];
	char	*argv[20];
	size_t	 a = 0;
	int	 rc;

	argv[a++] = (char *)podman;
	if (f->runtime[0] != '\0') {
		snprintf(rt, sizeof(rt), "--runtime=%s", f->runtime);
		argv[a++] = rt;
	}
	argv[a++] = "run";
	argv[a++] = "--rm";
	argv[a++] = "--pull=never";
	argv[a++] = "--network=none";
	argv[a++] = "--label=" LAUNCH_LABEL_MANAGED "=1";
	if (f->nofile > 0) {
		snprintf(nofile, sizeof(nofile), "--ulimit=nofile=%lu:%lu",
		    f->nofile, f->nofile);
		argv[a++] = nofile;
	}
	if (f->nproc > 0) {
		snprintf(nproc, sizeof(nproc), "--ulimit=nproc=%lu:%lu",
		    f->nproc, f->nproc);
		argv[a++] = nproc;
	}
	argv[a++] = "--entrypoint=/bin/sh";
	argv[a++] = (char *)image;
	argv[a++] = "-c";
	argv[a++] = "command -v \"$1\" >/dev/null";
	argv[a++] = "sh";
	argv[a++] = (char *)name;
	argv[a] = NULL;
	rc = launch_exec(argv, NULL, 0, NULL, 0, HAS_TIMEOUT_MS, 0, err,
	    sizeof(err));
	return rc == 0 ? 1 : rc == 1 || rc == 127 ? 0 : -1;
}

void
launch_missing_command_hint(const char *podman,
    const struct launch_host_facts *f, const char *image, const char *argv0,
    FILE *out)
{
	char	 pkg[LAUNCH_PACKAGE_NAME_MAX + 1];

	if (!bare_name(argv0) || image_has(podman, f, image, argv0) != 0)
		return;
	if (launch_package_of(argv0, pkg, sizeof(pkg)))
		fprintf(out, "aisb: %s is in the Debian package %s (this "
		    "host's dpkg database): aisb --package %s -- %s ...\n",
		    argv0, pkg, pkg, argv0);
	else
		fprintf(out, "aisb: which Debian package has %s is unknown "
		    "here: this host has no %s installed; `apt-file search "
		    "bin/%s` names it where apt-file is set up, then aisb "
		    "--package PACKAGE -- %s ...\n", argv0, argv0, argv0,
		    argv0);
}
