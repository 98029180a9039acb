/*
 * The exit codes aisb, aisb-gate and aisb-enforce share, defined once.
 * They are sysexits' values, so that a caller tells "could not enforce"
 * from "bad configuration" whichever of the three said it: aisb passes
 * the enforcer's on, and doctor reads them.  Anything else a command
 * exits with is its own (a session returns its command's status).
 */
#ifndef AISB_EXITCODE_H
#define AISB_EXITCODE_H

#define EXIT_USAGE	64	/* EX_USAGE: a bad command line */
/* aisb apply/recover: a target changed since its stage was made */
#define EXIT_CONFLICT	65	/* EX_DATAERR */
/* aisb apply: stopped part way; aisb recover ID brings it to an end */
#define EXIT_IOERR	74	/* EX_IOERR */
/* another session holds what this one needs (the workspace's writer
 * lock, a persistent draft): try again when it ends */
#define EXIT_BUSY	75	/* EX_TEMPFAIL */
#define EXIT_ENFORCE	77	/* EX_NOPERM: enforcement could not be set up */
#define EXIT_CONFIG	78	/* EX_CONFIG: usage, configuration or policy */
#define EXIT_TIMEOUT	124	/* as timeout(1): ran past its time limit */

#endif
