/*
 * session/watchline.h: the watch-line splitter of aisb pending --watch
 * and the session's notices, over a real pipe, fed in pieces.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/watchline.h"

static char	 seen[4096];

static void
collect(const char *line, size_t len, void *arg)
{
	int	*calls = arg;

	assert_int_equal(strlen(line), len);	/* NUL-terminated at len */
	assert_int_equal(strlen(seen) + len + 2 <= sizeof(seen), 1);
	strcat(seen, line);
	strcat(seen, "|");
	(*calls)++;
}

/* data written to a pipe in pieces, read through a cap-byte buffer */
static int
feed(const char *const *pieces, size_t cap)
{
	char			 buf[64];
	struct launch_watch	 w = { buf, cap, 0, 0 };
	int			 fd[2], calls = 0;
	size_t			 i;

	assert_true(cap <= sizeof(buf));
	seen[0] = '\0';
	assert_int_equal(pipe(fd), 0);
	for (i = 0; pieces[i] != NULL; i++) {
		assert_int_equal(write(fd[1], pieces[i], strlen(pieces[i])),
		    (ssize_t)strlen(pieces[i]));
		while (launch_watch_read(&w, fd[0], collect, &calls) ==
		    (ssize_t)cap)
			;	/* a full read: there may be more */
	}
	close(fd[1]);
	assert_int_equal(launch_watch_read(&w, fd[0], collect, &calls), 0);
	close(fd[0]);
	return calls;
}

static void
lines_in_pieces(void **state)
{
	static const char *const p[] = { "one\ntw", "o\n", "\nthree", "\n",
	    "four", NULL };

	(void)state;
	/* an empty line is a line; "four" never ended: not a line */
	assert_int_equal(feed(p, 16), 4);
	assert_string_equal(seen, "one|two||three|");
}

static void
long_line_dropped_to_its_end(void **state)
{
	/* 16 bytes: a line of 16 or more (without '\n') is dropped whole */
	static const char *const p[] = { "short\n0123456789abcdef", "ghij",
	    "klm\nafter\n", "0123456789abcdefghij\nlast\n", NULL };
	static const char *const q[] = { "0123456789abcde\nok\n", NULL };

	(void)state;
	assert_int_equal(feed(p, 16), 3);
	assert_string_equal(seen, "short|after|last|");
	/* 15 bytes and its '\n' fit: kept */
	assert_int_equal(feed(q, 16), 2);
	assert_string_equal(seen, "0123456789abcde|ok|");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_in_pieces),
		cmocka_unit_test(long_line_dropped_to_its_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
