/*
 * aisb-gate: the egress gate.  One process, one libevent base; the policy,
 * the resolver, the audit log and the control socket hang off one
 * struct gate, and every client connection is one struct gate_conn.
 *
 *   main.c     argv, privileges, daemonizing: the order of start-up
 *   config.c   the policy and credentials, loaded and reloaded
 *   sockaddr.c -l's and --metrics' addresses, parsed and printed
 *   proc.c     listening, the loop, signals and drain, the workers
 *   conn/      the connection object, one struct gate_conn across files
 *              that call each other (conn/conn-int.h: its types, private
 *              to them):
 *     conn.c     accept, head, answers, callbacks
 *     view.c     what names a connection: audit fields, tags, status
 *     decide.c   the decision path: policy, resolve, classify, dial
 *     relay.c    the relay on bufferevents: body, SNI check, half-close
 *     splice.c   the raw relay of a tunnel, splice(2) and the pipe pool
 *     record.c   --record: every connection as a TCP stream in a pcapng file
 *     dnsgate.c  AISB-DNS: DNS over the proxy port, answered from the policy
 *     transparent.c  AISB-TRANSPARENT: a relay's captured stream, named by
 *                its SNI or Host, then decided as CONNECT or a forward
 *     inspect.c  inspected hosts: TLS terminated both ways (a leaf minted
 *                for the name), the upstream's sessions resumed
 *     inspect_pool.c  their upstream connections kept for the next one
 *     inspect_http.c  inside them, each HTTP/1.1 request decided and its
 *                secrets added, each answer streamed (inspect-int.h)
 *     ask.c      --ask: a request no rule allows held for a person's
 *                answer on the control socket
 *   http.c     the request parser (pure, restartable; see http.h)
 *   dns.c      c-ares in the event loop, the per-name cache (the pin)
 *   tls.c      the server name of a TLS ClientHello (see tls.h)
 *   audit.c    JSON lines, one per decision and one per closed tunnel
 *   auth.c     Proxy-Authorization: Basic against a token file
 *   users.c    --users: credentials mapped to per-user policies
 *   control.c  the unix control socket ("status"; --ask's "pending",
 *              "approve", "deny" and the "watch" stream)
 *   metrics.c  --metrics: Prometheus text on GET /metrics; the counters
 *              of --workers in a shared mapping
 *   health.c   /healthz and /readyz on the metrics listener (probes)
 *   watch.c    --watch: a reload when the configuration's files change
 *   mint.c     inspected hosts: the CA (made at start, or --ca-key) and
 *              the leaves it signs per server name (mint.h)
 *   inject.c   inspected hosts: a request head's secrets (inject.h)
 *   override.c inspected hosts: what an upstream may act on besides the
 *              request line (an Upgrade, method and URL overrides)
 *   secrets.c  inspected hosts: the secrets read from --secrets-fd
 *   synth.c    the names behind the synthetic addresses AISB-DNS gave out
 */
#ifndef AISB_GATE_H
#define AISB_GATE_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>
#include <time.h>

#include "policy.h"

struct event;
struct event_base;
struct evbuffer;
struct gate_record;
struct evconnlistener;
struct gate_conn;
struct gate_dns;
struct gate_audit;
struct gate_auth;
struct gate_users;
struct gate_control;
struct gate_metrics;
struct gate_dnsgate;
struct gate_watch;
struct gate_inspect;
struct gate_secrets;
struct gate_synth;
struct gate_ask;

/* Defaults; each is a command line option (see aisb-gate(8)). */
#define GATE_DEFAULT_LISTEN		"127.0.0.1:3128"
#define GATE_DEFAULT_MAX_CONNS		1024
#define GATE_DEFAULT_MAX_PER_CLIENT	256
#define GATE_DEFAULT_HEADER_TIMEOUT	10	/* s, whole request head */
#define GATE_DEFAULT_CONNECT_TIMEOUT	10	/* s, per address tried */
#define GATE_DEFAULT_IDLE_TIMEOUT	300	/* s, no byte in either direction */
#define GATE_DEFAULT_DRAIN_TIMEOUT	10	/* s, SIGTERM to exit */
#define GATE_DEFAULT_DNS_GRACE		60	/* s, stale answer after a failed refresh */
#define GATE_DEFAULT_DNS_TIMEOUT	3	/* s, one whole look-up */
#define GATE_DEFAULT_MAX_PIPES		256	/* splice pipes, two fds each */
#define GATE_DEFAULT_DNS_RATE		50	/* AISB-DNS queries/s per session */
#define GATE_DEFAULT_DNS_BURST		200	/* ... and the bucket's size */

#define GATE_FD_RESERVE		64	/* descriptors kept for audit, DNS, control */
#define GATE_SCRATCH		(64 * 1024)	/* g->scratch: one read(2) of a relay */

#define GATE_MAX_ADDRS		16	/* addresses kept per name (A + AAAA) */
#define GATE_MAX_DIALS		3	/* addresses tried per request */
#define GATE_SESSION_MAX	64	/* bytes of a session label */
#define GATE_MAX_WORKERS	64	/* --workers */
#define GATE_DEFAULT_RECORD_MAX	(1024ULL * 1024 * 1024)	/* --record-max, bytes */

/* Every counter is monotonic except the gauges marked so. */
struct gate_counters {
	uint64_t	 accepted;
	uint64_t	 active;		/* gauge */
	uint64_t	 tunnels;		/* gauge: relaying connections */
	uint64_t	 rejected_limit;
	uint64_t	 rejected_audit;	/* 503 audit_unavailable */
	uint64_t	 allowed;
	uint64_t	 denied;
	uint64_t	 bad_request;
	uint64_t	 auth_failed;
	uint64_t	 dns_failed;
	uint64_t	 dns_stale;
	uint64_t	 connect_failed;
	uint64_t	 connect_timeout;
	uint64_t	 header_timeout;
	uint64_t	 idle_timeout;
	uint64_t	 audit_errors;
	uint64_t	 reloads;
	uint64_t	 reload_failures;
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	uint64_t	 raw;			/* tunnels that left their bufferevents */
	uint64_t	 bytes_spliced;		/* of bytes_up + bytes_down */
	uint64_t	 relay_copies;		/* raw reads without a pipe */
	uint64_t	 pipe_shortage;		/* a pipe was wanted, none free */
	/* AISB-DNS (dnsgate.c): queries by answer */
	uint64_t	 dns_q_addr;		/* A: the synthetic address */
	uint64_t	 dns_q_nodata;		/* allowed name, other type */
	uint64_t	 dns_q_nxdomain;
	uint64_t	 dns_q_ratelimited;	/* REFUSED: over the rate bound */
	uint64_t	 dns_q_error;		/* FORMERR, NOTIMP, BADVERS, class */
	uint64_t	 transparent;		/* AISB-TRANSPARENT heads accepted */
	/* inspected hosts (inspect.c) */
	uint64_t	 inspected;		/* connections with both TLS legs */
	uint64_t	 insp_requests;		/* requests on them, one audit line each */
	uint64_t	 insp_refused;		/* ... that the gate answered itself */
	uint64_t	 insp_reused;		/* ... connections that took a
						   pooled upstream leg */
	uint64_t	 insp_redialed;		/* ... whose reused leg was closed
						   under the first request: sent
						   again on a fresh one */
};

/*
 * What --metrics reports beyond struct gate_counters (metrics.c).  Each
 * worker counts into its own; a scrape sums them.
 */
enum { GATE_DEC_ALLOW, GATE_DEC_DENY, GATE_DEC_ERROR, GATE_DEC_N };
#define GATE_REASONS_MAX	48	/* reason tokens (metrics.c), "other" last */
#define GATE_DNS_BUCKETS	13	/* look-up histogram, +Inf included */

struct gate_stats {
	uint64_t	 decisions[GATE_DEC_N][GATE_REASONS_MAX];
	uint64_t	 dns_buckets[GATE_DNS_BUCKETS];	/* not cumulative */
	uint64_t	 dns_lookups;
	uint64_t	 dns_failures;
	double		 dns_seconds;
	uint64_t	 dns_hits;	/* requests answered by the cache */
	uint64_t	 dns_misses;	/* requests that waited for a look-up */
	uint64_t	 reopens;	/* of the audit log */
	uint64_t	 reopen_failures;
};

/*
 * What --metrics reports.  With --workers and --metrics each worker's
 * numbers live in a slot of a mapping the workers share (metrics.c), and
 * nothing else of a worker does.
 */
struct gate_numbers {
	struct gate_counters	 ctr;
	struct gate_stats	 st;
};

struct gate_config {
	const char		*policy_path;
	const char		*listen;
	const char		*audit_path;	/* NULL: no audit; "-": stdout */
	const char		*port_file;
	const char		*control_path;
	const char		*token_file;
	const char		*users_path;	/* --users; NULL: none */
	const char		*user;
	int			 token_fd;	/* -1: none */
	int			 ready_fd;	/* -1: none */
	int			 foreground;
	int			 check_only;
	int			 verbose;
	int			 sni_check;	/* TLS server name == CONNECT name */
	int			 splice;	/* relay tunnels with splice(2) */
	int			 audit_failure_allow; /* decide on, audit or not */
	const char		*record_path;	/* --record; NULL: none */
	uint64_t		 record_max;	/* --record-max, bytes */
	unsigned		 max_pipes;
	unsigned		 workers;	/* processes; 1: no supervisor */
	unsigned		 max_conns;
	unsigned		 max_per_client;
	unsigned		 header_timeout;
	unsigned		 connect_timeout;
	unsigned		 idle_timeout;
	unsigned		 drain_timeout;
	unsigned		 dns_grace;
	unsigned		 dns_timeout;
	const char		*metrics_listen; /* --metrics; NULL: none */
	unsigned		 dns_rate;	/* --dns-rate: AISB-DNS queries/s */
	unsigned		 dns_burst;	/* --dns-burst */
	int			 learn;		/* --learn: names and ports are not
						   refused; address checks stay */
	int			 watch;		/* --watch: reload on a change */
	int			 reload_closes;	/* --reload-closes: a reload
						   closes what it now denies */
	/* inspected hosts (inspect.c) */
	const char		*ca_key;	/* --ca-key; NULL: a session CA */
	const char		*ca_out;	/* --ca-out; NULL: none */
	const char		*upstream_ca;	/* --upstream-ca; NULL: none */
	int			 secrets_fd;	/* --secrets-fd; -1: none */
	int			 no_reuse;	/* --no-upstream-reuse: no pool of
						   upstream legs (inspect.c) */
	int			 socks;		/* SOCKS5 on the listener (socks.c);
						   --no-socks: 0 */
	unsigned		 ask;		/* --ask: s a request is held;
						   0: off (conn/ask.c) */
};

struct gate_client;		/* per client address, for the per-client limit */
struct gate_pipe;		/* a pipe of the splice pool (splice.c) */

struct gate {
	struct gate_config	 cfg;
	unsigned		 worker;	/* 0 .. cfg.workers - 1 */
	struct event_base	*base;
	struct evconnlistener	*listener;
	struct sockaddr_storage	 bound;		/* the address actually listened on */
	socklen_t		 boundlen;
	struct policy		*policy;	/* current; connections hold their own ref */
	struct gate_dns		*dns;
	struct gate_audit	*audit;
	struct gate_auth	*auth;		/* NULL: no proxy authentication */
	struct gate_users	*users;		/* --users; excludes auth */
	int			 auth_kept;	/* the last reload could not read
						   the token file: old credentials */
	struct gate_control	*control;
	/* listening, until the workers take them (gate_listen) */
	int			 lfds[GATE_MAX_WORKERS];
	int			 ctlfd;		/* -1: no control socket */
	struct event		*accept_pause;	/* accept resumes (EMFILE) */
	struct event		*drain_timer;	/* SIGTERM's drain ends */
	TAILQ_HEAD(, gate_conn)	 conns;
	uint64_t		 next_id;
	struct gate_numbers	*num;		/* &own, or the worker's shared slot */
	struct gate_numbers	 own;
	int			 draining;
	struct timespec		 started;	/* CLOCK_MONOTONIC */
	struct gate_client	**clients;	/* hash of per-client counts */
	unsigned long		 fd_limit;	/* RLIMIT_NOFILE */
	int			 accept_nodelay; /* the listener lacks TCP_NODELAY */
	struct gate_pipe	*pipes_free;	/* empty pipes, ready */
	unsigned		 pipes_total;	/* made and not closed */
	unsigned		 pipes_idle;	/* of which in pipes_free */
	char			*scratch;	/* GATE_SCRATCH bytes, for relays */
	struct gate_record	*record;	/* --record; NULL: off */
	/*
	 * The folders of the files a reload reads again, opened before
	 * --user drops privileges (file_dir_open): the gate then needs
	 * search permission on those folders only.
	 */
	int			 policy_dir, token_dir;
	const char		*policy_name, *token_name;
	/* --metrics (metrics.c) */
	int			 metrics_fd;	/* -1: none; until the loop takes it */
	struct gate_metrics	*metrics;
	int			 users_dir;	/* --users: its folder */
	const char		*users_name;
	struct gate_dnsgate	*dnsgate;	/* AISB-DNS rate buckets; NULL: none yet */
	struct gate_watch	*watch;		/* --watch, in worker 0; NULL: none */
	struct gate_inspect	*insp;		/* the CA, TLS contexts, secrets */
	struct gate_synth	*synth;		/* AISB-DNS's answers (synth.c) */
	struct gate_ask		*ask;		/* --ask; NULL: off (conn/ask.c) */
};

/* conn.c */
void	 gate_accept(struct gate *, int fd, const struct sockaddr *, int salen);
void	 gate_conn_close_all(struct gate *);
/* recheck.c: after a reload with --reload-closes, the relaying
 * connections the policy now in force denies closed; how many. */
size_t	 gate_conn_recheck(struct gate *);
void	 gate_conns_status(struct gate *, struct evbuffer *);
double	 gate_ms_since(const struct timespec *);
int	 gate_clients_init(struct gate *);
void	 gate_clients_free(struct gate *);

/* splice.c */
void	 gate_pipes_free(struct gate *);

/* config.c */
int	 gate_config_load(struct gate *);
int	 gate_config_auth(struct gate *);
int	 gate_reload(struct gate *);
int	 gate_audit_rotate(struct gate *);

/* sockaddr.c */
int	 gate_listen_parse(const char *, struct sockaddr_storage *,
	    socklen_t *);
const char *gate_sockaddr_str(const struct sockaddr_storage *, char *, size_t);

/* proc.c */
void	 gate_proc_prepare(struct gate *);
void	 gate_listen(struct gate *, const struct sockaddr_storage *, socklen_t);
void	 gate_announce(struct gate *);
int	 gate_proc_run(struct gate *);

/* dns.c: see the comment above gate_dns_resolve(). */
typedef void	(*gate_dns_cb)(void *arg, int status, const char *errstr,
		    const struct policy_addr *addrs, size_t naddrs, int stale);

struct gate_dns_wait {
	TAILQ_ENTRY(gate_dns_wait)	 entry;
	struct gate_dns_entry		*owner;	/* NULL when not waiting */
	gate_dns_cb			 cb;
	void				*arg;
};

struct gate_dns	*gate_dns_new(struct event_base *, const struct policy *,
		    unsigned grace, unsigned timeout);
int		 gate_dns_configure(struct gate_dns *, const struct policy *);
void		 gate_dns_free(struct gate_dns *);
int		 gate_dns_resolve(struct gate_dns *, const char *name,
		    struct gate_dns_wait *, gate_dns_cb, void *arg);
void		 gate_dns_cancel(struct gate_dns_wait *);
size_t		 gate_dns_cached(struct gate_dns *, const char *name,
		    struct policy_addr *out, int *stale);
size_t		 gate_dns_cache_size(const struct gate_dns *);
/* where look-ups and cache hits are counted (NULL: nowhere) */
void		 gate_dns_stats(struct gate_dns *, struct gate_stats *);
/* does the resolver answer (health.c); see gate_dns_probe() */
struct gate_dns_probe {
	void		(*cb)(void *arg, int answered, const char *why);
	void		*arg;
	struct probe_query *q;		/* NULL when not waiting */
};
int		 gate_dns_probe(struct gate_dns *, struct gate_dns_probe *,
		    void (*)(void *, int, const char *), void *arg);
void		 gate_dns_probe_cancel(struct gate_dns_probe *);

/* audit.c */
struct gate_audit_rec {
	const char	*event;		/* "decision" or "close" */
	uint64_t	 conn;
	const char	*session;	/* NULL: none */
	const char	*user;		/* --users: the user; NULL: none */
	const char	*client;
	const char	*method;
	const char	*host;
	unsigned	 port;
	const char	*addr;		/* NULL: none */
	const char	*decision;	/* "allow", "deny", "error" */
	int		 status;	/* HTTP status sent to the client, 0: none */
	const char	*reason;
	const char	*rule;		/* NULL: none */
	const char	*detail;	/* NULL: none */
	const char	*fix;		/* NULL: none; YAML (policy_fix_yaml) */
	double		 dns_ms;	/* < 0: not measured */
	double		 connect_ms;	/* < 0: not measured */
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	double		 duration_ms;	/* < 0: not measured */
	/* event "dns" (dnsgate.c); NULL / 0: not written */
	const char	*name;		/* the question's name */
	const char	*qtype;		/* "A", "AAAA", "TYPE65" */
	const char	*answer;	/* an address, "NODATA", "NXDOMAIN", ... */
	uint64_t	 refused;	/* queries refused by the rate bound */
	/* AISB-TRANSPARENT (transparent.c) */
	int		 transparent;	/* "transparent":true */
	const char	*tool;		/* the relay's X-Aisb-Tool; NULL: none */
	const char	*dialled;	/* its X-Aisb-Dialled; NULL: none */
	int		 learn;		/* --learn: "learn":true */
	const char	*would;		/* --learn: the reason token the policy
					   would have decided with; NULL: none */
	/* inspected connections (inspect.c); NULL / 0: not written */
	int		 inspect;	/* "inspect":true */
	const char	*path;		/* event "request": the path, no query */
	const char	*entry;		/* the requests: entry that decided */
	const char	*inject;	/* the secrets added, comma-separated */
	const char	*placeholder;	/* secrets whose placeholder went to a
					   host they do not belong to */
	const char	*upgrade;	/* the request's Upgrade token */
	int		 reused;	/* "upstream_reused":true: the upstream
					   TLS connection was a kept one */
	/* issue 31; NULL / 0: not written */
	const char	*named_by;	/* transparent: "sni", "host", "address" */
	int		 socks;		/* SOCKS5 (conn/socks.c): "socks":true */
	/* --ask (conn/ask.c); 0 / NULL: not written */
	int		 asked;		/* "asked":true: it was held */
	uint64_t	 ask_id;	/* event "ask": "id", the held request's */
	const char	*by;		/* event "ask": "timeout" or "exit" */
	int		 by_peer;	/* event "ask": by_uid and by_pid, the
					   control socket's peer (SO_PEERCRED) */
	uid_t		 by_uid;
	pid_t		 by_pid;
};

struct gate_audit	*gate_audit_open(const char *path);
int			 gate_audit_batch(struct gate_audit *,
			    struct event_base *);
int			 gate_audit_reopen(struct gate_audit *);
/* The file becomes uid's (--user), so that it may reopen it.  0 or -1. */
int			 gate_audit_chown(struct gate_audit *, uid_t, gid_t);
int			 gate_audit_failing(struct gate_audit *);
void			 gate_audit_close(struct gate_audit *);
void			 gate_audit_write(struct gate_audit *,
			    const struct gate_audit_rec *, uint64_t *errors);
size_t			 gate_json_str(char *buf, size_t len, const char *s);
/* a reload's outcome: logged, and audited as event "reload" */
void			 gate_reload_said(struct gate *, int applied,
			    const char *, ...)
			    __attribute__((format(printf, 3, 4)));

/* record.c: the capture file of --record (see record.c) */
struct gate_record	*gate_record_open(const char *path, uint64_t max);
/* The file becomes uid's (--user), like the audit log.  0 or -1. */
int			 gate_record_chown(struct gate_record *, uid_t, gid_t);
void			 gate_record_close(struct gate_record *);

/* auth.c */
#define GATE_AUTH_DIGEST	32	/* SHA-256 of a secret: all a gate keeps */
/* The SHA-256 of len bytes at p into out: 0, or -1. */
int			 gate_auth_digest(const void *p, size_t len,
			    unsigned char out[GATE_AUTH_DIGEST]);
struct gate_auth	*gate_auth_load_file(const char *path, char *err,
			    size_t errlen);
struct gate_auth	*gate_auth_load_fd(int fd, char *err, size_t errlen);
/* name in the folder dirfd (file_dir_open); path names it in messages */
struct gate_auth	*gate_auth_load_file_at(int dirfd, const char *name,
			    const char *path, char *err, size_t errlen);
void			 gate_auth_free(struct gate_auth *);
/*
 * The key of a token file's line (its session label or none, and its
 * secret's digest, hashed once more): what a connection remembers of the
 * line it matched, so that a reload can tell whether that very line is
 * still there.  All zero: no line (no token file).
 */
#define GATE_AUTH_KEY		32
/* 1 when a still has the line of key (a reload) */
int			 gate_auth_holds(const struct gate_auth *,
			    const unsigned char key[GATE_AUTH_KEY]);
/* key: NULL, or filled with the matched line's key */
int			 gate_auth_check(const struct gate_auth *,
			    const char *value, size_t len, char *session,
			    size_t sessionlen, unsigned char key[GATE_AUTH_KEY]);
int			 gate_auth_basic(const char *value, size_t len,
			    unsigned char *dec, size_t declen, size_t *ulen,
			    size_t *slen);

/* users.c: --users FILE (see the comment at its top for the format) */
#define USERS_MAX_FILE		(256 * 1024)
#define USERS_MAX_ENTRIES	1024
#define USERS_MAX_LINE		1024
#define USERS_MAX_SECRET	256
struct gate_users	*gate_users_parse(const char *buf, size_t len,
			    const char *path, char *err, size_t errlen);
void			 gate_users_free(struct gate_users *);
size_t			 gate_users_count(const struct gate_users *);
const char		*gate_users_name(const struct gate_users *, size_t);
unsigned		 gate_users_line(const struct gate_users *, size_t);
const char		*gate_users_policy_path(const struct gate_users *,
			    size_t);
struct policy		*gate_users_policy(const struct gate_users *, size_t);
void			 gate_users_set_policy(struct gate_users *, size_t,
			    struct policy *);
int			 gate_users_check(const struct gate_users *,
			    const char *value, size_t len, char *name,
			    size_t namelen, struct policy **pol);

/* control.c; gate_control_event() writes one JSON line to every
 * watcher (the "watch" command): at most GATE_CTL_WATCHERS of them, and
 * one whose unread output passes GATE_CTL_WATCH_MAX is dropped */
#define GATE_CTL_WATCHERS	8
#define GATE_CTL_WATCH_MAX	(64 * 1024)
int			 gate_control_listen(const char *path);
struct gate_control	*gate_control_open(struct gate *, const char *path,
			    int fd);
void			 gate_control_close(struct gate_control *);
void			 gate_control_event(struct gate_control *,
			    const char *line);

/*
 * conn/ask.c: --ask SECONDS, held requests (see the top of ask.c).  At
 * most GATE_ASK_PER_CRED held per credential (the --users user; the
 * token file's session with the key of the line it came through; the
 * whole gate without either) and GATE_ASK_MAX
 * per gate; at most GATE_ASK_GRANTS "session" grants per gate.
 * gate_ask_answer(): 0 when answered, -1 when the id is not held (gone),
 * -2 when a session grant found the table full (nothing answered).
 */
#define GATE_ASK_MIN_SECS	1
#define GATE_ASK_MAX_SECS	3600
#define GATE_ASK_PER_CRED	8
#define GATE_ASK_MAX		64
#define GATE_ASK_GRANTS		256
enum gate_ask_answer { GATE_ASK_ONCE, GATE_ASK_SESSION, GATE_ASK_DENY };
int			 gate_ask_init(struct gate *);
void			 gate_ask_free(struct gate *);
/* a reload applied: held requests the policy now allows go on by it */
void			 gate_ask_reallow(struct gate *);
void			 gate_ask_pending(struct gate *, struct evbuffer *);
/* a "held" line for each request held now: a new watcher's first lines */
void			 gate_ask_replay(struct gate *, struct evbuffer *);
/* status: "ask":{"seconds":..,"held":..,"grants":[..]}, or nothing */
void			 gate_ask_grants(struct gate *, struct evbuffer *);
int			 gate_ask_answer(struct gate *, uint64_t id,
			    enum gate_ask_answer, uid_t, pid_t);
/* the gate exits: every held request denied ("by":"exit") */
void			 gate_ask_deny_all(struct gate *);
/* a reload applied: held requests judged again (a removed user's denied) */
void			 gate_ask_reload(struct gate *);

/* metrics.c */
void			 gate_metrics_prepare(struct gate *);
void			 gate_metrics_worker(struct gate *, unsigned);
void			 gate_metrics_worker_gone(unsigned);
int			 gate_metrics_listen(const char *addr);
struct gate_metrics	*gate_metrics_open(struct gate *, int fd);
void			 gate_metrics_close(struct gate_metrics *);
void			 gate_metrics_decision(struct gate *, const char *,
			    const char *);
void			 gate_metrics_dns(struct gate_stats *, double, int);

/* health.c: /healthz and /readyz on the metrics listener */
struct gate_health;
struct gate_health_wait {
	TAILQ_ENTRY(gate_health_wait)	 entry;
	struct gate_health		*h;	/* NULL when not waiting */
	void				(*cb)(void *, int, const char *);
	void				*arg;
};
struct gate_health	*gate_health_new(struct gate *);
void			 gate_health_free(struct gate_health *);
int			 gate_health_ready(struct gate_health *,
			    struct gate_health_wait *,
			    void (*)(void *, int, const char *), void *,
			    char *, size_t);
void			 gate_health_cancel(struct gate_health_wait *);

/* watch.c: --watch, a reload when the configuration's files change */
struct gate_watch	*gate_watch_open(struct gate *);
void			 gate_watch_close(struct gate_watch *);

/* dnsgate.c: the AISB-DNS entry's per-session rate buckets */
void			 gate_dnsgate_free(struct gate *);

/* inspect.c: the gate's inspection: CA, TLS contexts, secrets */
int			 gate_inspect_init(struct gate *);
void			 gate_inspect_free(struct gate *);
/* the secrets it was given (inspect_pool.c); NULL: none */
const struct gate_secrets *gate_inspect_secrets(const struct gate *);
/* The kept upstream legs closed (a reload, the end): inspect.c */
void			 gate_inspect_pool_flush(struct gate *);
/* the CA's certificate, PEM (control "ca"); NULL: none */
char			*gate_inspect_ca_pem(struct gate *, size_t *);

/* secrets.c: --secrets-fd (see the comment at its top for the format) */
#define SECRETS_MAX		32
#define SECRETS_MAX_VALUE	4096
#define SECRETS_MIN_PLACEHOLDER	16
#define SECRETS_MAX_PLACEHOLDER	128
#define SECRETS_MAX_FILE	(160 * 1024)
struct gate_secret {
	const char	*name;
	size_t		 namelen;
	const char	*placeholder;
	size_t		 plen;
	const char	*value;
	size_t		 vlen;
};
struct gate_secrets	*gate_secrets_parse(const char *buf, size_t len,
			    char *err, size_t errlen);
struct gate_secrets	*gate_secrets_read(int fd, char *err, size_t errlen);
void			 gate_secrets_free(struct gate_secrets *);
size_t			 gate_secrets_count(const struct gate_secrets *);
const struct gate_secret *gate_secrets_at(const struct gate_secrets *,
			    size_t);
const struct gate_secret *gate_secrets_find(const struct gate_secrets *,
			    const char *name);
/*
 * synth.c: the names behind the synthetic addresses (see its top).
 * gate_synth_note() keeps what AISB-DNS answered a session (key: the
 * token file line's key of its credential, all zero without one; label:
 * the session's, the user's, or "@ADDR" without credentials): 0, or -1
 * when out of memory.  gate_synth_name() gives the name behind addr for
 * that session (the same key and label), or the one exact name of pol's
 * allow rules with that address: 0 with the name in out, -1 when the
 * gate never handed addr out.
 */
#define GATE_SYNTH_LABELS	64	/* sessions remembered */
#define GATE_SYNTH_NAMES	512	/* names per session */
struct gate_synth	*gate_synth_new(void);
void			 gate_synth_free(struct gate_synth *);
int			 gate_synth_note(struct gate_synth *,
			    const unsigned char key[GATE_AUTH_KEY],
			    const char *label, const char *name,
			    const uint8_t addr[4]);
int			 gate_synth_name(struct gate_synth *,
			    const struct policy *,
			    const unsigned char key[GATE_AUTH_KEY],
			    const char *label, const struct policy_addr *addr,
			    char *out, size_t len);

#endif /* AISB_GATE_H */
