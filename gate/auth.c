/*
 * Proxy authentication: "Proxy-Authorization: Basic base64(user:secret)"
 * checked against the credentials of a token file or descriptor.
 *
 * Token file, one credential per line (bounds: AUTH_MAX_FILE bytes,
 * AUTH_MAX_ENTRIES lines, AUTH_MAX_LINE bytes each; '#' starts a comment):
 *   session:secret	only this user name with this secret; the session
 *			label is recorded in the audit line
 *   secret		any user name with this secret; the user name given
 *			is recorded as the session
 *
 * Only SHA-256 digests of the secrets are kept in memory, and they are
 * compared with CRYPTO_memcmp() against every entry without an early exit,
 * so neither the time taken nor a core dump gives the secret away.
 *
 * Each line also has a key, the SHA-256 of its session label ("" for a
 * line of any user name) and its secret's digest: a connection keeps the
 * key of the line it matched (never the secret, nor the digest checked
 * against), and a reload asks whether that line is still in the file
 * (gate_auth_holds).  The session label is not enough: through a line of
 * any user name every name is some line's, whichever lines were removed.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "log.h"
#include "termsafe.h"
#include "gate/gate.h"

#define AUTH_MAX_FILE		65536
#define AUTH_MAX_ENTRIES	1024
#define AUTH_MAX_LINE		512
#define AUTH_MAX_HEADER		1024	/* bytes of the header value checked */
#define AUTH_DIGEST		GATE_AUTH_DIGEST

struct auth_entry {
	char		 session[GATE_SESSION_MAX];	/* "" for any user */
	unsigned char	 digest[AUTH_DIGEST];
	unsigned char	 key[GATE_AUTH_KEY];		/* the line's */
};

struct gate_auth {
	size_t			 n;
	struct auth_entry	 e[];
};

int
gate_auth_digest(const void *p, size_t len,
    unsigned char out[GATE_AUTH_DIGEST])
{
	unsigned int	 olen = 0;

	if (EVP_Digest(p, len, out, &olen, EVP_sha256(), NULL) != 1 ||
	    olen != AUTH_DIGEST)
		return -1;
	return 0;
}

/* The line's key: SHA-256("aisb-auth-line\0" label "\0" digest). */
static int
auth_key(struct auth_entry *e)
{
	static const char	 tag[] = "aisb-auth-line";
	unsigned char		 buf[sizeof(tag) + GATE_SESSION_MAX +
				    AUTH_DIGEST];
	size_t			 sl = strlen(e->session), n = 0;
	int			 rc;

	memcpy(buf, tag, sizeof(tag));			/* with its NUL */
	n += sizeof(tag);
	memcpy(buf + n, e->session, sl + 1);		/* with its NUL */
	n += sl + 1;
	memcpy(buf + n, e->digest, AUTH_DIGEST);
	n += AUTH_DIGEST;
	rc = gate_auth_digest(buf, n, e->key);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

static struct gate_auth *
auth_parse(char *buf, size_t len, char *err, size_t errlen)
{
	struct gate_auth	*a;
	size_t			 n = 0, lines = 0;
	char			*p = buf, *end = buf + len;

	if ((a = calloc(1, sizeof(*a) + AUTH_MAX_ENTRIES *
	    sizeof(struct auth_entry))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (p < end) {
		char	*nl = memchr(p, '\n', (size_t)(end - p));
		char	*le = nl != NULL ? nl : end, *colon, *secret;
		size_t	 ll;

		lines++;
		if (le > p && le[-1] == '\r')
			le--;
		ll = (size_t)(le - p);
		if (ll > AUTH_MAX_LINE) {
			snprintf(err, errlen, "line %zu: longer than %d bytes",
			    lines, AUTH_MAX_LINE);
			goto fail;
		}
		if (ll == 0 || *p == '#')
			goto next;
		if (n == AUTH_MAX_ENTRIES) {
			snprintf(err, errlen, "more than %d credentials",
			    AUTH_MAX_ENTRIES);
			goto fail;
		}
		secret = p;
		if ((colon = memchr(p, ':', ll)) != NULL) {
			size_t	 sl = (size_t)(colon - p);

			if (sl == 0 || sl >= GATE_SESSION_MAX) {
				snprintf(err, errlen, "line %zu: session label "
				    "empty or over %d bytes", lines,
				    GATE_SESSION_MAX - 1);
				goto fail;
			}
			memcpy(a->e[n].session, p, sl);
			secret = colon + 1;
		}
		if (le == secret) {
			snprintf(err, errlen, "line %zu: empty secret", lines);
			goto fail;
		}
		if (gate_auth_digest(secret, (size_t)(le - secret),
		    a->e[n].digest) == -1 || auth_key(&a->e[n]) == -1) {
			snprintf(err, errlen, "SHA-256 failed");
			goto fail;
		}
		n++;
 next:
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (n == 0) {
		snprintf(err, errlen, "no credential in the token file");
		goto fail;
	}
	a->n = n;
	return a;
 fail:
	gate_auth_free(a);
	return NULL;
}

static struct gate_auth *
auth_read_fd(int fd, char *err, size_t errlen)
{
	struct gate_auth	*a;
	char			*buf;
	size_t			 len = 0;
	ssize_t			 r;

	if ((buf = malloc(AUTH_MAX_FILE + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (;;) {
		r = read(fd, buf + len, AUTH_MAX_FILE + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			snprintf(err, errlen, "read: %s", strerror(errno));
			a = NULL;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > AUTH_MAX_FILE) {
			snprintf(err, errlen, "larger than %d bytes",
			    AUTH_MAX_FILE);
			a = NULL;
			goto out;
		}
	}
	a = auth_parse(buf, len, err, errlen);
 out:
	explicit_bzero(buf, AUTH_MAX_FILE + 1);
	free(buf);
	return a;
}

struct gate_auth *
gate_auth_load_file(const char *path, char *err, size_t errlen)
{
	return gate_auth_load_file_at(AT_FDCWD, path, path, err, errlen);
}

struct gate_auth *
gate_auth_load_file_at(int dirfd, const char *name, const char *path,
    char *err, size_t errlen)
{
	struct gate_auth	*a;
	struct stat		 st;
	int			 fd;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	/* group read is how a gate that dropped to --user reads it */
	if (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))
		log_warnx("token file %s is accessible by others, or writable "
		    "by its group", path);
	a = auth_read_fd(fd, err, errlen);
	close(fd);
	return a;
}

/* Reads the descriptor to its end and closes it. */
struct gate_auth *
gate_auth_load_fd(int fd, char *err, size_t errlen)
{
	struct gate_auth	*a;

	a = auth_read_fd(fd, err, errlen);
	close(fd);
	return a;
}

void
gate_auth_free(struct gate_auth *a)
{
	if (a == NULL)
		return;
	explicit_bzero(a->e, AUTH_MAX_ENTRIES * sizeof(a->e[0]));
	free(a);
}

static int
b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Strict base64 with padding; returns the decoded length or -1. */
static ssize_t
b64decode(const char *in, size_t len, unsigned char *out, size_t outlen)
{
	size_t	 i, n = 0;

	if (len == 0 || len % 4 != 0 || len / 4 * 3 > outlen)
		return -1;
	for (i = 0; i < len; i += 4) {
		int	 v[4], k, pad = 0;

		for (k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad || (v[k] = b64val((unsigned char)in[i + k])) == -1)
				return -1;
		}
		out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)(v[2] << 6 | v[3]);
	}
	return (ssize_t)n;
}

/*
 * A Proxy-Authorization value "Basic base64(user:secret)", decoded into
 * dec[declen]: 0 with the user name at dec (*ulen bytes), a ':' and the
 * secret after it (*slen bytes), or -1.  The caller wipes dec.  Used by
 * the users file (users.c), which checks its own credentials.
 */
int
gate_auth_basic(const char *value, size_t len, unsigned char *dec,
    size_t declen, size_t *ulen, size_t *slen)
{
	unsigned char	*colon;
	ssize_t		 n;
	size_t		 i;

	if (len < 6 || len > declen || strncasecmp(value, "Basic ", 6))
		return -1;
	for (i = 6; i < len && value[i] == ' '; i++)
		;
	if ((n = b64decode(value + i, len - i, dec, declen)) == -1)
		return -1;
	if ((colon = memchr(dec, ':', (size_t)n)) == NULL)
		return -1;
	*ulen = (size_t)(colon - dec);
	*slen = (size_t)n - *ulen - 1;
	return 0;
}

/*
 * 1 when a has the line whose key a connection kept (gate_auth_check):
 * the same session label, or none, with the same secret.  A line changed
 * from one form to the other is another line.
 */
int
gate_auth_holds(const struct gate_auth *a,
    const unsigned char key[GATE_AUTH_KEY])
{
	size_t	 i;
	int	 found = 0;

	for (i = 0; i < a->n; i++)
		found |= CRYPTO_memcmp(a->e[i].key, key, GATE_AUTH_KEY) == 0;
	return found;
}

/*
 * Check a Proxy-Authorization value.  Returns 0, the session label in
 * session and, when key is not NULL, the key of the line that matched
 * (the first, in the file's order), or -1.  The decoded credentials are
 * wiped before returning.
 */
int
gate_auth_check(const struct gate_auth *a, const char *value, size_t len,
    char *session, size_t sessionlen, unsigned char key[GATE_AUTH_KEY])
{
	unsigned char	 dec[AUTH_MAX_HEADER], d[AUTH_DIGEST];
	unsigned char	*colon;
	ssize_t		 n;
	size_t		 i, ulen, match = (size_t)-1;
	int		 rc = -1;

	if (len < 6 || len > AUTH_MAX_HEADER || strncasecmp(value, "Basic ", 6))
		return -1;
	for (i = 6; i < len && value[i] == ' '; i++)
		;
	if ((n = b64decode(value + i, len - i, dec, sizeof(dec))) == -1)
		goto out;
	if ((colon = memchr(dec, ':', (size_t)n)) == NULL)
		goto out;
	ulen = (size_t)(colon - dec);
	if (gate_auth_digest(colon + 1, (size_t)n - ulen - 1, d) == -1)
		goto out;
	for (i = 0; i < a->n; i++) {
		const struct auth_entry	*e = &a->e[i];
		int			 ok;

		ok = CRYPTO_memcmp(d, e->digest, AUTH_DIGEST) == 0;
		if (e->session[0] != '\0')
			ok &= strlen(e->session) == ulen &&
			    memcmp(e->session, dec, ulen) == 0;
		if (ok && match == (size_t)-1)
			match = i;
	}
	if (match == (size_t)-1)
		goto out;
	if (key != NULL)
		memcpy(key, a->e[match].key, GATE_AUTH_KEY);
	if (a->e[match].session[0] != '\0')
		snprintf(session, sessionlen, "%s", a->e[match].session);
	else	/* a name the client chose: a label of printable ASCII */
		(void)term_clean(session, sessionlen, (const char *)dec, ulen,
		    TERM_ASCII, NULL);
	rc = 0;
 out:
	explicit_bzero(dec, sizeof(dec));
	explicit_bzero(d, sizeof(d));
	return rc;
}
