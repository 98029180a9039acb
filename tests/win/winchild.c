/*
 * The program tests/win/wine.sh runs inside aisb-run's Job, cross-built
 * with it.  One mode per run:
 *   exit N        exit with N
 *   sleep MS      sleep MS milliseconds, then exit 0
 *   env           print the environment, one NAME=VALUE a line
 *   cat FILE      print FILE (the lease, while the run is on)
 *   spawn N       start N copies of itself sleeping 2 s, print how many
 *                 started ("started K"), exit 0
 *   alloc MIB     commit MIB MiB, print "alloc ok" or "alloc failed"
 *   run PROG ARG...      start PROG (aisb-run) and return its exit code:
 *                 under wine a program started from the shell has no
 *                 Windows parent, and aisb-run refuses to run without one
 *   orphan LEASE PROG ARG...  start PROG, wait until the file LEASE exists
 *                 (the run is on), exit 0: aisb-run's parent dies
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PROG ARG... as one command line; the tests' words have no quotes */
static HANDLE
launch(int argc, char **argv)
{
	char cmd[8192];
	size_t n = 0;
	int i;
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;

	cmd[0] = '\0';
	for (i = 0; i < argc; i++) {
		int q = strchr(argv[i], ' ') != NULL || argv[i][0] == '\0';

		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s%s%s%s",
		    i ? " " : "", q ? "\"" : "", argv[i], q ? "\"" : "");
		if (n >= sizeof(cmd))
			return NULL;
	}
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi))
		return NULL;
	CloseHandle(pi.hThread);
	return pi.hProcess;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "run") == 0) {
		HANDLE h = launch(argc - 2, argv + 2);
		DWORD code = 255;

		if (h == NULL) {
			fprintf(stderr, "winchild: cannot start %s\n", argv[2]);
			return 255;
		}
		WaitForSingleObject(h, INFINITE);
		GetExitCodeProcess(h, &code);
		return (int)code;
	}
	if (argc >= 4 && strcmp(argv[1], "orphan") == 0) {
		HANDLE h = launch(argc - 3, argv + 3);
		int i;

		if (h == NULL)
			return 255;
		/* bounded: 60 s for the runner to write its lease */
		for (i = 0; i < 600; i++) {
			if (GetFileAttributesA(argv[2]) != INVALID_FILE_ATTRIBUTES)
				return 0;
			if (WaitForSingleObject(h, 100) == WAIT_OBJECT_0)
				return 254;
		}
		return 253;
	}
	if (argc == 3 && strcmp(argv[1], "exit") == 0)
		return atoi(argv[2]);
	if (argc == 3 && strcmp(argv[1], "sleep") == 0) {
		Sleep((DWORD)atoi(argv[2]));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "env") == 0) {
		char *e = GetEnvironmentStringsA(), *p;

		for (p = e; *p != '\0'; p += strlen(p) + 1)
			printf("%s\n", p);
		FreeEnvironmentStringsA(e);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "cat") == 0) {
		FILE *f = fopen(argv[2], "rb");
		char buf[4096];
		size_t n;

		if (f == NULL) {
			printf("cannot open %s\n", argv[2]);
			return 3;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		fclose(f);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "spawn") == 0) {
		int i, n = atoi(argv[2]), started = 0;
		char self[MAX_PATH], cmd[MAX_PATH + 32];
		HANDLE kids[64];

		GetModuleFileNameA(NULL, self, sizeof(self));
		snprintf(cmd, sizeof(cmd), "\"%s\" sleep 2000", self);
		for (i = 0; i < n && i < 64; i++) {
			STARTUPINFOA si;
			PROCESS_INFORMATION pi;

			memset(&si, 0, sizeof(si));
			si.cb = sizeof(si);
			if (CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL,
			    NULL, &si, &pi)) {
				kids[started++] = pi.hProcess;
				CloseHandle(pi.hThread);
			}
		}
		printf("started %d\n", started);
		fflush(stdout);
		for (i = 0; i < started; i++)
			CloseHandle(kids[i]);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "alloc") == 0) {
		SIZE_T n = (SIZE_T)atoi(argv[2]) * 1024 * 1024;
		void *p = VirtualAlloc(NULL, n, MEM_COMMIT | MEM_RESERVE,
		    PAGE_READWRITE);

		printf("alloc %s\n", p != NULL ? "ok" : "failed");
		return 0;
	}
	fprintf(stderr, "winchild: bad mode\n");
	return 2;
}
