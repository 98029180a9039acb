/*
 * What a stage leaves out and what is never written back (snap.h, "Rules";
 * docs/snapshot.md, "Exclusions"): glob patterns, two of them conditional
 * on the file's content (the .git/config sanitizer is gitkeys.c's).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

#define RULE_PATTERN_MAX	255	/* bytes of one pattern */
#define RULES_MAX		256	/* patterns in all */
#define CONTENT_PEEK		65536	/* bytes a content rule reads */

enum rule_kind {
	RULE_EXCLUDE,		/* by name alone */
	RULE_KEY,		/* by name, when it holds a private key */
	RULE_TOKEN,		/* by name, when it holds a token/password */
	RULE_SANITIZE,		/* staged sanitized, never written back */
	RULE_DENY		/* staged as it is, never written back */
};

struct rule {
	char		*pattern;
	const char	*reason;
	enum rule_kind	 kind;
};

struct snap_rules {
	struct rule		v[RULES_MAX];
	size_t			n;
	/* snap_rules_git's copy: the strings below, env pointing at them */
	struct snap_git_env	git;
	int			has_git;
	char			*gstr[3 + SNAP_GIT_SYSTEM_MAX];
	char			*gpair[SNAP_GIT_PAIRS_MAX];
	/* snap_rules_reader's */
	int			 has_reader;
	uint32_t		 reader_uid, reader_gid;
};

static const struct {
	const char	*pattern;
	const char	*reason;
	enum rule_kind	 kind;
} defaults[] = {
	{ "**/.git/hooks",			"git hooks run code",
	    RULE_EXCLUDE },
	{ "**/.git/modules/**/hooks",		"git hooks run code",
	    RULE_EXCLUDE },
	{ "**/.git/modules/**/config",		"git config runs code",
	    RULE_EXCLUDE },
	{ "**/.git/config.worktree",		"git config runs code",
	    RULE_EXCLUDE },
	{ "**/.git/worktrees/*/config.worktree", "git config runs code",
	    RULE_EXCLUDE },
	{ "**/.git/config",			"sanitized copy",
	    RULE_SANITIZE },
	{ ".git-credentials",			"credential", RULE_EXCLUDE },
	{ ".env",				"credential", RULE_EXCLUDE },
	{ ".env.*",				"credential", RULE_EXCLUDE },
	{ "*.pem",				"credential", RULE_EXCLUDE },
	{ "*.key",				"credential", RULE_EXCLUDE },
	{ "*.p12",				"credential", RULE_EXCLUDE },
	{ "*.pfx",				"credential", RULE_EXCLUDE },
	{ "id_*",				"private key", RULE_KEY },
	{ ".npmrc",				"credential", RULE_TOKEN },
	{ ".pypirc",				"credential", RULE_TOKEN },
	{ ".netrc",				"credential", RULE_TOKEN },
	{ "_netrc",				"credential", RULE_TOKEN },
	{ "**/.aws/credentials",		"credential", RULE_EXCLUDE },
	{ "**/.docker/config.json",		"credential", RULE_EXCLUDE },
};

/* One component: '*' any run, '?' one byte; neither matches '/'. */
static int
match_comp(const char *p, const char *pe, const char *s, const char *se)
{
	while (p < pe) {
		if (*p == '*') {
			while (p < pe && *p == '*')
				p++;
			if (p == pe)
				return 1;
			for (; s <= se; s++)
				if (match_comp(p, pe, s, se))
					return 1;
			return 0;
		}
		/* Windows' names ignore case: ".GIT/Hooks" is .git/hooks */
#ifdef _WIN32
		if (s == se || (*p != '?' && *p != *s &&
		    !((*p | 0x20) == (*s | 0x20) && (*p | 0x20) >= 'a' &&
		    (*p | 0x20) <= 'z')))
			return 0;
#else
		if (s == se || (*p != '?' && *p != *s))
			return 0;
#endif
		p++;
		s++;
	}
	return s == se;
}

static const char *
comp_end(const char *s)
{
	const char	*e = strchr(s, '/');

	return e != NULL ? e : s + strlen(s);
}

/* Component lists; "**" matches zero or more components. */
static int
match_path(const char *p, const char *s)
{
	const char	*pe, *se;

	for (;;) {
		if (*p == '\0')
			return *s == '\0';
		pe = comp_end(p);
		if (pe - p == 2 && p[0] == '*' && p[1] == '*') {
			const char	*np = *pe == '/' ? pe + 1 : pe;

			for (;;) {
				if (match_path(np, s))
					return 1;
				if (*s == '\0')
					return 0;
				se = comp_end(s);
				s = *se == '/' ? se + 1 : se;
			}
		}
		if (*s == '\0')
			return 0;
		se = comp_end(s);
		if (!match_comp(p, pe, s, se))
			return 0;
		p = *pe == '/' ? pe + 1 : pe;
		s = *se == '/' ? se + 1 : se;
	}
}

int
snap_glob(const char *pattern, const char *path)
{
	const char	*base;

	if (strchr(pattern, '/') != NULL)
		return match_path(pattern, path);
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	return match_comp(pattern, pattern + strlen(pattern), base,
	    base + strlen(base));
}

struct snap_rules *
snap_rules_new(void)
{
	struct snap_rules	*r;
	size_t			 i;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if ((r->v[i].pattern = strdup(defaults[i].pattern)) == NULL) {
			snap_rules_free(r);
			return NULL;
		}
		r->v[i].reason = defaults[i].reason;
		r->v[i].kind = defaults[i].kind;
		r->n++;
	}
	return r;
}

static void
git_env_clear(struct snap_rules *r)
{
	size_t	i;

	for (i = 0; i < sizeof(r->gstr) / sizeof(r->gstr[0]); i++)
		free(r->gstr[i]);
	for (i = 0; i < sizeof(r->gpair) / sizeof(r->gpair[0]); i++)
		free(r->gpair[i]);
	memset(r->gstr, 0, sizeof(r->gstr));
	memset(r->gpair, 0, sizeof(r->gpair));
	memset(&r->git, 0, sizeof(r->git));
	r->has_git = 0;
}

void
snap_rules_free(struct snap_rules *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		free(r->v[i].pattern);
	git_env_clear(r);
	free(r);
}

/* A copy of s into *slot (NULL stays NULL): 0, or -1. */
static int
dup_opt(char **slot, const char *s)
{
	return s == NULL || (*slot = strdup(s)) != NULL ? 0 : -1;
}

int
snap_rules_git(struct snap_rules *r, const struct snap_git_env *env,
    char *err, size_t errlen)
{
	size_t	i, n;

	git_env_clear(r);
	if (env->npairs > SNAP_GIT_PAIRS_MAX)
		return snap_err(err, errlen, SNAP_EINVAL, "git: %zu "
		    "GIT_CONFIG_KEY_n pairs, more than %d", env->npairs,
		    SNAP_GIT_PAIRS_MAX);
	if (dup_opt(&r->gstr[0], env->home) == -1 ||
	    dup_opt(&r->gstr[1], env->xdg_config) == -1 ||
	    dup_opt(&r->gstr[2], env->global) == -1)
		goto oom;
	for (n = 0; n < SNAP_GIT_SYSTEM_MAX && env->system[n] != NULL; n++)
		if (dup_opt(&r->gstr[3 + n], env->system[n]) == -1)
			goto oom;
	for (i = 0; i < env->npairs; i++)
		if (dup_opt(&r->gpair[i], env->pairs[i]) == -1 ||
		    r->gpair[i] == NULL)
			goto oom;
	r->git.home = r->gstr[0];
	r->git.xdg_config = r->gstr[1];
	r->git.global = r->gstr[2];
	for (i = 0; i < n; i++)
		r->git.system[i] = r->gstr[3 + i];
	r->git.pairs = (const char *const *)r->gpair;
	r->git.npairs = env->npairs;
	r->has_git = 1;
	return SNAP_OK;
oom:
	git_env_clear(r);
	return snap_err(err, errlen, SNAP_ESYS, "git: out of memory");
}

const struct snap_git_env *
snap_rules_git_env(const struct snap_rules *r)
{
	return r->has_git ? &r->git : NULL;
}

/* One pattern of the user's (what, in messages: "exclude pattern"). */
static int
add_rule(struct snap_rules *r, const char *pattern, const char *what,
    const char *reason, enum rule_kind kind, char *err, size_t errlen)
{
	size_t	len = strlen(pattern);
	char	tmp[RULE_PATTERN_MAX + 1];
	char	*s;

	if (len == 0 || len > RULE_PATTERN_MAX)
		return snap_err(err, errlen, SNAP_EINVAL, "%s of %zu bytes: "
		    "give 1 to %d bytes", what, len, RULE_PATTERN_MAX);
	for (s = (char *)(uintptr_t)pattern; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return snap_err(err, errlen, SNAP_EINVAL, "%s of %zu "
			    "bytes: a control character (byte %zu): patterns "
			    "are names", what, len, (size_t)(s - pattern));
	/* "**" is fine here; ".." and empty components are not */
	memcpy(tmp, pattern, len + 1);
	for (s = tmp; *s != '\0'; s++)
		if (*s == '*' || *s == '?')
			*s = 'x';
	if (!snap_path_ok(tmp))
		return snap_err(err, errlen, SNAP_EINVAL, "%s '%s': a "
		    "relative path without '.', '..' or empty components, "
		    "e.g. 'secrets/**' or '*.sqlite'", what, pattern);
	if (r->n == RULES_MAX)
		return snap_err(err, errlen, SNAP_EINVAL, "%s '%s': more "
		    "than %d patterns", what, pattern, RULES_MAX);
	if ((r->v[r->n].pattern = strdup(pattern)) == NULL)
		return snap_err(err, errlen, SNAP_ESYS, "%s: out of memory",
		    what);
	r->v[r->n].reason = reason;
	r->v[r->n].kind = kind;
	r->n++;
	return SNAP_OK;
}

int
snap_rules_add(struct snap_rules *r, const char *pattern, char *err,
    size_t errlen)
{
	return add_rule(r, pattern, "exclude pattern", "configured",
	    RULE_EXCLUDE, err, errlen);
}

int
snap_rules_deny(struct snap_rules *r, const char *pattern, char *err,
    size_t errlen)
{
	return add_rule(r, pattern, "writeback_deny pattern",
	    "writeback_deny", RULE_DENY, err, errlen);
}

int
snap_rules_drop(struct snap_rules *r, const char *pattern, char *err,
    size_t errlen)
{
	struct buf	b;
	size_t		i, j;
	int		found = 0;

	for (i = 0; i < r->n; ) {
		if (strcmp(r->v[i].pattern, pattern) != 0 ||
		    strcmp(r->v[i].reason, "configured") == 0 ||
		    r->v[i].kind == RULE_DENY) {
			i++;
			continue;
		}
		free(r->v[i].pattern);
		for (j = i; j + 1 < r->n; j++)
			r->v[j] = r->v[j + 1];
		r->n--;
		found = 1;
	}
	if (found)
		return SNAP_OK;
	buf_init(&b, 1024, 0);
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		buf_printf(&b, "%s%s", i > 0 ? " " : "", defaults[i].pattern);
	(void)snap_err(err, errlen, SNAP_EINVAL, "'%s' is no default "
	    "exclusion (or was dropped already); the defaults are: %s",
	    pattern, b.failed ? "(see docs/snapshot.md)" : b.p);
	buf_free(&b);
	return SNAP_EINVAL;
}

/* The first CONTENT_PEEK bytes of full hold needle (ASCII, any case). */
static int
content_has(const char *full, const char *const *needles)
{
	struct snap_file	*f;
	char			 b[CONTENT_PEEK + 1];
	size_t			 len = 0, i;
	long			 n;

	if ((f = snap_fs_open_read(full)) == NULL)
		return 1;	/* unreadable: left out, fail closed */
	while (len < CONTENT_PEEK &&
	    (n = snap_fs_read(f, b + len, CONTENT_PEEK - len)) > 0)
		len += (size_t)n;
	snap_fs_close(f);
	for (i = 0; i < len; i++)
		b[i] = b[i] == '\0' ? ' ' : (char)tolower((unsigned char)b[i]);
	b[len] = '\0';
	for (i = 0; needles[i] != NULL; i++)
		if (strstr(b, needles[i]) != NULL)
			return 1;
	return 0;
}

static const char *const key_needles[] = { "private key", NULL };
static const char *const token_needles[] = { "token", "_auth", "password",
    "passwd", "secret", NULL };

static const char *
match_one(const struct snap_rules *r, const char *rel, const char *full,
    int is_dir)
{
	size_t	i;

	for (i = 0; i < r->n; i++) {
		if (!snap_glob(r->v[i].pattern, rel))
			continue;
		switch (r->v[i].kind) {
		case RULE_KEY:
		case RULE_TOKEN:
			if (is_dir)
				continue;
			if (full != NULL && !content_has(full,
			    r->v[i].kind == RULE_KEY ? key_needles :
			    token_needles))
				continue;
			break;
		case RULE_SANITIZE:
			if (is_dir)
				continue;
			break;
		case RULE_EXCLUDE:
			break;
		case RULE_DENY:
			continue;	/* staged: snap_rules_denied's */
		}
		return r->v[i].reason;
	}
	return NULL;
}

const char *
snap_rules_match(const struct snap_rules *r, const char *path, int is_dir)
{
	char		 pre[SNAP_PATH_MAX];
	const char	*s, *why;
	size_t		 n;

	if (strlen(path) >= sizeof(pre))
		return "path too long";
	/* every folder on the way, then the path itself */
	for (s = path; (s = strchr(s, '/')) != NULL; s++) {
		n = (size_t)(s - path);
		memcpy(pre, path, n);
		pre[n] = '\0';
		if ((why = match_one(r, pre, NULL, 1)) != NULL)
			return why;
	}
	return match_one(r, path, NULL, is_dir);
}

const char *
snap_rules_match_file(const struct snap_rules *r, const char *rel,
    const char *full, int is_dir)
{
	return match_one(r, rel, full, is_dir);
}

const char *
snap_rules_denied(const struct snap_rules *r, const char *rel)
{
	char	 pre[SNAP_PATH_MAX];
	size_t	 i, n;

	n = strlen(rel);
	if (n >= sizeof(pre))
		return "path too long";
	memcpy(pre, rel, n + 1);
	/* the path, then every folder on the way up */
	for (;;) {
		for (i = 0; i < r->n; i++)
			if (r->v[i].kind == RULE_DENY &&
			    snap_glob(r->v[i].pattern, pre))
				return r->v[i].pattern;
		while (n > 0 && pre[n] != '/')
			n--;
		if (n == 0)
			return NULL;
		pre[n] = '\0';
	}
}

int
snap_rules_sanitizes(const struct snap_rules *r, const char *rel)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].kind == RULE_SANITIZE &&
		    snap_glob(r->v[i].pattern, rel))
			return 1;
	return 0;
}

void
snap_rules_reader(struct snap_rules *r, uint32_t uid, uint32_t gid)
{
	r->has_reader = 1;
	r->reader_uid = uid;
	r->reader_gid = gid;
}

int
snap_rules_reader_of(const struct snap_rules *r, uint32_t *uid,
    uint32_t *gid)
{
	*uid = r->reader_uid;
	*gid = r->reader_gid;
	return r->has_reader;
}
