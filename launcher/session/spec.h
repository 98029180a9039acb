/*
 * The image a session asks for, made from its options in one place: the
 * session, its previews (--print-containerfile), doctor and aisb agents
 * all build the spec here, so that "built" in doctor is the very image a
 * session would use.
 */
#ifndef AISB_SPEC_H
#define AISB_SPEC_H

#include <stddef.h>

#include "image/agent.h"
#include "image/image-t.h"
#include "session/options.h"

/* What the spec's lists point into: keep it while the spec is used. */
struct launch_spec_store {
	const char		*pkgs[LAUNCH_MAX_LIST];
	const char		*npm[LAUNCH_MAX_LIST];
	const char		*pip[LAUNCH_MAX_LIST];
	char			*own[LAUNCH_MAX_LIST];	/* resolved npm entries */
	size_t			 nown;
	struct launch_agent_lists agent;
};

/*
 * Fills spec from o (--image, --package, --npm, --pip) and the agent's
 * recipe (a may be NULL).  An --npm entry without a version takes the
 * version of the newest image that has the package, else, when ask, the
 * registry's newest (a gated session; tools.h); a preview does not ask.
 * runtime is podman's --runtime (not hashed into the tag).  0, or -1 with
 * err naming the entry and where it was written.  Free st either way.
 */
int	launch_session_spec(const struct launch_opts *o,
	    const struct launch_agent *a, int ask, const char *runtime,
	    struct launch_spec_store *st, struct launch_image_spec *spec,
	    char *err, size_t errlen);
void	launch_spec_store_free(struct launch_spec_store *);

/*
 * The options a session started here with no flags would have (user and
 * project config, AISB_*), for doctor and aisb agents.  0 or -1 with err;
 * free o with launch_opts_free() either way.
 */
int	launch_spec_opts(struct launch_opts *o, char *err, size_t errlen);
/*
 * Whether the image a session with o would use for agent a is built:
 * 1 built, 0 not yet, -1 with err.  Its tag in tag.  Asks no registry.
 */
int	launch_agent_image(const struct launch_opts *o,
	    const struct launch_agent *a, char *tag, size_t taglen, char *err,
	    size_t errlen);

#endif
