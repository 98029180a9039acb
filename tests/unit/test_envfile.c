/* Unit tests of the enforcer's env file reader (enforcer/envfile.c). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envfile.h"

static int
apply(const char *text, char *err, size_t errlen)
{
	return enf_env_apply(text, strlen(text), err, errlen);
}

static void
test_values(void **state)
{
	char	 err[256];

	unsetenv("AISB_T_A");
	setenv("AISB_T_B", "old", 1);
	assert_int_equal(apply("# made by aisb\n\nAISB_T_A=x=y z\n"
	    "AISB_T_B=\nAISB_T_C=  spaced  \n_U1=last", err, sizeof(err)), 4);
	assert_string_equal(getenv("AISB_T_A"), "x=y z");
	assert_string_equal(getenv("AISB_T_B"), "");
	assert_string_equal(getenv("AISB_T_C"), "  spaced  ");
	assert_string_equal(getenv("_U1"), "last");
	assert_int_equal(apply("", err, sizeof(err)), 0);
}

/* A bad line anywhere: nothing is set, the value is never quoted. */
static void
test_refusals(void **state)
{
	static const struct {
		const char	*text, *want;
	} cases[] = {
		{ "AISB_T_D=ok\n1BAD=hunter2\n", "line 2: not NAME=VALUE" },
		{ "AISB_T_D=ok\nNOEQUALS\n", "line 2: not NAME=VALUE" },
		{ "AISB_T_D=ok\n=hunter2\n", "line 2: not NAME=VALUE" },
		{ "AISB_T_D=ok\nBAD-NAME=hunter2\n", "line 2: not NAME=VALUE" },
		{ "AISB_T_D=ok\n BAD=hunter2\n", "line 2: not NAME=VALUE" },
	};
	char	 err[256], nul[] = "AISB_T_D=ok\nX=hun\0ter2\n";
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsetenv("AISB_T_D");
		assert_int_equal(apply(cases[i].text, err, sizeof(err)), -1);
		assert_non_null(strstr(err, cases[i].want));
		assert_null(strstr(err, "hunter2"));
		assert_null(getenv("AISB_T_D"));
	}
	assert_int_equal(enf_env_apply(nul, sizeof(nul) - 1, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "line 2: a NUL byte"));
	assert_null(getenv("AISB_T_D"));
}

static void
test_bounds(void **state)
{
	char	*big, err[256], path[] = "/tmp/aisb-envfile-XXXXXX";
	size_t	 i, off = 0;
	int	 fd;

	/* 4097 variables */
	big = malloc(4097 * 16);
	assert_non_null(big);
	for (i = 0; i < 4097; i++)
		off += (size_t)snprintf(big + off, 16, "V%zu=1\n", i);
	assert_int_equal(enf_env_apply(big, off, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 4096"));
	free(big);
	/* a name of 256 bytes */
	big = calloc(1, 300);
	assert_non_null(big);
	memset(big, 'N', 256);
	big[256] = '=';
	assert_int_equal(apply(big, err, sizeof(err)), -1);
	free(big);
	/* over 1 MiB, from a real file */
	assert_true((fd = mkstemp(path)) != -1);
	big = malloc(ENF_ENV_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, '#', ENF_ENV_MAX_BYTES + 1);
	assert_int_equal(write(fd, big, ENF_ENV_MAX_BYTES + 1),
	    ENF_ENV_MAX_BYTES + 1);
	close(fd);
	assert_int_equal(enf_env_file(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	unlink(path);
	free(big);
	assert_int_equal(enf_env_file("/nonexistent/env", err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "/nonexistent/env"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
