/*
 * Unit tests of nft_send()'s ACK counting (enforcer/netlink.c).  The kernel's
 * answers that cannot be produced on purpose (a lost, duplicated or stray
 * ACK, an error on one message of a batch, answers split over several
 * reads) come from libmnl functions replaced with -Wl,--wrap.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "nft.h"
#include "plan.h"

#define PORTID	4242

/* What the fake kernel answers: one entry per read. */
struct answer {
	int		 err;		/* recvfrom fails with this errno */
	size_t		 nacks;
	struct {
		uint32_t idx;		/* message index in the batch */
		int	 error;		/* 0 = ACK */
		uint32_t pid;
	}		 acks[80];
};

static struct answer	 script[8];
static size_t		 nscript, next_answer;
static uint32_t		 sent_seq;
static int		 sent;

struct mnl_socket	*__wrap_mnl_socket_open(int);
int			 __wrap_mnl_socket_bind(struct mnl_socket *, unsigned int,
			    pid_t);
int			 __wrap_mnl_socket_setsockopt(const struct mnl_socket *,
			    int, void *, socklen_t);
int			 __wrap_mnl_socket_get_fd(const struct mnl_socket *);
unsigned int		 __wrap_mnl_socket_get_portid(const struct mnl_socket *);
ssize_t			 __wrap_mnl_socket_sendto(const struct mnl_socket *,
			    const void *, size_t);
ssize_t			 __wrap_mnl_socket_recvfrom(const struct mnl_socket *,
			    void *, size_t);
int			 __wrap_mnl_socket_close(struct mnl_socket *);
int			 __wrap_setsockopt(int, int, int, const void *,
			    socklen_t);

static char	 fake_socket;

struct mnl_socket *
__wrap_mnl_socket_open(int bus)
{
	return (struct mnl_socket *)&fake_socket;
}

int
__wrap_mnl_socket_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
	return 0;
}

int
__wrap_mnl_socket_setsockopt(const struct mnl_socket *nl, int type, void *buf,
    socklen_t len)
{
	return 0;
}

int
__wrap_mnl_socket_get_fd(const struct mnl_socket *nl)
{
	return 99;
}

unsigned int
__wrap_mnl_socket_get_portid(const struct mnl_socket *nl)
{
	return PORTID;
}

int
__wrap_setsockopt(int fd, int level, int name, const void *v, socklen_t len)
{
	return 0;
}

int
__wrap_mnl_socket_close(struct mnl_socket *nl)
{
	return 0;
}

ssize_t
__wrap_mnl_socket_sendto(const struct mnl_socket *nl, const void *buf,
    size_t len)
{
	sent_seq = ((const struct nlmsghdr *)buf)->nlmsg_seq;
	sent = 1;
	return (ssize_t)len;
}

ssize_t
__wrap_mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf,
    size_t bufsz)
{
	const struct answer	*a;
	size_t			 i, off = 0;

	assert_true(sent);
	if (next_answer == nscript) {
		errno = EAGAIN;		/* SO_RCVTIMEO expired */
		return -1;
	}
	a = &script[next_answer++];
	if (a->err != 0) {
		errno = a->err;
		return -1;
	}
	for (i = 0; i < a->nacks; i++) {
		struct nlmsghdr	*nlh = (struct nlmsghdr *)((char *)buf + off);
		struct nlmsgerr	*e;

		assert_true(off + NLMSG_SPACE(sizeof(*e)) <= bufsz);
		memset(nlh, 0, NLMSG_SPACE(sizeof(*e)));
		nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
		nlh->nlmsg_type = NLMSG_ERROR;
		nlh->nlmsg_seq = sent_seq + a->acks[i].idx;
		nlh->nlmsg_pid = a->acks[i].pid ? a->acks[i].pid : PORTID;
		e = NLMSG_DATA(nlh);
		e->error = a->acks[i].error;
		off += NLMSG_SPACE(sizeof(*e));
	}
	return (ssize_t)off;
}

/*
 * A gate batch: begin (0), add/delete/create table (1-3), chain (4), rules
 * loopback, established, gate, drop (5-8), end (9).
 */
static void
make_batch(struct nft_batch *b, struct nft_ruleset **rs,
    struct enf_plan **plan)
{
	static const char	 text[] = "aisb-plan 1\nmode gate\n"
				    "gate 10.199.0.1 43127\n";
	char			 err[256];

	*plan = enf_plan_parse(text, sizeof(text) - 1, err, sizeof(err));
	assert_non_null(*plan);
	*rs = nft_ruleset_new(*plan, 0, err, sizeof(err));
	assert_non_null(*rs);
	assert_int_equal(nft_batch_init(b), 0);
	assert_int_equal(nft_batch_ruleset(*rs, 500, b, err, sizeof(err)), 0);
	assert_int_equal(b->nmsgs, 10);
	assert_int_equal(b->nacks, 8);
	memset(script, 0, sizeof(script));
	nscript = next_answer = 0;
	sent = 0;
}

static void
ack_range(struct answer *a, uint32_t from, uint32_t to)
{
	for (; from <= to; from++) {
		a->acks[a->nacks].idx = from;
		a->acks[a->nacks].error = 0;
		a->nacks++;
	}
}

/* Runs nft_send on the script: its result, and its message in err. */
static int
run(const struct nft_batch *b, char *err, size_t errlen)
{
	err[0] = '\0';
	return nft_send(b, err, errlen);
}

static void
test_all_acked(void **state)
{
	struct nft_batch	 b;
	struct nft_ruleset	*rs;
	struct enf_plan		*p;
	char			 err[256];

	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 8);
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), 0);
	assert_int_equal(next_answer, 1);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* The same ACKs over three reads, in another order. */
	make_batch(&b, &rs, &p);
	ack_range(&script[0], 5, 8);
	ack_range(&script[1], 1, 2);
	script[2].err = EINTR;
	ack_range(&script[3], 3, 4);
	nscript = 4;
	assert_int_equal(run(&b, err, sizeof(err)), 0);
	assert_int_equal(next_answer, 4);
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

static void
test_error_names_message(void **state)
{
	struct nft_batch	 b;
	struct nft_ruleset	*rs;
	struct enf_plan		*p;
	char			 err[256];

	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 4);
	script[0].acks[script[0].nacks].idx = 7;	/* the gate rule */
	script[0].acks[script[0].nacks].error = -EINVAL;
	script[0].nacks++;
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "gate: tcp 10.199.0.1 port 43127"));
	assert_non_null(strstr(err, "Invalid argument"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

static void
test_missing_ack(void **state)
{
	struct nft_batch	 b;
	struct nft_ruleset	*rs;
	struct enf_plan		*p;
	char			 err[256];

	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 7);		/* the last rule never acked */
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "7 of 8 acks"));
	assert_non_null(strstr(err, "timed out"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

static void
test_bad_acks(void **state)
{
	struct nft_batch	 b;
	struct nft_ruleset	*rs;
	struct enf_plan		*p;
	char			 err[256];

	/* A duplicate cannot stand in for a missing ACK. */
	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 7);
	ack_range(&script[0], 7, 7);
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unexpected netlink ack"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* Nor one for a batch marker. */
	make_batch(&b, &rs, &p);
	ack_range(&script[0], 0, 7);
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "batch begin"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* Nor one for a sequence number never sent. */
	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 7);
	ack_range(&script[0], 40, 40);
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown sequence number"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* Messages to another port id are not ours and do not count. */
	make_batch(&b, &rs, &p);
	ack_range(&script[0], 1, 8);
	script[0].acks[7].pid = PORTID + 1;
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "7 of 8 acks"));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);

	/* A failing read is a failure. */
	make_batch(&b, &rs, &p);
	script[0].err = ENOBUFS;
	nscript = 1;
	assert_int_equal(run(&b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, strerror(ENOBUFS)));
	nft_batch_release(&b);
	nft_ruleset_free(rs);
	enf_plan_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_acked),
		cmocka_unit_test(test_error_names_message),
		cmocka_unit_test(test_missing_ack),
		cmocka_unit_test(test_bad_acks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
