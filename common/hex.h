/*
 * Hex digits, read: the one decoder behind the gate's chunk sizes and
 * credential digests, the relay's and the snapshot core's percent
 * escapes, and the JSON reader's \u escapes (json.c).
 *
 * Pure, libc only (the enforcer, which links it, is carried into the
 * image with its shared libraries; this adds none).
 */
#ifndef AISB_HEX_H
#define AISB_HEX_H

/* The value of the hex digit c (either case), or -1 when c is not one. */
int	 hex_digit(int c);

/*
 * The byte that the two hex digits at s spell, or -1.  s[1] is read only
 * when s[0] is a digit, so a NUL-terminated string is never read past
 * its end; a caller with a counted buffer checks that two bytes remain.
 */
int	 hex_byte(const char *s);

#endif
