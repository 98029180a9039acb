/*
 * The launcher's options: one table, four layers, one resolve function.
 *
 * Precedence, lowest first: built-in defaults < user config
 * ($XDG_CONFIG_HOME/aisb/config.yaml) < project config (.aisb.yaml at the
 * workspace root) < AISB_* environment < command-line flags.  Every value
 * remembers where it came from, for --print-config and for errors.
 *
 * A project config comes with the repository, so it is not trusted: it may
 * narrow what a session can do, never widen it (no host environment
 * variables, no other home volume, no other policy unless the user config
 * says project_policy: true, and only --net none as a network change).
 */
#ifndef AISB_OPTIONS_H
#define AISB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LAUNCH_MAX_CONFIG	(64 * 1024)	/* bytes of one config file */
#define LAUNCH_MAX_LIST		256		/* entries in a list option */
#define LAUNCH_MAX_VALUE	4096		/* bytes of one option value */

enum launch_src {
	LAUNCH_SRC_DEFAULT = 0,
	LAUNCH_SRC_USER,
	LAUNCH_SRC_PROJECT,
	LAUNCH_SRC_ENV,
	LAUNCH_SRC_FLAG,
};

enum launch_net {
	LAUNCH_NET_GATE = 0,
	LAUNCH_NET_NONE,
	LAUNCH_NET_DIRECT,
};

enum launch_opt_id {
	LO_POLICY = 0,
	LO_NET,
	LO_IMAGE,
	LO_PACKAGES,
	LO_MEMORY,
	LO_CPUS,
	LO_PIDS,
	LO_TIMEOUT,
	LO_WORKSPACE,
	LO_HOME_VOLUME,
	LO_KEEP,
	LO_RECORD,
	LO_RECORD_MAX,		/* recording.h: bound of the capture */
	LO_GATE,
	LO_ENV,
	LO_RUNTIME,
	LO_QUIET,
	LO_PROJECT_POLICY,
	LO_HOST_CA,
	LO_AGENT,		/* agent.h; "none": no recipe, none picked */
	LO_NPM,
	LO_PIP,
	LO_ALLOW_FROM_LOCKFILE,	/* lockfile.h: the workspace's hosts added */
	LO_WORKSPACE_MODE,	/* snapshot.h: direct or snapshot */
	LO_APPLY,		/* snapshot.h: auto, ask or never */
	LO_SNAPSHOT_EXCLUDE,	/* snapshot.h: patterns left out of the stage */
	LO_DRAFT,		/* snapshot.h: the persistent draft continued */
	/* issue 33: the user's bounds and denials (docs/snapshot.md) */
	LO_SNAPSHOT_MAX_ENTRIES,
	LO_SNAPSHOT_MAX_BYTES,
	LO_SNAPSHOT_MAX_FILE_BYTES,
	LO_SNAPSHOT_MAX_DEPTH,
	LO_WRITEBACK_DENY,	/* staged, never written back */
	LO_WRITEBACK,		/* false: no snapshot session writes back */
	LO_RETENTION,		/* retain.h: the user's sessions, at most */
	/* issue 16: transparent capture of 80/443 and DNS (gate mode) */
	LO_TRANSPARENT,
	LO_TRANSPARENT_PORTS,
	/* issue 27: the workspace as a way out (gitguard.h, protect.h) */
	LO_PROTECT,		/* paths read-only inside, listed at the end */
	LO_QUARANTINE,		/* net none, read-only workspace, no home */
	LO_MOUNT,		/* SRC:DST[:ro|rw] beside the workspace */
	LO_SECRETS,		/* secrets.h: the gate adds them; user only */
	LO_INSTALL_POLICY,	/* tools.h: the install sessions' policy */
	/* issue 31: held requests, answered by aisb approve (ask.h) */
	LO_ASK,			/* the user's: never a project config's */
	LO__COUNT
};

/* One value of a list option (env, packages), with where it came from. */
struct launch_item {
	char		*text;
	enum launch_src	 src;
	char		 where[96];
};

struct launch_opts {
	/* scalar options: the resolved text and its provenance */
	char		*val[LO__COUNT];
	enum launch_src	 src[LO__COUNT];
	char		 where[LO__COUNT][96];	/* "config.yaml:3", "AISB_NET", "--net" */

	/* list options */
	struct launch_item *env;		/* "NAME", "NAME=VALUE", "NAME?" */
	size_t		 nenv;
	struct launch_item *packages;
	size_t		 npackages;
	struct launch_item *npm;		/* "name" or "name@X.Y.Z" */
	size_t		 nnpm;
	struct launch_item *pip;		/* "name==X.Y" */
	size_t		 npip;
	struct launch_item *exclude;		/* snapshot_exclude patterns */
	size_t		 nexclude;
	struct launch_item *wdeny;		/* writeback_deny patterns */
	size_t		 nwdeny;
	struct launch_item *protect;		/* protect patterns */
	size_t		 nprotect;
	struct launch_item *mounts;		/* SRC:DST[:ro|rw] */
	size_t		 nmounts;
	struct launch_item *secrets;		/* "NAME[=SOURCE]" (secrets.h) */
	size_t		 nsecrets;

	/* typed views, valid after launch_opts_resolve() */
	enum launch_net	 net;
	uint64_t	 memory;		/* bytes; 0: no limit */
	unsigned	 cpus_milli;		/* 1500 = 1.5 CPUs; 0: no limit */
	unsigned	 pids;			/* 0: no limit */
	unsigned	 timeout;		/* seconds; 0: none */
	int		 keep, record, quiet, project_policy;
	int		 host_ca;		/* the host's local CAs inside */
	int		 allow_from_lockfile;	/* LO_ALLOW_FROM_LOCKFILE */
	uint64_t	 record_max;		/* bytes of the capture, at most */
	int		 transparent;		/* gate mode: capture and DNS */
	uint16_t	 tports[16];		/* transparent_ports, distinct */
	size_t		 ntports;
	unsigned	 ask;			/* s a held request waits; 0: none */

	/* snapshot sessions (snapshot.h), valid after resolve */
	int		 snapshot;		/* workspace_mode: snapshot */
	int		 readonly;		/* workspace_mode: readonly */
	int		 apply;			/* LAUNCH_APPLY_* */
	int		 quarantine;		/* --quarantine (readonly too) */
	uint64_t	 snap_max[4];		/* entries, bytes, file bytes,
						   depth; 0: the built-in */
	int		 writeback;		/* 0: never written back */
	uint64_t	 retention;		/* bytes of session folders;
						   0: no cap */

	/* what to do */
	int		 dry_run, print_config, print_policy, print_plan;
	int		 print_containerfile, help;
	int		 learn;			/* --learn: a flag only (run.c) */
	char		**cmd;			/* points into argv, NULL-terminated */
	int		 ncmd;

	/* where a policy nobody named came from (LAUNCH_POLICY_*) */
	int		 policy_origin;

	char		 user_config[1024];	/* paths looked at, for messages */
	char		 project_config[1024];
	char		 user_policy[1024];
};

/*
 * Resolves every option from the four layers.  argv/envp are the
 * process's (envp is passed so that tests control it); a first word
 * "run" (aisb run FLAGS COMMAND) is skipped.  Returns 0, or -1 with a
 * message in err (what is wrong, where, what to type instead); the
 * caller exits 78.  Whether a command is needed is the caller's to say.
 */
int	 launch_opts_resolve(struct launch_opts *, int argc, char **argv,
	    char **envp, char *err, size_t errlen);
void	 launch_opts_free(struct launch_opts *);
/*
 * Refuses a workspace that is a folder of the system ("/", /etc, /usr...):
 * the sandbox may change whatever the workspace's owner may.  Sessions
 * only: a named gate started from "/" (a service) has no workspace.
 * 0, or -1 with err.
 */
int	 launch_workspace_check(const struct launch_opts *, char *err,
	    size_t errlen);
/* 1 when the real (resolved) path is such a folder of the system. */
int	 launch_system_folder(const char *real);
/* apply: what a snapshot session does with its changes at its end */
#define LAUNCH_APPLY_AUTO	0	/* ask on a terminal, else keep */
#define LAUNCH_APPLY_ASK	1	/* ask on the terminal */
#define LAUNCH_APPLY_NEVER	2	/* keep the draft; aisb apply ID */
/* Which policy a session uses when no layer names one. */
#define LAUNCH_POLICY_NAMED	0	/* a flag, AISB_POLICY or a config */
#define LAUNCH_POLICY_USER	1	/* ~/.config/aisb/policy.yaml */
#define LAUNCH_POLICY_BUILT	2	/* the build tree's copy (below) */
#define LAUNCH_POLICY_INSTALLED	3	/* $(pkgdatadir)/policies/default.yaml */
#define LAUNCH_POLICY_GATE	4	/* the one --gate NAME enforces */
#define LAUNCH_POLICY_BUILT_NAME "aisb-default-policy.yaml"
int	 launch_built_policy(char *buf, size_t len);
/* --print-config: one line per option, value and source; secrets redacted. */
void	 launch_opts_print(const struct launch_opts *, FILE *);
/* The Options: part of aisb --help, from the table the parser reads. */
void	 launch_opts_help(FILE *);
/* The same flags, one per line: --flag or --flag=ARG. */
void	 launch_opts_flags(FILE *);
const char *launch_opt_name(enum launch_opt_id);
const char *launch_src_str(enum launch_src);
/* "NAME=<redacted>" / "NAME" / "NAME?" for an --env entry, into buf. */
const char *launch_env_redacted(const char *entry, char *buf, size_t len);
/*
 * The default home volume of a workspace in a workspace mode:
 * LAUNCH_HOME_PREFIX, 12 hex digits of the SHA-256 of its real path, '-'
 * and the mode ("direct", "snapshot", "readonly"): sessions of different
 * trust never share a home.  0, or -1 when len is short.
 */
/* ask: true is this long; a value is 1 to LAUNCH_ASK_MAX seconds */
#define LAUNCH_ASK_DEFAULT	60
#define LAUNCH_ASK_MAX		3600
#define LAUNCH_HOME_PREFIX	"aisb-home-"
int	 launch_home_volume_name(const char *workspace, const char *mode,
	    char *out, size_t len);

#endif
