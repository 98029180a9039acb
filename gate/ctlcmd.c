/*
 * The control socket's command line (control.c), pure so that it can be
 * fuzzed (tests/fuzz/fuzz_gate_ctl.c).  Bounds: a line of at most
 * GATE_CTL_MAX_LINE bytes before its LF; an id of at most 16 digits and
 * at most GATE_CTL_MAX_ID.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "gate/ctlcmd.h"

#define ID_DIGITS	16	/* GATE_CTL_MAX_ID has 16 */

/* "N" or "N " + rest: *id and the bytes taken, or 0 when no id. */
static size_t
parse_id(const char *p, size_t n, uint64_t *id)
{
	size_t		 i;
	uint64_t	 v = 0;

	if (n == 0 || p[0] < '1' || p[0] > '9')
		return 0;
	for (i = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
		if (i == ID_DIGITS)
			return 0;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > GATE_CTL_MAX_ID)
		return 0;
	*id = v;
	return i;
}

/* "approve N once|session" or "deny N", in the n bytes at p. */
static int
parse_answer(const char *p, size_t n, uint64_t *id)
{
	size_t	 k;

	if (n > 5 && memcmp(p, "deny ", 5) == 0)
		return (k = parse_id(p + 5, n - 5, id)) != 0 && 5 + k == n ?
		    GATE_CTL_DENY : GATE_CTL_UNKNOWN;
	if (n <= 8 || memcmp(p, "approve ", 8) != 0 ||
	    (k = parse_id(p + 8, n - 8, id)) == 0)
		return GATE_CTL_UNKNOWN;
	p += 8 + k;
	n -= 8 + k;
	if (n == 5 && memcmp(p, " once", 5) == 0)
		return GATE_CTL_APPROVE_ONCE;
	if (n == 8 && memcmp(p, " session", 8) == 0)
		return GATE_CTL_APPROVE_SESSION;
	return GATE_CTL_UNKNOWN;
}

int
gate_ctl_parse(const char *buf, size_t len, size_t *used, uint64_t *id)
{
	const char	*lf;
	size_t		 n, scan = len > GATE_CTL_MAX_LINE + 1 ?
			    GATE_CTL_MAX_LINE + 1 : len;
	int		 cmd;

	*id = 0;
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
	if (n == 7 && memcmp(buf, "pending", 7) == 0)
		return GATE_CTL_PENDING;
	if (n == 5 && memcmp(buf, "watch", 5) == 0)
		return GATE_CTL_WATCH;
	if ((cmd = parse_answer(buf, n, id)) == GATE_CTL_UNKNOWN)
		*id = 0;
	return cmd;
}
