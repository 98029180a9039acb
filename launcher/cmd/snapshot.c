/*
 * aisb changes|apply|discard|recover|undo ID and aisb transactions: a snapshot
 * session's draft (draft/draft.c), found by its session's id.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "draft/draft.h"
#include "host/paths.h"
#include "session/folder.h"
#include "session/snapshot.h"

extern char **environ;

int
launch_cmd_snapshot(int argc, char **argv)
{
	struct cli_args	 a;
	char		 sdir[PATH_MAX], base[PATH_MAX], dir[PATH_MAX];
	char		 real[PATH_MAX];
	const char	*id;
	int		 rc;

	if ((rc = launch_cli_parse(argv[0], argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[0], "transactions") == 0) {
		if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
		    snprintf(dir, sizeof(dir), "%s/sessions", base) >=
		    (int)sizeof(dir)) {
			fprintf(stderr, "aisb: no state folder: set "
			    "XDG_STATE_HOME or HOME to an absolute path\n");
			return EXIT_CONFIG;
		}
		/* no sessions folder yet: the (empty) list as before */
		return draft_list(realpath(dir, real) != NULL ? real : dir,
		    LAUNCH_ID_HEX);
	}
	if ((rc = launch_session_find(a.pos[0], real, sizeof(real))) != 0)
		return rc;
	if (launch_snap_real(real, sdir) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", real, strerror(errno));
		return EXIT_CONFIG;
	}
	if ((id = strrchr(sdir, '/')) == NULL)
		return EXIT_CONFIG;
	id++;
	if (strcmp(argv[0], "changes") == 0)
		return draft_changes(sdir, id, launch_cli_get(&a, "--diff") !=
		    NULL);
	if (strcmp(argv[0], "apply") == 0)
		return draft_apply(sdir, id, launch_cli_get(&a, "--reviewed") !=
		    NULL ? DRAFT_REVIEWED : 0);
	if (strcmp(argv[0], "discard") == 0)
		return draft_discard(sdir, id);
	if (strcmp(argv[0], "undo") == 0)
		return draft_undo(sdir, id, 0);
	return draft_recover(sdir, id);
}
