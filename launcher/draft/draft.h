/*
 * A snapshot session's draft (docs/snapshot.md, "Using snapshot
 * sessions"), the part both launchers share: the state file, the change
 * set computed when the command has ended, and aisb changes, apply,
 * discard, recover and transactions.  The Linux launcher
 * (launcher/snapshot.c) and the Windows one (launcher/win32/) run this
 * same code over libaisbsnap; what differs between the two systems (a
 * lock, the terminal, whether a launcher still runs, file ownership) is
 * in the draft_os_* functions, launcher/draft_posix.c and
 * launcher/win32/draft_win32.c.
 *
 * A session folder (sdir, private to the user) of a snapshot session:
 *   snapshot	the draft's state, "key value" lines, replaced whole
 *		(DRAFT_STATE_MAX bytes at most)
 *   manifest	what the workspace held when it was staged (snap.h)
 *   changes	the change set, once the command succeeded
 *   stage/	the copy the command worked on, until applied or dropped
 *   tx/N/	the journal, backups and new contents of the Nth apply
 *		(or of an undo)
 *   snapshot.lock  one apply, discard or recover at a time
 *   launcher	written by the launcher: how draft_os_launcher_running
 *		tells whether it still runs
 *
 * Functions returning an int return 0 or one of common/exitcode.h's
 * codes, having printed what went wrong (what, where, how to fix) on
 * stderr, prefixed "aisb: ".  id is the session's id as the user types
 * it after aisb changes/apply/...
 */
#ifndef AISB_DRAFT_H
#define AISB_DRAFT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "snap/snap.h"

#define DRAFT_PATH_MAX		4096	/* bytes of a workspace or stage path */
#define DRAFT_STATE_MAX		(128 * 1024)	/* bytes of a state file:
						   room for every pattern */
#define DRAFT_SUMMARY		50	/* change lines a session prints */
#define DRAFT_MAX_TX		1000	/* apply attempts of one draft */
#define DRAFT_ANSWER		64	/* bytes of an answer to the prompt */
#define DRAFT_MAX_EXCLUDE	256	/* snapshot_exclude patterns (the
					   launchers' list bound) */
#define DRAFT_MARK_HEX		8	/* the question's mark, hex digits */
#define DRAFT_NAME_MAX		64	/* bytes of a persistent draft's name */

/* A draft's states, as the state file and aisb transactions say them. */
#define DRAFT_STAGED	"staged"	/* the command is running */
#define DRAFT_KEPT	"kept"		/* changes wait for apply */
#define DRAFT_UNCHANGED	"unchanged"	/* the command changed nothing */
#define DRAFT_FAILED	"failed"	/* nothing proposed */
#define DRAFT_APPLYING	"applying"	/* a transaction runs */
#define DRAFT_APPLIED	"applied"
#define DRAFT_DISCARDED	"discarded"
#define DRAFT_CONFLICT	"conflict"	/* refused; nothing written */
#define DRAFT_RECOVERY	"recovery"	/* interrupted: aisb recover */
#define DRAFT_UNDOING	"undoing"	/* an undo's transaction runs */
#define DRAFT_UNDONE	"undone"	/* applied, then taken back */

/* What to do with the changes when the session ends. */
enum draft_apply {
	DRAFT_APPLY_AUTO = 0,	/* ask when stdin and stderr are a terminal,
				   else keep the draft */
	DRAFT_APPLY_ASK,	/* ask on the terminal; none: keep */
	DRAFT_APPLY_NEVER,	/* keep the draft; aisb apply ID */
	DRAFT_APPLY_DRAFT	/* a session on a persistent draft: its changes
				   go into the draft's tree, never asked (the
				   workspace waits for aisb draft commit) */
};

/*
 * What the user config says of a snapshot's stage and its way back
 * (docs/snapshot.md, "What the user config tightens"), kept in the
 * draft's state file so that its change set, apply, commit and sync all
 * use what its session used.  draft_conf_default: none of it, the
 * built-in bounds.
 */
struct draft_conf {
	char *const		*exclude;	/* snapshot_exclude */
	size_t			 nexclude;
	char *const		*deny;		/* writeback_deny: staged, shown,
						   never written back */
	size_t			 ndeny;
	struct snap_limits	 lim;		/* snapshot_max_*: at most
						   snap_limits_default's */
	int			 no_writeback;	/* writeback: false */
	const char		*policy;	/* the policy file the session
						   runs under; NULL: none known
						   (a shared gate's) */
};
void	 draft_conf_default(struct draft_conf *);
/* 0 when every bound of lim is at least 1 and at most the built-in one
 * (snap_limits_default); else -1 with err naming the first that is not. */
int	 draft_limits_ok(const struct snap_limits *lim, char *err,
	    size_t errlen);

/* What a launcher records of a draft (its session record). */
struct draft_info {
	char		 workspace[DRAFT_PATH_MAX];
	char		 stage[DRAFT_PATH_MAX];	/* sdir/stage */
	char		 outcome[16];		/* DRAFT_* */
	char		 digest[SNAP_SHA256_HEX + 1];	/* or "" */
	unsigned long long entries, bytes, excluded, cloned, nchanges;
	long long	 stage_ms;	/* copying the workspace */
	long long	 changes_ms;	/* computing and saving the change set */
	int		 staged;	/* stage made, state file written */
	/* a session on a persistent draft (draft_persist_open) */
	char		 draft_dir[DRAFT_PATH_MAX];	/* "" none */
	char		 draft_name[DRAFT_NAME_MAX + 1];
	unsigned long	 draft_revision;	/* as the session ends */
	intptr_t	 draft_lock;	/* held for the whole session */
};

/*
 * Before the command: copies workspace (an absolute, real path without a
 * line break) into sdir/stage with the default rules plus conf's (NULL:
 * draft_conf_default), within conf's bounds,
 * writes sdir/manifest and the state file ("staged").  prepare, when not
 * NULL, is called on the stage after it is made and before the manifest
 * is saved (the Linux launcher gives the stage to the workspace's owner
 * there); it returns 0 or -1 with err filled.  owner_uid and owner_gid
 * are kept for draft_os_own_applied (0 where there is no such thing).
 * Quiet 0: one line on stderr with the numbers.  0, or 78 (a bound, a
 * bad pattern) or 77 after err is filled; on failure the stage is
 * removed and info->outcome is "failed".
 */
int	 draft_stage(const char *sdir, const char *workspace,
	    const struct draft_conf *conf, unsigned owner_uid,
	    unsigned owner_gid,
	    int (*prepare)(const char *stage, void *arg, char *err,
		size_t errlen), void *arg,
	    int quiet, struct draft_info *info, char *err, size_t errlen);

/*
 * After the command exited code: nothing proposed unless 0 (the stage
 * removed, "failed"); else the change set saved and summed up, then, as
 * apply says, the question and the write-back.  Returns the session's
 * exit code: code, or 78 for a change set past the bounds, or apply's
 * when it was asked and did not apply cleanly (65, 74).  info (filled by
 * draft_stage) receives the outcome, digest and counts.
 */
int	 draft_end(const char *sdir, const char *id, int code,
	    enum draft_apply apply, int quiet, struct draft_info *info);

/*
 * The default rules and the patterns the user configured, the reading of
 * owner_uid:owner_gid, and where git reads its configuration for that
 * user (snap_rules_git_environ): a snapshot's stage and change set, and a
 * direct session's git guard (core.hooksPath, included files), read the
 * same files.  NULL with err.
 */
struct snap_rules *draft_rules(char *const *exclude, size_t n,
	    unsigned owner_uid, unsigned owner_gid, char *err, size_t errlen);

/*
 * Before what aisb asks at a terminal after a command ran: the terminal
 * put back in order (whatever the command's output left hiding text),
 * and a line opening aisb's block with mark, drawn after the command
 * ended (draft_os_random_hex), which the question repeats; a forged
 * question the command printed stays above it, without the mark.  The
 * snapshot's question and a bind session's git keys use it.
 */
void	 draft_ask_header(const char *id, const char *mark);
/*
 * Asks on stderr ("aisb [mark M]: " when mark is not "", question, name
 * escaped as the summary's names are, choices) and reads one answer from
 * in, the rest of its line dropped: its first byte, lower case ('\n' for
 * an empty one), or EOF.
 */
int	 draft_ask_answer(FILE *in, const char *mark, const char *question,
	    const char *name, const char *choices);

/*
 * draft_end's summary of a kept draft (nchanges to write into workspace,
 * their change set ch, the copy at stage, saved in sdir) and, as apply
 * says, the question (launcher/draft_ask.c): 1 when the person said yes,
 * 0 to keep the draft (said on stderr when asked for and impossible).
 */
int	 draft_end_ask(const char *sdir, const char *id, const char *workspace,
	    const char *stage, unsigned long long nchanges,
	    const struct snap_changes *ch, enum draft_apply apply, int quiet);

/* aisb changes ID [--diff], apply ID, discard ID, recover ID.  apply's
 * flags: DRAFT_QUIET, and DRAFT_REVIEWED (apply ID --reviewed: the
 * policy changed since the draft was made, and the user looked again). */
#define DRAFT_QUIET	0x01
#define DRAFT_REVIEWED	0x02
int	 draft_changes(const char *sdir, const char *id, int diff);
int	 draft_apply(const char *sdir, const char *id, int flags);
int	 draft_discard(const char *sdir, const char *id);
int	 draft_recover(const char *sdir, const char *id);
/*
 * aisb undo ID (undo.c): the applied draft's transaction taken back by
 * a transaction of its own (snap_tx_undo), refused with 65 naming the
 * file when the host changed a target since; 74 interrupted (aisb
 * recover ID), 78 nothing applied to undo.
 */
int	 draft_undo(const char *sdir, const char *id, int quiet);

/*
 * aisb transactions: every snapshot session among the folders of
 * sessions_dir whose name is an id of idlen lowercase hex digits (at
 * most 4096 of them), with its draft's state and transactions, on
 * stdout.
 */
int	 draft_list(const char *sessions_dir, size_t idlen);

/*
 * aisb clean's step for one session folder: a draft still "staged" whose
 * launcher is gone (killed before the command ended) proposes nothing;
 * its stage is removed and the draft becomes "failed", said on stdout.
 * 1 when a stage was removed, 0 when there was nothing to do (not a
 * snapshot session, another state, a launcher that runs or cannot be
 * told), -1 on error (said).
 */
int	 draft_reap(const char *sdir, const char *id);

/*
 * Retention (aisb clean --older-than, the user config's retention cap):
 * the session folder sdir removed, unless its draft waits for approval
 * (kept, conflict), it is staged, a transaction of it is not settled, its
 * state cannot be read, or another aisb holds its draft (then 0 with the
 * reason in *why).  1 removed; -1 on error (said).  Decided and removed
 * under the draft's lock.
 */
int	 draft_retire(const char *sdir, const char **why);
/*
 * Retention's side of a persistent draft's commits: its transaction
 * tx/N (ddir's) removed, unless it is the last one and not settled
 * (applying, recovery, undoing), the state cannot be read, or a session
 * or another aisb holds the draft (then 0 with the reason in *why).  1
 * removed; -1 on error (said).  The draft's folder itself stays.
 */
int	 draft_retire_tx(const char *ddir, unsigned n, const char **why);

/* For aisb sessions show: one "# snapshot: ..." line when sdir is a
 * snapshot session. */
void	 draft_show(const char *sdir, FILE *out);

/* ---- drafts that persist (persist.c; docs/snapshot.md) ---------------- */

/*
 * A persistent draft is bound to a workspace and a name: its folder,
 * ddir = drafts_dir/KEY-NAME (KEY: 16 hex digits of the SHA-256 of the
 * workspace's real path), is laid out as a snapshot session's (the state
 * file with its name and revision, manifest: the base, what the
 * workspace held when the draft last took it, stage/: the draft's tree,
 * changes, tx/N: its commits).  A session on it (aisb --draft NAME)
 * stages the tree, not the workspace, and its changes go into the tree.
 */
/* A name: 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
int	 draft_name_ok(const char *name);
/* ddir into out[DRAFT_PATH_MAX]: 0, or -1 (said). */
int	 draft_persist_path(const char *drafts_dir, const char *workspace,
	    const char *name, char *out);
/*
 * Before a session on the draft: taken for the whole session (74 when
 * another session or command has it, naming it), made from workspace
 * when there is none (or it was discarded or committed), else brought
 * up to date: the workspace's edits since its base that touch nothing
 * the draft changed are taken in (three-way); one that does (the same
 * file, a folder above or below) is 65 naming it, and nothing runs.
 * 0 with info's draft_* set; else an exit
 * code, said.  The draft's tree is the workspace owner's
 * (draft_os_own_tree).
 */
int	 draft_persist_open(const char *ddir, const char *workspace,
	    const char *name, const char *session_id,
	    const struct draft_conf *conf, unsigned owner_uid,
	    unsigned owner_gid, int quiet, struct draft_info *info);
/* After the session's draft_end: its revision counted, said; released. */
void	 draft_persist_close(struct draft_info *info, int quiet);
/* aisb draft status|changes|commit|discard|recover NAME; expect: the
 * revision commit must find (-1: any). */
int	 draft_persist_status(const char *ddir, const char *name);
int	 draft_persist_changes(const char *ddir, const char *name, int diff);
int	 draft_persist_commit(const char *ddir, const char *name, long expect);
int	 draft_persist_discard(const char *ddir, const char *name);
int	 draft_persist_recover(const char *ddir, const char *name);
/* aisb draft ls: the drafts under drafts_dir, on stdout. */
int	 draft_persist_list(const char *drafts_dir);

/* ---- what differs between systems ------------------------------------ */

/*
 * Takes sdir/snapshot.lock without waiting: 0 with *lock set; -2 when
 * another holder has it (said on stderr unless quiet); -1 on error
 * (said).
 */
int	 draft_os_lock(const char *sdir, intptr_t *lock, int quiet);
void	 draft_os_unlock(intptr_t lock);
/*
 * Where to ask "write these changes?": stdin when it is a terminal (and,
 * unless always, stderr is too), else with always the console or
 * controlling terminal; NULL when there is none.  What waits to be read
 * there is discarded: an answer typed ahead, or one the terminal itself
 * gave to a query in the command's output, is not taken for a person's.
 * The caller fcloses it.
 */
FILE	*draft_os_terminal(int always);
/* 1 when out is a terminal that acts on escape sequences (where the
 * command's output may have left it in any state), else 0. */
int	 draft_os_is_terminal(FILE *out);
/* nhex random lower-case hex digits (even, at most 64) and a NUL into
 * out: 0, or -1. */
int	 draft_os_random_hex(char *out, size_t nhex);
/* 1 while the launcher that wrote sdir/launcher runs, or when that
 * cannot be told; 0 when it is gone. */
int	 draft_os_launcher_running(const char *sdir);
/* After an apply into workspace: the files it created or replaced given
 * to owner_uid:owner_gid where that means something (root applying to
 * another user's tree); failures said, not fatal.  rolled_back: the
 * transaction was undone instead (snap_tx_recover, or apply's own roll
 * back): what it put back from its backups (files modified or deleted,
 * folders deleted) and now belongs to the one who applied is given. */
void	 draft_os_own_applied(const char *workspace, unsigned owner_uid,
	    unsigned owner_gid, const struct snap_changes *, int rolled_back);
/*
 * A tree aisb made in its private folder given to owner_uid:owner_gid,
 * entry by entry without following a link, where that means something
 * (root making a persistent draft of another user's workspace): 0, or
 * -1 with err.
 */
int	 draft_os_own_tree(const char *root, unsigned owner_uid,
	    unsigned owner_gid, char *err, size_t errlen);
/*
 * The home folder of the user owner_uid, as git finds it for that user,
 * into out[len]: 1 when this process is that user (its own HOME), 0 when
 * not (the system's record of the user), -1 when there is none.
 */
int	 draft_os_owner_home(unsigned owner_uid, char *out, size_t len);
/* The system's git configuration files, NULL-terminated. */
const char *const *draft_os_git_system(void);
/* Whether path is absolute on this system ("/..." or "C:\..."). */
int	 draft_os_path_absolute(const char *path);
/* The monotonic clock, in milliseconds. */
long long draft_os_now_ms(void);

#endif
