/*
 * aisb draft status|changes|commit|discard|recover NAME, aisb draft ls:
 * the drafts that persist (draft/persist.c; docs/snapshot.md, "Drafts
 * that persist").  A draft is the workspace's (--workspace, else the
 * current folder) and its name; sessions continue it with aisb --draft
 * NAME -- COMMAND.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "draft/draft.h"
#include "session/snapshot.h"

int
launch_cmd_draft(int argc, char **argv)
{
	struct cli_args	 a;
	struct stat	 sb;
	char		 name[32], dir[PATH_MAX], ws[PATH_MAX];
	char		 err[PATH_MAX + 64];
	char		 ddir[DRAFT_PATH_MAX];
	const char	*w, *e;
	char		*end;
	long		 expect = -1;
	int		 rc;

	if ((rc = launch_cli_group("draft", argc, argv)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	snprintf(name, sizeof(name), "draft %s", argv[1]);
	if ((rc = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (launch_snap_drafts_dir(dir, 0, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_CONFIG;
	}
	if (strcmp(argv[1], "ls") == 0)
		return draft_persist_list(dir);
	w = launch_cli_get(&a, "--workspace");
	if (realpath(w != NULL ? w : ".", ws) == NULL) {
		fprintf(stderr, "aisb: workspace %s: %s\n", w != NULL ? w : ".",
		    strerror(errno));
		return EXIT_CONFIG;
	}
	if (draft_persist_path(dir, ws, a.pos[0], ddir) == -1)
		return EXIT_CONFIG;
	if (stat(ddir, &sb) == -1) {
		fprintf(stderr, "aisb: no draft %s of %s (aisb --draft %s -- "
		    "COMMAND makes it; aisb draft ls lists them)\n", a.pos[0],
		    ws, a.pos[0]);
		return EXIT_CONFIG;
	}
	if (strcmp(argv[1], "status") == 0)
		return draft_persist_status(ddir, a.pos[0]);
	if (strcmp(argv[1], "changes") == 0)
		return draft_persist_changes(ddir, a.pos[0],
		    launch_cli_get(&a, "--diff") != NULL);
	if (strcmp(argv[1], "discard") == 0)
		return draft_persist_discard(ddir, a.pos[0]);
	if (strcmp(argv[1], "recover") == 0)
		return draft_persist_recover(ddir, a.pos[0]);
	if ((e = launch_cli_get(&a, "--expect-revision")) != NULL) {
		errno = 0;
		expect = strtol(e, &end, 10);
		if (errno != 0 || end == e || *end != '\0' || expect < 0) {
			fprintf(stderr, "aisb: --expect-revision %.32s: not a "
			    "revision (aisb draft status %s prints it)\n", e,
			    a.pos[0]);
			return EXIT_CONFIG;
		}
	}
	return draft_persist_commit(ddir, a.pos[0], expect);
}
