/*
 * Hex digits, read: the one decoder behind the gate's chunk sizes and
 * credential digests, the relay's and the snapshot core's percent
 * escapes, and the JSON reader's \u escapes (json.c); and written, for
 * the launcher's digests (image tags, trust markers).
 *
 * Pure, libc only (the static enforcer links it).
 */
#ifndef AISB_HEX_H
#define AISB_HEX_H

#include <stddef.h>

/* The value of the hex digit c (either case), or -1 when c is not one. */
int	 hex_digit(int c);

/*
 * The byte that the two hex digits at s spell, or -1.  s[1] is read only
 * when s[0] is a digit, so a NUL-terminated string is never read past
 * its end; a caller with a counted buffer checks that two bytes remain.
 */
int	 hex_byte(const char *s);

/*
 * The n bytes at p as 2 * n lower-case hex digits and a NUL into out,
 * which holds at least 2 * n + 1 bytes.
 */
void	 hex_encode(const void *p, size_t n, char *out);

#endif
