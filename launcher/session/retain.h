/*
 * Retention (docs/launcher.md, "Retention"): session folders, with the
 * transaction backups, recordings and stages they hold, removed oldest
 * first: those older than an age (aisb clean --older-than), then as many
 * as bring the user's sessions under a size (the user config's
 * retention:, at aisb clean and at the end of every session).  Never a
 * session whose launcher runs, whose draft waits for approval, or whose
 * transaction is not settled (draft_retire), nor the one named skip.
 * The transactions persistent drafts keep of their commits go with them,
 * by the same age and cap (draft_retire_tx); the drafts themselves stay.
 */
#ifndef AISB_SESSION_RETAIN_H
#define AISB_SESSION_RETAIN_H

#include <stdint.h>
#include <stdio.h>

struct launch_retained {
	size_t		 removed, kept;	/* folders removed; kept though due */
	size_t		 txs;		/* drafts' transactions removed */
	uint64_t	 freed, left;	/* bytes freed; bytes the rest hold */
};

/*
 * Under dir (STATE/sessions) and its sibling drafts/ (each draft's
 * transactions, STATE/drafts/NAME/tx/N): older >= 0 removes what was
 * last written more than older seconds ago; cap > 0 then removes, oldest
 * first, until the folders and transactions hold at most cap bytes.  skip: a session id never removed
 * (NULL: none).  Each removal and each kept one is said on say (NULL:
 * nothing).  0, or -1 when something could not be removed (said on
 * stderr); r filled either way.
 */
int	 launch_retain(const char *dir, const char *skip, long long older,
	    uint64_t cap, FILE *say, struct launch_retained *r);
/* At the end of session id: launch_retain of the state folder's sessions
 * with cap (0: nothing to do), id itself kept; one line on stderr unless
 * quiet when something was removed, or the rest is still over cap. */
void	 launch_retain_end(const char *id, uint64_t cap, int quiet);

#endif
