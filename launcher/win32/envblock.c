/*
 * The child's environment: built from an explicit allowlist, never a
 * copy of the runner's (which may hold the user's tokens).  Windows'
 * variable names ignore case, and CreateProcessW wants the block sorted
 * by name; both are done here, on UTF-8, before the Win32 side converts
 * the block to UTF-16.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/winrun.h"

/* Passed from the host by default: what programs need to start. */
static const char *const defaults[] = {
	"ComSpec", "NUMBER_OF_PROCESSORS", "OS", "PATH", "PATHEXT",
	"PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER", "PROCESSOR_LEVEL",
	"PROCESSOR_REVISION", "ProgramFiles", "ProgramFiles(x86)",
	"ProgramW6432", "CommonProgramFiles", "CommonProgramFiles(x86)",
	"CommonProgramW6432", "SystemDrive", "SystemRoot", "windir", NULL
};

/* A name holding one of these (any case) is a credential's. */
static const char *const secrets[] = {
	"TOKEN", "SECRET", "PASSW", "CREDENTIAL", "APIKEY", "API_KEY",
	"PRIVATE", "AUTH", "COOKIE", "SESSION", "_KEY", "KEY_", NULL
};

struct var {
	char	*name;		/* points into text */
	size_t	 namelen;
	char	*text;		/* NAME=VALUE, owned */
};


static int
casecmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;
	int ca, cb;

	for (i = 0; i < alen && i < blen; i++) {
		ca = toupper((unsigned char)a[i]);
		cb = toupper((unsigned char)b[i]);
		if (ca != cb)
			return ca - cb;
	}
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

int
winrun_env_secret(const char *name)
{
	char up[128];
	size_t i, n = strlen(name);
	int k;

	if (n >= sizeof(up))
		return 1;	/* too long to judge: treated as one */
	for (i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	for (k = 0; secrets[k] != NULL; k++)
		if (strstr(up, secrets[k]) != NULL)
			return 1;
	return 0;
}

int
winrun_env_default(const char *name)
{
	int k;

	for (k = 0; defaults[k] != NULL; k++)
		if (casecmp(name, strlen(name), defaults[k],
		    strlen(defaults[k])) == 0)
			return 1;
	return 0;
}

/* Sets NAME=VALUE (len bytes at s), replacing a same-name variable. */
static int
set(struct var *v, size_t *nv, const char *s, size_t len, char *err,
    size_t errlen)
{
	const char *eq = memchr(s, '=', len);
	size_t i, namelen;
	char *t;

	if (eq == NULL || eq == s)
		return winrun_fail(err, errlen, "a variable needs NAME=VALUE");
	namelen = (size_t)(eq - s);
	if (len > WINRUN_ENVVAL_MAX)
		return winrun_fail(err, errlen, "variable %.*s is %zu bytes; at most "
		    "%d", (int)(namelen > 64 ? 64 : namelen), s, len,
		    WINRUN_ENVVAL_MAX);
	if (memchr(s, '\0', len) != NULL)
		return winrun_fail(err, errlen, "variable %.*s holds a NUL byte",
		    (int)(namelen > 64 ? 64 : namelen), s);
	if ((t = malloc(len + 1)) == NULL)
		return winrun_fail(err, errlen, "out of memory");
	memcpy(t, s, len);
	t[len] = '\0';
	for (i = 0; i < *nv; i++)
		if (casecmp(v[i].name, v[i].namelen, t, namelen) == 0)
			break;
	if (i == *nv) {
		if (*nv >= WINRUN_ENV_MAX) {
			free(t);
			return winrun_fail(err, errlen, "more than %d variables for "
			    "the command", WINRUN_ENV_MAX);
		}
		(*nv)++;
	} else
		free(v[i].text);
	v[i].text = t;
	v[i].name = t;
	v[i].namelen = namelen;
	return 0;
}

static int
bycase(const void *a, const void *b)
{
	const struct var *x = a, *y = b;

	return casecmp(x->name, x->namelen, y->name, y->namelen);
}

static int
passed(const char *name, size_t namelen, const char *const *pass,
    size_t npass)
{
	size_t i;
	char tmp[128];

	if (namelen >= sizeof(tmp))
		return 0;
	memcpy(tmp, name, namelen);
	tmp[namelen] = '\0';
	if (winrun_env_secret(tmp))
		return 0;
	if (winrun_env_default(tmp))
		return 1;
	for (i = 0; i < npass; i++)
		if (casecmp(pass[i], strlen(pass[i]), name, namelen) == 0)
			return 1;
	return 0;
}

int
winrun_envblock(char *const *host, const char *const *pass, size_t npass,
    const char *envfile, size_t envfile_len, const char *stage,
    char **block, size_t *blocklen, char *err, size_t errlen)
{
	struct var v[WINRUN_ENV_MAX];
	size_t nv = 0, i, total, off, line = 0;
	const char *p, *end, *nl, *eq;
	char fixed[WINRUN_PATH_MAX + 16];
	static const char *const stagevars[] = { "TEMP", "TMP",
	    "USERPROFILE", "HOME", NULL };
	char *b = NULL;
	int k, rc = -1;

	*block = NULL;
	*blocklen = 0;
	/* 1. the host's allowed variables */
	for (k = 0; host != NULL && host[k] != NULL; k++) {
		eq = strchr(host[k], '=');
		/* "=C:=C:\dir" are cmd's drive folders: never passed */
		if (eq == NULL || eq == host[k])
			continue;
		if (!passed(host[k], (size_t)(eq - host[k]), pass, npass))
			continue;
		if (set(v, &nv, host[k], strlen(host[k]), err, errlen) == -1)
			goto done;
	}
	/* 2. the caller's file */
	if (envfile != NULL) {
		if (envfile_len > WINRUN_ENVFILE_MAX) {
			winrun_fail(err, errlen, "--env-file is %zu bytes; at most %d",
			    envfile_len, WINRUN_ENVFILE_MAX);
			goto done;
		}
		for (p = envfile, end = envfile + envfile_len; p < end;
		    p = nl + 1) {
			size_t len;

			line++;
			if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
				nl = end;
			len = (size_t)(nl - p);
			if (len > 0 && p[len - 1] == '\r')
				len--;
			if (len == 0 || p[0] == '#')
				continue;
			eq = memchr(p, '=', len);
			if (eq == NULL || eq == p) {
				winrun_fail(err, errlen, "--env-file line %zu: write "
				    "NAME=VALUE", line);
				goto done;
			}
			if (set(v, &nv, p, len, err, errlen) == -1) {
				size_t m = strlen(err);

				snprintf(err + m, errlen > m ? errlen - m : 0,
				    " (--env-file line %zu)", line);
				goto done;
			}
		}
	}
	/* 3. fixed */
	if (stage != NULL) {
		for (k = 0; stagevars[k] != NULL; k++) {
			int n = snprintf(fixed, sizeof(fixed), "%s=%s",
			    stagevars[k], stage);

			if (n < 0 || (size_t)n >= sizeof(fixed)) {
				winrun_fail(err, errlen, "the stage path is too long");
				goto done;
			}
			if (set(v, &nv, fixed, (size_t)n, err, errlen) == -1)
				goto done;
		}
	}
	if (set(v, &nv, "AISB_SANDBOX=1", 14, err, errlen) == -1)
		goto done;

	qsort(v, nv, sizeof(v[0]), bycase);
	for (total = 1, i = 0; i < nv; i++)
		total += strlen(v[i].text) + 1;
	if (total > WINRUN_ENVBLOCK_MAX) {
		winrun_fail(err, errlen, "the environment is %zu bytes; at most %d",
		    total, WINRUN_ENVBLOCK_MAX);
		goto done;
	}
	if ((b = malloc(total)) == NULL) {
		winrun_fail(err, errlen, "out of memory");
		goto done;
	}
	for (off = 0, i = 0; i < nv; i++) {
		size_t n = strlen(v[i].text) + 1;

		memcpy(b + off, v[i].text, n);
		off += n;
	}
	b[off] = '\0';
	*block = b;
	*blocklen = total;
	rc = 0;
done:
	for (i = 0; i < nv; i++)
		free(v[i].text);
	return rc;
}
