/*
 * launch_host_ca_gather(): the host's local CAs, bounded and checked,
 * read from real files in a folder the test makes; the session's file
 * with an inspecting gate's CA after them.
 */
#include "config.h"

#include <sys/stat.h>

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
#include "session/folder.h"
#include "session/hostcas.h"

/* A self-signed test CA (CN=aisb-unit-test-ca), no secret anywhere. */
static const char ca_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBjzCCATWgAwIBAgIUUt6cvRIvZm1+mBrrsVVapbTcrnEwCgYIKoZIzj0EAwIw\n"
    "HDEaMBgGA1UEAwwRYWlzYi11bml0LXRlc3QtY2EwIBcNMjYxMjAxMDAxMzQwWhgP\n"
    "MjEyNjExMDcwMDEzNDBaMBwxGjAYBgNVBAMMEWFpc2ItdW5pdC10ZXN0LWNhMFkw\n"
    "EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/n9n4EaazlpdYzpkuLvys+IpFXP9BNGc\n"
    "ff8sgwHMotCoOVtNFqQrRbdouSGtUZ3qgHY+r9LZ899tbRUqKzZM5aNTMFEwHQYD\n"
    "VR0OBBYEFDgprjaTQ3OjwXIAvv3Q3RxRjvdJMB8GA1UdIwQYMBaAFDgprjaTQ3Oj\n"
    "wXIAvv3Q3RxRjvdJMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIg\n"
    "QWoJOq4sWyggrPDbsYnmImAkmjQOBa3CkAkktJypQ0sCIQCeugLH2whQN96PCP+I\n"
    "O1M/6aTd+RFwos4bGDbNKBNaKA==\n"
    "-----END CERTIFICATE-----\n";

static char	dir[PATH_MAX / 2];

static void
put(const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void
empty_dir(const char *d)
{
	char	cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static int
setup(void **state)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/aisb-hostca.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	empty_dir(dir);
	return 0;
}

static size_t
count(const char *hay, const char *needle)
{
	size_t	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

static void
gather(char **out, size_t *len, size_t *n, char *warn, size_t warnlen,
    int want)
{
	char	err[512] = "";

	assert_int_equal(launch_host_ca_gather(dir, out, len, n, warn,
	    warnlen, err, sizeof(err)), want);
}

static void
none_and_missing(void **state)
{
	char	*out, warn[512];
	size_t	 len, n;
	char	 err[256];

	gather(&out, &len, &n, warn, sizeof(warn), 0);
	assert_null(out);
	assert_int_equal(n, 0);
	assert_int_equal(launch_host_ca_gather("/nonexistent/aisb", &out,
	    &len, &n, warn, sizeof(warn), err, sizeof(err)), 0);
	assert_null(out);
}

/* *.crt in subfolders, re-encoded; other names and hidden files not. */
static void
certificates_only(void **state)
{
	char	*out, warn[512], sub[PATH_MAX];
	size_t	 len, n;

	snprintf(sub, sizeof(sub), "%s/corp", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	put("corp/inspect.crt", ca_pem);
	put("two.crt", "some text before\n");
	put("README", ca_pem);
	put(".hidden.crt", ca_pem);
	put("both.crt", ca_pem);
	gather(&out, &len, &n, warn, sizeof(warn), 0);
	assert_non_null(out);
	/* two.crt: no certificate, skipped and named */
	assert_non_null(strstr(warn, "two.crt"));
	assert_int_equal(n, 2);
	assert_int_equal(count(out, "-----BEGIN CERTIFICATE-----"), 2);
	assert_int_equal(strlen(out), len);
	assert_null(strstr(out, "some text"));
	free(out);
}

/* A file that holds a private key is skipped whole, never copied. */
static void
private_key_skipped(void **state)
{
	char	*out, warn[512], text[4096];
	size_t	 len, n;

	snprintf(text, sizeof(text), "%s-----BEGIN PRIVATE KEY-----\n"
	    "MC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n", ca_pem);
	put("keyed.crt", text);
	gather(&out, &len, &n, warn, sizeof(warn), 0);
	assert_null(out);
	assert_int_equal(n, 0);
	assert_non_null(strstr(warn, "private key"));
}

/* More files than the bound: refused, not silently cut. */
static void
too_many_files(void **state)
{
	char	*out, warn[512], name[32];
	size_t	 len, n;
	int	 i;

	for (i = 0; i <= LAUNCH_HOST_CA_FILES; i++) {
		snprintf(name, sizeof(name), "ca%03d.crt", i);
		put(name, ca_pem);
	}
	gather(&out, &len, &n, warn, sizeof(warn), -1);
	assert_null(out);
	assert_int_equal(n, 0);
}

/* A file over the size bound is skipped, the others kept. */
static void
large_file_skipped(void **state)
{
	char	*out, warn[512], *big;
	size_t	 len, n;

	assert_non_null(big = malloc(LAUNCH_HOST_CA_FILE_MAX + 2));
	memset(big, '#', LAUNCH_HOST_CA_FILE_MAX + 1);
	big[LAUNCH_HOST_CA_FILE_MAX + 1] = '\0';
	put("big.crt", big);
	free(big);
	put("ok.crt", ca_pem);
	gather(&out, &len, &n, warn, sizeof(warn), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(warn, "big.crt"));
	free(out);
}

/*
 * The session's host-ca.pem: the host's certificates, then an inspecting
 * gate's CA (also alone, with --no-host-ca); a gate's CA that is not
 * there is an error, not a file without it.
 */
static void
session_ca_file(void **state)
{
	struct launch_session	 s;
	char			 hostdir[PATH_MAX], gateca[PATH_MAX];
	char			 path[PATH_MAX], err[PATH_MAX + 128], senv[PATH_MAX];
	char			*envp[] = { senv, NULL }, *text;
	size_t			 n, len;

	snprintf(senv, sizeof(senv), "XDG_STATE_HOME=%s/state", dir);
	snprintf(hostdir, sizeof(hostdir), "%s/host", dir);
	assert_int_equal(mkdir(hostdir, 0755), 0);
	put("host/corp.crt", ca_pem);
	put("gate-ca.pem", ca_pem);
	snprintf(gateca, sizeof(gateca), "%s/gate-ca.pem", dir);
	assert_int_equal(setenv(LAUNCH_HOST_CA_DIR_ENV, hostdir, 1), 0);

	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	assert_int_equal(launch_host_ca_file(&s, 1, gateca, path, sizeof(path),
	    &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);			/* the host's */
	assert_non_null(text = file_read_bounded(path, 65536, &len, err,
	    sizeof(err)));
	assert_int_equal(count(text, "-----BEGIN CERTIFICATE-----"), 2);
	free(text);
	launch_session_wipe(&s);

	/* --no-host-ca: the gate's CA alone */
	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	assert_int_equal(launch_host_ca_file(&s, 0, gateca, path, sizeof(path),
	    &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_non_null(text = file_read_bounded(path, 65536, &len, err,
	    sizeof(err)));
	assert_int_equal(count(text, "-----BEGIN CERTIFICATE-----"), 1);
	free(text);
	launch_session_wipe(&s);

	/* the gate wrote none: refused */
	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	snprintf(gateca, sizeof(gateca), "%s/missing.pem", dir);
	assert_int_equal(launch_host_ca_file(&s, 0, gateca, path, sizeof(path),
	    &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the gate's CA certificate"));
	assert_string_equal(path, "");
	/* neither: no file */
	assert_int_equal(launch_host_ca_file(&s, 0, NULL, path, sizeof(path),
	    &n, err, sizeof(err)), 0);
	assert_string_equal(path, "");
	launch_session_wipe(&s);
	unsetenv(LAUNCH_HOST_CA_DIR_ENV);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(none_and_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(certificates_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(private_key_skipped, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(too_many_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(large_file_skipped, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(session_ca_file, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
