/*
 * The enforcement plan: what aisb-enforce must let out of the sandbox.
 *
 * The launcher derives the plan from the policy and hands it over as a small
 * line-based text (docs/enforcer.md).  The parser is pure: bytes in, a plan
 * or an error message out; no I/O, no allocation besides the plan itself.
 */
#ifndef AISB_ENF_PLAN_H
#define AISB_ENF_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Size bounds of the plan; the parser rejects anything larger. */
#define ENF_PLAN_MAX_BYTES	65536	/* whole plan */
#define ENF_PLAN_MAX_LINE	512	/* one line, without its newline */
#define ENF_PLAN_MAX_GATES	8	/* gate lines */
#define ENF_PLAN_MAX_NAMES	64	/* allow-name lines */
#define ENF_PLAN_MAX_PORTS	16	/* ports on one allow-name line */
#define ENF_PLAN_MAX_RESOLVERS	3	/* resolver lines */
#define ENF_PLAN_MAX_NAME	253	/* DNS name, without the final dot */
#define ENF_PLAN_MAX_PREFIX	64	/* log-prefix (the kernel allows 127) */
#define ENF_PLAN_MAX_RANGES	16	/* allow-range lines */
#define ENF_PLAN_MAX_PATH	255	/* record PATH, bytes */
#define ENF_RECORD_MIN		1024	/* record MAXBYTES: headers and more */
#define ENF_RECORD_LIMIT	(1ULL << 40)	/* record MAXBYTES: 1 TiB */
#define ENF_PLAN_MAX_TPORTS	16	/* ports on the transparent line */
#define ENF_PLAN_MAX_SERVE	16	/* ports on the serve line */
#define ENF_PLAN_MAX_HOMEDIRS	8	/* home-dir lines */
#define ENF_PLAN_MAX_HOMEDIR	127	/* bytes of a home-dir path */
#define ENF_SANDBOX_HOME	"/home/sandbox"	/* where home-dir folders go */

/*
 * aisb-enforce exits EXIT_ENFORCE when enforcement failed and
 * EXIT_CONFIG on a bad plan or usage (exitcode.h): nothing ran.
 */

#define ENF_TTL_MIN_DEFAULT	30
#define ENF_TTL_MAX_DEFAULT	3600
#define ENF_TTL_LIMIT		86400	/* dns-min-ttl/dns-max-ttl upper bound */

enum enf_mode {
	ENF_MODE_GATE = 1,	/* only the gate's address and ports */
	ENF_MODE_DIRECT,	/* resolved addresses of allowed names */
	ENF_MODE_NONE		/* loopback only */
};

enum enf_proto {
	ENF_PROTO_TCP = 6,	/* IPPROTO_TCP */
	ENF_PROTO_UDP = 17	/* IPPROTO_UDP */
};

/* An address of either family; addr holds 4 or 16 bytes, network order. */
struct enf_addr {
	int		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 addr[16];
};

struct enf_endpoint {
	struct enf_addr	 addr;
	uint16_t	 port;		/* host order */
	enum enf_proto	 proto;
};

struct enf_name {
	char		 name[ENF_PLAN_MAX_NAME + 1];	/* lower case, no final dot */
	uint16_t	 ports[ENF_PLAN_MAX_PORTS];	/* host order, distinct */
	size_t		 nports;
};

/* A CIDR block; bits past prefix are zero. */
struct enf_range {
	struct enf_addr	 net;
	unsigned	 prefix;
};

struct enf_plan {
	enum enf_mode		 mode;
	struct enf_endpoint	 gates[ENF_PLAN_MAX_GATES];
	size_t			 ngates;
	struct enf_name		 names[ENF_PLAN_MAX_NAMES];
	size_t			 nnames;
	struct enf_endpoint	 resolvers[ENF_PLAN_MAX_RESOLVERS];	/* proto unused */
	size_t			 nresolvers;
	struct enf_range	 ranges[ENF_PLAN_MAX_RANGES];	/* allow-range */
	size_t			 nranges;
	struct enf_endpoint	 stub;		/* dns-stub; proto unused */
	int			 has_stub;
	uint32_t		 ttl_min;	/* seconds */
	uint32_t		 ttl_max;	/* seconds */
	char			 log_prefix[ENF_PLAN_MAX_PREFIX + 1];	/* "" = no log */
	/* record: packets to a pcapng file (direct mode; record.h) */
	char			 record_path[ENF_PLAN_MAX_PATH + 1];	/* "" = none */
	uint64_t		 record_max;	/* bytes of the file, at most */
	/*
	 * Gate mode (tproxy.h): "transparent PORT[,PORT...]" catches the
	 * sandbox's TCP to these ports, "dns-gate" its DNS, both carried
	 * to the first TCP gate by the relay.  The relay's two local ports
	 * are no plan line: aisb-enforce sets them once it has bound them,
	 * before the ruleset is built from the plan.
	 */
	uint16_t		 tports[ENF_PLAN_MAX_TPORTS];	/* host order */
	size_t			 ntports;
	/*
	 * "transparent-range ADDRESS/PREFIX": the sandbox's TCP to any port
	 * of this range (the gate's synthetic addresses, which its DNS
	 * hands out) goes to the relay too; the gate maps the address back
	 * to the name it gave and decides name and port.
	 */
	struct enf_range	 trange;
	int			 has_trange;
	int			 dns_gate;
	uint16_t		 relay_port;	/* TCP, set at run time */
	uint16_t		 relay_dns_port; /* UDP and TCP, at run time */
	/*
	 * aisb-enforce --init only (a Kubernetes pod, docs/kubernetes.md):
	 * "gate-uid UID", the uid of a gate in the sandbox's own network
	 * namespace (a sidecar), whose sockets may reach any address while
	 * every other uid's reach only loopback and the gate lines; "serve
	 * PORT[,PORT...]", local TCP ports whose answers to connections
	 * opened from outside may leave (a server in the pod, a probe).
	 */
	uid_t			 gate_uid;	/* 0: no gate-uid line */
	uint16_t		 serve[ENF_PLAN_MAX_SERVE];	/* host order */
	size_t			 nserve;
	/*
	 * "home-dir PATH": a folder under ENF_SANDBOX_HOME the command
	 * expects (an agent recipe's config folder, CODEX_HOME), made as the
	 * sandbox user when missing: a home volume made before the recipe
	 * has none, and the image's copy reaches only a new volume.  PATH is
	 * relative: letters, digits, '.', '_', '-', and '/' between parts
	 * that are not "." or "..".
	 */
	char			 homedirs[ENF_PLAN_MAX_HOMEDIRS]
				    [ENF_PLAN_MAX_HOMEDIR + 1];
	size_t			 nhomedirs;
};

/*
 * Parses len bytes of buf (need not be NUL-terminated, at most
 * ENF_PLAN_MAX_BYTES).  Returns a new plan the caller frees with
 * enf_plan_free(), or NULL with "line N: what is wrong" in err.
 */
struct enf_plan	*enf_plan_parse(const char *buf, size_t len, char *err,
		    size_t errlen);
void		 enf_plan_free(struct enf_plan *);

/*
 * Reads a whole plan from fd (a file or a pipe) up to ENF_PLAN_MAX_BYTES.
 * Returns the number of bytes read, or -1 with a message in err.
 */
ssize_t		 enf_plan_read(int fd, char *buf, size_t bufsz, char *err,
		    size_t errlen);

/*
 * True for addresses no DNS answer may open in direct mode, whatever the
 * plan: unspecified, loopback, link-local (cloud metadata), multicast and
 * broadcast, and IPv6 forms that carry IPv4 (mapped, SIIT, compatible,
 * 6to4, Teredo, NAT64 and its local-use prefix): the ADDRCLASS_LOCAL and
 * ADDRCLASS_CARRIES rows of common/addrclass.c.
 */
int		 enf_addr_refused(const struct enf_addr *);

/*
 * The private and special-purpose range an address lies in ("private
 * 10.0.0.0/8"), or NULL for a public one (or one enf_addr_refused() takes).
 * The same table the policy engine denies (common/addrclass.c,
 * docs/policy.md); in direct mode an answer in one of them is refused
 * unless an allow-range line covers it.
 */
const char	*enf_addr_private(const struct enf_addr *);

/*
 * Whether a DNS answer may go into the sets: not refused, and public or
 * inside one of the plan's allow-range blocks.  On refusal *why says why.
 */
int		 enf_plan_addr_ok(const struct enf_plan *, const struct enf_addr *,
		    const char **why);

/* The gate the relay dials: the first TCP gate line, or NULL. */
const struct enf_endpoint *enf_plan_relay_gate(const struct enf_plan *);

/* Whether the relay takes TCP: transparent ports or transparent-range. */
int		 enf_plan_catches_tcp(const struct enf_plan *);

/* True when any address of the plan (gate or resolver) is IPv6. */
int		 enf_plan_uses_ipv6(const struct enf_plan *);
const char	*enf_mode_name(enum enf_mode);
/* Formats an address into buf (at least INET6_ADDRSTRLEN bytes). */
const char	*enf_addr_str(const struct enf_addr *, char *buf, size_t bufsz);

#endif
