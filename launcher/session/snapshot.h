/*
 * Snapshot sessions, the Linux launcher's side (docs/snapshot.md, "Using
 * snapshot sessions"): the stage in the session folder, mounted instead
 * of the workspace; after the command, its change set kept as a draft;
 * the commands aisb changes|apply|discard|recover ID (cmd/snapshot.c)
 * find the draft here.  The draft itself (state file, change set,
 * apply, recover) is launcher/draft/, the same code the Windows launcher
 * runs; the copy, the change set and the transactions are libaisbsnap's
 * (snap/).
 */
#ifndef AISB_SNAPSHOT_H
#define AISB_SNAPSHOT_H

#include <stddef.h>
#include <stdio.h>

#include "draft/draft.h"
#include "session/ids.h"
#include "session/options.h"
#include "session/folder.h"

/*
 * Copies the workspace into SESSION/stage (draft_stage with the
 * snapshot_exclude patterns) and writes SESSION/manifest and the state
 * file.  Rootful, in a workspace of another user (sudo), the stage is
 * given to that user, whose files the idmapped mount shows the sandbox.
 * 0; or an exit code (78 for a bound, with the number; 77 else) after
 * err is filled.
 */
int	 launch_snap_stage(struct draft_info *, const struct launch_session *,
	    const struct launch_opts *, const struct launch_ids *, char *err,
	    size_t errlen);

/*
 * The end of a snapshot session whose command exited code: draft_end,
 * as o->apply and o->quiet say.  Returns the session's exit code.
 */
int	 launch_snap_end(struct draft_info *, const struct launch_session *,
	    const struct launch_opts *, int code);

/*
 * For aisb sessions show: one line with the draft's state now, when the
 * session in sdir is a snapshot session (its record says how it ended).
 */
void	 launch_snap_show(const char *sdir, FILE *out);

/*
 * aisb clean: draft_reap of the session in sdir (a killed launcher's
 * stage removed), with sdir's folder resolved first, as every call of
 * this file does (libaisbsnap refuses a link on the way).  1 removed,
 * 0 nothing to do, -1 said on stderr.
 */
int	 launch_snap_reap(const char *sdir, const char *id);

/*
 * A session folder sdir with its own folder resolved (realpath) and its
 * last component kept, into out[PATH_MAX]: libaisbsnap never goes
 * through a link on the way, so a link in the state folder's path is
 * resolved here, once.  0, or -1 (errno).
 */
int	 launch_snap_real(const char *sdir, char *out);

/*
 * The folder of the drafts that persist (STATE/drafts) into
 * out[PATH_MAX], its folder resolved as launch_snap_real does.  make:
 * made (0700) when missing, for a session that takes a draft; else only
 * named when the state folder is not there yet (aisb draft: no drafts).
 * 0, or -1 with err.
 */
int	 launch_snap_drafts_dir(char *out, int make, char *err,
	    size_t errlen);

#endif
