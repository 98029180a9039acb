/*
 * The Containerfile generator and launch_exec(), the child-process helper
 * podman and mmdebstrap run through.  launch_exec() runs real programs
 * (echo, cat, head, sleep, ls) from PATH.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "image.h"

#define OFFLINE_BASE	LAUNCH_BASE_REPO ":0123456789abcdef"

static char	cf[LAUNCH_CONTAINERFILE_MAX];

static int
has_line(const char *text, const char *line)
{
	size_t		 len = strlen(line);
	const char	*p = text;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') &&
		    (p[len] == '\n' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

static void
containerfile_offline(void **state)
{
	const char *const		pk[] = { "git", "curl", "git" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "";

	spec.packages = pk;
	spec.npackages = 3;
	if (launch_image_containerfile(&spec, OFFLINE_BASE, cf, sizeof(cf),
	    err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_true(has_line(cf, "FROM " OFFLINE_BASE));
	/* The base has what the enforcer needs; the layer adds the rest. */
	assert_true(has_line(cf, "# in the offline base: ca-certificates "
	    "libc-ares2 libmnl0 libnftnl11 passwd"));
	assert_true(has_line(cf, "RUN [\"apt-get\", \"update\"]"));
	/* sorted, without duplicates, without what the base has */
	assert_true(has_line(cf, "RUN [\"env\", \"DEBIAN_FRONTEND="
	    "noninteractive\", \"apt-get\", \"install\", \"-y\", "
	    "\"--no-install-recommends\", \"curl\", \"git\"]"));
	/* the image's apt runs as root before the user's config is set */
	assert_true(strstr(cf, "apt-get\", \"install") <
	    strstr(cf, "ENV APT_CONFIG=/etc/aisb/apt-sandbox.conf"));
	assert_true(has_line(cf, "COPY apt-sandbox.conf "
	    "/etc/aisb/apt-sandbox.conf"));
	assert_true(has_line(cf, "ENV REQUESTS_CA_BUNDLE="
	    "/etc/ssl/certs/ca-certificates.crt"));
	assert_true(has_line(cf, "COPY aisb-enforce /usr/local/bin/"
	    "aisb-enforce"));
	assert_true(has_line(cf, "ENTRYPOINT [\"/usr/local/bin/"
	    "aisb-enforce\"]"));
	assert_non_null(strstr(cf, "\"--uid\", \"1000\""));
	assert_non_null(strstr(cf, "\"--home-dir\", \"/home/sandbox\""));
	assert_null(strstr(cf, "\nUSER "));
}

/* The base alone, or only packages it has: no apt-get, no network. */
static void
containerfile_offline_bare(void **state)
{
	const char *const		pk[] = { "passwd", "ca-certificates" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "";

	if (launch_image_containerfile(&spec, OFFLINE_BASE, cf, sizeof(cf),
	    err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_null(strstr(cf, "apt-get"));
	spec.packages = pk;
	spec.npackages = 2;
	if (launch_image_containerfile(&spec, OFFLINE_BASE, cf, sizeof(cf),
	    err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_null(strstr(cf, "apt-get"));
	assert_true(has_line(cf, "ENV APT_CONFIG=/etc/aisb/apt-sandbox.conf"));
}

static void
durations(void **state)
{
	long long	s;

	assert_int_equal(launch_duration_parse("7d", &s), 0);
	assert_int_equal(s, 7 * 86400);
	assert_int_equal(launch_duration_parse("12h", &s), 0);
	assert_int_equal(s, 12 * 3600);
	assert_int_equal(launch_duration_parse("30m", &s), 0);
	assert_int_equal(s, 1800);
	assert_int_equal(launch_duration_parse("90s", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(launch_duration_parse("0", &s), 0);
	assert_int_equal(s, 0);
	assert_int_equal(launch_duration_parse("", &s), -1);
	assert_int_equal(launch_duration_parse("-1d", &s), -1);
	assert_int_equal(launch_duration_parse("7w", &s), -1);
	assert_int_equal(launch_duration_parse("7dd", &s), -1);
	assert_int_equal(launch_duration_parse("99999999999999999999", &s),
	    -1);
}

static void
containerfile_pulled(void **state)
{
	const char *const		pk[] = { "python3" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "";

	spec.packages = pk;
	spec.npackages = 1;
	if (launch_image_containerfile(&spec, "debian:bookworm-slim", cf,
	    sizeof(cf), err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_true(has_line(cf, "FROM debian:bookworm-slim"));
	assert_true(has_line(cf, "RUN [\"env\", \"DEBIAN_FRONTEND="
	    "noninteractive\", \"apt-get\", \"install\", \"-y\", "
	    "\"--no-install-recommends\", \"ca-certificates\", \"libc-ares2\", "
	    "\"libmnl0\", \"libnftnl11\", \"passwd\", \"python3\"]"));
	assert_null(strstr(cf, "# in the offline base"));
	assert_null(strstr(cf, "# packages"));
}

static void
containerfile_refuses(void **state)
{
	static const char *const bad_pk[] = {
		"Git", "a", "-rf", "x y", "x\"y", "x;y", "x\ny", "x/y", "",
	};
	static const char *const bad_ref[] = {
		"", "-x", "a b", "a;b", "a\"b", "a\nb",
	};
	struct launch_image_spec	spec = { 0 };
	char				err[256];
	const char			*one[1];
	size_t				i;

	spec.packages = one;
	spec.npackages = 1;
	for (i = 0; i < sizeof(bad_pk) / sizeof(bad_pk[0]); i++) {
		one[0] = bad_pk[i];
		err[0] = '\0';
		if (launch_image_containerfile(&spec, OFFLINE_BASE, cf,
		    sizeof(cf), err, sizeof(err)) != -1)
			fail_msg("package '%s' accepted", bad_pk[i]);
		assert_non_null(strstr(err, "package"));
	}
	spec.npackages = 0;
	for (i = 0; i < sizeof(bad_ref) / sizeof(bad_ref[0]); i++)
		if (launch_image_containerfile(&spec, bad_ref[i], cf,
		    sizeof(cf), err, sizeof(err)) != -1)
			fail_msg("base '%s' accepted", bad_ref[i]);
	/* Too small a buffer is an error, never a cut Containerfile. */
	assert_int_equal(launch_image_containerfile(&spec, OFFLINE_BASE, cf,
	    64, err, sizeof(err)), -1);
}

static void
exec_output(void **state)
{
	char *const	echo[] = { "echo", "a b", "$HOME", NULL };
	char *const	cat[] = { "cat", NULL };
	char *const	head[] = { "head", "-c", "1000000", "/dev/zero", NULL };
	char		out[16], err[256];

	assert_int_equal(launch_exec(echo, NULL, 0, out, sizeof(out), 5000, 0,
	    err, sizeof(err)), 0);
	assert_string_equal(out, "a b $HOME\n");	/* no shell */
	assert_int_equal(launch_exec(cat, "plan\n", 5, out, sizeof(out), 5000,
	    0, err, sizeof(err)), 0);
	assert_string_equal(out, "plan\n");
	/* Bounded: the rest is read and dropped, the child is not stuck. */
	memset(out, 'x', sizeof(out));
	assert_int_equal(launch_exec(head, NULL, 0, out, sizeof(out), 5000, 0,
	    err, sizeof(err)), 0);
	assert_int_equal(out[sizeof(out) - 1], '\0');
}

static void
exec_status(void **state)
{
	char *const	fals[] = { "false", NULL };
	char *const	ls[] = { "ls", "/nonexistent-aisb", NULL };
	char *const	none[] = { "aisb-no-such-program", NULL };
	char *const	slp[] = { "sleep", "10", NULL };
	char		err[256];
	time_t		t0;

	assert_int_equal(launch_exec(fals, NULL, 0, NULL, 0, 5000, 0, err,
	    sizeof(err)), 1);
	assert_int_not_equal(launch_exec(ls, NULL, 0, NULL, 0, 5000, 0, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(err, "nonexistent-aisb"));
	assert_int_equal(launch_exec(none, NULL, 0, NULL, 0, 5000, 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not found"));
	t0 = time(NULL);
	assert_int_equal(launch_exec(slp, NULL, 0, NULL, 0, 300, 0, err,
	    sizeof(err)), -1);
	assert_true(time(NULL) - t0 < 5);
	assert_non_null(strstr(err, "killed"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(containerfile_offline),
		cmocka_unit_test(containerfile_offline_bare),
		cmocka_unit_test(durations),
		cmocka_unit_test(containerfile_pulled),
		cmocka_unit_test(containerfile_refuses),
		cmocka_unit_test(exec_output),
		cmocka_unit_test(exec_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
