/*
 * The session's image spec from its options and recipe (spec.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"
#include "session/spec.h"
#include "image/tools.h"

void
launch_spec_store_free(struct launch_spec_store *st)
{
	size_t	i;

	for (i = 0; i < st->nown; i++)
		free(st->own[i]);
	st->nown = 0;
}

int
launch_session_spec(const struct launch_opts *o, const struct launch_agent *a,
    int ask, const char *runtime, struct launch_spec_store *st,
    struct launch_image_spec *spec, char *err, size_t errlen)
{
	char	 buf[LAUNCH_TOOL_MAX + LAUNCH_VERSION_MAX + 2], why[1024];
	size_t	 i;

	memset(st, 0, sizeof(*st));
	memset(spec, 0, sizeof(*spec));
	for (i = 0; i < o->npackages; i++)
		st->pkgs[i] = o->packages[i].text;
	spec->base = launch_image_base(o->val[LO_IMAGE]);
	spec->packages = st->pkgs;
	spec->npackages = o->npackages;
	spec->runtime = runtime;
	spec->quiet = o->quiet;
	if (o->val[LO_INSTALL_POLICY] != NULL &&
	    o->val[LO_INSTALL_POLICY][0] != '\0')
		spec->install_policy = o->val[LO_INSTALL_POLICY];
	for (i = 0; i < o->nnpm; i++) {
		why[0] = '\0';
		if (launch_npm_resolve(o->npm[i].text, spec->base, ask, buf,
		    sizeof(buf), why, sizeof(why)) == -1 ||
		    (st->own[st->nown] = strdup(buf)) == NULL) {
			snprintf(err, errlen, "%s (%s: %s)", why[0] != '\0' ?
			    why : "out of memory", launch_src_str(o->npm[i].src),
			    o->npm[i].where);
			return -1;
		}
		st->npm[i] = st->own[st->nown++];
	}
	for (i = 0; i < o->npip; i++)
		st->pip[i] = o->pip[i].text;
	spec->npm = st->npm;
	spec->nnpm = o->nnpm;
	spec->pip = st->pip;
	spec->npip = o->npip;
	launch_agent_spec(a, &st->agent, spec);
	return 0;
}

int
launch_spec_opts(struct launch_opts *o, char *err, size_t errlen)
{
	extern char	**environ;
	char		 *argv[] = { "aisb", "--print-config", NULL };

	return launch_opts_resolve(o, 2, argv, environ, err, errlen);
}

int
launch_agent_image(const struct launch_opts *o, const struct launch_agent *a,
    char *tag, size_t taglen, char *err, size_t errlen)
{
	struct launch_spec_store	*st;
	struct launch_image_spec	 spec;
	int				 rc = -1;

	if ((st = malloc(sizeof(*st))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (launch_session_spec(o, a, 0, NULL, st, &spec, err, errlen) == 0)
		rc = launch_image_lookup(&spec, tag, taglen, err, errlen);
	launch_spec_store_free(st);
	free(st);
	return rc;
}
