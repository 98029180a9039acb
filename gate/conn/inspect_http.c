/*
 * HTTP/1.1 inside an inspected connection (inspect.c set up both TLS
 * legs): one exchange at a time, each request decided before a byte of it
 * goes upstream.
 *
 *   request head   read by the gate's one parser (http.c: its bounds and
 *                  refusals), origin-form only, its Host the connection's
 *                  name (no other host reached through the name's
 *                  certificate), never TRACE or TRACK (an upstream
 *                  answers them with the request it got, the secrets
 *                  the gate added in it); decided by the rule's
 *                  requests: entries (policy_decide_request), with every
 *                  method or path an override names (override.c);
 *                  refused: 403 (400 for a path not in its normal form)
 *                  with the fix, and the close; allowed: written upstream
 *                  with the rule's secrets (inject.c)
 *   request body   passed on as its framing says (Content-Length or
 *                  chunked, http.c's bounds), as it arrives
 *   response       its head read by the same parser (a status line),
 *                  written to the client as it came; its body passed on
 *                  as it arrives (server-sent events, long polls and
 *                  downloads stream), framed by HEAD, 1xx/204/304,
 *                  Content-Length, chunked, or the upstream's close
 *   upgrade        only to WebSocket: a request offering any other
 *                  protocol (h2c, ...) is refused before it goes
 *                  upstream, since what follows a switch is relayed
 *                  undecided, and another protocol would carry requests
 *                  the rule's entries never see; a 101 to a request that
 *                  asked for the upgrade, naming the protocol it offered:
 *                  the two streams are relayed as they are from then on;
 *                  any other 101 closes the connection
 *
 * The next request head is read once the response has ended (keep-alive;
 * a pipelined request waits, unread, meanwhile), so every response is
 * matched to its request and nothing the client sends after a refused
 * request reaches the upstream.  Each exchange is one "request" audit
 * line: method, path (no query, at most INSP_PATH_MAX bytes), decision,
 * status, the entry that decided, the secrets added, the placeholders
 * seen that are not this host's, the bytes each way.  Backpressure as
 * for every relay: RELAY_MAX queued towards a side stops the reading of
 * the other until half of it is written.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>

#include "buf.h"
#include "log.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/override.h"
#include "gate/conn/inspect-int.h"

static int	client_read(struct gate_conn *);

/* The path of a target for the audit: no query, bounded, "..." if cut. */
static void
audit_path(char *out, const char *t, size_t len)
{
	const char	*q = memchr(t, '?', len);
	size_t		 n = q != NULL ? (size_t)(q - t) : len;

	if (n > INSP_PATH_MAX)
		snprintf(out, INSP_PATH_MAX + 4, "%.*s...", INSP_PATH_MAX, t);
	else
		snprintf(out, INSP_PATH_MAX + 4, "%.*s", (int)n, t);
}

/* s appended to the detail being made, "; " between parts; NULL: none */
static void
detail_add(char *buf, size_t len, const char *s)
{
	size_t	 n = strlen(buf);

	if (s != NULL && n + 1 < len)
		snprintf(buf + n, len - n, "%s%s", n > 0 ? "; " : "", s);
}

/* The exchange's audit line: event "request". */
static void
request_line(struct gate_conn *c, const char *decision, const char *reason,
    const char *detail, const char *fix)
{
	struct conn_insp	*x = c->insp;
	struct gate_audit_rec	 r;
	char			 more[DETAIL_MAX + 2 * INJECT_NAMES_MAX + 256];
	char			 part[INJECT_NAMES_MAX + POLICY_MAX_NAME + 64];

	more[0] = '\0';
	detail_add(more, sizeof(more), detail);
	if (x->would != NULL && policy_rule_secret_count(x->rule) > 0) {
		/* --learn let it pass, but not with the secrets */
		snprintf(part, sizeof(part), "--learn: the rules would refuse "
		    "it (%s): sent without the rule's secrets", x->would);
		detail_add(more, sizeof(more), part);
	}
	if (x->inj.missing[0] != '\0') {
		snprintf(part, sizeof(part), "secret %s not given to the gate: "
		    "sent without it", x->inj.missing);
		detail_add(more, sizeof(more), part);
	}
	if (x->inj.foreign[0] != '\0') {
		snprintf(part, sizeof(part), "placeholder of %s sent to %s, "
		    "where it is worth nothing", x->inj.foreign,
		    c->d->tgt.host);
		detail_add(more, sizeof(more), part);
	}
	conn_audit_fill(c, &r);
	r.event = "request";
	r.method = x->method[0] ? x->method : NULL;
	r.path = x->path[0] ? x->path : NULL;
	r.decision = decision;
	r.status = x->status;
	r.reason = reason;
	r.entry = x->entry[0] ? x->entry : NULL;
	r.detail = more[0] != '\0' ? more : NULL;
	r.fix = fix;
	r.inject = x->inj.added[0] ? x->inj.added : NULL;
	r.placeholder = x->inj.foreign[0] ? x->inj.foreign : NULL;
	r.upgrade = x->upgrade_to[0] ? x->upgrade_to : NULL;
	r.bytes_up = x->up;
	r.bytes_down = x->down;
	r.duration_ms = gate_ms_since(&x->t_req);
	r.would = x->would;
	c->g->num->ctr.insp_requests++;
	if (strcmp(decision, "allow") != 0)
		c->g->num->ctr.insp_refused++;
	gate_audit_write(c->g->audit, &r, &c->g->num->ctr.audit_errors);
}

/*
 * No more exchanges: reading stops both ways, and the connection closes
 * once what the client is owed has left for its socket (conn_inspect_
 * flushed: the TLS filter's output and its socket bufferevent's).
 * Returns -1: the caller stops (the connection may be gone).
 */
static int
closing(struct gate_conn *c, const char *reason, enum conn_end end)
{
	struct conn_insp	*x = c->insp;

	x->closing = 1;
	if (c->close_reason == NULL)
		conn_close_as(c, reason, end);
	bufferevent_disable(c->cbev, EV_READ);
	if (c->ubev != NULL)	/* NULL: a redial that failed */
		bufferevent_disable(c->ubev, EV_READ);
	if (conn_inspect_flushed(c))
		conn_free(c);
	return -1;
}

/*
 * The gate answers the request itself (a refusal, a malformed head, an
 * upstream that failed before its answer began): the answer as every
 * refusal of the gate reads, its audit line, and the close.
 */
static int
answer(struct gate_conn *c, int status, const char *decision,
    const char *reason, const char *detail, const char *fix,
    const char *fixline)
{
	struct conn_insp	*x = c->insp;
	char			 hdr[2048], body[2048], out[GATE_HTTP_REPLY_MAX];
	char			 what[sizeof(x->method) + sizeof(x->path) +
				    sizeof(c->d->hostport)];
	ssize_t			 n;

	snprintf(what, sizeof(what), "%s %s%s", x->method[0] ? x->method :
	    "request", c->d->hostport, x->path);
	conn_refusal_text(c, what, decision, reason, detail, fix, fixline,
	    hdr, sizeof(hdr), body, sizeof(body));
	if ((n = gate_http_reply(out, sizeof(out), status, hdr, body)) == -1)
		n = gate_http_reply(out, sizeof(out), status, "",
		    "aisb-gate: refused\n");
	if (n > 0)
		(void)evbuffer_add(bufferevent_get_output(c->cbev), out,
		    (size_t)n);
	x->status = status;
	x->down = n > 0 ? (uint64_t)n : 0;
	request_line(c, decision, reason, detail, fix);
	log_info("conn %llu: %s %s %s%s: %s %d %s%s%s",
	    (unsigned long long)c->id, c->d->peer, x->method, c->d->hostport,
	    x->path, decision, status, reason, detail ? ": " : "",
	    detail ? detail : "");
	return closing(c, reason, END_FAULT);
}

/* What the client may send now: reading it is wanted. */
static void
client_reading(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	if (!x->closing && !c->up_paused && !c->c_eof && (x->rq == RQ_HEAD ||
	    x->rq == RQ_BODY || x->rq == RQ_TUNNEL))
		(void)bufferevent_enable(c->cbev, EV_READ);
	else
		(void)bufferevent_disable(c->cbev, EV_READ);
}

/*
 * A reused upstream leg's first request, kept as it goes upstream (head
 * with its secrets, then body) up to INSP_REPLAY_MAX bytes, to be sent
 * again on a fresh leg if the kept one turns out closed (redial()).  A
 * request beyond the bound keeps nothing: its failure is a 502 as on a
 * fresh leg.  The copy is wiped as soon as the answer begins.
 */
void
conn_inspect_replay_drop(struct conn_insp *x)
{
	buf_free(&x->replay);
	memset(&x->replay, 0, sizeof(x->replay));
}

static void
replay_add(struct conn_insp *x, struct evbuffer *from, size_t n)
{
	const unsigned char	*p;

	if (x->replay.len + n > INSP_REPLAY_MAX ||
	    (p = evbuffer_pullup(from, (ev_ssize_t)n)) == NULL) {
		conn_inspect_replay_drop(x);
		return;
	}
	buf_add(&x->replay, p, n);
	if (x->replay.failed)
		conn_inspect_replay_drop(x);
}

/* n bytes from one side's input to the other's output, counted. */
static void
move(struct gate_conn *c, int up, size_t n)
{
	struct bufferevent	*from = up ? c->cbev : c->ubev;
	struct bufferevent	*to = up ? c->ubev : c->cbev;
	struct evbuffer		*out = bufferevent_get_output(to);

	if (n == 0)
		return;
	if (!up)
		conn_inspect_ticket(c);	/* before the bytes it goes with */
	else if (c->insp->replay.p != NULL)
		replay_add(c->insp, bufferevent_get_input(from), n);
	evbuffer_remove_buffer(bufferevent_get_input(from), out, n);
	if (up) {
		c->insp->up += n;
		c->up += n;
		c->g->num->ctr.bytes_up += n;
	} else {
		c->insp->down += n;
		c->insp->sent = 1;
		c->down += n;
		c->g->num->ctr.bytes_down += n;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	if (evbuffer_get_length(out) >= RELAY_MAX) {
		bufferevent_disable(from, EV_READ);
		bufferevent_setwatermark(to, EV_WRITE, RELAY_MAX / 2, 0);
		if (up)
			c->up_paused = 1;
		else
			c->down_paused = 1;
	}
}

/* The exchange is over both ways: the next request head, or the end. */
static int
next_exchange(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	if (!x->keep || c->c_eof)
		return closing(c, "eof", END_DONE);
	x->rq = RQ_HEAD;
	client_reading(c);
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) == 0) {
		conn_inspect_idle(c->cbev);
		return 0;
	}
	return client_read(c) == -1 ? -1 : 0;
}

static int
response_done(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	request_line(c, "allow", "allowed", NULL, NULL);
	x->rs = RS_IDLE;
	if (!x->keep)
		return closing(c, "eof", END_DONE);
	conn_inspect_idle(c->ubev);
	if (x->rq == RQ_WAIT)
		return next_exchange(c);
	return 0;	/* the request's body still flows; then the next */
}

/* --- the request ---------------------------------------------------------- */

/* libevent frees the head written upstream: wiped first, it held secrets. */
void
conn_inspect_wipe(const void *data, size_t len, void *arg)
{
	explicit_bzero((void *)(uintptr_t)data, len);
	free((void *)(uintptr_t)data);
}

/*
 * Whether --learn lets a refused request through.  It records what the
 * rule's entries would say; the refusal of TRACE and TRACK is not theirs
 * (an echo of the request, whatever the entries: policy_decide_request)
 * and stays, as the denied address ranges do.
 */
static int
learning(const struct gate_conn *c, const struct policy_request_decision *d)
{
	return c->g->cfg.learn && d->reason != POLICY_R_REQUEST_METHOD;
}

/* Whether the head names the connection's host (and port) in its Host. */
static int
host_is_ours(struct gate_conn *c, const struct gate_http_req *req,
    const char *head)
{
	struct policy_target	 h;
	char			 err[128];

	if (req->host == -1)
		return 0;
	return policy_parse_target(head + req->hdrs[req->host].value.off,
	    req->hdrs[req->host].value.len, c->d->tgt.port, &h, err,
	    sizeof(err)) == 0 && strcmp(h.host, c->d->tgt.host) == 0 &&
	    h.port == c->d->tgt.port;
}

/*
 * A refused request: the fix that would allow it (for what was refused,
 * p: the line, or a method or path an override named), and the answer.
 */
static int
refuse(struct gate_conn *c, const struct gate_http_req *req,
    const char *head, const struct policy_request_decision *d,
    const struct gate_override_pair *p)
{
	struct conn_insp	*x = c->insp;
	char			 fix[POLICY_FIX_MAX], line[POLICY_FIX_MAX];

	/* what it carried is looked at all the same: names, never values */
	gate_inject_scan(conn_inspection(c)->secrets, head,
	    (size_t)req->pos, x->inj.foreign, sizeof(x->inj.foreign));
	if (policy_request_fix_yaml(x->rule, p->method, p->mlen, p->target,
	    p->tlen, d->reason, 0, fix, sizeof(fix)) <= 0 ||
	    policy_request_fix_yaml(x->rule, p->method, p->mlen, p->target,
	    p->tlen, d->reason, 1, line, sizeof(line)) <= 0)
		fix[0] = line[0] = '\0';
	return answer(c, d->reason == POLICY_R_REQUEST_BAD_PATH ? 400 : 403,
	    "deny", conn_reason_token(d->reason), d->detail != NULL ?
	    d->detail : policy_reason_str(d->reason), fix[0] ? fix : NULL,
	    line[0] ? line : NULL);
}

/*
 * The request is allowed: its head upstream, with the rule's secrets.
 * One --learn lets through that the rules would refuse (x->would) goes
 * as the client wrote it, without them: learning must not hand a secret
 * to a request the policy is there to stop (a git push, a DELETE).
 */
static int
forward(struct gate_conn *c, const struct gate_http_req *req,
    const char *head)
{
	struct conn_insp	*x = c->insp;
	struct buf		 out;

	buf_init(&out, INJECT_HEAD_MAX, BUF_SECRET);
	if (gate_inject_head(req, head, x->would != NULL ? NULL : x->rule,
	    conn_inspection(c)->secrets, &out, &x->inj) == -1) {
		buf_free(&out);
		return answer(c, 431, "error", "bad_request", "the request "
		    "head is too large with its secrets", NULL, NULL);
	}
	/* the kept leg closed before this, its first request: a fresh leg,
	 * which takes the request as it goes (its TLS first) */
	if (x->up_gone && conn_inspect_redial(c) == -1) {
		buf_free(&out);
		return -1;
	}
	/*
	 * A reused leg's first request is kept to be sent again (redial()),
	 * copied before libevent has the head: its filter may encrypt it
	 * and free it (conn_inspect_wipe) before evbuffer_add_reference returns.
	 */
	if (x->reused && x->replay.p == NULL) {
		buf_init(&x->replay, INSP_REPLAY_MAX, BUF_SECRET);
		buf_add(&x->replay, out.p, out.len);
		if (x->replay.failed)
			conn_inspect_replay_drop(x);
	}
	if (evbuffer_add_reference(
	    bufferevent_get_output(c->ubev), out.p, out.len, conn_inspect_wipe,
	    NULL) == -1) {
		buf_free(&out);
		return answer(c, 431, "error", "bad_request", "the request "
		    "head is too large with its secrets", NULL, NULL);
	}
	/* the buffer is libevent's now, wiped and freed by conn_inspect_wipe */
	x->up = out.len;
	c->up += out.len;
	c->g->num->ctr.bytes_up += out.len;
	x->rq_left = req->chunked ? -1 : (req->content_length > 0 ?
	    req->content_length : 0);
	gate_http_chunk_init(&x->rq_chunk);
	x->upgrade = x->upgrade_to[0] != '\0' &&
	    gate_http_conn_has(req, head, "upgrade");
	x->head_req = gate_http_span_is(head, req->method, "HEAD");
	x->keep = req->minor == 1 && !gate_http_conn_has(req, head, "close");
	if (!x->keep || x->upgrade)
		x->up_dirty = 1;	/* the upstream was told it ends */
	x->rs = RS_HEAD;
	x->rq = x->rq_left != 0 ? RQ_BODY : RQ_WAIT;
	client_reading(c);
	return 0;
}

/* A whole request head, parsed in x->req: decided, then refused or sent. */
static int
request(struct gate_conn *c, const char *head)
{
	struct conn_insp		*x = c->insp;
	const struct gate_http_req	*req = x->req;
	struct policy_request_decision	 d;
	struct gate_override_pair	 p;	/* 8 KiB: set, not zeroed */
	const char			*err;

	p.method = head + req->method.off;
	p.mlen = req->method.len;
	p.target = head + req->target.off;
	p.tlen = req->target.len;
	snprintf(x->method, sizeof(x->method), "%.*s", (int)req->method.len,
	    head + req->method.off);
	audit_path(x->path, head + req->target.off, req->target.len);
	if (gate_http_span_is(head, req->method, "CONNECT") ||
	    head[req->target.off] != '/')
		return answer(c, 400, "error", "bad_target", "an inspected "
		    "connection carries origin-form requests (/path)", NULL,
		    NULL);
	if (!host_is_ours(c, req, head))
		return answer(c, 400, "error", "host_mismatch", "the Host "
		    "header must name the connection's host", NULL, NULL);
	if (gate_override_upgrade(req, head, x->upgrade_to,
	    INSP_UPGRADE_MAX) == -1)
		return answer(c, 403, "deny", "upgrade_refused", "an inspected "
		    "connection upgrades to WebSocket only (Upgrade: "
		    "websocket): after another protocol's switch its requests "
		    "would pass undecided", NULL, NULL);
	policy_decide_request(x->rule, p.method, p.mlen, p.target, p.tlen, &d);
	if (d.verdict == POLICY_ALLOW && gate_override_decide(x->rule, req,
	    head, p.target, p.tlen, &d, &p, &err) == -1)
		return answer(c, 400, "error", "bad_request", err, NULL, NULL);
	if (d.entry != NULL)
		snprintf(x->entry, sizeof(x->entry), "line %u, column %u: %s",
		    d.line, d.column, d.entry);
	if (d.verdict != POLICY_ALLOW && learning(c, &d))
		x->would = conn_reason_token(d.reason);
	else if (d.verdict != POLICY_ALLOW)
		return refuse(c, req, head, &d, &p);
	return forward(c, req, head);
}

/*
 * The client's bytes while a request head is due: parsed in place (the
 * parser is restartable, the buffer is pulled up whole), then taken off.
 * 1: go on, 0: more bytes needed, -1: stop (refused, or closed).
 */
static int
read_request(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct evbuffer		*in = bufferevent_get_input(c->cbev);
	size_t			 len = evbuffer_get_length(in);
	const char		*p;
	char			*head;
	ssize_t			 r;
	int			 rc;

	if (len == 0)
		return 0;
	if (x->req == NULL) {
		if ((x->req = malloc(sizeof(*x->req))) == NULL)
			return closing(c, "out of memory", END_FAULT);
		gate_http_req_init(x->req);
		memset(&x->inj, 0, sizeof(x->inj));
		x->method[0] = x->path[0] = x->entry[0] = '\0';
		x->status = 0;
		x->up = x->down = 0;
		x->sent = 0;
		x->would = NULL;
		x->upgrade_to[0] = '\0';
		clock_gettime(CLOCK_MONOTONIC, &x->t_req);
	}
	if (len > GATE_HTTP_MAX_HEAD)
		len = GATE_HTTP_MAX_HEAD;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL)
		return closing(c, "out of memory", END_FAULT);
	if ((r = gate_http_parse(x->req, p, len)) == 0)
		return 0;
	if (r == -1) {
		if (x->req->have_line)
			snprintf(x->method, sizeof(x->method), "%.*s",
			    (int)x->req->method.len, p + x->req->method.off);
		c->g->num->ctr.bad_request++;
		return answer(c, x->req->status, "error", "bad_request",
		    x->req->error, NULL, NULL);
	}
	if ((head = malloc((size_t)r + 1)) == NULL)
		return closing(c, "out of memory", END_FAULT);
	(void)evbuffer_remove(in, head, (size_t)r);
	head[r] = '\0';
	rc = request(c, head);
	free(x->req);
	x->req = NULL;
	free(head);
	return rc == 0 ? 1 : -1;
}

/* The request's body, as far as its framing goes. */
static int
request_body(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	ssize_t			 n;
	int			 done;

	n = conn_body_take(&x->rq_left, &x->rq_chunk,
	    bufferevent_get_input(c->cbev), &done);
	if (n < 0) {
		c->g->num->ctr.bad_request++;
		if (!x->sent)
			return answer(c, 400, "error", "bad_chunked_body",
			    "malformed chunked request body", NULL, NULL);
		return closing(c, "bad_chunked_body", END_FAULT);
	}
	move(c, 1, (size_t)n);
	if (!done)
		return 0;
	x->rq = RQ_WAIT;
	client_reading(c);
	if (x->rs == RS_IDLE)
		return next_exchange(c);
	return 0;
}

/*
 * What the client sent, as far as the exchange allows.  -1 when the
 * connection is closing or gone (the caller touches nothing of it), 0
 * otherwise.  Every step below returns -1 after anything that may have
 * freed the connection.
 */
static int
client_read(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	int			 rc = 1;

	if (x->closing)
		return -1;
	while (rc == 1) {
		switch (x->rq) {
		case RQ_HEAD:
			rc = read_request(c);
			break;
		case RQ_BODY:
			rc = request_body(c);
			break;
		case RQ_TUNNEL:
			move(c, 1, evbuffer_get_length(
			    bufferevent_get_input(c->cbev)));
			rc = 0;
			break;
		default:
			rc = 0;		/* read again once the answer is in */
			break;
		}
	}
	return rc == -1 || x->closing ? -1 : 0;
}

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	conn_inspect_busy(bev);
	(void)client_read(arg);
}

/* --- the response --------------------------------------------------------- */

/* The upstream broke the exchange: a 502 if nothing of it was sent. */
int
conn_inspect_up_failed(struct gate_conn *c, const char *why)
{
	struct conn_insp	*x = c->insp;

	x->up_dirty = 1;
	if (!x->sent && x->rs == RS_HEAD)
		return answer(c, 502, "error", "upstream_error", why, NULL,
		    NULL);
	x->status = x->status != 0 ? x->status : 502;
	request_line(c, "error", "upstream_error", why, NULL);
	conn_close_as(c, "upstream error", END_FAULT);
	conn_free(c);
	return -1;
}

/*
 * A 101 whose Upgrade is not the WebSocket the request offered (another
 * protocol, or none): nothing of it reaches the client, which gets a 502
 * naming it, and the connection closes.
 */
static int
switched_elsewhere(struct gate_conn *c, const char *up)
{
	char	 why[INSP_UPGRADE_MAX + 96];

	snprintf(why, sizeof(why), "the upstream switched to '%s', not the "
	    "protocol the request offered", up[0] != '\0' ? up : "(none)");
	return answer(c, 502, "error", "upgrade_mismatch", why, NULL, NULL);
}

/* How the response's body ends; keep says whether another may follow. */
static void
response_framing(struct conn_insp *x, const struct gate_http_req *resp,
    const char *head)
{
	if (x->head_req || resp->code == 204 || resp->code == 304)
		x->rs_left = 0;
	else if (resp->chunked) {
		x->rs_left = -1;
		gate_http_chunk_init(&x->rs_chunk);
	} else if (resp->content_length >= 0)
		x->rs_left = resp->content_length;
	else {
		x->rs_left = RS_UNTIL_CLOSE;
		x->keep = 0;
	}
	if (gate_http_conn_has(resp, head, "close") || resp->minor == 0)
		x->up_dirty = 1;	/* kept for this client at most */
	if (gate_http_conn_has(resp, head, "close") || (resp->minor == 0 &&
	    !gate_http_conn_has(resp, head, "keep-alive")))
		x->keep = 0;
	if (x->rs_left == RS_UNTIL_CLOSE)
		x->up_dirty = 1;
}

static int
read_response(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct evbuffer		*in = bufferevent_get_input(c->ubev);
	size_t			 len = evbuffer_get_length(in);
	const char		*p;
	char			 why[128], up[INSP_UPGRADE_MAX + 4];
	ssize_t			 r;
	int			 code;

	if (len == 0)
		return 0;
	if (x->resp == NULL) {
		if ((x->resp = malloc(sizeof(*x->resp))) == NULL)
			return closing(c, "out of memory", END_FAULT);
		gate_http_resp_init(x->resp);
	}
	if (len > GATE_HTTP_MAX_HEAD)
		len = GATE_HTTP_MAX_HEAD;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL)
		return closing(c, "out of memory", END_FAULT);
	if ((r = gate_http_parse(x->resp, p, len)) == 0)
		return 0;
	if (r == -1) {
		snprintf(why, sizeof(why), "malformed response head: %s",
		    x->resp->error);
		return conn_inspect_up_failed(c, why);
	}
	code = x->resp->code;
	if (code == 101 && !x->upgrade)
		return conn_inspect_up_failed(c, "101 to a request that asked for no "
		    "upgrade");
	if (code == 101 && (gate_override_upgrade(x->resp, p, up,
	    INSP_UPGRADE_MAX) == -1 || up[0] == '\0'))
		return switched_elsewhere(c, up);
	if (code >= 200 || code == 101) {
		x->status = code;
		response_framing(x, x->resp, p);
	}
	free(x->resp);
	x->resp = NULL;
	move(c, 0, (size_t)r);
	if (code == 101) {
		/* an upgrade (WebSocket): the streams as they are */
		x->up_dirty = 1;
		request_line(c, "allow", "allowed", NULL, NULL);
		x->rq = RQ_TUNNEL;
		x->rs = RS_TUNNEL;
		client_reading(c);
		return 1;
	}
	if (code < 200)
		return 1;	/* 100 Continue, 103: the answer follows */
	x->rs = RS_BODY;
	if (x->rs_left == 0)
		return response_done(c) == 0 ? 1 : -1;
	return 1;
}

static int
response_body(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	ssize_t			 n;
	int			 done;

	n = conn_body_take(&x->rs_left, &x->rs_chunk,
	    bufferevent_get_input(c->ubev), &done);
	if (n < 0)
		return conn_inspect_up_failed(c, "malformed chunked response body");
	move(c, 0, (size_t)n);
	if (!done)
		return 0;
	return response_done(c) == 0 ? 1 : -1;
}

/* What the upstream sent; returns as client_read(). */
static int
up_read(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct evbuffer		*in = bufferevent_get_input(c->ubev);
	int			 rc = 1;

	if (x->closing)
		return -1;
	if (evbuffer_get_length(in) > 0) {
		/* the answer began: the leg was alive, no replay */
		x->reused = 0;
		if (x->replay.p != NULL)
			conn_inspect_replay_drop(x);
	}
	while (rc == 1 && evbuffer_get_length(in) > 0) {
		switch (x->rs) {
		case RS_HEAD:
			rc = read_response(c);
			break;
		case RS_BODY:
			rc = response_body(c);
			break;
		case RS_TUNNEL:
			move(c, 0, evbuffer_get_length(in));
			rc = 0;
			break;
		case RS_IDLE:
			/* no request asked for it: the exchanges are off */
			log_info("conn %llu: %s: the upstream sent bytes no "
			    "request asked for", (unsigned long long)c->id,
			    c->d->hostport);
			x->up_dirty = 1;
			conn_close_as(c, "upstream error", END_FAULT);
			conn_free(c);
			return -1;
		}
	}
	return rc == -1 || x->closing ? -1 : 0;
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	conn_inspect_busy(bev);
	(void)up_read(arg);
}

/* --- writes, ends, errors -------------------------------------------------- */

static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct conn_insp	*x = c->insp;
	int			 to_client = bev == c->cbev;
	size_t			 left = evbuffer_get_length(
				    bufferevent_get_output(bev));

	if (x->closing)
		return;		/* conn_inspect_flushed() closes it */
	if (to_client && c->down_paused && left <= RELAY_MAX / 2) {
		c->down_paused = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		if (!c->u_eof)
			(void)bufferevent_enable(c->ubev, EV_READ);
	} else if (!to_client && c->up_paused && left <= RELAY_MAX / 2) {
		c->up_paused = 0;
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		client_reading(c);
	}
	/* an upgraded stream's end, passed on once its bytes are out */
	if (left == 0 && x->rq == RQ_TUNNEL &&
	    ((to_client && c->u_eof) || (!to_client && c->c_eof)))
		(void)closing(c, "eof", END_DONE);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;
	struct conn_insp	*x = c->insp;

	if ((what & BEV_EVENT_EOF) == 0) {
		conn_close_as(c, "client error", END_CLIENT_ERROR);
		conn_free(c);
		return;
	}
	c->c_eof = 1;
	if (client_read(c) == -1)	/* what came before the end */
		return;
	if (x->rq == RQ_TUNNEL) {
		if (evbuffer_get_length(bufferevent_get_output(c->ubev)) == 0)
			(void)closing(c, "eof", END_DONE);
		return;
	}
	/* a half-close after the request still gets its answer */
	client_reading(c);
	if (x->rs == RS_IDLE)
		(void)closing(c, x->rq == RQ_HEAD &&
		    evbuffer_get_length(bufferevent_get_input(bev)) == 0 ?
		    "eof" : "client closed", END_DONE);
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;
	struct conn_insp	*x = c->insp;

	if (conn_inspect_stale(c)) {
		while (bufferevent_get_openssl_error(bev) != 0)
			;
		ERR_clear_error();
		(void)conn_inspect_redial(c);
		return;
	}
	if (conn_inspect_kept_closed(c))	/* before the first request */
		return;
	if ((what & BEV_EVENT_EOF) == 0) {
		(void)conn_inspect_up_failed(c, "the upstream connection failed");
		return;
	}
	c->u_eof = 1;
	if (up_read(c) == -1)		/* what came before the end */
		return;
	switch (x->rs) {
	case RS_BODY:
		if (x->rs_left == RS_UNTIL_CLOSE) {
			x->keep = 0;
			(void)response_done(c);
			return;
		}
		(void)conn_inspect_up_failed(c, "the upstream closed in the middle "
		    "of its answer");
		return;
	case RS_HEAD:
		(void)conn_inspect_up_failed(c, "the upstream closed before its "
		    "answer");
		return;
	case RS_TUNNEL:
		if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
			(void)closing(c, "eof", END_DONE);
		return;
	case RS_IDLE:
		(void)closing(c, "eof", END_DONE);
		return;
	}
}

/* The upstream leg's callbacks and sizes for the exchanges. */
void
conn_inspect_up_http(struct gate_conn *c)
{
	bufferevent_setcb(c->ubev, up_read_cb, write_cb, up_event_cb, c);
	bufferevent_setwatermark(c->ubev, EV_READ, 0, RELAY_MAX);
	bufferevent_set_max_single_read(c->ubev, INSP_READ);
	bufferevent_set_max_single_write(c->ubev, RELAY_IO);
}

void
conn_inspect_http(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	x->phase = IP_HTTP;
	x->rq = RQ_HEAD;
	x->rs = RS_IDLE;
	clock_gettime(CLOCK_MONOTONIC, &c->t_active);
	bufferevent_setcb(c->cbev, client_read_cb, write_cb, client_event_cb,
	    c);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, RELAY_MAX);
	conn_inspect_up_http(c);
	/*
	 * libevent writes its output chain by chain: 64 KiB a turn makes
	 * fewer, fuller TLS records.  A filter reads (decrypts) until
	 * OpenSSL wants more, into space it reserves first: the last,
	 * empty reservation stays with an idle connection, so a read is
	 * one record's worth (INSP_READ: a 16 KiB chain with libevent's
	 * header; 64 KiB made it 128 KiB, 300 KiB of heap a connection).
	 */
	bufferevent_set_max_single_read(c->cbev, INSP_READ);
	bufferevent_set_max_single_write(c->cbev, RELAY_IO);
	(void)bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	(void)bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		(void)client_read(c);
}

/*
 * A forwarded request (plain HTTP, or AISB-TRANSPARENT's) to an inspected
 * host: its request is decided by the same entries before it is sent;
 * no secret is added to a request that crosses the network in clear.
 * 0, or -1 when it was refused (and answered).
 */
int
conn_inspect_forward(struct gate_conn *c)
{
	const struct gate_http_req	*req = c->d->req;
	struct policy_request_decision	 d;
	struct gate_override_pair	 o;
	char				 fix[POLICY_FIX_MAX];
	char				 line[POLICY_FIX_MAX];
	char				 target[GATE_HTTP_MAX_LINE + 2];
	char				 path[INSP_PATH_MAX + 4];
	char				 detail[DETAIL_MAX + INSP_PATH_MAX + 32];
	const char			*m = c->d->head + req->method.off;
	const char			*p = c->d->head + c->d->path.off;
	const char			*err;
	size_t				 plen = c->d->path.len, tlen;

	/* "http://host" and "http://host?q" are "/" and "/?q" */
	snprintf(target, sizeof(target), "%s%.*s", plen == 0 || p[0] == '?' ?
	    "/" : "", (int)plen, p);
	tlen = strlen(target);
	policy_decide_request(c->d->irule, m, req->method.len, target, tlen,
	    &d);
	o.method = m;
	o.mlen = req->method.len;
	o.target = target;
	o.tlen = tlen;
	if (d.verdict == POLICY_ALLOW && gate_override_decide(c->d->irule, req,
	    c->d->head, target, tlen, &d, &o, &err) == -1) {
		conn_refuse(c, 400, "error", "bad_request", err);
		return -1;
	}
	if (d.verdict == POLICY_ALLOW)
		return 0;
	if (learning(c, &d)) {
		c->would = conn_reason_token(d.reason);
		return 0;
	}
	if (policy_request_fix_yaml(c->d->irule, o.method, o.mlen, o.target,
	    o.tlen, d.reason, 0, fix, sizeof(fix)) <= 0 ||
	    policy_request_fix_yaml(c->d->irule, o.method, o.mlen, o.target,
	    o.tlen, d.reason, 1, line, sizeof(line)) <= 0)
		fix[0] = line[0] = '\0';
	/* the path for people, never its query (tokens ride there); a
	 * discovery's detail names the push already */
	audit_path(path, o.target, o.tlen);
	if (d.detail == o.detail)
		snprintf(detail, sizeof(detail), "%s", d.detail);
	else
		snprintf(detail, sizeof(detail), "%s: %.*s %s", d.detail !=
		    NULL ? d.detail : policy_reason_str(d.reason), (int)o.mlen,
		    o.method, path);
	conn_refuse_fix(c, d.reason == POLICY_R_REQUEST_BAD_PATH ? 400 : 403,
	    "deny", conn_reason_token(d.reason), detail, fix[0] ? fix : NULL,
	    line[0] ? line : NULL);
	return -1;
}
