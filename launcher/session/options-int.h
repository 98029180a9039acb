/*
 * What the option table's files share (optvalue.c: the table, each value
 * What the option table's files share (optvalue.c: the table, each value
 * checked and set; optproject.c: what a project config may do with each;
 * optconfig.c: the config files and AISB_*; options.c: the flags, the
 * resolution, on top of them).  Only they include this.
 */
#ifndef AISB_SESSION_OPTIONS_INT_H
#define AISB_SESSION_OPTIONS_INT_H

#include <stddef.h>

#include "session/options.h"

enum otype { OT_PATH, OT_NET, OT_WORD, OT_LIST, OT_SIZE, OT_CPUS, OT_UINT,
	OT_DURATION, OT_BOOL, OT_ENVLIST, OT_CHOICE, OT_SECRETLIST };

/*
 * What a project config (.aisb.yaml, which comes with the repository)
 * may do with an option: every option says it, in the table, and
 * launch_opt_check_project (optproject.c) applies it.  It may narrow a
 * session, never widen what it reaches or reads, nor hide what happened
 * in it.
 */
enum oproject {
	P_NEVER = 0,	/* refused, with the line for the user config */
	P_ANY,		/* any value: the table's comment says why none widens */
	P_ONLY,		/* only the value .only (net: none, agent: none...) */
	P_LOWER,	/* a limit: at most the lower layers' value, never 0 */
	P_POLICY,	/* only with project_policy: true in the user config */
};

struct optdesc {
	const char	*name;		/* config key; flag is --name with '_' -> '-' */
	enum otype	 type;
	unsigned	 flags;
	const char	*def;		/* NULL: computed at resolve time */
	const char	*help;
	const char	*arg;		/* the value's name in --help; NULL: none */
	const char	*defhelp;	/* the default as --help says it */
	enum oproject	 project;	/* what a project config may do */
	const char	*only;		/* P_ONLY: the one value it may say */
	const char	*why;		/* why it may not do more: the message */
};

#define O_NOFLAG	0x04	/* no command-line flag (user config only) */
#define O_NOENV		0x08	/* no AISB_* variable (secrets and trust) */

/* The one table of session options (optvalue.c). */
extern const struct optdesc launch_optdesc[LO__COUNT];

/* The option named name (len bytes), or -1. */
int	 launch_opt_find(const char *name, size_t len);
/*
 * Sets one option from one layer, checked: lists (env) accumulate over
 * the layers, packages are replaced by a higher layer's first entry; a
 * relative path is relative to base_file's folder.  0, or -1 with err
 * naming where.
 */
int	 launch_opt_set(struct launch_opts *, enum launch_opt_id,
	    const char *v, enum launch_src, const char *where,
	    const char *base_file, char *err, size_t errlen);
/* The list (and its count) of list option id. */
struct launch_item **launch_opt_list(struct launch_opts *,
	    enum launch_opt_id id, size_t **n);
/* One value checked for its option's type; the typed view filled. */
int	 launch_opt_check(struct launch_opts *, enum launch_opt_id,
	    const char *v, char *err, size_t errlen);
/*
 * What a project config may do with option id, by the table's project
 * column (optproject.c): 0, or -1 with err (naming where, why, and the
 * line for the user config instead).  A value that is no value of the
 * option passes here and fails its own check after.
 */
int	 launch_opt_check_project(const struct launch_opts *,
	    enum launch_opt_id, const char *v, const char *where, char *err,
	    size_t errlen);
/*
 * The flag of option id as help and completion show it: "--package" for
 * packages, "--no-NAME" for a switch that is on by default.
 */
void	 launch_opt_flag_name(int id, char *flag, size_t len);
/*
 * One config file into o at layer src (optconfig.c): a missing file is
 * none.  0, or -1 with every error in err, one a line.
 */
int	 launch_opts_read_config(struct launch_opts *o, const char *path,
	    enum launch_src src, char *err, size_t errlen);
/* The AISB_* variables of envp into o (optconfig.c).  0, or -1 with err. */
int	 launch_opts_env_layer(struct launch_opts *o, char **envp, char *err,
	    size_t errlen);

#endif
