/*
 * launch_policy_allow_write() reads the policy file it locked, through
 * the locked descriptor: a file renamed into its place after the lock
 * was taken and checked (an editor that saves by rename, without the
 * lock) is not what is read and edited.  lstat(2) is wrapped at link
 * time: the gap between the check and the read is made real by
 * renaming another file over the path right after the check's lstat.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "file.h"
#include "policy.h"
#include "policytools/polyedit.h"

int	__real_lstat(const char *, struct stat *);
int	__wrap_lstat(const char *, struct stat *);

/* armed: the next lstat of swap_path renames swap_from over it, once */
static char	 swap_path[PATH_MAX], swap_from[PATH_MAX];
static int	 swapped;
/* the test's folder, removed by teardown also when a check failed */
static char	 dir[] = "/tmp/aisb-polyedit-gap.XXXXXX";
static char	 pol[PATH_MAX], other[PATH_MAX];

int
__wrap_lstat(const char *path, struct stat *st)
{
	int	 rc = __real_lstat(path, st);

	if (swap_path[0] != '\0' && strcmp(path, swap_path) == 0) {
		if (rename(swap_from, swap_path) == 0)
			swapped++;
		swap_path[0] = '\0';
	}
	return rc;
}

static void
put(const char *path, const char *text)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) == EOF)
		fail_msg("%s: %s", path, strerror(errno));
}

static void
test_read_what_was_locked(void **state)
{
	struct policy_target	 t;
	char			 real[PATH_MAX], err[1024], *text;
	size_t			 len;
	FILE			*diff;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(pol, sizeof(pol), "%s/policy.yaml", dir);
	snprintf(other, sizeof(other), "%s/other.yaml", dir);
	put(pol, "version: 1\nallow:\n  - host: locked.test\n"
	    "    ports: [443]\n");
	put(other, "version: 1\n# put in place by another writer\nallow:\n"
	    "  - host: renamed.test\n    ports: [443]\n");
	assert_non_null(realpath(pol, real));
	snprintf(swap_path, sizeof(swap_path), "%s", real);
	snprintf(swap_from, sizeof(swap_from), "%s", other);
	assert_int_equal(policy_parse_target("added.test:443", 14, 0, &t, err,
	    sizeof(err)), 0);
	assert_non_null(diff = fopen("/dev/null", "w"));
	if (launch_policy_allow_write(pol, &t, NULL, diff, err,
	    sizeof(err)) == -1)
		fail_msg("%s", err);
	fclose(diff);
	assert_int_equal(swapped, 1);	/* the gap was there */
	if ((text = file_read_bounded(pol, 65536, &len, err,
	    sizeof(err))) == NULL)
		fail_msg("%s", err);
	/* the locked file's text, with the rule: not the renamed one's */
	assert_non_null(strstr(text, "locked.test"));
	assert_non_null(strstr(text, "added.test"));
	assert_null(strstr(text, "renamed.test"));
	free(text);
}

static int
teardown(void **state)
{
	(void)state;
	if (pol[0] != '\0')
		(void)unlink(pol);
	if (other[0] != '\0')
		(void)unlink(other);
	return rmdir(dir) == -1 && errno != ENOENT ? -1 : 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_read_what_was_locked,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
