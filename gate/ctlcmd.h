/*
 * The control socket's command line: "status", "reload", "reopen" or "ca", ended by LF
 * (CRLF accepted), at most GATE_CTL_MAX_LINE bytes before the LF.
 */
#ifndef AISB_GATE_CTLCMD_H
#define AISB_GATE_CTLCMD_H

#include <stddef.h>

#define GATE_CTL_MAX_LINE	256

enum {
	GATE_CTL_TOO_LONG = -1,	/* no LF in the first GATE_CTL_MAX_LINE + 1 */
	GATE_CTL_MORE = 0,	/* no LF yet */
	GATE_CTL_STATUS,
	GATE_CTL_RELOAD,
	GATE_CTL_REOPEN,	/* the audit log (as SIGUSR1) */
	GATE_CTL_CA,		/* the inspecting CA's certificate */
	GATE_CTL_UNKNOWN,	/* the last: the fuzzer checks the range */
};

/*
 * Parse the command at the start of buf[0..len).  On a command, *used is
 * the bytes of its line, LF included.
 */
int	 gate_ctl_parse(const char *buf, size_t len, size_t *used);

#endif
