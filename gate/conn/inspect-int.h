/*
 * An inspected connection, private to the files that make it:
 *
 *   inspect.c       the gate's CA, TLS contexts and secrets; the two TLS
 *                   handshakes of a connection (upstream first, then the
 *                   client's, with a leaf minted for its name)
 *   inspect_pool.c  upstream legs kept for the next connection, and the
 *                   retry of a request a kept leg closed under
 *   inspect_http.c  the HTTP/1.1 exchanges inside: each request decided
 *                   and its secrets added (inject.c), each response
 *                   framed and streamed, one audit line a request
 *
 * OpenSSL's types live here, not in gate.h or conn-int.h: nothing else
 * of the gate deals with TLS beyond reading a ClientHello (tls.c).
 */
#ifndef AISB_GATE_INSPECT_INT_H
#define AISB_GATE_INSPECT_INT_H

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "buf.h"
#include "gate/mint.h"
#include "gate/inject.h"
#include "gate/conn/conn-int.h"

/*
 * TLS sessions with upstreams, to resume (inspect.c): one slot per
 * host:port by its hash, the newer session of a colliding name taking it.
 */
#define INSP_SESSIONS	1024

struct insp_session {
	SSL_SESSION		*sess;
	char			 hostport[POLICY_MAX_NAME + 16];	/* conn_dec's */
};

/*
 * Kept upstream legs (inspect.c): an inspected connection's TLS with its
 * upstream, once its last exchange ended cleanly, waits here for the next
 * inspected connection of the same key: the client's identity (--users'
 * user, the session and the token file line it came through, whose key
 * tells two credentials of one name apart), the decided host:port and the address it was
 * dialled to, and the rule that allowed it (pointer identity: the pool is
 * emptied on every reload).  A kept leg is a socket, its TLS state
 * (OpenSSL's SSL, some 6 KiB with SSL_MODE_RELEASE_BUFFERS: no record
 * buffers while idle) and two bufferevents with no bytes (about 2 KiB;
 * estimates, not measured):
 * INSP_POOL_MAX of them cost some 0.5 MiB a worker at most.
 * INSP_POOL_IDLE seconds: below the 60 s idle close of the common servers
 * and load balancers (nginx's keepalive_timeout 75 s, AWS ALB and Google
 * front ends 60 s+), above Apache's 5 s, whose closes the stale-race
 * retry covers (inspect_http.c).
 */
#define INSP_POOL_PER_KEY	4
#define INSP_POOL_MAX		64
#define INSP_POOL_IDLE		30	/* seconds */
#define INSP_REPLAY_MAX		(64 * 1024)	/* bytes of a first request
						   kept to send again */
#define INSP_KEY_MAX		(2 * GATE_SESSION_MAX + 2 * GATE_AUTH_KEY + \
				    POLICY_MAX_NAME + 16 + INET6_ADDRSTRLEN + 8)

struct insp_idle {
	TAILQ_ENTRY(insp_idle)	 entry;		/* oldest first */
	struct gate_inspect	*in;
	struct bufferevent	*bev;		/* the TLS filter */
	struct event		*timer;
	const struct policy_rule *rule;
	char			 key[INSP_KEY_MAX];
};
TAILQ_HEAD(insp_pool, insp_idle);

struct gate_inspect {
	struct gate_ca		*ca;
	SSL_CTX			*srv;		/* towards clients: minted leaves */
	SSL_CTX			*up;		/* towards upstreams: verified */
	struct gate_secrets	*secrets;	/* NULL: none given */
	struct insp_session	 sessions[INSP_SESSIONS];
	struct insp_pool	 pool;		/* kept upstream legs */
	size_t			 npool;
};

enum insp_phase { IP_UP_TLS, IP_HELLO, IP_CLIENT_TLS, IP_HTTP };
/* The request side: reading a head, its body, waiting for the answer. */
enum insp_rq { RQ_HEAD, RQ_BODY, RQ_WAIT, RQ_TUNNEL };
/* The response side: none due, its head, its body. */
enum insp_rs { RS_IDLE, RS_HEAD, RS_BODY, RS_TUNNEL };

#define INSP_PATH_MAX	256	/* bytes of a path in an audit line */
#define INSP_UPGRADE_MAX 32	/* bytes of an Upgrade token in an audit line */
#define INSP_ENTRY_MAX	(POLICY_MAX_REQ_PATTERN + 64)
#define INSP_HELD_MAX	(64 * 1024)	/* bytes of a handshake held back */
#define INSP_READ	(16 * 1024 - 64)	/* bytes a leg decrypts a read */
#define INSP_IDLE_READ	(2 * 1024 - 64)	/* the same, between exchanges */
#define RS_UNTIL_CLOSE	(-2)	/* a response body that ends with the
				   upstream's close */

struct conn_insp {
	const struct policy_rule *rule;		/* of c->d->pol */
	uint8_t			 phase;		/* enum insp_phase */
	uint8_t			 rq, rs;	/* enum insp_rq, insp_rs */
	uint8_t			 closing;	/* flush the client, then close */
	uint8_t			 keep;		/* another request may follow */
	uint8_t			 upgrade;	/* the request asks to upgrade */
	uint8_t			 head_req;	/* HEAD: no response body */
	uint8_t			 sent;		/* bytes of this response went
						   to the client */
	uint8_t			 ticketed;	/* the client's ticket is due */
	uint8_t			 up_dirty;	/* the upstream leg may not be
						   kept (its close framed an
						   answer, Connection: close,
						   an error, an upgrade) */
	uint8_t			 reused;	/* the leg is a kept one, and
						   its first exchange is on */
	uint8_t			 redialing;	/* a fresh leg for the replay */
	uint8_t			 up_gone;	/* the kept leg closed before
						   the first request went:
						   that request dials afresh */
	struct policy_addr	 addr;		/* the leg's address */
	/* a reused leg's first request, as it went upstream (secrets and
	   all: BUF_SECRET), to send again on a fresh leg when the kept one
	   closes before its answer; p NULL: none kept (or overflowed) */
	struct buf		 replay;

	/* the heads being read (gate_http_parse), NULL between them */
	struct gate_http_req	*req;
	struct gate_http_req	*resp;
	int64_t			 rq_left;	/* body bytes; -1: chunked */
	struct gate_http_chunk	 rq_chunk;
	int64_t			 rs_left;	/* -1 chunked, RS_UNTIL_CLOSE */
	struct gate_http_chunk	 rs_chunk;

	/* the exchange going on, for its audit line */
	char			 method[GATE_HTTP_MAX_METHOD + 1];
	char			 path[INSP_PATH_MAX + 4];
	char			 entry[INSP_ENTRY_MAX];
	struct gate_inject_info	 inj;
	int			 status;
	uint64_t		 up, down;
	struct timespec		 t_req;
	const char		*would;		/* --learn: the request's */
	char			 upgrade_to[INSP_UPGRADE_MAX + 4]; /* its Upgrade
						   ("" none; "..." if cut) */

	/*
	 * --record, during the client's handshake: its bytes held back
	 * (direction, length, bytes), so that the capture has the keys'
	 * secrets blocks before the records they decrypt: OpenSSL logs the
	 * traffic secrets after it wrote the flight they follow.
	 */
	struct evbuffer		*held;
	struct event		*done;		/* closing: the close, once flushed */
};

/* inspect.c */
struct gate_inspect	*conn_inspection(const struct gate_conn *);
/*
 * Whether the client's leg has written all it holds to its socket; when
 * not, the connection is freed (on the next turn of the loop) once it has.
 */
int		 conn_inspect_flushed(struct gate_conn *);
/* A leg between exchanges holds no read space; busy: reads records whole. */
void		 conn_inspect_idle(struct bufferevent *);
void		 conn_inspect_busy(struct bufferevent *);
/* The client's session ticket, to go out with what is written next. */
void		 conn_inspect_ticket(struct gate_conn *);
/* inspect_http.c: both legs up, the first request awaited */
void		 conn_inspect_http(struct gate_conn *);
/*
 * A new upstream leg over the socket bufferevent under (connected or
 * connecting): the TLS filter, its handshake started; NULL when out of
 * memory (under is freed).  conn_inspect_up_error(): why a handshake
 * failed, for the 502.
 */
struct bufferevent *conn_inspect_up_new(struct gate_conn *,
		    struct bufferevent *);
void		 conn_inspect_up_error(struct bufferevent *, short, char *,
		    size_t);
/* inspect.c, for inspect_pool.c */
void		 conn_inspect_owner(struct bufferevent *, struct gate_conn *);
void		 conn_inspect_notify(struct bufferevent *);
void		 conn_inspect_ready(struct gate_conn *);
struct conn_insp *conn_inspect_state(struct gate_conn *);
/* inspect_pool.c: the kept legs, the stale-race retry */
void		 conn_inspect_pool_free(struct gate_inspect *);
void		 conn_inspect_pool_put(struct gate_conn *);
int		 conn_inspect_stale(struct gate_conn *);
int		 conn_inspect_redial(struct gate_conn *);
/* A reused leg, until its first request: its close noted (x->up_gone). */
void		 conn_inspect_kept_watch(struct gate_conn *);
int		 conn_inspect_kept_closed(struct gate_conn *);
/* inspect_http.c, for inspect_pool.c */
void		 conn_inspect_up_http(struct gate_conn *);
int		 conn_inspect_up_failed(struct gate_conn *, const char *);
void		 conn_inspect_wipe(const void *, size_t, void *);
void		 conn_inspect_replay_drop(struct conn_insp *);

#endif /* AISB_GATE_INSPECT_INT_H */
