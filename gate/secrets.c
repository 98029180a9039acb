/*
 * The secrets an inspecting gate adds to allowed requests (--secrets-fd
 * N): read once at start-up from a descriptor its starter passes (a pipe
 * or a memfd; never argv, the environment or a file of the session), then
 * kept in memory of their own: locked when the kernel allows (no swap),
 * left out of core dumps, wiped before they are freed.
 *
 * The format, text, LF-ended lines:
 *
 *   aisb-secrets 1
 *   NAME PLACEHOLDER VALUE
 *   ...
 *
 * NAME is the secret's name as the policy's secrets: entries say it
 * (letters, digits, '_', not starting with a digit, at most
 * POLICY_MAX_SECRET_NAME bytes), each once; PLACEHOLDER what the sandbox
 * holds in its place (SECRETS_MIN_PLACEHOLDER to SECRETS_MAX_PLACEHOLDER
 * bytes of letters, digits, '-' and '_'), each distinct and none inside
 * another; VALUE the secret, 1 to SECRETS_MAX_VALUE bytes of visible
 * ASCII (0x21-0x7e: it goes into header values and request targets, where
 * a space, a control byte or a line break would change the request).  At
 * most SECRETS_MAX entries, SECRETS_MAX_FILE bytes in all.
 *
 * The parser is pure (gate_secrets_parse, fuzzed); its errors name the
 * line and what is wrong, never a byte of a value.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/gate.h"

struct gate_secrets {
	size_t			 n;
	struct gate_secret	 s[SECRETS_MAX];
	char			*mem;		/* names, placeholders, values */
	size_t			 memlen, used;
	int			 mapped;	/* mem is mmap(2)ed */
};

static int
name_ok(const char *p, size_t n)
{
	size_t	 i;

	if (n == 0 || n > POLICY_MAX_SECRET_NAME || (p[0] >= '0' && p[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' &&
		    p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return 0;
	return 1;
}

static int
placeholder_ok(const char *p, size_t n)
{
	size_t	 i;

	if (n < SECRETS_MIN_PLACEHOLDER || n > SECRETS_MAX_PLACEHOLDER)
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' &&
		    p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
		    p[i] == '_' || p[i] == '-'))
			return 0;
	return 1;
}

static int
value_ok(const char *p, size_t n)
{
	size_t	 i;

	if (n == 0 || n > SECRETS_MAX_VALUE)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			return 0;
	return 1;
}

/* Room for len bytes and a NUL in the secrets' own memory. */
static char *
keep(struct gate_secrets *ss, const char *p, size_t len)
{
	char	*d = ss->mem + ss->used;

	memcpy(d, p, len);
	d[len] = '\0';
	ss->used += len + 1;
	return d;
}

/*
 * Memory for n bytes that the kernel keeps out of swap and core dumps
 * when it can (mlock may be refused over RLIMIT_MEMLOCK: then it is
 * only left out of dumps; the gate is not dumpable anyway).
 */
static int
mem_new(struct gate_secrets *ss, size_t n)
{
	void	*m;

	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (m == MAP_FAILED) {
		if ((ss->mem = calloc(1, n)) == NULL)
			return -1;
	} else {
		ss->mem = m;
		ss->mapped = 1;
		(void)mlock(m, n);
		(void)madvise(m, n, MADV_DONTDUMP);
	}
	ss->memlen = n;
	return 0;
}

void
gate_secrets_free(struct gate_secrets *ss)
{
	if (ss == NULL)
		return;
	if (ss->mem != NULL) {
		explicit_bzero(ss->mem, ss->memlen);
		if (ss->mapped) {
			(void)munlock(ss->mem, ss->memlen);
			(void)munmap(ss->mem, ss->memlen);
		} else
			free(ss->mem);
	}
	explicit_bzero(ss, sizeof(*ss));
	free(ss);
}

static int
line_check(struct gate_secrets *ss, const char *line, size_t len,
    unsigned lineno, char *err, size_t errlen)
{
	const char	*f[3];
	size_t		 flen[3], k, i;
	const char	*p = line, *end = line + len, *sp;

	for (k = 0; k < 3; k++) {
		f[k] = p;
		sp = k < 2 ? memchr(p, ' ', (size_t)(end - p)) : end;
		if (sp == NULL) {
			snprintf(err, errlen, "secrets line %u: NAME PLACEHOLDER "
			    "VALUE expected", lineno);
			return -1;
		}
		flen[k] = (size_t)(sp - p);
		p = sp + 1;
	}
	if (!name_ok(f[0], flen[0])) {
		snprintf(err, errlen, "secrets line %u: the name is not letters, "
		    "digits and '_' (1 to %d bytes, not starting with a digit)",
		    lineno, POLICY_MAX_SECRET_NAME);
		return -1;
	}
	if (!placeholder_ok(f[1], flen[1])) {
		snprintf(err, errlen, "secrets line %u: the placeholder must be "
		    "%d to %d letters, digits, '-' or '_'", lineno,
		    SECRETS_MIN_PLACEHOLDER, SECRETS_MAX_PLACEHOLDER);
		return -1;
	}
	if (!value_ok(f[2], flen[2])) {
		snprintf(err, errlen, "secrets line %u: the value must be 1 to "
		    "%d bytes of visible ASCII (no space or control byte)",
		    lineno, SECRETS_MAX_VALUE);
		return -1;
	}
	for (i = 0; i < ss->n; i++) {
		const struct gate_secret *o = &ss->s[i];

		if (o->namelen == flen[0] && memcmp(o->name, f[0], flen[0]) == 0) {
			snprintf(err, errlen, "secrets line %u: the name is given "
			    "twice", lineno);
			return -1;
		}
		if (memmem(o->placeholder, o->plen, f[1], flen[1]) != NULL ||
		    memmem(f[1], flen[1], o->placeholder, o->plen) != NULL) {
			snprintf(err, errlen, "secrets line %u: the placeholder "
			    "is, or holds, the placeholder of %s", lineno,
			    o->name);
			return -1;
		}
	}
	if (ss->n == SECRETS_MAX) {
		snprintf(err, errlen, "secrets line %u: more than %d secrets",
		    lineno, SECRETS_MAX);
		return -1;
	}
	ss->s[ss->n].name = keep(ss, f[0], flen[0]);
	ss->s[ss->n].namelen = flen[0];
	ss->s[ss->n].placeholder = keep(ss, f[1], flen[1]);
	ss->s[ss->n].plen = flen[1];
	ss->s[ss->n].value = keep(ss, f[2], flen[2]);
	ss->s[ss->n].vlen = flen[2];
	ss->n++;
	return 0;
}

struct gate_secrets *
gate_secrets_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	static const char	 magic[] = "aisb-secrets 1\n";
	struct gate_secrets	*ss;
	const char		*p, *lf, *end = buf + len;
	unsigned		 lineno = 1;

	if (len > SECRETS_MAX_FILE) {
		snprintf(err, errlen, "secrets: more than %d bytes",
		    SECRETS_MAX_FILE);
		return NULL;
	}
	if (len < sizeof(magic) - 1 || memcmp(buf, magic, sizeof(magic) - 1)) {
		snprintf(err, errlen, "secrets line 1: \"aisb-secrets 1\" "
		    "expected");
		return NULL;
	}
	if ((ss = calloc(1, sizeof(*ss))) == NULL ||
	    mem_new(ss, len + 1) == -1) {
		free(ss);
		snprintf(err, errlen, "secrets: out of memory");
		return NULL;
	}
	for (p = buf + sizeof(magic) - 1; p < end; p = lf + 1) {
		lineno++;
		if ((lf = memchr(p, '\n', (size_t)(end - p))) == NULL) {
			snprintf(err, errlen, "secrets line %u: no line feed at "
			    "its end", lineno);
			goto fail;
		}
		if (line_check(ss, p, (size_t)(lf - p), lineno, err,
		    errlen) == -1)
			goto fail;
	}
	return ss;
 fail:
	gate_secrets_free(ss);
	return NULL;
}

/*
 * Read the descriptor to its end (bounded), parse, close it.  The bytes
 * read are wiped, whatever happens.
 */
struct gate_secrets *
gate_secrets_read(int fd, char *err, size_t errlen)
{
	struct gate_secrets	*ss = NULL;
	char			*buf;
	size_t			 len = 0;
	ssize_t			 n;

	if ((buf = malloc(SECRETS_MAX_FILE + 1)) == NULL) {
		snprintf(err, errlen, "secrets: out of memory");
		close(fd);
		return NULL;
	}
	while (len <= SECRETS_MAX_FILE) {
		n = read(fd, buf + len, SECRETS_MAX_FILE + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "secrets: reading descriptor %d: "
			    "%s", fd, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ss = gate_secrets_parse(buf, len, err, errlen);
 out:
	explicit_bzero(buf, SECRETS_MAX_FILE + 1);
	free(buf);
	close(fd);
	return ss;
}

size_t
gate_secrets_count(const struct gate_secrets *ss)
{
	return ss != NULL ? ss->n : 0;
}

const struct gate_secret *
gate_secrets_at(const struct gate_secrets *ss, size_t i)
{
	return ss != NULL && i < ss->n ? &ss->s[i] : NULL;
}

const struct gate_secret *
gate_secrets_find(const struct gate_secrets *ss, const char *name)
{
	size_t	 i;

	for (i = 0; ss != NULL && i < ss->n; i++)
		if (strcmp(ss->s[i].name, name) == 0)
			return &ss->s[i];
	return NULL;
}
