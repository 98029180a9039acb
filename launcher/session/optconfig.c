/*
 * The config files and the AISB_* environment as layers of the options
 * (options-int.h).  A project config comes with the repository: what it
 * may set is checked (check_project), and only ever narrows a session.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "file.h"
#include "host/paths.h"
#include "session/options-int.h"

/*
 * What a project config may not do.  Returns -1 with the reason.
 */
static int
check_project(const struct launch_opts *o, enum launch_opt_id id,
    const char *v, const char *where, char *err, size_t errlen)
{
	if (id == LO_POLICY && o->project_policy)
		return 0;
	if (id == LO_POLICY) {
		snprintf(err, errlen, "%s: a project config may not choose the "
		    "policy; to allow it, set 'project_policy: true' in %s",
		    where, o->user_config);
		return -1;
	}
	if (id == LO_NPM || id == LO_PIP) {
		snprintf(err, errlen, "%s: a project config may not add %s "
		    "packages: their install runs the packages' own scripts "
		    "with network access; name them in %s or with --%s",
		    where, launch_optdesc[id].name, o->user_config, launch_optdesc[id].name);
		return -1;
	}
	if (!(launch_optdesc[id].flags & O_PROJECT)) {
		snprintf(err, errlen, "%s: '%s' may not be set by a project "
		    "config (it would widen what the session can reach or "
		    "read); set it in %s or on the command line", where,
		    launch_optdesc[id].name, o->user_config);
		return -1;
	}
	/* a capture the user asked for is not the repository's to drop */
	if (id == LO_RECORD && strcmp(v, "true") != 0 &&
	    strcmp(v, "yes") != 0 && strcmp(v, "1") != 0) {
		snprintf(err, errlen, "%s: a project config may only turn "
		    "record on (record: true), never off", where);
		return -1;
	}
	if (id == LO_AGENT && strcmp(v, "none") != 0) {
		snprintf(err, errlen, "%s: a project config may not choose an "
		    "agent: a recipe adds allow rules to the policy; write "
		    "agent: %.32s in %s or pass --agent %.32s (a project "
		    "config may only say agent: none)", where, v,
		    o->user_config, v);
		return -1;
	}
	if (id == LO_WORKSPACE_MODE && strcmp(v, "snapshot") != 0) {
		snprintf(err, errlen, "%s: a project config may only choose "
		    "workspace_mode: snapshot, never direct", where);
		return -1;
	}
	if ((launch_optdesc[id].flags & O_NARROW) && id == LO_NET &&
	    strcmp(v, "none") != 0) {
		snprintf(err, errlen, "%s: a project config may only narrow the "
		    "network to 'none'", where);
		return -1;
	}
	return 0;
}


/*
 * A config file is one flat YAML mapping: key: scalar, or key: [list].
 * Missing file: fine.  Anything else wrong: an error naming file:line:col.
 */
int
launch_opt_read_config(struct launch_opts *o, const char *path, enum launch_src src,
    char *err, size_t errlen)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	char		*buf = NULL, where[1200];
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
			snprintf(err, errlen, "%s:%zu:%zu: YAML syntax: %s", path,
			    parser.problem_mark.line + 1,
			    parser.problem_mark.column + 1,
			    parser.problem ? parser.problem : "error");
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
			snprintf(err, errlen, "%s: YAML aliases are not allowed",
			    where);
			goto fail_ev;
		case YAML_MAPPING_START_EVENT:
			if (depth++ != 0) {
				snprintf(err, errlen, "%s: nested mappings are "
				    "not part of the config; write key: value",
				    where);
				goto fail_ev;
			}
			break;
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (depth != 1 || id < 0 || inlist ||
			    (launch_optdesc[id].type != OT_LIST &&
			    launch_optdesc[id].type != OT_ENVLIST)) {
				snprintf(err, errlen, "%s: a list is not valid "
				    "here", where);
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
				snprintf(err, errlen, "%s: a config file is a "
				    "mapping of key: value", where);
				goto fail_ev;
			}
			if (memchr(v, '\0', vlen) != NULL) {
				snprintf(err, errlen, "%s: NUL byte", where);
				goto fail_ev;
			}
			if (id < 0) {
				if ((id = launch_opt_find(v, vlen)) < 0) {
					snprintf(err, errlen, "%s: unknown key "
					    "'%.64s'; see aisb --print-config "
					    "for the keys", where, v);
					goto fail_ev;
				}
				break;
			}
			if (src == LAUNCH_SRC_PROJECT &&
			    check_project(o, (enum launch_opt_id)id, v, where,
			    err, errlen) == -1)
				goto fail_ev;
			if (src == LAUNCH_SRC_USER && id == LO_PROJECT_POLICY)
				; /* only here */
			else if (id == LO_PROJECT_POLICY) {
				snprintf(err, errlen, "%s: project_policy belongs "
				    "in the user config", where);
				goto fail_ev;
			}
			if (launch_opt_set(o, (enum launch_opt_id)id, v, src, where,
			    path, err, errlen) == -1)
				goto fail_ev;
			if (!inlist)
				id = -1;
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	rc = 0;
	goto out;
fail_ev:
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&parser);
	explicit_bzero(buf, off);
	free(buf);
	return rc;
}



int
launch_opt_env_layer(struct launch_opts *o, char **envp, char *err, size_t errlen)
{
	char		 var[64], *copy, *tok, *save = NULL;
	const char	*v;
	int		 i, k;

	for (i = 0; i < LO__COUNT; i++) {
		if (i == LO_ENV || i == LO_PROJECT_POLICY)
			continue;	/* secrets and trust: flags and user config only */
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

