/*
 * Files a bind session's command may not choose for the next session
 * (session/trust.c): watched from a session's start to its end; a file
 * created, changed or deleted is refused, naming the session, until it
 * is accepted or undone; a launcher killed before its end leaves a
 * marker that is judged by the file alone; files outside the workspace
 * are not watched; the project config through launch_opts_resolve.
 */
#include "config.h"

#include <sys/stat.h>

#include <setjmp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "write_file.h"
#include "session/options.h"
#include "session/trust.h"

static char	 dir[] = "/tmp/aisb-trust-XXXXXX";
static char	 ws[256], other[256], cfg[300], pol[300], outside[300];
static char	 envstate[300], envhome[300], envxdg[300];
static char	*envp[4];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(cfg, sizeof(cfg), "%s/.aisb.yaml", ws);
	snprintf(pol, sizeof(pol), "%s/policy.yaml", ws);
	snprintf(outside, sizeof(outside), "%s/policy.yaml", other);
	snprintf(envstate, sizeof(envstate), "XDG_STATE_HOME=%s/state", dir);
	snprintf(envhome, sizeof(envhome), "HOME=%s", dir);
	snprintf(envxdg, sizeof(envxdg), "XDG_CONFIG_HOME=%s/xdg", dir);
	envp[0] = envstate;
	envp[1] = envhome;
	envp[2] = envxdg;
	envp[3] = NULL;
	if (mkdir(ws, 0700) == -1 || mkdir(other, 0700) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The markers in the state folder: how many there are. */
static int
markers(void)
{
	char	 cmd[400], line[64];
	FILE	*p;
	int	 n = -1;

	snprintf(cmd, sizeof(cmd), "ls %s/state/aisb/trust 2>/dev/null | "
	    "wc -l", dir);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fgets(line, sizeof(line), p) != NULL)
			n = atoi(line);
		pclose(p);
	}
	return n;
}

static int
check(const char *path, char *err, size_t errlen)
{
	return launch_trust_check(envp, path, err, errlen);
}

/* begin over the project config, the policy and one outside */
static void
begin(struct launch_trust *t, const char *session)
{
	const char *const files[] = { cfg, pol, outside, NULL };
	char	 err[1024];

	if (launch_trust_begin(t, envp, ws, files, 4, session, err,
	    sizeof(err)) == -1)
		fail_msg("begin: %s", err);
}

static void
test_unchanged(void **state)
{
	struct launch_trust	 t;
	char			 err[1024];

	(void)state;
	write_file(cfg, "net: none\n");
	write_file(outside, "version: 1\n");
	begin(&t, "s0");
	/* the project config and the policy (absent), not the one outside */
	assert_int_equal(t.n, 2);
	assert_int_equal(markers(), 2);
	assert_int_equal(check(cfg, err, sizeof(err)), 0);
	assert_int_equal(launch_trust_end(&t, "s0", stderr), 0);
	assert_int_equal(markers(), 0);
	unlink(cfg);
	unlink(outside);
}

static void
test_changed_then_accepted(void **state)
{
	static const char *const text[] = { NULL, "net: none\n" };
	struct launch_trust	 t;
	char			 err[2048], *out = NULL;
	size_t			 len = 0, k;
	FILE			*f;

	(void)state;
	/* created, then changed, then deleted: each is the session's */
	for (k = 0; k < 3; k++) {
		if (k == 0)
			unlink(cfg);
		begin(&t, "sess1");
		if (k < 2)
			write_file(cfg, k == 0 ? "memory: 1g\n" :
			    "policy: evil.yaml\n");
		else
			unlink(cfg);
		f = open_memstream(&out, &len);
		assert_int_equal(launch_trust_end(&t, "sess1", f), 1);
		fclose(f);
		assert_non_null(strstr(out, k == 0 ? "created" : k == 1 ?
		    "changed" : "deleted"));
		assert_non_null(strstr(out, "aisb trust "));
		assert_non_null(strstr(out, cfg));
		free(out);
		out = NULL;
		/* refused, naming the file, the session and the way out */
		assert_int_equal(check(cfg, err, sizeof(err)), -1);
		assert_non_null(strstr(err, cfg));
		assert_non_null(strstr(err, "session sess1"));
		assert_non_null(strstr(err, "aisb trust"));
		/* the untouched policy is not */
		assert_int_equal(check(pol, err, sizeof(err)), 0);
		/* accepted: read again */
		f = open_memstream(&out, &len);
		assert_int_equal(launch_trust_accept(envp, cfg, f, err,
		    sizeof(err)), 0);
		fclose(f);
		assert_non_null(strstr(out, "accepted"));
		free(out);
		out = NULL;
		assert_int_equal(check(cfg, err, sizeof(err)), 0);
		assert_int_equal(markers(), 0);
		/* the next round starts from what was accepted */
		if (k == 0)
			write_file(cfg, text[1]);
	}
	/* nothing to accept */
	f = open_memstream(&out, &len);
	assert_int_equal(launch_trust_accept(envp, cfg, f, err, sizeof(err)),
	    1);
	fclose(f);
	assert_non_null(strstr(out, "nothing to accept"));
	free(out);
}

static void
test_undone(void **state)
{
	struct launch_trust	 t;
	char			 err[2048];

	(void)state;
	write_file(cfg, "net: none\n");
	begin(&t, "sess2");
	write_file(cfg, "memory: 1g\n");
	assert_int_equal(launch_trust_end(&t, "sess2", stderr), 1);
	assert_int_equal(check(cfg, err, sizeof(err)), -1);
	/* put back as it was: read again, and the marker goes */
	write_file(cfg, "net: none\n");
	assert_int_equal(check(cfg, err, sizeof(err)), 0);
	assert_int_equal(markers(), 0);
	unlink(cfg);
}

/*
 * A launcher killed before its end: the marker stays without "after";
 * while a launcher of that pid and start time runs the change is not
 * yet judged final; once gone, the file alone decides.
 */
static void
test_killed_launcher(void **state)
{
	struct launch_trust	 t;
	char			 err[2048], path[PATH_MAX + 80], *text;
	FILE			*f;
	long			 size;

	(void)state;
	write_file(cfg, "net: none\n");
	begin(&t, "sess3");
	write_file(cfg, "memory: 1g\n");
	/* this launcher still runs: a change now is refused, as it goes on */
	assert_int_equal(check(cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "while bind session sess3 runs"));
	assert_int_equal(launch_trust_accept(envp, cfg, stderr, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "still runs"));
	/* its launcher dies: a pid that is no process of ours */
	snprintf(path, sizeof(path), "%s/%s", t.dir, t.f[0].marker);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)size + 1);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	{
		char	*l = strstr(text, "launcher "), *e = strchr(l, '\n');
		char	 fixed[2048];

		snprintf(fixed, sizeof(fixed), "%.*slauncher 999999999 1%s",
		    (int)(l - text), text, e);
		write_file(path, fixed);
	}
	free(text);
	assert_int_equal(check(cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "by the sandboxed command of session "
	    "sess3"));
	assert_int_equal(launch_trust_accept(envp, cfg, stderr, err,
	    sizeof(err)), 0);
	assert_int_equal(check(cfg, err, sizeof(err)), 0);
	unlink(cfg);
	/* the policy's marker of that session: unchanged, and it goes */
	assert_int_equal(check(pol, err, sizeof(err)), 0);
}

/* Through the options: the project config is refused before it is read. */
static void
test_resolve(void **state)
{
	struct launch_trust	 t;
	struct launch_opts	 o;
	char			 err[2048], wsflag[300];
	char			*argv[] = { (char *)"aisb", wsflag, (char *)"cmd",
	    NULL };

	(void)state;
	snprintf(wsflag, sizeof(wsflag), "--workspace=%s", ws);
	begin(&t, "sess4");
	write_file(cfg, "net: none\n");
	assert_int_equal(launch_trust_end(&t, "sess4", stderr), 1);
	assert_int_equal(launch_opts_resolve(&o, 3, argv, envp, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "session sess4"));
	launch_opts_free(&o);
	assert_int_equal(launch_trust_accept(envp, cfg, stderr, err,
	    sizeof(err)), 0);
	assert_int_equal(launch_opts_resolve(&o, 3, argv, envp, err,
	    sizeof(err)), 0);
	assert_int_equal(o.src[LO_NET], LAUNCH_SRC_PROJECT);
	launch_opts_free(&o);
	unlink(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_changed_then_accepted),
		cmocka_unit_test(test_undone),
		cmocka_unit_test(test_killed_launcher),
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
