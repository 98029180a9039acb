/*
 * --reload-closes (docs/gate.md, "Reloading"): a reload decides new
 * connections only, unless asked to judge the live ones too.  Then every
 * connection that relays (a tunnel, a forwarded request's exchange, an
 * inspected host's) is decided again, by name and port and by the
 * address it dialled, under the policy now in force for its user (the
 * gate's, or --users' for that user), and closed when that policy
 * denies it, when the rule that allows it now inspects otherwise (its
 * requests: or secrets: changed, inspect: turned on or off), or when
 * the reload removed its --users user or the token
 * file line it came through: its close line says "policy_reload".  An
 * AISB-DNS stream carries no target: each of its queries is decided anew
 * anyway, so it is closed only when its credential was removed.  A
 * connection still being decided is left alone: it took the new policy
 * when it took its reference, or finishes under the old one and is
 * judged at the next reload.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <string.h>

#include "gate/gate.h"
#include "gate/conn/conn-int.h"

/* The policy for user (""): the user's own under --users, else the
 * gate's; NULL for a user the users file no longer names. */
struct policy *
conn_policy_for(const struct gate *g, const char *user)
{
	struct policy	*p;
	size_t		 i, n;

	if (g->users == NULL || user[0] == '\0')
		return g->policy;
	n = gate_users_count(g->users);
	for (i = 0; i < n; i++)
		if (strcmp(gate_users_name(g->users, i), user) == 0)
			return (p = gate_users_policy(g->users, i)) != NULL ?
			    p : g->policy;
	return NULL;	/* a user no longer in the file: nothing allows */
}

/* 1 when what c relays to is still allowed. */
static int
allowed(const struct gate *g, struct gate_conn *c)
{
	const struct policy	*p;
	struct policy_target	 tgt;
	struct policy_decision	 d;
	struct policy_addr	 addr;
	struct conn_view	 v;
	char			 err[128];

	conn_view(c, &v);
	/* a user or token file line the reload removed: nothing allows */
	if (!conn_cred_kept(g, v.user, c->cred_key) ||
	    (p = conn_policy_for(g, v.user)) == NULL)
		return 0;
	if (policy_parse_target(v.host, strlen(v.host), (uint16_t)v.port,
	    &tgt, err, sizeof(err)) == -1)
		return 0;
	tgt.port = (uint16_t)v.port;
	policy_decide(p, &tgt, &d);
	/* --ask: what a person let through stays, unless a rule denies it */
	if (d.verdict != POLICY_ALLOW && !conn_ask_covers(c, d.reason))
		return 0;
	/*
	 * The rule's inspection: an inspected connection decides each of
	 * its requests by its rule's requests: and adds its secrets:, a
	 * blind tunnel by none; a reload that changed them (a secret taken
	 * out, a deny entry added, inspect: turned on or off) is not
	 * followed by a connection that runs on, so it is closed.
	 */
	if (!policy_rule_inspect_same(c->d != NULL ? c->d->irule : NULL,
	    d.rule))
		return 0;
	/* the address it dialled, as classify() judged it then */
	if (v.addr[0] != '\0' && policy_parse_addr(v.addr, strlen(v.addr),
	    &addr) == 0 && policy_classify(p, &addr) != NULL)
		return 0;
	return 1;
}

/* An AISB-DNS stream: 1 while its credential is still one of the gate's
 * (its queries are decided anew, but by nobody's leave once it is gone) */
static int
dns_kept(const struct gate *g, struct gate_conn *c)
{
	struct conn_view	 v;

	conn_view(c, &v);
	return conn_cred_kept(g, v.user, c->cred_key);
}

size_t
gate_conn_recheck(struct gate *g)
{
	struct gate_conn	*c, *next;
	size_t			 n = 0;

	for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		/* an AISB-DNS stream stays S_HEAD: it reads frames */
		if (c->dns != NULL ? dns_kept(g, c) :
		    c->state != S_RELAY || allowed(g, c))
			continue;
		conn_close_as(c, "policy_reload", END_FAULT);
		conn_free(c);
		n++;
	}
	return n;
}
