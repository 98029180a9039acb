/*
 * libFuzzer: the control socket's command line (gate/ctlcmd.c).
 * Invariants: the answer is a known one; a command's line lies within
 * the input and ends with its LF, within the bound; no LF within the
 * bound is "more" while short and "too long" past it; a prefix that holds
 * the whole line answers the same; an answer to a held request (approve,
 * deny) has an id in 1 .. GATE_CTL_MAX_ID that prints back to the digits
 * of its line, and every other command the id 0.
 */
#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data;
	size_t		 used = 0, used2 = 0, n;
	uint64_t	 id = 1, id2 = 1;
	char		 digits[24];
	const char	*at;
	int		 r, r2;

	r = gate_ctl_parse(buf, size, &used, &id);
	if (r < GATE_CTL_TOO_LONG || r > GATE_CTL_UNKNOWN)
		abort();
	if (r > 0) {
		if (used == 0 || used > size || used > GATE_CTL_MAX_LINE + 1 ||
		    buf[used - 1] != '\n' ||
		    memchr(buf, '\n', used - 1) != NULL)
			abort();
		r2 = gate_ctl_parse(buf, used, &used2, &id2);
		if (r2 != r || used2 != used || id2 != id)
			abort();
		if (r == GATE_CTL_APPROVE_ONCE || r == GATE_CTL_APPROVE_SESSION ||
		    r == GATE_CTL_DENY) {
			if (id == 0 || id > GATE_CTL_MAX_ID)
				abort();
			/* the id is the line's digits, as they are written */
			n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64,
			    id);
			at = buf + (r == GATE_CTL_DENY ? 5 : 8);
			if (at + n > buf + used || memcmp(at, digits, n) != 0)
				abort();
		} else if (id != 0)
			abort();
		/* "approve 9007199254740991 session\r\n": the longest */
		if (r != GATE_CTL_UNKNOWN && used > 34)
			abort();
		return 0;
	}
	if (id != 0)
		abort();
	if (memchr(buf, '\n', size > GATE_CTL_MAX_LINE + 1 ?
	    GATE_CTL_MAX_LINE + 1 : size) != NULL)
		abort();
	if ((r == GATE_CTL_TOO_LONG) != (size > GATE_CTL_MAX_LINE))
		abort();
	return 0;
}
