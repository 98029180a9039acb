/*
 * Plan parser: strict, line-based, bounded (see plan.h and docs/enforcer.md).
 *
 * Anything not understood is an error: an unknown keyword, a missing or extra
 * argument, a repeated singleton, a value out of range.  A plan that parses
 * is complete and coherent for its mode, so later stages never second-guess.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrclass.h"
#include "enforcer/plan.h"

#define PLAN_VERSION	1
#define MAX_TOKENS	8

struct parser {
	struct enf_plan	*plan;
	size_t		 lineno;
	char		*err;
	size_t		 errlen;
	int		 seen_version;
	int		 seen_mode;
	int		 seen_ttl_min;
	int		 seen_ttl_max;
	int		 seen_prefix;
	int		 seen_record;
	int		 seen_transparent;
	int		 seen_serve;
};

static int
perr(struct parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
perr(struct parser *p, const char *fmt, ...)
{
	char	 msg[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->errlen > 0)
		snprintf(p->err, p->errlen, "line %zu: %s", p->lineno, msg);
	return -1;
}

/* Decimal without sign, leading zeros or spaces; 1..max. */
static int
parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long	 v = 0;

	if (*s < '1' || *s > '9')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (unsigned long)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 0;
}

static int
parse_port(const char *s, uint16_t *port)
{
	unsigned long	 v;

	if (parse_uint(s, 65535, &v) == -1)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* A literal address only: names would need a resolver we do not trust yet. */
static int
parse_addr(const char *s, struct enf_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (strchr(s, '%') != NULL)
		return -1;	/* scoped addresses have no place here */
	if (inet_pton(AF_INET, s, a->addr) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -1;
}

static int
addr_is_unusable(const struct enf_addr *a)
{
	static const uint8_t	 zero[16];

	if (a->family == AF_INET)
		return memcmp(a->addr, zero, 4) == 0 || a->addr[0] >= 224;
	return memcmp(a->addr, zero, 16) == 0 || a->addr[0] == 0xff;
}

/*
 * An LDH host name, as the launcher writes it: labels of [a-z0-9-], not
 * starting or ending with '-', 1..63 bytes each, at most 253 in total.
 * Upper case is folded; a trailing dot, wildcards and IP literals are refused.
 */
static int
parse_name(const char *s, char *out, const char **why)
{
	size_t	 len = strlen(s), label = 0, i;
	int	 alpha = 0;

	if (len == 0 || len > ENF_PLAN_MAX_NAME) {
		*why = "name is empty or longer than 253 bytes";
		return -1;
	}
	if (s[0] == '*') {
		*why = "wildcards cannot be resolved in direct mode; use the gate";
		return -1;
	}
	for (i = 0; i <= len; i++) {
		char	 c = s[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63) {
				*why = "empty label or label longer than 63 bytes";
				return -1;
			}
			if (s[i - 1] == '-') {
				*why = "label ends with '-'";
				return -1;
			}
			out[i] = c;
			label = 0;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c >= 'a' && c <= 'z')
			alpha = 1;
		else if (c == '-') {
			if (label == 0) {
				*why = "label starts with '-'";
				return -1;
			}
		} else if (c < '0' || c > '9') {
			*why = "name has a character outside [a-z0-9.-]";
			return -1;
		}
		out[i] = c;
		label++;
	}
	if (!alpha) {
		*why = "an address is not a name; the launcher pins addresses";
		return -1;
	}
	return 0;
}

static int
parse_port_list(struct parser *p, char *s, struct enf_name *n)
{
	char	*tok, *save = NULL;
	size_t	 i;

	if (*s == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,") != NULL)
		return perr(p, "empty port in list \"%s\"", s);
	for (tok = strtok_r(s, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		uint16_t	 port;

		if (parse_port(tok, &port) == -1)
			return perr(p, "bad port \"%s\" (1-65535)", tok);
		for (i = 0; i < n->nports; i++)
			if (n->ports[i] == port)
				return perr(p, "port %u listed twice", port);
		if (n->nports == ENF_PLAN_MAX_PORTS)
			return perr(p, "more than %d ports on one name",
			    ENF_PLAN_MAX_PORTS);
		n->ports[n->nports++] = port;
	}
	return 0;
}

static int
kw_version(struct parser *p, char **tok, size_t ntok)
{
	unsigned long	 v;

	if (ntok != 2)
		return perr(p, "usage: aisb-plan VERSION");
	if (parse_uint(tok[1], 1000, &v) == -1 || v != PLAN_VERSION)
		return perr(p, "unsupported plan version \"%s\" (this enforcer "
		    "reads version %d)", tok[1], PLAN_VERSION);
	p->seen_version = 1;
	return 0;
}

static int
kw_mode(struct parser *p, char **tok, size_t ntok)
{
	if (ntok != 2)
		return perr(p, "usage: mode gate|direct|none");
	if (p->seen_mode)
		return perr(p, "mode given twice");
	if (strcmp(tok[1], "gate") == 0)
		p->plan->mode = ENF_MODE_GATE;
	else if (strcmp(tok[1], "direct") == 0)
		p->plan->mode = ENF_MODE_DIRECT;
	else if (strcmp(tok[1], "none") == 0)
		p->plan->mode = ENF_MODE_NONE;
	else
		return perr(p, "unknown mode \"%s\" (gate, direct or none)",
		    tok[1]);
	p->seen_mode = 1;
	return 0;
}

static int
kw_gate(struct parser *p, char **tok, size_t ntok)
{
	struct enf_plan		*plan = p->plan;
	struct enf_endpoint	 e;
	size_t			 i;

	if (ntok != 3 && ntok != 4)
		return perr(p, "usage: gate ADDRESS PORT [tcp|udp]");
	memset(&e, 0, sizeof(e));
	if (parse_addr(tok[1], &e.addr) == -1 || addr_is_unusable(&e.addr))
		return perr(p, "bad gate address \"%s\" (a literal unicast "
		    "IPv4 or IPv6 address)", tok[1]);
	if (parse_port(tok[2], &e.port) == -1)
		return perr(p, "bad gate port \"%s\" (1-65535)", tok[2]);
	e.proto = ENF_PROTO_TCP;
	if (ntok == 4) {
		if (strcmp(tok[3], "udp") == 0)
			e.proto = ENF_PROTO_UDP;
		else if (strcmp(tok[3], "tcp") != 0)
			return perr(p, "bad protocol \"%s\" (tcp or udp)",
			    tok[3]);
	}
	for (i = 0; i < plan->ngates; i++)
		if (memcmp(&plan->gates[i], &e, sizeof(e)) == 0)
			return perr(p, "gate listed twice");
	if (plan->ngates == ENF_PLAN_MAX_GATES)
		return perr(p, "more than %d gate lines", ENF_PLAN_MAX_GATES);
	plan->gates[plan->ngates++] = e;
	return 0;
}

static int
kw_allow_name(struct parser *p, char **tok, size_t ntok)
{
	struct enf_plan	*plan = p->plan;
	struct enf_name	*n;
	const char	*why = NULL;
	size_t		 i;

	if (ntok != 3)
		return perr(p, "usage: allow-name NAME PORT[,PORT...]");
	if (plan->nnames == ENF_PLAN_MAX_NAMES)
		return perr(p, "more than %d allow-name lines",
		    ENF_PLAN_MAX_NAMES);
	n = &plan->names[plan->nnames];
	memset(n, 0, sizeof(*n));
	if (parse_name(tok[1], n->name, &why) == -1)
		return perr(p, "bad name \"%.64s\": %s", tok[1], why);
	for (i = 0; i < plan->nnames; i++)
		if (strcmp(plan->names[i].name, n->name) == 0)
			return perr(p, "name %s listed twice (put all its "
			    "ports on one line)", n->name);
	if (parse_port_list(p, tok[2], n) == -1)
		return -1;
	plan->nnames++;
	return 0;
}

static int
resolver_is_local(const struct enf_addr *a)
{
	static const uint8_t	 lo6[16] = { [15] = 1 };
	static const uint8_t	 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (a->family == AF_INET)
		return a->addr[0] == 127;
	return memcmp(a->addr, lo6, 16) == 0 ||
	    memcmp(a->addr, mapped, sizeof(mapped)) == 0;
}

static int
kw_resolver(struct parser *p, char **tok, size_t ntok)
{
	struct enf_plan		*plan = p->plan;
	struct enf_endpoint	 e;
	size_t			 i;

	if (ntok != 2 && ntok != 3)
		return perr(p, "usage: resolver ADDRESS [PORT]");
	memset(&e, 0, sizeof(e));
	if (parse_addr(tok[1], &e.addr) == -1 || addr_is_unusable(&e.addr))
		return perr(p, "bad resolver address \"%s\"", tok[1]);
	/*
	 * A server inside the sandbox is reached by any spelling of a local
	 * address, which a rule on its address cannot confine, and the
	 * command could take its port; a mapped address would leave as IPv4
	 * and miss the IPv6 rules written for it.
	 */
	if (resolver_is_local(&e.addr))
		return perr(p, "resolver %s is a loopback or IPv4-mapped "
		    "address (the resolver must be outside the sandbox)",
		    tok[1]);
	e.port = 53;
	if (ntok == 3 && parse_port(tok[2], &e.port) == -1)
		return perr(p, "bad resolver port \"%s\" (1-65535)", tok[2]);
	for (i = 0; i < plan->nresolvers; i++)
		if (memcmp(&plan->resolvers[i], &e, sizeof(e)) == 0)
			return perr(p, "resolver listed twice");
	if (plan->nresolvers == ENF_PLAN_MAX_RESOLVERS)
		return perr(p, "more than %d resolver lines",
		    ENF_PLAN_MAX_RESOLVERS);
	plan->resolvers[plan->nresolvers++] = e;
	return 0;
}

/* ADDRESS/PREFIX with no bits set past the prefix, into *r. */
static int
parse_range(struct parser *p, const char *tok, struct enf_range *r)
{
	char			 a[INET6_ADDRSTRLEN + 1];
	const char		*slash;
	unsigned long		 prefix;
	size_t			 i, max;

	if ((slash = strchr(tok, '/')) == NULL ||
	    (size_t)(slash - tok) >= sizeof(a))
		return perr(p, "bad range \"%.64s\" (ADDRESS/PREFIX)", tok);
	memcpy(a, tok, (size_t)(slash - tok));
	a[slash - tok] = '\0';
	memset(r, 0, sizeof(*r));
	if (parse_addr(a, &r->net) == -1)
		return perr(p, "bad range address \"%s\"", a);
	max = r->net.family == AF_INET ? 32 : 128;
	if (strcmp(slash + 1, "0") == 0)
		prefix = 0;
	else if (parse_uint(slash + 1, max, &prefix) == -1)
		return perr(p, "bad prefix \"%s\" (0-%zu)", slash + 1, max);
	r->prefix = (unsigned)prefix;
	for (i = r->prefix; i < max; i++)
		if (r->net.addr[i / 8] & (0x80 >> (i % 8)))
			return perr(p, "range %s has bits set past /%u",
			    tok, r->prefix);
	return 0;
}

static int
kw_allow_range(struct parser *p, char **tok, size_t ntok)
{
	struct enf_plan		*plan = p->plan;
	struct enf_range	 r;
	size_t			 i;

	if (ntok != 2)
		return perr(p, "usage: allow-range ADDRESS/PREFIX");
	if (parse_range(p, tok[1], &r) == -1)
		return -1;
	for (i = 0; i < plan->nranges; i++)
		if (memcmp(&plan->ranges[i], &r, sizeof(r)) == 0)
			return perr(p, "range listed twice");
	if (plan->nranges == ENF_PLAN_MAX_RANGES)
		return perr(p, "more than %d allow-range lines",
		    ENF_PLAN_MAX_RANGES);
	plan->ranges[plan->nranges++] = r;
	return 0;
}

/*
 * The gate's synthetic addresses: every TCP port of them to the relay.
 * At least a /8 (a /16 for IPv6) narrower than everything: a range that
 * wide would take the sandbox's every connection to the relay, which the
 * gate then refuses (it names only the addresses it handed out).
 */
static int
kw_transparent_range(struct parser *p, char **tok, size_t ntok)
{
	struct enf_plan	*plan = p->plan;

	if (ntok != 2)
		return perr(p, "usage: transparent-range ADDRESS/PREFIX");
	if (plan->has_trange)
		return perr(p, "transparent-range given twice");
	if (parse_range(p, tok[1], &plan->trange) == -1)
		return -1;
	if (plan->trange.prefix < (plan->trange.net.family == AF_INET ? 8 :
	    16))
		return perr(p, "transparent-range %s is wider than /%d",
		    tok[1], plan->trange.net.family == AF_INET ? 8 : 16);
	plan->has_trange = 1;
	return 0;
}

/* The stub the command asks: a loopback address inside the sandbox. */
static int
kw_dns_stub(struct parser *p, char **tok, size_t ntok)
{
	struct enf_endpoint	*e = &p->plan->stub;
	static const uint8_t	 lo6[16] = { [15] = 1 };

	if (ntok != 2 && ntok != 3)
		return perr(p, "usage: dns-stub ADDRESS [PORT]");
	if (p->plan->has_stub)
		return perr(p, "dns-stub given twice");
	memset(e, 0, sizeof(*e));
	if (parse_addr(tok[1], &e->addr) == -1 ||
	    (e->addr.family == AF_INET && e->addr.addr[0] != 127) ||
	    (e->addr.family == AF_INET6 &&
	    memcmp(e->addr.addr, lo6, 16) != 0))
		return perr(p, "bad dns-stub address \"%s\" (127.0.0.0/8 or "
		    "::1: the stub answers only inside the sandbox)", tok[1]);
	e->port = 53;
	if (ntok == 3 && parse_port(tok[2], &e->port) == -1)
		return perr(p, "bad dns-stub port \"%s\" (1-65535)", tok[2]);
	p->plan->has_stub = 1;
	return 0;
}

static int
kw_ttl(struct parser *p, char **tok, size_t ntok, uint32_t *out, int *seen)
{
	unsigned long	 v;

	if (ntok != 2)
		return perr(p, "usage: %s SECONDS", tok[0]);
	if (*seen)
		return perr(p, "%s given twice", tok[0]);
	if (parse_uint(tok[1], ENF_TTL_LIMIT, &v) == -1)
		return perr(p, "bad %s \"%s\" (1-%d seconds)", tok[0], tok[1],
		    ENF_TTL_LIMIT);
	*out = (uint32_t)v;
	*seen = 1;
	return 0;
}

/* The prefix goes to the kernel log: a conservative character set. */
static int
kw_log_prefix(struct parser *p, char **tok, size_t ntok)
{
	const char	*s;

	if (ntok != 2)
		return perr(p, "usage: log-prefix WORD");
	if (p->seen_prefix)
		return perr(p, "log-prefix given twice");
	if (strlen(tok[1]) > ENF_PLAN_MAX_PREFIX)
		return perr(p, "log-prefix longer than %d bytes",
		    ENF_PLAN_MAX_PREFIX);
	for (s = tok[1]; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_.:=-/", *s) != NULL))
			return perr(p, "log-prefix has a character outside "
			    "[A-Za-z0-9_.:=/-]");
	memcpy(p->plan->log_prefix, tok[1], strlen(tok[1]) + 1);
	p->seen_prefix = 1;
	return 0;
}

/*
 * record PATH MAXBYTES: an absolute path of [A-Za-z0-9._/-] without "."
 * or ".." components or empty ones (the enforcer creates the file with
 * O_EXCL | O_NOFOLLOW; its folder is checked then), and a bound in bytes.
 */
static int
kw_record(struct parser *p, char **tok, size_t ntok)
{
	const char	*s;
	unsigned long	 v;
	size_t		 len;

	if (ntok != 3)
		return perr(p, "usage: record PATH MAXBYTES");
	if (p->seen_record)
		return perr(p, "record given twice");
	len = strlen(tok[1]);
	if (len > ENF_PLAN_MAX_PATH)
		return perr(p, "record path longer than %d bytes",
		    ENF_PLAN_MAX_PATH);
	if (tok[1][0] != '/' || tok[1][len - 1] == '/')
		return perr(p, "record path \"%.64s\" is not an absolute file "
		    "path", tok[1]);
	for (s = tok[1]; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_.-/", *s) != NULL))
			return perr(p, "record path has a character outside "
			    "[A-Za-z0-9_./-]");
	if (strstr(tok[1], "//") != NULL || strstr(tok[1], "/./") != NULL ||
	    strstr(tok[1], "/../") != NULL ||
	    (len >= 2 && strcmp(tok[1] + len - 2, "/.") == 0) ||
	    (len >= 3 && strcmp(tok[1] + len - 3, "/..") == 0))
		return perr(p, "record path \"%.64s\" has an empty, \".\" or "
		    "\"..\" component", tok[1]);
	if (parse_uint(tok[2], ENF_RECORD_LIMIT, &v) == -1 ||
	    v < ENF_RECORD_MIN)
		return perr(p, "bad record size \"%.32s\" (%d-%llu bytes)",
		    tok[2], ENF_RECORD_MIN, (unsigned long long)ENF_RECORD_LIMIT);
	memcpy(p->plan->record_path, tok[1], len + 1);
	p->plan->record_max = v;
	p->seen_record = 1;
	return 0;
}

/*
 * KEYWORD PORT[,PORT...], once: 1..ENF_PLAN_MAX_PORTS distinct ports into
 * out (transparent: the relay's, tproxy.h; serve: --init's servers).
 */
_Static_assert(ENF_PLAN_MAX_TPORTS >= ENF_PLAN_MAX_PORTS &&
    ENF_PLAN_MAX_SERVE >= ENF_PLAN_MAX_PORTS, "a port line fits its array");

static int
kw_port_line(struct parser *p, char **tok, size_t ntok, uint16_t *out,
    size_t *n, int *seen)
{
	struct enf_name	 ports;
	size_t		 i;

	if (ntok != 2)
		return perr(p, "usage: %s PORT[,PORT...]", tok[0]);
	if (*seen)
		return perr(p, "%s given twice (put all its ports on one line)",
		    tok[0]);
	memset(&ports, 0, sizeof(ports));
	if (parse_port_list(p, tok[1], &ports) == -1)
		return -1;
	for (i = 0; i < ports.nports; i++)
		out[i] = ports.ports[i];
	*n = ports.nports;
	*seen = 1;
	return 0;
}

static int
kw_dns_gate(struct parser *p, char **tok, size_t ntok)
{
	(void)tok;
	if (ntok != 1)
		return perr(p, "usage: dns-gate (no argument)");
	if (p->plan->dns_gate)
		return perr(p, "dns-gate given twice");
	p->plan->dns_gate = 1;
	return 0;
}

/* home-dir PATH (plan.h): a relative path of plain parts, no ".." */
static int
kw_home_dir(struct parser *p, char **tok, size_t ntok)
{
	const char	*s = tok[1];
	size_t		 len, i, part = 0;

	if (ntok != 2)
		return perr(p, "usage: home-dir PATH");
	len = strlen(s);
	if (len == 0 || len > ENF_PLAN_MAX_HOMEDIR || s[0] == '/' ||
	    s[len - 1] == '/')
		return perr(p, "home-dir: a relative path of at most %d bytes",
		    ENF_PLAN_MAX_HOMEDIR);
	for (i = 0; i <= len; i++) {
		if (s[i] == '/' || s[i] == '\0') {
			if (part == 0 || (part == 1 && s[i - 1] == '.') ||
			    (part == 2 && s[i - 1] == '.' && s[i - 2] == '.'))
				return perr(p, "home-dir: an empty, \".\" or "
				    "\"..\" part");
			part = 0;
			continue;
		}
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || strchr("._-", s[i]) != NULL))
			return perr(p, "home-dir: letters, digits, '.', '_', "
			    "'-' and '/' only");
		part++;
	}
	if (p->plan->nhomedirs == ENF_PLAN_MAX_HOMEDIRS)
		return perr(p, "more than %d home-dir lines",
		    ENF_PLAN_MAX_HOMEDIRS);
	memcpy(p->plan->homedirs[p->plan->nhomedirs++], s, len + 1);
	return 0;
}

/*
 * gate-uid UID: a gate runs in the sandbox's network namespace as UID
 * (aisb-enforce --init, a sidecar).  Not 0: the uid would be let out
 * anywhere, and root is what an app container most often runs as.
 */
static int
kw_gate_uid(struct parser *p, char **tok, size_t ntok)
{
	unsigned long	 v;

	if (ntok != 2)
		return perr(p, "usage: gate-uid UID");
	if (p->plan->gate_uid != 0)
		return perr(p, "gate-uid given twice");
	if (parse_uint(tok[1], (unsigned long)(uid_t)-2, &v) == -1)
		return perr(p, "bad gate-uid \"%.32s\" (a numeric uid other "
		    "than 0: the gate runs as a uid of its own)", tok[1]);
	p->plan->gate_uid = (uid_t)v;
	return 0;
}

static int
parse_line(struct parser *p, char *line)
{
	char	*tok[MAX_TOKENS + 1];
	size_t	 ntok = 0;
	char	*s = line;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			*s++ = '\0';
		if (*s == '\0' || *s == '#')
			break;
		if (ntok == MAX_TOKENS + 1)
			return perr(p, "too many words");
		tok[ntok++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
	}
	if (*s == '#' && ntok > 0)
		return perr(p, "a comment must be on a line of its own");
	if (ntok == 0)
		return 0;
	if (ntok > MAX_TOKENS)
		return perr(p, "too many words");

	if (!p->seen_version) {
		if (strcmp(tok[0], "aisb-plan") != 0)
			return perr(p, "the plan must start with "
			    "\"aisb-plan %d\"", PLAN_VERSION);
		return kw_version(p, tok, ntok);
	}
	if (strcmp(tok[0], "aisb-plan") == 0)
		return perr(p, "aisb-plan given twice");
	if (strcmp(tok[0], "mode") == 0)
		return kw_mode(p, tok, ntok);
	if (strcmp(tok[0], "gate") == 0)
		return kw_gate(p, tok, ntok);
	if (strcmp(tok[0], "allow-name") == 0)
		return kw_allow_name(p, tok, ntok);
	if (strcmp(tok[0], "resolver") == 0)
		return kw_resolver(p, tok, ntok);
	if (strcmp(tok[0], "allow-range") == 0)
		return kw_allow_range(p, tok, ntok);
	if (strcmp(tok[0], "dns-stub") == 0)
		return kw_dns_stub(p, tok, ntok);
	if (strcmp(tok[0], "dns-min-ttl") == 0)
		return kw_ttl(p, tok, ntok, &p->plan->ttl_min,
		    &p->seen_ttl_min);
	if (strcmp(tok[0], "dns-max-ttl") == 0)
		return kw_ttl(p, tok, ntok, &p->plan->ttl_max,
		    &p->seen_ttl_max);
	if (strcmp(tok[0], "log-prefix") == 0)
		return kw_log_prefix(p, tok, ntok);
	if (strcmp(tok[0], "record") == 0)
		return kw_record(p, tok, ntok);
	if (strcmp(tok[0], "transparent") == 0)
		return kw_port_line(p, tok, ntok, p->plan->tports,
		    &p->plan->ntports, &p->seen_transparent);
	if (strcmp(tok[0], "transparent-range") == 0)
		return kw_transparent_range(p, tok, ntok);
	if (strcmp(tok[0], "dns-gate") == 0)
		return kw_dns_gate(p, tok, ntok);
	if (strcmp(tok[0], "gate-uid") == 0)
		return kw_gate_uid(p, tok, ntok);
	if (strcmp(tok[0], "serve") == 0)
		return kw_port_line(p, tok, ntok, p->plan->serve,
		    &p->plan->nserve, &p->seen_serve);
	if (strcmp(tok[0], "home-dir") == 0)
		return kw_home_dir(p, tok, ntok);
	return perr(p, "unknown keyword \"%.32s\"", tok[0]);
}

/* Whether a gate line's address lies in the transparent-range. */
static int
trange_holds_gate(const struct enf_plan *plan)
{
	const struct enf_range	*r = &plan->trange;
	size_t			 i, b;

	for (i = 0; i < plan->ngates; i++) {
		const struct enf_addr	*a = &plan->gates[i].addr;

		if (a->family != r->net.family)
			continue;
		for (b = 0; b < r->prefix; b++)
			if ((a->addr[b / 8] ^ r->net.addr[b / 8]) &
			    (0x80 >> (b % 8)))
				break;
		if (b == r->prefix)
			return 1;
	}
	return 0;
}

/* Cross-line rules: what each mode needs and forbids. */
static int
check_plan(struct parser *p)
{
	struct enf_plan	*plan = p->plan;

	if (!p->seen_version)
		return perr(p, "empty plan (it must start with \"aisb-plan "
		    "%d\")", PLAN_VERSION);
	if (!p->seen_mode)
		return perr(p, "no mode line (mode gate|direct|none)");
	if (plan->mode == ENF_MODE_GATE && plan->ngates == 0)
		return perr(p, "mode gate needs at least one gate line");
	if (plan->mode != ENF_MODE_GATE && plan->ngates > 0)
		return perr(p, "gate lines are only for mode gate");
	if (plan->mode == ENF_MODE_DIRECT) {
		if (plan->nnames == 0)
			return perr(p, "mode direct needs at least one "
			    "allow-name line");
		if (plan->nresolvers == 0)
			return perr(p, "mode direct needs at least one "
			    "resolver line");
	} else {
		if (plan->nnames > 0 || plan->nresolvers > 0 ||
		    plan->nranges > 0 || plan->has_stub)
			return perr(p, "allow-name, allow-range, resolver and "
			    "dns-stub lines are only for mode direct");
		if (p->seen_ttl_min || p->seen_ttl_max)
			return perr(p, "dns-min-ttl and dns-max-ttl are only "
			    "for mode direct");
		/* in gate mode the gate records (aisb-gate --record) */
		if (p->seen_record)
			return perr(p, "record is only for mode direct");
	}
	if (plan->mode != ENF_MODE_GATE && plan->gate_uid != 0)
		return perr(p, "gate-uid is only for mode gate");
	if (plan->mode != ENF_MODE_GATE &&
	    (p->seen_transparent || plan->has_trange || plan->dns_gate))
		return perr(p, "transparent, transparent-range and dns-gate "
		    "are only for mode gate");
	/* a pod's lines (aisb-enforce --init, which has no relay) */
	if ((plan->gate_uid != 0 || p->seen_serve) &&
	    (p->seen_transparent || plan->has_trange || plan->dns_gate))
		return perr(p, "gate-uid and serve (aisb-enforce --init) "
		    "exclude transparent, transparent-range and dns-gate "
		    "(the relay of a session)");
	/* the relay carries them to a gate over TCP */
	if ((p->seen_transparent || plan->has_trange || plan->dns_gate) &&
	    enf_plan_relay_gate(plan) == NULL)
		return perr(p, "transparent, transparent-range and dns-gate "
		    "need a tcp gate line");
	if (plan->has_trange && trange_holds_gate(plan))
		return perr(p, "transparent-range holds a gate's address: "
		    "the relay's own connection to it would be caught");
	/* dns-gate catches TCP to port 53 whatever the address */
	if (plan->dns_gate && enf_plan_relay_gate(plan)->port == 53)
		return perr(p, "dns-gate with a gate on port 53: the relay's "
		    "own connection to it would be caught; give the gate "
		    "another port");
	if (plan->ttl_min > plan->ttl_max)
		return perr(p, "dns-min-ttl %u is above dns-max-ttl %u",
		    plan->ttl_min, plan->ttl_max);
	return 0;
}

struct enf_plan *
enf_plan_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	struct parser	 p;
	char		 line[ENF_PLAN_MAX_LINE + 1];
	size_t		 off = 0;

	memset(&p, 0, sizeof(p));
	p.err = err;
	p.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	if (len > ENF_PLAN_MAX_BYTES) {
		perr(&p, "plan larger than %d bytes", ENF_PLAN_MAX_BYTES);
		return NULL;
	}
	if ((p.plan = calloc(1, sizeof(*p.plan))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p.plan->ttl_min = ENF_TTL_MIN_DEFAULT;
	p.plan->ttl_max = ENF_TTL_MAX_DEFAULT;

	while (off < len) {
		size_t	 n = 0;

		p.lineno++;
		while (off < len && buf[off] != '\n') {
			unsigned char	 c = (unsigned char)buf[off];

			if (c == '\0' || c == '\r' || c >= 0x7f ||
			    (c < 0x20 && c != '\t')) {
				perr(&p, "byte 0x%02x is not allowed in a plan",
				    c);
				goto fail;
			}
			if (n == ENF_PLAN_MAX_LINE) {
				perr(&p, "line longer than %d bytes",
				    ENF_PLAN_MAX_LINE);
				goto fail;
			}
			line[n++] = (char)c;
			off++;
		}
		if (off == len) {
			perr(&p, "the last line has no newline (truncated "
			    "plan?)");
			goto fail;
		}
		off++;	/* '\n' */
		line[n] = '\0';
		if (parse_line(&p, line) == -1)
			goto fail;
	}
	if (check_plan(&p) == -1)
		goto fail;
	return p.plan;
fail:
	free(p.plan);
	return NULL;
}

void
enf_plan_free(struct enf_plan *plan)
{
	free(plan);
}

ssize_t
enf_plan_read(int fd, char *buf, size_t bufsz, char *err, size_t errlen)
{
	size_t	 off = 0;
	ssize_t	 n;

	/* One byte more than the bound, to tell "too large" from "fits". */
	if (bufsz < ENF_PLAN_MAX_BYTES + 1) {
		snprintf(err, errlen, "plan buffer too small");
		return -1;
	}
	for (;;) {
		n = read(fd, buf + off, ENF_PLAN_MAX_BYTES + 1 - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "read: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		if (off > ENF_PLAN_MAX_BYTES) {
			snprintf(err, errlen, "plan larger than %d bytes",
			    ENF_PLAN_MAX_BYTES);
			return -1;
		}
	}
	return (ssize_t)off;
}

const struct enf_endpoint *
enf_plan_relay_gate(const struct enf_plan *plan)
{
	size_t	 i;

	for (i = 0; i < plan->ngates; i++)
		if (plan->gates[i].proto == ENF_PROTO_TCP)
			return &plan->gates[i];
	return NULL;
}

int
enf_plan_catches_tcp(const struct enf_plan *plan)
{
	return plan->ntports > 0 || plan->has_trange;
}

int
enf_plan_uses_ipv6(const struct enf_plan *plan)
{
	size_t	 i;

	for (i = 0; i < plan->ngates; i++)
		if (plan->gates[i].addr.family == AF_INET6)
			return 1;
	for (i = 0; i < plan->nresolvers; i++)
		if (plan->resolvers[i].addr.family == AF_INET6)
			return 1;
	return 0;
}

/*
 * Addresses a resolved name may never open, whatever the plan: see plan.h.
 * The blocks are common/addrclass.c's, the table the gate's policy uses.
 */
int
enf_addr_refused(const struct enf_addr *a)
{
	const struct addrclass	*e;

	e = addrclass_find(a->family == AF_INET6, a->addr);
	return e != NULL &&
	    (e->flags & (ADDRCLASS_LOCAL | ADDRCLASS_CARRIES)) != 0;
}

const char *
enf_addr_private(const struct enf_addr *a)
{
	const struct addrclass	*e;

	e = addrclass_find(a->family == AF_INET6, a->addr);
	if (e == NULL || !(e->flags & ADDRCLASS_DENY) ||
	    (e->flags & (ADDRCLASS_LOCAL | ADDRCLASS_CARRIES)) != 0)
		return NULL;
	return e->what;
}

int
enf_plan_addr_ok(const struct enf_plan *plan, const struct enf_addr *a,
    const char **why)
{
	const char	*priv;
	size_t		 i;

	if (enf_addr_refused(a)) {
		*why = "loopback, link-local, multicast or an embedded "
		    "IPv4 form; never allowed";
		return 0;
	}
	if ((priv = enf_addr_private(a)) == NULL)
		return 1;
	for (i = 0; i < plan->nranges; i++)
		if (plan->ranges[i].net.family == a->family &&
		    addrclass_in(a->addr, plan->ranges[i].net.addr,
		    plan->ranges[i].prefix))
			return 1;
	*why = priv;
	return 0;
}

const char *
enf_mode_name(enum enf_mode mode)
{
	switch (mode) {
	case ENF_MODE_GATE:
		return "gate";
	case ENF_MODE_DIRECT:
		return "direct";
	case ENF_MODE_NONE:
		return "none";
	}
	return "?";
}

const char *
enf_addr_str(const struct enf_addr *a, char *buf, size_t bufsz)
{
	if (inet_ntop(a->family, a->addr, buf, (socklen_t)bufsz) == NULL)
		snprintf(buf, bufsz, "?");
	return buf;
}
