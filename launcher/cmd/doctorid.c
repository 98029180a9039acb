/*
 * aisb doctor's identity lines (docs/launcher.md, "Doctor"): which aisb,
 * aisb-gate and aisb-enforce a session started here would use, by the
 * SHA-256 of each, whether the enforcer is static, the plan protocol
 * between aisb and the enforcer, and the image tag.  The programs are
 * found by the very lookups sessions use (launch_find_program for the
 * gate, as session/gateproc.c; launch_enforcer_locate and _check for the
 * enforcer, as session/run.c), so that what doctor names is what runs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "session/enforcer.h"
#include "session/podman.h"
#include "host/cache.h"
#include "host/facts.h"
#include "host/proc.h"

#define ID_FILE_MAX	(512ull * 1024 * 1024)	/* bytes of a program hashed */
#define ID_SHORT	16			/* hex digits printed */

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
