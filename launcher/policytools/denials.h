/*
 * What a session was denied, from its audit log (denials.c): read with
 * bounded memory, aggregated by destination, rendered for people by one
 * function for the end of a session and for `aisb sessions show`.
 */
#ifndef AISB_DENIALS_H
#define AISB_DENIALS_H

#include <stdint.h>
#include <stdio.h>

#include "policy.h"

#define LAUNCH_DENY_MAX		32	/* destinations listed; the rest counted */
#define LAUNCH_DENY_LINE	16384	/* bytes of an audit line; longer: skipped */
#define LAUNCH_DENY_READ_MAX	(64UL * 1024 * 1024)	/* bytes read of a log */

struct launch_denial {
	char		 host[POLICY_MAX_NAME + 1];	/* "" when not parsed */
	unsigned	 port;		/* 0 for a name the gate's DNS refused */
	int		 dns;		/* a DNS question, not a connection */
	char		 reason[32];	/* the audit reason token */
	char		 detail[160];	/* for people */
	char		 rule[256];	/* the rule that decided, or "" */
	char		 fix[POLICY_FIX_MAX];	/* YAML (policy_fix_yaml), or "" */
	char		 request[280];	/* "METHOD PATH" of an inspected host's
					   request; "" for a connection */
	unsigned long	 count;
};

/*
 * Transparent capture (issue 16): the connections the gate's audit marks
 * "transparent":true, by the program the relay named ("tool"); those of no
 * known program are counted under "".
 */
#define LAUNCH_TPROXY_TOOLS	16	/* tools listed; the rest counted */
#define LAUNCH_TPROXY_TOOL	32	/* bytes of a tool's name */

struct launch_tool {
	char		 name[LAUNCH_TPROXY_TOOL + 1];
	unsigned long	 count;
};

/*
 * A 407 for a request without credentials, held until the log shows
 * whether the client sent the same request (method, host, port) again
 * with credentials: libcurl's proxy-auth probe (git's default
 * http.proxyAuthMethod, anyauth) does at once, and that is no denial.
 */
struct launch_probe {
	char		 method[16];
	char		 host[POLICY_MAX_NAME + 1];
	unsigned	 port;
	unsigned long	 count;
};

struct launch_denials {
	struct launch_denial	 d[LAUNCH_DENY_MAX];	/* in order of first denial */
	size_t			 n;
	unsigned long		 more;		/* denials past the table */
	/* requests the policy allowed that failed (decision "error") */
	struct launch_denial	 f[LAUNCH_DENY_MAX];
	size_t			 nf;
	unsigned long		 fmore;
	/* malformed requests (reason bad_request) and DNS queries the gate
	 * could not read or does not serve (FORMERR, NOTIMP, BADVERS,
	 * REFUSED without a reason): refused before any decision, neither
	 * the policy's denial nor an allowed one's failure */
	struct launch_denial	 m[LAUNCH_DENY_MAX];
	size_t			 nm;
	unsigned long		 mmore;
	unsigned long		 allowed, denied, failed;	/* decision lines */
	unsigned long		 malformed;			/* of them too */
	int			 truncated;	/* the log was larger than read */
	struct launch_tool	 tools[LAUNCH_TPROXY_TOOLS];
	size_t			 ntools;
	unsigned long		 transparent;	/* connections, all tools */
	unsigned long		 tools_more;	/* of tools past the table */
	struct launch_probe	 probes[LAUNCH_DENY_MAX];	/* held 407s */
	size_t			 nprobes;
	unsigned long		 probes_answered;	/* 407s not counted */
};

/*
 * The fields of one audit line the launcher reads: strings cut to their
 * buffers, "" and 0 when absent.
 */
struct launch_audit_line {
	char		 event[16], decision[16], host[POLICY_MAX_NAME + 1];
	char		 method[16];
	unsigned	 status;
	char		 reason[32], detail[160], rule[256], fix[POLICY_FIX_MAX];
	unsigned	 port;
	/* close lines; --learn lines (suggest.c) */
	uint64_t	 bytes_up, bytes_down;
	int		 learn;
	char		 would[8], would_reason[32];
	/* transparent capture (the relay's X-Aisb-Tool) */
	int		 transparent;
	char		 tool[LAUNCH_TPROXY_TOOL + 1];
	/* event "dns": the question, the answer, queries over the rate */
	char		 name[POLICY_MAX_NAME + 1], answer[48];
	uint64_t	 refused;
	/* a request inside an inspected connection ("event":"request");
	   its method in method */
	char		 path[264];
};

/* One flat JSON object of len bytes (no NUL needed) into f: 0, or -1. */
int	 launch_audit_parse(const char *line, size_t len,
	    struct launch_audit_line *f);
/*
 * Each line of the audit log at path to fn, lines over LAUNCH_DENY_LINE
 * skipped, at most LAUNCH_DENY_READ_MAX bytes (*truncated set when there
 * was more).  0, or -1 when it cannot be opened (errno).
 */
typedef void	(*launch_audit_fn)(void *arg, const char *line, size_t len);
int	 launch_audit_each(const char *path, launch_audit_fn fn, void *arg,
	    int *truncated);

void	 launch_denials_init(struct launch_denials *);
/* One audit line (JSON, len bytes, no NUL needed); others are ignored. */
void	 launch_denials_add(struct launch_denials *, const char *line,
	    size_t len);
/*
 * After the last line: the 407s no credentialed request followed become
 * denials.  launch_denials_read() calls it.
 */
void	 launch_denials_end(struct launch_denials *);
/*
 * Reads the audit log at path, at most LAUNCH_DENY_READ_MAX bytes, then
 * launch_denials_end().  0, or -1 when it cannot be opened (errno).
 */
int	 launch_denials_read(struct launch_denials *, const char *path);
/*
 * For people: one line per denied destination (host:port, count, reason)
 * and, under it, the YAML that would allow it, pasteable; then one line
 * per destination that failed (the gate allowed it, then could not
 * reach it: dns_failed, connect_failed, ...) with its reason; then the
 * malformed requests and DNS queries no policy judged.  prefix
 * starts each line that is not YAML ("aisb: ").  Prints nothing without
 * denials or failures.
 */
void	 launch_denials_print(const struct launch_denials *, FILE *,
	    const char *prefix, const char *logpath);

/*
 * "tools that ignored the proxy variables: curl (3), node (1)": one line
 * when any connection came in transparently, nothing otherwise.
 */
void	 launch_denials_print_tools(const struct launch_denials *, FILE *,
	    const char *prefix);
/*
 * The end of a session: what the audit log at path says was denied, the
 * YAML that would allow each, and the tools that ignored the proxy
 * variables, each line of aisb's own starting with prefix.
 */
void	 launch_denials_summary(const char *path, FILE *f, const char *prefix);

#endif
