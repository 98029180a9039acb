/*
 * The draft's per-system part on Windows (launcher/draft.h, the
 * draft_os_* functions): the lock, the console, whether the launcher of a
 * session still runs, the clock.  launcher/draft.c is the same C on both
 * systems.
 */
#include "config.h"

#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft.h"
#include "win32/win32.h"
#include "win32/wlaunch.h"

/* sdir "\\" name as UTF-16; NULL if it does not fit or is not UTF-8. */
static wchar_t *
in_sdir(const char *sdir, const char *name)
{
	char path[DRAFT_PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s\\%s", sdir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	return w32_wide(path);
}

int
draft_os_lock(const char *sdir, intptr_t *lock)
{
	OVERLAPPED ov;
	wchar_t *w;
	HANDLE h;
	DWORD code;
	char e[160];

	if ((w = in_sdir(sdir, "snapshot.lock")) == NULL) {
		fprintf(stderr, "aisb: %s\\snapshot.lock: path too long\n", sdir);
		return -1;
	}
	/* never through a link: a reparse point is opened, not followed */
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ |
	    FILE_SHARE_WRITE, NULL, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL |
	    FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		fprintf(stderr, "aisb: %s\\snapshot.lock: %s\n", sdir,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		return -1;
	}
	memset(&ov, 0, sizeof(ov));
	if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
	    0, 1, 0, &ov)) {
		code = GetLastError();
		CloseHandle(h);
		if (code == ERROR_LOCK_VIOLATION || code == ERROR_IO_PENDING) {
			fprintf(stderr, "aisb: another aisb works on this draft "
			    "(%s\\snapshot.lock); try again when it is done\n",
			    sdir);
			return -2;
		}
		fprintf(stderr, "aisb: %s\\snapshot.lock: %s\n", sdir,
		    w32_strerror(code, e, sizeof(e)));
		return -1;
	}
	*lock = (intptr_t)h;
	return 0;
}

void
draft_os_unlock(intptr_t lock)
{
	HANDLE h = (HANDLE)lock;
	OVERLAPPED ov;

	if (h == NULL || h == INVALID_HANDLE_VALUE)
		return;
	memset(&ov, 0, sizeof(ov));
	UnlockFileEx(h, 0, 1, 0, &ov);
	CloseHandle(h);
}

/*
 * A console, not merely a character device: _isatty is true for NUL too,
 * and a prompt read from NUL would take "no answer" for an answer.
 */
static int
is_console(DWORD which)
{
	HANDLE h = GetStdHandle(which);
	DWORD mode;

	return h != NULL && h != INVALID_HANDLE_VALUE &&
	    GetConsoleMode(h, &mode);
}

FILE *
draft_os_terminal(int always)
{
	HANDLE h;
	FILE *f;
	int fd;

	if (is_console(STD_INPUT_HANDLE) && (always ||
	    is_console(STD_ERROR_HANDLE))) {
		if ((fd = _dup(_fileno(stdin))) == -1)
			return NULL;
		if ((f = _fdopen(fd, "r")) == NULL)
			_close(fd);
		return f;
	}
	if (!always)
		return NULL;
	/* the console of this process, whatever stdin is */
	h = CreateFileW(L"CONIN$", GENERIC_READ | GENERIC_WRITE,
	    FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	if ((fd = _open_osfhandle((intptr_t)h, _O_RDONLY | _O_TEXT)) == -1) {
		CloseHandle(h);
		return NULL;
	}
	if ((f = _fdopen(fd, "r")) == NULL)
		_close(fd);
	return f;
}

int
draft_os_launcher_running(const char *sdir)
{
	char path[DRAFT_PATH_MAX], *text = NULL, e[256];
	uint32_t pid;
	uint64_t start, seen;
	size_t len;
	HANDLE h;
	DWORD code;
	int alive = 1;

	if (snprintf(path, sizeof(path), "%s\\launcher", sdir) >=
	    (int)sizeof(path) ||
	    w32_read_file(path, WLAUNCH_LAUNCHER_MAX, &text, &len, e,
	    sizeof(e)) == -1)
		return 1;	/* cannot be told */
	if (wlaunch_launcher_parse(text, &pid, &start) == -1)
		goto out;
	h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
	if (h == NULL) {
		/* a process we may not query is not assumed gone */
		alive = GetLastError() == ERROR_ACCESS_DENIED;
		goto out;
	}
	if (!GetExitCodeProcess(h, &code) || code != STILL_ACTIVE)
		alive = 0;
	else if ((seen = w32_process_start(h)) != 0 && seen != start)
		alive = 0;	/* the pid now names another process */
	CloseHandle(h);
out:
	free(text);
	return alive;
}

void
draft_os_own_applied(const char *workspace, unsigned owner_uid,
    unsigned owner_gid, const struct snap_changes *ch)
{
	/* files written by the user's own process are the user's */
	(void)workspace;
	(void)owner_uid;
	(void)owner_gid;
	(void)ch;
}

int
draft_os_path_absolute(const char *path)
{
	return wlaunch_path_absolute(path);
}

long long
draft_os_now_ms(void)
{
	return (long long)GetTickCount64();
}
