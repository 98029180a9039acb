/*
 * libFuzzer: common/json.c.  The first byte picks the mode and the size
 * of the output; the rest is the input, in a buffer of exactly its size
 * (ASan: nothing past it is read).  What json.h promises: a string's
 * quotes where it says, a decoded length below the output and the
 * source, no NUL inside, the same answer with no output at all, never a
 * cut string (one byte less room is refused), and every shorter input
 * of a good string "need more".
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static ssize_t
rd(const char *in, size_t len, char *out, size_t size, size_t *n, int flags)
{
	char	 err[64];
	ssize_t	 r;

	err[0] = '\0';
	r = json_string(in, len, out, size, n, flags, err, sizeof(err));
	if (r == -1 && err[0] == '\0')
		abort();	/* -1 always says why */
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*in, *out;
	size_t		 len, outsize, n = 0, m = 0;
	ssize_t		 r, again;
	int		 flags;

	if (size < 1)
		return 0;
	flags = data[0] & 1 ? JSON_BYTES : 0;
	len = size - 1;
	/* 0: room for anything; else a small output, where the bound bites */
	outsize = data[0] >> 1 ? data[0] >> 1 : len + 1;
	if ((in = malloc(len ? len : 1)) == NULL ||
	    (out = malloc(outsize)) == NULL)
		abort();
	memcpy(in, data + 1, len);
	r = rd(in, len, out, outsize, &n, flags);
	if (r > (ssize_t)len || r < -1)
		abort();
	again = rd(in, len, NULL, 0, &m, flags);
	if (r > 0) {
		if (r < 2 || in[0] != '"' || in[r - 1] != '"' ||
		    n >= outsize || n > (size_t)r - 2 || strlen(out) != n ||
		    again != r || m != n)
			abort();
		/* exactly the room it needs, then one byte less */
		if (rd(in, len, out, n + 1, &m, flags) != r || m != n)
			abort();
		if (rd(in, len, out, n, NULL, flags) != -1)
			abort();
		/* shorter inputs: only "need more" */
		if (rd(in, (size_t)r - 1, out, outsize, NULL, flags) != 0 ||
		    rd(in, (size_t)r / 2, out, outsize, NULL, flags) != 0)
			abort();
	} else if (r == 0 && again != 0)
		abort();
	else if (r == -1 && outsize > len && again != -1)
		abort();	/* with room enough, only the input is wrong */
	free(in);
	free(out);
	return 0;
}
