/*
 * One grammar per name (launcher/image/names.c), and the three places
 * that take names agreeing on it: the flags (launch_opts_resolve), the
 * agent recipes (launch_agents_load_files) and the image spec
 * (launch_image_spec_check).  The recipes' loader had a grammar of its
 * own until they were one: it took "1.02.3" (semver forbids leading
 * zeros) and "name-==1.0" (a PEP 508 name ends in a letter or digit),
 * which a flag refused; the flags took a one-letter Debian package,
 * which the image refused.  Each case below is refused (or taken) by all
 * three.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "image/agent.h"
#include "image/image.h"
#include "image/names.h"
#include "session/options.h"

static char	 dir[] = "/tmp/aisb-names-XXXXXX";
static char	 recipes[300], envhome[320], envxdg[320], wsflag[320];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(recipes, sizeof(recipes), "%s/agents.yaml", dir);
	snprintf(envhome, sizeof(envhome), "HOME=%s", dir);
	snprintf(envxdg, sizeof(envxdg), "XDG_CONFIG_HOME=%s", dir);
	snprintf(wsflag, sizeof(wsflag), "--workspace=%s", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	(void)unlink(recipes);
	(void)rmdir(dir);
	return 0;
}

/* 0 when a recipe with field: "value" loads, -1 when it is refused. */
static int
by_recipe(const char *field, const char *value)
{
	struct launch_agents	*set;
	char			 err[1024];
	FILE			*f;
	int			 rc;

	assert_non_null(f = fopen(recipes, "w"));
	if (strcmp(field, "config") == 0)	/* a list */
		fprintf(f, "version: 1\nagents:\n  t:\n    config: [\"%s\"]\n",
		    value);
	else
		fprintf(f, "version: 1\nagents:\n  t:\n    %s: \"%s\"\n", field,
		    value);
	if (strcmp(field, "node") == 0)
		fprintf(f, "    npm: \"x@1.0.0\"\n");
	fclose(f);
	assert_non_null(set = malloc(sizeof(*set)));
	rc = launch_agents_load_files(set, recipes, NULL, err, sizeof(err));
	free(set);
	return rc;
}

/* 0 when --flag value resolves, -1 when it is refused. */
static int
by_flag(const char *flag, const char *value)
{
	struct launch_opts	 o;
	char			 err[1024];
	char			*argv[] = { (char *)"aisb", wsflag, (char *)flag,
	    (char *)value, (char *)"--", (char *)"true", NULL };
	char			*envp[] = { envhome, envxdg, NULL };
	int			 rc;

	rc = launch_opts_resolve(&o, 6, argv, envp, err, sizeof(err));
	launch_opts_free(&o);
	return rc;
}

/* 0 when an image spec with the entry passes, -1 when it is refused. */
static int
by_image(const char *kind, const char *value)
{
	struct launch_image_spec	 spec;
	const char			*list[1] = { value };
	char				 err[512];

	memset(&spec, 0, sizeof(spec));
	if (strcmp(kind, "npm") == 0) {
		spec.npm = list;
		spec.nnpm = 1;
	} else if (strcmp(kind, "pip") == 0) {
		spec.pip = list;
		spec.npip = 1;
	} else if (strcmp(kind, "node") == 0)
		spec.node = value;
	else if (strcmp(kind, "config") == 0) {
		spec.homedirs = list;
		spec.nhomedirs = 1;
	} else {
		spec.packages = list;
		spec.npackages = 1;
	}
	return launch_image_spec_check(&spec, err, sizeof(err));
}

/*
 * The recipes' field, the flag and the image spec all give want (0
 * taken, -1 refused) for value.
 */
static void
agree(const char *field, const char *flag, const char *value, int want)
{
	if (by_recipe(field, value) != want)
		fail_msg("recipe %s: '%s' %s", field, value, want ? "taken" :
		    "refused");
	if (by_flag(flag, value) != want)
		fail_msg("%s '%s' %s", flag, value, want ? "taken" : "refused");
	if (by_image(field, value) != want)
		fail_msg("image %s '%s' %s", field, value, want ? "taken" :
		    "refused");
}

/* semver 2.0.0, item 2: "MUST NOT contain leading zeroes" */
static void
leading_zeros(void **state)
{
	static const char *const bad[] = { "x@01.2.3", "x@1.02.3", "x@1.2.03",
	    "x@00.0.0" };
	static const char *const good[] = { "x@0.0.0", "x@1.20.3",
	    "x@10.0.0-rc.1" };
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(launch_npm_version_ok(strchr(bad[i], '@') + 1));
		agree("npm", "--npm", bad[i], -1);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		agree("npm", "--npm", good[i], 0);
	/* a Node release: X.Y.Z alone, no leading zero either */
	assert_int_equal(by_recipe("node", "22.023.5"), -1);
	assert_int_equal(by_image("node", "22.023.5"), -1);
	assert_int_equal(by_recipe("node", "22.23.5"), 0);
	assert_int_equal(by_image("node", "22.23.5"), 0);
	assert_false(launch_node_version_ok("22.23.5-rc.1"));
}

/* PEP 508: a name starts and ends with a letter or digit */
static void
pip_name_ends(void **state)
{
	static const char *const bad[] = { "name-==1.0", "name.==1.0",
	    "name_==1.0", "-name==1.0", ".name==1.0" };
	static const char *const good[] = { "a==1", "a-b.c_d==1.0",
	    "Zope.Interface==6.0", "x==1.0_rc1", "x==1!2.0+local" };
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		agree("pip", "--pip", bad[i], -1);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		agree("pip", "--pip", good[i], 0);
	assert_false(launch_pip_name_ok("a-", 2));
	assert_true(launch_pip_name_ok("a-b", 3));
	assert_false(launch_pip_version_ok("1.*"));
}

/* Debian Policy 5.6.1: two characters at least, lower case */
static void
deb_packages(void **state)
{
	(void)state;
	assert_int_equal(by_flag("--package", "x"), -1);
	assert_int_equal(by_image("packages", "x"), -1);
	assert_int_equal(by_flag("--package", "Git"), -1);
	assert_int_equal(by_image("packages", "Git"), -1);
	assert_int_equal(by_flag("--package", "g++"), 0);
	assert_int_equal(by_image("packages", "g++"), 0);
	assert_int_equal(by_flag("--package", "libc6.1-dev"), 0);
	assert_false(launch_deb_package_ok("-x"));
	assert_false(launch_deb_package_ok("+x"));
}

/* Folders under the home and variables' names, recipes and the image */
static void
homedirs_and_vars(void **state)
{
	char	 longest[LAUNCH_HOMEDIR_MAX + 2];

	(void)state;
	assert_int_equal(by_recipe("config", ".claude/x"), 0);
	assert_int_equal(by_image("config", ".claude/x"), 0);
	assert_int_equal(by_recipe("config", "a/../b"), -1);
	assert_int_equal(by_image("config", "a/../b"), -1);
	memset(longest, 'a', sizeof(longest) - 1);
	longest[LAUNCH_HOMEDIR_MAX] = '\0';
	assert_true(launch_homedir_ok(longest));
	longest[LAUNCH_HOMEDIR_MAX] = 'a';
	longest[LAUNCH_HOMEDIR_MAX + 1] = '\0';
	assert_int_equal(by_recipe("config", longest), -1);
	assert_int_equal(by_image("config", longest), -1);
	assert_true(launch_env_name_ok("_A1", 3));
	assert_false(launch_env_name_ok("1A", 2));
	assert_false(launch_env_name_ok("A-B", 3));
	assert_int_equal(by_flag("--env", "A-B=1"), -1);
	assert_int_equal(by_flag("--agent", "Claude"), -1);
	assert_false(launch_agent_name_ok("Claude"));
	assert_true(launch_agent_name_ok("claude.2_x-y"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leading_zeros),
		cmocka_unit_test(pip_name_ends),
		cmocka_unit_test(deb_packages),
		cmocka_unit_test(homedirs_and_vars),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
