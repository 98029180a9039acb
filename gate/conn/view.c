/*
 * What names a connection, wherever it keeps it (its decision while
 * deciding, its compact tags once relaying): the view of both, the tags
 * copied out of a decision, the fields of its audit lines, and its entry
 * in the control socket's status.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "gate/gate.h"
#include "gate/conn/conn-int.h"

void
conn_view(const struct gate_conn *c, struct conn_view *v)
{
	const struct conn_dec	*d = c->d;
	const struct conn_tags	*t = c->tags;

	if (d != NULL) {
		v->peer = d->peer;
		v->session = d->session;
		v->method = d->method;
		v->host = d->tgt.hostlen ? d->tgt.host : "";
		v->hostport = d->hostport;
		v->addr = d->addrstr;
		v->rule = d->rule;
		v->user = d->user;
		v->tool = d->tool;
		v->dialled = d->dialled;
		v->port = d->tgt.port;
		return;
	}
	v->peer = t->s;
	v->session = t->s + t->off[T_SESSION];
	v->method = t->s + t->off[T_METHOD];
	v->host = t->s + t->off[T_HOST];
	v->hostport = t->s + t->off[T_HOSTPORT];
	v->addr = t->s + t->off[T_ADDR];
	v->rule = t->s + t->off[T_RULE];
	v->user = t->s + t->off[T_USER];
	v->tool = t->s + t->off[T_TOOL];
	v->dialled = t->s + t->off[T_DIALLED];
	v->port = t->port;
}

/* The view of a decided tunnel, copied to one compact allocation. */
struct conn_tags *
conn_tags_new(const struct gate_conn *c)
{
	struct conn_view	 v;
	struct conn_tags	*t;
	const char		*src[T_N];
	size_t			 len[T_N + 1], total, i;

	conn_view(c, &v);
	src[T_SESSION] = v.session;
	src[T_METHOD] = v.method;
	src[T_HOST] = v.host;
	src[T_HOSTPORT] = v.hostport;
	src[T_ADDR] = v.addr;
	src[T_RULE] = v.rule;
	src[T_USER] = v.user;
	src[T_TOOL] = v.tool;
	src[T_DIALLED] = v.dialled;
	total = len[T_N] = strlen(v.peer) + 1;
	for (i = 0; i < T_N; i++)
		total += len[i] = strlen(src[i]) + 1;
	if (total > UINT16_MAX || (t = malloc(sizeof(*t) + total)) == NULL)
		return NULL;
	t->port = (uint16_t)v.port;
	memcpy(t->s, v.peer, len[T_N]);
	total = len[T_N];
	for (i = 0; i < T_N; i++) {
		t->off[i] = (uint16_t)total;
		memcpy(t->s + total, src[i], len[i]);
		total += len[i];
	}
	return t;
}

/*
 * The fields every audit line of the connection has, into r (its strings
 * are the connection's: r is used before the connection changes).
 */
void
conn_audit_fill(struct gate_conn *c, struct gate_audit_rec *r)
{
	struct conn_view	 v;

	conn_view(c, &v);
	memset(r, 0, sizeof(*r));
	r->conn = c->id;
	r->session = v.session[0] ? v.session : NULL;
	r->user = v.user[0] ? v.user : NULL;
	r->client = v.peer;
	r->method = v.method[0] ? v.method : NULL;
	r->host = v.host[0] ? v.host : NULL;
	r->port = v.port;
	r->addr = v.addr[0] ? v.addr : NULL;
	r->rule = v.rule[0] ? v.rule : NULL;
	r->dns_ms = r->connect_ms = r->duration_ms = -1;
	r->transparent = c->transparent;
	r->tool = v.tool[0] ? v.tool : NULL;
	r->dialled = v.dialled[0] ? v.dialled : NULL;
	r->named_by = conn_named_str(c->named_by);
	r->socks = c->socks;
	r->learn = c->g->cfg.learn;
	r->inspect = c->insp != NULL;
	r->reused = c->up_reused;
	r->asked = c->asked;
}

void
conn_audit(struct gate_conn *c, const char *event, const char *decision,
    int status, const char *reason, const char *detail, const char *fix)
{
	struct gate_audit_rec	 r;

	conn_audit_fill(c, &r);
	r.event = event;
	r.decision = decision;
	r.status = status;
	r.reason = reason;
	r.detail = detail;
	r.fix = fix;
	r.dns_ms = c->dns_ms;
	r.connect_ms = c->connect_ms;
	r.bytes_up = c->up;
	r.bytes_down = c->down;
	r.duration_ms = event[0] == 'c' ? gate_ms_since(&c->t_start) : -1;
	r.would = c->would;
	if (strcmp(event, "decision") == 0)
		gate_metrics_decision(c->g, decision, reason);
	gate_audit_write(c->g->audit, &r, &c->g->num->ctr.audit_errors);
}

/* Append the live connections as a JSON array (for the control socket). */
void
gate_conns_status(struct gate *g, struct evbuffer *out)
{
	struct gate_conn	*c;
	char			 host[POLICY_MAX_NAME * 6 + 3];
	char			 sess[GATE_SESSION_MAX * 6 + 3];
	char			 user[GATE_SESSION_MAX * 6 + 3];
	int			 first = 1;

	evbuffer_add_printf(out, "[");
	TAILQ_FOREACH(c, &g->conns, entry) {
		struct conn_view	 v;

		if (c->state != S_RELAY)
			continue;
		conn_view(c, &v);
		gate_json_str(host, sizeof(host), v.hostport);
		gate_json_str(sess, sizeof(sess), v.session);
		/* --users: whose policy decided it; "" otherwise */
		gate_json_str(user, sizeof(user), v.user);
		evbuffer_add_printf(out, "%s{\"conn\":%llu,\"client\":\"%s\","
		    "\"session\":%s,\"user\":%s,\"target\":%s,\"addr\":\"%s\","
		    "\"bytes_up\":%llu,\"bytes_down\":%llu,\"age_ms\":%.0f%s%s}",
		    first ? "" : ",", (unsigned long long)c->id, v.peer, sess,
		    user, host, v.addr, (unsigned long long)c->up,
		    (unsigned long long)c->down, gate_ms_since(&c->t_start),
		    c->transparent ? ",\"transparent\":true" : "",
		    c->insp != NULL ? ",\"inspect\":true" : "");
		first = 0;
	}
	evbuffer_add_printf(out, "]");
}
