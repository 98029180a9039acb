/*
 * The store of aisb's images (store.c): last use, listing, clean.
 */
#ifndef AISB_IMAGE_STORE_H
#define AISB_IMAGE_STORE_H

#include <stddef.h>

/*
 * The version of npm package name in the newest aisb image that has it
 * (its io.aisb.npm label), into ver: 1, or 0 when no image has it.
 */
int	launch_image_npm_built(const char *name, char *ver, size_t len);

/*
 * Notes that a session used tag now ($XDG_STATE_HOME/aisb/images/<hash>,
 * an empty file whose mtime is the last use).  Best effort.
 */
void	launch_image_mark_used(const char *tag);

/*
 * aisb clean --images: removes sandbox images no session used (nor built)
 * in the last older_than seconds, podman refusing those a container uses,
 * then offline bases no kept image is built on.  Prints one line per
 * image.  0, or -1 when podman could not list them.
 */
int	launch_image_clean(long long older_than, size_t *nremoved);
/*
 * aisb image ls: one line per image on stdout (tag, kind, size, what it
 * adds over its base, its age and last use, its packages).  0, or -1
 * when podman could not list them (said on stderr).
 */
int	launch_image_ls(void);

/*
 * The sandbox images of the store (aisb doctor's stand-in when the one a
 * session here would run is not built): into tag the one sessions used
 * last (its last use, else its creation), into list the first few with
 * their packages ("localhost/aisb:<hash> (curl,git), ...").  Their count
 * (0: none, tag ""), or -1 when podman could not list them (said on
 * stderr).
 */
int	launch_image_sandboxes(char *tag, size_t taglen, char *list,
	    size_t listlen);

#endif
