/*
 * What the recipe loader (agent.c) and the recipe files (agent_files.c)
 * share; only they include this.
 */
#ifndef AISB_IMAGE_AGENT_INT_H
#define AISB_IMAGE_AGENT_INT_H

#include <stddef.h>

struct launch_agents;
struct launch_agent;

/*
 * The text of one file (len bytes; path names it in messages) into set.
 * fileno 0 (shipped) adds agents; the others add new ones and override
 * the fields they write of known ones.  0, or -1 with err.
 */
int	 agent_load_text(struct launch_agents *set, const char *path,
	    const char *buf, size_t len, unsigned fileno, char *err,
	    size_t errlen);
/* The agent of set named name, to change, or NULL. */
struct launch_agent *agent_find_mut(struct launch_agents *set,
	    const char *name);

#endif
