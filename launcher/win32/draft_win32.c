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
draft_os_lock(const char *sdir, intptr_t *lock, int quiet)
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
			if (!quiet)
				fprintf(stderr, "aisb: another aisb works on "
				    "this draft (%s\\snapshot.lock); try "
				    "again when it is done\n", sdir);
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
		/* typed ahead, or the console's answer to a query in the
		 * command's output: not a person's answer */
		else
			(void)FlushConsoleInputBuffer(GetStdHandle(
			    STD_INPUT_HANDLE));
		return f;
	}
	if (!always)
		return NULL;
	/* the console of this process, whatever stdin is */
	h = CreateFileW(L"CONIN$", GENERIC_READ | GENERIC_WRITE,
	    FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	(void)FlushConsoleInputBuffer(h);
	if ((fd = _open_osfhandle((intptr_t)h, _O_RDONLY | _O_TEXT)) == -1) {
		CloseHandle(h);
		return NULL;
	}
	if ((f = _fdopen(fd, "r")) == NULL)
		_close(fd);
	return f;
}

/* A console that interprets escape sequences; one that does not prints
 * them, and nothing the command printed changed its state. */
int
draft_os_is_terminal(FILE *out)
{
	HANDLE	 h = (HANDLE)_get_osfhandle(_fileno(out));
	DWORD	 mode;

	return h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode) &&
	    (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0;
}

int
draft_os_random_hex(char *out, size_t nhex)
{
	uint8_t	 b[16];
	size_t	 i;

	if (nhex % 2 != 0 || nhex > 2 * sizeof(b) || w32_random(b) == -1)
		return -1;
	for (i = 0; i < nhex / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[nhex] = '\0';
	SecureZeroMemory(b, sizeof(b));
	return 0;
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
    unsigned owner_gid, const struct snap_changes *ch, int rolled_back)
{
	/* files written by the user's own process are the user's */
	(void)workspace;
	(void)owner_uid;
	(void)owner_gid;
	(void)ch;
	(void)rolled_back;
}

/* Git for Windows' HOME: %HOME% when set, else %USERPROFILE%; the
 * launcher runs as the workspace's user. */
/* The launcher runs as the user: what it makes is the user's already. */
int
draft_os_own_tree(const char *root, unsigned owner_uid, unsigned owner_gid,
    char *err, size_t errlen)
{
	(void)root;
	(void)owner_uid;
	(void)owner_gid;
	(void)err;
	(void)errlen;
	return 0;
}

int
draft_os_owner_home(unsigned owner_uid, char *out, size_t len)
{
	const char	*home = getenv("HOME");

	(void)owner_uid;
	if (home == NULL || !winrun_path_absolute(home))
		home = getenv("USERPROFILE");
	if (home == NULL || !winrun_path_absolute(home) ||
	    snprintf(out, len, "%s", home) >= (int)len)
		return -1;
	return 1;
}

/* Git for Windows' system file, in its default place, and the one for
 * all users of the machine. */
const char *const *
draft_os_git_system(void)
{
	static char		 pd[DRAFT_PATH_MAX];
	static const char	*sys[3];
	const char		*v = getenv("PROGRAMDATA");
	size_t			 n = 0;

	sys[n++] = "C:/Program Files/Git/etc/gitconfig";
	if (v != NULL && snprintf(pd, sizeof(pd), "%s/Git/config", v) <
	    (int)sizeof(pd))
		sys[n++] = pd;
	sys[n] = NULL;
	return sys;
}

int
draft_os_path_absolute(const char *path)
{
	return winrun_path_absolute(path);
}

long long
draft_os_now_ms(void)
{
	return (long long)GetTickCount64();
}
