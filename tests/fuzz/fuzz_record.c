/*
 * libFuzzer: the pcapng reader (common/pcapng.c) and the stream hashing
 * of --record (launcher/session/record.c) on any bytes as the capture.  Either
 * they parse, or they fail with a terminated, non-empty message; the
 * stream lines are well formed; nothing is read past a block.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "session/recording.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	path[64];

static void
cleanup(void)
{
	unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf	 b;
	char		 err[512];
	const char	*line;
	int		 fd;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/fuzz_record.XXXXXX");
		if ((fd = mkstemp(path)) == -1)
			abort();
		close(fd);
		atexit(cleanup);
	}
	if ((fd = open(path, O_WRONLY | O_TRUNC)) == -1 ||
	    write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	buf_init(&b, LAUNCH_RECORD_MANIFEST_MAX, 0);
	err[0] = '\0';
	if (launch_record_streams(path, &b, err, sizeof(err)) == -1) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
	} else {
		for (line = b.p; line != NULL && *line != '\0';
		    line = strchr(line, '\n') + 1) {
			if (strncmp(line, "stream ", 7) != 0 &&
			    strncmp(line, "streams-over ", 13) != 0)
				abort();
			if (strchr(line, '\n') == NULL)
				abort();
		}
	}
	buf_free(&b);
	return 0;
}
