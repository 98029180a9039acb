/*
 * Per-user policies (--users FILE): proxy credentials mapped to policies,
 * for one standalone gate that serves several users (CI runners, teams).
 *
 * The users file, one user per line ('#' starts a comment line, blank
 * lines are ignored; fields are separated by spaces or tabs):
 *
 *   NAME  sha256:HEX        [policy=PATH]
 *   NAME  plain:SECRET      [policy=PATH]
 *
 *   NAME	the user name of Proxy-Authorization: Basic, 1 to
 *		GATE_SESSION_MAX - 1 bytes of [A-Za-z0-9._@+-]; it is written
 *		as "user" into every audit line of the user's connections
 *   sha256:HEX	the SHA-256 of the secret, 64 hex digits: the file then holds
 *		no secret (printf %s SECRET | sha256sum)
 *   plain:SECRET	the secret itself, 1 to USERS_MAX_SECRET bytes, no
 *		space or tab
 *   policy=PATH	the user's policy file; a relative PATH is relative to
 *		the users file's folder (no space, tab or control character).
 *		Without it the user gets -f's policy.
 *
 * Bounds: USERS_MAX_FILE bytes, USERS_MAX_ENTRIES users, USERS_MAX_LINE
 * bytes a line.  The parser is pure (no file is opened): gate_users_parse
 * takes the bytes, and config.c loads the policies it names.  Errors say
 * FILE:LINE:COL, what is wrong and what to write instead.
 *
 * As in auth.c only SHA-256 digests of the secrets are kept, compared with
 * CRYPTO_memcmp() against every entry without an early exit.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "hex.h"
#include "policy.h"
#include "termsafe.h"
#include "gate/gate.h"
#include "gate/http.h"

#define USERS_DIGEST		GATE_AUTH_DIGEST
#define USERS_MAX_HEADER	1024	/* bytes of the header value checked */

struct users_entry {
	char		 name[GATE_SESSION_MAX];
	unsigned char	 digest[USERS_DIGEST];
	char		*policy;	/* as written; NULL: -f's policy */
	unsigned	 line;		/* in the users file, for messages */
	struct policy	*pol;		/* a reference; NULL: -f's policy */
};

struct gate_users {
	size_t			 n;
	struct users_entry	 e[];
};


static int
name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '@' ||
	    c == '+' || c == '-';
}

static int
blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next field of [*p, end): its start and length; 0 when none is left. */
static size_t
field(const char **p, const char *end, const char **start)
{
	const char	*s = *p;

	while (s < end && blank(*s))
		s++;
	*start = s;
	while (s < end && !blank(*s))
		s++;
	*p = s;
	return (size_t)(s - *start);
}

#define FAIL(col, ...) do {						\
	int	 k_ = snprintf(err, errlen, "%s:%u:%zu: error: ", path,	\
		    line, (size_t)(col) + 1);				\
	if (k_ >= 0 && (size_t)k_ < errlen)				\
		snprintf(err + k_, errlen - (size_t)k_, __VA_ARGS__);	\
	goto fail;							\
} while (0)

struct gate_users *
gate_users_parse(const char *buf, size_t len, const char *path, char *err,
    size_t errlen)
{
	struct gate_users	*u;
	const char		*p = buf, *end = buf + len;
	unsigned		 line = 0;
	size_t			 n = 0, i;

	if (errlen > 0)
		err[0] = '\0';
	if ((u = calloc(1, sizeof(*u) + USERS_MAX_ENTRIES *
	    sizeof(struct users_entry))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (len > USERS_MAX_FILE) {
		snprintf(err, errlen, "%s: error: larger than %d bytes", path,
		    USERS_MAX_FILE);
		goto fail;
	}
	while (p < end) {
		const char		*nl = memchr(p, '\n', (size_t)(end - p)),
					*le = nl != NULL ? nl : end, *q, *f;
		const char		*ls = p;
		struct users_entry	*e;
		size_t			 fl;

		line++;
		if (le > p && le[-1] == '\r')
			le--;
		if ((size_t)(le - p) > USERS_MAX_LINE)
			FAIL(USERS_MAX_LINE, "line longer than %d bytes",
			    USERS_MAX_LINE);
		if (memchr(p, '\0', (size_t)(le - p)) != NULL)
			FAIL((const char *)memchr(p, '\0', (size_t)(le - p)) -
			    ls, "a NUL byte; the users file is text");
		q = p;
		if ((fl = field(&q, le, &f)) == 0 || *f == '#')
			goto next;
		if (n == USERS_MAX_ENTRIES)
			FAIL(f - ls, "more than %d users", USERS_MAX_ENTRIES);
		e = &u->e[n];
		e->line = line;

		/* NAME */
		if (fl >= GATE_SESSION_MAX)
			FAIL(f - ls, "user name longer than %d bytes",
			    GATE_SESSION_MAX - 1);
		for (i = 0; i < fl; i++)
			if (!name_char((unsigned char)f[i])) {
				char	 ch[8];	/* one character */

				(void)term_clean(ch, sizeof(ch), f + i,
				    term_charlen(f + i, fl - i), 0, NULL);
				FAIL(f + i - ls, "'%s' in a user name; use "
				    "letters, digits and . _ @ + -", ch);
			}
		memcpy(e->name, f, fl);
		for (i = 0; i < n; i++)
			if (strcmp(u->e[i].name, e->name) == 0)
				FAIL(f - ls, "user %s is already defined on "
				    "line %u; each name once", e->name,
				    u->e[i].line);

		/* CREDENTIAL */
		if ((fl = field(&q, le, &f)) == 0)
			FAIL(q - ls, "user %s has no credential; write "
			    "sha256:HEX (the SHA-256 of the secret) or "
			    "plain:SECRET", e->name);
		if (fl > 7 && memcmp(f, "sha256:", 7) == 0) {
			if (fl != 7 + 2 * USERS_DIGEST)
				FAIL(f + 7 - ls, "sha256: wants %d hex digits, "
				    "not %zu (printf %%s SECRET | sha256sum)",
				    2 * USERS_DIGEST, fl - 7);
			for (i = 0; i < USERS_DIGEST; i++) {
				const unsigned char *x =
				    (const unsigned char *)f + 7 + 2 * i;
				int	 h = hex_digit(x[0]), l = hex_digit(x[1]);

				if (h == -1 || l == -1)
					FAIL(f + 7 + 2 * i + (h != -1) - ls,
					    "not a hex digit in sha256:");
				e->digest[i] = (unsigned char)(h << 4 | l);
			}
		} else if (fl > 6 && memcmp(f, "plain:", 6) == 0) {
			if (fl - 6 > USERS_MAX_SECRET)
				FAIL(f + 6 - ls, "secret longer than %d bytes",
				    USERS_MAX_SECRET);
			if (gate_auth_digest(f + 6, fl - 6, e->digest) == -1)
				FAIL(f - ls, "SHA-256 failed");
		} else
			FAIL(f - ls, "a credential is sha256:HEX or "
			    "plain:SECRET (non-empty)");

		/* [policy=PATH] */
		if ((fl = field(&q, le, &f)) != 0) {
			if (fl <= 7 || memcmp(f, "policy=", 7) != 0)
				FAIL(f - ls, "expected policy=PATH or the "
				    "end of the line");
			for (i = 7; i < fl; i++)
				if ((unsigned char)f[i] < 0x20 ||
				    (unsigned char)f[i] == 0x7f)
					FAIL(f + i - ls, "a control character "
					    "in the policy path");
			if ((e->policy = strndup(f + 7, fl - 7)) == NULL)
				FAIL(f - ls, "out of memory");
			if ((fl = field(&q, le, &f)) != 0)
				FAIL(f - ls, "unexpected text after "
				    "policy=PATH; paths hold no space");
		}
		n++;
		u->n = n;
 next:
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: error: no user; write lines of "
		    "NAME sha256:HEX [policy=PATH]", path);
		goto fail;
	}
	return u;
 fail:
	gate_users_free(u);
	return NULL;
}

#undef FAIL

void
gate_users_free(struct gate_users *u)
{
	size_t	 i;

	if (u == NULL)
		return;
	for (i = 0; i < u->n; i++) {
		free(u->e[i].policy);
		policy_free(u->e[i].pol);
	}
	/* an entry being filled when the parser failed */
	if (u->n < USERS_MAX_ENTRIES)
		free(u->e[u->n].policy);
	explicit_bzero(u->e, USERS_MAX_ENTRIES * sizeof(u->e[0]));
	free(u);
}

size_t
gate_users_count(const struct gate_users *u)
{
	return u->n;
}

const char *
gate_users_name(const struct gate_users *u, size_t i)
{
	return u->e[i].name;
}

unsigned
gate_users_line(const struct gate_users *u, size_t i)
{
	return u->e[i].line;
}

const char *
gate_users_policy_path(const struct gate_users *u, size_t i)
{
	return u->e[i].policy;
}

struct policy *
gate_users_policy(const struct gate_users *u, size_t i)
{
	return u->e[i].pol;
}

/* Takes the caller's reference p. */
void
gate_users_set_policy(struct gate_users *u, size_t i, struct policy *p)
{
	policy_free(u->e[i].pol);
	u->e[i].pol = p;
}

/*
 * Check a Proxy-Authorization value.  Returns 0 with the user's name in
 * name and its policy in *pol (borrowed; NULL: -f's policy), or -1.  The
 * decoded credentials are wiped before returning.
 */
int
gate_users_check(const struct gate_users *u, const char *value, size_t len,
    char *name, size_t namelen, struct policy **pol)
{
	unsigned char	 dec[USERS_MAX_HEADER], d[USERS_DIGEST];
	size_t		 i, ulen, slen, match = (size_t)-1;
	int		 rc = -1;

	*pol = NULL;
	if (gate_auth_basic(value, len, dec, sizeof(dec), &ulen, &slen) == -1)
		goto out;
	if (gate_auth_digest(dec + ulen + 1, slen, d) == -1)
		goto out;
	for (i = 0; i < u->n; i++) {
		const struct users_entry	*e = &u->e[i];
		int				 ok;

		ok = CRYPTO_memcmp(d, e->digest, USERS_DIGEST) == 0;
		ok &= strlen(e->name) == ulen &&
		    memcmp(e->name, dec, ulen) == 0;
		if (ok && match == (size_t)-1)
			match = i;
	}
	if (match == (size_t)-1)
		goto out;
	snprintf(name, namelen, "%s", u->e[match].name);
	*pol = u->e[match].pol;
	rc = 0;
 out:
	explicit_bzero(dec, sizeof(dec));
	explicit_bzero(d, sizeof(d));
	return rc;
}
