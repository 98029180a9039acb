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
 *      trusted) is one audit line, "client refused the session CA", and
 *      the close;
 *   5. HTTP/1.1 both ways (inspect_http.c).
 *
 * The bytes the client sent before its TLS (its ClientHello, read for
 * the server name check) go to OpenSSL through a filter BIO in front of
 * the socket's, which also writes the client leg's TLS records into the
 * --record capture, with that leg's keys (a keylog callback, set only
 * when recording) as a Decryption Secrets Block: the capture decrypts to
 * what the client sent and saw, placeholders and all.  The upstream leg,
 * which carries the secrets, is neither recorded nor logged.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>

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
#include "gate.h"
#include "tls.h"
#include "inspect-int.h"

static const unsigned char	 alpn_http11[] = "\x08http/1.1";
static BIO_METHOD		*prefix_method;
static int			 conn_ex = -1;	/* SSL ex_data: the gate_conn */

/* --- the gate's inspection ------------------------------------------------ */

struct gate_inspect *
conn_inspection(const struct gate_conn *c)
{
	return c->g->insp;
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
	(void)SSL_CTX_set_num_tickets(ctx, 1);
	/* the capture is opened later (proc.c): its path is known now */
	if (g->cfg.record_path != NULL)
		SSL_CTX_set_keylog_callback(ctx, keylog);
	return ctx;
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
	if (SSL_CTX_set_default_verify_paths(ctx) != 1)
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

/*
 * The filter BIO in front of the client's socket: reads come first from
 * the bytes read before the handshake (the ClientHello), then from the
 * socket; with --record every byte read or written is the capture's.
 */
static int
prefix_read(BIO *b, char *out, int outl)
{
	struct gate_conn	*c = BIO_get_data(b);
	struct conn_insp	*x = c->insp;
	size_t			 left;
	int			 n;

	BIO_clear_retry_flags(b);
	if (outl <= 0)
		return 0;
	if (x != NULL && x->prefixoff < x->prefixlen) {
		left = x->prefixlen - x->prefixoff;
		n = left < (size_t)outl ? (int)left : outl;
		memcpy(out, x->prefix + x->prefixoff, (size_t)n);
		x->prefixoff += (size_t)n;
	} else {
		n = BIO_read(BIO_next(b), out, outl);
		BIO_copy_next_retry(b);
	}
	if (n > 0 && c->rec != NULL)
		rec_client(c, 0, out, (size_t)n);
	return n;
}

static int
prefix_write(BIO *b, const char *in, int inl)
{
	struct gate_conn	*c = BIO_get_data(b);
	int			 n;

	BIO_clear_retry_flags(b);
	n = BIO_write(BIO_next(b), in, inl);
	BIO_copy_next_retry(b);
	if (n > 0 && c->rec != NULL)
		rec_client(c, 1, in, (size_t)n);
	return n;
}

static long
prefix_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct gate_conn	*c = BIO_get_data(b);
	long			 pend = 0;

	if (cmd == BIO_CTRL_PENDING && c != NULL && c->insp != NULL)
		pend = (long)(c->insp->prefixlen - c->insp->prefixoff);
	return pend + BIO_ctrl(BIO_next(b), cmd, num, ptr);
}

static void
insp_free(struct gate_inspect *in)
{
	if (in == NULL)
		return;
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
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    setrlimit(RLIMIT_CORE, &rl) == -1)
		log_warn("inspect: not dumpable, no core");
	if (prefix_method == NULL &&
	    ((prefix_method = BIO_meth_new(BIO_get_new_index() |
	    BIO_TYPE_FILTER, "aisb client prefix")) == NULL ||
	    BIO_meth_set_read(prefix_method, prefix_read) != 1 ||
	    BIO_meth_set_write(prefix_method, prefix_write) != 1 ||
	    BIO_meth_set_ctrl(prefix_method, prefix_ctrl) != 1)) {
		snprintf(err, sizeof(err), "inspect: out of memory");
		goto fail;
	}
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
		log_warnx("--ca-key %s is readable by others than its owner: "
		    "make it 0600", g->cfg.ca_key);
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

/* --- a connection: the upstream's TLS ------------------------------------- */

/* Why the upstream's handshake failed, for the 502 and the audit line. */
static void
upstream_error(struct bufferevent *bev, short what, char *buf, size_t len)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	long		 vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long	 e = bufferevent_get_openssl_error(bev);

	if (vr != X509_V_OK)
		snprintf(buf, len, "the upstream's certificate failed "
		    "verification: %s", X509_verify_cert_error_string(vr));
	else if (e != 0)
		snprintf(buf, len, "TLS with the upstream failed: %s",
		    ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "unknown error");
	else if (what & BEV_EVENT_EOF)
		snprintf(buf, len, "the upstream closed the connection during "
		    "the TLS handshake");
	else
		snprintf(buf, len, "TLS with the upstream failed: %s",
		    errno != 0 ? strerror(errno) : "connection error");
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	ERR_clear_error();
}

static void	client_hello(struct gate_conn *);
static void	client_accept(struct gate_conn *);
static void	hello_write_cb(struct bufferevent *, void *);

static void
up_tls_cb(struct bufferevent *bev, short what, void *arg)
{
	static const char	 established[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n";
	struct gate_conn	*c = arg;
	char			 detail[DETAIL_MAX];

	if ((what & BEV_EVENT_CONNECTED) == 0) {
		upstream_error(bev, what, detail, sizeof(detail));
		log_debug("conn %llu: %s: %s", (unsigned long long)c->id,
		    c->d->hostport, detail);
		conn_up_drop(c);
		c->g->num->ctr.connect_failed++;
		conn_refuse(c, 502, "error", "upstream_tls", detail);
		return;
	}
	evtimer_del(c->timer);
	bufferevent_setcb(c->ubev, NULL, NULL, NULL, c);
	conn_allowed(c);
	c->g->num->ctr.inspected++;
	if (c->transparent) {
		/* its ClientHello waits in the input: no 200, no proxy spoken */
		client_accept(c);
		return;
	}
	c->insp->phase = IP_HELLO;
	if (evbuffer_add(bufferevent_get_output(c->cbev), established,
	    sizeof(established) - 1) == -1) {
		c->close_reason = "out of memory";
		conn_free(c);
		return;
	}
	client_hello(c);
}

void
conn_inspect_connected(struct gate_conn *c)
{
	struct gate_inspect	*in = conn_inspection(c);
	struct conn_insp	*x = c->insp;
	SSL			*ssl;

	if (in == NULL) {
		/* a reload brought the rule and inspection could not start */
		conn_up_drop(c);
		conn_refuse(c, 502, "error", "upstream_tls", "this gate "
		    "cannot inspect: it has no CA (see its log)");
		return;
	}
	if (x == NULL && (x = c->insp = calloc(1, sizeof(*x))) == NULL)
		goto oom;
	x->rule = c->d->irule;
	x->phase = IP_UP_TLS;
	event_free(c->ev[1]);
	c->ev[1] = NULL;
	c->rd[1] = c->wr[1] = c->hup[1] = 0;
	if ((ssl = SSL_new(in->up)) == NULL)
		goto oom;
	if (SSL_set_tlsext_host_name(ssl, c->d->tgt.host) != 1 ||
	    SSL_set1_host(ssl, c->d->tgt.host) != 1) {
		SSL_free(ssl);
		goto oom;
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	/*
	 * On failure libevent may have closed the socket and freed the SSL,
	 * or not: the descriptor is given up either way (a leak on an
	 * allocation failure, never a double close).
	 */
	c->ubev = bufferevent_openssl_socket_new(c->g->base, c->fd[1], ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	c->fd[1] = -1;
	if (c->ubev == NULL)
		goto oom;
	bufferevent_openssl_set_allow_dirty_shutdown(c->ubev, 1);
	bufferevent_setcb(c->ubev, NULL, NULL, up_tls_cb, c);
	(void)bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	conn_arm(c, c->g->cfg.connect_timeout);
	return;
 oom:
	c->close_reason = "out of memory";
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
	const char		*reason, *decision = "deny";
	char			 detail[DETAIL_MAX];

	held_flush(c);
	if (what & BEV_EVENT_CONNECTED) {
		while (bufferevent_get_openssl_error(bev) != 0)
			;
		free(c->insp->prefix);
		c->insp->prefix = NULL;
		c->insp->prefixlen = c->insp->prefixoff = 0;
		conn_inspect_http(c);
		return;
	}
	/*
	 * The client had the gate's certificate by now (the gate answers
	 * the ClientHello at once): an alert about it, or a close, is a
	 * client that does not trust the session CA or pins the host.
	 */
	reason = "client_refused_ca";
	if (e != 0 && refused_certificate(e))
		snprintf(detail, sizeof(detail), "client refused the session "
		    "CA: pinning? (%s)", ERR_reason_error_string(e));
	else if (e == 0 && (what & BEV_EVENT_EOF))
		snprintf(detail, sizeof(detail), "client refused the session "
		    "CA: pinning? (it closed the TLS handshake)");
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
	c->close_reason = reason;
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
	ok = SSL_use_certificate(ssl, leaf) == 1 &&
	    SSL_use_PrivateKey(ssl, gate_ca_leaf_key(in->ca)) == 1 &&
	    SSL_add1_chain_cert(ssl, gate_ca_cert(in->ca)) == 1;
	X509_free(leaf);
	for (i = 0; ok && chain != NULL && i < sk_X509_num(chain); i++)
		ok = SSL_add1_chain_cert(ssl, sk_X509_value(chain, i)) == 1;
	return ok ? 0 : -1;
}

/*
 * The client's TLS: what it sent so far becomes the prefix its handshake
 * reads first; its socket leaves the plain bufferevent for OpenSSL's.
 */
static void
client_accept(struct gate_conn *c)
{
	struct gate_inspect	*in = conn_inspection(c);
	struct conn_insp	*x = c->insp;
	struct evbuffer		*input = bufferevent_get_input(c->cbev);
	size_t			 n = evbuffer_get_length(input);
	SSL			*ssl;
	BIO			*b = NULL, *sock;
	int			 fd = bufferevent_getfd(c->cbev);

	if (n > 0 && ((x->prefix = malloc(n)) == NULL ||
	    evbuffer_remove(input, x->prefix, n) != (int)n))
		goto oom;
	x->prefixlen = n;
	x->prefixoff = 0;
	if ((ssl = SSL_new(in->srv)) == NULL)
		goto oom;
	if (use_leaf(ssl, in, c->d->tgt.host) == -1 ||
	    SSL_set_ex_data(ssl, conn_ex, c) != 1 ||
	    (b = BIO_new(prefix_method)) == NULL ||
	    (sock = BIO_new_socket(fd, BIO_NOCLOSE)) == NULL) {
		BIO_free(b);
		SSL_free(ssl);
		goto oom;
	}
	BIO_set_data(b, c);
	BIO_set_init(b, 1);
	/* one BIO both ways: SSL_set_bio takes its one reference */
	SSL_set_bio(ssl, BIO_push(b, sock), b);
	bufferevent_setfd(c->cbev, -1);
	bufferevent_free(c->cbev);
	x->phase = IP_CLIENT_TLS;
	/* on failure, as for the upstream: the descriptor is given up */
	if ((c->cbev = bufferevent_openssl_socket_new(c->g->base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto oom;
	bufferevent_openssl_set_allow_dirty_shutdown(c->cbev, 1);
	bufferevent_setcb(c->cbev, NULL, NULL, client_tls_cb, c);
	(void)bufferevent_enable(c->cbev, EV_READ | EV_WRITE);
	return;
 oom:
	c->close_reason = "out of memory";
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
		c->close_reason = "inspect_not_tls";
		/* the 200 it was sent goes out, then the close */
		c->insp->closing = 1;
		bufferevent_disable(bev, EV_READ);
		hello_write_cb(bev, c);
		return;
	}
	/* the 200 goes out before the socket changes hands */
	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
		c->insp->phase = IP_CLIENT_TLS;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	client_accept(c);
}

static void
hello_write_cb(struct bufferevent *bev, void *arg)
{
	struct gate_conn	*c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	if (c->insp->closing)
		conn_free(c);
	else if (c->insp->phase == IP_CLIENT_TLS)
		client_accept(c);
}

static void
hello_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct gate_conn	*c = arg;

	c->close_reason = (what & BEV_EVENT_EOF) ? "client closed" :
	    "client error";
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

/*
 * The connection's inspection ends (conn_free): a close_notify each way
 * when the TLS stands and nothing waits to be written before it, then
 * its state.  The sockets are the bufferevents' to close.
 */
void
conn_inspect_free(struct gate_conn *c)
{
	struct conn_insp	*x = c->insp;
	SSL			*ssl;

	if (x == NULL)
		return;
	if (x->phase == IP_HTTP) {
		if (c->cbev != NULL && evbuffer_get_length(
		    bufferevent_get_output(c->cbev)) == 0 &&
		    (ssl = bufferevent_openssl_get_ssl(c->cbev)) != NULL)
			(void)SSL_shutdown(ssl);
		if (c->ubev != NULL && evbuffer_get_length(
		    bufferevent_get_output(c->ubev)) == 0 &&
		    (ssl = bufferevent_openssl_get_ssl(c->ubev)) != NULL)
			(void)SSL_shutdown(ssl);
		ERR_clear_error();
	}
	free(x->req);
	free(x->resp);
	free(x->prefix);
	if (x->held != NULL)
		evbuffer_free(x->held);
	free(x);
	c->insp = NULL;
}
