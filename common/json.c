/*
 * JSON strings, read under a bound (json.h).
 *
 * One pass over the source, one byte of look-ahead at most past what it
 * has checked: an input that ends early is "need more" (0) at any point,
 * so a prefix of a good string is never called bad.  The decoded string
 * is never longer than its source (an escape of 2, 6 or 12 bytes gives
 * 1, at most 3, or 4), which the fuzzer checks.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"
#include "json.h"

struct rd {
	const char	*in;
	size_t		 len;
	size_t		 i;		/* the next byte of in to read */
	char		*out;		/* NULL: check and skip */
	size_t		 outsize;
	size_t		 n;		/* bytes decoded; below outsize */
	int		 flags;
	char		*err;
	size_t		 errlen;
};

/* json.c is built for Windows too, where configure asks for mingw-w64's
 * C99 printf: GNU's formats, not Microsoft's (the "printf" archetype) */
#if defined(__MINGW32__)
#define JSON_PRINTF	gnu_printf
#else
#define JSON_PRINTF	printf
#endif

/* "byte AT: what" into the caller's err; -1. */
static int	 bad(struct rd *, size_t, const char *, ...)
		    __attribute__((format(JSON_PRINTF, 3, 4)));

static int
bad(struct rd *r, size_t at, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (r->err == NULL || r->errlen == 0)
		return -1;
	n = snprintf(r->err, r->errlen, "byte %zu: ", at);
	if (n >= 0 && (size_t)n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* k decoded bytes of the escape or byte at in[at]; 1, or -1 if no room. */
static int
put(struct rd *r, const unsigned char *b, size_t k, size_t at)
{
	if (r->out != NULL) {
		/* k bytes and the NUL after them */
		if (k >= r->outsize - r->n)
			return bad(r, at, "the string is longer than %zu bytes",
			    r->outsize - 1);
		memcpy(r->out + r->n, b, k);
	}
	r->n += k;
	return 1;
}

/* The four hex digits at in[i] into *cp: 1, 0 when in ends first, -1. */
static int
hex4(struct rd *r, size_t i, unsigned *cp)
{
	size_t	 k;
	int	 h;

	*cp = 0;
	for (k = 0; k < 4; k++) {
		if (i + k >= r->len)
			return 0;
		if ((h = hex_digit((unsigned char)r->in[i + k])) == -1)
			return bad(r, i + k, "\\u wants four hex digits");
		*cp = *cp << 4 | (unsigned)h;
	}
	return 1;
}

/*
 * The \u escape whose backslash is at in[at] (r->i at its 'u'), and the
 * low half of a surrogate pair after it: 1 with r->i past them, 0, -1.
 */
static int
uescape(struct rd *r, size_t at)
{
	unsigned char	 b[4];
	unsigned	 cp, lo;
	size_t		 k;
	int		 rc;

	if ((rc = hex4(r, r->i + 1, &cp)) != 1)
		return rc;
	r->i += 5;
	if (cp == 0)
		return bad(r, at, "\\u0000 (a C string cannot hold it)");
	/* a byte that was not UTF-8, written as a lone low surrogate */
	if ((r->flags & JSON_BYTES) && cp >= 0xdc80 && cp <= 0xdcff) {
		b[0] = (unsigned char)(cp & 0xff);
		return put(r, b, 1, at);
	}
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return bad(r, at, "\\u%04x, the low half of a surrogate pair, "
		    "without its high half", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (r->i >= r->len || (r->in[r->i] == '\\' &&
		    r->i + 1 >= r->len))
			return 0;
		if (r->in[r->i] != '\\' || r->in[r->i + 1] != 'u')
			return bad(r, at, "\\u%04x, the high half of a "
			    "surrogate pair, without its low half", cp);
		if ((rc = hex4(r, r->i + 2, &lo)) != 1)
			return rc;
		if (lo < 0xdc00 || lo > 0xdfff)
			return bad(r, at, "\\u%04x, the high half of a "
			    "surrogate pair, followed by \\u%04x", cp, lo);
		r->i += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	return put(r, b, k, at);
}

/* The escape whose backslash is at in[r->i]: 1 with r->i past it, 0, -1. */
static int
escape(struct rd *r)
{
	static const char	 from[] = "\"\\/bfnrt";
	static const char	 to[] = "\"\\/\b\f\n\r\t";
	const char		*e;
	size_t			 at = r->i;
	unsigned char		 c;

	if (++r->i >= r->len)
		return 0;
	c = (unsigned char)r->in[r->i];
	if (c == 'u')
		return uescape(r, at);
	if (c == '\0' || (e = strchr(from, c)) == NULL) {
		if (c > 0x20 && c < 0x7f)
			return bad(r, at, "an unknown escape \\%c", c);
		return bad(r, at, "an unknown escape \\ and byte 0x%02x", c);
	}
	r->i++;
	c = (unsigned char)to[e - from];
	return put(r, &c, 1, at);
}

ssize_t
json_string(const char *in, size_t len, char *out, size_t outsize,
    size_t *outlen, int flags, char *err, size_t errlen)
{
	struct rd	 r;
	unsigned char	 c;
	int		 rc;

	memset(&r, 0, sizeof(r));
	r.in = in;
	r.len = len < SSIZE_MAX ? len : SSIZE_MAX;
	r.out = out;
	r.outsize = outsize;
	r.flags = flags;
	r.err = err;
	r.errlen = errlen;
	if (out != NULL && outsize == 0)
		return bad(&r, 0, "no room for a string (an output of 0 "
		    "bytes)");
	if (r.len == 0)
		return 0;
	if (in[0] != '"')
		return bad(&r, 0, "a string was expected (no opening quote)");
	for (r.i = 1;; ) {
		if (r.i >= r.len)
			return 0;
		c = (unsigned char)in[r.i];
		if (c == '"')
			break;
		if (c < 0x20)
			return bad(&r, r.i, "a control byte 0x%02x in a string "
			    "(JSON writes it as an escape)", c);
		if (c == '\\')
			rc = escape(&r);
		else if ((rc = put(&r, &c, 1, r.i)) == 1)
			r.i++;
		if (rc != 1)
			return rc;
	}
	if (out != NULL)
		out[r.n] = '\0';
	if (outlen != NULL)
		*outlen = r.n;
	return (ssize_t)(r.i + 1);
}
