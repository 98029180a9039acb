/*
 * The names behind the synthetic addresses (gate/synth.c): what AISB-DNS
 * answered a session, looked up by that session only; the latest of two
 * names that share an address; the bounds (names per session, sessions),
 * least recently used out; the policy's exact names as the fallback, and
 * none when two of them share an address, scanned and through the index
 * (rebuilt for a reloaded policy; the policies of many users in turn,
 * more than the indexes kept); addresses outside the range.  A session is
 * a credential (its token file line's key) and a label: one label through
 * two lines is two sessions.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dnsmsg.h"
#include "policy.h"
#include "gate.h"

static void
synth_of(const char *name, struct policy_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	dnsmsg_synth_v4(name, strlen(name), a->bytes);
}

/* no token file line: the key of --users and of a gate without one */
static const unsigned char	 nokey[GATE_AUTH_KEY];

static void
note_k(struct gate_synth *s, const unsigned char *key, const char *label,
    const char *name)
{
	struct policy_addr	 a;

	synth_of(name, &a);
	assert_int_equal(gate_synth_note(s, key, label, name, a.bytes), 0);
}

static void
note(struct gate_synth *s, const char *label, const char *name)
{
	note_k(s, nokey, label, name);
}

/* The name the session (key, label) gets for name's address; "" for
 * none. */
static const char *
lookup_k(struct gate_synth *s, const struct policy *p,
    const unsigned char *key, const char *label, const char *name)
{
	static char		 out[POLICY_MAX_NAME + 1];
	struct policy_addr	 a;

	synth_of(name, &a);
	if (gate_synth_name(s, p, key, label, &a, out, sizeof(out)) == -1)
		assert_string_equal(out, "");
	return out;
}

static const char *
lookup(struct gate_synth *s, const struct policy *p, const char *label,
    const char *name)
{
	return lookup_k(s, p, nokey, label, name);
}

static struct policy *
load(const char *yaml)
{
	struct policy	*p;

	assert_int_equal(policy_load_buffer("t.yaml", yaml, strlen(yaml), &p,
	    NULL), 0);
	return p;
}

/* Two names of the form n<i>.test whose synthetic addresses are equal. */
static void
collision(char *a, char *b, size_t len)
{
	static uint32_t	 seen[131070];
	uint8_t		 x[4];
	uint32_t	 v;
	unsigned	 i;

	memset(seen, 0, sizeof(seen));
	for (i = 1; i < 200000; i++) {
		snprintf(a, len, "n%u.test", i);
		dnsmsg_synth_v4(a, strlen(a), x);
		v = ((uint32_t)x[1] & 1) << 16 | (uint32_t)x[2] << 8 | x[3];
		if (seen[v] != 0) {
			snprintf(b, len, "n%u.test", seen[v]);
			return;
		}
		seen[v] = i;
	}
	fail_msg("no two names collide");
}

static void
test_sessions(void **state)
{
	struct gate_synth	*s;
	struct policy_addr	 a;
	char			 out[POLICY_MAX_NAME + 1];

	(void)state;
	assert_non_null(s = gate_synth_new());
	note(s, "sess-1", "a.wild.test");
	assert_string_equal(lookup(s, NULL, "sess-1", "a.wild.test"),
	    "a.wild.test");
	/* another session was not given it */
	assert_string_equal(lookup(s, NULL, "sess-2", "a.wild.test"), "");
	assert_string_equal(lookup(s, NULL, "sess-1", "b.wild.test"), "");
	/* an address outside 198.18.0.0/15, or not IPv4: never a name */
	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	a.bytes[0] = 192;
	a.bytes[2] = 2;
	a.bytes[3] = 1;
	assert_int_equal(gate_synth_name(s, NULL, nokey, "sess-1", &a, out,
	    sizeof(out)), -1);
	a.family = AF_INET6;
	assert_int_equal(gate_synth_name(s, NULL, nokey, "sess-1", &a, out,
	    sizeof(out)), -1);
	/* a short buffer gets nothing rather than a cut name */
	synth_of("a.wild.test", &a);
	assert_int_equal(gate_synth_name(s, NULL, nokey, "sess-1", &a, out,
	    4), -1);
	gate_synth_free(s);
	gate_synth_free(NULL);
}

/*
 * Two token file lines that give one name (lines of any user name, or a
 * labelled line beside one): two sessions, neither told the other's
 * names; each line's own still found, also past the other's answers.
 */
static void
test_credentials(void **state)
{
	struct gate_synth	*s;
	struct policy		*p;
	unsigned char		 k1[GATE_AUTH_KEY], k2[GATE_AUTH_KEY];

	(void)state;
	memset(k1, 0x11, sizeof(k1));
	memcpy(k2, k1, sizeof(k2));
	k2[GATE_AUTH_KEY - 1] ^= 1;		/* one bit of the key */
	p = load("version: 1\nallow:\n  - host: exact.example.com\n"
	    "  - host: \"*.wild.example.com\"\n");
	assert_non_null(s = gate_synth_new());
	note_k(s, k1, "bob", "a.wild.example.com");
	assert_string_equal(lookup_k(s, p, k1, "bob", "a.wild.example.com"),
	    "a.wild.example.com");
	assert_string_equal(lookup_k(s, p, k2, "bob", "a.wild.example.com"),
	    "");
	assert_string_equal(lookup_k(s, p, nokey, "bob",
	    "a.wild.example.com"), "");
	assert_string_equal(lookup_k(s, p, k1, "bobby",
	    "a.wild.example.com"), "");
	note_k(s, k2, "bob", "b.wild.example.com");
	assert_string_equal(lookup_k(s, p, k1, "bob", "b.wild.example.com"),
	    "");
	assert_string_equal(lookup_k(s, p, k2, "bob", "b.wild.example.com"),
	    "b.wild.example.com");
	assert_string_equal(lookup_k(s, p, k1, "bob", "a.wild.example.com"),
	    "a.wild.example.com");
	/* the policy's own exact names are every session's anyway */
	assert_string_equal(lookup_k(s, p, k2, "bob", "exact.example.com"),
	    "exact.example.com");
	gate_synth_free(s);
	policy_free(p);
}

static void
test_collision(void **state)
{
	struct gate_synth	*s;
	struct policy		*p;
	char			 x[32], y[32], yaml[256];

	(void)state;
	collision(x, y, sizeof(x));
	assert_non_null(s = gate_synth_new());
	note(s, "sess-1", x);
	assert_string_equal(lookup(s, NULL, "sess-1", x), x);
	/* the latest answer for the shared address wins */
	note(s, "sess-1", y);
	assert_string_equal(lookup(s, NULL, "sess-1", x), y);
	/* two exact names of a policy sharing it: the policy says nothing */
	snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n  - host: %s\n"
	    "  - host: %s\n    ports: [22]\n", x, y);
	p = load(yaml);
	assert_string_equal(lookup(NULL, p, "sess-2", x), "");
	/* ... through the index too (a gate's synth has one) */
	assert_string_equal(lookup(s, p, "sess-2", x), "");
	/* ... but the session's own answer does */
	assert_string_equal(lookup(s, p, "sess-1", x), y);
	policy_free(p);
	gate_synth_free(s);
}

static void
test_policy_names(void **state)
{
	struct gate_synth	*ss[2], *s;
	struct policy		*p, *q;
	size_t			 i;

	(void)state;
	p = load("version: 1\nallow:\n  - host: git.example.com\n"
	    "    ports: [22]\n  - host: git.example.com\n"
	    "  - host: \"*.wild.example.com\"\n"
	    "deny:\n  - host: evil.example.com\n");
	q = load("version: 1\nallow:\n  - host: other.example.com\n");
	/* the rules scanned (no synth), and the index of a gate's synth */
	ss[0] = NULL;
	assert_non_null(ss[1] = gate_synth_new());
	for (i = 0; i < 2; i++) {
		s = ss[i];
		/* an exact allow rule: known without a query (two rules,
		 * one name) */
		assert_string_equal(lookup(s, p, "sess-1", "git.example.com"),
		    "git.example.com");
		/* a wildcard's names, a deny rule's: only through an answer */
		assert_string_equal(lookup(s, p, "sess-1",
		    "a.wild.example.com"), "");
		assert_string_equal(lookup(s, p, "sess-1",
		    "evil.example.com"), "");
		/* a reloaded policy is another index: the old names go */
		assert_string_equal(lookup(s, q, "sess-1", "git.example.com"),
		    "");
		assert_string_equal(lookup(s, q, "sess-1",
		    "other.example.com"), "other.example.com");
		assert_string_equal(lookup(s, p, "sess-1", "git.example.com"),
		    "git.example.com");
	}
	gate_synth_free(ss[1]);
	policy_free(q);
	policy_free(p);
}

/*
 * --users: each user's policy its own index, more users than indexes
 * kept, in turn, twice: each finds its own names, never another's.
 */
static void
test_users_policies(void **state)
{
	struct gate_synth	*s;
	struct policy		*p[12];
	char			 yaml[256], name[64], other[64];
	size_t			 i, r;

	(void)state;
	assert_non_null(s = gate_synth_new());
	for (i = 0; i < 12; i++) {
		snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n"
		    "  - host: u%zu.example.com\n  - host: all.example.com\n",
		    i);
		p[i] = load(yaml);
	}
	for (r = 0; r < 2; r++)
		for (i = 0; i < 12; i++) {
			snprintf(name, sizeof(name), "u%zu.example.com", i);
			snprintf(other, sizeof(other), "u%zu.example.com",
			    (i + 1) % 12);
			assert_string_equal(lookup(s, p[i], "sess-1", name),
			    name);
			assert_string_equal(lookup(s, p[i], "sess-1", other),
			    "");
			assert_string_equal(lookup(s, p[i], "sess-1",
			    "all.example.com"), "all.example.com");
		}
	for (i = 0; i < 12; i++)
		policy_free(p[i]);
	gate_synth_free(s);
}

static void
test_bounds(void **state)
{
	struct gate_synth	*s;
	char			 name[64], label[32];
	unsigned		 i;

	(void)state;
	assert_non_null(s = gate_synth_new());
	/* GATE_SYNTH_NAMES per session: the least recently used goes */
	for (i = 0; i < GATE_SYNTH_NAMES; i++) {
		snprintf(name, sizeof(name), "h%u.test", i);
		note(s, "sess-1", name);
	}
	assert_string_equal(lookup(s, NULL, "sess-1", "h0.test"), "h0.test");
	note(s, "sess-1", "one-more.test");	/* h1 is the oldest now */
	assert_string_equal(lookup(s, NULL, "sess-1", "h1.test"), "");
	assert_string_equal(lookup(s, NULL, "sess-1", "h0.test"), "h0.test");
	assert_string_equal(lookup(s, NULL, "sess-1", "one-more.test"),
	    "one-more.test");
	/* GATE_SYNTH_LABELS sessions: sess-1, used last, outlives the rest */
	for (i = 0; i < GATE_SYNTH_LABELS - 1; i++) {
		snprintf(label, sizeof(label), "s%u", i);
		note(s, label, "x.test");
	}
	assert_string_equal(lookup(s, NULL, "s0", "x.test"), "x.test");
	assert_string_equal(lookup(s, NULL, "sess-1", "h0.test"), "h0.test");
	note(s, "new", "x.test");	/* s1 was used least recently */
	assert_string_equal(lookup(s, NULL, "s1", "x.test"), "");
	assert_string_equal(lookup(s, NULL, "s0", "x.test"), "x.test");
	assert_string_equal(lookup(s, NULL, "new", "x.test"), "x.test");
	assert_string_equal(lookup(s, NULL, "sess-1", "h0.test"), "h0.test");
	/* a label too long for a session label is not kept */
	{
		char	 big[GATE_SESSION_MAX + 8];

		memset(big, 'l', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(gate_synth_note(s, nokey, big, "x.test",
		    (const uint8_t *)"\xc6\x12\x00\x01"), -1);
	}
	gate_synth_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_collision),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_users_policies),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
