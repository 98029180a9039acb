/*
 * libFuzzer: held requests, the launcher's readers of outside text
 * (launcher/session/ask.c, launcher/policytools/polyedit.c).  Any bytes
 * as the gate's JSON of a held request: nothing crashes or reads past
 * them, a parse takes at most what it was given, and what a terminal is
 * shown of it is printable ASCII.  The same bytes as a policy file the
 * rule goes into: refused, or each of the file's lines kept, in order,
 * but for an "allow: []" made a block, and the entry for the target in.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policytools/polyedit.h"
#include "session/ask.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
held(const char *p, size_t len)
{
	struct launch_held	 h;
	char			 dest[POLICY_MAX_NAME + 16];
	ssize_t			 n;
	size_t			 i;

	if ((n = launch_held_parse(p, len, &h)) == -1)
		return;
	if ((size_t)n > len || h.port == 0 || h.port > 65535)
		abort();
	launch_held_dest(&h, dest, sizeof(dest));
	for (i = 0; dest[i] != '\0'; i++)
		if ((unsigned char)dest[i] < 0x21 ||
		    (unsigned char)dest[i] >= 0x7f)
			abort();
}

/*
 * Each line of in (len bytes) is a line of out, in order, but for at most
 * one (allow: [] made a block): 1, else 0.
 */
static int
lines_kept(const char *in, size_t len, const char *out, size_t outlen)
{
	const char	*nl;
	size_t		 i = 0, j = 0, n, m, k;
	int		 changed = 0;

	while (i < len) {
		nl = memchr(in + i, '\n', len - i);
		n = nl != NULL ? (size_t)(nl - in - i) : len - i;
		for (k = j; k < outlen; k += m + 1) {
			m = strcspn(out + k, "\n");
			if (m == n && memcmp(in + i, out + k, n) == 0)
				break;
		}
		if (k < outlen)
			j = k + n + 1;
		else if (changed++)
			return 0;
		i += n + 1;
	}
	return 1;
}

static void
edit(const char *p, size_t len)
{
	static struct policy_target	 t;
	static int			 have;
	char				 err[512], *out;
	size_t				 outlen;
	unsigned			 line;

	if (!have && policy_parse_target("new.example:443", 15, 0, &t, err,
	    sizeof(err)) == -1)
		abort();
	have = 1;
	if (memchr(p, '\0', len) != NULL ||
	    launch_policy_add_allow(p, len, &t, "note", &out, &outlen, &line,
	    err, sizeof(err)) == -1)
		return;
	if (outlen <= len || strlen(out) != outlen || line == 0 ||
	    !lines_kept(p, len, out, outlen) ||
	    strstr(out, "host: \"new.example\"\n") == NULL)
		abort();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char	*p;

	/* a copy of exactly the input: reads past it are caught */
	if ((p = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(p, data, len);
	held(p, len);
	edit(p, len);
	free(p);
	return 0;
}
