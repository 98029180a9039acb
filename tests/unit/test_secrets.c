/*
 * A session's secrets (launcher/session/secrets.c): the entries' grammar,
 * the values read from aisb's environment (wiped there, removed), a file
 * and a command (real ones: sh, printf, false), the values refused
 * (empty, long, a space, a control byte) with errors that carry no byte
 * of them, the placeholders, the gate's secrets file in a sealed memory
 * file, a secret the policy does not add or an --env of its name refused,
 * the env file's placeholders, the values wiped.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "write_file.h"

#include "policy.h"
#include "session/folder.h"
#include "session/options.h"
#include "session/secrets.h"

static char	 dir[] = "/tmp/aisb-secrets-XXXXXX";

#include "tmpdir.h"

static char	 err[2048];

static void
opts_with(struct launch_opts *o, struct launch_item *items, const char **e,
    size_t n)
{
	size_t	 i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < n; i++) {
		memset(&items[i], 0, sizeof(items[i]));
		items[i].text = (char *)e[i];
		items[i].src = LAUNCH_SRC_FLAG;
		snprintf(items[i].where, sizeof(items[i].where), "--secret");
	}
	o->secrets = items;
	o->nsecrets = n;
	o->net = LAUNCH_NET_GATE;
}

static void
test_entry_grammar(void **state)
{
	static const char *const good[] = { "API_KEY", "_x", "K=env:OTHER",
	    "K=file:/run/secret", "K=command:pass show api/key" };
	static const char *const bad[] = { "", "1KEY", "A-B", "K=", "K=env:",
	    "K=env:1X", "K=file:relative", "K=command:", "K=command:  ",
	    "K=pass:x", "K=file:/a\nb" };
	char	 name[80];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(launch_secret_entry_check(good[i], err,
		    sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(launch_secret_entry_check(bad[i], err,
		    sizeof(err)), -1);
		assert_true(err[0] != '\0');
	}
	launch_secret_entry_name("K=command:pass show x", name, sizeof(name));
	assert_string_equal(name, "K");
	launch_secret_entry_name("PLAIN", name, sizeof(name));
	assert_string_equal(name, "PLAIN");
}

static void
test_read_sources(void **state)
{
	struct launch_opts	 o;
	struct launch_item	 it[5];
	struct launch_secrets	 ss;
	char			 f1[PATH_MAX], f2[PATH_MAX];
	char			 cmd[PATH_MAX + 64];
	const char		*e[5];
	char			*orig;
	size_t			 k;
	extern char		**environ;

	(void)state;
	snprintf(f1, sizeof(f1), "%s/one", dir);
	snprintf(f2, sizeof(f2), "%s/two", dir);
	write_file(f1, "file-value-1\n");	/* one line break dropped */
	write_file(f2, "file-value-2\r\n");
	snprintf(cmd, sizeof(cmd), "B=command:cat %s", f2);
	assert_int_equal(setenv("AISB_T_SECRET", "env-value-0", 1), 0);
	assert_int_equal(setenv("AISB_T_OTHER", "env-value-9", 1), 0);
	e[0] = "AISB_T_SECRET";
	e[1] = "A=file:";		/* replaced below */
	e[2] = cmd;
	e[3] = "C=env:AISB_T_OTHER";
	e[4] = "D=command:printf %s cmd-value-3";
	{
		static char a[PATH_MAX + 8];

		snprintf(a, sizeof(a), "A=file:%s", f1);
		e[1] = a;
	}
	opts_with(&o, it, e, 5);
	orig = getenv("AISB_T_SECRET");
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), 0);
	assert_int_equal(ss.n, 5);
	/* wiped where it was (glibc keeps setenv's strings): all zero */
	for (k = 0; k < strlen("env-value-0"); k++)
		assert_int_equal(orig[k], '\0');
	assert_string_equal(ss.v[0].name, "AISB_T_SECRET");
	assert_string_equal(ss.v[0].value, "env-value-0");
	assert_string_equal(ss.v[1].value, "file-value-1");
	assert_string_equal(ss.v[2].value, "file-value-2");
	assert_string_equal(ss.v[3].value, "env-value-9");
	assert_string_equal(ss.v[4].value, "cmd-value-3");
	assert_string_equal(ss.v[3].source, "environment AISB_T_OTHER");
	assert_string_equal(ss.v[2].source, "command cat");
	/* what aisb starts afterwards does not inherit them */
	assert_null(getenv("AISB_T_SECRET"));
	assert_null(getenv("AISB_T_OTHER"));
	/* placeholders: the prefix, 40 hex digits, distinct */
	assert_int_equal(strlen(ss.v[0].placeholder), LAUNCH_SECRETS_PH_LEN);
	assert_int_equal(strncmp(ss.v[0].placeholder,
	    LAUNCH_SECRETS_PH_PREFIX, strlen(LAUNCH_SECRETS_PH_PREFIX)), 0);
	assert_string_not_equal(ss.v[0].placeholder, ss.v[1].placeholder);
	assert_string_equal(launch_secrets_placeholder(&ss, "C"),
	    ss.v[3].placeholder);
	assert_null(launch_secrets_placeholder(&ss, "NOPE"));
	/* forgotten: the values gone, names and placeholders kept */
	launch_secrets_forget(&ss);
	assert_null(ss.v[1].value);
	assert_string_equal(ss.v[1].name, "A");
	assert_int_equal(strlen(ss.v[1].placeholder), LAUNCH_SECRETS_PH_LEN);
	launch_secrets_free(&ss);
	assert_int_equal(ss.n, 0);
}

/* A later entry of a name wins (the flag over the user config's). */
static void
test_later_wins(void **state)
{
	struct launch_opts	 o;
	struct launch_item	 it[2];
	struct launch_secrets	 ss;
	const char		*e[2] = { "K=command:false", "K=command:printf "
	    "second" };
	extern char		**environ;

	(void)state;
	opts_with(&o, it, e, 2);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), 0);
	assert_int_equal(ss.n, 1);
	assert_string_equal(ss.v[0].value, "second");
	launch_secrets_free(&ss);
}

/* Refused, each with the entry and where, never a byte of the value. */
static void
test_refused(void **state)
{
	static const struct {
		const char	*entry, *value, *want;
	} cases[] = {
		{ "K=env:AISB_T_UNSET", NULL, "AISB_T_UNSET is not set" },
		{ "K=env:AISB_T_EMPTY", "", "it is empty" },
		{ "K=env:AISB_T_SPACE", "sek ret-VALUE", "a space" },
		{ "K=env:AISB_T_CTRL", "sek\001ret-VALUE", "a control byte" },
		{ "K=env:AISB_T_UTF8", "sek\xc3\xa9ret-VALUE", "outside ASCII" },
		{ "K=command:false", NULL, "false failed: exit status 1" },
		{ "K=command:/nonexistent/prog", NULL, "/nonexistent/prog" },
		{ "K=file:/nonexistent/file", NULL, "/nonexistent/file" },
	};
	struct launch_opts	 o;
	struct launch_item	 it[1];
	struct launch_secrets	 ss;
	const char		*e[1];
	char			 var[64];
	extern char		**environ;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].value != NULL) {
			snprintf(var, sizeof(var), "%s", cases[i].entry + 6);
			assert_int_equal(setenv(var, cases[i].value, 1), 0);
		}
		e[0] = cases[i].entry;
		opts_with(&o, it, e, 1);
		err[0] = '\0';
		assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
		    sizeof(err)), -1);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("%s: '%s' not in: %s", cases[i].entry,
			    cases[i].want, err);
		assert_non_null(strstr(err, "--secret: secret K"));
		assert_null(strstr(err, "ret-VALUE"));
		assert_int_equal(ss.n, 0);
	}
}

/*
 * What the sandboxed command reads, and a direct session's command
 * writes (the workspace, a --mount's source), holds no secret aisb
 * reads or program it runs for one: not by a path in it, not through a
 * link into it, not found there on PATH.  What lies outside is read.
 */
static void
test_workspace_sources(void **state)
{
	struct launch_opts	 o;
	struct launch_item	 it[1], mnt[1];
	struct launch_secrets	 ss;
	char			 ws[PATH_MAX], m[PATH_MAX], p[PATH_MAX];
	char			 e0[3 * PATH_MAX], ran[PATH_MAX], *path0;
	const char		*e[1];
	extern char		**environ;
	size_t			 i;
	static const char *const in[] = { "ws/key", "wslink/key", "m/key",
	    "ws/bin/tok" };

	(void)state;
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(m, sizeof(m), "%s/m", dir);
	snprintf(ran, sizeof(ran), "%s/ran", dir);
	snprintf(p, sizeof(p), "%s/ws/bin", dir);
	assert_int_equal(mkdir(ws, 0700), 0);
	assert_int_equal(mkdir(m, 0700), 0);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/wslink", dir);
	assert_int_equal(symlink(ws, p), 0);
	snprintf(p, sizeof(p), "%s/ws/key", dir);
	write_file(p, "ws-secret-VALUE\n");
	snprintf(p, sizeof(p), "%s/m/key", dir);
	write_file(p, "mount-secret-VALUE\n");
	snprintf(p, sizeof(p), "%s/out", dir);
	write_file(p, "outside-value\n");
	/* a program a session could have planted: it must not run */
	snprintf(p, sizeof(p), "%s/ws/bin/tok", dir);
	snprintf(e0, sizeof(e0), "#!/bin/sh\ntouch %s\necho planted-VALUE\n",
	    ran);
	write_file(p, e0);
	assert_int_equal(chmod(p, 0755), 0);
	snprintf(e0, sizeof(e0), "%s:/opt/m", m);
	memset(mnt, 0, sizeof(mnt));
	mnt[0].text = e0;

	for (i = 0; i < sizeof(in) / sizeof(in[0]) + 1; i++) {
		char	 entry[PATH_MAX + 32];

		if (i < sizeof(in) / sizeof(in[0]))
			snprintf(entry, sizeof(entry), "K=%s:%s/%s",
			    strstr(in[i], "bin") != NULL ? "command" : "file",
			    dir, in[i]);
		else	/* by its name, PATH's first folder in the workspace */
			snprintf(entry, sizeof(entry), "K=command:tok");
		e[0] = entry;
		opts_with(&o, it, e, 1);
		o.val[LO_WORKSPACE] = ws;
		o.mounts = mnt;
		o.nmounts = 1;
		path0 = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
		snprintf(p, sizeof(p), "%s/ws/bin:%s", dir, path0 != NULL ?
		    path0 : "/usr/bin:/bin");
		assert_int_equal(setenv("PATH", p, 1), 0);
		err[0] = '\0';
		assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
		    sizeof(err)), -1);
		if (path0 != NULL)
			assert_int_equal(setenv("PATH", path0, 1), 0);
		free(path0);
		if (strstr(err, " is in ") == NULL ||
		    strstr(err, "outside the workspace and the --mount") == NULL)
			fail_msg("%s: %s", entry, err);
		assert_null(strstr(err, "-VALUE"));
		assert_int_equal(access(ran, F_OK), -1);
		assert_int_equal(ss.n, 0);
	}

	/* outside them: read, by a file and by a command */
	for (i = 0; i < 2; i++) {
		snprintf(e0, sizeof(e0), "K=%s%s/out", i == 0 ? "file:" :
		    "command:cat ", dir);
		e[0] = e0;
		opts_with(&o, it, e, 1);
		o.val[LO_WORKSPACE] = ws;
		assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
		    sizeof(err)), 0);
		assert_string_equal(ss.v[0].value, "outside-value");
		launch_secrets_free(&ss);
	}
}

/* A value longer than the gate takes, from a file and from a command. */
static void
test_too_long(void **state)
{
	struct launch_opts	 o;
	struct launch_item	 it[1];
	struct launch_secrets	 ss;
	char			 path[PATH_MAX], entry[PATH_MAX + 40];
	char			*big;
	const char		*e[1] = { entry };
	extern char		**environ;

	(void)state;
	snprintf(path, sizeof(path), "%s/big", dir);
	big = malloc(LAUNCH_SECRETS_VALUE_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', LAUNCH_SECRETS_VALUE_MAX + 1);
	big[LAUNCH_SECRETS_VALUE_MAX + 1] = '\0';
	write_file(path, big);
	snprintf(entry, sizeof(entry), "K=file:%s", path);
	opts_with(&o, it, e, 1);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than 4096"));
	snprintf(entry, sizeof(entry), "K=command:cat %s", path);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than 4096"));
	/* exactly the bound is taken */
	big[LAUNCH_SECRETS_VALUE_MAX] = '\0';
	write_file(path, big);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), 0);
	assert_int_equal(ss.v[0].vlen, LAUNCH_SECRETS_VALUE_MAX);
	launch_secrets_free(&ss);
	free(big);
}

/* The gate's file: its format, sealed, at offset 0. */
static void
test_gate_fd(void **state)
{
	struct launch_opts	 o;
	struct launch_item	 it[2];
	struct launch_secrets	 ss;
	const char		*e[2] = { "ONE=command:printf v-one",
	    "TWO=command:printf v-two" };
	char			 buf[1024], want[1024];
	extern char		**environ;
	ssize_t			 n;
	int			 fd;

	(void)state;
	opts_with(&o, it, e, 2);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), 0);
	fd = launch_secrets_fd(&ss, err, sizeof(err));
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	snprintf(want, sizeof(want), "aisb-secrets 1\nONE %s v-one\nTWO %s "
	    "v-two\n", ss.v[0].placeholder, ss.v[1].placeholder);
	assert_string_equal(buf, want);
	/* sealed: nobody changes what the gate reads */
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	launch_secrets_free(&ss);
}

/* The session must be able to use them: a rule adds each, no --env. */
static void
test_usable(void **state)
{
	static const char text[] = "version: 1\nallow:\n"
	    "  - host: api.example.com\n    inspect: true\n"
	    "    secrets:\n      - name: API_KEY\n        header: x-api-key\n";
	struct launch_opts	 o;
	struct launch_item	 it[1], env[1];
	struct policy		*p;
	const char		*e[1] = { "API_KEY" };

	(void)state;
	assert_int_equal(policy_load_buffer("p.yaml", text, sizeof(text) - 1,
	    &p, NULL), 0);
	assert_int_equal(launch_policy_inspects(p), 1);
	opts_with(&o, it, e, 1);
	assert_int_equal(launch_secrets_usable(&o, p, err, sizeof(err)), 0);
	e[0] = "OTHER_KEY";
	opts_with(&o, it, e, 1);
	assert_int_equal(launch_secrets_usable(&o, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no rule of the policy (p.yaml) adds it"));
	e[0] = "API_KEY";
	opts_with(&o, it, e, 1);
	memset(env, 0, sizeof(env));
	env[0].text = (char *)"API_KEY";
	snprintf(env[0].where, sizeof(env[0].where), "--env");
	o.env = env;
	o.nenv = 1;
	assert_int_equal(launch_secrets_usable(&o, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "would pass the secret itself"));
	o.nenv = 0;
	o.net = LAUNCH_NET_NONE;
	assert_int_equal(launch_secrets_usable(&o, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "have no gate"));
	o.net = LAUNCH_NET_GATE;
	o.val[LO_GATE] = (char *)"shared";
	assert_int_equal(launch_secrets_usable(&o, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "a named gate"));
	policy_free(p);
}

/* The env file holds the placeholder under the secret's name. */
static void
test_env_file(void **state)
{
	struct launch_session	 s;
	struct launch_opts	 o;
	struct launch_item	 it[1];
	struct launch_secrets	 ss;
	const char		*e[1] = { "K=command:printf real-value-77" };
	char			 path[PATH_MAX], line[256], text[4096];
	char			*envp[] = { (char *)"HOME=/root", NULL };
	extern char		**environ;
	FILE			*f;
	size_t			 n;
	char			 state_env[PATH_MAX + 32];

	(void)state;
	snprintf(state_env, sizeof(state_env), "XDG_STATE_HOME=%s", dir);
	envp[0] = state_env;
	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	opts_with(&o, it, e, 1);
	assert_int_equal(launch_secrets_read(&ss, &o, environ, err,
	    sizeof(err)), 0);
	o.nsecrets = 0;
	assert_int_equal(launch_env_file(&s, &o, envp, NULL, &ss, path,
	    sizeof(path), err, sizeof(err)), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	snprintf(line, sizeof(line), "K=%s\n", ss.v[0].placeholder);
	assert_non_null(strstr(text, line));
	assert_null(strstr(text, "real-value-77"));
	launch_secrets_free(&ss);
	launch_session_wipe(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_grammar),
		cmocka_unit_test(test_read_sources),
		cmocka_unit_test(test_later_wins),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_workspace_sources),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_gate_fd),
		cmocka_unit_test(test_usable),
		cmocka_unit_test(test_env_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
