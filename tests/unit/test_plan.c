/* Unit tests of the enforcer's plan parser (enforcer/plan.c). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"

static struct enf_plan *
parse(const char *text, char *err, size_t errlen)
{
	return enf_plan_parse(text, strlen(text), err, errlen);
}

/* The plan must fail with an error naming line and containing want. */
static void
expect_error(const char *text, const char *want)
{
	struct enf_plan	*p;
	char		 err[256];

	p = parse(text, err, sizeof(err));
	if (p != NULL || strstr(err, want) == NULL)
		fail_msg("plan:\n%s\nexpected error with \"%s\", got %s \"%s\"",
		    text, want, p != NULL ? "a plan" : "error", err);
	assert_true(strncmp(err, "line ", 5) == 0);
}

static void
test_gate_minimal(void **state)
{
	struct enf_plan	*p;
	char		 err[256];
	uint8_t		 want[4] = { 10, 199, 0, 1 };

	p = parse("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n", err,
	    sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->mode, ENF_MODE_GATE);
	assert_int_equal(p->ngates, 1);
	assert_int_equal(p->gates[0].addr.family, AF_INET);
	assert_memory_equal(p->gates[0].addr.addr, want, 4);
	assert_int_equal(p->gates[0].port, 43127);
	assert_int_equal(p->gates[0].proto, ENF_PROTO_TCP);
	assert_string_equal(p->log_prefix, "");
	assert_false(enf_plan_uses_ipv6(p));
	enf_plan_free(p);
}

static void
test_gate_full(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	p = parse("# written by aisb\n"
	    "\n"
	    "aisb-plan 1\n"
	    "  # indented comment\n"
	    "mode\tgate\n"
	    "gate 10.199.0.1 43127\n"
	    "gate 10.199.0.1 43128 tcp\n"
	    "gate fd00:199::1 5353 udp\n"
	    "log-prefix aisb-drop:\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->ngates, 3);
	assert_int_equal(p->gates[2].addr.family, AF_INET6);
	assert_int_equal(p->gates[2].proto, ENF_PROTO_UDP);
	assert_string_equal(p->log_prefix, "aisb-drop:");
	assert_true(enf_plan_uses_ipv6(p));
	enf_plan_free(p);
}

static void
test_direct(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	p = parse("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "resolver fd00:199::1 5353\n"
	    "allow-name Example.COM 443,80\nallow-name a-b.example.org 22\n"
	    "dns-min-ttl 5\ndns-max-ttl 600\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->mode, ENF_MODE_DIRECT);
	assert_int_equal(p->nnames, 2);
	assert_string_equal(p->names[0].name, "example.com");
	assert_int_equal(p->names[0].nports, 2);
	assert_int_equal(p->names[0].ports[0], 443);
	assert_int_equal(p->names[0].ports[1], 80);
	assert_int_equal(p->nresolvers, 2);
	assert_int_equal(p->resolvers[0].port, 53);
	assert_int_equal(p->resolvers[1].port, 5353);
	assert_int_equal(p->ttl_min, 5);
	assert_int_equal(p->ttl_max, 600);
	enf_plan_free(p);
}

static void
test_none(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	p = parse("aisb-plan 1\nmode none\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->mode, ENF_MODE_NONE);
	assert_int_equal(p->ttl_min, ENF_TTL_MIN_DEFAULT);
	assert_int_equal(p->ttl_max, ENF_TTL_MAX_DEFAULT);
	enf_plan_free(p);
	enf_plan_free(NULL);
}

static void
test_structure_errors(void **state)
{
	expect_error("", "empty plan");
	expect_error("# only a comment\n", "empty plan");
	expect_error("mode gate\n", "must start with");
	expect_error("aisb-plan 2\nmode none\n", "unsupported plan version");
	expect_error("aisb-plan 01\nmode none\n", "unsupported plan version");
	expect_error("aisb-plan 1\n", "no mode line");
	expect_error("aisb-plan 1\naisb-plan 1\nmode none\n", "given twice");
	expect_error("aisb-plan 1\nmode none\nmode none\n", "mode given twice");
	expect_error("aisb-plan 1\nmode gate\n", "at least one gate");
	expect_error("aisb-plan 1\nmode none", "no newline");
	expect_error("aisb-plan 1\r\nmode none\r\n", "0x0d");
	expect_error("aisb-plan 1\nmode none\nfrobnicate 1\n",
	    "unknown keyword");
	expect_error("aisb-plan 1\nmode sideways\n", "unknown mode");
	expect_error("aisb-plan 1\nmode none # no\n", "comment must be");
	expect_error("aisb-plan 1\nmode none extra\n", "usage: mode");
	expect_error("aisb-plan 1\nmode none\ngate 10.199.0.1 1\n",
	    "only for mode gate");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "allow-name example.com 443\n", "only for mode direct");
	expect_error("aisb-plan 1\nmode none\ndns-min-ttl 5\n",
	    "only for mode direct");
	expect_error("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n",
	    "at least one allow-name");
	expect_error("aisb-plan 1\nmode direct\nallow-name example.com 1\n",
	    "at least one resolver");
	expect_error("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name example.com 1\ndns-min-ttl 60\ndns-max-ttl 30\n",
	    "above dns-max-ttl");
	expect_error("aisb-plan 1\nmode none\na b c d e f g h i\n",
	    "too many words");
}

static void
test_value_errors(void **state)
{
	static const char *bad_gate[] = {
		"gate 10.199.0.1\n",
		"gate 10.199.0.1 0\n",
		"gate 10.199.0.1 65536\n",
		"gate 10.199.0.1 +80\n",
		"gate 10.199.0.1 080\n",
		"gate 10.199.0.1 80 sctp\n",
		"gate 0.0.0.0 80\n",
		"gate 224.0.0.1 80\n",
		"gate ff02::1 80\n",
		"gate fe80::1%eth0 80\n",
		"gate gate.example 80\n",
		"gate 10.199.0.300 80\n",
	};
	char	 buf[256];
	size_t	 i;

	for (i = 0; i < sizeof(bad_gate) / sizeof(bad_gate[0]); i++) {
		snprintf(buf, sizeof(buf), "aisb-plan 1\nmode gate\n%s",
		    bad_gate[i]);
		expect_error(buf, "line 3:");
	}
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 80\n"
	    "gate 10.199.0.1 80 tcp\n", "gate listed twice");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "log-prefix has\"quote\n", "log-prefix has a character");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "log-prefix a\nlog-prefix b\n", "log-prefix given twice");
}

static void
test_name_errors(void **state)
{
	static const struct {
		const char	*line;
		const char	*want;
	} cases[] = {
		{ "allow-name *.example.com 443\n", "wildcards" },
		{ "allow-name example.com. 443\n", "empty label" },
		{ "allow-name .example.com 443\n", "empty label" },
		{ "allow-name ex_ample.com 443\n", "outside [a-z0-9.-]" },
		{ "allow-name -a.example.com 443\n", "starts with" },
		{ "allow-name a-.example.com 443\n", "ends with" },
		{ "allow-name 192.0.2.1 443\n", "not a name" },
		{ "allow-name example.com\n", "usage: allow-name" },
		{ "allow-name example.com 443,\n", "empty port" },
		{ "allow-name example.com ,443\n", "empty port" },
		{ "allow-name example.com 443,,80\n", "empty port" },
		{ "allow-name example.com 443,443\n", "listed twice" },
		{ "allow-name example.com 0\n", "bad port" },
		{ "allow-name example.com 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,"
		    "16,17\n", "more than 16 ports" },
	};
	char	 buf[512];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "aisb-plan 1\nmode direct\n"
		    "resolver 10.199.0.1\n%s", cases[i].line);
		expect_error(buf, cases[i].want);
	}
	expect_error("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name example.com 1\nallow-name EXAMPLE.com 2\n",
	    "listed twice");
	/* a resolver inside the sandbox cannot be confined by its address */
	expect_error("aisb-plan 1\nmode direct\nresolver 127.0.0.53\n"
	    "allow-name example.com 1\n", "is a loopback or IPv4-mapped");
	expect_error("aisb-plan 1\nmode direct\nresolver ::1\n"
	    "allow-name example.com 1\n", "is a loopback or IPv4-mapped");
	expect_error("aisb-plan 1\nmode direct\nresolver ::ffff:10.0.2.3\n"
	    "allow-name example.com 1\n", "is a loopback or IPv4-mapped");
}

static void
test_bounds(void **state)
{
	char	*buf;
	size_t	 i, off;
	char	 err[256];

	/* A label of 64 bytes, a name of 254 bytes. */
	buf = malloc(ENF_PLAN_MAX_BYTES + 2);
	assert_non_null(buf);
	off = (size_t)snprintf(buf, 200, "aisb-plan 1\nmode direct\n"
	    "resolver 10.199.0.1\nallow-name ");
	memset(buf + off, 'a', 64);
	off += 64;
	memcpy(buf + off, " 1\n", 4);
	expect_error(buf, "longer than 63");

	/* 65 names. */
	off = (size_t)snprintf(buf, 200, "aisb-plan 1\nmode direct\n"
	    "resolver 10.199.0.1\n");
	for (i = 0; i <= ENF_PLAN_MAX_NAMES; i++)
		off += (size_t)snprintf(buf + off, 64,
		    "allow-name n%zu.example 443\n", i);
	expect_error(buf, "more than 64 allow-name");

	/* A line over the limit. */
	off = (size_t)snprintf(buf, 200, "aisb-plan 1\n# ");
	memset(buf + off, 'x', ENF_PLAN_MAX_LINE);
	off += ENF_PLAN_MAX_LINE;
	memcpy(buf + off, "\nmode none\n", 12);
	expect_error(buf, "longer than 512");

	/* The whole plan over the limit: comments only. */
	memset(buf, '\n', ENF_PLAN_MAX_BYTES + 1);
	assert_null(enf_plan_parse(buf, ENF_PLAN_MAX_BYTES + 1, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "larger than"));

	/* NUL inside. */
	assert_null(enf_plan_parse("aisb-plan 1\n\0mode none\n", 22, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "line 2: byte 0x00"));

	/* 9 gates. */
	off = (size_t)snprintf(buf, 200, "aisb-plan 1\nmode gate\n");
	for (i = 0; i <= ENF_PLAN_MAX_GATES; i++)
		off += (size_t)snprintf(buf + off, 64, "gate 10.199.0.1 %zu\n",
		    i + 1);
	expect_error(buf, "more than 8 gate");
	free(buf);
}

static void
test_read_fd(void **state)
{
	int	 fds[2];
	char	*buf;
	char	 err[128];
	ssize_t	 n;

	buf = malloc(ENF_PLAN_MAX_BYTES + 1);
	assert_non_null(buf);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "aisb-plan 1\nmode none\n", 22), 22);
	close(fds[1]);
	n = enf_plan_read(fds[0], buf, ENF_PLAN_MAX_BYTES + 1, err,
	    sizeof(err));
	close(fds[0]);
	assert_int_equal(n, 22);
	assert_int_equal(enf_plan_read(0, buf, 10, err, sizeof(err)), -1);
	free(buf);
}

static void
test_addr_refused(void **state)
{
	static const struct {
		const char	*addr;
		int		 refused;
	} cases[] = {
		{ "93.184.216.34", 0 },
		{ "10.199.0.1", 0 },		/* private: the launcher's call */
		{ "0.0.0.0", 1 },
		{ "127.0.0.1", 1 },
		{ "127.255.255.254", 1 },
		{ "169.254.169.254", 1 },	/* cloud metadata */
		{ "224.0.0.1", 1 },
		{ "255.255.255.255", 1 },
		{ "2606:2800:220:1::1", 0 },
		{ "fd00:199::1", 0 },
		{ "::", 1 },
		{ "::1", 1 },
		{ "::127.0.0.1", 1 },
		{ "::ffff:169.254.169.254", 1 },
		{ "64:ff9b::a9fe:a9fe", 1 },
		{ "fe80::1", 1 },
		{ "febf::1", 1 },
		{ "fec0::1", 0 },
		{ "ff02::1", 1 },
		{ "2002:a9fe:a9fe::1", 1 },
		{ "2001:0:4136:e378::1", 1 },
		{ "2001:db8::1", 0 },		/* documentation: private */
		{ "::ffff:0:808:808", 1 },	/* SIIT carries IPv4 */
		{ "::ffff:0:7f00:1", 1 },
		{ "64:ff9b:1:808:8:808:808:808", 1 },	/* NAT64 local-use */
		{ "64:ff9b:1:a08:8:808:808:808", 1 },
	};
	struct enf_addr	 a;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.family = strchr(cases[i].addr, ':') ? AF_INET6 : AF_INET;
		assert_int_equal(inet_pton(a.family, cases[i].addr, a.addr), 1);
		if (enf_addr_refused(&a) != cases[i].refused)
			fail_msg("%s: refused should be %d", cases[i].addr,
			    cases[i].refused);
	}
}

static void
test_ranges_and_stub(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	p = parse("aisb-plan 1\nmode direct\nresolver 10.0.2.3\n"
	    "allow-name svc.test 443\nallow-range 10.199.0.0/16\n"
	    "allow-range fd00:199::/64\nallow-range 192.168.7.7/32\n"
	    "dns-stub 127.0.0.1\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nranges, 3);
	assert_int_equal(p->ranges[0].prefix, 16);
	assert_int_equal(p->ranges[1].net.family, AF_INET6);
	assert_true(p->has_stub);
	assert_int_equal(p->stub.port, 53);
	enf_plan_free(p);

	p = parse("aisb-plan 1\nmode direct\nresolver 10.0.2.3\n"
	    "allow-name svc.test 443\ndns-stub ::1 5300\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->stub.addr.family, AF_INET6);
	assert_int_equal(p->stub.port, 5300);
	assert_int_equal(p->nranges, 0);
	enf_plan_free(p);

#define DIRECT "aisb-plan 1\nmode direct\nresolver 10.0.2.3\n" \
	"allow-name svc.test 443\n"
	expect_error(DIRECT "allow-range 10.199.0.1/16\n", "bits set past");
	expect_error(DIRECT "allow-range 10.199.0.0\n", "ADDRESS/PREFIX");
	expect_error(DIRECT "allow-range 10.199.0.0/33\n", "bad prefix");
	expect_error(DIRECT "allow-range fd00::/129\n", "bad prefix");
	expect_error(DIRECT "allow-range 10.0.0.0/8\nallow-range 10.0.0.0/8\n",
	    "listed twice");
	expect_error(DIRECT "dns-stub 10.0.2.15\n", "127.0.0.0/8 or ::1");
	expect_error(DIRECT "dns-stub fd00::1\n", "127.0.0.0/8 or ::1");
	expect_error(DIRECT "dns-stub 127.0.0.1 0\n", "bad dns-stub port");
	expect_error(DIRECT "dns-stub 127.0.0.1\ndns-stub 127.0.0.2\n",
	    "given twice");
#undef DIRECT
	expect_error("aisb-plan 1\nmode gate\ngate 10.0.2.2 1\n"
	    "dns-stub 127.0.0.1\n", "only for mode direct");
	expect_error("aisb-plan 1\nmode none\nallow-range 10.0.0.0/8\n",
	    "only for mode direct");
}

static void
test_addr_ok(void **state)
{
	static const struct {
		const char	*addr;
		int		 ok;
	} cases[] = {
		{ "93.184.216.34", 1 },
		{ "10.199.0.1", 1 },		/* in allow-range 10.199.0.0/16 */
		{ "10.198.0.1", 0 },		/* private 10/8, not covered */
		{ "172.16.0.1", 0 },
		{ "172.32.0.1", 1 },
		{ "192.168.7.7", 0 },
		{ "100.64.0.1", 0 },
		{ "198.19.255.255", 0 },
		{ "192.0.0.8", 0 },
		{ "127.0.0.1", 0 },		/* allow-range cannot open it */
		{ "169.254.169.254", 0 },
		{ "fd00:199::1", 1 },		/* in allow-range fd00:199::/64 */
		{ "fd00:198::1", 0 },
		{ "fec0::1", 0 },
		{ "2001:db8::1", 0 },		/* documentation 2001:db8::/32 */
		{ "2606:2800:220:1::1", 1 },
		{ "203.0.113.9", 0 },		/* documentation 203.0.113.0/24 */
		{ "::1", 0 },
		{ "::ffff:0:a00:1", 0 },	/* SIIT form of 10.0.0.1 */
	};
	struct enf_plan	*p;
	struct enf_addr	 a;
	const char	*why;
	char		 err[256];
	size_t		 i;

	p = parse("aisb-plan 1\nmode direct\nresolver 10.0.2.3\n"
	    "allow-name svc.test 443\nallow-range 10.199.0.0/16\n"
	    "allow-range fd00:199::/64\nallow-range 127.0.0.0/8\n",
	    err, sizeof(err));
	assert_non_null(p);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.family = strchr(cases[i].addr, ':') ? AF_INET6 : AF_INET;
		assert_int_equal(inet_pton(a.family, cases[i].addr, a.addr), 1);
		why = NULL;
		if (enf_plan_addr_ok(p, &a, &why) != cases[i].ok)
			fail_msg("%s: ok should be %d", cases[i].addr,
			    cases[i].ok);
		if (!cases[i].ok)
			assert_non_null(why);
	}
	enf_plan_free(p);
}

/* record PATH MAXBYTES: direct mode only, bounded, a clean absolute path. */
static void
test_record(void **state)
{
	struct enf_plan	*p;
	char		 err[256], long_path[ENF_PLAN_MAX_PATH + 8], text[512];
#define DIRECT	"aisb-plan 1\nmode direct\nresolver 10.0.2.3\n" \
		"allow-name example.com 443\n"

	p = parse(DIRECT, err, sizeof(err));
	assert_non_null(p);
	assert_string_equal(p->record_path, "");
	enf_plan_free(p);

	p = parse(DIRECT "record /run/aisb/record/capture.pcapng 1073741824\n",
	    err, sizeof(err));
	assert_non_null(p);
	assert_string_equal(p->record_path, "/run/aisb/record/capture.pcapng");
	assert_true(p->record_max == 1073741824ULL);
	enf_plan_free(p);

	p = parse(DIRECT "record /c.pcapng 1099511627776\n", err, sizeof(err));
	assert_non_null(p);
	assert_true(p->record_max == ENF_RECORD_LIMIT);
	enf_plan_free(p);

	expect_error(DIRECT "record /c.pcapng 1099511627777\n",
	    "bad record size");
	expect_error(DIRECT "record /c.pcapng 1023\n", "bad record size");
	expect_error(DIRECT "record /c.pcapng 1G\n", "bad record size");
	expect_error(DIRECT "record /c.pcapng 01024\n", "bad record size");
	expect_error(DIRECT "record /c.pcapng\n", "usage: record PATH MAXBYTES");
	expect_error(DIRECT "record /c.pcapng 2048 x\n",
	    "usage: record PATH MAXBYTES");
	expect_error(DIRECT "record /a.pcapng 2048\nrecord /b.pcapng 2048\n",
	    "record given twice");
	expect_error(DIRECT "record c.pcapng 2048\n", "not an absolute file");
	expect_error(DIRECT "record /run/aisb/ 2048\n", "not an absolute file");
	expect_error(DIRECT "record / 2048\n", "not an absolute file");
	expect_error(DIRECT "record /run//c 2048\n", "component");
	expect_error(DIRECT "record /run/../etc/c 2048\n", "component");
	expect_error(DIRECT "record /run/./c 2048\n", "component");
	expect_error(DIRECT "record /run/.. 2048\n", "component");
	expect_error(DIRECT "record /run/. 2048\n", "component");
	expect_error(DIRECT "record /run/a$b 2048\n", "character outside");
	expect_error(DIRECT "record /run/a%b 2048\n", "character outside");
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[ENF_PLAN_MAX_PATH + 1] = '\0';
	snprintf(text, sizeof(text), DIRECT "record %s 2048\n", long_path);
	expect_error(text, "longer than");
	long_path[ENF_PLAN_MAX_PATH] = '\0';
	snprintf(text, sizeof(text), DIRECT "record %s 2048\n", long_path);
	p = parse(text, err, sizeof(err));
	assert_non_null(p);
	enf_plan_free(p);

	/* in gate mode the gate records; none has nothing to record */
	expect_error("aisb-plan 1\nmode gate\ngate 10.0.2.2 8080\n"
	    "record /c.pcapng 2048\n", "record is only for mode direct");
	expect_error("aisb-plan 1\nmode none\nrecord /c.pcapng 2048\n",
	    "record is only for mode direct");
#undef DIRECT
}

static void
test_transparent(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	(void)state;
	p = parse("aisb-plan 1\nmode gate\ngate 10.199.0.1 5353 udp\n"
	    "gate 10.199.0.1 43127\ntransparent 443,80,8443\ndns-gate\n", err,
	    sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->ntports, 3);
	assert_int_equal(p->tports[0], 443);
	assert_int_equal(p->tports[1], 80);
	assert_int_equal(p->tports[2], 8443);
	assert_true(p->dns_gate);
	/* set at run time only */
	assert_int_equal(p->relay_port, 0);
	assert_int_equal(p->relay_dns_port, 0);
	/* the relay dials the tcp gate, not the first line */
	assert_ptr_equal(enf_plan_relay_gate(p), &p->gates[1]);
	enf_plan_free(p);

	p = parse("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "dns-gate\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->ntports, 0);
	assert_true(p->dns_gate);
	enf_plan_free(p);

	expect_error("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name a.test 443\ntransparent 443\n",
	    "only for mode gate");
	expect_error("aisb-plan 1\nmode none\ndns-gate\n",
	    "only for mode gate");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 53 udp\n"
	    "dns-gate\n", "need a tcp gate line");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent 80\ntransparent 443\n", "transparent given twice");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent 80,80\n", "port 80 listed twice");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent 0\n", "bad port");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent 80,\n", "empty port");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent\n", "usage: transparent");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
	    "more than 16 ports");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "dns-gate yes\n", "usage: dns-gate");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 53\n"
	    "dns-gate\n", "gate on port 53");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "dns-gate\ndns-gate\n", "dns-gate given twice");
}

/* transparent-range: every TCP port of the gate's synthetic addresses. */
static void
test_transparent_range(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	(void)state;
	p = parse("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "transparent-range 198.18.0.0/15\n", err, sizeof(err));
	assert_non_null(p);
	assert_true(p->has_trange);
	assert_int_equal(p->trange.net.family, AF_INET);
	assert_int_equal(p->trange.prefix, 15);
	assert_int_equal(p->trange.net.addr[0], 198);
	assert_int_equal(p->trange.net.addr[1], 18);
	assert_int_equal(p->ntports, 0);
	assert_true(enf_plan_catches_tcp(p));
	enf_plan_free(p);

	p = parse("aisb-plan 1\nmode gate\ngate 10.199.0.1 43127\n"
	    "dns-gate\n", err, sizeof(err));
	assert_non_null(p);
	assert_false(enf_plan_catches_tcp(p));
	enf_plan_free(p);

	p = parse("aisb-plan 1\nmode gate\ngate fd00::1 43127\n"
	    "transparent-range 2001:db8:5::/48\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->trange.net.family, AF_INET6);
	assert_int_equal(p->trange.prefix, 48);
	enf_plan_free(p);

	expect_error("aisb-plan 1\nmode direct\nresolver 10.199.0.1\n"
	    "allow-name a.test 443\ntransparent-range 198.18.0.0/15\n",
	    "only for mode gate");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 53 udp\n"
	    "transparent-range 198.18.0.0/15\n", "need a tcp gate line");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent-range 198.18.0.0/15\ntransparent-range "
	    "198.18.0.0/16\n", "transparent-range given twice");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent-range 198.18.0.1/15\n", "bits set past /15");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent-range 198.0.0.0/7\n", "wider than /8");
	expect_error("aisb-plan 1\nmode gate\ngate fd00::1 1\n"
	    "transparent-range fd00::/15\n", "wider than /16");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent-range 198.18.0.0\n", "bad range");
	expect_error("aisb-plan 1\nmode gate\ngate 10.199.0.1 1\n"
	    "transparent-range\n", "usage: transparent-range");
	expect_error("aisb-plan 1\nmode gate\ngate 198.19.0.7 1\n"
	    "transparent-range 198.18.0.0/15\n", "holds a gate's address");
}

/* gate-uid and serve: the lines of aisb-enforce --init (a pod). */
static void
test_pod(void **state)
{
	struct enf_plan	*p;
	char		 err[256];

	(void)state;
	p = parse("aisb-plan 1\nmode gate\ngate 127.0.0.1 3128\n"
	    "gate-uid 65532\nserve 8080,9090\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->gate_uid, 65532);
	assert_int_equal(p->nserve, 2);
	assert_int_equal(p->serve[0], 8080);
	assert_int_equal(p->serve[1], 9090);
	enf_plan_free(p);
	/* serve without a gate, in any mode; the highest uid but -1 */
	p = parse("aisb-plan 1\nmode none\nserve 80\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->gate_uid, 0);
	assert_int_equal(p->nserve, 1);
	enf_plan_free(p);
	p = parse("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid 4294967294\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->gate_uid, 4294967294u);
	enf_plan_free(p);

	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid 0\n", "bad gate-uid \"0\"");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid 4294967295\n", "bad gate-uid");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid -5\n", "bad gate-uid");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid 65532\ngate-uid 65532\n", "gate-uid given twice");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid\n", "usage: gate-uid UID");
	expect_error("aisb-plan 1\nmode none\ngate-uid 65532\n",
	    "gate-uid is only for mode gate");
	expect_error("aisb-plan 1\nmode none\nserve 80\nserve 81\n",
	    "serve given twice");
	expect_error("aisb-plan 1\nmode none\nserve 80,80\n",
	    "port 80 listed twice");
	expect_error("aisb-plan 1\nmode none\nserve 0\n", "bad port");
	expect_error("aisb-plan 1\nmode none\nserve\n", "usage: serve");
	expect_error("aisb-plan 1\nmode none\n"
	    "serve 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
	    "more than 16 ports");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "gate-uid 65532\ntransparent 443\n", "exclude transparent");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "dns-gate\nserve 80\n", "exclude transparent, transparent-range "
	    "and dns-gate");
	expect_error("aisb-plan 1\nmode gate\ngate 127.0.0.1 1\n"
	    "transparent-range 198.18.0.0/15\nserve 80\n", "exclude transparent");
}

/* home-dir: the recipe's folders, relative, plain parts, bounded */
static void
test_home_dir(void **state)
{
	struct enf_plan	*p;
	char		 err[256], text[2048];
	size_t		 i, off;

	p = parse("aisb-plan 1\nmode none\nhome-dir .codex\n"
	    "home-dir .config/gh_2-x\n", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(p->nhomedirs, 2);
	assert_string_equal(p->homedirs[0], ".codex");
	assert_string_equal(p->homedirs[1], ".config/gh_2-x");
	enf_plan_free(p);
	expect_error("aisb-plan 1\nmode none\nhome-dir ../etc\n", "\"..\"");
	expect_error("aisb-plan 1\nmode none\nhome-dir a/../b\n", "\"..\"");
	expect_error("aisb-plan 1\nmode none\nhome-dir /etc\n", "relative");
	expect_error("aisb-plan 1\nmode none\nhome-dir a//b\n", "empty");
	expect_error("aisb-plan 1\nmode none\nhome-dir a/\n", "relative");
	expect_error("aisb-plan 1\nmode none\nhome-dir ./a\n", "\".\"");
	expect_error("aisb-plan 1\nmode none\nhome-dir a$b\n", "letters");
	expect_error("aisb-plan 1\nmode none\nhome-dir\n", "usage");
	off = (size_t)snprintf(text, sizeof(text), "aisb-plan 1\nmode none\n");
	for (i = 0; i <= ENF_PLAN_MAX_HOMEDIRS; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
		    "home-dir d%zu\n", i);
	expect_error(text, "more than 8 home-dir lines");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_minimal),
		cmocka_unit_test(test_gate_full),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_structure_errors),
		cmocka_unit_test(test_value_errors),
		cmocka_unit_test(test_name_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_read_fd),
		cmocka_unit_test(test_addr_refused),
		cmocka_unit_test(test_ranges_and_stub),
		cmocka_unit_test(test_addr_ok),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_transparent),
		cmocka_unit_test(test_transparent_range),
		cmocka_unit_test(test_pod),
		cmocka_unit_test(test_home_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
