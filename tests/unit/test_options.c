/*
 * Launcher options: precedence of the layers, provenance, the
 * alias-friendly command line, what a project config may not do, --env.
 */
#include "config.h"

#include <sys/stat.h>

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

#include "write_file.h"
#include <openssl/sha.h>

#include "session/mounts.h"
#include "session/options.h"

#include "opts_harness.h"

static void
test_defaults(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];

	(void)state;
	user_config(NULL);
	project_config(NULL);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("true"), NULL), 0);
	assert_int_equal(o.net, LAUNCH_NET_GATE);
	assert_int_equal(o.src[LO_NET], LAUNCH_SRC_DEFAULT);
	assert_int_equal(o.memory, 4ULL << 30);
	assert_int_equal(o.cpus_milli, 2000);
	assert_int_equal(o.pids, 1024);
	assert_int_equal(o.timeout, 0);
	assert_int_equal(strncmp(o.val[LO_HOME_VOLUME], "aisb-home-", 10), 0);
	assert_int_equal(o.src[LO_HOME_VOLUME], LAUNCH_SRC_DEFAULT);
	assert_non_null(strstr(o.val[LO_POLICY], "default.yaml"));
	assert_int_equal(o.ncmd, 1);
	assert_string_equal(o.cmd[0], "true");
	launch_opts_free(&o);
}

/* aisb-home-, 12 hex digits of SHA-256(path) and -direct, computed here
 * anew. */
static void
want_home(const char *path, char *out, size_t len)
{
	unsigned char	 md[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)path, strlen(path), md);
	snprintf(out, len, "aisb-home-%02x%02x%02x%02x%02x%02x-direct", md[0],
	    md[1], md[2], md[3], md[4], md[5]);
}

/*
 * One home volume per project: keyed by the workspace's real path, so a
 * symlink to the same folder shares it and another folder does not; a
 * --home-volume shares one on purpose.
 */
static void
test_home_per_project(void **state)
{
	struct launch_opts	 o;
	char			 err[1024], ws2[300], link[300], flag[320];
	char			 real[4096], want[64], first[64];

	(void)state;
	user_config(NULL);
	project_config(NULL);
	snprintf(ws2, sizeof(ws2), "%s/ws2", dir);
	snprintf(link, sizeof(link), "%s/wslink", dir);
	assert_int_equal(mkdir(ws2, 0700), 0);
	assert_int_equal(symlink(ws, link), 0);

	assert_non_null(realpath(ws, real));
	want_home(real, want, sizeof(want));
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("true"), NULL), 0);
	assert_string_equal(o.val[LO_HOME_VOLUME], want);
	snprintf(first, sizeof(first), "%s", o.val[LO_HOME_VOLUME]);
	launch_opts_free(&o);

	snprintf(flag, sizeof(flag), "--workspace=%s", link);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS(flag, "true"),
	    NULL), 0);
	assert_string_equal(o.val[LO_HOME_VOLUME], first);
	launch_opts_free(&o);

	snprintf(flag, sizeof(flag), "--workspace=%s", ws2);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS(flag, "true"),
	    NULL), 0);
	assert_non_null(realpath(ws2, real));
	want_home(real, want, sizeof(want));
	assert_string_equal(o.val[LO_HOME_VOLUME], want);
	assert_string_not_equal(o.val[LO_HOME_VOLUME], first);
	launch_opts_free(&o);

	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--home-volume", "shared-home", "true"), NULL), 0);
	assert_string_equal(o.val[LO_HOME_VOLUME], "shared-home");
	assert_int_equal(o.src[LO_HOME_VOLUME], LAUNCH_SRC_FLAG);
	launch_opts_free(&o);

	/* a home per workspace mode: no snapshot session plants one for a
	 * direct session, no read-only one for either */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--snapshot",
	    "true"), NULL), 0);
	assert_int_equal(strncmp(o.val[LO_HOME_VOLUME], first, 22), 0);
	assert_string_equal(o.val[LO_HOME_VOLUME] + 22, "-snapshot");
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--read-only",
	    "true"), NULL), 0);
	assert_string_equal(o.val[LO_HOME_VOLUME] + 22, "-readonly");
	assert_int_equal(o.readonly, 1);
	launch_opts_free(&o);

	unlink(link);
	rmdir(ws2);

}

/* A folder of the system is no workspace: it would be handed over. */
static void
test_workspace_check(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];
	const char		*refused[] = { "/", "/etc", "/usr/share",
	    "/var/lib", "/proc", "/tmp", "/home", "/usr/src", "/run/user" };
	const char		*allowed[] = { "/usr/src/linux",
	    "/var/lib/jenkins/workspace", "/var/tmp/x", "/home/u/proj",
	    "/var/lib/dpkg/x", "/etcetera", "/libfoo", "/usr/local/src/p" };
	size_t			 i;

	(void)state;
	user_config(NULL);
	project_config(NULL);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char flag[64];

		snprintf(flag, sizeof(flag), "--workspace=%s", refused[i]);
		/* resolving succeeds: gate up may run from "/" */
		assert_int_equal(resolve(&o, err, sizeof(err),
		    ARGS(flag, "true"), NULL), 0);
		assert_int_equal(launch_workspace_check(&o, err, sizeof(err)),
		    -1);
		assert_non_null(strstr(err, "folder of the system"));
		assert_non_null(strstr(err, "--workspace"));
		launch_opts_free(&o);
	}
	/* a project folder, and a name that only starts like one */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("true"), NULL), 0);
	assert_int_equal(launch_workspace_check(&o, err, sizeof(err)), 0);
	launch_opts_free(&o);
	/* the classification itself, on paths that need not exist here */
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		assert_int_equal(launch_system_folder(allowed[i]), 0);
	assert_int_equal(launch_system_folder("/usr/srcx"), 1);
	assert_int_equal(launch_system_folder("/lib64/x"), 1);
	assert_int_equal(launch_system_folder("/etc/aisb"), 1);
}

static void
test_precedence(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];

	(void)state;
	user_config("memory: 4g\ncpus: 1.5\npids: 300\ntimeout: 10m\n"
	    "net: direct\n");
	project_config("memory: 2g\npids: 200\n");
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--pids", "300", "cmd"), ARGS("AISB_MEMORY=3g", "AISB_PIDS=250")),
	    0);
	assert_int_equal(o.memory, 3ULL << 30);		/* env over project */
	assert_int_equal(o.src[LO_MEMORY], LAUNCH_SRC_ENV);
	assert_string_equal(o.where[LO_MEMORY], "AISB_MEMORY");
	assert_int_equal(o.pids, 300);			/* flag over env */
	assert_int_equal(o.src[LO_PIDS], LAUNCH_SRC_FLAG);
	assert_int_equal(o.cpus_milli, 1500);		/* user config */
	assert_int_equal(o.src[LO_CPUS], LAUNCH_SRC_USER);
	assert_non_null(strstr(o.where[LO_CPUS], "config.yaml:2:7"));
	assert_int_equal(o.timeout, 600);
	assert_int_equal(o.net, LAUNCH_NET_DIRECT);
	launch_opts_free(&o);

	/* project over user, lower */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.memory, 2ULL << 30);
	assert_int_equal(o.src[LO_MEMORY], LAUNCH_SRC_PROJECT);
	assert_int_equal(o.pids, 200);
	launch_opts_free(&o);
	user_config(NULL);
	project_config(NULL);
}

static void
test_alias_parsing(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];

	(void)state;
	/* alias claude='aisb claude'; claude --resume --net none */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--net", "none", "claude", "--resume", "--net", "gate"), NULL), 0);
	assert_int_equal(o.net, LAUNCH_NET_NONE);
	assert_int_equal(o.ncmd, 4);
	assert_string_equal(o.cmd[0], "claude");
	assert_string_equal(o.cmd[1], "--resume");
	assert_string_equal(o.cmd[3], "gate");
	launch_opts_free(&o);

	/* "--" ends the flags; what follows may look like a flag */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--memory=1g", "--", "--weird", "x"), NULL), 0);
	assert_int_equal(o.ncmd, 2);
	assert_string_equal(o.cmd[0], "--weird");
	assert_int_equal(o.memory, 1ULL << 30);
	launch_opts_free(&o);

	/* an unknown flag first is an error that says how to run it */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--resume"), NULL),
	    -1);
	assert_non_null(strstr(err, "aisb -- --resume"));
	launch_opts_free(&o);

	/* a single-dash argument is the command's */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("ls", "-la"), NULL),
	    0);
	assert_int_equal(o.ncmd, 2);
	launch_opts_free(&o);

	/* run's name only as the first argument */
	{
		char *argv[] = { (char *)"aisb", (char *)"run", (char *)"--keep",
		    (char *)"policy", NULL };
		char *envp[] = { envxdg, envhome, NULL };

		assert_int_equal(launch_opts_resolve(&o, 4, argv, envp, err,
		    sizeof(err)), 0);
		assert_int_equal(o.keep, 1);
		assert_string_equal(o.cmd[0], "policy");
		launch_opts_free(&o);
	}

	/* a flag missing its value, a bad value */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--net"), NULL), -1);
	assert_non_null(strstr(err, "--net needs a value"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--net", "host", "cmd"), NULL), -1);
	assert_non_null(strstr(err, "gate, none or direct"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--memory", "lots", "cmd"), NULL), -1);
	launch_opts_free(&o);
	/* no command: resolved (aisb run refuses it: tests/cli/defaults.sh) */
	assert_int_equal(resolve(&o, err, sizeof(err), NULL, NULL), 0);
	assert_int_equal(o.ncmd, 0);
	launch_opts_free(&o);
}

static void
test_project_cannot_widen(void **state)
{
	static const char *const bad[] = {
		"env: [HOME]\n",
		"home_volume: other-projects-home\n",
		"net: direct\n",
		"runtime: crun\n",
		"policy: mine.yaml\n",
		"project_policy: true\n",
		"workspace: /\n",
		"npm: [semver@7.6.3]\n",
		"pip: [black==24.1.0]\n",
		"image: localhost/evil:1\n",
		"keep: true\n",
		"quiet: true\n",
		"memory: 0\n",
		"mount: [/srv/x:/opt/x]\n",
		"protect: [Makefile]\n",
		"quarantine: false\n",
		"workspace_mode: direct\n",
	};
	struct launch_opts	 o;
	char			 err[1024];
	size_t			 i;

	(void)state;
	user_config(NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		project_config(bad[i]);
		if (resolve(&o, err, sizeof(err), ARGS("cmd"), NULL) != -1)
			fail_msg("project config accepted: %s", bad[i]);
		assert_non_null(strstr(err, ".aisb.yaml:1:"));
		launch_opts_free(&o);
	}
	/* narrowing is fine */
	project_config("net: none\nmemory: 1g\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.net, LAUNCH_NET_NONE);
	assert_int_equal(o.memory, 1ULL << 30);
	launch_opts_free(&o);
	/* the image: refused, with the line for the user config */
	project_config("image: localhost/evil:1\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "'image: localhost/evil:1'"));
	assert_non_null(strstr(err, "--image localhost/evil:1"));
	launch_opts_free(&o);
	/* the user can let the project pick the policy */
	user_config("project_policy: true\n");
	project_config("policy: mine.yaml\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.src[LO_POLICY], LAUNCH_SRC_PROJECT);
	/* relative to the project config's folder */
	assert_non_null(strstr(o.val[LO_POLICY], "/ws/mine.yaml"));
	launch_opts_free(&o);
	user_config(NULL);
	project_config(NULL);
}

/*
 * --quarantine narrows: net none, the workspace read-only, no gate, and
 * refuses a choice made for this session against it; a project config
 * may turn it on.  --mount's grammar; protect: is the user's.
 */
static void
test_quarantine_mount(void **state)
{
	static const char *const badmount[] = {
		"--mount=relative:/x", "--mount=/a:x", "--mount=/a",
		"--mount=/a:/b:rx", "--mount=/a,b:/x", "--mount=/a:/x/../y",
		"--mount=/a:/x/./y", "--mount=/a/:/x", "--mount=/a://x",
		"--mount=/a:/x:ro:rw",
	};
	struct launch_opts	 o;
	char			 err[1024], src[1100], dst[1100];
	size_t			 i;
	int			 ro;

	(void)state;
	user_config("net: gate\nhome_volume: mine\n");
	project_config("quarantine: true\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.quarantine, 1);
	assert_int_equal(o.net, LAUNCH_NET_NONE);
	assert_int_equal(o.readonly, 1);
	assert_int_equal(o.snapshot, 0);
	launch_opts_free(&o);
	/* this session's own choice against it: refused, not overridden */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--net=gate",
	    "cmd"), NULL), -1);
	assert_non_null(strstr(err, "network is none"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--snapshot",
	    "cmd"), NULL), -1);
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--home-volume=x",
	    "cmd"), NULL), -1);
	launch_opts_free(&o);
	user_config(NULL);
	project_config(NULL);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--quarantine",
	    "--net=none", "cmd"), NULL), 0);
	assert_int_equal(o.readonly, 1);
	launch_opts_free(&o);

	/* --mount: read-only unless :rw; the grammar refuses the rest */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("--mount",
	    "/srv/skills:/home/sandbox/.claude/skills", "--mount=/a:/b:rw",
	    "cmd"), NULL), 0);
	assert_int_equal(o.nmounts, 2);
	assert_int_equal(launch_mount_spec(o.mounts[0].text, src, dst, &ro,
	    err, sizeof(err)), 0);
	assert_string_equal(src, "/srv/skills");
	assert_string_equal(dst, "/home/sandbox/.claude/skills");
	assert_int_equal(ro, 1);
	assert_int_equal(launch_mount_spec(o.mounts[1].text, src, dst, &ro,
	    err, sizeof(err)), 0);
	assert_int_equal(ro, 0);
	launch_opts_free(&o);
	for (i = 0; i < sizeof(badmount) / sizeof(badmount[0]); i++) {
		if (resolve(&o, err, sizeof(err), ARGS(badmount[i], "cmd"),
		    NULL) != -1)
			fail_msg("mount accepted: %s", badmount[i]);
		launch_opts_free(&o);
	}
	/* at most LAUNCH_MOUNT_MAX */
	user_config("mount: [/a:/1, /a:/2, /a:/3, /a:/4, /a:/5, /a:/6, /a:/7, "
	    "/a:/8, /a:/9, /a:/10, /a:/11, /a:/12, /a:/13, /a:/14, /a:/15, "
	    "/a:/16, /a:/17]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "more than 16 mounts"));
	launch_opts_free(&o);
	/* protect: the user's list */
	user_config("protect: [Makefile, \".vscode/**\"]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.nprotect, 2);
	launch_opts_free(&o);
	user_config(NULL);
}

static void
test_config_errors(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];

	(void)state;
	user_config("memry: 1g\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "config.yaml:1:1: unknown key 'memry': "
	    "did you mean 'memory'?"));
	launch_opts_free(&o);
	/* every error of the file, one a line, not the first alone */
	user_config("polcy: p.yaml\nmemory: lots\nnet: gate\n"
	    "pakages: [git, curl]\ncpus: -1\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "config.yaml:1:1: unknown key 'polcy': "
	    "did you mean 'policy'?"));
	assert_non_null(strstr(err, "\n"));
	assert_non_null(strstr(err, "config.yaml:2:9: "));
	assert_non_null(strstr(err, "config.yaml:4:1: unknown key 'pakages': "
	    "did you mean 'packages'?"));
	assert_non_null(strstr(err, "config.yaml:5:7: "));
	assert_null(strstr(err, "config.yaml:3:"));
	launch_opts_free(&o);
	user_config("net: [a, b]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "a list is not valid here"));
	launch_opts_free(&o);
	user_config("a: &x 1\nb: *x\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	launch_opts_free(&o);
	user_config("pids: {a: 1}\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "nested"));
	launch_opts_free(&o);
	user_config("memory: \"unterminated\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "YAML syntax"));
	launch_opts_free(&o);
	user_config(NULL);
}

static void
test_env(void **state)
{
	struct launch_opts	 o;
	char			 err[1024], buf[128];
	FILE			*f;
	char			*text = NULL;
	size_t			 len = 0;

	(void)state;
	user_config("env: [EDITOR]\n");
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--env", "TOKEN", "--env=MODE=fast", "--env", "MAYBE?", "cmd"),
	    ARGS("TOKEN=s3cret-value", "EDITOR=vi")), 0);
	assert_int_equal(o.nenv, 4);
	assert_string_equal(o.env[0].text, "EDITOR");
	assert_int_equal(o.env[0].src, LAUNCH_SRC_USER);
	assert_string_equal(launch_env_redacted(o.env[2].text, buf,
	    sizeof(buf)), "MODE=<redacted>");
	/* --print-config never shows a value */
	f = open_memstream(&text, &len);
	launch_opts_print(&o, f);
	fclose(f);
	assert_null(strstr(text, "s3cret"));
	assert_null(strstr(text, "fast"));
	assert_non_null(strstr(text, "MODE=<redacted>"));
	assert_non_null(strstr(text, "(flag: --env)"));
	free(text);
	launch_opts_free(&o);

	/* unset on the host: refuse, unless NAME? */
	user_config(NULL);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--env", "TOKEN", "cmd"), NULL), -1);
	assert_non_null(strstr(err, "TOKEN is not set"));
	assert_non_null(strstr(err, "TOKEN?"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--env", "1BAD", "cmd"), NULL), -1);
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--env", "A=line\nbreak", "cmd"), NULL), -1);
	launch_opts_free(&o);
	/* AISB_ENV is not a way in */
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"),
	    ARGS("AISB_ENV=TOKEN", "TOKEN=x")), 0);
	assert_int_equal(o.nenv, 0);
	launch_opts_free(&o);
	user_config(NULL);
}

static void
test_lists(void **state)
{
	struct launch_opts	 o;
	char			 err[1024];

	(void)state;
	user_config("packages: [git, curl]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.npackages, 2);
	launch_opts_free(&o);
	/* a higher layer replaces the list */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--package", "nodejs", "--package", "npm", "cmd"), NULL), 0);
	assert_int_equal(o.npackages, 2);
	assert_string_equal(o.packages[0].text, "nodejs");
	assert_int_equal(o.packages[1].src, LAUNCH_SRC_FLAG);
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"),
	    ARGS("AISB_PACKAGES=python3 make")), 0);
	assert_int_equal(o.npackages, 2);
	assert_string_equal(o.packages[1].text, "make");
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--package", "Bad Name", "cmd"), NULL), -1);
	launch_opts_free(&o);
	user_config(NULL);
}

/* --npm and --pip: their own lists, checked, not a project's to set. */
static void
test_tools(void **state)
{
	static const char *const bad[] = { "semver@^7", "Semver", "-rf",
	    "semver@latest", "@scope", "a b" };
	struct launch_opts	 o;
	char			 err[1024];
	size_t			 i;

	(void)state;
	user_config("npm: [semver@7.6.3, \"@openai/codex\"]\npip: "
	    "[black==24.1.0]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.nnpm, 2);
	assert_string_equal(o.npm[1].text, "@openai/codex");
	assert_int_equal(o.npm[0].src, LAUNCH_SRC_USER);
	assert_int_equal(o.npip, 1);
	assert_int_equal(o.npackages, 0);	/* lists of their own */
	launch_opts_free(&o);
	/* a flag replaces the user's list */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--npm", "semver@7.6.2", "cmd"), NULL), 0);
	assert_int_equal(o.nnpm, 1);
	assert_string_equal(o.npm[0].text, "semver@7.6.2");
	assert_int_equal(o.npip, 1);
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"),
	    ARGS("AISB_NPM=left-pad@1.3.0,semver")), 0);
	assert_int_equal(o.nnpm, 2);
	assert_string_equal(o.npm[1].text, "semver");
	launch_opts_free(&o);
	user_config(NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (resolve(&o, err, sizeof(err), ARGS("--npm", bad[i], "cmd"),
		    NULL) != -1)
			fail_msg("--npm %s taken", bad[i]);
		assert_non_null(strstr(err, "--npm"));
		launch_opts_free(&o);
	}
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--pip", "black", "cmd"), NULL), -1);
	launch_opts_free(&o);
	/* the project config: refused, saying why */
	project_config("npm: [semver@7.6.3]\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), -1);
	assert_non_null(strstr(err, "may not set 'npm'"));
	assert_non_null(strstr(err, "own scripts"));
	launch_opts_free(&o);
	project_config(NULL);
}

/*
 * Snapshot sessions' options: --snapshot is --workspace-mode snapshot; a
 * project may choose snapshot, never direct, nor apply, nor exclusions;
 * --apply=yes is refused saying how to apply; patterns from every layer
 * but the project's.
 */
static void
test_snapshot(void **state)
{
	static const char *const bad[] = {
		"workspace_mode: direct\n",
		"apply: ask\n",
		"snapshot_exclude: [secret]\n",
	};
	struct launch_opts	 o;
	char			 err[1024];
	size_t			 i;

	(void)state;
	user_config(NULL);
	project_config(NULL);
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.snapshot, 0);
	assert_int_equal(o.apply, LAUNCH_APPLY_AUTO);
	assert_int_equal(o.nexclude, 0);
	launch_opts_free(&o);

	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--snapshot", "--apply=never", "--snapshot-exclude", "*.log",
	    "cmd"), NULL), 0);
	assert_int_equal(o.snapshot, 1);
	assert_int_equal(o.src[LO_WORKSPACE_MODE], LAUNCH_SRC_FLAG);
	assert_string_equal(o.where[LO_WORKSPACE_MODE], "--snapshot");
	assert_int_equal(o.apply, LAUNCH_APPLY_NEVER);
	assert_int_equal(o.nexclude, 1);
	assert_string_equal(o.exclude[0].text, "*.log");
	assert_string_equal(o.cmd[0], "cmd");
	launch_opts_free(&o);

	/* a flag after --snapshot wins, as any later flag */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--snapshot", "--workspace-mode", "direct", "cmd"), NULL), 0);
	assert_int_equal(o.snapshot, 0);
	launch_opts_free(&o);

	/* there is no unattended yes */
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--apply=yes", "cmd"), NULL), -1);
	assert_non_null(strstr(err, "aisb apply ID"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--workspace-mode", "copy", "cmd"), NULL), -1);
	assert_non_null(strstr(err, "direct|snapshot"));
	launch_opts_free(&o);
	assert_int_equal(resolve(&o, err, sizeof(err),
	    ARGS("--snapshot-exclude", "a\nb", "cmd"), NULL), -1);
	launch_opts_free(&o);

	/* environment and user config */
	user_config("snapshot_exclude: [\"*.tmp\", build]\napply: ask\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"),
	    ARGS("AISB_WORKSPACE_MODE=snapshot")), 0);
	assert_int_equal(o.snapshot, 1);
	assert_int_equal(o.src[LO_WORKSPACE_MODE], LAUNCH_SRC_ENV);
	assert_int_equal(o.apply, LAUNCH_APPLY_ASK);
	assert_int_equal(o.nexclude, 2);
	launch_opts_free(&o);
	user_config(NULL);

	/* the project narrows to snapshot, and no further */
	project_config("workspace_mode: snapshot\n");
	assert_int_equal(resolve(&o, err, sizeof(err), ARGS("cmd"), NULL), 0);
	assert_int_equal(o.snapshot, 1);
	assert_int_equal(o.src[LO_WORKSPACE_MODE], LAUNCH_SRC_PROJECT);
	launch_opts_free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		project_config(bad[i]);
		if (resolve(&o, err, sizeof(err), ARGS("cmd"), NULL) != -1)
			fail_msg("project config accepted: %s", bad[i]);
		assert_non_null(strstr(err, ".aisb.yaml:1:"));
		launch_opts_free(&o);
	}
	project_config(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_home_per_project),
		cmocka_unit_test(test_workspace_check),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_alias_parsing),
		cmocka_unit_test(test_project_cannot_widen),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_quarantine_mount),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_tools),
		cmocka_unit_test(test_snapshot),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
