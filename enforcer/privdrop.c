/*
 * Privilege drop.  Order matters:
 *
 *   1. ambient set cleared and bounding set emptied while CAP_SETPCAP is
 *      still held (PR_CAPBSET_DROP needs it);
 *   2. setgroups, setresgid, setresuid: leaving uid 0 without KEEP_CAPS
 *      clears the effective and permitted sets in the kernel;
 *   3. capset to all-zero anyway, no_new_privs;
 *   4. read everything back: a drop that cannot be proven did not happen.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

#include "enforcer/privdrop.h"

#define CAP_MAX_PROBE	64	/* capability numbers probed; 41 in 2026 */

static int
capget_raw(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct	 hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	memset(data, 0, 2 * sizeof(data[0]));
	return (int)syscall(SYS_capget, &hdr, data);
}

/* Effective and permitted to keep (a mask of caps < 64), inheritable empty. */
static int
capset_raw(uint64_t keep)
{
	struct __user_cap_header_struct	 hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct	 data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	return (int)syscall(SYS_capset, &hdr, data);
}

static int
clear_ambient(char *err, size_t errlen)
{
	/* EINVAL: a kernel without ambient capabilities (< 4.3). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL) {
		snprintf(err, errlen, "clearing ambient capabilities: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Empties the bounding set but for the capabilities in keep (a mask). */
static int
drop_bounding(uint64_t keep, char *err, size_t errlen)
{
	int	 cap, r;

	for (cap = 0; cap < CAP_MAX_PROBE; cap++) {
		if ((r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) == -1) {
			if (errno == EINVAL)
				break;	/* past the kernel's last capability */
			snprintf(err, errlen, "reading bounding set: %s",
			    strerror(errno));
			return -1;
		}
		if (r == 0 || (keep & (1ULL << cap)))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			snprintf(err, errlen, "dropping capability %d from the "
			    "bounding set: %s", cap, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Every capability set equals keep (a mask) and the bounding set too. */
static int
check_caps(uint64_t keep, char *err, size_t errlen)
{
	struct __user_cap_data_struct	 data[2];
	uint64_t			 eff, prm, inh;
	int				 cap, r;

	if (capget_raw(data) == -1) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -1;
	}
	eff = data[0].effective | (uint64_t)data[1].effective << 32;
	prm = data[0].permitted | (uint64_t)data[1].permitted << 32;
	inh = data[0].inheritable | (uint64_t)data[1].inheritable << 32;
	if (eff != keep || prm != keep || inh != 0) {
		snprintf(err, errlen, "capabilities left: effective %#llx "
		    "permitted %#llx inheritable %#llx",
		    (unsigned long long)eff, (unsigned long long)prm,
		    (unsigned long long)inh);
		return -1;
	}
	/*
	 * EINVAL past the kernel's last capability (and, for the ambient
	 * set, on kernels without one) ends the walk; any other error means
	 * the sets cannot be read, which proves nothing.
	 */
	for (cap = 0; cap < CAP_MAX_PROBE; cap++) {
		if ((r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) == -1) {
			if (errno == EINVAL)
				break;
			snprintf(err, errlen, "reading the bounding set: %s",
			    strerror(errno));
			return -1;
		}
		if (r != 0 && !(keep & (1ULL << cap))) {
			snprintf(err, errlen, "capability %d still in the "
			    "bounding set", cap);
			return -1;
		}
		r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
		if (r == -1 && errno != EINVAL) {
			snprintf(err, errlen, "reading the ambient set: %s",
			    strerror(errno));
			return -1;
		}
		if (r > 0) {
			snprintf(err, errlen, "capability %d still ambient",
			    cap);
			return -1;
		}
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "no_new_privs is not set");
		return -1;
	}
	return 0;
}

int
enf_drop_all(const struct enf_creds *c, char *err, size_t errlen)
{
	uid_t	 ru, eu, su;
	gid_t	 rg, eg, sg;

	if (c->uid == 0 || c->gid == 0) {
		snprintf(err, errlen, "refusing to run the command as uid or "
		    "gid 0");
		return -1;
	}
	if (clear_ambient(err, errlen) == -1 ||
	    drop_bounding(0, err, errlen) == -1)
		return -1;
	if (setgroups(c->ngroups, c->groups) == -1) {
		snprintf(err, errlen, "setgroups: %s", strerror(errno));
		return -1;
	}
	if (setresgid(c->gid, c->gid, c->gid) == -1) {
		snprintf(err, errlen, "setresgid %u: %s", (unsigned)c->gid,
		    strerror(errno));
		return -1;
	}
	if (setresuid(c->uid, c->uid, c->uid) == -1) {
		snprintf(err, errlen, "setresuid %u: %s", (unsigned)c->uid,
		    strerror(errno));
		return -1;
	}
	if (capset_raw(0) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}

	/* Prove it. */
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1 ||
	    ru != c->uid || eu != c->uid || su != c->uid ||
	    rg != c->gid || eg != c->gid || sg != c->gid) {
		snprintf(err, errlen, "uid or gid did not change");
		return -1;
	}
	if (setuid(0) != -1 || setgid(0) != -1 || setgroups(0, NULL) != -1) {
		snprintf(err, errlen, "root could be regained after the drop");
		return -1;
	}
	return check_caps(0, err, errlen);
}

int
enf_drop_to_refresher(char *err, size_t errlen)
{
	return enf_drop_keep(1ULL << CAP_NET_ADMIN | 1ULL << CAP_KILL, err,
	    errlen);
}

int
enf_drop_keep(uint64_t keep, char *err, size_t errlen)
{
	int		 bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
			    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
			    SECBIT_KEEP_CAPS_LOCKED |
			    SECBIT_NO_CAP_AMBIENT_RAISE |
			    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (clear_ambient(err, errlen) == -1 ||
	    drop_bounding(keep, err, errlen) == -1)
		return -1;
	if (setgroups(0, NULL) == -1) {
		snprintf(err, errlen, "setgroups: %s", strerror(errno));
		return -1;
	}
	/* uid 0 would regain everything on exec without these. */
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) == -1) {
		snprintf(err, errlen, "securebits: %s", strerror(errno));
		return -1;
	}
	if (capset_raw(keep) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl: %s", strerror(errno));
		return -1;
	}
	return check_caps(keep, err, errlen);
}

static int
int_cmp(const void *a, const void *b)
{
	int	 x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int
close_between(unsigned int lo, unsigned int hi)
{
	struct rlimit	 rl;
	unsigned int	 fd;

	if (lo > hi)
		return 0;
	if (close_range(lo, hi, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	/* Kernels before 5.9: walk up to the descriptor limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	if (rl.rlim_cur != RLIM_INFINITY && hi >= rl.rlim_cur)
		hi = (unsigned int)rl.rlim_cur - 1;
	for (fd = lo; fd <= hi && fd < (1U << 20); fd++)
		(void)close((int)fd);
	return 0;
}

int
enf_close_fds(const int *keep, size_t n, char *err, size_t errlen)
{
	int		 sorted[ENF_MAX_KEEP_FDS];
	unsigned int	 next = 3;
	size_t		 i;

	if (n > ENF_MAX_KEEP_FDS) {
		snprintf(err, errlen, "too many descriptors to keep");
		return -1;
	}
	memcpy(sorted, keep, n * sizeof(*keep));
	qsort(sorted, n, sizeof(*sorted), int_cmp);
	for (i = 0; i < n; i++) {
		if (sorted[i] < 3 || (unsigned int)sorted[i] < next)
			continue;
		if (close_between(next, (unsigned int)sorted[i] - 1) == -1)
			goto fail;
		next = (unsigned int)sorted[i] + 1;
	}
	if (close_between(next, ~0U) == -1)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "closing descriptors: %s", strerror(errno));
	return -1;
}
