/*
 * One run of aisb-run.exe: profile, stage access, lease, Job, the
 * suspended child, its token check, resume, the wait (exit, timeout,
 * cancel, the caller's death), accounting, cleanup.  Every step that
 * fails before the resume ends the run with nothing executed (state
 * "failed", exit 77): the command never runs outside the sandbox.
 */
#include "config.h"

#include <windows.h>
#include <tlhelp32.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/exitcode.h"
#include "win32/win32.h"

#define EXIT_CANCELLED	130	/* cancelled, or the caller died */

/* The run's Win32 objects; one goto fail cleans them up. */
struct run {
	HANDLE			 job, port, proc, thread, parent, cancel;
	HANDLE			 in, out, errh;	/* inherited by the child */
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;
	struct w32_appc		 appc;
	int			 have_appc;
	char			 drive[3];	/* the stage's, "" if none */
	char			 drive_target[WINRUN_DRIVE_TARGET_MAX];
};

/*
 * Ctrl+C, Ctrl+Break, the console closing, logoff and shutdown reach
 * every process on the console, the runner too: they cancel the run
 * (the result is written) instead of killing the runner before it could
 * say what happened.  For the last three Windows ends the process as
 * soon as the handler returns: the handler holds it (Windows allows
 * about 5 s) until w32_run_finished() says the result is written.
 */
static HANDLE ctrl_cancel, ctrl_done;

static BOOL WINAPI
ctrl_handler(DWORD type)
{
	switch (type) {
	case CTRL_C_EVENT:
	case CTRL_BREAK_EVENT:
		if (ctrl_cancel != NULL)
			SetEvent(ctrl_cancel);
		return TRUE;
	case CTRL_CLOSE_EVENT:
	case CTRL_LOGOFF_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		if (ctrl_cancel != NULL)
			SetEvent(ctrl_cancel);
		if (ctrl_done != NULL)
			WaitForSingleObject(ctrl_done, 4500);
		return TRUE;
	}
	return FALSE;
}

void
w32_run_finished(void)
{
	if (ctrl_done != NULL)
		SetEvent(ctrl_done);
}

/*
 * TerminateJobObject returns before the job's processes are gone: waits
 * until none is active (at most 10 s), so that none still writes to the
 * stage when the caller reads it.  0, or -1 when some outlived the wait.
 */
static int
job_drain(HANDLE job)
{
	JOBOBJECT_BASIC_ACCOUNTING_INFORMATION	ai;
	int					i;

	for (i = 0; i < 1000; i++) {
		if (!QueryInformationJobObject(job,
		    JobObjectBasicAccountingInformation, &ai, sizeof(ai), NULL))
			return -1;
		if (ai.ActiveProcesses == 0)
			return 0;
		Sleep(10);
	}
	return -1;
}

static DWORD WINAPI
cancel_reader(LPVOID arg)
{
	HANDLE ev = arg, in = GetStdHandle(STD_INPUT_HANDLE);
	char line[64], c;
	size_t n = 0;
	DWORD got;

	if (in == NULL || in == INVALID_HANDLE_VALUE)
		return 0;
	/* lines of at most 63 bytes; a longer one is dropped, not cut */
	while (ReadFile(in, &c, 1, &got, NULL) && got == 1) {
		if (c == '\r')
			continue;
		if (c != '\n') {
			if (n < sizeof(line) - 1)
				line[n++] = c;
			else
				n = sizeof(line);
			continue;
		}
		if (n < sizeof(line)) {
			line[n] = '\0';
			if (strcmp(line, "cancel") == 0) {
				SetEvent(ev);
				return 0;
			}
		}
		n = 0;
	}
	return 0;	/* EOF is not a cancel: a caller may close stdin */
}

/*
 * The runner's parent, opened for SYNCHRONIZE, and checked to be older
 * than the runner (a pid reused after the parent died is not the
 * parent).  NULL if it is gone: the caller is dead, nothing runs.
 */
static HANDLE
open_parent(char *err, size_t errlen)
{
	PROCESSENTRY32W pe;
	HANDLE snap, h = NULL;
	DWORD me = GetCurrentProcessId(), ppid = 0;
	uint64_t mystart, pstart;

	snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	if (snap == INVALID_HANDLE_VALUE) {
		snprintf(err, errlen, "cannot list processes to find the caller");
		return NULL;
	}
	pe.dwSize = sizeof(pe);
	if (Process32FirstW(snap, &pe))
		do {
			if (pe.th32ProcessID == me) {
				ppid = pe.th32ParentProcessID;
				break;
			}
		} while (Process32NextW(snap, &pe));
	CloseHandle(snap);
	if (ppid == 0 || (h = OpenProcess(SYNCHRONIZE |
	    PROCESS_QUERY_LIMITED_INFORMATION, FALSE, ppid)) == NULL) {
		snprintf(err, errlen, "the caller (pid %lu) is gone",
		    (unsigned long)ppid);
		return NULL;
	}
	mystart = w32_process_start(GetCurrentProcess());
	pstart = w32_process_start(h);
	if (pstart == 0 || mystart == 0 || pstart > mystart) {
		CloseHandle(h);
		snprintf(err, errlen, "the caller (pid %lu) is gone",
		    (unsigned long)ppid);
		return NULL;
	}
	return h;
}

static int
fail_at(struct winrun_result *r, const char *what, DWORD code)
{
	char e[160];

	snprintf(r->error, sizeof(r->error), "%s: %s", what,
	    w32_strerror(code, e, sizeof(e)));
	return -1;
}

int
w32_remove_tree(const wchar_t *path, char *err, size_t errlen)
{
	WIN32_FIND_DATAW fd;
	wchar_t *pat, *child;
	size_t n = wcslen(path), m;
	HANDLE f;
	DWORD attr, code;
	char e[160];
	int ret = 0;

	if (n == 0 || n > 32000)
		return -1;
	attr = GetFileAttributesW(path);
	if (attr == INVALID_FILE_ATTRIBUTES)
		return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : -1;
	/* a link (junction, symlink) is removed itself, never followed */
	if (attr & FILE_ATTRIBUTE_REPARSE_POINT || !(attr &
	    FILE_ATTRIBUTE_DIRECTORY))
		goto self;
	if ((pat = malloc((n + 3) * sizeof(wchar_t))) == NULL)
		return -1;
	swprintf(pat, n + 3, L"%ls\\*", path);
	f = FindFirstFileW(pat, &fd);
	free(pat);
	if (f != INVALID_HANDLE_VALUE) {
		do {
			if (wcscmp(fd.cFileName, L".") == 0 ||
			    wcscmp(fd.cFileName, L"..") == 0)
				continue;
			m = n + wcslen(fd.cFileName) + 2;
			if ((child = malloc(m * sizeof(wchar_t))) == NULL) {
				ret = -1;
				continue;
			}
			swprintf(child, m, L"%ls\\%ls", path, fd.cFileName);
			if (w32_remove_tree(child, err, errlen) == -1)
				ret = -1;
			free(child);
		} while (FindNextFileW(f, &fd));
		FindClose(f);
	}
self:
	if (attr & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesW(path, attr & ~FILE_ATTRIBUTE_READONLY);
	if (attr & FILE_ATTRIBUTE_DIRECTORY ? !RemoveDirectoryW(path) :
	    !DeleteFileW(path)) {
		code = GetLastError();
		if (err[0] == '\0') {
			char *p = w32_utf8(path);

			snprintf(err, errlen, "%s: %s", p ? p : "?",
			    w32_strerror(code, e, sizeof(e)));
			free(p);
		}
		ret = -1;
	}
	return ret;
}

/* Drains the job's messages: which limits were hit. */
static uint32_t
job_hits(HANDLE port)
{
	DWORD msg;
	ULONG_PTR key;
	LPOVERLAPPED ov;
	uint32_t hits = 0;

	while (GetQueuedCompletionStatus(port, &msg, &key, &ov, 0)) {
		switch (msg) {
		case JOB_OBJECT_MSG_ACTIVE_PROCESS_LIMIT:
			hits |= WINRUN_HIT_PROCS;
			break;
		case JOB_OBJECT_MSG_JOB_MEMORY_LIMIT:
		case JOB_OBJECT_MSG_PROCESS_MEMORY_LIMIT:
			hits |= WINRUN_HIT_MEMORY;
			break;
		case JOB_OBJECT_MSG_END_OF_JOB_TIME:
		case JOB_OBJECT_MSG_END_OF_PROCESS_TIME:
			hits |= WINRUN_HIT_CPU;
			break;
		}
	}
	return hits;
}

static int
make_job(struct run *rn, const struct winrun_opts *o,
    struct winrun_result *r)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim;
	JOBOBJECT_BASIC_UI_RESTRICTIONS ui;
	JOBOBJECT_ASSOCIATE_COMPLETION_PORT acp;

	if ((rn->job = CreateJobObjectW(NULL, NULL)) == NULL)
		return fail_at(r, "CreateJobObject", GetLastError());
	if ((rn->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0,
	    1)) == NULL)
		return fail_at(r, "CreateIoCompletionPort", GetLastError());
	memset(&acp, 0, sizeof(acp));
	acp.CompletionKey = rn->job;
	acp.CompletionPort = rn->port;
	if (!SetInformationJobObject(rn->job,
	    JobObjectAssociateCompletionPortInformation, &acp, sizeof(acp)))
		return fail_at(r, "the job's completion port", GetLastError());

	/* no BREAKAWAY_OK flag: nothing leaves the job */
	memset(&lim, 0, sizeof(lim));
	lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
	    JOB_OBJECT_LIMIT_ACTIVE_PROCESS | JOB_OBJECT_LIMIT_JOB_MEMORY |
	    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	lim.BasicLimitInformation.ActiveProcessLimit = o->procs;
	lim.JobMemoryLimit = (SIZE_T)o->memory;
	if (o->cpu_ms != 0) {
		lim.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_TIME;
		/* 100 ns units */
		lim.BasicLimitInformation.PerJobUserTimeLimit.QuadPart =
		    (LONGLONG)o->cpu_ms * 10000;
	}
	if (!SetInformationJobObject(rn->job, JobObjectExtendedLimitInformation,
	    &lim, sizeof(lim)))
		return fail_at(r, "the job's limits", GetLastError());
	/* no desktop, clipboard, global atoms, other processes' windows */
	ui.UIRestrictionsClass = JOB_OBJECT_UILIMIT_ALL;
	if (!SetInformationJobObject(rn->job, JobObjectBasicUIRestrictions, &ui,
	    sizeof(ui)) && o->no_appcontainer == 0)
		return fail_at(r, "the job's UI restrictions", GetLastError());
	return 0;
}

static int
write_lease(const struct winrun_opts *o, struct run *rn,
    struct winrun_result *r)
{
	struct winrun_lease l;
	char doc[WINRUN_DOC_MAX], err[256];
	int n;

	memset(&l, 0, sizeof(l));
	l.protocol = WINRUN_PROTOCOL;
	memcpy(l.run_id, r->run_id, sizeof(l.run_id));
	l.runner_pid = GetCurrentProcessId();
	l.runner_start = w32_process_start(GetCurrentProcess());
	if (rn->have_appc)
		winrun_profile_name(r->run_id, l.profile, sizeof(l.profile));
	if (o->stage != NULL && !o->keep_stage)
		snprintf(l.stage, sizeof(l.stage), "%s", o->stage);
	/* the drive, also with --keep-stage: aisb clean removes it */
	memcpy(l.drive, rn->drive, sizeof(l.drive));
	memcpy(l.drive_target, rn->drive_target, sizeof(l.drive_target));
	if ((n = winrun_lease_encode(&l, doc, sizeof(doc))) == -1) {
		snprintf(r->error, sizeof(r->error), "the lease does not fit");
		return -1;
	}
	if (w32_write_atomic(o->lease, doc, (size_t)n, err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "writing the lease: %s", err);
		return -1;
	}
	return 0;
}

/*
 * The command's environment block (UTF-8, *env of *envlen bytes): the
 * host's variables --env passes, the gate's proxy variables, then the
 * caller's --env-file over them.  What was read is wiped.  0 or -1 with
 * r->error.
 */
static int
build_env(const struct winrun_opts *o, struct winrun_result *r, char **env,
    size_t *envlen)
{
	char *envfile = NULL, **host = NULL, gate[512], err[512];
	size_t envfile_len = 0, nhost = 0, i;
	wchar_t *henv = NULL, *p;
	int ret = -1, n;

	if (o->env_file != NULL && w32_read_file(o->env_file,
	    WINRUN_ENVFILE_MAX, &envfile, &envfile_len, err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "--env-file: %s", err);
		goto out;
	}
	if (o->gate_port != 0) {
		if ((n = winrun_gate_env(o->gate_port, NULL, gate,
		    sizeof(gate))) == -1) {
			snprintf(r->error, sizeof(r->error), "gate variables");
			goto out;
		}
		/* the caller's file comes after: its proxy URL (with the
		 * session's credential) wins over the plain one */
		if (envfile != NULL) {
			char *both = malloc((size_t)n + envfile_len + 1);

			if (both == NULL)
				goto out;
			memcpy(both, gate, (size_t)n);
			memcpy(both + n, envfile, envfile_len + 1);
			SecureZeroMemory(envfile, envfile_len);
			free(envfile);
			envfile = both;
			envfile_len += (size_t)n;
		} else if ((envfile = strdup(gate)) != NULL)
			envfile_len = (size_t)n;
	}
	if ((henv = GetEnvironmentStringsW()) == NULL)
		goto out;
	for (p = henv; *p != L'\0'; p += wcslen(p) + 1)
		nhost++;
	if ((host = calloc(nhost + 1, sizeof(*host))) == NULL)
		goto out;
	for (i = 0, p = henv; *p != L'\0'; p += wcslen(p) + 1)
		if ((host[i] = w32_utf8(p)) != NULL)
			i++;
	if (winrun_envblock(host, o->env_pass, o->n_env_pass, envfile,
	    envfile_len, o->stage, env, envlen, err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "environment: %s", err);
		goto out;
	}
	ret = 0;
out:
	if (henv != NULL)
		FreeEnvironmentStringsW(henv);
	for (i = 0; host != NULL && host[i] != NULL; i++)
		free(host[i]);
	free(host);
	if (envfile != NULL) {
		SecureZeroMemory(envfile, envfile_len);
		free(envfile);
	}
	return ret;
}

/*
 * The profile, its stage access, its network (--no-appcontainer, tests
 * only: no profile, so --gate-port sets the proxy variables and no
 * network rule; the result says appcontainer false).  0 or -1.
 */
static int
make_profile(struct run *rn, const struct winrun_opts *o,
    struct winrun_result *r)
{
	char profile[WINRUN_PROFILE_LEN + 1], err[512];

	if (o->no_appcontainer)
		return 0;
	winrun_profile_name(r->run_id, profile, sizeof(profile));
	if (w32_appc_create(&rn->appc, profile, o->gate_port, err,
	    sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "%s", err);
		return -1;
	}
	rn->have_appc = 1;
	r->appcontainer = 1;
	if (o->stage != NULL && w32_appc_grant(&rn->appc, o->stage,
	    GENERIC_ALL, err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "stage access: %s", err);
		return -1;
	}
	if (o->gate_port != 0 && w32_appc_network(&rn->appc, o->gate_port,
	    err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "gate network: %s", err);
		return -1;
	}
	return 0;
}

/*
 * The stage's drive (drive_win32.c): a free letter mapped to it (the
 * lease names it before it is defined), and the command's working
 * folder its root, *wcwd.  A drive that does not show
 * the stage fails the run, but with --no-appcontainer (tests: Wine
 * defines the letter and its file system never follows it), where the
 * mapping is kept and removed as on Windows and the command starts in
 * the stage's own path.  0 or -1 with r->error.
 */
struct lease_ctx {
	const struct winrun_opts	*o;
	struct run			*rn;
	struct winrun_result		*r;
};

/* The lease with the letter about to be defined (w32_drive_record). */
static int
lease_drive(void *ctx, const char *drive, const char *target)
{
	struct lease_ctx	*lc = ctx;

	snprintf(lc->rn->drive, sizeof(lc->rn->drive), "%s", drive);
	snprintf(lc->rn->drive_target, sizeof(lc->rn->drive_target), "%s",
	    target);
	if (write_lease(lc->o, lc->rn, lc->r) == -1) {
		lc->rn->drive[0] = lc->rn->drive_target[0] = '\0';
		return -1;
	}
	return 0;
}

static int
map_drive(struct run *rn, const struct winrun_opts *o,
    struct winrun_result *r, wchar_t **wcwd)
{
	struct lease_ctx	 lc = { o, rn, r };
	struct w32_drive_record	 rec = { lease_drive, &lc };
	char			 err[512], root[4], drive[3];
	char			 target[WINRUN_DRIVE_TARGET_MAX];
	wchar_t			*w;

	/* rn->drive is the last letter recorded: removed at the end
	 * only while it still maps to this target (finish) */
	if (w32_drive_map(o->stage, &rec, drive, target, err,
	    sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "the stage's drive: %s",
		    err);
		return -1;
	}
	memcpy(rn->drive, drive, sizeof(rn->drive));
	memcpy(rn->drive_target, target, sizeof(rn->drive_target));
	if (!w32_drive_is_stage(rn->drive, o->stage)) {
		if (o->no_appcontainer)
			return 0;
		snprintf(r->error, sizeof(r->error), "drive %s does not show "
		    "the stage %s", rn->drive, o->stage);
		return -1;
	}
	snprintf(root, sizeof(root), "%s\\", rn->drive);
	if ((w = w32_wide(root)) == NULL) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -1;
	}
	free(*wcwd);
	*wcwd = w;
	return 0;
}

/*
 * The child, suspended: stdin NUL (the runner's own stdin carries
 * "cancel"), stdout and stderr ours, only those handles inherited, in
 * the AppContainer when there is one.  0 or -1 with r->error.
 */
static int
spawn_suspended(struct run *rn, struct winrun_result *r, wchar_t *wcmd,
    wchar_t *wenv, const wchar_t *wcwd)
{
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	SECURITY_CAPABILITIES sc;
	SECURITY_ATTRIBUTES sa = { sizeof(sa), NULL, TRUE };
	uintptr_t list[3];
	HANDLE hl[3], nul;
	SIZE_T asz = 0;
	size_t nh, i;

	nul = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE,
	    FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
	if (nul == INVALID_HANDLE_VALUE)
		return fail_at(r, "NUL", GetLastError());
	rn->in = nul;
	rn->out = w32_inheritable(STD_OUTPUT_HANDLE, nul);
	rn->errh = w32_inheritable(STD_ERROR_HANDLE, nul);
	if (rn->out == NULL || rn->errh == NULL)
		return fail_at(r, "standard handles", GetLastError());
	nh = winrun_handle_list((uintptr_t)rn->in, (uintptr_t)rn->out,
	    (uintptr_t)rn->errh, (uintptr_t)INVALID_HANDLE_VALUE, list);
	for (i = 0; i < nh; i++)
		hl[i] = (HANDLE)list[i];

	InitializeProcThreadAttributeList(NULL, 2, 0, &asz);
	if ((rn->attrs = malloc(asz)) == NULL ||
	    !InitializeProcThreadAttributeList(rn->attrs, 2, 0, &asz))
		return fail_at(r, "attribute list", GetLastError());
	if (!UpdateProcThreadAttribute(rn->attrs, 0,
	    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, hl, nh * sizeof(HANDLE), NULL,
	    NULL))
		return fail_at(r, "the handle list", GetLastError());
	if (rn->have_appc) {
		memset(&sc, 0, sizeof(sc));
		sc.AppContainerSid = rn->appc.sid;
		sc.Capabilities = rn->appc.ncaps ? rn->appc.caps : NULL;
		sc.CapabilityCount = rn->appc.ncaps;
		if (!UpdateProcThreadAttribute(rn->attrs, 0,
		    PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &sc, sizeof(sc),
		    NULL, NULL))
			return fail_at(r, "the security capabilities",
			    GetLastError());
	}
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = rn->in;
	si.StartupInfo.hStdOutput = rn->out;
	si.StartupInfo.hStdError = rn->errh;
	si.lpAttributeList = rn->attrs;
	if (!CreateProcessW(NULL, wcmd, NULL, NULL, TRUE, CREATE_SUSPENDED |
	    CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT, wenv,
	    wcwd, &si.StartupInfo, &pi))
		return fail_at(r, "starting the command", GetLastError());
	rn->proc = pi.hProcess;
	rn->thread = pi.hThread;
	return 0;
}

/* Everything up to a suspended, verified child in the job. */
static int
start(struct run *rn, const struct winrun_opts *o, struct winrun_result *r)
{
	size_t envlen = 0;
	char *cmd = NULL, *env = NULL, err[512];
	wchar_t *wcmd = NULL, *wenv = NULL, *wcwd = NULL;
	int ret = -1;

	/* the command line and the environment, before anything exists */
	if (winrun_cmdline(o->argc, o->argv, &cmd, err, sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "%s", err);
		goto fail;
	}
	if (build_env(o, r, &env, &envlen) == -1)
		goto fail;
	if ((wcmd = w32_wide(cmd)) == NULL ||
	    (wenv = w32_wide_n(env, envlen)) == NULL ||
	    (o->stage != NULL && (wcwd = w32_wide(o->stage)) == NULL)) {
		snprintf(r->error, sizeof(r->error), "the command or its "
		    "environment is not valid UTF-8");
		goto fail;
	}
	if (make_profile(rn, o, r) == -1 || make_job(rn, o, r) == -1 ||
	    (o->stage != NULL && map_drive(rn, o, r, &wcwd) == -1) ||
	    write_lease(o, rn, r) == -1 ||
	    spawn_suspended(rn, r, wcmd, wenv, wcwd) == -1)
		goto fail;
	/* nothing of the child runs before these two */
	if (rn->have_appc && w32_appc_verify(&rn->appc, rn->proc, err,
	    sizeof(err)) == -1) {
		snprintf(r->error, sizeof(r->error), "%s", err);
		goto fail;
	}
	if (!AssignProcessToJobObject(rn->job, rn->proc)) {
		fail_at(r, "AssignProcessToJobObject", GetLastError());
		goto fail;
	}
	ret = 0;
fail:
	if (ret == -1 && rn->proc != NULL)
		TerminateProcess(rn->proc, EXIT_ENFORCE);
	if (env != NULL) {
		SecureZeroMemory(env, envlen);
		free(env);
	}
	if (wenv != NULL) {
		SecureZeroMemory(wenv, wcslen(wenv) * sizeof(wchar_t));
		free(wenv);
	}
	free(cmd);
	free(wcmd);
	free(wcwd);
	if (ret == -1 && r->error[0] == '\0')
		snprintf(r->error, sizeof(r->error), "out of memory");
	return ret;
}

static void
account(struct run *rn, struct winrun_result *r)
{
	JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acct;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim;

	if (QueryInformationJobObject(rn->job, JobObjectBasicAccountingInformation,
	    &acct, sizeof(acct), NULL)) {
		r->user_ms = (uint64_t)acct.TotalUserTime.QuadPart / 10000;
		r->kernel_ms = (uint64_t)acct.TotalKernelTime.QuadPart / 10000;
		r->peak_procs = acct.TotalProcesses;
	}
	if (QueryInformationJobObject(rn->job, JobObjectExtendedLimitInformation,
	    &lim, sizeof(lim), NULL))
		r->peak_memory = lim.PeakJobMemoryUsed;
}

/*
 * The child, resumed, waited for under the deadline, the cancel event
 * and the parent's end; whatever it left in the job killed with it; its
 * accounting and what stopped it into r.  The runner's exit code.
 */
static int
wait_child(struct run *rn, const struct winrun_opts *o,
    struct winrun_result *r)
{
	HANDLE waits[3];
	ULONGLONG now, deadline = 0;
	DWORD w, code = 0, nw, wait_ms;
	int rc;

	r->state = WINRUN_EXITED;
	if (o->timeout_ms != 0)
		deadline = GetTickCount64() + o->timeout_ms;

	waits[0] = rn->proc;
	waits[1] = rn->cancel;
	waits[2] = rn->parent;
	nw = 3;
	for (;;) {
		wait_ms = INFINITE;
		if (deadline != 0) {
			now = GetTickCount64();
			wait_ms = now >= deadline ? 0 :
			    (DWORD)(deadline - now > 0x7fffffff ? 0x7fffffff :
			    deadline - now);
		}
		w = WaitForMultipleObjects(nw, waits, FALSE, wait_ms);
		if (w == WAIT_OBJECT_0)
			break;
		if (w == WAIT_OBJECT_0 + 1 || w == WAIT_OBJECT_0 + 2) {
			r->hits |= w == WAIT_OBJECT_0 + 1 ? WINRUN_HIT_CANCEL :
			    WINRUN_HIT_PARENT;
			TerminateJobObject(rn->job, EXIT_CANCELLED);
			break;
		}
		if (w == WAIT_TIMEOUT) {
			if (deadline != 0 && GetTickCount64() >= deadline) {
				r->hits |= WINRUN_HIT_TIMEOUT;
				TerminateJobObject(rn->job, EXIT_TIMEOUT);
				break;
			}
			continue;
		}
		fail_at(r, "waiting for the command", GetLastError());
		TerminateJobObject(rn->job, EXIT_ENFORCE);
		break;
	}
	WaitForSingleObject(rn->proc, INFINITE);
	/* the root is done: whatever it left running goes with it */
	TerminateJobObject(rn->job, EXIT_CANCELLED);
	GetExitCodeProcess(rn->proc, &code);
	r->exit_code = code;
	account(rn, r);
	r->hits |= job_hits(rn->port);
	if (r->hits & (WINRUN_HIT_TIMEOUT | WINRUN_HIT_CANCEL |
	    WINRUN_HIT_PARENT)) {
		r->state = WINRUN_KILLED;
		rc = r->hits & WINRUN_HIT_TIMEOUT ? EXIT_TIMEOUT : EXIT_CANCELLED;
	} else if (r->hits & WINRUN_HIT_CPU) {
		r->state = WINRUN_KILLED;
		rc = EXIT_TIMEOUT;
	} else
		rc = (int)code;
	return rc;
}

/*
 * The run's job drained and its handles closed, then its stage removed
 * (or kept) and its profile deleted, each outcome reported in r.
 */
static void
finish(struct run *rn, const struct winrun_opts *o, struct winrun_result *r)
{
	char err[512];
	wchar_t *wstage;
	int k;

	if (rn->proc != NULL && rn->job != NULL) {
		TerminateJobObject(rn->job, EXIT_ENFORCE);
		if (job_drain(rn->job) == -1) {
			/* something may still write to the stage: nothing
			 * of this run may be proposed */
			r->state = WINRUN_FAILED;
			snprintf(r->error, sizeof(r->error), "the job's "
			    "processes did not end within 10 s of being "
			    "terminated");
		}
	}
	if (rn->job != NULL)
		CloseHandle(rn->job);	/* KILL_ON_JOB_CLOSE */
	if (rn->port != NULL)
		CloseHandle(rn->port);
	if (rn->proc != NULL)
		CloseHandle(rn->proc);
	if (rn->thread != NULL)
		CloseHandle(rn->thread);
	if (rn->parent != NULL)
		CloseHandle(rn->parent);
	/* the handler stays: a console closing before the result is
	 * written still waits for it (w32_run_finished) */
	if (rn->cancel != NULL) {
		ctrl_cancel = NULL;
		CloseHandle(rn->cancel);
	}
	if (rn->in != NULL)
		CloseHandle(rn->in);
	if (rn->out != NULL)
		CloseHandle(rn->out);
	if (rn->errh != NULL)
		CloseHandle(rn->errh);
	if (rn->attrs != NULL) {
		DeleteProcThreadAttributeList(rn->attrs);
		free(rn->attrs);
	}
	/* cleanup, reported whatever happened before; the drive first,
	 * exactly the target this run set, before its stage goes */
	err[0] = '\0';
	if (rn->drive[0] != '\0') {
		if ((k = w32_drive_unmap(rn->drive, rn->drive_target, err,
		    sizeof(err))) == 0)
			r->drive_cleanup = WINRUN_CLEAN_REMOVED;
		else if (k == 1)	/* gone, or another's now */
			r->drive_cleanup = WINRUN_CLEAN_NONE;
		else {
			r->drive_cleanup = WINRUN_CLEAN_FAILED;
			if (r->error[0] == '\0')
				snprintf(r->error, sizeof(r->error), "%s",
				    err);
		}
	}
	if (o->stage != NULL && o->keep_stage) {
		if (rn->have_appc)
			w32_appc_revoke(&rn->appc, o->stage, err, sizeof(err));
		r->stage_cleanup = WINRUN_CLEAN_KEPT;
	} else if (o->stage != NULL) {
		err[0] = '\0';
		if ((wstage = w32_wide(o->stage)) != NULL &&
		    w32_remove_tree(wstage, err, sizeof(err)) == 0)
			r->stage_cleanup = WINRUN_CLEAN_REMOVED;
		else {
			r->stage_cleanup = WINRUN_CLEAN_FAILED;
			if (r->error[0] == '\0')
				snprintf(r->error, sizeof(r->error),
				    "removing the stage: %s", err);
		}
		free(wstage);
	}
	if (rn->have_appc) {
		err[0] = '\0';
		if (w32_appc_delete(&rn->appc, err, sizeof(err)) == 0)
			r->profile_cleanup = WINRUN_CLEAN_REMOVED;
		else {
			r->profile_cleanup = WINRUN_CLEAN_FAILED;
			if (r->error[0] == '\0')
				snprintf(r->error, sizeof(r->error),
				    "removing the profile: %s", err);
		}
	}
}

int
w32_run(const struct winrun_opts *o, struct winrun_result *r)
{
	struct run rn;
	HANDLE th;
	ULONGLONG t0;
	uint8_t rnd[16];
	int rc = EXIT_ENFORCE;

	memset(&rn, 0, sizeof(rn));
	memset(r, 0, sizeof(*r));
	r->protocol = WINRUN_PROTOCOL;
	r->state = WINRUN_FAILED;
	t0 = GetTickCount64();
	if (o->run_id[0] != '\0')
		memcpy(r->run_id, o->run_id, sizeof(r->run_id));
	else if (w32_random(rnd) == -1) {
		snprintf(r->error, sizeof(r->error), "no random run id");
		goto done;
	} else
		winrun_runid_format(rnd, r->run_id);

	if ((rn.parent = open_parent(r->error, sizeof(r->error))) == NULL)
		goto done;
	if ((rn.cancel = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL) {
		fail_at(r, "CreateEvent", GetLastError());
		goto done;
	}
	if (ctrl_done == NULL)
		ctrl_done = CreateEventW(NULL, TRUE, FALSE, NULL);
	ctrl_cancel = rn.cancel;
	SetConsoleCtrlHandler(ctrl_handler, TRUE);
	if (start(&rn, o, r) == -1)
		goto done;
	th = CreateThread(NULL, 0, cancel_reader, rn.cancel, 0, NULL);
	if (th != NULL)
		CloseHandle(th);
	if (ResumeThread(rn.thread) == (DWORD)-1) {
		fail_at(r, "ResumeThread", GetLastError());
		TerminateJobObject(rn.job, EXIT_ENFORCE);
		goto done;
	}
	rc = wait_child(&rn, o, r);
done:
	r->wall_ms = GetTickCount64() - t0;
	finish(&rn, o, r);
	/* a failed removal is the result's to report, not the exit code's */
	if (r->state == WINRUN_FAILED)
		rc = EXIT_ENFORCE;
	return rc;
}
