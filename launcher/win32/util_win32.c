/*
 * The Win32 helpers aisb-run.exe and aisb.exe share (win32.h): UTF-8 and
 * UTF-16, error texts, whole small files, process start times, random
 * bytes, folders private to the user.
 */
#include "config.h"

#include <windows.h>
#include <bcrypt.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/win32.h"

wchar_t *
w32_wide_n(const char *s, size_t len)
{
	wchar_t *w;
	int n;

	if (len > INT32_MAX / 2)
		return NULL;
	if (len == 0)
		return calloc(1, sizeof(wchar_t));
	n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len,
	    NULL, 0);
	if (n <= 0 || (w = calloc((size_t)n + 1, sizeof(wchar_t))) == NULL)
		return NULL;
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, w,
	    n) != n) {
		free(w);
		return NULL;
	}
	return w;
}

wchar_t *
w32_wide(const char *s)
{
	return w32_wide_n(s, strlen(s));
}

char *
w32_utf8(const wchar_t *w)
{
	char *s;
	int n;

	n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, NULL, 0,
	    NULL, NULL);
	if (n <= 0 || (s = malloc((size_t)n)) == NULL)
		return NULL;
	if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, s, n,
	    NULL, NULL) != n) {
		free(s);
		return NULL;
	}
	return s;
}

const char *
w32_strerror(DWORD code, char *buf, size_t len)
{
	wchar_t msg[256];
	DWORD n;
	char *s;

	n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM |
	    FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, msg,
	    sizeof(msg) / sizeof(msg[0]), NULL);
	while (n > 0 && (msg[n - 1] == L'\r' || msg[n - 1] == L'\n' ||
	    msg[n - 1] == L'.' || msg[n - 1] == L' '))
		msg[--n] = L'\0';
	if (n == 0 || (s = w32_utf8(msg)) == NULL) {
		snprintf(buf, len, "error %lu", (unsigned long)code);
		return buf;
	}
	snprintf(buf, len, "%s (error %lu)", s, (unsigned long)code);
	free(s);
	return buf;
}

int
w32_write_atomic(const char *path, const char *data, size_t len, char *err,
    size_t errlen)
{
	wchar_t *w = NULL, *wt = NULL;
	char tmp[WINRUN_PATH_MAX + 8], e[128];
	HANDLE h = INVALID_HANDLE_VALUE;
	DWORD done;
	int rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((w = w32_wide(path)) == NULL || (wt = w32_wide(tmp)) == NULL) {
		snprintf(err, errlen, "%s: not a valid UTF-8 path", path);
		goto fail;
	}
	h = CreateFileW(wt, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		snprintf(err, errlen, "%s: %s", tmp,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	if (len > MAXDWORD || !WriteFile(h, data, (DWORD)len, &done, NULL) ||
	    done != len || !FlushFileBuffers(h)) {
		snprintf(err, errlen, "%s: %s", tmp,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	CloseHandle(h);
	h = INVALID_HANDLE_VALUE;
	if (!MoveFileExW(wt, w, MOVEFILE_REPLACE_EXISTING |
	    MOVEFILE_WRITE_THROUGH)) {
		snprintf(err, errlen, "%s: %s", path,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	rc = 0;
fail:
	if (h != INVALID_HANDLE_VALUE) {
		CloseHandle(h);
		DeleteFileW(wt);
	}
	free(w);
	free(wt);
	return rc;
}

int
w32_read_file(const char *path, size_t max, char **out, size_t *len,
    char *err, size_t errlen)
{
	HANDLE h = INVALID_HANDLE_VALUE;
	LARGE_INTEGER size;
	wchar_t *w = NULL;
	char *buf = NULL, e[128];
	DWORD got;
	int rc = -1;

	*out = NULL;
	*len = 0;
	if ((w = w32_wide(path)) == NULL) {
		snprintf(err, errlen, "%s: not a valid UTF-8 path", path);
		goto fail;
	}
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE || !GetFileSizeEx(h, &size)) {
		snprintf(err, errlen, "%s: %s", path,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	if (size.QuadPart < 0 || (uint64_t)size.QuadPart > max) {
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		goto fail;
	}
	if ((buf = malloc((size_t)size.QuadPart + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!ReadFile(h, buf, (DWORD)size.QuadPart, &got, NULL) ||
	    got != (DWORD)size.QuadPart) {
		snprintf(err, errlen, "%s: %s", path,
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	buf = NULL;
	rc = 0;
fail:
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(buf);
	free(w);
	return rc;
}

uint64_t
w32_process_start(HANDLE proc)
{
	FILETIME c, x, k, u;

	if (!GetProcessTimes(proc, &c, &x, &k, &u))
		return 0;
	return (uint64_t)c.dwHighDateTime << 32 | c.dwLowDateTime;
}

int
w32_random(uint8_t out[16])
{
	return BCryptGenRandom(NULL, out, 16,
	    BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0 ? 0 : -1;
}

HANDLE
w32_inheritable(DWORD which, HANDLE nul)
{
	HANDLE h = GetStdHandle(which), dup = NULL;

	if (h == NULL || h == INVALID_HANDLE_VALUE)
		h = nul;
	if (!DuplicateHandle(GetCurrentProcess(), h, GetCurrentProcess(), &dup,
	    0, TRUE, DUPLICATE_SAME_ACCESS))
		return NULL;
	return dup;
}

int
w32_private_sd(PSECURITY_DESCRIPTOR *sd, char *err, size_t errlen)
{
	HANDLE tok = NULL;
	BYTE buf[256];
	TOKEN_USER *tu = (TOKEN_USER *)buf;
	DWORD len;
	wchar_t *sid = NULL, sddl[256];
	char e[160];
	int rc = -1;

	*sd = NULL;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok) ||
	    !GetTokenInformation(tok, TokenUser, buf, sizeof(buf), &len) ||
	    !ConvertSidToStringSidW(tu->User.Sid, &sid)) {
		snprintf(err, errlen, "who is the user: %s",
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	_snwprintf(sddl, sizeof(sddl) / sizeof(sddl[0]) - 1,
	    L"D:P(A;OICI;FA;;;%ls)", sid);
	sddl[sizeof(sddl) / sizeof(sddl[0]) - 1] = L'\0';
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl,
	    SDDL_REVISION_1, sd, NULL)) {
		snprintf(err, errlen, "a private DACL: %s",
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	rc = 0;
fail:
	if (sid != NULL)
		LocalFree(sid);
	if (tok != NULL)
		CloseHandle(tok);
	return rc;
}

int
w32_make_folder(const char *path, PSECURITY_DESCRIPTOR sd, int must_be_new,
    char *err, size_t errlen)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), sd, FALSE };
	wchar_t *w;
	DWORD code, attr;
	char e[160];
	int rc = -1;

	if ((w = w32_wide(path)) == NULL) {
		snprintf(err, errlen, "%s: not a valid UTF-8 path", path);
		return -1;
	}
	if (CreateDirectoryW(w, &sa))
		rc = 0;
	else if ((code = GetLastError()) != ERROR_ALREADY_EXISTS || must_be_new)
		snprintf(err, errlen, "%s: %s", path,
		    w32_strerror(code, e, sizeof(e)));
	else if ((attr = GetFileAttributesW(w)) == INVALID_FILE_ATTRIBUTES ||
	    !(attr & FILE_ATTRIBUTE_DIRECTORY) ||
	    (attr & FILE_ATTRIBUTE_REPARSE_POINT))
		snprintf(err, errlen, "%s: not a folder, or a link (junction); "
		    "aisb keeps its sessions only in a real folder", path);
	else
		rc = 0;
	free(w);
	return rc;
}
