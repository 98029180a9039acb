/*
 * The control socket's command line (control.c), pure so that it can be
 * fuzzed (tests/fuzz/fuzz_gate_ctl.c).  Bounds: a line of at most
 * GATE_CTL_MAX_LINE bytes before its LF.
 */
#include "config.h"

#include <sys/types.h>

#include <string.h>

#include "gate/ctlcmd.h"

int
gate_ctl_parse(const char *buf, size_t len, size_t *used)
{
	const char	*lf;
	size_t		 n, scan = len > GATE_CTL_MAX_LINE + 1 ?
			    GATE_CTL_MAX_LINE + 1 : len;

	if ((lf = memchr(buf, '\n', scan)) == NULL)
		return len > GATE_CTL_MAX_LINE ? GATE_CTL_TOO_LONG :
		    GATE_CTL_MORE;
	*used = (size_t)(lf - buf) + 1;
	n = (size_t)(lf - buf);
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	/* exact bytes: "status\0x" is not "status" */
	if (n == 6 && memcmp(buf, "status", 6) == 0)
		return GATE_CTL_STATUS;
	if (n == 6 && memcmp(buf, "reload", 6) == 0)
		return GATE_CTL_RELOAD;
	if (n == 6 && memcmp(buf, "reopen", 6) == 0)
		return GATE_CTL_REOPEN;
	if (n == 2 && memcmp(buf, "ca", 2) == 0)
		return GATE_CTL_CA;
	return GATE_CTL_UNKNOWN;
}
