/*
 * What the option table's files share (optvalue.c: the table, each value
 * checked and set; optconfig.c: the config files and AISB_*; options.c: the
 * flags, the resolution, on top of them).  Only they include this.
 */
#ifndef AISB_SESSION_OPTIONS_INT_H
#define AISB_SESSION_OPTIONS_INT_H

#include <stddef.h>

#include "session/options.h"

enum otype { OT_PATH, OT_NET, OT_WORD, OT_LIST, OT_SIZE, OT_CPUS, OT_UINT,
	OT_DURATION, OT_BOOL, OT_ENVLIST, OT_CHOICE, OT_SECRETLIST };

#define O_PROJECT	0x01	/* a project config may set it */
#define O_NARROW	0x02	/* ... but only to narrow it (see check_project) */

struct optdesc {
	const char	*name;		/* config key; flag is --name with '_' -> '-' */
	enum otype	 type;
	unsigned	 flags;
	const char	*def;		/* NULL: computed at resolve time */
	const char	*help;
	const char	*arg;		/* the value's name in --help; NULL: none */
	const char	*defhelp;	/* the default as --help says it */
};

#define O_NOFLAG	0x04	/* no command-line flag (user config only) */

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
 * One config file into o at layer src (optconfig.c): a missing file is
 * none.  0, or -1 with every error in err, one a line.
 */
int	 launch_opts_read_config(struct launch_opts *o, const char *path,
	    enum launch_src src, char *err, size_t errlen);
/* The AISB_* variables of envp into o (optconfig.c).  0, or -1 with err. */
int	 launch_opts_env_layer(struct launch_opts *o, char **envp, char *err,
	    size_t errlen);

#endif
