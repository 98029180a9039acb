/*
 * aisb.exe, the Windows launcher (docs/windows.md, "aisb on Windows"):
 * its pure logic.  Plain C with no Win32 call, unit-tested on Linux
 * (tests/unit/test_wlaunch.c); launcher/win32/aisb_win32.c does the
 * Win32 side and calls these.  Strings are UTF-8.
 *
 * Every session on Windows is a snapshot session: the workspace is
 * staged with the draft code (launcher/draft.h), aisb-run.exe runs the
 * command on the stage with --keep-stage, and the change set is shown,
 * asked about and applied at the end.  Functions that can fail return -1
 * with err filled (what, where, how to fix; never a secret), or 0.
 */
#ifndef AISB_WLAUNCH_H
#define AISB_WLAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "draft/draft.h"
#include "win32/winrun.h"

/*
 * A session's id: 24 lowercase hex digits, as the Linux launcher's
 * (LAUNCH_ID_HEX), so that aisb transactions lists both with one idlen
 * (draft_list).  It is the first 24 digits of the runner's 32-digit run
 * id, so the AppContainer profile aisb.run.<run id> names its session.
 */
#define WLAUNCH_ID_HEX		24
#define WLAUNCH_MANIFEST	"aisb-manifest.txt"	/* beside aisb.exe: the
							   build's identities */
#define WLAUNCH_CRED_FILE_MAX	512	/* bytes of --gate-credential-file */
#define WLAUNCH_CRED_USER_MAX	64	/* bytes of its user */
#define WLAUNCH_CRED_SECRET_MAX	63	/* bytes of its secret (the URL's
					   userinfo fits winrun_gate_env's 128) */
#define WLAUNCH_PATTERN_MAX	255	/* bytes of one --snapshot-exclude (the
					   snapshot rules' bound, as on Linux) */
#define WLAUNCH_LAUNCHER_MAX	64	/* bytes of sdir\launcher */
#define WLAUNCH_RECORD_MAX	(WINRUN_CMDLINE_MAX + 8192)	/* sdir\record */
/* the sessions folder under %LOCALAPPDATA% */
#define WLAUNCH_SESSIONS	"aisb\\sessions"

enum wlaunch_cmd {
	WLAUNCH_RUN = 0,	/* aisb [options] [--] COMMAND [ARG...] */
	WLAUNCH_CHANGES,	/* aisb changes ID [--diff] */
	WLAUNCH_APPLY,		/* aisb apply ID */
	WLAUNCH_DISCARD,	/* aisb discard ID */
	WLAUNCH_RECOVER,	/* aisb recover ID */
	WLAUNCH_UNDO,		/* aisb undo ID */
	WLAUNCH_TRANSACTIONS,	/* aisb transactions */
	WLAUNCH_CLEAN,		/* aisb clean */
	WLAUNCH_DOCTOR,		/* aisb doctor: the build's identity */
	WLAUNCH_HELP,
	WLAUNCH_VERSION		/* aisb --version | version */
};

struct wlaunch_opts {
	enum wlaunch_cmd cmd;
	const char	*workspace;	/* --workspace; NULL: the current folder */
	enum draft_apply apply;		/* --apply auto|ask|never */
	char		*exclude[DRAFT_MAX_EXCLUDE];	/* --snapshot-exclude */
	size_t		 nexclude;
	/* limits for the runner, as given (decimal, checked); NULL: its
	 * default */
	const char	*timeout, *memory, *procs, *cpu;
	const char	*env[WINRUN_ENV_MAX];	/* --env NAME */
	size_t		 nenv;
	int		 quiet;
	uint16_t	 gate_port;	/* --gate 127.0.0.1:PORT; 0: none */
	const char	*cred_file;	/* --gate-credential-file */
	int		 no_appcontainer;	/* tests only, as the runner's */
	const char	*id;		/* changes/apply/discard/recover/undo */
	int		 diff;		/* changes --diff */
	int		 argc;		/* the command */
	char *const	*argv;
};

/*
 * Parses aisb.exe's command line (argv[0] is the program).  test_env is
 * WINRUN_TEST_ENV's value or NULL: --no-appcontainer is refused unless it
 * is WINRUN_TEST_ENV_VALUE, as the runner refuses it.  -1 is a usage
 * error (exit 64 with wlaunch_usage).
 */
int	wlaunch_opts_parse(struct wlaunch_opts *, int argc, char *const *argv,
	    const char *test_env, char *err, size_t errlen);
extern const char wlaunch_usage[];

/* "127.0.0.1:PORT" only (the gate listens on loopback): 0 with *port. */
int	wlaunch_gate_parse(const char *s, uint16_t *port, char *err,
	    size_t errlen);

/*
 * The credential file's text (at most WLAUNCH_CRED_FILE_MAX bytes): one
 * line "user:secret", an optional line break after it, nothing else.
 * user: 1 to WLAUNCH_CRED_USER_MAX of [A-Za-z0-9._-]; secret: 1 to
 * WLAUNCH_CRED_SECRET_MAX of [A-Za-z0-9._~-] (it goes into a proxy URL
 * unquoted).  cred receives "user:secret" (credlen at least
 * WLAUNCH_CRED_USER_MAX + WLAUNCH_CRED_SECRET_MAX + 2); the user alone
 * into user (WLAUNCH_CRED_USER_MAX + 1).  err names the file's problem,
 * never its content.
 */
int	wlaunch_cred_parse(const char *text, size_t len, char *cred,
	    size_t credlen, char *user, char *err, size_t errlen);

/* Whether id is a session id (WLAUNCH_ID_HEX lowercase hex digits). */
int	wlaunch_id_valid(const char *id);

/*
 * The sessions folder: localappdata "\\" WLAUNCH_SESSIONS; localappdata
 * must be an absolute path.  With id (may be NULL) the session's folder
 * below it.  The result is bounded so that the runner's files in it
 * (sdir\result.json, sdir\stage) fit WINRUN_PATH_MAX.
 */
int	wlaunch_state_path(const char *localappdata, const char *id, char *out,
	    size_t len, char *err, size_t errlen);

/*
 * The runner's argv, argv[0] = runner (aisb-run.exe next to aisb.exe):
 *   --run-id RID --lease SDIR\lease.json --result SDIR\result.json
 *   --stage SDIR\stage --keep-stage [--no-appcontainer]
 *   [--gate-port P --env-file ENVFILE] [--timeout S] [--memory M]
 *   [--procs N] [--cpu S] [--env NAME]... -- COMMAND [ARG...]
 * One argv whatever the mode: --no-appcontainer only adds its flag.
 * env_file is NULL without a gate.  The vector and its strings are
 * allocated; wlaunch_argv_free frees them.
 */
int	wlaunch_runner_argv(const struct wlaunch_opts *, const char *runner,
	    const char *sdir, const char *run_id, const char *env_file,
	    char ***argvp, int *argcp, char *err, size_t errlen);
void	wlaunch_argv_free(char **argv);

/*
 * The session's exit code from the runner's result (NULL: none could be
 * read): exited, its command's exit code; killed by the timeout or the
 * CPU limit, 124; by a cancel or the caller's death, 130; failed, or no
 * result, 77.  Anything but 0 proposes nothing.
 */
int	wlaunch_code(const struct winrun_result *);

/* sdir\launcher: "PID START\n", START the creation FILETIME. */
int	wlaunch_launcher_format(uint32_t pid, uint64_t start, char *buf,
	    size_t len);
/* 0 with pid and start; -1 when it is not such a line. */
int	wlaunch_launcher_parse(const char *text, uint32_t *pid,
	    uint64_t *start);

/*
 * sdir\record, "key value" lines: id, run_id, workspace, command (the
 * command line as the runner got it: the user's own words; the gate's
 * credential is never in it), gate, gate_user, state, exit_code,
 * limits_hit, wall_ms, appcontainer, outcome, changes, digest, exit.
 * r may be NULL (no result), cmdline NULL.  Returns the length or -1.
 */
struct wlaunch_record {
	const char	*id, *run_id, *workspace, *cmdline, *gate_user;
	uint16_t	 gate_port;
	const struct winrun_result *result;
	const struct draft_info *draft;
	int		 code;
};
int	wlaunch_record_format(const struct wlaunch_record *, char *buf,
	    size_t len);

#endif
