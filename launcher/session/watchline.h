/*
 * The lines of a gate's watch stream (aisb pending --watch, and the
 * session's own notices: cmd/ask.c, session/ask.c), split one way: each
 * whole line to a callback, a line that fills the caller's buffer
 * (LAUNCH_ASK_LINE_MAX, session/ask.h) dropped up to its end.
 */
#ifndef AISB_WATCHLINE_H
#define AISB_WATCHLINE_H

#include <sys/types.h>

struct launch_watch {
	char	*buf;		/* the caller's */
	size_t	 cap;		/* bytes of buf: the bound of a line */
	size_t	 off;		/* bytes held: the start of the next line */
	int	 skip;		/* in a line past the bound: drop to its '\n' */
};

/* Called with each line without its '\n', NUL-terminated at len. */
typedef void	 launch_watch_fn(const char *line, size_t len, void *arg);

/*
 * One read(2) of fd into w, then fn for every whole line it completed.
 * Returns what read returned (-1 with errno, 0 at the end).
 */
ssize_t	 launch_watch_read(struct launch_watch *w, int fd,
	    launch_watch_fn *fn, void *arg);

#endif /* AISB_WATCHLINE_H */
