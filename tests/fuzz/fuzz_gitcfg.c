/*
 * libFuzzer: git's config syntax as aisb reads it (snap/gitsyntax.c), the
 * stage's sanitized .git/config and the keys offered back to a host's
 * config (snap/gitkeys.c): a direct session reads the config its command
 * wrote, a snapshot session the one the repository came with.  Whatever
 * the bytes: no crash, no read past the input; every name read is lower
 * case within its bound, every subsection and value within theirs; the
 * sanitized copy, read again, holds only the keys the stage keeps, and no
 * URL in it carries a user or password; a key the allowlist refuses is
 * never offered, whatever its value.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snap/snap.h"
#include "snap/snap-int.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const remotes[] = { "origin", NULL };

static int
name_ok(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || n >= SNAP_GITCFG_NAME_MAX)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    *s == '-' || *s == '.'))
			return 0;
	return 1;
}

static int
each(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	const char	*why;

	(void)arg;
	if (!name_ok(sect) || !name_ok(key) || strchr(key, '.') != NULL ||
	    (sub != NULL && strlen(sub) >= SNAP_GITCFG_SUB_MAX) ||
	    (value != NULL && strlen(value) >= SNAP_GITCFG_VALUE_MAX))
		abort();
	why = snap_git_key_back(sect, sub, key, value, remotes);
	/* only remote.* and branch.* with a name ever go back */
	if (why == NULL && (sub == NULL || (strcmp(sect, "remote") != 0 &&
	    strcmp(sect, "branch") != 0)))
		abort();
	return 0;
}

static int
staged(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	const char	*p, *at, *sl;

	(void)arg;
	if (!snap_git_key_staged(sect, sub, key))
		abort();
	if (value != NULL && (strcmp(key, "url") == 0 ||
	    strcmp(key, "pushurl") == 0) && (p = strstr(value, "://")) !=
	    NULL) {
		p += 3;
		at = strchr(p, '@');
		sl = strchr(p, '/');
		if (at != NULL && (sl == NULL || at < sl))
			abort();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char	*copy, *clean;
	size_t	 clen;

	/* a copy of exactly the text: reads past it are caught */
	if ((copy = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(copy, data, len);
	(void)snap_gitcfg_parse(copy, len, each, NULL);
	if ((clean = snap_git_config_sanitize(copy, len, &clen)) != NULL) {
		if (snap_gitcfg_parse(clean, clen, staged, NULL) == -1)
			abort();
		free(clean);
	}
	free(copy);
	return 0;
}
