/*
 * The head an inspected connection sends upstream for a request that was
 * allowed (inject.c).  Pure: no I/O; fuzzed with the request path
 * (tests/fuzz/fuzz_gate_inspect.c).
 */
#ifndef AISB_GATE_INJECT_H
#define AISB_GATE_INJECT_H

#include <stddef.h>

#include "policy.h"

struct buf;
struct gate_http_req;
struct gate_secrets;

#define INJECT_NAMES_MAX	256	/* bytes of a list of secret names */
#define INJECT_HEAD_MAX		(256 * 1024)	/* bytes of the head written */

/* What was done to a head, for its audit line (names only, never values). */
struct gate_inject_info {
	char	 added[INJECT_NAMES_MAX];	/* secrets put in, "A,B" */
	char	 missing[INJECT_NAMES_MAX];	/* the rule's secrets the gate
						   was not given */
	char	 foreign[INJECT_NAMES_MAX];	/* placeholders sent where they
						   are worth nothing */
};

/*
 * The request head parsed in head (gate_http_parse, req) as it goes
 * upstream: the request line and the fields as the client wrote them,
 * but for the secrets of rule (NULL: none) held in ss (NULL: none):
 *   header, bearer, basic   every field of that name dropped, the field
 *                           set once, after the others
 *   query                   "PARAM=<placeholder>" in the target's query,
 *                           the placeholder the parameter's whole value,
 *                           becomes "PARAM=<value>"; nowhere else
 * Placeholders left in what goes upstream (another host's secret, the
 * rule's query secret outside its parameter, in a field, or inside a
 * client's "Authorization: Basic") stay as they are, worth nothing, and
 * are named in info->foreign; the rule's header secrets are not named.
 * A rule without secrets gets the head byte for byte; otherwise each
 * field is written "name: value" (its whitespace around the value
 * trimmed, as parsed).  out must be a buf_init()ed buffer (BUF_SECRET: it
 * will hold values); returns 0, or -1 when out failed (memory, or
 * INJECT_HEAD_MAX) or the head would hold more than GATE_HTTP_MAX_HEADERS
 * fields (the client's 100, and a secret's).
 */
int	 gate_inject_head(const struct gate_http_req *req, const char *head,
	    const struct policy_rule *rule, const struct gate_secrets *ss,
	    struct buf *out, struct gate_inject_info *info);

/*
 * Names of ss's placeholders found in the len bytes at p, appended to
 * names (comma-separated, each once): for heads that are not rewritten
 * (a forwarded request, a refused one).
 */
void	 gate_inject_scan(const struct gate_secrets *ss, const char *p,
	    size_t len, char *names, size_t nameslen);

/*
 * Says (log_warnx, "WHEN: secret NAME (rule ...) was not given to the
 * gate") each secret the inspecting rules of the gate's policies name
 * that ss (NULL: none) does not hold: its requests go out without it.
 * At start and after each reload; each name once, by worker 0 alone
 * under --workers (all read the same files).
 */
void	 gate_inject_missing(const struct gate *, const struct gate_secrets *,
	    const char *when);

#endif
