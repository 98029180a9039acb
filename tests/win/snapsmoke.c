/*
 * The snapshot core (snap/) on Windows through snap/fs_win32.c, run by
 * tests/win/wine.sh: snapsmoke.exe WORK (a folder that does not exist)
 * makes WORK\host with three files, stages it, edits the stage (one file
 * changed, one deleted, one created), computes the change set, applies it
 * to the host in a transaction, and checks the host; then a second stage
 * whose host file is edited behind its back must be a conflict that
 * writes nothing.  Then a writer races the apply at each of its points
 * (the test hook of snap-test.h): an edit of a file it replaces, a file
 * created where it creates one, an edit of a file it deletes; the
 * writer's bytes must survive every time (apply wrote first, or refused
 * and rolled back).  One "ok"/"FAIL" line per check; exit 1 on a
 * failure.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "snap-test.h"

static int failed;

static void
check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failed = 1;
}

static void
put(const char *dir, const char *name, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s\\%s", dir, name);
	if ((f = fopen(p, "wb")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int
has(const char *dir, const char *name, const char *text)
{
	char p[1024], buf[256];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s\\%s", dir, name);
	if ((f = fopen(p, "rb")) == NULL)
		return text == NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return text != NULL && strcmp(buf, text) == 0;
}

/* ---- a writer racing the apply ------------------------------------ */

enum writer { W_EDIT, W_CREATE, W_DELETED, W_N };
static const char *const wname[W_N] = { "edit.txt", "new.txt", "gone.txt" };

struct race {
	char		host[1024];
	enum writer	w;
	int		fired;
};

static void
writer(void *arg)
{
	struct race *r = arg;
	char p[1200];
	HANDLE h;
	DWORD n;

	r->fired = 1;
	snprintf(p, sizeof(p), "%s\\%s", r->host, wname[r->w]);
	/* as an editor appending: the file made again when it is gone */
	h = CreateFileA(p, FILE_APPEND_DATA, FILE_SHARE_READ |
	    FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE || !WriteFile(h, "USER\n", 5, &n, NULL))
		printf("     (writer: %s: error %lu)\n", p, GetLastError());
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
}

/* The writer's bytes are in its file. */
static int
survived(const struct race *r)
{
	char p[1200], buf[256];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s\\%s", r->host, wname[r->w]);
	if ((f = fopen(p, "rb")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, "USER") != NULL;
}

/* One writer at point n in a fresh tree under work: 1 when it fired,
 * 0 past the last point, -1 on a failure (said). */
static int
race_at(const char *work, enum writer w, unsigned n, int *conflict)
{
	char base[1024], stage[1100], tx[1100], err[512];
	struct snap_rules *rules = snap_rules_new();
	struct snap_limits lim;
	struct snap_manifest *m = NULL;
	struct snap_changes *c = NULL;
	struct race r;
	enum snap_tx_state s = SNAP_TX_NONE;
	int rc, out = -1;

	memset(&r, 0, sizeof(r));
	r.w = w;
	snprintf(base, sizeof(base), "%s\\w%d-%u", work, (int)w, n);
	snprintf(r.host, sizeof(r.host), "%s\\host", base);
	snprintf(stage, sizeof(stage), "%s\\stage", base);
	snprintf(tx, sizeof(tx), "%s\\tx", base);
	if (!CreateDirectoryA(base, NULL) || !CreateDirectoryA(r.host, NULL))
		goto done;
	put(r.host, "edit.txt", "before\n");
	put(r.host, "gone.txt", "delete me\n");
	snap_limits_default(&lim);
	if (snap_stage_create(r.host, stage, rules, &lim, &m, err,
	    sizeof(err)) != SNAP_OK)
		goto said;
	put(stage, "edit.txt", "after, longer\n");
	put(stage, "new.txt", "created\n");
	snprintf(err, sizeof(err), "%s\\gone.txt", stage);
	DeleteFileA(err);
	if (snap_changes_compute(m, stage, rules, &lim, &c, err,
	    sizeof(err)) != SNAP_OK)
		goto said;
	snap_test_hook_at(n, writer, &r);
	rc = snap_tx_apply(tx, r.host, stage, m, c, err, sizeof(err));
	snap_test_hook_at(0, NULL, NULL);
	*conflict = rc == SNAP_ECONFLICT;
	if (rc != SNAP_OK && rc != SNAP_ECONFLICT)
		goto said;
	if (rc == SNAP_ECONFLICT && (snap_tx_state(tx, &s, NULL, err,
	    sizeof(err)) != SNAP_OK || s != SNAP_TX_ROLLED_BACK)) {
		snprintf(err, sizeof(err), "state %s after a conflict",
		    snap_tx_state_name(s));
		goto said;
	}
	if (r.fired && !survived(&r)) {
		snprintf(err, sizeof(err), "the writer's bytes were lost");
		goto said;
	}
	out = r.fired;
	goto done;
said:
	printf("     (writer %s at point %u: %s)\n", wname[w], n, err);
done:
	snap_changes_free(c);
	snap_manifest_free(m);
	snap_rules_free(rules);
	(void)snap_tree_remove(base, err, sizeof(err));
	return out;
}

static void
races(const char *work)
{
	char what[128];
	enum writer w;
	unsigned n, conflicts;
	int rc, conflict;

	if (!CreateDirectoryA(work, NULL)) {
		check(0, "races: a folder");
		return;
	}
	for (w = 0; w < W_N; w++) {
		conflicts = 0;
		for (n = 1; (rc = race_at(work, w, n, &conflict)) == 1; n++)
			conflicts += (unsigned)conflict;
		snprintf(what, sizeof(what), "a writer of %s at each of %u "
		    "points keeps its bytes (%u refused, rolled back)",
		    wname[w], n - 1, conflicts);
		check(rc == 0 && conflicts >= 2, what);
	}
}

int
main(int argc, char **argv)
{
	char host[1024], stage[1024], stage2[1024], tx[1024], tx2[1024];
	char err[512];
	struct snap_rules *rules;
	struct snap_limits lim;
	struct snap_manifest *m = NULL, *m2 = NULL;
	struct snap_changes *c = NULL, *c2 = NULL;
	int rc;

	if (argc != 2)
		return 2;
	snprintf(host, sizeof(host), "%s\\host", argv[1]);
	snprintf(stage, sizeof(stage), "%s\\stage", argv[1]);
	snprintf(stage2, sizeof(stage2), "%s\\stage2", argv[1]);
	snprintf(tx, sizeof(tx), "%s\\tx", argv[1]);
	snprintf(tx2, sizeof(tx2), "%s\\tx2", argv[1]);
	if (!CreateDirectoryA(argv[1], NULL) || !CreateDirectoryA(host, NULL))
		return 2;
	put(host, "keep.txt", "same\n");
	put(host, "edit.txt", "before\n");
	put(host, "gone.txt", "delete me\n");

	rules = snap_rules_new();
	snap_limits_default(&lim);
	rc = snap_stage_create(host, stage, rules, &lim, &m, err, sizeof(err));
	check(rc == SNAP_OK, "stage created");
	if (rc != SNAP_OK)
		printf("     (%s)\n", err);
	check(m != NULL && snap_manifest_count(m) == 3, "manifest: 3 entries");
	check(has(stage, "edit.txt", "before\n"), "the stage holds a copy");

	put(stage, "edit.txt", "after\n");
	put(stage, "new.txt", "created\n");
	DeleteFileA(strcat(strcpy(err, stage), "\\gone.txt"));
	rc = snap_changes_compute(m, stage, rules, &lim, &c, err, sizeof(err));
	check(rc == SNAP_OK, "change set computed");
	if (rc != SNAP_OK)
		printf("     (%s)\n", err);
	check(c != NULL && snap_changes_effective(c) == 3,
	    "3 changes (modify, create, delete)");

	rc = SNAP_EINVAL;
	if (c != NULL)
		rc = snap_tx_apply(tx, host, stage, m, c, err, sizeof(err));
	check(rc == SNAP_OK, "transaction applied");
	if (rc != SNAP_OK)
		printf("     (%s)\n", err);
	check(has(host, "edit.txt", "after\n"), "host: edit.txt changed");
	check(has(host, "new.txt", "created\n"), "host: new.txt created");
	check(has(host, "gone.txt", NULL), "host: gone.txt deleted");
	check(has(host, "keep.txt", "same\n"), "host: keep.txt untouched");

	/* a conflict: the host edited after the stage was made */
	rc = snap_stage_create(host, stage2, rules, &lim, &m2, err, sizeof(err));
	check(rc == SNAP_OK, "second stage created");
	put(stage2, "keep.txt", "from the sandbox\n");
	put(host, "keep.txt", "edited by the user meanwhile\n");
	rc = m2 != NULL ? snap_changes_compute(m2, stage2, rules, &lim, &c2,
	    err, sizeof(err)) : SNAP_EINVAL;
	check(rc == SNAP_OK, "second change set computed");
	rc = c2 != NULL ? snap_tx_apply(tx2, host, stage2, m2, c2, err,
	    sizeof(err)) : SNAP_EINVAL;
	check(rc == SNAP_ECONFLICT, "a later host edit is a conflict");
	check(has(host, "keep.txt", "edited by the user meanwhile\n"),
	    "  and the user's edit is kept");

	snap_changes_free(c);
	snap_changes_free(c2);
	snap_manifest_free(m);
	snap_manifest_free(m2);
	snap_rules_free(rules);
	snprintf(stage, sizeof(stage), "%s\\races", argv[1]);
	races(stage);
	check(snap_tree_remove(argv[1], err, sizeof(err)) == SNAP_OK,
	    "snap_tree_remove removes it all");
	return failed;
}
