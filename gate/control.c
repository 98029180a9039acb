/*
 * The control socket: a unix stream socket, mode 0600, one command per
 * connection.  Commands (one line, at most GATE_CTL_MAX_LINE bytes; the
 * line is read by gate_ctl_parse(), ctlcmd.c):
 *   status	JSON: counters, policy identity, live tunnels
 *   reload	same as SIGHUP; answers {"reload":"ok"} or {"reload":"failed"},
 *		with a token file {"reload":..,"credentials":"applied"|"kept"}
 *   reopen	same as SIGUSR1 (the audit log); {"reopen":"ok"|"failed"}
 *   ca		the certificate of the CA of inspected hosts (public):
 *		{"ca":"-----BEGIN CERTIFICATE-----\n..."}, or {"ca":null}
 * and for --ask (conn/ask.c, docs/gate.md "Held requests"):
 *   pending	{"pending":[{"id":N,"host":..,...},...]}
 *   approve N once|session, deny N
 *		{"approve":"ok"|"gone"}, {"deny":"ok"|"gone"}; the answer is
 *		audited with the peer's uid and pid (SO_PEERCRED)
 *   watch	the connection stays open: one JSON line per held request
 *		({"held":{...}}, those held already first) and per answer
 *		({"answered":{"id":N,"answer":..}}); at most
 *		GATE_CTL_WATCHERS, never timed out, and dropped once
 *		GATE_CTL_WATCH_MAX bytes wait unread
 * Anyone who can open the socket can read the status and answer held
 * requests, so it is created with umask 077 and checked for its mode; its
 * directory is the caller's.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "gate/gate.h"
#include "gate/ctlcmd.h"

#define CONTROL_TIMEOUT		5	/* s, for the command and the answer */

struct gate_control {
	struct gate		*g;
	struct evconnlistener	*listener;
	char			*path;
	struct bufferevent	*watchers[GATE_CTL_WATCHERS];	/* NULL: free */
};

static void
ctl_close(struct bufferevent *bev)
{
	bufferevent_free(bev);
}

/* --- watch ------------------------------------------------------------ */

static void
watch_drop(struct gate_control *ctl, struct bufferevent *bev)
{
	size_t	 i;

	for (i = 0; i < GATE_CTL_WATCHERS; i++)
		if (ctl->watchers[i] == bev)
			ctl->watchers[i] = NULL;
	bufferevent_free(bev);
}

/* A watcher says nothing after "watch": what it sends is discarded. */
static void
watch_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer	*in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

static void
watch_event(struct bufferevent *bev, short what, void *arg)
{
	watch_drop(arg, bev);
}

/* 0 once bev watches, -1 when GATE_CTL_WATCHERS already do. */
static int
watch_start(struct gate_control *ctl, struct bufferevent *bev)
{
	size_t	 i;

	for (i = 0; i < GATE_CTL_WATCHERS; i++)
		if (ctl->watchers[i] == NULL)
			break;
	if (i == GATE_CTL_WATCHERS)
		return -1;
	ctl->watchers[i] = bev;
	/* idle for hours is what a watcher does: no timeouts */
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_setcb(bev, watch_read, NULL, watch_event, ctl);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	gate_ask_replay(ctl->g, bufferevent_get_output(bev));
	return 0;
}

void
gate_control_event(struct gate_control *ctl, const char *line)
{
	struct evbuffer	*out;
	size_t		 i, len = strlen(line);

	if (ctl == NULL)
		return;
	for (i = 0; i < GATE_CTL_WATCHERS; i++) {
		if (ctl->watchers[i] == NULL)
			continue;
		out = bufferevent_get_output(ctl->watchers[i]);
		/* a watcher that does not read must not hold the gate's memory */
		if (evbuffer_get_length(out) + len > GATE_CTL_WATCH_MAX ||
		    evbuffer_add(out, line, len) == -1) {
			log_warnx("control: a watcher that does not read, "
			    "dropped");
			watch_drop(ctl, ctl->watchers[i]);
		}
	}
}

/* --- commands --------------------------------------------------------- */

static void
ctl_written(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		ctl_close(bev);
}

static void
ctl_status(struct gate *g, struct evbuffer *out)
{
	const struct gate_counters	*k = &g->num->ctr;
	char				 file[1024], addr[128];
	struct timespec			 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	gate_json_str(file, sizeof(file), policy_file(g->policy));
	gate_sockaddr_str(&g->bound, addr, sizeof(addr));
	evbuffer_add_printf(out, "{\"pid\":%ld,\"worker\":%u,\"workers\":%u,"
	    "\"uptime_s\":%lld,"
	    "\"listen\":\"%s\",\"draining\":%s,"
	    "\"policy\":{\"file\":%s,\"sha256\":\"%s\"},\"dns_cache\":%zu,",
	    (long)getpid(), g->worker, g->cfg.workers,
	    (long long)(now.tv_sec - g->started.tv_sec), addr,
	    g->draining ? "true" : "false", file, policy_sha256(g->policy),
	    gate_dns_cache_size(g->dns));
	gate_ask_grants(g, out);	/* --ask: its grants */
	/* --learn: the policy is not enforced (docs/gate.md) */
	evbuffer_add_printf(out, "\"learn\":%s,", g->cfg.learn ? "true" :
	    "false");
#define C(name)	evbuffer_add_printf(out, "\"" #name "\":%llu,", \
	    (unsigned long long)k->name)
	evbuffer_add_printf(out, "\"counters\":{");
	C(accepted); C(active); C(tunnels); C(rejected_limit); C(rejected_audit); C(allowed); C(denied); C(bad_request);
	C(auth_failed); C(dns_failed); C(dns_stale); C(connect_failed);
	C(connect_timeout); C(header_timeout); C(idle_timeout);
	C(audit_errors); C(reloads); C(reload_failures); C(bytes_up);
	C(bytes_down); C(raw); C(bytes_spliced); C(pipe_shortage);
	C(transparent);		/* AISB-TRANSPARENT */
	C(inspected); C(insp_requests); C(insp_refused);	/* inspect.c */
	C(insp_reused); C(insp_redialed);
#undef C
	evbuffer_add_printf(out, "\"relay_copies\":%llu},"
	    "\"pipes\":{\"max\":%u,\"open\":%u,\"idle\":%u},\"tunnels\":",
	    (unsigned long long)k->relay_copies, g->cfg.splice ?
	    g->cfg.max_pipes : 0, g->pipes_total, g->pipes_idle);
	gate_conns_status(g, out);
	evbuffer_add_printf(out, "}\n");
}

static void	ctl_event(struct bufferevent *, short, void *);

/* The inspecting CA's certificate: public, what a client must trust. */
static void
ctl_ca(struct gate *g, struct evbuffer *out)
{
	char	*pem, *json;
	size_t	 len;

	if ((pem = gate_inspect_ca_pem(g, &len)) == NULL) {
		evbuffer_add_printf(out, "{\"ca\":null}\n");
		return;
	}
	/* PEM is printable ASCII and line feeds: each escapes to 2 bytes */
	if ((json = malloc(2 * len + 3)) != NULL) {
		gate_json_str(json, 2 * len + 3, pem);
		evbuffer_add_printf(out, "{\"ca\":%s}\n", json);
		free(json);
	}
	free(pem);
}

/*
 * approve N once|session, deny N: answered as the peer that asked, by
 * its uid and pid (SO_PEERCRED), which the audit line names.
 */
static void
ctl_answer(struct gate_control *ctl, struct bufferevent *bev, int cmd,
    uint64_t id, struct evbuffer *out)
{
	struct ucred		 uc;
	socklen_t		 len = sizeof(uc);
	const char		*verb = cmd == GATE_CTL_DENY ? "deny" : "approve";
	enum gate_ask_answer	 ans = cmd == GATE_CTL_DENY ? GATE_ASK_DENY :
				    cmd == GATE_CTL_APPROVE_ONCE ?
				    GATE_ASK_ONCE : GATE_ASK_SESSION;
	int			 rc;

	if (getsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_PEERCRED, &uc,
	    &len) == -1) {
		/* no answer that cannot say who gave it */
		log_warn("control: SO_PEERCRED");
		evbuffer_add_printf(out, "{\"error\":\"who is asking is "
		    "unknown\"}\n");
		return;
	}
	rc = gate_ask_answer(ctl->g, id, ans, uc.uid, uc.pid);
	evbuffer_add_printf(out, "{\"%s\":\"%s\"}\n", verb, rc == 0 ? "ok" :
	    rc == -1 ? "gone" : "full");
}

static void
ctl_read(struct bufferevent *bev, void *arg)
{
	struct gate_control	*ctl = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer		*out = bufferevent_get_output(bev);
	const char		*p;
	size_t			 len = evbuffer_get_length(in), used;
	uint64_t		 id;
	int			 cmd, rc;

	if (len > GATE_CTL_MAX_LINE + 1)
		len = GATE_CTL_MAX_LINE + 1;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) == NULL) {
		ctl_close(bev);
		return;
	}
	if ((cmd = gate_ctl_parse(p, len, &used, &id)) == GATE_CTL_MORE)
		return;
	if (cmd == GATE_CTL_TOO_LONG) {
		ctl_close(bev);
		return;
	}
	bufferevent_disable(bev, EV_READ);
	if (cmd == GATE_CTL_STATUS)
		ctl_status(ctl->g, out);
	else if (cmd == GATE_CTL_RELOAD) {
		/* with workers, the supervisor passes a SIGHUP to the others */
		if (ctl->g->cfg.workers > 1 && kill(getppid(), SIGHUP) == -1)
			log_warn("reload: telling the other workers");
		rc = gate_reload(ctl->g);
		/* with a token file: whether a withdrawn credential is gone,
		 * which a refused policy does not stop */
		if (ctl->g->cfg.token_file != NULL)
			evbuffer_add_printf(out, "{\"reload\":\"%s\","
			    "\"credentials\":\"%s\"}\n", rc == 0 ? "ok" :
			    "failed", ctl->g->auth_kept ? "kept" : "applied");
		else
			evbuffer_add_printf(out, "{\"reload\":\"%s\"}\n",
			    rc == 0 ? "ok" : "failed");
	}
	else if (cmd == GATE_CTL_REOPEN) {
		/* with workers, the supervisor passes a SIGUSR1 to the others */
		if (ctl->g->cfg.workers > 1 && kill(getppid(), SIGUSR1) == -1)
			log_warn("reopen: telling the other workers");
		evbuffer_add_printf(out, "{\"reopen\":\"%s\"}\n",
		    gate_audit_rotate(ctl->g) == 0 ? "ok" : "failed");
	}
	else if (cmd == GATE_CTL_CA)
		ctl_ca(ctl->g, out);
	else if (cmd == GATE_CTL_PENDING)
		gate_ask_pending(ctl->g, out);
	else if (cmd == GATE_CTL_APPROVE_ONCE ||
	    cmd == GATE_CTL_APPROVE_SESSION || cmd == GATE_CTL_DENY)
		ctl_answer(ctl, bev, cmd, id, out);
	else if (cmd == GATE_CTL_WATCH) {
		evbuffer_drain(in, used);
		if (watch_start(ctl, bev) == 0)
			return;
		evbuffer_add_printf(out, "{\"error\":\"too many watchers\"}\n");
	} else
		evbuffer_add_printf(out, "{\"error\":\"unknown command\"}\n");
	bufferevent_setcb(bev, NULL, ctl_written, ctl_event, ctl);
}

static void
ctl_event(struct bufferevent *bev, short what, void *arg)
{
	ctl_close(bev);
}

static void
ctl_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct gate_control	*ctl = arg;
	struct bufferevent	*bev;
	struct timeval		 tv = { CONTROL_TIMEOUT, 0 };

	if ((bev = bufferevent_socket_new(ctl->g->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return;
	}
	bufferevent_setcb(bev, ctl_read, NULL, ctl_event, ctl);
	bufferevent_setwatermark(bev, EV_READ, 0, GATE_CTL_MAX_LINE + 1);
	bufferevent_set_timeouts(bev, &tv, &tv);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/*
 * The listening socket at path, mode 0600; -1 on failure (logged).  Made
 * before privileges are dropped and before workers are forked, so that it
 * is separate from gate_control_open(), which serves it in a loop.
 */
int
gate_control_listen(const char *path)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("control socket path too long: %s", path);
		return -1;
	}
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
	/* A stale socket of a dead gate is replaced; anything else is not. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s exists and is not a socket", path);
			return -1;
		}
		if (unlink(path) == -1) {
			log_warn("unlink %s", path);
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("control socket");
		return -1;
	}
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		log_warn("bind %s", sun.sun_path);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(sun.sun_path, 0600) == -1 || listen(fd, 16) == -1) {
		log_warn("control socket %s", sun.sun_path);
		close(fd);
		unlink(sun.sun_path);
		return -1;
	}
	return fd;
}

/* Serve the socket fd of gate_control_listen() in g's loop; owns fd. */
struct gate_control *
gate_control_open(struct gate *g, const char *path, int fd)
{
	struct gate_control	*ctl;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL ||
	    (ctl->path = strdup(path)) == NULL)
		goto fail;
	ctl->g = g;
	if ((ctl->listener = evconnlistener_new(g->base, ctl_accept, ctl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) == NULL)
		goto fail;
	return ctl;
 fail:
	close(fd);
	unlink(path);
	if (ctl != NULL)
		free(ctl->path);
	free(ctl);
	return NULL;
}

void
gate_control_close(struct gate_control *ctl)
{
	size_t	 i;

	if (ctl == NULL)
		return;
	for (i = 0; i < GATE_CTL_WATCHERS; i++)
		if (ctl->watchers[i] != NULL)
			bufferevent_free(ctl->watchers[i]);
	evconnlistener_free(ctl->listener);
	if (unlink(ctl->path) == -1 && errno != ENOENT)
		log_warn("unlink %s", ctl->path);
	free(ctl->path);
	free(ctl);
}
