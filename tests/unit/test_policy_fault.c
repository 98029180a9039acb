/*
 * Faults of the policy loader that cannot be produced for real: fstat(2)
 * failing on a descriptor open(2) just returned.  fstat is wrapped at link
 * time (-Wl,--wrap=fstat, tests/local.mk).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy.h"

int	__real_fstat(int, struct stat *);
int	__wrap_fstat(int, struct stat *);

static int	fail_fstat;

int
__wrap_fstat(int fd, struct stat *st)
{
	if (fail_fstat) {
		/*
		 * What a failed fstat leaves in *st is whatever was there:
		 * here, not a regular file.
		 */
		memset(st, 0, sizeof(*st));
		errno = EIO;
		return -1;
	}
	return __real_fstat(fd, st);
}

/* A failed fstat is reported as itself, not judged by an undefined st. */
static void
test_fstat_fails(void **state)
{
	struct policy_errors	 errs;
	struct policy		*p = NULL;
	char			 path[] = "/tmp/aisb-test-policy-XXXXXX";
	int			 fd;

	(void)state;
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, "version: 1\n", 11), 11);
	close(fd);
	fail_fstat = 1;
	assert_int_equal(policy_load_file(path, &p, &errs), -1);
	fail_fstat = 0;
	assert_null(p);
	if (strstr(errs.err[0].msg, strerror(EIO)) == NULL)
		fail_msg("fstat failure reported as \"%s\"", errs.err[0].msg);
	/* and without the fault the same file loads */
	assert_int_equal(policy_load_file(path, &p, &errs), 0);
	policy_free(p);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fstat_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
