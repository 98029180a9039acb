/*
 * The option tests' one harness (test_options.c, test_optproject.c): a
 * scratch folder with a user config folder and a workspace, setup and
 * teardown for cmocka, the user and project configs written or removed,
 * and resolve(), which runs the launcher's own resolution with
 * --workspace and an environment naming only that folder.  Include
 * after <cmocka.h> and "session/options.h".
 */
#ifndef AISB_TEST_OPTS_HARNESS_H
#define AISB_TEST_OPTS_HARNESS_H

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "write_file.h"

static char	 dir[] = "/tmp/aisb-opts-XXXXXX";
static char	 xdg[256], ws[256], envxdg[300], envhome[300];

static int
setup(void **state)
{
	char	 p[512];

	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(p, sizeof(p), "%s/aisb", xdg);
	if (mkdir(xdg, 0700) == -1 || mkdir(p, 0700) == -1 ||
	    mkdir(ws, 0700) == -1)
		return -1;
	snprintf(envxdg, sizeof(envxdg), "XDG_CONFIG_HOME=%s", xdg);
	snprintf(envhome, sizeof(envhome), "HOME=%s", dir);
	return 0;
}

static int
teardown(void **state)
{
	char	 p[512];

	(void)state;
	snprintf(p, sizeof(p), "%s/aisb/config.yaml", xdg);
	unlink(p);
	snprintf(p, sizeof(p), "%s/aisb", xdg);
	rmdir(p);
	rmdir(xdg);
	snprintf(p, sizeof(p), "%s/.aisb.yaml", ws);
	unlink(p);
	rmdir(ws);
	rmdir(dir);
	return 0;
}

/* dir/name holds text, or is gone (text NULL). */
static void
config_file(const char *dir_, const char *name, const char *text)
{
	char	 p[512];

	snprintf(p, sizeof(p), "%s/%s", dir_, name);
	if (text == NULL)
		unlink(p);
	else
		write_file(p, text);
}

static __attribute__((unused)) void
user_config(const char *text)
{
	config_file(xdg, "aisb/config.yaml", text);
}

static __attribute__((unused)) void
project_config(const char *text)
{
	config_file(ws, ".aisb.yaml", text);
}

/* Resolves argv (NULL-terminated, without "aisb") with env entries. */
static __attribute__((unused)) int
resolve(struct launch_opts *o, char *err, size_t errlen, const char *const *args,
    const char *const *env)
{
	/* static: o->cmd points into argv after we return */
	static char	*argv[32], wsflag[300];
	char		*envp[32];
	int		 argc = 0, n = 0;

	argv[argc++] = (char *)"aisb";
	snprintf(wsflag, sizeof(wsflag), "--workspace=%s", ws);
	argv[argc++] = wsflag;
	for (; args != NULL && *args != NULL; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	envp[n++] = envxdg;
	envp[n++] = envhome;
	for (; env != NULL && *env != NULL; env++)
		envp[n++] = (char *)*env;
	envp[n] = NULL;
	return launch_opts_resolve(o, argc, argv, envp, err, errlen);
}

#define ARGS(...)	((const char *const[]){ __VA_ARGS__, NULL })

#endif
