/*
 * The workspace's mounts of a session (wsmode.h), in the order podman
 * takes them: the git guard's (parents first), the protected paths, the
 * user's --mount entries.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "host/paths.h"
#include "session/gitguard.h"
#include "session/ids.h"
#include "session/mounts.h"
#include "session/options.h"
#include "session/protect.h"
#include "session/wsmode.h"

extern char **environ;

/* The protect: patterns as an array (NULL-terminated), or NULL. */
static char **
patterns(const struct launch_opts *o)
{
	char	**v;
	size_t	  i;

	if ((v = calloc(o->nprotect + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < o->nprotect; i++)
		v[i] = o->protect[i].text;
	return v;
}

/* A direct session: the walk, the git guard, the protected paths. */
static int
direct(struct launch_wsmode *w, const struct launch_opts *o,
    const struct launch_ids *ids, const char *src, int preview, char *err,
    size_t errlen)
{
	char	**pat, sub[1024];
	int	  rc;

	if ((pat = patterns(o)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return EXIT_ENFORCE;
	}
	rc = launch_wsscan(w->ws, pat, o->nprotect, &w->scan, sub,
	    sizeof(sub));
	free(pat);
	if (rc == -1) {
		snprintf(err, errlen, "the workspace %s cannot be walked for "
		    "its repositories and the files that run on their own: %s; "
		    "run with --snapshot or --read-only", w->ws, sub);
		return EXIT_CONFIG;
	}
	w->scanned = 1;
	if ((w->git = launch_gitguard_new(w->ws, src, w->sdir, &w->scan, sub,
	    sizeof(sub))) == NULL) {
		snprintf(err, errlen, "the repositories of %s cannot be "
		    "guarded in a direct session: %s; run with --snapshot or "
		    "--read-only", w->ws, sub);
		return EXIT_CONFIG;
	}
	if (!preview && launch_gitguard_make(w->git, ids != NULL ?
	    launch_ids_host_uid(ids) : (uint32_t)getuid(), ids != NULL ?
	    launch_ids_host_gid(ids) : (uint32_t)getgid(), sub,
	    sizeof(sub)) == -1) {
		snprintf(err, errlen, "git guard: %s", sub);
		return EXIT_ENFORCE;
	}
	if (launch_gitguard_mounts(w->git, &w->mounts) == -1) {
		snprintf(err, errlen, "out of memory");
		return EXIT_ENFORCE;
	}
	/* core.hooksPath and included configs in the work tree */
	if (launch_protect_git(&w->gitpaths, w->ws, &w->scan, ids != NULL ?
	    (unsigned)ids->owner_uid : (unsigned)getuid(), ids != NULL ?
	    (unsigned)ids->owner_gid : (unsigned)getgid(), sub,
	    sizeof(sub)) == -1) {
		snprintf(err, errlen, "the git configuration of %s cannot be "
		    "read: %s; run with --snapshot or --read-only", w->ws, sub);
		return EXIT_CONFIG;
	}
	if (launch_protect_mounts(&w->scan, &w->gitpaths, w->ws, src,
	    &w->mounts, err, errlen) == -1)
		return EXIT_CONFIG;
	return 0;
}

int
launch_wsmode_prepare(struct launch_wsmode *w, const struct launch_opts *o,
    const struct launch_ids *ids, const char *sdir, const char *clone,
    int preview, char *err, size_t errlen)
{
	struct launch_wsscan	 q;
	char			 state[PATH_MAX], sub[1024];
	int			 rc;

	memset(w, 0, sizeof(*w));
	if (realpath(o->val[LO_WORKSPACE], w->ws) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", o->val[LO_WORKSPACE],
		    strerror(errno));
		return EXIT_CONFIG;
	}
	snprintf(w->sdir, sizeof(w->sdir), "%s", sdir);
	if (!o->snapshot && !o->readonly && (rc = direct(w, o, ids, clone !=
	    NULL ? clone : w->ws, preview, err, errlen)) != 0)
		return rc;
	if (o->quarantine) {
		if (launch_wsscan(w->ws, NULL, 0, &q, sub, sizeof(sub)) == 0) {
			launch_protect_warn(&q, w->ws);
			launch_wsscan_free(&q);
		} else
			fprintf(stderr, "aisb: quarantine: the workspace could "
			    "not be walked for what runs on its own (%s)\n",
			    sub);
	}
	if (launch_state_dir(environ, state, sizeof(state)) == -1)
		state[0] = '\0';
	if (launch_mounts_user(o, w->ws, state[0] != '\0' ? state : NULL, ids,
	    sdir, preview, &w->mounts, &w->umade, err, errlen) == -1)
		return errno == ENOMEM ? EXIT_ENFORCE : EXIT_CONFIG;
	return 0;
}

void
launch_wsmode_end(struct launch_wsmode *w, const struct launch_opts *o,
    const char *id, int ran)
{
	char	**pat;

	launch_mounts_detach(w->sdir, w->umade);
	w->umade = 0;
	/* nothing ran: the private folders may be half made, and hold
	 * nothing of the command's */
	if (!ran)
		return;
	if (w->git != NULL)
		launch_gitguard_end(w->git, id, o->apply);
	if (w->scanned && (pat = patterns(o)) != NULL) {
		launch_protect_report(&w->scan, &w->gitpaths, w->ws, pat,
		    o->nprotect);
		free(pat);
	}
}

void
launch_wsmode_free(struct launch_wsmode *w)
{
	launch_gitguard_free(w->git);
	w->git = NULL;
	launch_gitpaths_free(&w->gitpaths);
	launch_wsscan_free(&w->scan);
	launch_mounts_free(&w->mounts);
}
