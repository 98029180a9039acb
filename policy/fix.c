/*
 * The policy change that would allow a denied destination, as YAML a
 * person can paste (policy_fix_yaml, policy.h).  One function for the
 * gate's audit line and answer and for the launcher's denial summary, so
 * that what is suggested is what the loader accepts.
 *
 * What is suggested follows the decision (docs/policy.md):
 *   a name           host rule; ports: [N] unless N is 80 or 443 (the
 *                    default ports of an allow rule)
 *   an IP literal    cidr rule of that one address; and allow_ranges too
 *                    when it is in a built-in denied range, since the
 *                    cidr rule alone would then be refused by class
 *   port refused     the same rule with ports: [N] always: a second rule
 *                    for the name adds the port
 *   address class    allow_ranges: [ADDR/32] (or /128)
 *   deny rule        a comment only: nothing added allows it
 * Names are validated by the target parser (letters, digits, '-', '_',
 * '.'); a single label is quoted so that YAML never reads it as a null or
 * a boolean; IPv6 is always quoted (single quotes in the flow form, which
 * goes inside a quoted header parameter).
 */
#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "policy.h"

/* The flow form goes into a quoted header parameter: single quotes. */
static const char *
quote_of(const struct policy_target *t, int flow)
{
	const char	*q = flow ? "'" : "\"";

	if (t->is_ip)
		return t->addr.family == AF_INET6 ? q : "";
	return strchr(t->host, '.') == NULL ? q : "";
}

/* "  - host: NAME\n    ports: [N]\n" or the flow form "{host: NAME, ...}" */
static void
put_rule(struct buf *o, const struct policy_target *t, int ports, int flow)
{
	const char	*q = quote_of(t, flow), *key = t->is_ip ? "cidr" : "host";
	char		 suffix[8] = "";

	if (t->is_ip)
		snprintf(suffix, sizeof(suffix), "/%u",
		    t->addr.family == AF_INET ? 32 : 128);
	if (flow) {
		buf_printf(o, "{%s: %s%s%s%s", key, q, t->host, suffix, q);
		if (ports)
			buf_printf(o, ", ports: [%u]", t->port);
		buf_printf(o, "}");
		return;
	}
	buf_printf(o, "  - %s: %s%s%s%s\n", key, q, t->host, suffix, q);
	if (ports)
		buf_printf(o, "    ports: [%u]\n", t->port);
}

static void
put_range(struct buf *o, const struct policy_addr *a, int flow)
{
	char		 ip[64];
	const char	*q = a->family != AF_INET6 ? "" : flow ? "'" : "\"";

	policy_addr_str(a, ip, sizeof(ip));
	buf_printf(o, "allow_ranges: [%s%s/%u%s]%s", q, ip,
	    a->family == AF_INET ? 32 : 128, q, flow ? "" : "\n");
}

int
policy_fix_yaml(const struct policy *p, const struct policy_target *t,
    enum policy_reason reason, const struct policy_addr *refused,
    int flow, char *buf, size_t len)
{
	struct buf	 o;
	int		 ports = t->port != 80 && t->port != 443;

	if (len == 0)
		return -1;
	buf_fixed(&o, buf, len);	/* the caller's: never grown */
	switch (reason) {
	case POLICY_R_DENY_RULE:
		buf_printf(&o, "# a deny rule refuses it: remove or narrow "
		    "that rule%s", flow ? "" : "\n");
		break;
	case POLICY_R_PORT_NOT_ALLOWED:
		ports = 1;
		/* FALLTHROUGH */
	case POLICY_R_HOST_NOT_ALLOWED:
		if (t->hostlen == 0)
			return 0;
		buf_printf(&o, flow ? "{allow: [" : "allow:\n");
		put_rule(&o, t, ports, flow);
		if (flow)
			buf_printf(&o, "]");
		if (t->is_ip && policy_classify(p, &t->addr) != NULL) {
			buf_printf(&o, flow ? ", " : "");
			put_range(&o, &t->addr, flow);
		}
		if (flow)
			buf_printf(&o, "}");
		break;
	case POLICY_R_ADDR_CLASS:
		if (refused == NULL)
			return 0;
		buf_printf(&o, flow ? "{" : "");
		put_range(&o, refused, flow);
		buf_printf(&o, flow ? "}" : "");
		break;
	default:
		return 0;
	}
	if (o.failed) {
		buf[0] = '\0';
		return -1;
	}
	return (int)o.len;
}
