/*
 * The stage's drive (docs/windows.md, "The drive root"): a free per-user
 * DOS drive letter mapped to the stage, so that the command's drive root
 * is the stage.  DefineDosDevice without administrator rights defines
 * the letter in the caller's own logon session (per user), with
 * DDD_RAW_TARGET_PATH to the NT path \??\<stage>.
 *
 * A letter is chosen under the named mutex WINRUN_DRIVE_MUTEX, so that
 * two runners never take the same one: free is clear in GetLogicalDrives
 * and unknown to QueryDosDevice; after the definition QueryDosDevice
 * must name exactly our target first (a program outside aisb that took
 * the letter meanwhile: ours is removed and the next letter tried).
 * Removal names the exact target (DDD_EXACT_MATCH_ON_REMOVE), under the
 * same mutex and only when QueryDosDevice still lists that target, so a
 * definition that is not ours is never removed: at the end of the run,
 * on every error path after the mapping, and by aisb clean for a dead
 * runner's lease.
 *
 * Windows and Wine differ (docs/windows.md, "The drive root").  Windows
 * stacks definitions of a letter (QueryDosDevice lists them, the newest
 * first) and removes exactly the named target.  Wine keeps one target a
 * letter (a second definition fails), and ignores
 * DDD_EXACT_MATCH_ON_REMOVE: it removes whatever the letter maps.  So
 * nothing here relies on the exact match: every removal is preceded by
 * the check that our target is listed, which on Wine means it is the
 * one.  What the check cannot close on Wine: a program outside aisb (it
 * does not take the mutex) that replaces the letter between the check
 * and the removal loses its definition; on Windows the exact match
 * refuses that removal.
 */
#include "config.h"

#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/win32.h"

#define DRIVE_MUTEX_WAIT_MS	10000	/* another runner choosing a letter */

/*
 * Whether QueryDosDevice lists target for name: first (only: 1) or at
 * all (any: 1).
 */
static int
lists(const wchar_t *name, const wchar_t *target, int any)
{
	wchar_t	 buf[4 * WINRUN_DRIVE_TARGET_MAX];
	wchar_t	*p;
	DWORD	 n;

	if ((n = QueryDosDeviceW(name, buf, sizeof(buf) / sizeof(buf[0]))) ==
	    0)
		return 0;
	buf[sizeof(buf) / sizeof(buf[0]) - 1] = L'\0';
	for (p = buf; p < buf + n && *p != L'\0'; p += wcslen(p) + 1) {
		if (wcscmp(p, target) == 0)
			return 1;
		if (!any)
			break;
	}
	return 0;
}

/* The allocator's mutex, held: the handle, or NULL with err. */
static HANDLE
lock_letters(char *err, size_t errlen)
{
	HANDLE	 mx;
	DWORD	 w;
	char	 e[160];

	if ((mx = CreateMutexW(NULL, FALSE, L"" WINRUN_DRIVE_MUTEX)) == NULL) {
		snprintf(err, errlen, "the drive letters' mutex: %s",
		    w32_strerror(GetLastError(), e, sizeof(e)));
		return NULL;
	}
	/* abandoned: its owner died between its calls; the state is the
	 * system's, which every caller checks again */
	w = WaitForSingleObject(mx, DRIVE_MUTEX_WAIT_MS);
	if (w != WAIT_OBJECT_0 && w != WAIT_ABANDONED) {
		snprintf(err, errlen, "the drive letters' mutex: not free "
		    "within %d s", DRIVE_MUTEX_WAIT_MS / 1000);
		CloseHandle(mx);
		return NULL;
	}
	return mx;
}

static void
unlock_letters(HANDLE mx)
{
	ReleaseMutex(mx);
	CloseHandle(mx);
}

int
w32_drive_unmap(const char *drive, const char *target, char *err,
    size_t errlen)
{
	wchar_t	*wd = NULL, *wt = NULL;
	HANDLE	 mx;
	char	 e[160];
	int	 rc = -1;

	if (!winrun_drive_valid(drive) || winrun_drive_stage(target) == NULL) {
		snprintf(err, errlen, "%s: not a drive of aisb's", drive);
		return -1;
	}
	if ((wd = w32_wide(drive)) == NULL || (wt = w32_wide(target)) == NULL) {
		snprintf(err, errlen, "%s: not valid UTF-8", target);
		goto out;
	}
	if ((mx = lock_letters(err, errlen)) == NULL)
		goto out;
	if (!lists(wd, wt, 1)) {
		/* Windows' exact match would refuse another target; Wine's
		 * removes whatever is there: never ask it to */
		snprintf(err, errlen, "drive %s no longer maps to %s: left as "
		    "it is", drive, target);
		rc = 1;
	} else if (!DefineDosDeviceW(DDD_RAW_TARGET_PATH |
	    DDD_REMOVE_DEFINITION | DDD_EXACT_MATCH_ON_REMOVE, wd, wt))
		snprintf(err, errlen, "removing drive %s (%s): %s", drive,
		    target, w32_strerror(GetLastError(), e, sizeof(e)));
	else
		rc = 0;
	unlock_letters(mx);
out:
	free(wd);
	free(wt);
	return rc;
}

/*
 * One letter tried: 1 mapped, 0 taken meanwhile (try another), -1.  The
 * letter is recorded (the lease) before it is defined, so that a runner
 * killed in between leaves aisb clean a lease naming it.
 */
static int
try_letter(char c, const char *target, const wchar_t *wt,
    const struct w32_drive_record *rec, char *err, size_t errlen)
{
	wchar_t	 name[3] = { (wchar_t)c, L':', 0 }, buf[8];
	char	 e[160], drive[3] = { c, ':', '\0' };

	if (QueryDosDeviceW(name, buf, sizeof(buf) / sizeof(buf[0])) != 0 ||
	    GetLastError() != ERROR_FILE_NOT_FOUND)
		return 0;	/* defined (or unknowable): not free */
	if (rec != NULL && rec->fn(rec->ctx, drive, target) == -1) {
		snprintf(err, errlen, "recording drive %s in the lease", drive);
		return -1;
	}
	if (!DefineDosDeviceW(DDD_RAW_TARGET_PATH, name, wt)) {
		DWORD	 why = GetLastError();

		/* Wine keeps one target a letter: a definition made since
		 * the query makes ours fail (Windows stacks ours on it) */
		if (QueryDosDeviceW(name, buf, sizeof(buf) / sizeof(buf[0])) !=
		    0 || GetLastError() != ERROR_FILE_NOT_FOUND)
			return 0;
		snprintf(err, errlen, "DefineDosDevice %c: %s", c,
		    w32_strerror(why, e, sizeof(e)));
		return -1;
	}
	if (lists(name, wt, 0))
		return 1;
	/*
	 * Another definition over or under ours: ours taken back, only while
	 * it is still listed.  Windows removes exactly ours; Wine, which
	 * ignores the exact match, would remove the other one, but there a
	 * letter has one target, so ours listed is ours first and this is
	 * not reached.
	 */
	if (lists(name, wt, 1))
		(void)DefineDosDeviceW(DDD_RAW_TARGET_PATH |
		    DDD_REMOVE_DEFINITION | DDD_EXACT_MATCH_ON_REMOVE, name,
		    wt);
	return 0;
}

int
w32_drive_map(const char *stage, const struct w32_drive_record *rec,
    char *drive, char *target, char *err, size_t errlen)
{
	wchar_t	*wt = NULL;
	HANDLE	 mx;
	DWORD	 used;
	char	 c;
	int	 k = 0;

	drive[0] = target[0] = '\0';
	if (winrun_drive_target(stage, target, WINRUN_DRIVE_TARGET_MAX) == -1 ||
	    (wt = w32_wide(target)) == NULL) {
		snprintf(err, errlen, "%s: not a drive path for a drive letter",
		    stage);
		target[0] = '\0';
		free(wt);
		return -1;
	}
	if ((mx = lock_letters(err, errlen)) == NULL) {
		target[0] = '\0';
		free(wt);
		return -1;
	}
	used = GetLogicalDrives();
	while (k == 0 && (c = winrun_drive_pick(used)) != 0) {
		if ((k = try_letter(c, target, wt, rec, err, errlen)) == 1)
			snprintf(drive, 3, "%c:", c);
		else if (k == 0)
			used |= 1u << (c - 'A');
	}
	unlock_letters(mx);
	free(wt);
	if (k == 1)
		return 0;
	if (k == 0)
		snprintf(err, errlen, "no free drive letter (D: to Z: are all "
		    "taken)");
	target[0] = '\0';
	return -1;
}

int
w32_drive_is_stage(const char *drive, const char *stage)
{
	BY_HANDLE_FILE_INFORMATION	 a, b;
	wchar_t				 root[4] = { 0, L':', L'\\', 0 };
	wchar_t				*ws;
	HANDLE				 h1, h2;
	int				 same = 0;

	root[0] = (wchar_t)drive[0];
	if ((ws = w32_wide(stage)) == NULL)
		return 0;
	h1 = CreateFileW(root, FILE_READ_ATTRIBUTES, FILE_SHARE_READ |
	    FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	    FILE_FLAG_BACKUP_SEMANTICS, NULL);
	h2 = CreateFileW(ws, FILE_READ_ATTRIBUTES, FILE_SHARE_READ |
	    FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	    FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h1 != INVALID_HANDLE_VALUE && h2 != INVALID_HANDLE_VALUE &&
	    GetFileInformationByHandle(h1, &a) &&
	    GetFileInformationByHandle(h2, &b))
		same = a.dwVolumeSerialNumber == b.dwVolumeSerialNumber &&
		    a.nFileIndexHigh == b.nFileIndexHigh &&
		    a.nFileIndexLow == b.nFileIndexLow;
	if (h1 != INVALID_HANDLE_VALUE)
		CloseHandle(h1);
	if (h2 != INVALID_HANDLE_VALUE)
		CloseHandle(h2);
	free(ws);
	return same;
}
