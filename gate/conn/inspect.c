/*
 * Inspected hosts: a connection allowed by a rule with inspect: true is
 * not relayed blind.  The gate terminates TLS on both legs and decides
 * each HTTP request inside (inspect_http.c).  In order:
 *
 *   1. the upstream is connected (decide.c, as for any CONNECT) and the
 *      gate's TLS handshake with it runs first: its certificate must
 *      verify against the system's trust store (and --upstream-ca) for
 *      the name, or the client gets a 502 saying why (a TLS alert for
 *      AISB-TRANSPARENT), never a tunnel around the check;
 *   2. the connection is allowed (its decision line), the 200 is sent;
 *   3. the client's ClientHello is read and its server name checked as
 *      for any tunnel (conn_check_sni; a client that is not speaking TLS
 *      is refused);
 *   4. the gate's handshake with the client, with a leaf certificate
 *      minted for the name by the gate's CA (mint.c), ALPN http/1.1 only;
 *      a client that refuses the certificate (pinning, or the CA not
 *      trusted) is one audit line, "client refused the ... CA", and
 *      the close;
 *   5. HTTP/1.1 both ways (inspect_http.c).
 *
 * Both legs are OpenSSL filters over the connection's socket
 * bufferevents: the socket is read and written in large pieces (64 KiB a
 * turn, many TLS records at once) and OpenSSL works on memory; the
 * client's ClientHello, read for the server name check, is already in its
 * socket bufferevent's input, where the handshake finds it.  With
 * --record, the bytes entering and leaving the client's socket
 * bufferevent are the capture's (its TLS records, exactly), with that
 * leg's keys (a keylog callback, set only when recording) as Decryption
 * Secrets Blocks: the capture decrypts to what the client sent and saw,
 * placeholders and all.  The upstream leg, which carries the secrets, is
 * neither recorded nor logged.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/tls.h"
#include "gate/mint.h"
#include "gate/conn/inspect-int.h"

static const unsigned char	 alpn_http11[] = "\x08http/1.1";
static int			 conn_ex = -1;	/* SSL ex_data: the gate_conn */

/* --- the gate's inspection ------------------------------------------------ */

struct gate_inspect *
conn_inspection(const struct gate_conn *c)
{
	return c->g->insp;
}

/* Whose an upstream leg's TLS is, for its callbacks (NULL: kept). */
void
conn_inspect_owner(struct bufferevent *f, struct gate_conn *c)
{
	(void)SSL_set_ex_data(bufferevent_openssl_get_ssl(f), conn_ex, c);
}

/* The one protocol the gate reads: http/1.1, if the client offers it. */
static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char	*sel;

	if (SSL_select_next_proto(&sel, outlen, alpn_http11,
	    sizeof(alpn_http11) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;	/* no ALPN: HTTP/1.1 */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* --record: the client leg's keys, as NSS keylog lines, into the capture. */
static void
keylog(const SSL *ssl, const char *line)
{
	struct gate_conn	*c = SSL_get_ex_data(ssl, conn_ex);

	if (c != NULL && c->rec != NULL)
		conn_rec_keylog(c, line);
}

static SSL_CTX *
server_ctx(const struct gate *g)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		return NULL;
	(void)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* a close without close_notify is an end, not an error (see below) */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
	    SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* an idle connection holds no record buffers */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	/* one ticket, with the first answer (conn_inspect_ticket) */
	(void)SSL_CTX_set_num_tickets(ctx, 0);
	/* the capture is opened later (proc.c): its path is known now */
	if (g->cfg.record_path != NULL)
		SSL_CTX_set_keylog_callback(ctx, keylog);
	return ctx;
}

/*
 * Upstream sessions, resumed: a new connection to a host:port the gate
 * verified before offers the session (or TLS 1.3 ticket) it got then, and
 * a resumed handshake sends no certificate: no chain to parse and verify,
 * no signature to check, which is most of what the upstream leg costs.
 * A session is only ever stored from a handshake that verified the name
 * (SSL_VERIFY_PEER fails every other), and only offered to the same
 * host:port, the name the server name and the check were made for.
 */
static struct insp_session *
session_slot(struct gate_inspect *in, const char *hostport)
{
	uint32_t	 h = 2166136261u;
	const char	*p;

	for (p = hostport; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return &in->sessions[h % INSP_SESSIONS];
}

static int
session_new(SSL *ssl, SSL_SESSION *sess)
{
	struct gate_conn	*c = SSL_get_ex_data(ssl, conn_ex);
	struct insp_session	*slot;

	if (c == NULL || c->d == NULL || c->g->insp == NULL)
		return 0;
	slot = session_slot(c->g->insp, c->d->hostport);
	SSL_SESSION_free(slot->sess);
	slot->sess = sess;		/* the reference is the slot's */
	snprintf(slot->hostport, sizeof(slot->hostport), "%s",
	    c->d->hostport);
	return 1;
}

static void
session_offer(struct gate_inspect *in, SSL *ssl, const char *hostport)
{
	struct insp_session	*slot = session_slot(in, hostport);

	if (slot->sess != NULL && strcmp(slot->hostport, hostport) == 0 &&
	    SSL_SESSION_is_resumable(slot->sess))
		(void)SSL_set_session(ssl, slot->sess);
}

/*
 * The system's trust store: its hashed folder (SSL_CERT_DIR, else
 * OpenSSL's: /etc/ssl/certs), from which a CA is read when a chain needs
 * it; only without one, its bundle file, read whole.  Reading Debian's
 * bundle at start costs some 80 ms of the gate's start-up (144
 * certificates decoded), paid by every session that inspects.
 */
static int
system_store(SSL_CTX *ctx)
{
	const char	*dir = getenv(X509_get_default_cert_dir_env());
	struct stat	 st;

	if (dir == NULL)
		dir = X509_get_default_cert_dir();
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return SSL_CTX_set_default_verify_dir(ctx) == 1 ? 0 : -1;
	return SSL_CTX_set_default_verify_file(ctx) == 1 ? 0 : -1;
}

static SSL_CTX *
upstream_ctx(const struct gate *g, char *err, size_t errlen)
{
	SSL_CTX		*ctx;
	const char	*ca = g->cfg.upstream_ca;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	(void)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/*
	 * Many servers close without a close_notify: OpenSSL 3 would make
	 * that an error.  An upstream's close ends what it frames by its
	 * close (a response without a length) as HTTP/1.1 over TLS always
	 * did; a framed response cut short is still an error (inspect_http.c).
	 */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* the upstream never picks h2: the gate reads HTTP/1.1 */
	(void)SSL_CTX_set_alpn_protos(ctx, alpn_http11,
	    sizeof(alpn_http11) - 1);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
	    SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, session_new);
	if (system_store(ctx) == -1)
		log_warnx("inspect: the system's trust store could not be "
		    "read; upstreams verify against --upstream-ca only");
	ERR_clear_error();
	if (ca != NULL && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		snprintf(err, errlen, "--upstream-ca %s: no certificate could "
		    "be read from it (PEM)", ca);
		ERR_clear_error();
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * The client leg's bytes into the capture: at once, or while its
 * handshake runs held back (x->held) until held_flush(), so that the
 * secrets blocks the handshake logs come before them.  Beyond
 * INSP_HELD_MAX held (no handshake is that long) they go at once.
 */
static void
rec_client(struct gate_conn *c, int dir, const void *p, size_t n)
{
	struct conn_insp	*x = c->insp;
	uint32_t		 len = (uint32_t)n;
	uint8_t			 d = (uint8_t)dir;

	if (x != NULL && x->phase == IP_CLIENT_TLS && (x->held != NULL ||
	    (x->held = evbuffer_new()) != NULL) &&
	    evbuffer_get_length(x->held) + n + 5 <= INSP_HELD_MAX &&
	    evbuffer_add(x->held, &d, 1) == 0 &&
	    evbuffer_add(x->held, &len, 4) == 0 &&
	    evbuffer_add(x->held, p, n) == 0)
		return;
	conn_rec_data(c, dir, p, n);
}

static void
held_flush(struct gate_conn *c)
{
	struct evbuffer	*h = c->insp->held;
	uint32_t	 len;
	uint8_t		 d;
	unsigned char	*p;

	c->insp->held = NULL;
	while (h != NULL && evbuffer_get_length(h) >= 5) {
		(void)evbuffer_remove(h, &d, 1);
		(void)evbuffer_remove(h, &len, 4);
		if ((p = evbuffer_pullup(h, len)) == NULL)
			break;
		if (c->rec != NULL)
			conn_rec_data(c, d, p, len);
		evbuffer_drain(h, len);
	}
	if (h != NULL)
		evbuffer_free(h);
}

/* The last n bytes of buf, from side dir, into the capture (rec_client). */
static void
rec_tail(struct gate_conn *c, int dir, struct evbuffer *buf, size_t n)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v[8];
	size_t			 have = evbuffer_get_length(buf), k;
	int			 nv, i;

	if (n == 0 || n > have ||
	    evbuffer_ptr_set(buf, &pos, have - n, EVBUFFER_PTR_SET) == -1)
		return;
	while (n > 0 && (nv = evbuffer_peek(buf, (ev_ssize_t)n, &pos, v,
	    8)) > 0) {
		for (i = 0; i < nv && i < 8 && n > 0; i++) {
			k = v[i].iov_len < n ? v[i].iov_len : n;
			rec_client(c, dir, v[i].iov_base, k);
			n -= k;
			if (evbuffer_ptr_set(buf, &pos, k, EVBUFFER_PTR_ADD) ==
			    -1)
				return;
		}
	}
}

/* --record: what enters and leaves the client's socket, as it does. */
static void
rec_in_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gate_conn	*c = arg;

	if (info->n_added > 0 && c->rec != NULL)
		rec_tail(c, 0, buf, info->n_added);
}

static void
rec_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gate_conn	*c = arg;

	if (info->n_added > 0 && c->rec != NULL)
		rec_tail(c, 1, buf, info->n_added);
}


static void
insp_free(struct gate_inspect *in)
{
	size_t	 i;

	if (in == NULL)
		return;
	conn_inspect_pool_free(in);
	for (i = 0; i < INSP_SESSIONS; i++)
		SSL_SESSION_free(in->sessions[i].sess);
	SSL_CTX_free(in->srv);
	SSL_CTX_free(in->up);
	gate_ca_free(in->ca);
	gate_secrets_free(in->secrets);
	free(in);
}

/* Whether a policy of the gate (-f's, or a user's) inspects a host. */
static int
policy_inspects(const struct policy *p)
{
	struct policy_rule_info	 info;
	size_t			 i;

	for (i = 0; p != NULL && i < policy_rule_count(p); i++) {
		policy_rule_info(policy_rule_at(p, i), &info);
		if (info.inspect)
			return 1;
	}
	return 0;
}

static int
wanted(const struct gate *g)
{
	size_t	 i;

	if (g->cfg.ca_key != NULL || g->cfg.ca_out != NULL ||
	    g->cfg.secrets_fd != -1 || policy_inspects(g->policy))
		return 1;
	for (i = 0; g->users != NULL && i < gate_users_count(g->users); i++)
		if (policy_inspects(gate_users_policy(g->users, i)))
			return 1;
	return 0;
}

/*
 * At start-up (before privileges are dropped: --ca-key may be root's
 * alone), and on a reload whose policies inspect when nothing was set up:
 * the CA, the TLS contexts, the secrets, --ca-out.  Nothing is made for a
 * gate that inspects nothing.  A gate holding a CA key or secrets is not
 * dumpable and leaves no core.  0, or -1 said on stderr (at start) or
 * logged.
 */
int
gate_inspect_init(struct gate *g)
{
	struct gate_inspect	*in;
	struct rlimit		 rl = { 0, 0 };
	char			 err[512];
	int			 loose = 0;

	if (g->insp != NULL || !wanted(g))
		return 0;
	if ((in = calloc(1, sizeof(*in))) == NULL) {
		log_warnx("inspect: out of memory");
		return -1;
	}
	TAILQ_INIT(&in->pool);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    setrlimit(RLIMIT_CORE, &rl) == -1)
		log_warn("inspect: not dumpable, no core");
	if (conn_ex == -1 &&
	    (conn_ex = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL)) == -1) {
		snprintf(err, sizeof(err), "inspect: out of memory");
		goto fail;
	}
	if (g->cfg.ca_key != NULL)
		in->ca = gate_ca_load(g->cfg.ca_key, &loose, err, sizeof(err));
	else
		in->ca = gate_ca_new(err, sizeof(err));
	if (in->ca == NULL)
		goto fail;
	if (loose)
		log_warnx("--ca-key %s is open to its group: make it 0600 "
		    "(0640 to a group of --user)", g->cfg.ca_key);
	if ((in->srv = server_ctx(g)) == NULL) {
		snprintf(err, sizeof(err), "inspect: out of memory");
		goto fail;
	}
	if ((in->up = upstream_ctx(g, err, sizeof(err))) == NULL)
		goto fail;
	if (g->cfg.secrets_fd != -1) {
		in->secrets = gate_secrets_read(g->cfg.secrets_fd, err,
		    sizeof(err));
		g->cfg.secrets_fd = -1;		/* read once: closed */
		if (in->secrets == NULL)
			goto fail;
	}
	if (g->cfg.ca_out != NULL && !g->cfg.check_only &&
	    gate_ca_write(in->ca, g->cfg.ca_out, err, sizeof(err)) == -1)
		goto fail;
	g->insp = in;
	log_info("inspect: %s CA, %zu secret%s", g->cfg.ca_key != NULL ?
	    "the --ca-key" : "a session", gate_secrets_count(in->secrets),
	    gate_secrets_count(in->secrets) == 1 ? "" : "s");
	return 0;
 fail:
	log_warnx("%s", err);
	insp_free(in);
	return -1;
}

void
gate_inspect_free(struct gate *g)
{
	insp_free(g->insp);
	g->insp = NULL;
}

char *
gate_inspect_ca_pem(struct gate *g, size_t *lenp)
{
	return g->insp != NULL ? gate_ca_pem(g->insp->ca, lenp) : NULL;
}

/*
 * libevent 2.1 reads a socket 4 KiB a call: after each read that full,
 * the rest of what the socket holds, into the same input (conn_read_more,
 * as the buffered relay does), where the filter then decrypts every
 * record.  Registered first, it runs after the capture's callback, so
 * the capture keeps the bytes in order.
 */
static void
more_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	if (info->n_added == LIBEVENT_READ)
		(void)conn_read_more(arg, buf);
}

/*
 * An OpenSSL filter over a socket bufferevent, which reads and writes
 * RELAY_IO a turn: many records a system call.  The filter's callbacks
 * are set by the caller (a handshake that failed at once is reported
 * through them, on the next turn of the loop: the filter is made with
 * nothing to read yet).  NULL when out of memory; the SSL and the
 * socket's bufferevent are then freed.
 */
static struct bufferevent *
filter_new(struct gate_conn *c, struct bufferevent *under, SSL *ssl,
    enum bufferevent_ssl_state state)
{
	struct bufferevent	*f;

	bufferevent_set_max_single_read(under, RELAY_IO);
	bufferevent_set_max_single_write(under, RELAY_IO);
	/* OpenSSL encrypts into it up to this much, then the filter's output
	 * fills: the backpressure of inspect_http.c's move() */
	bufferevent_setwatermark(under, EV_WRITE, 0, RELAY_MAX);
	if (evbuffer_add_cb(bufferevent_get_input(under), more_cb, under) ==
	    NULL) {
		SSL_free(ssl);
		bufferevent_free(under);
		return NULL;
	}
	if ((f = bufferevent_openssl_filter_new(c->g->base, under, ssl, state,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(ssl);
		bufferevent_free(under);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(f, 1);
	return f;
}

/* --- a connection: the upstream's TLS ------------------------------------- */

static void	client_hello(struct gate_conn *);
static void	client_accept(struct gate_conn *);
static void	hello_write_cb(struct bufferevent *, void *);

void
conn_inspect_ready(struct gate_conn *c)
{
	const char		*ok;
	size_t			 oklen;

	evtimer_del(c->timer);
	if (c->insp->reused)
		conn_inspect_kept_watch(c);
	else
		bufferevent_setcb(c->ubev, NULL, NULL, NULL, c);
	conn_allowed(c);
	c->g->num->ctr.inspected++;
	if (c->transparent) {
		/* its ClientHello waits in the input: no 200, no proxy spoken */
		client_accept(c);
		return;
	}
	c->insp->phase = IP_HELLO;
	ok = conn_tunnel_ok(c, &oklen);	/* a CONNECT's 200, or SOCKS5's */
	if (evbuffer_add(bufferevent_get_output(c->cbev), ok, oklen) == -1) {
		conn_close_as(c, "out of memory", END_FAULT);
		conn_free(c);
		return;
	}
	client_hello(c);
}

static void
up_tls_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;
	char			 detail[DETAIL_MAX];

	if ((what & BEV_EVENT_CONNECTED) == 0) {
		conn_inspect_up_error(bev, what, detail, sizeof(detail));
		log_debug("conn %llu: %s: %s", (unsigned long long)c->id,
		    c->d->hostport, detail);
		conn_up_drop(c);
		c->g->num->ctr.connect_failed++;
		conn_refuse(c, 502, "error", "upstream_tls", detail);
		return;
	}
	conn_inspect_ready(c);
}

struct conn_insp *
conn_inspect_state(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;

	if (x == NULL && (x = c->insp = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->rule = c->d->irule;
	x->phase = IP_UP_TLS;
	return x;
}

struct bufferevent *
conn_inspect_up_new(struct gate_conn *c, struct bufferevent *under)
{
	struct gate_inspect	*in = conn_inspection(c);
	SSL			*ssl;

	if ((ssl = SSL_new(in->up)) == NULL)
		goto fail;
	if (SSL_set_tlsext_host_name(ssl, c->d->tgt.host) != 1 ||
	    SSL_set1_host(ssl, c->d->tgt.host) != 1 ||
	    SSL_set_ex_data(ssl, conn_ex, c) != 1) {
		SSL_free(ssl);
		goto fail;
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	session_offer(in, ssl, c->d->hostport);
	/* the filter owns the SSL and the socket's bufferevent from here */
	return filter_new(c, under, ssl, BUFFEREVENT_SSL_CONNECTING);
 fail:
	bufferevent_free(under);
	return NULL;
}

void
conn_inspect_connected(struct gate_conn *c)
{
	struct gate_inspect	*in = conn_inspection(c);
	struct conn_insp	*x;
	struct bufferevent	*under;

	if (in == NULL) {
		/* a reload brought the rule and inspection could not start */
		conn_up_drop(c);
		conn_refuse(c, 502, "error", "upstream_tls", "this gate "
		    "cannot inspect: it has no CA (see its log)");
		return;
	}
	if ((x = conn_inspect_state(c)) == NULL)
		goto oom;
	x->addr = c->d->addrs[c->d->next > 0 ? c->d->next - 1 : 0];
	event_free(c->ev[1]);
	c->ev[1] = NULL;
	c->rd[1] = c->wr[1] = c->hup[1] = 0;
	if ((under = bufferevent_socket_new(c->g->base, c->fd[1],
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto oom;
	c->fd[1] = -1;
	if ((c->ubev = conn_inspect_up_new(c, under)) == NULL)
		goto oom;
	bufferevent_setcb(c->ubev, NULL, NULL, up_tls_cb, c);
	(void)bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	conn_arm(c, c->g->cfg.connect_timeout);
	return;
 oom:
	conn_close_as(c, "out of memory", END_FAULT);
	conn_free(c);
}

/* --- a connection: the client's TLS ------------------------------------- */

/* The certificate-related alerts a client sends when it does not trust. */
static int
refused_certificate(unsigned long e)
{
	switch (ERR_GET_REASON(e)) {
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
	case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
		return 1;
	}
	return 0;
}

static void
client_tls_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;
	unsigned long		 e = bufferevent_get_openssl_error(bev);
	const char		*reason, *decision = "deny", *ca;
	char			 detail[DETAIL_MAX];

	held_flush(c);
	if (what & BEV_EVENT_CONNECTED) {
		while (bufferevent_get_openssl_error(bev) != 0)
			;
		conn_inspect_http(c);
		return;
	}
	/*
	 * A client that finished its handshake and closed at once (its
	 * Finished and its close read together, before the filter said
	 * connected) trusted the certificate: it asked for nothing, which
	 * is no refusal.
	 */
	if ((what & BEV_EVENT_EOF) && e == 0 &&
	    SSL_is_init_finished(bufferevent_openssl_get_ssl(bev))) {
		conn_close_as(c, "eof", END_DONE);
		conn_free(c);
		return;
	}
	/*
	 * The client had the gate's certificate by now (the gate answers
	 * the ClientHello at once): an alert about it, or a close, is a
	 * client that does not trust the gate's CA or pins the host.
	 */
	reason = "client_refused_ca";
	ca = c->g->cfg.ca_key != NULL ? "--ca-key" : "session";
	if ((e != 0 && refused_certificate(e)) ||
	    (e == 0 && (what & BEV_EVENT_EOF)))
		snprintf(detail, sizeof(detail), "client refused the %s CA: "
		    "not given it, or pinning? (%s)", ca, e != 0 ?
		    ERR_reason_error_string(e) : "it closed the TLS handshake");
	else {
		reason = "client_tls";
		decision = "error";
		snprintf(detail, sizeof(detail), "TLS with the client failed: "
		    "%s", e != 0 && ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "connection error");
	}
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	ERR_clear_error();
	if (decision[0] == 'd')
		c->g->num->ctr.denied++;
	conn_audit(c, "decision", decision, 0, reason, detail, NULL);
	log_info("conn %llu: %s %s %s: %s", (unsigned long long)c->id,
	    c->d->peer, c->d->method, c->d->hostport, detail);
	conn_close_as(c, reason, END_FAULT);
	conn_free(c);
}

static int
use_leaf(SSL *ssl, struct gate_inspect *in, const char *name)
{
	STACK_OF(X509)	*chain = gate_ca_chain(in->ca);
	X509		*leaf;
	int		 i, ok;

	if ((leaf = gate_ca_leaf(in->ca, name)) == NULL)
		return -1;
	/*
	 * A root (the session CA, or an operator's self-signed one) is the
	 * client's already, as its trust anchor: sending it too costs every
	 * handshake a certificate to write, and the client one to decode.
	 */
	ok = SSL_use_certificate(ssl, leaf) == 1 &&
	    SSL_use_PrivateKey(ssl, gate_ca_leaf_key(in->ca)) == 1 &&
	    (gate_ca_is_root(in->ca) ||
	    SSL_add1_chain_cert(ssl, gate_ca_cert(in->ca)) == 1);
	X509_free(leaf);
	for (i = 0; ok && chain != NULL && i < sk_X509_num(chain); i++)
		ok = SSL_add1_chain_cert(ssl, sk_X509_value(chain, i)) == 1;
	return ok ? 0 : -1;
}

/*
 * The client's TLS, over its socket bufferevent: what the client sent so
 * far (its ClientHello) waits in that bufferevent's input, set aside
 * while the filter is made (so that the handshake does not run before
 * its callbacks are set), then put back and read.
 */
static void
client_accept(struct gate_conn *c)
{
	struct gate_inspect	*in = conn_inspection(c);
	struct bufferevent	*under = c->cbev;
	struct evbuffer		*input = bufferevent_get_input(under);
	struct evbuffer		*hello;
	SSL			*ssl;

	if ((hello = evbuffer_new()) == NULL ||
	    evbuffer_add_buffer(hello, input) == -1 ||
	    (ssl = SSL_new(in->srv)) == NULL)
		goto oom;
	if (use_leaf(ssl, in, c->d->tgt.host) == -1 ||
	    SSL_set_ex_data(ssl, conn_ex, c) != 1) {
		SSL_free(ssl);
		goto oom;
	}
	c->insp->phase = IP_CLIENT_TLS;
	bufferevent_setwatermark(under, EV_READ, 0, 0);
	c->cbev = NULL;		/* the filter's now, and freed with it */
	if ((c->cbev = filter_new(c, under, ssl,
	    BUFFEREVENT_SSL_ACCEPTING)) == NULL)
		goto oom;
	bufferevent_setcb(c->cbev, NULL, NULL, client_tls_cb, c);
	(void)bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	/* its end is the socket's to add to (frozen): at the front, then */
	if (evbuffer_prepend_buffer(input, hello) == -1)
		goto oom;
	evbuffer_free(hello);
	hello = NULL;
	/* --record: the ClientHello, then whatever enters and leaves */
	if (c->rec != NULL) {
		rec_tail(c, 0, input, evbuffer_get_length(input));
		if (evbuffer_add_cb(input, rec_in_cb, c) == NULL ||
		    evbuffer_add_cb(bufferevent_get_output(under), rec_out_cb,
		    c) == NULL)
			goto oom;
	}
	/* the handshake reads what was put back */
	bufferevent_trigger(under, EV_READ, BEV_TRIG_IGNORE_WATERMARKS);
	return;
 oom:
	if (hello != NULL)
		evbuffer_free(hello);
	conn_close_as(c, "out of memory", END_FAULT);
	conn_free(c);
}

/*
 * The tunnel's first bytes, before any TLS: the ClientHello, whose
 * server name must be the host's (conn_check_sni).  Anything but TLS is
 * refused: an inspected host is reached through TLS the gate opens.
 */
static void
hello_read_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;
	struct evbuffer		*input = bufferevent_get_input(bev);
	unsigned char		 first = 0;

	if (c->insp->phase != IP_HELLO)
		return;
	switch (conn_check_sni(c, input)) {
	case 1:
		return;		/* more of it to come */
	case -1:
		return;		/* refused and closed */
	}
	(void)evbuffer_copyout(input, &first, 1);
	if (first != 0x16) {
		c->g->num->ctr.denied++;
		conn_audit(c, "decision", "deny", 0, "inspect_not_tls",
		    "an inspected host is reached through TLS only", NULL);
		conn_close_as(c, "inspect_not_tls", END_FAULT);
		/* the 200 it was sent goes out, then the close */
		c->insp->closing = 1;
		bufferevent_disable(bev, EV_READ);
		hello_write_cb(bev, c);
		return;
	}
	/* the 200, still queued or not, goes before the TLS records */
	client_accept(c);
}

static void
hello_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;

	if (c->insp->closing &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(c);
}

static void
hello_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	conn_close_as(c, what & BEV_EVENT_EOF ? "client closed" :
	    "client error", what & BEV_EVENT_EOF ? END_DONE : END_CLIENT_ERROR);
	conn_free(c);
}

static void
client_hello(struct gate_conn *c)
{
	/* the head and its parse are not needed any more */
	free(c->d->head);
	c->d->head = NULL;
	free(c->d->req);
	c->d->req = NULL;
	bufferevent_setcb(c->cbev, hello_read_cb, hello_write_cb,
	    hello_event_cb, c);
	/* a ClientHello is one record at most */
	bufferevent_setwatermark(c->cbev, EV_READ, 0, 5 + GATE_TLS_MAX_RECORD);
	(void)bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		hello_read_cb(c->cbev, c);
}

static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	conn_free(arg);
}

/* The client's socket bufferevent drained: the close may come now. */
static void
drained_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gate_conn	*c = arg;

	if (evbuffer_get_length(buf) == 0 && c->insp->done != NULL)
		event_active(c->insp->done, EV_TIMEOUT, 1);
}

int
conn_inspect_flushed(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct bufferevent	*under = bufferevent_get_underlying(c->cbev);

	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0 &&
	    (under == NULL ||
	    evbuffer_get_length(bufferevent_get_output(under)) == 0))
		return 1;
	/* the idle timer still bounds the wait for a client that reads not */
	if (x->done == NULL && under != NULL &&
	    ((x->done = event_new(c->g->base, -1, 0, done_cb, c)) == NULL ||
	    evbuffer_add_cb(bufferevent_get_output(under), drained_cb,
	    c) == NULL))
		return 1;	/* no memory to wait with: close now */
	return 0;
}

/*
 * libevent tries a read on a filter whenever its input shrinks, into a
 * reservation of the filter's read size made before OpenSSL says it has
 * nothing: that space stays, empty, in the input (INSP_READ, a 16 KiB
 * chain a leg) for as long as the connection waits for its next
 * exchange.  So a leg that waits reads INSP_IDLE_READ at a time (a head
 * fits; conn_inspect_busy() once bytes come), and the reservation it
 * holds is given back: libevent frees the chains of an empty buffer that
 * a buffer is added to, and every chain of a buffer drained whole.  Only
 * when nothing is decrypted or waiting to be: the byte added is never
 * seen by a read callback.
 */
void
conn_inspect_idle(struct bufferevent *f)
{
	struct bufferevent	*under = bufferevent_get_underlying(f);
	struct evbuffer		*in = bufferevent_get_input(f), *one;
	SSL			*ssl = bufferevent_openssl_get_ssl(f);

	bufferevent_set_max_single_read(f, INSP_IDLE_READ);
	if (evbuffer_get_length(in) > 0 || ssl == NULL ||
	    SSL_pending(ssl) > 0 || under == NULL ||
	    evbuffer_get_length(bufferevent_get_input(under)) > 0 ||
	    (one = evbuffer_new()) == NULL)
		return;
	if (evbuffer_add(one, "", 1) == 0 && evbuffer_add_buffer(in, one) == 0)
		(void)evbuffer_drain(in, 1);
	evbuffer_free(one);
}

void
conn_inspect_busy(struct bufferevent *f)
{
	bufferevent_set_max_single_read(f, INSP_READ);
}

/*
 * A TLS 1.3 client's session ticket goes out with the first bytes of
 * the first answer, in the same write, not in a write of its own right
 * after the handshake: a system call and a wake-up of the client less a
 * connection, and a client that never got an answer has no use for it.
 * (TLS 1.2's ticket is part of its handshake.)
 */
void
conn_inspect_ticket(struct gate_conn *c)
{
	SSL	*ssl;

	if (c->insp->ticketed)
		return;
	c->insp->ticketed = 1;
	if ((ssl = bufferevent_openssl_get_ssl(c->cbev)) != NULL &&
	    SSL_version(ssl) == TLS1_3_VERSION)
		(void)SSL_new_session_ticket(ssl);
}

/*
 * A close_notify on a leg whose TLS stands and owes nothing more: written
 * by OpenSSL into the socket bufferevent's output, then to the socket at
 * once (best effort: the connection is closing).
 */
void
conn_inspect_notify(struct bufferevent *f)
{
	struct bufferevent	*under;
	SSL			*ssl;

	if (f == NULL || evbuffer_get_length(bufferevent_get_output(f)) > 0 ||
	    (ssl = bufferevent_openssl_get_ssl(f)) == NULL ||
	    (under = bufferevent_get_underlying(f)) == NULL)
		return;
	(void)SSL_shutdown(ssl);
	(void)evbuffer_write(bufferevent_get_output(under),
	    bufferevent_getfd(under));
}

/*
 * The connection's inspection ends (conn_free): a close_notify each way
 * when the TLS stands, then its state.  The sockets are the filters' to
 * close.
 */
void
conn_inspect_free(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	struct bufferevent	*under;

	if (x == NULL)
		return;
	conn_inspect_pool_put(c);	/* a clean upstream leg kept */
	buf_free(&x->replay);
	if (x->phase == IP_HTTP) {
		conn_inspect_notify(c->cbev);
		conn_inspect_notify(c->ubev);
		ERR_clear_error();
	}
	if (c->cbev != NULL && (under = bufferevent_get_underlying(c->cbev)) !=
	    NULL) {
		(void)evbuffer_remove_cb(bufferevent_get_input(under),
		    rec_in_cb, c);
		(void)evbuffer_remove_cb(bufferevent_get_output(under),
		    rec_out_cb, c);
		(void)evbuffer_remove_cb(bufferevent_get_output(under),
		    drained_cb, c);
	}
	if (x->done != NULL)
		event_free(x->done);
	free(x->req);
	free(x->resp);
	if (x->held != NULL)
		evbuffer_free(x->held);
	free(x);
	c->insp = NULL;
}
