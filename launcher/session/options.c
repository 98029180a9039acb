/*
 * Option resolution: the alias-friendly command line, the help, and the
 * one function that applies the layers in order.  The table and each
 * value's check are optvalue.c's, the config files and AISB_* optconfig.c's.
 */
#include "config.h"

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "near.h"
#include "host/paths.h"
#include "image/names.h"
#include "session/options.h"
#include "session/options-int.h"
#include "session/recording.h"
#include "session/trust.h"

#ifndef AISB_POLICYDIR
#define AISB_POLICYDIR	"/usr/local/share/aisb/policies"
#endif


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
	{ "--read-only", LO_WORKSPACE_MODE, "readonly",
	    "the command reads the workspace, writes nothing there "
	    "(--workspace-mode readonly)" },
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
	if (strcmp(name, "secret") == 0)
		return LO_SECRETS;
	if ((id = launch_opt_find(name, len)) < 0 || (launch_optdesc[id].flags & O_NOFLAG))
		return -1;
	return id;
}


/*
 * ": did you mean --policy?" for a flag no table has (typed: as given,
 * dashes and all; a value after '=' left out), or "".
 */
static void
near_flag(const char *typed, char *out, size_t len)
{
	char		 names[LO__COUNT + 16][64];
	const char	*cand[LO__COUNT + 16];
	size_t		 n = 0, k, tlen;
	int		 id, pick;

	out[0] = '\0';
	for (id = 0; id < LO__COUNT; id++)
		if (!(launch_optdesc[id].flags & O_NOFLAG))
			launch_opt_flag_name(id, names[n++], sizeof(names[0]));
	for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]) &&
	    n < LO__COUNT + 16; k++)
		snprintf(names[n++], sizeof(names[0]), "%s", aliases[k].flag);
	for (k = 0; k < sizeof(acts) / sizeof(acts[0]) &&
	    n < LO__COUNT + 16; k++)
		snprintf(names[n++], sizeof(names[0]), "%s", acts[k].flag);
	/* compared without their dashes: "-q" is near "--quiet" */
	for (k = 0; k < n; k++)
		cand[k] = names[k] + 2;
	typed += strspn(typed, "-");
	tlen = strcspn(typed, "=");
	if ((pick = near_pick(typed, tlen, cand, n)) != -1)
		snprintf(out, len, ": did you mean %s?", names[pick]);
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
		char	 near[96];

		near_flag(o->cmd[0], near, sizeof(near));
		snprintf(err, errlen, "unknown flag '%.64s'%s (aisb --help "
		    "lists them); to run a command whose name starts with "
		    "'-', write: aisb -- %.64s", o->cmd[0], near, o->cmd[0]);
		return -1;
	}
	return 0;
}

void
launch_opt_flag_name(int id, char *flag, size_t len)
{
	const struct optdesc	*d = &launch_optdesc[id];
	size_t			 i;

	snprintf(flag, len, "--%s%s", d->type == OT_BOOL && d->def != NULL &&
	    strcmp(d->def, "true") == 0 ? "no-" : "",
	    id == LO_PACKAGES ? "package" : id == LO_SECRETS ? "secret" :
	    d->name);
	for (i = 0; flag[i] != '\0'; i++)
		if (flag[i] == '_')
			flag[i] = '-';
}

/*
 * The flags of a session, one per line: --flag, or --flag=ARG for those
 * taking a value (ARG: FILE, DIR, a|b|c choices...), for completion.
 */
void
launch_opts_flags(FILE *f)
{
	size_t	 k;
	int	 id;
	char	 flag[64];

	for (id = 0; id < LO__COUNT; id++) {
		if (launch_optdesc[id].flags & O_NOFLAG)
			continue;
		launch_opt_flag_name(id, flag, sizeof(flag));
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
		launch_opt_flag_name(id, flag, sizeof(flag));
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
	struct stat	 st;
	char		 real[PATH_MAX];
	const char	*why = NULL;

	/* bad input, 78, before anything starts */
	if (realpath(o->val[LO_WORKSPACE], real) == NULL ||
	    stat(real, &st) == -1)
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a folder";
	if (why != NULL) {
		snprintf(err, errlen, "workspace %s (%s%s%s): %s; run aisb in "
		    "a project folder, or pass --workspace DIR",
		    o->val[LO_WORKSPACE], o->src[LO_WORKSPACE] ==
		    LAUNCH_SRC_DEFAULT ? "the current folder" :
		    launch_src_str(o->src[LO_WORKSPACE]),
		    o->src[LO_WORKSPACE] == LAUNCH_SRC_DEFAULT ? "" : ": ",
		    o->src[LO_WORKSPACE] == LAUNCH_SRC_DEFAULT ? "" :
		    o->where[LO_WORKSPACE], why);
		return -1;
	}
	if (launch_system_folder(real)) {
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

/*
 * --quarantine (quarantine: true) narrows the session to what reading a
 * repository one does not trust needs: no network, the workspace
 * read-only, a home that goes with the session (run.c).  What a config
 * file said otherwise is overridden; a choice made for this session
 * against it (a flag, AISB_*) is refused: never run other than what was
 * asked for.  0, or -1 with err.
 */
static int
quarantine(struct launch_opts *o, char *err, size_t errlen)
{
	static const struct {
		enum launch_opt_id	 id;
		const char		*value, *why;
	} narrow[] = {
		{ LO_NET, "none", "its network is none" },
		{ LO_WORKSPACE_MODE, "readonly", "its workspace is read-only" },
		{ LO_GATE, "", "it has no network, and no gate" },
	};
	size_t	 i;
	char	 where[96];

	snprintf(where, sizeof(where), "%s", o->where[LO_QUARANTINE]);
	for (i = 0; i < sizeof(narrow) / sizeof(narrow[0]); i++) {
		enum launch_opt_id id = narrow[i].id;

		if (o->src[id] >= LAUNCH_SRC_ENV && o->val[id] != NULL &&
		    strcmp(o->val[id], narrow[i].value) != 0) {
			snprintf(err, errlen, "%s: a quarantined session's %s; "
			    "%s asks for %s %s: drop one of them", where,
			    narrow[i].why, o->where[id], launch_optdesc[id].name,
			    o->val[id]);
			return -1;
		}
		if (launch_opt_set(o, id, narrow[i].value,
		    o->src[LO_QUARANTINE], where, NULL, err, errlen) == -1)
			return -1;
	}
	if (o->src[LO_HOME_VOLUME] >= LAUNCH_SRC_ENV) {
		snprintf(err, errlen, "%s: a quarantined session's home goes "
		    "with it; %s names the volume %s: drop one of them", where,
		    o->where[LO_HOME_VOLUME], o->val[LO_HOME_VOLUME]);
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
	/* a file a bind session wrote is read once the user accepted it */
	if (launch_trust_check(envp, o->user_config, err, errlen) == -1 ||
	    launch_opts_read_config(o, o->user_config, LAUNCH_SRC_USER, err,
	    errlen) == -1)
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
	if (launch_trust_check(envp, o->project_config, err, errlen) == -1 ||
	    launch_opts_read_config(o, o->project_config, LAUNCH_SRC_PROJECT, err,
	    errlen) == -1)
		goto fail;

	/* 4. AISB_* environment */
	if (launch_opts_env_layer(o, envp, err, errlen) == -1)
		goto fail;

	/* 5. flags */
	launch_opts_free(&flags);
	if (parse_flags(o, argc - 1, argv + 1, err, errlen) == -1)
		return -1;

	/* a persistent draft is a snapshot session (snapshot.h) */
	if (o->val[LO_DRAFT] != NULL)
		o->snapshot = 1;

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

	if (o->quarantine && quarantine(o, err, errlen) == -1)
		return -1;
	/*
	 * One home per project and workspace mode: a home volume shared by
	 * every project lets one repository plant ~/.bashrc or ~/.npmrc for
	 * the next; one shared by the modes lets a snapshot session (whose
	 * command reached the user's tree only through a review) plant
	 * ~/.gitconfig with core.fsmonitor for the next direct session.
	 */
	if (o->val[LO_HOME_VOLUME] == NULL) {
		char	 vol[64];

		if (launch_home_volume_name(o->val[LO_WORKSPACE], o->snapshot ?
		    "snapshot" : o->readonly ? "readonly" : "direct", vol,
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
launch_home_volume_name(const char *workspace, const char *mode, char *out,
    size_t len)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	char		 real[PATH_MAX];
	const char	*path = realpath(workspace, real) != NULL ? real :
			    workspace;

	if (len < sizeof(LAUNCH_HOME_PREFIX) + 13 + strlen(mode) ||
	    EVP_Digest(path, strlen(path), md, &mdlen, EVP_sha256(),
	    NULL) != 1 || mdlen < 6)
		return -1;
	snprintf(out, len, "%s%02x%02x%02x%02x%02x%02x-%s", LAUNCH_HOME_PREFIX,
	    md[0], md[1], md[2], md[3], md[4], md[5], mode);
	return 0;
}

static void
print_src(FILE *f, enum launch_src s, const char *where)
{
	/* a recipe's setenv; the policy of --gate NAME (prepare.c) */
	if (s == LAUNCH_SRC_DEFAULT && (strncmp(where, "agent ", 6) == 0 ||
	    strncmp(where, "gate ", 5) == 0))
		fprintf(f, "(%s)\n", where);
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
		if (id == LO_SECRETS) {
			if (o->nsecrets == 0)
				fprintf(f, "%-15s (none) (default)\n", "secrets");
			/* names and where each is read from: no value */
			for (i = 0; i < o->nsecrets; i++) {
				fprintf(f, "%-15s %s ", "secrets",
				    o->secrets[i].text);
				print_src(f, o->secrets[i].src,
				    o->secrets[i].where);
			}
			continue;
		}
		if (launch_optdesc[id].type == OT_LIST) {
			size_t			 *np;
			const struct launch_item *l = *launch_opt_list(
			    (struct launch_opts *)(uintptr_t)o, id, &np);
			size_t			  n = *np;

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
