/*
 * The self-test's result, kept with the identity it was made with
 * (docs/windows.md, "Self-test results"): aisb-run --self-test stores
 * it, aisb doctor shows it while aisb-run.exe, aisb.exe (the build
 * manifest's hashes, the runner verified against them) and the policy
 * (winrun_selftest_policy's text, hashed) are still the ones it names.
 *
 * The record is %LOCALAPPDATA%\aisb\selftest.txt, not a file beside the
 * programs: an installed folder (Program Files) is not the user's to
 * write, and a result says what this user's token could and could not
 * do, nothing of another user's.  One record per user: a second install
 * (another build) sees it as stale and says which hash differs.
 * Written through a temporary file and a replacing rename; read at most
 * WINRUN_SELFREC_MAX bytes; a record that does not parse is ignored
 * with a note, never trusted (selfrec.c).
 */
#include "config.h"

#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap/snap.h"
#include "win32/win32.h"

/* %LOCALAPPDATA%\aisb (folder) or its WINRUN_SELFREC_FILE: 0 or -1. */
static int
rec_path(int folder, char *out, size_t len, char *err, size_t errlen)
{
	wchar_t	 lad[WINRUN_PATH_MAX];
	char	*u;
	DWORD	 n;
	int	 r;

	n = GetEnvironmentVariableW(L"LOCALAPPDATA", lad,
	    sizeof(lad) / sizeof(lad[0]));
	if (n == 0 || n >= sizeof(lad) / sizeof(lad[0]) ||
	    (u = w32_utf8(lad)) == NULL) {
		snprintf(err, errlen, "LOCALAPPDATA is not set: the self-test "
		    "keeps its result in %%LOCALAPPDATA%%\\%s",
		    WINRUN_SELFREC_FILE);
		return -1;
	}
	if (folder)
		r = snprintf(out, len, "%s\\aisb", u);
	else
		r = snprintf(out, len, "%s\\%s", u, WINRUN_SELFREC_FILE);
	free(u);
	if (r < 0 || (size_t)r >= len) {
		snprintf(err, errlen, "LOCALAPPDATA is too long");
		return -1;
	}
	return 0;
}

/* Whether path names something (a record to read, or a missing one). */
static int
exists(const char *path)
{
	wchar_t	*w;
	DWORD	 attr;

	if ((w = w32_wide(path)) == NULL)
		return 1;	/* then read, and refused */
	attr = GetFileAttributesW(w);
	free(w);
	return attr != INVALID_FILE_ATTRIBUTES ||
	    GetLastError() != ERROR_FILE_NOT_FOUND;
}

/* The policy's text and SHA-256 for o: 0 or -1. */
static int
policy_of(const struct winrun_opts *o, char *text, size_t len,
    char hex[WINRUN_SHA_HEX + 1])
{
	if (winrun_selftest_policy(o, text, len) == -1)
		return -1;
	return snap_sha256_hex(text, strlen(text), hex);
}

int
w32_selfrec_begin(struct winrun_selfrec *r, const char *runner,
    const struct winrun_opts *o)
{
	char		 manifest[WINRUN_PATH_MAX], err[512];
	SYSTEMTIME	 t;

	memset(r, 0, sizeof(*r));
	GetSystemTime(&t);
	snprintf(r->time, sizeof(r->time), "%04u-%02u-%02uT%02u:%02u:%02uZ",
	    t.wYear % 10000u, t.wMonth % 100u, t.wDay % 100u,
	    t.wHour % 100u, t.wMinute % 100u, t.wSecond % 100u);
	if (policy_of(o, r->policy_text, sizeof(r->policy_text),
	    r->policy) == -1) {
		printf("self-test: the policy's text does not fit\n");
		return 0;
	}
	printf("policy sha256 %s (%s)\n", r->policy, r->policy_text);
	/* the manifest and the runner verified against it, as doctor says */
	if (w32_identity(runner) != 0)
		return 0;
	if (w32_manifest_path(runner, manifest, sizeof(manifest), err,
	    sizeof(err)) == -1 || w32_manifest_hash(manifest, "aisb-run.exe",
	    r->runner, err, sizeof(err)) == -1 || w32_manifest_hash(manifest,
	    "aisb.exe", r->launcher, err, sizeof(err)) == -1) {
		printf("self-test: %s\n", err);
		return 0;
	}
	return 1;
}

void
w32_selfrec_end(const struct winrun_selfrec *r, int bound)
{
	PSECURITY_DESCRIPTOR	 sd = NULL;
	char			 dir[WINRUN_PATH_MAX], path[WINRUN_PATH_MAX];
	char			 err[512], *buf;
	int			 n;

	if (!bound) {
		printf("self-test: result not stored: this aisb-run.exe is "
		    "not the one its build manifest names\n");
		return;
	}
	if ((buf = malloc(WINRUN_SELFREC_MAX)) == NULL) {
		printf("self-test: result not stored: out of memory\n");
		return;
	}
	if ((n = winrun_selfrec_format(r, buf, WINRUN_SELFREC_MAX)) == -1)
		snprintf(err, sizeof(err), "it does not fit %d bytes",
		    WINRUN_SELFREC_MAX);
	if (n == -1 || rec_path(1, dir, sizeof(dir), err, sizeof(err)) ==
	    -1 || rec_path(0, path, sizeof(path), err, sizeof(err)) == -1 ||
	    w32_private_sd(&sd, err, sizeof(err)) == -1 ||
	    w32_make_folder(dir, sd, 0, err, sizeof(err)) == -1 ||
	    w32_write_atomic(path, buf, (size_t)n, err, sizeof(err)) == -1)
		printf("self-test: result not stored: %s\n", err);
	else
		printf("self-test: result stored in %s\n", path);
	if (sd != NULL)
		LocalFree(sd);
	free(buf);
}

void
w32_selfrec_show(const char *runner)
{
	struct winrun_selfrec	*r;
	struct winrun_opts	 o;
	char			 path[WINRUN_PATH_MAX], manifest[WINRUN_PATH_MAX];
	char			 err[512], why[512], text[WINRUN_SELFREC_TEXT];
	char			 run[WINRUN_SHA_HEX + 1], lau[WINRUN_SHA_HEX + 1];
	char			 pol[WINRUN_SHA_HEX + 1], *doc = NULL;
	char *const		 argv[] = { "aisb-run", "--self-test", NULL };
	size_t			 len, i;

	if (rec_path(0, path, sizeof(path), err, sizeof(err)) == -1) {
		printf("self-test: %s\n", err);
		return;
	}
	if ((r = malloc(sizeof(*r))) == NULL)
		return;
	/* the policy sessions run with: the runner's own defaults */
	if (winrun_opts_parse(&o, 2, argv, NULL, err, sizeof(err)) == -1 ||
	    policy_of(&o, text, sizeof(text), pol) == -1 ||
	    w32_manifest_path(runner, manifest, sizeof(manifest), err,
	    sizeof(err)) == -1 || w32_manifest_hash(manifest, "aisb-run.exe",
	    run, err, sizeof(err)) == -1 || w32_manifest_hash(manifest,
	    "aisb.exe", lau, err, sizeof(err)) == -1)
		printf("self-test: no identity to compare a result with: %s\n",
		    err);
	else if (!exists(path))
		printf("self-test: none stored (%s); run %s --self-test\n",
		    path, runner);
	else if (w32_read_file(path, WINRUN_SELFREC_MAX, &doc, &len, err,
	    sizeof(err)) == -1 || winrun_selfrec_parse(doc, len, r, err,
	    sizeof(err)) == -1)
		printf("self-test: %s ignored, not trusted (%s); run %s "
		    "--self-test\n", path, err, runner);
	else if (winrun_selfrec_stale(r, run, lau, pol, why,
	    sizeof(why)) == -1)
		printf("self-test: the stored result is stale, ignored: %s; "
		    "run %s --self-test\n", why, runner);
	else {
		printf("self-test: %s on %s, with this build and policy "
		    "(%s)\n", r->failed ? "FAILED" : "passed", r->time, path);
		for (i = 0; i < r->nchecks; i++)
			printf("  %-4s %s\n", r->checks[i].ok ? "ok" : "FAIL",
			    r->checks[i].what);
	}
	free(doc);
	free(r);
}
