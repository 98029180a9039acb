/*
 * --ask SECONDS: a request the policy denies because no rule allows it
 * (host_not_allowed, port_not_allowed; never a deny rule, a denied
 * address range, a bad request or a failed credential, which no person
 * may overrule here) is held rather than answered, for a person to
 * answer on the control socket (control.c: "pending", "watch",
 * "approve N once|session", "deny N").
 *
 * Held, a connection sits in S_ASK: its client's reads stay paused where
 * it was decided (nothing more is read, nothing answered, no upstream
 * dialled), its one timer is the ask's, and the gate serves every other
 * connection meanwhile.  The answers:
 *   once     the request goes on as allowed (conn_decided): resolved,
 *            classified (denied ranges stay denied), dialled, audited
 *   session  the same, and a grant of that host:port to that credential
 *            lets later requests through without asking, in memory until
 *            the gate exits; reloads keep it (it is not the policy's),
 *            but not past its user's or session's removal
 *   deny, a timeout, the gate's exit: the denial the policy gave, as
 *            without --ask, its audit line with "asked":true
 *   gone     the client closed its side while held (its reads are
 *            paused, so nothing saw it): found when an answer comes for
 *            it (which then gets "gone", not an upstream dialled for no
 *            one), when "pending" is read, or when a request is to be
 *            held (a closed one keeps no slot of the bounds); denied as
 *            a timeout is, "by":"client"
 *   a reload: what the new set would not ask about (a removed user or
 *            session, a deny rule) is denied (gate_ask_reload)
 * Each answer is one audit line of its own (event "ask"), written before
 * the request's decision line, and one "answered" line to the watchers.
 *
 * Bounds: GATE_ASK_PER_CRED held per credential (a name and the token
 * file line it came through: same_cred; not the name alone, which a line
 * of any user name lets any of its holders give, so that one credential
 * would fill another's bound) and GATE_ASK_MAX per gate (beyond them a
 * request is denied at once, reason ask_full, and said: "pending" and
 * "status" count such refusals and name the last, and the
 * watchers get a "refused" line, at most one a second, with the count
 * since the one before: a sandbox that floods the bound cannot make a
 * request vanish without the person hearing of it);
 * GATE_ASK_GRANTS grants.  Ids count from 1 and are never reused: --ask
 * runs in one process (main.c refuses --workers), so an id names one
 * request of the gate.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/conn/conn-int.h"

/* one held request as JSON: a name escaped (6 bytes a byte at most) */
#define ASK_JSON_MAX	(POLICY_MAX_NAME * 6 + GATE_SESSION_MAX * 6 + 512)

struct ask_grant {
	char		 cred[GATE_SESSION_MAX];	/* "": all */
	unsigned char	 key[GATE_AUTH_KEY];		/* its token file line */
	char		 host[POLICY_MAX_NAME + 1];
	uint16_t	 port;
};

/* the last request denied ask_full, as "pending" and "refused" say it */
struct ask_refused {
	char		 cred[GATE_SESSION_MAX];	/* "": none */
	char		 host[POLICY_MAX_NAME + 1];
	char		 method[16];			/* "": none */
	const char	*how;
	uint16_t	 port;
	struct timespec	 when;
};

struct gate_ask {
	TAILQ_HEAD(, gate_conn)	 held;		/* oldest first */
	unsigned		 nheld;
	uint64_t		 next_id;
	struct ask_grant	*grants;	/* GATE_ASK_GRANTS of them */
	size_t			 ngrants;
	uint64_t		 refused;	/* ask_full, since the start */
	uint64_t		 untold;	/* of them, not yet watched */
	struct ask_refused	 last;
	struct timespec		 told;		/* the last "refused" line */
	struct event		*tell;		/* its next, a second on */
};

static const char *const answer_str[] = {
	[GATE_ASK_ONCE] = "once",
	[GATE_ASK_SESSION] = "session",
	[GATE_ASK_DENY] = "deny",
};

int
gate_ask_init(struct gate *g)
{
	struct gate_ask	*a;

	if (g->cfg.ask == 0)
		return 0;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -1;
	if ((a->grants = calloc(GATE_ASK_GRANTS, sizeof(*a->grants))) ==
	    NULL) {
		free(a);
		return -1;
	}
	TAILQ_INIT(&a->held);
	a->next_id = 1;
	g->ask = a;
	return 0;
}

/* After gate_conn_close_all(): no connection is held any more. */
void
gate_ask_free(struct gate *g)
{
	if (g->ask == NULL)
		return;
	if (g->ask->tell != NULL)
		event_free(g->ask->tell);
	free(g->ask->grants);
	free(g->ask);
	g->ask = NULL;
}

/* A person may let through only what no rule speaks of. */
static int
askable(int why)
{
	return why == POLICY_R_HOST_NOT_ALLOWED ||
	    why == POLICY_R_PORT_NOT_ALLOWED;
}

/*
 * Whose the request is: the --users user, the token file's session, or
 * "" (no credentials: the whole gate is one).  Never alone: a credential
 * is this name and the connection's cred_key, the token file line it came
 * through (same_cred), as a line of any user name takes the name from the
 * client, and another such line (or a labelled line beside it) may give
 * the same one.
 */
static const char *
cred_of(const struct conn_view *v)
{
	return v->user[0] != '\0' ? v->user : v->session;
}

/* 1 when a and b (their views av, bv) are of one credential: the same
 * name through the same token file line (all zero: none, or --users,
 * whose names are each one line's). */
static int
same_cred(const struct gate_conn *a, const struct conn_view *av,
    const struct gate_conn *b, const struct conn_view *bv)
{
	return strcmp(cred_of(av), cred_of(bv)) == 0 &&
	    memcmp(a->cred_key, b->cred_key, GATE_AUTH_KEY) == 0;
}

static const char *
how(const struct gate_conn *c)
{
	if (c->socks || c->d->socks != SOCKS_ST_NONE)
		return "socks";
	if (c->transparent)
		return c->d->tp == TP_ADDR ? "port" : "transparent";
	return c->tunnel ? "connect" : "http";
}

/*
 * 1 while the held client is there: its socket has bytes waiting, or
 * nothing yet; 0 once it closed its side or reset (a peek, nothing read:
 * the bytes stay for the request's way on).
 */
static int
client_alive(struct gate_conn *c)
{
	evutil_socket_t	 fd;
	ssize_t		 n;
	char		 b;

	if (c->c_eof)
		return 0;
	if (c->cbev == NULL || (fd = bufferevent_getfd(c->cbev)) == -1)
		return 1;
	n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n > 0 || (n == -1 && (errno == EAGAIN ||
	    errno == EWOULDBLOCK || errno == EINTR));
}

static void	answered(struct gate_conn *, const char *, const char *, uid_t,
		    pid_t);
static void	deny_held(struct gate_conn *);

/* Every held request whose client is gone: answered "gone", denied. */
static void
sweep(struct gate *g)
{
	struct gate_conn	*c, *next;

	if (g->ask == NULL)
		return;
	for (c = TAILQ_FIRST(&g->ask->held); c != NULL; c = next) {
		next = TAILQ_NEXT(c, held);
		if (client_alive(c))
			continue;
		answered(c, "gone", "client", 0, 0);
		deny_held(c);
	}
}

/*
 * A grant is a credential's: the same name, and under a token file the
 * same line of it (the same name through another line of any user name
 * is another credential).
 */
static struct ask_grant *
grant_find(struct gate_ask *a, const struct gate_conn *c,
    const struct conn_view *v)
{
	size_t	 i;

	for (i = 0; i < a->ngrants; i++)
		if (a->grants[i].port == v->port &&
		    strcmp(a->grants[i].host, v->host) == 0 &&
		    strcmp(a->grants[i].cred, cred_of(v)) == 0 &&
		    memcmp(a->grants[i].key, c->cred_key, GATE_AUTH_KEY) == 0)
			return &a->grants[i];
	return NULL;
}

/*
 * Does an answer cover what the policy denied with why: a grant of the
 * connection's host:port to its credential, or (a live connection judged
 * again after a reload, recheck.c) a person let this one through.
 */
int
conn_ask_covers(struct gate_conn *c, int why)
{
	struct conn_view	 v;

	if (c->g->ask == NULL || !askable(why))
		return 0;
	if (c->ask_ok)
		return 1;
	conn_view(c, &v);
	return grant_find(c->g->ask, c, &v) != NULL;
}

/* The held request c as the JSON object of "pending" and "held". */
static void
held_json(struct gate_conn *c, char *buf, size_t len)
{
	char		 host[POLICY_MAX_NAME * 6 + 3];
	char		 who[GATE_SESSION_MAX * 6 + 3];
	char		 method[sizeof(c->d->method) * 6 + 3];
	struct conn_view v;
	double		 age = gate_ms_since(&c->d->t_asked);
	double		 left = c->g->cfg.ask * 1e3 - age;

	conn_view(c, &v);
	gate_json_str(host, sizeof(host), v.host);
	if (cred_of(&v)[0] != '\0')
		gate_json_str(who, sizeof(who), cred_of(&v));
	else
		snprintf(who, sizeof(who), "null");
	/* a forwarded request's method; a tunnel has none of its own */
	if (!c->tunnel && v.method[0] != '\0')
		gate_json_str(method, sizeof(method), v.method);
	else
		snprintf(method, sizeof(method), "null");
	snprintf(buf, len, "{\"id\":%llu,\"host\":%s,\"port\":%u,"
	    "\"how\":\"%s\",\"user\":%s,\"method\":%s,\"age_ms\":%.0f,"
	    "\"left_ms\":%.0f}", (unsigned long long)c->ask_id, host, v.port,
	    how(c), who, method, age, left > 0 ? left : 0);
}

/*
 * The last request denied ask_full as a JSON object, with count (the
 * refusals it stands for) and its age.
 */
static void
refused_json(const struct ask_refused *r, uint64_t count, char *buf,
    size_t len)
{
	char		 host[POLICY_MAX_NAME * 6 + 3];
	char		 who[GATE_SESSION_MAX * 6 + 3];
	char		 method[sizeof(r->method) * 6 + 3];

	gate_json_str(host, sizeof(host), r->host);
	if (r->cred[0] != '\0')
		gate_json_str(who, sizeof(who), r->cred);
	else
		snprintf(who, sizeof(who), "null");
	if (r->method[0] != '\0')
		gate_json_str(method, sizeof(method), r->method);
	else
		snprintf(method, sizeof(method), "null");
	snprintf(buf, len, "{\"host\":%s,\"port\":%u,\"how\":\"%s\","
	    "\"user\":%s,\"method\":%s,\"count\":%llu,\"ago_ms\":%.0f}",
	    host, r->port, r->how, who, method, (unsigned long long)count,
	    gate_ms_since(&r->when));
}

/* The watchers' "refused" line for what was not told yet. */
static void
refused_tell(evutil_socket_t fd, short what, void *arg)
{
	struct gate		*g = arg;
	struct gate_ask		*a = g->ask;
	char			 buf[ASK_JSON_MAX], line[ASK_JSON_MAX + 16];

	(void)fd, (void)what;
	if (a->untold == 0)
		return;
	refused_json(&a->last, a->untold, buf, sizeof(buf));
	snprintf(line, sizeof(line), "{\"refused\":%s}\n", buf);
	gate_control_event(g->control, line);
	a->untold = 0;
	clock_gettime(CLOCK_MONOTONIC, &a->told);
}

/*
 * c is denied ask_full: counted, kept as the last, and told to the
 * watchers now, or a second after the last time they were told (a flood
 * is one line a second, not one a request: a watcher that falls 64 KiB
 * behind is dropped, and with it the person's notices).
 */
static void
refused(struct gate_conn *c, const struct conn_view *v)
{
	struct gate_ask		*a = c->g->ask;
	struct timeval		 tv;
	double			 since;

	a->refused++;
	a->untold++;
	snprintf(a->last.cred, sizeof(a->last.cred), "%s", cred_of(v));
	snprintf(a->last.host, sizeof(a->last.host), "%s", v->host);
	snprintf(a->last.method, sizeof(a->last.method), "%s",
	    !c->tunnel ? v->method : "");
	a->last.how = how(c);
	a->last.port = (uint16_t)v->port;
	clock_gettime(CLOCK_MONOTONIC, &a->last.when);
	if (a->tell == NULL &&
	    (a->tell = evtimer_new(c->g->base, refused_tell, c->g)) == NULL)
		return;		/* counted all the same: pending says it */
	if (evtimer_pending(a->tell, NULL))
		return;
	since = a->refused == a->untold ? 1e9 : gate_ms_since(&a->told);
	if (since >= 1000) {
		refused_tell(-1, 0, c->g);
		return;
	}
	tv.tv_sec = 0;
	tv.tv_usec = (suseconds_t)((1000 - since) * 1000);
	evtimer_add(a->tell, &tv);
}

void
gate_ask_pending(struct gate *g, struct evbuffer *out)
{
	struct gate_conn	*c;
	char			 buf[ASK_JSON_MAX];
	const char		*sep = "";

	sweep(g);
	evbuffer_add_printf(out, "{\"pending\":[");
	if (g->ask != NULL)
		TAILQ_FOREACH(c, &g->ask->held, held) {
			held_json(c, buf, sizeof(buf));
			evbuffer_add_printf(out, "%s%s", sep, buf);
			sep = ",";
		}
	/* what the bounds denied unheld: the count, the last of them */
	if (g->ask != NULL && g->ask->refused > 0) {
		refused_json(&g->ask->last, g->ask->refused, buf, sizeof(buf));
		evbuffer_add_printf(out, "],\"refused\":%s}\n", buf);
	} else
		evbuffer_add_printf(out, "],\"refused\":null}\n");
}

/* One "held" line per request held now: what a new watcher sees first. */
void
gate_ask_replay(struct gate *g, struct evbuffer *out)
{
	struct gate_conn	*c;
	char			 buf[ASK_JSON_MAX];

	if (g->ask == NULL)
		return;
	sweep(g);
	TAILQ_FOREACH(c, &g->ask->held, held) {
		held_json(c, buf, sizeof(buf));
		evbuffer_add_printf(out, "{\"held\":%s}\n", buf);
	}
}

/* status: "ask":{...}, (with its comma), or nothing when --ask is off */
void
gate_ask_grants(struct gate *g, struct evbuffer *out)
{
	struct gate_ask	*a = g->ask;
	char		 host[POLICY_MAX_NAME * 6 + 3];
	char		 who[GATE_SESSION_MAX * 6 + 3];
	size_t		 i;

	if (a == NULL)
		return;
	evbuffer_add_printf(out, "\"ask\":{\"seconds\":%u,\"held\":%u,"
	    "\"refused\":%llu,\"grants\":[", g->cfg.ask, a->nheld,
	    (unsigned long long)a->refused);
	for (i = 0; i < a->ngrants; i++) {
		gate_json_str(host, sizeof(host), a->grants[i].host);
		if (a->grants[i].cred[0] != '\0')
			gate_json_str(who, sizeof(who), a->grants[i].cred);
		else
			snprintf(who, sizeof(who), "null");
		evbuffer_add_printf(out, "%s{\"host\":%s,\"port\":%u,"
		    "\"user\":%s}", i ? "," : "", host, a->grants[i].port,
		    who);
	}
	evbuffer_add_printf(out, "]},");
}

/*
 * Hold c, which the policy denied as d says, or deny it now with ask_full
 * when the bounds are reached: 1.  0: not for a person to answer (--ask
 * off, or a denial no answer may overrule): the caller denies.
 */
int
conn_ask(struct gate_conn *c, const struct policy_decision *d)
{
	struct gate_ask		*a = c->g->ask;
	struct gate_conn	*h;
	struct conn_view	 v, hv;
	char			 buf[ASK_JSON_MAX], line[ASK_JSON_MAX + 16];
	char			 detail[DETAIL_MAX];
	unsigned		 mine = 0;

	/* a draining gate holds nothing new: it would outlive the answer */
	if (a == NULL || !askable(d->reason) || c->g->draining)
		return 0;
	sweep(c->g);	/* a closed one keeps no slot */
	conn_view(c, &v);
	TAILQ_FOREACH(h, &a->held, held) {
		conn_view(h, &hv);
		if (same_cred(h, &hv, c, &v))
			mine++;
	}
	if (a->nheld >= GATE_ASK_MAX || mine >= GATE_ASK_PER_CRED) {
		snprintf(detail, sizeof(detail), "%s; too many requests "
		    "already wait for an answer", policy_reason_str(d->reason));
		refused(c, &v);
		conn_deny(c, d->reason, "ask_full", detail, NULL);
		return 1;
	}
	c->d->ask_reason = (uint8_t)d->reason;
	clock_gettime(CLOCK_MONOTONIC, &c->d->t_asked);
	c->ask_id = a->next_id++;
	c->asked = 1;
	c->state = S_ASK;
	TAILQ_INSERT_TAIL(&a->held, c, held);
	a->nheld++;
	conn_arm(c, c->g->cfg.ask);
	log_info("conn %llu: %s %s held for an answer: id %llu",
	    (unsigned long long)c->id, c->d->peer, c->d->hostport,
	    (unsigned long long)c->ask_id);
	held_json(c, buf, sizeof(buf));
	snprintf(line, sizeof(line), "{\"held\":%s}\n", buf);
	gate_control_event(c->g->control, line);
	return 1;
}

void
conn_ask_forget(struct gate_conn *c)
{
	if (c->ask_id == 0 || c->g->ask == NULL)
		return;
	TAILQ_REMOVE(&c->g->ask->held, c, held);
	c->g->ask->nheld--;
	c->ask_id = 0;
}

/*
 * c leaves the held list with its answer: the "ask" audit line (by: a
 * token, or NULL for the control socket's peer uid and pid) and the
 * watchers' "answered" line.
 */
static void
answered(struct gate_conn *c, const char *answer, const char *by,
    uid_t uid, pid_t pid)
{
	struct gate_audit_rec	 r;
	uint64_t		 id = c->ask_id;
	char			 line[128];

	conn_ask_forget(c);
	evtimer_del(c->timer);
	conn_audit_fill(c, &r);
	r.event = "ask";
	r.ask_id = id;
	r.answer = answer;
	r.by = by;
	r.by_peer = by == NULL;
	r.by_uid = uid;
	r.by_pid = pid;
	gate_audit_write(c->g->audit, &r, &c->g->num->ctr.audit_errors);
	log_info("conn %llu: id %llu answered %s%s%s",
	    (unsigned long long)c->id, (unsigned long long)id, answer,
	    by ? " by " : "", by ? by : "");
	snprintf(line, sizeof(line), "{\"answered\":{\"id\":%llu,"
	    "\"answer\":\"%s\"}}\n", (unsigned long long)id, answer);
	gate_control_event(c->g->control, line);
}

/* The denial the policy gave, as without --ask ("asked":true). */
static void
deny_held(struct gate_conn *c)
{
	enum policy_reason	 why = (enum policy_reason)c->d->ask_reason;

	conn_deny(c, why, conn_reason_token(why), policy_reason_str(why),
	    NULL);
}

void
conn_ask_expire(struct gate_conn *c)
{
	answered(c, "timeout", "timeout", 0, 0);
	deny_held(c);
}

void
gate_ask_deny_all(struct gate *g)
{
	struct gate_conn	*c;

	if (g->ask == NULL)
		return;
	while ((c = TAILQ_FIRST(&g->ask->held)) != NULL) {
		answered(c, "deny", "exit", 0, 0);
		deny_held(c);
	}
}

/*
 * After a reload: 1 while the credential a request was held for (user
 * under --users; else under a token file the line it matched, by its
 * key) is still one of the gate's.  Also for a live
 * connection (recheck.c).
 */
int
conn_cred_kept(const struct gate *g, const char *user,
    const unsigned char key[GATE_AUTH_KEY])
{
	if (g->users != NULL)
		return user[0] == '\0' || conn_policy_for(g, user) != NULL;
	if (g->auth != NULL)
		return gate_auth_holds(g->auth, key);
	return 1;
}

/*
 * A reload (config.c): each held request judged again under the set now
 * in force, so that no answer lets through what the new set would not
 * ask about.  Held for a --users user, or through a token file's line,
 * the reload removed (a named gate's session that ended; the line by its
 * key, as a line of any user name leaves every name some line's): denied
 * now (an approval must not let a user through who is none any more).  A rule
 * of the new policy denies it (a deny rule, a port): denied now, with
 * that rule's reason.  Else it stays held, under the new policy (what an
 * approval then classifies its addresses with, and whose rule, when one
 * now allows it, the approval goes on by: release()), its id and timer
 * kept; one the new policy allows then goes on (gate_ask_reallow, after
 * this, when the reload was applied).
 * Each denial is an "ask" line with "by":"reload".  The session grants
 * of a removed user or token file line go too.
 */
void
gate_ask_reload(struct gate *g)
{
	struct gate_ask		*a;
	struct gate_conn	*c, *next;
	struct policy		*p;
	struct policy_decision	 d;
	size_t			 i;
	struct conn_view	 v;
	enum policy_reason	 why;
	char			 detail[DETAIL_MAX];

	if (g->ask == NULL)
		return;
	/* a removed user's grants go with the user (a new one of that
	 * name is another person) */
	a = g->ask;
	for (i = 0; i < a->ngrants; ) {
		if (conn_cred_kept(g, a->grants[i].cred, a->grants[i].key)) {
			i++;
			continue;
		}
		memmove(&a->grants[i], &a->grants[i + 1],
		    (a->ngrants - i - 1) * sizeof(a->grants[0]));
		a->ngrants--;
	}
	for (c = TAILQ_FIRST(&a->held); c != NULL; c = next) {
		/* a denial answers c alone: next stays on the list */
		next = TAILQ_NEXT(c, held);
		conn_view(c, &v);
		if (!conn_cred_kept(g, v.user, c->cred_key) ||
		    (p = conn_policy_for(g, v.user)) == NULL) {
			why = (enum policy_reason)c->d->ask_reason;
			if (g->users != NULL)
				snprintf(detail, sizeof(detail), "%s; user %s "
				    "is no longer in the users file",
				    policy_reason_str(why), cred_of(&v));
			else
				snprintf(detail, sizeof(detail), "%s; the token "
				    "file line session %s came through is no "
				    "longer there", policy_reason_str(why),
				    cred_of(&v));
			answered(c, "deny", "reload", 0, 0);
			conn_deny(c, why, conn_reason_token(why), detail, NULL);
			continue;
		}
		if (p != c->d->pol) {
			policy_free(c->d->pol);
			c->d->pol = policy_ref(p);
		}
		policy_decide(p, &c->d->tgt, &d);
		if (d.verdict == POLICY_ALLOW || askable(d.reason))
			continue;
		if (d.rule != NULL)
			policy_rule_describe(d.rule, c->d->rule,
			    sizeof(c->d->rule));
		c->d->ask_reason = (uint8_t)d.reason;
		answered(c, "deny", "reload", 0, 0);
		deny_held(c);
	}
}

/* Let c through on a person's answer, where it was decided. */
static void
release(struct gate_conn *c, enum gate_ask_answer ans, uid_t uid, pid_t pid)
{
	struct policy_decision	 d;

	answered(c, answer_str[ans], NULL, uid, pid);
	/* reads are still paused: on as allowed, as if never held */
	c->ask_ok = 1;
	c->state = S_HEAD;
	/*
	 * A reload while it was held may have brought a rule that allows it
	 * (gate_ask_reload): that rule says how it goes on (an inspect rule
	 * decides each request inside), not the answer alone.
	 */
	policy_decide(c->d->pol, &c->d->tgt, &d);
	if (d.verdict == POLICY_ALLOW && d.rule != NULL) {
		policy_rule_describe(d.rule, c->d->rule, sizeof(c->d->rule));
		conn_decided(c, d.rule);
		return;
	}
	snprintf(c->d->rule, sizeof(c->d->rule), "ask: %s", answer_str[ans]);
	conn_decided(c, NULL);
}

/* A held request a new grant covers; NULL: none left. */
static struct gate_conn *
covered(struct gate_ask *a, const struct ask_grant *gr)
{
	struct gate_conn	*c;
	struct conn_view	 v;

	TAILQ_FOREACH(c, &a->held, held) {
		conn_view(c, &v);
		if (v.port == gr->port && strcmp(v.host, gr->host) == 0 &&
		    strcmp(cred_of(&v), gr->cred) == 0 &&
		    memcmp(c->cred_key, gr->key, GATE_AUTH_KEY) == 0)
			return c;
	}
	return NULL;
}

int
gate_ask_answer(struct gate *g, uint64_t id, enum gate_ask_answer ans,
    uid_t uid, pid_t pid)
{
	struct gate_ask		*a = g->ask;
	struct gate_conn	*c;
	struct conn_view	 v;
	struct ask_grant	*gr;

	if (a == NULL)
		return -1;
	TAILQ_FOREACH(c, &a->held, held)
		if (c->ask_id == id)
			break;
	if (c == NULL)
		return -1;
	if (!client_alive(c)) {
		/* nobody to let through: no upstream dialled for it */
		answered(c, "gone", "client", 0, 0);
		deny_held(c);
		return -1;
	}
	if (ans == GATE_ASK_DENY) {
		answered(c, answer_str[ans], NULL, uid, pid);
		deny_held(c);
		return 0;
	}
	if (ans == GATE_ASK_ONCE) {
		release(c, ans, uid, pid);
		return 0;
	}
	conn_view(c, &v);
	if ((gr = grant_find(a, c, &v)) == NULL) {
		if (a->ngrants == GATE_ASK_GRANTS)
			return -2;
		gr = &a->grants[a->ngrants++];
		snprintf(gr->cred, sizeof(gr->cred), "%s", cred_of(&v));
		memcpy(gr->key, c->cred_key, GATE_AUTH_KEY);
		snprintf(gr->host, sizeof(gr->host), "%s", v.host);
		gr->port = (uint16_t)v.port;
	}
	/*
	 * c first, then every other request the grant covers that waits
	 * already (a later one would pass without asking): each its own
	 * "session" answer.  Each pass takes one off the list.
	 */
	release(c, ans, uid, pid);
	while ((c = covered(a, gr)) != NULL)
		release(c, ans, uid, pid);
	return 0;
}

/* A held request the policy now in force allows, d its decision; NULL:
 * none. */
static struct gate_conn *
reallowed(struct gate *g, struct policy **pol, struct policy_decision *d)
{
	struct gate_conn	*c;
	struct conn_view	 v;

	TAILQ_FOREACH(c, &g->ask->held, held) {
		conn_view(c, &v);
		/* a removed user's or session's: nothing allows it (the
		 * reload's judgement denied it already) */
		if (!conn_cred_kept(g, v.user, c->cred_key) ||
		    (*pol = conn_policy_for(g, v.user)) == NULL)
			continue;
		policy_decide(*pol, &c->d->tgt, d);
		if (d->verdict == POLICY_ALLOW)
			return c;
	}
	return NULL;
}

/*
 * A reload applied (after gate_ask_reload): each held request the new
 * policy allows goes on by
 * the rule that allows it, as if it had never been held ("asked" stays):
 * answered "allow" by "reload".  Each pass takes one off the list.
 */
void
gate_ask_reallow(struct gate *g)
{
	struct gate_conn	*c;
	struct policy		*p;
	struct policy_decision	 d;

	if (g->ask == NULL)
		return;
	sweep(g);	/* a closed one is gone, not let through */
	while ((c = reallowed(g, &p, &d)) != NULL) {
		if (p != c->d->pol) {
			policy_free(c->d->pol);
			c->d->pol = policy_ref(p);
		}
		answered(c, "allow", "reload", 0, 0);
		c->state = S_HEAD;
		if (d.rule != NULL)
			policy_rule_describe(d.rule, c->d->rule,
			    sizeof(c->d->rule));
		conn_decided(c, d.rule);
	}
}
