/*
 * The watch-line splitter (watchline.h): one copy for aisb pending
 * --watch and the session's notices, which had one each.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "session/watchline.h"

ssize_t
launch_watch_read(struct launch_watch *w, int fd, launch_watch_fn *fn,
    void *arg)
{
	ssize_t	 n;
	char	*nl;

	if ((n = read(fd, w->buf + w->off, w->cap - w->off)) <= 0)
		return n;
	w->off += (size_t)n;
	while ((nl = memchr(w->buf, '\n', w->off)) != NULL) {
		/* the line ends there for strstr() too */
		*nl = '\0';
		if (!w->skip)
			fn(w->buf, (size_t)(nl - w->buf), arg);
		w->skip = 0;
		w->off -= (size_t)(nl + 1 - w->buf);
		memmove(w->buf, nl + 1, w->off);
	}
	if (w->off == w->cap) {
		/* a line past the bound: dropped, up to its end */
		w->off = 0;
		w->skip = 1;
	}
	return n;
}
