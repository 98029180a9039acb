/*
 * The stage's drive (docs/windows.md, "The drive root"): the pure part.
 * The runner maps a free per-user DOS drive letter to the stage with
 * DefineDosDevice(DDD_RAW_TARGET_PATH), so that a command asking for
 * the root of its drive ("\", "cd \", Get-PSDrive) sees the stage and
 * not the real drive.  Which letter, the raw target it maps to, and
 * whether a lease's drive may be removed by aisb clean are decided here
 * (unit-tested on Linux); drive_win32.c makes the calls.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "win32/winrun.h"

int
winrun_drive_target(const char *stage, char *out, size_t len)
{
	int n;

	/* an absolute drive path only: X:\... (not a share, not a device) */
	if (!(((stage[0] >= 'A' && stage[0] <= 'Z') || (stage[0] >= 'a' &&
	    stage[0] <= 'z')) && stage[1] == ':' && stage[2] == '\\'))
		return -1;
	n = snprintf(out, len, "%s%s", WINRUN_DRIVE_PREFIX, stage);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

char
winrun_drive_pick(uint32_t used)
{
	int c;

	/* from Z down: the letters users and installers take last */
	for (c = 'Z'; c >= WINRUN_DRIVE_FIRST; c--)
		if ((used & (1u << (c - 'A'))) == 0)
			return (char)c;
	return 0;
}

int
winrun_drive_valid(const char *s)
{
	return s[0] >= WINRUN_DRIVE_FIRST && s[0] <= 'Z' && s[1] == ':' &&
	    s[2] == '\0';
}

const char *
winrun_drive_stage(const char *target)
{
	size_t n = sizeof(WINRUN_DRIVE_PREFIX) - 1;

	return strncmp(target, WINRUN_DRIVE_PREFIX, n) == 0 ? target + n :
	    NULL;
}
