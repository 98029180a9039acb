/*
 * Whole small files, read with a bound, for the programs' configuration
 * and state files.
 */
#ifndef AISB_FILE_H
#define AISB_FILE_H

#include <stddef.h>

/*
 * A regular file of at most max bytes, whole, into a new NUL-terminated
 * buffer (its length in *lenp).  NULL with "path: why" in err when it
 * cannot be opened or read, is not a regular file, or is larger.
 */
char	*file_read_bounded(const char *path, size_t max, size_t *lenp,
	    char *err, size_t errlen);

#endif
