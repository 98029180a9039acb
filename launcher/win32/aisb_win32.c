/*
 * aisb.exe, the Windows launcher (docs/windows.md, "aisb on Windows").
 * Every session is a snapshot session: the workspace is staged into the
 * session folder by the draft code (launcher/draft.c), aisb-run.exe runs
 * the command on the stage (--keep-stage), and the change set is shown,
 * asked about and applied at the end.  The AppContainer sees the stage
 * only; the workspace's ACL is never changed.
 *
 * This file is the Win32 side only: folders and their DACL, the runner's
 * process, its control pipe, the console's signals.  What is decided
 * (options, paths, the runner's argv, the exit code, the record) is
 * launcher/win32/wlaunch.c, unit-tested on Linux.
 *
 * Exit codes: the command's (0 after the changes were kept or applied);
 * 124 timeout or CPU limit, 130 cancelled; 77 the sandbox could not be
 * set up (nothing ran, nothing proposed); 64 a bad command line; 78 a
 * bad option value, workspace or credential file; 65/74 from an apply.
 */
#include "config.h"

#include <windows.h>
#include <sddl.h>
#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/exitcode.h"
#include "draft/draft.h"
#include "win32/win32.h"
#include "win32/wlaunch.h"

/* The runner's control pipe, for the console handler. */
static HANDLE ctl_write = NULL;
static HANDLE ctl_runner = NULL;

/*
 * Ctrl+C, Ctrl+Break, the console closing: the runner is told "cancel"
 * (it kills the job and writes its result; the draft proposes nothing).
 * The console's close gives a handler a few seconds: wait for the runner
 * in them, so that its result is written before Windows ends us.
 */
static BOOL WINAPI
ctrl_handler(DWORD type)
{
	static const char line[] = "cancel\n";
	DWORD done;
	HANDLE w = ctl_write;

	if (w != NULL)
		WriteFile(w, line, sizeof(line) - 1, &done, NULL);
	if ((type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT ||
	    type == CTRL_SHUTDOWN_EVENT) && ctl_runner != NULL)
		WaitForSingleObject(ctl_runner, 4000);
	return TRUE;
}

/* ---- the runner ----------------------------------------------------- */

/* aisb-run.exe in aisb.exe's own folder: never looked up in PATH. */
static int
runner_path(char *out, size_t len, char *err, size_t errlen)
{
	wchar_t self[MAX_PATH * 2], *slash;
	char *s;
	DWORD n;
	int r;

	n = GetModuleFileNameW(NULL, self, sizeof(self) / sizeof(self[0]));
	if (n == 0 || n >= sizeof(self) / sizeof(self[0]) - 16) {
		snprintf(err, errlen, "cannot tell where aisb.exe is");
		return -1;
	}
	if ((slash = wcsrchr(self, L'\\')) == NULL) {
		snprintf(err, errlen, "cannot tell where aisb.exe is");
		return -1;
	}
	wcscpy(slash + 1, L"aisb-run.exe");
	if ((s = w32_utf8(self)) == NULL) {
		snprintf(err, errlen, "aisb.exe's folder is not valid UTF-16");
		return -1;
	}
	r = snprintf(out, len, "%s", s);
	free(s);
	if (r < 0 || (size_t)r >= len) {
		snprintf(err, errlen, "aisb.exe's folder's path is too long");
		return -1;
	}
	if (GetFileAttributesW(self) == INVALID_FILE_ATTRIBUTES) {
		snprintf(err, errlen, "%s: not found; aisb-run.exe must be "
		    "in the folder of aisb.exe", out);
		return -1;
	}
	return 0;
}

/*
 * Starts argv[0] (an absolute path: no search) with argv, stdin in, and
 * aisb's stdout and stderr, inheriting those three handles only.  The
 * process handle, or NULL with err.
 */
static HANDLE
spawn(int argc, char **argv, HANDLE in, char *err, size_t errlen)
{
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
	HANDLE nul = INVALID_HANDLE_VALUE, hin = NULL, hout = NULL, herr = NULL;
	HANDLE hl[3], proc = NULL;
	uintptr_t list[3];
	SIZE_T asz = 0;
	wchar_t *wapp = NULL, *wcmd = NULL;
	char *cmd = NULL, e[160];
	size_t nh, i;

	if (winrun_cmdline(argc, argv, &cmd, err, errlen) == -1)
		goto fail;
	if ((wapp = w32_wide(argv[0])) == NULL || (wcmd = w32_wide(cmd)) == NULL) {
		snprintf(err, errlen, "the command is not valid UTF-8");
		goto fail;
	}
	nul = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE,
	    FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
	if (nul == INVALID_HANDLE_VALUE ||
	    !DuplicateHandle(GetCurrentProcess(), in != NULL ? in : nul,
	    GetCurrentProcess(), &hin, 0, TRUE, DUPLICATE_SAME_ACCESS) ||
	    (hout = w32_inheritable(STD_OUTPUT_HANDLE, nul)) == NULL ||
	    (herr = w32_inheritable(STD_ERROR_HANDLE, nul)) == NULL) {
		snprintf(err, errlen, "standard handles: %s",
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	nh = winrun_handle_list((uintptr_t)hin, (uintptr_t)hout,
	    (uintptr_t)herr, (uintptr_t)INVALID_HANDLE_VALUE, list);
	for (i = 0; i < nh; i++)
		hl[i] = (HANDLE)list[i];
	InitializeProcThreadAttributeList(NULL, 1, 0, &asz);
	if ((attrs = malloc(asz)) == NULL ||
	    !InitializeProcThreadAttributeList(attrs, 1, 0, &asz)) {
		free(attrs);
		attrs = NULL;
		snprintf(err, errlen, "attribute list");
		goto fail;
	}
	if (!UpdateProcThreadAttribute(attrs, 0,
	    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, hl, nh * sizeof(HANDLE), NULL,
	    NULL)) {
		snprintf(err, errlen, "the handle list: %s",
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = hin;
	si.StartupInfo.hStdOutput = hout;
	si.StartupInfo.hStdError = herr;
	si.lpAttributeList = attrs;
	if (!CreateProcessW(wapp, wcmd, NULL, NULL, TRUE,
	    EXTENDED_STARTUPINFO_PRESENT, NULL, NULL, &si.StartupInfo, &pi)) {
		snprintf(err, errlen, "starting %s: %s", argv[0],
		    w32_strerror(GetLastError(), e, sizeof(e)));
		goto fail;
	}
	CloseHandle(pi.hThread);
	proc = pi.hProcess;
fail:
	if (attrs != NULL) {
		DeleteProcThreadAttributeList(attrs);
		free(attrs);
	}
	if (hin != NULL)
		CloseHandle(hin);
	if (hout != NULL)
		CloseHandle(hout);
	if (herr != NULL)
		CloseHandle(herr);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	free(cmd);
	free(wapp);
	free(wcmd);
	return proc;
}

static void
remove_file(const char *path)
{
	wchar_t *w = w32_wide(path);

	if (w != NULL)
		DeleteFileW(w);
	free(w);
}

/* sdir "\\" name into out. */
static int
join(char *out, size_t len, const char *sdir, const char *name)
{
	int n = snprintf(out, len, "%s\\%s", sdir, name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * The workspace as an absolute path (GetFullPathNameW), which must be a
 * folder and not a reparse point: the stage is a copy of a real folder.
 */
static int
workspace_path(const char *given, char *out, size_t len, char *err,
    size_t errlen)
{
	wchar_t *w = NULL, full[DRAFT_PATH_MAX];
	DWORD n, attr;
	char *s = NULL;
	int rc = -1;

	if ((w = w32_wide(given)) == NULL) {
		snprintf(err, errlen, "--workspace: not valid UTF-8");
		goto fail;
	}
	n = GetFullPathNameW(w, sizeof(full) / sizeof(full[0]), full, NULL);
	if (n == 0 || n >= sizeof(full) / sizeof(full[0])) {
		snprintf(err, errlen, "workspace %s: no such path, or too long",
		    given);
		goto fail;
	}
	/* no trailing separator, except a drive's root */
	while (n > 3 && (full[n - 1] == L'\\' || full[n - 1] == L'/'))
		full[--n] = L'\0';
	attr = GetFileAttributesW(full);
	if (attr == INVALID_FILE_ATTRIBUTES || !(attr &
	    FILE_ATTRIBUTE_DIRECTORY)) {
		snprintf(err, errlen, "workspace %s: not a folder (give "
		    "--workspace DIR, or run aisb in the folder)", given);
		goto fail;
	}
	if (attr & FILE_ATTRIBUTE_REPARSE_POINT) {
		snprintf(err, errlen, "workspace %s: a junction or symbolic "
		    "link; give the folder it points to", given);
		goto fail;
	}
	if ((s = w32_utf8(full)) == NULL || strlen(s) >= len ||
	    strpbrk(s, "\r\n") != NULL) {
		snprintf(err, errlen, "workspace %s: its path is too long or "
		    "holds a line break", given);
		goto fail;
	}
	memcpy(out, s, strlen(s) + 1);
	rc = 0;
fail:
	free(s);
	free(w);
	return rc;
}

/* Whether sdir\name exists. */
static int
exists_in(const char *sdir, const char *name)
{
	char path[WINRUN_PATH_MAX];
	wchar_t *w;
	DWORD attr;

	if (join(path, sizeof(path), sdir, name) == -1 ||
	    (w = w32_wide(path)) == NULL)
		return 0;
	attr = GetFileAttributesW(w);
	free(w);
	return attr != INVALID_FILE_ATTRIBUTES;
}

/*
 * Waits until the runner has read its env file, which it does before it
 * writes its lease: then the file with the credential can go, so that it
 * does not outlive a killed aisb.  0 once the lease exists; -1 when the
 * runner ended first (the caller removes the file then).  Woken by a
 * change notification on sdir, else every 100 ms.
 */
static int
wait_env_read(HANDLE proc, const char *sdir)
{
	HANDLE h[2];
	wchar_t *w;
	DWORD n = 1, r;

	if ((w = w32_wide(sdir)) == NULL)
		return -1;
	h[0] = proc;
	h[1] = FindFirstChangeNotificationW(w, FALSE,
	    FILE_NOTIFY_CHANGE_FILE_NAME);
	free(w);
	if (h[1] != INVALID_HANDLE_VALUE)
		n = 2;
	for (;;) {
		if (exists_in(sdir, "lease.json"))
			break;
		r = WaitForMultipleObjects(n, h, FALSE, 100);
		if (r == WAIT_OBJECT_0 || r == WAIT_FAILED) {
			if (n == 2)
				FindCloseChangeNotification(h[1]);
			return -1;
		}
		if (r == WAIT_OBJECT_0 + 1 &&
		    !FindNextChangeNotification(h[1])) {
			FindCloseChangeNotification(h[1]);
			n = 1;
		}
	}
	if (n == 2)
		FindCloseChangeNotification(h[1]);
	return 0;
}

/* ---- a session ------------------------------------------------------ */

/*
 * %LOCALAPPDATA%\aisb, \sessions and the session's own folder \<id>
 * (new), the user's only, into sdir; *sd is its security descriptor
 * (the caller frees it with LocalFree).  0, or -1 with err.
 */
static int
session_folder(const char *root, const char *id, char *sdir, size_t len,
    PSECURITY_DESCRIPTOR *sd, char *err, size_t errlen)
{
	char	parent[WINRUN_PATH_MAX], path[WINRUN_PATH_MAX];
	int	n;

	if (w32_private_sd(sd, err, errlen) == -1)
		return -1;
	n = snprintf(parent, sizeof(parent), "%s", root);
	if (n > 0 && (n = (int)(strrchr(parent, '\\') - parent)) > 0)
		parent[n] = '\0';
	if (w32_make_folder(parent, *sd, 0, err, errlen) == -1 ||
	    w32_make_folder(root, *sd, 0, err, errlen) == -1 ||
	    join(path, sizeof(path), root, id) == -1 ||
	    w32_make_folder(path, *sd, 1, err, errlen) == -1)
		return -1;
	if (strlen(path) >= len) {
		snprintf(err, errlen, "the session folder's path is too long");
		return -1;
	}
	memcpy(sdir, path, strlen(path) + 1);
	return 0;
}

/*
 * The runner's result for run_id (SESSION\result.json) into res, or NULL
 * with a line saying that nothing is proposed.
 */
static struct winrun_result *
read_result(const char *sdir, const char *run_id, DWORD code,
    struct winrun_result *res)
{
	char	path[WINRUN_PATH_MAX], e2[256] = "", *doc = NULL;
	size_t	len;
	int	ok;

	ok = join(path, sizeof(path), sdir, "result.json") == 0 &&
	    w32_read_file(path, WINRUN_DOC_MAX, &doc, &len, e2,
	    sizeof(e2)) == 0 &&
	    winrun_result_decode(doc, len, res, e2, sizeof(e2)) == 0 &&
	    strcmp(res->run_id, run_id) == 0;
	free(doc);
	if (ok)
		return res;
	fprintf(stderr, "aisb: the runner (exit %lu) left no result (%s): "
	    "nothing is proposed\n", (unsigned long)code, e2);
	return NULL;
}

/* The session's record (SESSION\record), or a line saying why not. */
static void
write_record(const char *sdir, const struct wlaunch_record *rec)
{
	char	path[WINRUN_PATH_MAX], err[512], *buf;
	int	n;

	if ((buf = malloc(WLAUNCH_RECORD_MAX)) == NULL ||
	    join(path, sizeof(path), sdir, "record") == -1) {
		free(buf);
		return;
	}
	if ((n = wlaunch_record_format(rec, buf, WLAUNCH_RECORD_MAX)) == -1 ||
	    w32_write_atomic(path, buf, (size_t)n, err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: the session record: %s\n",
		    n == -1 ? "too long" : err);
	free(buf);
}

/*
 * The proxy URL with the credential (cred, "" for none): in a file of
 * the private session folder (its DACL is inherited), never in argv.
 * *have_env once the file may exist.  0, or -1 with err.
 */
static int
gate_env_file(const struct wlaunch_opts *o, const char *sdir,
    const char *cred, char *envfile, size_t len, int *have_env, char *err,
    size_t errlen)
{
	char	gate[512];
	int	n, rc;

	if (join(envfile, len, sdir, "gate.env") == -1 ||
	    (n = winrun_gate_env(o->gate_port, cred[0] ? cred : NULL, gate,
	    sizeof(gate))) == -1) {
		snprintf(err, errlen, "the gate's variables do not fit");
		return -1;
	}
	*have_env = 1;
	rc = w32_write_atomic(envfile, gate, (size_t)n, err, errlen);
	SecureZeroMemory(gate, sizeof(gate));
	return rc == -1 ? -1 : 0;
}

/*
 * The runner started with a pipe only aisb writes ("cancel") as its
 * stdin, and waited for; the gate's env file (*have_env) removed as soon
 * as the runner read it.  *proc and *wr are the caller's to close, after
 * the console handler is gone.  0, or -1 with err.
 */
static int
run_runner(int argc, char **argv, const char *sdir, const char *envfile,
    int *have_env, HANDLE *proc, HANDLE *wr, DWORD *code, char *err,
    size_t errlen)
{
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	HANDLE rd = NULL;
	char e2[256];

	if (!CreatePipe(&rd, wr, &sa, 0) ||
	    !SetHandleInformation(*wr, HANDLE_FLAG_INHERIT, 0)) {
		snprintf(err, errlen, "a pipe: %s",
		    w32_strerror(GetLastError(), e2, sizeof(e2)));
		if (rd != NULL)
			CloseHandle(rd);
		return -1;
	}
	ctl_write = *wr;
	SetConsoleCtrlHandler(ctrl_handler, TRUE);
	*proc = spawn(argc, argv, rd, err, errlen);
	CloseHandle(rd);
	if (*proc == NULL)
		return -1;
	ctl_runner = *proc;
	if (*have_env && wait_env_read(*proc, sdir) == 0) {
		remove_file(envfile);
		*have_env = 0;
	}
	WaitForSingleObject(*proc, INFINITE);
	GetExitCodeProcess(*proc, code);
	ctl_runner = NULL;
	return 0;
}

static int
run_session(const struct wlaunch_opts *o, const char *root)
{
	struct draft_info info;
	struct draft_conf conf;
	struct winrun_result res, *r = NULL;
	struct wlaunch_record rec;
	PSECURITY_DESCRIPTOR sd = NULL;
	HANDLE proc = NULL, wr = NULL, held = NULL;
	char workspace[DRAFT_PATH_MAX], sdir[WINRUN_PATH_MAX];
	char runner[WINRUN_PATH_MAX], envfile[WINRUN_PATH_MAX];
	char path[WINRUN_PATH_MAX];
	char run_id[WINRUN_RUNID_LEN + 1], id[WLAUNCH_ID_HEX + 1];
	char cred[WLAUNCH_CRED_USER_MAX + WLAUNCH_CRED_SECRET_MAX + 2];
	char user[WLAUNCH_CRED_USER_MAX + 1], line[64];
	char err[2048], e2[256], *text = NULL, *cmdline = NULL;
	char **argv = NULL;
	size_t len;
	uint8_t rnd[16];
	DWORD code = 0;
	int argc, n, rc = EXIT_ENFORCE, have_env = 0, staged = 0;

	memset(&info, 0, sizeof(info));
	cred[0] = user[0] = '\0';
	envfile[0] = sdir[0] = run_id[0] = id[0] = e2[0] = '\0';

	if (workspace_path(o->workspace != NULL ? o->workspace : ".",
	    workspace, sizeof(workspace), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}
	if (o->cred_file != NULL) {
		/* the file's content never appears in a message */
		if (w32_read_file(o->cred_file, WLAUNCH_CRED_FILE_MAX, &text,
		    &len, e2, sizeof(e2)) == -1 ||
		    wlaunch_cred_parse(text, len, cred, sizeof(cred), user, e2,
		    sizeof(e2)) == -1) {
			fprintf(stderr, "aisb: --gate-credential-file %s: %s\n",
			    o->cred_file, e2);
			rc = EXIT_CONFIG;
			goto out;
		}
	}
	/* the runner this build made, held unchanged until it runs */
	if (runner_path(runner, sizeof(runner), err, sizeof(err)) == -1 ||
	    (held = w32_runner_check(runner, NULL, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "aisb: %s\n", err);
		goto out;
	}
	if (w32_random(rnd) == -1) {
		fprintf(stderr, "aisb: no random session id (BCryptGenRandom)\n");
		goto out;
	}
	winrun_runid_format(rnd, run_id);
	memcpy(id, run_id, WLAUNCH_ID_HEX);
	id[WLAUNCH_ID_HEX] = '\0';

	if (session_folder(root, id, sdir, sizeof(sdir), &sd, err,
	    sizeof(err)) == -1)
		goto fail_msg;
	if (!o->quiet)
		fprintf(stderr, "aisb: session %s (%s)\n", id, sdir);

	/* how aisb recover and discard tell whether this session still runs */
	if (join(path, sizeof(path), sdir, "launcher") == -1 ||
	    (n = wlaunch_launcher_format((uint32_t)GetCurrentProcessId(),
	    w32_process_start(GetCurrentProcess()), line, sizeof(line))) == -1 ||
	    w32_write_atomic(path, line, (size_t)n, err, sizeof(err)) == -1)
		goto fail_msg;

	draft_conf_default(&conf);
	conf.exclude = o->exclude;
	conf.nexclude = o->nexclude;
	if ((rc = draft_stage(sdir, workspace, &conf, 0, 0,
	    NULL, NULL, o->quiet, &info, err, sizeof(err))) != 0) {
		fprintf(stderr, "aisb: %s\n", err);
		goto record;
	}
	staged = 1;
	rc = EXIT_ENFORCE;

	if (o->gate_port != 0 && gate_env_file(o, sdir, cred, envfile,
	    sizeof(envfile), &have_env, err, sizeof(err)) == -1)
		goto fail_msg;
	SecureZeroMemory(cred, sizeof(cred));

	if (wlaunch_runner_argv(o, runner, sdir, run_id,
	    have_env ? envfile : NULL, &argv, &argc, err, sizeof(err)) == -1)
		goto fail_msg;
	/* the record keeps the command as the runner gets it */
	if (winrun_cmdline(o->argc, o->argv, &cmdline, e2, sizeof(e2)) == -1)
		cmdline = NULL;

	if (run_runner(argc, argv, sdir, envfile, &have_env, &proc, &wr,
	    &code, err, sizeof(err)) == -1)
		goto fail_msg;

	if (have_env) {
		remove_file(envfile);
		have_env = 0;
	}
	r = read_result(sdir, run_id, code, &res);
	/* nothing left for aisb clean once the runner cleaned up itself */
	if (r != NULL && r->profile_cleanup != WINRUN_CLEAN_FAILED &&
	    join(path, sizeof(path), sdir, "lease.json") == 0)
		remove_file(path);
	rc = draft_end(sdir, id, wlaunch_code(r), o->apply, o->quiet, &info);
	goto record;

fail_msg:
	fprintf(stderr, "aisb: %s\n", err);
	if (staged)
		rc = draft_end(sdir, id, EXIT_ENFORCE, o->apply, o->quiet,
		    &info);
record:
	if (sdir[0] != '\0') {
		memset(&rec, 0, sizeof(rec));
		rec.id = id;
		rec.run_id = run_id;
		rec.workspace = workspace;
		rec.cmdline = cmdline;
		rec.gate_port = o->gate_port;
		rec.gate_user = user;
		rec.result = r;
		rec.draft = &info;
		rec.code = rc;
		write_record(sdir, &rec);
	}
out:
	SetConsoleCtrlHandler(ctrl_handler, FALSE);
	ctl_write = NULL;
	if (have_env)
		remove_file(envfile);
	if (text != NULL) {
		SecureZeroMemory(text, strlen(text));
		free(text);
	}
	SecureZeroMemory(cred, sizeof(cred));
	if (proc != NULL)
		CloseHandle(proc);
	if (wr != NULL)
		CloseHandle(wr);
	if (held != NULL)
		CloseHandle(held);
	if (sd != NULL)
		LocalFree(sd);
	wlaunch_argv_free(argv);
	free(cmdline);
	return rc;
}

/* ---- aisb clean ----------------------------------------------------- */

/* aisb-run --clean LEASE --stage-root ROOT: 0 done or skipped, else 1. */
static int
clean_lease(char *runner, char *lease, const char *root)
{
	char *argv[6], err[512];
	HANDLE proc;
	DWORD code;
	int rc = 0;

	argv[0] = runner;
	argv[1] = "--clean";
	argv[2] = lease;
	argv[3] = "--stage-root";
	argv[4] = (char *)root;
	argv[5] = NULL;
	fflush(stdout);
	if ((proc = spawn(5, argv, NULL, err, sizeof(err))) == NULL) {
		fprintf(stderr, "aisb: %s\n", err);
		return 1;
	}
	WaitForSingleObject(proc, INFINITE);
	if (!GetExitCodeProcess(proc, &code) || code != 0)
		rc = 1;
	CloseHandle(proc);
	return rc;
}

/*
 * For each session folder: with a lease, aisb-run --clean LEASE
 * --stage-root SESSIONS, which removes a dead runner's profile (and a
 * stage it owned) exactly as the lease names them and skips a live one
 * (winrun_clean_decide); then draft_reap, which removes the stage of a
 * session whose aisb was killed before its command ended (nothing is
 * proposed); and a gate env file such an aisb left.  A session whose aisb
 * runs is left alone.  0, or 1 when one was refused or failed.
 */
static int
clean(const char *root)
{
	WIN32_FIND_DATAW fd;
	HANDLE f;
	wchar_t *pat = NULL;
	char runner[WINRUN_PATH_MAX], lease[WINRUN_PATH_MAX], err[512];
	char glob[WINRUN_PATH_MAX], *name, sdir[WINRUN_PATH_MAX];
	char envfile[WINRUN_PATH_MAX];
	DWORD attr;
	wchar_t *wl;
	int rc = 0, n = 0;

	if (runner_path(runner, sizeof(runner), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	if (join(glob, sizeof(glob), root, "*") == -1 ||
	    (pat = w32_wide(glob)) == NULL)
		return EXIT_CONFIG;
	f = FindFirstFileW(pat, &fd);
	free(pat);
	if (f == INVALID_HANDLE_VALUE) {
		printf("no sessions in %s\n", root);
		return 0;
	}
	do {
		if ((name = w32_utf8(fd.cFileName)) == NULL)
			continue;
		if (!wlaunch_id_valid(name) ||
		    !(fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ||
		    (fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ||
		    snprintf(lease, sizeof(lease), "%s\\%s\\lease.json", root,
		    name) >= (int)sizeof(lease)) {
			free(name);
			continue;
		}
		if (snprintf(sdir, sizeof(sdir), "%s\\%s", root, name) >=
		    (int)sizeof(sdir)) {
			free(name);
			continue;
		}
		/* a killed aisb's env file (the gate's credential) */
		if (exists_in(sdir, "gate.env") &&
		    !draft_os_launcher_running(sdir) &&
		    join(envfile, sizeof(envfile), sdir, "gate.env") == 0) {
			remove_file(envfile);
			printf("removed the gate credential file of session "
			    "%s (its aisb is gone)\n", name);
		}
		if ((wl = w32_wide(lease)) == NULL) {
			free(name);
			continue;
		}
		attr = GetFileAttributesW(wl);
		free(wl);
		if (attr != INVALID_FILE_ATTRIBUTES &&
		    clean_lease(runner, lease, root) != 0)
			rc = 1;
		/* after the runner's profile: the draft of a killed aisb */
		fflush(stdout);
		if (draft_reap(sdir, name) == -1)
			rc = 1;
		fflush(stdout);
		free(name);
		n++;
	} while (FindNextFileW(f, &fd));
	FindClose(f);
	printf("%d session(s) looked at in %s\n", n, root);
	return rc;
}

int
main(void)
{
	struct wlaunch_opts o;
	wchar_t **wargv, tv[64], lad[DRAFT_PATH_MAX];
	char **argv, *test_env = NULL, *localappdata = NULL, err[512];
	char root[WINRUN_PATH_MAX], sdir[WINRUN_PATH_MAX];
	wchar_t *w;
	DWORD attr;
	int argc, i, n, rc;

	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	if ((wargv = CommandLineToArgvW(GetCommandLineW(), &argc)) == NULL ||
	    (argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL) {
		fprintf(stderr, "aisb: cannot read the command line\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < argc; i++)
		if ((argv[i] = w32_utf8(wargv[i])) == NULL) {
			fprintf(stderr, "aisb: argument %d is not valid "
			    "UTF-16\n", i);
			return EXIT_USAGE;
		}
	LocalFree(wargv);

	n = (int)GetEnvironmentVariableW(L"" WINRUN_TEST_ENV, tv,
	    sizeof(tv) / sizeof(tv[0]));
	if (n > 0 && n < (int)(sizeof(tv) / sizeof(tv[0])))
		test_env = w32_utf8(tv);
	if (wlaunch_opts_parse(&o, argc, argv, test_env, err, sizeof(err)) ==
	    -1) {
		fprintf(stderr, "aisb: %s\n%s", err, wlaunch_usage);
		return EXIT_USAGE;
	}
	if (o.cmd == WLAUNCH_HELP) {
		fputs(wlaunch_usage, stdout);
		return 0;
	}
	if (o.cmd == WLAUNCH_VERSION) {
		printf("aisb %s\n", PACKAGE_VERSION);
		return 0;
	}
	n = (int)GetEnvironmentVariableW(L"LOCALAPPDATA", lad,
	    sizeof(lad) / sizeof(lad[0]));
	if (n > 0 && n < (int)(sizeof(lad) / sizeof(lad[0])))
		localappdata = w32_utf8(lad);
	if (wlaunch_state_path(localappdata, NULL, root, sizeof(root), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}

	switch (o.cmd) {
	case WLAUNCH_RUN:
		return run_session(&o, root);
	case WLAUNCH_TRANSACTIONS:
		return draft_list(root, WLAUNCH_ID_HEX);
	case WLAUNCH_CLEAN:
		return clean(root);
	case WLAUNCH_DOCTOR:
		/* sdir holds the runner's path: no session here */
		if (runner_path(sdir, sizeof(sdir), err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			return EXIT_ENFORCE;
		}
		rc = w32_identity(sdir);
		w32_selfrec_show(sdir);
		return rc;
	default:
		break;
	}
	if (wlaunch_state_path(localappdata, o.id, sdir, sizeof(sdir), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}
	w = w32_wide(sdir);
	attr = w != NULL ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
	free(w);
	if (attr == INVALID_FILE_ATTRIBUTES || !(attr &
	    FILE_ATTRIBUTE_DIRECTORY) || (attr & FILE_ATTRIBUTE_REPARSE_POINT)) {
		fprintf(stderr, "aisb: no session %s in %s (aisb transactions "
		    "lists them)\n", o.id, root);
		return EXIT_CONFIG;
	}
	switch (o.cmd) {
	case WLAUNCH_CHANGES:
		rc = draft_changes(sdir, o.id, o.diff);
		break;
	case WLAUNCH_APPLY:
		rc = draft_apply(sdir, o.id, 0);
		break;
	case WLAUNCH_DISCARD:
		rc = draft_discard(sdir, o.id);
		break;
	case WLAUNCH_UNDO:
		rc = draft_undo(sdir, o.id, 0);
		break;
	default:
		rc = draft_recover(sdir, o.id);
		break;
	}
	return rc;
}
