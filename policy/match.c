/*
 * Decisions: exact names by hash, wildcards and indexed regexes by label
 * suffix, other regexes last;
 * deny wins over allow.  This is the gate's per-connection path: nothing
 * here allocates (but for one match block per thread, on first use) and
 * nothing fails.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-int.h"

/*
 * FNV-1a, 64 bit, over the bytes from last to first: one right-to-left
 * pass over a name yields the hash of each of its suffixes on the way.
 */
#define HASH_INIT	0xcbf29ce484222325ULL

static inline uint64_t
hash_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ULL;
}

uint64_t
policy_hash(const char *s, size_t len)
{
	uint64_t	 h = HASH_INIT;

	while (len > 0)
		h = hash_step(h, (unsigned char)s[--len]);
	return h;
}

int
policy_htab_init(struct policy_htab *t, size_t n)
{
	size_t	 cap = 8;

	while (cap < n * 2)
		cap <<= 1;
	if ((t->slots = calloc(cap, sizeof(*t->slots))) == NULL)
		return -1;
	t->mask = cap - 1;
	t->used = 0;
	return 0;
}

void
policy_htab_free(struct policy_htab *t)
{
	size_t	 i;

	for (i = 0; t->slots != NULL && i <= t->mask; i++)
		free(t->slots[i].re);
	free(t->slots);
	t->slots = NULL;
}

static const struct policy_hslot *
htab_get(const struct policy_htab *t, const char *key, size_t len, uint64_t h)
{
	size_t			 i = (size_t)h & t->mask;
	const struct policy_hslot *s;

	for (;;) {
		s = &t->slots[i];
		if (s->key == NULL)
			return NULL;
		if (s->hash == h && s->keylen == len &&
		    memcmp(s->key, key, len) == 0)
			return s;
		i = (i + 1) & t->mask;
	}
}

/* The table was sized at init for every key; it never fills. */
struct policy_hslot *
policy_htab_slot(struct policy_htab *t, const char *key, size_t len)
{
	uint64_t		 h = policy_hash(key, len);
	size_t			 i = (size_t)h & t->mask;
	struct policy_hslot	*s;

	for (;;) {
		s = &t->slots[i];
		if (s->key == NULL) {
			s->key = key;
			s->keylen = len;
			s->hash = h;
			t->used++;
			return s;
		}
		if (s->hash == h && s->keylen == len &&
		    memcmp(s->key, key, len) == 0)
			return s;
		i = (i + 1) & t->mask;
	}
}

int
policy_port_allowed(const struct policy_port_range *r, size_t n, uint16_t port)
{
	size_t	 lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (port < r[mid].lo)
			hi = mid;
		else if (port > r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static int
port_ok(const struct policy_rule *r, uint16_t port)
{
	return policy_port_allowed(r->ports, r->nports, port);
}

static void
decide(struct policy_decision *d, enum policy_verdict v, enum policy_reason why,
    const struct policy_rule *r)
{
	d->verdict = v;
	d->reason = why;
	d->rule = r;
}

#define DECIDE(d, v, why, r)	do { decide(d, v, why, r); return; } while (0)

/*
 * Deny wins: every deny rule that can match is looked at before an allow
 * is returned.  One pass over the name's dot-suffixes serves the exact
 * table (the whole name), wildcards and indexed regexes; unindexed regexes
 * come last.  Among allow rules the first that fits the port decides; if
 * rules match the name but none the port, the answer cites one of them.
 */
void
policy_decide_name(const struct policy *p, const char *name, size_t len,
    uint16_t port, struct policy_decision *d)
{
	const struct policy_hslot	*e;
	const struct policy_rule	*allow = NULL, *portmiss = NULL;
	uint64_t			 h = HASH_INIT;
	size_t				 i, k, dots;

	/* Right to left: each dot-suffix that still holds a dot, then the
	 * whole name. */
	for (i = len, dots = 0; i > 0; i--) {
		h = hash_step(h, (unsigned char)name[i - 1]);
		if (name[i - 1] == '.')
			dots++;
		if (i < 2 || name[i - 2] != '.' || dots == 0 ||
		    p->sfx.used == 0 ||
		    (e = htab_get(&p->sfx, name + i - 1, len - i + 1, h)) == NULL)
			continue;
		if (e->deny != NULL && port_ok(e->deny, port))
			DECIDE(d, POLICY_DENY, POLICY_R_DENY_RULE, e->deny);
		if (e->allow != NULL && allow == NULL) {
			if (port_ok(e->allow, port))
				allow = e->allow;
			else
				portmiss = e->allow;	/* the nearest is cited */
		}
		for (k = 0; k < e->nre; k++) {
			const struct policy_rule *r = e->re[k];
			int ok = port_ok(r, port);

			if (r->action == POLICY_DENY) {
				if (ok && policy_re_match(p, r, name, len))
					DECIDE(d, POLICY_DENY,
					    POLICY_R_DENY_RULE, r);
			} else if (allow == NULL && (ok || portmiss == NULL) &&
			    policy_re_match(p, r, name, len)) {
				if (ok)
					allow = r;
				else
					portmiss = r;
			}
		}
	}
	if ((e = htab_get(&p->exact, name, len, h)) != NULL) {
		if (e->deny != NULL && port_ok(e->deny, port))
			DECIDE(d, POLICY_DENY, POLICY_R_DENY_RULE, e->deny);
		if (e->allow != NULL) {
			if (port_ok(e->allow, port))
				allow = e->allow;
			else
				portmiss = e->allow;
		}
	}
	for (i = 0; i < p->nre_deny; i++)
		if (port_ok(p->re_deny[i], port) &&
		    policy_re_match(p, p->re_deny[i], name, len))
			DECIDE(d, POLICY_DENY, POLICY_R_DENY_RULE, p->re_deny[i]);
	if (allow != NULL)
		DECIDE(d, POLICY_ALLOW, POLICY_R_ALLOWED, allow);
	for (i = 0; i < p->nre_allow; i++) {
		const struct policy_rule *r = p->re_allow[i];
		int ok = port_ok(r, port);

		if (!ok && portmiss != NULL)
			continue;	/* would only tell us what we know */
		if (policy_re_match(p, r, name, len)) {
			if (ok)
				DECIDE(d, POLICY_ALLOW, POLICY_R_ALLOWED, r);
			portmiss = r;
		}
	}
	if (portmiss != NULL)
		DECIDE(d, POLICY_DENY, POLICY_R_PORT_NOT_ALLOWED, portmiss);
	decide(d, POLICY_DENY, POLICY_R_HOST_NOT_ALLOWED, NULL);
}

void
policy_decide_addr(const struct policy *p, const struct policy_addr *a,
    uint16_t port, struct policy_decision *d)
{
	const struct policy_rule	*portmiss = NULL;
	size_t				 i;

	for (i = 0; i < p->ncidr_deny; i++) {
		const struct policy_rule *r = p->cidr_deny[i];

		if (port_ok(r, port) && policy_addr_in(a, &r->net, r->prefix))
			DECIDE(d, POLICY_DENY, POLICY_R_DENY_RULE, r);
	}
	for (i = 0; i < p->ncidr_allow; i++) {
		const struct policy_rule *r = p->cidr_allow[i];

		if (!policy_addr_in(a, &r->net, r->prefix))
			continue;
		if (port_ok(r, port))
			DECIDE(d, POLICY_ALLOW, POLICY_R_ALLOWED, r);
		if (portmiss == NULL)
			portmiss = r;
	}
	if (portmiss != NULL)
		DECIDE(d, POLICY_DENY, POLICY_R_PORT_NOT_ALLOWED, portmiss);
	decide(d, POLICY_DENY, POLICY_R_HOST_NOT_ALLOWED, NULL);
}

void
policy_decide(const struct policy *p, const struct policy_target *t,
    struct policy_decision *d)
{
	if (t->is_ip)
		policy_decide_addr(p, &t->addr, t->port, d);
	else
		policy_decide_name(p, t->host, t->hostlen, t->port, d);
}

const char *
policy_reason_str(enum policy_reason r)
{
	switch (r) {
	case POLICY_R_ALLOWED:
		return "allowed";
	case POLICY_R_DENY_RULE:
		return "denied by rule";
	case POLICY_R_HOST_NOT_ALLOWED:
		return "host not allowed";
	case POLICY_R_PORT_NOT_ALLOWED:
		return "port not allowed";
	case POLICY_R_ADDR_CLASS:
		return "address class denied";
	case POLICY_R_REQUEST_DENIED:
		return "request denied by rule";
	case POLICY_R_REQUEST_NOT_ALLOWED:
		return "request not allowed";
	case POLICY_R_REQUEST_BAD_PATH:
		return "path not in its normal form";
	}
	return "unknown";
}
