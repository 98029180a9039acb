/*
 * A session on a persistent draft without podman, for
 * tests/cli/snapshot_draft.sh: the launcher's own --draft path
 * (launch_snap_stage, launch_snap_end) around a command run in the stage
 * as the session's container would run it there.
 *
 *	snapdraft SDIR [aisb flags: --draft NAME ...] -- COMMAND [ARG...]
 *
 * SDIR is the session folder (made, 0700); its last component the
 * session's id.  The workspace is the current folder (or --workspace).
 * Exits with the session's status.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draft/draft.h"
#include "session/folder.h"
#include "session/ids.h"
#include "session/options.h"
#include "session/snapshot.h"

extern char **environ;

int
main(int argc, char **argv)
{
	struct launch_opts	 o;
	struct launch_session	 s;
	struct launch_ids	 ids;
	struct draft_info	 info;
	char			 err[4096];
	const char		*id;
	pid_t			 pid;
	int			 st, rc, code;

	if (argc < 4) {
		fprintf(stderr, "usage: snapdraft SDIR FLAGS -- COMMAND...\n");
		return 64;
	}
	argv[1][strcspn(argv[1], "\n")] = '\0';
	memset(&s, 0, sizeof(s));
	snprintf(s.dir, sizeof(s.dir), "%s", argv[1]);
	id = strrchr(s.dir, '/') != NULL ? strrchr(s.dir, '/') + 1 : s.dir;
	if (strlen(id) >= sizeof(s.id)) {
		fprintf(stderr, "snapdraft: %s: not a session id\n", id);
		return 64;
	}
	memcpy(s.id, id, strlen(id) + 1);
	/* argv[1] stands for aisb's own name in what the options read */
	if (launch_opts_resolve(&o, argc - 1, argv + 1, environ, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "snapdraft: %s\n", err);
		launch_opts_free(&o);
		return 78;
	}
	if (mkdir(s.dir, 0700) == -1 && errno != EEXIST) {
		perror(s.dir);
		launch_opts_free(&o);
		return 77;
	}
	memset(&ids, 0, sizeof(ids));
	ids.owner_uid = getuid();
	ids.owner_gid = getgid();
	if ((rc = launch_snap_stage(&info, &s, &o, &ids, err,
	    sizeof(err))) != 0) {
		fprintf(stderr, "snapdraft: %s\n", err);
		launch_opts_free(&o);
		return rc;
	}
	/* the command in the stage, as a container would see it */
	if ((pid = fork()) == -1) {
		launch_opts_free(&o);
		return 77;
	}
	if (pid == 0) {
		if (chdir(info.stage) == -1)
			_exit(126);
		execvp(o.cmd[0], o.cmd);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	code = launch_snap_end(&info, &s, &o, code);
	launch_opts_free(&o);
	return code;
}
