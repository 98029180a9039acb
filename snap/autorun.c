/*
 * Files that run, or choose what runs, without anyone reading them first
 * (snap.h, snap_autorun; docs/snapshot.md "Files that run on their own"):
 * an editor opening the folder, a shell entering it, git at the next
 * commit, npm or make at the next build, aisb at the next session.  One
 * table, for the summary of a snapshot session (never folded away, each
 * marked) and for what a bind session reports at its end.
 *
 * Patterns are snap_glob's (snap.h, "Rules"): without '/', the last
 * component at any depth (a Makefile in a subfolder runs with make -C);
 * with '/', the whole path, "**" any number of folders, and a folder's
 * pattern ("** /.vscode/ **") matches the folder and all below it.  TOP:
 * only at the top of the tree, where aisb itself reads the file.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "snap-int.h"

#define TOP	1	/* at the top of the tree only */
#define NEVER	2	/* runs nothing: the rows below do not count */

static const struct {
	const char	*pattern;
	const char	*why;
	int		 flags;
} autorun[] = {
	/* aisb's own: the next session in this folder reads them */
	{ ".aisb.yaml", "aisb reads it: the next session's project config",
	    TOP },
	{ "package-lock.json", "aisb reads it: --allow-from-lockfile", TOP },
	{ "npm-shrinkwrap.json", "aisb reads it: --allow-from-lockfile", TOP },
	{ "yarn.lock", "aisb reads it: --allow-from-lockfile", TOP },
	{ "pnpm-lock.yaml", "aisb reads it: --allow-from-lockfile", TOP },
	{ "Cargo.lock", "aisb reads it: --allow-from-lockfile", TOP },
	{ "poetry.lock", "aisb reads it: --allow-from-lockfile", TOP },
	{ "go.sum", "aisb reads it: --allow-from-lockfile", TOP },
	{ "Gemfile.lock", "aisb reads it: --allow-from-lockfile", TOP },
	{ "gems.locked", "aisb reads it: --allow-from-lockfile", TOP },
	{ "requirements*.txt", "aisb reads it: --allow-from-lockfile", TOP },
	/* git, at the next git command; a hook by its exact name only */
	{ "**/.git/**/hooks/*.sample", NULL, NEVER },
	{ "**/.git/**/hooks/**", "git runs it: a hook", 0 },
	{ ".git", "git reads it: a repository, or a .git file that points "
	    "git at another folder", 0 },
	{ "**/.git/**/config", "git runs what it names: core.fsmonitor, "
	    "hooksPath, filters, sshCommand", 0 },
	{ "**/.git/**/config.worktree", "git runs what it names: "
	    "core.fsmonitor, hooksPath, filters, sshCommand", 0 },
	{ "**/.git/**/commondir", "git takes config and hooks from where it "
	    "points", 0 },
	{ "**/.husky/**", "git runs it: a husky hook", 0 },
	{ ".pre-commit-config.yaml", "git commit runs it: pre-commit", 0 },
	{ "lefthook.yml", "git runs it: lefthook", 0 },
	{ ".lefthook.yml", "git runs it: lefthook", 0 },
	{ "lefthook-local.yml", "git runs it: lefthook", 0 },
	{ "**/.lefthook/**", "git runs it: lefthook", 0 },
	{ ".gitattributes", "git reads it: filters and diff drivers", 0 },
	{ ".gitmodules", "git reads it: submodules", 0 },
	/* a shell entering the folder, an editor opening it */
	{ ".envrc", "direnv runs it on cd", 0 },
	{ ".mise.toml", "mise runs its hooks on cd", 0 },
	{ "mise.toml", "mise runs its hooks on cd", 0 },
	{ "**/.vscode/**", "VS Code runs its tasks and settings", 0 },
	{ "*.code-workspace", "VS Code runs its tasks and settings", 0 },
	{ "**/.idea/**", "JetBrains IDEs run its configurations", 0 },
	{ "**/.devcontainer/**", "dev containers run it, some on the host",
	    0 },
	{ ".devcontainer.json", "dev containers run it, some on the host", 0 },
	/* the next build or install */
	{ "package.json", "npm runs its scripts", 0 },
	{ ".npmrc", "npm reads it: script-shell, node-options", 0 },
	{ ".yarnrc.yml", "yarn runs its yarnPath and plugins", 0 },
	{ ".yarnrc", "yarn reads it: yarn-path", 0 },
	{ ".pnpmfile.cjs", "pnpm runs it at install", 0 },
	{ "Makefile", "make runs it", 0 },
	{ "makefile", "make runs it", 0 },
	{ "GNUmakefile", "make runs it", 0 },
	{ "*.mk", "make runs it", 0 },
	{ "build.rs", "cargo runs it at build", 0 },
	{ "setup.py", "pip runs it at install", 0 },
	{ "conftest.py", "pytest runs it", 0 },
	/* CI, with the repository's secrets */
	{ "**/.github/workflows/**", "CI runs it", 0 },
	{ ".gitlab-ci.yml", "CI runs it", 0 },
};

const char *
snap_autorun(const char *rel)
{
	size_t	 i;

	for (i = 0; i < sizeof(autorun) / sizeof(autorun[0]); i++) {
		if ((autorun[i].flags & TOP) && strchr(rel, '/') != NULL)
			continue;
		if (snap_glob(autorun[i].pattern, rel))
			return autorun[i].why;	/* NULL for NEVER */
	}
	return NULL;
}
