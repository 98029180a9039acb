/*
 * aisb.exe's pure logic (launcher/win32/wlaunch.h), on Linux: its options
 * and their refusals, the gate and its credential file, the state paths,
 * the runner's argv (parsed back by the runner's own parser, so the two
 * cannot drift apart), the session's exit code from a result, the
 * launcher file and the record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "win32/wlaunch.h"

static char err[512];

#define ARGC(a)	((int)(sizeof(a) / sizeof(a[0])))
#define TESTV	WINRUN_TEST_ENV_VALUE
#define RID	"0123456789abcdef0123456789abcdef"

static void
expect_refused(int argc, char *const *argv, const char *test_env,
    const char *want)
{
	struct wlaunch_opts o;

	err[0] = '\0';
	assert_int_equal(wlaunch_opts_parse(&o, argc, argv, test_env, err,
	    sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
}

static void
opts_run(void **state)
{
	char *const argv[] = { "aisb", "--workspace", "C:\\w", "--apply",
	    "never", "--snapshot-exclude", "*.log", "--snapshot-exclude=tmp/",
	    "--timeout", "5", "--memory=64", "--procs", "4", "--cpu", "9",
	    "--env", "LANG", "--quiet", "--gate", "127.0.0.1:8080",
	    "--gate-credential-file", "C:\\c.txt", "--", "cmd", "/c", "x" };
	char *const plain[] = { "aisb", "tool.exe", "--flag" };
	char *const words[] = { "aisb", "--", "changes" };
	struct wlaunch_opts o;

	(void)state;
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(argv), argv, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_RUN);
	assert_string_equal(o.workspace, "C:\\w");
	assert_int_equal(o.apply, DRAFT_APPLY_NEVER);
	assert_int_equal(o.nexclude, 2);
	assert_string_equal(o.exclude[1], "tmp/");
	assert_string_equal(o.timeout, "5");
	assert_string_equal(o.memory, "64");
	assert_string_equal(o.procs, "4");
	assert_string_equal(o.cpu, "9");
	assert_int_equal(o.nenv, 1);
	assert_int_equal(o.quiet, 1);
	assert_int_equal(o.gate_port, 8080);
	assert_string_equal(o.cred_file, "C:\\c.txt");
	assert_int_equal(o.argc, 3);
	assert_string_equal(o.argv[0], "cmd");

	/* the command's own options are its own; defaults */
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(plain), plain, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.argc, 2);
	assert_string_equal(o.argv[1], "--flag");
	assert_int_equal(o.apply, DRAFT_APPLY_AUTO);
	assert_null(o.workspace);
	assert_null(o.timeout);
	assert_int_equal(o.gate_port, 0);
	/* after --, a subcommand's name is a command */
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(words), words, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_RUN);
	assert_string_equal(o.argv[0], "changes");
}

static void
opts_subcommands(void **state)
{
	char *const ch[] = { "aisb", "changes", "0123456789abcdef01234567",
	    "--diff" };
	char *const ap[] = { "aisb", "apply", "0123456789abcdef01234567" };
	char *const tx[] = { "aisb", "transactions" };
	char *const cl[] = { "aisb", "clean" };
	char *const doc[] = { "aisb", "doctor" };
	char *const help[] = { "aisb", "--help" };
	char *const noid[] = { "aisb", "apply" };
	char *const badid[] = { "aisb", "discard", "..\\..\\x" };
	char *const longid[] = { "aisb", "recover", RID };
	char *const extra[] = { "aisb", "apply", "0123456789abcdef01234567",
	    "x" };
	char *const badopt[] = { "aisb", "apply", "--diff",
	    "0123456789abcdef01234567" };
	char *const txarg[] = { "aisb", "transactions", "x" };
	struct wlaunch_opts o;

	(void)state;
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(ch), ch, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_CHANGES);
	assert_int_equal(o.diff, 1);
	assert_string_equal(o.id, "0123456789abcdef01234567");
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(ap), ap, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_APPLY);
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(tx), tx, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_TRANSACTIONS);
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(cl), cl, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_CLEAN);
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(doc), doc, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_DOCTOR);
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(help), help, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.cmd, WLAUNCH_HELP);
	{
		char *const ver[] = { "aisb", "--version" };

		assert_int_equal(wlaunch_opts_parse(&o, ARGC(ver), ver, NULL,
		    err, sizeof(err)), 0);
		assert_int_equal(o.cmd, WLAUNCH_VERSION);
	}
	expect_refused(ARGC(noid), noid, NULL, "which session");
	expect_refused(ARGC(badid), badid, NULL, "not a session id");
	expect_refused(ARGC(longid), longid, NULL, "not a session id");
	expect_refused(ARGC(extra), extra, NULL, "is extra");
	expect_refused(ARGC(badopt), badopt, NULL, "unknown option");
	expect_refused(ARGC(txarg), txarg, NULL, "is extra");
}

/*
 * The launcher passes --timeout, --memory, --procs and --cpu on to the
 * runner as written: it takes exactly the values the runner takes, and
 * refuses the others in the runner's words (one check, opts.c).
 */
static void
opts_numbers_as_runner(void **state)
{
	static const char *const opt[] = { "--timeout", "--memory", "--procs",
	    "--cpu" };
	static const char *const val[] = { "0", "1", "16", "60", "1024",
	    "1025", "65536", "65537", "86400", "86401", "0000000000060",
	    "00000000000000000016", "000000000000000000016", "", "1x", "-1",
	    "+5", " 5", "99999999999999999999" };
	struct wlaunch_opts	 o;
	struct winrun_opts	 r;
	char			 rerr[512];
	size_t			 i, j;
	int			 lrc, rrc;

	(void)state;
	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		for (j = 0; j < sizeof(val) / sizeof(val[0]); j++) {
			char *const la[] = { "aisb", (char *)opt[i],
			    (char *)val[j], "x" };
			char *const ra[] = { "aisb-run", "--lease", "C:\\l",
			    "--result", "C:\\r", (char *)opt[i],
			    (char *)val[j], "--", "x" };

			err[0] = rerr[0] = '\0';
			lrc = wlaunch_opts_parse(&o, ARGC(la), la, NULL, err,
			    sizeof(err));
			rrc = winrun_opts_parse(&r, ARGC(ra), ra, NULL, rerr,
			    sizeof(rerr));
			if (lrc != rrc || strcmp(err, rerr) != 0)
				fail_msg("%s \"%s\": launcher %d \"%s\", runner "
				    "%d \"%s\"", opt[i], val[j], lrc, err, rrc,
				    rerr);
		}
}

static void
opts_refused(void **state)
{
	char *const none[] = { "aisb" };
	char *const nocmd[] = { "aisb", "--quiet", "--" };
	char *const unknown[] = { "aisb", "--bogus", "x" };
	char *const novalue[] = { "aisb", "x", "--timeout" };
	char *const noval2[] = { "aisb", "--timeout" };
	char *const apply[] = { "aisb", "--apply", "yes", "x" };
	char *const timeout[] = { "aisb", "--timeout", "86401", "x" };
	char *const memory[] = { "aisb", "--memory", "15", "x" };
	char *const procs[] = { "aisb", "--procs", "0", "x" };
	char *const cpu[] = { "aisb", "--cpu", "-1", "x" };
	char *const huge[] = { "aisb", "--procs", "99999999999999999999", "x" };
	char *const env[] = { "aisb", "--env", "GITHUB_TOKEN", "x" };
	char *const envname[] = { "aisb", "--env", "A=B", "x" };
	char *const gate1[] = { "aisb", "--gate", "192.0.2.1:8080", "x" };
	char *const gate2[] = { "aisb", "--gate", "127.0.0.1:0", "x" };
	char *const gate3[] = { "aisb", "--gate", "127.0.0.1:65536", "x" };
	char *const gate4[] = { "aisb", "--gate", "localhost:80", "x" };
	char *const credonly[] = { "aisb", "--gate-credential-file", "C:\\c",
	    "x" };
	char *const noac[] = { "aisb", "--no-appcontainer", "x" };
	char *const ws[] = { "aisb", "--workspace", "", "x" };
	char *const wsnl[] = { "aisb", "--workspace", "a\nb", "x" };
	char *const excl[] = { "aisb", "--snapshot-exclude", "", "x" };
	struct wlaunch_opts o;

	(void)state;
	expect_refused(ARGC(none), none, NULL, "no command");
	expect_refused(ARGC(nocmd), nocmd, NULL, "no command");
	expect_refused(ARGC(unknown), unknown, NULL, "unknown option");
	/* after the command's first word, everything is the command's */
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(novalue), novalue, NULL,
	    err, sizeof(err)), 0);
	expect_refused(ARGC(noval2), noval2, NULL, "needs a value");
	expect_refused(ARGC(apply), apply, NULL, "auto, ask or never");
	expect_refused(ARGC(timeout), timeout, NULL, "from 0 to 86400");
	expect_refused(ARGC(memory), memory, NULL, "from 16 to 65536");
	expect_refused(ARGC(procs), procs, NULL, "from 1 to 1024");
	expect_refused(ARGC(cpu), cpu, NULL, "not a number");
	expect_refused(ARGC(huge), huge, NULL, "not a number");
	expect_refused(ARGC(env), env, NULL, "credential");
	expect_refused(ARGC(envname), envname, NULL, "not a variable name");
	expect_refused(ARGC(gate1), gate1, NULL, "127.0.0.1:PORT");
	expect_refused(ARGC(gate2), gate2, NULL, "1 to 65535");
	expect_refused(ARGC(gate3), gate3, NULL, "1 to 65535");
	expect_refused(ARGC(gate4), gate4, NULL, "127.0.0.1:PORT");
	expect_refused(ARGC(credonly), credonly, NULL, "needs --gate");
	expect_refused(ARGC(noac), noac, NULL, "test suite only");
	expect_refused(ARGC(noac), noac, "yes", "test suite only");
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(noac), noac, TESTV, err,
	    sizeof(err)), 0);
	assert_int_equal(o.no_appcontainer, 1);
	expect_refused(ARGC(ws), ws, NULL, "--workspace");
	expect_refused(ARGC(wsnl), wsnl, NULL, "--workspace");
	expect_refused(ARGC(excl), excl, NULL, "--snapshot-exclude");
}

static void
opts_bounds(void **state)
{
	char *argv[2 * DRAFT_MAX_EXCLUDE + WINRUN_ARGS_MAX + 8];
	char buf[DRAFT_MAX_EXCLUDE + 2][8], want[32];
	struct wlaunch_opts o;
	int i, n = 0;

	(void)state;
	/* one exclude pattern past the bound */
	argv[n++] = "aisb";
	for (i = 0; i <= DRAFT_MAX_EXCLUDE && n + 2 < ARGC(argv); i++) {
		snprintf(buf[i], sizeof(buf[i]), "p%d", i);
		argv[n++] = "--snapshot-exclude";
		argv[n++] = buf[i];
	}
	argv[n++] = "x";
	snprintf(want, sizeof(want), "at most %d", DRAFT_MAX_EXCLUDE);
	expect_refused(n, argv, NULL, want);
	/* a command of WINRUN_ARGS_MAX + 1 words */
	n = 0;
	argv[n++] = "aisb";
	for (i = 0; i <= WINRUN_ARGS_MAX; i++)
		argv[n++] = "w";
	expect_refused(n, argv, NULL, "at most 256");
	n--;
	assert_int_equal(wlaunch_opts_parse(&o, n, argv, NULL, err,
	    sizeof(err)), 0);
	/* an option name past its buffer is unknown, not cut */
	{
		char *const longopt[] = { "aisb",
		    "--workspace-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1", "x" };

		expect_refused(ARGC(longopt), longopt, NULL, "unknown option");
	}
}

static void
credential(void **state)
{
	char cred[WLAUNCH_CRED_USER_MAX + WLAUNCH_CRED_SECRET_MAX + 2];
	char user[WLAUNCH_CRED_USER_MAX + 1], big[WLAUNCH_CRED_FILE_MAX + 2];
	/* Zq9 stands for the secret: it must never be in an error */
	static const char *bad[] = {
		"",			/* nothing */
		"Zq9",			/* no colon */
		":Zq9",			/* no user */
		"user:",		/* no secret */
		"user:Z q9",		/* a space */
		"user:Zq9@x",		/* would end the userinfo */
		"user:Zq9/x",
		"user:Zq9:x",		/* a second colon */
		"u~Zq9:x",		/* ~ only in the secret */
		"user:Zq9\nmore",	/* two lines */
		"user:Zq9\n\n",
		"user:Zq9\x01",
	};
	size_t i;

	(void)state;
	assert_int_equal(wlaunch_cred_parse("alice:s3cr-et_~.x\r\n", 19, cred,
	    sizeof(cred), user, err, sizeof(err)), 0);
	assert_string_equal(cred, "alice:s3cr-et_~.x");
	assert_string_equal(user, "alice");
	assert_int_equal(wlaunch_cred_parse("session-ab:0123", 15, cred,
	    sizeof(cred), user, err, sizeof(err)), 0);
	assert_string_equal(user, "session-ab");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (wlaunch_cred_parse(bad[i], strlen(bad[i]), cred,
		    sizeof(cred), user, err, sizeof(err)) != -1)
			fail_msg("accepted credential #%zu", i);
		/* the file's content never appears in the error */
		if (err[0] == '\0' || strstr(err, "Zq9") != NULL ||
		    strstr(err, "q9") != NULL)
			fail_msg("error \"%s\" quotes the file", err);
	}
	/* bounds: the user, the secret, the file */
	memset(big, 'a', sizeof(big));
	big[WLAUNCH_CRED_USER_MAX + 1] = ':';
	assert_int_equal(wlaunch_cred_parse(big, WLAUNCH_CRED_USER_MAX + 3,
	    cred, sizeof(cred), user, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "user is longer"));
	big[WLAUNCH_CRED_USER_MAX + 1] = 'a';
	big[1] = ':';
	assert_int_equal(wlaunch_cred_parse(big, 2 + WLAUNCH_CRED_SECRET_MAX,
	    cred, sizeof(cred), user, err, sizeof(err)), 0);
	assert_int_equal(wlaunch_cred_parse(big, 3 + WLAUNCH_CRED_SECRET_MAX,
	    cred, sizeof(cred), user, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "secret must be"));
	assert_int_equal(wlaunch_cred_parse(big, sizeof(big), cred,
	    sizeof(cred), user, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));
	/* the longest credential still makes a proxy URL */
	{
		char env[512];

		big[WLAUNCH_CRED_USER_MAX] = ':';
		big[1] = 'a';
		assert_int_equal(wlaunch_cred_parse(big, WLAUNCH_CRED_USER_MAX +
		    1 + WLAUNCH_CRED_SECRET_MAX, cred, sizeof(cred), user, err,
		    sizeof(err)), 0);
		assert_true(winrun_gate_env(8080, cred, env, sizeof(env)) > 0);
	}
}

static void
paths(void **state)
{
	char out[WINRUN_PATH_MAX], lad[WINRUN_PATH_MAX + 8];

	(void)state;
	assert_int_equal(wlaunch_state_path("C:\\Users\\a\\AppData\\Local", NULL,
	    out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "C:\\Users\\a\\AppData\\Local\\aisb\\sessions");
	assert_int_equal(wlaunch_state_path("C:\\L\\", "0123456789abcdef01234567",
	    out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "C:\\L\\aisb\\sessions\\0123456789abcdef01234567");
	assert_int_equal(wlaunch_state_path("C:\\", NULL, out, sizeof(out), err,
	    sizeof(err)), 0);
	assert_string_equal(out, "C:\\aisb\\sessions");
	assert_int_equal(wlaunch_state_path(NULL, NULL, out, sizeof(out), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "LOCALAPPDATA is not set"));
	assert_int_equal(wlaunch_state_path("relative", NULL, out, sizeof(out),
	    err, sizeof(err)), -1);
	assert_int_equal(wlaunch_state_path("C:\\L", "..\\x", out, sizeof(out),
	    err, sizeof(err)), -1);
	assert_int_equal(wlaunch_state_path("C:\\L", "0123456789ABCDEF01234567",
	    out, sizeof(out), err, sizeof(err)), -1);
	/* too long for the runner's files inside it */
	memset(lad, 'a', sizeof(lad));
	memcpy(lad, "C:\\", 3);
	lad[WINRUN_PATH_MAX - 40] = '\0';
	assert_int_equal(wlaunch_state_path(lad, "0123456789abcdef01234567",
	    out, sizeof(out), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	assert_true(winrun_path_absolute("C:\\x"));
	assert_true(winrun_path_absolute("c:/x"));
	assert_true(winrun_path_absolute("\\\\srv\\share"));
	assert_false(winrun_path_absolute("C:x"));
	assert_false(winrun_path_absolute("\\x"));
	assert_false(winrun_path_absolute("/tmp"));
	assert_false(winrun_path_absolute(""));
}

/* The argv the launcher builds is what the runner's parser accepts. */
static void
runner_argv(void **state)
{
	char *const in[] = { "aisb", "--timeout", "7", "--memory", "32",
	    "--procs", "3", "--cpu", "2", "--env", "LANG", "--gate",
	    "127.0.0.1:3128", "--no-appcontainer", "--", "tool.exe", "a b",
	    "--", "c" };
	char *const plain[] = { "aisb", "tool.exe" };
	struct wlaunch_opts o;
	struct winrun_opts ro;
	char **argv;
	int argc;

	(void)state;
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(in), in, TESTV, err,
	    sizeof(err)), 0);
	assert_int_equal(wlaunch_runner_argv(&o, "C:\\p\\aisb-run.exe",
	    "C:\\s\\0123456789abcdef01234567", RID, "C:\\s\\x\\gate.env",
	    &argv, &argc, err, sizeof(err)), 0);
	assert_string_equal(argv[0], "C:\\p\\aisb-run.exe");
	assert_null(argv[argc]);
	assert_int_equal(winrun_opts_parse(&ro, argc, argv, TESTV, err,
	    sizeof(err)), 0);
	assert_string_equal(ro.run_id, RID);
	assert_string_equal(ro.lease,
	    "C:\\s\\0123456789abcdef01234567\\lease.json");
	assert_string_equal(ro.result,
	    "C:\\s\\0123456789abcdef01234567\\result.json");
	assert_string_equal(ro.stage, "C:\\s\\0123456789abcdef01234567\\stage");
	assert_int_equal(ro.keep_stage, 1);
	assert_int_equal(ro.no_appcontainer, 1);
	assert_int_equal(ro.gate_port, 3128);
	assert_string_equal(ro.env_file, "C:\\s\\x\\gate.env");
	assert_true(ro.timeout_ms == 7000);
	assert_true(ro.memory == 32ULL * 1024 * 1024);
	assert_int_equal(ro.procs, 3);
	assert_true(ro.cpu_ms == 2000);
	assert_int_equal(ro.n_env_pass, 1);
	assert_string_equal(ro.env_pass[0], "LANG");
	assert_int_equal(ro.argc, 4);
	assert_string_equal(ro.argv[0], "tool.exe");
	assert_string_equal(ro.argv[1], "a b");
	assert_string_equal(ro.argv[2], "--");
	/* the test mode is the only difference: the runner refuses it
	 * without the variable, as it would refuse aisb's */
	assert_int_equal(winrun_opts_parse(&ro, argc, argv, NULL, err,
	    sizeof(err)), -1);
	wlaunch_argv_free(argv);

	/* defaults: no limit, gate or test flag passed */
	assert_int_equal(wlaunch_opts_parse(&o, ARGC(plain), plain, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(wlaunch_runner_argv(&o, "C:\\aisb-run.exe", "C:\\s",
	    RID, NULL, &argv, &argc, err, sizeof(err)), 0);
	assert_int_equal(argc, 12);
	assert_int_equal(winrun_opts_parse(&ro, argc, argv, NULL, err,
	    sizeof(err)), 0);
	assert_true(ro.timeout_ms == WINRUN_DEF_TIMEOUT_MS);
	assert_int_equal(ro.gate_port, 0);
	assert_null(ro.env_file);
	wlaunch_argv_free(argv);
	wlaunch_argv_free(NULL);

	/* a gate needs its env file; a bad run id is refused */
	o.gate_port = 1;
	assert_int_equal(wlaunch_runner_argv(&o, "C:\\r", "C:\\s", RID, NULL,
	    &argv, &argc, err, sizeof(err)), -1);
	o.gate_port = 0;
	assert_int_equal(wlaunch_runner_argv(&o, "C:\\r", "C:\\s", "abc", NULL,
	    &argv, &argc, err, sizeof(err)), -1);
}

static void
codes(void **state)
{
	struct winrun_result r;

	(void)state;
	assert_int_equal(wlaunch_code(NULL), 77);
	memset(&r, 0, sizeof(r));
	r.state = WINRUN_EXITED;
	assert_int_equal(wlaunch_code(&r), 0);
	r.exit_code = 3;
	assert_int_equal(wlaunch_code(&r), 3);
	r.exit_code = 0xC000013AU;	/* STATUS_CONTROL_C_EXIT */
	assert_int_equal(wlaunch_code(&r), 1);
	r.state = WINRUN_KILLED;
	r.exit_code = 0;
	r.hits = WINRUN_HIT_TIMEOUT;
	assert_int_equal(wlaunch_code(&r), 124);
	r.hits = WINRUN_HIT_CPU;
	assert_int_equal(wlaunch_code(&r), 124);
	r.hits = WINRUN_HIT_CANCEL;
	assert_int_equal(wlaunch_code(&r), 130);
	r.hits = WINRUN_HIT_PARENT;
	assert_int_equal(wlaunch_code(&r), 130);
	r.state = WINRUN_FAILED;
	r.hits = 0;
	assert_int_equal(wlaunch_code(&r), 77);
}

static void
launcher_file(void **state)
{
	char buf[WLAUNCH_LAUNCHER_MAX];
	uint32_t pid;
	uint64_t start;

	(void)state;
	assert_true(wlaunch_launcher_format(4294967295U,
	    18446744073709551615ULL, buf, sizeof(buf)) > 0);
	assert_int_equal(wlaunch_launcher_parse(buf, &pid, &start), 0);
	assert_true(pid == 4294967295U && start == 18446744073709551615ULL);
	assert_int_equal(wlaunch_launcher_parse("42 7", &pid, &start), 0);
	assert_true(pid == 42 && start == 7);
	assert_int_equal(wlaunch_launcher_parse("", &pid, &start), -1);
	assert_int_equal(wlaunch_launcher_parse("0 7\n", &pid, &start), -1);
	assert_int_equal(wlaunch_launcher_parse("42\n", &pid, &start), -1);
	assert_int_equal(wlaunch_launcher_parse("42 x\n", &pid, &start), -1);
	assert_int_equal(wlaunch_launcher_parse("4294967296 1\n", &pid,
	    &start), -1);
	assert_int_equal(wlaunch_launcher_parse("1 18446744073709551616\n",
	    &pid, &start), -1);
	assert_int_equal(wlaunch_launcher_format(1, 1, buf, 3), -1);
}

static void
record(void **state)
{
	struct winrun_result r;
	struct draft_info d;
	struct wlaunch_record rec;
	char buf[4096];

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&d, 0, sizeof(d));
	memset(&rec, 0, sizeof(rec));
	r.state = WINRUN_KILLED;
	r.hits = WINRUN_HIT_TIMEOUT | WINRUN_HIT_CPU;
	r.exit_code = 124;
	r.wall_ms = 1000;
	snprintf(d.outcome, sizeof(d.outcome), "%s", DRAFT_FAILED);
	rec.id = "0123456789abcdef01234567";
	rec.run_id = RID;
	rec.workspace = "C:\\w";
	rec.cmdline = "tool.exe a";
	rec.gate_port = 3128;
	rec.gate_user = "alice";
	rec.result = &r;
	rec.draft = &d;
	rec.code = 124;
	assert_true(wlaunch_record_format(&rec, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nid 0123456789abcdef01234567\n"));
	assert_non_null(strstr(buf, "\ncommand tool.exe a\n"));
	assert_non_null(strstr(buf, "\ngate 127.0.0.1:3128\ngate_user alice\n"));
	assert_non_null(strstr(buf, "\nstate killed\n"));
	assert_non_null(strstr(buf, "\nlimits_hit timeout cpu\n"));
	assert_non_null(strstr(buf, "\nappcontainer false\n"));
	assert_non_null(strstr(buf, "\noutcome failed\n"));
	assert_non_null(strstr(buf, "\ndigest -\n"));
	assert_non_null(strstr(buf, "\nexit 124\n"));
	/* no result; a command line with a line break is left out */
	rec.result = NULL;
	rec.cmdline = "a\nb";
	assert_true(wlaunch_record_format(&rec, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nstate none\n"));
	assert_null(strstr(buf, "command"));
	assert_int_equal(wlaunch_record_format(&rec, buf, 40), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts_run),
		cmocka_unit_test(opts_subcommands),
		cmocka_unit_test(opts_refused),
		cmocka_unit_test(opts_numbers_as_runner),
		cmocka_unit_test(opts_bounds),
		cmocka_unit_test(credential),
		cmocka_unit_test(paths),
		cmocka_unit_test(runner_argv),
		cmocka_unit_test(codes),
		cmocka_unit_test(launcher_file),
		cmocka_unit_test(record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
