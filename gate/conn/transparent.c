/*
 * AISB-TRANSPARENT: a connection that a relay captured (a tool that
 * ignored the proxy variables dialled port 80 or 443 itself) and carries
 * to the gate's ordinary listener, behind one request head:
 *
 *   AISB-TRANSPARENT <port> HTTP/1.1
 *   Proxy-Authorization: Basic ...	(as for CONNECT: auth, --users)
 *   X-Aisb-Tool: NAME			(optional, audited, never trusted)
 *   X-Aisb-Dialled: ADDR		(optional, audited, never trusted)
 *
 * followed at once by the client's own bytes.  The gate answers nothing
 * to the head: it reads the client's first bytes and takes the name from
 * them, the TLS ClientHello's server name (SNI) or the Host header of an
 * HTTP/1.x request, then decides NAME:<port> exactly as a CONNECT (TLS)
 * or an absolute-form forwarded request (HTTP): policy, resolve, classify,
 * dial the classified address.  The address the client dialled plays no
 * part in it, but one: an address of the gate's own synthetic range
 * (X-Aisb-Dialled, 198.18.0.0/15), which AISB-DNS handed out for a name.
 * On a port other than 80 and 443 (ssh, a database: protocols that need
 * not name their host, and whose server may speak first) the connection
 * is decided at once as a CONNECT to the name the address was given for
 * (synth.c); on 80 and 443 a stream that is neither TLS nor HTTP is too.
 * An address of the range the gate did not hand out is refused.  See
 * docs/gate.md, "Transparent entry".
 *
 * Bounds: the first TLS record, 5 + GATE_TLS_MAX_RECORD bytes (tls.c); an
 * HTTP head of GATE_HTTP_MAX_HEAD bytes (http.c, the gate's own parser);
 * the client's bytes must arrive within the header timeout, counted again
 * from the end of the AISB-TRANSPARENT head.  X-Aisb-Tool: TP_TOOL_MAX
 * bytes of [A-Za-z0-9._+-]; X-Aisb-Dialled: TP_DIALLED_MAX bytes of
 * [0-9A-Fa-f.:[]]; a value outside these is not audited (nor used).
 *
 * A refusal after the head is answered in the client's protocol
 * (conn_reply): a TLS stream gets one fatal alert, an HTTP stream the
 * gate's usual answer, a stream that is neither (transparent_unknown)
 * nothing; each is one audit line, like every refusal.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "dnsmsg.h"
#include "log.h"
#include "gate/gate.h"
#include "gate/http.h"
#include "gate/tls.h"
#include "gate/conn/conn-int.h"

/* TLS alert descriptions (RFC 8446 section 6) */
#define ALERT_ACCESS_DENIED	49
#define ALERT_INTERNAL_ERROR	80

/*
 * Copy a header value into out when it has 1..max bytes, each of which
 * ok() accepts; otherwise leave out empty.  The first such header wins.
 */
static void
take_value(const char *v, size_t len, char *out, size_t max,
    int (*ok)(unsigned char))
{
	size_t	 i;

	if (out[0] != '\0' || len == 0 || len > max)
		return;
	for (i = 0; i < len; i++)
		if (!ok((unsigned char)v[i]))
			return;
	memcpy(out, v, len);
	out[len] = '\0';
}

static int
tool_char(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '+' ||
	    ch == '-';
}

static int
addr_char(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
	    (ch >= 'A' && ch <= 'F') || ch == '.' || ch == ':' || ch == '[' ||
	    ch == ']';
}

/* The decimal port of the head's target, 1..65535; 0 when it is not one. */
static uint16_t
head_port(const char *t, size_t len)
{
	unsigned long	 n = 0;
	size_t		 i;

	if (len == 0 || len > 5 || t[0] == '0')
		return 0;
	for (i = 0; i < len; i++) {
		if (t[i] < '0' || t[i] > '9')
			return 0;
		n = n * 10 + (unsigned long)(t[i] - '0');
	}
	return n > 65535 ? 0 : (uint16_t)n;
}

static void
bad_target(struct gate_conn *c, const char *err)
{
	memset(&c->d->tgt, 0, sizeof(c->d->tgt));
	c->d->tgt.port = c->d->tp_port;
	c->g->num->ctr.bad_request++;
	conn_refuse(c, 400, "error", "bad_target", err);
}

/* The name is known (d->tgt): stop reading, decide. */
static void
decide_now(struct gate_conn *c)
{
	evtimer_del(c->timer);
	bufferevent_disable(c->cbev, EV_READ);
	conn_decide(c);
}

/*
 * The address the client dialled, when it lies in the gate's synthetic
 * range: 1 with it in *a, 0 otherwise (no X-Aisb-Dialled, another
 * address: the stream names itself).
 */
static int
dialled_synth(const struct conn_dec *d, struct policy_addr *a)
{
	const char	*s = d->dialled;
	size_t		 len = strlen(s);

	if (len > 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	if (len == 0 || policy_parse_addr(s, len, a) == -1)
		return 0;
	return a->family == AF_INET && dnsmsg_synth_is(a->bytes);
}

/*
 * Named by the synthetic address the client dialled: a CONNECT tunnel to
 * the name the gate's DNS gave it for, decided now (no byte of the
 * client's is needed: its server may speak first).  The SNI check of a
 * CONNECT applies to the first bytes (relay.c).  A refusal closes without
 * a byte, the protocol being unknown.
 */
static void
by_address(struct gate_conn *c, const struct policy_addr *a)
{
	struct conn_dec	*d = c->d;
	char		 name[POLICY_MAX_NAME + 1], lab[CONN_LABEL_MAX];
	char		 err[TP_DIALLED_MAX + 128];

	d->tp = TP_ADDR;
	c->named_by = NAMED_ADDR;
	c->tunnel = 1;
	snprintf(d->method, sizeof(d->method), "CONNECT");
	if (gate_synth_name(c->g->synth, d->pol, c->cred_key, conn_label(c,
	    lab, sizeof(lab)), a, name, sizeof(name)) == -1) {
		/* the target is the address itself: what was dialled */
		policy_addr_str(a, name, sizeof(name));
		(void)policy_parse_target(name, strlen(name), d->tp_port,
		    &d->tgt, err, sizeof(err));
		snprintf(err, sizeof(err), "%s was not handed out by the "
		    "gate's DNS: the gate knows no name for it", d->dialled);
		conn_refuse(c, 403, "deny", "unknown_address", err);
		return;
	}
	if (policy_parse_target(name, strlen(name), d->tp_port, &d->tgt, err,
	    sizeof(err)) == -1) {
		bad_target(c, err);
		return;
	}
	decide_now(c);
}

void
conn_transparent_start(struct gate_conn *c)
{
	struct conn_dec		*d = c->d;
	struct gate_http_req	*req = d->req;
	struct policy_addr	 synth;
	size_t			 i;

	c->transparent = 1;
	c->g->num->ctr.transparent++;
	for (i = 0; i < req->nhdrs; i++) {
		const struct gate_http_hdr	*h = &req->hdrs[i];

		if (gate_http_span_eq(d->head, h->name, "x-aisb-tool"))
			take_value(d->head + h->value.off, h->value.len,
			    d->tool, TP_TOOL_MAX, tool_char);
		else if (gate_http_span_eq(d->head, h->name, "x-aisb-dialled"))
			take_value(d->head + h->value.off, h->value.len,
			    d->dialled, TP_DIALLED_MAX, addr_char);
	}
	if ((d->tp_port = head_port(d->head + req->target.off,
	    req->target.len)) == 0) {
		c->g->num->ctr.bad_request++;
		conn_refuse(c, 400, "error", "bad_target",
		    "AISB-TRANSPARENT takes the port the client dialled, "
		    "1 to 65535");
		return;
	}
	d->tgt.port = d->tp_port;	/* for the audit of a refusal */
	if (d->tp_port != 80 && d->tp_port != 443 &&
	    dialled_synth(d, &synth)) {
		by_address(c, &synth);
		return;
	}

	/* The head is done with; its parse state serves the client's own. */
	free(d->head);
	d->head = NULL;
	d->headlen = 0;
	gate_http_req_init(req);
	d->method[0] = '\0';
	d->tp = TP_PEEK;

	log_debug("conn %llu: transparent, port %u%s%s", (unsigned long long)c->id,
	    d->tp_port, d->tool[0] ? ", tool " : "", d->tool);
	conn_arm(c, c->g->cfg.header_timeout);
	bufferevent_enable(c->cbev, EV_READ);
	/* what came with the head waits in the buffer: no callback for it */
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		conn_transparent_read(c);
}

static void
out_of_memory(struct gate_conn *c)
{
	conn_close_as(c, "out of memory", END_FAULT);
	conn_free(c);
}

/* A TLS stream: its first record must be a ClientHello naming the host. */
static void
peek_tls(struct gate_conn *c, struct evbuffer *in, size_t len)
{
	char		 name[POLICY_MAX_NAME + 2], err[128];
	const uint8_t	*p;
	int		 r;

	if (len > 5 + GATE_TLS_MAX_RECORD)
		len = 5 + GATE_TLS_MAX_RECORD;
	if ((p = evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		out_of_memory(c);
		return;
	}
	switch ((r = gate_tls_sni(p, len, name, sizeof(name)))) {
	case GATE_TLS_MORE:
		return;
	case GATE_TLS_NAME:
		break;
	case GATE_TLS_NO_NAME:
		conn_refuse(c, 403, "deny", "no_sni",
		    "a TLS ClientHello without a server name (SNI): the gate "
		    "decides by name, and has none");
		return;
	default:
		conn_refuse(c, 403, "deny", "tls_malformed",
		    "malformed TLS ClientHello");
		return;
	}
	if (policy_parse_target(name, strlen(name), c->d->tp_port, &c->d->tgt,
	    err, sizeof(err)) == -1) {
		bad_target(c, err);
		return;
	}
	c->tunnel = 1;
	c->named_by = NAMED_SNI;
	snprintf(c->d->method, sizeof(c->d->method), "CONNECT");
	decide_now(c);
}

/*
 * Do the bytes begin like an HTTP/1.x request line (an upper-case method
 * and a space)?  1 yes, 0 too few bytes to tell, -1 no.
 */
static int
http_like(const char *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len && i <= GATE_HTTP_MAX_METHOD; i++) {
		if (p[i] == ' ')
			return i > 0 ? 1 : -1;
		if ((p[i] < 'A' || p[i] > 'Z') && p[i] != '-')
			return -1;
	}
	return i > GATE_HTTP_MAX_METHOD ? -1 : 0;
}

/*
 * An HTTP/1.x stream: its request head, origin-form, with a Host.  It is
 * then the request a forwarding proxy gets, the authority taken from Host
 * instead of the target, and goes the same way (conn_connected writes the
 * same head upstream, relay.c frames the same body).
 */
static void
peek_http(struct gate_conn *c, struct evbuffer *in, size_t len)
{
	struct conn_dec		*d = c->d;
	struct gate_http_req	*req = d->req;
	struct policy_target	 h;
	struct policy_addr	 synth;
	struct gate_http_span	 v;
	const char		*p;
	char			 err[128];
	ssize_t			 r;

	if (len > GATE_HTTP_MAX_HEAD)
		len = GATE_HTTP_MAX_HEAD;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		out_of_memory(c);
		return;
	}
	if (d->tp == TP_PEEK) {
		switch (http_like(p, len)) {
		case 0:
			return;
		case -1:
			/* ssh on 443, say: the name the address was for */
			if (dialled_synth(d, &synth)) {
				by_address(c, &synth);
				return;
			}
			d->tp = TP_UNKNOWN;
			conn_refuse(c, 400, "error", "transparent_unknown",
			    "neither a TLS ClientHello nor an HTTP/1.x request");
			return;
		}
		d->tp = TP_HTTP;
	}
	if ((r = gate_http_parse(req, p, len)) == 0)
		return;
	if (r == -1) {
		if (req->have_line)
			snprintf(d->method, sizeof(d->method), "%.*s",
			    (int)req->method.len, p + req->method.off);
		c->g->num->ctr.bad_request++;
		conn_refuse(c, req->status, "error", "bad_request", req->error);
		return;
	}
	d->headlen = (size_t)r;
	if ((d->head = malloc(d->headlen + 1)) == NULL ||
	    evbuffer_remove(in, d->head, d->headlen) != (int)d->headlen) {
		out_of_memory(c);
		return;
	}
	d->head[d->headlen] = '\0';
	snprintf(d->method, sizeof(d->method), "%.*s", (int)req->method.len,
	    d->head + req->method.off);

	if (req->target.len == 0 || d->head[req->target.off] != '/') {
		bad_target(c, "a captured HTTP request has an origin-form "
		    "target (/path)");
		return;
	}
	if (req->host == -1) {
		conn_refuse(c, 403, "deny", "no_host",
		    "an HTTP request without a Host header: the gate decides "
		    "by name, and has none");
		return;
	}
	v = req->hdrs[req->host].value;
	if (policy_parse_target(d->head + v.off, v.len, d->tp_port, &h, err,
	    sizeof(err)) == -1) {
		bad_target(c, err);
		return;
	}
	d->tgt = h;
	if (h.port != d->tp_port) {
		snprintf(d->hostport, sizeof(d->hostport), "%s:%u", h.host,
		    h.port);
		snprintf(err, sizeof(err), "the Host header names port %u, the "
		    "client dialled port %u", h.port, d->tp_port);
		c->g->num->ctr.bad_request++;
		conn_refuse(c, 400, "error", "host_mismatch", err);
		return;
	}
	d->path = req->target;
	c->tunnel = 0;
	c->named_by = NAMED_HOST;
	decide_now(c);
}

void
conn_transparent_read(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	size_t		 len = evbuffer_get_length(in);
	const uint8_t	*p;

	if (len == 0)
		return;
	if ((p = evbuffer_pullup(in, 1)) == NULL) {
		out_of_memory(c);
		return;
	}
	if (c->d->tp == TP_TLS || (c->d->tp == TP_PEEK && p[0] == 0x16)) {
		c->d->tp = TP_TLS;
		peek_tls(c, in, len);
	} else
		peek_http(c, in, len);
}

const char *
conn_named_str(uint8_t named)
{
	switch (named) {
	case NAMED_SNI:		return "sni";
	case NAMED_HOST:	return "host";
	case NAMED_ADDR:	return "address";
	}
	return NULL;
}

/*
 * Refuse a TLS stream the way a TLS server would: one fatal alert, before
 * any ServerHello (so in the record version any client accepts there).
 * decision is conn_reply's header value: a deny is access_denied, an
 * error (DNS, connect, timeout) internal_error.
 */
void
conn_transparent_alert(struct gate_conn *c, const char *decision)
{
	uint8_t	 alert[7] = { 0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0 };

	alert[6] = strncmp(decision, "deny", 4) == 0 ? ALERT_ACCESS_DENIED :
	    ALERT_INTERNAL_ERROR;
	if (evbuffer_add(bufferevent_get_output(c->cbev), alert,
	    sizeof(alert)) == -1)
		log_warnx("conn %llu: cannot queue the TLS alert",
		    (unsigned long long)c->id);
}
