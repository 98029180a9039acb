/*
 * common/: the sticky string builder (buf.h) and the whole-file helpers
 * (file.h) the launcher, the gate and the enforcer share.  Real files in
 * a temporary folder.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "buf.h"
#include "file.h"

static void
buf_grows_to_its_bound(void **state)
{
	struct buf	 b;
	size_t		 i;

	(void)state;
	buf_init(&b, 10, BUF_SECRET);
	buf_add(&b, "abc", 3);
	buf_printf(&b, "%d-%s", 42, "x");
	assert_false(b.failed);
	assert_string_equal(b.p, "abc42-x");
	/* exactly the bound fits; one more byte fails, and stays failed */
	buf_add(&b, "123", 3);
	assert_false(b.failed);
	assert_int_equal(b.len, 10);
	buf_add(&b, "4", 1);
	assert_true(b.failed);
	buf_free(&b);

	buf_init(&b, 100000, 0);
	for (i = 0; i < 1000; i++)
		buf_printf(&b, "%04zu\n", i);
	assert_false(b.failed);
	assert_int_equal(b.len, 5000);
	assert_int_equal(strncmp(b.p + 4995, "0999\n", 5), 0);
	buf_printf(&b, "%s", "");
	assert_false(b.failed);
	buf_free(&b);
	assert_null(b.p);
}

static void
buf_fixed_never_cuts(void **state)
{
	char		 mem[8];
	struct buf	 b;

	(void)state;
	buf_fixed(&b, mem, sizeof(mem));
	buf_printf(&b, "%s", "1234567");	/* 7 and the NUL: fits */
	assert_false(b.failed);
	assert_string_equal(mem, "1234567");
	buf_fixed(&b, mem, sizeof(mem));
	buf_printf(&b, "%s", "12345678");	/* one too many */
	assert_true(b.failed);
	buf_printf(&b, "%s", "");		/* sticky */
	assert_true(b.failed);
	buf_fixed(&b, mem, 0);
	assert_true(b.failed);
}

static char	dir[] = "/tmp/aisb-common-XXXXXX";

static void
files(void **state)
{
	char	 path[PATH_MAX], link[PATH_MAX], err[PATH_MAX + 64], *t;
	char	 big[100];
	size_t	 len;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(file_path_join(path, sizeof(path), dir, "f"), 0);
	assert_int_equal(file_path_join(path, 4, dir, "f"), -1);

	/* replaced whole, with its mode, and no temporary left */
	assert_int_equal(file_path_join(path, sizeof(path), dir, "f"), 0);
	assert_int_equal(file_write_atomic(path, "one\n", 4, 0640,
	    (gid_t)-1), 0);
	assert_int_equal(file_write_atomic(path, "two\n", 4, 0600,
	    (gid_t)-1), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	t = file_read_in(dir, "f", 4, &len, err, sizeof(err));
	assert_non_null(t);
	assert_string_equal(t, "two\n");
	free(t);

	/* over the bound: refused, not cut short */
	assert_null(file_read_in(dir, "f", 3, &len, err, sizeof(err)));
	assert_int_equal(errno, EFBIG);
	assert_non_null(strstr(err, "larger than 3 bytes"));
	assert_null(file_read_in(dir, "none", 3, &len, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	/* never through a link */
	assert_int_equal(file_path_join(link, sizeof(link), dir, "l"), 0);
	assert_int_equal(symlink("f", link), 0);
	assert_null(file_read_in(dir, "l", 100, &len, err, sizeof(err)));
	t = file_read_bounded(link, 100, &len, err, sizeof(err));
	assert_non_null(t);
	free(t);
	/* a folder is no file */
	assert_null(file_read_in("/", "tmp", 100, &len, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	/* a temporary that cannot be made: nothing replaced */
	memset(big, 'x', sizeof(big));
	assert_int_equal(file_path_join(path, sizeof(path), dir,
	    "no/such/folder"), 0);
	assert_int_equal(file_write_atomic(path, big, sizeof(big), 0600,
	    (gid_t)-1), -1);

	assert_int_equal(unlink(link), 0);
	assert_int_equal(file_path_join(path, sizeof(path), dir, "f"), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_grows_to_its_bound),
		cmocka_unit_test(buf_fixed_never_cuts),
		cmocka_unit_test(files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
