/*
 * The connection object of aisb-gate, private to the files that make it
 * (HAProxy's -t.h idea): its types, and the functions those files call in
 * each other.  Nothing else in the gate includes it; the rest of the gate
 * sees a connection through gate.h only.
 *
 *   conn.c     life cycle, replies and refusals, the callbacks, timers
 *   view.c     the view, tags, audit fields and status entry of one
 *              connection
 *   decide.c   head complete -> deny -> classify -> resolve -> dial
 *   relay.c    the buffered relay: body framing, SNI check, half-close
 *   splice.c   the raw relay (splice(2) or read/write) and its pipe pool
 *   record.c   --record: the connection's stream in the capture
 *   dnsgate.c  AISB-DNS: the connection as a stream of DNS queries
 *   transparent.c  AISB-TRANSPARENT: the name from the client's first bytes
 *   inspect.c  an inspected host: TLS both ways, then inspect_http.c
 *              (inspect_pool.c: upstream legs kept for the next one)
 *   ask.c      --ask: a request no rule allows, held for an answer
 */
#ifndef AISB_CONN_INT_H
#define AISB_CONN_INT_H

#include <sys/types.h>
#include <netinet/in.h>

#include <stdint.h>
#include <time.h>

#include <event2/util.h>

#include "gate/gate.h"
#include "gate/http.h"

struct bufferevent;
struct event;
struct evbuffer;
struct conn_rec;
struct conn_dns;
struct conn_insp;

#define RELAY_MAX	(256 * 1024)	/* bytes queued towards one side */
#define RELAY_IO	(64 * 1024)	/* bytes per read(2)/write(2); libevent: 4 KiB */
#define LIBEVENT_READ	4096		/* its most per read(2): more may wait */
#define LINGER_SECS	2		/* after an answer, wait for the close */
#define CLIENT_EOF_SECS	2		/* upstream silence that ends a forwarded
					   answer once the client said EOF */
#define RULE_MAX	512
#define DETAIL_MAX	256

/* S_ASK: --ask, held for an answer (ask.c), reads paused */
enum conn_state { S_HEAD, S_RESOLVE, S_CONNECT, S_RELAY, S_LINGER, S_ASK };

/*
 * AISB-TRANSPARENT (transparent.c): what the client's own stream turned
 * out to be, which also says how a refusal is answered (conn_reply): an
 * HTTP answer, a TLS alert, or nothing at all.
 */
enum conn_tp { TP_NONE = 0, TP_PEEK, TP_TLS, TP_HTTP, TP_UNKNOWN, TP_ADDR };
/* SOCKS5 (socks.c): the step a connection is at, which says how a
 * refusal is answered (conn_socks_reply) */
enum conn_socks { SOCKS_ST_NONE = 0, SOCKS_ST_GREET, SOCKS_ST_AUTH,
    SOCKS_ST_REQUEST, SOCKS_ST_DECIDING, SOCKS_ST_BAD };
/*
 * How a connection ends, set together with its close reason by
 * conn_close_as(): the reason is words for the audit's close line and the
 * log; what the code decides on is this (whether an inspected upstream
 * leg may be kept, inspect_pool.c; how a capture ends its stream,
 * record.c), so that rewording a reason changes nothing else.
 */
enum conn_end {
	END_NONE = 0,		/* no reason was given */
	END_DONE,		/* as connections end: an EOF passed on, the
				   client's close, its last exchange over */
	END_CLIENT_ERROR,	/* the client's socket failed (a reset) */
	END_FAULT		/* the gate, the upstream, a limit or a
				   refusal ended it */
};
/* what named a transparent stream (the audit's named_by) */
enum conn_named { NAMED_NONE = 0, NAMED_SNI, NAMED_HOST, NAMED_ADDR };
#define TP_TOOL_MAX	32	/* X-Aisb-Tool: bytes of [A-Za-z0-9._+-] */
#define TP_DIALLED_MAX	64	/* X-Aisb-Dialled: bytes of an address */

/*
 * What a connection needs while it is being decided, and for forwarded
 * requests until they end.  A CONNECT tunnel drops it once it relays on
 * its own (conn_maybe_raw): its audit line needs only conn_tags.
 */
struct conn_dec {
	char			 peer[INET6_ADDRSTRLEN + 8];
	char			 session[GATE_SESSION_MAX];
	char			 user[GATE_SESSION_MAX];	/* --users */
	char			 method[24];

	struct gate_http_req	*req;		/* until the head is dealt with */
	char			*head;
	size_t			 headlen;
	struct gate_http_span	 path;		/* forward: in head */

	struct policy		*pol;
	struct policy_target	 tgt;
	char			 hostport[POLICY_MAX_NAME + 16];
	char			 rule[RULE_MAX];

	struct gate_dns_wait	 dnsw;
	struct policy_addr	 addrs[GATE_MAX_ADDRS];
	size_t			 naddrs, next, tries;
	char			 addrstr[INET6_ADDRSTRLEN];
	int			 timed_out;	/* the last dial timed out (2:
						   its TLS handshake, inspect.c) */
	int			 dial_errno;
	int			 stale;		/* the answer was past its TTL */
	int			 sni_check;	/* the ClientHello is still to come */

	struct timespec		 t_dns, t_connect;

	/* forward: the request body still to pass upstream */
	int64_t			 body_left;	/* Content-Length bytes, -1: chunked */
	struct gate_http_chunk	 chunk;
	int			 body_done;

	/* the rule that allowed an inspected host (inspect.c); NULL: none */
	const struct policy_rule *irule;

	/* AISB-TRANSPARENT (transparent.c) */
	uint8_t			 tp;		/* enum conn_tp */
	uint16_t		 tp_port;	/* the port the client dialled */
	char			 tool[TP_TOOL_MAX + 1];		/* "": none */
	char			 dialled[TP_DIALLED_MAX + 1];	/* "": none */

	/* SOCKS5 (socks.c) */
	uint8_t			 socks;		/* enum conn_socks */
	uint8_t			 socks_rep;	/* a reply the parser chose */

	/* --ask (ask.c): why the policy denied a held request, and since */
	uint8_t			 ask_reason;	/* a policy_reason */
	struct timespec		 t_asked;
};

/*
 * The strings of an established tunnel's audit line and status entry, in
 * one allocation of their own length (a few hundred bytes rather than the
 * 3.5 KiB of struct conn_dec).  s[0] is the client's address.
 */
enum { T_SESSION, T_METHOD, T_HOST, T_HOSTPORT, T_ADDR, T_RULE, T_USER,
    T_TOOL, T_DIALLED, T_N };
struct conn_tags {
	uint16_t		 port;
	uint16_t		 off[T_N];
	char			 s[];
};

/*
 * One direction of a raw tunnel: bytes read from one socket and not yet
 * written to the other sit in a pipe of the pool (splice) or, without
 * one, in buf.  Idle, a direction holds neither.
 */
struct relay_dir {
	struct gate_pipe	*pipe;
	char			*buf;		/* g->scratch while borrowed */
	uint32_t		 len;		/* bytes in pipe or buf */
	uint32_t		 off;		/* buf: first unwritten byte */
	uint8_t			 eof;		/* the source said EOF */
	uint8_t			 bulk;		/* reads fill up: splice them */
	uint8_t			 shut;		/* ... and it was passed on */
};

struct gate_conn {
	TAILQ_ENTRY(gate_conn)	 entry;
	struct gate		*g;
	uint64_t		 id;
	enum conn_state		 state;
	uint8_t			 tunnel;	/* CONNECT rather than forward */
	uint8_t			 raw;		/* relaying without bufferevents */
	uint8_t			 c_eof, u_eof, c_shut, u_shut;
	uint8_t			 up_paused, down_paused;
	uint8_t			 no_timer;	/* evtimer_add failed: close */
	uint8_t			 transparent;	/* came as AISB-TRANSPARENT */
	uint8_t			 named_by;	/* enum conn_named */
	uint8_t			 socks;		/* came as SOCKS5 (socks.c) */
	uint8_t			 up_reused;	/* inspected: its upstream leg was
						   a kept one (inspect.c) */
	struct bufferevent	*cbev, *ubev;
	struct event		*timer;
	struct gate_client	*client;
	struct conn_dec		*d;		/* NULL once raw */
	struct conn_tags	*tags;		/* set once raw */

	struct timespec		 t_start, t_active;
	double			 dns_ms, connect_ms;
	uint64_t		 up, down;
	const char		*close_reason;	/* both by conn_close_as() */
	uint8_t			 close_end;	/* enum conn_end */

	/* raw relay: [0] the client's socket, [1] the upstream's */
	int			 fd[2];
	struct event		*ev[2];		/* edge-triggered, read and write */
	uint8_t			 rd[2], wr[2];	/* readiness not yet used up */
	uint8_t			 hup[2];	/* the peer's FIN has arrived */
	struct relay_dir	 dir[2];	/* [0] up: fd[0] -> fd[1], [1] down */
	struct conn_rec		*rec;		/* --record: its stream; NULL: off */
	struct conn_dns		*dns;		/* AISB-DNS stream; NULL: not one */
	const char		*would;		/* --learn: the policy's reason
						   token (static); NULL: none */
	struct conn_insp	*insp;		/* inspected (inspect.c); NULL: not */
	/* --ask (ask.c) */
	TAILQ_ENTRY(gate_conn)	 held;		/* the gate's held list */
	uint64_t		 ask_id;	/* while held (S_ASK); 0: not */
	uint8_t			 asked;		/* was held: "asked":true */
	uint8_t			 ask_ok;	/* ... and let through */
	/* the token file's line it came through (gate_auth_check); all
	 * zero: none.  A reload judges by it (ask.c, recheck.c). */
	unsigned char		 cred_key[GATE_AUTH_KEY];
};

/* The strings that name a connection, wherever it keeps them (its
 * decision while deciding, its tags once relaying). */
struct conn_view {
	const char	*peer, *session, *method, *host, *hostport, *addr;
	const char	*rule, *user;
	const char	*tool, *dialled;	/* AISB-TRANSPARENT; "": none */
	unsigned	 port;
};

/* view.c */
void		 conn_view(const struct gate_conn *, struct conn_view *);
struct conn_tags *conn_tags_new(const struct gate_conn *);
void		 conn_audit(struct gate_conn *, const char *, const char *, int,
		    const char *, const char *, const char *);
void		 conn_audit_fill(struct gate_conn *, struct gate_audit_rec *);
/* conn.c */
void		 conn_close_as(struct gate_conn *, const char *,
		    enum conn_end);
void		 conn_free(struct gate_conn *);
void		 conn_dec_free(struct conn_dec *);
void		 conn_arm(struct gate_conn *, unsigned);
void		 conn_refuse(struct gate_conn *, int, const char *,
		    const char *, const char *);
void		 conn_deny(struct gate_conn *, enum policy_reason,
		    const char *, const char *, const struct policy_addr *);
/* decide.c: the audit's reason token of a policy decision */
const char	*conn_reason_token(enum policy_reason);
void		 conn_nodelay(int);
void		 conn_refuse_fix(struct gate_conn *, int, const char *,
		    const char *, const char *, const char *, const char *);
void		 conn_finish(struct gate_conn *);
void		 conn_reply(struct gate_conn *, int, const char *,
		    const char *);
void		 conn_refusal_text(struct gate_conn *, const char *,
		    const char *, const char *, const char *, const char *,
		    const char *, char *, size_t, char *, size_t);
const char	*conn_reason_token(enum policy_reason);
void		 conn_write_cb(struct bufferevent *, void *);
void		 conn_up_read_cb(struct bufferevent *, void *);
void		 conn_up_event_cb(struct bufferevent *, short, void *);

/* decide.c */
int		 conn_auth(struct gate_conn *, const char *, size_t);
void		 conn_head_complete(struct gate_conn *);
void		 conn_decide(struct gate_conn *);
void		 conn_decided(struct gate_conn *, const struct policy_rule *);
void		 conn_dial(struct gate_conn *);
int		 conn_dial_addr(struct gate_conn *,
		    const struct policy_addr *);
void		 conn_dial_done(struct gate_conn *, short);
void		 conn_up_drop(struct gate_conn *);

/* dnsgate.c: the AISB-DNS stream, after the head is authenticated */
void		 conn_dns_start(struct gate_conn *);
void		 conn_dns_free(struct gate_conn *);
/* whose the connection is: session, user, or "@ADDR" in buf; with
 * c->cred_key, never alone (see dnsgate.c) */
#define CONN_LABEL_MAX	(INET6_ADDRSTRLEN + 8)
const char	*conn_label(const struct gate_conn *, char *, size_t);

/* relay.c */
ssize_t		 conn_body_take(int64_t *, struct gate_http_chunk *,
		    struct evbuffer *, int *);
ssize_t		 conn_read_more(struct bufferevent *, struct evbuffer *);
void		 conn_connected(struct gate_conn *);
void		 conn_allowed(struct gate_conn *);
int		 conn_check_sni(struct gate_conn *, struct evbuffer *);
int		 conn_relay_up(struct gate_conn *);
int		 conn_relay_down(struct gate_conn *);
void		 conn_maybe_done(struct gate_conn *);
/* the answer that opens a proxy client's tunnel: a 200, or SOCKS5's */
const char	*conn_tunnel_ok(const struct gate_conn *, size_t *);

/* splice.c */
void		 conn_raw_cb(evutil_socket_t, short, void *);
int		 conn_maybe_raw(struct gate_conn *, const char *, size_t);
void		 conn_raw_free(struct gate_conn *);

/*
 * record.c: each is called only when c->rec is not NULL.  Side 0 is the
 * client, 1 the destination; conn_rec_new returns -1 when out of memory.
 */
int		 conn_rec_new(struct gate_conn *, const struct policy_addr *,
		    uint16_t);
void		 conn_rec_free(struct gate_conn *);
void		 conn_rec_dial(struct gate_conn *, const struct policy_addr *,
		    uint16_t);
void		 conn_rec_open(struct gate_conn *);
void		 conn_rec_refused(struct gate_conn *, const char *,
		    const char *);
void		 conn_rec_data(struct gate_conn *, int, const void *, size_t);
void		 conn_rec_tail(struct gate_conn *, int, struct evbuffer *,
		    size_t);
void		 conn_rec_fin(struct gate_conn *, int);
void		 conn_rec_end(struct gate_conn *);
void		 conn_rec_keylog(struct gate_conn *, const char *);

/*
 * socks.c: conn_socks_read() is the client's read callback of a head
 * that starts as SOCKS5 (1: it took the bytes; 0: not SOCKS, read it as
 * HTTP); conn_socks_reply() queues the SOCKS answer to a refusal;
 * conn_socks_ok is the reply that opens the tunnel.
 */
int		 conn_socks_read(struct gate_conn *);
void		 conn_socks_reply(struct gate_conn *, int, const char *);
extern const uint8_t conn_socks_ok[10];

/*
 * transparent.c: conn_transparent_start() takes over from
 * conn_head_complete() once the head is an authenticated
 * AISB-TRANSPARENT; conn_transparent_read() is the client's read callback
 * until the name is known (d->tp == TP_PEEK); conn_transparent_alert()
 * queues the TLS alert that refuses a TLS stream.
 */
void		 conn_transparent_start(struct gate_conn *);
void		 conn_transparent_read(struct gate_conn *);
void		 conn_transparent_alert(struct gate_conn *, const char *);
/* the audit's named_by of an enum conn_named; NULL for NAMED_NONE */
const char	*conn_named_str(uint8_t);

/*
 * inspect.c: an inspected host's connection once its upstream is
 * connected (TLS to the upstream, then to the client, then
 * inspect_http.c); conn_inspect_free() ends its TLS and frees its state
 * (conn_free).  inspect_http.c: conn_inspect_forward() decides a
 * forwarded request (plain HTTP) of an inspected host by its requests:
 * entries: 0, or -1 when it was refused (and answered).
 */
void		 conn_inspect_connected(struct gate_conn *);
/*
 * inspect.c: the pool of kept upstream legs.  conn_inspect_reuse() gives
 * an inspected CONNECT about to dial address a the kept leg of its key,
 * and goes on as after the upstream's handshake: 1; 0 when none is kept.
 */
int		 conn_inspect_reuse(struct gate_conn *, const struct policy_addr *);
void		 conn_inspect_free(struct gate_conn *);
int		 conn_inspect_forward(struct gate_conn *);

/*
 * ask.c: --ask.  conn_ask() holds a request the policy denied (1), or
 * leaves the denial to the caller (0: --ask off, or a reason a person
 * may not overrule); conn_ask_covers() is 1 when an answer covers what
 * the policy denied with that reason (a "session" grant, or a person let
 * this connection through); conn_ask_expire() is a held request's timer;
 * conn_ask_forget() takes a closing connection off the held list.
 */
int		 conn_ask(struct gate_conn *, const struct policy_decision *);
int		 conn_ask_covers(struct gate_conn *, int);
void		 conn_ask_expire(struct gate_conn *);
void		 conn_ask_forget(struct gate_conn *);
/* recheck.c: the policy now in force for a user (""), NULL: removed */
struct policy	*conn_policy_for(const struct gate *, const char *);
/* ask.c: 1 while a connection's credential (its --users user, its token
 * file line's key) is still one of the gate's, after a reload */
int		 conn_cred_kept(const struct gate *, const char *,
		    const unsigned char [GATE_AUTH_KEY]);

#endif /* AISB_CONN_INT_H */
