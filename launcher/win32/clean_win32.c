/*
 * aisb-run --clean LEASE --stage-root DIR: what aisb clean does on
 * Windows for one run folder.  The decision is winrun_clean_decide's
 * (clean.c, unit-tested); this file only looks up the recorded pid and
 * removes exactly the profile, drive and stage the lease names.
 */
#include "config.h"

#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

#include "win32/win32.h"

int
w32_clean(const char *lease, const char *stage_root)
{
	struct winrun_lease l;
	struct winrun_proc_seen seen = { 0, 0 };
	char *doc = NULL, err[512], why[256];
	size_t len;
	HANDLE h;
	DWORD code;
	wchar_t *w;
	int ret = 0, k;

	if (w32_read_file(lease, WINRUN_DOC_MAX, &doc, &len, err,
	    sizeof(err)) == -1 ||
	    winrun_lease_decode(doc, len, &l, err, sizeof(err)) == -1) {
		printf("refused %s: %s\n", lease, err);
		free(doc);
		return 1;
	}
	free(doc);
	h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, l.runner_pid);
	if (h != NULL) {
		if (GetExitCodeProcess(h, &code) && code == STILL_ACTIVE) {
			seen.alive = 1;
			seen.start = w32_process_start(h);
			/* unreadable start: treated as the runner (skipped) */
			if (seen.start == 0)
				seen.start = l.runner_start;
		}
		CloseHandle(h);
	} else if (GetLastError() == ERROR_ACCESS_DENIED) {
		/* a process we may not query: never assume it is dead */
		seen.alive = 1;
		seen.start = l.runner_start;
	}
	switch (winrun_clean_decide(&l, &seen, stage_root, why, sizeof(why))) {
	case WINRUN_CLEAN_SKIP_LIVE:
		printf("skipped run %s: %s\n", l.run_id, why);
		return 0;
	case WINRUN_CLEAN_REFUSE:
		printf("refused run %s: %s\n", l.run_id, why);
		return 1;
	case WINRUN_CLEAN_REMOVE:
		break;
	}
	if (l.profile[0] != '\0') {
		if (w32_appc_delete_name(l.profile, err, sizeof(err)) == 0)
			printf("removed profile %s\n", l.profile);
		else {
			printf("profile %s: %s\n", l.profile, err);
			ret = 1;
		}
	}
	if (l.drive[0] != '\0') {
		/* exactly the target the lease names (checked inside the
		 * stage root): a letter redefined since is not ours */
		if ((k = w32_drive_unmap(l.drive, l.drive_target, err,
		    sizeof(err))) == 0)
			printf("removed drive %s\n", l.drive);
		else if (k == 1)
			printf("%s\n", err);
		else {
			printf("drive %s: %s\n", l.drive, err);
			ret = 1;
		}
	}
	if (l.stage[0] != '\0') {
		err[0] = '\0';
		if ((w = w32_wide(l.stage)) != NULL &&
		    w32_remove_tree(w, err, sizeof(err)) == 0)
			printf("removed stage %s\n", l.stage);
		else {
			printf("stage %s: %s\n", l.stage, err);
			ret = 1;
		}
		free(w);
	}
	printf("cleaned run %s (%s)\n", l.run_id, why);
	return ret;
}
