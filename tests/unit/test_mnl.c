/*
 * Unit tests of enforcer/mnl.c, the libmnl calls the static enforcer
 * answers itself: messages and attributes built and read back byte by
 * byte, the bounds of every parser (an attribute or message that claims
 * more than the buffer holds is never read), validation, the batch's
 * overflow, mnl_cb_run's answers to control messages, and a real round
 * trip with the kernel on a NETLINK_ROUTE socket (an unprivileged dump of
 * the links, an error reply, a datagram larger than the buffer).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define BUFLEN	4096

static _Alignas(4) char buf[BUFLEN];

struct seen {
	uint16_t	types[32];
	uint16_t	lens[32];
	size_t		n;
	int		stop_at;	/* stop after this many (0: never) */
};

static int
collect(const struct nlattr *a, void *data)
{
	struct seen	*s = data;

	if (s->n < 32) {
		s->types[s->n] = mnl_attr_get_type(a);
		s->lens[s->n] = mnl_attr_get_payload_len(a);
	}
	s->n++;
	if (s->stop_at != 0 && s->n == (size_t)s->stop_at)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static struct nlmsghdr *
fresh(void)
{
	memset(buf, 0xAA, sizeof(buf));		/* padding must be written */
	return mnl_nlmsg_put_header(buf);
}

static void
build_and_parse(void **state)
{
	struct nlmsghdr	*nlh = fresh();
	struct rtgenmsg	*g;
	struct nlattr	*nest, *a;
	struct seen	 s = { .n = 0 }, inner = { .n = 0 };
	uint64_t	 big = 0x0102030405060708ULL;

	(void)state;
	assert_int_equal(nlh->nlmsg_len, MNL_NLMSG_HDRLEN);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));	/* 1 -> 4 */
	assert_int_equal(nlh->nlmsg_len, MNL_NLMSG_HDRLEN + 4);
	assert_int_equal(((char *)g)[1], 0);			/* zeroed */
	mnl_attr_put_u8(nlh, 1, 7);
	mnl_attr_put_u16(nlh, 2, 0x1234);
	mnl_attr_put_u32(nlh, 3, 0xdeadbeef);
	mnl_attr_put_u64(nlh, 4, big);		/* payload 4-aligned only */
	mnl_attr_put_str(nlh, 5, "abc");	/* 3 bytes, 1 of padding */
	mnl_attr_put_strz(nlh, 6, "abc");	/* 4 bytes */
	nest = mnl_attr_nest_start(nlh, 7);
	mnl_attr_put_u32(nlh, 1, 1);
	mnl_attr_put_u32(nlh, 2, 2);
	mnl_attr_nest_end(nlh, nest);

	/* the u8's padding and the str's padding are zeros */
	a = mnl_nlmsg_get_payload_offset(nlh, sizeof(*g));
	assert_int_equal(mnl_attr_get_len(a), MNL_ATTR_HDRLEN + 1);
	assert_int_equal(((char *)mnl_attr_get_payload(a))[1], 0);
	assert_int_equal(((char *)mnl_attr_get_payload(a))[3], 0);
	assert_int_equal(nlh->nlmsg_len % 4, 0);

	assert_int_equal(mnl_attr_parse(nlh, sizeof(*g), collect, &s),
	    MNL_CB_OK);
	assert_int_equal(s.n, 7);
	assert_int_equal(s.types[6], 7);	/* NLA_F_NESTED masked off */
	assert_int_equal(s.lens[0], 1);
	assert_int_equal(s.lens[4], 3);
	assert_int_equal(s.lens[5], 4);
	assert_int_equal(s.lens[6], 2 * (MNL_ATTR_HDRLEN + 4));

	a = mnl_nlmsg_get_payload_offset(nlh, sizeof(*g));
	assert_int_equal(mnl_attr_get_u8(a), 7);
	a = mnl_attr_next(a);
	assert_int_equal(mnl_attr_get_u16(a), 0x1234);
	a = mnl_attr_next(a);
	assert_int_equal(mnl_attr_get_u32(a), 0xdeadbeef);
	a = mnl_attr_next(a);
	assert_true(mnl_attr_get_u64(a) == big);
	a = mnl_attr_next(a);
	assert_memory_equal(mnl_attr_get_str(a), "abc", 3);
	a = mnl_attr_next(a);
	assert_string_equal(mnl_attr_get_str(a), "abc");
	a = mnl_attr_next(a);
	assert_true(a->nla_type & NLA_F_NESTED);
	assert_int_equal(mnl_attr_parse_nested(a, collect, &inner), MNL_CB_OK);
	assert_int_equal(inner.n, 2);
	assert_int_equal(inner.types[1], 2);

	/* a callback's STOP ends the walk at once */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(mnl_attr_parse(nlh, sizeof(*g), collect, &s),
	    MNL_CB_STOP);
	assert_int_equal(s.n, 2);

	/* nest_cancel takes back everything from the nest on */
	{
		uint32_t	len = nlh->nlmsg_len;

		nest = mnl_attr_nest_start(nlh, 8);
		mnl_attr_put_u32(nlh, 1, 1);
		mnl_attr_nest_cancel(nlh, nest);
		assert_int_equal(nlh->nlmsg_len, len);
	}
}

/* Lengths that claim more than there is are never followed. */
static void
parse_bounds(void **state)
{
	struct nlmsghdr	*nlh = fresh();
	struct nlattr	*a;
	struct seen	 s = { .n = 0 };

	(void)state;
	mnl_attr_put_u32(nlh, 1, 1);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, 2, 2);
	a->nla_len = 200;		/* past the message's end */
	assert_int_equal(mnl_attr_parse(nlh, 0, collect, &s), MNL_CB_OK);
	assert_int_equal(s.n, 1);
	a->nla_len = 2;			/* shorter than its own header */
	s.n = 0;
	assert_int_equal(mnl_attr_parse(nlh, 0, collect, &s), MNL_CB_OK);
	assert_int_equal(s.n, 1);
	/* an offset past the tail: nothing, not a read beyond */
	s.n = 0;
	assert_int_equal(mnl_attr_parse(nlh, 64, collect, &s), MNL_CB_OK);
	assert_int_equal(s.n, 0);
	/* a payload walk bounded by its length */
	s.n = 0;
	assert_int_equal(mnl_attr_parse_payload(mnl_nlmsg_get_payload(nlh),
	    MNL_ATTR_HDRLEN + 3, collect, &s), MNL_CB_OK);
	assert_int_equal(s.n, 0);

	assert_false(mnl_nlmsg_ok(nlh, (int)sizeof(struct nlmsghdr) - 1));
	assert_false(mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len - 1));
	assert_true(mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len));
	nlh->nlmsg_len = 3;
	assert_false(mnl_nlmsg_ok(nlh, BUFLEN));
}

static void
validate(void **state)
{
	struct nlmsghdr	*nlh = fresh();
	struct nlattr	*a[6];
	size_t		 i;

	(void)state;
	for (i = 0; i < 6; i++) {
		static const char *const payload[] = { "ab", "abc", "",
		    "x", "abcd", "abcdefgh" };
		static const size_t len[] = { 2, 3, 0, 1, 4, 8 };

		a[i] = mnl_nlmsg_get_payload_tail(nlh);
		mnl_attr_put(nlh, (uint16_t)(i + 1), len[i], payload[i]);
	}
	/* "ab" is no u32; "abcd" is */
	errno = 0;
	assert_int_equal(mnl_attr_validate(a[0], MNL_TYPE_U32), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(mnl_attr_validate(a[4], MNL_TYPE_U32), 0);
	/* and 8 bytes are too many for one */
	assert_int_equal(mnl_attr_validate(a[5], MNL_TYPE_U32), -1);
	assert_int_equal(mnl_attr_validate(a[5], MNL_TYPE_U64), 0);
	/* a NUL_STRING must end in NUL; a STRING must not be empty */
	errno = 0;
	assert_int_equal(mnl_attr_validate(a[1], MNL_TYPE_NUL_STRING), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(mnl_attr_validate(a[2], MNL_TYPE_STRING), -1);
	assert_int_equal(mnl_attr_validate(a[1], MNL_TYPE_STRING), 0);
	/* a FLAG has no payload */
	assert_int_equal(mnl_attr_validate(a[2], MNL_TYPE_FLAG), 0);
	assert_int_equal(mnl_attr_validate(a[3], MNL_TYPE_FLAG), -1);
	/* a NESTED is empty or holds a header at least */
	assert_int_equal(mnl_attr_validate(a[2], MNL_TYPE_NESTED), 0);
	assert_int_equal(mnl_attr_validate(a[1], MNL_TYPE_NESTED), -1);
	/* validate2 takes the caller's length */
	assert_int_equal(mnl_attr_validate2(a[1], MNL_TYPE_BINARY, 3), 0);
	assert_int_equal(mnl_attr_validate2(a[1], MNL_TYPE_BINARY, 4), -1);
	errno = 0;
	assert_int_equal(mnl_attr_validate(a[0], MNL_TYPE_MAX), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(mnl_attr_type_valid(a[5], 5), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(mnl_attr_type_valid(a[5], 6), 1);
}

static void
put_check(void **state)
{
	struct nlmsghdr	*nlh = fresh();
	uint32_t	 len;

	(void)state;
	assert_true(mnl_attr_put_u32_check(nlh, MNL_NLMSG_HDRLEN + 8, 1, 1));
	len = nlh->nlmsg_len;
	assert_false(mnl_attr_put_u8_check(nlh, len + 7, 2, 1));
	assert_false(mnl_attr_put_strz_check(nlh, len + 8, 2, "abcd"));
	assert_int_equal(nlh->nlmsg_len, len);	/* nothing written */
	assert_null(mnl_attr_nest_start_check(nlh, len + 3, 3));
	assert_non_null(mnl_attr_nest_start_check(nlh, len + 4, 3));
}

static struct nlmsghdr *
put_msg(void *at, uint16_t type, size_t payload)
{
	struct nlmsghdr	*nlh = mnl_nlmsg_put_header(at);

	nlh->nlmsg_type = type;
	mnl_nlmsg_put_extra_header(nlh, payload);
	return nlh;
}

static void
batch(void **state)
{
	struct mnl_nlmsg_batch	*b;
	struct nlmsghdr		*first;

	(void)state;
	memset(buf, 0, sizeof(buf));
	/* a limit of 100 bytes: two 40-byte messages fit, a third does not */
	assert_non_null(b = mnl_nlmsg_batch_start(buf, 100));
	assert_true(mnl_nlmsg_batch_is_empty(b));
	put_msg(mnl_nlmsg_batch_current(b), 20, 24);
	assert_true(mnl_nlmsg_batch_next(b));
	put_msg(mnl_nlmsg_batch_current(b), 21, 24);
	assert_true(mnl_nlmsg_batch_next(b));
	assert_int_equal(mnl_nlmsg_batch_size(b), 80);
	put_msg(mnl_nlmsg_batch_current(b), 22, 24);
	assert_false(mnl_nlmsg_batch_next(b));
	assert_int_equal(mnl_nlmsg_batch_size(b), 80);
	assert_ptr_equal(mnl_nlmsg_batch_head(b), buf);
	/* after a reset the message that overflowed comes first */
	mnl_nlmsg_batch_reset(b);
	first = mnl_nlmsg_batch_head(b);
	assert_int_equal(first->nlmsg_type, 22);
	assert_int_equal(mnl_nlmsg_batch_size(b), 40);
	assert_ptr_equal(mnl_nlmsg_batch_current(b), buf + 40);
	mnl_nlmsg_batch_reset(b);
	assert_true(mnl_nlmsg_batch_is_empty(b));
	mnl_nlmsg_batch_stop(b);
}

static int
count_data(const struct nlmsghdr *nlh, void *data)
{
	(*(int *)data)++;
	return MNL_CB_OK;
}

/* A stream of messages for mnl_cb_run: n data messages, then last. */
static size_t
stream(int ndata, uint16_t last, int error, uint32_t seq, uint32_t pid)
{
	char		*p = buf;
	struct nlmsghdr	*nlh;
	int		 i;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < ndata; i++) {
		nlh = put_msg(p, NLMSG_MIN_TYPE + 1, 8);
		nlh->nlmsg_seq = seq;
		nlh->nlmsg_pid = pid;
		p += nlh->nlmsg_len;
	}
	if (last == NLMSG_ERROR) {
		struct nlmsgerr	*e;

		nlh = mnl_nlmsg_put_header(p);
		nlh->nlmsg_type = NLMSG_ERROR;
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
		e->error = error;
	} else {
		nlh = put_msg(p, last, 4);
	}
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = pid;
	p += nlh->nlmsg_len;
	return (size_t)(p - buf);
}

static void
cb_run(void **state)
{
	size_t		 n;
	int		 data = 0;
	struct nlmsghdr	*nlh;

	(void)state;
	/* data, then an ACK: STOP, every data message seen */
	n = stream(3, NLMSG_ERROR, 0, 9, 77);
	assert_int_equal(mnl_cb_run(buf, n, 9, 77, count_data, &data),
	    MNL_CB_STOP);
	assert_int_equal(data, 3);
	/* an error reply: ERROR with the kernel's errno */
	n = stream(0, NLMSG_ERROR, -EPERM, 9, 77);
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, n, 9, 77, NULL, NULL), MNL_CB_ERROR);
	assert_int_equal(errno, EPERM);
	/* DONE stops; NOOP goes on */
	n = stream(1, NLMSG_DONE, 0, 9, 77);
	data = 0;
	assert_int_equal(mnl_cb_run(buf, n, 9, 77, count_data, &data),
	    MNL_CB_STOP);
	assert_int_equal(data, 1);
	n = stream(2, NLMSG_NOOP, 0, 9, 77);
	data = 0;
	assert_int_equal(mnl_cb_run(buf, n, 9, 77, count_data, &data),
	    MNL_CB_OK);
	assert_int_equal(data, 2);
	/* another sequence or another port: refused */
	n = stream(1, NLMSG_DONE, 0, 9, 77);
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, n, 10, 77, count_data, &data), -1);
	assert_int_equal(errno, EPROTO);
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, n, 9, 78, count_data, &data), -1);
	assert_int_equal(errno, ESRCH);
	/* 0 on either side matches anything (notifications) */
	assert_int_equal(mnl_cb_run(buf, n, 0, 0, count_data, &data),
	    MNL_CB_STOP);
	/* an interrupted dump */
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_flags |= NLM_F_DUMP_INTR;
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, n, 9, 77, count_data, &data), -1);
	assert_int_equal(errno, EINTR);
	/* an error message too short for its nlmsgerr */
	memset(buf, 0, sizeof(buf));
	nlh = put_msg(buf, NLMSG_ERROR, 4);
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, nlh->nlmsg_len, 0, 0, NULL, NULL),
	    MNL_CB_ERROR);
	assert_int_equal(errno, EBADMSG);
	/* a message cut by the datagram's end is not looked at */
	n = stream(2, NLMSG_DONE, 0, 9, 77);
	data = 0;
	assert_int_equal(mnl_cb_run(buf, n - 1, 9, 77, count_data, &data),
	    MNL_CB_OK);
	assert_int_equal(data, 2);
}

/* Link names of an RTM_NEWLINK into *(char (*)[16]). */
static int
link_attr(const struct nlattr *a, void *data)
{
	char	*found = data;

	if (mnl_attr_get_type(a) == IFLA_IFNAME &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0 &&
	    strcmp(mnl_attr_get_str(a), "lo") == 0)
		*found = 1;
	return MNL_CB_OK;
}

static int
link_msg(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	return mnl_attr_parse(nlh, sizeof(struct ifinfomsg), link_attr, data);
}

static struct nlmsghdr *
getlink(unsigned seq, int dump, int ifindex)
{
	struct nlmsghdr		*nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg	*ifm;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	return nlh;
}

/* The kernel itself: a dump of the links finds lo; a bad index fails. */
static void
kernel(void **state)
{
	struct mnl_socket	*nl;
	struct nlmsghdr		*nlh;
	unsigned		 seq = (unsigned)time(NULL), portid;
	char			 found = 0, tiny[16];
	ssize_t			 n;
	int			 rc = MNL_CB_OK;

	(void)state;
	assert_non_null(nl = mnl_socket_open(NETLINK_ROUTE));
	assert_int_equal(mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID), 0);
	assert_true(mnl_socket_get_fd(nl) >= 0);
	portid = mnl_socket_get_portid(nl);
	assert_true(portid != 0);

	nlh = getlink(seq, 1, 0);
	assert_int_equal(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len),
	    (ssize_t)nlh->nlmsg_len);
	while (rc == MNL_CB_OK) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		assert_true(n > 0);
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, link_msg, &found);
	}
	assert_int_equal(rc, MNL_CB_STOP);
	assert_true(found);

	/* no such link: the kernel's -ENODEV through cb_run */
	nlh = getlink(++seq, 0, 0x7ffffff0);
	assert_int_equal(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len),
	    (ssize_t)nlh->nlmsg_len);
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	assert_true(n > 0);
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, (size_t)n, seq, portid, link_msg,
	    &found), MNL_CB_ERROR);
	assert_int_equal(errno, ENODEV);

	/* a datagram larger than the buffer is an error, not a short read */
	nlh = getlink(++seq, 1, 0);
	assert_int_equal(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len),
	    (ssize_t)nlh->nlmsg_len);
	errno = 0;
	assert_int_equal(mnl_socket_recvfrom(nl, tiny, sizeof(tiny)), -1);
	assert_int_equal(errno, ENOSPC);

	assert_int_equal(mnl_socket_close(nl), 0);
	assert_int_equal(mnl_socket_close(NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_and_parse),
		cmocka_unit_test(parse_bounds),
		cmocka_unit_test(validate),
		cmocka_unit_test(put_check),
		cmocka_unit_test(batch),
		cmocka_unit_test(cb_run),
		cmocka_unit_test(kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
