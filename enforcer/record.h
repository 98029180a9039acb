/*
 * Direct mode's recorder: the packets table inet aisb logs to NFLOG group
 * NFT_RECORD_GROUP (nft.c), written to the plan's record file as pcapng
 * (common/pcapng.h).  A process of its own, forked before the enforcer
 * drops anything; once bound it keeps uid 0 and no capability at all, so
 * the command (another uid, no capability) can neither signal nor trace
 * it, and it outlives nothing: it ends when the enforcer says so, or when
 * the enforcer is gone.
 */
#ifndef AISB_ENF_RECORD_H
#define AISB_ENF_RECORD_H

#include <sys/types.h>

#include "enforcer/plan.h"

struct enf_recorder;

/*
 * Forks the recorder for plan's record line and waits until it runs: the
 * file created (O_EXCL | O_NOFOLLOW, mode 0600, in a folder the sandbox
 * uid neither owns nor may write), the group bound with packet copies,
 * its privileges dropped.  NULL after saying why (the recorder says what
 * failed on stderr): the command must not run.
 */
struct enf_recorder	*enf_record_start(const struct enf_plan *plan,
			    uid_t sandbox_uid);

/*
 * The descriptors the enforcer keeps open for the recorder (two), into
 * fds; a NULL recorder has none.  Returns how many.
 */
size_t			 enf_record_fds(const struct enf_recorder *, int *fds);

/*
 * Ends the recording: the recorder drains what the kernel has queued and
 * exits; waits for that (ENF_RECORD_STOP_MS at most, then SIGKILL: the
 * file still ends at a complete block).  Again, or NULL: nothing.
 */
void			 enf_record_stop(struct enf_recorder *);
/* Stops it if needed and frees.  NULL does nothing. */
void			 enf_record_free(struct enf_recorder *);

#define ENF_RECORD_STOP_MS	5000

#endif
