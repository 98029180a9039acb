/*
 * Inspected hosts in the policy library: inspect:, requests: and
 * secrets: as the loader reads them (every refusal with its
 * file:line:column and hint), their canonical form and identity, the
 * decision on a request by method and path (deny wins, the query never
 * matched, paths an upstream could read as another refused), the fix
 * that would allow a refused request, and the secrets of a rule.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"
#include "policy_util.h"

#define RULE	"version: 1\nallow:\n  - host: api.example.com\n"

/* A secret says where its value goes; the sandbox never does. */
static const struct {
	const char	*secrets;	/* the rule's secrets: line's value */
	unsigned	 col;		/* of the error, on line 5 */
	const char	*what, *hint;
} nowhere[] = {
	{ "[{name: K}]", 15, "secret K says not where its value goes",
	    "query: key" },
	{ "[{name: K, query: key, header: x-a}]", 45, "and so does header:",
	    "keep query: alone" },
	{ "[{name: K, query: key, scheme: bearer}]", 45,
	    "and so does scheme:", NULL },
	{ "[{name: K, query: key, user: u}]", 43, "and so does user:", NULL },
	{ "[{name: K, query: \"a b\"}]", 32,
	    "query parameter 'a b': byte 0x20", "-._~" },
	{ "[{name: K, query: \"a%3d\"}]", 32, "byte 0x25", NULL },
	{ "[{name: K, query: \"\"}]", 32, "1 to 64 bytes", NULL },
	{ "[{name: K, query: a}, {name: L, query: a}]", 36,
	    "both go into query parameter a", NULL },
};

static void
test_refused(void **state)
{
	char	 y[256];
	size_t	 i;

	(void)state;
	/* secrets without inspect: the issue's own example */
	reject_at(RULE "    secrets: [{name: KEY, header: x-api-key}]\n", 4, 14,
	    "secrets: needs inspect: true", "add inspect: true");
	reject_at(RULE "    inspect: false\n    requests: {allow: [\"GET /\"]}\n",
	    5, 15, "requests: needs inspect: true", "add inspect: true");
	reject_at(RULE "    inspect: yes\n", 4, 14, "true or false",
	    "inspect: true");
	reject_at(RULE "    inspect: \"true\"\n", 4, 14, "true or false", NULL);
	reject_at("version: 1\nallow:\n  - cidr: 192.0.2.0/24\n"
	    "    inspect: true\n", 4, 14, "by host name", "host:");
	reject_at("version: 1\ndeny:\n  - host: a.example.com\n"
	    "    inspect: true\n", 4, 14, "deny rule", "allow rule");
	reject_at(RULE "    inspekt: true\n", 4, 5, "unknown key 'inspekt'",
	    "did you mean 'inspect'");

	/* requests: */
	reject_at(RULE "    inspect: true\n    requests: [\"GET /\"]\n", 5, 15,
	    "must be a mapping", NULL);
	reject_at(RULE "    inspect: true\n    requests: {}\n", 5, 15,
	    "lists no entry", NULL);
	reject_at(RULE "    inspect: true\n    requests: {alow: []}\n", 5, 16,
	    "unknown key 'alow'", "did you mean 'allow'");
	reject_at(RULE "    inspect: true\n    requests: {allow: \"GET /\"}\n",
	    5, 23, "must be a list", NULL);
	reject_at(RULE "    inspect: true\n    requests: {allow: [\"get /\"]}\n",
	    5, 24, "'get' is not a method", "upper case");
	reject_at(RULE "    inspect: true\n    requests: {allow: [\"GET\"]}\n",
	    5, 24, "has no path", NULL);
	reject_at(RULE "    inspect: true\n    requests: {allow: [\"GET  /\"]}\n",
	    5, 24, "one space", NULL);
	reject_at(RULE "    inspect: true\n    requests: {allow: [\"GET x\"]}\n",
	    5, 24, "must start with / or *", NULL);
	reject_at(RULE "    inspect: true\n    requests: {deny: [\"GET /a?b\"]}\n",
	    5, 23, "'?' in the path", "query string is never matched");
	reject_at(RULE "    inspect: true\n    requests: {deny: [\"GET /a#b\"]}\n",
	    5, 23, "'#' in the path", NULL);
	reject_at(RULE "    inspect: true\n    requests: {deny: [\"GET /a\\\\b\"]}\n",
	    5, 23, "byte 0x5c", NULL);
	reject_at(RULE "    inspect: true\n    requests: {deny: [\"GET /a b\"]}\n",
	    5, 23, "byte 0x20", NULL);
	reject_at(RULE "    inspect: true\n    requests: {deny: [\"ABCDEFGHIJKLMNOPQRSTU /\"]}\n",
	    5, 23, "1 to 20 letters", NULL);
	reject_at(RULE "    inspect: true\n    requests: {deny: "
	    "[\"GET /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a\"]}\n",
	    5, 23, "more than 16 '*'", NULL);

	/* secrets: */
	reject_at(RULE "    inspect: true\n    secrets: [{header: x-api-key}]\n",
	    5, 15, "needs a name", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: 9KEY}]\n",
	    5, 22, "starts with a digit", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: A-B}]\n",
	    5, 22, "byte 0x2d", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, header: Host}]\n",
	    5, 33, "header 'host' frames or routes", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, header: "
	    "Content-Length}]\n", 5, 33, "frames or routes", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, header: \"a b\"}]\n",
	    5, 33, "byte 0x20", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, scheme: digest}]\n",
	    5, 33, "unknown scheme 'digest'", "bearer");
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, scheme: basic}]\n",
	    5, 15, "needs user:", "x-access-token");
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, user: u}]\n",
	    5, 31, "user: without scheme: basic", NULL);
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, scheme: basic, "
	    "user: \"a:b\"}]\n", 5, 46, "byte 0x3a", "without ':'");
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, query: a}, "
	    "{name: K, query: b}]\n", 5, 36, "listed twice", NULL);
	for (i = 0; i < sizeof(nowhere) / sizeof(nowhere[0]); i++) {
		snprintf(y, sizeof(y), RULE "    inspect: true\n    secrets: "
		    "%s\n", nowhere[i].secrets);
		reject_at(y, 5, nowhere[i].col, nowhere[i].what,
		    nowhere[i].hint);
	}
	reject_at(RULE "    inspect: true\n    secrets: [{name: K, header: x-a}, "
	    "{name: L, header: X-A}]\n", 5, 39, "both set header x-a", NULL);
	reject_at(RULE "    inspect: true\n    secrets: []\n", 5, 14,
	    "list of secrets", NULL);

	/* a name written twice says one thing of inspection */
	reject_at(RULE "    inspect: true\n  - host: api.example.com\n"
	    "    ports: [8443]\n", 5, 5, "written twice (first at line 3)",
	    "write the host once");
	reject_at(RULE "    inspect: true\n    requests: {allow: [\"GET /a\"]}\n"
	    "  - host: api.example.com\n    inspect: true\n"
	    "    requests: {allow: [\"GET /b\"]}\n", 6, 5, "written twice",
	    NULL);
}

/* Each bound at its limit, and one past it. */
static void
test_bounds(void **state)
{
	char	*y, *p;
	size_t	 i, n;

	(void)state;
	n = 64 * 1024;
	y = malloc(n);
	assert_non_null(y);

	/* POLICY_MAX_REQ_RULES entries */
	for (i = 0, p = y + sprintf(y, RULE "    inspect: true\n    requests:\n"
	    "      allow:\n"); i < POLICY_MAX_REQ_RULES; i++)
		p += sprintf(p, "        - \"GET /%zu\"\n", i);
	policy_free(load(y));
	sprintf(p, "        - \"GET /x\"\n");
	reject_at(y, 7, 9, "more than 128 entries", NULL);

	/* a pattern of POLICY_MAX_REQ_PATTERN bytes */
	p = y + sprintf(y, RULE "    inspect: true\n    requests: {allow: [\"GET /");
	memset(p, 'a', POLICY_MAX_REQ_PATTERN - 1);
	strcpy(p + POLICY_MAX_REQ_PATTERN - 1, "\"]}\n");
	policy_free(load(y));
	p = y + sprintf(y, RULE "    inspect: true\n    requests: {allow: [\"GET /");
	memset(p, 'a', POLICY_MAX_REQ_PATTERN);
	strcpy(p + POLICY_MAX_REQ_PATTERN, "\"]}\n");
	reject_at(y, 5, 24, "at most 512 bytes", NULL);

	/* 16 stars, and 17 */
	policy_free(load(RULE "    inspect: true\n    requests: {deny: "
	    "[\"GET /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*\"]}\n"));

	/* POLICY_MAX_SECRETS secrets */
	for (i = 0, p = y + sprintf(y, RULE "    inspect: true\n    secrets:\n");
	    i < POLICY_MAX_SECRETS; i++)
		p += sprintf(p, "      - {name: S%zu, query: q%zu}\n", i, i);
	policy_free(load(y));
	sprintf(p, "      - {name: S99, query: q99}\n");
	reject_at(y, 6, 7, "more than 16 secrets", NULL);

	/* names, headers, users of 64 bytes; 65 refused */
	p = y + sprintf(y, RULE "    inspect: true\n    secrets: [{name: ");
	memset(p, 'N', 64);
	strcpy(p + 64, ", header: ");
	p += strlen(p);
	memset(p, 'h', 64);
	strcpy(p + 64, ", scheme: basic, user: ");
	p += strlen(p);
	memset(p, 'u', 64);
	strcpy(p + 64, "}]\n");
	policy_free(load(y));
	p = y + sprintf(y, RULE "    inspect: true\n    secrets: [{name: ");
	memset(p, 'N', 65);
	strcpy(p + 65, "}]\n");
	reject_at(y, 5, 22, "1 to 64 bytes", NULL);
	/* a query parameter of 64 bytes; 65 refused */
	p = y + sprintf(y, RULE "    inspect: true\n    secrets: [{name: K, "
	    "query: ");
	memset(p, 'q', 64);
	strcpy(p + 64, "}]\n");
	policy_free(load(y));
	p = y + sprintf(y, RULE "    inspect: true\n    secrets: [{name: K, "
	    "query: ");
	memset(p, 'q', 65);
	strcpy(p + 65, "}]\n");
	reject_at(y, 5, 32, "query parameter must be 1 to 64 bytes", NULL);
	free(y);
}

static const char full_yaml[] =
    "version: 1\n"
    "allow:\n"
    "  - host: api.example.com\n"			/* 3 */
    "    ports: [443]\n"
    "    inspect: true\n"
    "    requests:\n"
    "      allow: [\"POST /v1/messages*\", \"GET /v1/models\"]\n"
    "    secrets:\n"
    "      - name: API_KEY\n"
    "        header: X-Api-Key\n"
    "  - host: git.example.com\n"			/* 11 */
    "    inspect: true\n"
    "    requests:\n"
    "      deny: [\"POST */git-receive-pack\", \"* /admin/*\"]\n"
    "    secrets:\n"
    "      - {name: GIT_TOKEN, scheme: basic, user: x-access-token}\n"
    "  - host: gh.example.com\n"			/* 17 */
    "    inspect: true\n"
    "    requests: {allow: [\"GET /*\", \"HEAD /*\"], "
    "deny: [\"GET /user/keys*\"]}\n"
    "    secrets: [{name: GH_TOKEN, scheme: bearer},\n"
    "      {name: ZZ, query: key}]\n"
    "  - host: plain.example.com\n";			/* 22 */

static const struct policy_rule *
rule_for(const struct policy *p, const char *name)
{
	struct policy_decision	 d;

	policy_decide_name(p, name, strlen(name), 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	return d.rule;
}

/* Decide "METHOD TARGET" on host; check verdict, reason, entry's line. */
static void
req(const struct policy *p, const char *host, const char *m,
    const char *target, enum policy_verdict v, enum policy_reason why,
    unsigned line)
{
	struct policy_request_decision	 d;

	policy_decide_request(rule_for(p, host), m, strlen(m), target,
	    strlen(target), &d);
	if (d.verdict != v || d.reason != why || d.line != line)
		fail_msg("%s %s %s: got %s, %s, line %u", host, m, target,
		    d.verdict == POLICY_ALLOW ? "allow" : "deny",
		    policy_reason_str(d.reason), d.line);
	if (why == POLICY_R_REQUEST_BAD_PATH || why == POLICY_R_REQUEST_METHOD)
		assert_non_null(d.detail);
	else if (strchr(target, ';') == NULL || v == POLICY_ALLOW)
		assert_null(d.detail);
	/* else: a detail when the path without its parameters refused it */
}

static void
test_requests(void **state)
{
	struct policy	*p;
	const char	*A = "api.example.com", *G = "git.example.com";
	const char	*H = "gh.example.com";
	struct policy_request_decision	 d;

	(void)state;
	p = load(full_yaml);
	/* allow entries: only they pass; the query is not matched */
	req(p, A, "POST", "/v1/messages", POLICY_ALLOW, POLICY_R_ALLOWED, 7);
	req(p, A, "POST", "/v1/messages/batches?x=1", POLICY_ALLOW,
	    POLICY_R_ALLOWED, 7);
	req(p, A, "POST", "/v1/messages?beta=true", POLICY_ALLOW,
	    POLICY_R_ALLOWED, 7);
	req(p, A, "GET", "/v1/models", POLICY_ALLOW, POLICY_R_ALLOWED, 7);
	req(p, A, "GET", "/v1/models/x", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	req(p, A, "GET", "/v1/messages", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	req(p, A, "POST", "/v1/complete", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	/* allow entries match case as written */
	req(p, A, "POST", "/V1/messages", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	/* a query that looks like a path does not help */
	req(p, A, "POST", "/v2?/v1/messages", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);

	/* TRACE and TRACK, whatever an entry says (a "* /admin" one too) */
	req(p, H, "TRACE", "/repos", POLICY_DENY, POLICY_R_REQUEST_METHOD, 0);
	req(p, G, "TRACK", "/admin/x", POLICY_DENY, POLICY_R_REQUEST_METHOD, 0);

	/* git: push denied, fetch passes; deny ignores case and queries */
	req(p, G, "POST", "/o/r.git/git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_DENIED, 14);
	req(p, G, "POST", "/o/r.git/GIT-Receive-Pack?x=1", POLICY_DENY,
	    POLICY_R_REQUEST_DENIED, 14);
	req(p, G, "POST", "/o/r.git/git-upload-pack", POLICY_ALLOW,
	    POLICY_R_ALLOWED, 0);
	/* the line alone: the gate decides it as the POST it announces too
	 * (gate/override.c, tests/unit/test_gate_inspect.c) */
	req(p, G, "GET", "/o/r.git/info/refs?service=git-receive-pack",
	    POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "DELETE", "/admin/x", POLICY_DENY, POLICY_R_REQUEST_DENIED,
	    14);
	/* paths an upstream may read as the denied one */
	req(p, G, "POST", "/o/r.git/./git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git/x/../git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git//git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git/git-receive-pac%6b", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git%2fgit-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git\\git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git/git-receive-pack#x", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/%zz", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/a%2", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/.", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/..", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "*", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	/* what stays in its normal form passes */
	req(p, G, "GET", "/", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/a/", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/a/.b/..c/...", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/a%20b%2F", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH,
	    0);
	req(p, G, "GET", "/a%20b%3F", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/x?a//b/../c", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	/*
	 * Path parameters: servlet containers (JGit's) route
	 * "/git-receive-pack;x" as "/git-receive-pack", and "..;" as "..":
	 * the path without them is decided too, dot segments with them and
	 * empty segments with them are not in normal form.
	 */
	req(p, G, "POST", "/o/r.git/git-receive-pack;x", POLICY_DENY,
	    POLICY_R_REQUEST_DENIED, 14);
	req(p, G, "POST", "/o/r.git;a=b/git-receive-pack;jsessionid=1?q",
	    POLICY_DENY, POLICY_R_REQUEST_DENIED, 14);
	req(p, G, "POST", "/o/r.git/..;x/git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "POST", "/o/r.git/.;/git-receive-pack", POLICY_DENY,
	    POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/o/..;", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "GET", "/;x/admin/y", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH,
	    0);
	req(p, G, "GET", "/a/;", POLICY_DENY, POLICY_R_REQUEST_BAD_PATH, 0);
	req(p, G, "DELETE", "/admin;x/y", POLICY_DENY, POLICY_R_REQUEST_DENIED,
	    14);
	/* parameters that change nothing denied pass */
	req(p, G, "POST", "/o/r.git/git-upload-pack;x", POLICY_ALLOW,
	    POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/a;..", POLICY_ALLOW, POLICY_R_ALLOWED, 0);
	req(p, G, "GET", "/a/.b;c/..c;.", POLICY_ALLOW, POLICY_R_ALLOWED, 0);

	/* read-only API: deny wins over a matching allow */
	req(p, H, "GET", "/repos/o/r", POLICY_ALLOW, POLICY_R_ALLOWED, 19);
	req(p, H, "HEAD", "/", POLICY_ALLOW, POLICY_R_ALLOWED, 19);
	req(p, H, "POST", "/repos/o/r/issues", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	req(p, H, "GET", "/user/keys/1", POLICY_DENY, POLICY_R_REQUEST_DENIED,
	    19);
	req(p, H, "GET", "/USER/KEYS", POLICY_DENY, POLICY_R_REQUEST_DENIED,
	    19);
	/* a parameter is no way around an entry, and says why */
	req(p, A, "GET", "/v1/models;x", POLICY_DENY,
	    POLICY_R_REQUEST_NOT_ALLOWED, 0);
	req(p, H, "GET", "/user;x/keys/1", POLICY_DENY,
	    POLICY_R_REQUEST_DENIED, 19);
	policy_decide_request(rule_for(p, H), "GET", 3, "/user;x/keys", 12, &d);
	assert_non_null(d.detail);
	assert_non_null(strstr(d.detail, "without its parameters"));
	policy_free(p);
}

static void
test_no_request_rules(void **state)
{
	struct policy			*p;
	struct policy_request_decision	 d;
	const struct policy_rule	*r;

	(void)state;
	p = load(full_yaml);
	/* not inspected, or inspected without requests: everything passes */
	r = rule_for(p, "plain.example.com");
	assert_false(policy_rule_inspect(r));
	assert_int_equal(policy_rule_secret_count(r), 0);
	policy_decide_request(r, "POST", 4, "//../x", 6, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	assert_false(policy_rule_inspect(NULL));
	policy_decide_request(NULL, "GET", 3, "/", 1, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_free(p);
	p = load(RULE "    inspect: true\n");
	r = rule_for(p, "api.example.com");
	assert_true(policy_rule_inspect(r));
	policy_decide_request(r, "DELETE", 6, "/a//b", 5, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	/* but TRACE and TRACK: the upstream's echo would hold the secrets */
	policy_decide_request(r, "TRACE", 5, "/", 1, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	assert_int_equal(d.reason, POLICY_R_REQUEST_METHOD);
	assert_null(d.entry);
	policy_decide_request(r, "TRACK", 5, "/x?y", 4, &d);
	assert_int_equal(d.reason, POLICY_R_REQUEST_METHOD);
	policy_decide_request(r, "TRACES", 6, "/", 1, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_free(p);
}

static void
test_secrets(void **state)
{
	struct policy			*p;
	struct policy_secret_info	 s;
	struct policy_rule_info		 info;
	const struct policy_rule	*r;

	(void)state;
	p = load(full_yaml);
	r = rule_for(p, "api.example.com");
	assert_int_equal(policy_rule_secret_count(r), 1);
	policy_rule_secret(r, 0, &s);
	assert_string_equal(s.name, "API_KEY");
	assert_int_equal(s.mode, POLICY_SECRET_HEADER);
	assert_string_equal(s.header, "x-api-key");	/* lower case */
	assert_null(s.user);
	policy_rule_info(r, &info);
	assert_true(info.inspect);
	assert_int_equal(info.nreq_allow, 2);
	assert_int_equal(info.nreq_deny, 0);
	assert_int_equal(info.nsecrets, 1);

	r = rule_for(p, "git.example.com");
	policy_rule_secret(r, 0, &s);
	assert_int_equal(s.mode, POLICY_SECRET_BASIC);
	assert_string_equal(s.header, "authorization");
	assert_string_equal(s.user, "x-access-token");

	r = rule_for(p, "gh.example.com");	/* sorted by name */
	assert_int_equal(policy_rule_secret_count(r), 2);
	policy_rule_secret(r, 0, &s);
	assert_string_equal(s.name, "GH_TOKEN");
	assert_int_equal(s.mode, POLICY_SECRET_BEARER);
	assert_string_equal(s.header, "authorization");
	policy_rule_secret(r, 1, &s);
	assert_string_equal(s.name, "ZZ");
	assert_int_equal(s.mode, POLICY_SECRET_QUERY);
	assert_string_equal(s.query, "key");
	assert_null(s.header);
	assert_null(s.user);
	policy_free(p);
}

static void
fix(const struct policy *p, const char *host, const char *m,
    const char *target, enum policy_reason why, int flow, const char *want)
{
	char	 buf[POLICY_FIX_MAX];
	int	 n;

	n = policy_request_fix_yaml(rule_for(p, host), m, strlen(m), target,
	    strlen(target), why, flow, buf, sizeof(buf));
	if (strcmp(buf, want) != 0)
		fail_msg("fix for %s %s:\n[%s]\nwant\n[%s]", m, target, buf,
		    want);
	assert_int_equal(n, (int)strlen(want));
}

static void
test_fix(void **state)
{
	struct policy	*p, *q;
	char		 yaml[2048], buf[POLICY_FIX_MAX], path[400];
	const char	*A = "api.example.com";
	int		 n;

	(void)state;
	p = load(full_yaml);
	fix(p, A, "POST", "/v1/complete?token=s3cret", POLICY_R_REQUEST_NOT_ALLOWED,
	    0, "# add to requests: allow: of the rule at line 3, column 5\n"
	    "- \"POST /v1/complete\"\n");
	fix(p, A, "POST", "/v1/complete", POLICY_R_REQUEST_NOT_ALLOWED, 1,
	    "{requests: {allow: ['POST /v1/complete']}}");
	fix(p, A, "GET", "/it's\"", POLICY_R_REQUEST_NOT_ALLOWED, 1,
	    "{requests: {allow: ['GET /it''s\"']}}");
	fix(p, A, "GET", "/it's\"", POLICY_R_REQUEST_NOT_ALLOWED, 0,
	    "# add to requests: allow: of the rule at line 3, column 5\n"
	    "- \"GET /it's\\\"\"\n");
	fix(p, "git.example.com", "POST", "/r/git-receive-pack",
	    POLICY_R_REQUEST_DENIED, 0, "# a requests: deny entry refuses it: "
	    "remove or narrow that entry\n");
	fix(p, A, "GET", "/a/../b", POLICY_R_REQUEST_NOT_ALLOWED, 0, "");
	fix(p, A, "GET", "/a", POLICY_R_REQUEST_BAD_PATH, 0, "");

	/* a long path is cut and ends in '*'; the entry loads and allows it */
	memset(path, 'x', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	n = policy_request_fix_yaml(rule_for(p, A), "PUT", 3, path,
	    strlen(path), POLICY_R_REQUEST_NOT_ALLOWED, 1, buf, sizeof(buf));
	assert_true(n > 0 && n < 260);
	assert_non_null(strstr(buf, "xxx*']}}"));
	/* the flow form less its braces is the rule's key */
	snprintf(yaml, sizeof(yaml), RULE "    inspect: true\n    %.*s\n",
	    n - 2, buf + 1);
	q = load(yaml);
	req(q, A, "PUT", path, POLICY_ALLOW, POLICY_R_ALLOWED, 5);
	policy_free(q);
	/* a short buffer */
	assert_int_equal(policy_request_fix_yaml(rule_for(p, A), "PUT", 3,
	    "/x", 2, POLICY_R_REQUEST_NOT_ALLOWED, 0, buf, 8), -1);
	assert_string_equal(buf, "");
	policy_free(p);
}

static void
test_canonical(void **state)
{
	struct policy	*p, *q, *r;
	char		*dump;
	size_t		 len;

	(void)state;
	/* a policy without inspection keeps the identity it had before */
	p = load("version: 1\nallow:\n  - host: api.example.com\n"
	    "    ports: [443]\n  - host: \"*.example.org\"\ndeny:\n"
	    "  - host: up.example.org\n");
	assert_string_equal(policy_sha256(p), "4d2e40e11d22d8d1de359008a59d17"
	    "44e1590a64c2844b926cea6869c938136c");
	policy_free(p);

	/* order, case, duplicates and flow style do not change it */
	p = load(full_yaml);
	q = load("version: 1\n"
	    "allow:\n"
	    "  - host: plain.example.com\n"
	    "  - host: GH.example.com\n"
	    "    secrets: [{name: ZZ, query: key}, {name: GH_TOKEN, scheme: bearer, "
	    "header: Authorization}]\n"
	    "    requests:\n"
	    "      deny: [\"GET /user/keys*\"]\n"
	    "      allow: [\"HEAD /*\", \"GET /*\", \"GET /**\"]\n"
	    "    inspect: true\n"
	    "  - host: git.example.com\n"
	    "    inspect: true\n"
	    "    secrets:\n"
	    "      - name: GIT_TOKEN\n"
	    "        user: x-access-token\n"
	    "        scheme: basic\n"
	    "    requests:\n"
	    "      deny: [\"* /admin/*\", \"POST */git-receive-pack\"]\n"
	    "      allow: []\n"
	    "  - host: api.example.com\n"
	    "    ports: [443]\n"
	    "    inspect: true\n"
	    "    requests: {allow: [\"GET /v1/models\", \"POST /v1/messages*\"]}\n"
	    "    secrets: [{name: API_KEY, header: x-api-key}]\n");
	assert_string_equal(policy_sha256(p), policy_sha256(q));
	/* the dump loads to the same policy, with every key spelled out */
	dump = policy_dump(p, &len);
	assert_non_null(dump);
	assert_non_null(strstr(dump, "    inspect: true\n    requests:\n"
	    "      allow: [\"GET /v1/models\", \"POST /v1/messages*\"]\n"
	    "    secrets:\n      - name: \"API_KEY\"\n"
	    "        header: \"x-api-key\"\n"));
	assert_non_null(strstr(dump, "        scheme: basic\n"
	    "        user: \"x-access-token\"\n"));
	assert_non_null(strstr(dump, "      - name: \"ZZ\"\n"
	    "        query: \"key\"\n"));
	assert_null(strstr(dump, "plain.example.com\"\n    ports: [80, 443]\n"
	    "    inspect"));
	r = load(dump);
	assert_string_equal(policy_sha256(p), policy_sha256(r));
	free(dump);
	policy_free(r);
	policy_free(q);

	/* a different entry, secret or inspect: another identity */
	q = load(RULE "    inspect: true\n");
	r = load(RULE);
	assert_string_not_equal(policy_sha256(q), policy_sha256(r));
	policy_free(q);
	policy_free(r);
	q = load(RULE "    inspect: true\n    secrets: [{name: A, query: k}]\n");
	r = load(RULE "    inspect: true\n    secrets: [{name: A, query: j}]\n");
	assert_string_not_equal(policy_sha256(q), policy_sha256(r));
	policy_free(q);
	policy_free(r);
	q = load(RULE "    inspect: true\n    requests: {allow: [\"GET /\"]}\n");
	r = load(RULE "    inspect: true\n    requests: {deny: [\"GET /\"]}\n");
	assert_string_not_equal(policy_sha256(q), policy_sha256(r));
	policy_free(q);
	policy_free(r);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_no_request_rules),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_fix),
		cmocka_unit_test(test_canonical),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
