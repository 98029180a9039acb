/*
 * The Windows runner's pure logic (launcher/win32/winrun.h), on Linux:
 * options, command-line quoting (checked against the splitting rules of
 * the C runtime, re-implemented here), the environment allowlist, the
 * handle list, run ids, lease/result documents and aisb clean's decisions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "win32/winrun.h"

static char err[512];

#define ARGC(a)	((int)(sizeof(a) / sizeof(a[0])))

static void
opts_defaults(void **state)
{
	char *const argv[] = { "aisb-run", "--lease", "C:\\r\\lease.json",
	    "--result", "C:\\r\\result.json", "--", "cmd", "/c", "exit" };
	struct winrun_opts o;

	assert_int_equal(winrun_opts_parse(&o, ARGC(argv), argv, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(o.procs, 32);
	assert_true(o.memory == 1024ULL * 1024 * 1024);
	assert_true(o.timeout_ms == 120000);
	assert_true(o.cpu_ms == 0);
	assert_int_equal(o.gate_port, 0);
	assert_int_equal(o.no_appcontainer, 0);
	assert_int_equal(o.argc, 3);
	assert_string_equal(o.argv[0], "cmd");
	assert_string_equal(o.run_id, "");
	{
		/* GNU's --version: nothing else needed, nothing run */
		char *const ver[] = { "aisb-run", "--version" };

		assert_int_equal(winrun_opts_parse(&o, ARGC(ver), ver, NULL,
		    err, sizeof(err)), 0);
		assert_int_equal(o.version, 1);
		assert_int_equal(o.argc, 0);
	}
}

static void
opts_values(void **state)
{
	char *const argv[] = { "aisb-run", "--lease", "C:\\l", "--result",
	    "Z:/tmp/r", "--stage", "C:\\s", "--timeout", "5", "--memory", "64",
	    "--procs", "3", "--cpu", "7", "--env", "LANG", "--keep-stage",
	    "--run-id", "0123456789abcdef0123456789abcdef", "x.exe" };
	struct winrun_opts o;

	assert_int_equal(winrun_opts_parse(&o, ARGC(argv), argv, NULL, err,
	    sizeof(err)), 0);
	assert_true(o.timeout_ms == 5000);
	assert_true(o.memory == 64ULL << 20);
	assert_int_equal(o.procs, 3);
	assert_true(o.cpu_ms == 7000);
	assert_int_equal(o.n_env_pass, 1);
	assert_int_equal(o.keep_stage, 1);
	assert_string_equal(o.stage, "C:\\s");
	assert_string_equal(o.run_id, "0123456789abcdef0123456789abcdef");
	assert_int_equal(o.argc, 1);
}

static void
expect_refused(int argc, char *const *argv, const char *env,
    const char *needle)
{
	struct winrun_opts o;

	err[0] = '\0';
	assert_int_equal(winrun_opts_parse(&o, argc, argv, env, err,
	    sizeof(err)), -1);
	if (strstr(err, needle) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", err, needle);
}

static void
opts_refused(void **state)
{
	char *const noac[] = { "aisb-run", "--no-appcontainer", "--lease",
	    "C:\\l", "--result", "C:\\r", "--", "x" };
	char *const relpath[] = { "aisb-run", "--lease", "lease.json",
	    "--result", "C:\\r", "x" };
	char *const secret[] = { "aisb-run", "--env", "GITHUB_TOKEN", "x" };
	char *const secret2[] = { "aisb-run", "--env", "aws_secret_access_key",
	    "x" };
	char *const procs[] = { "aisb-run", "--procs", "0", "x" };
	char *const mem[] = { "aisb-run", "--memory", "1x", "x" };
	char *const big[] = { "aisb-run", "--timeout",
	    "99999999999999999999999", "x" };
	char *const nolease[] = { "aisb-run", "--result", "C:\\r", "x" };
	char *const nocmd[] = { "aisb-run", "--lease", "C:\\l", "--result",
	    "C:\\r", "--" };
	char *const unknown[] = { "aisb-run", "--bogus", "x" };
	char *const novalue[] = { "aisb-run", "--lease" };
	char *const gate[] = { "aisb-run", "--no-appcontainer", "--gate-port",
	    "8080", "--lease", "C:\\l", "--result", "C:\\r", "x" };
	char *const selftest[] = { "aisb-run", "--self-test", "x" };
	char *const runid[] = { "aisb-run", "--run-id", "ABC", "x" };
	char *const clean1[] = { "aisb-run", "--clean", "C:\\l" };
	char *const clean2[] = { "aisb-run", "--clean", "C:\\l",
	    "--stage-root", "C:\\s", "x" };
	char *const clean3[] = { "aisb-run", "--clean", "C:\\l",
	    "--stage-root", "C:\\s" };
	struct winrun_opts o;

	expect_refused(ARGC(noac), noac, NULL, "test suite only");
	expect_refused(ARGC(noac), noac, "1", "test suite only");
	assert_int_equal(winrun_opts_parse(&o, ARGC(noac), noac,
	    WINRUN_TEST_ENV_VALUE, err, sizeof(err)), 0);
	assert_int_equal(o.no_appcontainer, 1);
	expect_refused(ARGC(relpath), relpath, NULL, "not an absolute path");
	expect_refused(ARGC(secret), secret, NULL, "credential");
	expect_refused(ARGC(secret2), secret2, NULL, "credential");
	expect_refused(ARGC(procs), procs, NULL, "from 1 to 1024");
	expect_refused(ARGC(mem), mem, NULL, "not a number");
	expect_refused(ARGC(big), big, NULL, "not a number");
	expect_refused(ARGC(nolease), nolease, NULL, "--lease FILE");
	expect_refused(ARGC(nocmd), nocmd, NULL, "no command");
	expect_refused(ARGC(unknown), unknown, NULL, "unknown option");
	expect_refused(ARGC(novalue), novalue, NULL, "needs a value");
	/* one argv for both modes: the test mode takes --gate-port too */
	assert_int_equal(winrun_opts_parse(&o, ARGC(gate), gate,
	    WINRUN_TEST_ENV_VALUE, err, sizeof(err)), 0);
	assert_int_equal(o.gate_port, 8080);
	assert_int_equal(o.no_appcontainer, 1);
	expect_refused(ARGC(gate), gate, NULL, "test suite only");
	expect_refused(ARGC(selftest), selftest, NULL, "takes no command");
	expect_refused(ARGC(runid), runid, NULL, "hex digits");
	expect_refused(ARGC(clean1), clean1, NULL, "--stage-root");
	expect_refused(ARGC(clean2), clean2, NULL, "takes no command");
	assert_int_equal(winrun_opts_parse(&o, ARGC(clean3), clean3, NULL, err,
	    sizeof(err)), 0);
	assert_string_equal(o.clean, "C:\\l");
	assert_string_equal(o.stage_root, "C:\\s");
}

/*
 * The C runtime's split of a command line (parse_cmdline, as documented
 * for the Microsoft C runtime since 2008): 2n backslashes + quote -> n
 * backslashes and a quote toggle; 2n+1 + quote -> n and a literal quote;
 * a "" inside quotes -> a literal quote.
 */
static int
split(const char *s, char **out, int max)
{
	int n = 0, inq, word;
	char buf[4096];
	size_t b, bs, i;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			return n;
		b = 0;
		inq = 0;
		word = 1;
		while (word && *s != '\0') {
			for (bs = 0; *s == '\\'; s++)
				bs++;
			if (*s == '"') {
				for (i = 0; i < bs / 2; i++)
					buf[b++] = '\\';
				if (bs % 2) {
					buf[b++] = '"';
					s++;
				} else if (inq && s[1] == '"') {
					buf[b++] = '"';
					s += 2;
				} else {
					inq = !inq;
					s++;
				}
				continue;
			}
			for (i = 0; i < bs; i++)
				buf[b++] = '\\';
			if (*s == '\0')
				break;
			if (!inq && (*s == ' ' || *s == '\t'))
				word = 0;
			else
				buf[b++] = *s++;
		}
		buf[b] = '\0';
		assert_true(n < max);
		out[n++] = strdup(buf);
	}
}

static void
roundtrip(int argc, char *const *argv, const char *expect)
{
	char *line, *back[16];
	int n, i;

	assert_int_equal(winrun_cmdline(argc, argv, &line, err, sizeof(err)), 0);
	if (expect != NULL)
		assert_string_equal(line, expect);
	n = split(line, back, 16);
	assert_int_equal(n, argc);
	for (i = 0; i < n; i++) {
		assert_string_equal(back[i], argv[i]);
		free(back[i]);
	}
	free(line);
}

static void
cmdline_quoting(void **state)
{
	char *const a1[] = { "cmd.exe", "/c", "exit", "3" };
	char *const a2[] = { "x", "a b", "" };
	char *const a3[] = { "x", "say \"hi\"", "C:\\dir\\", "C:\\a b\\" };
	char *const a4[] = { "x", "\\\\\"", "tab\there", "a\\\\b" };
	char *const a5[] = { "x", "\"", "\\", "\"\"" };

	roundtrip(4, a1, "cmd.exe /c exit 3");
	roundtrip(3, a2, "x \"a b\" \"\"");
	roundtrip(4, a3, "x \"say \\\"hi\\\"\" C:\\dir\\ \"C:\\a b\\\\\"");
	roundtrip(4, a4, NULL);
	roundtrip(4, a5, NULL);
}

static void
cmdline_bounds(void **state)
{
	char *big = malloc(WINRUN_ARG_MAX + 2), *line;
	char *argv[8];
	int i;

	memset(big, 'a', WINRUN_ARG_MAX + 1);
	big[WINRUN_ARG_MAX + 1] = '\0';
	argv[0] = big;
	assert_int_equal(winrun_cmdline(1, argv, &line, err, sizeof(err)), -1);
	assert_null(line);
	assert_non_null(strstr(err, "at most"));
	/* 5 words of 8192 quotes each: over 32767 once quoted */
	memset(big, '"', WINRUN_ARG_MAX);
	big[WINRUN_ARG_MAX] = '\0';
	for (i = 0; i < 5; i++)
		argv[i] = big;
	assert_int_equal(winrun_cmdline(5, argv, &line, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "32767"));
	assert_int_equal(winrun_cmdline(0, argv, &line, err, sizeof(err)), -1);
	free(big);
}

/* the block as a list, checking its double-NUL end */
static int
entries(const char *b, size_t len, const char **out, int max)
{
	size_t off = 0;
	int n = 0;

	while (b[off] != '\0') {
		assert_true(n < max);
		out[n++] = b + off;
		off += strlen(b + off) + 1;
		assert_true(off < len);
	}
	assert_int_equal(off + 1, len);
	return n;
}

static void
envblock_allowlist(void **state)
{
	char *const host[] = { "Path=C:\\Windows", "GITHUB_TOKEN=ghp_x",
	    "=C:=C:\\work", "SystemRoot=C:\\Windows", "LANG=C", "HOMEPATH=\\u",
	    "AWS_SECRET_ACCESS_KEY=z", "SSH_AUTH_SOCK=/s", "windir=C:\\W",
	    "HOME=C:\\Users\\me", NULL };
	const char *pass[] = { "lang", "GITHUB_TOKEN" };
	const char *e[32];
	const char file[] = "# comment\r\nHTTPS_PROXY=http://u:cred@127.0.0.1:9\r\n"
	    "\nPATH=C:\\bin\nX=a=b\n";
	char *block;
	size_t len;
	int n;

	assert_int_equal(winrun_envblock(host, pass, 2, file, strlen(file),
	    "C:\\stage", &block, &len, err, sizeof(err)), 0);
	n = entries(block, len, e, 32);
	/* sorted without case; PATH from the file replaces the host's Path */
	assert_int_equal(n, 11);
	assert_string_equal(e[0], "AISB_SANDBOX=1");
	assert_string_equal(e[1], "HOME=C:\\stage");
	assert_string_equal(e[2], "HTTPS_PROXY=http://u:cred@127.0.0.1:9");
	assert_string_equal(e[3], "LANG=C");
	assert_string_equal(e[4], "PATH=C:\\bin");
	assert_string_equal(e[5], "SystemRoot=C:\\Windows");
	assert_string_equal(e[6], "TEMP=C:\\stage");
	assert_string_equal(e[7], "TMP=C:\\stage");
	assert_string_equal(e[8], "USERPROFILE=C:\\stage");
	assert_string_equal(e[9], "windir=C:\\W");
	assert_string_equal(e[10], "X=a=b");
	free(block);
}

static void
envblock_errors(void **state)
{
	char *block = NULL, *big;
	size_t len, i, off;
	const char bad[] = "OK=1\nnoequals\n";
	const char nul[] = "A=1\0B=2\n";

	assert_int_equal(winrun_envblock(NULL, NULL, 0, bad, strlen(bad), NULL,
	    &block, &len, err, sizeof(err)), -1);
	assert_null(block);
	assert_non_null(strstr(err, "line 2"));
	assert_int_equal(winrun_envblock(NULL, NULL, 0, nul, sizeof(nul) - 1,
	    NULL, &block, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL"));
	/* too many variables, and the value never in the message */
	big = malloc(WINRUN_ENVFILE_MAX + 1);
	for (off = 0, i = 0; i < WINRUN_ENV_MAX + 1; i++)
		off += (size_t)sprintf(big + off, "V%zu=secretvalue\n", i);
	assert_int_equal(winrun_envblock(NULL, NULL, 0, big, off, NULL, &block,
	    &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than"));
	assert_null(strstr(err, "secretvalue"));
	/* a value over its bound */
	memset(big, 'v', WINRUN_ENVVAL_MAX + 8);
	memcpy(big, "LONG=", 5);
	assert_int_equal(winrun_envblock(NULL, NULL, 0, big,
	    WINRUN_ENVVAL_MAX + 8, NULL, &block, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "LONG"));
	assert_int_equal(winrun_envblock(NULL, NULL, 0, big,
	    WINRUN_ENVFILE_MAX + 1, NULL, &block, &len, err, sizeof(err)), -1);
	free(big);
	assert_true(winrun_env_secret("npm_config__authToken"));
	assert_true(winrun_env_secret("OPENAI_API_KEY"));
	assert_false(winrun_env_secret("PATH"));
	assert_false(winrun_env_secret("KEYBOARD"));
	assert_true(winrun_env_default("systemroot"));
	assert_false(winrun_env_default("USERNAME"));
}

static void
handle_list(void **state)
{
	uintptr_t l[3], inv = (uintptr_t)-1;

	assert_int_equal(winrun_handle_list(4, 8, 8, inv, l), 2);
	assert_true(l[0] == 4 && l[1] == 8);
	assert_int_equal(winrun_handle_list(0, inv, 12, inv, l), 1);
	assert_true(l[0] == 12);
	assert_int_equal(winrun_handle_list(5, 6, 7, inv, l), 3);
	assert_int_equal(winrun_handle_list(0, 0, inv, inv, l), 0);
}

static void
ids(void **state)
{
	uint8_t rnd[16];
	char id[WINRUN_RUNID_LEN + 1], name[64];
	int i;

	for (i = 0; i < 16; i++)
		rnd[i] = (uint8_t)(i * 17);
	winrun_runid_format(rnd, id);
	assert_string_equal(id, "00112233445566778899aabbccddeeff");
	assert_true(winrun_runid_valid(id));
	winrun_profile_name(id, name, sizeof(name));
	assert_string_equal(name, "aisb.run.00112233445566778899aabbccddeeff");
	assert_int_equal(strlen(name), WINRUN_PROFILE_LEN);
	assert_true(winrun_profile_valid(name));
	assert_false(winrun_profile_valid("aisb.run.00112233445566778899AABBCCDDEEFF"));
	assert_false(winrun_profile_valid("aisb.run.00112233445566778899aabbccddeeff0"));
	assert_false(winrun_profile_valid("other.00112233445566778899aabbccddeeff"));
	assert_false(winrun_runid_valid("0011"));
}

static void
lease_roundtrip(void **state)
{
	struct winrun_lease l = { 0 }, back;
	char doc[WINRUN_DOC_MAX];
	int n;

	l.protocol = WINRUN_PROTOCOL;
	strcpy(l.run_id, "00112233445566778899aabbccddeeff");
	l.runner_pid = 4242;
	l.runner_start = 133000000000000000ULL;
	strcpy(l.profile, "aisb.run.00112233445566778899aabbccddeeff");
	strcpy(l.stage, "C:\\Users\\me\\stage \"q\"\\\x01");
	n = winrun_lease_encode(&l, doc, sizeof(doc));
	assert_true(n > 0);
	assert_non_null(strstr(doc, "\\u0001"));
	assert_int_equal(winrun_lease_decode(doc, (size_t)n, &back, err,
	    sizeof(err)), 0);
	assert_int_equal(back.runner_pid, 4242);
	assert_true(back.runner_start == l.runner_start);
	assert_string_equal(back.stage, l.stage);
	assert_string_equal(back.profile, l.profile);
	assert_string_equal(back.run_id, l.run_id);
	assert_string_equal(back.drive, "");
	/* a buffer too small is an error, not a cut document */
	assert_int_equal(winrun_lease_encode(&l, doc, 40), -1);
	/* the stage's drive and its raw target */
	strcpy(l.drive, "Y:");
	strcpy(l.drive_target, "\\??\\C:\\aisb\\s1");
	n = winrun_lease_encode(&l, doc, sizeof(doc));
	assert_true(n > 0);
	assert_int_equal(winrun_lease_decode(doc, (size_t)n, &back, err,
	    sizeof(err)), 0);
	assert_string_equal(back.drive, "Y:");
	assert_string_equal(back.drive_target, l.drive_target);
	/* a drive name longer than a letter is refused */
	assert_int_equal(winrun_lease_decode("{\"protocol\":1,\"run_id\":"
	    "\"00112233445566778899aabbccddeeff\",\"runner_pid\":1,"
	    "\"runner_start\":1,\"profile\":\"\",\"stage\":\"\","
	    "\"drive\":\"YY:\"}", 133, &back, err, sizeof(err)), -1);
}

static void
drive_letters(void **state)
{
	char t[WINRUN_DRIVE_TARGET_MAX], big[WINRUN_PATH_MAX + 16];

	(void)state;
	assert_int_equal(winrun_drive_target("C:\\s\\x", t, sizeof(t)), 0);
	assert_string_equal(t, "\\??\\C:\\s\\x");
	assert_string_equal(winrun_drive_stage(t), "C:\\s\\x");
	assert_null(winrun_drive_stage("C:\\s"));
	assert_null(winrun_drive_stage("\\Device\\HarddiskVolume2"));
	/* only an absolute drive path: no share, device, relative one */
	assert_int_equal(winrun_drive_target("\\\\srv\\s", t, sizeof(t)),
	    -1);
	assert_int_equal(winrun_drive_target("s\\x", t, sizeof(t)), -1);
	assert_int_equal(winrun_drive_target("C:s", t, sizeof(t)), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "C:\\", 3);
	assert_int_equal(winrun_drive_target(big, t, sizeof(t)), -1);
	/* from Z down, never A to C */
	assert_int_equal(winrun_drive_pick(0), 'Z');
	assert_int_equal(winrun_drive_pick(1u << 25), 'Y');
	assert_int_equal(winrun_drive_pick(~0u & ~(1u << 7)), 'H');
	assert_int_equal(winrun_drive_pick(~0u & ~7u), 0);
	assert_int_equal(winrun_drive_pick(~0u), 0);
	assert_true(winrun_drive_valid("D:"));
	assert_true(winrun_drive_valid("Z:"));
	assert_false(winrun_drive_valid("C:"));
	assert_false(winrun_drive_valid("d:"));
	assert_false(winrun_drive_valid("Q"));
	assert_false(winrun_drive_valid("Q:\\"));
}

static void
result_roundtrip(void **state)
{
	struct winrun_result r = { 0 }, back;
	char doc[WINRUN_DOC_MAX];
	int n;

	r.protocol = WINRUN_PROTOCOL;
	strcpy(r.run_id, "ffeeddccbbaa99887766554433221100");
	r.state = WINRUN_KILLED;
	r.exit_code = 0xC0000409u;
	r.hits = WINRUN_HIT_TIMEOUT | WINRUN_HIT_PROCS;
	r.wall_ms = 1234;
	r.user_ms = 5;
	r.kernel_ms = 6;
	r.peak_procs = 33;
	r.peak_memory = 1ULL << 33;
	r.appcontainer = 1;
	r.profile_cleanup = WINRUN_CLEAN_REMOVED;
	r.stage_cleanup = WINRUN_CLEAN_FAILED;
	r.drive_cleanup = WINRUN_CLEAN_REMOVED;
	strcpy(r.error, "stage: Access is denied.\r\n");
	n = winrun_result_encode(&r, doc, sizeof(doc));
	assert_true(n > 0);
	assert_non_null(strstr(doc, "\"limits_hit\":[\"timeout\",\"processes\"]"));
	assert_non_null(strstr(doc, "\"cleanup\":{\"profile\":\"removed\","
	    "\"stage\":\"failed\",\"drive\":\"removed\"}"));
	assert_int_equal(winrun_result_decode(doc, (size_t)n, &back, err,
	    sizeof(err)), 0);
	assert_int_equal(back.drive_cleanup, WINRUN_CLEAN_REMOVED);
	assert_int_equal(back.state, WINRUN_KILLED);
	assert_true(back.exit_code == 0xC0000409u);
	assert_int_equal(back.hits, r.hits);
	assert_true(back.peak_memory == r.peak_memory);
	assert_int_equal(back.peak_procs, 33);
	assert_int_equal(back.profile_cleanup, WINRUN_CLEAN_REMOVED);
	assert_int_equal(back.stage_cleanup, WINRUN_CLEAN_FAILED);
	assert_string_equal(back.error, r.error);
	/* no limit hit: an empty array */
	r.hits = 0;
	n = winrun_result_encode(&r, doc, sizeof(doc));
	assert_non_null(strstr(doc, "\"limits_hit\":[]"));
	assert_int_equal(winrun_result_decode(doc, (size_t)n, &back, err,
	    sizeof(err)), 0);
	assert_int_equal(back.hits, 0);
}

static void
decode_errors(void **state)
{
	static const struct { const char *doc, *needle; } cases[] = {
		{ "{\"protocol\":2}", "protocol 2" },
		{ "{\"protocol\":1,\"run_id\":\"00112233445566778899aabbccddeeff\","
		  "\"runner_pid\":1,\"runner_start\":0,\"profile\":\"\"}",
		  "\"stage\" is missing" },
		{ "{\"protocol\":1} x", "bytes after" },
		{ "{\"a\":{\"b\":{\"c\":1}}}", "nested too deep" },
		{ "{\"a\":\"\\ud800\"}", "surrogate" },
		{ "{\"a\":\"x", "unterminated" },
		{ "{\"a\":-1}", "unexpected value" },
		{ "{\"a\":99999999999999999999}", "too large" },
		{ "{\"protocol\":\"1\"}", "wrong type" },
		{ "{\"runner_pid\":0}", "out of range" },
		{ "[1]", "object was expected" },
		{ "{\"a\":1,}", "string was expected" },
		{ "{\"a\" 1}", "':'" },
	};
	struct winrun_lease l;
	struct winrun_result r;
	char *big;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(winrun_lease_decode(cases[i].doc,
		    strlen(cases[i].doc), &l, err, sizeof(err)), -1);
		if (strstr(err, cases[i].needle) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err,
			    cases[i].needle);
	}
	assert_int_equal(winrun_result_decode("{\"protocol\":1,\"state\":\"odd\"}",
	    29, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "state"));
	assert_int_equal(winrun_result_decode("{\"limits_hit\":[\"x\"]}", 20, &r,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown limit"));
	big = calloc(1, WINRUN_DOC_MAX + 2);
	memset(big, ' ', WINRUN_DOC_MAX + 1);
	big[0] = '{';
	big[WINRUN_DOC_MAX] = '}';
	assert_int_equal(winrun_lease_decode(big, WINRUN_DOC_MAX + 1, &l, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "at most"));
	free(big);
}

static void
clean_decisions(void **state)
{
	struct winrun_lease l = { 0 };
	struct winrun_proc_seen seen = { 0 };
	char why[256];
	const char *root = "C:\\Users\\me\\AppData\\Local\\aisb\\stages";

	l.protocol = WINRUN_PROTOCOL;
	strcpy(l.run_id, "00112233445566778899aabbccddeeff");
	l.runner_pid = 77;
	l.runner_start = 1000;
	strcpy(l.profile, "aisb.run.00112233445566778899aabbccddeeff");
	strcpy(l.stage, "C:\\Users\\me\\AppData\\Local\\aisb\\stages\\r1");

	/* dead runner: remove exactly its things */
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REMOVE);
	/* its drive: a letter mapped to a stage inside the root */
	strcpy(l.drive, "Y:");
	strcpy(l.drive_target, "\\??\\C:\\Users\\me\\AppData\\Local"
	    "\\aisb\\stages\\r1");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REMOVE);
	strcpy(l.drive_target, "\\??\\C:\\Users\\me");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	assert_non_null(strstr(why, "its drive"));
	strcpy(l.drive_target, "C:\\Users\\me\\AppData\\Local\\aisb\\"
	    "stages\\r1");		/* not a raw target */
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	strcpy(l.drive_target, "\\??\\C:\\Users\\me\\AppData\\Local"
	    "\\aisb\\stages\\..\\..\\x");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	strcpy(l.drive, "C:");		/* never a system letter */
	strcpy(l.drive_target, "\\??\\C:\\Users\\me\\AppData\\Local"
	    "\\aisb\\stages\\r1");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	l.drive[0] = '\0';		/* a target without a letter */
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	l.drive_target[0] = '\0';
	/* alive, same start: a live runner, skipped */
	seen.alive = 1;
	seen.start = 1000;
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_SKIP_LIVE);
	/* the pid reused by another process: the runner is gone */
	seen.start = 2000;
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REMOVE);
	assert_non_null(strstr(why, "another process"));
	seen.alive = 0;
	/* case and separators of the root do not matter */
	assert_int_equal(winrun_clean_decide(&l, &seen,
	    "c:/users/ME/AppData/Local/aisb/stages/", why, sizeof(why)),
	    WINRUN_CLEAN_REMOVE);

	/* refused: anything a forged lease could aim elsewhere */
	strcpy(l.profile, "aisb.run.ffffffffffffffffffffffffffffffff");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	strcpy(l.profile, "Microsoft.WindowsCalculator_8wekyb3d8bbwe");
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	strcpy(l.profile, "aisb.run.00112233445566778899aabbccddeeff");
	{
		static const char *const stages[] = {
			"C:\\Users\\me\\AppData\\Local\\aisb\\stages",
			"C:\\Users\\me\\AppData\\Local\\aisb\\stages\\",
			"C:\\Users\\me\\AppData\\Local\\aisb\\stages\\r1\\..\\..",
			"C:\\Users\\me\\AppData\\Local\\aisb\\stages\\..\\x",
			"C:\\Users\\me\\AppData\\Local\\aisb\\stagesX\\r1",
			"C:\\Users\\me\\Documents",
			"D:\\Users\\me\\AppData\\Local\\aisb\\stages\\r1",
			"C:\\Users\\me\\AppData\\Local\\aisb\\stages\\r1:ads",
			"relative\\stages\\r1",
			NULL
		};
		int i;

		for (i = 0; stages[i] != NULL; i++) {
			strcpy(l.stage, stages[i]);
			if (winrun_clean_decide(&l, &seen, root, why,
			    sizeof(why)) != WINRUN_CLEAN_REFUSE)
				fail_msg("stage %s was not refused", stages[i]);
		}
	}
	strcpy(l.stage, "C:\\Users\\me\\AppData\\Local\\aisb\\stages\\r1");
	assert_int_equal(winrun_clean_decide(&l, &seen, NULL, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	l.runner_pid = 0;
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REFUSE);
	/* no profile, no stage (a --no-appcontainer run): nothing named */
	l.runner_pid = 77;
	l.profile[0] = l.stage[0] = '\0';
	assert_int_equal(winrun_clean_decide(&l, &seen, root, why, sizeof(why)),
	    WINRUN_CLEAN_REMOVE);
}

static void
gate_env(void **state)
{
	char buf[512];

	assert_true(winrun_gate_env(8123, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "HTTP_PROXY=http://127.0.0.1:8123\n"
	    "HTTPS_PROXY=http://127.0.0.1:8123\nNO_PROXY=\n");
	assert_true(winrun_gate_env(8123, "aisb:abc", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "HTTPS_PROXY=http://aisb:abc@127.0.0.1:8123\n"));
	assert_int_equal(winrun_gate_env(0, NULL, buf, sizeof(buf)), -1);
	assert_int_equal(winrun_gate_env(1, "a\nb", buf, sizeof(buf)), -1);
	assert_int_equal(winrun_gate_env(1, NULL, buf, 10), -1);
}

/* ---- the self-test's stored result (selfrec.c) ---------------------- */

#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"
#define H3 "3333333333333333333333333333333333333333333333333333333333333333"

static void
selfrec_fill(struct winrun_selfrec *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->time, sizeof(r->time), "2026-12-02T07:30:00Z");
	memcpy(r->runner, H1, sizeof(r->runner));
	memcpy(r->launcher, H2, sizeof(r->launcher));
	memcpy(r->policy, H3, sizeof(r->policy));
	snprintf(r->policy_text, sizeof(r->policy_text), "protocol 1; x");
}

static void
selfrec_roundtrip(void **state)
{
	struct winrun_selfrec r, back;
	struct winrun_opts o;
	char buf[WINRUN_SELFREC_MAX], why[256], p1[WINRUN_SELFREC_TEXT];
	char p2[WINRUN_SELFREC_TEXT];
	int n;

	(void)state;
	selfrec_fill(&r);
	assert_int_equal(winrun_selfrec_add(&r, 1, "ran\nforged line"), 0);
	assert_int_equal(winrun_selfrec_add(&r, 0, "AppContainers: no"), 0);
	assert_int_equal(r.failed, 1);
	n = winrun_selfrec_format(&r, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "check ok ran\ncheck FAIL AppContainers: "
	    "no\nresult failed\n"));
	assert_int_equal(winrun_selfrec_parse(buf, (size_t)n, &back, why,
	    sizeof(why)), 0);
	assert_string_equal(back.runner, H1);
	assert_string_equal(back.launcher, H2);
	assert_string_equal(back.policy, H3);
	assert_string_equal(back.policy_text, "protocol 1; x");
	assert_int_equal(back.nchecks, 2);
	assert_int_equal(back.failed, 1);
	assert_string_equal(back.checks[1].what, "AppContainers: no");
	/* fresh under the same identity; stale, naming what changed */
	assert_int_equal(winrun_selfrec_stale(&back, H1, H2, H3, why,
	    sizeof(why)), 0);
	assert_int_equal(winrun_selfrec_stale(&back, H2, H2, H3, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "aisb-run.exe changed"));
	assert_int_equal(winrun_selfrec_stale(&back, H1, H1, H3, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "aisb.exe changed"));
	assert_int_equal(winrun_selfrec_stale(&back, H1, H2, H1, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "the policy changed"));
	/* the policy names the limits: another limit, another text */
	memset(&o, 0, sizeof(o));
	o.memory = WINRUN_DEF_MEMORY;
	o.procs = WINRUN_DEF_PROCS;
	o.timeout_ms = WINRUN_DEF_TIMEOUT_MS;
	assert_int_equal(winrun_selftest_policy(&o, p1, sizeof(p1)), 0);
	o.memory /= 2;
	assert_int_equal(winrun_selftest_policy(&o, p2, sizeof(p2)), 0);
	assert_string_not_equal(p1, p2);
	assert_int_equal(winrun_selftest_policy(&o, p2, 8), -1);
}

static void
selfrec_refusals(void **state)
{
	static const char *const bad[] = {
		"",
		"aisb-selftest 2\n",
		/* cut short: no result line */
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck ok a\n",
		/* a result that does not match its checks */
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck FAIL a\n"
		    "result passed\n",
		/* no check at all */
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\nresult passed\n",
		/* a short hash, an upper-case one */
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    "1111\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck ok a\n"
		    "result passed\n",
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy "
		    "A333333333333333333333333333333333333333333333333333333333333333"
		    " p\ncheck ok a\nresult passed\n",
		/* lines out of order, a line after the result */
		"aisb-selftest 1\nfile aisb-run.exe " H1 "\ntime "
		    "2026-12-02T07:30:00Z\nfile aisb.exe " H2 "\npolicy " H3
		    " p\ncheck ok a\nresult passed\n",
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck ok a\n"
		    "result passed\ncheck ok b\n",
		/* a check neither ok nor FAIL; no final newline */
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck meh a\n"
		    "result passed\n",
		"aisb-selftest 1\ntime 2026-12-02T07:30:00Z\nfile aisb-run.exe "
		    H1 "\nfile aisb.exe " H2 "\npolicy " H3 " p\ncheck ok a\n"
		    "result passed",
	};
	struct winrun_selfrec r;
	char why[256], *big;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(winrun_selfrec_parse(bad[i], strlen(bad[i]),
		    &r, why, sizeof(why)), -1);
		assert_true(why[0] != '\0');
	}
	/* a NUL inside; larger than the bound */
	assert_int_equal(winrun_selfrec_parse("aisb-selftest 1\n\0x\n", 19, &r,
	    why, sizeof(why)), -1);
	big = malloc(WINRUN_SELFREC_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', WINRUN_SELFREC_MAX + 1);
	big[WINRUN_SELFREC_MAX] = '\n';
	assert_int_equal(winrun_selfrec_parse(big, WINRUN_SELFREC_MAX + 1, &r,
	    why, sizeof(why)), -1);
	assert_non_null(strstr(why, "larger than"));
	free(big);
	/* more checks than the bound */
	selfrec_fill(&r);
	for (i = 0; i < WINRUN_SELFREC_CHECKS; i++)
		assert_int_equal(winrun_selfrec_add(&r, 1, "x"), 0);
	assert_int_equal(winrun_selfrec_add(&r, 1, "x"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts_defaults),
		cmocka_unit_test(opts_values),
		cmocka_unit_test(opts_refused),
		cmocka_unit_test(cmdline_quoting),
		cmocka_unit_test(cmdline_bounds),
		cmocka_unit_test(envblock_allowlist),
		cmocka_unit_test(envblock_errors),
		cmocka_unit_test(handle_list),
		cmocka_unit_test(ids),
		cmocka_unit_test(lease_roundtrip),
		cmocka_unit_test(result_roundtrip),
		cmocka_unit_test(decode_errors),
		cmocka_unit_test(clean_decisions),
		cmocka_unit_test(gate_env),
		cmocka_unit_test(drive_letters),
		cmocka_unit_test(selfrec_roundtrip),
		cmocka_unit_test(selfrec_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
