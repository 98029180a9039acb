/*
 * Git config keys by what they can do (snap.h, snap_git_key_*): one
 * allowlist for the stage's sanitized .git/config (what survives the
 * copy, so that git works in the stage) and for the config a bind
 * session's command changed (what may go back into the host's config:
 * docs/launcher.md, "Git in a bind session").  A key that is not here
 * survives nowhere: core.fsmonitor, core.hooksPath, core.sshCommand,
 * core.pager, filter.* and diff.* drivers, credential.*, include.*,
 * alias.*, remote.*.uploadpack and receivepack, remote.*.proxy, every
 * *.command, and whatever git adds next.
 *
 * Going back, the values are checked too, since some name code as much
 * as a key does: a remote URL with ext:: or fd:: (or any transport::)
 * runs a command, a local path or file:// is a repository whose hooks
 * a push runs, another scheme runs a helper git-remote-SCHEME; only
 * https, http, ssh (also scp-like host:path) and git URLs go, without a
 * credential in them (an ssh user goes).  A branch's remote is a
 * remote's name (or "."): a URL or path there is used as one.  The
 * config is read by snap_gitcfg_parse (gitsyntax.c), the one reader of
 * git's syntax.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "snap-int.h"

#define K_STAGE		0x01	/* kept in the stage's sanitized copy */
#define K_BACK		0x02	/* may go back into a host's config */
#define K_SUB		0x04	/* only with a subsection (remote.NAME.url) */

enum vcheck { V_ANY, V_URL, V_WORD, V_REMOTE, V_REBASE };

static const struct gitkey {
	const char	*sect, *key;
	int		 flags;
	enum vcheck	 v;
} gitkeys[] = {
	/* the repository's format: git needs them to read it */
	{ "core", "repositoryformatversion", K_STAGE, V_ANY },
	{ "core", "filemode", K_STAGE, V_ANY },
	{ "core", "bare", K_STAGE, V_ANY },
	{ "core", "logallrefupdates", K_STAGE, V_ANY },
	{ "core", "ignorecase", K_STAGE, V_ANY },
	{ "core", "precomposeunicode", K_STAGE, V_ANY },
	{ "core", "symlinks", K_STAGE, V_ANY },
	{ "extensions", "objectformat", K_STAGE, V_ANY },
	/* what git remote add, fetch, push -u and branch -u write */
	{ "remote", "url", K_STAGE | K_BACK | K_SUB, V_URL },
	{ "remote", "pushurl", K_STAGE | K_BACK | K_SUB, V_URL },
	{ "remote", "fetch", K_STAGE | K_BACK | K_SUB, V_WORD },
	{ "remote", "push", K_STAGE | K_BACK | K_SUB, V_WORD },
	{ "branch", "remote", K_STAGE | K_BACK | K_SUB, V_REMOTE },
	{ "branch", "merge", K_STAGE | K_BACK | K_SUB, V_WORD },
	{ "branch", "rebase", K_STAGE | K_BACK | K_SUB, V_REBASE },
};

static const struct gitkey *
find_key(const char *sect, const char *sub, const char *key)
{
	size_t	 i;

	for (i = 0; i < sizeof(gitkeys) / sizeof(gitkeys[0]); i++)
		if (strcmp(gitkeys[i].sect, sect) == 0 &&
		    strcmp(gitkeys[i].key, key) == 0 &&
		    ((gitkeys[i].flags & K_SUB) != 0) == (sub != NULL))
			return &gitkeys[i];
	return NULL;
}

int
snap_git_key_staged(const char *sect, const char *sub, const char *key)
{
	const struct gitkey	*k = find_key(sect, sub, key);

	return k != NULL && (k->flags & K_STAGE);
}

/* Printable ASCII, no blank, not a leading '-' (an option to ssh or a
 * helper), at least one byte. */
static int
word_ok(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;

	if (*p == '\0' || *p == '-')
		return 0;
	for (; *p != '\0'; p++)
		if (*p <= 0x20 || *p >= 0x7f)
			return 0;
	return 1;
}

/* The URL forms that run nothing but ssh or a network client: NULL, or
 * why not. */
static const char *
url_why(const char *v)
{
	static const char *const schemes[] = { "https://", "http://",
	    "ssh://", "git://", "git+ssh://", "ssh+git://", NULL };
	const char	*host, *e, *at, *colon;
	size_t		 i, n;

	if (strstr(v, "::") != NULL)
		return "a transport (ext::, fd::, NAME::) runs a command or a "
		    "helper";
	if (!word_ok(v))
		return "not a plain URL (a blank, a control byte, a leading "
		    "'-' or a byte beyond ASCII)";
	if ((e = strstr(v, "://")) != NULL) {
		for (i = 0; schemes[i] != NULL; i++)
			if (strncmp(v, schemes[i], strlen(schemes[i])) == 0)
				break;
		if (schemes[i] == NULL)
			return strncmp(v, "file://", 7) == 0 ? "a local "
			    "repository: a push there runs its hooks" :
			    "another scheme runs a helper git-remote-SCHEME";
		host = e + 3;
		n = strcspn(host, "/");
		at = memchr(host, '@', n);
		colon = at != NULL ? memchr(host, ':', (size_t)(at - host)) :
		    NULL;
		/* a token is often the user of an https URL */
		if (colon != NULL || (at != NULL && strstr(v, "ssh") != v &&
		    strncmp(v, "git+ssh", 7) != 0))
			return "it carries a credential";
		host = at != NULL ? at + 1 : host;
		if (*host == '\0' || *host == '/' || *host == '-')
			return "no host";
		return NULL;
	}
	/* scp-like [user@]host:path: a ':' before any '/' */
	colon = strchr(v, ':');
	if (colon == NULL || ((e = strchr(v, '/')) != NULL && e < colon))
		return "a local repository: a push there runs its hooks";
	at = memchr(v, '@', (size_t)(colon - v));
	host = at != NULL ? at + 1 : v;
	if (host == colon || *host == '-')
		return "no host";
	return NULL;
}

const char *
snap_git_key_back(const char *sect, const char *sub, const char *key,
    const char *value, const char *const *remotes)
{
	static const char *const rebase[] = { "true", "false", "yes", "no",
	    "on", "off", "1", "0", "merges", "m", "interactive", "i", NULL };
	const struct gitkey	*k = find_key(sect, sub, key);
	size_t			 i;

	if (k == NULL || !(k->flags & K_BACK))
		return "not among the keys that cannot run code";
	if (sub != NULL && (!word_ok(sub) || strchr(sub, '"') != NULL ||
	    strchr(sub, '\\') != NULL))
		return "its name is not plain ASCII";
	if (value == NULL)
		return NULL;		/* the key removed */
	switch (k->v) {
	case V_URL:
		return url_why(value);
	case V_REMOTE:
		if (strcmp(value, ".") == 0)
			return NULL;
		for (i = 0; remotes != NULL && remotes[i] != NULL; i++)
			if (strcmp(remotes[i], value) == 0 && word_ok(value))
				return NULL;
		return "not the name of a remote with a URL (a path or URL "
		    "there is used as one)";
	case V_REBASE:
		for (i = 0; rebase[i] != NULL; i++)
			if (strcmp(rebase[i], value) == 0)
				return NULL;
		return "not a value of branch.*.rebase";
	case V_WORD:
		return word_ok(value) ? NULL : "not a plain ref or refspec";
	case V_ANY:
		break;
	}
	return NULL;
}

/* ---- the stage's sanitized copy ------------------------------------------ */

struct san {
	struct buf	 b;
	char		 sect[SNAP_GITCFG_NAME_MAX];
	char		 sub[SNAP_GITCFG_SUB_MAX];
	int		 has_sub, open;
};

/* A remote URL without user:password@ (or a token@) in its authority. */
static void
add_url(struct buf *b, const char *v)
{
	const char	*sch, *at, *sl, *q;

	if ((sch = strstr(v, "://")) != NULL) {
		sch += 3;
		/* the last '@' of the authority: a password may hold one */
		sl = sch + strcspn(sch, "/");
		for (at = NULL, q = sch; q < sl; q++)
			if (*q == '@')
				at = q;
		if (at != NULL) {
			buf_add(b, v, (size_t)(sch - v));
			v = at + 1;
		}
	}
	buf_add(b, v, strlen(v));
}

/* value as git reads it back: bare when it can be, else quoted. */
static void
add_value(struct buf *b, const char *v)
{
	size_t	 n = strlen(v);

	if (n > 0 && v[0] != ' ' && v[0] != '\t' && v[n - 1] != ' ' &&
	    v[n - 1] != '\t' && v[strcspn(v, "#;\"\\\n\t\b")] == '\0') {
		buf_add(b, v, n);
		return;
	}
	buf_add(b, "\"", 1);
	for (; *v != '\0'; v++)
		switch (*v) {
		case '\n':
			buf_add(b, "\\n", 2);
			break;
		case '\t':
			buf_add(b, "\\t", 2);
			break;
		case '\b':
			buf_add(b, "\\b", 2);
			break;
		case '"':
		case '\\':
			buf_add(b, "\\", 1);
			/* FALLTHROUGH */
		default:
			buf_add(b, v, 1);
		}
	buf_add(b, "\"", 1);
}

static int
san_value(void *arg, const char *sect, const char *sub, const char *key,
    const char *value)
{
	struct san	*s = arg;
	const char	*p;

	if (!snap_git_key_staged(sect, sub, key))
		return 0;
	if (!s->open || strcmp(s->sect, sect) != 0 || s->has_sub !=
	    (sub != NULL) || (sub != NULL && strcmp(s->sub, sub) != 0)) {
		snprintf(s->sect, sizeof(s->sect), "%s", sect);
		snprintf(s->sub, sizeof(s->sub), "%s", sub != NULL ? sub : "");
		s->has_sub = sub != NULL;
		s->open = 1;
		buf_printf(&s->b, "[%s", sect);
		if (sub != NULL) {
			buf_add(&s->b, " \"", 2);
			for (p = sub; *p != '\0'; p++) {
				if (*p == '"' || *p == '\\')
					buf_add(&s->b, "\\", 1);
				buf_add(&s->b, p, 1);
			}
			buf_add(&s->b, "\"", 1);
		}
		buf_add(&s->b, "]\n", 2);
	}
	buf_printf(&s->b, "\t%s", key);
	if (value != NULL) {
		buf_add(&s->b, " = ", 3);
		if (strcmp(key, "url") == 0 || strcmp(key, "pushurl") == 0) {
			struct buf	u;

			buf_init(&u, SNAP_GITCFG_VALUE_MAX, 0);
			add_url(&u, value);
			if (u.failed || u.p == NULL)
				s->b.failed = 1;
			else
				add_value(&s->b, u.p);
			buf_free(&u);
		} else
			add_value(&s->b, value);
	}
	buf_add(&s->b, "\n", 1);
	return 0;
}

char *
snap_git_config_sanitize(const char *in, size_t len, size_t *outlen)
{
	struct san	 s;

	memset(&s, 0, sizeof(s));
	buf_init(&s.b, 2 * len + 256, 0);
	buf_printf(&s.b, "# aisb: a sanitized copy of .git/config (only format,"
	    " branch and remote keys; docs/snapshot.md)\n");
	if (snap_gitcfg_parse(in, len, san_value, &s) == -1 || s.b.failed ||
	    s.b.p == NULL) {
		buf_free(&s.b);
		errno = ENOMEM;
		return NULL;
	}
	*outlen = s.b.len;
	return s.b.p;
}
