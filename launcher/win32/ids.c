/*
 * Run ids and AppContainer profile names.  A profile name is
 * "aisb.run." and the run's 32 hex digits (16 random bytes): unique per
 * run, and recognisable, so that aisb clean never touches a profile it
 * did not make.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "win32/winrun.h"

void
winrun_runid_format(const uint8_t rnd[16], char id[WINRUN_RUNID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		id[2 * i] = hex[rnd[i] >> 4];
		id[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	id[WINRUN_RUNID_LEN] = '\0';
}

int
winrun_runid_valid(const char *id)
{
	int i;

	for (i = 0; i < WINRUN_RUNID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id[WINRUN_RUNID_LEN] == '\0';
}

void
winrun_profile_name(const char *id, char *name, size_t len)
{
	snprintf(name, len, "%s%s", WINRUN_PROFILE_PREFIX, id);
}

int
winrun_profile_valid(const char *name)
{
	size_t n = strlen(WINRUN_PROFILE_PREFIX);

	return strncmp(name, WINRUN_PROFILE_PREFIX, n) == 0 &&
	    winrun_runid_valid(name + n);
}
