/*
 * One grammar per kind of name (names.h).  Pure: no allocation, every
 * input bounded before it is read past its first byte.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "image/names.h"

static int
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int
is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* 1 when every byte of s is alnum or in set. */
static int
alnum_or(const char *s, size_t len, const char *set)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (!is_alnum(s[i]) && (s[i] == '\0' ||
		    strchr(set, s[i]) == NULL))
			return 0;
	return 1;
}

/*
 * One part of an npm name (the scope or the name after it), as npm's
 * validate-npm-package-name takes new names: lower case, URL-safe, not
 * starting with '.' or '_' (nor '-' here, so that it is never a flag).
 */
static int
npm_part_ok(const char *s, size_t len)
{
	size_t	i;

	if (len == 0 || !is_lower_alnum(s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-' && s[i] != '.' &&
		    s[i] != '_' && s[i] != '~')
			return 0;
	return 1;
}

int
launch_npm_name_ok(const char *name)
{
	const char	*slash;
	size_t		 len = strlen(name);

	if (len == 0 || len > LAUNCH_TOOL_MAX)
		return 0;
	if (name[0] != '@')
		return npm_part_ok(name, len);
	/* @scope/name */
	if ((slash = strchr(name, '/')) == NULL)
		return 0;
	return npm_part_ok(name + 1, (size_t)(slash - name - 1)) &&
	    npm_part_ok(slash + 1, len - (size_t)(slash - name) - 1);
}

/* digits, no leading zero but for "0" itself; the count consumed or 0 */
static size_t
semver_number(const char *s)
{
	size_t	n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n > 1 && s[0] == '0')
		return 0;
	return n;
}

/* The length of the X.Y.Z that starts v, or 0. */
static size_t
semver_core(const char *v)
{
	size_t	i, n, k;

	for (i = 0, k = 0; k < 3; k++) {
		if ((n = semver_number(v + i)) == 0)
			return 0;
		i += n;
		if (k < 2 && v[i++] != '.')
			return 0;
	}
	return i;
}

int
launch_npm_version_ok(const char *v)
{
	size_t	len = strlen(v), i;

	if (len == 0 || len > LAUNCH_VERSION_MAX ||
	    (i = semver_core(v)) == 0)
		return 0;
	if (v[i] == '-' || v[i] == '+') {
		if (v[i + 1] == '\0')
			return 0;
		return alnum_or(v + i + 1, len - i - 1, ".-+");
	}
	return v[i] == '\0';
}

int
launch_node_version_ok(const char *v)
{
	size_t	len = strlen(v);

	return len > 0 && len <= LAUNCH_VERSION_MAX && semver_core(v) == len;
}

const char *
launch_npm_at(const char *e)
{
	/* the version's '@', not a scope's */
	return e[0] != '\0' ? strrchr(e + 1, '@') : NULL;
}

int
launch_npm_entry_ok(const char *e, char *err, size_t errlen)
{
	const char	*at = launch_npm_at(e);
	char		 name[LAUNCH_TOOL_MAX + 1];
	size_t		 len = strlen(e);

	if (len > LAUNCH_TOOL_MAX + 1 + LAUNCH_VERSION_MAX || at == NULL ||
	    (size_t)(at - e) > LAUNCH_TOOL_MAX) {
		snprintf(err, errlen, "npm '%.64s': write NAME@VERSION with an "
		    "exact version (semver@7.6.3, @scope/name@1.0.0)", e);
		return -1;
	}
	memcpy(name, e, (size_t)(at - e));
	name[at - e] = '\0';
	if (!launch_npm_name_ok(name)) {
		snprintf(err, errlen, "npm '%.64s': '%.64s' is not an npm "
		    "package name (lower case letters, digits, - . _ ~; "
		    "@scope/name)", e, name);
		return -1;
	}
	if (!launch_npm_version_ok(at + 1)) {
		snprintf(err, errlen, "npm '%.64s': '%.32s' is not an exact "
		    "version (X.Y.Z, no ranges or tags)", e, at + 1);
		return -1;
	}
	return 0;
}

int
launch_pip_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= LAUNCH_TOOL_MAX && is_alnum(s[0]) &&
	    is_alnum(s[len - 1]) && alnum_or(s, len, "._-");
}

int
launch_pip_version_ok(const char *v)
{
	size_t	len = strlen(v);

	return len > 0 && len <= LAUNCH_VERSION_MAX && v[0] >= '0' &&
	    v[0] <= '9' && alnum_or(v, len, ".!+_-");
}

int
launch_pip_entry_ok(const char *e, char *err, size_t errlen)
{
	const char	*eq = strstr(e, "==");

	if (eq == NULL || !launch_pip_name_ok(e, (size_t)(eq - e))) {
		snprintf(err, errlen, "pip '%.64s': write NAME==VERSION with a "
		    "PEP 508 name (letters, digits, . _ -)", e);
		return -1;
	}
	if (!launch_pip_version_ok(eq + 2)) {
		snprintf(err, errlen, "pip '%.64s': '%.32s' is not an exact "
		    "version", e, eq + 2);
		return -1;
	}
	return 0;
}

int
launch_deb_package_ok(const char *s)
{
	size_t	i, len = strlen(s);

	if (len < 2 || len > LAUNCH_PACKAGE_NAME_MAX || !is_lower_alnum(s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '+' && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return 1;
}

int
launch_env_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= LAUNCH_ENV_NAME_MAX &&
	    !(s[0] >= '0' && s[0] <= '9') && alnum_or(s, len, "_");
}

int
launch_homedir_ok(const char *s)
{
	size_t	len = strlen(s), i, part = 0;

	if (len == 0 || len > LAUNCH_HOMEDIR_MAX || s[0] == '/' ||
	    s[len - 1] == '/')
		return 0;
	for (i = 0; i <= len; i++) {
		if (s[i] == '/' || s[i] == '\0') {
			if (part == 0 || (part == 1 && s[i - 1] == '.') ||
			    (part == 2 && s[i - 1] == '.' && s[i - 2] == '.'))
				return 0;
			part = 0;
			continue;
		}
		if (!is_alnum(s[i]) && strchr("._-", s[i]) == NULL)
			return 0;
		part++;
	}
	return 1;
}

int
launch_agent_name_ok(const char *s)
{
	size_t	len = strlen(s), i;

	if (len == 0 || len > LAUNCH_AGENT_NAME_MAX || !is_lower_alnum(s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!is_lower_alnum(s[i]) && strchr("-_.", s[i]) == NULL)
			return 0;
	return 1;
}
