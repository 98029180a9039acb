/*
 * The launcher's cache (cache.h): an entry is used only under its own
 * key, whole, within its bound, and when it is the user's own file; a
 * stale key, a corrupt or oversize file, a file others may write, are
 * misses, and the question goes to podman again.  "podman" here is a
 * script that answers `podman info` and counts how often it is asked.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/cache.h"

static char	 dir[] = "/tmp/aisb-cache-XXXXXX";
static char	 statevar[300], confvar[400], podman[300], conf[200];
static char	*envp[] = { statevar, confvar, (char *)"HOME=/nonexistent", NULL };

#define KEY_A	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define KEY_B	"1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void
put(const char *path, const char *text, mode_t mode)
{
	FILE	*f;

	(void)unlink(path);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int
calls(void)
{
	char	 path[400], buf[64];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof(path), "%s/calls", dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(buf, sizeof(buf), f) != NULL)
		n++;
	fclose(f);
	return n;
}

static int
setup(void **state)
{
	char	 script[800];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(statevar, sizeof(statevar), "XDG_STATE_HOME=%s/state", dir);
	snprintf(conf, sizeof(conf), "%s/storage.conf", dir);
	snprintf(confvar, sizeof(confvar), "CONTAINERS_STORAGE_CONF=%s", conf);
	put(conf, "[storage]\n", 0600);
	snprintf(podman, sizeof(podman), "%s/podman", dir);
	snprintf(script, sizeof(script), "#!/bin/sh\necho call >> %s/calls\n"
	    "printf 'version 4.3.1\\ngraphroot %s/graph\\ndriver overlay\\n"
	    "volume_path %s/graph/volumes\\n'\n", dir, dir, dir);
	put(podman, script, 0700);
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[400];

	(void)state;
	/* the test's own temporary folder; no user input involved */
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void
test_file_roundtrip(void **state)
{
	char	 path[400], *body;
	size_t	 len;

	(void)state;
	snprintf(path, sizeof(path), "%s/state/aisb/cache/t", dir);
	assert_int_equal(launch_cache_write(path, KEY_A, "x 1\n", 4), 0);
	assert_non_null(body = launch_cache_read(path, KEY_A, 4096, &len));
	assert_int_equal(len, 4);
	assert_string_equal(body, "x 1\n");
	free(body);
	/* stale: another key */
	assert_null(launch_cache_read(path, KEY_B, 4096, &len));
	/* not a key at all */
	assert_null(launch_cache_read(path, "../x", 4096, &len));
	assert_int_equal(launch_cache_write(path, "KEY", "x", 1), -1);
	/* oversize: more than the bound asked for */
	assert_null(launch_cache_read(path, KEY_A, 40, &len));
	/* corrupt: another magic, a cut header, a NUL inside */
	put(path, "aisb-cache 2 " KEY_A "\nx 1\n", 0600);
	assert_null(launch_cache_read(path, KEY_A, 4096, &len));
	put(path, "aisb-cache 1 0123456789abcdef", 0600);
	assert_null(launch_cache_read(path, KEY_A, 4096, &len));
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fprintf(f, "aisb-cache 1 %s\nx%c1\n", KEY_A, '\0');
		fclose(f);
	}
	assert_null(launch_cache_read(path, KEY_A, 4096, &len));
	/* writable by others: not trusted */
	put(path, "aisb-cache 1 " KEY_A "\nx 1\n", 0620);
	assert_null(launch_cache_read(path, KEY_A, 4096, &len));
	chmod(path, 0600);
	assert_non_null(body = launch_cache_read(path, KEY_A, 4096, &len));
	free(body);
	/* a symbolic link is not followed */
	{
		char	 link[420];

		snprintf(link, sizeof(link), "%s.link", path);
		assert_int_equal(symlink(path, link), 0);
		assert_null(launch_cache_read(link, KEY_A, 4096, &len));
	}
}

static void
test_key(void **state)
{
	char	 a[LAUNCH_CACHE_KEYHEX + 1], b[LAUNCH_CACHE_KEYHEX + 1];
	char	 other[] = "CONTAINERS_STORAGE_CONF=/nonexistent";
	char	*envp2[] = { statevar, other, NULL };

	(void)state;
	assert_int_equal(launch_cache_podman_key(podman, envp, a), 0);
	assert_int_equal(launch_cache_podman_key(podman, envp, b), 0);
	assert_string_equal(a, b);
	/* the configuration podman reads changed: another key */
	put(conf, "[storage]\ndriver = \"vfs\"\n", 0600);
	assert_int_equal(launch_cache_podman_key(podman, envp, b), 0);
	assert_string_not_equal(a, b);
	/* another environment choosing it */
	assert_int_equal(launch_cache_podman_key(podman, envp2, a), 0);
	assert_string_not_equal(a, b);
}

static void
test_facts(void **state)
{
	struct launch_podman_facts	 f;
	char				 err[256], path[400], key[65];
	char				 text[600];

	(void)state;
	launch_cache_forget();
	assert_int_equal(launch_cache_podman_facts(podman, envp, 0, &f, err,
	    sizeof(err)), 0);
	assert_string_equal(f.version, "4.3.1");
	assert_string_equal(f.driver, "overlay");
	assert_int_equal(calls(), 1);
	/* from the cache file, podman not asked */
	launch_cache_forget();
	assert_int_equal(launch_cache_podman_facts(podman, envp, 0, &f, err,
	    sizeof(err)), 0);
	assert_int_equal(calls(), 1);
	/* a refresh asks */
	assert_int_equal(launch_cache_podman_facts(podman, envp, 1, &f, err,
	    sizeof(err)), 0);
	assert_int_equal(calls(), 2);

	/* a body that does not parse is ignored: podman is asked again */
	assert_int_equal(launch_cache_path(envp, "podman", path, sizeof(path)),
	    0);
	assert_int_equal(launch_cache_podman_key(podman, envp, key), 0);
	snprintf(text, sizeof(text), "aisb-cache 1 %s\nversion 4.3.1\n"
	    "graphroot relative/path\ndriver overlay\nvolume_path /v\n", key);
	put(path, text, 0600);
	launch_cache_forget();
	assert_int_equal(launch_cache_podman_facts(podman, envp, 0, &f, err,
	    sizeof(err)), 0);
	assert_int_equal(calls(), 3);
	assert_string_equal(f.graphroot + strlen(dir), "/graph");

	/* a stale key (the podman binary changed) asks again */
	put(podman, "#!/bin/sh\nexit 3\n", 0700);
	launch_cache_forget();
	assert_int_equal(launch_cache_podman_facts(podman, envp, 0, &f, err,
	    sizeof(err)), -1);

	/* an oversize file is ignored */
	memset(text, 'x', sizeof(text));
	{
		FILE	*fp = fopen(path, "w");
		size_t	 i;

		assert_non_null(fp);
		fprintf(fp, "aisb-cache 1 %s\n", key);
		for (i = 0; i < LAUNCH_CACHE_MAX / sizeof(text) + 1; i++)
			fwrite(text, 1, sizeof(text), fp);
		fclose(fp);
	}
	assert_null(launch_cache_read(path, key, LAUNCH_CACHE_MAX, &(size_t){0}));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_facts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
