/*
 * Agent recipes (launcher/image/agent*.c): the shipped file loads; every
 * bad field stops loading with one line naming file:line:col, the agent,
 * the field and what to write; the user's file overrides field by field; the
 * bounds hold; the merged policy keeps deny rules winning, every rule's
 * inspection, and adds the recipe's secrets the session passes; the
 * image spec.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "write_file.h"
#include "image/agent.h"
#include "image/image.h"
#include "policy.h"

static char	 dir[] = "/tmp/aisb-agent-XXXXXX";
static char	 shipped[256], user[256];
static struct launch_agents *set;
static char	 err[2048];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(shipped, sizeof(shipped), "%s/shipped.yaml", dir);
	snprintf(user, sizeof(user), "%s/user.yaml", dir);
	if ((set = malloc(sizeof(*set))) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	(void)unlink(shipped);
	(void)unlink(user);
	(void)rmdir(dir);
	free(set);
	return 0;
}

/* Loads text as the shipped file (and utext as the user's, if any). */
static int
load(const char *text, const char *utext)
{
	(void)unlink(user);
	write_file(shipped, text);
	if (utext != NULL)
		write_file(user, utext);
	err[0] = '\0';
	return launch_agents_load_files(set, shipped, user, err, sizeof(err));
}

static void
test_shipped_file(void **state)
{
	const struct launch_agent	*a;
	const char			*top = getenv("top_srcdir");
	char				 path[512], where[1200];
	size_t				 i;

	(void)state;
	snprintf(path, sizeof(path), "%s/contrib/agents.yaml",
	    top != NULL ? top : "..");
	assert_int_equal(launch_agents_load_files(set, path, NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(set->n, 4);
	assert_non_null(a = launch_agent_find(set, "claude"));
	assert_string_equal(a->command, "claude");
	assert_string_equal(a->node, "22.23.5");
	assert_string_equal(a->npm, "@anthropic-ai/claude-code@2.1.332");
	assert_string_equal(a->hosts[0].host, "api.anthropic.com");
	assert_int_equal(a->hosts[0].port, 443);
	assert_string_equal(a->config[0], ".claude");
	for (i = 0; i < a->nsetenv; i++)
		if (strcmp(a->setenv[i].name, "CLAUDE_CONFIG_DIR") == 0)
			break;
	assert_true(i < a->nsetenv);
	assert_string_equal(a->setenv[i].value, "/home/sandbox/.claude");
	/* every host cites its line in the file */
	launch_agent_where(set, &a->hosts[0].pos, where, sizeof(where));
	assert_non_null(strstr(where, "contrib/agents.yaml:"));
	assert_ptr_equal(launch_agent_by_command(set, "claude"), a);
	assert_null(launch_agent_by_command(set, "/usr/bin/claude"));
	assert_non_null(a = launch_agent_find(set, "codex"));
	assert_string_equal(a->node, "");	/* Debian's nodejs */
	assert_non_null(a = launch_agent_find(set, "aider"));
	assert_string_equal(a->pip, "aider-chat==0.86.2");
	assert_string_equal(a->npm, "");
	assert_non_null(launch_agent_find(set, "gemini"));
}

static void
test_good_minimal(void **state)
{
	const struct launch_agent	*a;

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  tool:\n"
	    "    npm: \"semver@7.6.3\"\n"
	    "    hosts: [\"*.example.org:8443\", Api.Example.COM]\n", NULL), 0);
	assert_non_null(a = launch_agent_find(set, "tool"));
	assert_string_equal(a->command, "tool");	/* the name */
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[0].host, "*.example.org");
	assert_int_equal(a->hosts[0].port, 8443);
	assert_string_equal(a->hosts[1].host, "api.example.com");
	assert_int_equal(a->hosts[1].port, 443);
	assert_int_equal(a->hosts[1].pos.line, 5);
	/* an empty file and a missing one: no agents, no error */
	assert_int_equal(load("", NULL), 0);
	assert_int_equal(set->n, 0);
	assert_int_equal(launch_agents_load_files(set, "/nonexistent/x.yaml",
	    NULL, err, sizeof(err)), 0);
	assert_int_equal(set->n, 0);
}

struct bad {
	const char	*body;		/* under "version: 1\nagents:\n  x:\n" */
	const char	*where;		/* ":LINE:COL: " */
	const char	*says;		/* part of the message */
	const char	*fix;		/* part of what to write instead */
};

static void
test_bad_fields(void **state)
{
	static const struct bad bad[] = {
		{ "    hostz: [a.example]\n", ":4:5: ",
		    "agent 'x': unknown field 'hostz'", "write one of command" },
		{ "    hosts: [a.example:99999]\n", ":4:13: ",
		    "agent 'x': hosts: 'a.example:99999'", "write hosts:" },
		{ "    hosts: [192.0.2.1]\n", ":4:13: ",
		    "hosts: '192.0.2.1': an IP address", "write hosts:" },
		{ "    hosts: [\"~evil\"]\n", ":4:13: ",
		    "hosts: '~evil'", "write hosts:" },
		{ "    hosts: [\"*\"]\n", ":4:13: ",
		    "hosts: '*'", "write hosts:" },
		{ "    hosts: [\"https://a.example/\"]\n", ":4:13: ",
		    "not a regex, an address or a URL", "write hosts:" },
		{ "    hosts: a.example\n", ":4:12: ",
		    "hosts: a scalar where a list belongs", "write hosts:" },
		{ "    npm: left-pad\n", ":4:10: ",
		    "npm: 'left-pad' is not a package with a version",
		    "write npm: \"@scope/name@1.2.3\"" },
		{ "    npm: \"left-pad@^1.3.0\"\n", ":4:10: ",
		    "npm: '^1.3.0' is not an exact version",
		    "write npm: \"left-pad@1.2.3\"" },
		{ "    npm: \"left-pad@latest\"\n", ":4:10: ",
		    "npm: 'latest' is not an exact version", "write npm:" },
		{ "    npm: \"left-pad@1.2.3-rc.1 || 2.0.0\"\n", ":4:10: ",
		    "is not an exact version", "write npm:" },
		{ "    npm: \"left-pad@1.x\"\n", ":4:10: ",
		    "is not an exact version", "write npm:" },
		{ "    npm: \"Left-Pad@1.3.0\"\n", ":4:10: ",
		    "is not a package with a version", "write npm:" },
		{ "    pip: \"aider-chat>=0.86\"\n", ":4:10: ",
		    "pip: 'aider-chat>=0.86' is not a package pinned",
		    "write pip: \"name==1.2.3\"" },
		{ "    pip: \"aider-chat==0.86.*\"\n", ":4:10: ",
		    "pip: 'aider-chat==0.86.*'", "write pip:" },
		{ "    pip: \"aider-chat===0.86\"\n", ":4:10: ",
		    "pip: 'aider-chat===0.86'", "write pip:" },
		{ "    npm: \"a@1.2.3\"\n    node: 22\n", ":5:11: ",
		    "node: '22' is not an exact version",
		    "write node: \"22.23.5\"" },
		{ "    env: [1ABC]\n", ":4:11: ",
		    "env: '1ABC' is not a variable name", "write env:" },
		{ "    env: [\"API_KEY=secret\"]\n", ":4:11: ",
		    "env: 'API_KEY=secret' is not a variable name",
		    "write env:" },
		{ "    setenv: { HTTPS_PROXY: http://elsewhere }\n", ":4:15: ",
		    "setenv: 'HTTPS_PROXY' is not a variable a recipe may set",
		    "write setenv:" },
		{ "    setenv: [A=b]\n", ":4:13: ",
		    "setenv: a list where a mapping belongs", "write setenv:" },
		{ "    setenv: { A: \"x\\ny\" }\n", ":4:18: ",
		    "setenv: A: a line break", "write one line" },
		{ "    secrets: [K]\n", ":4:14: ",
		    "secrets: a mapping belongs here", "write secrets:" },
		{ "    secrets: { 1K: a.example bearer }\n", ":4:16: ",
		    "secrets: '1K' is not a variable name", "write secrets:" },
		{ "    secrets: { K: a.example magic }\n", ":4:19: ",
		    "secrets: K: 'a.example magic': the mode is header NAME, "
		    "bearer, basic USER or query PARAM",
		    "write secrets:" },
		{ "    secrets: { K: a.example header }\n", ":4:19: ",
		    "the mode is header NAME, bearer, basic USER or query PARAM",
		    "write secrets:" },
		{ "    secrets: { K: \"*.example bearer\" }\n", ":4:19: ",
		    "without a port or *", "write secrets:" },
		{ "    secrets: { K: a.example bearer extra }\n", ":4:19: ",
		    "the mode is header NAME", "write secrets:" },
		{ "    secrets: { K: a.example replace }\n", ":4:19: ",
		    "the mode is header NAME", "write secrets:" },
		{ "    secrets: { K: a.example query }\n", ":4:19: ",
		    "the mode is header NAME", "write secrets:" },
		{ "    secrets: { K: a.example header x-a more }\n", ":4:19: ",
		    "not HOST MODE", "write secrets:" },
		{ "    config: [../etc]\n", ":4:14: ",
		    "config: '../etc' is not a folder under the home",
		    "write config:" },
		{ "    config: [/etc]\n", ":4:14: ",
		    "config: '/etc' is not a folder under the home",
		    "write config:" },
		{ "    command: /usr/bin/claude\n", ":4:14: ",
		    "command: '/usr/bin/claude' is not a program name",
		    "no path" },
		{ "    command: [a]\n", ":4:14: ",
		    "command: a list where a value belongs",
		    "write command: NAME" },
		{ "    npm: \"a@1.2.3\"\n    npm: \"a@1.2.4\"\n", ":5:5: ",
		    "agent 'x': npm: given twice", "keep one" },
		{ "    node: \"22.23.5\"\n", ":4:11: ",
		    "agent 'x': node: a Node runtime with no npm package",
		    "add npm:" },
		{ "    npm: &p \"a@1.2.3\"\n", ":4:10: ",
		    "YAML anchors and aliases are not allowed", "write each" },
		{ "    hosts: [a.example\n", ":5:1: ", "YAML syntax", "" },
	};
	char	 text[1024], want[512];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "version: 1\nagents:\n  x:\n%s",
		    bad[i].body);
		if (load(text, NULL) != -1)
			fail_msg("case %zu loaded: %s", i, bad[i].body);
		snprintf(want, sizeof(want), "%s%s", shipped, bad[i].where);
		if (strncmp(err, want, strlen(want)) != 0 ||
		    strstr(err, bad[i].says) == NULL ||
		    strstr(err, bad[i].fix) == NULL ||
		    strchr(err, '\n') != NULL)
			fail_msg("case %zu: got '%s', want '%s' ... '%s' ... "
			    "'%s'", i, err, want, bad[i].says, bad[i].fix);
	}
}

static void
test_bad_file(void **state)
{
	(void)state;
	assert_int_equal(load("version: 2\nagents: {}\n", NULL), -1);
	assert_non_null(strstr(err, ":1:10: this aisb reads recipe files of "
	    "'version: 1'"));
	assert_int_equal(load("agents: {}\n", NULL), -1);
	assert_non_null(strstr(err, "version: 1"));
	assert_int_equal(load("version: 1\nagent:\n  x: {}\n", NULL), -1);
	assert_non_null(strstr(err, ":2:1: unknown key 'agent'"));
	assert_int_equal(load("version: 1\nagents:\n  x: {}\n  x: {}\n", NULL),
	    -1);
	assert_non_null(strstr(err, ":4:3: agent 'x' is named twice"));
	assert_int_equal(load("version: 1\nagents:\n  none: {}\n", NULL), -1);
	assert_non_null(strstr(err, ":3:3: agent name 'none'"));
	assert_int_equal(load("version: 1\nagents:\n  Claude: {}\n", NULL), -1);
	assert_non_null(strstr(err, "agent name 'Claude': write a lower-case"));
	assert_int_equal(load("version: 1\nagents:\n  x: claude\n", NULL), -1);
	assert_non_null(strstr(err, ":3:6: agent 'x': a scalar where its "
	    "fields belong"));
	assert_int_equal(load("version: 1\nagents: [x]\n", NULL), -1);
	assert_non_null(strstr(err, ":2:9: agents: a list"));
	assert_int_equal(load("version: 1\n---\nversion: 1\n", NULL), -1);
	assert_non_null(strstr(err, "one YAML document per file"));
}

static void
test_override(void **state)
{
	const struct launch_agent	*a;
	char				 where[1200];

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  claude:\n"
	    "    node: \"22.23.5\"\n"
	    "    npm: \"@anthropic-ai/claude-code@2.1.332\"\n"
	    "    hosts: [api.anthropic.com, claude.ai]\n"
	    "    env: [ANTHROPIC_API_KEY]\n"
	    "    setenv: { CLAUDE_CONFIG_DIR: /home/sandbox/.claude }\n"
	    "    config: [.claude]\n"
	    "  codex:\n    npm: \"@openai/codex@0.171.0\"\n",
	    "version: 1\nagents:\n  claude:\n"
	    "    npm: \"@anthropic-ai/claude-code@2.1.340\"\n"
	    "    hosts: [api.anthropic.com, proxy.corp.example:8443]\n"
	    "  mine:\n    command: my-agent\n    pip: \"my_agent==1.0\"\n"),
	    0);
	assert_int_equal(set->n, 3);
	assert_non_null(a = launch_agent_find(set, "claude"));
	/* the fields the user wrote */
	assert_string_equal(a->npm, "@anthropic-ai/claude-code@2.1.340");
	assert_int_equal(a->nhosts, 2);
	assert_string_equal(a->hosts[1].host, "proxy.corp.example");
	assert_int_equal(a->hosts[1].port, 8443);
	assert_int_equal(a->hosts[1].pos.file, 1);
	launch_agent_where(set, &a->hosts[1].pos, where, sizeof(where));
	assert_non_null(strstr(where, "user.yaml:5:"));
	/* ... and the shipped ones it did not */
	assert_string_equal(a->node, "22.23.5");
	assert_int_equal(a->nenv, 1);
	assert_int_equal(a->nsetenv, 1);
	assert_int_equal(a->nconfig, 1);
	assert_int_equal(a->pos.file, 0);
	assert_true(a->overridden);
	assert_non_null(a = launch_agent_find(set, "codex"));
	assert_false(a->overridden);
	assert_non_null(a = launch_agent_find(set, "mine"));
	assert_int_equal(a->pos.file, 1);
	assert_ptr_equal(launch_agent_by_command(set, "my-agent"), a);

	/* a user's mistake names the user's file */
	assert_int_equal(load("version: 1\nagents:\n  claude:\n"
	    "    npm: \"a@1.2.3\"\n", "version: 1\nagents:\n  claude:\n"
	    "    hosts: [bad..name]\n"), -1);
	assert_non_null(strstr(err, "user.yaml:4:13: agent 'claude': hosts:"));
	/* node: "" in the user's file: Debian's nodejs again */
	assert_int_equal(load("version: 1\nagents:\n  c:\n    node: \"22.1.0\"\n"
	    "    npm: \"a@1.2.3\"\n", "version: 1\nagents:\n  c:\n"
	    "    node: \"\"\n"), 0);
	assert_string_equal(set->a[0].node, "");
	/* dropping the package leaves a runtime for nothing: refused */
	assert_int_equal(load("version: 1\nagents:\n  c:\n    node: \"22.1.0\"\n"
	    "    npm: \"a@1.2.3\"\n", "version: 1\nagents:\n  c:\n"
	    "    npm: \"\"\n"), -1);
	assert_non_null(strstr(err, "shipped.yaml:4:11: agent 'c': node:"));
}

static void
test_bounds(void **state)
{
	char	*big;
	size_t	 i, off;

	(void)state;
	big = malloc(LAUNCH_AGENTS_MAX_FILE + 64);
	assert_non_null(big);
	/* a file past the bound */
	off = (size_t)snprintf(big, 64, "version: 1\n");
	memset(big + off, '#', LAUNCH_AGENTS_MAX_FILE);
	big[off + LAUNCH_AGENTS_MAX_FILE] = '\0';
	assert_int_equal(load(big, NULL), -1);
	assert_non_null(strstr(err, "larger than 65536 bytes"));

	/* hosts: one more than the bound */
	off = (size_t)snprintf(big, 128, "version: 1\nagents:\n  x:\n"
	    "    hosts:\n");
	for (i = 0; i <= LAUNCH_AGENT_MAX_HOSTS; i++)
		off += (size_t)sprintf(big + off, "      - h%zu.example\n", i);
	assert_int_equal(load(big, NULL), -1);
	assert_non_null(strstr(err, ":5:7: agent 'x': hosts: more than 32 "
	    "entries"));

	/* agents: one more than the bound */
	off = (size_t)snprintf(big, 64, "version: 1\nagents:\n");
	for (i = 0; i <= LAUNCH_AGENTS_MAX; i++)
		off += (size_t)sprintf(big + off, "  a%zu: {}\n", i);
	assert_int_equal(load(big, NULL), -1);
	assert_non_null(strstr(err, "more than 32 agents"));

	/* YAML nodes */
	off = (size_t)snprintf(big, 64, "version: 1\nagents:\n  x:\n"
	    "    env: [");
	for (i = 0; i < 5000; i++)
		off += (size_t)sprintf(big + off, "A,");
	sprintf(big + off, "A]\n");
	assert_int_equal(load(big, NULL), -1);
	assert_non_null(strstr(err, "more than 4096 YAML nodes"));

	/* one value */
	off = (size_t)snprintf(big, 128, "version: 1\nagents:\n  x:\n"
	    "    npm: \"a@1.2.3-");
	memset(big + off, 'r', 300);
	sprintf(big + off + 300, "\"\n");
	assert_int_equal(load(big, NULL), -1);
	assert_non_null(strstr(err, "npm: longer than 255 bytes"));

	/* a name */
	assert_int_equal(load("version: 1\nagents:\n"
	    "  abcdefghijabcdefghijabcdefghijabc: {}\n", NULL), -1);
	assert_non_null(strstr(err, "at most 32"));

	/* not a regular file */
	assert_int_equal(launch_agents_load_files(set, dir, NULL, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	free(big);
}

static void
test_policy_merge(void **state)
{
	static const char base_text[] = "version: 1\nallow:\n"
	    "  - host: github.com\n    ports: [443]\n"
	    "deny:\n  - host: blocked.example\n"
	    "allow_ranges: [\"192.0.2.0/24\"]\n";
	const struct launch_agent	*a;
	struct policy			*base, *merged, *again;
	struct policy_decision		 d;
	char				*yaml = NULL, miss[256];

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  x:\n"
	    "    hosts: [api.example.com, blocked.example, "
	    "\"*.cdn.example:8443\"]\n", NULL), 0);
	a = launch_agent_find(set, "x");
	assert_int_equal(policy_load_buffer("base.yaml", base_text,
	    sizeof(base_text) - 1, &base, NULL), 0);

	/* before: the agent's hosts are missing from the base */
	assert_int_equal(launch_agent_missing(a, base, miss, sizeof(miss)), 3);
	assert_string_equal(miss, "api.example.com:443 blocked.example:443 "
	    "*.cdn.example:8443");

	assert_int_equal(launch_agent_policy(set, a, base, "merged", NULL, 0,
	    &yaml, &merged, err, sizeof(err)), 0);
	policy_decide_name(merged, "api.example.com", 15, 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_decide_name(merged, "api.example.com", 15, 80, &d);
	assert_int_equal(d.verdict, POLICY_DENY);	/* the port it named */
	policy_decide_name(merged, "a.cdn.example", 13, 8443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	policy_decide_name(merged, "github.com", 10, 443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	/* the user's deny rule wins over the agent's allow */
	policy_decide_name(merged, "blocked.example", 15, 443, &d);
	assert_int_equal(d.verdict, POLICY_DENY);
	assert_int_equal(d.reason, POLICY_R_DENY_RULE);
	assert_int_equal(policy_allow_range_count(merged), 1);
	/* only the blocked one is still missing */
	assert_int_equal(launch_agent_missing(a, merged, miss, sizeof(miss)),
	    1);
	assert_string_equal(miss, "blocked.example:443");

	/* every rule says where it was written */
	assert_non_null(strstr(yaml, "  # base.yaml:3:5\n  - host: "
	    "\"github.com\""));
	assert_non_null(strstr(yaml, "  # agent x, "));
	assert_non_null(strstr(yaml, "shipped.yaml:4:13\n  - host: "
	    "\"api.example.com\"\n    ports: [443]\n"));
	/* the file the gate reads is the policy the launcher decided on */
	assert_int_equal(policy_load_buffer("again", yaml, strlen(yaml),
	    &again, NULL), 0);
	assert_string_equal(policy_sha256(again), policy_sha256(merged));
	assert_string_not_equal(policy_sha256(base), policy_sha256(merged));
	policy_free(again);
	policy_free(merged);
	policy_free(base);
	free(yaml);
}

/*
 * The merged YAML is generated from the compiled base, so every kind of
 * rule, port range, allow range and DNS setting must come back as it
 * was: an agent with no hosts leaves the policy's identity unchanged.
 */
static void
test_policy_roundtrip(void **state)
{
	static const char base_text[] = "version: 1\nallow:\n"
	    "  - host: \"~^[a-z0-9]+\\\\.cdn\\\\.example\\\\.com$\"\n"
	    "    ports: [443, \"8000-8100\"]\n"
	    "  - host: api.example.net\n    inspect: true\n"
	    "    requests:\n      allow: [\"POST /v1/*\"]\n"
	    "      deny: [\"POST */x\"]\n"
	    "    secrets:\n      - name: K1\n        header: x-api-key\n"
	    "      - name: K2\n        scheme: basic\n        user: u\n"
	    "      - name: K3\n        query: key\n"
	    "  - host: \"*.inspected.example\"\n    inspect: true\n"
	    "  - cidr: 192.0.2.0/24\n    ports: [22]\n"
	    "  - cidr: \"2001:db8::/32\"\n"
	    "  - host: \"*.example.org\"\n"
	    "deny:\n  - host: bad.example.org\n  - cidr: 192.0.2.7/32\n"
	    "allow_ranges: [10.1.0.0/16, \"fd00::/8\"]\n"
	    "dns:\n  servers: [\"192.0.2.53\", \"[2001:db8::53]:5353\"]\n"
	    "  min_ttl: 2\n  max_ttl: 100\n";
	struct policy	*base, *merged;
	char		*yaml = NULL;

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  bare:\n"
	    "    command: sh\n", NULL), 0);
	assert_int_equal(policy_load_buffer("base.yaml", base_text,
	    sizeof(base_text) - 1, &base, NULL), 0);
	assert_int_equal(launch_agent_policy(set, launch_agent_find(set,
	    "bare"), base, "merged", NULL, 0, &yaml, &merged, err,
	    sizeof(err)), 0);
	assert_string_equal(policy_sha256(merged), policy_sha256(base));
	policy_free(merged);
	policy_free(base);
	free(yaml);
}

/*
 * The recipe's secrets the session passes: their host inspected with
 * them added, the user's rule of that name saying the same; none passed:
 * nothing inspected; a secret whose host is not the recipe's: refused.
 */
static void
test_policy_secrets(void **state)
{
	static const char base_text[] = "version: 1\nallow:\n"
	    "  - host: api.example.com\n    ports: [443, 8443]\n"
	    "  - host: own.example\n    inspect: true\n"
	    "    requests:\n      allow: [\"GET /*\"]\n"
	    "    secrets:\n      - name: X_KEY\n        header: x-own\n";
	static const char *const both[] = { "X_KEY", "X_TOKEN", "UNRELATED" };
	static const char *const bad[] = { "X_BAD" };
	static const char *const own[] = { "X_KEY" };
	static const char *const query[] = { "X_Q" };
	struct policy			*base, *merged, *again;
	struct policy_decision		 d;
	struct policy_secret_info	 si;
	const struct launch_agent	*a;
	char				*yaml = NULL;

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  x:\n"
	    "    hosts: [api.example.com, other.example, own.example]\n"
	    "    secrets:\n"
	    "      X_KEY: api.example.com header x-api-key\n"
	    "      X_TOKEN: api.example.com bearer\n"
	    "      X_USER: other.example basic git\n"
	    "      X_BAD: nothere.example bearer\n"
	    "      X_Q: other.example query key\n", NULL), 0);
	a = launch_agent_find(set, "x");
	assert_int_equal(a->nsecrets, 5);
	assert_int_equal(a->secrets[2].mode, POLICY_SECRET_BASIC);
	assert_string_equal(a->secrets[2].user, "git");
	assert_non_null(launch_agent_secret(a, "X_TOKEN"));
	assert_int_equal(policy_load_buffer("base.yaml", base_text,
	    sizeof(base_text) - 1, &base, NULL), 0);

	/* none passed: the hosts stay tunnels */
	assert_int_equal(launch_agent_policy(set, a, base, "merged", NULL, 0,
	    &yaml, &merged, err, sizeof(err)), 0);
	policy_decide_name(merged, "api.example.com", 15, 443, &d);
	assert_false(policy_rule_inspect(d.rule));
	policy_free(merged);
	free(yaml);

	/* two passed: api.example.com inspected with both, on every port */
	assert_int_equal(launch_agent_policy(set, a, base, "merged", both, 3,
	    &yaml, &merged, err, sizeof(err)), 0);
	policy_decide_name(merged, "api.example.com", 15, 8443, &d);
	assert_int_equal(d.verdict, POLICY_ALLOW);
	assert_true(policy_rule_inspect(d.rule));
	assert_int_equal(policy_rule_secret_count(d.rule), 2);
	policy_rule_secret(d.rule, 0, &si);
	assert_string_equal(si.name, "X_KEY");
	assert_int_equal(si.mode, POLICY_SECRET_HEADER);
	assert_string_equal(si.header, "x-api-key");
	policy_rule_secret(d.rule, 1, &si);
	assert_string_equal(si.name, "X_TOKEN");
	assert_int_equal(si.mode, POLICY_SECRET_BEARER);
	policy_decide_name(merged, "other.example", 13, 443, &d);
	assert_false(policy_rule_inspect(d.rule));
	/* the user's own inspected rule keeps its requests and its X_KEY */
	policy_decide_name(merged, "own.example", 11, 443, &d);
	assert_true(policy_rule_inspect(d.rule));
	assert_int_equal(policy_rule_secret_count(d.rule), 1);
	policy_rule_secret(d.rule, 0, &si);
	assert_string_equal(si.header, "x-own");
	assert_int_equal(policy_load_buffer("again", yaml, strlen(yaml),
	    &again, NULL), 0);
	assert_string_equal(policy_sha256(again), policy_sha256(merged));
	policy_free(again);
	policy_free(merged);
	free(yaml);

	/* a query secret: that parameter, and the merge loads again */
	assert_int_equal(launch_agent_policy(set, a, base, "merged", query, 1,
	    &yaml, &merged, err, sizeof(err)), 0);
	policy_decide_name(merged, "other.example", 13, 443, &d);
	assert_true(policy_rule_inspect(d.rule));
	policy_rule_secret(d.rule, 0, &si);
	assert_int_equal(si.mode, POLICY_SECRET_QUERY);
	assert_string_equal(si.query, "key");
	assert_null(si.header);
	assert_non_null(strstr(yaml, "        query: \"key\"\n"));
	policy_free(merged);
	free(yaml);

	/* the user's rule of that name wins for a secret it names too */
	assert_int_equal(launch_agent_policy(set, a, base, "merged", own, 1,
	    &yaml, &merged, err, sizeof(err)), 0);
	policy_free(merged);
	free(yaml);

	/* a secret on a host that is not the recipe's */
	assert_int_equal(launch_agent_policy(set, a, base, "merged", bad, 1,
	    &yaml, &merged, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "agent 'x': secrets: X_BAD: "
	    "nothere.example is not one of its hosts"));
	assert_non_null(strstr(err, "shipped.yaml:9:14"));
	assert_null(merged);
	policy_free(base);
}

static void
test_spec(void **state)
{
	static const char *const user_npm[] = { "semver@7.6.3",
	    "@anthropic-ai/claude-code@2.1.340" };
	static const char *const user_pip[] = { "Aider_Chat==0.85.0" };
	struct launch_agent_lists	 l;
	struct launch_image_spec	 spec;
	const struct launch_agent	*a;

	(void)state;
	assert_int_equal(load("version: 1\nagents:\n  claude:\n"
	    "    node: \"22.23.5\"\n"
	    "    npm: \"@anthropic-ai/claude-code@2.1.332\"\n"
	    "    config: [.claude, .config/claude]\n"
	    "  aider:\n    pip: \"aider-chat==0.86.2\"\n", NULL), 0);
	a = launch_agent_find(set, "claude");
	memset(&spec, 0, sizeof(spec));
	launch_agent_spec(a, &l, &spec);
	assert_int_equal(spec.nnpm, 1);
	assert_string_equal(spec.npm[0], "@anthropic-ai/claude-code@2.1.332");
	assert_int_equal(spec.npip, 0);
	assert_string_equal(spec.node, "22.23.5");
	assert_int_equal(spec.nhomedirs, 2);
	assert_string_equal(spec.homedirs[1], ".config/claude");

	/* the user's --npm of the same package wins; others stay */
	memset(&spec, 0, sizeof(spec));
	spec.npm = user_npm;
	spec.nnpm = 2;
	launch_agent_spec(a, &l, &spec);
	assert_int_equal(spec.nnpm, 2);
	assert_string_equal(spec.npm[0], "semver@7.6.3");
	assert_string_equal(spec.npm[1], "@anthropic-ai/claude-code@2.1.340");

	/* pip names compare as PEP 503 does */
	a = launch_agent_find(set, "aider");
	memset(&spec, 0, sizeof(spec));
	spec.pip = user_pip;
	spec.npip = 1;
	launch_agent_spec(a, &l, &spec);
	assert_int_equal(spec.npip, 1);
	assert_string_equal(spec.pip[0], "Aider_Chat==0.85.0");
	assert_null(spec.node);

	/* no agent: nothing changes */
	memset(&spec, 0, sizeof(spec));
	launch_agent_spec(NULL, &l, &spec);
	assert_int_equal(spec.nnpm, 0);
	assert_null(spec.npm);
}

/* Files in the pins' folder: the pins file and no temporary beside it. */
static int
conf_files(void)
{
	char		 path[300];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	snprintf(path, sizeof(path), "%s/conf", dir);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void
test_pins(void **state)
{
	const struct launch_agent	*a;
	char				 pins[300], where[1200], *text;
	FILE				*f;
	long				 n;

	(void)state;
	snprintf(pins, sizeof(pins), "%s/conf/agent-pins.yaml", dir);
	write_file(shipped, "version: 1\nagents:\n  claude:\n"
	    "    node: \"22.23.5\"\n"
	    "    npm: \"@anthropic-ai/claude-code@2.1.332\"\n"
	    "    hosts: [api.anthropic.com]\n");
	(void)unlink(user);
	/* a pin written (its folder made) and read back between the two */
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_NPM,
	    "@anthropic-ai/claude-code@2.1.340", err, sizeof(err)), 0);
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_NODE,
	    "22.24.0", err, sizeof(err)), 0);
	assert_int_equal(launch_agents_load_pinned(set, shipped, pins, user,
	    err, sizeof(err)), 0);
	assert_non_null(a = launch_agent_find(set, "claude"));
	assert_string_equal(a->npm, "@anthropic-ai/claude-code@2.1.340");
	assert_string_equal(a->node, "22.24.0");
	assert_int_equal(a->nhosts, 1);		/* the rest is the recipe's */
	launch_agent_where(set, &a->field[LAF_NPM], where, sizeof(where));
	assert_non_null(strstr(where, "agent-pins.yaml:"));

	/* the user's own version wins over the pin */
	write_file(user, "version: 1\nagents:\n  claude:\n"
	    "    npm: \"@anthropic-ai/claude-code@2.1.300\"\n");
	assert_int_equal(launch_agents_load_pinned(set, shipped, pins, user,
	    err, sizeof(err)), 0);
	a = launch_agent_find(set, "claude");
	assert_string_equal(a->npm, "@anthropic-ai/claude-code@2.1.300");
	assert_string_equal(a->node, "22.24.0");
	(void)unlink(user);

	/* a bad value is refused and the file stays as it was */
	f = fopen(pins, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_NPM,
	    "@anthropic-ai/claude-code@latest", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not an exact version"));
	f = fopen(pins, "r");
	fseek(f, 0, SEEK_END);
	assert_int_equal(ftell(f), n);
	fclose(f);
	assert_int_equal(conf_files(), 1);	/* checked before written */
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_HOSTS,
	    "x", err, sizeof(err)), -1);

	/* dropping both pins leaves no entry */
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_NPM, "",
	    err, sizeof(err)), 0);
	assert_int_equal(launch_agent_pin_write(pins, "claude", LAF_NODE, "",
	    err, sizeof(err)), 0);
	assert_int_equal(launch_agents_load_pinned(set, shipped, pins, NULL,
	    err, sizeof(err)), 0);
	assert_string_equal(launch_agent_find(set, "claude")->npm,
	    "@anthropic-ai/claude-code@2.1.332");
	f = fopen(pins, "r");
	text = calloc(1, 4096);
	assert_int_equal(fread(text, 1, 4095, f) > 0, 1);
	fclose(f);
	assert_null(strstr(text, "claude"));
	free(text);

	/* the pins file holds versions only */
	write_file(pins, "version: 1\nagents:\n  claude:\n"
	    "    hosts: [evil.example]\n");
	assert_int_equal(launch_agents_load_pinned(set, shipped, pins, NULL,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "agent-pins.yaml:4:5: agent 'claude': "
	    "hosts: the pins file holds node, npm and pip only"));
	(void)unlink(pins);
	snprintf(where, sizeof(where), "%s/conf", dir);
	(void)rmdir(where);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_file),
		cmocka_unit_test(test_good_minimal),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_bad_file),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_policy_merge),
		cmocka_unit_test(test_policy_roundtrip),
		cmocka_unit_test(test_policy_secrets),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_pins),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
