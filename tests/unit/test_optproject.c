/*
 * Who may set each launcher option, and in which direction
 * (launcher/session/optproject.c; docs/launcher.md, "What a project
 * config may set"): a row per option, tried for real, and the limits a
 * project config may only lower.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/options.h"

#include "opts_harness.h"

/*
 * Who may set each option, and in which direction: one row per option,
 * in the order of enum launch_opt_id, so that a new option fails here
 * until it is placed.  Every row is tried for real: the user config,
 * AISB_* and the flag set value (or may not: env and project_policy);
 * a project config is refused widen, with the line for the user config,
 * and takes narrow (never: no narrow; any value: widen is NULL).
 */
enum prj { PRJ_NEVER, PRJ_ANY, PRJ_ONLY, PRJ_LOWER, PRJ_POLICY };
enum who { WHO_ALL, WHO_NOENV, WHO_USER };

static const struct row {
	const char	*key;
	enum who	 who;
	enum prj	 prj;
	const char	*value;		/* a value the user's layers may set */
	const char	*narrow;	/* a project config may say this */
	const char	*widen;		/* ... and not this */
} rows[LO__COUNT] = {
	{ "policy", WHO_ALL, PRJ_POLICY, "p.yaml", "mine.yaml", "mine.yaml" },
	{ "net", WHO_ALL, PRJ_ONLY, "direct", "none", "gate" },
	{ "image", WHO_ALL, PRJ_NEVER, "localhost/x:1", NULL, "localhost/x:1" },
	/* from the host's own signed sources: image/build.c, optvalue.c */
	{ "packages", WHO_ALL, PRJ_ANY, "git", "curl", NULL },
	{ "memory", WHO_ALL, PRJ_LOWER, "2g", "1g", "3g" },
	{ "cpus", WHO_ALL, PRJ_LOWER, "2", "1.5", "2.5" },
	{ "pids", WHO_ALL, PRJ_LOWER, "200", "100", "300" },
	{ "timeout", WHO_ALL, PRJ_LOWER, "10m", "5m", "1h" },
	{ "workspace", WHO_ALL, PRJ_NEVER, "@ws", NULL, "/" },
	{ "home_volume", WHO_ALL, PRJ_NEVER, "vol1", NULL, "vol2" },
	{ "keep", WHO_ALL, PRJ_NEVER, "true", NULL, "true" },
	{ "record", WHO_ALL, PRJ_ONLY, "true", "yes", "false" },
	{ "record_max", WHO_ALL, PRJ_NEVER, "1G", NULL, "4K" },
	{ "gate", WHO_ALL, PRJ_NEVER, "g1", NULL, "g2" },
	{ "env", WHO_NOENV, PRJ_NEVER, "X=1", NULL, "HOME" },
	{ "runtime", WHO_ALL, PRJ_NEVER, "crun", NULL, "crun" },
	{ "quiet", WHO_ALL, PRJ_NEVER, "true", NULL, "true" },
	{ "project_policy", WHO_USER, PRJ_NEVER, "true", NULL, "true" },
	{ "host_ca", WHO_ALL, PRJ_ONLY, "false", "false", "true" },
	{ "agent", WHO_ALL, PRJ_ONLY, "claude", "none", "claude" },
	{ "npm", WHO_ALL, PRJ_NEVER, "semver@7.6.3", NULL, "semver@7.6.3" },
	{ "pip", WHO_ALL, PRJ_NEVER, "black==24.1.0", NULL, "black==24.1.0" },
	{ "allow_from_lockfile", WHO_ALL, PRJ_NEVER, "true", NULL, "true" },
	{ "workspace_mode", WHO_ALL, PRJ_ONLY, "snapshot", "readonly",
	    "direct" },
	{ "apply", WHO_ALL, PRJ_NEVER, "never", NULL, "ask" },
	{ "snapshot_exclude", WHO_ALL, PRJ_NEVER, "x", NULL, "y" },
	{ "draft", WHO_ALL, PRJ_NEVER, "d1", NULL, "d2" },
	/* the user config's own bounds of a snapshot: snapshot.md */
	{ "snapshot_max_entries", WHO_USER, PRJ_NEVER, "1000", NULL, "10" },
	{ "snapshot_max_bytes", WHO_USER, PRJ_NEVER, "1g", NULL, "1m" },
	{ "snapshot_max_file_bytes", WHO_USER, PRJ_NEVER, "1m", NULL, "1k" },
	{ "snapshot_max_depth", WHO_USER, PRJ_NEVER, "10", NULL, "5" },
	{ "writeback_deny", WHO_USER, PRJ_NEVER, "x", NULL, "y" },
	{ "writeback", WHO_USER, PRJ_NEVER, "false", NULL, "false" },
	{ "retention", WHO_USER, PRJ_NEVER, "1g", NULL, "1k" },
	/* the gate decides every connection either way: launcher.md */
	{ "transparent", WHO_ALL, PRJ_ANY, "false", "false", NULL },
	{ "transparent_ports", WHO_ALL, PRJ_ANY, "8080", "8080,443", NULL },
	{ "protect", WHO_ALL, PRJ_NEVER, "Makefile", NULL, ".envrc" },
	{ "quarantine", WHO_ALL, PRJ_ONLY, "true", "true", "false" },
	{ "mount", WHO_ALL, PRJ_NEVER, "/tmp:/opt/x", NULL, "/tmp:/opt/x" },
	{ "secrets", WHO_NOENV, PRJ_NEVER, "TOKEN=env:HOME", NULL,
	    "TOKEN=env:HOME" },
	{ "install_policy", WHO_ALL, PRJ_NEVER, "p.yaml", NULL, "p.yaml" },
	/* approvals are the user's to turn on or off: launcher.md */
	{ "ask", WHO_ALL, PRJ_NEVER, "30", NULL, "true" },
};

/* The source of option id's value (a list's: its first entry's). */
static enum launch_src
src_of(const struct launch_opts *o, enum launch_opt_id id)
{
	const struct launch_item	*l = NULL;
	size_t				 n = 0;

	switch (id) {
	case LO_ENV:
		l = o->env, n = o->nenv;
		break;
	case LO_PACKAGES:
		l = o->packages, n = o->npackages;
		break;
	case LO_NPM:
		l = o->npm, n = o->nnpm;
		break;
	case LO_PIP:
		l = o->pip, n = o->npip;
		break;
	case LO_SNAPSHOT_EXCLUDE:
		l = o->exclude, n = o->nexclude;
		break;
	case LO_PROTECT:
		l = o->protect, n = o->nprotect;
		break;
	case LO_MOUNT:
		l = o->mounts, n = o->nmounts;
		break;
	case LO_SECRETS:
		l = o->secrets, n = o->nsecrets;
		break;
	case LO_WRITEBACK_DENY:
		l = o->wdeny, n = o->nwdeny;
		break;
	default:
		return o->src[id];
	}
	return n > 0 ? l[n - 1].src : LAUNCH_SRC_DEFAULT;
}

/* "key: value" (a list: "key: [value]"), "@ws" standing for ws. */
static void
config_line(enum launch_opt_id id, const char *v, char *buf, size_t len)
{
	int	 list = id == LO_ENV || id == LO_PACKAGES || id == LO_NPM ||
		    id == LO_PIP || id == LO_SNAPSHOT_EXCLUDE ||
		    id == LO_PROTECT || id == LO_MOUNT || id == LO_SECRETS ||
		    id == LO_WRITEBACK_DENY;

	if (strcmp(v, "@ws") == 0)
		v = ws;
	snprintf(buf, len, "%s: %s%s%s\n", rows[id].key, list ? "[" : "", v,
	    list ? "]" : "");
}

/*
 * Resolves "cmd" with one layer setting option id to v: the user
 * config (layer 'u'), AISB_* ('e') or the flag ('f'); --workspace is
 * given unless id is the workspace, whose layers then name ws.  The
 * resolve's return; o is resolved (free it).
 */
static int
one_layer(struct launch_opts *o, enum launch_opt_id id, const char *v,
    int layer, char *err, size_t errlen)
{
	static char	*argv[8], flag[600], wsflag[300];
	char		 envv[600], var[64], line[600], *envp[4];
	int		 argc = 0, n = 0;
	size_t		 k;

	if (strcmp(v, "@ws") == 0)
		v = ws;
	argv[argc++] = (char *)"aisb";
	snprintf(wsflag, sizeof(wsflag), "--workspace=%s", ws);
	if (id != LO_WORKSPACE)
		argv[argc++] = wsflag;
	envp[n++] = envxdg;
	envp[n++] = envhome;
	user_config(NULL);
	if (layer == 'u') {
		config_line(id, v, line, sizeof(line));
		user_config(line);
	} else if (layer == 'e') {
		snprintf(var, sizeof(var), "AISB_%s", rows[id].key);
		for (k = 5; var[k] != '\0'; k++)
			var[k] = (char)toupper((unsigned char)var[k]);
		snprintf(envv, sizeof(envv), "%s=%s", var, v);
		envp[n++] = envv;
	} else {
		snprintf(flag, sizeof(flag), "--%s=%s", id == LO_PACKAGES ?
		    "package" : id == LO_SECRETS ? "secret" : rows[id].key, v);
		for (k = 2; flag[k] != '=' ; k++)
			if (flag[k] == '_')
				flag[k] = '-';
		argv[argc++] = flag;
	}
	argv[argc++] = (char *)"cmd";
	argv[argc] = NULL;
	envp[n] = NULL;
	return launch_opts_resolve(o, argc, argv, envp, err, errlen);
}

/* A project config of the one line key: v, over the user's baseline. */
static int
project_says(struct launch_opts *o, enum launch_opt_id id, const char *v,
    const char *user, char *err, size_t errlen)
{
	char	 line[600];

	user_config(user);
	config_line(id, v, line, sizeof(line));
	project_config(line);
	return resolve(o, err, errlen, ARGS("cmd"), NULL);
}

static void
row_layers(enum launch_opt_id id)
{
	const struct row	*r = &rows[id];
	struct launch_opts	 o;
	char			 err[2048];
	int			 rc;

	/* the user config */
	if ((rc = one_layer(&o, id, r->value, 'u', err, sizeof(err))) != 0)
		fail_msg("%s: the user config may set it: %s", r->key, err);
	assert_int_equal(src_of(&o, id), LAUNCH_SRC_USER);
	launch_opts_free(&o);
	/* AISB_*: taken, or not a way in */
	rc = one_layer(&o, id, r->value, 'e', err, sizeof(err));
	assert_int_equal(rc, 0);
	if (r->who == WHO_ALL)
		assert_int_equal(src_of(&o, id), LAUNCH_SRC_ENV);
	else
		assert_int_not_equal(src_of(&o, id), LAUNCH_SRC_ENV);
	launch_opts_free(&o);
	/* the flag: taken, or not a flag at all */
	rc = one_layer(&o, id, r->value, 'f', err, sizeof(err));
	if (r->who != WHO_USER) {
		if (rc != 0)
			fail_msg("%s: the flag: %s", r->key, err);
		assert_int_equal(src_of(&o, id), LAUNCH_SRC_FLAG);
	} else
		assert_int_equal(rc, -1);
	launch_opts_free(&o);
	user_config(NULL);
}

static void
row_project(enum launch_opt_id id)
{
	const struct row	*r = &rows[id];
	struct launch_opts	 o;
	char			 err[2048], base[600];
	const char		*user = NULL;

	if (r->prj == PRJ_LOWER) {
		config_line(id, r->value, base, sizeof(base));
		user = base;
	} else if (r->prj == PRJ_POLICY)
		user = "project_policy: true\n";
	if (r->widen != NULL) {
		if (project_says(&o, id, r->widen, r->prj == PRJ_POLICY ?
		    NULL : user, err, sizeof(err)) != -1)
			fail_msg("%s: a project config set it to %s", r->key,
			    r->widen);
		assert_non_null(strstr(err, ".aisb.yaml:1:"));
		/* what to write instead, and where */
		assert_non_null(strstr(err, "config.yaml"));
		launch_opts_free(&o);
	}
	if (r->narrow != NULL) {
		if (project_says(&o, id, r->narrow, user, err,
		    sizeof(err)) != 0)
			fail_msg("%s: a project config may say %s: %s", r->key,
			    r->narrow, err);
		assert_int_equal(src_of(&o, id), LAUNCH_SRC_PROJECT);
		launch_opts_free(&o);
	}
	if (r->prj == PRJ_LOWER) {
		/* 0 is no limit; and without a user limit, the default's */
		assert_int_equal(project_says(&o, id, "0", user, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "never to 0"));
		launch_opts_free(&o);
	}
	project_config(NULL);
	user_config(NULL);
}

static void
test_sources_table(void **state)
{
	int	 id;

	(void)state;
	for (id = 0; id < LO__COUNT; id++) {
		if (rows[id].key == NULL)
			fail_msg("option %s has no row here: say who may set "
			    "it, and in which direction", launch_opt_name(id));
		assert_string_equal(rows[id].key, launch_opt_name(id));
		row_layers(id);
		row_project(id);
	}
}

/* The limits: the lower layers' value bounds the project's. */
static void
test_project_limits(void **state)
{
	struct launch_opts	 o;
	char			 err[2048];

	(void)state;
	/* under the default of 4g, and the message names it */
	project_config("memory: 8g\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "at most 4g (default)"));
	assert_non_null(strstr(err, "'memory: 8g'"));
	assert_non_null(strstr(err, "--memory 8g"));
	launch_opts_free(&o);
	/* a user without a limit: any limit narrows */
	user_config("memory: 0\ntimeout: 0\n");
	project_config("memory: 64g\ntimeout: 168h\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.memory, 64ULL << 30);
	assert_int_equal(o.timeout, 7 * 86400);
	launch_opts_free(&o);
	/* the same value as the user's: not a widening */
	user_config("pids: 100\n");
	project_config("pids: 100\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	launch_opts_free(&o);
	/* a bad value is the value's own error */
	project_config("pids: many\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "not valid"));
	launch_opts_free(&o);
	user_config(NULL);
	project_config(NULL);
}

/*
 * The repository writes .aisb.yaml, and a YAML string spells any byte:
 * the errors that quote it reach the user's terminal with each control
 * character one '?' (an unknown key, a refused value, a bad one).
 */
static void
test_project_text(void **state)
{
	struct launch_opts	 o;
	char			 err[4096];
	size_t			 i;

	(void)state;
	project_config("\"bo\\e]0;gus\\a\": 1\nimage: \"x\\e[2J\"\n"
	    "packages: [\"a\\u009b1m\"]\nmemory: \"1\\rg\"\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "unknown key 'bo?]0;gus?'"));
	assert_non_null(strstr(err, "'image: x?[2J'"));
	assert_non_null(strstr(err, "'a?1m'"));
	assert_non_null(strstr(err, "1?g"));
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] == '\n' || (err[i] >= 0x20 &&
		    err[i] < 0x7f));
	launch_opts_free(&o);
	project_config(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources_table),
		cmocka_unit_test(test_project_limits),
		cmocka_unit_test(test_project_text),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
