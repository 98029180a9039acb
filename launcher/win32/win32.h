/*
 * aisb-run.exe's Win32 side: the functions its files share.  Built only
 * for a Windows host (configure --host=x86_64-w64-mingw32).
 */
#ifndef AISB_WIN32_H
#define AISB_WIN32_H

#include <windows.h>

#include "win32/winrun.h"

/* ---- strings and files (util_win32.c; aisb-run and aisb) ----------- */

/* UTF-8 <-> UTF-16; NULL on a bad sequence or no memory.  Caller frees. */
wchar_t	*w32_wide(const char *s);
wchar_t	*w32_wide_n(const char *s, size_t len);
char	*w32_utf8(const wchar_t *w);
/* The text of a Win32 error, UTF-8, in buf (no trailing newline). */
const char *w32_strerror(DWORD code, char *buf, size_t len);
/* Writes len bytes to path through path.tmp and a replacing rename. */
int	w32_write_atomic(const char *path, const char *data, size_t len,
	    char *err, size_t errlen);
/* Reads at most max bytes of path; -1 if larger. Caller frees *out. */
int	w32_read_file(const char *path, size_t max, char **out, size_t *len,
	    char *err, size_t errlen);
/* FILETIME of a process's creation, as an integer; 0 if unknown. */
uint64_t w32_process_start(HANDLE proc);
/* 16 random bytes from the system's generator. */
int	w32_random(uint8_t out[16]);
/* An inheritable copy of the standard handle which (STD_*_HANDLE), or of
 * nul when there is none; NULL on failure. */
HANDLE	w32_inheritable(DWORD which, HANDLE nul);

/*
 * A security descriptor whose DACL grants the current user full control
 * and nobody else anything (protected: no ACE inherited from the parent),
 * inherited by what is made inside.  The caller LocalFrees *sd.
 */
int	w32_private_sd(PSECURITY_DESCRIPTOR *sd, char *err, size_t errlen);
/*
 * Makes folder path with sd's DACL.  must_be_new: it must not exist (a
 * session folder).  Otherwise an existing folder is taken as it is, unless
 * it is a reparse point (a junction could send aisb's files elsewhere).
 */
int	w32_make_folder(const char *path, PSECURITY_DESCRIPTOR sd,
	    int must_be_new, char *err, size_t errlen);

/* ---- the runner's identity (ident_win32.c) ------------------------- */

/*
 * runner (aisb-run.exe beside aisb.exe) checked against the build
 * manifest beside it: a handle that keeps it from being changed, to be
 * closed once the runner has started; NULL with err when the manifest is
 * missing or names another hash.  have (NULL, or 65 bytes): the
 * runner's SHA-256 as hashed.
 */
HANDLE	w32_runner_check(const char *runner, char *have, char *err,
	    size_t errlen);
/* The manifest beside runner (WLAUNCH_MANIFEST) into out: 0 or -1. */
int	w32_manifest_path(const char *runner, char *out, size_t len,
	    char *err, size_t errlen);
/* The manifest's "file NAME SHA256" hash into hex (65): 0, or -1 with
 * err (no manifest, no such line). */
int	w32_manifest_hash(const char *manifest, const char *name, char *hex,
	    char *err, size_t errlen);
/* aisb doctor, aisb-run --self-test: the manifest beside runner on
 * stdout, then whether runner is the one it names, with its verified
 * hash: 0, or 77 (said). */
int	w32_identity(const char *runner);

/* ---- the self-test's stored result (selfrec_win32.c) --------------- */

/*
 * A record for a self-test of runner (this aisb-run.exe) under o's
 * limits: the time, the policy, and (printed as doctor prints them) the
 * manifest and the runner verified against it.  1 when the record is
 * bound to the manifest's hashes, 0 when it may not be stored (no
 * manifest, or the runner is not the one it names: said).
 */
int	w32_selfrec_begin(struct winrun_selfrec *, const char *runner,
	    const struct winrun_opts *o);
/* Stores a bound record in %LOCALAPPDATA%\aisb\selftest.txt (atomic);
 * says where, or why not. */
void	w32_selfrec_end(const struct winrun_selfrec *, int bound);
/* aisb doctor: the stored result when it was made with the manifest's
 * programs and the default policy; else none, stale (which hash) or
 * ignored (why), and how to run a new one. */
void	w32_selfrec_show(const char *runner);

/* ---- the AppContainer (appc_win32.c) ------------------------------- */

struct w32_appc {
	wchar_t	*name;		/* aisb.run.<id> */
	PSID	 sid;		/* from CreateAppContainerProfile */
	SID_AND_ATTRIBUTES caps[2];	/* capabilities granted */
	DWORD	 ncaps;
	int	 created;
	int	 loopback;	/* exemption added: remove at the end */
	HANDLE	 wfp;		/* WFP dynamic session, or NULL */
};

/* Whether this host has AppContainers at all (not Wine, Windows 8+). */
int	w32_appc_available(char *err, size_t errlen);
/* Creates the unique profile (fails if it exists: ids never repeat). */
int	w32_appc_create(struct w32_appc *, const char *name, uint16_t gate_port,
	    char *err, size_t errlen);
/* Grants the profile's SID full access to folder (inherited). */
int	w32_appc_grant(struct w32_appc *, const char *folder, DWORD access,
	    char *err, size_t errlen);
/* The suspended child's token: AppContainer, exactly our SID. */
int	w32_appc_verify(struct w32_appc *, HANDLE proc, char *err,
	    size_t errlen);
/* Network to the gate only: loopback exemption + WFP (needs admin). */
int	w32_appc_network(struct w32_appc *, uint16_t gate_port, char *err,
	    size_t errlen);
/* Takes the grant back (a stage kept for writeback). */
int	w32_appc_revoke(struct w32_appc *, const char *folder, char *err,
	    size_t errlen);
/* Undoes everything; returns 0 if the profile is gone. */
int	w32_appc_delete(struct w32_appc *, char *err, size_t errlen);
/* The profile by name only (aisb clean of a dead runner). */
int	w32_appc_delete_name(const char *name, char *err, size_t errlen);

/* ---- one run (run_win32.c) ----------------------------------------- */

/* Runs o's command; fills r; returns the runner's exit code. */
int	w32_run(const struct winrun_opts *o, struct winrun_result *r);
/* The result is written: a console close event held by the runner's
 * handler may end the process now (run_win32.c). */
void	w32_run_finished(void);
/* Removes a folder tree without following links; 0 if it is gone. */
int	w32_remove_tree(const wchar_t *path, char *err, size_t errlen);

/* ---- the stage's drive (drive_win32.c) ---------------------------- */

/* Called with a letter and its target before it is defined: 0 or -1. */
struct w32_drive_record {
	int	(*fn)(void *ctx, const char *drive, const char *target);
	void	*ctx;
};
/* A free letter (drive, "Q:") mapped to stage under the allocator's
 * mutex, recorded first with rec (NULL: not), its raw target into
 * target (WINRUN_DRIVE_TARGET_MAX): 0, or -1 with err and nothing
 * mapped. */
int	w32_drive_map(const char *stage, const struct w32_drive_record *rec,
	    char *drive, char *target, char *err, size_t errlen);
/* Removes exactly drive's definition with target: 0; 1 (said in err)
 * when drive maps to target no more (nothing removed); -1 with err. */
int	w32_drive_unmap(const char *drive, const char *target, char *err,
	    size_t errlen);
/* Whether drive's root is the stage folder (same volume and file). */
int	w32_drive_is_stage(const char *drive, const char *stage);

/* ---- aisb clean's step (clean_win32.c) ---------------------------- */

/* Acts on one lease; prints what it did; 0 done/skipped, 1 refused. */
int	w32_clean(const char *lease, const char *stage_root);

/* ---- the host self-test (selftest_win32.c) ------------------------- */

int	w32_self_test(const struct winrun_opts *);
int	w32_self_test_child(int argc, char **argv);

#endif
