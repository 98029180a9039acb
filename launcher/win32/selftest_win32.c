/*
 * aisb-run --self-test: on a real Windows host, checks that the
 * isolation holds (docs/windows.md, "Acceptance on Windows").  It runs a
 * copy of this very program as the child, in a fresh profile and a Job,
 * with a stage of its own; the child (--self-test-child) checks from the
 * inside and reports one line per check:
 *   - its token is an AppContainer token;
 *   - it can write in its stage;
 *   - it cannot open a file of the user outside the stage;
 *   - it cannot connect to a listener on 127.0.0.1 (no network at all);
 * then the parent checks the cleanup: the profile and the stage are gone.
 * Exit 0 when every check passed, 1 otherwise, 77 when it could not run.
 * First it prints the build's identity (the manifest, this runner
 * verified against it, the policy); at the end the result is stored
 * with that identity (selfrec_win32.c), also when it could not run.
 */
#include "config.h"

#include <winsock2.h>
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <userenv.h>

#include "common/exitcode.h"
#include "win32/win32.h"

static int failed;
static struct winrun_selfrec *rec;	/* the parent's record, or NULL */

static void
check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failed = 1;
	if (rec != NULL && winrun_selfrec_add(rec, ok, what) == -1)
		failed = 1;
}

int
w32_self_test_child(int argc, char **argv)
{
	HANDLE tok, h;
	DWORD isac = 0, n;
	wchar_t *w;
	WSADATA wd;
	SOCKET s;
	struct sockaddr_in sin;
	int port;

	if (argc != 2)
		return 2;
	if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok)) {
		GetTokenInformation(tok, TokenIsAppContainer, &isac,
		    sizeof(isac), &n);
		CloseHandle(tok);
	}
	check(isac != 0, "child: my token is an AppContainer token");
	h = CreateFileW(L"selftest-written.txt", GENERIC_WRITE, 0, NULL,
	    CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
	check(h != INVALID_HANDLE_VALUE, "child: I can write in my stage");
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	if ((w = w32_wide(argv[0])) == NULL)
		return 2;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	check(h == INVALID_HANDLE_VALUE && GetLastError() ==
	    ERROR_ACCESS_DENIED, "child: a file of the user outside my stage "
	    "is refused (access denied)");
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(w);
	port = atoi(argv[1]);
	if (WSAStartup(MAKEWORD(2, 2), &wd) == 0) {
		s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((u_short)port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		check(s == INVALID_SOCKET || connect(s, (struct sockaddr *)&sin,
		    sizeof(sin)) == SOCKET_ERROR,
		    "child: a connection to 127.0.0.1 is refused");
		if (s != INVALID_SOCKET)
			closesocket(s);
		WSACleanup();
	}
	return failed;
}

/* The self-test proper; its checks land in rec. */
static int
self_test_run(const struct winrun_opts *lim)
{
	wchar_t tmp[MAX_PATH], exe[MAX_PATH], wself[MAX_PATH];
	char stage[WINRUN_PATH_MAX], outside[WINRUN_PATH_MAX], copy[WINRUN_PATH_MAX];
	char lease[WINRUN_PATH_MAX], result[WINRUN_PATH_MAX], portbuf[16];
	char err[256], *u, *doc = NULL;
	uint8_t rnd[16];
	char id[WINRUN_RUNID_LEN + 1], prof[WINRUN_PROFILE_LEN + 1];
	struct winrun_opts o;
	struct winrun_result r, back;
	char *argv[4];
	WSADATA wd;
	SOCKET ls = INVALID_SOCKET;
	struct sockaddr_in sin;
	int sl = sizeof(sin), rc, n;
	size_t len;
	HANDLE h;
	wchar_t *w;
	PSID sid = NULL;
	char what[WINRUN_SELFREC_TEXT];

	if (w32_appc_available(err, sizeof(err)) == -1) {
		snprintf(what, sizeof(what), "this host has AppContainers (%s)",
		    err);
		check(0, what);
		return EXIT_ENFORCE;
	}
	if (GetTempPathW(MAX_PATH, tmp) == 0 || w32_random(rnd) == -1 ||
	    GetModuleFileNameW(NULL, wself, MAX_PATH) == 0) {
		check(0, "the temporary folder and this program are found");
		return EXIT_ENFORCE;
	}
	winrun_runid_format(rnd, id);
	if ((u = w32_utf8(tmp)) == NULL)
		return EXIT_ENFORCE;
	snprintf(stage, sizeof(stage), "%saisb-selftest-%s", u, id);
	snprintf(outside, sizeof(outside), "%saisb-selftest-%s.outside", u, id);
	snprintf(lease, sizeof(lease), "%saisb-selftest-%s.lease", u, id);
	snprintf(result, sizeof(result), "%saisb-selftest-%s.result", u, id);
	snprintf(copy, sizeof(copy), "%s\\aisb-run-child.exe", stage);
	free(u);

	/* the stage, a copy of this program in it, a file outside */
	if ((w = w32_wide(stage)) == NULL || !CreateDirectoryW(w, NULL)) {
		check(0, "the stage folder is made");
		return EXIT_ENFORCE;
	}
	free(w);
	if ((w = w32_wide(copy)) == NULL || !CopyFileW(wself, w, TRUE)) {
		check(0, "this program is copied into the stage");
		return EXIT_ENFORCE;
	}
	wcscpy(exe, w);
	free(w);
	if ((w = w32_wide(outside)) == NULL)
		return EXIT_ENFORCE;
	h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
	    FILE_ATTRIBUTE_NORMAL, NULL);
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);

	/* a listener the child must not reach */
	if (WSAStartup(MAKEWORD(2, 2), &wd) != 0 ||
	    (ls = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)) == INVALID_SOCKET) {
		check(0, "a socket for the listener");
		return EXIT_ENFORCE;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == SOCKET_ERROR ||
	    listen(ls, 4) == SOCKET_ERROR ||
	    getsockname(ls, (struct sockaddr *)&sin, &sl) == SOCKET_ERROR) {
		check(0, "a listener on 127.0.0.1");
		return EXIT_ENFORCE;
	}
	snprintf(portbuf, sizeof(portbuf), "%u", ntohs(sin.sin_port));

	/* the limits given (the runner's defaults): the policy it tests */
	memset(&o, 0, sizeof(o));
	memcpy(o.run_id, id, sizeof(o.run_id));
	o.lease = lease;
	o.result = result;
	o.stage = stage;
	o.timeout_ms = lim->timeout_ms;
	o.memory = lim->memory;
	o.procs = lim->procs;
	o.cpu_ms = lim->cpu_ms;
	argv[0] = copy;
	argv[1] = "--self-test-child";
	argv[2] = outside;
	argv[3] = portbuf;
	o.argc = 4;
	o.argv = argv;
	(void)exe;
	printf("self-test: run %s, stage %s\n", id, stage);
	fflush(stdout);
	rc = w32_run(&o, &r);
	closesocket(ls);
	WSACleanup();

	check(r.state == WINRUN_EXITED, "the child ran in the sandbox");
	if (r.error[0] != '\0')
		printf("     (%s)\n", r.error);
	check(r.appcontainer == 1, "it ran in an AppContainer");
	check(rc == 0, "every check inside the child passed");
	check(r.profile_cleanup == WINRUN_CLEAN_REMOVED, "the profile was removed");
	check(r.stage_cleanup == WINRUN_CLEAN_REMOVED, "the stage was removed");
	/* the profile is gone when its name can be made again */
	winrun_profile_name(id, prof, sizeof(prof));
	if ((w = w32_wide(prof)) != NULL) {
		HRESULT hr = CreateAppContainerProfile(w, w, L"aisb self-test",
		    NULL, 0, &sid);

		check(SUCCEEDED(hr), "the profile is gone (its name is free)");
		if (SUCCEEDED(hr)) {
			DeleteAppContainerProfile(w);
			FreeSid(sid);
		}
		free(w);
	}
	if ((w = w32_wide(stage)) != NULL) {
		check(GetFileAttributesW(w) == INVALID_FILE_ATTRIBUTES,
		    "the stage folder is gone");
		free(w);
	}
	/* the result file as a caller reads it */
	n = (int)sizeof(err);
	if (w32_read_file(result, WINRUN_DOC_MAX, &doc, &len, err,
	    (size_t)n) == 0) {
		check(winrun_result_decode(doc, len, &back, err,
		    sizeof(err)) == 0 && back.state == r.state,
		    "the result document reads back");
		free(doc);
	} else
		check(0, "the result document exists");
	if ((w = w32_wide(outside)) != NULL) {
		DeleteFileW(w);
		free(w);
	}
	if ((w = w32_wide(lease)) != NULL) {
		DeleteFileW(w);
		free(w);
	}
	if ((w = w32_wide(result)) != NULL) {
		DeleteFileW(w);
		free(w);
	}
	return failed ? 1 : 0;
}

int
w32_self_test(const struct winrun_opts *lim)
{
	wchar_t	 wself[WINRUN_PATH_MAX];
	char	*self;
	DWORD	 n;
	int	 bound = 0, rc;

	if ((rec = calloc(1, sizeof(*rec))) == NULL) {
		printf("self-test: out of memory\n");
		return EXIT_ENFORCE;
	}
	n = GetModuleFileNameW(NULL, wself, sizeof(wself) / sizeof(wself[0]));
	if (n > 0 && n < sizeof(wself) / sizeof(wself[0]) &&
	    (self = w32_utf8(wself)) != NULL) {
		bound = w32_selfrec_begin(rec, self, lim);
		free(self);
	} else
		printf("self-test: cannot tell where aisb-run.exe is\n");
	fflush(stdout);
	rc = self_test_run(lim);
	printf("self-test: %s\n", rc == EXIT_ENFORCE ? "could not run" :
	    failed ? "FAILED" : "passed");
	w32_selfrec_end(rec, bound);
	free(rec);
	rec = NULL;
	return rc;
}
