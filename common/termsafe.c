/*
 * The terminal-safe printer (termsafe.h): one rule for every string a
 * sandbox or a file chose, replacing fifteen loops that each had their
 * own (some let C1 or broken UTF-8 through, some cut inside a character).
 * The UTF-8 decoder is the strict one of RFC 3629 section 4 (the table
 * of well-formed byte sequences), so an overlong C1 (C1 80) or ESC
 * (C0 9B) cannot sneak past as "not a C1 byte".
 */
#include "config.h"

#include <string.h>

#include "termsafe.h"

/*
 * The length of the character at s (len > 0 bytes), and in *ok whether
 * it may be shown.  A byte that starts no well-formed character is one
 * byte long and not ok.
 */
/*
 * A well-formed character of n bytes at s that reorders or hides text:
 * the bidirectional controls (U+061C, U+200E-U+200F, U+202A-U+202E,
 * U+2066-U+2069, which can make "evil.example" read as another name:
 * the Trojan Source trick), the zero-width ones (U+200B-U+200D,
 * U+2060-U+2064) and U+FEFF.
 */
static int
hiding(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xd8 && s[1] == 0x9c;		/* U+061C */
	if (n != 3)
		return 0;
	if (s[0] == 0xe2 && s[1] == 0x80)		/* U+2000-U+203F */
		return (s[2] >= 0x8b && s[2] <= 0x8f) ||
		    (s[2] >= 0xaa && s[2] <= 0xae);
	if (s[0] == 0xe2 && s[1] == 0x81)		/* U+2040-U+207F */
		return (s[2] >= 0xa0 && s[2] <= 0xa4) ||
		    (s[2] >= 0xa6 && s[2] <= 0xa9);
	return s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf;	/* U+FEFF */
}

static size_t
term_char(const unsigned char *s, size_t len, int flags, int *ok)
{
	unsigned char	 c = s[0], lo = 0x80, hi = 0xbf;
	size_t		 n, i;

	*ok = 0;
	if (c < 0x80) {
		*ok = (c >= 0x20 && c != 0x7f) || (c == '\n' &&
		    (flags & TERM_KEEP_NL));
		if ((c == '"' || c == '\\') && (flags & (TERM_QUOTED |
		    TERM_WORD)))
			*ok = 0;
		if (c == ' ' && (flags & TERM_WORD))
			*ok = 0;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* no overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* at most U+10FFFF */
	} else
		return 1;	/* continuation, C0/C1 overlong, F5-FF */
	if (len < n || s[1] < lo || s[1] > hi)
		return 1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 1;
	/* C2 80 - C2 9F: U+0080 - U+009F, the C1 controls */
	*ok = !(flags & TERM_ASCII) && !(c == 0xc2 && s[1] <= 0x9f) &&
	    !hiding(s, n);
	return n;
}

size_t
term_clean(char *dst, size_t dlen, const char *src, size_t slen, int flags,
    int *cut)
{
	const unsigned char	*s = (const unsigned char *)src;
	size_t			 i = 0, o = 0, n;
	int			 ok;

	if (cut != NULL)
		*cut = 0;
	if (dlen == 0) {
		if (cut != NULL)
			*cut = slen > 0;
		return 0;
	}
	while (i < slen) {
		n = term_char(s + i, slen - i, flags, &ok);
		if (o + (ok ? n : 1) > dlen - 1) {
			if (cut != NULL)
				*cut = 1;
			break;
		}
		/* dst == src: o <= i, and memmove copes */
		if (ok)
			memmove(dst + o, src + i, n);
		else
			dst[o] = '?';
		o += ok ? n : 1;
		i += n;
	}
	dst[o] = '\0';
	return o;
}

void
term_clean_str(char *s, int flags)
{
	size_t	 len = strlen(s);

	term_clean(s, len + 1, s, len, flags, NULL);
}

int
term_fputs(const char *s, FILE *f, int flags)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 len = strlen(s), i = 0, n;
	int			 ok;

	while (i < len) {
		n = term_char(p + i, len - i, flags, &ok);
		if (ok ? fwrite(s + i, 1, n, f) != n : putc('?', f) == EOF)
			return -1;
		i += n;
	}
	return 0;
}

size_t
term_cut(const char *s, size_t len, size_t n)
{
	size_t	 k;

	if (n >= len)
		return len;
	/* s[n] starts the character that does not fit, unless it continues */
	for (k = 0; k < 3 && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80;
	    k++)
		n--;
	return n;
}

size_t
term_charlen(const char *s, size_t len)
{
	int	 ok;

	return len == 0 ? 0 : term_char((const unsigned char *)s, len, 0,
	    &ok);
}
