/*
 * aisb-gate --users: the users file parser (gate/users.c, pure) with its
 * bounds and errors (FILE:LINE:COL), and the credential check that picks a
 * user's policy.
 */
#include "config.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"
#include "gate.h"

/* sha256("alice-secret") */
#define ALICE_SHA \
	"0c848abb03307b06cf70cd4e29c157dc81af5e94ab3eb1d0c59a120269572376"

static struct gate_users *
parse(const char *text, char *err, size_t errlen)
{
	return gate_users_parse(text, strlen(text), "u.conf", err, errlen);
}

/* The error text of a refused file. */
static void
refused(const char *text, const char *want)
{
	char	 err[512];

	assert_null(parse(text, err, sizeof(err)));
	if (strcmp(err, want) != 0)
		fail_msg("got \"%s\", want \"%s\"", err, want);
}

/* "Basic base64(user:secret)" */
static void
basic(char *out, size_t len, const char *cred)
{
	static const char	 tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char	*s = (const unsigned char *)cred;
	size_t			 n = strlen(cred), i, o;

	o = (size_t)snprintf(out, len, "Basic ");
	for (i = 0; i < n; i += 3) {
		unsigned	 v = s[i] << 16;

		if (i + 1 < n)
			v |= s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		assert_true(o + 5 < len);
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

static int
check(const struct gate_users *u, const char *cred, char *name, size_t len,
    struct policy **pol)
{
	char	 v[2048];

	basic(v, sizeof(v), cred);
	return gate_users_check(u, v, strlen(v), name, len, pol);
}

static void
test_good(void **state)
{
	struct gate_users	*u;
	struct policy		*p, *got;
	struct policy_errors	 errs;
	char			 err[512], name[GATE_SESSION_MAX];
	const char		*text =
	    "# users\n"
	    "\n"
	    "   # an indented comment\n"
	    "alice\tsha256:" ALICE_SHA "\tpolicy=pol/a.yaml\r\n"
	    "  bob   plain:bob-secret  \n"
	    "c.d_e@f+g-h sha256:" "0C848ABB03307B06CF70CD4E29C157DC"
	    "81AF5E94AB3EB1D0C59A120269572376 policy=/abs/p.yaml";
	const char		*pol = "version: 1\nallow:\n  - host: a.test\n";

	(void)state;
	u = parse(text, err, sizeof(err));
	if (u == NULL)
		fail_msg("%s", err);
	assert_int_equal(gate_users_count(u), 3);
	assert_string_equal(gate_users_name(u, 0), "alice");
	assert_int_equal(gate_users_line(u, 0), 4);
	assert_string_equal(gate_users_policy_path(u, 0), "pol/a.yaml");
	assert_string_equal(gate_users_name(u, 1), "bob");
	assert_null(gate_users_policy_path(u, 1));
	assert_string_equal(gate_users_policy_path(u, 2), "/abs/p.yaml");

	assert_int_equal(policy_load_buffer("a.yaml", pol, strlen(pol), &p,
	    &errs), 0);
	gate_users_set_policy(u, 0, p);		/* takes the reference */
	assert_ptr_equal(gate_users_policy(u, 0), p);

	assert_int_equal(check(u, "alice:alice-secret", name, sizeof(name),
	    &got), 0);
	assert_string_equal(name, "alice");
	assert_ptr_equal(got, p);
	assert_int_equal(check(u, "bob:bob-secret", name, sizeof(name), &got),
	    0);
	assert_string_equal(name, "bob");
	assert_null(got);			/* -f's policy */
	/* upper-case hex is the same digest */
	assert_int_equal(check(u, "c.d_e@f+g-h:alice-secret", name,
	    sizeof(name), &got), 0);
	assert_string_equal(name, "c.d_e@f+g-h");

	/* wrong secret, another user's secret, a prefix, a longer name */
	assert_int_equal(check(u, "alice:bob-secret", name, sizeof(name),
	    &got), -1);
	assert_null(got);
	assert_int_equal(check(u, "bob:alice-secret", name, sizeof(name),
	    &got), -1);
	assert_int_equal(check(u, "alic:alice-secret", name, sizeof(name),
	    &got), -1);
	assert_int_equal(check(u, "alicex:alice-secret", name, sizeof(name),
	    &got), -1);
	assert_int_equal(check(u, "alice:alice-secret\n", name, sizeof(name),
	    &got), -1);
	assert_int_equal(check(u, ":alice-secret", name, sizeof(name), &got),
	    -1);
	assert_int_equal(check(u, "alice", name, sizeof(name), &got), -1);
	/* not Basic, not base64, too long */
	assert_int_equal(gate_users_check(u, "Bearer x", 8, name,
	    sizeof(name), &got), -1);
	assert_int_equal(gate_users_check(u, "Basic !!!!", 10, name,
	    sizeof(name), &got), -1);
	{
		char	 big[1100], v[1600];

		memset(big, 'a', sizeof(big));
		memcpy(big, "alice:", 6);
		big[sizeof(big) - 1] = '\0';
		basic(v, sizeof(v), big);
		assert_int_equal(gate_users_check(u, v, strlen(v), name,
		    sizeof(name), &got), -1);
	}
	/* a short name buffer still gets a terminated name */
	assert_int_equal(check(u, "alice:alice-secret", name, 3, &got), 0);
	assert_string_equal(name, "al");
	gate_users_free(u);
	gate_users_free(NULL);
}

static void
test_errors(void **state)
{
	(void)state;
	refused("", "u.conf: error: no user; write lines of NAME "
	    "sha256:HEX [policy=PATH]");
	refused("# only\n\n", "u.conf: error: no user; write lines of NAME "
	    "sha256:HEX [policy=PATH]");
	refused("al!ce plain:x\n", "u.conf:1:3: error: '!' in a user name; "
	    "use letters, digits and . _ @ + -");
	refused("a:b plain:x\n", "u.conf:1:2: error: ':' in a user name; "
	    "use letters, digits and . _ @ + -");
	/* the character shown alone, whole, or '?' (termsafe.h): an e
	 * acute, ESC, C1's CSI as UTF-8, a byte that starts no character */
	refused("r\xc3\xa9my plain:x\n", "u.conf:1:2: error: '\xc3\xa9' in a "
	    "user name; use letters, digits and . _ @ + -");
	refused("a\033[2J plain:x\n", "u.conf:1:2: error: '?' in a user name; "
	    "use letters, digits and . _ @ + -");
	refused("a\xc2\x9b" "2J plain:x\n", "u.conf:1:2: error: '?' in a user "
	    "name; use letters, digits and . _ @ + -");
	refused("a\xff plain:x\n", "u.conf:1:2: error: '?' in a user name; "
	    "use letters, digits and . _ @ + -");
	refused("a plain:x\n  a plain:y\n", "u.conf:2:3: error: user a is "
	    "already defined on line 1; each name once");
	refused("\n  alice\n", "u.conf:2:8: error: user alice has no "
	    "credential; write sha256:HEX (the SHA-256 of the secret) or "
	    "plain:SECRET");
	refused("a secret\n", "u.conf:1:3: error: a credential is sha256:HEX "
	    "or plain:SECRET (non-empty)");
	refused("a plain:\n", "u.conf:1:3: error: a credential is sha256:HEX "
	    "or plain:SECRET (non-empty)");
	refused("a sha256:abc\n", "u.conf:1:10: error: sha256: wants 64 hex "
	    "digits, not 3 (printf %s SECRET | sha256sum)");
	refused("a sha256:0c848abb03307b06cf70cd4e29c157dc"
	    "81af5e94ab3eb1d0c59a1202695723g6\n", "u.conf:1:72: error: not a hex digit in sha256:");
	refused("a sha256:xc848abb03307b06cf70cd4e29c157dc"
	    "81af5e94ab3eb1d0c59a120269572376\n", "u.conf:1:10: error: not a hex digit in sha256:");
	refused("a plain:x polic=y\n", "u.conf:1:11: error: expected "
	    "policy=PATH or the end of the line");
	refused("a plain:x policy=\n", "u.conf:1:11: error: expected "
	    "policy=PATH or the end of the line");
	refused("a plain:x policy=my file.yaml\n", "u.conf:1:21: error: "
	    "unexpected text after policy=PATH; paths hold no space");
	refused("a plain:x policy=a\033b\n", "u.conf:1:19: error: a control "
	    "character in the policy path");
	{
		const char	 t[] = "a plain:x\nb plain:\0y\n";

		assert_null(gate_users_parse(t, sizeof(t) - 1, "u.conf",
		    (char [256]){ 0 }, 256));
	}
}

static void
test_bounds(void **state)
{
	struct gate_users	*u;
	char			 err[512], *buf, want[256];
	size_t			 i, o;

	(void)state;
	buf = malloc(USERS_MAX_FILE + 2);
	assert_non_null(buf);

	/* a name of GATE_SESSION_MAX - 1 bytes, then one more */
	memset(buf, 'n', GATE_SESSION_MAX - 1);
	strcpy(buf + GATE_SESSION_MAX - 1, " plain:x\n");
	assert_non_null(u = parse(buf, err, sizeof(err)));
	gate_users_free(u);
	memset(buf, 'n', GATE_SESSION_MAX);
	strcpy(buf + GATE_SESSION_MAX, " plain:x\n");
	snprintf(want, sizeof(want), "u.conf:1:1: error: user name longer "
	    "than %d bytes", GATE_SESSION_MAX - 1);
	refused(buf, want);

	/* a secret of USERS_MAX_SECRET bytes, then one more */
	o = (size_t)snprintf(buf, 64, "a plain:");
	memset(buf + o, 's', USERS_MAX_SECRET);
	strcpy(buf + o + USERS_MAX_SECRET, "\n");
	assert_non_null(u = parse(buf, err, sizeof(err)));
	gate_users_free(u);
	memset(buf + o, 's', USERS_MAX_SECRET + 1);
	strcpy(buf + o + USERS_MAX_SECRET + 1, "\n");
	snprintf(want, sizeof(want), "u.conf:1:9: error: secret longer than "
	    "%d bytes", USERS_MAX_SECRET);
	refused(buf, want);

	/* a line of USERS_MAX_LINE bytes (CR aside), then one more */
	o = (size_t)snprintf(buf, 64, "a plain:x policy=");
	memset(buf + o, 'p', USERS_MAX_LINE - o);
	strcpy(buf + USERS_MAX_LINE, "\r\n");
	assert_non_null(u = parse(buf, err, sizeof(err)));
	gate_users_free(u);
	memset(buf + o, 'p', USERS_MAX_LINE + 1 - o);
	strcpy(buf + USERS_MAX_LINE + 1, "\n");
	snprintf(want, sizeof(want), "u.conf:1:%d: error: line longer than %d "
	    "bytes", USERS_MAX_LINE + 1, USERS_MAX_LINE);
	refused(buf, want);

	/* USERS_MAX_ENTRIES users, then one more (comments do not count) */
	for (i = 0, o = 0; i < USERS_MAX_ENTRIES; i++)
		o += (size_t)sprintf(buf + o, "# c\nu%zu plain:x policy=p%zu\n",
		    i, i % 7);
	assert_non_null(u = parse(buf, err, sizeof(err)));
	assert_int_equal(gate_users_count(u), USERS_MAX_ENTRIES);
	gate_users_free(u);
	sprintf(buf + o, "one-more plain:x policy=p\n");
	snprintf(want, sizeof(want), "u.conf:%d:1: error: more than %d users",
	    2 * USERS_MAX_ENTRIES + 1, USERS_MAX_ENTRIES);
	refused(buf, want);

	/* the file: USERS_MAX_FILE bytes, then one more */
	o = (size_t)snprintf(buf, 64, "a plain:x\n");
	memset(buf + o, '\n', USERS_MAX_FILE - o);
	assert_non_null(u = gate_users_parse(buf, USERS_MAX_FILE, "u.conf",
	    err, sizeof(err)));
	gate_users_free(u);
	buf[USERS_MAX_FILE] = '\n';
	assert_null(gate_users_parse(buf, USERS_MAX_FILE + 1, "u.conf", err,
	    sizeof(err)));
	snprintf(want, sizeof(want), "u.conf: error: larger than %d bytes",
	    USERS_MAX_FILE);
	assert_string_equal(err, want);

	/* an error buffer too small for the message is still a string */
	assert_null(gate_users_parse("!", 1, "u.conf", err, 8));
	assert_int_equal(strlen(err), 7);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
