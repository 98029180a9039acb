/*
 * The program tests/win/wine.sh runs inside aisb-run's Job, cross-built
 * with it.  One mode per run:
 *   exit N [FILE] exit with N (after writing FILE in the working folder)
 *   sleep MS [FILE]  sleep MS milliseconds, then exit 0 (FILE: as exit)
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
 *   write FILE TEXT...  write the words (one line each) into FILE, made or
 *                 replaced, relative to the working folder; then the next
 *                 FILE TEXT pair, and so on ("-" as TEXT: delete FILE)
 *   ls            print the working folder's tree, one relative name a line
 *   dosdevs       print each DOS drive D: to Z: that is defined and its
 *                 first target ("Y: \??\Z:\..."), one a line
 *   define X: TARGET    DefineDosDevice(DDD_RAW_TARGET_PATH) X: to TARGET
 *                 (a definition the runner did not make); exit 0 or 3
 *   undefine X: TARGET  remove exactly that definition; exit 0 or 3
 *   rootls        print the names in the root of the working folder's
 *                 drive ("\"), one a line: the stage's, when it is mapped
 *   connect HOST:PORT   an HTTP CONNECT through %HTTPS_PROXY%
 *                 (http://[user:secret@]127.0.0.1:PORT, the credential as
 *                 Proxy-Authorization Basic); prints "connect CODE" and,
 *                 when tunnelled, "upstream STATUS-LINE" for a GET / through
 *                 it; exit 0 on 200, else 3
 */
#include <winsock2.h>
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


static void
ls(const char *dir, const char *rel)
{
	WIN32_FIND_DATAA fd;
	char pat[MAX_PATH], sub[MAX_PATH], name[MAX_PATH];
	HANDLE f;

	snprintf(pat, sizeof(pat), "%s\\*", dir);
	if ((f = FindFirstFileA(pat, &fd)) == INVALID_HANDLE_VALUE)
		return;
	do {
		if (strcmp(fd.cFileName, ".") == 0 ||
		    strcmp(fd.cFileName, "..") == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "",
		    fd.cFileName);
		printf("%s\n", name);
		if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
			snprintf(sub, sizeof(sub), "%s\\%s", dir, fd.cFileName);
			ls(sub, name);
		}
	} while (FindNextFileA(f, &fd));
	FindClose(f);
}

static void
b64(const char *in, char *out)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 |
		    (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];

		*out++ = t[v >> 18 & 63];
		*out++ = t[v >> 12 & 63];
		*out++ = t[v >> 6 & 63];
		*out++ = t[v & 63];
	}
	if (n - i == 1) {
		unsigned v = (unsigned char)in[i] << 16;

		*out++ = t[v >> 18 & 63];
		*out++ = t[v >> 12 & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		unsigned v = (unsigned char)in[i] << 16 |
		    (unsigned char)in[i + 1] << 8;

		*out++ = t[v >> 18 & 63];
		*out++ = t[v >> 12 & 63];
		*out++ = t[v >> 6 & 63];
		*out++ = '=';
	}
	*out = '\0';
}

/* one line (without CRLF) from s into buf; 0 on EOF or error */
static int
readline(SOCKET s, char *buf, size_t len)
{
	size_t n = 0;
	char c;

	while (recv(s, &c, 1, 0) == 1) {
		if (c == '\n') {
			if (n > 0 && buf[n - 1] == '\r')
				n--;
			buf[n] = '\0';
			return 1;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = '\0';
	return n > 0;
}

static int
connect_mode(const char *target)
{
	char proxy[512], cred[256], auth[400], req[1024], line[512], *p, *at;
	char host[256];
	struct sockaddr_in sin;
	WSADATA wsa;
	SOCKET s;
	int port, code = 0;
	DWORD n;

	n = GetEnvironmentVariableA("HTTPS_PROXY", proxy, sizeof(proxy));
	if (n == 0 || n >= sizeof(proxy) || strncmp(proxy, "http://", 7) != 0) {
		printf("connect no-proxy\n");
		return 3;
	}
	p = proxy + 7;
	cred[0] = '\0';
	if ((at = strchr(p, '@')) != NULL) {
		snprintf(cred, sizeof(cred), "%.*s", (int)(at - p), p);
		p = at + 1;
	}
	if (sscanf(p, "%255[^:]:%d", host, &port) != 2 ||
	    strcmp(host, "127.0.0.1") != 0) {
		printf("connect bad-proxy\n");
		return 3;
	}
	if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
		return 3;
	s = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(0x7f000001);
	if (s == INVALID_SOCKET ||
	    connect(s, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		printf("connect refused\n");
		return 3;
	}
	auth[0] = '\0';
	if (cred[0] != '\0') {
		char enc[380];

		b64(cred, enc);
		snprintf(auth, sizeof(auth), "Proxy-Authorization: Basic %s\r\n",
		    enc);
	}
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
	    target, target, auth);
	send(s, req, (int)strlen(req), 0);
	if (!readline(s, line, sizeof(line)) ||
	    sscanf(line, "HTTP/1.%*d %d", &code) != 1) {
		printf("connect closed\n");
		return 3;
	}
	printf("connect %d\n", code);
	while (readline(s, line, sizeof(line)) && line[0] != '\0')
		;
	if (code == 200) {
		snprintf(req, sizeof(req), "GET / HTTP/1.0\r\nHost: %s\r\n\r\n",
		    target);
		send(s, req, (int)strlen(req), 0);
		if (readline(s, line, sizeof(line)))
			printf("upstream %s\n", line);
	}
	closesocket(s);
	return code == 200 ? 0 : 3;
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
	if (argc >= 4 && argc % 2 == 0 && strcmp(argv[1], "write") == 0) {
		int i;

		for (i = 2; i + 1 < argc; i += 2) {
			FILE *f;

			if (strcmp(argv[i + 1], "-") == 0) {
				if (!DeleteFileA(argv[i]))
					return 4;
				continue;
			}
			if ((f = fopen(argv[i], "wb")) == NULL)
				return 4;
			fprintf(f, "%s\n", argv[i + 1]);
			if (fclose(f) != 0)
				return 4;
		}
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "dosdevs") == 0) {
		wchar_t name[3] = { 0, L':', 0 }, buf[2048];
		char c;

		for (c = 'D'; c <= 'Z'; c++) {
			name[0] = (wchar_t)c;
			if (QueryDosDeviceW(name, buf, 2048) != 0)
				printf("%c: %ls\n", c, buf);
		}
		return 0;
	}
	if (argc == 4 && (strcmp(argv[1], "define") == 0 ||
	    strcmp(argv[1], "undefine") == 0)) {
		wchar_t name[8], target[2048];
		DWORD flags = DDD_RAW_TARGET_PATH;

		if (argv[1][0] == 'u')
			flags |= DDD_REMOVE_DEFINITION |
			    DDD_EXACT_MATCH_ON_REMOVE;
		if (MultiByteToWideChar(CP_UTF8, 0, argv[2], -1, name, 8) == 0 ||
		    MultiByteToWideChar(CP_UTF8, 0, argv[3], -1, target,
		    2048) == 0 || !DefineDosDeviceW(flags, name, target))
			return 3;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "rootls") == 0) {
		WIN32_FIND_DATAA fd;
		HANDLE f;

		/* the root of the current drive, not a recursive walk */
		if ((f = FindFirstFileA("\\*", &fd)) == INVALID_HANDLE_VALUE)
			return 3;
		do
			printf("%s\n", fd.cFileName);
		while (FindNextFileA(f, &fd));
		FindClose(f);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "ls") == 0) {
		ls(".", "");
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "connect") == 0)
		return connect_mode(argv[2]);
	if ((argc == 3 || argc == 4) && (strcmp(argv[1], "exit") == 0 ||
	    strcmp(argv[1], "sleep") == 0)) {
		if (argc == 4) {
			FILE *f = fopen(argv[3], "wb");

			if (f == NULL || fputs("written\n", f) < 0 ||
			    fclose(f) != 0)
				return 4;
		}
		if (strcmp(argv[1], "exit") == 0)
			return atoi(argv[2]);
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
