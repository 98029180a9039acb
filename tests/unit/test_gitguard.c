/*
 * launcher/session: a direct session's git guard and workspace walk
 * without podman.  Real repositories made by the host's git (a linked
 * worktree, a submodule, a bare one, a nested clone) in a temporary
 * folder; the container's part played by editing the private folders as
 * git inside would (and as a hostile command would); then the end: what
 * goes back into the host's repositories, what is offered, what stays
 * and is named.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/gitguard.h"
#include "session/options.h"
#include "session/podman.h"
#include "session/protect.h"
#include "session/wsscan.h"

static char	 top[64];
static char	 ws[PATH_MAX], sdir[PATH_MAX], errf[PATH_MAX];

/* argv run in dir, its output dropped: its exit status. */
static int
run(const char *dir, const char *const *argv)
{
	pid_t	 pid;
	int	 st, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == -1)
			_exit(126);
		if ((fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
		setenv("HOME", top, 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

#define GIT(dir, ...) do { \
	const char *const a_[] = { "git", "-c", "user.name=t", "-c", \
	    "user.email=t@example.test", "-c", "protocol.file.allow=always", \
	    __VA_ARGS__, NULL }; \
	if (run(dir, a_) != 0) \
		fail_msg("git %s failed in %s", a_[7], dir); \
} while (0)

static void
put(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *
slurp(const char *path)
{
	static char	 buf[65536];
	FILE		*f = fopen(path, "r");
	size_t		 n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* a/b, valid for the next seven calls. */
static const char *
at(const char *a, const char *b)
{
	static char	*p[8];
	static int	 k;
	char		*s;

	if (asprintf(&s, "%s/%s", a, b) == -1)
		abort();
	k = (k + 1) % 8;
	free(p[k]);
	p[k] = s;
	return s;
}

/* A repository with a commit, a submodule and a linked worktree. */
static int
setup(void **state)
{
	char	 remote[PATH_MAX];

	(void)state;
	snprintf(top, sizeof(top), "/tmp/aisb-gitguard-XXXXXX");
	if (mkdtemp(top) == NULL)
		return -1;
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(sdir, sizeof(sdir), "%s/session", top);
	snprintf(errf, sizeof(errf), "%s/stderr", top);
	snprintf(remote, sizeof(remote), "%s/remote", top);
	if (mkdir(sdir, 0700) == -1)
		return -1;
	GIT(top, "init", "-q", "remote");
	put(at(remote, "r"), "r\n");
	GIT(remote, "add", "r");
	GIT(remote, "commit", "-qm", "r");
	GIT(top, "init", "-q", "ws");
	put(at(ws, "a"), "a\n");
	GIT(ws, "add", "a");
	GIT(ws, "commit", "-qm", "one");
	GIT(ws, "submodule", "add", "-q", remote, "sub");
	GIT(ws, "commit", "-qm", "sub");
	GIT(ws, "worktree", "add", "-q", "wt");
	return 0;
}

static int
teardown(void **state)
{
	const char *const rm[] = { "rm", "-rf", top, NULL };

	(void)state;
	return run("/", rm) == 0 ? 0 : -1;
}

/* The mount for dst in m, or NULL. */
static const struct launch_mount *
mount_at(const struct launch_mounts *m, const char *rel)
{
	size_t	 i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].dst, at(ws, rel)) == 0)
			return &m->v[i];
	return NULL;
}

static struct launch_gitguard *
plan(struct launch_wsscan *s, struct launch_mounts *m)
{
	struct launch_gitguard	*g;
	char			 err[1024];

	assert_int_equal(launch_wsscan(ws, NULL, 0, s, err, sizeof(err)), 0);
	g = launch_gitguard_new(ws, "/SRC", sdir, s, err, sizeof(err));
	if (g == NULL)
		fail_msg("plan: %s", err);
	memset(m, 0, sizeof(*m));
	assert_int_equal(launch_gitguard_mounts(g, m), 0);
	return g;
}

/*
 * The mounts: the private folder over .git, the host's objects, refs and
 * logs read-write, hooks, info, alternates and the .git files read-only;
 * a submodule's and a worktree's git folders inside the private one.
 */
static void
mounts(void **state)
{
	struct launch_wsscan	 s;
	struct launch_mounts	 m;
	struct launch_gitguard	*g;
	const struct launch_mount *x;

	(void)state;
	g = plan(&s, &m);
	assert_int_equal(launch_gitguard_count(g), 3);	/* .git, sub, wt */
	assert_non_null(x = mount_at(&m, ".git"));
	assert_string_equal(x->src, at(sdir, "git/0"));
	assert_int_equal(x->ro, 0);
	assert_int_equal(m.v[0].dst == x->dst, 1);	/* parents first */
	assert_non_null(x = mount_at(&m, ".git/objects"));
	assert_string_equal(x->src, "/SRC/.git/objects");
	assert_int_equal(x->ro, 0);
	assert_int_equal(mount_at(&m, ".git/refs")->ro, 0);
	assert_int_equal(mount_at(&m, ".git/logs")->ro, 0);
	assert_int_equal(mount_at(&m, ".git/hooks")->ro, 1);
	assert_int_equal(mount_at(&m, ".git/info")->ro, 1);
	assert_int_equal(mount_at(&m, ".git/objects/info/alternates")->ro, 1);
	assert_int_equal(mount_at(&m, "sub/.git")->ro, 1);
	assert_int_equal(mount_at(&m, "wt/.git")->ro, 1);
	assert_int_equal(mount_at(&m, ".git/modules/sub/hooks")->ro, 1);
	assert_int_equal(mount_at(&m, ".git/modules/sub/objects")->ro, 0);
	assert_int_equal(mount_at(&m, ".git/worktrees/wt/logs")->ro, 0);
	/* copied, not mounted */
	assert_null(mount_at(&m, ".git/config"));
	assert_null(mount_at(&m, ".git/HEAD"));
	assert_null(mount_at(&m, ".git/modules"));
	launch_mounts_free(&m);
	launch_gitguard_free(g);
	launch_wsscan_free(&s);
}

/* stderr into errf (on 1) and back (on 0): what was said, after 0. */
static const char *
capture(int on)
{
	static char	 said[65536];
	static int	 saved = -1;
	int		 fd;

	fflush(stderr);
	if (on) {
		saved = dup(2);
		fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		assert_true(fd != -1 && saved != -1);
		dup2(fd, 2);
		close(fd);
		return NULL;
	}
	dup2(saved, 2);
	close(saved);
	snprintf(said, sizeof(said), "%s", slurp(errf));
	return said;
}

/* Runs launch_gitguard_end: what it said. */
static const char *
end(struct launch_gitguard *g)
{
	capture(1);
	launch_gitguard_end(g, "test", LAUNCH_APPLY_NEVER);
	return capture(0);
}

/*
 * The end: HEAD, index and a new ORIG_HEAD go back; the config, a
 * worktree's config.worktree, a rebase's todo list and a link do not;
 * the config's keys that cannot run code are offered with the commands
 * that apply them, the others named without their values.
 */
static void
back_and_offer(void **state)
{
	struct launch_wsscan	 s;
	struct launch_mounts	 m;
	struct launch_gitguard	*g;
	const char		*said;
	char			 err[1024], cfg[70000], p[PATH_MAX + 8];

	(void)state;
	snprintf(p, sizeof(p), "%s/git/0", sdir);
	g = plan(&s, &m);
	assert_int_equal(launch_gitguard_make(g, getuid(), getgid(), err,
	    sizeof(err)), 0);
	/* made on the host: the mount points git makes itself */
	assert_non_null(slurp(at(ws, ".git/objects/info/alternates")));
	/* what git inside writes */
	put(at(p, "HEAD"), "ref: refs/heads/feature\n");
	put(at(p, "ORIG_HEAD"), "0123456789012345678901234567890123456789\n");
	snprintf(cfg, sizeof(cfg), "%s[core]\n\tfsmonitor = touch %s/ran\n"
	    "[remote \"gh\"]\n\turl = https://example.org/r.git\n"
	    "\tfetch = +refs/heads/*:refs/remotes/gh/*\n"
	    "[remote \"evil\"]\n\turl = ext::sh -c touch%%20x\n"
	    "\tfetch = +refs/heads/*:refs/remotes/evil/*\n"
	    "[credential]\n\thelper = store --file=/tmp/SECRETFILE\n"
	    "[branch \"feature\"]\n\tremote = gh\n\tmerge = refs/heads/f\n",
	    slurp(at(p, "config")), top);
	put(at(p, "config"), cfg);
	assert_int_equal(mkdir(at(p, "rebase-merge"), 0755), 0);
	put(at(p, "rebase-merge/git-rebase-todo"), "exec touch ran\n");
	put(at(p, "worktrees/wt/config.worktree"),
	    "[core]\n\tfsmonitor = evil\n");
	put(at(p, "worktrees/wt/HEAD"), "ref: refs/heads/wt2\n");
	assert_int_equal(unlink(at(p, "description")), 0);
	assert_int_equal(symlink("/etc/passwd", at(p, "description")), 0);
	said = end(g);

	assert_string_equal(slurp(at(ws, ".git/HEAD")),
	    "ref: refs/heads/feature\n");
	assert_non_null(slurp(at(ws, ".git/ORIG_HEAD")));
	assert_string_equal(slurp(at(ws, ".git/worktrees/wt/HEAD")),
	    "ref: refs/heads/wt2\n");
	assert_null(strstr(slurp(at(ws, ".git/config")), "fsmonitor"));
	assert_null(strstr(slurp(at(ws, ".git/config")), "gh"));
	assert_null(slurp(at(ws, ".git/worktrees/wt/config.worktree")));
	assert_null(slurp(at(ws, ".git/rebase-merge/git-rebase-todo")));
	assert_null(strstr(slurp(at(ws, ".git/description")), "root:"));
	if (getenv("TEST_SHOW") != NULL)
		fputs(said, stdout);

	assert_non_null(strstr(said, ".git/rebase-merge/ (made by the "
	    "command)"));
	assert_non_null(strstr(said, ".git/worktrees/wt/config.worktree "
	    "(made by the command)"));
	assert_non_null(strstr(said, ".git/description (replaced by a "
	    "folder or link)"));
	assert_non_null(strstr(said, "core.fsmonitor  NOT OFFERED"));
	assert_non_null(strstr(said, "credential.helper  NOT OFFERED"));
	assert_null(strstr(said, "SECRETFILE"));
	assert_non_null(strstr(said, "remote.evil.url  NOT OFFERED: a "
	    "transport"));
	assert_non_null(strstr(said, "remote.evil.fetch  NOT OFFERED"));
	assert_non_null(strstr(said, "remote.gh.url = https://example.org/"
	    "r.git  (offered"));
	assert_non_null(strstr(said, "branch.feature.remote = gh  (offered"));
	assert_non_null(strstr(said, "git config --file '"));
	assert_non_null(strstr(said, "--replace-all 'remote.gh.url' "
	    "'https://example.org/r.git'"));
	assert_null(strstr(said, "'remote.evil"));
	launch_mounts_free(&m);
	launch_gitguard_free(g);
	launch_wsscan_free(&s);
}

/* A file the host's git changed during the session stays the host's. */
static void
conflict(void **state)
{
	struct launch_wsscan	 s;
	struct launch_mounts	 m;
	struct launch_gitguard	*g;
	const char		*said;
	char			 err[1024];

	(void)state;
	g = plan(&s, &m);
	assert_int_equal(launch_gitguard_make(g, getuid(), getgid(), err,
	    sizeof(err)), 0);
	put(at(sdir, "git/0/HEAD"), "ref: refs/heads/session\n");
	GIT(ws, "checkout", "-q", "-b", "hostside");
	said = end(g);
	assert_string_equal(slurp(at(ws, ".git/HEAD")),
	    "ref: refs/heads/hostside\n");
	assert_non_null(strstr(said, ".git/HEAD changed on the host during "
	    "the session: yours is kept"));
	launch_mounts_free(&m);
	launch_gitguard_free(g);
	launch_wsscan_free(&s);
}

/*
 * The walk: nested and bare repositories, .git files and links, the
 * files that run on their own, the protected paths; node_modules and a
 * repository's inside not walked.  The end's list: what was made or
 * changed.
 */
static void
walk(void **state)
{
	struct launch_wsscan		 s;
	const struct launch_wsent	*e;
	char				*pat[] = { (char *)"notes/**",
					    (char *)"secret.txt" };
	char				 err[1024];
	struct launch_gitguard		*g;

	(void)state;
	GIT(ws, "init", "-q", "--bare", "b.git");
	GIT(ws, "init", "-q", "vendor/x");
	assert_int_equal(mkdir(at(ws, "node_modules"), 0755), 0);
	put(at(ws, "node_modules/package.json"), "{}\n");
	put(at(ws, "Makefile"), "all:\n");
	assert_int_equal(mkdir(at(ws, "notes"), 0755), 0);
	put(at(ws, "notes/n"), "n\n");
	assert_int_equal(launch_wsscan(ws, pat, 2, &s, err, sizeof(err)), 0);
	assert_non_null(e = launch_wsscan_find(&s, ".git"));
	assert_true(e->flags & LAUNCH_WS_GITDIR);
	assert_true(launch_wsscan_find(&s, "b.git")->flags & LAUNCH_WS_BARE);
	assert_true(launch_wsscan_find(&s, "vendor/x/.git")->flags &
	    LAUNCH_WS_GITDIR);
	assert_true(launch_wsscan_find(&s, "sub/.git")->flags &
	    LAUNCH_WS_GITFILE);
	assert_true(launch_wsscan_find(&s, "Makefile")->flags &
	    LAUNCH_WS_AUTORUN);
	assert_true(launch_wsscan_find(&s, "notes")->flags &
	    LAUNCH_WS_PROTECT);
	assert_null(launch_wsscan_find(&s, "notes/n"));
	assert_null(launch_wsscan_find(&s, "node_modules/package.json"));
	assert_null(launch_wsscan_find(&s, ".git/hooks"));
	/* every repository guarded: the main one, sub, wt, b.git, vendor/x */
	g = launch_gitguard_new(ws, ws, sdir, &s, err, sizeof(err));
	assert_non_null(g);
	assert_int_equal(launch_gitguard_count(g), 5);
	launch_gitguard_free(g);

	/* what the command made or changed, listed */
	put(at(ws, ".envrc"), "touch ran\n");
	put(at(ws, "Makefile"), "all:\n\ttouch ran\n");
	put(at(ws, "secret.txt"), "x\n");
	GIT(ws, "init", "-q", "planted");
	{
		const char *said;

		capture(1);
		launch_protect_report(&s, NULL, ws, pat, 2);
		said = capture(0);
		assert_non_null(strstr(said, "A .envrc  [!] direnv"));
		assert_non_null(strstr(said, "M Makefile  [!] make"));
		assert_non_null(strstr(said, "A secret.txt  [!] protected"));
		assert_non_null(strstr(said, "A planted/.git/  [!] git"));
		assert_null(strstr(said, "notes"));
	}
	/* a .git that is a link: refused, not followed */
	assert_int_equal(mkdir(at(ws, "l"), 0755), 0);
	assert_int_equal(symlink("/tmp", at(ws, "l/.git")), 0);
	launch_wsscan_free(&s);
	assert_int_equal(launch_wsscan(ws, NULL, 0, &s, err, sizeof(err)), 0);
	assert_null(launch_gitguard_new(ws, ws, sdir, &s, err, sizeof(err)));
	assert_non_null(strstr(err, "l/.git is a link"));
	launch_wsscan_free(&s);
}

/*
 * What git runs or includes from the work tree, as its config says
 * (core.hooksPath, include.path): read-only where it exists, listed when
 * the command makes it.
 */
static void
hooks_path(void **state)
{
	struct launch_wsscan	 s;
	struct launch_gitpaths	 gp;
	struct launch_mounts	 m;
	char			 err[1024];
	size_t			 i;
	const char		*said;

	(void)state;
	GIT(ws, "config", "core.hooksPath", ".husky/_");
	GIT(ws, "config", "include.path", "../shared.gitconfig");
	assert_int_equal(mkdir(at(ws, ".husky"), 0755), 0);
	put(at(ws, ".husky/pre-commit"), "#!/bin/sh\n");
	assert_int_equal(launch_wsscan(ws, NULL, 0, &s, err, sizeof(err)), 0);
	assert_int_equal(launch_protect_git(&gp, ws, &s, getuid(), getgid(),
	    err, sizeof(err)), 0);
	for (i = 0; i < gp.n; i++)
		if (strcmp(gp.rel[i], ".husky") == 0)
			assert_true(gp.hooks[i] && gp.existed[i]);
		else if (strcmp(gp.rel[i], "shared.gitconfig") == 0)
			assert_true(!gp.hooks[i] && !gp.existed[i]);
	assert_int_equal(gp.n, 3);	/* .husky/_ and .husky; the file */
	memset(&m, 0, sizeof(m));
	assert_int_equal(launch_protect_mounts(&s, &gp, ws, "/SRC", &m, err,
	    sizeof(err)), 0);
	assert_non_null(mount_at(&m, ".husky"));
	assert_int_equal(mount_at(&m, ".husky")->ro, 1);
	assert_null(mount_at(&m, "shared.gitconfig"));
	launch_mounts_free(&m);

	put(at(ws, "shared.gitconfig"), "[core]\n\tfsmonitor = evil\n");
	capture(1);
	launch_protect_report(&s, &gp, ws, NULL, 0);
	said = capture(0);
	assert_non_null(strstr(said, "A shared.gitconfig  [!] git reads it "
	    "as config"));
	launch_gitpaths_free(&gp);
	launch_wsscan_free(&s);
}

/* A link in a git folder (.git/hooks -> ../githooks): its target in the
 * work tree is read-only inside, and the link is copied. */
static void
hooks_link(void **state)
{
	struct launch_wsscan	 s;
	struct launch_mounts	 m;
	struct launch_gitguard	*g;
	const struct launch_mount *x;

	(void)state;
	assert_int_equal(rename(at(ws, ".git/hooks"), at(ws, "githooks")), 0);
	assert_int_equal(symlink("../githooks", at(ws, ".git/hooks")), 0);
	g = plan(&s, &m);
	assert_non_null(x = mount_at(&m, "githooks"));
	assert_string_equal(x->src, "/SRC/githooks");
	assert_int_equal(x->ro, 1);
	assert_null(mount_at(&m, ".git/hooks"));	/* a link, copied */
	launch_mounts_free(&m);
	launch_gitguard_free(g);
	launch_wsscan_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(mounts, setup, teardown),
		cmocka_unit_test_setup_teardown(back_and_offer, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(walk, setup, teardown),
		cmocka_unit_test_setup_teardown(hooks_path, setup, teardown),
		cmocka_unit_test_setup_teardown(hooks_link, setup, teardown),
	};

	if (access("/usr/bin/git", X_OK) != 0) {
		printf("SKIP: git not found\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
