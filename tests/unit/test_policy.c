/*
 * Loading, rejections (with file:line:column and a hint), matching
 * precedence, canonical dump round trip and identity.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "policy.h"
#include "policy_util.h"

static void
reject_host(const char *host, const char *what, const char *hint)
{
	char	 yaml[1024];

	snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n  - host: %s\n", host);
	reject_at(yaml, 3, 11, what, hint);
}

static void
test_rejections(void **state)
{
	(void)state;
	reject_host("\"*\"", "invalid wildcard", "*.example.org");
	reject_host("\"*.\"", "invalid wildcard", NULL);
	reject_host("\"*.*.x.com\"", "invalid wildcard", NULL);
	reject_host("\"a.*.x.com\"", "invalid wildcard", NULL);
	reject_host("\"*bob.x.com\"", "invalid wildcard", NULL);
	reject_host("\"*.com\"", "bare top-level", "*.example.com");
	reject_host("\"*.com.\"", "bare top-level", NULL);
	reject_host("caf\xc3\xa9.example", "punycode", "punycode");
	reject_host("\"*.caf\xc3\xa9.example\"", "punycode", NULL);
	reject_host("\"~^(unclosed\"", "offset 10", "pcre2pattern");
	reject_host("\"~\"", "1 to", NULL);
	reject_host("\"~^caf\xc3\xa9\\\\.example$\"", "non-ASCII", "punycode");
	reject_host("\"~^a\\x01b$\"", "control byte", NULL);
	reject_host("192.0.2.1", "not an IP address", "cidr:");
	reject_host("\"[2001:db8::1]\"", "not an IP address", "cidr:");
	reject_host("a..b", "empty label", NULL);
	reject_host("127.1", "numeric address", NULL);

	reject_at("version: 1\nallow:\n  - cidr: 192.0.2.1/24\n", 3, 11,
	    "host bits", "192.0.2.0/24");
	reject_at("version: 1\nallow:\n  - cidr: \"2001:db8::1/32\"\n", 3, 11,
	    "host bits", "2001:db8::/32");
	reject_at("version: 1\nallow:\n  - cidr: 192.0.2.0/33\n", 3, 11,
	    "over 32", NULL);
	reject_at("version: 1\nallow:\n  - cidr: 300.0.2.0/24\n", 3, 11,
	    "invalid address", NULL);
	reject_at("version: 1\nallow_ranges: [10.0.0.1/8]\n", 2, 16,
	    "host bits", "10.0.0.0/8");

	/* unknown and duplicate keys, wrong types */
	reject_at("version: 1\nalow:\n  - host: a.com\n", 2, 1,
	    "unknown key 'alow'", "did you mean 'allow'");
	reject_at("version: 1\nfrobnicate: 1\n", 2, 1, "unknown key",
	    "known keys: version allow deny allow_ranges dns");
	reject_at("version: 1\nallow:\n  - host: a.com\n    port: [1]\n", 4, 5,
	    "unknown key 'port'", "did you mean 'ports'");
	/* two letters swapped are one edit: host, not ports (also 2 away) */
	reject_at("version: 1\nallow:\n  - hots: a.com\n", 3, 5,
	    "unknown key 'hots'", "did you mean 'host'?");
	reject_at("version: 1\nallow:\n  - host: a.com\n    prots: [1]\n", 4, 5,
	    "unknown key 'prots'", "did you mean 'ports'?");
	reject_at("version: 1\ndns:\n  sever: [\"192.0.2.1\"]\n", 3, 3,
	    "unknown key 'sever'", "did you mean 'servers'?");
	/* a short word is not two edits from anything */
	reject_at("version: 1\nallow:\n  - id: a.com\n", 3, 5,
	    "unknown key 'id'", "known keys:");
	reject_at("version: 1\nversion: 1\n", 2, 1, "duplicate key 'version'",
	    NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    host: b.com\n", 4, 5,
	    "duplicate key 'host'", NULL);
	reject_at("version: 1\nallow: a.com\n", 2, 8, "must be a list", NULL);
	reject_at("version: 1\nallow:\n  - a.com\n", 3, 5, "must be a mapping",
	    "- host: example.com");
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: 443\n", 4, 12,
	    "must be a list", "ports: [443");
	reject_at("version: 1\nallow:\n  - host: [a.com]\n", 3, 11,
	    "host must be a name", NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    cidr: 192.0.2.0/24\n",
	    3, 5, "not both", NULL);
	reject_at("version: 1\nallow:\n  - ports: [80]\n", 3, 5,
	    "needs host: or cidr:", NULL);
	reject_at("version: 1\ndns: [1.1.1.1]\n", 2, 6, "must be a mapping",
	    NULL);
	reject_at("version: 1\ndns:\n  min_ttl: 10\n  max_ttl: 5\n", 3, 3,
	    "above max_ttl", NULL);
	reject_at("version: 1\ndns:\n  min_ttl: -1\n", 3, 12, "min_ttl", NULL);
	reject_at("version: 1\ndns:\n  servers: [dns.example]\n", 3, 13,
	    "invalid dns server", NULL);

	/* ports */
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: [0]\n", 4, 13,
	    "invalid port '0'", NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: [65536]\n", 4,
	    13, "invalid port", NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: [https]\n", 4,
	    13, "invalid port", NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: [\"9-1\"]\n", 4,
	    13, "invalid port range", NULL);
	reject_at("version: 1\nallow:\n  - host: a.com\n    ports: []\n", 4, 12,
	    "empty ports", NULL);

	/* version */
	reject_at("allow: []\n", 1, 1, "missing version", "version: 1");
	reject_at("version: 2\n", 1, 10, "unsupported policy version", NULL);
	reject_at("", 1, 1, "empty policy", "version: 1");
	reject_at("- 1\n", 1, 1, "a policy is a mapping", NULL);

	/* YAML itself */
	reject_at("version: 1\nallow: [\n", 0, 0, "YAML syntax", NULL);
	reject_at("version: 1\nallow:\n  - &a {host: a.com}\n  - *a\n", 3, 5,
	    "anchors and aliases", NULL);
	reject_at("version: 1\n---\nversion: 1\n", 2, 1, "one YAML document",
	    NULL);
	reject_at("version: 1\nallow: [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]\n",
	    0, 0, "nested deeper", NULL);
}

static void
test_many_errors(void **state)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 yaml[64 * 1024], buf[16384];
	size_t			 off;
	int			 i;

	(void)state;
	/* all problems of one file in one run */
	off = (size_t)snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n"
	    "  - host: \"*\"\n  - host: \"*.com\"\n  - cidr: 10.0.0.1/8\n");
	assert_int_equal(policy_load_buffer("t.yaml", yaml, off, &p, &errs), -1);
	assert_int_equal(errs.count, 3);
	assert_int_equal(errs.err[0].line, 3);
	assert_int_equal(errs.err[1].line, 4);
	assert_int_equal(errs.err[2].line, 5);

	/* beyond POLICY_MAX_ERRORS they are counted, not stored */
	off = (size_t)snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n");
	for (i = 0; i < 40; i++)
		off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
		    "  - host: \"*\"\n");
	assert_int_equal(policy_load_buffer("t.yaml", yaml, off, &p, &errs), -1);
	assert_int_equal(errs.count, POLICY_MAX_ERRORS);
	assert_int_equal(errs.dropped, 40 - POLICY_MAX_ERRORS);
	policy_errors_format(&errs, buf, sizeof(buf));
	assert_non_null(strstr(buf, "8 more errors not shown"));

	/*
	 * An error quotes the file, which may spell any byte in a YAML
	 * string: shown with each control character one '?', as is the
	 * name of the file.
	 */
	off = (size_t)snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n"
	    "  - host: \"a\\e[2Jb\\u009b1m\\u202ec.test\"\n"
	    "  - host: ok.test\n    \"po\\rrts\": [443]\n");
	assert_int_equal(policy_load_buffer("t\033]0;x\a.yaml", yaml, off,
	    &p, &errs), -1);
	assert_int_equal(errs.count, 2);
	policy_errors_format(&errs, buf, sizeof(buf));
	assert_non_null(strstr(buf, "t?]0;x?.yaml:3:"));
	assert_non_null(strstr(buf, "'a?[2Jb?1m?c.test'"));
	assert_non_null(strstr(buf, "'po?rts'"));
	for (off = 0; buf[off] != '\0'; off++)
		assert_true(buf[off] == '\n' || (buf[off] >= 0x20 &&
		    buf[off] < 0x7f));
}

static void
test_file_limits(void **state)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 path[] = "/tmp/aisb-test-policy-XXXXXX";
	char			*big;
	int			 fd;
	size_t			 n = POLICY_MAX_FILE_SIZE + 1;

	(void)state;
	assert_int_equal(policy_load_file("/nonexistent/policy.yaml", &p,
	    &errs), -1);
	assert_non_null(strstr(errs.err[0].msg, "cannot open"));
	assert_int_equal(policy_load_file("/tmp", &p, &errs), -1);
	assert_non_null(strstr(errs.err[0].msg, "not a regular file"));

	assert_true((fd = mkstemp(path)) != -1);
	assert_non_null(big = malloc(n));
	memset(big, '#', n);
	memcpy(big, "version: 1\n", 11);
	big[n - 1] = '\n';
	assert_int_equal(write(fd, big, n), (ssize_t)n);
	close(fd);
	assert_int_equal(policy_load_file(path, &p, &errs), -1);
	assert_non_null(strstr(errs.err[0].msg, "larger than"));
	assert_int_equal(policy_load_buffer("b", big, n, &p, &errs), -1);
	assert_non_null(strstr(errs.err[0].msg, "larger than"));

	/* exactly the limit is fine */
	assert_true((fd = open(path, O_WRONLY | O_TRUNC)) != -1);
	assert_int_equal(write(fd, big, n - 1), (ssize_t)(n - 1));
	close(fd);
	assert_int_equal(policy_load_file(path, &p, &errs), 0);
	policy_free(p);
	unlink(path);
	free(big);
}

static void
decide(const struct policy *p, const char *target, enum policy_verdict v,
    enum policy_reason why, unsigned rule_line)
{
	struct policy_target	 t;
	struct policy_decision	 d;
	struct policy_rule_info	 info;
	char			 err[128];

	if (policy_parse_target(target, strlen(target), 443, &t, err,
	    sizeof(err)) != 0)
		fail_msg("%s: %s", target, err);
	policy_decide(p, &t, &d);
	if (d.verdict != v || d.reason != why)
		fail_msg("%s: got %s/%s, expected %s/%s", target,
		    d.verdict == POLICY_ALLOW ? "allow" : "deny",
		    policy_reason_str(d.reason),
		    v == POLICY_ALLOW ? "allow" : "deny", policy_reason_str(why));
	if (rule_line == 0) {
		assert_null(d.rule);
		return;
	}
	assert_non_null(d.rule);
	policy_rule_info(d.rule, &info);
	if (info.line != rule_line)
		fail_msg("%s: decided by line %u, expected %u", target,
		    info.line, rule_line);
}

static const char precedence_yaml[] =
    "version: 1\n"				/* 1 */
    "allow:\n"					/* 2 */
    "  - host: example.com\n"			/* 3 */
    "  - host: \"*.example.org\"\n"		/* 4 */
    "  - host: \"~^cdn[0-9]+\\\\.example\\\\.net$\"\n"	/* 5 */
    "    ports: [443, 8443]\n"			/* 6 */
    "  - host: \"*.deep.example.org\"\n"	/* 7 */
    "    ports: [22]\n"				/* 8 */
    "  - host: api.example.com\n"		/* 9 */
    "    ports: [\"9000-9100\"]\n"		/* 10 */
    "deny:\n"					/* 11 */
    "  - host: upload.example.org\n"		/* 12 */
    "  - host: \"*.evil.example.org\"\n"	/* 13 */
    "  - host: \"~^cdn666\\\\.\"\n"		/* 14 */
    "  - host: example.com\n"			/* 15 */
    "    ports: [8080]\n"			/* 16 */
    "  - cidr: 192.0.2.128/25\n";		/* 17 */

static void
test_precedence(void **state)
{
	struct policy	*p;

	(void)state;
	p = load(precedence_yaml);
	decide(p, "example.com:443", POLICY_ALLOW, POLICY_R_ALLOWED, 3);
	decide(p, "example.com:80", POLICY_ALLOW, POLICY_R_ALLOWED, 3);
	decide(p, "EXAMPLE.com.:80", POLICY_ALLOW, POLICY_R_ALLOWED, 3);
	decide(p, "example.com:22", POLICY_DENY, POLICY_R_PORT_NOT_ALLOWED, 3);
	decide(p, "example.com:8080", POLICY_DENY, POLICY_R_DENY_RULE, 15);
	decide(p, "www.example.com:443", POLICY_DENY,
	    POLICY_R_HOST_NOT_ALLOWED, 0);
	decide(p, "api.example.com:9050", POLICY_ALLOW, POLICY_R_ALLOWED, 9);
	decide(p, "api.example.com:443", POLICY_DENY,
	    POLICY_R_PORT_NOT_ALLOWED, 9);
	/* wildcard: any depth, never the apex */
	decide(p, "a.example.org:443", POLICY_ALLOW, POLICY_R_ALLOWED, 4);
	decide(p, "a.b.c.example.org:80", POLICY_ALLOW, POLICY_R_ALLOWED, 4);
	decide(p, "example.org:443", POLICY_DENY, POLICY_R_HOST_NOT_ALLOWED, 0);
	decide(p, "xexample.org:443", POLICY_DENY, POLICY_R_HOST_NOT_ALLOWED, 0);
	/* the nearer wildcard adds a port, the wider one still counts */
	decide(p, "x.deep.example.org:22", POLICY_ALLOW, POLICY_R_ALLOWED, 7);
	decide(p, "x.deep.example.org:443", POLICY_ALLOW, POLICY_R_ALLOWED, 4);
	decide(p, "x.deep.example.org:25", POLICY_DENY,
	    POLICY_R_PORT_NOT_ALLOWED, 7);
	/* deny wins: exact deny inside an allowed wildcard, wildcard deny */
	decide(p, "upload.example.org:443", POLICY_DENY, POLICY_R_DENY_RULE, 12);
	decide(p, "a.evil.example.org:443", POLICY_DENY, POLICY_R_DENY_RULE, 13);
	decide(p, "evil.example.org:443", POLICY_ALLOW, POLICY_R_ALLOWED, 4);
	/* regex */
	decide(p, "cdn7.example.net:443", POLICY_ALLOW, POLICY_R_ALLOWED, 5);
	decide(p, "CDN7.Example.Net:8443", POLICY_ALLOW, POLICY_R_ALLOWED, 5);
	decide(p, "cdn7.example.net:80", POLICY_DENY,
	    POLICY_R_PORT_NOT_ALLOWED, 5);
	decide(p, "cdnx.example.net:443", POLICY_DENY,
	    POLICY_R_HOST_NOT_ALLOWED, 0);
	decide(p, "cdn7.example.net.evil.com:443", POLICY_DENY,
	    POLICY_R_HOST_NOT_ALLOWED, 0);
	decide(p, "cdn666.example.net:443", POLICY_DENY, POLICY_R_DENY_RULE, 14);
	/* IP literals: only cidr rules */
	decide(p, "192.0.2.200:443", POLICY_DENY, POLICY_R_DENY_RULE, 17);
	decide(p, "192.0.2.1:443", POLICY_DENY, POLICY_R_HOST_NOT_ALLOWED, 0);
	policy_free(p);
}

static void
test_describe(void **state)
{
	struct policy		*p;
	struct policy_decision	 d;
	char			 buf[256];

	(void)state;
	p = load(precedence_yaml);
	policy_decide_name(p, "a.example.org", 13, 443, &d);
	assert_string_equal(policy_rule_describe(d.rule, buf, sizeof(buf)),
	    "t.yaml:4:5 allow host: *.example.org");
	policy_decide_name(p, "nope.example", 12, 443, &d);
	assert_string_equal(policy_rule_describe(d.rule, buf, sizeof(buf)),
	    "no rule matches");
	policy_free(p);
}

static void
test_regex_limits(void **state)
{
	struct policy		*p;
	struct policy_decision	 d;
	char			 name[254];

	(void)state;
	/* catastrophic backtracking ends at the match limit, fail closed */
	p = load("version: 1\nallow:\n  - host: \"~^(a|a)*(a|a)*(a|a)*b$\"\n"
	    "deny:\n  - host: \"~^(x|x)*(x|x)*(x|x)*y$\"\n"
	    "  - host: never.example\n");
	memset(name, 'a', 60);
	memcpy(name + 60, "c.ab", 5);
	policy_decide_name(p, name, strlen(name), 443, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	memset(name, 'x', 60);
	memcpy(name + 60, "z.xy", 5);
	policy_decide_name(p, name, strlen(name), 443, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	assert_int_equal(d.reason, POLICY_R_DENY_RULE);
	policy_thread_cleanup();
	policy_free(p);
}

/*
 * The regex index must never change a decision: each pattern alone in a
 * policy decides exactly as PCRE2 itself matches, for indexable patterns
 * and for the ones the index must leave alone.
 */
static void
test_regex_index_equivalence(void **state)
{
	static const char *const pats[] = {
		"^cdn[0-9]+\\.example\\.net$",
		"cdn\\.example\\.net$",
		"^x\\.example\\.com$|^y$",
		"^(a|b)\\.example\\.com$",
		"^a|b\\.example\\.com$",
		"(?i)^A\\.Example\\.COM$",
		"^a\\Q.b\\E\\.example\\.com$",
		"^[a\\]]\\.example\\.com$",
		"^[]a]+\\.example\\.com$",
		"^[[:alpha:]]+\\.example\\.com$",
		"^a.example.com$",
		"^a\\\\.example\\.com$",
		"^x\\.example\\.co(m)$",
		"^x\\.example\\.com?$",
		"^x\\.example\\.com{1}$",
		"\\bexample\\.com$",
		"^(?:[a-z]+\\.)*example\\.com$",
		"^.*\\.EXAMPLE\\.com$",
		"^.*-\\.example\\.com$",
		"^x\\-y\\.example\\.com$",
		"^(?=x)x\\.example\\.com$",
		"(*COMMIT)x\\.example\\.com$",
		"example\\.com$",
		"\\.com$",
		"^a\\.b$",
	};
	static const char *const names[] = {
		"cdn1.example.net", "cdn.example.net", "xcdn.example.net",
		"x.example.com", "y", "a.example.com", "b.example.com",
		"a.b.example.com", "abexample.com", "a-example.com",
		"]]]].example.com", "abc.example.com", "a.b.c.example.com",
		"x-y.example.com", "example.com", "www.example.com",
		"foo-.example.com", "a.b", "x.example.co", "xexample.com",
		"x.example.comm", "a.example.com.evil.net",
	};
	size_t	 i, j;

	(void)state;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		char			 yaml[1024], q[256];
		size_t			 k, o = 0;
		struct policy_errors	 errs;
		struct policy		*p;
		pcre2_code		*re;
		pcre2_match_data	*md;
		PCRE2_SIZE		 off;
		int			 code;

		/* YAML double quotes: escape the backslashes */
		for (k = 0; pats[i][k] != '\0'; k++) {
			if (pats[i][k] == '\\')
				q[o++] = '\\';
			q[o++] = pats[i][k];
		}
		q[o] = '\0';
		snprintf(yaml, sizeof(yaml), "version: 1\nallow:\n"
		    "  - host: \"~%s\"\n    ports: [\"1-65535\"]\n", q);
		if (policy_load_buffer("t.yaml", yaml, strlen(yaml), &p,
		    &errs) != 0)
			fail_msg("pattern %s refused: %s", pats[i],
			    errs.err[0].msg);
		re = pcre2_compile((PCRE2_SPTR)pats[i], PCRE2_ZERO_TERMINATED,
		    PCRE2_CASELESS | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF,
		    &code, &off, NULL);
		assert_non_null(re);
		md = pcre2_match_data_create_from_pattern(re, NULL);
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
			struct policy_decision	 d;
			int			 want;

			want = pcre2_match(re, (PCRE2_SPTR)names[j],
			    strlen(names[j]), 0, 0, md, NULL) >= 0;
			policy_decide_name(p, names[j], strlen(names[j]), 443,
			    &d);
			if ((d.verdict == POLICY_ALLOW) != want)
				fail_msg("pattern %s, name %s: policy says %s, "
				    "PCRE2 says %s", pats[i], names[j],
				    d.verdict == POLICY_ALLOW ? "allow" : "deny",
				    want ? "match" : "no match");
		}
		pcre2_match_data_free(md);
		pcre2_code_free(re);
		policy_free(p);
	}
	policy_thread_cleanup();
}

static char *
dump_of(const char *yaml, char sha[POLICY_SHA256_HEX + 1])
{
	struct policy	*p = load(yaml);
	char		*d = policy_dump(p, NULL);

	assert_non_null(d);
	snprintf(sha, POLICY_SHA256_HEX + 1, "%s", policy_sha256(p));
	policy_free(p);
	return d;
}

static void
test_dump_roundtrip(void **state)
{
	char	 sha1[65], sha2[65], sha3[65];
	char	*d1, *d2, *d3, *tail;

	(void)state;
	d1 = dump_of(precedence_yaml, sha1);
	d2 = dump_of(d1, sha2);
	assert_string_equal(sha1, sha2);
	assert_string_equal(d1, d2);
	/* the closing comment is the hash */
	assert_non_null(tail = strstr(d1, "# sha256:"));
	assert_int_equal(strncmp(tail + 9, sha1, 64), 0);
	/* and it loads a third time to the same thing */
	d3 = dump_of(d2, sha3);
	assert_string_equal(sha1, sha3);
	free(d1);
	free(d2);
	free(d3);
}

static void
test_same_meaning_same_hash(void **state)
{
	static const char a[] =
	    "version: 1\n"
	    "allow:\n"
	    "  - host: example.com\n"
	    "  - host: \"*.example.org\"\n"
	    "    ports: [443, 8443, 80]\n"
	    "  - cidr: 192.0.2.0/24\n"
	    "    ports: [22, \"1000-2000\"]\n"
	    "deny:\n"
	    "  - host: upload.example.com\n"
	    "allow_ranges: [127.0.0.1/32, \"::1/128\"]\n";
	static const char b[] =
	    "# comments, order, case, duplicates and spelling differ\n"
	    "allow_ranges: [\"::1\", \"127.0.0.1\"]\n"
	    "deny: [ { host: UPLOAD.example.COM., ports: [\"1-65535\"] } ]\n"
	    "allow:\n"
	    "  - cidr: \"192.0.2.0/24\"\n"
	    "    ports: [\"1000-1500\", 22, \"1400-2000\"]\n"
	    "  - host: \"*.Example.Org.\"\n"
	    "    ports: [8443]\n"
	    "  - host: Example.com.\n"
	    "    ports: [\"0443\", 80]\n"
	    "  - host: \"*.example.org\"\n"
	    "    ports: [\"80-80\", 443]\n"
	    "version: 1\n"
	    "dns: { min_ttl: 5, max_ttl: 300, servers: [] }\n";
	static const char c[] =
	    "version: 1\n"
	    "allow:\n"
	    "  - host: example.com\n"
	    "    ports: [443]\n";
	char	 sha1[65], sha2[65], sha3[65];
	char	*d1, *d2, *d3;

	(void)state;
	d1 = dump_of(a, sha1);
	d2 = dump_of(b, sha2);
	d3 = dump_of(c, sha3);
	assert_string_equal(d1, d2);
	assert_string_equal(sha1, sha2);
	assert_string_not_equal(sha1, sha3);
	free(d1);
	free(d2);
	free(d3);
}

static void
test_introspection(void **state)
{
	struct policy		*p;
	struct policy_rule_info	 info;
	struct policy_addr	 net;
	unsigned		 prefix;

	(void)state;
	p = load("version: 1\nallow:\n  - host: b.example\n  - host: a.example\n"
	    "    ports: [\"80-81\", 82, 443]\n"
	    "allow_ranges: [127.0.0.1/32]\n"
	    "dns:\n  servers: [\"127.0.0.1:5353\", \"::1\", 192.0.2.53]\n"
	    "  min_ttl: 0\n  max_ttl: 60\n");
	assert_int_equal(policy_rule_count(p), 2);
	policy_rule_info(policy_rule_at(p, 0), &info);
	assert_string_equal(info.pattern, "a.example");
	assert_int_equal(info.nports, 2);
	assert_int_equal(info.ports[0].lo, 80);
	assert_int_equal(info.ports[0].hi, 82);
	assert_int_equal(info.ports[1].lo, 443);
	assert_int_equal(info.line, 4);
	assert_null(policy_rule_at(p, 2));
	assert_int_equal(policy_allow_range_count(p), 1);
	policy_allow_range_at(p, 0, &net, &prefix);
	assert_int_equal(prefix, 32);
	assert_int_equal(policy_dns_server_count(p), 3);
	assert_string_equal(policy_dns_server_at(p, 0), "127.0.0.1:5353");
	assert_string_equal(policy_dns_server_at(p, 1), "[::1]:53");
	assert_string_equal(policy_dns_server_at(p, 2), "192.0.2.53:53");
	assert_int_equal(policy_dns_min_ttl(p), 0);
	assert_int_equal(policy_dns_max_ttl(p), 60);
	assert_string_equal(policy_file(p), "t.yaml");
	/* references */
	assert_ptr_equal(policy_ref(p), p);
	policy_free(p);
	policy_free(p);
	policy_free(NULL);
}

/* A name allowed on some port, as the gate's DNS entry asks. */
static void
any(const struct policy *p, const char *name, int want, unsigned rule_line)
{
	struct policy_decision	 d;
	struct policy_rule_info	 info;

	if (policy_name_allowed_any(p, name, strlen(name), &d) != want)
		fail_msg("%s: expected %s", name, want ? "allowed" : "denied");
	assert_int_equal(d.verdict, want ? POLICY_ALLOW : POLICY_DENY);
	if (rule_line == 0)
		return;
	assert_non_null(d.rule);
	policy_rule_info(d.rule, &info);
	if (info.line != rule_line)
		fail_msg("%s: decided by line %u, expected %u", name,
		    info.line, rule_line);
}

static void
test_allowed_any(void **state)
{
	struct policy	*p;

	(void)state;
	p = load(precedence_yaml);
	any(p, "example.com", 1, 3);
	any(p, "a.example.org", 1, 4);
	any(p, "a.b.example.org", 1, 4);
	any(p, "example.org", 0, 0);		/* never the apex */
	any(p, "cdn7.example.net", 1, 5);
	any(p, "cdnx.example.net", 0, 0);
	any(p, "api.example.com", 1, 9);	/* only 9000-9100 */
	any(p, "upload.example.org", 0, 12);	/* denied on every port */
	any(p, "a.evil.example.org", 0, 13);
	any(p, "cdn666.example.net", 0, 14);
	any(p, "x.deep.example.org", 1, 0);
	any(p, "unlisted.test", 0, 0);
	any(p, "192.0.2.200", 0, 0);		/* cidr rules: not names */
	policy_free(p);

	/* the port left free between two deny ranges is found */
	p = load("version: 1\n"
	    "allow:\n"
	    "  - host: gap.x.test\n"
	    "    ports: [\"1-65535\"]\n"
	    "deny:\n"
	    "  - host: gap.x.test\n"
	    "    ports: [\"1-7999\"]\n"
	    "  - host: \"*.x.test\"\n"
	    "    ports: [\"8001-65535\"]\n");
	any(p, "gap.x.test", 1, 3);
	policy_free(p);
	p = load("version: 1\n"
	    "allow:\n"
	    "  - host: gap.x.test\n"
	    "    ports: [\"1-65535\"]\n"
	    "deny:\n"
	    "  - host: gap.x.test\n"
	    "    ports: [\"1-8000\"]\n"
	    "  - host: \"*.x.test\"\n"
	    "    ports: [\"8001-65535\"]\n");
	any(p, "gap.x.test", 0, 0);
	policy_free(p);
}

static void
test_defaults(void **state)
{
	struct policy		*p;
	struct policy_decision	 d;

	(void)state;
	p = load("version: 1\n");
	assert_int_equal(policy_rule_count(p), 0);
	assert_int_equal(policy_dns_min_ttl(p), 5);
	assert_int_equal(policy_dns_max_ttl(p), 300);
	assert_int_equal(policy_dns_server_count(p), 0);
	policy_decide_name(p, "example.com", 11, 443, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	policy_free(p);
	p = load("version: 1\nallow:\ndeny: ~\nallow_ranges:\ndns:\n");
	assert_int_equal(policy_rule_count(p), 0);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_file_limits),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_regex_limits),
		cmocka_unit_test(test_regex_index_equivalence),
		cmocka_unit_test(test_dump_roundtrip),
		cmocka_unit_test(test_same_meaning_same_hash),
		cmocka_unit_test(test_introspection),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_allowed_any),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
