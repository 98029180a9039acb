/*
 * The sandbox image and the offline Debian base it may sit on.  See
 * docs/launcher.md, "Image".
 */
#ifndef AISB_IMAGE_H
#define AISB_IMAGE_H

#include <stddef.h>
#include <stdio.h>

#include "image/image-t.h"
#include "image/names.h"

/*
 * Ensures the image for spec exists and writes its reference ("localhost/
 * aisb:<hash>") to tag.  Reuses an existing image of that tag, builds it
 * otherwise (and the offline base first when needed).  0 or -1 with err
 * filled in.
 */
int	launch_image_ensure(const struct launch_image_spec *, char *tag,
	    size_t taglen, char *err, size_t errlen);

/*
 * The tag spec's image has, found without building or pulling anything:
 * 1 when that image is here, 0 when it is not (yet), -1 with err when the
 * spec is invalid or podman failed.  tag is filled in whenever it can be
 * known (not when the base itself is missing: then "").
 */
int	launch_image_lookup(const struct launch_image_spec *, char *tag,
	    size_t taglen, char *err, size_t errlen);

/*
 * The spec's base for a base the user named (image:, --image, --base):
 * NULL, the offline base, for LAUNCH_OFFLINE_BASE, else word itself.
 */
const char *launch_image_base(const char *word);

/*
 * The spec's bounds and names: its tools, base reference, packages and
 * suite.  0 or -1 with err.
 */
int	launch_image_spec_check(const struct launch_image_spec *, char *err,
	    size_t errlen);


/*
 * Writes the Containerfile for spec over the given base reference (NUL-
 * terminated, at most LAUNCH_CONTAINERFILE_MAX bytes).  Pure; 0 or -1.
 */
int	launch_image_containerfile(const struct launch_image_spec *,
	    const char *base_ref, char *buf, size_t len, char *err,
	    size_t errlen);

/*
 * The tools layer of spec (its npm, pip, node and homedirs) over the
 * image from, and the tag it gets: pure, for the unit tests and the
 * preview.  0 or -1.
 */
int	launch_image_tools_containerfile(const struct launch_image_spec *,
	    const char *from, char *buf, size_t len, char *err, size_t errlen);
int	launch_image_tools_tag(const struct launch_image_spec *,
	    const char *from, char *tag, size_t taglen, char *err,
	    size_t errlen);

/*
 * What `aisb --print-containerfile` prints: the Containerfile over the
 * base that launch_image_ensure would use, found without building or
 * pulling anything.  0 or -1.
 */
int	launch_image_print_containerfile(const struct launch_image_spec *,
	    FILE *);

#endif
