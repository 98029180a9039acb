/*
 * The layers under the flags (options.c applies them in order): the
 * config files, ~/.config/aisb/config.yaml and a workspace's .aisb.yaml,
 * each one flat YAML mapping read whole within LAUNCH_MAX_CONFIG, with
 * what a project config may not set (optproject.c) and every error of a
 * file reported, each with its place and, for a key no option has, the
 * nearest one; then the AISB_* environment.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "file.h"
#include "near.h"
#include "termsafe.h"
#include "host/paths.h"
#include "session/options.h"
#include "session/options-int.h"

/*
 * The errors of one config file, all of them: each on a line of its own
 * in err (those past its size are counted, not shown), as termsafe.h
 * shows text: an error quotes the file, and a workspace's .aisb.yaml is
 * the repository's to write ("\e[2J" in a YAML string is an ESC).
 */
struct cfg_errs {
	char	*err;
	size_t	 errlen, used;
	int	 n, lost;
};

static void
cfg_err(struct cfg_errs *e, const char *msg)
{
	if (e->n++ > 0 && e->used + 1 < e->errlen)
		e->err[e->used++] = '\n';
	if (e->used + strlen(msg) + 1 >= e->errlen) {
		e->lost++;
		return;
	}
	snprintf(e->err + e->used, e->errlen - e->used, "%s", msg);
	term_clean_str(e->err + e->used, 0);
	e->used += strlen(e->err + e->used);
}

/* "unknown key 'polcy': did you mean 'policy'?", and its place */
static void
unknown_key(struct cfg_errs *e, const char *where, const char *v,
    size_t vlen)
{
	const char	*cand[LO__COUNT];
	char		 msg[1400];
	int		 i, pick;

	for (i = 0; i < LO__COUNT; i++)
		cand[i] = launch_optdesc[i].name;
	pick = near_pick(v, vlen, cand, LO__COUNT);
	snprintf(msg, sizeof(msg), "%s: unknown key '%.64s'%s%s%s; see aisb "
	    "--print-config for the keys", where, v, pick != -1 ?
	    ": did you mean '" : "", pick != -1 ? cand[pick] : "", pick != -1 ?
	    "'?" : "");
	cfg_err(e, msg);
}

/*
 * One scalar at the top level: a key (*id becomes its option, or -2 for
 * an unknown one, whose value is skipped), or the value of *id.  Errors
 * go to e and reading goes on.
 */
static void
config_scalar(struct launch_opts *o, const char *path, enum launch_src src,
    const char *where, const char *v, size_t vlen, int *id, int inlist,
    struct cfg_errs *e)
{
	char	 msg[4096];

	if (*id == -1) {
		if ((*id = launch_opt_find(v, vlen)) < 0) {
			unknown_key(e, where, v, vlen);
			*id = -2;
		}
		return;
	}
	if (*id == -2)
		;		/* the value of an unknown key */
	else if (src == LAUNCH_SRC_PROJECT &&
	    launch_opt_check_project(o, (enum launch_opt_id)*id, v, where, msg,
	    sizeof(msg)) == -1)
		cfg_err(e, msg);
	else if (*id == LO_PROJECT_POLICY && src != LAUNCH_SRC_USER) {
		snprintf(msg, sizeof(msg), "%s: project_policy belongs in the "
		    "user config", where);
		cfg_err(e, msg);
	} else if (launch_opt_set(o, (enum launch_opt_id)*id, v, src, where,
	    path, msg, sizeof(msg)) == -1)
		cfg_err(e, msg);
	if (!inlist)
		*id = -1;
}

/*
 * A config file is one flat YAML mapping: key: scalar, or key: [list].
 * Missing file: fine.  Unknown keys and bad values are errors naming
 * file:line:col, every one of them (reading goes on); YAML that is not
 * such a mapping stops at its first.
 */
int
launch_opts_read_config(struct launch_opts *o, const char *path, enum launch_src src,
    char *err, size_t errlen)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	struct cfg_errs	 e = { err, errlen, 0, 0, 0 };
	char		*buf = NULL, where[1200], msg[1400];
	int		 rc = -1, depth = 0, id = -1, done = 0, inlist = 0;
	size_t		 off = 0;

	if ((buf = file_read_bounded(path, LAUNCH_MAX_CONFIG, &off, err,
	    errlen)) == NULL)
		return errno == ENOENT ? 0 : -1;

	if (!yaml_parser_initialize(&parser)) {
		free(buf);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (unsigned char *)buf, off);
	while (!done) {
		unsigned line, col;

		if (!yaml_parser_parse(&parser, &ev)) {
			snprintf(msg, sizeof(msg), "%s:%zu:%zu: YAML syntax: %s",
			    path, parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "error");
			cfg_err(&e, msg);
			goto out;
		}
		line = (unsigned)ev.start_mark.line + 1;
		col = (unsigned)ev.start_mark.column + 1;
		snprintf(where, sizeof(where), "%s:%u:%u", path, line, col);
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_ALIAS_EVENT:
			snprintf(msg, sizeof(msg), "%s: YAML aliases are not "
			    "allowed", where);
			goto fail_ev;
		case YAML_MAPPING_START_EVENT:
			if (depth++ != 0) {
				snprintf(msg, sizeof(msg), "%s: nested mappings "
				    "are not part of the config; write key: "
				    "value", where);
				goto fail_ev;
			}
			break;
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (depth != 1 || id == -1 || inlist || (id >= 0 &&
			    launch_optdesc[id].type != OT_LIST &&
			    launch_optdesc[id].type != OT_ENVLIST &&
			    launch_optdesc[id].type != OT_SECRETLIST)) {
				snprintf(msg, sizeof(msg), "%s: a list is not "
				    "valid here", where);
				goto fail_ev;
			}
			inlist = 1;
			break;
		case YAML_SEQUENCE_END_EVENT:
			inlist = 0;
			id = -1;
			break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			size_t vlen = ev.data.scalar.length;

			if (depth != 1) {
				snprintf(msg, sizeof(msg), "%s: a config file "
				    "is a mapping of key: value", where);
				goto fail_ev;
			}
			if (memchr(v, '\0', vlen) != NULL) {
				snprintf(msg, sizeof(msg), "%s: NUL byte",
				    where);
				goto fail_ev;
			}
			config_scalar(o, path, src, where, v, vlen, &id,
			    inlist, &e);
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	rc = e.n == 0 ? 0 : -1;
	goto out;
fail_ev:
	cfg_err(&e, msg);
	yaml_event_delete(&ev);
out:
	if (e.lost > 0 && e.used + 48 < errlen)
		snprintf(err + e.used, errlen - e.used, "\n(and %d more "
		    "error%s)", e.lost, e.lost == 1 ? "" : "s");
	yaml_parser_delete(&parser);
	explicit_bzero(buf, off);
	free(buf);
	return rc;
}

/* ---- AISB_* ----------------------------------------------------------- */

int
launch_opts_env_layer(struct launch_opts *o, char **envp, char *err, size_t errlen)
{
	char		 var[64], *copy, *tok, *save = NULL;
	const char	*v;
	int		 i, k;

	for (i = 0; i < LO__COUNT; i++) {
		/* secrets, trust and the user config's own keys (O_NOFLAG):
		 * never from an environment a tool may set */
		if (launch_optdesc[i].flags & (O_NOENV | O_NOFLAG))
			continue;
		snprintf(var, sizeof(var), "AISB_");
		for (k = 0; launch_optdesc[i].name[k] != '\0' && k < 50; k++)
			var[5 + k] = (char)toupper((unsigned char)launch_optdesc[i].name[k]);
		var[5 + k] = '\0';
		if ((v = launch_getenv(envp, var, strlen(var))) == NULL)
			continue;
		if (launch_optdesc[i].type != OT_LIST) {
			if (launch_opt_set(o, (enum launch_opt_id)i, v, LAUNCH_SRC_ENV,
			    var, NULL, err, errlen) == -1)
				return -1;
			continue;
		}
		if ((copy = strdup(v)) == NULL)
			return -1;
		for (tok = strtok_r(copy, " \t,", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t,", &save))
			if (launch_opt_set(o, (enum launch_opt_id)i, tok,
			    LAUNCH_SRC_ENV, var, NULL, err, errlen) == -1) {
				free(copy);
				return -1;
			}
		free(copy);
	}
	return 0;
}
