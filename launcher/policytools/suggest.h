/*
 * --learn: a policy from a session's audit log (aisb policy suggest), and
 * the summary a learning session ends with (suggest.c).
 */
#ifndef AISB_SUGGEST_H
#define AISB_SUGGEST_H

#include <stddef.h>
#include <stdio.h>

#include "policy.h"

#define LAUNCH_SUGGEST_GROUP	0x01	/* --group: "*.domain" rules */
#define LAUNCH_SUGGEST_ALLOW_IP	0x02	/* --allow-ip: public IP literals */

/*
 * For people, on out: that nothing was blocked by the policy, how many
 * destinations the session used and how many the policy would have
 * denied (the first few listed), and the suggest command for id.
 */
void	launch_learn_summary(const char *auditpath, const char *id, FILE *out);
/*
 * The suggestion for the audit lines in buf (len bytes; a last line
 * without '\n' is not read, as of a file), on out: with base, the diff
 * against its canonical form.  0; -1 out of memory; -2 the suggestion
 * did not load (a bug; nothing printed).  For the fuzzer, and tests.
 */
int	launch_suggest_buffer(const char *buf, size_t len,
	    const struct policy *base, unsigned flags, FILE *out);
/*
 * aisb policy suggest: the suggestion for the audit log at log (id names
 * its session in the text), on stdout; with basepath, leaving out what
 * that policy allows.  The exit status: 0, 1 (out of memory, a bad
 * log), 78 (no decisions in it, a bad base), after a line on stderr.
 */
int	launch_suggest_log(const char *log, const char *id,
	    const char *basepath, unsigned flags);

#endif
