/*
 * The command's environment from the launcher's env file (envfile.h).
 *
 * Checked whole before anything is set, so a bad file leaves the
 * environment as it was and the enforcer refuses to run the command.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enforcer/envfile.h"
#include "file.h"

/* Length of the NAME before '=', or 0 when the line is not NAME=... */
static size_t
name_len(const char *line, size_t n)
{
	size_t	 i;

	for (i = 0; i < n && line[i] != '='; i++) {
		char	 c = line[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    c == '_' || (i > 0 && c >= '0' && c <= '9')))
			return 0;
	}
	return i < n && i > 0 && i <= ENF_ENV_MAX_NAME ? i : 0;
}

/* One pass: check (set == 0) or set (set == 1).  Count, or -1. */
static int
walk(const char *buf, size_t len, int set, char *err, size_t errlen)
{
	char		 name[ENF_ENV_MAX_NAME + 1], *value;
	size_t		 off = 0, n, nl, lineno = 0;
	int		 count = 0;

	while (off < len) {
		const char	*line = buf + off, *end;

		lineno++;
		end = memchr(line, '\n', len - off);
		n = end != NULL ? (size_t)(end - line) : len - off;
		off += n + (end != NULL);
		if (n == 0 || line[0] == '#')
			continue;
		if (memchr(line, '\0', n) != NULL) {
			snprintf(err, errlen, "line %zu: a NUL byte", lineno);
			return -1;
		}
		if ((nl = name_len(line, n)) == 0) {
			snprintf(err, errlen, "line %zu: not NAME=VALUE (NAME "
			    "of letters, digits and '_', at most %d)", lineno,
			    ENF_ENV_MAX_NAME);
			return -1;
		}
		if (++count > ENF_ENV_MAX_VARS) {
			snprintf(err, errlen, "more than %d variables",
			    ENF_ENV_MAX_VARS);
			return -1;
		}
		if (!set)
			continue;
		memcpy(name, line, nl);
		name[nl] = '\0';
		if ((value = strndup(line + nl + 1, n - nl - 1)) == NULL ||
		    setenv(name, value, 1) == -1) {
			snprintf(err, errlen, "line %zu: %s: %s", lineno, name,
			    strerror(errno));
			if (value != NULL) {
				explicit_bzero(value, strlen(value));
				free(value);
			}
			return -1;
		}
		explicit_bzero(value, strlen(value));
		free(value);
	}
	return count;
}

int
enf_env_apply(const char *buf, size_t len, char *err, size_t errlen)
{
	if (len > ENF_ENV_MAX_BYTES) {
		snprintf(err, errlen, "larger than %d bytes", ENF_ENV_MAX_BYTES);
		return -1;
	}
	if (walk(buf, len, 0, err, errlen) == -1)
		return -1;
	return walk(buf, len, 1, err, errlen);
}

int
enf_env_file(const char *path, char *err, size_t errlen)
{
	char	*buf, tmp[256];
	size_t	 len;
	int	 rc;

	if ((buf = file_read_bounded(path, ENF_ENV_MAX_BYTES, &len, err,
	    errlen)) == NULL)
		return -1;
	if ((rc = enf_env_apply(buf, len, err, errlen)) == -1) {
		/* prefix the path; the message never holds a value */
		snprintf(tmp, sizeof(tmp), "%s", err);
		snprintf(err, errlen, "%s: %s", path, tmp);
	}
	explicit_bzero(buf, len);
	free(buf);
	return rc;
}
