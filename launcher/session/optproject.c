/*
 * What a project config may do with each option (options-int.h, enum
 * oproject): the one place that applies the table's project column.  A
 * project config (.aisb.yaml) comes with the repository, and whoever
 * wrote the repository is not who runs aisb: it may narrow a session,
 * never widen what the session reaches or reads, nor hide what happened
 * in it.  Every refusal names why and the line to put in the user
 * config instead (docs/launcher.md, "What a project config may set").
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "session/options.h"
#include "session/options-int.h"

/*
 * The line the user config would hold instead of the project's value:
 * "key: value", a list's entry in brackets; and the flag, when there is
 * one that takes it.
 */
static void
user_line(enum launch_opt_id id, const char *v, char *line, size_t len,
    char *flag, size_t flaglen)
{
	const struct optdesc	*d = &launch_optdesc[id];
	int			 list = d->type == OT_LIST ||
				    d->type == OT_ENVLIST ||
				    d->type == OT_SECRETLIST;

	snprintf(line, len, "%s: %s%.200s%s", d->name, list ? "[" : "", v,
	    list ? "]" : "");
	flag[0] = '\0';
	if ((d->flags & O_NOFLAG) || d->type == OT_BOOL)
		return;
	launch_opt_flag_name((int)id, flag, flaglen);
	snprintf(flag + strlen(flag), flaglen - strlen(flag), " %.200s", v);
}

/*
 * A limit from a project config: at most what the layers below say
 * (0 there: none), and a limit (0 is none).  1 when v is such, 0 when
 * not, -1 when v is no value of the option at all.
 */
static int
project_lower(const struct launch_opts *o, enum launch_opt_id id,
    const char *v)
{
	struct launch_opts	 n;
	char			 sub[256];
	uint64_t		 was, now;

	memset(&n, 0, sizeof(n));
	if (launch_opt_check(&n, id, v, sub, sizeof(sub)) == -1)
		return -1;
	switch (id) {
	case LO_MEMORY:
		was = o->memory, now = n.memory;
		break;
	case LO_CPUS:
		was = o->cpus_milli, now = n.cpus_milli;
		break;
	case LO_PIDS:
		was = o->pids, now = n.pids;
		break;
	default:
		was = o->timeout, now = n.timeout;
		break;
	}
	return now != 0 && (was == 0 || now <= was);
}

/*
 * 1 when v says what d->only says: one of its '|'-separated words, or
 * for a switch its value (true, yes, 1 alike).
 */
static int
project_only(enum launch_opt_id id, const char *v)
{
	struct launch_opts	 a, b;
	char			 sub[256];
	const char		*w, *bar;
	size_t			 n = strlen(v);

	if (launch_optdesc[id].type != OT_BOOL) {
		for (w = launch_optdesc[id].only; w != NULL; w = bar) {
			if ((bar = strchr(w, '|')) != NULL)
				bar++;
			if (strncmp(w, v, n) == 0 && (w[n] == '\0' ||
			    w[n] == '|'))
				return 1;
		}
		return 0;
	}
	/* the typed views of both, which differ in this option's alone */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (launch_opt_check(&a, id, v, sub, sizeof(sub)) == -1 ||
	    launch_opt_check(&b, id, launch_optdesc[id].only, sub,
	    sizeof(sub)) == -1)
		return 0;
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* What P_ONLY allows, said: "'key: a'" or "'key: a' or 'key: b'". */
static void
only_says(const struct optdesc *d, char *buf, size_t len)
{
	const char	*w, *bar;
	size_t		 n;

	buf[0] = '\0';
	for (w = d->only; w != NULL; w = bar != NULL ? bar + 1 : NULL) {
		bar = strchr(w, '|');
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s'%s: %.*s'", n > 0 ? " or " : "",
		    d->name, (int)(bar != NULL ? (size_t)(bar - w) : strlen(w)),
		    w);
	}
}

/* The table's project column applied (options-int.h). */
int
launch_opt_check_project(const struct launch_opts *o, enum launch_opt_id id,
    const char *v, const char *where, char *err, size_t errlen)
{
	const struct optdesc	*d = &launch_optdesc[id];
	char			 line[320], flag[320], also[400], says[160];
	int			 rc;

	user_line(id, v, line, sizeof(line), flag, sizeof(flag));
	snprintf(also, sizeof(also), "%s%s", flag[0] != '\0' ?
	    ", or pass " : "", flag);
	switch (d->project) {
	case P_ANY:
		return 0;
	case P_POLICY:
		if (o->project_policy)
			return 0;
		snprintf(err, errlen, "%s: a project config may not choose the "
		    "policy (%s); to allow it, set 'project_policy: true' in "
		    "%s", where, d->why, o->user_config);
		return -1;
	case P_ONLY:
		if (project_only(id, v))
			return 0;
		only_says(d, says, sizeof(says));
		snprintf(err, errlen, "%s: a project config may only say %s "
		    "(%s); to have '%s', write it in %s%s", where, says,
		    d->why, line, o->user_config, also);
		return -1;
	case P_LOWER:
		if ((rc = project_lower(o, id, v)) != 0)
			return 0;	/* 1, or -1: the value's own error */
		snprintf(err, errlen, "%s: a project config may only lower "
		    "%s, to at most %s (%s%s%s), and never to 0, no limit "
		    "(%s); to have '%s', write it in %s%s", where, d->name,
		    o->val[id] != NULL && strcmp(o->val[id], "0") != 0 ?
		    o->val[id] : "no limit", launch_src_str(o->src[id]),
		    o->src[id] != LAUNCH_SRC_DEFAULT ? ": " : "",
		    o->src[id] != LAUNCH_SRC_DEFAULT ? o->where[id] : "",
		    d->why, line, o->user_config, also);
		return -1;
	case P_NEVER:
		break;
	}
	snprintf(err, errlen, "%s: a project config may not set '%s' (%s); "
	    "to have it, write '%s' in %s%s", where, d->name, d->why, line,
	    o->user_config, also);
	return -1;
}
