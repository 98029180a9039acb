/*
 * aisb clean on Windows: what to do with a lease a runner left.  The
 * caller looks up the recorded pid (OpenProcess + GetProcessTimes) and
 * hands the answer here; this decides, and only ever names the exact
 * profile, stage and drive the lease records, after checking they are
 * the kind of thing a runner makes.  A lease is a file any process of the user
 * could have written: it is never trusted to name an arbitrary folder.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "win32/winrun.h"

static int
sep(char c)
{
	return c == '\\' || c == '/';
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* path strictly inside root (no case on Windows), with no ".." part */
static int
inside(const char *path, const char *root)
{
	size_t n = strlen(root);
	const char *p;
	size_t i;

	while (n > 0 && sep(root[n - 1]))
		n--;
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (path[i] == '\0')
			return 0;
		if (sep(path[i]) && sep(root[i]))
			continue;
		if (lower((unsigned char)path[i]) != lower((unsigned char)root[i]))
			return 0;
	}
	if (!sep(path[n]) || path[n + 1] == '\0' || sep(path[n + 1]))
		return 0;
	for (p = path + n; *p != '\0'; p++)
		if (sep(p[0]) && p[1] == '.' && p[2] == '.' &&
		    (p[3] == '\0' || sep(p[3])))
			return 0;
	/* alternate data streams and device names are not stages */
	return strchr(path + 2, ':') == NULL;
}

static int
absolute(const char *s)
{
	return ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) &&
	    s[1] == ':' && sep(s[2]);
}

enum winrun_clean_action
winrun_clean_decide(const struct winrun_lease *l,
    const struct winrun_proc_seen *seen, const char *stage_root, char *why,
    size_t whylen)
{
	char want[WINRUN_PROFILE_LEN + 1];
	const char *stage;

	if (l->protocol != WINRUN_PROTOCOL || !winrun_runid_valid(l->run_id) ||
	    l->runner_pid == 0) {
		snprintf(why, whylen, "the lease is incomplete");
		return WINRUN_CLEAN_REFUSE;
	}
	if (l->profile[0] != '\0') {
		winrun_profile_name(l->run_id, want, sizeof(want));
		if (strcmp(l->profile, want) != 0) {
			snprintf(why, whylen, "its profile is not %s", want);
			return WINRUN_CLEAN_REFUSE;
		}
	}
	if (l->stage[0] != '\0' && (stage_root == NULL ||
	    !absolute(stage_root) || !absolute(l->stage) ||
	    !inside(l->stage, stage_root))) {
		snprintf(why, whylen, "its stage is not a folder inside %s",
		    stage_root != NULL ? stage_root : "the stage root");
		return WINRUN_CLEAN_REFUSE;
	}
	/* the drive: a letter the runner may map, to a stage in the root */
	if ((l->drive[0] != '\0' || l->drive_target[0] != '\0') &&
	    (!winrun_drive_valid(l->drive) || (stage = winrun_drive_stage(
	    l->drive_target)) == NULL || stage_root == NULL ||
	    !absolute(stage_root) || !absolute(stage) ||
	    !inside(stage, stage_root))) {
		snprintf(why, whylen, "its drive is not a letter mapped to a "
		    "folder inside %s", stage_root != NULL ? stage_root :
		    "the stage root");
		return WINRUN_CLEAN_REFUSE;
	}
	if (seen->alive && seen->start == l->runner_start) {
		snprintf(why, whylen, "runner %lu is alive",
		    (unsigned long)l->runner_pid);
		return WINRUN_CLEAN_SKIP_LIVE;
	}
	snprintf(why, whylen, seen->alive ? "pid %lu is another process now" :
	    "runner %lu is gone", (unsigned long)l->runner_pid);
	return WINRUN_CLEAN_REMOVE;
}
