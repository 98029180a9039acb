/*
 * Snapshot sessions, the launcher's side (docs/snapshot.md, "Using
 * snapshot sessions"): the stage in the session folder, mounted instead
 * of the workspace; after the command, its change set kept as a draft;
 * aisb changes|apply|discard|recover ID and aisb transactions.  The
 * copy, the change set and the transactions are libaisbsnap's (snap/).
 *
 * A session folder of a snapshot session holds:
 *   snapshot	the draft's state, "key value" lines, replaced whole
 *		(LAUNCH_SNAP_STATE_MAX bytes at most)
 *   manifest	what the workspace held when it was staged (snap.h)
 *   changes	the change set, once the command succeeded
 *   stage/	the copy the command worked on, until applied or dropped
 *   tx/N/	the journal and backups of the Nth apply
 *   snapshot.lock  flock(2): one apply, discard or recover at a time
 */
#ifndef AISB_SNAPSHOT_H
#define AISB_SNAPSHOT_H

#include <stddef.h>
#include <stdio.h>

#include "ids.h"
#include "options.h"
#include "session.h"

#define LAUNCH_SNAP_STATE_MAX	(16 * 1024)	/* bytes of a state file */
#define LAUNCH_SNAP_SUMMARY	50	/* change lines a session prints */
#define LAUNCH_SNAP_MAX_TX	1000	/* apply attempts of one draft */
#define LAUNCH_SNAP_ANSWER	64	/* bytes of an answer to the prompt */

/* A draft's states, as the state file and aisb transactions say them. */
#define LAUNCH_SNAP_STAGED	"staged"	/* the command is running */
#define LAUNCH_SNAP_KEPT	"kept"		/* changes wait for apply */
#define LAUNCH_SNAP_UNCHANGED	"unchanged"	/* the command changed nothing */
#define LAUNCH_SNAP_FAILED	"failed"	/* nothing proposed */
#define LAUNCH_SNAP_APPLYING	"applying"	/* a transaction runs */
#define LAUNCH_SNAP_APPLIED	"applied"
#define LAUNCH_SNAP_DISCARDED	"discarded"
#define LAUNCH_SNAP_CONFLICT	"conflict"	/* refused; nothing written */
#define LAUNCH_SNAP_RECOVERY	"recovery"	/* interrupted: aisb recover */

/* A snapshot session's stage, from launch_snap_stage to launch_snap_end. */
struct launch_snap {
	char	 workspace[4096];	/* the workspace's real path */
	char	 stage[4096];		/* SESSION/stage */
	char	 outcome[16];		/* LAUNCH_SNAP_* for the record */
	char	 digest[72];		/* the change set's, or "" */
	unsigned long long entries, bytes, excluded, cloned, nchanges;
	long long stage_ms;		/* copying and hashing the workspace */
	long long changes_ms;		/* computing and saving the change set */
	int	 staged;		/* stage made, state file written */
};

/*
 * Copies the workspace into SESSION/stage (snap_stage_create with the
 * default rules and limits plus the snapshot_exclude patterns) and writes
 * SESSION/manifest and the state file.  Rootful, in a workspace of
 * another user (sudo), the stage is given to that user, whose files the
 * idmapped mount shows the sandbox.  0; or an exit code (78 for a
 * bound, with the number; 77 else) after err is filled.
 */
int	 launch_snap_stage(struct launch_snap *, const struct launch_session *,
	    const struct launch_opts *, const struct launch_ids *, char *err,
	    size_t errlen);

/*
 * The end of a snapshot session whose command exited code: nothing
 * proposed unless 0 (the stage removed, "failed"); else the change set
 * saved and summed up, then, as o->apply says, the question and the
 * write-back.  Returns the session's exit code: code, or 78 for a change
 * set past the bounds, or apply's when it was asked and did not apply
 * cleanly (65, 74).
 */
int	 launch_snap_end(struct launch_snap *, const struct launch_session *,
	    const struct launch_opts *, const struct launch_ids *, int code);

/*
 * For aisb sessions show: one line with the draft's state now, when the
 * session in sdir is a snapshot session (its record says how it ended).
 */
void	 launch_snap_show(const char *sdir, FILE *out);

#endif
