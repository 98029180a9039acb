/*
 * aisb policy check|print|test: the policy engine from the command line;
 * aisb policy derive and suggest: policies written from what the host, a
 * workspace or a session shows (the engines are in policytools/).
 */
#include "config.h"

#include <sys/socket.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "file.h"
#include "policy.h"
#include "policytools/derive.h"
#include "policytools/lockfile.h"
#include "policytools/suggest.h"
#include "session/folder.h"

static struct policy *
load_or_report(const char *path)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			*buf;
	size_t			 len = 64 * 1024;

	if ((errs = calloc(1, sizeof(*errs))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return NULL;
	}
	if (policy_load_file(path, &p, errs) == -1) {
		if ((buf = malloc(len)) != NULL) {
			policy_errors_format(errs, buf, len);
			fputs(buf, stderr);
			free(buf);
		}
	}
	free(errs);
	return p;
}

/*
 * --request "METHOD PATH": the request decided by the rule that allowed
 * the connection, and what the gate would add to it.  1 when refused.
 */
static int
test_request(const struct policy_rule *r, const char *req)
{
	static const char *const how[] = {
		[POLICY_SECRET_QUERY] = "query parameter",
		[POLICY_SECRET_HEADER] = "header", [POLICY_SECRET_BEARER] =
		"bearer in", [POLICY_SECRET_BASIC] = "basic in",
	};
	struct policy_request_decision	 d;
	struct policy_secret_info	 s;
	const char			*sp = strchr(req, ' ');
	char				 fix[POLICY_FIX_MAX], why[256];
	char				 rpc[POLICY_MAX_REQ_PATH +
					    sizeof(POLICY_PUSH_RPC)];
	size_t				 i, rl;
	int				 push;

	if (sp == NULL || sp == req || sp[1] != '/') {
		fprintf(stderr, "aisb: --request '%.64s': write METHOD PATH, "
		    "such as \"POST /v1/messages\"\n", req);
		return -1;
	}
	if (!policy_rule_inspect(r)) {
		printf("request: not inspected: the gate relays the tunnel and "
		    "sees no request\n");
		return 0;
	}
	policy_decide_request(r, req, (size_t)(sp - req), sp + 1,
	    strlen(sp + 1), &d);
	if (d.verdict == POLICY_ALLOW && (push = policy_decide_push_discovery(r,
	    sp + 1, strlen(sp + 1), rpc, sizeof(rpc), &rl, &d)) != 0) {
		/* as the gate decides it: the push it announces */
		if (push == -1) {
			printf("request %s: deny, a git discovery with an "
			    "ambiguous query (service= twice, a malformed or "
			    "control-byte escape): the gate answers 400 "
			    "bad_request\n", req);
			return 1;
		}
		policy_push_detail(&d, rpc, rl, why, sizeof(why));
		printf("request %s: deny, %s\n", req, why);
		if (policy_request_fix_yaml(r, "POST", 4, rpc, rl, d.reason, 0,
		    fix, sizeof(fix)) > 0)
			printf("to allow it:\n%s", fix);
		return 1;
	}
	printf("request %s: %s, %s", req, d.verdict == POLICY_ALLOW ?
	    "allow" : "deny", d.detail != NULL ? d.detail :
	    policy_reason_str(d.reason));
	if (d.entry != NULL)
		printf(" (line %u, column %u: \"%s\")", d.line, d.column,
		    d.entry);
	printf("\n");
	if (d.verdict != POLICY_ALLOW) {
		if (policy_request_fix_yaml(r, req, (size_t)(sp - req), sp + 1,
		    strlen(sp + 1), d.reason, 0, fix, sizeof(fix)) > 0)
			printf("to allow it:\n%s", fix);
		return 1;
	}
	for (i = 0; i < policy_rule_secret_count(r); i++) {
		policy_rule_secret(r, i, &s);
		printf("secret %s: %s %s\n", s.name, how[s.mode],
		    s.header != NULL ? s.header : s.query);
	}
	return 0;
}

static int
cmd_test(struct policy *p, const char *target, const char *ip,
    const char *req)
{
	struct policy_target	 t;
	struct policy_decision	 d;
	struct policy_addr	 a;
	const char		*cls = NULL;
	char			 err[128], rule[512], abuf[64];
	int			 rc;

	if (policy_parse_target(target, strlen(target), 443, &t, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s: %s\n", target, err);
		return EXIT_CONFIG;
	}
	if (ip != NULL && policy_parse_addr(ip, strlen(ip), &a) == -1) {
		fprintf(stderr, "aisb: %s: not an IPv4 or IPv6 address\n", ip);
		return EXIT_CONFIG;
	}
	policy_decide(p, &t, &d);
	if (d.verdict == POLICY_ALLOW) {
		if (t.is_ip)
			cls = policy_classify(p, &t.addr);
		else if (ip != NULL)
			cls = policy_classify(p, &a);
		if (cls != NULL) {
			d.verdict = POLICY_DENY;
			d.reason = POLICY_R_ADDR_CLASS;
		}
	}
	printf("%s %s%s%s:%u\n", d.verdict == POLICY_ALLOW ? "allow" : "deny",
	    t.addr.family == AF_INET6 && t.is_ip ? "[" : "", t.host,
	    t.addr.family == AF_INET6 && t.is_ip ? "]" : "", t.port);
	printf("reason: %s\n", policy_reason_str(d.reason));
	printf("rule: %s\n", policy_rule_describe(d.rule, rule, sizeof(rule)));
	if (ip != NULL || t.is_ip) {
		const struct policy_addr *x = t.is_ip ? &t.addr : &a;
		const char *c = policy_classify(p, x);

		printf("address %s: %s%s%s\n",
		    policy_addr_str(x, abuf, sizeof(abuf)),
		    c != NULL ? "denied range (" : "may be dialled",
		    c != NULL ? c : "", c != NULL ? ")" : "");
	}
	if (d.verdict == POLICY_ALLOW && req != NULL) {
		if ((rc = test_request(d.rule, req)) == -1)
			return EXIT_CONFIG;
		return rc;
	}
	return d.verdict == POLICY_ALLOW ? 0 : 1;
}

/* aisb policy derive KIND [PATH...]: each kind's flags, then the engine */
static int
cmd_derive(int argc, char **argv)
{
	struct cli_args	 a;
	const char	*root = "", *ws = ".", *kind = NULL;
	int		 rc, lock, http;

	if ((rc = launch_cli_parse("policy derive", argc - 2, argv + 2,
	    &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	kind = a.pos[0];
	if (launch_cli_get(&a, "--root") != NULL)
		root = launch_cli_get(&a, "--root");
	if (launch_cli_get(&a, "--workspace") != NULL)
		ws = launch_cli_get(&a, "--workspace");
	http = launch_cli_get(&a, "--allow-http") != NULL;
	/* lockfile, env: derive_lock.c (issue 19) */
	if (strcmp(kind, "lockfile") == 0 || strcmp(kind, "env") == 0) {
		lock = strcmp(kind, "lockfile") == 0;
		if ((lock && root[0] != '\0') || (!lock && a.npos > 1) ||
		    (!lock && http)) {
			fprintf(stderr, "aisb policy derive %s: %s\n", kind,
			    lock ? "--root is for derive apt and env" :
			    a.npos > 1 ? "takes no PATH (derive lockfile "
			    "does)" : "--allow-http is for derive lockfile");
			return EXIT_CONFIG;
		}
		return launch_derive_lock(kind, ws, root, a.pos + 1,
		    a.npos - 1, http);
	}
	if (a.npos > 1 || http) {
		fprintf(stderr, "aisb policy derive %.32s: %s is for derive "
		    "lockfile\n", kind, a.npos > 1 ? "a PATH" : "--allow-http");
		return EXIT_CONFIG;
	}
	if (strcmp(kind, "apt") != 0 && strcmp(kind, "npm") != 0 &&
	    strcmp(kind, "pip") != 0 && strcmp(kind, "git") != 0) {
		fprintf(stderr, "aisb policy derive: derive knows apt, npm, "
		    "pip, git, lockfile and env, not '%.32s'\n", kind);
		return EXIT_CONFIG;
	}
	if ((root[0] != '\0' && strcmp(kind, "apt") != 0) ||
	    (strcmp(ws, ".") != 0 && strcmp(kind, "git") != 0)) {
		fprintf(stderr, "aisb policy derive %s: %s is for derive %s\n",
		    kind, root[0] != '\0' ? "--root" : "--workspace",
		    root[0] != '\0' ? "apt" : "git");
		return EXIT_CONFIG;
	}
	return launch_derive(kind, root, ws, stdout) == 0 ? 0 : EXIT_CONFIG;
}

/* aisb policy suggest ID|LOG: a session's log, or a gate's */
static int
cmd_suggest(int argc, char **argv)
{
	struct cli_args		 a;
	char			 dir[PATH_MAX], log[PATH_MAX];
	const char		*want, *id;
	unsigned		 flags = 0;
	int			 rc;

	if ((rc = launch_cli_parse("policy suggest", argc - 2, argv + 2,
	    &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	want = a.pos[0];
	if (launch_cli_get(&a, "--allow-ip") != NULL)
		flags |= LAUNCH_SUGGEST_ALLOW_IP;
	if (launch_cli_get(&a, "--group") != NULL)
		flags |= LAUNCH_SUGGEST_GROUP;
	/* a path (with a '/'): the audit log of a standalone aisb-gate --learn */
	if (strchr(want, '/') != NULL) {
		if (snprintf(log, sizeof(log), "%s", want) >= (int)sizeof(log))
			return EXIT_CONFIG;
		id = want;
	} else {
		if ((rc = launch_session_find(want, dir, sizeof(dir))) != 0)
			return rc;
		if (file_path_join(log, sizeof(log), dir, "audit.jsonl") == -1)
			return EXIT_CONFIG;
		id = strrchr(dir, '/') != NULL ? strrchr(dir, '/') + 1 : dir;
	}
	return launch_suggest_log(log, id, launch_cli_get(&a, "--base"),
	    flags);
}

int
launch_cmd_policy(int argc, char **argv)
{
	struct cli_args	 a;
	struct policy	*p;
	char		*dump, name[64];
	int		 rc;

	if ((rc = launch_cli_group("policy", argc, argv)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "derive") == 0)
		return cmd_derive(argc, argv);
	if (strcmp(argv[1], "suggest") == 0)
		return cmd_suggest(argc, argv);
	snprintf(name, sizeof(name), "policy %s", argv[1]);
	if ((rc = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	rc = 0;
	if ((p = load_or_report(a.pos[0])) == NULL)
		return EXIT_CONFIG;
	if (strcmp(argv[1], "check") == 0)
		printf("policy OK sha256:%s\n", policy_sha256(p));
	else if (strcmp(argv[1], "print") == 0) {
		if ((dump = policy_dump(p, NULL)) == NULL) {
			fprintf(stderr, "aisb: out of memory\n");
			rc = 1;
		} else {
			fputs(dump, stdout);
			free(dump);
		}
	} else
		rc = cmd_test(p, a.pos[1], a.npos == 3 ? a.pos[2] : NULL,
		    launch_cli_get(&a, "--request"));
	policy_free(p);
	if (fflush(stdout) == EOF) {
		perror("aisb: stdout");
		rc = 1;
	}
	return rc;
}
