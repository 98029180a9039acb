/*
 * Direct mode's recorder (record.h): NFLOG group NFT_RECORD_GROUP to a
 * pcapng file, link type RAW.
 *
 *	aisb-enforce (root, all caps)
 *	  |- fork --------------------> recorder: own process group, creates
 *	  |                             the file, binds the group (copy mode
 *	  |                             packet, queue threshold 1), drops to
 *	  |                             uid 0 with no capability, says "r"
 *	  |- waits for "r" (else 77)
 *	  |- loads nothing more: the refresher and the command (refresh.c)
 *	  `- at the command's end: closes "end"; the recorder drains what is
 *	     queued (and what follows within RECORD_IDLE_MS, RECORD_DRAIN_MS
 *	     at most), closes the file and exits; its "ready" pipe then reads
 *	     end of file
 *
 * Each packet is one enhanced packet block written with one write(2)
 * (pcapng.c), so the file ends at a complete block after any exit.  The
 * comment of a block is the NFLOG prefix of the rule that logged it
 * ("aisb accept", "aisb drop", "aisb drop dns": nft.h); packets logged
 * without a prefix get none.  The first packet after the kernel dropped
 * messages (ENOBUFS: the socket buffer overran) also says RECORD_GAP.  The time is the kernel's (NFULA_TIMESTAMP)
 * when it gives one that is plausible, else the time the message is read:
 * the kernel stamps packets on their way in, not those on their way out
 * (and TCP's outgoing segments carry a departure time on another clock).
 * The message is read at once (queue threshold 1), so the two differ by
 * microseconds.
 *
 * Bounds: one netlink message is at most RECORD_BUF bytes (a packet of at
 * most 65535 bytes, the copy range, and its attributes); a longer one is
 * truncated by recvmsg and mnl_socket_recvfrom refuses it.  A payload
 * over PCAPNG_SNAPLEN is not written (counted).  The prefix is a NUL
 * terminated string of at most 128 bytes (the kernel's bound).
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <libmnl/libmnl.h>

#include "exitcode.h"
#include "log.h"
#include "enforcer/nft.h"
#include "pcapng.h"
#include "enforcer/privdrop.h"
#include "enforcer/record.h"

#define RECORD_BUF		(128 * 1024)
#define RECORD_RCVBUF		(32 * 1024 * 1024)	/* socket buffer, at most */
#define RECORD_COPY		0xffff	/* bytes of each packet copied */
#define RECORD_START_MS		10000	/* the recorder's set-up, at most */
#define RECORD_IDLE_MS		100	/* drain: quiet this long, done */
#define RECORD_DRAIN_MS		1000	/* drain: at most this long */
#define RECORD_ACK_SEC		5
#define RECORD_TS_SLACK		60	/* seconds a kernel stamp may be off */
#define RECORD_GAP		"aisb gap: packets lost before this one"

struct enf_recorder {
	pid_t	 pid;
	int	 end;		/* write end: closed to stop the recorder */
	int	 ready;		/* read end: "r", then end of file at exit */
};

/* The recorder's own state, in the child. */
struct rec {
	struct pcapng	*w;
	const char	*path;
	uint64_t	 max;
	uint64_t	 packets;
	uint64_t	 skipped;	/* over PCAPNG_SNAPLEN */
	uint64_t	 overruns;	/* ENOBUFS: the kernel dropped some */
	int		 gap;		/* the next packet follows a loss */
	int		 done;		/* full or failed: stop reading */
	int		 rc;
};

static int64_t
mono_ms(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The folder of path: not the sandbox uid's, and writable by its owner
 * alone, so the command can neither remove nor replace the capture (the
 * file itself is 0600 and the enforcer's).  Returns an O_PATH-like
 * descriptor of the folder, or -1 after saying why.
 */
static int
open_folder(const char *path, uid_t sandbox_uid, const char **base)
{
	char		 dir[ENF_PLAN_MAX_PATH + 1];
	const char	*slash = strrchr(path, '/');
	struct stat	 st;
	size_t		 n;
	int		 fd;

	/* plan.c: absolute, no empty or dot components, not ending in '/' */
	n = slash == path ? 1 : (size_t)(slash - path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	*base = slash + 1;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1) {
		log_warn("record: folder %s", dir);
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		log_warn("record: folder %s", dir);
		(void)close(fd);
		return -1;
	}
	if (st.st_uid == sandbox_uid || (st.st_mode & 022) != 0) {
		log_warnx("record: folder %s is owned by uid %u, mode %04o: "
		    "the sandbox (uid %u) could remove or replace the capture; "
		    "it must belong to another uid and be writable by its "
		    "owner only (chmod 0700)", dir, (unsigned)st.st_uid,
		    (unsigned)(st.st_mode & 07777), (unsigned)sandbox_uid);
		(void)close(fd);
		return -1;
	}
	return fd;
}

static int
attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr	**tb = data;
	uint16_t		  type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, NFULA_MAX) < 0)
		return MNL_CB_OK;	/* newer than this code: skipped */
	switch (type) {
	case NFULA_TIMESTAMP:
		if (mnl_attr_validate2(a, MNL_TYPE_UNSPEC,
		    sizeof(struct nfulnl_msg_packet_timestamp)) < 0)
			return MNL_CB_ERROR;
		break;
	case NFULA_PREFIX:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		break;
	default:
		break;
	}
	tb[type] = a;
	return MNL_CB_OK;
}

/* The kernel's stamp when it has a plausible one, else now. */
static void
packet_time(const struct nlattr *a, struct timespec *ts)
{
	struct nfulnl_msg_packet_timestamp	 t;
	uint64_t				 sec, usec;

	if (clock_gettime(CLOCK_REALTIME, ts) == -1)
		ts->tv_sec = ts->tv_nsec = 0;
	if (a == NULL)
		return;
	memcpy(&t, mnl_attr_get_payload(a), sizeof(t));
	sec = be64toh(t.sec);
	usec = be64toh(t.usec);
	if (usec >= 1000000 || sec + RECORD_TS_SLACK < (uint64_t)ts->tv_sec ||
	    sec > (uint64_t)ts->tv_sec + RECORD_TS_SLACK)
		return;
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)usec * 1000;
}

static int
packet_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct rec		*r = arg;
	const struct nlattr	*tb[NFULA_MAX + 1];
	const char		*comment = NULL;
	char			 gap[160];	/* prefix (128) and RECORD_GAP */
	struct timespec		 ts;
	size_t			 len;
	int			 rc;

	if (nlh->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
		return MNL_CB_OK;
	memset(tb, 0, sizeof(tb));
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb) < 0 ||
	    tb[NFULA_PAYLOAD] == NULL) {
		r->skipped++;
		return MNL_CB_OK;
	}
	len = mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]);
	if (len == 0 || len > PCAPNG_SNAPLEN) {
		r->skipped++;
		return MNL_CB_OK;
	}
	if (tb[NFULA_PREFIX] != NULL &&
	    mnl_attr_get_str(tb[NFULA_PREFIX])[0] != '\0')
		comment = mnl_attr_get_str(tb[NFULA_PREFIX]);
	/* the capture itself says where packets are missing */
	if (r->gap) {
		snprintf(gap, sizeof(gap), "%s%s" RECORD_GAP,
		    comment != NULL ? comment : "", comment != NULL ? "; " : "");
		comment = gap;
	}
	packet_time(tb[NFULA_TIMESTAMP], &ts);
	rc = pcapng_write(r->w, &ts, mnl_attr_get_payload(tb[NFULA_PAYLOAD]),
	    len, comment);
	if (rc == 1) {
		log_warnx("record: limit of %llu bytes reached after %llu "
		    "packets; recording stopped, the session goes on",
		    (unsigned long long)r->max,
		    (unsigned long long)r->packets);
		r->done = 1;
		return MNL_CB_STOP;
	}
	if (rc == -1) {
		log_warn("record: writing %s; recording stopped", r->path);
		r->done = 1;
		r->rc = 1;
		return MNL_CB_STOP;
	}
	r->packets++;
	r->gap = 0;
	return MNL_CB_OK;
}

/*
 * Binds the group with packet copies and a queue threshold of one (each
 * packet its own message, sent at once) and waits for the kernel's ACK;
 * packets that come before it are written.  0 or -1 after saying why.
 */
static int
nflog_bind(struct mnl_socket *nl, struct rec *r, char *buf)
{
	struct nlmsghdr			*nlh;
	struct nfgenmsg			*nfg;
	struct nfulnl_msg_config_cmd	 cmd = { .command = NFULNL_CFG_CMD_BIND };
	struct nfulnl_msg_config_mode	 mode;
	struct timeval			 tv = { .tv_sec = RECORD_ACK_SEC };
	uint32_t			 seq = (uint32_t)time(NULL);
	uint32_t			 portid = mnl_socket_get_portid(nl);
	int				 size = RECORD_RCVBUF, fd, ret;
	ssize_t				 n;

	fd = mnl_socket_get_fd(nl);
	/* FORCE needs CAP_NET_ADMIN, which it has until the drop */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
	    sizeof(size)) == -1 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) == -1)
		log_warn("record: socket buffer");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1) {
		log_warn("record: SO_RCVTIMEO");
		return -1;
	}

	memset(&mode, 0, sizeof(mode));
	mode.copy_mode = NFULNL_COPY_PACKET;
	mode.copy_range = htonl(RECORD_COPY);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(NFT_RECORD_GROUP);
	mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
	mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(mode), &mode);
	mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1) {
		log_warn("record: netlink send");
		return -1;
	}
	do {
		if ((n = mnl_socket_recvfrom(nl, buf, RECORD_BUF)) == -1) {
			if (errno == EINTR)
				continue;
			log_warnx("record: binding NFLOG group %u: %s",
			    NFT_RECORD_GROUP, errno == EAGAIN ? "no answer" :
			    strerror(errno));
			return -1;
		}
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, packet_cb, r);
	} while (ret == MNL_CB_OK && !r->done);
	if (ret == MNL_CB_ERROR) {
		log_warnx("record: binding NFLOG group %u: %s%s",
		    NFT_RECORD_GROUP, strerror(errno), errno == EBUSY ?
		    " (another process of the sandbox's network namespace "
		    "has bound it)" : errno == EPERM ? " (no CAP_NET_ADMIN?)" :
		    "");
		return -1;
	}
	return 0;
}

/* Reads what is queued now; 1 when something was read, 0, -1 to stop. */
static int
read_queued(struct mnl_socket *nl, struct rec *r, char *buf)
{
	ssize_t	 n;
	int	 i, got = 0;

	for (i = 0; i < 256 && !r->done; i++) {
		if ((n = mnl_socket_recvfrom(nl, buf, RECORD_BUF)) == -1) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			if (errno == ENOBUFS) {
				r->overruns++;
				r->gap = 1;
				continue;
			}
			log_warn("record: netlink receive");
			r->rc = 1;
			return -1;
		}
		got = 1;
		(void)mnl_cb_run(buf, (size_t)n, 0, 0, packet_cb, r);
	}
	return r->done ? -1 : got;
}

/* Everything queued, then whatever follows closely, then the end. */
static void
drain(struct mnl_socket *nl, struct rec *r, char *buf)
{
	struct pollfd	 p = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };
	int64_t		 deadline = mono_ms() + RECORD_DRAIN_MS, left;

	while (read_queued(nl, r, buf) != -1) {
		if ((left = deadline - mono_ms()) <= 0)
			break;
		if (poll(&p, 1, left < RECORD_IDLE_MS ? (int)left :
		    RECORD_IDLE_MS) <= 0)
			break;
	}
}

/* The child.  Never returns. */
static void __attribute__((noreturn))
recorder_main(const struct enf_plan *plan, uid_t sandbox_uid, int end,
    int ready)
{
	static const int	 quiet[] = { SIGINT, SIGQUIT, SIGHUP, SIGTSTP,
				    SIGTTIN, SIGTTOU, SIGPIPE };
	struct mnl_socket	*nl = NULL;
	struct rec		 r;
	struct pollfd		 p[2];
	const char		*base;
	char			*buf = NULL, err[256];
	size_t			 i;
	int			 keep[2] = { end, ready }, dfd = -1, fd;

	memset(&r, 0, sizeof(r));
	r.path = plan->record_path;
	r.max = plan->record_max;
	r.rc = EXIT_ENFORCE;
	/*
	 * A group of its own: the terminal's signals are for the command;
	 * the recorder ends when the enforcer closes "end", or goes.
	 */
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_NAME, "aisb-record", 0, 0, 0);	/* for ps */
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		(void)signal(quiet[i], SIG_IGN);
	if (enf_close_fds(keep, 2, err, sizeof(err)) == -1) {
		log_warnx("record: %s", err);
		goto out;
	}
	if ((buf = malloc(RECORD_BUF)) == NULL) {
		log_warn("record");
		goto out;
	}
	if ((dfd = open_folder(plan->record_path, sandbox_uid, &base)) == -1)
		goto out;
	if ((fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		log_warn("record: creating %s", plan->record_path);
		goto out;
	}
	(void)close(dfd);
	dfd = -1;
	if ((r.w = pcapng_open(fd, r.max, "aisb-enforce " PACKAGE_VERSION)) ==
	    NULL) {
		log_warn("record: %s", plan->record_path);
		goto out;
	}
	if ((nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL ||
	    mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		log_warn("record: netlink socket");
		goto out;
	}
	if (nflog_bind(nl, &r, buf) == -1)
		goto out;
	/* From here on nothing needs a privilege: keep none. */
	if (enf_drop_keep(0, err, sizeof(err)) == -1) {
		log_warnx("record: %s", err);
		goto out;
	}
	if (fcntl(mnl_socket_get_fd(nl), F_SETFL, O_NONBLOCK) == -1) {
		log_warn("record: O_NONBLOCK");
		goto out;
	}
	if (write(ready, "r", 1) != 1)
		goto out;	/* the enforcer is gone: so is the command */
	r.rc = 0;
	log_info("record: NFLOG group %u to %s, at most %llu bytes",
	    NFT_RECORD_GROUP, r.path, (unsigned long long)r.max);

	p[0].fd = mnl_socket_get_fd(nl);
	p[0].events = POLLIN;
	p[1].fd = end;
	p[1].events = POLLIN;
	while (!r.done) {
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("record: poll");
			r.rc = 1;
			break;
		}
		if ((p[0].revents & POLLIN) && read_queued(nl, &r, buf) == -1)
			break;
		/* a byte or end of file: either way the end */
		if (p[1].revents != 0) {
			drain(nl, &r, buf);
			break;
		}
	}
	if (r.overruns > 0)
		log_warnx("record: the kernel dropped messages %llu times (the "
		    "recorder fell behind); the capture misses packets",
		    (unsigned long long)r.overruns);
	if (r.skipped > 0)
		log_warnx("record: %llu packets not written (unreadable or "
		    "larger than %d bytes)", (unsigned long long)r.skipped,
		    PCAPNG_SNAPLEN);
	log_info("record: %llu packets, %llu bytes in %s",
	    (unsigned long long)r.packets,
	    (unsigned long long)pcapng_size(r.w), r.path);
out:
	if (nl != NULL)
		mnl_socket_close(nl);
	if (dfd != -1)
		(void)close(dfd);
	pcapng_close(r.w);
	free(buf);
	_exit(r.rc);
}

struct enf_recorder *
enf_record_start(const struct enf_plan *plan, uid_t sandbox_uid)
{
	struct enf_recorder	*rec;
	struct pollfd		 p;
	int			 end[2] = { -1, -1 }, ready[2] = { -1, -1 };
	char			 c;
	ssize_t			 n;
	int			 rc;

	if ((rec = calloc(1, sizeof(*rec))) == NULL) {
		log_warn("recorder");
		return NULL;
	}
	rec->end = rec->ready = -1;
	if (pipe2(end, O_CLOEXEC) == -1 || pipe2(ready, O_CLOEXEC) == -1) {
		log_warn("recorder: pipe");
		goto fail;
	}
	if ((rec->pid = fork()) == -1) {
		log_warn("recorder: fork");
		goto fail;
	}
	if (rec->pid == 0) {
		(void)close(end[1]);
		(void)close(ready[0]);
		recorder_main(plan, sandbox_uid, end[0], ready[1]);
	}
	(void)close(end[0]);
	(void)close(ready[1]);
	end[0] = ready[1] = -1;
	rec->end = end[1];
	rec->ready = ready[0];

	/* "r" once it runs; end of file when it failed (it said why) */
	p.fd = rec->ready;
	p.events = POLLIN;
	while ((rc = poll(&p, 1, RECORD_START_MS)) == -1 && errno == EINTR)
		;
	if (rc <= 0) {
		log_warnx("recorder: no answer within %d ms", RECORD_START_MS);
		goto fail;
	}
	while ((n = read(rec->ready, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 1 || c != 'r') {
		log_warnx("the recorder did not start; not running the "
		    "command");
		goto fail;
	}
	return rec;
fail:
	if (end[0] != -1)
		(void)close(end[0]);
	if (ready[1] != -1)
		(void)close(ready[1]);
	if (rec->pid > 0) {
		(void)kill(rec->pid, SIGKILL);
		while (waitpid(rec->pid, NULL, 0) == -1 && errno == EINTR)
			;
		rec->pid = 0;
	}
	if (rec->end == -1 && end[1] != -1)
		(void)close(end[1]);
	if (rec->ready == -1 && ready[0] != -1)
		(void)close(ready[0]);
	enf_record_free(rec);
	return NULL;
}

size_t
enf_record_fds(const struct enf_recorder *rec, int *fds)
{
	if (rec == NULL || rec->pid <= 0)
		return 0;
	fds[0] = rec->end;
	fds[1] = rec->ready;
	return 2;
}

void
enf_record_stop(struct enf_recorder *rec)
{
	struct pollfd	 p;
	char		 c;
	int64_t		 deadline, left;
	ssize_t		 n;
	int		 rc;

	if (rec == NULL || rec->pid <= 0)
		return;
	(void)close(rec->end);
	rec->end = -1;
	/* its end of "ready" closes when it exits */
	p.fd = rec->ready;
	p.events = POLLIN;
	deadline = mono_ms() + ENF_RECORD_STOP_MS;
	for (;;) {
		if ((left = deadline - mono_ms()) <= 0) {
			log_warnx("recorder: still running after %d ms; "
			    "killed", ENF_RECORD_STOP_MS);
			(void)kill(rec->pid, SIGKILL);
			break;
		}
		if ((rc = poll(&p, 1, (int)left)) == -1 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		n = read(rec->ready, &c, 1);
		if (n == 0 || (n == -1 && errno != EINTR))
			break;
	}
	(void)close(rec->ready);
	rec->ready = -1;
	/* the refresher may have reaped it already (enf_reap): ECHILD */
	while (waitpid(rec->pid, NULL, 0) == -1 && errno == EINTR)
		;
	rec->pid = 0;
}

void
enf_record_free(struct enf_recorder *rec)
{
	if (rec == NULL)
		return;
	enf_record_stop(rec);
	if (rec->end != -1)
		(void)close(rec->end);
	if (rec->ready != -1)
		(void)close(rec->ready);
	free(rec);
}
