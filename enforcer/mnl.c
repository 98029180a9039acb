/*
 * The part of libmnl's API that libnftnl and the enforcer call, written
 * here so that aisb-enforce links statically.
 *
 * Why: the enforcer runs as the container's root with CAP_NET_ADMIN,
 * before anything else of the sandbox.  A dynamically linked enforcer
 * would be loaded by the image's ld.so, with the image's libc and the
 * image's /etc/ld.so.preload and LD_* variables: a base image could then
 * run its own code in the one process that writes the firewall (a preload
 * library that deletes table inet aisb after it is verified).  Linked
 * statically, nothing of the image is loaded.  Debian ships libnftnl.a
 * and libcares.a but no libmnl.a, and libnftnl calls into libmnl; so the
 * calls are answered here, against libmnl's own header (the prototypes
 * and the ABI are libmnl's: <libmnl/libmnl.h>), with the semantics its
 * documentation gives.  Every build of the enforcer, static or not, its
 * tests and its fuzzers link this file and libnftnl.a, never libmnl.so,
 * so the code that runs in a session is the code that is tested.
 *
 * What is here: message and attribute building and parsing (pure,
 * bounded by the lengths the caller passes), the batch, the socket, and
 * mnl_cb_run.  Not here: libmnl's callbacks for control messages given
 * by the caller (mnl_cb_run2) and its debugging printers; nothing calls
 * them.  Parsers never read past the length they are given: every
 * message and attribute is checked with mnl_nlmsg_ok / mnl_attr_ok
 * before it is looked at.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

struct mnl_socket {
	int			fd;
	struct sockaddr_nl	addr;	/* as bound: the kernel's port id */
};

/* Sockets */

struct mnl_socket *
mnl_socket_open2(int bus, int flags)
{
	struct mnl_socket	*nl;

	if ((nl = calloc(1, sizeof(*nl))) == NULL)
		return NULL;
	if ((nl->fd = socket(AF_NETLINK, SOCK_RAW | flags, bus)) == -1) {
		free(nl);
		return NULL;
	}
	return nl;
}

struct mnl_socket *
mnl_socket_open(int bus)
{
	return mnl_socket_open2(bus, 0);
}

int
mnl_socket_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
	socklen_t	len = sizeof(nl->addr);

	memset(&nl->addr, 0, sizeof(nl->addr));
	nl->addr.nl_family = AF_NETLINK;
	nl->addr.nl_groups = groups;
	nl->addr.nl_pid = (uint32_t)pid;
	if (bind(nl->fd, (struct sockaddr *)&nl->addr, sizeof(nl->addr)) == -1)
		return -1;
	/* the kernel picks the port id for MNL_SOCKET_AUTOPID */
	if (getsockname(nl->fd, (struct sockaddr *)&nl->addr, &len) == -1)
		return -1;
	if (len != sizeof(nl->addr) || nl->addr.nl_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
mnl_socket_close(struct mnl_socket *nl)
{
	int	rc;

	if (nl == NULL)
		return 0;
	rc = close(nl->fd);
	free(nl);
	return rc;
}

int
mnl_socket_get_fd(const struct mnl_socket *nl)
{
	return nl->fd;
}

unsigned int
mnl_socket_get_portid(const struct mnl_socket *nl)
{
	return nl->addr.nl_pid;
}

ssize_t
mnl_socket_sendto(const struct mnl_socket *nl, const void *req, size_t siz)
{
	static const struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	return sendto(nl->fd, req, siz, 0, (const struct sockaddr *)&kernel,
	    sizeof(kernel));
}

/*
 * One datagram into buf.  A datagram larger than siz is an error
 * (ENOSPC), never a silently shortened message; so is one that did not
 * come from a netlink peer.
 */
ssize_t
mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf, size_t siz)
{
	struct sockaddr_nl	 from;
	struct iovec		 iov = { .iov_base = buf, .iov_len = siz };
	struct msghdr		 msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t			 n;

	if ((n = recvmsg(nl->fd, &msg, 0)) == -1)
		return -1;
	if (msg.msg_flags & MSG_TRUNC) {
		errno = ENOSPC;
		return -1;
	}
	if (msg.msg_namelen != sizeof(from)) {
		errno = EINVAL;
		return -1;
	}
	return n;
}

int
mnl_socket_setsockopt(const struct mnl_socket *nl, int type, void *buf,
    socklen_t len)
{
	return setsockopt(nl->fd, SOL_NETLINK, type, buf, len);
}

int
mnl_socket_getsockopt(const struct mnl_socket *nl, int type, void *buf,
    socklen_t *len)
{
	return getsockopt(nl->fd, SOL_NETLINK, type, buf, len);
}

/* Messages */

size_t
mnl_nlmsg_size(size_t len)
{
	return len + MNL_NLMSG_HDRLEN;
}

size_t
mnl_nlmsg_get_payload_len(const struct nlmsghdr *nlh)
{
	return nlh->nlmsg_len - MNL_NLMSG_HDRLEN;
}

/* A zeroed header at buf, which must hold MNL_NLMSG_HDRLEN bytes. */
struct nlmsghdr *
mnl_nlmsg_put_header(void *buf)
{
	struct nlmsghdr	*nlh = buf;

	memset(buf, 0, MNL_NLMSG_HDRLEN);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN;
	return nlh;
}

void *
mnl_nlmsg_put_extra_header(struct nlmsghdr *nlh, size_t size)
{
	char	*p = (char *)nlh + nlh->nlmsg_len;
	size_t	 len = MNL_ALIGN(size);

	nlh->nlmsg_len += len;
	memset(p, 0, len);
	return p;
}

void *
mnl_nlmsg_get_payload(const struct nlmsghdr *nlh)
{
	return (char *)nlh + MNL_NLMSG_HDRLEN;
}

void *
mnl_nlmsg_get_payload_offset(const struct nlmsghdr *nlh, size_t offset)
{
	return (char *)nlh + MNL_NLMSG_HDRLEN + MNL_ALIGN(offset);
}

void *
mnl_nlmsg_get_payload_tail(const struct nlmsghdr *nlh)
{
	return (char *)nlh + MNL_ALIGN(nlh->nlmsg_len);
}

/* Whether len bytes at nlh hold a whole message, header included. */
bool
mnl_nlmsg_ok(const struct nlmsghdr *nlh, int len)
{
	return len >= (int)sizeof(struct nlmsghdr) &&
	    nlh->nlmsg_len >= sizeof(struct nlmsghdr) &&
	    (int)nlh->nlmsg_len <= len;
}

/* The message after nlh; *len is what is left of the buffer. */
struct nlmsghdr *
mnl_nlmsg_next(const struct nlmsghdr *nlh, int *len)
{
	*len -= (int)MNL_ALIGN(nlh->nlmsg_len);
	return (struct nlmsghdr *)((char *)nlh + MNL_ALIGN(nlh->nlmsg_len));
}

/* Notifications carry sequence 0; only replies are checked. */
bool
mnl_nlmsg_seq_ok(const struct nlmsghdr *nlh, unsigned int seq)
{
	return nlh->nlmsg_seq != 0 && seq != 0 ? nlh->nlmsg_seq == seq : true;
}

bool
mnl_nlmsg_portid_ok(const struct nlmsghdr *nlh, unsigned int portid)
{
	return nlh->nlmsg_pid != 0 && portid != 0 ?
	    nlh->nlmsg_pid == portid : true;
}

/*
 * Batches: messages written one after another into the caller's buffer.
 * limit is how much of it one send may carry; the caller's buffer holds
 * more (libmnl's rule: twice the limit), so that the message that
 * overflows can still be written before batch_next refuses it.
 */
struct mnl_nlmsg_batch {
	char	*buf;
	size_t	 limit;
	size_t	 len;		/* bytes of whole messages so far */
	char	*cur;		/* where the next message is written */
	bool	 overflow;
};

struct mnl_nlmsg_batch *
mnl_nlmsg_batch_start(void *buf, size_t limit)
{
	struct mnl_nlmsg_batch	*b;

	if ((b = malloc(sizeof(*b))) == NULL)
		return NULL;
	b->buf = buf;
	b->limit = limit;
	b->len = 0;
	b->cur = buf;
	b->overflow = false;
	return b;
}

/* Takes the message at cur into the batch; false when it would overflow. */
bool
mnl_nlmsg_batch_next(struct mnl_nlmsg_batch *b)
{
	struct nlmsghdr	*nlh = (struct nlmsghdr *)b->cur;

	if (b->len + nlh->nlmsg_len > b->limit) {
		b->overflow = true;
		return false;
	}
	b->cur = b->buf + b->len + nlh->nlmsg_len;
	b->len += nlh->nlmsg_len;
	return true;
}

void
mnl_nlmsg_batch_stop(struct mnl_nlmsg_batch *b)
{
	free(b);
}

size_t
mnl_nlmsg_batch_size(struct mnl_nlmsg_batch *b)
{
	return b->len;
}

/* Empties the batch, keeping the message that overflowed as its first. */
void
mnl_nlmsg_batch_reset(struct mnl_nlmsg_batch *b)
{
	if (b->overflow) {
		struct nlmsghdr	*nlh = (struct nlmsghdr *)b->cur;

		memmove(b->buf, b->cur, nlh->nlmsg_len);
		b->len = nlh->nlmsg_len;
		b->cur = b->buf + b->len;
		b->overflow = false;
	} else {
		b->len = 0;
		b->cur = b->buf;
	}
}

void *
mnl_nlmsg_batch_head(struct mnl_nlmsg_batch *b)
{
	return b->buf;
}

void *
mnl_nlmsg_batch_current(struct mnl_nlmsg_batch *b)
{
	return b->cur;
}

bool
mnl_nlmsg_batch_is_empty(struct mnl_nlmsg_batch *b)
{
	return b->len == 0;
}

/* Attributes */

uint16_t
mnl_attr_get_type(const struct nlattr *attr)
{
	return attr->nla_type & NLA_TYPE_MASK;
}

uint16_t
mnl_attr_get_len(const struct nlattr *attr)
{
	return attr->nla_len;
}

uint16_t
mnl_attr_get_payload_len(const struct nlattr *attr)
{
	return (uint16_t)(attr->nla_len - MNL_ATTR_HDRLEN);
}

void *
mnl_attr_get_payload(const struct nlattr *attr)
{
	return (char *)attr + MNL_ATTR_HDRLEN;
}

/* Whether len bytes at attr hold a whole attribute, header included. */
bool
mnl_attr_ok(const struct nlattr *attr, int len)
{
	return len >= (int)sizeof(struct nlattr) &&
	    attr->nla_len >= sizeof(struct nlattr) &&
	    (int)attr->nla_len <= len;
}

struct nlattr *
mnl_attr_next(const struct nlattr *attr)
{
	return (struct nlattr *)((char *)attr + MNL_ALIGN(attr->nla_len));
}

int
mnl_attr_type_valid(const struct nlattr *attr, uint16_t max)
{
	if (mnl_attr_get_type(attr) > max) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return 1;
}

/* The payload length each fixed-size type must have (0: any). */
static const size_t attr_type_len[MNL_TYPE_MAX] = {
	[MNL_TYPE_U8] = sizeof(uint8_t),
	[MNL_TYPE_U16] = sizeof(uint16_t),
	[MNL_TYPE_U32] = sizeof(uint32_t),
	[MNL_TYPE_U64] = sizeof(uint64_t),
	[MNL_TYPE_MSECS] = sizeof(uint64_t),
};

static int
attr_validate(const struct nlattr *attr, enum mnl_attr_data_type type,
    size_t want)
{
	uint16_t	 len = mnl_attr_get_payload_len(attr);
	const char	*p = mnl_attr_get_payload(attr);

	if (attr->nla_len < MNL_ATTR_HDRLEN || len < want) {
		errno = ERANGE;
		return -1;
	}
	switch (type) {
	case MNL_TYPE_FLAG:
		if (len > 0) {
			errno = ERANGE;
			return -1;
		}
		break;
	case MNL_TYPE_NUL_STRING:
		if (len == 0) {
			errno = ERANGE;
			return -1;
		}
		if (p[len - 1] != '\0') {
			errno = EINVAL;
			return -1;
		}
		break;
	case MNL_TYPE_STRING:
		if (len == 0) {
			errno = ERANGE;
			return -1;
		}
		break;
	case MNL_TYPE_NESTED:
		/* empty, or room for one attribute header at least */
		if (len != 0 && len < MNL_ATTR_HDRLEN) {
			errno = ERANGE;
			return -1;
		}
		break;
	default:
		break;
	}
	if (want != 0 && len > want) {
		errno = ERANGE;
		return -1;
	}
	return 0;
}

int
mnl_attr_validate(const struct nlattr *attr, enum mnl_attr_data_type type)
{
	if ((unsigned)type >= MNL_TYPE_MAX) {
		errno = EINVAL;
		return -1;
	}
	return attr_validate(attr, type, attr_type_len[type]);
}

int
mnl_attr_validate2(const struct nlattr *attr, enum mnl_attr_data_type type,
    size_t len)
{
	if ((unsigned)type >= MNL_TYPE_MAX) {
		errno = EINVAL;
		return -1;
	}
	return attr_validate(attr, type, len);
}

/* Calls cb on each whole attribute of [p, p + len); stops at <= STOP. */
static int
attr_walk(const char *p, size_t len, mnl_attr_cb_t cb, void *data)
{
	const struct nlattr	*a = (const struct nlattr *)p;
	const char		*end = p + len;
	int			 rc = MNL_CB_OK;

	while (mnl_attr_ok(a, (int)(end - (const char *)a))) {
		if ((rc = cb(a, data)) <= MNL_CB_STOP)
			return rc;
		a = mnl_attr_next(a);
	}
	return rc;
}

int
mnl_attr_parse(const struct nlmsghdr *nlh, unsigned int offset,
    mnl_attr_cb_t cb, void *data)
{
	const char	*start = mnl_nlmsg_get_payload_offset(nlh, offset);
	const char	*tail = mnl_nlmsg_get_payload_tail(nlh);

	if (start > tail)
		return MNL_CB_OK;
	return attr_walk(start, (size_t)(tail - start), cb, data);
}

int
mnl_attr_parse_nested(const struct nlattr *nested, mnl_attr_cb_t cb,
    void *data)
{
	return attr_walk(mnl_attr_get_payload(nested),
	    mnl_attr_get_payload_len(nested), cb, data);
}

int
mnl_attr_parse_payload(const void *payload, size_t len, mnl_attr_cb_t cb,
    void *data)
{
	return attr_walk(payload, len, cb, data);
}

uint8_t
mnl_attr_get_u8(const struct nlattr *attr)
{
	return *(const uint8_t *)mnl_attr_get_payload(attr);
}

uint16_t
mnl_attr_get_u16(const struct nlattr *attr)
{
	uint16_t	v;

	memcpy(&v, mnl_attr_get_payload(attr), sizeof(v));
	return v;
}

uint32_t
mnl_attr_get_u32(const struct nlattr *attr)
{
	uint32_t	v;

	memcpy(&v, mnl_attr_get_payload(attr), sizeof(v));
	return v;
}

/* 64-bit payloads are only 4-byte aligned in a message. */
uint64_t
mnl_attr_get_u64(const struct nlattr *attr)
{
	uint64_t	v;

	memcpy(&v, mnl_attr_get_payload(attr), sizeof(v));
	return v;
}

const char *
mnl_attr_get_str(const struct nlattr *attr)
{
	return mnl_attr_get_payload(attr);
}

/*
 * Appends an attribute at the message's tail, padded with zeros to the
 * alignment.  The caller's buffer must have room (libmnl's contract; the
 * _check forms test it against buflen first).
 */
void
mnl_attr_put(struct nlmsghdr *nlh, uint16_t type, size_t len, const void *data)
{
	struct nlattr	*attr = mnl_nlmsg_get_payload_tail(nlh);
	size_t		 total = MNL_ATTR_HDRLEN + len;
	char		*p = (char *)attr + MNL_ATTR_HDRLEN;

	attr->nla_type = type;
	attr->nla_len = (uint16_t)total;
	if (len > 0)
		memcpy(p, data, len);
	if (MNL_ALIGN(len) > len)
		memset(p + len, 0, MNL_ALIGN(len) - len);
	nlh->nlmsg_len += MNL_ALIGN(total);
}

void
mnl_attr_put_u8(struct nlmsghdr *nlh, uint16_t type, uint8_t v)
{
	mnl_attr_put(nlh, type, sizeof(v), &v);
}

void
mnl_attr_put_u16(struct nlmsghdr *nlh, uint16_t type, uint16_t v)
{
	mnl_attr_put(nlh, type, sizeof(v), &v);
}

void
mnl_attr_put_u32(struct nlmsghdr *nlh, uint16_t type, uint32_t v)
{
	mnl_attr_put(nlh, type, sizeof(v), &v);
}

void
mnl_attr_put_u64(struct nlmsghdr *nlh, uint16_t type, uint64_t v)
{
	mnl_attr_put(nlh, type, sizeof(v), &v);
}

void
mnl_attr_put_str(struct nlmsghdr *nlh, uint16_t type, const char *s)
{
	mnl_attr_put(nlh, type, strlen(s), s);
}

void
mnl_attr_put_strz(struct nlmsghdr *nlh, uint16_t type, const char *s)
{
	mnl_attr_put(nlh, type, strlen(s) + 1, s);
}

bool
mnl_attr_put_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    size_t len, const void *data)
{
	if (nlh->nlmsg_len + MNL_ATTR_HDRLEN + MNL_ALIGN(len) > buflen)
		return false;
	mnl_attr_put(nlh, type, len, data);
	return true;
}

bool
mnl_attr_put_u8_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    uint8_t v)
{
	return mnl_attr_put_check(nlh, buflen, type, sizeof(v), &v);
}

bool
mnl_attr_put_u16_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    uint16_t v)
{
	return mnl_attr_put_check(nlh, buflen, type, sizeof(v), &v);
}

bool
mnl_attr_put_u32_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    uint32_t v)
{
	return mnl_attr_put_check(nlh, buflen, type, sizeof(v), &v);
}

bool
mnl_attr_put_u64_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    uint64_t v)
{
	return mnl_attr_put_check(nlh, buflen, type, sizeof(v), &v);
}

bool
mnl_attr_put_str_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    const char *s)
{
	return mnl_attr_put_check(nlh, buflen, type, strlen(s), s);
}

bool
mnl_attr_put_strz_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type,
    const char *s)
{
	return mnl_attr_put_check(nlh, buflen, type, strlen(s) + 1, s);
}

/* A nest's header now; its length when mnl_attr_nest_end closes it. */
struct nlattr *
mnl_attr_nest_start(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr	*start = mnl_nlmsg_get_payload_tail(nlh);

	start->nla_type = NLA_F_NESTED | type;
	start->nla_len = 0;
	nlh->nlmsg_len += MNL_ATTR_HDRLEN;
	return start;
}

struct nlattr *
mnl_attr_nest_start_check(struct nlmsghdr *nlh, size_t buflen, uint16_t type)
{
	if (nlh->nlmsg_len + MNL_ATTR_HDRLEN > buflen)
		return NULL;
	return mnl_attr_nest_start(nlh, type);
}

void
mnl_attr_nest_end(struct nlmsghdr *nlh, struct nlattr *start)
{
	start->nla_len = (uint16_t)((char *)mnl_nlmsg_get_payload_tail(nlh) -
	    (char *)start);
}

void
mnl_attr_nest_cancel(struct nlmsghdr *nlh, struct nlattr *start)
{
	nlh->nlmsg_len -= (uint32_t)((char *)mnl_nlmsg_get_payload_tail(nlh) -
	    (char *)start);
}

/* Callbacks */

/* NLMSG_ERROR: an ACK (error 0) ends the run, anything else fails it. */
static int
cb_error(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr	*err = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	/* the kernel sends a negative errno; accept either sign */
	errno = err->error < 0 ? -err->error : err->error;
	return err->error == 0 ? MNL_CB_STOP : MNL_CB_ERROR;
}

/*
 * Runs cb_data on each data message of numbytes at buf that belongs to
 * seq and portid (0: any), and libmnl's default answer to each control
 * message: NOOP and OVERRUN go on, DONE stops, ERROR stops or fails.
 * MNL_CB_ERROR (-1, errno set), MNL_CB_STOP, or MNL_CB_OK when the
 * datagram ended and more may follow.
 */
int
mnl_cb_run(const void *buf, size_t numbytes, unsigned int seq,
    unsigned int portid, mnl_cb_t cb_data, void *data)
{
	const struct nlmsghdr	*nlh = buf;
	int			 len = numbytes > INT32_MAX ? INT32_MAX :
				    (int)numbytes, rc = MNL_CB_OK;

	while (mnl_nlmsg_ok(nlh, len)) {
		if (!mnl_nlmsg_portid_ok(nlh, portid)) {
			errno = ESRCH;
			return -1;
		}
		if (!mnl_nlmsg_seq_ok(nlh, seq)) {
			errno = EPROTO;
			return -1;
		}
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			errno = EINTR;
			return -1;
		}
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			if (cb_data != NULL &&
			    (rc = cb_data(nlh, data)) <= MNL_CB_STOP)
				return rc;
		} else if (nlh->nlmsg_type == NLMSG_ERROR) {
			if ((rc = cb_error(nlh)) <= MNL_CB_STOP)
				return rc;
		} else if (nlh->nlmsg_type == NLMSG_DONE) {
			return MNL_CB_STOP;
		}
		/* NLMSG_NOOP, NLMSG_OVERRUN: on to the next */
		nlh = mnl_nlmsg_next(nlh, &len);
	}
	return rc;
}
