/*
 * snap/fs_posix.c: no call goes through a symbolic link in any component
 * of its path.  Each snap/fs.h call is given a path whose middle component
 * is a link to a folder outside the tree: it fails with ELOOP and nothing
 * outside changes; chmod of a link leaves its target alone; and staging
 * whose source folder is swapped for a link while it walks brings nothing
 * from outside into the stage.  Each test runs with openat2 and again with
 * the component walk used where the kernel has no openat2.  Real files
 * under a mktemp folder.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "snap/fs.h"
#include "snap/snap.h"
#include "snap/snap-test.h"
#include "snap_util.h"

struct fx {
	char	*base;
	char	 in[4096], out[4096];
	char	*out_before;
};

/*
 * base/in: the tree, holding f, sub/g and l -> base/out (a link to a
 * folder outside);  base/out: secret (0600), d/, lk -> secret, and f.
 */
/* the running test's folder: removed by cleanup() also when it fails */
static char	*cur_base;

static int
cleanup(void **state)
{
	(void)state;
	snap_test_fs_walk(0);
	snap_test_stage_hook(NULL, NULL);
	if (cur_base != NULL)
		rm_rf(cur_base);
	free(cur_base);
	cur_base = NULL;
	return 0;
}

static struct fx *
build(void)
{
	struct fx	*f = calloc(1, sizeof(*f));

	f->base = tmpdir();
	free(cur_base);
	cur_base = strdup(f->base);
	xsnprintf(f->in, sizeof(f->in), "%s/in", f->base);
	xsnprintf(f->out, sizeof(f->out), "%s/out", f->base);
	mkd(f->base, "in", 0755);
	mkd(f->base, "out", 0755);
	put(f->in, "f", "inside\n", 0644);
	put(f->in, "sub/g", "g\n", 0644);
	lnk(f->in, "l", f->out);
	lnk(f->in, "rel", "../out");
	put(f->out, "secret", "SECRET\n", 0600);
	put(f->out, "f", "outside f\n", 0644);
	mkd(f->out, "d", 0755);
	lnk(f->out, "lk", "secret");
	f->out_before = dump(f->out);
	return f;
}

static void
done(struct fx *f)
{
	free(cur_base);
	cur_base = NULL;
	rm_rf(f->base);
	free(f->base);
	free(f->out_before);
	free(f);
}

static void
outside_unchanged(struct fx *f)
{
	char	*now = dump(f->out);

	if (strcmp(now, f->out_before) != 0)
		fail_msg("outside changed:\n%s\nwas:\n%s", now,
		    f->out_before);
	free(now);
}

#define REFUSED(call) do {						\
	errno = 0;							\
	if ((call) != -1 || errno != ELOOP)				\
		fail_msg("%s: not refused with ELOOP (errno %d)",	\
		    #call, errno);					\
} while (0)

#define REFUSED_NULL(call) do {						\
	errno = 0;							\
	if ((call) != NULL || errno != ELOOP)				\
		fail_msg("%s: not refused with ELOOP (errno %d)",	\
		    #call, errno);					\
} while (0)

/* Every call through in/l (absolute target) and in/rel (relative). */
static void
through_link(struct fx *f, const char *l)
{
	struct snap_stat	 st;
	char			 buf[256], lb[64];

	/* the link itself is seen as a link */
	assert_int_equal(snap_fs_lstat(at(f->in, l), &st), 0);
	assert_int_equal(st.type, SNAP_FS_LINK);
	snprintf(buf, sizeof(buf), "%s/secret", l);
	REFUSED(snap_fs_lstat(at(f->in, buf), &st));
	REFUSED_NULL(snap_fs_open_read(at(f->in, buf)));
	REFUSED_NULL(snap_fs_open_append(at(f->in, buf)));
	REFUSED(snap_fs_unlink(at(f->in, buf)));
	REFUSED(snap_fs_chmod(at(f->in, buf), 0666));
	REFUSED(snap_fs_rename(at(f->in, buf), at(f->in, "stolen")));
	REFUSED(snap_fs_rename(at(f->in, "f"), at(f->in, buf)));
	snprintf(buf, sizeof(buf), "%s/new", l);
	REFUSED_NULL(snap_fs_create(at(f->in, buf), 0644));
	REFUSED(snap_fs_mkdir(at(f->in, buf), 0755));
	REFUSED(snap_fs_symlink("x", at(f->in, buf)));
	REFUSED(snap_fs_rename(at(f->in, "f"), at(f->in, buf)));
	snprintf(buf, sizeof(buf), "%s/d", l);
	REFUSED_NULL(snap_fs_opendir(at(f->in, buf)));
	REFUSED(snap_fs_rmdir(at(f->in, buf)));
	REFUSED(snap_fs_fsync_dir(at(f->in, buf)));
	REFUSED(snap_fs_sync_fs(at(f->in, buf)));
	snprintf(buf, sizeof(buf), "%s/lk", l);
	REFUSED(snap_fs_readlink(at(f->in, buf), lb, sizeof(lb)));
	/* the link itself, as the last component */
	REFUSED_NULL(snap_fs_opendir(at(f->in, l)));
	REFUSED(snap_fs_fsync_dir(at(f->in, l)));
	REFUSED(snap_fs_chmod(at(f->in, l), 0700));
	/* and relative to the current folder */
	if (chdir(f->in) == -1)
		fail_msg("chdir");
	snprintf(buf, sizeof(buf), "%s/secret", l);
	REFUSED_NULL(snap_fs_open_read(buf));
	REFUSED(snap_fs_unlink(buf));
	if (chdir("/") == -1)
		fail_msg("chdir");
	/* nothing moved in: in/f is where it was, nothing named stolen */
	assert_true(exists(f->in, "f"));
	assert_false(exists(f->in, "stolen"));
	outside_unchanged(f);
}

/* The same calls on the tree itself work (the walk must not refuse
 * what has no link). */
static void
inside_works(struct fx *f)
{
	struct snap_stat	 st;
	struct snap_dir		*d;
	struct snap_file	*fl;
	char			 buf[64];
	const char		*name;
	int			 n = 0;

	assert_int_equal(snap_fs_lstat(at(f->in, "sub/g"), &st), 0);
	assert_int_equal(st.type, SNAP_FS_FILE);
	assert_int_equal(snap_fs_lstat(at(f->in, "l"), &st), 0);
	assert_int_equal(st.type, SNAP_FS_LINK);
	assert_int_equal(snap_fs_lstat("/", &st), 0);
	assert_int_equal(st.type, SNAP_FS_DIR);
	assert_int_equal(snap_fs_lstat(at(f->in, "sub/"), &st), 0);
	assert_int_equal(st.type, SNAP_FS_DIR);
	assert_int_equal(snap_fs_readlink(at(f->in, "rel"), buf, sizeof(buf)),
	    6);
	assert_string_equal(buf, "../out");
	assert_non_null(d = snap_fs_opendir(at(f->in, "sub")));
	while ((name = snap_fs_readdir(d)) != NULL)
		n++;
	snap_fs_closedir(d);
	assert_int_equal(n, 1);
	assert_non_null(fl = snap_fs_create(at(f->in, "sub/h"), 0600));
	assert_int_equal(snap_fs_write(fl, "h\n", 2), 0);
	assert_int_equal(snap_fs_close(fl), 0);
	assert_int_equal(snap_fs_mkdir(at(f->in, "sub/k"), 0700), 0);
	assert_int_equal(snap_fs_rename(at(f->in, "sub/h"),
	    at(f->in, "sub/k/h")), 0);
	/* a mode no one may read or search, and back */
	assert_int_equal(snap_fs_chmod(at(f->in, "sub/k/h"), 0), 0);
	assert_int_equal(snap_fs_chmod(at(f->in, "sub/k"), 0), 0);
	assert_int_equal(snap_fs_chmod(at(f->in, "sub/k"), 0750), 0);
	assert_int_equal(snap_fs_lstat(at(f->in, "sub/k"), &st), 0);
	assert_int_equal(st.mode, 0750);
	assert_int_equal(snap_fs_chmod(at(f->in, "sub/k/h"), 0640), 0);
	assert_int_equal(snap_fs_lstat(at(f->in, "sub/k/h"), &st), 0);
	assert_int_equal(st.mode, 0640);
	assert_int_equal(snap_fs_symlink("h", at(f->in, "sub/k/lh")), 0);
	assert_int_equal(snap_fs_fsync_dir(at(f->in, "sub/k")), 0);
	assert_int_equal(snap_fs_sync_fs(f->in), 0);
	assert_int_equal(snap_fs_unlink(at(f->in, "sub/k/lh")), 0);
	assert_int_equal(snap_fs_unlink(at(f->in, "sub/k/h")), 0);
	assert_int_equal(snap_fs_rmdir(at(f->in, "sub/k")), 0);
	/* a file where a folder is expected is no link */
	errno = 0;
	assert_int_equal(snap_fs_lstat(at(f->in, "f/x"), &st), -1);
	assert_int_equal(errno, ENOTDIR);
	errno = 0;
	assert_int_equal(snap_fs_lstat(at(f->in, "none/x"), &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void
refuses_links(void **state)
{
	struct fx	*f = build();

	snap_test_fs_walk(*(int *)*state);
	through_link(f, "l");
	through_link(f, "rel");
	inside_works(f);
	outside_unchanged(f);
	snap_test_fs_walk(0);
	done(f);
}

static void
chmod_link_target(void **state)
{
	struct fx		*f = build();
	struct stat		 sb;

	snap_test_fs_walk(*(int *)*state);
	lnk(f->in, "tolk", at(f->out, "secret"));
	REFUSED(snap_fs_chmod(at(f->in, "tolk"), 0666));
	/* a link to a link, a link to a folder */
	REFUSED(snap_fs_chmod(at(f->out, "lk"), 0666));
	REFUSED(snap_fs_chmod(at(f->in, "l"), 0777));
	assert_int_equal(lstat(at(f->out, "secret"), &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(lstat(f->out, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0755);
	outside_unchanged(f);
	snap_test_fs_walk(0);
	done(f);
}

/* ---- staging, a folder swapped for a link during the walk ---------- */

struct swap {
	struct fx	*f;
	const char	*when;	/* the entry before which a is swapped */
	int		 fired;
};

static void
swap_a(void *arg, const char *rel)
{
	struct swap	*s = arg;
	char		 real[4096];

	if (s->fired || strcmp(rel, s->when) != 0)
		return;
	s->fired = 1;
	xsnprintf(real, sizeof(real), "%s/a.real", s->f->base);
	if (rename(at(s->f->in, "a"), real) == -1 ||
	    symlink(s->f->out, at(s->f->in, "a")) == -1)
		fail_msg("swap: %s", strerror(errno));
}

/* The stage holds nothing from outside (SECRET, outside f, out/d). */
static void
stage_clean(const char *stage)
{
	struct stat	 sb;
	char		*text;

	if (lstat(stage, &sb) == -1)
		return;		/* refused, and removed */
	text = dump(stage);
	if (strstr(text, "SECRET") != NULL || strstr(text, "outside") != NULL)
		fail_msg("outside content in the stage:\n%s", text);
	free(text);
}

static void
stage_swap(void **state)
{
	static const char	*when[] = { "a/b", "a/b/f", "a/c", "a/z" };
	struct fx		*f;
	struct snap_rules	*rules = snap_rules_new();
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct swap		 s;
	char			 stage[4096], err[1024];
	size_t			 i;
	int			 rc;

	snap_limits_default(&lim);
	for (i = 0; i < sizeof(when) / sizeof(when[0]); i++) {
		f = build();
		snap_test_fs_walk(*(int *)*state);
		put(f->in, "a/b/f", "inside b\n", 0644);
		put(f->in, "a/c", "inside c\n", 0644);
		put(f->in, "a/z", "inside z\n", 0644);
		/* what a swapped a would show */
		put(f->out, "b/f", "SECRET b\n", 0644);
		put(f->out, "c", "SECRET c\n", 0644);
		put(f->out, "z", "SECRET z\n", 0644);
		free(f->out_before);
		f->out_before = dump(f->out);
		xsnprintf(stage, sizeof(stage), "%s/stage", f->base);
		s = (struct swap){ f, when[i], 0 };
		snap_test_stage_hook(swap_a, &s);
		m = NULL;
		rc = snap_stage_create(f->in, stage, rules, &lim, &m, err,
		    sizeof(err));
		snap_test_stage_hook(NULL, NULL);
		snap_test_fs_walk(0);
		assert_true(s.fired);
		if (rc == SNAP_OK)
			fail_msg("swap before %s: staged anyway", when[i]);
		if (strstr(err, "/a/") == NULL)
			fail_msg("swap before %s: '%s' names no path", when[i],
			    err);
		stage_clean(stage);
		assert_false(exists(f->base, "stage"));
		snap_manifest_free(m);
		outside_unchanged(f);
		done(f);
	}
	snap_rules_free(rules);
}

int
main(void)
{
	static int	 openat2 = 0, walk = 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(refuses_links, NULL,
		    cleanup, &openat2),
		cmocka_unit_test_prestate_setup_teardown(refuses_links, NULL,
		    cleanup, &walk),
		cmocka_unit_test_prestate_setup_teardown(chmod_link_target, NULL,
		    cleanup, &openat2),
		cmocka_unit_test_prestate_setup_teardown(chmod_link_target, NULL,
		    cleanup, &walk),
		cmocka_unit_test_prestate_setup_teardown(stage_swap, NULL,
		    cleanup, &openat2),
		cmocka_unit_test_prestate_setup_teardown(stage_swap, NULL,
		    cleanup, &walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
