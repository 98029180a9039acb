/*
 * What else than its request line an upstream may act on (override.c):
 * the protocol an Upgrade names, the method-override and URL-rewrite
 * conventions of web frameworks and front ends, and the push a git
 * discovery announces.  An inspected request is decided by its method
 * and path (policy_decide_request); a field or parameter that makes the
 * upstream run another method or path is decided as if the line said it
 * too, so that a requests: entry is not passed by naming the refused
 * request in a header.  Pure: no I/O, no allocation; fuzzed with the
 * request path (tests/fuzz/fuzz_gate_inspect.c).
 */
#ifndef AISB_GATE_OVERRIDE_H
#define AISB_GATE_OVERRIDE_H

#include <stddef.h>

#include "gate/http.h"
#include "policy.h"

#define GATE_OVERRIDE_MAX	4	/* override fields and parameters a
					   request may carry */

#define GATE_OVERRIDE_RPC	POLICY_PUSH_RPC
#define GATE_OVERRIDE_DETAIL	256	/* a discovery's refusal, for people */

/* The method and path a refusal was for, spans of the head or its own. */
struct gate_override_pair {
	const char	*method;
	size_t		 mlen;
	const char	*target;
	size_t		 tlen;
	char		 upper[GATE_HTTP_MAX_METHOD + 1];	/* an override
					   method, as the upstream reads it */
	char		 rpc[GATE_HTTP_MAX_LINE + sizeof(GATE_OVERRIDE_RPC)];
					/* the push a discovery announces */
	char		 detail[GATE_OVERRIDE_DETAIL];	/* why, when it was */
};

/*
 * The protocol a head's Upgrade fields name (a request's or a 101's),
 * into out (at most max bytes of it and "...": out holds max + 4; ""
 * without one): 0 when none or "websocket" alone (any case), -1
 * otherwise.  Every field is looked at: a second one is a second offer.
 */
int	 gate_override_upgrade(const struct gate_http_req *h, const char *head,
	    char *out, size_t max);

/*
 * The request parsed in head (req), allowed by its line (its method and
 * target, the origin-form target t[0..tlen) it was decided with), decided again
 * for every method its fields or query name (X-HTTP-Method-Override,
 * X-HTTP-Method, X-Method-Override, the query's _method: upper-cased, as
 * the frameworks read them) and every path its fields name
 * (X-Original-URL, X-Rewrite-URL), each with the other's alternatives;
 * and every such path that is a push's discovery
 * (policy_push_discovery) decided as the POST it announces too.
 * Returns 0 with *d the first refusal (and *pair what it was for; a
 * discovery's d->detail is pair->detail, valid as long as *pair) or an
 * allow; -1 when such a field is malformed, there are more than
 * GATE_OVERRIDE_MAX or a discovery's query is ambiguous, with *err a
 * static reason (a 400: an upstream's reading of it is anyone's guess).
 */
int	 gate_override_decide(const struct policy_rule *rule,
	    const struct gate_http_req *req, const char *head, const char *t,
	    size_t tlen, struct policy_request_decision *d,
	    struct gate_override_pair *pair, const char **err);

#endif
