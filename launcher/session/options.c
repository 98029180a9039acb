/*
 * Option resolution: the table of options, the alias-friendly command
 * line, the help, and the one function that applies the layers in order
 * (the values' checks: optvalue.c; the config files and AISB_*:
 * optconfig.c).
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include <openssl/evp.h>

#include "file.h"
#include "host/paths.h"
#include "image/names.h"
#include "session/options.h"
#include "session/options-int.h"
#include "session/recording.h"

#ifndef AISB_POLICYDIR
#define AISB_POLICYDIR	"/usr/local/share/aisb/policies"
#endif

/*
 * The one table of session options: the config files, AISB_*, the flags
 * and --help (launch_opts_help) all read it.
 */
const struct optdesc launch_optdesc[LO__COUNT] = {
	[LO_POLICY] = { "policy", OT_PATH, 0, NULL,
	    "policy file", "FILE",
	    "~/.config/aisb/policy.yaml, else the shipped default" },
	[LO_NET] = { "net", OT_NET, O_PROJECT | O_NARROW, "gate",
	    "network: through the egress gate, none (loopback only), or "
	    "direct (pinned addresses)", "gate|none|direct", NULL },
	[LO_IMAGE] = { "image", OT_WORD, O_PROJECT, "docker.io/library/debian:bookworm-slim",
	    "base image; an offline Debian base when it cannot be pulled",
	    "REF", NULL },
	[LO_PACKAGES] = { "packages", OT_LIST, O_PROJECT, NULL,
	    "Debian package installed in the image (repeatable)", "NAME",
	    "none" },
	[LO_MEMORY] = { "memory", OT_SIZE, O_PROJECT, "4g",
	    "memory limit (k, m, g; 0: none)", "SIZE", NULL },
	[LO_CPUS] = { "cpus", OT_CPUS, O_PROJECT, "2", "CPU limit (1.5; 0: none)",
	    "N", NULL },
	[LO_PIDS] = { "pids", OT_UINT, O_PROJECT, "1024",
	    "process limit (0: none)", "N", NULL },
	[LO_TIMEOUT] = { "timeout", OT_DURATION, O_PROJECT, "0",
	    "kill the command after this long and exit 124 (s, m, h; 0: never)",
	    "DURATION", NULL },
	[LO_WORKSPACE] = { "workspace", OT_PATH, 0, NULL,
	    "directory mounted read-write at the same path", "DIR",
	    "the current directory" },
	[LO_HOME_VOLUME] = { "home_volume", OT_WORD, 0, NULL,
	    "named volume mounted at /home/sandbox", "NAME",
	    "aisb-home-<hash of the workspace's real path>" },
	[LO_KEEP] = { "keep", OT_BOOL, O_PROJECT, "false",
	    "keep the container and the session record", NULL, NULL },
	[LO_RECORD] = { "record", OT_BOOL, O_PROJECT, "false",
	    "record the session's traffic: a pcapng capture, the decision log "
	    "and a manifest of their SHA-256s (docs/record.md)", NULL, NULL },
	/* not O_PROJECT: a repository must not shrink its own recording */
	[LO_RECORD_MAX] = { "record_max", OT_SIZE, 0, LAUNCH_RECORD_MAX_DEFAULT,
	    "with --record: bound of the capture (K, M, G; 4K to 64G); "
	    "reaching it stops the recording, not the session", "SIZE",
	    NULL },
	[LO_GATE] = { "gate", OT_WORD, 0, "",
	    "named gate to use (aisb gate up NAME)", "NAME",
	    "a gate of the session's own" },
	[LO_ENV] = { "env", OT_ENVLIST, 0, NULL,
	    "pass NAME (host value), NAME=VALUE, NAME? (host value if set); "
	    "repeatable", "NAME[=VALUE]", "none" },
	[LO_RUNTIME] = { "runtime", OT_WORD, 0, "runc", "OCI runtime podman uses",
	    "NAME", NULL },
	[LO_QUIET] = { "quiet", OT_BOOL, O_PROJECT, "false",
	    "print nothing of aisb's own but errors", NULL, NULL },
	[LO_PROJECT_POLICY] = { "project_policy", OT_BOOL, O_NOFLAG, "false",
	    "let .aisb.yaml name the policy (user config only)", NULL, NULL },
	[LO_HOST_CA] = { "host_ca", OT_BOOL, O_PROJECT, "true",
	    "do not trust the host's /usr/local/share/ca-certificates "
	    "inside (trusted by default)", NULL, NULL },
	/*
	 * A recipe adds allow rules to the policy: a project config may
	 * only turn that off (none), never name one (check_project).
	 */
	[LO_AGENT] = { "agent", OT_WORD, O_PROJECT | O_NARROW, NULL,
	    "agent recipe: its package in the image, its hosts allowed, its "
	    "settings (docs/agents.md); none: no recipe", "NAME",
	    "the recipe whose command is COMMAND, if any" },
	/* not O_PROJECT: installing runs packages' scripts with network */
	[LO_NPM] = { "npm", OT_LIST, 0, NULL,
	    "npm CLI installed in the image by a gated session "
	    "(repeatable; no version: the newest)", "PKG[@VER]", "none" },
	[LO_PIP] = { "pip", OT_LIST, 0, NULL,
	    "pip CLI installed in the image by a gated session "
	    "(repeatable)", "PKG==VER", "none" },
	/*
	 * not O_PROJECT: it widens the policy by what the repository's
	 * lockfiles say (https hosts only, lockfile.h)
	 */
	[LO_ALLOW_FROM_LOCKFILE] = { "allow_from_lockfile", OT_BOOL, 0,
	    "false", "allow the https hosts the workspace's lockfiles "
	    "name (aisb policy derive lockfile lists them)", NULL, NULL },
	/*
	 * Snapshot sessions (docs/snapshot.md).  A project config may
	 * choose snapshot (it narrows what the command reaches), never
	 * direct; nor when to write back, which is the user's to say.
	 */
	[LO_WORKSPACE_MODE] = { "workspace_mode", OT_CHOICE,
	    O_PROJECT | O_NARROW, "direct",
	    "direct: the command writes the workspace; snapshot: a copy of "
	    "it, whose changes aisb apply ID writes back", "direct|snapshot",
	    NULL },
	[LO_APPLY] = { "apply", OT_CHOICE, 0, "auto",
	    "snapshot sessions: at the end ask on the terminal (ask), or "
	    "only keep the draft (never); auto: ask when stdin and stderr "
	    "are a terminal", "auto|ask|never", NULL },
	/*
	 * Not O_PROJECT: a list of a higher layer replaces a lower one's,
	 * and a repository must not drop the user's exclusions.
	 */
	[LO_SNAPSHOT_EXCLUDE] = { "snapshot_exclude", OT_LIST, 0, NULL,
	    "snapshot sessions: also leave out of the stage what PATTERN "
	    "matches (repeatable; docs/snapshot.md)", "PATTERN",
	    "the documented list only" },
	/*
	 * Transparent capture (docs/launcher.md): a tool that ignores the
	 * proxy variables reaches what the gate allows by name, and nothing
	 * more; a project config may turn it off or change the ports, which
	 * widens nothing (the gate decides every connection).
	 */
	[LO_TRANSPARENT] = { "transparent", OT_BOOL, O_PROJECT, "true",
	    "gate mode: do not catch the TCP of tools that ignore the proxy "
	    "variables, nor their DNS (caught by default)", NULL, NULL },
	[LO_TRANSPARENT_PORTS] = { "transparent_ports", OT_WORD, O_PROJECT,
	    "80,443", "gate mode: the TCP ports caught for the gate "
	    "(1 to 16, comma-separated)", "PORTS", NULL },
};

/*
 * Flags that stand for an option's value: --snapshot is
 * --workspace-mode snapshot.  Listed in --help after the table.
 */
struct aliasdesc {
	const char		*flag;
	enum launch_opt_id	 id;
	const char		*val;
	const char		*help;
};

static const struct aliasdesc aliases[] = {
	{ "--snapshot", LO_WORKSPACE_MODE, "snapshot",
	    "run on a copy of the workspace; its changes wait for aisb apply "
	    "(--workspace-mode snapshot)" },
};

/*
 * Flags that say what to do rather than how the session looks: no config
 * key, no AISB_* variable.  Parsed from this table, listed in --help.
 */
struct actdesc {
	const char	*flag;
	size_t		 off;		/* of the int in struct launch_opts */
	const char	*help;
};

static const struct actdesc acts[] = {
	{ "--dry-run", offsetof(struct launch_opts, dry_run),
	    "print the plan, the env file and the podman command; run nothing" },
	{ "--print-config", offsetof(struct launch_opts, print_config),
	    "print every option, its value and where it came from" },
	{ "--print-policy", offsetof(struct launch_opts, print_policy),
	    "print the canonical form of the session's policy" },
	{ "--print-plan", offsetof(struct launch_opts, print_plan),
	    "print the enforcer's plan" },
	{ "--print-containerfile", offsetof(struct launch_opts,
	    print_containerfile),
	    "print the Containerfile of the session's image" },
	{ "--help", offsetof(struct launch_opts, help),
	    "print this help and exit" },
	/*
	 * A flag only, never a config key or AISB_* variable: learning
	 * lets the command reach any name, so each session asks for it.
	 */
	{ "--learn", offsetof(struct launch_opts, learn),
	    "learning mode: allow every name and port (not the denied "
	    "address ranges), record what the policy would have denied; "
	    "then aisb policy suggest ID" },
};

const char *
launch_opt_name(enum launch_opt_id id)
{
	return id < LO__COUNT ? launch_optdesc[id].name : "?";
}

const char *
launch_src_str(enum launch_src s)
{
	switch (s) {
	case LAUNCH_SRC_DEFAULT:
		return "default";
	case LAUNCH_SRC_USER:
		return "user config";
	case LAUNCH_SRC_PROJECT:
		return "project config";
	case LAUNCH_SRC_ENV:
		return "environment";
	case LAUNCH_SRC_FLAG:
		return "flag";
	}
	return "?";
}

const char *
launch_env_redacted(const char *entry, char *buf, size_t len)
{
	const char	*eq = strchr(entry, '=');

	if (eq == NULL)
		snprintf(buf, len, "%s", entry);
	else
		snprintf(buf, len, "%.*s=<redacted>", (int)(eq - entry), entry);
	return buf;
}

/* ---- setting values ---------------------------------------------------- */

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
	if (launch_optdesc[id].type == OT_LIST) {
		struct launch_item	**l = &o->packages;
		size_t			 *n = &o->npackages;

		if (id == LO_NPM) {
			l = &o->npm;
			n = &o->nnpm;
		} else if (id == LO_PIP) {
			l = &o->pip;
			n = &o->npip;
		} else if (id == LO_SNAPSHOT_EXCLUDE) {
			l = &o->exclude;
			n = &o->nexclude;
		}
		if (*n > 0 && (*l)[0].src != src)
			list_free(l, n);
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

/* ---- the command line -------------------------------------------------- */

static int
flag_opt(const char *flag, size_t len)
{
	char	 name[64];
	size_t	 i;
	int	 id;

	if (len >= sizeof(name))
		return -1;
	for (i = 0; i < len; i++)
		name[i] = flag[i] == '-' ? '_' : flag[i];
	name[len] = '\0';
	if (strcmp(name, "package") == 0)
		return LO_PACKAGES;
	if ((id = launch_opt_find(name, len)) < 0 || (launch_optdesc[id].flags & O_NOFLAG))
		return -1;
	return id;
}

/*
 * Sandbox flags until the first positional or unknown flag; "--" ends
 * them.  What follows is the command, untouched.  Every flag comes from
 * launch_optdesc[] or acts[], the tables --help prints.
 */
static int
parse_flags(struct launch_opts *o, int argc, char **argv, char *err,
    size_t errlen)
{
	int	 i, id;
	size_t	 k;

	for (i = 0; i < argc; i++) {
		const char	*a = argv[i], *val = NULL, *eq;
		char		 where[80];
		size_t		 nlen;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-h") == 0)
			a = "--help";
		if (a[0] != '-' || a[1] != '-' || a[2] == '\0')
			break;		/* positional (or "-x"): the command */
		/* --no-NAME: a switch that is on by default, turned off */
		if (strncmp(a, "--no-", 5) == 0 &&
		    (id = flag_opt(a + 5, strlen(a + 5))) >= 0 &&
		    launch_optdesc[id].type == OT_BOOL) {
			if (launch_opt_set(o, (enum launch_opt_id)id, "false",
			    LAUNCH_SRC_FLAG, a, NULL, err, errlen) == -1)
				return -1;
			continue;
		}
		for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
			if (strcmp(a, aliases[k].flag) == 0)
				break;
		if (k < sizeof(aliases) / sizeof(aliases[0])) {
			if (launch_opt_set(o, aliases[k].id, aliases[k].val,
			    LAUNCH_SRC_FLAG, a, NULL, err, errlen) == -1)
				return -1;
			continue;
		}
		for (k = 0; k < sizeof(acts) / sizeof(acts[0]); k++)
			if (strcmp(a, acts[k].flag) == 0)
				break;
		if (k < sizeof(acts) / sizeof(acts[0])) {
			*(int *)(void *)((char *)o + acts[k].off) = 1;
			continue;
		}
		eq = strchr(a + 2, '=');
		nlen = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
		if ((id = flag_opt(a + 2, nlen)) < 0)
			break;		/* unknown: the command starts here */
		snprintf(where, sizeof(where), "--%.*s", (int)nlen, a + 2);
		if (eq != NULL)
			val = eq + 1;
		else if (launch_optdesc[id].type == OT_BOOL)
			val = "true";
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			snprintf(err, errlen, "%s needs a value: %s %s (%s)",
			    a, a, launch_optdesc[id].arg, launch_optdesc[id].help);
			return -1;
		}
		if (launch_opt_set(o, (enum launch_opt_id)id, val, LAUNCH_SRC_FLAG,
		    where, NULL, err, errlen) == -1)
			return -1;
	}
	o->cmd = argv + i;
	o->ncmd = argc - i;
	if (o->ncmd > 0 && o->cmd[0][0] == '-' && (i == 0 ||
	    strcmp(argv[i - 1], "--") != 0)) {
		snprintf(err, errlen, "unknown flag '%.64s' (aisb --help lists "
		    "them); to run a command whose name starts with '-', "
		    "write: aisb -- %.64s", o->cmd[0], o->cmd[0]);
		return -1;
	}
	return 0;
}

/*
 * The flags of a session, one per line: --flag, or --flag=ARG for those
 * taking a value (ARG: FILE, DIR, a|b|c choices...), for completion.
 */
/*
 * The flag of option id as help and completion show it: "--package" for
 * packages, "--no-NAME" for a switch that is on by default.
 */
static void
flag_name(int id, char *flag, size_t len)
{
	const struct optdesc	*d = &launch_optdesc[id];
	size_t			 i;

	snprintf(flag, len, "--%s%s", d->type == OT_BOOL && d->def != NULL &&
	    strcmp(d->def, "true") == 0 ? "no-" : "",
	    id == LO_PACKAGES ? "package" : d->name);
	for (i = 0; flag[i] != '\0'; i++)
		if (flag[i] == '_')
			flag[i] = '-';
}

void
launch_opts_flags(FILE *f)
{
	size_t	 k;
	int	 id;
	char	 flag[64];

	for (id = 0; id < LO__COUNT; id++) {
		if (launch_optdesc[id].flags & O_NOFLAG)
			continue;
		flag_name(id, flag, sizeof(flag));
		fprintf(f, "%s%s%s\n", flag, launch_optdesc[id].arg != NULL ? "=" : "",
		    launch_optdesc[id].arg != NULL ? launch_optdesc[id].arg : "");
	}
	for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
		fprintf(f, "%s\n", aliases[k].flag);
	for (k = 0; k < sizeof(acts) / sizeof(acts[0]); k++)
		fprintf(f, "%s\n", acts[k].flag);
}

/*
 * The Options: part of aisb --help, from launch_optdesc[] and acts[]: one line per
 * flag, its value's name, what it does, its default.
 */
void
launch_opts_help(FILE *f)
{
	char	 flag[64];
	size_t	 k;
	int	 id;

	fprintf(f, "Options:\n");
	for (id = 0; id < LO__COUNT; id++) {
		const struct optdesc *d = &launch_optdesc[id];

		if (d->flags & O_NOFLAG)
			continue;
		flag_name(id, flag, sizeof(flag));
		if (d->arg != NULL)
			snprintf(flag + strlen(flag), sizeof(flag) -
			    strlen(flag), " %s", d->arg);
		/* two spaces at least: --workspace-mode direct|snapshot */
		fprintf(f, "  %-28s%s%s", flag, strlen(flag) >= 28 ? "  " : " ",
		    d->help);
		if (d->type == OT_BOOL)
			;	/* a switch: off unless given */
		else if (d->defhelp != NULL)
			fprintf(f, " (default: %s)", d->defhelp);
		else if (d->def != NULL && d->def[0] != '\0')
			fprintf(f, " (default: %s)", d->def);
		fputc('\n', f);
	}
	for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
		fprintf(f, "  %-28s %s\n", aliases[k].flag, aliases[k].help);
	for (k = 0; k < sizeof(acts) / sizeof(acts[0]); k++)
		fprintf(f, "  %-28s %s\n", acts[k].flag, acts[k].help);
	fprintf(f, "\nEach option NAME also reads from AISB_NAME (upper case) "
	    "and from the key name in\n~/.config/aisb/config.yaml or the "
	    "workspace's .aisb.yaml (docs/launcher.md);\nflags win.\n");
}

/* ---- resolution -------------------------------------------------------- */

/*
 * The shipped default policy of an aisb that runs from its build tree.
 * make copies contrib/policies/default.yaml next to the aisb it builds,
 * as LAUNCH_POLICY_BUILT_NAME (as it does aisb-seccomp.json), and
 * make install installs neither copy next to the installed aisb: so a
 * copy next to /proc/self/exe means "this aisb is uninstalled", wherever
 * the build folder is (in the tree, out of it, moved), with no path
 * baked in at configure time that a moved or deleted source tree would
 * leave dangling.  An installed aisb finds no such file and uses
 * AISB_POLICYDIR.  0 with the path in buf, or -1.
 */
int
launch_built_policy(char *buf, size_t len)
{
	if (launch_beside_self(LAUNCH_POLICY_BUILT_NAME, buf, len) == -1)
		return -1;
	return access(buf, R_OK) == 0 ? 0 : -1;
}

/*
 * The sandbox may change whatever the workspace's owner may: a folder of
 * the system as the workspace would hand it the system (as root, through
 * the idmapped mount, every root-owned file there).  1 for such a path:
 * the trees of the system, and the folders that hold other programs'
 * state themselves (a CI's workspace under /var/lib/NAME stays allowed).
 */
int
launch_system_folder(const char *real)
{
	static const char *const trees[] = { "/etc", "/usr", "/boot", "/bin",
	    "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys",
	    "/dev", "/run" };
	static const char *const exact[] = { "/", "/var", "/var/lib",
	    "/var/log", "/var/cache", "/var/spool", "/var/tmp", "/tmp",
	    "/home", "/srv", "/opt", "/mnt", "/media" };
	static const char *const allowed[] = { "/usr/src", "/usr/local/src" };
	size_t	 i, n;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(real, exact[i]) == 0)
			return 1;
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		n = strlen(allowed[i]);
		if (strncmp(real, allowed[i], n) == 0 && real[n] == '/')
			return 0;
	}
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		n = strlen(trees[i]);
		if (strncmp(real, trees[i], n) == 0 &&
		    (real[n] == '\0' || real[n] == '/'))
			return 1;
	}
	return 0;
}

int
launch_workspace_check(const struct launch_opts *o, char *err, size_t errlen)
{
	char	 real[PATH_MAX];

	if (realpath(o->val[LO_WORKSPACE], real) != NULL &&
	    launch_system_folder(real)) {
		snprintf(err, errlen, "workspace %s (%s%s%s) is a folder of the "
		    "system: the sandbox could change it as its owner does; run "
		    "aisb in a project folder, or pass --workspace DIR", real,
		    o->src[LO_WORKSPACE] == LAUNCH_SRC_DEFAULT ?
		    "the current folder" : launch_src_str(o->src[LO_WORKSPACE]),
		    o->src[LO_WORKSPACE] == LAUNCH_SRC_DEFAULT ? "" : ": ",
		    o->src[LO_WORKSPACE] == LAUNCH_SRC_DEFAULT ? "" :
		    o->where[LO_WORKSPACE]);
		return -1;
	}
	return 0;
}

int
launch_opts_resolve(struct launch_opts *o, int argc, char **argv,
    char **envp, char *err, size_t errlen)
{
	struct launch_opts	 flags;
	const char		*xdg, *home;
	char			 cwd[PATH_MAX], path[PATH_MAX + 64];
	size_t			 i;
	int			 id;

	memset(o, 0, sizeof(*o));
	memset(&flags, 0, sizeof(flags));
	/* aisb run FLAGS COMMAND: main.c hands run its name */
	if (argc > 1 && strcmp(argv[1], "run") == 0) {
		argc--;
		argv++;
	}

	/* 1. built-in defaults */
	for (id = 0; id < LO__COUNT; id++)
		if (launch_optdesc[id].def != NULL && launch_opt_set(o, (enum launch_opt_id)id,
		    launch_optdesc[id].def, LAUNCH_SRC_DEFAULT, "default", NULL, err,
		    errlen) == -1)
			return -1;
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		snprintf(err, errlen, "getcwd: %s", strerror(errno));
		return -1;
	}
	if (launch_opt_set(o, LO_WORKSPACE, cwd, LAUNCH_SRC_DEFAULT, "default",
	    NULL, err, errlen) == -1)
		return -1;

	/*
	 * The flags are parsed first into a scratch set, only to learn the
	 * workspace (where the project config is) and to fail early; they
	 * are applied again, on top, at the end.
	 */
	if (parse_flags(&flags, argc - 1, argv + 1, err, errlen) == -1) {
		launch_opts_free(&flags);
		return -1;
	}
	if (flags.help) {
		/* --help reads no config: a broken one must not hide it */
		launch_opts_free(&flags);
		o->help = 1;
		return 0;
	}

	/* 2. user config */
	xdg = launch_getenv(envp, "XDG_CONFIG_HOME", 15);
	home = launch_getenv(envp, "HOME", 4);
	if (xdg != NULL && xdg[0] == '/')
		snprintf(o->user_config, sizeof(o->user_config),
		    "%s/aisb/config.yaml", xdg);
	else
		snprintf(o->user_config, sizeof(o->user_config),
		    "%s/.config/aisb/config.yaml", home ? home : "");
	if (xdg != NULL && xdg[0] == '/')
		snprintf(o->user_policy, sizeof(o->user_policy),
		    "%s/aisb/policy.yaml", xdg);
	else
		snprintf(o->user_policy, sizeof(o->user_policy),
		    "%s/.config/aisb/policy.yaml", home ? home : "");
	if (launch_opt_read_config(o, o->user_config, LAUNCH_SRC_USER, err, errlen) == -1)
		goto fail;

	/* 3. project config, at the workspace the higher layers name */
	{
		const char *ws = flags.val[LO_WORKSPACE];
		const char *ev = launch_getenv(envp, "AISB_WORKSPACE", 14);

		if (ws == NULL)
			ws = ev != NULL ? ev : o->val[LO_WORKSPACE];
		snprintf(o->project_config, sizeof(o->project_config),
		    "%s/.aisb.yaml", ws);
	}
	if (launch_opt_read_config(o, o->project_config, LAUNCH_SRC_PROJECT, err,
	    errlen) == -1)
		goto fail;

	/* 4. AISB_* environment */
	if (launch_opt_env_layer(o, envp, err, errlen) == -1)
		goto fail;

	/* 5. flags */
	launch_opts_free(&flags);
	if (parse_flags(o, argc - 1, argv + 1, err, errlen) == -1)
		return -1;

	/* The policy when nobody named one. */
	if (o->val[LO_POLICY] == NULL || o->val[LO_POLICY][0] == '\0') {
		snprintf(path, sizeof(path), "%s", o->user_policy);
		if (access(path, R_OK) == 0)
			o->policy_origin = LAUNCH_POLICY_USER;
		else if (launch_built_policy(path, sizeof(path)) == 0)
			o->policy_origin = LAUNCH_POLICY_BUILT;
		else {
			snprintf(path, sizeof(path), "%s/default.yaml",
			    AISB_POLICYDIR);
			o->policy_origin = LAUNCH_POLICY_INSTALLED;
		}
		if (launch_opt_set(o, LO_POLICY, path, LAUNCH_SRC_DEFAULT, "default",
		    NULL, err, errlen) == -1)
			return -1;
	}

	/*
	 * One home per project: a home volume shared by every project lets
	 * one repository plant ~/.bashrc or ~/.npmrc for the next.
	 */
	if (o->val[LO_HOME_VOLUME] == NULL) {
		char	 vol[64];

		if (launch_home_volume_name(o->val[LO_WORKSPACE], vol,
		    sizeof(vol)) == -1) {
			snprintf(err, errlen, "home volume name: no digest");
			return -1;
		}
		if (launch_opt_set(o, LO_HOME_VOLUME, vol, LAUNCH_SRC_DEFAULT,
		    "default", NULL, err, errlen) == -1)
			return -1;
	}

	/* --env NAME must exist on the host (fail closed) unless NAME?. */
	for (i = 0; i < o->nenv; i++) {
		const char *e = o->env[i].text;

		if (strchr(e, '=') == NULL && e[strlen(e) - 1] != '?' &&
		    launch_getenv(envp, e, strlen(e)) == NULL) {
			snprintf(err, errlen, "%s: --env %s: %s is not set here; "
			    "set it, drop it, or write --env '%s?' to pass it "
			    "only when set", o->env[i].where, e, e, e);
			return -1;
		}
	}
	return 0;
fail:
	launch_opts_free(&flags);
	return -1;
}

int
launch_home_volume_name(const char *workspace, char *out, size_t len)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	char		 real[PATH_MAX];
	const char	*path = realpath(workspace, real) != NULL ? real :
			    workspace;

	if (len < sizeof(LAUNCH_HOME_PREFIX) + 12 ||
	    EVP_Digest(path, strlen(path), md, &mdlen, EVP_sha256(),
	    NULL) != 1 || mdlen < 6)
		return -1;
	snprintf(out, len, "%s%02x%02x%02x%02x%02x%02x", LAUNCH_HOME_PREFIX,
	    md[0], md[1], md[2], md[3], md[4], md[5]);
	return 0;
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
}

static void
print_src(FILE *f, enum launch_src s, const char *where)
{
	if (s == LAUNCH_SRC_DEFAULT && strncmp(where, "agent ", 6) == 0)
		fprintf(f, "(%s)\n", where);	/* a recipe's setenv */
	else if (s == LAUNCH_SRC_DEFAULT)
		fprintf(f, "(default)\n");
	else
		fprintf(f, "(%s: %s)\n", launch_src_str(s), where);
}

void
launch_opts_print(const struct launch_opts *o, FILE *f)
{
	char	 buf[LAUNCH_MAX_VALUE + 32];
	size_t	 i;
	int	 id;

	for (id = 0; id < LO__COUNT; id++) {
		if (id == LO_ENV) {
			if (o->nenv == 0)
				fprintf(f, "%-15s (none) (default)\n", "env");
			for (i = 0; i < o->nenv; i++) {
				fprintf(f, "%-15s %s ", "env",
				    launch_env_redacted(o->env[i].text, buf,
				    sizeof(buf)));
				print_src(f, o->env[i].src, o->env[i].where);
			}
			continue;
		}
		if (launch_optdesc[id].type == OT_LIST) {
			const struct launch_item *l = id == LO_NPM ? o->npm :
			    id == LO_PIP ? o->pip : id == LO_SNAPSHOT_EXCLUDE ?
			    o->exclude : o->packages;
			size_t n = id == LO_NPM ? o->nnpm : id == LO_PIP ?
			    o->npip : id == LO_SNAPSHOT_EXCLUDE ? o->nexclude :
			    o->npackages;

			fprintf(f, "%-15s", launch_optdesc[id].name);
			if (n == 0)
				fprintf(f, " (none) (default)\n");
			else {
				for (i = 0; i < n; i++)
					fprintf(f, " %s", l[i].text);
				fprintf(f, " ");
				print_src(f, l[0].src, l[0].where);
			}
			continue;
		}
		fprintf(f, "%-15s %s ", launch_optdesc[id].name,
		    o->val[id] && o->val[id][0] ? o->val[id] : "\"\"");
		print_src(f, o->src[id], o->where[id]);
	}
	fprintf(f, "# user config:    %s\n# project config: %s\n",
	    o->user_config, o->project_config);
}
