/*
 * The option table and its values (options-int.h): each value checked
 * for its type, with the typed view filled (sizes, CPUs, durations,
 * choices, the names of the grammar of image/names.c in lists; every
 * check bounds the value first), set from one layer, and freed.  The
 * config files (optconfig.c) and the resolution (options.c) build on it.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image-t.h"
#include "draft/draft.h"
#include "image/names.h"
#include "session/mounts.h"
#include "session/options-int.h"
#include "session/recording.h"
#include "session/secrets.h"

/*
 * The one table of session options: the config files, AISB_*, the flags
 * and --help (launch_opts_help) all read it, and so does
 * launch_opt_check_project (optproject.c): each option says what a
 * project config may do with it (options-int.h), and why when it may
 * set it at all.  tests/unit/test_optproject.c holds a row per option of
 * who may set it and in which direction: a new option fails it until it
 * has one.
 */
const struct optdesc launch_optdesc[LO__COUNT] = {
	/* a project's own policy only when the user config says so */
	[LO_POLICY] = { "policy", OT_PATH, 0, NULL,
	    "policy file", "FILE",
	    "~/.config/aisb/policy.yaml, else the shipped default",
	    P_POLICY, NULL,
	    "the policy decides what the session reaches" },
	[LO_NET] = { "net", OT_NET, 0, "gate",
	    "network: through the egress gate, none (loopback only), or "
	    "direct (pinned addresses)", "gate|none|direct", NULL,
	    P_ONLY, "none",
	    "any other mode reaches more" },
	[LO_IMAGE] = { "image", OT_WORD, 0, LAUNCH_DEFAULT_BASE,
	    "base image; an offline Debian base when it cannot be pulled",
	    "REF", NULL, P_NEVER, NULL,
	    "the base's programs run in every session and in the image "
	    "build" },
	/*
	 * Debian packages, from the host's own signed apt sources (the
	 * offline base) or the default base's, installed by apt in the
	 * image build, never by the command: they change what the image
	 * holds, not what a session reaches or reads (no_new_privs and an
	 * empty bounding set leave setuid bits and file capabilities
	 * inert).  On a foreign base they are refused (image/build.c).
	 * A project's list replaces the user's, which only narrows.
	 */
	[LO_PACKAGES] = { "packages", OT_LIST, 0, NULL,
	    "Debian package installed in the image (repeatable)", "NAME",
	    "none", P_ANY, NULL,
	    NULL },
	[LO_MEMORY] = { "memory", OT_SIZE, 0, "4g",
	    "memory limit (k, m, g; 0: none)", "SIZE", NULL, P_LOWER, NULL,
	    "a higher limit takes more of the host" },
	[LO_CPUS] = { "cpus", OT_CPUS, 0, "2", "CPU limit (1.5; 0: none)",
	    "N", NULL, P_LOWER, NULL,
	    "a higher limit takes more of the host" },
	[LO_PIDS] = { "pids", OT_UINT, 0, "1024",
	    "process limit (0: none)", "N", NULL, P_LOWER, NULL,
	    "a higher limit takes more of the host" },
	[LO_TIMEOUT] = { "timeout", OT_DURATION, 0, "0",
	    "kill the command after this long and exit 124 (s, m, h; 0: never)",
	    "DURATION", NULL, P_LOWER, NULL,
	    "a longer one runs longer" },
	[LO_WORKSPACE] = { "workspace", OT_PATH, 0, NULL,
	    "directory mounted read-write at the same path", "DIR",
	    "the current directory", P_NEVER, NULL,
	    "another folder is another reach" },
	[LO_HOME_VOLUME] = { "home_volume", OT_WORD, 0, NULL,
	    "named volume mounted at /home/sandbox", "NAME",
	    "aisb-home-<hash of the workspace's real path>", P_NEVER, NULL,
	    "another project's home holds what was planted there" },
	[LO_KEEP] = { "keep", OT_BOOL, 0, "false",
	    "keep the container and the session record", NULL, NULL,
	    P_NEVER, NULL,
	    "a kept container outlives the session" },
	[LO_RECORD] = { "record", OT_BOOL, 0, "false",
	    "record the session's traffic: a pcapng capture, the decision log "
	    "and a manifest of their SHA-256s (docs/record.md)", NULL, NULL,
	    P_ONLY, "true",
	    "a capture the user asked for is not the repository's to drop" },
	[LO_RECORD_MAX] = { "record_max", OT_SIZE, 0, LAUNCH_RECORD_MAX_DEFAULT,
	    "with --record: bound of the capture (K, M, G; 4K to 64G); "
	    "reaching it stops the recording, not the session", "SIZE",
	    NULL, P_NEVER, NULL,
	    "a repository must not shrink its own recording" },
	[LO_GATE] = { "gate", OT_WORD, 0, "",
	    "named gate to use (aisb gate up NAME)", "NAME",
	    "a gate of the session's own", P_NEVER, NULL,
	    "a shared gate's policy is another's" },
	[LO_ENV] = { "env", OT_ENVLIST, O_NOENV, NULL,
	    "pass NAME (host value), NAME=VALUE, NAME? (host value if set); "
	    "repeatable", "NAME[=VALUE]", "none", P_NEVER, NULL,
	    "the host's variables hold credentials" },
	[LO_RUNTIME] = { "runtime", OT_WORD, 0, "runc",
	    "OCI runtime podman uses", "NAME", NULL, P_NEVER, NULL,
	    "the runtime is the container" },
	[LO_QUIET] = { "quiet", OT_BOOL, 0, "false",
	    "print nothing of aisb's own but errors", NULL, NULL,
	    P_NEVER, NULL,
	    "it hides what aisb says of the session" },
	[LO_PROJECT_POLICY] = { "project_policy", OT_BOOL, O_NOFLAG | O_NOENV,
	    "false", "let .aisb.yaml name the policy (user config only)",
	    NULL, NULL, P_NEVER, NULL,
	    "it is the user's trust in projects" },
	[LO_HOST_CA] = { "host_ca", OT_BOOL, 0, "true",
	    "do not trust the host's /usr/local/share/ca-certificates "
	    "inside (trusted by default)", NULL, NULL, P_ONLY, "false",
	    "the host's CAs are the user's to trust inside" },
	[LO_AGENT] = { "agent", OT_WORD, 0, NULL,
	    "agent recipe: its package in the image, its hosts allowed, its "
	    "settings (docs/agents.md); none: no recipe", "NAME",
	    "the recipe whose command is COMMAND, if any", P_ONLY, "none",
	    "a recipe adds allow rules to the policy" },
	[LO_NPM] = { "npm", OT_LIST, 0, NULL,
	    "npm CLI installed in the image by a gated session "
	    "(repeatable; no version: the newest)", "PKG[@VER]", "none",
	    P_NEVER, NULL,
	    "installing runs the packages' own scripts with network access" },
	[LO_PIP] = { "pip", OT_LIST, 0, NULL,
	    "pip CLI installed in the image by a gated session "
	    "(repeatable)", "PKG==VER", "none", P_NEVER, NULL,
	    "installing runs the packages' own scripts with network access" },
	[LO_INSTALL_POLICY] = { "install_policy", OT_PATH, 0, "",
	    "policy of the sessions that install --npm, --pip and agent "
	    "tools", "FILE", "aisb policy derive npm|pip", P_NEVER, NULL,
	    "the install sessions run a package's scripts: what they reach "
	    "is yours to say" },
	[LO_ALLOW_FROM_LOCKFILE] = { "allow_from_lockfile", OT_BOOL, 0,
	    "false", "allow the https hosts the workspace's lockfiles "
	    "name (aisb policy derive lockfile lists them)", NULL, NULL,
	    P_NEVER, NULL,
	    "it widens the policy by what the repository's lockfiles name" },
	/*
	 * Snapshot sessions (docs/snapshot.md): a copy narrows what the
	 * command reaches, direct never; when to write back is the user's.
	 */
	[LO_WORKSPACE_MODE] = { "workspace_mode", OT_CHOICE, 0, "direct",
	    "direct: the command writes the workspace (its git folders "
	    "guarded); snapshot: a copy of it, whose changes aisb apply ID "
	    "writes back; readonly: it reads the workspace only",
	    "direct|snapshot|readonly", NULL, P_ONLY, "snapshot|readonly",
	    "direct mode writes the workspace itself" },
	[LO_APPLY] = { "apply", OT_CHOICE, 0, "auto",
	    "at the end of a snapshot session (its changes) or a direct one "
	    "(the git config keys it changed): ask on the terminal (ask), "
	    "or only keep them (never); auto: ask when stdin and stderr "
	    "are a terminal", "auto|ask|never", NULL, P_NEVER, NULL,
	    "a write-back is the user's to approve" },
	[LO_SNAPSHOT_EXCLUDE] = { "snapshot_exclude", OT_LIST, 0, NULL,
	    "snapshot sessions: also leave out of the stage what PATTERN "
	    "matches (repeatable; docs/snapshot.md)", "PATTERN",
	    "the documented list only", P_NEVER, NULL,
	    "it would replace the user's exclusions" },
	/*
	 * Not O_PROJECT: which of the user's drafts a session writes is the
	 * user's to say, not a repository's.
	 */
	[LO_DRAFT] = { "draft", OT_WORD, 0, NULL,
	    "continue the persistent draft NAME of this workspace: a snapshot "
	    "session whose changes go into the draft, never asked about; aisb "
	    "draft commit NAME writes them back (docs/snapshot.md)", "NAME",
	    "none", P_NEVER, NULL,
	    "which of your drafts a session writes is yours to say" },
	/*
	 * The user's, never a project's (a repository must not loosen them)
	 * nor a flag's: bounds that only tighten the built-in ones (past
	 * them is an error), paths and sessions never written back
	 * (docs/snapshot.md, "What the user config tightens").
	 */
	[LO_SNAPSHOT_MAX_ENTRIES] = { "snapshot_max_entries", OT_UINT,
	    O_NOFLAG, "100000", "snapshot sessions: files, folders and links "
	    "staged, at most (1 to 100000)", "N", NULL, P_NEVER, NULL,
	    "the snapshot's bounds are yours to tighten" },
	[LO_SNAPSHOT_MAX_BYTES] = { "snapshot_max_bytes", OT_SIZE, O_NOFLAG,
	    "2g", "snapshot sessions: bytes of files staged, at most (up to "
	    "2g)", "SIZE", NULL, P_NEVER, NULL,
	    "the snapshot's bounds are yours to tighten" },
	[LO_SNAPSHOT_MAX_FILE_BYTES] = { "snapshot_max_file_bytes", OT_SIZE,
	    O_NOFLAG, "512m", "snapshot sessions: bytes of one file, at most "
	    "(up to 512m)", "SIZE", NULL, P_NEVER, NULL,
	    "the snapshot's bounds are yours to tighten" },
	[LO_SNAPSHOT_MAX_DEPTH] = { "snapshot_max_depth", OT_UINT, O_NOFLAG,
	    "128", "snapshot sessions: folders deep, at most (1 to 128)", "N",
	    NULL, P_NEVER, NULL, "the snapshot's bounds are yours to tighten" },
	[LO_WRITEBACK_DENY] = { "writeback_deny", OT_LIST, O_NOFLAG, NULL,
	    "snapshot sessions: what PATTERN matches is staged but never "
	    "written back (listed as skipped)", "PATTERN", "none", P_NEVER,
	    NULL, "a list of a project would replace yours" },
	[LO_WRITEBACK] = { "writeback", OT_BOOL, O_NOFLAG, "true",
	    "false: no snapshot session's changes are written back (aisb "
	    "apply and draft commit refuse them)", NULL, NULL, P_NEVER, NULL,
	    "whether anything is written back is yours to say" },
	/* the user's alone: a repository must not prune the user's history */
	[LO_RETENTION] = { "retention", OT_SIZE, O_NOFLAG, "0",
	    "the most the session folders may hold: the oldest are removed "
	    "at aisb clean and after each session, never a draft waiting "
	    "for approval nor an unsettled transaction (0: no cap)", "SIZE",
	    "0, no cap", P_NEVER, NULL,
	    "a repository must not prune your history" },
	/*
	 * Transparent capture (docs/launcher.md): a tool that ignores the
	 * proxy variables reaches what the gate allows by name, and nothing
	 * more; on or off, whatever the ports, the gate decides every
	 * connection and no DNS leaves: neither widens.
	 */
	[LO_TRANSPARENT] = { "transparent", OT_BOOL, 0, "true",
	    "gate mode: do not catch the TCP of tools that ignore the proxy "
	    "variables, nor their DNS (caught by default)", NULL, NULL,
	    P_ANY, NULL,
	    NULL },
	[LO_TRANSPARENT_PORTS] = { "transparent_ports", OT_WORD, 0,
	    "80,443", "gate mode: the TCP ports caught for the gate "
	    "(1 to 16, comma-separated)", "PORTS", NULL, P_ANY, NULL,
	    NULL },
	/*
	 * A project's list would replace the user's (a list of a higher
	 * layer does), and a repository must not drop the user's
	 * protections.
	 */
	[LO_PROTECT] = { "protect", OT_LIST, 0, NULL,
	    "direct sessions: keep what PATTERN matches read-only inside, "
	    "and list it at the end when changed or made (repeatable)",
	    "PATTERN", "none (the files that run on their own are listed)",
	    P_NEVER, NULL,
	    "which of your files the command may not change is yours to "
	    "say" },
	[LO_QUARANTINE] = { "quarantine", OT_BOOL, 0, "false",
	    "for a repository you do not trust: --net none, the workspace "
	    "read-only, a home that goes with the session, and a warning "
	    "for its hooks and files that run on their own", NULL, NULL,
	    P_ONLY, "true",
	    "a quarantine the repository asked for is not its to drop" },
	[LO_MOUNT] = { "mount", OT_LIST, 0, NULL,
	    "also mount the host's SRC at DST, read-only unless MODE is rw "
	    "(ro, rw; agent skills, plugins; repeatable, at most 16)",
	    "SRC:DST[:MODE]", "none", P_NEVER, NULL,
	    "what else of the host a session sees is yours to say" },
	/*
	 * Secrets (secrets.h): read on the host, added by the gate, a
	 * placeholder inside.  Never AISB_*'s either.
	 */
	[LO_SECRETS] = { "secrets", OT_SECRETLIST, O_NOENV, NULL,
	    "a secret the gate adds to the requests the policy says, the "
	    "sandbox holding a placeholder: NAME (aisb's environment), "
	    "NAME=env:VAR, NAME=file:/PATH, NAME=command:PROGRAM ARGS "
	    "(repeatable)", "NAME[=SOURCE]", "none", P_NEVER, NULL,
	    "it would choose which of your secrets leave the host" },
	/*
	 * Held requests (docs/launcher.md, "Held requests"): whether a
	 * denied request waits for the user is the user's alone.  A switch
	 * on the command line (--ask, --ask=SECONDS), so that --ask never
	 * takes the command's first word for its value.
	 */
	[LO_ASK] = { "ask", OT_BOOL, 0, "false",
	    "hold a request the policy would deny until you answer it (aisb "
	    "pending, aisb approve ID, aisb deny ID) or it times out: "
	    "--ask=SECONDS, or ask: true|SECONDS in the user config (true: "
	    "60 s; 1 to 3600)", NULL, NULL, P_NEVER, NULL,
	    "a repository must never turn approvals on or off" },
};

static int
parse_u64(const char *s, uint64_t max, uint64_t *out, const char **end)
{
	uint64_t	 v = 0;
	const char	*p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	*end = p;
	return 0;
}

/* transparent_ports: 1..16 distinct ports 1-65535, comma-separated. */
static int
tports_parse(struct launch_opts *o, const char *v, char *err, size_t errlen)
{
	const char	*p = v, *end;
	uint64_t	 n;
	size_t		 i;

	o->ntports = 0;
	for (;;) {
		if (parse_u64(p, 65535, &n, &end) == -1 || n == 0 ||
		    (*end != ',' && *end != '\0'))
			goto bad;
		for (i = 0; i < o->ntports; i++)
			if (o->tports[i] == n) {
				snprintf(err, errlen, "transparent_ports: port "
				    "%u listed twice", (unsigned)n);
				return -1;
			}
		if (o->ntports == sizeof(o->tports) / sizeof(o->tports[0])) {
			snprintf(err, errlen, "transparent_ports: more than "
			    "16 ports");
			return -1;
		}
		o->tports[o->ntports++] = (uint16_t)n;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
bad:
	snprintf(err, errlen, "transparent_ports: '%.64s' is not a list of "
	    "ports; write 80,443 (1 to 16 ports, 1-65535)", v);
	return -1;
}

/* choice and net: the one word among the few, into the typed view */
static int
check_choice(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	if (d->type == OT_NET) {
		if (strcmp(v, "gate") == 0)
			o->net = LAUNCH_NET_GATE;
		else if (strcmp(v, "none") == 0)
			o->net = LAUNCH_NET_NONE;
		else if (strcmp(v, "direct") == 0)
			o->net = LAUNCH_NET_DIRECT;
		else {
			snprintf(err, errlen, "net: '%.32s' is not a network "
			    "mode; write gate, none or direct", v);
			return -1;
		}
		return 0;
	}
	if (id == LO_WORKSPACE_MODE && (strcmp(v, "direct") == 0 ||
	    strcmp(v, "snapshot") == 0 || strcmp(v, "readonly") == 0)) {
		o->snapshot = v[0] == 's';
		o->readonly = v[0] == 'r';
		return 0;
	}
	if (id == LO_APPLY && strcmp(v, "auto") == 0)
		o->apply = LAUNCH_APPLY_AUTO;
	else if (id == LO_APPLY && strcmp(v, "ask") == 0)
		o->apply = LAUNCH_APPLY_ASK;
	else if (id == LO_APPLY && strcmp(v, "never") == 0)
		o->apply = LAUNCH_APPLY_NEVER;
	else if (id == LO_APPLY && (strcmp(v, "yes") == 0 ||
	    strcmp(v, "always") == 0)) {
		/* a person approves a write-back (docs/snapshot.md) */
		snprintf(err, errlen, "apply: '%s' is not offered: a "
		    "session's changes are written back when a person "
		    "says so; write never and run aisb apply ID after "
		    "the session (a script may), or ask", v);
		return -1;
	} else {
		snprintf(err, errlen, "%s: '%.32s' is not one of %s",
		    d->name, v, d->arg);
		return -1;
	}
	return 0;
}

/* a word: no blank or control character; some have a grammar */
static int
check_word(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, size_t len, char *err,
    size_t errlen)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (!isgraph((unsigned char)v[i])) {
			snprintf(err, errlen, "%s: '%.64s' has a space or "
			    "control character", d->name, v);
			return -1;
		}
	if (id == LO_HOME_VOLUME && (len == 0 || len > 128 ||
	    !isalnum((unsigned char)v[0]) ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.-") != len)) {
		snprintf(err, errlen, "home_volume: '%.64s' is not a "
		    "volume name; use letters, digits, '_', '.', '-'", v);
		return -1;
	}
	if (id == LO_AGENT && !launch_agent_name_ok(v)) {
		snprintf(err, errlen, "agent: '%.64s' is not an agent "
		    "name; write a lower-case name from aisb doctor's "
		    "list, or none", v);
		return -1;
	}
	if (id == LO_TRANSPARENT_PORTS)
		return tports_parse(o, v, err, errlen);
	if (id == LO_DRAFT && !draft_name_ok(v)) {
		snprintf(err, errlen, "draft: '%.64s' is not a draft name: 1 to "
		    "%d letters, digits, '.', '_' or '-', not starting with "
		    "'.' or '-'", v, DRAFT_NAME_MAX);
		return -1;
	}
	if ((id == LO_IMAGE || id == LO_RUNTIME) && len == 0) {
		snprintf(err, errlen, "%s: empty", d->name);
		return -1;
	}
	return 0;
}

/* an entry of a list option, by the grammar of its kind (names.h) */
static int
check_list(enum launch_opt_id id, const char *v, size_t len, char *err,
    size_t errlen)
{
	if (id == LO_NPM) {
		char sub[256];

		if (strchr(v + (v[0] == '@'), '@') != NULL ?
		    launch_npm_entry_ok(v, sub, sizeof(sub)) == -1 :
		    !launch_npm_name_ok(v)) {
			snprintf(err, errlen, "npm: '%.64s' is not "
			    "NAME or NAME@X.Y.Z (npm's names: lower "
			    "case, digits, - . _ ~; @scope/name)", v);
			return -1;
		}
		return 0;
	}
	if (id == LO_PIP)
		return launch_pip_entry_ok(v, err, errlen);
	if (id == LO_SNAPSHOT_EXCLUDE || id == LO_PROTECT ||
	    id == LO_WRITEBACK_DENY) {
		/* the library checks the rest (snap_rules_add) */
		if (len == 0 || len > 255 || strpbrk(v, "\n\r") !=
		    NULL) {
			snprintf(err, errlen, "%s: '%.64s' is not a pattern "
			    "of 1 to 255 bytes on one line",
			    launch_optdesc[id].name, v);
			return -1;
		}
		return 0;
	}
	if (id == LO_MOUNT)
		return launch_mount_spec(v, NULL, NULL, NULL, err, errlen);
	if (!launch_deb_package_ok(v)) {
		snprintf(err, errlen, "packages: '%.64s' is not a Debian "
		    "package name", v);
		return -1;
	}
	return 0;
}

/* an --env entry: NAME, NAME=VALUE or NAME? */
static int
check_env(const char *v, size_t len, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	size_t nlen = eq != NULL ? (size_t)(eq - v) : len;

	if (eq == NULL && nlen > 0 && v[nlen - 1] == '?')
		nlen--;
	if (!launch_env_name_ok(v, nlen)) {
		snprintf(err, errlen, "env: '%.*s' is not a variable "
		    "name; write NAME, NAME=VALUE or NAME?",
		    (int)(nlen > 64 ? 64 : nlen), v);
		return -1;
	}
	if (eq != NULL && strpbrk(eq, "\n\r") != NULL) {
		snprintf(err, errlen, "env: the value of %.*s holds a "
		    "line break, which an env file cannot carry",
		    (int)nlen, v);
		return -1;
	}
	return 0;
}

/* A snapshot bound of the user's: 1 to the built-in one, never more. */
static int
snap_max(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, uint64_t n, char *err,
    size_t errlen)
{
	struct snap_limits	 lim;
	uint64_t		 max;
	size_t			 i = (size_t)(id - LO_SNAPSHOT_MAX_ENTRIES);

	snap_limits_default(&lim);
	max = id == LO_SNAPSHOT_MAX_ENTRIES ? lim.entries :
	    id == LO_SNAPSHOT_MAX_BYTES ? lim.bytes :
	    id == LO_SNAPSHOT_MAX_FILE_BYTES ? lim.file_bytes : lim.depth;
	if (n < 1 || n > max) {
		snprintf(err, errlen, "%s: %s is not between 1 and the "
		    "built-in maximum, %llu: the config may tighten a "
		    "snapshot's bounds, never loosen them", d->name, v,
		    (unsigned long long)max);
		return -1;
	}
	o->snap_max[i] = n;
	return 0;
}

/* sizes, CPUs, counts and durations, each within its bound */
static int
check_number(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	const char	*end;
	uint64_t	 n, frac = 0;

	switch (d->type) {
	case OT_SIZE:
		if (parse_u64(v, UINT64_C(1) << 40, &n, &end) == -1)
			goto badnum;
		switch (tolower((unsigned char)*end)) {
		case '\0':
			break;
		case 'k':
			n <<= 10;
			end++;
			break;
		case 'm':
			n <<= 20;
			end++;
			break;
		case 'g':
			n <<= 30;
			end++;
			break;
		default:
			goto badnum;
		}
		if (*end != '\0' || n > (UINT64_C(1) << 40))
			goto badnum;
		if (id == LO_SNAPSHOT_MAX_BYTES ||
		    id == LO_SNAPSHOT_MAX_FILE_BYTES)
			return snap_max(o, id, d, v, n, err, errlen);
		if (id == LO_RETENTION) {
			o->retention = n;
			return 0;
		}
		if (id == LO_RECORD_MAX) {
			if (n < 4096 || n > LAUNCH_RECORD_MAX_LIMIT) {
				snprintf(err, errlen, "record_max: %s is not "
				    "between 4K and 64G", v);
				return -1;
			}
			o->record_max = n;
			return 0;
		}
		if (n != 0 && n < (UINT64_C(6) << 20)) {
			snprintf(err, errlen, "memory: %s is below podman's "
			    "minimum of 6m", v);
			return -1;
		}
		o->memory = n;
		return 0;
	case OT_CPUS:
		if (parse_u64(v, 1024, &n, &end) == -1)
			goto badnum;
		if (*end == '.') {
			const char *f = end + 1;
			unsigned digits = 0;

			for (end = f; isdigit((unsigned char)*end) && digits < 3;
			    end++, digits++)
				frac = frac * 10 + (uint64_t)(*end - '0');
			if (digits == 0)
				goto badnum;
			while (digits++ < 3)
				frac *= 10;
		}
		if (*end != '\0')
			goto badnum;
		o->cpus_milli = (unsigned)(n * 1000 + frac);
		return 0;
	case OT_UINT:
		if (parse_u64(v, 1000000, &n, &end) == -1 || *end != '\0')
			goto badnum;
		if (id == LO_SNAPSHOT_MAX_ENTRIES || id == LO_SNAPSHOT_MAX_DEPTH)
			return snap_max(o, id, d, v, n, err, errlen);
		o->pids = (unsigned)n;
		return 0;
	case OT_DURATION:
		if (parse_u64(v, 7 * 86400, &n, &end) == -1)
			goto badnum;
		if (*end == 'm')
			n *= 60, end++;
		else if (*end == 'h')
			n *= 3600, end++;
		else if (*end == 's')
			end++;
		if (*end != '\0' || n > 7 * 86400)
			goto badnum;
		o->timeout = (unsigned)n;
		return 0;
	default:
		break;
	}
	return 0;
badnum:
	snprintf(err, errlen, "%s: '%.32s' is not valid (%s)", d->name, v,
	    d->help);
	return -1;
}

/* ask: true (LAUNCH_ASK_DEFAULT s), false, or 0 to LAUNCH_ASK_MAX seconds */
static int
check_ask(struct launch_opts *o, const char *v, char *err, size_t errlen)
{
	const char	*end;
	uint64_t	 n;

	if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
		n = LAUNCH_ASK_DEFAULT;
	else if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0)
		n = 0;
	else if (parse_u64(v, LAUNCH_ASK_MAX, &n, &end) == -1 ||
	    *end != '\0') {
		snprintf(err, errlen, "ask: '%.16s' is not true, false or a "
		    "number of seconds from 1 to %d (0: off)", v,
		    LAUNCH_ASK_MAX);
		return -1;
	}
	o->ask = (unsigned)n;
	return 0;
}

/* true, yes, 1 or false, no, 0 */
static int
check_bool(struct launch_opts *o, enum launch_opt_id id,
    const struct optdesc *d, const char *v, char *err, size_t errlen)
{
	int	 b;

	if (id == LO_ASK)
		return check_ask(o, v, err, errlen);

	if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 ||
	    strcmp(v, "1") == 0)
		b = 1;
	else if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0 ||
	    strcmp(v, "0") == 0)
		b = 0;
	else {
		snprintf(err, errlen, "%s: '%.16s' is not true or false",
		    d->name, v);
		return -1;
	}
	if (id == LO_KEEP)
		o->keep = b;
	else if (id == LO_RECORD)
		o->record = b;
	else if (id == LO_HOST_CA)
		o->host_ca = b;
	else if (id == LO_QUIET)
		o->quiet = b;
	else if (id == LO_ALLOW_FROM_LOCKFILE)
		o->allow_from_lockfile = b;
	else if (id == LO_TRANSPARENT)
		o->transparent = b;
	else if (id == LO_QUARANTINE)
		o->quarantine = b;
	else if (id == LO_WRITEBACK)
		o->writeback = b;
	else
		o->project_policy = b;
	return 0;
}

/* Checks one value for its type; fills the typed view for scalars. */
int
launch_opt_check(struct launch_opts *o, enum launch_opt_id id, const char *v,
    char *err, size_t errlen)
{
	const struct optdesc	*d = &launch_optdesc[id];
	size_t			 len = strlen(v);

	if (len > LAUNCH_MAX_VALUE) {
		snprintf(err, errlen, "%s: value longer than %d bytes", d->name,
		    LAUNCH_MAX_VALUE);
		return -1;
	}
	switch (d->type) {
	case OT_PATH:
		/* "" is the default of both: resolved, or derived */
		if (len == 0 && id != LO_POLICY && id != LO_INSTALL_POLICY) {
			snprintf(err, errlen, "%s: empty path", d->name);
			return -1;
		}
		return 0;
	case OT_CHOICE:
	case OT_NET:
		return check_choice(o, id, d, v, err, errlen);
	case OT_WORD:
		return check_word(o, id, d, v, len, err, errlen);
	case OT_LIST:
		return check_list(id, v, len, err, errlen);
	case OT_ENVLIST:
		return check_env(v, len, err, errlen);
	case OT_SECRETLIST:
		return launch_secret_entry_check(v, err, errlen);
	case OT_BOOL:
		return check_bool(o, id, d, v, err, errlen);
	default:
		return check_number(o, id, d, v, err, errlen);
	}
}

/* ---- setting values ---------------------------------------------------- */

const char *
launch_opt_name(enum launch_opt_id id)
{
	return id < LO__COUNT ? launch_optdesc[id].name : "?";
}


static int
list_add(struct launch_item **list, size_t *n, const char *v,
    enum launch_src src, const char *where, char *err, size_t errlen)
{
	struct launch_item	*l;

	if (*n >= LAUNCH_MAX_LIST) {
		snprintf(err, errlen, "%s: more than %d entries", where,
		    LAUNCH_MAX_LIST);
		return -1;
	}
	if ((l = reallocarray(*list, *n + 1, sizeof(*l))) == NULL ||
	    (l[*n].text = strdup(v)) == NULL) {
		if (l != NULL)
			*list = l;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	l[*n].src = src;
	snprintf(l[*n].where, sizeof(l[*n].where), "%s", where);
	*list = l;
	(*n)++;
	return 0;
}


static void
list_free(struct launch_item **list, size_t *n)
{
	size_t	 i;

	for (i = 0; i < *n; i++) {
		if ((*list)[i].text != NULL)
			explicit_bzero((*list)[i].text, strlen((*list)[i].text));
		free((*list)[i].text);
	}
	free(*list);
	*list = NULL;
	*n = 0;
}


/*
 * A relative path in a config file is relative to that file's folder;
 * given on the command line or in the environment, to the current one.
 */
static char *
resolve_path(const char *v, const char *base_file)
{
	const char	*slash;
	char		*out;

	if (v[0] == '/' || v[0] == '\0' || base_file == NULL ||
	    (slash = strrchr(base_file, '/')) == NULL)
		return strdup(v);
	if (asprintf(&out, "%.*s/%s", (int)(slash - base_file), base_file,
	    v) == -1)
		return NULL;
	return out;
}


/*
 * Sets one option from one layer.  Lists: env accumulates over the layers,
 * packages are replaced by the first entry a higher layer gives.
 */
int
launch_opt_set(struct launch_opts *o, enum launch_opt_id id, const char *v,
    enum launch_src src, const char *where, const char *base_file,
    char *err, size_t errlen)
{
	char	*copy;
	char	 sub[LAUNCH_MAX_VALUE + 200];

	if (launch_opt_check(o, id, v, sub, sizeof(sub)) == -1) {
		snprintf(err, errlen, "%s: %s", where, sub);
		return -1;
	}
	if (launch_optdesc[id].type == OT_ENVLIST)
		return list_add(&o->env, &o->nenv, v, src, where, err, errlen);
	if (launch_optdesc[id].type == OT_SECRETLIST)
		return list_add(&o->secrets, &o->nsecrets, v, src, where, err,
		    errlen);
	if (launch_optdesc[id].type == OT_LIST) {
		size_t			 *n;
		struct launch_item	**l = launch_opt_list(o, id, &n);

		if (*n > 0 && (*l)[0].src != src)
			list_free(l, n);
		if (id == LO_MOUNT && *n == LAUNCH_MOUNT_MAX) {
			snprintf(err, errlen, "%s: more than %d mounts", where,
			    LAUNCH_MOUNT_MAX);
			return -1;
		}
		return list_add(l, n, v, src, where, err, errlen);
	}
	copy = launch_optdesc[id].type == OT_PATH ? resolve_path(v, base_file) : strdup(v);
	if (copy == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(o->val[id]);
	o->val[id] = copy;
	o->src[id] = src;
	snprintf(o->where[id], sizeof(o->where[id]), "%s", where);
	return 0;
}


struct launch_item **
launch_opt_list(struct launch_opts *o, enum launch_opt_id id, size_t **n)
{
	switch (id) {
	case LO_NPM:
		*n = &o->nnpm;
		return &o->npm;
	case LO_PIP:
		*n = &o->npip;
		return &o->pip;
	case LO_SNAPSHOT_EXCLUDE:
		*n = &o->nexclude;
		return &o->exclude;
	case LO_WRITEBACK_DENY:
		*n = &o->nwdeny;
		return &o->wdeny;
	case LO_PROTECT:
		*n = &o->nprotect;
		return &o->protect;
	case LO_MOUNT:
		*n = &o->nmounts;
		return &o->mounts;
	default:
		*n = &o->npackages;
		return &o->packages;
	}
}

int
launch_opt_find(const char *name, size_t len)
{
	int	 i;

	for (i = 0; i < LO__COUNT; i++)
		if (strlen(launch_optdesc[i].name) == len &&
		    strncmp(launch_optdesc[i].name, name, len) == 0)
			return i;
	return -1;
}


void
launch_opts_free(struct launch_opts *o)
{
	int	 i;

	for (i = 0; i < LO__COUNT; i++) {
		free(o->val[i]);
		o->val[i] = NULL;
	}
	list_free(&o->env, &o->nenv);
	list_free(&o->packages, &o->npackages);
	list_free(&o->npm, &o->nnpm);
	list_free(&o->pip, &o->npip);
	list_free(&o->exclude, &o->nexclude);
	list_free(&o->wdeny, &o->nwdeny);
	list_free(&o->protect, &o->nprotect);
	list_free(&o->mounts, &o->nmounts);
	list_free(&o->secrets, &o->nsecrets);
}
