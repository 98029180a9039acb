/*
 * aisb doctor's identity lines (docs/launcher.md, "Doctor"): which aisb,
 * aisb-gate and aisb-enforce a session started here would use, by the
 * SHA-256 of each, whether the enforcer is static, the plan protocol
 * between aisb and the enforcer, and the image tag.  The programs are
 * found by the very lookups sessions use (launch_find_program for the
 * gate, as session/gateproc.c; launch_enforcer_locate and _check for the
 * enforcer, as session/run.c), so that what doctor names is what runs.
 *
 * And the store of its container checks (docs/launcher.md, "Identity"):
 * they take a minute, and their outcome depends on the programs, podman,
 * the image and the options a session here runs with, all of which the
 * identity names.  A passing run is kept in $XDG_CACHE_HOME/aisb/doctor
 * under the SHA-256 of that identity and shown again, marked as stored,
 * while every part of it is the same; --fresh runs them anyway.  A run
 * with a failure is not kept: what fixes it (a module loaded, a setting)
 * is not in the identity.  The file is host/cache.c's: written to a
 * temporary name and renamed, read at most STORE_MAX bytes, only the
 * user's own; one that does not parse is ignored with a note.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "termsafe.h"
#include "cmd/cmd.h"
#include "session/enforcer.h"
#include "session/options.h"
#include "session/podman.h"
#include "session/spec.h"
#include "host/cache.h"
#include "host/facts.h"
#include "host/paths.h"
#include "host/proc.h"
#include "snap/snap.h"

#define ID_FILE_MAX	(512ull * 1024 * 1024)	/* bytes of a program hashed */
#define ID_SHORT	16			/* hex digits printed */
#define STORE_MAX	(64u * 1024)		/* bytes of the store file */
#define STORE_NAME	"aisb/doctor"		/* in the cache folder */
#define ID_TEXT_MAX	2048			/* bytes of the identity */

/* The SHA-256 of the file at path into hex: 0, or -1 with err. */
static int
file_sha256(const char *path, char hex[LAUNCH_CACHE_KEYHEX + 1], char *err,
    size_t errlen)
{
	char	 why[256];
	int	 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((rc = launch_sha256_fd(fd, ID_FILE_MAX, hex, why,
	    sizeof(why))) == -1)
		snprintf(err, errlen, "%s: %s", path, why);
	close(fd);
	return rc;
}

/* One program's line; its hash into hex ("" when it has none). */
static void
say_program(struct launch_host_facts *f, const char *name, const char *path,
    const char *state, enum launch_verdict v,
    char hex[LAUNCH_CACHE_KEYHEX + 1])
{
	char	 err[PATH_MAX + 256];

	hex[0] = '\0';
	if (file_sha256(path, hex, err, sizeof(err)) == -1) {
		hex[0] = '\0';
		launch_facts_say(f, 1, LAUNCH_V_FAIL, "identity   %s: %s",
		    name, err);
		return;
	}
	launch_facts_say(f, 1, v, "identity   %s sha256 %.*s %s%s%s", name,
	    ID_SHORT, hex, path, state[0] != '\0' ? ", " : "", state);
}

void
launch_doctor_identity(struct launch_host_facts *f, const char *image,
    struct launch_doctor_id *id)
{
	char	 path[PATH_MAX], err[PATH_MAX + 1024];

	memset(id, 0, sizeof(*id));
	printf("%-5sidentity   aisb %s, plan protocol %d\n", "",
	    PACKAGE_VERSION, LAUNCH_PLAN_VERSION);
	if (realpath("/proc/self/exe", path) == NULL)
		launch_facts_say(f, 1, LAUNCH_V_FAIL, "identity   aisb: "
		    "/proc/self/exe: %s", strerror(errno));
	else
		say_program(f, "aisb", path, "", LAUNCH_V_OK, id->aisb);
	if (launch_find_program("aisb-gate", path, sizeof(path)) == -1)
		launch_facts_say(f, 1, LAUNCH_V_FAIL, "identity   aisb-gate "
		    "not found next to aisb or on PATH; build it (make) or "
		    "install it (make install)");
	else
		say_program(f, "aisb-gate", path, "", LAUNCH_V_OK, id->gate);
	if (launch_enforcer_locate(path, sizeof(path), err,
	    sizeof(err)) == -1)
		launch_facts_say(f, 1, LAUNCH_V_FAIL, "identity   "
		    "aisb-enforce: %s", err);
	else if (launch_enforcer_check(path, err, sizeof(err)) == -1) {
		say_program(f, "aisb-enforce", path, "refused by sessions",
		    LAUNCH_V_FAIL, id->enforce);
		printf("%-5s  %s\n", "", err);
	} else
		say_program(f, "aisb-enforce", path, "static", LAUNCH_V_OK,
		    id->enforce);
	printf("%-5sidentity   image %s\n", "", image);
}

/* ---- the store of the container checks ------------------------------ */

/*
 * What the container checks depend on, one "name value" line each: the
 * three programs' hashes, podman's version and configuration, what the
 * host checks found (rootless, cgroups, runtime, limits, tun), the
 * image, the SHA-256 of the options a session here would run with
 * (--print-config's text: user and project config, AISB_*) and of the
 * policy file they name, the user.  0, or -1 when a part is
 * unknown (then nothing is stored or reused).
 */
static int
store_identity(const struct launch_host_facts *f,
    const struct launch_doctor_id *id, char *out, size_t len)
{
	struct launch_opts	 o;
	char			 err[1024], cfg[SNAP_SHA256_HEX + 1];
	char			 podman[PATH_MAX], pkey[LAUNCH_CACHE_KEYHEX + 1];
	char			 pol[LAUNCH_CACHE_KEYHEX + 1];
	char			*text = NULL;
	size_t			 tl = 0;
	FILE			*m;
	int			 n, rc;

	if (id->aisb[0] == '\0' || id->gate[0] == '\0' ||
	    id->enforce[0] == '\0' || f->podman_version[0] == '\0' ||
	    f->image[0] == '\0')
		return -1;
	/* podman's binary, its configuration files and the variables that
	 * choose them (host/cache.h): a new storage.conf, another store */
	if (launch_find_program("podman", podman, sizeof(podman)) == -1 ||
	    launch_cache_podman_key(podman, environ, pkey) == -1)
		return -1;
	if (launch_spec_opts(&o, err, sizeof(err)) == -1 ||
	    (m = open_memstream(&text, &tl)) == NULL) {
		launch_opts_free(&o);
		return -1;
	}
	launch_opts_print(&o, m);
	/* the policy's bytes: an edit keeps its path, not its identity */
	if (o.val[LO_POLICY] == NULL || file_sha256(o.val[LO_POLICY], pol,
	    err, sizeof(err)) == -1)
		snprintf(pol, sizeof(pol), "none");
	launch_opts_free(&o);
	rc = fclose(m) == 0 ? snap_sha256_hex(text, tl, cfg) : -1;
	free(text);
	if (rc == -1)
		return -1;
	/* and what the host checks found, which the container checks use */
	n = snprintf(out, len, "aisb %s\naisb-gate %s\naisb-enforce %s\n"
	    "podman %s %s\nhost rootless %d cgroups %d runtime %s nofile %lu "
	    "nproc %lu tun %d\nimage %s\nconfig %s\npolicy %s\nuid %lu\n",
	    id->aisb, id->gate, id->enforce, f->podman_version, pkey,
	    f->rootless, f->cgroups_version, f->runtime[0] != '\0' ?
	    f->runtime : "-", f->nofile, f->nproc, f->tun_ok, f->image, cfg,
	    pol, (unsigned long)geteuid());
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Shows a stored run (body after the key line): 0, or -1 (corrupt). */
static int
store_show(struct launch_host_facts *f, const char *ident, char *body)
{
	char	*lines, time[32];
	int	 nfail, nskip, used = 0;
	size_t	 il = strlen(ident);

	if (strncmp(body, ident, il) != 0 || sscanf(body + il,
	    "time %31s\nnfail %d\nnskip %d\n--\n%n", time, &nfail, &nskip,
	    &used) != 3 || used == 0 || nfail != 0 || nskip < 0 ||
	    nskip > 64)
		return -1;
	lines = body + il + used;
	/* a file's words: nothing a terminal would take as a command */
	term_clean_str(time, 0);
	printf("%-5sstored     the container checks of %s, made with these "
	    "programs, podman, host, image, options and policy (aisb doctor "
	    "--fresh runs them again):\n", "", time);
	(void)term_fputs(lines, stdout, TERM_KEEP_NL);
	f->nskip += nskip;
	return 0;
}

/*
 * Why the file at path was not reused (it exists): which part of the
 * identity changed, or that it is not a store file of this user's.
 */
static void
store_why(const char *path, const char *ident)
{
	static const char *const names[] = { "aisb", "aisb-gate",
	    "aisb-enforce", "podman", "host", "image", "config", "policy",
	    "uid", NULL };
	char		 err[256], *text, *body, *line, *want, *nl, *wnl;
	size_t		 len, i;

	if ((text = file_read_bounded(path, STORE_MAX, &len, err,
	    sizeof(err))) == NULL) {
		if (errno != ENOENT)
			printf("%-5sstored     %s: ignored (%s)\n", "", path, err);
		return;
	}
	body = strchr(text, '\n');
	for (i = 0, line = body != NULL ? body + 1 : NULL, want =
	    (char *)ident; names[i] != NULL && line != NULL; i++) {
		nl = strchr(line, '\n');
		wnl = strchr(want, '\n');
		if (nl == NULL || wnl == NULL || strncmp(line, names[i],
		    strlen(names[i])) != 0 || line[strlen(names[i])] != ' ')
			break;
		if (nl - line != wnl - want || memcmp(line, want,
		    (size_t)(nl - line)) != 0) {
			printf("%-5sstored     the container checks of %s were "
			    "made with another %s: running them again\n", "",
			    path, names[i]);
			free(text);
			return;
		}
		line = nl + 1;
		want = wnl + 1;
	}
	printf("%-5sstored     %s is not a whole store file of yours: "
	    "ignored, not trusted; running the checks again\n", "", path);
	free(text);
}

int
launch_doctor_stored(struct launch_host_facts *f,
    const struct launch_doctor_id *id, int fresh,
    int (*probe)(struct launch_host_facts *, int))
{
	char		 path[PATH_MAX], ident[ID_TEXT_MAX], key[65];
	char		 stamp[32], *body = NULL, *out = NULL;
	size_t		 len = 0, olen = 0;
	time_t		 now;
	struct tm	 tm;
	int		 have, rc, fail0 = f->nfail, skip0 = f->nskip;

	have = launch_cache_home(environ, STORE_NAME, path, sizeof(path)) ==
	    0 && store_identity(f, id, ident, sizeof(ident)) == 0 &&
	    snap_sha256_hex(ident, strlen(ident), key) == 0;
	if (have && !fresh) {
		if ((body = launch_cache_read(path, key, STORE_MAX,
		    &len)) != NULL && store_show(f, ident, body) == 0) {
			free(body);
			return 0;
		}
		if (body != NULL)
			printf("%-5sstored     %s does not parse: ignored, not "
			    "trusted; running the checks again\n", "", path);
		else
			store_why(path, ident);
		free(body);
	}
	if (have && (f->copy = open_memstream(&out, &olen)) == NULL)
		have = 0;
	rc = probe(f, 1);
	if (f->copy != NULL && fclose(f->copy) != 0)
		have = 0;
	f->copy = NULL;
	now = time(NULL);
	/* only a run that passed: a failure's fix is not in the identity */
	if (have && f->nfail == fail0 && gmtime_r(&now, &tm) != NULL &&
	    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0 &&
	    asprintf(&body, "%stime %s\nnfail 0\nnskip %d\n--\n%s", ident,
	    stamp, f->nskip - skip0, out) != -1) {
		if (strlen(body) > STORE_MAX - 128 ||
		    launch_cache_write(path, key, body, strlen(body)) == -1)
			printf("%-5sstored     %s: cannot keep these checks\n",
			    "", path);
		free(body);
	}
	free(out);
	return rc;
}
