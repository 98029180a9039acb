/*
 * aisb-run.exe, the Windows runner (docs/windows.md): its pure logic.
 *
 * Everything here is plain C with no Win32 call, so that it compiles on
 * Linux too and is unit-tested there (tests/unit/test_winrun.c); the
 * Win32 side (run_win32.c, appc_win32.c, selftest_win32.c) only calls it.
 * Strings are UTF-8; the Win32 side converts at the boundary.
 *
 * Every input has a size bound, stated next to its parser below.  All
 * functions that can fail return -1 and fill the caller's err buffer with
 * what went wrong and how to fix it, or 0 on success.
 */
#ifndef AISB_WINRUN_H
#define AISB_WINRUN_H

#include <stddef.h>
#include <stdint.h>

/* printf checking: mingw-w64's C99 printf is gnu_printf, not Microsoft's
 * (configure defines __USE_MINGW_ANSI_STDIO for a Windows host) */
#if defined(__MINGW32__)
#define WINRUN_PRINTF(f, a)	__attribute__((format(gnu_printf, f, a)))
#else
#define WINRUN_PRINTF(f, a)	__attribute__((format(printf, f, a)))
#endif

#define WINRUN_PROTOCOL		1	/* lease and result documents */
#define WINRUN_ARGS_MAX		256	/* words of the command */
#define WINRUN_ARG_MAX		8192	/* bytes of one word */
#define WINRUN_CMDLINE_MAX	32767	/* CreateProcessW's bound, in UTF-16 units */
#define WINRUN_ENV_MAX		64	/* variables in the child's environment */
#define WINRUN_ENVVAL_MAX	4096	/* bytes of one NAME=VALUE */
#define WINRUN_ENVBLOCK_MAX	65536	/* bytes of the whole block */
#define WINRUN_ENVFILE_MAX	65536	/* bytes of --env-file */
#define WINRUN_PATH_MAX		1024	/* bytes of a path option */
#define WINRUN_DOC_MAX		8192	/* bytes of a lease or result document */
#define WINRUN_ERR_MAX		256	/* bytes of the result's error text */
#define WINRUN_PROFILE_PREFIX	"aisb.run."
#define WINRUN_RUNID_LEN	32	/* hex digits of a run id */
#define WINRUN_PROFILE_LEN	(sizeof(WINRUN_PROFILE_PREFIX) - 1 + WINRUN_RUNID_LEN)

#define WINRUN_DEF_PROCS	32
#define WINRUN_DEF_MEMORY	(1024ULL * 1024 * 1024)	/* 1 GiB, whole job */
#define WINRUN_DEF_TIMEOUT_MS	(120ULL * 1000)

/* The variable a test sets to allow --no-appcontainer (never in use). */
#define WINRUN_TEST_ENV		"AISB_RUN_TEST_NO_APPCONTAINER"
#define WINRUN_TEST_ENV_VALUE	"i-am-a-test"

/* err[errlen] = the formatted message; returns -1 (every parser's error
 * path, opts.c). */
int	winrun_fail(char *err, size_t errlen, const char *fmt, ...)
	    WINRUN_PRINTF(3, 4);

/* ---- options (opts.c) ---------------------------------------------- */

struct winrun_opts {
	char		 run_id[WINRUN_RUNID_LEN + 1];	/* "" = generate */
	const char	*lease;		/* lease file, written before start */
	const char	*result;	/* result file, written at the end */
	const char	*stage;		/* the child's working folder */
	const char	*env_file;	/* NAME=VALUE lines for the child */
	const char	*env_pass[WINRUN_ENV_MAX];	/* host names passed */
	size_t		 n_env_pass;
	uint64_t	 timeout_ms;	/* 0: none */
	uint64_t	 memory;	/* job committed memory, bytes */
	uint64_t	 cpu_ms;	/* job user CPU time, 0: none */
	uint32_t	 procs;		/* active processes in the job */
	uint16_t	 gate_port;	/* 0: no network at all */
	int		 keep_stage;	/* leave the stage for writeback */
	int		 no_appcontainer;	/* tests only: see opts.c */
	int		 self_test;
	const char	*clean;		/* --clean LEASE: aisb clean's step */
	const char	*stage_root;	/* where stages may be (--clean) */
	int		 help;
	int		 version;	/* --version: print it, run nothing */
	int		 argc;		/* the command */
	char *const	*argv;
};

/*
 * Parses aisb-run's command line (argv[0] is the program).  test_env is
 * the value of WINRUN_TEST_ENV in the runner's environment, or NULL:
 * --no-appcontainer is refused unless it is WINRUN_TEST_ENV_VALUE.
 */
int	winrun_opts_parse(struct winrun_opts *, int argc, char *const *argv,
	    const char *test_env, char *err, size_t errlen);
extern const char winrun_usage[];

/*
 * The checks aisb.exe's parser (wlaunch.c) shares with the runner's, so
 * that the launcher refuses, in the same words, what the runner would:
 * a decimal number in [min, max] (at most 20 digits, no sign, no suffix)
 * into *out; --no-appcontainer without test_env WINRUN_TEST_ENV_VALUE;
 * a command of 1 to WINRUN_ARGS_MAX words (usage follows "no command: ").
 * 0, or -1 with err.
 */
int	winrun_number(const char *opt, const char *s, uint64_t min,
	    uint64_t max, uint64_t *out, char *err, size_t errlen);
int	winrun_no_appcontainer_check(int no_appcontainer,
	    const char *test_env, char *err, size_t errlen);
int	winrun_command_check(int nwords, const char *usage, char *err,
	    size_t errlen);
/* Whether p is an absolute Windows path: "X:\\", "X:/" or "\\\\"
 * (draft_os_path_absolute on Windows). */
int	winrun_path_absolute(const char *p);

/* ---- the command line (cmdline.c) ---------------------------------- */

/*
 * Quotes argv into one Windows command line, as CommandLineToArgvW and
 * the C runtime split it back (backslashes doubled before a quote only).
 * The caller frees *out.  Bounds: WINRUN_ARGS_MAX words, each
 * WINRUN_ARG_MAX bytes, the whole at most WINRUN_CMDLINE_MAX bytes.
 */
int	winrun_cmdline(int argc, char *const *argv, char **out,
	    char *err, size_t errlen);

/* ---- the environment block (envblock.c) ---------------------------- */

/* --env NAME: a variable name ([A-Za-z0-9_()], 1 to 64 bytes) that does
 * not look like a credential; 0, or -1 with err (opts.c). */
int	winrun_env_pass_check(const char *name, char *err, size_t errlen);
/* --env NAME checked, then names[(*n)++] = name, at most WINRUN_ENV_MAX:
 * 0, or -1 with err (the runner's parser and the launcher's share it). */
int	winrun_env_add(const char **names, size_t *n, const char *name,
	    char *err, size_t errlen);
/* Whether NAME looks like a credential (never passed from the host). */
int	winrun_env_secret(const char *name);
/* Whether NAME is one of the variables passed by default. */
int	winrun_env_default(const char *name);

/*
 * Builds the child's environment block: NAME=VALUE\0 ... \0, sorted by
 * name without case, as Windows wants it.  Sources, later ones winning:
 *   1. host variables (host, NULL-terminated NAME=VALUE list) whose name
 *      is in the default allowlist or in pass[] (npass), never a secret;
 *   2. the --env-file text (envfile, may be NULL; at most
 *      WINRUN_ENVFILE_MAX bytes): NAME=VALUE lines, # comments; these are
 *      set whatever the name (the caller chose them, e.g. a proxy URL
 *      with the session's credential);
 *   3. fixed: TEMP, TMP, USERPROFILE, HOME = stage (when stage != NULL),
 *      AISB_SANDBOX=1.
 * Bounds: WINRUN_ENV_MAX variables, each WINRUN_ENVVAL_MAX bytes, the
 * block WINRUN_ENVBLOCK_MAX.  Values never appear in err.
 */
int	winrun_envblock(char *const *host, const char *const *pass,
	    size_t npass, const char *envfile, size_t envfile_len,
	    const char *stage, char **block, size_t *blocklen,
	    char *err, size_t errlen);

/* ---- the handle list (handles.c) ----------------------------------- */

/*
 * The handles the child inherits, for PROC_THREAD_ATTRIBUTE_HANDLE_LIST:
 * the three standard handles, without null/invalid ones and duplicates
 * (the attribute refuses a repeated handle).  Values are the HANDLEs as
 * integers; invalid is INVALID_HANDLE_VALUE's.  Returns the count, 0..3.
 */
size_t	winrun_handle_list(uintptr_t in, uintptr_t out, uintptr_t errh,
	    uintptr_t invalid, uintptr_t list[3]);

/* ---- run ids and profile names (ids.c) ----------------------------- */

/* 16 random bytes -> 32 lowercase hex digits, NUL-terminated. */
void	winrun_runid_format(const uint8_t rnd[16],
	    char id[WINRUN_RUNID_LEN + 1]);
int	winrun_runid_valid(const char *id);
/* aisb.run.<id> into name (at least WINRUN_PROFILE_LEN + 1 bytes). */
void	winrun_profile_name(const char *id, char *name, size_t len);
int	winrun_profile_valid(const char *name);

/* ---- the stage's drive (drive.c) ---------------------------------- */

#define WINRUN_DRIVE_PREFIX	"\\??\\"	/* a raw target: \??\X:\... */
#define WINRUN_DRIVE_FIRST	'D'	/* A to C are never taken */
#define WINRUN_DRIVE_TARGET_MAX	(WINRUN_PATH_MAX + 8)
#define WINRUN_DRIVE_MUTEX	"Local\\aisb.drive"	/* the allocator's */

/* The raw target mapping a drive to stage ("\??\" stage; stage must be
 * X:\...): 0, or -1 when it is not such a path or does not fit. */
int	winrun_drive_target(const char *stage, char *out, size_t len);
/* The highest letter from Z down to D whose bit (A = bit 0) is clear in
 * used, or 0 when none is. */
char	winrun_drive_pick(uint32_t used);
/* Whether s is a drive the runner may map ("D:" to "Z:"). */
int	winrun_drive_valid(const char *s);
/* The stage a raw target names (after "\??\"), or NULL. */
const char *winrun_drive_stage(const char *target);

/* ---- lease and result documents (doc.c) ---------------------------- */

struct winrun_lease {
	int		 protocol;
	char		 run_id[WINRUN_RUNID_LEN + 1];
	uint32_t	 runner_pid;
	uint64_t	 runner_start;	/* runner creation time, FILETIME */
	char		 profile[WINRUN_PROFILE_LEN + 1];	/* "" if none */
	char		 stage[WINRUN_PATH_MAX];	/* "" if none */
	char		 drive[3];	/* "Q:", "" if none (drive.c) */
	char		 drive_target[WINRUN_DRIVE_TARGET_MAX];	/* its raw
					   target, "" if none */
};

enum winrun_cleanup {
	WINRUN_CLEAN_NONE = 0,	/* nothing to remove */
	WINRUN_CLEAN_REMOVED,
	WINRUN_CLEAN_KEPT,	/* asked to keep (the stage, --keep-stage) */
	WINRUN_CLEAN_FAILED
};

#define WINRUN_HIT_TIMEOUT	0x01
#define WINRUN_HIT_MEMORY	0x02
#define WINRUN_HIT_PROCS	0x04
#define WINRUN_HIT_CPU		0x08
#define WINRUN_HIT_CANCEL	0x10
#define WINRUN_HIT_PARENT	0x20	/* the runner's parent died */

enum winrun_state {
	WINRUN_EXITED = 0,	/* the command ran; exit_code is its */
	WINRUN_KILLED,		/* a limit, cancel or the parent: see hits */
	WINRUN_FAILED		/* it did not start: error says why */
};

struct winrun_result {
	int		 protocol;
	char		 run_id[WINRUN_RUNID_LEN + 1];
	enum winrun_state state;
	uint32_t	 exit_code;
	uint32_t	 hits;		/* WINRUN_HIT_* */
	uint64_t	 wall_ms, user_ms, kernel_ms;
	uint32_t	 peak_procs;	/* job: processes ever */
	uint64_t	 peak_memory;	/* job: peak committed bytes */
	int		 appcontainer;	/* 0 only with --no-appcontainer */
	enum winrun_cleanup profile_cleanup, stage_cleanup;
	enum winrun_cleanup drive_cleanup;	/* optional when read */
	char		 error[WINRUN_ERR_MAX];	/* "" if none */
};

/* Encode into buf (at most WINRUN_DOC_MAX); returns the length or -1. */
int	winrun_lease_encode(const struct winrun_lease *, char *buf, size_t len);
int	winrun_result_encode(const struct winrun_result *, char *buf,
	    size_t len);
/*
 * Decode a document (at most WINRUN_DOC_MAX bytes, one flat JSON object;
 * unknown keys are ignored, a missing key or a protocol other than
 * WINRUN_PROTOCOL is an error, so that an older runner's file is named).
 */
int	winrun_lease_decode(const char *doc, size_t len, struct winrun_lease *,
	    char *err, size_t errlen);
int	winrun_result_decode(const char *doc, size_t len,
	    struct winrun_result *, char *err, size_t errlen);
const char *winrun_cleanup_name(enum winrun_cleanup);
const char *winrun_state_name(enum winrun_state);

/* ---- aisb clean on Windows (clean.c) ------------------------------- */

enum winrun_clean_action {
	WINRUN_CLEAN_SKIP_LIVE,	/* its runner is alive: leave it */
	WINRUN_CLEAN_REMOVE,	/* remove exactly lease.profile, lease.stage */
	WINRUN_CLEAN_REFUSE	/* the lease is not trusted: touch nothing */
};

/*
 * What the runner's process looks like now, as the caller found it:
 * alive = a process with lease.runner_pid exists; start = its creation
 * time (FILETIME), meaningful when alive.
 */
struct winrun_proc_seen {
	int		 alive;
	uint64_t	 start;
};

/*
 * The decision for one lease found in the state folder state_root: a
 * pid that is alive with the recorded start time is a live runner
 * (skipped); a dead pid, or one reused by another process (a different
 * start time), means the runner is gone and its exact profile and stage
 * are removed.  Refused (with why): a profile name that is not
 * aisb.run.<the lease's run id>, a stage that is not an absolute path
 * strictly inside stage_root, or holds "..", or a lease without a pid.
 */
enum winrun_clean_action winrun_clean_decide(const struct winrun_lease *,
	    const struct winrun_proc_seen *, const char *stage_root,
	    char *why, size_t whylen);

/* ---- network through the gate (net.c) ------------------------------ */

/*
 * The loopback-only proxy variables for a gate on 127.0.0.1:port, into
 * the env-file text form (NAME=VALUE lines), credential cred (may be
 * NULL): HTTP_PROXY, HTTPS_PROXY, NO_PROXY="" (everything through the
 * gate; Windows' variable names ignore case).  Returns the length or -1.
 */
int	winrun_gate_env(uint16_t port, const char *cred, char *buf,
	    size_t len);

/* ---- the self-test's stored result (selfrec.c) --------------------- */

#define WINRUN_SHA_HEX		64	/* hex digits of a SHA-256 */
#define WINRUN_SELFREC_MAX	16384	/* bytes of a stored record */
#define WINRUN_SELFREC_CHECKS	32	/* checks in one */
#define WINRUN_SELFREC_TEXT	240	/* bytes of one check's text, and of
					   the policy's */
#define WINRUN_SELFREC_FILE	"aisb\\selftest.txt"	/* under
					   %LOCALAPPDATA% */

struct winrun_selfrec {
	char	 time[24];			/* YYYY-MM-DDTHH:MM:SSZ, UTC */
	char	 runner[WINRUN_SHA_HEX + 1];	/* the manifest's aisb-run.exe */
	char	 launcher[WINRUN_SHA_HEX + 1];	/* the manifest's aisb.exe */
	char	 policy[WINRUN_SHA_HEX + 1];	/* SHA-256 of policy_text */
	char	 policy_text[WINRUN_SELFREC_TEXT];
	size_t	 nchecks;
	struct winrun_selfcheck {
		int	 ok;
		char	 what[WINRUN_SELFREC_TEXT];
	}	 checks[WINRUN_SELFREC_CHECKS];
	int	 failed;			/* a check failed */
};

/*
 * The policy a self-test's child runs under, as one line of text (its
 * SHA-256 binds a result to it): the protocol, the AppContainer with no
 * capability, the Job's limits of o.  0, or -1 when it does not fit.
 */
int	winrun_selftest_policy(const struct winrun_opts *o, char *buf,
	    size_t len);
/* One check's outcome (its text cut to one line): 0, or -1 when full. */
int	winrun_selfrec_add(struct winrun_selfrec *, int ok, const char *what);
/* The record's text into buf: its length, or -1 when it does not fit. */
int	winrun_selfrec_format(const struct winrun_selfrec *, char *buf,
	    size_t len);
/* A record's text (at most WINRUN_SELFREC_MAX bytes): 0, or -1 with err
 * naming the line; anything but a whole record is refused. */
int	winrun_selfrec_parse(const char *text, size_t len,
	    struct winrun_selfrec *, char *err, size_t errlen);
/*
 * 0 when the record was made with these programs (the manifest's
 * hashes) and this policy's hash; else -1 with why naming the first
 * that changed and both hashes.
 */
int	winrun_selfrec_stale(const struct winrun_selfrec *, const char *runner,
	    const char *launcher, const char *policy, char *why, size_t len);

#endif
