/*
 * Direct mode: resolve, fill the sets, fork the command, keep refreshing.
 *
 *	aisb-enforce (root, all caps)
 *	  |- resolve every allowed name (c-ares, the plan's resolvers only)
 *	  |- add ADDRESS . PORT elements with timeouts, verify the table
 *	  |- fork ------------------------------> child: waits for "go",
 *	  |                                        own process group, drops
 *	  |                                        everything, execs CMD
 *	  |                                        (supervise.c)
 *	  |- drop to uid 0 + CAP_NET_ADMIN + CAP_KILL, write "go"
 *	  `- loop: re-resolve each name when its TTL is up, forward signals
 *	     to the command's process group, reap, exit with its status
 *
 * An element lives twice its name's (clamped) TTL and STUB_MARGIN_MS more:
 * one failed refresh is survived, two are not, and an address that left
 * the answer is gone after at most that long.  The stub hands an address
 * out only while more than STUB_MARGIN_MS of its life is left, so the
 * margin is added to the life rather than taken from it: with a TTL of one
 * second the address is still handed out when its refresh starts.  The
 * refresh is scheduled in milliseconds: with whole seconds it ran up to a
 * second late, into that margin, and the stub answered SERVFAIL for a name
 * whose address was still in the set.
 *
 * An address still in the answer is renewed: deleted and added again in
 * one batch, since before Linux 6.10 adding an element twice does not move
 * its expiry (6.10+ also renews through the expiration sent with each
 * element).
 *
 * The refresher's queries leave through the rule that matches its uid
 * (nft.c), placed before every accept that ignores the uid; the command's
 * uid has no such rule.  CAP_KILL is kept besides
 * CAP_NET_ADMIN because signals to the command, which runs as another uid,
 * need it.
 *
 * With a dns-stub line the refresher also answers the command's queries
 * (stub.c) from what it has put in the sets.
 *
 * Bounds: at most REFRESH_MAX_ADDRS addresses per name and family are kept
 * from one answer; answers are parsed by c-ares into fixed arrays.
 */
#include "config.h"

#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ares.h>

#include "exitcode.h"
#include "log.h"
#include "enforcer/refresh.h"
#include "enforcer/stub.h"
#include "enforcer/supervise.h"

#define REFRESH_MAX_ADDRS	16	/* per name and family, per answer */
#define REFRESH_MAX_KNOWN	(4 * REFRESH_MAX_ADDRS)	/* per name */
#define RENEW_MARGIN_MS		1000	/* closer to expiry: just add */
#define STUB_MARGIN_MS		1000	/* closer to expiry: not handed out */
#define QUERY_TIMEOUT_MS	2000
#define QUERY_TRIES		2

/* An address this name put in the sets, and when it leaves them. */
struct known {
	struct enf_addr		 addr;
	int64_t			 expires_ms;	/* monotonic */
};

struct name_state {
	const struct enf_name	*n;
	int64_t			 due_ms;	/* monotonic */
	int			 pending;	/* queries in flight */
	struct enf_addr		 addrs[2 * REFRESH_MAX_ADDRS];
	size_t			 naddrs;
	uint32_t		 ttl;		/* smallest TTL this round */
	struct known		 known[REFRESH_MAX_KNOWN];
	size_t			 nknown;
};

struct refresher {
	const struct enf_plan	*plan;
	struct name_state	 names[ENF_PLAN_MAX_NAMES];
	ares_channel		 ch;
	int			 active;	/* ch is initialised */
	int			 inflight;
	int			 stubfd;	/* -1 until the command runs */
};

struct query {
	struct refresher	*r;
	struct name_state	*ns;
	int			 family;
};

/* A monotonic clock that fails is a broken invariant: nothing is due. */
static int64_t
now_ms(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("clock_gettime");
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct known *
known_find(struct name_state *ns, const struct enf_addr *a)
{
	size_t	 i;

	for (i = 0; i < ns->nknown; i++)
		if (memcmp(&ns->known[i].addr, a, sizeof(*a)) == 0)
			return &ns->known[i];
	return NULL;
}

/* Forgets what has expired, then records a as living until expires. */
static void
known_update(struct name_state *ns, const struct enf_addr *a, int64_t now,
    int64_t expires)
{
	struct known	*k;
	size_t		 i, oldest = 0;

	for (i = 0; i < ns->nknown; )
		if (ns->known[i].expires_ms <= now)
			ns->known[i] = ns->known[--ns->nknown];
		else
			i++;
	if ((k = known_find(ns, a)) == NULL) {
		if (ns->nknown == REFRESH_MAX_KNOWN) {
			/* Full: forget the one leaving first (never renewed). */
			for (i = 1; i < ns->nknown; i++)
				if (ns->known[i].expires_ms <
				    ns->known[oldest].expires_ms)
					oldest = i;
			k = &ns->known[oldest];
		} else
			k = &ns->known[ns->nknown++];
		k->addr = *a;
	}
	k->expires_ms = expires;
}

static uint32_t
clamp_ttl(const struct enf_plan *plan, uint32_t ttl)
{
	if (ttl < plan->ttl_min)
		return plan->ttl_min;
	if (ttl > plan->ttl_max)
		return plan->ttl_max;
	return ttl;
}

static void
add_addr(const struct enf_plan *plan, struct name_state *ns, int family,
    const void *addr, int ttl)
{
	struct enf_addr	 a;
	const char	*why;
	size_t		 i, same = 0;

	memset(&a, 0, sizeof(a));
	a.family = family;
	memcpy(a.addr, addr, family == AF_INET ? 4 : 16);
	if (!enf_plan_addr_ok(plan, &a, &why)) {
		char	 s[INET6_ADDRSTRLEN];

		log_warnx("%s: refusing address %s (%s)", ns->n->name,
		    enf_addr_str(&a, s, sizeof(s)), why);
		return;
	}
	for (i = 0; i < ns->naddrs; i++) {
		if (memcmp(&ns->addrs[i], &a, sizeof(a)) == 0)
			return;
		if (ns->addrs[i].family == family)
			same++;
	}
	if (same == REFRESH_MAX_ADDRS)
		return;
	ns->addrs[ns->naddrs++] = a;
	if (ttl < 0)
		ttl = 0;
	if ((uint32_t)ttl < ns->ttl)
		ns->ttl = (uint32_t)ttl;
}

/* Puts the name's answer into the sets and schedules its next look-up. */
static void
name_done(struct refresher *r, struct name_state *ns)
{
	static struct nft_elem	 elems[2 * REFRESH_MAX_ADDRS *
				    ENF_PLAN_MAX_PORTS];
	const struct enf_plan	*plan = r->plan;
	struct known		*k;
	char			 err[256];
	size_t			 i, j, n = 0, renew = 0;
	uint32_t		 ttl;
	int64_t			 now = now_ms(), life;
	int			 rc;

	if (ns->naddrs == 0) {
		log_warnx("%s: no usable address; retrying in %us",
		    ns->n->name, plan->ttl_min);
		ns->due_ms = now + (int64_t)plan->ttl_min * 1000;
		return;
	}
	ttl = clamp_ttl(plan, ns->ttl);
	life = (int64_t)ttl * 2000 + STUB_MARGIN_MS;
	for (i = 0; i < ns->naddrs; i++) {
		k = known_find(ns, &ns->addrs[i]);
		for (j = 0; j < ns->n->nports; j++) {
			elems[n].addr = ns->addrs[i];
			elems[n].port = ns->n->ports[j];
			elems[n].timeout_ms = (uint32_t)life;
			elems[n].renew = k != NULL &&
			    k->expires_ms - now > RENEW_MARGIN_MS;
			renew += (size_t)elems[n].renew;
			n++;
		}
	}
	rc = nft_add_elems(elems, n, err, sizeof(err));
	if (rc == -1 && renew > 0) {
		/* One expired after all (ENOENT): add without deleting. */
		log_debug("%s: renewing: %s; adding instead", ns->n->name, err);
		for (i = 0; i < n; i++)
			elems[i].renew = 0;
		rc = nft_add_elems(elems, n, err, sizeof(err));
	}
	if (rc == -1) {
		/* Fail closed: what is in the sets times out by itself. */
		log_warnx("%s: adding addresses: %s", ns->n->name, err);
		ns->due_ms = now + (int64_t)plan->ttl_min * 1000;
		return;
	}
	for (i = 0; i < ns->naddrs; i++)
		known_update(ns, &ns->addrs[i], now, now + life);
	log_info("%s: %zu addresses for %lld ms", ns->n->name, ns->naddrs,
	    (long long)life);
	ns->due_ms = now + (int64_t)ttl * 1000;
}

static void
query_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct query		*q = arg;
	struct name_state	*ns = q->ns;
	struct ares_addrttl	 a4[REFRESH_MAX_ADDRS];
	struct ares_addr6ttl	 a6[REFRESH_MAX_ADDRS];
	int			 n = REFRESH_MAX_ADDRS, i;

	if (status == ARES_SUCCESS && q->family == AF_INET &&
	    ares_parse_a_reply(abuf, alen, NULL, a4, &n) == ARES_SUCCESS) {
		for (i = 0; i < n; i++)
			add_addr(q->r->plan, ns, AF_INET, &a4[i].ipaddr,
			    a4[i].ttl);
	} else if (status == ARES_SUCCESS && q->family == AF_INET6 &&
	    ares_parse_aaaa_reply(abuf, alen, NULL, a6, &n) == ARES_SUCCESS) {
		for (i = 0; i < n; i++)
			add_addr(q->r->plan, ns, AF_INET6, &a6[i].ip6addr,
			    a6[i].ttl);
	} else if (status != ARES_ENODATA && status != ARES_SUCCESS &&
	    status != ARES_EDESTRUCTION)
		log_info("%s: %s query: %s", ns->n->name,
		    q->family == AF_INET ? "A" : "AAAA", ares_strerror(status));
	q->r->inflight--;
	if (--ns->pending == 0 && status != ARES_EDESTRUCTION)
		name_done(q->r, ns);
	free(q);
}

static int
channel_open(struct refresher *r)
{
	static char			 lookups[] = "b";
	struct ares_options		 opts;
	struct ares_addr_port_node	 srv[ENF_PLAN_MAX_RESOLVERS];
	size_t				 i;

	/*
	 * Every setting c-ares would otherwise read from the image's
	 * resolv.conf, nsswitch.conf, host.conf or svc.conf, or from
	 * LOCALDOMAIN and RES_OPTIONS, is given here, so that it reads none
	 * of them: nothing of the image decides how the refresher resolves.
	 * No servers yet (the plan's follow), no search domains, no sort
	 * list, DNS only ("b": never /etc/hosts).
	 */
	memset(&opts, 0, sizeof(opts));
	opts.flags = ARES_FLAG_NOSEARCH;
	opts.timeout = QUERY_TIMEOUT_MS;
	opts.tries = QUERY_TRIES;
	opts.ndots = 1;
	opts.nservers = 0;
	opts.ndomains = 0;
	opts.nsort = 0;
	opts.lookups = lookups;
	if (ares_init_options(&r->ch, &opts, ARES_OPT_FLAGS |
	    ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_NDOTS |
	    ARES_OPT_SERVERS | ARES_OPT_DOMAINS | ARES_OPT_SORTLIST |
	    ARES_OPT_LOOKUPS | ARES_OPT_NOROTATE) != ARES_SUCCESS)
		return -1;
	memset(srv, 0, sizeof(srv));
	for (i = 0; i < r->plan->nresolvers; i++) {
		const struct enf_endpoint	*e = &r->plan->resolvers[i];

		srv[i].next = i + 1 < r->plan->nresolvers ? &srv[i + 1] : NULL;
		srv[i].family = e->addr.family;
		memcpy(&srv[i].addr, e->addr.addr,
		    e->addr.family == AF_INET ? 4 : 16);
		srv[i].udp_port = srv[i].tcp_port = e->port;
	}
	/* Only the plan's resolvers: the rules let nothing else out. */
	if (ares_set_servers_ports(r->ch, srv) != ARES_SUCCESS) {
		ares_destroy(r->ch);
		return -1;
	}
	r->active = 1;
	return 0;
}

static void
round_end_if_idle(struct refresher *r)
{
	if (r->active && r->inflight == 0) {
		ares_destroy(r->ch);
		r->active = 0;
	}
}

/* A and AAAA for one name; 0, or -1 with nothing sent. */
static int
name_query(struct refresher *r, struct name_state *ns)
{
	struct query	*q[2];
	int		 f;

	q[0] = calloc(1, sizeof(*q[0]));
	q[1] = calloc(1, sizeof(*q[1]));
	if (q[0] == NULL || q[1] == NULL) {
		free(q[0]);
		free(q[1]);
		return -1;
	}
	ns->naddrs = 0;
	ns->ttl = UINT32_MAX;
	ns->pending = 2;
	r->inflight += 2;
	for (f = 0; f < 2; f++) {
		q[f]->r = r;
		q[f]->ns = ns;
		q[f]->family = f == 0 ? AF_INET : AF_INET6;
		/* The callback may run at once (and free q[f]). */
		ares_query(r->ch, ns->n->name, 1 /* C_IN */,
		    f == 0 ? 1 /* A */ : 28 /* AAAA */, query_cb, q[f]);
	}
	return 0;
}

/*
 * Starts a round of look-ups for the names that are due.  A name that
 * cannot be queried now is tried again after dns-min-ttl.
 */
static void
round_start(struct refresher *r)
{
	int64_t	 now = now_ms();
	size_t	 i;

	if (r->active)
		return;
	for (i = 0; i < r->plan->nnames; i++) {
		struct name_state	*ns = &r->names[i];

		if (ns->due_ms > now)
			continue;
		if ((!r->active && channel_open(r) == -1) ||
		    name_query(r, ns) == -1) {
			log_warnx("%s: cannot start a look-up; retrying in %us",
			    ns->n->name, r->plan->ttl_min);
			ns->due_ms = now + (int64_t)r->plan->ttl_min * 1000;
		}
	}
	round_end_if_idle(r);
}

/* Milliseconds until the next name is due (at most an hour). */
static int64_t
next_due(const struct refresher *r)
{
	int64_t	 now = now_ms(), best = 3600 * 1000;
	size_t	 i;

	for (i = 0; i < r->plan->nnames; i++) {
		int64_t	 d = r->names[i].due_ms - now;

		if (d < best)
			best = d < 0 ? 0 : d;
	}
	return best;
}

/* The stub's view: what is in the sets for a name, and for how long. */
static int
stub_lookup(void *ctx, const char *name, int family,
    struct enf_stub_answer *ans)
{
	struct refresher	*r = ctx;
	struct name_state	*ns = NULL;
	int64_t			 now = now_ms();
	size_t			 i;
	int			 alive = 0;

	for (i = 0; i < r->plan->nnames; i++)
		if (strcmp(r->names[i].n->name, name) == 0) {
			ns = &r->names[i];
			break;
		}
	if (ns == NULL)
		return -1;
	for (i = 0; i < ns->nknown; i++) {
		const struct known	*k = &ns->known[i];

		/* an address about to leave the sets is not handed out */
		if (k->expires_ms - now <= STUB_MARGIN_MS)
			continue;
		alive = 1;
		if (k->addr.family != family ||
		    ans->n == ENF_STUB_MAX_ADDRS)
			continue;
		ans->addrs[ans->n] = k->addr;
		/* half its life left: a client's cache outlives it never */
		ans->ttl[ans->n] = (uint32_t)((k->expires_ms - now) / 2000);
		ans->n++;
	}
	return alive;
}

/* Answers what the stub socket holds, a bounded number at a time. */
static void
stub_serve(struct refresher *r)
{
	struct sockaddr_storage	 from;
	socklen_t		 fromlen;
	uint8_t			 q[ENF_STUB_MAX_MSG], out[ENF_STUB_MAX_MSG];
	ssize_t			 n;
	size_t			 len;
	int			 i;

	for (i = 0; i < 64; i++) {
		fromlen = sizeof(from);
		n = recvfrom(r->stubfd, q, sizeof(q), MSG_TRUNC,
		    (struct sockaddr *)&from, &fromlen);
		if (n == -1) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("dns-stub: recvfrom");
			return;
		}
		if ((size_t)n > sizeof(q))
			continue;	/* larger than plain DNS: dropped */
		len = enf_stub_answer(q, (size_t)n, out, sizeof(out),
		    stub_lookup, r);
		if (len > 0 && sendto(r->stubfd, out, len, 0,
		    (struct sockaddr *)&from, fromlen) == -1 &&
		    errno != EAGAIN)
			log_warn("dns-stub: sendto");
	}
}

/*
 * One wait for c-ares sockets, its timeouts, the next due name and (when
 * sigfd != -1) a signal.  Returns 1 when sigfd is readable, 0 otherwise.
 */
static int
pump(struct refresher *r, int sigfd)
{
	fd_set		 rfds, wfds;
	struct timeval	 tv, *tvp, maxtv;
	int64_t		 due = next_due(r);
	int		 nfds = 0, n;

	FD_ZERO(&rfds);
	FD_ZERO(&wfds);
	maxtv.tv_sec = (time_t)(due / 1000);
	maxtv.tv_usec = (suseconds_t)(due % 1000) * 1000;
	if (r->active) {
		nfds = ares_fds(r->ch, &rfds, &wfds);
		tvp = ares_timeout(r->ch, &maxtv, &tv);
	} else
		tvp = &maxtv;
	if (sigfd != -1) {
		FD_SET(sigfd, &rfds);
		if (sigfd + 1 > nfds)
			nfds = sigfd + 1;
	}
	if (r->stubfd != -1) {
		FD_SET(r->stubfd, &rfds);
		if (r->stubfd + 1 > nfds)
			nfds = r->stubfd + 1;
	}
	n = select(nfds, &rfds, &wfds, NULL, tvp);
	if (n == -1) {
		if (errno != EINTR)
			log_warn("select");
		FD_ZERO(&rfds);
		FD_ZERO(&wfds);
	}
	if (r->active)
		ares_process(r->ch, &rfds, &wfds);
	round_end_if_idle(r);
	if (n > 0 && r->stubfd != -1 && FD_ISSET(r->stubfd, &rfds))
		stub_serve(r);
	return sigfd != -1 && n > 0 && FD_ISSET(sigfd, &rfds);
}

/*
 * Before "go": the child must never exec.  Closing the pipe alone ends it
 * (it reads EOF and exits 77); SIGKILL makes sure, and it is reaped.
 */
static void
stop_child(pid_t pid, int go[2])
{
	if (kill(pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("killing the command's process");
	(void)close(go[1]);
	go[1] = -1;
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

int
enf_direct_run(const struct enf_plan *plan, struct nft_ruleset *rs,
    struct enf_recorder *rec, const struct enf_creds *creds, const int *keep,
    size_t nkeep, char **cmd)
{
	struct refresher		*r;
	struct signalfd_siginfo		 si;
	sigset_t			 set, oldmask;
	char				 err[1200];
	size_t				 i;
	pid_t				 pid, parent = getpid();
	int				 go[2] = { -1, -1 }, sigfd = -1;
	int				 stubfd = -1, fg;
	int				 status = EXIT_ENFORCE;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_warn("refresher");
		return EXIT_ENFORCE;
	}
	r->plan = plan;
	r->stubfd = -1;
	for (i = 0; i < plan->nnames; i++)
		r->names[i].n = &plan->names[i];
	if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS) {
		log_warnx("c-ares initialisation failed");
		free(r);
		return EXIT_ENFORCE;
	}

	/* First round, before anything runs: wait for every answer. */
	round_start(r);
	while (r->active)
		(void)pump(r, -1);

	if (nft_verify(rs, err, sizeof(err)) == -1) {
		log_warnx("verifying table inet %s: %s", NFT_TABLE, err);
		goto out;
	}
	/* Bound while privileged (port 53); the command must not get it. */
	if (plan->has_stub &&
	    (stubfd = enf_stub_open(&plan->stub, err, sizeof(err))) == -1) {
		log_warnx("%s", err);
		goto out;
	}

	if (sigemptyset(&set) == -1 || sigaddset(&set, SIGCHLD) == -1) {
		log_warn("signals");
		goto out;
	}
	for (i = 0; i < enf_nforwarded; i++)
		if (sigaddset(&set, enf_forwarded[i]) == -1) {
			log_warn("signal %d", enf_forwarded[i]);
			goto out;
		}
	if (sigprocmask(SIG_BLOCK, &set, &oldmask) == -1 ||
	    (sigfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1 ||
	    pipe2(go, O_CLOEXEC) == -1) {
		log_warn("signals");
		goto out;
	}
	fg = enf_is_foreground();
	if ((pid = fork()) == -1) {
		log_warn("fork");
		goto out;
	}
	if (pid == 0) {
		(void)close(go[1]);
		enf_cmd_child(go[0], &oldmask, parent, fg, creds, keep, nkeep,
		    cmd);
	}
	(void)close(go[0]);
	go[0] = -1;
	(void)setpgid(pid, pid);	/* as the child does: supervise.c */

	/*
	 * Keep only the signal descriptor, the "go" pipe, the stub and the
	 * recorder's pipes.
	 */
	{
		int	 mine[5] = { sigfd, go[1], stubfd, -1, -1 };
		size_t	 nmine = 2;

		if (stubfd != -1)
			nmine++;
		nmine += enf_record_fds(rec, mine + nmine);
		if (enf_close_fds(mine, nmine, err, sizeof(err)) == -1 ||
		    enf_drop_to_refresher(err, sizeof(err)) == -1) {
			log_warnx("refresher: %s", err);
			stop_child(pid, go);
			goto out;
		}
	}
	/* A child gone before "go" must cost an error, not this process. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		log_warn("refresher: SIGPIPE");
		stop_child(pid, go);
		goto out;
	}
	if (write(go[1], "g", 1) != 1) {
		log_warn("refresher: go");
		stop_child(pid, go);
		goto out;
	}
	(void)close(go[1]);
	go[1] = -1;
	r->stubfd = stubfd;

	for (;;) {
		round_start(r);
		if (!pump(r, sigfd))
			continue;
		if (read(sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGCHLD) {
			if (enf_reap(pid, &status))
				break;
			continue;
		}
		enf_forward(pid, (int)si.ssi_signo);
	}
	/* what the command's last packets logged, before we exit */
	enf_record_stop(rec);
out:
	if (r->active)
		ares_destroy(r->ch);
	ares_library_cleanup();
	if (sigfd != -1)
		(void)close(sigfd);
	if (stubfd != -1)
		(void)close(stubfd);
	if (go[0] != -1)
		(void)close(go[0]);
	if (go[1] != -1)
		(void)close(go[1]);
	free(r);
	return status;
}
