/*
 * snap/tx.c: another program writing the host tree while a transaction
 * writes it back.  At every crash point of apply (the test hook runs a
 * "writer" there instead of crashing), one writer edits, saves over,
 * creates or relinks one target; whatever the point, the writer's entry
 * survives: apply either wrote that target before the writer came (then
 * the writer's edit is on top of it), or refused it and rolled back
 * everything it had written (exit conflict, state rolled back).  Twice:
 * with the atomic swap (renameat2 RENAME_EXCHANGE), and with the way of
 * systems without it (the old entry moved aside checked, as on Windows).
 * Real files.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
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

enum writer {
	W_APPEND,	/* edit.txt edited in place (O_APPEND) */
	W_SAVE,		/* edit.txt saved over (a new file, renamed) */
	W_SAMETIME,	/* edit.txt rewritten, same size, mtime put back */
	W_CREATE,	/* new.txt created (or appended to, once there) */
	W_MKDIR,	/* newdir made, with a file of the writer's */
	W_DELETED,	/* gone.txt written (created again once gone) */
	W_MODE,		/* mode.sh (a mode change) edited */
	W_RELINK,	/* link pointed elsewhere */
	W_N
};

/* the entry each writer leaves, and what the test finds in it */
static const char *const raced[W_N] = {
	"edit.txt", "edit.txt", "edit.txt", "new.txt", "newdir", "gone.txt",
	"mode.sh", "link"
};

struct race {
	char		*base;
	char		 src[4096], stage[4096], tx[4096];
	enum writer	 w;
	int		 fired;
};

static char	*race_base;	/* removed by cleanup() also on a failure */

static int
cleanup(void **state)
{
	(void)state;
	snap_test_hook_at(0, NULL, NULL);
	snap_test_fs_noexchange(0);
	if (race_base != NULL) {
		rm_rf(race_base);
		free(race_base);
		race_base = NULL;
	}
	return 0;
}

static void
append(const char *path, const char *text)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail_msg("writer: %s: %s", path, strerror(errno));
	close(fd);
}

static void
writer(void *arg)
{
	struct race	*r = arg;
	struct stat	 st;
	struct timespec	 ts[2];
	char		 tmp[4096];
	int		 fd;

	r->fired = 1;
	switch (r->w) {
	case W_APPEND:
		append(at(r->src, "edit.txt"), "USER\n");
		break;
	case W_SAVE:
		xsnprintf(tmp, sizeof(tmp), "%s/.edit.txt.swp", r->src);
		append(tmp, "USER\n");
		if (rename(tmp, at(r->src, "edit.txt")) == -1)
			fail_msg("writer: rename: %s", strerror(errno));
		break;
	case W_SAMETIME:
		/* the same bytes count at the same offset, the mtime set
		 * back: only the ctime tells */
		if (lstat(at(r->src, "edit.txt"), &st) == -1) {
			/* away for a moment (moved aside): made again */
			append(at(r->src, "edit.txt"), "USER\n");
			break;
		}
		if ((fd = open(at(r->src, "edit.txt"), O_WRONLY)) == -1)
			fail_msg("writer: %s", strerror(errno));
		if (pwrite(fd, "USER", 4, 0) != 4)
			fail_msg("writer: pwrite: %s", strerror(errno));
		ts[0] = st.st_atim;
		ts[1] = st.st_mtim;
		if (futimens(fd, ts) == -1)
			fail_msg("writer: futimens: %s", strerror(errno));
		close(fd);
		break;
	case W_CREATE:
		append(at(r->src, "new.txt"), "USER\n");
		break;
	case W_MKDIR:
		(void)mkdir(at(r->src, "newdir"), 0755);
		append(at(r->src, "newdir/user"), "USER\n");
		break;
	case W_DELETED:
		append(at(r->src, "gone.txt"), "USER\n");
		break;
	case W_MODE:
		append(at(r->src, "mode.sh"), "USER\n");
		break;
	case W_RELINK:
		lnk(r->src, "link", "USER");
		break;
	case W_N:
		break;
	}
}

/* The dump without the entries of rel and of what is under it (an entry
 * ends with "]\n": the contents here hold none). */
static char *
without(const char *tree, const char *rel)
{
	char		*out = calloc(1, strlen(tree) + 1), *o = out;
	const char	*p, *e;
	size_t		 n = strlen(rel);

	for (p = tree; *p != '\0'; p = e) {
		e = strstr(p, "]\n");
		e = e == NULL ? p + strlen(p) : e + 2;
		if (strncmp(p, rel, n) == 0 && (p[n] == ' ' || p[n] == '/'))
			continue;
		memcpy(o, p, (size_t)(e - p));
		o += e - p;
	}
	*o = '\0';
	return out;
}

static void
same_but(const char *root, const char *want, const char *rel,
    const char *what, unsigned n)
{
	char	*got = dump(root), *a = without(got, rel), *b = without(want,
		    rel);

	if (strcmp(a, b) != 0)
		fail_msg("writer at point %u: the tree is not %s but for %s:\n"
		    "%s\nexpected:\n%s", n, what, rel, a, b);
	free(a);
	free(b);
	free(got);
}

/* The writer's entry is there, whatever apply did. */
static void
writers_entry(struct race *r, unsigned n)
{
	char	buf[4096];
	ssize_t	len;
	int	fd;

	if (r->w == W_RELINK) {
		len = readlink(at(r->src, "link"), buf, sizeof(buf) - 1);
		if (len != 4 || memcmp(buf, "USER", 4) != 0)
			fail_msg("writer at point %u: its link is gone", n);
		return;
	}
	fd = open(at(r->src, r->w == W_MKDIR ? "newdir/user" : raced[r->w]),
	    O_RDONLY);
	len = fd == -1 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd != -1)
		close(fd);
	buf[len < 0 ? 0 : len] = '\0';
	if (strstr(buf, "USER") == NULL)
		fail_msg("writer %d at point %u: its write was lost (%s holds "
		    "\"%s\")", r->w, n, raced[r->w], buf);
}

/*
 * One writer at every point: 1 when it fired at point n, 0 past the
 * last point.  *conflict is set when apply refused.
 */
static int
race_at(enum writer w, unsigned n, int *conflict)
{
	struct race		 r;
	struct snap_rules	*rules = snap_rules_new();
	struct snap_limits	 lim;
	struct snap_manifest	*m;
	struct snap_changes	*c;
	enum snap_tx_state	 s;
	char			 err[1024], *before, *after;
	int			 rc;

	memset(&r, 0, sizeof(r));
	r.w = w;
	r.base = race_base = tmpdir();
	xsnprintf(r.src, sizeof(r.src), "%s/src", r.base);
	xsnprintf(r.stage, sizeof(r.stage), "%s/stage", r.base);
	xsnprintf(r.tx, sizeof(r.tx), "%s/tx", r.base);
	mkd(r.base, "src", 0755);
	put(r.src, "edit.txt", "old edit\n", 0644);
	put(r.src, "gone.txt", "gone\n", 0644);
	put(r.src, "mode.sh", "#!/bin/sh\n", 0644);
	put(r.src, "keep.txt", "keep\n", 0644);
	lnk(r.src, "link", "keep.txt");
	snap_limits_default(&lim);
	if (snap_stage_create(r.src, r.stage, rules, &lim, &m, err,
	    sizeof(err)) != SNAP_OK)
		fail_msg("stage: %s", err);
	put(r.stage, "edit.txt", "new edit, longer\n", 0644);
	unlink(at(r.stage, "gone.txt"));
	chmod(at(r.stage, "mode.sh"), 0755);
	put(r.stage, "new.txt", "new\n", 0644);
	put(r.stage, "newdir/f", "f\n", 0644);
	lnk(r.stage, "link", "edit.txt");
	if (snap_changes_compute(m, r.stage, rules, &lim, &c, err,
	    sizeof(err)) != SNAP_OK)
		fail_msg("changes: %s", err);
	before = dump(r.src);
	after = dump(r.stage);

	snap_test_hook_at(n, writer, &r);
	rc = snap_tx_apply(r.tx, r.src, r.stage, m, c, err, sizeof(err));
	snap_test_hook_at(0, NULL, NULL);
	if (rc != SNAP_OK && rc != SNAP_ECONFLICT)
		fail_msg("writer %d at point %u: apply: %d %s", w, n, rc, err);
	if (r.fired)
		writers_entry(&r, n);
	*conflict = rc == SNAP_ECONFLICT;
	if (rc == SNAP_ECONFLICT) {
		if (strstr(err, raced[w]) == NULL)
			fail_msg("writer at point %u: '%s' does not name %s",
			    n, err, raced[w]);
		assert_int_equal(snap_tx_state(r.tx, &s, NULL, err,
		    sizeof(err)), SNAP_OK);
		if (s != SNAP_TX_ROLLED_BACK)
			fail_msg("writer at point %u: state %s", n,
			    snap_tx_state_name(s));
		same_but(r.src, before, raced[w], "as before", n);
	} else
		same_but(r.src, after, raced[w], "as after", n);
	/* settled: a recovery finds nothing to do, and writes nothing */
	before = (free(before), dump(r.src));
	assert_int_equal(snap_tx_recover(r.tx, r.src, &s, err, sizeof(err)),
	    SNAP_OK);
	same_but(r.src, before, "", "unchanged", n);
	free(before);
	free(after);
	snap_changes_free(c);
	snap_manifest_free(m);
	snap_rules_free(rules);
	rm_rf(r.base);
	free(r.base);
	race_base = NULL;
	return r.fired;
}

static void
writers(void **state)
{
	enum writer	w;
	unsigned	n, conflicts, total = 0;
	int		conflict;

	snap_test_fs_noexchange(*(int *)*state);
	for (w = 0; w < W_N; w++) {
		conflicts = 0;
		for (n = 1; race_at(w, n, &conflict); n++)
			conflicts += (unsigned)conflict;
		total += n - 1;
		if (getenv("SNAP_TX_VERBOSE") != NULL)
			fprintf(stderr, "writer %d: %u points, %u conflicts\n",
			    w, n - 1, conflicts);
		/* the writer comes before the check at the first points,
		 * and between the check and its target's write at others:
		 * both are refused */
		if (conflicts < 2)
			fail_msg("writer %d: only %u conflicts in %u points",
			    w, conflicts, n - 1);
	}
	snap_test_fs_noexchange(0);
	if (total < 8 * 20)
		fail_msg("only %u points", total);
}

int
main(void)
{
	static int	 exchange = 0, aside = 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(writers, NULL,
		    cleanup, &exchange),
		cmocka_unit_test_prestate_setup_teardown(writers, NULL,
		    cleanup, &aside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
