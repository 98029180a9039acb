/*
 * Unit tests of enforcer/privdrop.c against a model of the kernel's
 * credentials: the system calls are replaced with -Wl,--wrap so that a
 * kernel that does not do what it is asked (a capability left behind, a
 * saved uid of 0, no_new_privs ignored, setuid(0) still working) can be
 * played, and the drop must then refuse to go on.  The real drop is
 * exercised by tests/integration/enforce_netns.sh.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/capability.h>

#include "privdrop.h"

#define LAST_CAP	40
#define ALL_CAPS	((1ULL << (LAST_CAP + 1)) - 1)
#define HAS(c)		(k.eff & (1ULL << (c)))
#define READ_BND	1
#define READ_AMB	2

/* The credentials of the process, as the fake kernel keeps them. */
static struct {
	uid_t		 ruid, euid, suid;
	gid_t		 rgid, egid, sgid;
	size_t		 ngroups;
	uint64_t	 eff, prm, inh, amb, bnd;
	int		 nnp;
	int		 step;			/* calls so far */
	int		 bnd_done_at;		/* step of the last BSET drop */
	int		 setresuid_at;
	/* faults */
	int		 setuid0_works;
	int		 cap_sticks;		/* capset leaves CAP_SYS_ADMIN */
	int		 bnd_sticks;		/* CAP_NET_RAW stays bounded */
	int		 nnp_ignored;
	int		 suid_stays_root;
	int		 setresuid_fails;
	int		 amb_sticks;		/* CAP_NET_BIND_SERVICE stays */
	int		 reads_fail;		/* READ_BND, READ_AMB: those
						   reads fail (EPERM) once
						   no_new_privs is asked */
	int		 nnp_asked;
} k;

int	__wrap_prctl(int, ...);
long	__wrap_syscall(long, ...);
int	__wrap_setgroups(size_t, const gid_t *);
int	__wrap_setresuid(uid_t, uid_t, uid_t);
int	__wrap_setresgid(gid_t, gid_t, gid_t);
int	__wrap_getresuid(uid_t *, uid_t *, uid_t *);
int	__wrap_getresgid(gid_t *, gid_t *, gid_t *);
int	__wrap_setuid(uid_t);
int	__wrap_setgid(gid_t);

static void
reset(void)
{
	memset(&k, 0, sizeof(k));
	k.eff = k.prm = k.bnd = ALL_CAPS;	/* root in a container */
	k.amb = 1ULL << CAP_NET_BIND_SERVICE;
	k.inh = 1ULL << CAP_NET_BIND_SERVICE;
}

static int
fail_errno(int e)
{
	errno = e;
	return -1;
}

int
__wrap_prctl(int op, ...)
{
	va_list		 ap;
	unsigned long	 a, b;

	va_start(ap, op);
	a = va_arg(ap, unsigned long);
	b = va_arg(ap, unsigned long);
	va_end(ap);
	k.step++;
	switch (op) {
	case PR_CAP_AMBIENT:
		if (a == PR_CAP_AMBIENT_CLEAR_ALL) {
			k.amb = k.amb_sticks ? 1ULL << CAP_NET_BIND_SERVICE : 0;
			return 0;
		}
		if (a == PR_CAP_AMBIENT_IS_SET) {
			if ((k.reads_fail & READ_AMB) && k.nnp_asked)
				return fail_errno(EPERM);
			return b > LAST_CAP ? fail_errno(EINVAL) :
			    !!(k.amb & (1ULL << b));
		}
		return fail_errno(EINVAL);
	case PR_CAPBSET_READ:
		if ((k.reads_fail & READ_BND) && k.nnp_asked)
			return fail_errno(EPERM);
		return a > LAST_CAP ? fail_errno(EINVAL) :
		    !!(k.bnd & (1ULL << a));
	case PR_CAPBSET_DROP:
		if (a > LAST_CAP)
			return fail_errno(EINVAL);
		if (!HAS(CAP_SETPCAP))
			return fail_errno(EPERM);
		if (!(k.bnd_sticks && a == CAP_NET_RAW))
			k.bnd &= ~(1ULL << a);
		k.bnd_done_at = k.step;
		return 0;
	case PR_SET_NO_NEW_PRIVS:
		k.nnp_asked = 1;
		if (!k.nnp_ignored)
			k.nnp = 1;
		return 0;
	case PR_GET_NO_NEW_PRIVS:
		return k.nnp;
	case PR_SET_SECUREBITS:
		return HAS(CAP_SETPCAP) ? 0 : fail_errno(EPERM);
	case PR_SET_DUMPABLE:
		return 0;
	}
	return fail_errno(EINVAL);
}

long
__wrap_syscall(long nr, ...)
{
	struct __user_cap_data_struct	*d;
	va_list				 ap;
	uint64_t			 eff, prm, inh;

	va_start(ap, nr);
	(void)va_arg(ap, struct __user_cap_header_struct *);
	d = va_arg(ap, struct __user_cap_data_struct *);
	va_end(ap);
	k.step++;
	if (nr == SYS_capget) {
		d[0].effective = (uint32_t)k.eff;
		d[1].effective = (uint32_t)(k.eff >> 32);
		d[0].permitted = (uint32_t)k.prm;
		d[1].permitted = (uint32_t)(k.prm >> 32);
		d[0].inheritable = (uint32_t)k.inh;
		d[1].inheritable = (uint32_t)(k.inh >> 32);
		return 0;
	}
	if (nr != SYS_capset)
		return fail_errno(ENOSYS);
	eff = d[0].effective | (uint64_t)d[1].effective << 32;
	prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	if ((prm & ~k.prm) || (eff & ~prm))
		return fail_errno(EPERM);
	k.eff = eff;
	k.prm = prm;
	k.inh = inh;
	if (k.cap_sticks)
		k.eff |= 1ULL << CAP_SYS_ADMIN;
	return 0;
}

int
__wrap_setgroups(size_t n, const gid_t *g)
{
	k.step++;
	if (!HAS(CAP_SETGID))
		return fail_errno(EPERM);
	k.ngroups = n;
	return 0;
}

int
__wrap_setresgid(gid_t r, gid_t e, gid_t s)
{
	k.step++;
	if (!HAS(CAP_SETGID))
		return fail_errno(EPERM);
	k.rgid = r;
	k.egid = e;
	k.sgid = s;
	return 0;
}

int
__wrap_setresuid(uid_t r, uid_t e, uid_t s)
{
	k.step++;
	k.setresuid_at = k.step;
	if (k.setresuid_fails || !HAS(CAP_SETUID))
		return fail_errno(EPERM);
	k.ruid = r;
	k.euid = e;
	k.suid = k.suid_stays_root ? 0 : s;
	/* Leaving uid 0 entirely clears the sets (no KEEP_CAPS). */
	if (k.ruid != 0 && k.euid != 0 && k.suid != 0) {
		k.eff = k.prm = 0;
		k.amb = k.amb_sticks ? 1ULL << CAP_NET_BIND_SERVICE : 0;
	}
	return 0;
}

int
__wrap_getresuid(uid_t *r, uid_t *e, uid_t *s)
{
	*r = k.ruid;
	*e = k.euid;
	*s = k.suid;
	return 0;
}

int
__wrap_getresgid(gid_t *r, gid_t *e, gid_t *s)
{
	*r = k.rgid;
	*e = k.egid;
	*s = k.sgid;
	return 0;
}

int
__wrap_setuid(uid_t u)
{
	if (k.setuid0_works || HAS(CAP_SETUID) || k.suid == u) {
		k.ruid = k.euid = k.suid = u;
		return 0;
	}
	return fail_errno(EPERM);
}

int
__wrap_setgid(gid_t g)
{
	if (HAS(CAP_SETGID) || k.sgid == g)
		return 0;
	return fail_errno(EPERM);
}

static const struct enf_creds	 creds = {
	.uid = 1000, .gid = 1000, .groups = { 1000, 27 }, .ngroups = 2
};

static void
expect_refused(const char *want)
{
	char	 err[256] = "";

	if (enf_drop_all(&creds, err, sizeof(err)) != -1 ||
	    strstr(err, want) == NULL)
		fail_msg("expected a refusal with \"%s\", got \"%s\"", want,
		    err);
}

static void
test_drop_ok(void **state)
{
	char	 err[256] = "";

	reset();
	assert_int_equal(enf_drop_all(&creds, err, sizeof(err)), 0);
	assert_int_equal(k.ruid, 1000);
	assert_int_equal(k.suid, 1000);
	assert_int_equal(k.sgid, 1000);
	assert_int_equal(k.ngroups, 2);
	assert_true(k.eff == 0 && k.prm == 0 && k.inh == 0 && k.amb == 0);
	assert_true(k.bnd == 0);
	assert_true(k.nnp);
	/* The bounding set can only be emptied while CAP_SETPCAP is held. */
	assert_true(k.bnd_done_at < k.setresuid_at);
}

static void
test_drop_refuses_root(void **state)
{
	struct enf_creds	 c = creds;
	char			 err[256];

	reset();
	c.uid = 0;
	assert_int_equal(enf_drop_all(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "uid or gid 0"));
	c = creds;
	c.gid = 0;
	assert_int_equal(enf_drop_all(&c, err, sizeof(err)), -1);
}

static void
test_drop_faults(void **state)
{
	reset();
	k.eff &= ~(1ULL << CAP_SETPCAP);
	expect_refused("bounding set");

	reset();
	k.setresuid_fails = 1;
	expect_refused("setresuid 1000");

	reset();
	k.suid_stays_root = 1;
	expect_refused("uid or gid did not change");

	reset();
	k.setuid0_works = 1;
	expect_refused("root could be regained");

	reset();
	k.cap_sticks = 1;
	expect_refused("capabilities left");

	reset();
	k.bnd_sticks = 1;
	expect_refused("capability 13 still in the bounding set");

	reset();
	k.nnp_ignored = 1;
	expect_refused("no_new_privs");

	reset();
	k.amb_sticks = 1;
	expect_refused("capability 10 still ambient");

	/*
	 * The proof cannot read the bounding or ambient set (a seccomp
	 * filter, say): that is no proof.  It used to stop reading at the
	 * first error and pass whatever was left.
	 */
	reset();
	k.bnd_sticks = 1;
	k.reads_fail = READ_BND;
	expect_refused("reading the bounding set: Operation not permitted");

	reset();
	k.amb_sticks = 1;
	k.reads_fail = READ_AMB;
	expect_refused("reading the ambient set: Operation not permitted");
}

static void
test_refresher(void **state)
{
	char	 err[256] = "";

	reset();
	assert_int_equal(enf_drop_to_refresher(err, sizeof(err)), 0);
	assert_int_equal(k.eff, (1ULL << CAP_NET_ADMIN) | (1ULL << CAP_KILL));
	assert_int_equal(k.prm, k.eff);
	assert_int_equal(k.bnd, k.eff);
	assert_true(k.inh == 0 && k.amb == 0 && k.nnp);
	assert_int_equal(k.ngroups, 0);
	assert_int_equal(k.ruid, 0);

	reset();
	k.cap_sticks = 1;
	assert_int_equal(enf_drop_to_refresher(err, sizeof(err)), -1);
	assert_non_null(strstr(err, "capabilities left"));
}

/* gate and none modes: the command's parent keeps CAP_KILL alone */
static void
test_keep_kill(void **state)
{
	char	 err[256] = "";

	reset();
	assert_int_equal(enf_drop_keep(1ULL << CAP_KILL, err, sizeof(err)), 0);
	assert_int_equal(k.eff, 1ULL << CAP_KILL);
	assert_int_equal(k.prm, k.eff);
	assert_int_equal(k.bnd, k.eff);
	assert_true(k.inh == 0 && k.amb == 0 && k.nnp);
	assert_int_equal(k.ngroups, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_ok),
		cmocka_unit_test(test_drop_refuses_root),
		cmocka_unit_test(test_drop_faults),
		cmocka_unit_test(test_refresher),
		cmocka_unit_test(test_keep_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
