/*
 * The recipe files (agent.h): which are read (the shipped copy beside an
 * uninstalled aisb or the installed one, aisb's pins, the user's), each
 * loaded over the one before (agent.c reads the text), what a merged
 * recipe needs, the pins file rewritten whole, and the look-ups of a
 * loaded set.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "host/paths.h"
#include "image/agent.h"
#include "image/agent-int.h"

#ifndef AISB_AGENTS_FILE
#define AISB_AGENTS_FILE	"/usr/local/share/aisb/agents.yaml"
#endif

static int
read_file(const char *path, char **out, size_t *outlen, int *missing,
    char *err, size_t errlen)
{
	*missing = 0;
	if ((*out = file_read_bounded(path, LAUNCH_AGENTS_MAX_FILE, outlen,
	    err, errlen)) == NULL) {
		if (errno != ENOENT)
			return -1;
		*missing = 1;
	}
	return 0;
}


/* One file (at most LAUNCH_AGENTS_MAX_FILE bytes) into set: load_text. */
static int
load_one(struct launch_agents *set, const char *path, unsigned fileno,
    char *err, size_t errlen)
{
	char	*buf = NULL;
	size_t	 len = 0;
	int	 missing, rc;

	if (path == NULL || path[0] == '\0')
		return 0;
	if (read_file(path, &buf, &len, &missing, err, errlen) == -1)
		return -1;
	if (missing)
		return 0;
	rc = agent_load_text(set, path, buf, len, fileno, err, errlen);
	free(buf);
	return rc;
}


/* What a whole recipe needs, once the files are merged. */
static int
check_merged(const struct launch_agents *set, char *err, size_t errlen)
{
	char	 where[1100];
	size_t	 i;

	for (i = 0; i < set->n; i++) {
		const struct launch_agent *a = &set->a[i];

		if (a->node[0] != '\0' && a->npm[0] == '\0') {
			snprintf(err, errlen, "%s: agent '%s': node: a Node "
			    "runtime with no npm package; add npm: "
			    "\"name@1.2.3\" or drop node:",
			    launch_agent_where(set, &a->field[LAF_NODE], where,
			    sizeof(where)), a->name);
			return -1;
		}
	}
	return 0;
}


int
launch_agents_load_files(struct launch_agents *set, const char *shipped,
    const char *user, char *err, size_t errlen)
{
	return launch_agents_load_pinned(set, shipped, NULL, user, err,
	    errlen);
}


int
launch_agents_load_pinned(struct launch_agents *set, const char *shipped,
    const char *pins, const char *user, char *err, size_t errlen)
{
	size_t	 i;

	memset(set, 0, sizeof(*set));
	if (load_one(set, shipped, LAUNCH_AGENTS_SHIPPED, err, errlen) == -1 ||
	    load_one(set, pins, LAUNCH_AGENTS_PINS, err, errlen) == -1 ||
	    load_one(set, user, LAUNCH_AGENTS_USER, err, errlen) == -1)
		return -1;
	for (i = 0; i < set->n; i++)
		if (set->a[i].command[0] == '\0')
			snprintf(set->a[i].command, sizeof(set->a[i].command),
			    "%s", set->a[i].name);
	return check_merged(set, err, errlen);
}


int
launch_agents_shipped(char *buf, size_t len)
{
	/* a copy beside aisb means uninstalled (paths.h) */
	if (launch_beside_self(LAUNCH_AGENTS_BUILT_NAME, buf, len) == 0 &&
	    access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s", AISB_AGENTS_FILE);
	return access(buf, R_OK) == 0 ? 0 : -1;
}


void
launch_agents_user(char **envp, char *buf, size_t len)
{
	const char	*xdg = launch_getenv(envp, "XDG_CONFIG_HOME", 15);
	const char	*home = launch_getenv(envp, "HOME", 4);

	if (xdg != NULL && xdg[0] == '/')
		snprintf(buf, len, "%s/aisb/agents.yaml", xdg);
	else if (home != NULL && home[0] == '/')
		snprintf(buf, len, "%s/.config/aisb/agents.yaml", home);
	else
		buf[0] = '\0';
}


void
launch_agents_pins_path(char **envp, char *buf, size_t len)
{
	char	*slash;

	launch_agents_user(envp, buf, len);
	if ((slash = strrchr(buf, '/')) != NULL)
		snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "%s",
		    "agent-pins.yaml");
}


int
launch_agents_load(struct launch_agents *set, char **envp, char *err,
    size_t errlen)
{
	char	 shipped[PATH_MAX], user[PATH_MAX], pins[PATH_MAX];

	(void)launch_agents_shipped(shipped, sizeof(shipped));
	launch_agents_user(envp, user, sizeof(user));
	launch_agents_pins_path(envp, pins, sizeof(pins));
	return launch_agents_load_pinned(set, shipped, pins, user, err,
	    errlen);
}


/*
 * Rewrites the pins file with agent's field set to value: the file is
 * aisb's own (no comments of the user's to keep), so it is generated
 * whole from what it held, checked by loading the text as the file would
 * be loaded, and only then written (file_write_atomic: whole or not at
 * all).  value "" drops the pin.
 */
int
launch_agent_pin_write(const char *path, const char *agent,
    enum launch_agent_field f, const char *value, char *err, size_t errlen)
{
	struct launch_agents	*cur;
	struct launch_agent	*a;
	char			*text = NULL, dir[PATH_MAX];
	size_t			 len = 0, i;
	int			 rc = -1, k;
	FILE			*out;
	static const enum launch_agent_field pinned[] = { LAF_NODE, LAF_NPM,
	    LAF_PIP };

	if (f != LAF_NODE && f != LAF_NPM && f != LAF_PIP) {
		snprintf(err, errlen, "only node, npm and pip are pinned");
		return -1;
	}
	if (!launch_agent_name_ok(agent) || strlen(value) >= LAUNCH_AGENT_VALUE_MAX ||
	    strpbrk(value, "\"\\\n\r") != NULL) {
		snprintf(err, errlen, "pin: bad agent name or value");
		return -1;
	}
	if ((cur = calloc(1, sizeof(*cur))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (load_one(cur, path, LAUNCH_AGENTS_PINS, err, errlen) == -1)
		goto out;
	if ((a = agent_find_mut(cur, agent)) == NULL) {
		if (cur->n >= LAUNCH_AGENTS_MAX) {
			snprintf(err, errlen, "%s: more than %d agents", path,
			    LAUNCH_AGENTS_MAX);
			goto out;
		}
		a = &cur->a[cur->n++];
		snprintf(a->name, sizeof(a->name), "%s", agent);
	}
	a->field[f].line = value[0] != '\0';
	snprintf(f == LAF_NODE ? a->node : f == LAF_NPM ? a->npm : a->pip,
	    f == LAF_NODE ? sizeof(a->node) : sizeof(a->npm), "%s", value);
	if ((out = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fprintf(out, "# Versions pinned by aisb (image build --update): "
	    "rewritten whole by aisb.\n# Your own pins and changes go in "
	    "agents.yaml next to it, which wins.\nversion: 1\nagents:\n");
	for (i = 0; i < cur->n; i++) {
		a = &cur->a[i];
		for (k = 0; k < 3; k++)
			if (a->field[pinned[k]].line != 0)
				break;
		if (k == 3)
			continue;	/* nothing pinned any more */
		fprintf(out, "  %s:\n", a->name);
		for (k = 0; k < 3; k++) {
			enum launch_agent_field pf = pinned[k];

			if (a->field[pf].line == 0)
				continue;
			fprintf(out, "    %s: \"%s\"\n", launch_agent_field_name(pf),
			    pf == LAF_NODE ? a->node : pf == LAF_NPM ? a->npm :
			    a->pip);
		}
	}
	if (fclose(out) != 0 || text == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if (strrchr(dir, '/') != NULL) {
		*strrchr(dir, '/') = '\0';
		if (dir[0] != '\0' && launch_mkdirs(dir) == -1) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			goto out;
		}
	}
	/* what is written must load, with the checks of any recipe */
	memset(cur, 0, sizeof(*cur));
	if (len > LAUNCH_AGENTS_MAX_FILE) {
		snprintf(err, errlen, "%s: would be larger than %d bytes", path,
		    LAUNCH_AGENTS_MAX_FILE);
		goto out;
	}
	if (agent_load_text(cur, path, text, len, LAUNCH_AGENTS_PINS, err,
	    errlen) == -1)
		goto out;
	if (file_write_atomic(path, text, len, 0644, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(text);
	free(cur);
	return rc;
}


const struct launch_agent *
launch_agent_find(const struct launch_agents *set, const char *name)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->a[i].name, name) == 0)
			return &set->a[i];
	return NULL;
}


const struct launch_agent *
launch_agent_by_command(const struct launch_agents *set, const char *cmd)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->a[i].command, cmd) == 0)
			return &set->a[i];
	return NULL;
}


const char *
launch_agent_where(const struct launch_agents *set,
    const struct launch_agent_pos *pos, char *buf, size_t len)
{
	const char	*file = pos->file < 3 ? set->files[pos->file] : "?";

	if (pos->line == 0)
		snprintf(buf, len, "%s", file);
	else
		snprintf(buf, len, "%s:%u:%u", file, pos->line, pos->col);
	return buf;
}
