/*
 * Finding and checking the enforcer a session mounts (enforcer.h).  The
 * enforcer is the one process of a session that holds CAP_NET_ADMIN and
 * writes the firewall; the image may come from anywhere, so the binary
 * is the host's and is checked here, before anything starts: a
 * dynamically linked one would run the image's loader (and whatever its
 * /etc/ld.so.preload names) as the container's root.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/elf.h"
#include "host/paths.h"
#include "session/enforcer.h"

/*
 * GLIBC_TUNABLES and the variables glibc 2.36 reads as its aliases
 * (elf/dl-tunables.list): a static glibc parses them in its start-up
 * code, before main, so the enforcer cannot ignore them itself.  Every
 * other variable glibc knows (LD_LIBRARY_PATH, LOCPATH, GCONV_PATH,
 * TZDIR, RES_OPTIONS...) matters only to a dlopen, a locale, iconv, a
 * time zone or a resolver the enforcer never uses
 * (tests/integration/enforce_image.sh proves it opens no such file),
 * and the image's own programs may need them: they stay.
 * tests/cli/enforcer.sh checks this list against the names in the
 * enforcer binary.
 */
const char *const launch_enforcer_unsetenv[] = {
	"GLIBC_TUNABLES",
	"LD_HWCAP_MASK",
	"MALLOC_ARENA_MAX",
	"MALLOC_ARENA_TEST",
	"MALLOC_CHECK_",
	"MALLOC_MMAP_MAX_",
	"MALLOC_MMAP_THRESHOLD_",
	"MALLOC_PERTURB_",
	"MALLOC_TOP_PAD_",
	"MALLOC_TRACE",
	"MALLOC_TRIM_THRESHOLD_",
	NULL
};

int
launch_enforcer_check(const char *path, char *err, size_t errlen)
{
	struct stat	 st;
	char		 interp[LAUNCH_ELF_INTERP_MAX], why[256];
	int		 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((st.st_mode & S_IXOTH) == 0 || (st.st_mode & S_IWOTH) != 0) {
		snprintf(err, errlen, "%s: mode %03o; the enforcer must be "
		    "executable by every user (the container's root is no "
		    "host user) and writable by no other: chmod 0755 it",
		    path, (unsigned)(st.st_mode & 0777));
		goto fail;
	}
	if ((rc = launch_elf_interp(fd, interp, sizeof(interp), why,
	    sizeof(why))) == -1) {
		snprintf(err, errlen, "%s: %s; rebuild aisb-enforce (make)",
		    path, why);
		goto fail;
	}
	if (rc == 1) {
		snprintf(err, errlen, "%s is dynamically linked (its loader: "
		    "%s): it would run the image's loader and libraries, and "
		    "what the image's /etc/ld.so.preload names, as the "
		    "container's root; build it static: ./configure without "
		    "--disable-static-enforcer and without sanitizers (its "
		    "warning 'aisb-enforce will be linked dynamically' says "
		    "when it is not), then make", path, interp);
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

int
launch_enforcer_find(char *buf, size_t len, char *err, size_t errlen)
{
	if (launch_enforcer_locate(buf, len, err, errlen) == -1 ||
	    launch_enforcer_check(buf, err, errlen) == -1)
		return -1;
	return 0;
}

int
launch_enforcer_locate(char *buf, size_t len, char *err, size_t errlen)
{
	char	 beside[PATH_MAX], real[PATH_MAX];

	if (launch_beside_self("aisb-enforce", beside, sizeof(beside)) == -1) {
		snprintf(err, errlen, "cannot find the folder of the running "
		    "aisb, where aisb-enforce is");
		return -1;
	}
	/* the file the mount will bind, not a link podman resolves later */
	if (realpath(beside, real) == NULL) {
		snprintf(err, errlen, "%s: %s; build it (make) or install it "
		    "(make install)", beside, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(buf, len, "%s", real) >= len) {
		snprintf(err, errlen, "%s: path too long", real);
		return -1;
	}
	return 0;
}
