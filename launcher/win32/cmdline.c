/*
 * argv -> one Windows command line.  CreateProcessW takes a single string
 * that the child's C runtime (or CommandLineToArgvW) splits again; the
 * quoting below is the inverse of that split: a word without blanks or
 * quotes goes as it is, any other in quotes, backslashes doubled only
 * where they precede a quote.  No shell (cmd.exe) ever reads it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/winrun.h"

static int
plain(const char *s)
{
	return *s != '\0' && strpbrk(s, " \t\n\v\"") == NULL;
}

int
winrun_cmdline(int argc, char *const *argv, char **out, char *err,
    size_t errlen)
{
	size_t cap = 0, n = 0, i, bs;
	const char *p;
	char *s = NULL;
	int k;

	*out = NULL;
	if (argc < 1 || argc > WINRUN_ARGS_MAX) {
		snprintf(err, errlen, "the command must have 1 to %d words",
		    WINRUN_ARGS_MAX);
		return -1;
	}
	for (k = 0; k < argc; k++) {
		size_t len = strlen(argv[k]);

		if (len > WINRUN_ARG_MAX) {
			snprintf(err, errlen, "word %d of the command is %zu "
			    "bytes; at most %d", k, len, WINRUN_ARG_MAX);
			return -1;
		}
		/* worst case: every byte a quote (2 each), quotes, a blank */
		cap += 2 * len + 3;
	}
	if ((s = malloc(cap + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (k = 0; k < argc; k++) {
		if (k > 0)
			s[n++] = ' ';
		if (plain(argv[k])) {
			memcpy(s + n, argv[k], strlen(argv[k]));
			n += strlen(argv[k]);
			continue;
		}
		s[n++] = '"';
		for (p = argv[k];; p++) {
			for (bs = 0; *p == '\\'; p++)
				bs++;
			if (*p == '\0') {
				/* before the closing quote: double them */
				for (i = 0; i < 2 * bs; i++)
					s[n++] = '\\';
				break;
			}
			if (*p == '"') {
				for (i = 0; i < 2 * bs + 1; i++)
					s[n++] = '\\';
			} else {
				for (i = 0; i < bs; i++)
					s[n++] = '\\';
			}
			s[n++] = *p;
		}
		s[n++] = '"';
	}
	s[n] = '\0';
	if (n > WINRUN_CMDLINE_MAX) {
		free(s);
		snprintf(err, errlen, "the command line is %zu bytes quoted; "
		    "Windows takes at most %d", n, WINRUN_CMDLINE_MAX);
		return -1;
	}
	*out = s;
	return 0;
}
