/*
 * Internal layout of a compiled policy.  Only the files of policy/ include this.
 */
#ifndef AISB_POLICY_INT_H
#define AISB_POLICY_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "policy.h"

/* One entry of a rule's requests: allow or deny list ("POST /v1/messages"). */
struct policy_reqrule {
	char			 method[POLICY_MAX_METHOD + 1];	/* "": any ("*") */
	char			*pattern;	/* the path pattern; '*' any bytes */
	size_t			 patlen;
	unsigned		 line, column;
	char			*text;		/* "METHOD PATTERN", canonical */
};

/* One entry of a rule's secrets: list. */
struct policy_secret {
	char			*name;
	enum policy_secret_mode	 mode;
	char			*header;	/* lower case; NULL: REPLACE */
	char			*user;		/* BASIC; else NULL */
};

struct policy_rule {
	enum policy_rule_kind	 kind;
	enum policy_verdict	 action;
	char			*pattern;	/* exact: name; wildcard: "*.suffix"; regex: "~re"; cidr: "net/len" */
	size_t			 patlen;
	struct policy_port_range *ports;
	size_t			 nports;

	/* regex */
	pcre2_code		*re;
	uint32_t		 re_minlen;
	char			*re_key;	/* index suffix, or NULL: try for every name */
	size_t			 re_keylen;

	/* cidr */
	struct policy_addr	 net;
	unsigned		 prefix;

	const char		*file;		/* the policy's file name */
	unsigned		 line, column;

	/* inspection (inspect.c): name rules of the allow list only */
	int			 inspect;
	struct policy_reqrule	*req_allow, *req_deny;	/* sorted, distinct */
	size_t			 nreq_allow, nreq_deny;
	struct policy_secret	*secrets;	/* sorted by name */
	size_t			 nsecrets;
};

/* Open addressing on names; one slot per distinct name. */
struct policy_hslot {
	const char		*key;		/* NULL: empty slot */
	size_t			 keylen;
	uint64_t		 hash;
	struct policy_rule	*allow;		/* exact or wildcard rules */
	struct policy_rule	*deny;
	struct policy_rule	**re;		/* suffix table: regexes filed here */
	size_t			 nre;
};

struct policy_htab {
	struct policy_hslot	*slots;
	size_t			 mask;		/* capacity - 1, capacity a power of two */
	size_t			 used;
};

struct policy_range {
	struct policy_addr	 net;
	unsigned		 prefix;
};

struct policy {
	int			 refs;
	char			*file;

	struct policy_rule	**rules;	/* canonical order: allow, then deny */
	size_t			 nrules;

	struct policy_htab	 exact;
	struct policy_htab	 sfx;		/* wildcards by the suffix after "*.",
						   and indexed regexes */
	struct policy_rule	**re_allow, **re_deny;	/* unindexed regexes */
	size_t			 nre_allow, nre_deny;
	struct policy_rule	**cidr_allow, **cidr_deny;
	size_t			 ncidr_allow, ncidr_deny;

	struct policy_range	*allow_ranges;
	size_t			 nallow_ranges;

	char			*dns_servers[POLICY_MAX_DNS_SERVERS];
	size_t			 ndns_servers;
	unsigned		 dns_min_ttl, dns_max_ttl;

	pcre2_match_context	*mctx;
	char			*dump;
	size_t			 dumplen;
	char			 sha256[POLICY_SHA256_HEX + 1];
};

#define POLICY_DEFAULT_MIN_TTL	5
#define POLICY_DEFAULT_MAX_TTL	300
#define POLICY_TTL_LIMIT	86400

/* addr.c */
int	 policy_addr_in(const struct policy_addr *a, const struct policy_addr *net,
	    unsigned prefix);
int	 policy_parse_cidr(const char *in, size_t len, struct policy_addr *net,
	    unsigned *prefix, char *err, size_t errlen, char *hint, size_t hintlen);
int	 policy_addr_cmp(const struct policy_addr *, const struct policy_addr *);

/* match.c */
uint64_t policy_hash(const char *, size_t);
int	 policy_htab_init(struct policy_htab *, size_t n);
struct policy_hslot *policy_htab_slot(struct policy_htab *, const char *,
	    size_t);	/* finds or claims the slot for a key */
void	 policy_htab_free(struct policy_htab *);

/* regex.c */
int	 policy_re_index_key(struct policy_rule *);
int	 policy_re_match(const struct policy *, const struct policy_rule *,
	    const char *, size_t);

/* inspect.c: the rule's inspect, requests and secrets */
void	 policy_inspect_free(struct policy_rule *);
int	 policy_inspect_same(const struct policy_rule *,
	    const struct policy_rule *);

/* dump.c */
int	 policy_build_dump(struct policy *);

#endif
