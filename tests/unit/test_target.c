/*
 * host:port parsing and name normalisation.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "policy.h"

static void
ok(const char *in, uint16_t defport, const char *host, uint16_t port, int is_ip)
{
	struct policy_target	 t;
	char			 err[128] = "";

	if (policy_parse_target(in, strlen(in), defport, &t, err,
	    sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", in, err);
	assert_string_equal(t.host, host);
	assert_int_equal(t.hostlen, strlen(host));
	assert_int_equal(t.port, port);
	assert_int_equal(t.is_ip, is_ip);
}

static void
bad_len(const char *in, size_t len, uint16_t defport, const char *why)
{
	struct policy_target	 t;
	char			 err[128] = "";

	if (policy_parse_target(in, len, defport, &t, err, sizeof(err)) == 0)
		fail_msg("'%.*s' accepted as %s:%u", (int)len, in, t.host, t.port);
	if (strstr(err, why) == NULL)
		fail_msg("'%.*s': error '%s' does not mention '%s'", (int)len,
		    in, err, why);
}

static void
bad(const char *in, uint16_t defport, const char *why)
{
	bad_len(in, strlen(in), defport, why);
}

static void
test_names(void **state)
{
	(void)state;
	ok("example.com:443", 0, "example.com", 443, 0);
	ok("Example.COM:443", 0, "example.com", 443, 0);
	ok("example.com.:443", 0, "example.com", 443, 0);
	ok("example.com", 80, "example.com", 80, 0);
	ok("a_b-c.example.com:1", 0, "a_b-c.example.com", 1, 0);
	ok("localhost:8080", 0, "localhost", 8080, 0);
	bad("example.com", 0, "missing port");
	bad("example..com:443", 0, "empty label");
	bad(".example.com:443", 0, "empty label");
	bad("example.com..:443", 0, "empty label");
	bad(".:443", 0, "empty host");
	bad("exa mple.com:443", 0, "space or control");
	bad("exa\tmple.com:443", 0, "control");
	bad_len("exa\0mple.com:443", 16, 0, "NUL");
	bad("ex\x7f.com:443", 0, "control");
	bad("caf\xc3\xa9.example:443", 0, "punycode");
	bad("ex!ample.com:443", 0, "invalid character");
	bad(":443", 0, "empty host");
	bad(":", 0, "empty host");
}

static void
test_lengths_real(void **state)
{
	char	 name[600], want[600];
	size_t	 i, len;

	(void)state;
	memset(name, 'a', 63);
	strcpy(name + 63, ".com:443");
	memcpy(want, name, 67);
	want[67] = '\0';
	ok(name, 0, want, 443, 0);
	memset(name, 'a', 64);
	strcpy(name + 64, ".com:443");
	bad(name, 0, "longer than 63");

	/* 253 bytes total fine (with a trailing dot too), 254 refused */
	len = 0;
	for (i = 0; len + 50 < 253; i++) {
		memset(name + len, 'b', 49);
		name[len + 49] = '.';
		len += 50;
	}
	memset(name + len, 'c', 253 - len);
	len = 253;
	memcpy(want, name, len);
	want[len] = '\0';
	strcpy(name + len, ":443");
	ok(name, 0, want, 443, 0);
	strcpy(name + len, ".:443");
	ok(name, 0, want, 443, 0);
	name[len] = 'd';
	strcpy(name + len + 1, ":443");
	bad(name, 0, "longer than 253");

	/* input bound */
	memset(name, 'a', 513);
	name[513] = '\0';
	bad(name, 443, "longer than 512");
}

static void
test_ports(void **state)
{
	(void)state;
	ok("h.example:1", 0, "h.example", 1, 0);
	ok("h.example:65535", 0, "h.example", 65535, 0);
	ok("h.example:0443", 0, "h.example", 443, 0);
	ok("h.example:00000000000080", 0, "h.example", 80, 0);
	bad("h.example:0", 0, "1 to 65535");
	bad("h.example:000", 0, "1 to 65535");
	bad("h.example:65536", 0, "1 to 65535");
	bad("h.example:99999999999999999999", 0, "1 to 65535");
	bad("h.example:https", 0, "1 to 65535");
	bad("h.example:", 0, "1 to 65535");
	bad("h.example:+80", 0, "1 to 65535");
	bad("h.example:-80", 0, "1 to 65535");
	bad("h.example:80a", 0, "1 to 65535");
}

static void
test_ip_literals(void **state)
{
	(void)state;
	ok("192.0.2.1:443", 0, "192.0.2.1", 443, 1);
	ok("[2001:db8::1]:443", 0, "2001:db8::1", 443, 1);
	ok("[2001:DB8:0:0::1]:443", 0, "2001:db8::1", 443, 1);
	ok("[::1]", 443, "::1", 443, 1);
	ok("[::ffff:127.0.0.1]:80", 0, "::ffff:127.0.0.1", 80, 1);
	bad("[[::1]]:443", 0, "IPv6");
	bad("[::1:443", 0, "missing ']'");
	bad("[::1]443", 0, "junk after");
	bad("[fe80::1%eth0]:443", 0, "zone");
	bad("[example.com]:443", 0, "IPv6");
	bad("[192.0.2.1]:443", 0, "IPv6");
	bad("2001:db8::1", 0, "brackets");
	bad("::1", 443, "brackets");
	bad("::", 443, "brackets");
	bad("::443", 0, "brackets");
	bad("[]:443", 0, "IPv6");
	/* forms a resolver would turn into an address are not names */
	bad("127.1:443", 0, "numeric address");
	bad("0x7f000001:443", 0, "numeric address");
	bad("2130706433:443", 0, "numeric address");
	bad("010.0.0.1:443", 0, "numeric address");
	bad("1.2.3.4.5:443", 0, "numeric address");
	bad("example.123:443", 0, "numeric address");
	ok("123.example:443", 0, "123.example", 443, 0);
}

static void
test_normalize_name(void **state)
{
	char	 out[POLICY_MAX_NAME + 1], err[128];
	size_t	 len;

	(void)state;
	assert_int_equal(policy_normalize_name("WWW.Example.Org.", 16, out,
	    &len, err, sizeof(err)), 0);
	assert_string_equal(out, "www.example.org");
	assert_int_equal(len, 15);
	assert_int_equal(policy_normalize_name(".", 1, out, &len, err,
	    sizeof(err)), -1);
	assert_int_equal(policy_normalize_name("a..", 3, out, &len, err,
	    sizeof(err)), -1);
}

static void
test_addr_parse(void **state)
{
	struct policy_addr	 a;
	char			 buf[64];

	(void)state;
	assert_int_equal(policy_parse_addr("10.1.2.3", 8, &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_string_equal(policy_addr_str(&a, buf, sizeof(buf)), "10.1.2.3");
	assert_int_equal(policy_parse_addr("fe80::1", 7, &a), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(policy_parse_addr("10.1.2", 6, &a), -1);
	assert_int_equal(policy_parse_addr("", 0, &a), -1);
	assert_int_equal(policy_parse_addr("10.1.2.3\0", 9, &a), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_lengths_real),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_ip_literals),
		cmocka_unit_test(test_normalize_name),
		cmocka_unit_test(test_addr_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
