/*
 * SOCKS5 on the gate's listener (RFC 1928, RFC 1929), for clients that
 * speak SOCKS rather than HTTP CONNECT: ALL_PROXY=socks5h://, ssh's
 * ProxyCommand through nc -X 5, database drivers.  A connection whose
 * first byte is 5 (no HTTP request line starts so) is SOCKS5 from there:
 *
 *	greeting	the methods the client offers: 0x02 (user and
 *			password) is required when the gate has credentials
 *			(--token-file, --token-fd, --users), 0x00 (none)
 *			is taken otherwise; none acceptable: 0xff, closed
 *	user/password	RFC 1929: the session credential, checked as a
 *			Proxy-Authorization "Basic user:password" is
 *			(conn_auth): a wrong one gets status 1 and the
 *			close, and a 407 audit line
 *	request		CONNECT only (BIND, UDP ASSOCIATE: reply 7); the
 *			target is a name, decided exactly as CONNECT
 *			NAME:PORT (policy, resolve, classify, pin, dial,
 *			the TLS server name check), or an IPv4 or IPv6
 *			address, decided by the cidr rules
 *	reply		0 once the upstream is connected (the address
 *			0.0.0.0:0: nothing of the gate's side is told),
 *			then the tunnel; a refusal's reply says which kind
 *			(2 not allowed by the ruleset, 4 unreachable or not
 *			resolved, 6 timed out, 1 anything else) and closes.
 *
 * Every step is bounded by the protocol (socksmsg.h) and the whole
 * handshake by --header-timeout, counted from the accept.  The audit
 * lines are a CONNECT's, with "socks":true.  --no-socks turns it off: a
 * first byte 5 is then an HTTP parse error, as before.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <openssl/evp.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/socksmsg.h"
#include "gate/conn/conn-int.h"

/* A user:password as a Proxy-Authorization value: "Basic " + base64. */
#define SOCKS_AUTH_MAX	(6 + 4 * ((2 * 255 + 1 + 2) / 3) + 1)

static void
out_of_memory(struct gate_conn *c)
{
	conn_close_as(c, "out of memory", END_FAULT);
	conn_free(c);
}

static int
send_bytes(struct gate_conn *c, const uint8_t *b, size_t n)
{
	if (evbuffer_add(bufferevent_get_output(c->cbev), b, n) == -1) {
		out_of_memory(c);
		return -1;
	}
	return 0;
}

/* A malformed message: closed, one audit line (no reply can be trusted). */
static void
malformed(struct gate_conn *c, const char *what)
{
	c->d->socks = SOCKS_ST_BAD;
	c->g->num->ctr.bad_request++;
	conn_refuse(c, 400, "error", "bad_request", what);
}

static void
greeting(struct gate_conn *c, const uint8_t *p, size_t len)
{
	struct gate	*g = c->g;
	uint8_t		 ans[2] = { SOCKS_VERSION, SOCKS_M_NOACCEPT };
	int		 none, userpass, n, need_auth;

	if ((n = gate_socks_greeting(p, len, &none, &userpass)) == 0)
		return;
	if (n == -1) {
		malformed(c, "a malformed SOCKS5 greeting");
		return;
	}
	evbuffer_drain(bufferevent_get_input(c->cbev), (size_t)n);
	need_auth = g->auth != NULL || g->users != NULL;
	if (userpass && (need_auth || !none))
		ans[1] = SOCKS_M_USERPASS;
	else if (none && !need_auth)
		ans[1] = SOCKS_M_NONE;
	else {
		/* the reply (0xff) comes from conn_socks_reply */
		g->num->ctr.auth_failed++;
		conn_refuse(c, 407, "deny", "auth_required", "no credentials: "
		    "the SOCKS5 client offers no user and password (method 2)");
		return;
	}
	if (send_bytes(c, ans, sizeof(ans)) == -1)
		return;
	c->d->socks = ans[1] == SOCKS_M_NONE ? SOCKS_ST_REQUEST :
	    SOCKS_ST_AUTH;
	if (ans[1] == SOCKS_M_NONE && conn_auth(c, NULL, 0) == -1)
		return;
	conn_socks_read(c);	/* what followed the greeting */
}

/* RFC 1929: user and password, checked as Basic credentials. */
static void
userpass(struct gate_conn *c, const uint8_t *p, size_t len)
{
	const uint8_t	*user, *pass;
	size_t		 ulen, plen;
	unsigned char	 raw[2 * 255 + 1];
	char		 value[SOCKS_AUTH_MAX];
	uint8_t		 ok[2] = { SOCKS_AUTH_VERSION, 0 };
	int		 n, rc;

	if ((n = gate_socks_userpass(p, len, &user, &ulen, &pass, &plen)) == 0)
		return;
	if (n == -1) {
		malformed(c, "a malformed SOCKS5 user/password message");
		return;
	}
	memcpy(raw, user, ulen);
	raw[ulen] = ':';
	memcpy(raw + ulen + 1, pass, plen);
	memcpy(value, "Basic ", 6);
	EVP_EncodeBlock((unsigned char *)value + 6, raw,
	    (int)(ulen + 1 + plen));
	evbuffer_drain(bufferevent_get_input(c->cbev), (size_t)n);
	rc = conn_auth(c, value, strlen(value));
	explicit_bzero(raw, sizeof(raw));
	explicit_bzero(value, sizeof(value));
	if (rc == -1)
		return;		/* refused: status 1 (conn_socks_reply) */
	if (send_bytes(c, ok, sizeof(ok)) == -1)
		return;
	c->d->socks = SOCKS_ST_REQUEST;
	conn_socks_read(c);
}

/*
 * The request's target as the policy library parses every target: a name
 * with the request's port (a name holds no ':', so no port of its own),
 * or an address, of type 1 or 4 or an IPv6 literal given as a name.
 */
static int
target(struct gate_conn *c, const struct gate_socks_req *r, char *err,
    size_t errlen)
{
	struct policy_addr	 a;
	char			 text[INET6_ADDRSTRLEN];
	char			 b[INET6_ADDRSTRLEN + 2];

	if (r->atyp == SOCKS_ATYP_NAME && strpbrk(r->name, ":[]") == NULL)
		return policy_parse_target(r->name, r->namelen, r->port,
		    &c->d->tgt, err, errlen);
	memset(&a, 0, sizeof(a));
	if (r->atyp == SOCKS_ATYP_NAME) {
		if (policy_parse_addr(r->name, r->namelen, &a) == -1 ||
		    a.family != AF_INET6) {
			snprintf(err, errlen, "not a host name or an address");
			return -1;
		}
	} else {
		a.family = r->atyp == SOCKS_ATYP_V4 ? AF_INET : AF_INET6;
		memcpy(a.bytes, r->addr, a.family == AF_INET ? 4 : 16);
	}
	policy_addr_str(&a, text, sizeof(text));
	snprintf(b, sizeof(b), a.family == AF_INET6 ? "[%s]" : "%s", text);
	return policy_parse_target(b, strlen(b), r->port, &c->d->tgt, err,
	    errlen);
}

static void
request(struct gate_conn *c, const uint8_t *p, size_t len)
{
	struct gate_socks_req	 r;
	char			 err[128];
	int			 n, rep;

	if ((n = gate_socks_request(p, len, &r, &rep)) == 0)
		return;
	snprintf(c->d->method, sizeof(c->d->method), "CONNECT");
	c->tunnel = 1;
	if (n == -1) {
		if (rep == 0) {
			malformed(c, "a SOCKS request of another version");
			return;
		}
		c->d->socks_rep = (uint8_t)rep;
		c->g->num->ctr.bad_request++;
		conn_refuse(c, 400, "error", rep == SOCKS_R_ATYP ?
		    "bad_target" : "bad_request", rep == SOCKS_R_CMD ?
		    "SOCKS5: only CONNECT is served" : rep == SOCKS_R_ATYP ?
		    "SOCKS5: an address type other than IPv4, a name or IPv6" :
		    "a malformed SOCKS5 request");
		return;
	}
	evbuffer_drain(bufferevent_get_input(c->cbev), (size_t)n);
	c->d->socks = SOCKS_ST_DECIDING;
	if (target(c, &r, err, sizeof(err)) == -1) {
		memset(&c->d->tgt, 0, sizeof(c->d->tgt));
		c->d->tgt.port = r.port;
		c->g->num->ctr.bad_request++;
		conn_refuse(c, 400, "error", "bad_target", err);
		return;
	}
	evtimer_del(c->timer);
	bufferevent_disable(c->cbev, EV_READ);
	conn_decide(c);
}

int
conn_socks_read(struct gate_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->cbev);
	size_t		 len = evbuffer_get_length(in);
	const uint8_t	*p;

	if (c->d->socks == SOCKS_ST_NONE) {
		if (!c->g->cfg.socks || len == 0 ||
		    (p = evbuffer_pullup(in, 1)) == NULL ||
		    p[0] != SOCKS_VERSION)
			return 0;
		c->socks = 1;
		c->d->socks = SOCKS_ST_GREET;
		snprintf(c->d->method, sizeof(c->d->method), "SOCKS5");
	}
	if (len == 0)
		return 1;
	/* no message is longer than RFC 1929's, two 255-byte strings */
	if (len > SOCKS_MSG_MAX)
		len = SOCKS_MSG_MAX;
	if ((p = evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		out_of_memory(c);
		return 1;
	}
	switch (c->d->socks) {
	case SOCKS_ST_GREET:
		greeting(c, p, len);
		break;
	case SOCKS_ST_AUTH:
		userpass(c, p, len);
		break;
	case SOCKS_ST_REQUEST:
		request(c, p, len);
		break;
	}
	return 1;
}

/*
 * The SOCKS answer to a refusal, by the step it came at: the greeting's
 * "no acceptable method", RFC 1929's failure, or a reply to the request
 * whose code says what HTTP would have said (decision is the
 * X-Aisb-Decision value: "deny; reason=..." or "error; reason=...").
 * A malformed stream gets nothing.
 */
void
conn_socks_reply(struct gate_conn *c, int status, const char *decision)
{
	uint8_t	 r[10] = { SOCKS_VERSION, SOCKS_R_FAIL, 0,
		    SOCKS_ATYP_V4 };
	uint8_t	 code;

	switch (c->d->socks) {
	case SOCKS_ST_GREET:
	case SOCKS_ST_AUTH:
		if (status != 407)	/* a timeout: nothing that step says */
			return;
		if (c->d->socks == SOCKS_ST_AUTH) {
			r[0] = SOCKS_AUTH_VERSION;
			r[1] = 1;
		} else
			r[1] = SOCKS_M_NOACCEPT;
		(void)evbuffer_add(bufferevent_get_output(c->cbev), r, 2);
		return;
	case SOCKS_ST_REQUEST:
	case SOCKS_ST_DECIDING:
		break;
	default:
		return;
	}
	if (c->d->socks_rep != 0)
		code = c->d->socks_rep;
	else if (strncmp(decision, "deny", 4) == 0 || status == 403)
		code = SOCKS_R_RULESET;
	else if (strstr(decision, "reason=connect_timeout") != NULL)
		code = SOCKS_R_TTL;
	else if (strstr(decision, "reason=dns_failed") != NULL ||
	    strstr(decision, "reason=connect_failed") != NULL)
		code = SOCKS_R_HOSTUNREACH;
	else
		code = SOCKS_R_FAIL;
	r[1] = code;
	if (evbuffer_add(bufferevent_get_output(c->cbev), r, sizeof(r)) == -1)
		log_warnx("conn %llu: cannot queue the SOCKS5 reply",
		    (unsigned long long)c->id);
}

/* The reply that opens the tunnel: succeeded, bound to 0.0.0.0:0. */
const uint8_t	 conn_socks_ok[10] = { SOCKS_VERSION, SOCKS_R_OK, 0,
		    SOCKS_ATYP_V4 };
