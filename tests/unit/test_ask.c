/*
 * Held requests, the launcher's pure parts: one allow rule inserted into
 * a policy's text (launcher/policytools/polyedit.c) where a reader
 * expects it, every other byte kept, and loaded by the policy library to
 * allow exactly that destination; the unified diff of it; and the gate's
 * JSON of a held request (launcher/session/ask.c) read under its bounds.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy.h"
#include "policytools/polyedit.h"
#include "session/ask.h"

static void
target(const char *s, struct policy_target *t)
{
	char	 err[256];

	if (policy_parse_target(s, strlen(s), 0, t, err, sizeof(err)) == -1)
		fail_msg("%s: %s", s, err);
}

/* in with the rule for dest added is want, and it allows dest */
static void
edit_is(const char *in, const char *dest, const char *want, unsigned line)
{
	struct policy_target	 t;
	struct policy_errors	 errs;
	struct policy_decision	 d;
	struct policy		*p = NULL;
	char			 err[512], *out;
	size_t			 len;
	unsigned		 at;

	target(dest, &t);
	if (launch_policy_add_allow(in, strlen(in), &t, "note", &out, &len,
	    &at, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(len, strlen(out));
	assert_string_equal(out, want);
	assert_int_equal(at, line);
	if (policy_load_buffer("t.yaml", out, len, &p, &errs) == -1) {
		policy_errors_format(&errs, err, sizeof(err));
		fail_msg("does not load:\n%s\n%s", out, err);
	}
	if (t.is_ip)
		policy_decide_addr(p, &t.addr, t.port, &d);
	else
		policy_decide_name(p, t.host, t.hostlen, t.port, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_free(p);
	free(out);
}

static void
test_insert_block(void **state)
{
	(void)state;
	/* after the last entry, before a blank line and the next key */
	edit_is("# mine\nversion: 1\nallow:\n  - host: a.test\n"
	    "    ports: [443]   # https\n\n# why\ndeny:\n  - host: b.test\n",
	    "new.test:8443",
	    "# mine\nversion: 1\nallow:\n  - host: a.test\n"
	    "    ports: [443]   # https\n  # note\n  - host: \"new.test\"\n"
	    "    ports: [8443]\n\n# why\ndeny:\n  - host: b.test\n", 7);
	/* a list at column 0, its items' own key indentation */
	edit_is("version: 1\nallow:\n-   host: a.test\n    ports: [443]\n",
	    "new.test:443",
	    "version: 1\nallow:\n-   host: a.test\n    ports: [443]\n"
	    "# note\n-   host: \"new.test\"\n    ports: [443]\n", 6);
	/* a comment at column 0 between entries stays inside */
	edit_is("version: 1\nallow:\n    - host: a.test\n# b\n"
	    "    - host: b.test\n", "c.test:22",
	    "version: 1\nallow:\n    - host: a.test\n# b\n"
	    "    - host: b.test\n    # note\n    - host: \"c.test\"\n"
	    "      ports: [22]\n", 7);
	/* the last line without its '\n' */
	edit_is("version: 1\nallow:\n  - host: a.test", "b.test:443",
	    "version: 1\nallow:\n  - host: a.test\n  # note\n"
	    "  - host: \"b.test\"\n    ports: [443]\n", 5);
}

static void
test_insert_other(void **state)
{
	(void)state;
	/* no allow: at all, one at the end */
	edit_is("version: 1\ndeny:\n  - host: x.test\n", "a.test:443",
	    "version: 1\ndeny:\n  - host: x.test\nallow:\n  # note\n"
	    "  - host: \"a.test\"\n    ports: [443]\n", 6);
	/* allow: [] becomes the block; its comment stays */
	edit_is("version: 1\nallow: []  # none yet\n", "a.test:443",
	    "version: 1\nallow:  # none yet\n  # note\n  - host: \"a.test\"\n"
	    "    ports: [443]\n", 4);
	/* allow: with nothing under it */
	edit_is("version: 1\nallow:\nallow_ranges: [192.0.2.0/24]\n",
	    "a.test:443", "version: 1\nallow:\n  # note\n"
	    "  - host: \"a.test\"\n    ports: [443]\n"
	    "allow_ranges: [192.0.2.0/24]\n", 4);
	/* an address: a cidr: rule */
	edit_is("version: 1\nallow:\n  - host: a.test\n", "[2001:db8::1]:22",
	    "version: 1\nallow:\n  - host: a.test\n  # note\n"
	    "  - cidr: \"2001:db8::1\"\n    ports: [22]\n", 5);
}

static void
test_insert_refused(void **state)
{
	struct policy_target	 t;
	char			 err[512], *out = NULL;
	size_t			 len;
	unsigned		 at;

	(void)state;
	target("a.test:443", &t);
	assert_int_equal(launch_policy_add_allow("version: 1\nallow: "
	    "[{host: b.test}]\n", 32, &t, NULL, &out, &len, &at, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2: the allow: list is written in "
	    "flow style"));
	assert_null(out);
	assert_int_equal(launch_policy_add_allow("allow:\nallow:\n", 14, &t,
	    NULL, &out, &len, &at, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2: a second allow: key"));
	assert_int_equal(launch_policy_add_allow("allow:\n", 7, &t, "a\nb",
	    &out, &len, &at, err, sizeof(err)), -1);
}

static void
test_diff(void **state)
{
	const char	*a = "1\n2\n3\n4\n5\n6\n7\n8\n";
	const char	*b = "1\n2\n3\n4\nx\ny\n5\n6\n7\n8\n";
	char		*buf = NULL;
	size_t		 len = 0;
	FILE		*f;

	(void)state;
	assert_non_null(f = open_memstream(&buf, &len));
	launch_diff_print(f, "a", a, strlen(a), "b", b, strlen(b));
	fclose(f);
	assert_string_equal(buf, "--- a\n+++ b\n@@ -2,6 +2,8 @@\n 2\n 3\n"
	    " 4\n+x\n+y\n 5\n 6\n 7\n");
	free(buf);
	/* the same text: nothing */
	buf = NULL;
	assert_non_null(f = open_memstream(&buf, &len));
	launch_diff_print(f, "a", a, strlen(a), "b", a, strlen(a));
	fclose(f);
	assert_string_equal(buf, "");
	free(buf);
}

static void
test_held(void **state)
{
	struct launch_held	 h;
	char			 dest[300], big[600];
	const char		*s;

	(void)state;
	s = "{\"id\":12,\"host\":\"a.test\",\"port\":443,\"how\":\"connect\","
	    "\"user\":\"session-0123\",\"method\":null,\"age_ms\":1500,"
	    "\"left_ms\":58500,\"future\":{\"x\":[1,{\"y\":\"}\"}]}} tail";
	assert_int_equal(launch_held_parse(s, strlen(s), &h),
	    strstr(s, " tail") - s);
	assert_int_equal(h.id, 12);
	assert_string_equal(h.host, "a.test");
	assert_int_equal(h.port, 443);
	assert_string_equal(h.how, "connect");
	assert_string_equal(h.user, "session-0123");
	assert_string_equal(h.method, "");
	assert_int_equal(h.age_ms, 1500);
	assert_int_equal(h.left_ms, 58500);
	/* a host a terminal would act on, said with '?' */
	s = "{\"id\":1,\"host\":\"a\\u001b[2J\",\"port\":80}";
	assert_true(launch_held_parse(s, strlen(s), &h) > 0);
	launch_held_dest(&h, dest, sizeof(dest));
	assert_string_equal(dest, "a?[2J:80");
	s = "{\"id\":1,\"host\":\"2001:db8::1\",\"port\":22}";
	assert_true(launch_held_parse(s, strlen(s), &h) > 0);
	launch_held_dest(&h, dest, sizeof(dest));
	assert_string_equal(dest, "[2001:db8::1]:22");
	/* refused: no id, a port out of range, a host past its bound, cut */
	s = "{\"host\":\"a\",\"port\":1}";
	assert_int_equal(launch_held_parse(s, strlen(s), &h), -1);
	s = "{\"id\":1,\"host\":\"a\",\"port\":65536}";
	assert_int_equal(launch_held_parse(s, strlen(s), &h), -1);
	memset(big, 'a', sizeof(big));
	memcpy(big, "{\"id\":1,\"port\":1,\"host\":\"", 25);
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	assert_int_equal(launch_held_parse(big, strlen(big), &h), -1);
	s = "{\"id\":1,\"host\":\"a\",\"port\":1";
	assert_int_equal(launch_held_parse(s, strlen(s), &h), -1);
	/* a REFUSED: no id, a count of at least 1; said with '?' too */
	s = "{\"host\":\"r\\u001b]0;x\\u0007.test\",\"port\":443,\"how\":"
	    "\"connect\",\"user\":null,\"method\":null,\"count\":3,"
	    "\"ago_ms\":2500}";
	assert_int_equal(launch_held_parse(s, strlen(s), &h), strlen(s));
	assert_int_equal(h.count, 3);
	assert_int_equal(h.age_ms, 2500);
	launch_refused_say(&h, "0123abcd", 1, big, sizeof(big));
	assert_string_equal(big, "0123abcd: 3 requests denied without being "
	    "held (too many were waiting), the last r?]0;x?.test:443 "
	    "(connect) 2s ago; each is in the gate's audit log");
	s = "{\"host\":\"a\",\"port\":1,\"count\":0}";
	assert_int_equal(launch_held_parse(s, strlen(s), &h), -1);
}

/* a session's note: its policy, its command printable and cut */
static void
test_note(void **state)
{
	char		 dir[] = "/tmp/test_ask.XXXXXX", path[64], buf[8192];
	char		 big[6000], *cmd[] = { (char *)"curl", (char *)"a\033[2Jb",
	    big };
	FILE		*f;
	size_t		 n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(launch_ask_note(dir, NULL, cmd, 2, buf,
	    sizeof(buf)), 0);
	snprintf(path, sizeof(path), "%s/ask", dir);
	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, "policy -\ncommand curl a?[2Jb\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(launch_ask_note(dir, NULL, cmd, 3, buf,
	    sizeof(buf)), 0);
	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_true(n < sizeof(big));
	assert_int_equal(buf[n - 1], '\n');
	assert_null(memchr(buf + 9, '\n', n - 10));	/* still one line */
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_block),
		cmocka_unit_test(test_insert_other),
		cmocka_unit_test(test_insert_refused),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_note),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
