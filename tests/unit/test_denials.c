/*
 * The fix of a denial (policy_fix_yaml) and the denial summary
 * (launcher/policytools/denials.c): every suggested fix, loaded as a
 * policy, allows exactly the refused destination; the aggregator counts by destination,
 * bounds its table and never prints a byte a terminal would interpret.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "policytools/denials.h"
#include "policy.h"

static struct policy *
load(const char *yaml)
{
	struct policy_errors	 errs;
	struct policy		*p = NULL;
	char			 msg[4096];

	if (policy_load_buffer("t.yaml", yaml, strlen(yaml), &p, &errs) == -1) {
		policy_errors_format(&errs, msg, sizeof(msg));
		fail_msg("policy does not load:\n%s\n%s", yaml, msg);
	}
	return p;
}

static void
target(const char *s, struct policy_target *t)
{
	char	 err[128];

	assert_int_equal(policy_parse_target(s, strlen(s), 443, t, err,
	    sizeof(err)), 0);
}

/* The verdict of p for s, address classes included (as the gate). */
static int
allows(const struct policy *p, const char *s)
{
	struct policy_target	 t;
	struct policy_decision	 d;

	target(s, &t);
	policy_decide(p, &t, &d);
	if (d.verdict != POLICY_ALLOW)
		return 0;
	return !t.is_ip || policy_classify(p, &t.addr) == NULL;
}

/* The fix for s refused by reason in base, and that it does what it says. */
static void
check_fix(const char *base_yaml, const char *s, enum policy_reason r,
    const char *want, const char *want_flow, const char *also,
    const char *not)
{
	struct policy		*base = load(base_yaml), *p;
	struct policy_target	 t;
	char			 fix[POLICY_FIX_MAX], yaml[2048];

	target(s, &t);
	assert_int_equal(policy_fix_yaml(base, &t, r, NULL, 0, fix,
	    sizeof(fix)), (int)strlen(want));
	assert_string_equal(fix, want);
	assert_int_equal(policy_fix_yaml(base, &t, r, NULL, 1, fix,
	    sizeof(fix)), (int)strlen(want_flow));
	assert_string_equal(fix, want_flow);
	/* pasted into an empty policy, it allows exactly that */
	snprintf(yaml, sizeof(yaml), "version: 1\n%s", want);
	p = load(yaml);
	assert_true(allows(p, s));
	if (also != NULL)
		assert_true(allows(p, also));
	assert_false(allows(p, not));
	policy_free(p);
	/* and the flow form is the same policy */
	snprintf(yaml, sizeof(yaml), "{version: 1, %s", want_flow + 1);
	p = load(yaml);
	assert_true(allows(p, s));
	assert_false(allows(p, not));
	policy_free(p);
	policy_free(base);
}

static const char	*empty = "version: 1\n";

static void
fix_name_default_port(void **state)
{
	check_fix(empty, "pkg.example.test:443", POLICY_R_HOST_NOT_ALLOWED,
	    "allow:\n  - host: pkg.example.test\n",
	    "{allow: [{host: pkg.example.test}]}",
	    "pkg.example.test:80", "other.example.test:443");
}

static void
fix_name_other_port(void **state)
{
	check_fix(empty, "pkg.example.test:8443", POLICY_R_HOST_NOT_ALLOWED,
	    "allow:\n  - host: pkg.example.test\n    ports: [8443]\n",
	    "{allow: [{host: pkg.example.test, ports: [8443]}]}",
	    NULL, "pkg.example.test:443");
}

static void
fix_single_label_quoted(void **state)
{
	/* a bare "null" or "true" would not be a name to YAML */
	check_fix(empty, "null:8080", POLICY_R_HOST_NOT_ALLOWED,
	    "allow:\n  - host: \"null\"\n    ports: [8080]\n",
	    "{allow: [{host: 'null', ports: [8080]}]}",
	    NULL, "null:443");
}

static void
fix_port_not_allowed(void **state)
{
	/* the port is always written: a second rule adds only it */
	check_fix("version: 1\nallow:\n  - host: a.example.test\n"
	    "    ports: [443]\n", "a.example.test:80",
	    POLICY_R_PORT_NOT_ALLOWED,
	    "allow:\n  - host: a.example.test\n    ports: [80]\n",
	    "{allow: [{host: a.example.test, ports: [80]}]}",
	    NULL, "a.example.test:81");
}

static void
fix_ip_literal(void **state)
{
	check_fix(empty, "198.51.100.7:22", POLICY_R_HOST_NOT_ALLOWED,
	    "allow:\n  - cidr: 198.51.100.7/32\n    ports: [22]\n"
	    "allow_ranges: [198.51.100.7/32]\n",
	    "{allow: [{cidr: 198.51.100.7/32, ports: [22]}], "
	    "allow_ranges: [198.51.100.7/32]}",
	    NULL, "198.51.100.8:22");
	check_fix(empty, "[2001:db8::1]:443", POLICY_R_HOST_NOT_ALLOWED,
	    "allow:\n  - cidr: \"2001:db8::1/128\"\n"
	    "allow_ranges: [\"2001:db8::1/128\"]\n",
	    "{allow: [{cidr: '2001:db8::1/128'}], "
	    "allow_ranges: ['2001:db8::1/128']}",
	    NULL, "[2001:db8::2]:443");
}

static void
fix_ip_public_no_range(void **state)
{
	struct policy		*p = load(empty);
	struct policy_target	 t;
	char			 fix[POLICY_FIX_MAX];

	target("8.8.4.4:443", &t);
	assert_true(policy_fix_yaml(p, &t, POLICY_R_HOST_NOT_ALLOWED, NULL, 0,
	    fix, sizeof(fix)) > 0);
	assert_string_equal(fix, "allow:\n  - cidr: 8.8.4.4/32\n");
	policy_free(p);
}

static void
fix_address_class(void **state)
{
	struct policy		*p = load("version: 1\nallow:\n"
	    "  - host: intranet.example.test\n");
	struct policy_target	 t;
	struct policy_addr	 a;
	char			 fix[POLICY_FIX_MAX];

	target("intranet.example.test:443", &t);
	assert_int_equal(policy_parse_addr("10.1.2.3", 8, &a), 0);
	assert_true(policy_fix_yaml(p, &t, POLICY_R_ADDR_CLASS, &a, 0, fix,
	    sizeof(fix)) > 0);
	assert_string_equal(fix, "allow_ranges: [10.1.2.3/32]\n");
	/* nothing to exempt (the gate's own address): no fix */
	assert_int_equal(policy_fix_yaml(p, &t, POLICY_R_ADDR_CLASS, NULL, 0,
	    fix, sizeof(fix)), 0);
	assert_string_equal(fix, "");
	policy_free(p);
}

static void
fix_deny_rule_and_bounds(void **state)
{
	struct policy		*p = load(empty);
	struct policy_target	 t;
	char			 fix[POLICY_FIX_MAX], name[POLICY_MAX_NAME + 8];
	size_t			 i;

	target("x.example.test:443", &t);
	assert_true(policy_fix_yaml(p, &t, POLICY_R_DENY_RULE, NULL, 0, fix,
	    sizeof(fix)) > 0);
	assert_true(fix[0] == '#' && strchr(fix, '\n') == fix + strlen(fix) - 1);
	assert_int_equal(policy_fix_yaml(p, &t, POLICY_R_ALLOWED, NULL, 0, fix,
	    sizeof(fix)), 0);
	assert_int_equal(policy_fix_yaml(p, &t, POLICY_R_HOST_NOT_ALLOWED,
	    NULL, 0, fix, 10), -1);
	assert_string_equal(fix, "");
	/* the longest name fits POLICY_FIX_MAX */
	for (i = 0; i < 4; i++)
		memset(name + i * 62, 'a' + (int)i, 61), name[i * 62 + 61] = '.';
	snprintf(name + 248, sizeof(name) - 248, "tests:65535");
	target(name, &t);
	assert_int_equal(t.hostlen, 253);
	assert_true(policy_fix_yaml(p, &t, POLICY_R_PORT_NOT_ALLOWED, NULL, 0,
	    fix, sizeof(fix)) > 0);
	assert_true(policy_fix_yaml(p, &t, POLICY_R_PORT_NOT_ALLOWED, NULL, 1,
	    fix, sizeof(fix)) > 0);
	policy_free(p);
}

/* --- the summary ---------------------------------------------------------- */

static void
add(struct launch_denials *d, const char *line)
{
	launch_denials_add(d, line, strlen(line));
}

static char *
render(const struct launch_denials *d, const char *prefix)
{
	static char	 buf[65536];
	FILE		*f;

	memset(buf, 0, sizeof(buf));
	assert_non_null(f = fmemopen(buf, sizeof(buf) - 1, "w"));
	launch_denials_print(d, f, prefix, "/s/audit.jsonl");
	fclose(f);
	return buf;
}

#define DENY(host, port, extra) "{\"time\":\"t\",\"event\":\"decision\"," \
	"\"conn\":1,\"host\":\"" host "\",\"port\":" #port ",\"decision\":" \
	"\"deny\",\"status\":403,\"reason\":\"host_not_allowed\",\"detail\":" \
	"\"host not allowed\"" extra "}"

static void
summary_counts_by_destination(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	add(&d, DENY("a.test", 8443, ",\"fix\":\"allow:\\n  - host: a.test\\n"
	    "    ports: [8443]\\n\""));
	add(&d, "{\"event\":\"decision\",\"conn\":2,\"host\":\"ok.test\","
	    "\"port\":443,\"decision\":\"allow\",\"reason\":\"allowed\"}");
	add(&d, "{\"event\":\"close\",\"conn\":2,\"host\":\"ok.test\","
	    "\"port\":443,\"reason\":\"eof\"}");
	add(&d, DENY("b.test", 443, ",\"fix\":\"allow:\\n  - host: b.test\\n\""));
	add(&d, DENY("a.test", 8443, ",\"fix\":\"allow:\\n  - host: a.test\\n"
	    "    ports: [8443]\\n\""));
	add(&d, "{\"event\":\"decision\",\"conn\":5,\"client\":\"1.2.3.4:5\","
	    "\"method\":\"CONNECT\",\"decision\":\"deny\",\"status\":407,"
	    "\"reason\":\"auth_required\",\"detail\":\"no credentials\"}");
	add(&d, "{\"event\":\"decision\",\"conn\":6,\"host\":\"idx.test\","
	    "\"port\":443,\"decision\":\"error\",\"status\":502,\"reason\":"
	    "\"dns_failed\",\"detail\":\"name not found\"}");
	add(&d, "not json");
	add(&d, "{\"event\":\"decision\",\"host\":\"c.test\"");	/* cut */
	assert_int_equal(d.allowed, 1);
	assert_int_equal(d.denied, 4);
	assert_int_equal(d.failed, 1);
	assert_int_equal(d.n, 3);
	assert_string_equal(render(&d, "aisb: "),
	    "aisb: 4 request(s) denied, to 3 destination(s); the YAML under "
	    "one would allow it: add its entries to your policy\n"
	    "aisb: denied a.test:8443, 2 times: host not allowed\n"
	    "allow:\n"
	    "  - host: a.test\n"
	    "    ports: [8443]\n"
	    "aisb: denied b.test:443, 1 time: host not allowed\n"
	    "allow:\n"
	    "  - host: b.test\n"
	    "aisb: denied (no target), 1 time: no credentials "
	    "(auth_required)\n"
	    "aisb: 1 request(s) failed, to 1 destination(s): the policy "
	    "allowed them, the gate could not complete them\n"
	    "aisb: failed idx.test:443, 1 time: name not found "
	    "(dns_failed)\n");
}

/* Failures alone: with their reason, as denials are (a failed install). */
static void
summary_failures_alone(void **state)
{
	struct launch_denials	 d;
	int			 i;

	launch_denials_init(&d);
	for (i = 0; i < 6; i++)
		add(&d, "{\"event\":\"decision\",\"conn\":6,\"method\":"
		    "\"CONNECT\",\"host\":\"pypi.org\",\"port\":443,"
		    "\"decision\":\"error\",\"status\":502,\"reason\":"
		    "\"dns_failed\",\"detail\":\"name not found\"}");
	add(&d, "{\"event\":\"decision\",\"host\":\"up.test\",\"port\":80,"
	    "\"decision\":\"error\",\"status\":502,\"reason\":"
	    "\"connect_failed\",\"detail\":\"connection refused\"}");
	assert_int_equal(d.failed, 7);
	assert_int_equal(d.denied, 0);
	assert_string_equal(render(&d, "# "),
	    "# 7 request(s) failed, to 2 destination(s): the policy allowed "
	    "them, the gate could not complete them\n"
	    "# failed pypi.org:443, 6 times: name not found (dns_failed)\n"
	    "# failed up.test:80, 1 time: connection refused "
	    "(connect_failed)\n");
}

/*
 * A malformed request (bad_request, decision "error") is neither a denial
 * nor an allowed request's failure: no policy judged it, and the summary
 * says so in its own words.
 */
static void
summary_malformed(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	add(&d, "{\"event\":\"decision\",\"conn\":3,\"client\":"
	    "\"10.0.0.2:5\",\"decision\":\"error\",\"status\":400,"
	    "\"reason\":\"bad_request\",\"detail\":\"malformed request "
	    "line\"}");
	add(&d, "{\"event\":\"decision\",\"host\":\"up.test\",\"port\":80,"
	    "\"decision\":\"error\",\"status\":502,\"reason\":"
	    "\"connect_failed\",\"detail\":\"connection refused\"}");
	assert_int_equal(d.failed, 1);
	assert_int_equal(d.malformed, 1);
	assert_int_equal(d.denied, 0);
	assert_string_equal(render(&d, "# "),
	    "# 1 request(s) failed, to 1 destination(s): the policy allowed "
	    "them, the gate could not complete them\n"
	    "# failed up.test:80, 1 time: connection refused "
	    "(connect_failed)\n"
	    "# 1 request(s) malformed, to 1 destination(s): the gate "
	    "refused them before any decision, no policy judged them\n"
	    "# malformed (no target), 1 time: malformed request line "
	    "(bad_request)\n");
	(void)state;
}

/*
 * A name the gate's DNS refused is a denial (a tool that resolves first
 * never connects): by name, counted per query (A and AAAA), with the
 * fix the gate wrote; a query over the rate bound counts its refusals;
 * addresses and NODATA are no decisions, a malformed query malformed.
 */
#define DNS(name, qtype, answer, extra) "{\"time\":\"t\",\"event\":" \
	"\"dns\",\"conn\":7,\"session\":\"s\",\"name\":\"" name "\"," \
	"\"qtype\":\"" qtype "\",\"answer\":\"" answer "\"" extra "}"
#define NX_FIX ",\"reason\":\"host_not_allowed\",\"detail\":\"host not " \
	"allowed\",\"fix\":\"allow:\\n  - host: nx.test\\n\""

static void
summary_dns_refusals(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	add(&d, DNS("nx.test", "A", "NXDOMAIN", NX_FIX));
	add(&d, DNS("nx.test", "AAAA", "NXDOMAIN", NX_FIX));
	add(&d, DNS("ok.test", "A", "198.18.0.7", ""));
	add(&d, DNS("ok.test", "AAAA", "NODATA", ""));
	add(&d, DNS("ok.test", "A", "REFUSED", ",\"refused\":5,\"reason\":"
	    "\"dns_rate_limited\",\"detail\":\"over the gate's --dns-rate\""));
	add(&d, "{\"event\":\"dns\",\"conn\":7,\"answer\":\"FORMERR\"}");
	/* an older gate's line: no reason, still a refusal */
	add(&d, DNS("old.test", "A", "NXDOMAIN", ""));
	assert_int_equal(d.allowed, 0);
	assert_int_equal(d.denied, 8);
	assert_int_equal(d.failed, 0);
	assert_int_equal(d.malformed, 1);
	assert_int_equal(d.n, 3);
	assert_string_equal(render(&d, "# "),
	    "# 8 request(s) denied, to 3 destination(s); the YAML under "
	    "one would allow it: add its entries to your policy\n"
	    "# denied nx.test (DNS lookup), 2 times: host not allowed\n"
	    "allow:\n"
	    "  - host: nx.test\n"
	    "# denied ok.test (DNS lookup), 5 times: over the gate's "
	    "--dns-rate (dns_rate_limited)\n"
	    "# denied old.test (DNS lookup), 1 time: name_refused\n"
	    "# 1 request(s) malformed, to 1 destination(s): the gate "
	    "refused them before any decision, no policy judged them\n"
	    "# malformed (DNS query, no name), 1 time: a query the gate "
	    "could not read (FORMERR)\n");
}

/*
 * A DNS query the gate could not read or does not serve (FORMERR, NOTIMP,
 * BADVERS; REFUSED without a reason: a class other than IN, the root) is
 * no allowed request's failure and no denial: no policy judged it.  It
 * is said as malformed, in words, next to a malformed HTTP request; a
 * REFUSED over the rate bound stays a denial.
 */
static void
summary_dns_malformed(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	add(&d, "{\"event\":\"dns\",\"conn\":7,\"answer\":\"FORMERR\"}");
	add(&d, "{\"event\":\"dns\",\"conn\":7,\"answer\":\"FORMERR\"}");
	add(&d, DNS("op.test", "A", "NOTIMP", ""));
	add(&d, DNS("v1.test", "A", "BADVERS", ""));
	add(&d, DNS("version.bind", "TXT", "REFUSED", ""));
	add(&d, DNS("ok.test", "A", "REFUSED", ",\"refused\":2,\"reason\":"
	    "\"dns_rate_limited\",\"detail\":\"over the gate's --dns-rate\""));
	add(&d, "{\"event\":\"decision\",\"conn\":3,\"client\":"
	    "\"10.0.0.2:5\",\"decision\":\"error\",\"status\":400,"
	    "\"reason\":\"bad_request\",\"detail\":\"malformed request "
	    "line\"}");
	assert_int_equal(d.failed, 0);
	assert_int_equal(d.denied, 2);
	assert_int_equal(d.malformed, 6);
	assert_int_equal(d.nm, 5);
	assert_string_equal(render(&d, "# "),
	    "# 2 request(s) denied, to 1 destination(s)\n"
	    "# denied ok.test (DNS lookup), 2 times: over the gate's "
	    "--dns-rate (dns_rate_limited)\n"
	    "# 6 request(s) malformed, to 5 destination(s): the gate "
	    "refused them before any decision, no policy judged them\n"
	    "# malformed (DNS query, no name), 2 times: a query the gate "
	    "could not read (FORMERR)\n"
	    "# malformed op.test (DNS lookup), 1 time: not a standard query "
	    "(opcode) (NOTIMP)\n"
	    "# malformed v1.test (DNS lookup), 1 time: an EDNS version other "
	    "than 0 (BADVERS)\n"
	    "# malformed version.bind (DNS lookup), 1 time: a class other "
	    "than IN, or the root name (REFUSED)\n"
	    "# malformed (no target), 1 time: malformed request line "
	    "(bad_request)\n");
	(void)state;
}

/*
 * libcurl's proxy-auth probe: a 407 for the request without credentials,
 * then the same request with them.  Answered, it is no denial; a 407 no
 * request followed, or for wrong credentials, is one.
 */
#define AUTH407(host, port, detail) "{\"event\":\"decision\",\"conn\":1," \
	"\"client\":\"127.0.0.1:4\",\"method\":\"CONNECT\",\"host\":\"" \
	host "\",\"port\":" #port ",\"decision\":\"deny\",\"status\":407," \
	"\"reason\":\"auth_required\",\"detail\":\"" detail "\"}"
#define ALLOW(host, port) "{\"event\":\"decision\",\"conn\":2,\"session\":" \
	"\"s\",\"method\":\"CONNECT\",\"host\":\"" host "\",\"port\":" \
	#port ",\"decision\":\"allow\",\"status\":200,\"reason\":" \
	"\"allowed\"}"

static void
summary_auth_probe_answered(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	/* git fetch: three probes, each answered at once */
	add(&d, AUTH407("git.test", 443, "no credentials"));
	add(&d, ALLOW("git.test", 443));
	add(&d, AUTH407("git.test", 443, "no credentials"));
	add(&d, AUTH407("git.test", 443, "no credentials"));
	add(&d, ALLOW("git.test", 443));
	/* answered by a policy's denial: that one counts, the probe not */
	add(&d, AUTH407("other.test", 443, "no credentials"));
	add(&d, "{\"event\":\"decision\",\"conn\":3,\"method\":\"CONNECT\","
	    "\"host\":\"other.test\",\"port\":443,\"decision\":\"deny\","
	    "\"status\":403,\"reason\":\"host_not_allowed\",\"detail\":"
	    "\"host not allowed\"}");
	/* a probe for another request is not answered by this one */
	add(&d, AUTH407("nobody.test", 443, "no credentials"));
	add(&d, ALLOW("git.test", 8443));
	/* wrong credentials: always a denial */
	add(&d, AUTH407("git.test", 443, "wrong credentials"));
	launch_denials_end(&d);
	assert_int_equal(d.allowed, 3);
	assert_int_equal(d.denied, 3);
	assert_int_equal(d.probes_answered, 4);
	assert_string_equal(render(&d, "aisb: "),
	    "aisb: 3 request(s) denied, to 3 destination(s)\n"
	    "aisb: denied other.test:443, 1 time: host not allowed\n"
	    "aisb: denied git.test:443, 1 time: wrong credentials "
	    "(auth_required)\n"
	    "aisb: denied nobody.test:443, 1 time: no credentials "
	    "(auth_required)\n");
}

static void
summary_nothing_without_denials(void **state)
{
	struct launch_denials	 d;

	launch_denials_init(&d);
	add(&d, "{\"event\":\"decision\",\"decision\":\"allow\"}");
	assert_string_equal(render(&d, "aisb: "), "");
}

static void
summary_bounded(void **state)
{
	struct launch_denials	*d = malloc(sizeof(*d));
	char			 line[256];
	size_t			 i;

	launch_denials_init(d);
	for (i = 0; i < LAUNCH_DENY_MAX + 5; i++) {
		snprintf(line, sizeof(line), "{\"event\":\"decision\",\"host\":"
		    "\"h%zu.test\",\"port\":443,\"decision\":\"deny\","
		    "\"reason\":\"host_not_allowed\"}", i);
		add(d, line);
		add(d, line);
	}
	assert_int_equal(d->n, LAUNCH_DENY_MAX);
	assert_int_equal(d->more, 10);
	assert_non_null(strstr(render(d, "# "),
	    "# and 10 more denial(s) to other destinations\n"
	    "# every decision: /s/audit.jsonl\n"));
	free(d);
}

static void
summary_terminal_safe(void **state)
{
	struct launch_denials	 d;
	const char		*out;

	launch_denials_init(&d);
	add(&d, "{\"event\":\"decision\",\"host\":\"x\\u001b]0;pwned\\u0007\","
	    "\"port\":1,\"decision\":\"deny\",\"reason\":\"r\\u009b\","
	    "\"detail\":\"\\r\\u001b[2J\",\"fix\":\"a\\u001bb\\nc\\rd\"}");
	out = render(&d, "");
	for (; *out != '\0'; out++)
		assert_true(*out == '\n' || (*out >= 0x20 && *out < 0x7f));
}

static void
summary_reads_file(void **state)
{
	struct launch_denials	 d;
	char			 path[] = "/tmp/aisb-deny-XXXXXX";
	char			*big;
	FILE			*f;
	int			 fd;

	assert_true((fd = mkstemp(path)) != -1);
	assert_non_null(f = fdopen(fd, "w"));
	fprintf(f, "%s\n", DENY("a.test", 443, ""));
	/* a line over the bound is skipped whole, the next one read */
	big = malloc(LAUNCH_DENY_LINE * 2);
	memset(big, 'x', LAUNCH_DENY_LINE * 2 - 1);
	big[LAUNCH_DENY_LINE * 2 - 1] = '\0';
	fprintf(f, "%s\n", big);
	fprintf(f, "%s\n", DENY("b.test", 443, ""));
	fprintf(f, "%s", DENY("c.test", 443, ""));	/* no newline: cut */
	fclose(f);
	launch_denials_init(&d);
	assert_int_equal(launch_denials_read(&d, path), 0);
	assert_int_equal(d.denied, 2);
	assert_string_equal(d.d[1].host, "b.test");
	unlink(path);
	free(big);
	launch_denials_init(&d);
	assert_int_equal(launch_denials_read(&d, path), -1);
}

/* issue 16: transparent connections counted by tool, terminal-safe */
static void
summary_transparent_tools(void **state)
{
	struct launch_denials	 d;
	static char		 buf[4096];
	FILE			*f;

	(void)state;
	launch_denials_init(&d);
	add(&d, "{\"event\":\"decision\",\"host\":\"a.test\",\"port\":443,"
	    "\"decision\":\"allow\",\"transparent\":true,\"tool\":\"curl\"}");
	add(&d, "{\"event\":\"decision\",\"host\":\"a.test\",\"port\":443,"
	    "\"decision\":\"allow\"}");
	add(&d, DENY("b.test", 443, ",\"transparent\":true,\"tool\":\"node\""));
	add(&d, "{\"event\":\"decision\",\"decision\":\"deny\",\"reason\":"
	    "\"no_sni\",\"transparent\":true}");
	add(&d, "{\"event\":\"decision\",\"decision\":\"allow\",\"tool\":"
	    "\"curl\",\"transparent\":true}");
	add(&d, "{\"event\":\"decision\",\"decision\":\"allow\",\"tool\":"
	    "\"x\\u001b[2J\",\"transparent\":true}");
	/* false, or another event: not counted */
	add(&d, "{\"event\":\"decision\",\"decision\":\"allow\",\"tool\":"
	    "\"wget\",\"transparent\":false}");
	add(&d, "{\"event\":\"dns\",\"name\":\"a.test\",\"transparent\":true}");
	assert_int_equal(d.transparent, 5);
	assert_int_equal(d.ntools, 4);
	memset(buf, 0, sizeof(buf));
	assert_non_null(f = fmemopen(buf, sizeof(buf) - 1, "w"));
	launch_denials_print_tools(&d, f, "aisb: ");
	fclose(f);
	assert_string_equal(buf, "aisb: 5 connection(s) came in "
	    "transparently; tools that ignored the proxy variables: curl (2), "
	    "node (1), (unknown program) (1), x?[2J (1)\n");
	/* nothing at all without transparent connections */
	launch_denials_init(&d);
	memset(buf, 0, sizeof(buf));
	assert_non_null(f = fmemopen(buf, sizeof(buf) - 1, "w"));
	launch_denials_print_tools(&d, f, "aisb: ");
	fclose(f);
	assert_string_equal(buf, "");
}

/* issue 29: an inspected host's refused requests, each with its fix */
static void
summary_requests(void **state)
{
	struct launch_denials	 d;
	const char		*out;

	(void)state;
	launch_denials_init(&d);
	add(&d, "{\"event\":\"decision\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"allow\",\"inspect\":true}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"allow\",\"method\":\"GET\",\"path\":\"/v1/m\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"deny\",\"method\":\"POST\",\"path\":\"/x\","
	    "\"reason\":\"request_not_allowed\",\"detail\":\"request not "
	    "allowed\",\"fix\":\"# add to requests: allow:\\n- \\\"POST "
	    "/x\\\"\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"deny\",\"method\":\"POST\",\"path\":\"/x\","
	    "\"reason\":\"request_not_allowed\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"deny\",\"method\":\"GET\",\"path\":\"/a/../b\","
	    "\"reason\":\"bad_path\"}");
	assert_int_equal(d.allowed, 1);		/* connections, not requests */
	assert_int_equal(d.denied, 3);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.d[0].request, "POST /x");
	assert_int_equal(d.d[0].count, 2);
	out = render(&d, "aisb: ");
	if (strstr(out, "aisb: denied api.test:443 POST /x, 2 times: request "
	    "not allowed\n# add to requests: allow:\n- \"POST /x\"\n") == NULL)
		fail_msg("%s", out);
	assert_non_null(strstr(out, "denied api.test:443 GET /a/../b, 1 time"));
	/* two entries (requests), one destination */
	assert_non_null(strstr(out, "aisb: 3 request(s) denied, to 1 "
	    "destination(s)"));
}

/*
 * An inspected host's requests the gate refused before any entry decided
 * them (a Host of another name, an absolute target, a malformed head) are
 * malformed, an upstream's broken answer a failure: each said, with its
 * request, not left out of the summary.
 */
static void
summary_request_errors(void **state)
{
	struct launch_denials	 d;
	const char		*out;

	(void)state;
	launch_denials_init(&d);
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"method\":\"GET\","
	    "\"path\":\"/a\",\"reason\":\"host_mismatch\",\"detail\":\"the "
	    "Host header must name the connection's host\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"method\":\"GET\","
	    "\"path\":\"https://o.test/\",\"reason\":\"bad_target\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"method\":\"POST\","
	    "\"path\":\"/s\",\"reason\":\"bad_request\",\"detail\":"
	    "\"duplicate Content-Length\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":502,\"method\":\"GET\","
	    "\"path\":\"/b\",\"reason\":\"upstream_error\",\"detail\":"
	    "\"the upstream closed before its answer\"}");
	/* heads that did not parse: no path, or no method; each fault its own */
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"method\":\"POST\","
	    "\"reason\":\"bad_request\",\"detail\":\"both Content-Length and "
	    "Transfer-Encoding\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"method\":\"POST\","
	    "\"reason\":\"bad_request\",\"detail\":\"duplicate "
	    "Transfer-Encoding\"}");
	add(&d, "{\"event\":\"request\",\"host\":\"api.test\",\"port\":443,"
	    "\"decision\":\"error\",\"status\":400,\"reason\":\"bad_request\","
	    "\"detail\":\"bare LF in request head\"}");
	assert_int_equal(d.denied, 0);
	assert_int_equal(d.malformed, 6);
	assert_int_equal(d.nm, 6);
	assert_int_equal(d.failed, 1);
	out = render(&d, "aisb: ");
	if (strstr(out, "aisb: malformed api.test:443 POST, 1 time: both "
	    "Content-Length and Transfer-Encoding (bad_request)\n") == NULL ||
	    strstr(out, "aisb: malformed api.test:443 POST, 1 time: duplicate "
	    "Transfer-Encoding (bad_request)\n") == NULL ||
	    strstr(out, "aisb: malformed api.test:443, 1 time: bare LF in "
	    "request head (bad_request)\n") == NULL ||
	    strstr(out, "aisb: 6 request(s) malformed, to 1 destination(s)") ==
	    NULL)
		fail_msg("%s", out);
	if (strstr(out, "aisb: malformed api.test:443 GET /a, 1 time: the Host "
	    "header must name the connection's host (host_mismatch)\n") ==
	    NULL || strstr(out, "aisb: malformed api.test:443 GET "
	    "https://o.test/, 1 time: bad_target\n") == NULL ||
	    strstr(out, "aisb: failed api.test:443 GET /b, 1 time: the "
	    "upstream closed before its answer (upstream_error)\n") == NULL)
		fail_msg("%s", out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fix_name_default_port),
		cmocka_unit_test(fix_name_other_port),
		cmocka_unit_test(fix_single_label_quoted),
		cmocka_unit_test(fix_port_not_allowed),
		cmocka_unit_test(fix_ip_literal),
		cmocka_unit_test(fix_ip_public_no_range),
		cmocka_unit_test(fix_address_class),
		cmocka_unit_test(fix_deny_rule_and_bounds),
		cmocka_unit_test(summary_counts_by_destination),
		cmocka_unit_test(summary_failures_alone),
		cmocka_unit_test(summary_dns_refusals),
		cmocka_unit_test(summary_dns_malformed),
		cmocka_unit_test(summary_auth_probe_answered),
		cmocka_unit_test(summary_nothing_without_denials),
		cmocka_unit_test(summary_bounded),
		cmocka_unit_test(summary_terminal_safe),
		cmocka_unit_test(summary_reads_file),
		cmocka_unit_test(summary_transparent_tools),
		cmocka_unit_test(summary_requests),
		cmocka_unit_test(summary_request_errors),
		cmocka_unit_test(summary_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
