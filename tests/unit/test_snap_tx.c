/*
 * snap/tx.c: a change set written back under a transaction.  Conflicts
 * refused before any write; a crash injected at every crash point of
 * apply (and of a recovery interrupted in turn), then recovery: the host
 * tree is exactly as before (or exactly as after, once "done" is in the
 * journal), and recovering again changes nothing.  Real files.
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

#include "snap/snap.h"
#include "snap/snap-test.h"
#include "snap_util.h"

struct fx {
	char			*base;
	char			 src[4096], stage[4096], tx[4096];
	struct snap_rules	*rules;
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct snap_changes	*c;
	char			*before, *after;
	char			 err[1024];
};

/* The host tree, staged, an agent's edits in the stage, the change set. */
static struct fx *
build(void)
{
	struct fx	*f = calloc(1, sizeof(*f));

	f->base = tmpdir();
	xsnprintf(f->src, sizeof(f->src), "%s/src", f->base);
	xsnprintf(f->stage, sizeof(f->stage), "%s/stage", f->base);
	xsnprintf(f->tx, sizeof(f->tx), "%s/tx", f->base);
	mkd(f->base, "src", 0755);
	put(f->src, "keep.txt", "keep\n", 0644);
	put(f->src, "edit.txt", "old edit\n", 0644);
	put(f->src, "gone.txt", "gone\n", 0640);
	put(f->src, "mode.sh", "#!/bin/sh\n", 0644);
	lnk(f->src, "link", "keep.txt");
	lnk(f->src, "oldlink", "keep.txt");
	put(f->src, "dir/a", "a\n", 0644);
	put(f->src, "dir/sub/b", "b\n", 0600);
	put(f->src, "swap", "a file, then a folder\n", 0644);
	put(f->src, "ro/x", "x\n", 0644);
	f->rules = snap_rules_new();
	snap_limits_default(&f->lim);
	if (snap_stage_create(f->src, f->stage, f->rules, &f->lim, &f->m,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("stage: %s", f->err);
	put(f->stage, "edit.txt", "new edit\nwith more\n", 0644);
	unlink(at(f->stage, "gone.txt"));
	chmod(at(f->stage, "mode.sh"), 0755);
	lnk(f->stage, "link", "edit.txt");
	unlink(at(f->stage, "oldlink"));
	rm_rf(at(f->stage, "dir"));
	unlink(at(f->stage, "swap"));
	put(f->stage, "swap/in", "in\n", 0644);
	put(f->stage, "new/deeper/n", "n\n", 0600);
	lnk(f->stage, "newlink", "new/deeper/n");
	chmod(at(f->stage, "ro"), 0555);
	put(f->stage, "sealed/f", "f\n", 0444);
	chmod(at(f->stage, "sealed"), 0555);
	if (snap_changes_compute(f->m, f->stage, f->rules, &f->lim, &f->c,
	    f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("changes: %s", f->err);
	f->before = dump(f->src);
	f->after = dump(f->stage);
	return f;
}

static void
done(struct fx *f)
{
	rm_rf(f->base);
	free(f->base);
	snap_rules_free(f->rules);
	snap_manifest_free(f->m);
	snap_changes_free(f->c);
	free(f->before);
	free(f->after);
	free(f);
}

static void
same_tree(const char *root, const char *want)
{
	char	*got = dump(root);

	if (strcmp(got, want) != 0)
		fail_msg("tree %s:\n%s\nexpected:\n%s", root, got, want);
	free(got);
}

static enum snap_tx_state
state_of(struct fx *f)
{
	enum snap_tx_state	s;

	assert_int_equal(snap_tx_state(f->tx, &s, NULL, f->err,
	    sizeof(f->err)), SNAP_OK);
	return s;
}

static void
applies(void **state)
{
	struct fx	*f = build();
	char		 digest[SNAP_SHA256_HEX + 1];
	enum snap_tx_state s;

	(void)state;
	/* edit, gone, mode, link, oldlink, dir/a, dir/sub/b, dir/sub, dir,
	 * swap (file) and swap (folder), swap/in, new, new/deeper,
	 * new/deeper/n, newlink, ro, sealed, sealed/f */
	assert_int_equal(snap_changes_effective(f->c), 19);
	if (snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c, f->err,
	    sizeof(f->err)) != SNAP_OK)
		fail_msg("apply: %s", f->err);
	same_tree(f->src, f->after);
	assert_int_equal(snap_tx_state(f->tx, &s, digest, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(s, SNAP_TX_APPLIED);
	assert_string_equal(digest, snap_changes_digest(f->c));
	/* settled: recovering does nothing */
	assert_int_equal(snap_tx_recover(f->tx, f->src, &s, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_int_equal(s, SNAP_TX_APPLIED);
	same_tree(f->src, f->after);
	/* a second apply into the same folder is refused */
	assert_int_equal(snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c,
	    f->err, sizeof(f->err)), SNAP_EINVAL);
	done(f);
}

static void
refused(struct fx *f, const char *name)
{
	char	*host = dump(f->src);

	assert_int_equal(snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c,
	    f->err, sizeof(f->err)), SNAP_ECONFLICT);
	if (strstr(f->err, name) == NULL)
		fail_msg("'%s' does not name %s", f->err, name);
	same_tree(f->src, host);
	assert_int_equal(state_of(f), SNAP_TX_ROLLED_BACK);
	free(host);
}

static void
conflicts(void **state)
{
	struct fx	*f;

	(void)state;
	/* the user edited a file the change set modifies */
	f = build();
	put(f->src, "edit.txt", "the user's own edit\n", 0644);
	refused(f, "edit.txt");
	done(f);
	/* ... or one it deletes, even keeping the size */
	f = build();
	put(f->src, "gone.txt", "GONE\n", 0640);
	refused(f, "gone.txt");
	done(f);
	/* created a file where the change set creates one */
	f = build();
	put(f->src, "new/deeper/n", "mine\n", 0644);
	refused(f, "new");
	done(f);
	/* added a file to a folder the change set deletes */
	f = build();
	put(f->src, "dir/sub/mine", "mine\n", 0644);
	refused(f, "dir/sub/mine");
	done(f);
	/* replaced a folder by a link */
	f = build();
	rm_rf(at(f->src, "ro"));
	lnk(f->src, "ro", "/tmp");
	refused(f, "ro");
	done(f);
	/* changed a mode */
	f = build();
	chmod(at(f->src, "mode.sh"), 0600);
	refused(f, "mode.sh");
	done(f);
	/* repointed a link */
	f = build();
	lnk(f->src, "link", "elsewhere");
	refused(f, "link");
	done(f);
}

static size_t
count_dir(const char *path)
{
	struct dirent	*de;
	DIR		*d = opendir(path);
	size_t		 n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * One run: apply crashes at point n; when m > 0 the recovery crashes at
 * its point m; then recovery runs to its end.  0 when apply got past n
 * points (no crash happened: the loop is over), 1 else; *mdone is set
 * when the recovery finished before its point m.
 */
static int
crash_run(unsigned n, unsigned m, int *mdone)
{
	struct fx		*f = build();
	enum snap_tx_state	 s, s2;
	char			 bk[4096];
	int			 rc;

	*mdone = 1;
	snap_test_crash_after(n);
	rc = snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c, f->err,
	    sizeof(f->err));
	snap_test_crash_after(0);
	if (rc == SNAP_OK) {
		same_tree(f->src, f->after);
		done(f);
		return 0;
	}
	if (rc != SNAP_ECRASH)
		fail_msg("apply, crash at %u: %d %s", n, rc, f->err);
	s = state_of(f);
	if (s == SNAP_TX_APPLYING) {
		/* the backups are all there before any host write:
		 * edit.txt, gone.txt, dir/a, dir/sub/b, swap */
		xsnprintf(bk, sizeof(bk), "%s/backup", f->tx);
		assert_int_equal(count_dir(bk), 5);
	}
	if (m > 0) {
		snap_test_crash_after(m);
		rc = snap_tx_recover(f->tx, f->src, &s2, f->err,
		    sizeof(f->err));
		snap_test_crash_after(0);
		if (rc == SNAP_OK)
			*mdone = 1;
		else if (rc == SNAP_ECRASH)
			*mdone = 0;
		else
			fail_msg("recover, crashes at %u then %u: %s", n, m,
			    f->err);
	}
	if (snap_tx_recover(f->tx, f->src, &s2, f->err, sizeof(f->err)) !=
	    SNAP_OK)
		fail_msg("recover after crash at %u/%u: %s", n, m, f->err);
	if (s == SNAP_TX_APPLIED) {
		assert_int_equal(s2, SNAP_TX_APPLIED);
		same_tree(f->src, f->after);
	} else {
		assert_int_equal(s2, SNAP_TX_ROLLED_BACK);
		same_tree(f->src, f->before);
	}
	/* again: nothing changes */
	assert_int_equal(snap_tx_recover(f->tx, f->src, &s2, f->err,
	    sizeof(f->err)), SNAP_OK);
	same_tree(f->src, s == SNAP_TX_APPLIED ? f->after : f->before);
	done(f);
	return 1;
}

static void
crash_everywhere(void **state)
{
	unsigned	n, m, points, stride;
	int		mdone;

	/* with the atomic swap of a replaced file, and with the old one
	 * moved aside first (systems without the swap, Windows) */
	snap_test_fs_noexchange(*(int *)*state);
	for (n = 1; crash_run(n, 0, &mdone); n++)
		;
	points = n - 1;
	if (getenv("SNAP_TX_VERBOSE") != NULL)
		fprintf(stderr, "%u crash points in apply\n", points);
	/* intent, 5 backups, ready, 2 per step + 2 per written file or
	 * link, done: well over 30 */
	if (points < 30)
		fail_msg("only %u crash points", points);
	/*
	 * And a recovery interrupted at each of its own points, after a
	 * crash at every STRIDE-th point of apply (every point with
	 * SNAP_TX_ALL=1: some minutes on a slow disk, every run fsyncs).
	 */
	stride = getenv("SNAP_TX_ALL") != NULL ? 1 : 5;
	for (n = 1; n <= points; n += stride)
		for (m = 1; ; m++) {
			(void)crash_run(n, m, &mdone);
			if (mdone)
				break;
		}
	snap_test_fs_noexchange(0);
}

static void
recovery_refuses_later_edit(void **state)
{
	struct fx		*f;
	enum snap_tx_state	 s;
	unsigned		 n;
	char			*host;

	(void)state;
	for (n = 1; ; n++) {
		f = build();
		snap_test_crash_after(n);
		if (snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c, f->err,
		    sizeof(f->err)) == SNAP_OK)
			fail_msg("no crash point left edit.txt written");
		snap_test_crash_after(0);
		host = dump(f->src);
		if (strstr(host, "edit.txt f 0644 [new edit") != NULL)
			break;
		free(host);
		done(f);
	}
	free(host);
	/* the user edits the file the transaction wrote */
	put(f->src, "edit.txt", "edited after the crash\n", 0644);
	host = dump(f->src);
	assert_int_equal(snap_tx_recover(f->tx, f->src, &s, f->err,
	    sizeof(f->err)), SNAP_ECONFLICT);
	assert_non_null(strstr(f->err, "edit.txt"));
	same_tree(f->src, host);
	assert_int_equal(state_of(f), SNAP_TX_APPLYING);
	/* moved away: the recovery completes */
	put(f->src, "edit.txt", "new edit\nwith more\n", 0644);
	if (snap_tx_recover(f->tx, f->src, &s, f->err, sizeof(f->err)) !=
	    SNAP_OK)
		fail_msg("recover: %s", f->err);
	assert_int_equal(s, SNAP_TX_ROLLED_BACK);
	same_tree(f->src, f->before);
	free(host);
	done(f);
}

static void
stage_changed_after_compute(void **state)
{
	struct fx	*f = build();

	(void)state;
	put(f->stage, "new/deeper/n", "changed later\n", 0600);
	assert_int_equal(snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c,
	    f->err, sizeof(f->err)), SNAP_EINVAL);
	/* seen when the new contents are kept (after/), before "ready":
	 * no host write at all */
	if (strstr(f->err, "new/deeper/n: not the content the change set "
	    "names") == NULL)
		fail_msg("%s", f->err);
	same_tree(f->src, f->before);
	assert_int_equal(state_of(f), SNAP_TX_ROLLED_BACK);
	done(f);
}

/*
 * A folder above the targets swapped for a link to an outside folder
 * between the check and the writes, at every crash point of apply (a
 * racing owner of the tree): nothing is written outside, apply fails
 * unless d had nothing left to write, and once the folder is back,
 * recovery leaves the tree as before (or as after, when "done" made it).
 */
struct swapfx {
	char	*base;
	char	 src[4096], stage[4096], tx[4096], out[4096], real[4096];
	int	 fired;
};

/* the running swap's folder: removed by swap_cleanup() also when the
 * test fails */
static char	*swap_base;

static int
swap_cleanup(void **state)
{
	(void)state;
	snap_test_fs_walk(0);
	snap_test_fs_noexchange(0);
	snap_test_hook_at(0, NULL, NULL);
	if (swap_base != NULL) {
		rm_rf(swap_base);
		free(swap_base);
		swap_base = NULL;
	}
	return 0;
}

static void
swap_d(void *arg)
{
	struct swapfx	*x = arg;

	x->fired = 1;
	if (rename(at(x->src, "d"), x->real) == -1 ||
	    symlink(x->out, at(x->src, "d")) == -1)
		fail_msg("swap: %s", strerror(errno));
}

static void
unswap_d(struct swapfx *x)
{
	if (unlink(at(x->src, "d")) == -1 ||
	    rename(x->real, at(x->src, "d")) == -1)
		fail_msg("unswap: %s", strerror(errno));
}

static void
swap_during_apply(void **state)
{
	struct swapfx		 x;
	struct snap_rules	*rules = snap_rules_new();
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct snap_changes	*c;
	enum snap_tx_state	 s;
	char			 err[1024], *out_before, *before, *after;
	char			*d_after, *now;
	unsigned		 n, failed = 0;
	int			 rc;

	/* with openat2, and with the walk of kernels without it */
	snap_test_fs_walk(*(int *)*state);
	snap_limits_default(&lim);
	for (n = 1; ; n++) {
		memset(&x, 0, sizeof(x));
		x.base = swap_base = tmpdir();
		xsnprintf(x.src, sizeof(x.src), "%s/src", x.base);
		xsnprintf(x.stage, sizeof(x.stage), "%s/stage", x.base);
		xsnprintf(x.tx, sizeof(x.tx), "%s/tx", x.base);
		xsnprintf(x.out, sizeof(x.out), "%s/out", x.base);
		xsnprintf(x.real, sizeof(x.real), "%s/d.real", x.base);
		mkd(x.base, "src", 0755);
		mkd(x.base, "out", 0755);
		put(x.src, "top.txt", "top\n", 0644);
		put(x.src, "d/e.txt", "old e\n", 0644);
		put(x.src, "d/g.txt", "g\n", 0644);
		put(x.src, "d/m.sh", "m\n", 0644);
		/* what the link shows: the same names, other content */
		put(x.out, "e.txt", "outside e\n", 0644);
		put(x.out, "g.txt", "outside g\n", 0644);
		put(x.out, "m.sh", "outside m\n", 0644);
		out_before = dump(x.out);
		if (snap_stage_create(x.src, x.stage, rules, &lim, &m, err,
		    sizeof(err)) != SNAP_OK)
			fail_msg("stage: %s", err);
		put(x.stage, "top.txt", "top, edited\n", 0644);
		put(x.stage, "d/e.txt", "new e\n", 0644);
		unlink(at(x.stage, "d/g.txt"));
		chmod(at(x.stage, "d/m.sh"), 0755);
		put(x.stage, "d/n.txt", "n\n", 0644);
		if (snap_changes_compute(m, x.stage, rules, &lim, &c, err,
		    sizeof(err)) != SNAP_OK)
			fail_msg("changes: %s", err);
		before = dump(x.src);
		after = dump(x.stage);
		d_after = dump(at(x.stage, "d"));

		snap_test_hook_at(n, swap_d, &x);
		rc = snap_tx_apply(x.tx, x.src, x.stage, m, c, err,
		    sizeof(err));
		snap_test_hook_at(0, NULL, NULL);
		now = dump(x.out);
		if (strcmp(now, out_before) != 0)
			fail_msg("swap at point %u: written outside:\n%s", n,
			    now);
		free(now);
		if (x.fired && rc == SNAP_OK) {
			/* d had nothing left to write: all of it is in
			 * the real folder */
			now = dump(x.real);
			if (strcmp(now, d_after) != 0)
				fail_msg("swap at point %u: applied, but d "
				    "is\n%s", n, now);
			free(now);
		} else if (x.fired) {
			failed++;
			/* recovery refuses the link too, writing nothing */
			(void)snap_tx_recover(x.tx, x.src, &s, err,
			    sizeof(err));
			now = dump(x.out);
			if (strcmp(now, out_before) != 0)
				fail_msg("swap at point %u: recovery wrote "
				    "outside:\n%s", n, now);
			free(now);
		}
		if (x.fired)
			unswap_d(&x);
		if (snap_tx_recover(x.tx, x.src, &s, err, sizeof(err)) !=
		    SNAP_OK)
			fail_msg("swap at point %u: recover: %s", n, err);
		same_tree(x.src, s == SNAP_TX_APPLIED ? after : before);
		free(out_before);
		free(before);
		free(after);
		free(d_after);
		snap_changes_free(c);
		snap_manifest_free(m);
		rm_rf(x.base);
		free(x.base);
		swap_base = NULL;
		if (!x.fired)
			break;
	}
	if (getenv("SNAP_TX_VERBOSE") != NULL)
		fprintf(stderr, "swap: %u points, %u failed\n", n - 1, failed);
	/* the checks, the backups and the writes in d come before its
	 * last write: most points fail */
	snap_test_fs_walk(0);
	if (failed < 5)
		fail_msg("only %u of %u swaps failed the apply", failed, n - 1);
	snap_rules_free(rules);
}

/* ---- undo ------------------------------------------------------------ */

/* f's change set applied into f->src, its transaction in f->tx; the
 * undo's folder into out. */
static void
applied(struct fx *f, char *out, size_t len)
{
	if (snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c, f->err,
	    sizeof(f->err)) != SNAP_OK)
		fail_msg("apply: %s", f->err);
	same_tree(f->src, f->after);
	xsnprintf(out, len, "%s/undo", f->base);
}

static void
undoes(void **state)
{
	struct fx		*f = build();
	char			 u[4096], name[64], path[4096];
	enum snap_tx_state	 s;

	(void)state;
	applied(f, u, sizeof(u));
	/* what it wrote is kept beside what it replaced: edit.txt,
	 * swap/in, new/deeper/n, sealed/f */
	xsnprintf(path, sizeof(path), "%s/after", f->tx);
	assert_int_equal(count_dir(path), 4);
	if (snap_tx_undo(u, f->tx, f->src, f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("undo: %s", f->err);
	same_tree(f->src, f->before);
	assert_int_equal(snap_tx_state(u, &s, NULL, f->err, sizeof(f->err)),
	    SNAP_OK);
	assert_int_equal(s, SNAP_TX_APPLIED);
	assert_int_equal(snap_tx_undoes(u, name, sizeof(name)), 1);
	assert_string_equal(name, "tx");
	assert_int_equal(snap_tx_undoes(f->tx, name, sizeof(name)), 0);
	/* the applied one stays applied (its journal is its own); an undo
	 * of a transaction that is not applied is refused */
	assert_int_equal(state_of(f), SNAP_TX_APPLIED);
	xsnprintf(path, sizeof(path), "%s/undo2", f->base);
	put(f->base, "empty/journal", "aisb-snap-journal 1\n", 0600);
	assert_int_equal(snap_tx_undo(path, at(f->base, "empty"), f->src,
	    f->err, sizeof(f->err)), SNAP_EINVAL);
	/* and undone again: the undo is a transaction like any */
	if (snap_tx_undo(path, u, f->src, f->err, sizeof(f->err)) != SNAP_OK)
		fail_msg("undo of the undo: %s", f->err);
	same_tree(f->src, f->after);
	done(f);
}

/* After the apply, edit makes the host differ; the undo is refused
 * naming name, and writes nothing. */
static void
undo_refused(void (*edit)(struct fx *), const char *name)
{
	struct fx		*f = build();
	char			 u[4096], *host;
	enum snap_tx_state	 s;

	applied(f, u, sizeof(u));
	edit(f);
	host = dump(f->src);
	assert_int_equal(snap_tx_undo(u, f->tx, f->src, f->err,
	    sizeof(f->err)), SNAP_ECONFLICT);
	if (strstr(f->err, name) == NULL)
		fail_msg("'%s' does not name %s", f->err, name);
	same_tree(f->src, host);
	assert_int_equal(snap_tx_state(u, &s, NULL, f->err, sizeof(f->err)),
	    SNAP_OK);
	assert_int_equal(s, SNAP_TX_ROLLED_BACK);
	free(host);
	done(f);
}

static void
edit_modified(struct fx *f)
{
	put(f->src, "edit.txt", "edited after the apply\n", 0644);
}

static void
add_to_made(struct fx *f)
{
	put(f->src, "new/deeper/mine", "mine\n", 0644);
}

static void
make_deleted(struct fx *f)
{
	put(f->src, "gone.txt", "made again\n", 0640);
}

static void
repoint(struct fx *f)
{
	lnk(f->src, "link", "keep.txt");
}

static void
undo_after_host_edit(void **state)
{
	(void)state;
	undo_refused(edit_modified, "edit.txt");
	undo_refused(add_to_made, "new/deeper/mine");
	undo_refused(make_deleted, "gone.txt");
	undo_refused(repoint, "link");
}

/* An undo crashed at point n, then recovered: the tree as the apply left
 * it (or as before the apply, once the undo's "done" is written). */
static int
undo_crash_run(unsigned n)
{
	struct fx		*f = build();
	enum snap_tx_state	 s, s2;
	char			 u[4096];
	int			 rc;

	applied(f, u, sizeof(u));
	snap_test_crash_after(n);
	rc = snap_tx_undo(u, f->tx, f->src, f->err, sizeof(f->err));
	snap_test_crash_after(0);
	if (rc == SNAP_OK) {
		same_tree(f->src, f->before);
		done(f);
		return 0;
	}
	if (rc != SNAP_ECRASH)
		fail_msg("undo, crash at %u: %d %s", n, rc, f->err);
	assert_int_equal(snap_tx_state(u, &s, NULL, f->err, sizeof(f->err)),
	    SNAP_OK);
	if (snap_tx_recover(u, f->src, &s2, f->err, sizeof(f->err)) !=
	    SNAP_OK)
		fail_msg("recover the undo after a crash at %u: %s", n,
		    f->err);
	same_tree(f->src, s == SNAP_TX_APPLIED ? f->before : f->after);
	assert_int_equal(snap_tx_recover(u, f->src, &s2, f->err,
	    sizeof(f->err)), SNAP_OK);
	same_tree(f->src, s == SNAP_TX_APPLIED ? f->before : f->after);
	done(f);
	return 1;
}

static void
undo_crash_everywhere(void **state)
{
	unsigned	n;

	snap_test_fs_noexchange(*(int *)*state);
	for (n = 1; undo_crash_run(n); n++)
		;
	snap_test_fs_noexchange(0);
	if (n - 1 < 30)
		fail_msg("only %u crash points in undo", n - 1);
}

static int
list_cb(const char *name, enum snap_tx_state s, const char *digest,
    void *arg)
{
	char	*out = arg;

	xsnprintf(out + strlen(out), 512 - strlen(out), "%s %s %zu\n", name,
	    snap_tx_state_name(s), strlen(digest));
	return 0;
}

static void
listed(void **state)
{
	struct fx	*f = build();
	char		 out[512] = "";

	(void)state;
	assert_int_equal(snap_tx_apply(f->tx, f->src, f->stage, f->m, f->c,
	    f->err, sizeof(f->err)), SNAP_OK);
	mkd(f->base, "empty", 0700);
	assert_int_equal(snap_tx_list(f->base, list_cb, out, f->err,
	    sizeof(f->err)), SNAP_OK);
	assert_string_equal(out, "empty none 0\nsrc none 0\nstage none 0\n"
	    "tx applied 64\n");
	/* a damaged journal is an error, not a state */
	put(f->tx, "journal", "aisb-snap-journal 1\nstep 7\n", 0600);
	{
		enum snap_tx_state	s;

		assert_int_equal(snap_tx_state(f->tx, &s, NULL, f->err,
		    sizeof(f->err)), SNAP_EINVAL);
	}
	done(f);
}

int
main(void)
{
	static int	 openat2 = 0, walk = 1, exchange = 0, aside = 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(applies),
		cmocka_unit_test(conflicts),
		cmocka_unit_test_prestate_setup_teardown(crash_everywhere,
		    NULL, swap_cleanup, &exchange),
		cmocka_unit_test_prestate_setup_teardown(crash_everywhere,
		    NULL, swap_cleanup, &aside),
		cmocka_unit_test(recovery_refuses_later_edit),
		cmocka_unit_test(undoes),
		cmocka_unit_test(undo_after_host_edit),
		cmocka_unit_test_prestate_setup_teardown(undo_crash_everywhere,
		    NULL, swap_cleanup, &exchange),
		cmocka_unit_test_prestate_setup_teardown(undo_crash_everywhere,
		    NULL, swap_cleanup, &aside),
		cmocka_unit_test(stage_changed_after_compute),
		cmocka_unit_test(listed),
		cmocka_unit_test_prestate_setup_teardown(swap_during_apply,
		    NULL, swap_cleanup, &openat2),
		cmocka_unit_test_prestate_setup_teardown(swap_during_apply,
		    NULL, swap_cleanup, &walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
