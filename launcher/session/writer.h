/*
 * One writer per workspace (docs/launcher.md, "One writer per
 * workspace"): a session that mounts its workspace to write it holds the
 * workspace's writer lock for its whole life; a second one is refused,
 * naming the first.  Snapshot sessions (and drafts) write a copy, and
 * read-only ones nothing: they run alongside.
 */
#ifndef AISB_SESSION_WRITER_H
#define AISB_SESSION_WRITER_H

#include <stddef.h>

/* The writer lock of workspace for session id, kept in
 * *fd until launch_writer_release.  0; 1 when another session holds it
 * (err names it: the caller exits 75); -1 with err on an error. */
int	 launch_writer_take(const char *workspace, const char *id, int *fd,
	    char *err, size_t errlen);
void	 launch_writer_release(const char *workspace, int *fd);

#endif
