/*
 * The snapshot core (snap/) on Windows through snap/fs_win32.c, run by
 * tests/win/wine.sh: snapsmoke.exe WORK (a folder that does not exist)
 * makes WORK\host with three files, stages it, edits the stage (one file
 * changed, one deleted, one created), computes the change set, applies it
 * to the host in a transaction, and checks the host; then a second stage
 * whose host file is edited behind its back must be a conflict that
 * writes nothing.  One "ok"/"FAIL" line per check; exit 1 on a failure.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"

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
	check(snap_tree_remove(argv[1], err, sizeof(err)) == SNAP_OK,
	    "snap_tree_remove removes it all");
	return failed;
}
