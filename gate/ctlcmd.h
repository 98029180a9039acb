/*
 * The control socket's command line, ended by LF (CRLF accepted), at most
 * GATE_CTL_MAX_LINE bytes before the LF: "status", "reload", "reopen",
 * "ca", and for --ask (conn/ask.c) "pending", "watch", "approve N once",
 * "approve N session" and "deny N", N a held request's id in decimal
 * (1 .. GATE_CTL_MAX_ID, no sign, no leading zero).
 */
#ifndef AISB_GATE_CTLCMD_H
#define AISB_GATE_CTLCMD_H

#include <stddef.h>
#include <stdint.h>

#define GATE_CTL_MAX_LINE	256
#define GATE_CTL_MAX_ID		UINT64_C(9007199254740991)	/* 2^53 - 1:
					   exact in every JSON reader */

enum {
	GATE_CTL_TOO_LONG = -1,	/* no LF in the first GATE_CTL_MAX_LINE + 1 */
	GATE_CTL_MORE = 0,	/* no LF yet */
	GATE_CTL_STATUS,
	GATE_CTL_RELOAD,
	GATE_CTL_REOPEN,	/* the audit log (as SIGUSR1) */
	GATE_CTL_CA,		/* the inspecting CA's certificate */
	GATE_CTL_PENDING,	/* --ask: the held requests */
	GATE_CTL_WATCH,		/* --ask: a stream of held and answered */
	GATE_CTL_APPROVE_ONCE,	/* *id: let that one request through */
	GATE_CTL_APPROVE_SESSION, /* *id: ... and its host:port until exit */
	GATE_CTL_DENY,		/* *id: deny it now */
	GATE_CTL_UNKNOWN,	/* the last: the fuzzer checks the range */
};

/*
 * Parse the command at the start of buf[0..len).  On a command, *used is
 * the bytes of its line, LF included, and for the three that name a held
 * request *id is its id (0 otherwise).
 */
int	 gate_ctl_parse(const char *buf, size_t len, size_t *used,
	    uint64_t *id);

#endif
