/*
 * libFuzzer: the enforcer's --env-file parser (enforcer/envfile.c).  Any
 * bytes as the file.  On success every counted line is in the environment
 * exactly as written (the value is the whole rest of the line, '='
 * included; the last line of a name wins) and no more than
 * ENF_ENV_MAX_VARS were counted; on failure the environment is as it was
 * (empty here) and the message is a terminated, non-empty string.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envfile.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

extern char	**environ;

/* The value of the last line of buf that sets name (nlen bytes). */
static const char *
last_value(const char *buf, size_t len, const char *name, size_t nlen,
    size_t *vlen)
{
	const char	*found = NULL, *line, *end;
	size_t		 off = 0, n;

	while (off < len) {
		line = buf + off;
		end = memchr(line, '\n', len - off);
		n = end != NULL ? (size_t)(end - line) : len - off;
		off += n + (end != NULL);
		if (n > nlen && memcmp(line, name, nlen) == 0 &&
		    line[nlen] == '=') {
			found = line + nlen + 1;
			*vlen = n - nlen - 1;
		}
	}
	return found;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data, *line, *end, *eq, *got, *want;
	char		 err[256], name[ENF_ENV_MAX_NAME + 1];
	size_t		 off = 0, n, nlen, vlen;
	int		 count, lines = 0;

	if (clearenv() != 0)
		abort();
	memset(err, 'x', sizeof(err));
	count = enf_env_apply(buf, size, err, sizeof(err));
	if (count == -1) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort();
		if (environ != NULL && environ[0] != NULL)
			abort();	/* a refused file sets nothing */
		return 0;
	}
	if (count < 0 || count > ENF_ENV_MAX_VARS)
		abort();
	while (off < size) {
		line = buf + off;
		end = memchr(line, '\n', size - off);
		n = end != NULL ? (size_t)(end - line) : size - off;
		off += n + (end != NULL);
		if (n == 0 || line[0] == '#')
			continue;
		lines++;
		if ((eq = memchr(line, '=', n)) == NULL)
			abort();	/* accepted, so it is NAME=VALUE */
		nlen = (size_t)(eq - line);
		if (nlen == 0 || nlen > ENF_ENV_MAX_NAME)
			abort();
		memcpy(name, line, nlen);
		name[nlen] = '\0';
		want = last_value(buf, size, name, nlen, &vlen);
		if (want == NULL || (got = getenv(name)) == NULL ||
		    strlen(got) != vlen || memcmp(got, want, vlen) != 0)
			abort();
	}
	if (lines != count)
		abort();
	(void)clearenv();
	return 0;
}
