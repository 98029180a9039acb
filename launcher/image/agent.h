/*
 * Agent recipes: what a coding agent needs in a session, as data
 * (docs/agents.md).  The shipped recipes are contrib/agents.yaml, read
 * from the copy next to an uninstalled aisb (LAUNCH_AGENTS_BUILT_NAME)
 * or from $(pkgdatadir)/agents.yaml; the user's
 * $XDG_CONFIG_HOME/aisb/agents.yaml adds agents and replaces the fields
 * it names of a shipped one.
 *
 * A recipe is trusted data (it comes with aisb or from the user's own
 * config), but it is still an external input: every field is bounded and
 * checked, and the first problem stops loading with one line naming
 * file:line:col, the agent, the field and what to write instead.
 */
#ifndef AISB_AGENT_H
#define AISB_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image/names.h"	/* LAUNCH_AGENT_NAME_MAX */
#include "policy.h"

#define LAUNCH_AGENTS_BUILT_NAME "aisb-agents.yaml"
#define LAUNCH_AGENTS_MAX_FILE	(64 * 1024)	/* bytes of one recipe file */
#define LAUNCH_AGENTS_MAX	32	/* agents in the shipped + user sets */
#define LAUNCH_AGENT_MAX_HOSTS	32
#define LAUNCH_AGENT_MAX_ENV	16	/* credential variable names */
#define LAUNCH_AGENT_MAX_SETENV	16
#define LAUNCH_AGENT_MAX_CONFIG	8	/* folders under the home */
#define LAUNCH_AGENT_VALUE_MAX	256	/* bytes of a package spec, a value */
#define LAUNCH_AGENT_PATH_MAX	128	/* bytes of a config folder */
#define LAUNCH_AGENT_MAX_SECRETS 8	/* secrets: entries */
#define LAUNCH_AGENT_HEADER_MAX	64	/* bytes of a secret's header, user,
					   query parameter */

/* Where a value was written: file (index in launch_agents.files), line, col. */
struct launch_agent_pos {
	unsigned	 file, line, col;
};

struct launch_agent_host {
	char		 host[POLICY_MAX_NAME + 3];	/* name or "*.suffix" */
	uint16_t	 port;
	struct launch_agent_pos pos;
};

struct launch_agent_setenv {
	char		 name[LAUNCH_AGENT_NAME_MAX * 2 + 1];
	char		 value[LAUNCH_AGENT_VALUE_MAX];
};

/*
 * How the gate adds one of the agent's credentials when the session
 * passes it as a secret (--secret NAME): to requests to host, one of the
 * recipe's hosts, as a policy secrets: entry says it (docs/policy.md).
 */
struct launch_agent_secret {
	char		 name[LAUNCH_AGENT_NAME_MAX * 2 + 1];
	char		 host[POLICY_MAX_NAME + 1];
	enum policy_secret_mode mode;
	char		 header[LAUNCH_AGENT_HEADER_MAX + 1];	/* "": none */
	char		 user[LAUNCH_AGENT_HEADER_MAX + 1];	/* basic */
	char		 query[LAUNCH_AGENT_HEADER_MAX + 1];	/* query */
	struct launch_agent_pos pos;
};

/* The fields of a recipe, in the order docs/agents.md lists them. */
enum launch_agent_field {
	LAF_COMMAND = 0,
	LAF_NODE,
	LAF_NPM,
	LAF_PIP,
	LAF_HOSTS,
	LAF_ENV,
	LAF_SETENV,
	LAF_CONFIG,
	LAF_SECRETS,
	LAF__COUNT
};

struct launch_agent {
	char		 name[LAUNCH_AGENT_NAME_MAX + 1];
	char		 command[LAUNCH_AGENT_NAME_MAX * 2 + 1];	/* default: name */
	char		 node[32];		/* "22.23.5"; "": Debian's nodejs */
	char		 npm[LAUNCH_AGENT_VALUE_MAX];	/* "@s/pkg@1.2.3"; "" */
	char		 pip[LAUNCH_AGENT_VALUE_MAX];	/* "pkg==1.2.3"; "" */
	struct launch_agent_host hosts[LAUNCH_AGENT_MAX_HOSTS];
	size_t		 nhosts;
	char		 env[LAUNCH_AGENT_MAX_ENV][LAUNCH_AGENT_NAME_MAX * 2 + 1];
	size_t		 nenv;
	struct launch_agent_setenv setenv[LAUNCH_AGENT_MAX_SETENV];
	size_t		 nsetenv;
	char		 config[LAUNCH_AGENT_MAX_CONFIG][LAUNCH_AGENT_PATH_MAX];
	size_t		 nconfig;
	struct launch_agent_secret secrets[LAUNCH_AGENT_MAX_SECRETS];
	size_t		 nsecrets;
	struct launch_agent_pos pos;		/* where the agent is named */
	struct launch_agent_pos field[LAF__COUNT]; /* line 0: never written */
	int		 overridden;		/* the user file changed it */
};

/* The files, in launch_agents.files and launch_agent_pos.file. */
#define LAUNCH_AGENTS_SHIPPED	0
#define LAUNCH_AGENTS_USER	1
#define LAUNCH_AGENTS_PINS	2	/* aisb's own: node, npm, pip only */

struct launch_agents {
	struct launch_agent a[LAUNCH_AGENTS_MAX];
	size_t		 n;
	char		 files[3][1024];	/* "" when none was read */
};

const char	*launch_agent_field_name(enum launch_agent_field);

/*
 * The shipped file this aisb reads: the build tree's copy next to the
 * running aisb, else the installed one.  Always fills buf; 0 when it is
 * readable, -1 when not.
 */
int	 launch_agents_shipped(char *buf, size_t len);
/* The user's file: $XDG_CONFIG_HOME/aisb/agents.yaml or ~/.config/... */
void	 launch_agents_user(char **envp, char *buf, size_t len);

/*
 * Loads the shipped file, then the user's over it (field by field).
 * Either may be NULL or missing (ENOENT): no agents from it.  0, or -1
 * with one line in err (no trailing newline); the caller exits 78.
 */
int	 launch_agents_load_files(struct launch_agents *, const char *shipped,
	    const char *user, char *err, size_t errlen);
/*
 * The same with the pins file between the two: shipped < pins < user.
 * The pins file ($XDG_CONFIG_HOME/aisb/agent-pins.yaml) is written by
 * aisb (launch_agent_pin_write) and holds node, npm and pip only; a
 * version the user writes in agents.yaml wins over it.
 */
int	 launch_agents_load_pinned(struct launch_agents *, const char *shipped,
	    const char *pins, const char *user, char *err, size_t errlen);
void	 launch_agents_pins_path(char **envp, char *buf, size_t len);
/*
 * Sets agent's node, npm or pip pin to value ("" drops it) in the pins
 * file at path, rewritten whole and loaded back before it replaces the
 * old one (an invalid value is refused with the recipe checks' line).
 * For `aisb image build --agent NAME --update`.  0 or -1 with err.
 */
int	 launch_agent_pin_write(const char *path, const char *agent,
	    enum launch_agent_field, const char *value, char *err,
	    size_t errlen);
/*
 * aisb image build --agent NAME --update: asks the registry (a gated
 * session, tools.h) for the newest version of the agent's npm package
 * and pins it (launch_agent_pin_write), saying so on stderr; set is then
 * loaded again.  A version the user's agents.yaml names is left alone,
 * with an error saying where to change it.  The session runs on base
 * (launch_npm_latest).  0 or -1 with err.
 */
int	 launch_agent_update(struct launch_agents *, char **envp,
	    const char *name, const char *base, char *err, size_t errlen);
/* The same with the paths above.  The set is large: allocate it. */
int	 launch_agents_load(struct launch_agents *, char **envp, char *err,
	    size_t errlen);
const struct launch_agent *launch_agent_find(const struct launch_agents *,
	    const char *name);
/* The recipe whose command is cmd (exactly; no path), or NULL. */
const struct launch_agent *launch_agent_by_command(
	    const struct launch_agents *, const char *cmd);
/* "file:line:col" of pos into buf; returns buf. */
const char	*launch_agent_where(const struct launch_agents *,
	    const struct launch_agent_pos *, char *buf, size_t len);

/*
 * The session's policy with the agent's hosts added as allow rules: YAML
 * (malloc'd, into *yaml) in which every rule is preceded by a comment
 * naming where it was written (the policy file's line, or the agents
 * file's), and the policy compiled from it under the name `name`.  Deny
 * rules of base keep winning (policy.h).  The recipe's secrets: entries
 * named in secrets (the session's --secret names, nsecrets of them) make
 * their hosts inspected with those secrets added (a secret's host must
 * be one of the recipe's hosts).  0, or -1 with err.
 */
int	 launch_agent_policy(const struct launch_agents *,
	    const struct launch_agent *, const struct policy *base,
	    const char *name, const char *const *secrets, size_t nsecrets,
	    char **yaml, struct policy **out, char *err, size_t errlen);
/* The recipe's secrets: entry named name, or NULL. */
const struct launch_agent_secret *launch_agent_secret(
	    const struct launch_agent *, const char *name);
/*
 * The agent's hosts that p does not allow, as "host:port host:port" into
 * buf ("" when p allows them all).  A wildcard host is checked with a
 * name under it.  Returns the number missing.
 */
size_t	 launch_agent_missing(const struct launch_agent *,
	    const struct policy *p, char *buf, size_t len);

/*
 * Storage for what launch_agent_spec() points the image spec at: the
 * spec's own entries (the user's --npm/--pip) and the agent's.
 */
#define LAUNCH_AGENT_SPEC_MAX	(256 + 1)
struct launch_agent_lists {
	const char	*npm[LAUNCH_AGENT_SPEC_MAX];
	const char	*pip[LAUNCH_AGENT_SPEC_MAX];
	const char	*homedirs[LAUNCH_AGENT_MAX_CONFIG];
};

struct launch_image_spec;
/*
 * Adds the agent's package, runtime and home folders to spec (image.h).
 * Entries spec already has (--npm, --pip) stay, and win over the
 * agent's entry for the same package.  The lists live in l, which must
 * outlive spec's use.  a NULL: spec is left as it is.
 */
void	 launch_agent_spec(const struct launch_agent *,
	    struct launch_agent_lists *l, struct launch_image_spec *spec);


#endif
