/*
 * The end of a snapshot session without podman, for
 * tests/cli/snapshot_ask.sh: stages WORKSPACE into SDIR (the launcher's
 * own draft_stage), writes new.txt into the stage as a command would,
 * writes the bytes of the file OUTPUT to stderr raw, as the command's
 * last output reaches the terminal, and ends the session as aisb does
 * (draft_end, --apply=ask).  Exits with draft_end's status.
 *
 *	snapask SDIR WORKSPACE OUTPUT
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draft/draft.h"

int
main(int argc, char **argv)
{
	struct draft_info	 info;
	char			 err[4096], path[DRAFT_PATH_MAX + 16], buf[4096];
	ssize_t			 n;
	int			 fd, rc;

	if (argc != 4) {
		fprintf(stderr, "usage: snapask SDIR WORKSPACE OUTPUT\n");
		return 64;
	}
	if ((rc = draft_stage(argv[1], argv[2], NULL, 0, 0, NULL, NULL, 1,
	    &info, err, sizeof(err))) != 0) {
		fprintf(stderr, "snapask: %s\n", err);
		return rc;
	}
	if (snprintf(path, sizeof(path), "%s/new.txt", info.stage) >=
	    (int)sizeof(path))
		return 1;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1 ||
	    write(fd, "agent\n", 6) != 6 || close(fd) == -1) {
		perror(path);
		return 1;
	}
	if ((fd = open(argv[3], O_RDONLY)) == -1) {
		perror(argv[3]);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDERR_FILENO, buf, (size_t)n) != n)
			return 1;
	close(fd);
	/* the command has ended: what its output asked of the terminal
	 * (a cursor report) is answered by now */
	usleep(300000);
	return draft_end(argv[1], "0123456789abcdef01234567", 0,
	    DRAFT_APPLY_ASK, 0, &info);
}
