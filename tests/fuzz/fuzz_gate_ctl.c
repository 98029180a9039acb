/*
 * libFuzzer: the control socket's command line (gate/ctlcmd.c).
 * Invariants: the answer is a known one; a command's line lies within
 * the input and ends with its LF, within the bound; no LF within the
 * bound is "more" while short and "too long" past it; a prefix that holds
 * the whole line answers the same.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctlcmd.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data;
	size_t		 used = 0, used2 = 0;
	int		 r, r2;

	r = gate_ctl_parse(buf, size, &used);
	if (r < GATE_CTL_TOO_LONG || r > GATE_CTL_UNKNOWN)
		abort();
	if (r > 0) {
		if (used == 0 || used > size || used > GATE_CTL_MAX_LINE + 1 ||
		    buf[used - 1] != '\n' ||
		    memchr(buf, '\n', used - 1) != NULL)
			abort();
		r2 = gate_ctl_parse(buf, used, &used2);
		if (r2 != r || used2 != used)
			abort();
		if (r != GATE_CTL_UNKNOWN && used > 8)
			abort();	/* "status\r\n", "reopen\r\n": the longest */
		return 0;
	}
	if (memchr(buf, '\n', size > GATE_CTL_MAX_LINE + 1 ?
	    GATE_CTL_MAX_LINE + 1 : size) != NULL)
		abort();
	if ((r == GATE_CTL_TOO_LONG) != (size > GATE_CTL_MAX_LINE))
		abort();
	return 0;
}
