/*
 * The relay of transparent capture (gate mode, docs/enforcer.md).
 *
 * The plan's nat chain (nft.c) redirects the sandbox's TCP to the
 * transparent ports, and its DNS over UDP and TCP, to the relay's local
 * listeners on 127.0.0.1 and ::1.  The relay carries each to the gate over
 * the gate's ordinary proxy port with the session's credential:
 *
 *	TCP to a transparent port:  "AISB-TRANSPARENT <original port>", then
 *	    the client's bytes, both ways, with half-close;
 *	DNS over TCP:  "AISB-DNS *", then the client's bytes (the framing is
 *	    the same on both sides);
 *	DNS over UDP:  one persistent "AISB-DNS *" connection, queries framed
 *	    and pipelined, answers back in order to the client that asked.
 *
 * The relay parses nothing of a client's stream: it learns the port the
 * client dialled (SO_ORIGINAL_DST) and, from /proc, the program that
 * dialled it; the gate reads the name from the SNI or the Host header and
 * decides as for CONNECT.  It runs as the sandbox user with no capability
 * (it holds nothing the command lacks: the credential is in the command's
 * HTTPS_PROXY), so that it can read the command's /proc/PID/fd to name the
 * tool; the command can kill it, and then loses transparent capture only.
 */
#ifndef AISB_ENF_TPROXY_H
#define AISB_ENF_TPROXY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "enforcer/plan.h"
#include "enforcer/privdrop.h"

#define ENF_TPROXY_MAX_CONNS	256	/* TCP clients at once; more: closed */
#define ENF_TPROXY_BUF		16384	/* bytes buffered each way, each */
#define ENF_TPROXY_MAX_QUERIES	64	/* UDP queries awaiting their answer */
#define ENF_TPROXY_MAX_UDP	1232	/* bytes of a UDP query; larger: dropped
					   here, for the gate closes the shared
					   DNS stream on a frame over
					   DNSMSG_EDNS_SIZE, and with it every
					   other query waiting on it */
#define ENF_TPROXY_MAX_ANSWER	65535	/* bytes of an answer (TCP framing) */
#define ENF_TPROXY_MAX_TOOL	32	/* bytes of X-Aisb-Tool */
#define ENF_TPROXY_MAX_AUTH	512	/* bytes of the Proxy-Authorization value */
#define ENF_TPROXY_MAX_HEAD	1024	/* bytes of the head sent to the gate */
#define ENF_TPROXY_IDLE_S	300	/* a silent TCP pair is closed after it */

struct enf_tproxy;
struct sockaddr_storage;

/*
 * Whether two socket addresses name the same endpoint (family, address,
 * port): how the relay tells a connection dialled to itself from one
 * the nat chain redirected (SO_ORIGINAL_DST fills a sockaddr_in or _in6
 * and leaves the length as given, so lengths say nothing).
 */
int	 enf_tproxy_same_endpoint(const struct sockaddr_storage *,
	    const struct sockaddr_storage *);

/*
 * Binds the listeners the plan asks for (TCP for transparent, UDP and TCP
 * for dns-gate; on 127.0.0.1, and on ::1 when the sandbox has it) on
 * ephemeral ports, writes them into plan->relay_port and relay_dns_port
 * for the ruleset, and takes the credential from the proxy variables of
 * the environment (the one whose host and port are the plan's gate).
 * NULL with err.
 */
struct enf_tproxy *enf_tproxy_open(struct enf_plan *plan, char *err,
		    size_t errlen);

/*
 * Forks the relay: the child closes every other descriptor, becomes creds
 * with no privilege (enf_drop_all), dies with its parent, says it is
 * ready and serves until then.  Returns its pid once it said so, or -1
 * with err (the command must not run: exit 77).
 */
pid_t		 enf_tproxy_start(struct enf_tproxy *, const struct enf_creds *,
		    char *err, size_t errlen);

/* Closes the listeners (the parent's copies) and wipes the credential. */
void		 enf_tproxy_free(struct enf_tproxy *);

/*
 * The relay's own (tproxy_tool.c): the name of the program that opened
 * the connection whose client end is peer, cleaned as
 * enf_tproxy_tool_clean() does, into tool; "" when it cannot be told.
 */
void		 enf_tproxy_tool_of(const struct sockaddr_storage *peer,
		    char *tool, size_t len);

/*
 * Pure helpers, exported for the tests.
 *
 * enf_tproxy_auth: "Basic BASE64(user:password)" from a proxy URL
 * http://user:password@HOST:PORT/ whose HOST and PORT are the gate's
 * (percent-escapes in user and password decoded); 0, or -1 when the URL
 * is not the gate's or carries no credential.  Input bounded by
 * ENF_TPROXY_MAX_AUTH.
 */
int		 enf_tproxy_auth(const char *url, const struct enf_endpoint *gate,
		    char *out, size_t outlen);

/*
 * The head for one connection: kind "AISB-TRANSPARENT" with port, or
 * "AISB-DNS" (port ignored); auth, tool and dialled may be NULL or "".
 * Returns its length, or 0 when it does not fit in outlen.
 */
size_t		 enf_tproxy_head(char *out, size_t outlen, int dns,
		    uint16_t port, const char *auth, const char *tool,
		    const char *dialled);

/*
 * The most a UDP client takes in one answer: its EDNS UDP size (an OPT
 * record in the additional section), at least 512 and at most 65535, or
 * 512 without one.  Bounded by len; a query it cannot walk gets 512.
 */
size_t		 enf_tproxy_udp_limit(const uint8_t *q, size_t len);

/*
 * A program name as X-Aisb-Tool carries it: at most ENF_TPROXY_MAX_TOOL
 * bytes of [A-Za-z0-9._+-], others replaced by '_'; "" stays "".
 */
void		 enf_tproxy_tool_clean(const char *in, char *out, size_t outlen);

#endif
