/*
 * snap/: the stage (exclusions, sanitized .git/config, bounds), the
 * change set (create, modify, delete, rename, mode, folders, links,
 * skips, bounds), its file and digest, the printers.  Real files in a
 * temporary folder.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

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

static const struct snap_entry *
entry(const struct snap_manifest *m, const char *path)
{
	size_t	i;

	for (i = 0; i < snap_manifest_count(m); i++)
		if (strcmp(snap_manifest_entry(m, i)->path, path) == 0)
			return snap_manifest_entry(m, i);
	return NULL;
}

static void
globs(void **state)
{
	(void)state;
	assert_true(snap_glob(".env", ".env"));
	assert_true(snap_glob(".env", "a/b/.env"));
	assert_false(snap_glob(".env", "a/.envrc"));
	assert_true(snap_glob(".env.*", "x/.env.local"));
	assert_true(snap_glob("*.pem", "certs/server.pem"));
	assert_false(snap_glob("*.pem", "certs/server.pem.txt"));
	assert_true(snap_glob("id_*", "home/.ssh/id_ed25519"));
	assert_true(snap_glob(".git/hooks", ".git/hooks"));
	assert_false(snap_glob(".git/hooks", "sub/.git/hooks"));
	assert_true(snap_glob(".git/modules/**/hooks", ".git/modules/a/hooks"));
	assert_true(snap_glob(".git/modules/**/hooks",
	    ".git/modules/a/modules/b/hooks"));
	assert_false(snap_glob(".git/modules/**/hooks", ".git/modules/hookz"));
	assert_true(snap_glob("**/.aws/credentials", ".aws/credentials"));
	assert_true(snap_glob("**/.aws/credentials", "h/u/.aws/credentials"));
	assert_true(snap_glob("a/*/c", "a/b/c"));
	assert_false(snap_glob("a/*/c", "a/b/x/c"));
	assert_true(snap_glob("a/?/c", "a/b/c"));
	assert_true(snap_glob("secrets/**", "secrets/x/y"));
	assert_true(snap_glob("secrets/**", "secrets"));
	assert_false(snap_glob("a/b", "a"));
	assert_true(snap_link_inside("a/b", "c"));
	assert_true(snap_link_inside("a/b", "../c"));
	assert_false(snap_link_inside("a/b", "../../c"));
	assert_false(snap_link_inside("a", "/etc/passwd"));
	/* ".." after a name: that name may be a link, so it counts as out */
	assert_false(snap_link_inside("a/b", "x/../../y"));
	assert_false(snap_link_inside("a/b", "x/../../../y"));
	assert_true(snap_link_inside("sub/l1", ".."));
	assert_false(snap_link_inside("sub/x", "l1/../.ssh"));
	assert_true(snap_link_inside("sub/x", "l1/.ssh"));
	assert_true(snap_link_inside("a/b/c", "../../d/./e"));
	assert_false(snap_link_inside("a", ""));
	/* names Windows would open as another */
	assert_null(snap_win_name_bad("src/a.c"));
	assert_null(snap_win_name_bad(".git/hooks/x"));
	assert_null(snap_win_name_bad("console.log"));
	assert_null(snap_win_name_bad("com10"));
	assert_non_null(snap_win_name_bad(".git/hooks./x"));
	assert_non_null(snap_win_name_bad(".env "));
	assert_non_null(snap_win_name_bad("a/NUL.txt"));
	assert_non_null(snap_win_name_bad("nul"));
	assert_non_null(snap_win_name_bad("Com1.c"));
	assert_non_null(snap_win_name_bad("lpt9"));
	assert_non_null(snap_win_name_bad("conin$"));
	assert_non_null(snap_win_name_bad("a.txt:stream"));
	assert_non_null(snap_win_name_bad("a\\b"));
	assert_non_null(snap_win_name_bad("a/b?"));
	assert_non_null(snap_win_name_bad("GIT~1/hooks/x"));
	assert_non_null(snap_win_name_bad("COM\xc2\xb9"));
	assert_non_null(snap_win_name_bad("a/lpt\xc2\xb3.txt"));
	assert_null(snap_win_name_bad("com\xc2\xb9x"));
	assert_null(snap_win_name_bad("a~b"));
}

/* A tree with one of each thing the stage leaves out. */
static void
hostile_tree(const char *src)
{
	put(src, "README", "hello\n", 0644);
	put(src, "bin/run.sh", "#!/bin/sh\necho run\n", 0755);
	put(src, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	put(src, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0755);
	put(src, ".git/config",
	    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
	    "\tfsmonitor = /tmp/evil\n\thooksPath = .husky\n"
	    "\tsshCommand = evil\n"
	    "[remote \"origin\"]\n\turl = https://user:s3cret@example.org/r\n"
	    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	    "[filter \"lfs\"]\n\tclean = evil %f\n"
	    "[credential]\n\thelper = store\n"
	    "[include]\n\tpath = /etc/evil\n"
	    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	    0644);
	put(src, ".env", "TOKEN=1\n", 0600);
	put(src, "app/.env.local", "TOKEN=2\n", 0600);
	put(src, "tls/server.pem", "-----BEGIN CERTIFICATE-----\n", 0644);
	put(src, "keys/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n",
	    0600);
	put(src, "src/id_map.c", "int id_map;\n", 0644);
	put(src, ".npmrc", "//registry.example/:_authToken=abc\n", 0644);
	put(src, "web/.npmrc", "save-exact=true\n", 0644);
	put(src, ".git-credentials", "https://u:p@example.org\n", 0600);
	lnk(src, "link-in", "bin/run.sh");
	lnk(src, "bin/up", "../README");
	lnk(src, "link-out", "../../etc/passwd");
	lnk(src, "link-abs", "/etc/passwd");
	put(src, "hard1", "shared\n", 0644);
	if (link(at(src, "hard1"), at(src, "hard2")) == -1)
		abort();
	if (mkfifo(at(src, "fifo"), 0644) == -1)
		abort();
}

static void
stage_leaves_out(void **state)
{
	struct fx		*f = *state;
	const struct snap_entry	*e;
	struct snap_stage_stats	 st;
	char			*cfg;
	size_t			 len;

	hostile_tree(f->src);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);
	/* staged */
	assert_true(exists(f->stage, "README"));
	assert_true(exists(f->stage, "bin/run.sh"));
	assert_true(exists(f->stage, ".git/HEAD"));
	assert_true(exists(f->stage, "src/id_map.c"));
	assert_true(exists(f->stage, "web/.npmrc"));
	assert_true(exists(f->stage, "link-in"));
	assert_true(exists(f->stage, "bin/up"));
	/* left out, each with its reason */
	static const struct { const char *p, *why; } out[] = {
		{ ".git/hooks", "git hooks run code" },
		{ ".env", "credential" },
		{ "app/.env.local", "credential" },
		{ "tls/server.pem", "credential" },
		{ "keys/id_rsa", "private key" },
		{ ".npmrc", "credential" },
		{ ".git-credentials", "credential" },
		{ "link-out", "link leaves the tree" },
		{ "link-abs", "link leaves the tree" },
		{ "hard1", "multi-link file" },
		{ "hard2", "multi-link file" },
		{ "fifo", "special file" },
	};
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		assert_false(exists(f->stage, out[i].p));
		assert_non_null(e = entry(f->m, out[i].p));
		assert_string_equal(e->excluded, out[i].why);
	}
	assert_null(entry(f->m, ".git/hooks/pre-commit"));
	/* the file's mode is in the manifest; its hash is not made at
	 * stage time (the change set hashes what changed) */
	assert_non_null(e = entry(f->m, "bin/run.sh"));
	assert_int_equal(e->type, SNAP_FILE);
	assert_int_equal(e->mode, 0755);
	assert_string_equal(e->sha256, "");
	assert_null(e->excluded);
	assert_non_null(e = entry(f->m, "bin/up"));
	assert_string_equal(e->link, "../README");
	/* .git/config: sanitized */
	assert_non_null(e = entry(f->m, ".git/config"));
	assert_string_equal(e->excluded, "sanitized copy");
	assert_non_null(cfg = snap_file_read(at(f->stage, ".git/config"), 1 << 20,
	    &len));
	assert_non_null(strstr(cfg, "repositoryformatversion = 0"));
	assert_non_null(strstr(cfg, "url = https://example.org/r"));
	assert_non_null(strstr(cfg, "fetch = +refs/heads/*"));
	assert_non_null(strstr(cfg, "merge = refs/heads/main"));
	assert_null(strstr(cfg, "s3cret"));
	assert_null(strstr(cfg, "fsmonitor"));
	assert_null(strstr(cfg, "hooksPath"));
	assert_null(strstr(cfg, "sshCommand"));
	assert_null(strstr(cfg, "evil"));
	assert_null(strstr(cfg, "helper"));
	assert_null(strstr(cfg, "include"));
	free(cfg);
	snap_manifest_stats(f->m, &st);
	assert_int_equal(st.excluded, 12);
	assert_int_equal(st.links, 2);

	/* unchanged stage: nothing to propose */
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	assert_int_equal(snap_changes_count(f->c), 0);
	assert_int_equal(snap_changes_effective(f->c), 0);
}

static void
rules_configurable(void **state)
{
	struct fx	*f = *state;

	put(f->src, ".env", "A=1\n", 0600);
	put(f->src, "db/x.sqlite", "data", 0644);
	put(f->src, "secrets/a/b", "data", 0644);
	assert_int_equal(snap_rules_drop(f->rules, ".env", f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(snap_rules_drop(f->rules, ".env", f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	assert_non_null(strstr(f->err, "*.pem"));
	assert_int_equal(snap_rules_add(f->rules, "*.sqlite", f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(snap_rules_add(f->rules, "secrets", f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(snap_rules_add(f->rules, "../x", f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	/* a line break would add a line to the launcher's state file */
	assert_int_equal(snap_rules_add(f->rules, "x\nworkspace /etc",
	    f->err, sizeof(f->err)), SNAP_EINVAL);
	assert_non_null(strstr(f->err, "control character"));
	assert_int_equal(snap_rules_add(f->rules, "a\033b", f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	assert_int_equal(snap_rules_add(f->rules, "", f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	assert_string_equal(snap_rules_match(f->rules, "secrets/a/b", 0),
	    "configured");
	assert_null(snap_rules_match(f->rules, "src/main.c", 0));
	/* the git rules at any depth: a nested clone, or one a command made */
	assert_non_null(snap_rules_match(f->rules, "sub/.git/hooks", 1));
	assert_non_null(snap_rules_match(f->rules, "vendor/x/.git/config", 0));
	assert_non_null(snap_rules_match(f->rules,
	    "a/.git/modules/m/config", 0));
	assert_null(snap_rules_match(f->rules, "sub/git/config", 0));
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);
	assert_true(exists(f->stage, ".env"));
	assert_false(exists(f->stage, "db/x.sqlite"));
	assert_false(exists(f->stage, "secrets"));
	assert_string_equal(entry(f->m, "db/x.sqlite")->excluded,
	    "configured");
}

/* Each bound: an error with the number, and no stage left behind. */
static void
stage_bounds(void **state)
{
	struct fx		*f = *state;
	struct snap_limits	 l;
	char			 name[64];
	int			 i;

	for (i = 0; i < 10; i++) {
		xsnprintf(name, sizeof(name), "d/f%d", i);
		put(f->src, name, "0123456789", 0644);
	}
	put(f->src, "a/b/c/d/e", "x", 0644);
	l = f->lim;
	l.entries = 7;
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &l,
	    &f->m, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "more than 7 entries"));
	assert_false(exists(f->base, "stage"));
	assert_null(f->m);
	l = f->lim;
	l.bytes = 55;
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &l,
	    &f->m, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "more than 55 bytes"));
	assert_false(exists(f->base, "stage"));
	l = f->lim;
	l.file_bytes = 9;
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &l,
	    &f->m, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "10 bytes, over 9"));
	l = f->lim;
	l.depth = 4;
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &l,
	    &f->m, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "5 folders deep, over 4 (limit depth): "
	    "exclude folders or raise the limit"));
	l = f->lim;
	l.path_len = 8;
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &l,
	    &f->m, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "over 8"));
	assert_false(exists(f->base, "stage"));
	/* the stage folder must be new */
	mkd(f->base, "stage", 0700);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
	    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_EINVAL);
	assert_true(exists(f->base, "stage"));
}

static void
expect(const struct snap_changes *c, size_t i, enum snap_change_kind k,
    enum snap_type t, const char *path)
{
	const struct snap_change	*x = snap_changes_get(c, i);

	assert_non_null(x);
	if (x->kind != k || x->type != t || strcmp(x->path, path) != 0)
		fail_msg("change %zu: %d %d %s, expected %d %d %s", i,
		    x->kind, x->type, x->path, k, t, path);
}

static void
changes_computed(void **state)
{
	struct fx			*f = *state;
	const struct snap_change	*x;
	struct snap_changes		*c2 = NULL;
	char				 path[4096], *text;
	size_t				 i, len;

	put(f->src, "keep.txt", "same\n", 0644);
	put(f->src, "edit.txt", "one\ntwo\nthree\n", 0644);
	put(f->src, "gone.txt", "bye\n", 0644);
	put(f->src, "old-name.txt", "moved\n", 0644);
	put(f->src, "run.sh", "#!/bin/sh\n", 0644);
	put(f->src, "olddir/a", "a\n", 0644);
	put(f->src, "olddir/sub/b", "b\n", 0644);
	put(f->src, "swap", "a file that becomes a folder\n", 0644);
	mkd(f->src, "locked", 0755);
	put(f->src, ".git/config", "[core]\n\tbare = false\n", 0644);
	lnk(f->src, "l", "keep.txt");
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);

	/* what an agent does in the stage */
	put(f->stage, "edit.txt", "one\nTWO\nthree\n", 0644);
	assert_int_equal(unlink(at(f->stage, "gone.txt")), 0);
	assert_int_equal(rename(at(f->stage, "old-name.txt"),
	    at(f->stage, "new-name.txt")), 0);
	assert_int_equal(chmod(at(f->stage, "run.sh"), 0755), 0);
	put(f->stage, "newdir/deep/x", "x\n", 0600);
	rm_rf(at(f->stage, "olddir"));
	assert_int_equal(unlink(at(f->stage, "swap")), 0);
	put(f->stage, "swap/inner", "in\n", 0644);
	assert_int_equal(chmod(at(f->stage, "locked"), 0700), 0);
	lnk(f->stage, "l", "edit.txt");
	lnk(f->stage, "l2", "newdir/deep/x");
	lnk(f->stage, "escape", "../../../etc/shadow");
	put(f->stage, ".env", "STOLEN=1\n", 0644);
	put(f->stage, ".git/hooks/post-checkout", "#!/bin/sh\nevil\n", 0755);
	put(f->stage, ".git/config", "[core]\n\tfsmonitor = evil\n", 0644);
	put(f->stage, "keys/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----",
	    0600);
	assert_int_equal(mkfifo(at(f->stage, "pipe"), 0644), 0);

	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	i = 0;
	expect(f->c, i++, SNAP_SKIP, SNAP_FILE, ".env");
	expect(f->c, i++, SNAP_SKIP, SNAP_FILE, ".git/config");
	expect(f->c, i++, SNAP_SKIP, SNAP_DIR, ".git/hooks");
	expect(f->c, i++, SNAP_MODIFY, SNAP_FILE, "edit.txt");
	expect(f->c, i++, SNAP_SKIP, SNAP_LINK, "escape");
	expect(f->c, i++, SNAP_DELETE, SNAP_FILE, "gone.txt");
	expect(f->c, i++, SNAP_CREATE, SNAP_DIR, "keys");
	expect(f->c, i++, SNAP_SKIP, SNAP_FILE, "keys/id_ed25519");
	expect(f->c, i++, SNAP_MODIFY, SNAP_LINK, "l");
	expect(f->c, i++, SNAP_CREATE, SNAP_LINK, "l2");
	expect(f->c, i++, SNAP_MODE, SNAP_DIR, "locked");
	expect(f->c, i++, SNAP_CREATE, SNAP_FILE, "new-name.txt");
	expect(f->c, i++, SNAP_CREATE, SNAP_DIR, "newdir");
	expect(f->c, i++, SNAP_CREATE, SNAP_DIR, "newdir/deep");
	expect(f->c, i++, SNAP_CREATE, SNAP_FILE, "newdir/deep/x");
	expect(f->c, i++, SNAP_DELETE, SNAP_FILE, "old-name.txt");
	expect(f->c, i++, SNAP_DELETE, SNAP_DIR, "olddir");
	expect(f->c, i++, SNAP_DELETE, SNAP_FILE, "olddir/a");
	expect(f->c, i++, SNAP_DELETE, SNAP_DIR, "olddir/sub");
	expect(f->c, i++, SNAP_DELETE, SNAP_FILE, "olddir/sub/b");
	expect(f->c, i++, SNAP_SKIP, SNAP_SPECIAL, "pipe");
	expect(f->c, i++, SNAP_MODE, SNAP_FILE, "run.sh");
	expect(f->c, i++, SNAP_DELETE, SNAP_FILE, "swap");
	expect(f->c, i++, SNAP_CREATE, SNAP_DIR, "swap");
	expect(f->c, i++, SNAP_CREATE, SNAP_FILE, "swap/inner");
	assert_int_equal(snap_changes_count(f->c), i);
	assert_int_equal(snap_changes_effective(f->c), 19);
	/* details */
	for (i = 0; (x = snap_changes_get(f->c, i)) != NULL; i++) {
		if (strcmp(x->path, "run.sh") == 0) {
			assert_int_equal(x->old_mode, 0644);
			assert_int_equal(x->new_mode, 0755);
		}
		if (strcmp(x->path, "l") == 0) {
			assert_string_equal(x->old_link, "keep.txt");
			assert_string_equal(x->new_link, "edit.txt");
		}
		if (strcmp(x->path, "edit.txt") == 0) {
			assert_string_not_equal(x->old_sha256, x->new_sha256);
			assert_int_equal(x->new_size, 14);
		}
		if (strcmp(x->path, "escape") == 0)
			assert_string_equal(x->reason, "link leaves the tree");
		if (strcmp(x->path, ".env") == 0)
			assert_string_equal(x->reason, "excluded: credential");
	}
	assert_int_equal(strlen(snap_changes_digest(f->c)), 64);

	/* to a file and back: the same digest; an edit is caught */
	xsnprintf(path, sizeof(path), "%s/changes", f->base);
	assert_int_equal(snap_changes_save(f->c, path, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(snap_changes_load(path, &c2, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_string_equal(snap_changes_digest(c2), snap_changes_digest(f->c));
	assert_int_equal(snap_changes_count(c2), snap_changes_count(f->c));
	snap_changes_free(c2);
	c2 = NULL;
	assert_non_null(text = snap_file_read(path, 1 << 20, &len));
	text[strstr(text, "edit.txt") - text] = 'E';
	put(f->base, "changes", text, 0600);
	free(text);
	assert_int_equal(snap_changes_load(path, &c2, f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	assert_non_null(strstr(f->err, "digest"));
	assert_null(c2);
	put(f->base, "changes", "aisb-snap-changes 1\nA f 0 644\n", 0600);
	assert_int_equal(snap_changes_load(path, &c2, f->err,
	    sizeof(f->err)), SNAP_EINVAL);
}

static void
changes_bounded(void **state)
{
	struct fx		*f = *state;
	struct snap_limits	 l;
	char			 name[64];
	int			 i;

	put(f->src, "a", "a", 0644);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);
	for (i = 0; i < 20; i++) {
		xsnprintf(name, sizeof(name), "spam/%d", i);
		put(f->stage, name, "0123456789", 0644);
	}
	l = f->lim;
	l.entries = 10;
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules, &l,
	    &f->c, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "more than 10 entries"));
	assert_null(f->c);
	l = f->lim;
	l.bytes = 100;
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules, &l,
	    &f->c, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "more than 100 bytes"));
	l = f->lim;
	l.file_bytes = 5;
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules, &l,
	    &f->c, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "10 bytes after the command, over 5"));
	/* the walk's bounds are the stage's, said for this walk */
	l = f->lim;
	l.depth = 1;
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules, &l,
	    &f->c, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "a path 2 folders deep after the "
	    "command, over 1 (limit depth): nothing is proposed"));
	l = f->lim;
	l.path_len = 3;
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules, &l,
	    &f->c, f->err, sizeof(f->err)), SNAP_EBOUND);
	assert_non_null(strstr(f->err, "a path of 4 bytes after the command, "
	    "over 3 (limit path_len): nothing is proposed"));
}

static void
manifest_file(void **state)
{
	struct fx		*f = *state;
	struct snap_manifest	*m2 = NULL;
	char			 path[4096], *text;
	size_t			 i, len;

	hostile_tree(f->src);
	put(f->src, "odd name %.txt", "x", 0644);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);
	xsnprintf(path, sizeof(path), "%s/manifest", f->base);
	assert_int_equal(snap_manifest_save(f->m, path, f->err,
	    sizeof(f->err)), SNAP_OK);
	if (snap_manifest_load(path, &m2, f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("load: %s", f->err);
	assert_int_equal(snap_manifest_count(m2), snap_manifest_count(f->m));
	for (i = 0; i < snap_manifest_count(m2); i++) {
		const struct snap_entry	*a = snap_manifest_entry(f->m, i);
		const struct snap_entry	*b = snap_manifest_entry(m2, i);

		assert_string_equal(a->path, b->path);
		assert_string_equal(a->sha256, b->sha256);
		assert_int_equal(a->mode, b->mode);
		assert_int_equal(a->type, b->type);
		assert_true((a->excluded == NULL) == (b->excluded == NULL));
	}
	assert_non_null(entry(m2, "odd name %.txt"));
	snap_manifest_free(m2);
	m2 = NULL;
	/* cut short: refused */
	assert_non_null(text = snap_file_read(path, 1 << 20, &len));
	text[len / 2] = '\0';
	*strrchr(text, '\n') = '\0';
	strcat(text, "\n");
	put(f->base, "manifest", text, 0600);
	free(text);
	assert_int_equal(snap_manifest_load(path, &m2, f->err,
	    sizeof(f->err)), SNAP_EINVAL);
	assert_null(m2);
}

static void
touch_ns(const char *base, const char *rel, long ns)
{
	struct timespec	ts[2] = { { 0, UTIME_OMIT }, { 1000000000, ns } };

	if (utimensat(AT_FDCWD, at(base, rel), ts, AT_SYMLINK_NOFOLLOW) == -1)
		abort();
}

/*
 * Nothing is hashed at stage time: the change set hashes the stage files
 * whose identity changed and their originals from the source while the
 * source is as staged; a source changed meanwhile makes the original
 * unknown ("", a conflict at apply); the hashes found are kept in the
 * manifest's file, so the digest does not move when the host does.
 */
static void
changes_lazy_hash(void **state)
{
	struct fx			*f = *state;
	struct snap_manifest		*m2 = NULL;
	struct snap_changes		*c2 = NULL;
	const struct snap_change	*x;
	const struct snap_entry		*e;
	char				 path[4096], tx[4096];
	char				 two[SNAP_SHA256_HEX + 1];
	char				 four[SNAP_SHA256_HEX + 1];
	char				 digest[SNAP_SHA256_HEX + 1];
	char				*text;
	size_t				 len;

	put(f->src, "a.txt", "one\n", 0644);
	put(f->src, "b.txt", "two\n", 0644);
	put(f->src, "c.txt", "three\n", 0644);
	put(f->src, "d.txt", "four\n", 0644);
	put(f->src, "e.txt", "five\n", 0644);
	assert_int_equal(snap_sha_buf("two\n", 4, two), 0);
	assert_int_equal(snap_sha_buf("four\n", 5, four), 0);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules, &f->lim,
	    &f->m, f->err, sizeof(f->err)), SNAP_OK);
	xsnprintf(path, sizeof(path), "%s/manifest", f->base);
	assert_int_equal(snap_manifest_save(f->m, path, f->err,
	    sizeof(f->err)), SNAP_OK);
	snap_manifest_free(f->m);
	f->m = NULL;
	if (snap_manifest_load(path, &f->m, f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("load: %s", f->err);
	assert_non_null(e = entry(f->m, "b.txt"));
	assert_string_equal(e->sha256, "");

	touch_ns(f->stage, "a.txt", 1);		/* same content */
	put(f->stage, "b.txt", "TWO\n", 0644);	/* modified */
	put(f->stage, "c.txt", "THREE\n", 0644);	/* modified ... */
	put(f->src, "c.txt", "host three\n", 0644);	/* ... and on the host */
	assert_int_equal(unlink(at(f->stage, "d.txt")), 0);
	touch_ns(f->src, "e.txt", 2);		/* only the host touched */
	if (snap_changes_compute(f->m, f->stage, f->rules, &f->lim, &f->c,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("compute: %s", f->err);
	assert_int_equal(snap_changes_count(f->c), 3);
	assert_non_null(x = change_at(f->c, "b.txt"));
	assert_int_equal(x->kind, SNAP_MODIFY);
	assert_string_equal(x->old_sha256, two);
	assert_non_null(x = change_at(f->c, "c.txt"));
	assert_int_equal(x->kind, SNAP_MODIFY);
	assert_string_equal(x->old_sha256, "");	/* unknown */
	assert_non_null(x = change_at(f->c, "d.txt"));
	assert_int_equal(x->kind, SNAP_DELETE);
	assert_string_equal(x->old_sha256, four);
	xsnprintf(digest, sizeof(digest), "%s", snap_changes_digest(f->c));

	/* the unknown original is a conflict, nothing written */
	xsnprintf(tx, sizeof(tx), "%s/tx1", f->base);
	assert_int_equal(snap_tx_apply(tx, f->src, f->stage, f->m, f->c,
	    f->err, sizeof(f->err)), SNAP_ECONFLICT);
	assert_non_null(strstr(f->err, "c.txt"));
	assert_non_null(text = snap_file_read(at(f->src, "b.txt"), 1 << 20, &len));
	assert_string_equal(text, "two\n");
	free(text);
	assert_true(exists(f->src, "d.txt"));

	/* the hashes found are in the file: the host edits b and d since,
	 * the change set is the same */
	assert_int_equal(snap_manifest_load(path, &m2, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_non_null(e = entry(m2, "b.txt"));
	assert_string_equal(e->sha256, two);
	put(f->src, "b.txt", "host two\n", 0644);
	put(f->src, "d.txt", "host four\n", 0644);
	if (snap_changes_compute(m2, f->stage, f->rules, &f->lim, &c2,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("compute again: %s", f->err);
	assert_string_equal(snap_changes_digest(c2), digest);
	snap_changes_free(c2);
	snap_manifest_free(m2);
}

static char *
printed(int diff, struct fx *f)
{
	char	*p = NULL;
	size_t	 len = 0;
	FILE	*out = open_memstream(&p, &len);

	if (diff)
		assert_int_equal(snap_changes_print_diff(f->c, f->src,
		    f->stage, 0, out, f->err, sizeof(f->err)), SNAP_OK);
	else
		assert_int_equal(snap_changes_print_summary(f->c, out, 0),
		    SNAP_OK);
	fclose(out);
	return p;
}

static void
printers(void **state)
{
	struct fx	*f = *state;
	char		*s, big[64];
	int		 i;

	for (i = 1; i <= 20; i++) {
		xsnprintf(big, sizeof(big), "line%d\n", i);
		put(f->src, "ctx.txt", "", 0644);
	}
	{
		char	text[512] = "";

		for (i = 1; i <= 20; i++) {
			xsnprintf(big, sizeof(big), "line%d\n", i);
			strcat(text, big);
		}
		put(f->src, "ctx.txt", text, 0644);
		text[strstr(text, "line10\n") - text + 4] = 'X';
		put(f->src, "bin.dat", "", 0644);
		{
			int	fd = open(at(f->src, "bin.dat"), O_WRONLY);

			assert_int_equal(write(fd, "a\0b", 3), 3);
			close(fd);
		}
		assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
		    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_OK);
		put(f->stage, "ctx.txt", text, 0644);
	}
	put(f->stage, "new.txt", "fresh\nno newline", 0644);
	{
		int	fd = open(at(f->stage, "bin.dat"), O_WRONLY | O_TRUNC);

		assert_int_equal(write(fd, "\0\1\2\3", 4), 4);
		close(fd);
	}
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	s = printed(0, f);
	assert_non_null(strstr(s, "M bin.dat\n"));
	assert_non_null(strstr(s, "M ctx.txt\n"));
	assert_non_null(strstr(s, "A new.txt\n"));
	assert_non_null(strstr(s, "1 created, 2 modified, 0 deleted"));
	assert_non_null(strstr(s, snap_changes_digest(f->c)));
	free(s);
	s = printed(1, f);
	assert_non_null(strstr(s, "--- a/ctx.txt\n+++ b/ctx.txt\n"
	    "@@ -7,7 +7,7 @@\n line7\n line8\n line9\n-line10\n+lineX0\n"
	    " line11\n line12\n line13\n"));
	assert_non_null(strstr(s, "--- /dev/null\n+++ b/new.txt\n"
	    "@@ -0,0 +1,2 @@\n+fresh\n+no newline\n"
	    "\\ No newline at end of file\n"));
	assert_non_null(strstr(s, "binary bin.dat: 3 bytes sha256 "));
	free(s);
	/* an edit on the host since staging shows as a conflict, then the
	 * sandbox's version, where it is, against the host's now */
	put(f->src, "ctx.txt", "someone else\n", 0644);
	s = printed(1, f);
	assert_non_null(strstr(s, "conflict ctx.txt: changed on the host "
	    "since it was staged; below, the sandbox's version ("));
	assert_non_null(strstr(s, "/ctx.txt) against the host's now, to "
	    "merge by hand\n--- a/ctx.txt (the host's now)\n"
	    "+++ b/ctx.txt (the sandbox's)\n@@ -1,1 +1,20 @@\n"
	    "-someone else\n+line1\n"));
	free(s);
	/* gone on the host: all of the sandbox's version is new */
	assert_int_equal(unlink(at(f->src, "ctx.txt")), 0);
	s = printed(1, f);
	assert_non_null(strstr(s, "merge by hand\n--- /dev/null\n"
	    "+++ b/ctx.txt (the sandbox's)\n@@ -0,0 +1,20 @@\n+line1\n"));
	free(s);
}

/*
 * Git's metadata on the way back: what a commit writes goes; what makes
 * git run code or look elsewhere (commondir, a .git file, config and
 * hooks of a planted or bare repository, alternates, links, the folder
 * core.hooksPath names) does not, whatever its spelling of ".git".
 */
static void
changes_git_metadata(void **state)
{
	struct fx	*f = *state;

	put(f->src, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->src, ".git/config", "[core]\n\tbare = false\n"
	    "\thooksPath = .husky\n", 0644);
	put(f->src, ".git/refs/heads/main", "0000\n", 0644);
	mkd(f->src, ".git/objects", 0755);
	put(f->src, ".git-blame-ignore-revs", "x\n", 0644);
	put(f->src, ".husky/pre-commit", "npm test\n", 0755);
	put(f->src, "src/a.c", "int a;\n", 0644);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
	    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_OK);
	/* a commit */
	put(f->stage, ".git/objects/ab/cdef", "blob", 0444);
	put(f->stage, ".git/refs/heads/main", "1111\n", 0644);
	put(f->stage, ".git/logs/HEAD", "log\n", 0644);
	put(f->stage, ".git/index", "idx", 0644);
	put(f->stage, ".git/COMMIT_EDITMSG", "msg\n", 0644);
	/* git pointed elsewhere, or at code */
	put(f->stage, ".git/commondir", "x\n", 0644);
	put(f->stage, ".git/x/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->stage, ".git/x/config", "[core]\n\tfsmonitor = evil\n", 0644);
	put(f->stage, ".git/x/hooks/pre-commit", "evil\n", 0755);
	put(f->stage, ".git/info/exclude", "*\n", 0644);
	put(f->stage, ".git/objects/info/alternates", "/tmp\n", 0644);
	lnk(f->stage, ".git/refs/heads/l", "main");
	put(f->stage, "sub/.git", "gitdir: ../evil\n", 0644);
	put(f->stage, "sub/.GIT/config", "[core]\n", 0644);
	put(f->stage, "bare/HEAD", "ref: refs/heads/main\n", 0644);
	mkd(f->stage, "bare/objects", 0755);
	put(f->stage, "bare/config", "[core]\n\tfsmonitor = evil\n", 0644);
	put(f->stage, "bare/hooks/post-checkout", "evil\n", 0755);
	put(f->stage, "bare/refs/heads/main", "2222\n", 0644);
	put(f->stage, ".husky/pre-commit", "evil\n", 0755);
	put(f->stage, ".husky2/ok", "fine\n", 0644);
	/* what git takes for a repository besides the textbook layout */
	put(f->stage, "e4/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->stage, "e4/objects", "#!/bin/sh\n", 0755);
	mkd(f->stage, "e4/refs", 0755);
	put(f->stage, "e4/config", "[core]\n\tpager = evil\n", 0644);
	put(f->stage, "e2/HEAD", "ref: refs/heads/main\n", 0644);
	put(f->stage, "e2/commondir", "../e3\n", 0644);
	mkd(f->stage, "e5", 0755);
	lnk(f->stage, "e5/HEAD", "refs/heads/main");
	put(f->stage, "e5/config", "[core]\n\tpager = evil\n", 0644);
	put(f->stage, ".git/rebase-merge/git-rebase-todo", "exec evil\n", 0644);
	put(f->stage, ".git/objects/info/ALTERNATES", "/tmp\n", 0644);
	put(f->stage, "src/a.c", "int a = 1;\n", 0644);
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	assert_int_equal(kind_at(f->c, ".git/objects/ab/cdef"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, ".git/refs/heads/main"), SNAP_MODIFY);
	assert_int_equal(kind_at(f->c, ".git/logs/HEAD"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, ".git/index"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, ".git/COMMIT_EDITMSG"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "src/a.c"), SNAP_MODIFY);
	assert_int_equal(kind_at(f->c, "bare/HEAD"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "bare/refs/heads/main"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, ".husky2/ok"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, ".git/commondir"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/x"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/x/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/x/hooks/pre-commit"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/info/exclude"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/objects/info/alternates"),
	    SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/refs/heads/l"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "sub/.git"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "sub/.GIT/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "bare/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "bare/hooks/post-checkout"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".husky/pre-commit"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "e4/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "e4/HEAD"), SNAP_CREATE);
	assert_int_equal(kind_at(f->c, "e2/commondir"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "e5/HEAD"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, "e5/config"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/rebase-merge/git-rebase-todo"),
	    SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/objects/info/ALTERNATES"),
	    SNAP_SKIP);
	assert_non_null(strstr(change_at(f->c, ".husky/pre-commit")->reason,
	    "core.hooksPath"));
	snap_changes_free(f->c);
	f->c = NULL;

	/* husky 9: core.hooksPath .husky/_ guards .husky itself */
	put(f->src, ".git/config", "[core]\n\thooksPath = .husky/_\n", 0644);
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	assert_int_equal(kind_at(f->c, ".husky/pre-commit"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".husky2/ok"), SNAP_CREATE);
	snap_changes_free(f->c);
	f->c = NULL;

	/* rm -rf .git: kept, not half deleted (a sibling that sorts between
	 * ".git" and ".git/..." does not hide what it holds) */
	rm_rf(at(f->stage, ".git"));
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	assert_int_equal(kind_at(f->c, ".git"), SNAP_SKIP);
	assert_int_equal(kind_at(f->c, ".git/config"), SNAP_SKIP);
}

/* Write for everyone is not written back unless the original had it. */
static void
changes_modes(void **state)
{
	struct fx			*f = *state;
	const struct snap_change	*x;

	put(f->src, "shared.txt", "s\n", 0666);
	put(f->src, "mine.txt", "m\n", 0644);
	assert_int_equal(chmod(at(f->src, "shared.txt"), 0666), 0);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
	    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_OK);
	put(f->stage, "new.sh", "#!/bin/sh\n", 0777);
	assert_int_equal(chmod(at(f->stage, "new.sh"), 0777), 0);
	mkd(f->stage, "newdir", 0777);
	assert_int_equal(chmod(at(f->stage, "newdir"), 0777), 0);
	assert_int_equal(chmod(at(f->stage, "mine.txt"), 0646), 0);
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	assert_non_null((x = change_at(f->c, "new.sh")));
	assert_int_equal(x->new_mode, 0775);
	assert_non_null((x = change_at(f->c, "newdir")));
	assert_int_equal(x->new_mode, 0775);
	/* o+w alone added: no change at all; a 0666 original stays 0666 */
	assert_null(change_at(f->c, "mine.txt"));
	assert_null(change_at(f->c, "shared.txt"));
}

/* The summary's bound hides no executable, link, mode change or git
 * metadata behind a crowd of harmless files. */
static void
summary_notable(void **state)
{
	struct fx	*f = *state;
	char		*p = NULL, name[32];
	size_t		 len = 0;
	FILE		*out;
	int		 i;

	mkd(f->src, ".git", 0755);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
	    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_OK);
	for (i = 0; i < 60; i++) {
		xsnprintf(name, sizeof(name), "!%02d.txt", i);
		put(f->stage, name, "x\n", 0644);
	}
	put(f->stage, "zz/run.sh", "#!/bin/sh\n", 0755);
	put(f->stage, ".git/refs/heads/x", "0\n", 0644);
	lnk(f->stage, "zz/l", "run.sh");
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	out = open_memstream(&p, &len);
	assert_int_equal(snap_changes_print_summary(f->c, out, 10), SNAP_OK);
	fclose(out);
	assert_non_null(strstr(p, "A zz/run.sh (0755)\n"));
	assert_non_null(strstr(p, "A zz/l -> run.sh\n"));
	assert_non_null(strstr(p, "A .git/refs/heads/x\n"));
	assert_null(strstr(p, "!59.txt"));
	assert_non_null(strstr(p, " more (none of them executable"));
	free(p);
}

/* What the command names is printed so that a terminal acts on none of
 * it: a name or a line cannot move the cursor over what is approved. */
static void
printers_escape(void **state)
{
	struct fx	*f = *state;
	char		*s;

	put(f->src, "t.txt", "one\n", 0644);
	assert_int_equal(snap_stage_create(f->src, f->stage, f->rules,
	    &f->lim, &f->m, f->err, sizeof(f->err)), SNAP_OK);
	put(f->stage, "a\033[1Ab\r.txt", "x\n", 0644);
	put(f->stage, "caf\xc3\xa9.txt", "x\n", 0644);
	put(f->stage, "rev\xe2\x80\xaetxt.exe", "x\n", 0644);
	put(f->stage, "t.txt", "one\033]0;title\007\tz\r\n", 0644);
	assert_int_equal(snap_changes_compute(f->m, f->stage, f->rules,
	    &f->lim, &f->c, f->err, sizeof(f->err)), SNAP_OK);
	s = printed(0, f);
	assert_null(strchr(s, '\033'));
	assert_null(strchr(s, '\r'));
	assert_non_null(strstr(s, "A a\\x1b[1Ab\\x0d.txt\n"));
	assert_non_null(strstr(s, "A caf\xc3\xa9.txt\n"));
	assert_non_null(strstr(s, "A rev\\xe2\\x80\\xaetxt.exe\n"));
	free(s);
	s = printed(1, f);
	assert_null(strchr(s, '\033'));
	assert_null(strchr(s, '\007'));
	/* a tab kept, a carriage return that ends the line kept */
	assert_non_null(strstr(s, "+one\\x1b]0;title\\x07\tz\r\n"));
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(globs),
		cmocka_unit_test_setup_teardown(stage_leaves_out, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(rules_configurable, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(stage_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(changes_computed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(changes_bounded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(manifest_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(printers, setup, teardown),
		cmocka_unit_test_setup_teardown(printers_escape, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(changes_modes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(summary_notable, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(changes_git_metadata, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(changes_lazy_hash, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
