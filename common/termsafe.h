/*
 * What a string that a sandbox, a gate, a session's files or any other
 * file chose may put on the user's terminal: the one rule for every
 * place the launcher prints such a string, and the gate's for what it
 * writes into log lines, answers and captures.
 *
 * Passes: printable ASCII (0x20-0x7e) and well-formed UTF-8 for U+00A0
 * and up (shortest form, no surrogates, at most U+10FFFF).  Replaced:
 * the C0 controls (0x00-0x1f, so ESC, CR, BS and '\n' unless TERM_KEEP_NL
 * keeps it), DEL (0x7f), the C1 controls U+0080-U+009F (in UTF-8 C2 80 to
 * C2 9F; a terminal in UTF-8 mode takes U+009B as CSI, like ESC [), the
 * characters that reorder or hide text (bidirectional controls such as
 * U+202E, zero-width ones, U+FEFF: a name must read as what it is), and
 * every byte that does not start a well-formed UTF-8 character (stray
 * continuation bytes, overlong forms, truncated sequences, C0/C1, F5-FF).
 *
 * Each replaced character or bad byte becomes one '?', not \xNN: the
 * text never grows, so a cleaned copy fits the buffer of the original
 * (callers clean in place), the callers' fixed-width columns and
 * bounded error messages keep their sizes, and '?' is what every copy
 * this replaced already printed.  Names are shown, not round-tripped:
 * the exact bytes are in the file or the audit log.
 *
 * A cut at n bytes never splits a UTF-8 character: it ends before the
 * first byte of the character that would not fit whole.
 */
#ifndef AISB_TERMSAFE_H
#define AISB_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

#define TERM_KEEP_NL	0x01	/* '\n' passes: multi-line text */
/*
 * Printable ASCII alone passes; any other character (a whole UTF-8
 * sequence) is one '?'.  For names DNS and HTTP spell in ASCII (hosts,
 * and the summaries that list them for a rule to be written), so that a
 * look-alike letter (a Cyrillic a in "apple.test") shows as what it is
 * not: a name the gate would never have held.
 */
#define TERM_ASCII	0x02
/*
 * '"' and '\\' are replaced too: a value written between double quotes
 * into a line that its readers split without unescaping (an HTTP
 * header's quoted parameter, the comment of a --record capture).
 */
#define TERM_QUOTED	0x04
/* TERM_QUOTED's and ' ' too: a key=value value written without quotes */
#define TERM_WORD	0x08

/*
 * src (slen bytes; a NUL among them is a C0 control) cleaned into dst
 * (dlen bytes, NUL-terminated when dlen > 0), cut at dlen - 1 bytes on a
 * character boundary.  dst may be src (the output is never longer).  Returns the
 * bytes written without the NUL; *cut (when not NULL) is 1 when src did
 * not fit whole.
 */
size_t	 term_clean(char *dst, size_t dlen, const char *src, size_t slen,
	    int flags, int *cut);

/* The NUL-terminated s cleaned in place. */
void	 term_clean_str(char *s, int flags);

/* The NUL-terminated s, cleaned, to f; -1 on a write error. */
int	 term_fputs(const char *s, FILE *f, int flags);

/*
 * The longest prefix of s (len bytes) of at most n bytes that does not
 * end inside a UTF-8 character: n backed up over continuation bytes (at
 * most three).  For text term_clean made, a cut between characters.
 */
size_t	 term_cut(const char *s, size_t len, size_t n);

/*
 * The bytes of the character at s (len bytes): a well-formed UTF-8
 * character's length, 1 for a byte that starts none, 0 when len is 0.
 * With term_clean, one character shown alone (a parser's "'X' in a
 * name"), whole or as its '?'.
 */
size_t	 term_charlen(const char *s, size_t len);

#endif /* AISB_TERMSAFE_H */
