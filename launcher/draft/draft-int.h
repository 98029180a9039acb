/*
 * What the draft's files share (draft.c: the state file and the commands
 * on a draft; stage.c: the stage and the session's end).  Only they
 * include this.
 */
#ifndef AISB_DRAFT_INT_H
#define AISB_DRAFT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "draft/draft.h"

/*
 * SESSION/snapshot, "key value" lines (DRAFT_STATE_MAX bytes):
 *   workspace PATH   stage PATH   owner UID:GID   state WORD   exit N
 *   changes N   digest HEX   tx N   applied N   updated EPOCH
 *   [name NAME   revision N]   exclude PATTERN...   deny PATTERN...
 *   [limits ENTRIES BYTES FILE_BYTES DEPTH]   [writeback off]
 *   [policy SHA256 PATH]: the policy file's bytes as the session began
 * Paths hold no line break (refused when staging).  A deny or limits
 * line that cannot be kept makes the file corrupt: never a pattern
 * silently dropped, never a bound past the built-in one.
 */
struct dstate {
	char		 workspace[DRAFT_PATH_MAX];
	char		 stage[DRAFT_PATH_MAX];
	char		 state[16];
	char		 digest[SNAP_SHA256_HEX + 1];
	unsigned	 owner_uid, owner_gid;
	int		 exitcode;
	unsigned long long nchanges;
	unsigned	 tx;		/* the last transaction's number; 0 none */
	unsigned	 applied;	/* the one that applied the draft; 0 */
	/* a persistent draft (persist.c): its name ("" for a session's
	 * draft) and revision (each change of its tree counts one) */
	char		 name[DRAFT_NAME_MAX + 1];
	unsigned long	 revision;
	char		*exclude[DRAFT_MAX_EXCLUDE];
	size_t		 nexclude;
	char		*deny[DRAFT_MAX_EXCLUDE];	/* writeback_deny */
	size_t		 ndeny;
	int		 borrowed;	/* exclude[], deny[]: the caller's */
	struct snap_limits lim;		/* the bounds its session had */
	int		 no_writeback;	/* writeback: false */
	char		 policy[DRAFT_PATH_MAX];	/* "": none known */
	char		 policy_sha[SNAP_SHA256_HEX + 1];
};

/* c pointing into st (valid while st is). */
void	draft_conf_of(const struct dstate *st, struct draft_conf *c);
/* draft_rules with st's patterns and owner, its writeback_deny too. */
struct snap_rules *draft_rules_of(const struct dstate *st, char *err,
	    size_t errlen);

/* sdir/name into out[DRAFT_PATH_MAX]: 0, or -1 (said) when too long. */
int	draft_path(char *out, const char *sdir, const char *name);
/* sdir/tx/n into out[DRAFT_PATH_MAX]: 0, or -1 (said). */
int	draft_tx_path(const char *sdir, unsigned n, char *out);
/* draft_os_lock as an exit code: 0 with *lock set, 74 when another aisb
 * holds it, 77 on error (said). */
int	draft_lock(const char *sdir, intptr_t *lock);
/* sdir's draft locked and loaded into st for a command that writes: 0
 * with both held; or an exit code, said, nothing held (a transaction
 * left interrupted: 74, recover it first). */
int	draft_take(const char *sdir, const char *id, struct dstate *st,
	    intptr_t *lock);
/* The state of transaction tx once it returned rc (SNAP_OK: applied;
 * its journal unreadable: applying, to be recovered). */
enum snap_tx_state draft_tx_outcome(const char *tx, int rc);
/* "draft " for a persistent draft (its commands are aisb draft ...),
 * else "". */
const char *draft_cmd(const struct dstate *st);
/* draft_apply with the draft taken (draft_take) and st loaded. */
int	draft_apply_locked(const char *sdir, const char *id, struct dstate *st,
	    int flags);
/* The SHA-256 of the file at path into hex: 0, or -1 (errno). */
int	draft_policy_sha(const char *path, char *hex);
/* 1 when the policy st's session ran under is no longer what its file
 * holds (changed, or gone), with why; 0 when it is, or none is known. */
int	draft_policy_moved(const struct dstate *st, char *why, size_t len);
/* The change set transaction tx kept, given to the draft's owner as an
 * apply's would be (draft_os_own_applied); rolled_back: what a roll back
 * put back. */
void	draft_own_settled(const struct dstate *st, const char *tx,
	    int rolled_back);
void	dstate_free(struct dstate *st);
void	dstate_set(struct dstate *st, const char *state);
int	dstate_is(const struct dstate *st, const char *state);
int	dstate_save(const char *sdir, const struct dstate *st, char *err,
	    size_t errlen);
/*
 * The state of the session in sdir.  0, or -1 with err (errno ENOENT: a
 * session that is not a snapshot session).
 */
int	dstate_load(const char *sdir, struct dstate *st, char *err,
	    size_t errlen);
/* dstate_load, saying why on stderr: 0 or -1. */
int	dstate_load_said(const char *sdir, struct dstate *st);

#endif
