/*
 * libaisbpolicy: the YAML egress policy, compiled into an immutable object
 * shared by aisb-gate, aisb-enforce and aisb.
 *
 * Pure: no sockets, no event loop, no I/O beyond reading the policy file.
 * A compiled policy is never modified; it is reference counted so that a
 * reloading daemon can swap policies while older decisions still point at
 * rules of the old one.  The reference count is atomic, everything else is
 * read-only, so one policy may be used from several threads.
 *
 * Ownership: every policy_* function that returns a pointer into a policy
 * (rules, strings) returns memory owned by that policy, valid while the
 * caller holds a reference.
 */
#ifndef AISB_POLICY_H
#define AISB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#define POLICY_SCHEMA_VERSION	1
#define POLICY_MAX_FILE_SIZE	(1024 * 1024)	/* bytes; larger files are refused */
#define POLICY_MAX_NAME		253	/* bytes of a host name, no trailing dot */
#define POLICY_MAX_LABEL	63
#define POLICY_MAX_REGEX	1024	/* bytes of one regular expression */
#define POLICY_MAX_ERRORS	32	/* errors collected before loading stops */
#define POLICY_MAX_DNS_SERVERS	8
#define POLICY_SHA256_HEX	64
/* inspection (docs/policy.md, "Inspected hosts"); bounds of the schema */
#define POLICY_MAX_REQ_RULES	128	/* entries in one requests: list */
#define POLICY_MAX_REQ_PATTERN	512	/* bytes of one path pattern */
#define POLICY_MAX_REQ_STARS	16	/* '*' in one path pattern */
#define POLICY_MAX_REQ_PATH	8192	/* bytes of a path with ;parameters decided */
#define POLICY_MAX_METHOD	20	/* bytes of a method, as the gate reads them */
#define POLICY_MAX_SECRETS	16	/* secrets: entries of one rule */
#define POLICY_MAX_SECRET_NAME	64	/* bytes of a secret's name */
#define POLICY_MAX_HEADER_NAME	64	/* bytes of a header's name */
#define POLICY_MAX_BASIC_USER	64	/* bytes of a basic-auth user */
#define POLICY_MAX_QUERY_PARAM	64	/* bytes of a query: parameter's name */

struct policy;
struct policy_rule;

/* One load error: where it is, what is wrong, what to write instead. */
struct policy_error {
	unsigned	 line;		/* 1-based; 0 when the error concerns the whole file */
	unsigned	 column;	/* 1-based; 0 when unknown */
	char		 msg[256];
	char		 hint[256];	/* "" when there is nothing useful to suggest */
};

struct policy_errors {
	char			 file[256];	/* as given to the loader */
	unsigned		 count;		/* errors stored, at most POLICY_MAX_ERRORS */
	unsigned		 dropped;	/* errors found beyond that */
	struct policy_error	 err[POLICY_MAX_ERRORS];
};

/* An IP address in network byte order; v4 uses the first 4 bytes. */
struct policy_addr {
	uint8_t		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 bytes[16];
};

/*
 * A parsed and normalised request target (host[:port]).
 * host is lower case with no trailing dot, or the canonical text of an
 * IP literal (without brackets).
 */
struct policy_target {
	char			 host[POLICY_MAX_NAME + 1];
	size_t			 hostlen;
	int			 is_ip;		/* host is an IP literal; addr is set */
	struct policy_addr	 addr;
	uint16_t		 port;
};

enum policy_verdict {
	POLICY_DENY = 0,
	POLICY_ALLOW = 1,
};

enum policy_reason {
	POLICY_R_ALLOWED = 0,		/* an allow rule matched name and port */
	POLICY_R_DENY_RULE,		/* a deny rule matched */
	POLICY_R_HOST_NOT_ALLOWED,	/* no allow rule matches the name/address */
	POLICY_R_PORT_NOT_ALLOWED,	/* the name matched, the port did not */
	POLICY_R_ADDR_CLASS,		/* a resolved/literal address is in a denied range */
	/* a request on an inspected host (policy_decide_request) */
	POLICY_R_REQUEST_DENIED,	/* a requests: deny entry matched */
	POLICY_R_REQUEST_NOT_ALLOWED,	/* requests: allow entries, none matched */
	POLICY_R_REQUEST_BAD_PATH,	/* the path is not in its normal form */
	POLICY_R_REQUEST_METHOD,	/* TRACE, TRACK: never on an inspected host */
};

struct policy_decision {
	enum policy_verdict		 verdict;
	enum policy_reason		 reason;
	const struct policy_rule	*rule;	/* the rule that decided; NULL for "no rule" */
};

enum policy_rule_kind {
	POLICY_RULE_EXACT = 0,		/* host: example.com */
	POLICY_RULE_WILDCARD,		/* host: "*.example.org" (pattern holds "example.org") */
	POLICY_RULE_REGEX,		/* host: "~regex" (pattern holds the regex) */
	POLICY_RULE_CIDR,		/* cidr: 192.0.2.0/24 */
};

struct policy_port_range {
	uint16_t	 lo, hi;		/* inclusive */
};

/* A read-only view of one rule. */
struct policy_rule_info {
	enum policy_rule_kind		 kind;
	enum policy_verdict		 action;	/* allow or deny list */
	const char			*pattern;	/* canonical text as dumped */
	const struct policy_port_range	*ports;		/* sorted, disjoint, coalesced */
	size_t				 nports;
	struct policy_addr		 net;		/* CIDR only */
	unsigned			 prefix;	/* CIDR only */
	const char			*file;
	unsigned			 line, column;	/* where it was first written */
	int				 inspect;	/* inspect: true */
	size_t				 nreq_allow;	/* requests: allow entries */
	size_t				 nreq_deny;	/* requests: deny entries */
	size_t				 nsecrets;	/* secrets: entries */
};

/*
 * How a secret reaches the upstream of an inspected host, after the
 * request was allowed (secrets: of a rule).
 */
enum policy_secret_mode {
	POLICY_SECRET_QUERY = 0,	/* query: PARAM: the placeholder as the
					   whole value of that parameter of the
					   target becomes the value; nowhere
					   else */
	POLICY_SECRET_HEADER,		/* header: NAME: VALUE */
	POLICY_SECRET_BEARER,		/* header: Bearer VALUE */
	POLICY_SECRET_BASIC,		/* header: Basic base64(user:VALUE) */
};

struct policy_secret_info {
	const char		*name;		/* the secret's name */
	enum policy_secret_mode	 mode;
	const char		*header;	/* lower case; NULL for QUERY */
	const char		*user;		/* BASIC only; else NULL */
	const char		*query;		/* QUERY only: the parameter */
};

/* The decision on one request (policy_decide_request). */
struct policy_request_decision {
	enum policy_verdict	 verdict;
	enum policy_reason	 reason;
	const char		*entry;		/* "POST /v1/messages" that decided; NULL: none */
	unsigned		 line, column;	/* of that entry */
	const char		*detail;	/* static: why a path was refused */
};

/* Loading.  Both return 0 and set *out, or -1 with errs filled (errs may be NULL). */
int	 policy_load_file(const char *path, struct policy **out,
	    struct policy_errors *errs);
int	 policy_load_buffer(const char *name, const char *buf, size_t len,
	    struct policy **out, struct policy_errors *errs);
/* Print errs to a buffer as "file:line:col: error: msg\n  hint: ...\n". */
size_t	 policy_errors_format(const struct policy_errors *errs, char *buf,
	    size_t len);

struct policy	*policy_ref(struct policy *);
void		 policy_free(struct policy *);	/* drops one reference; NULL is fine */

/*
 * Target parsing.  Bound: len <= 512 bytes of input.  If the input has no
 * port, default_port is used, or it is an error when default_port is 0.
 * Returns 0, or -1 with a message in err.
 */
int	 policy_parse_target(const char *in, size_t len, uint16_t default_port,
	    struct policy_target *out, char *err, size_t errlen);
/* Normalise a bare host name (no port, no brackets) into out (POLICY_MAX_NAME+1). */
int	 policy_normalize_name(const char *in, size_t len, char *out,
	    size_t *outlen, char *err, size_t errlen);
int	 policy_parse_addr(const char *in, size_t len, struct policy_addr *out);
/* Canonical text of an address (inet_ntop); buf of at least 46 bytes. */
const char	*policy_addr_str(const struct policy_addr *, char *buf, size_t len);

/*
 * Decisions.  These never allocate and never fail.
 * policy_decide(): name rules for a name, CIDR rules for an IP literal.
 * The name must be normalised (policy_parse_target does that).
 */
void	 policy_decide(const struct policy *, const struct policy_target *,
	    struct policy_decision *);
void	 policy_decide_name(const struct policy *, const char *name,
	    size_t namelen, uint16_t port, struct policy_decision *);
void	 policy_decide_addr(const struct policy *, const struct policy_addr *,
	    uint16_t port, struct policy_decision *);
/*
 * Whether some port of the (normalised) name is allowed: 1 with d the
 * decision of policy_decide_name() for the lowest such port of a rule's
 * range (its rule allowed it), or 0 with d a denial.  Never allocates.
 */
int	 policy_name_allowed_any(const struct policy *, const char *name,
	    size_t namelen, struct policy_decision *d);

/*
 * Address classification against the built-in denied ranges, less the
 * policy's allow_ranges.  Returns NULL when the address may be dialled, or
 * a static description of the denied range ("loopback 127.0.0.0/8").
 * Embedded IPv4 (mapped, compatible, NAT64, 6to4, Teredo) is classified as
 * the IPv4 address it carries.  p may be NULL (no exemptions).
 */
const char	*policy_classify(const struct policy *p, const struct policy_addr *);

/*
 * The change that would allow the destination t refused for reason, as
 * YAML for people (fix.c): block style with top-level keys (allow:,
 * allow_ranges:), ending in a newline; with flow set, one line of flow
 * YAML (for a header).  refused is the address refused by class
 * (POLICY_R_ADDR_CLASS; NULL: none that allow_ranges could exempt, such
 * as the gate's own).  p decides whether
 * an IP literal also needs allow_ranges.  Returns the length written, 0
 * when nothing in a policy would allow it (buf is then ""), -1 when len
 * is short (buf ""); POLICY_FIX_MAX is always enough.
 */
#define POLICY_FIX_MAX		640
int		 policy_fix_yaml(const struct policy *p,
	    const struct policy_target *t, enum policy_reason reason,
	    const struct policy_addr *refused, int flow, char *buf,
	    size_t len);

/*
 * Inspected hosts.  The rule is the one that allowed the connection
 * (policy_decision.rule); its inspect, requests and secrets apply.
 *
 * policy_decide_request(): one HTTP request, by its method and its
 * origin-form target ("/path?query"; the query is never matched, so that
 * appending one cannot slip past a deny entry).  TRACE and TRACK are
 * refused whatever the entries say (POLICY_R_REQUEST_METHOD: the upstream
 * answers with the request it got, the secrets the gate added in it).
 * Without requests: entries every other request is allowed.  Otherwise the path must be in its normal
 * form (no dot or empty segments, no backslash or fragment, no
 * percent-encoded '/', '\\' or unreserved byte: what an upstream might
 * read as another path), a deny entry that matches refuses it (the path
 * compared ignoring case: an upstream that folds case must not reach a
 * denied path), and an allow entry must match (case as written).
 * Bounds: the target's length is the caller's (the gate's 8 KiB request
 * line); matching is linear in it per '*' of an entry.  Never allocates.
 */
int	 policy_rule_inspect(const struct policy_rule *);
/*
 * 1 when two rules (either NULL: no rule) inspect alike: neither does,
 * or both with the same requests: entries and secrets: (a reload that
 * changed them is told by this, gate/conn/recheck.c).
 */
int	 policy_rule_inspect_same(const struct policy_rule *,
	    const struct policy_rule *);
void	 policy_decide_request(const struct policy_rule *, const char *method,
	    size_t methodlen, const char *target, size_t targetlen,
	    struct policy_request_decision *);
size_t	 policy_rule_secret_count(const struct policy_rule *);
void	 policy_rule_secret(const struct policy_rule *, size_t i,
	    struct policy_secret_info *);
/*
 * A rule's inspect:, requests: and secrets: as the canonical form writes
 * them (lines indented for a list entry: "    inspect: true\n..."), for a
 * tool that writes a policy out again with rules added; "" for a rule
 * that does not inspect.  Malloc'd; NULL when out of memory.
 */
char	*policy_rule_inspect_yaml(const struct policy_rule *);
/*
 * Whether the origin-form target t[0..len) is a git push's discovery,
 * REPO/info/refs?service=git-receive-pack (smart HTTP: the push's POST
 * REPO/git-receive-pack follows it): 1 with *repolen the length of REPO,
 * 0 when it is not, -1 when its query is ambiguous (a 400).  The path
 * must end in /info/refs (any case, one trailing '/' allowed, the last
 * segment's ;parameters dropped as servlet containers drop them); its query
 * is split at '&', ';' and '#' (what one server or another splits at),
 * each name and value percent-decoded ('+' a space), trimmed of spaces
 * and compared in any case: more than one service parameter, a
 * malformed escape or an escaped control byte (%00 ends a C server's
 * string) anywhere in the query is ambiguous.  Looks at len bytes only.
 */
#define POLICY_PUSH_RPC	"/git-receive-pack"
int	 policy_push_discovery(const char *t, size_t len, size_t *repolen);
/*
 * The push a discovery t[0..len) announces, decided on r (the gate's extra
 * decision, and aisb policy test's): 0 when t is no push's discovery or
 * its POST is allowed; 1 when refused, with d that POST's decision and
 * rpc[0..*rpclen) its path (REPO/git-receive-pack, rpcmax bytes at most,
 * NUL-terminated); -1 when t's query is ambiguous or the path does not
 * fit rpc (the gate's 400).
 */
int	 policy_decide_push_discovery(const struct policy_rule *r,
	    const char *t, size_t len, char *rpc, size_t rpcmax,
	    size_t *rpclen, struct policy_request_decision *d);
/*
 * Why a push's discovery was refused, for people (git prints it as
 * "remote:" lines): the POST it announces (rpc[0..len)) and what refused
 * that (o, policy_decide_push_discovery's), into out.
 */
void	 policy_push_detail(const struct policy_request_decision *o,
	    const char *rpc, size_t len, char *out, size_t outlen);
/*
 * The change that would allow a refused request, as policy_fix_yaml()
 * writes it: block YAML (a comment naming the rule, then the entry to add
 * to its requests: allow:), or with flow one line.  The path is the
 * target's without the query; one over 200 bytes is cut and ends in '*'.
 * Returns the length, 0 when no entry would allow it, -1 when len is
 * short; POLICY_FIX_MAX is always enough.
 */
int	 policy_request_fix_yaml(const struct policy_rule *,
	    const char *method, size_t methodlen, const char *target,
	    size_t targetlen, enum policy_reason reason, int flow, char *buf,
	    size_t len);

/* Introspection, for the launcher, the enforcer and the dump. */
size_t	 policy_rule_count(const struct policy *);
const struct policy_rule	*policy_rule_at(const struct policy *, size_t i);
void	 policy_rule_info(const struct policy_rule *, struct policy_rule_info *);
/* "policy.yaml:12:5 allow host: *.example.org"; returns buf. */
const char	*policy_rule_describe(const struct policy_rule *, char *buf,
	    size_t len);
const char	*policy_reason_str(enum policy_reason);
int		 policy_port_allowed(const struct policy_port_range *, size_t n,
	    uint16_t port);

size_t		 policy_allow_range_count(const struct policy *);
void		 policy_allow_range_at(const struct policy *, size_t i,
	    struct policy_addr *net, unsigned *prefix);
/* DNS settings: servers as "ip:port" text, "" list means system resolver. */
size_t		 policy_dns_server_count(const struct policy *);
const char	*policy_dns_server_at(const struct policy *, size_t i);
unsigned	 policy_dns_min_ttl(const struct policy *);
unsigned	 policy_dns_max_ttl(const struct policy *);
const char	*policy_file(const struct policy *);

/*
 * Canonical dump: YAML that loads to the same policy, then a comment line
 * "# sha256:<hex>".  Same meaning, same text, same hash.  Returns a
 * malloc'd NUL-terminated string the caller frees, or NULL on ENOMEM.
 */
char		*policy_dump(const struct policy *, size_t *lenp);
/* The identity: SHA-256 of the dump's YAML part, as 64 hex digits. */
const char	*policy_sha256(const struct policy *);

/* Frees the calling thread's regex match scratch (optional, at thread exit). */
void		 policy_thread_cleanup(void);

#endif /* AISB_POLICY_H */
