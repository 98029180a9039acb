/*
 * The runner's identity (docs/windows.md, "Identity"): aisb.exe runs only
 * the aisb-run.exe its build manifest names.  The manifest,
 * aisb-manifest.txt beside aisb.exe, is written by the build
 * (launcher/win32/manifest.sh): one "file NAME SHA256" line per program,
 * with the protocol, architecture and compiler it was built with.
 * aisb-run.exe is opened without write or delete sharing, hashed, and
 * compared; the handle is held until the runner has started, so the file
 * that runs is the file that was checked (no swap in between).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/exitcode.h"
#include "snap/snap.h"
#include "win32/win32.h"
#include "win32/wlaunch.h"

#define MANIFEST_MAX	(64 * 1024)		/* bytes of the manifest */
#define RUNNER_MAX	(256 * 1024 * 1024)	/* bytes of aisb-run.exe */

int
w32_manifest_hash(const char *manifest, const char *name, char *hex, char *err,
    size_t errlen)
{
	char	*text, *line, *next, want[64];
	size_t	 len, wl;
	int	 rc = -1;

	if (w32_read_file(manifest, MANIFEST_MAX, &text, &len, err,
	    errlen) == -1)
		return -1;
	wl = (size_t)snprintf(want, sizeof(want), "file %s ", name);
	for (line = text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line[strcspn(line, "\r")] = '\0';
		if (strncmp(line, want, wl) != 0)
			continue;
		if (strlen(line + wl) == SNAP_SHA256_HEX &&
		    strspn(line + wl, "0123456789abcdef") == SNAP_SHA256_HEX) {
			memcpy(hex, line + wl, SNAP_SHA256_HEX + 1);
			rc = 0;
		}
		break;
	}
	free(text);
	if (rc == -1)
		snprintf(err, errlen, "%s: no valid \"file %s SHA256\" line",
		    manifest, name);
	return rc;
}

/* The SHA-256 of what h reads, into hex: 0, or -1 with err. */
static int
handle_hash(HANDLE h, const char *path, char *hex, char *err, size_t errlen)
{
	LARGE_INTEGER	 size;
	char		*buf, e[128];
	DWORD		 got;
	size_t		 off = 0;
	int		 rc;

	if (!GetFileSizeEx(h, &size) || size.QuadPart > RUNNER_MAX) {
		snprintf(err, errlen, "%s: %s", path, size.QuadPart >
		    RUNNER_MAX ? "larger than a runner may be" :
		    w32_strerror(GetLastError(), e, sizeof(e)));
		return -1;
	}
	if ((buf = malloc((size_t)size.QuadPart + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while (off < (size_t)size.QuadPart) {
		if (!ReadFile(h, buf + off, (DWORD)((size_t)size.QuadPart -
		    off), &got, NULL) || got == 0) {
			snprintf(err, errlen, "%s: %s", path, w32_strerror(
			    GetLastError(), e, sizeof(e)));
			free(buf);
			return -1;
		}
		off += got;
	}
	rc = snap_sha256_hex(buf, off, hex);
	free(buf);
	if (rc == -1)
		snprintf(err, errlen, "%s: cannot hash it", path);
	return rc;
}

int
w32_manifest_path(const char *runner, char *out, size_t len, char *err,
    size_t errlen)
{
	const char	*slash;

	if ((slash = strrchr(runner, '\\')) == NULL ||
	    (size_t)snprintf(out, len, "%.*s\\%s", (int)(slash - runner),
	    runner, WLAUNCH_MANIFEST) >= len) {
		snprintf(err, errlen, "%s: no folder to find %s in", runner,
		    WLAUNCH_MANIFEST);
		return -1;
	}
	return 0;
}

HANDLE
w32_runner_check(const char *runner, char *have, char *err, size_t errlen)
{
	char		 manifest[WINRUN_PATH_MAX], want[SNAP_SHA256_HEX + 1];
	char		 hex[SNAP_SHA256_HEX + 1], e[128];
	wchar_t		*w;
	HANDLE		 h;

	if (w32_manifest_path(runner, manifest, sizeof(manifest), err,
	    errlen) == -1)
		return NULL;
	if (w32_manifest_hash(manifest, "aisb-run.exe", want, err, errlen) == -1)
		return NULL;
	if ((w = w32_wide(runner)) == NULL) {
		snprintf(err, errlen, "%s: not valid UTF-8", runner);
		return NULL;
	}
	/* read sharing only: nobody writes, renames or deletes it now */
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		snprintf(err, errlen, "%s: %s", runner, w32_strerror(
		    GetLastError(), e, sizeof(e)));
		return NULL;
	}
	if (handle_hash(h, runner, hex, err, errlen) == -1) {
		CloseHandle(h);
		return NULL;
	}
	if (have != NULL)
		memcpy(have, hex, sizeof(hex));
	if (strcmp(hex, want) != 0) {
		snprintf(err, errlen, "%s is not the runner this aisb.exe was "
		    "built with: its sha256 is %.16s..., %s says %.16s...; "
		    "install aisb.exe and aisb-run.exe from one build", runner,
		    hex, manifest, want);
		CloseHandle(h);
		return NULL;
	}
	return h;
}

int
w32_identity(const char *runner)
{
	char		 manifest[WINRUN_PATH_MAX], err[1024], *text, *line;
	char		 have[SNAP_SHA256_HEX + 1], *next;
	size_t		 len;
	HANDLE		 h;

	if (w32_manifest_path(runner, manifest, sizeof(manifest), err,
	    sizeof(err)) == 0 && w32_read_file(manifest, MANIFEST_MAX, &text,
	    &len, err, sizeof(err)) == 0) {
		printf("manifest %s\n", manifest);
		for (line = text; line != NULL && *line != '\0'; line = next) {
			if ((next = strchr(line, '\n')) != NULL)
				*next++ = '\0';
			line[strcspn(line, "\r")] = '\0';
			if (line[0] != '#' && line[0] != '\0')
				printf("  %s\n", line);
		}
		free(text);
	}
	if ((h = w32_runner_check(runner, have, err, sizeof(err))) == NULL) {
		printf("runner %s: NOT the manifest's\n", runner);
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	CloseHandle(h);
	printf("runner %s: the manifest's (sha256 %s, verified)\n", runner,
	    have);
	return 0;
}
