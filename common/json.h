/*
 * JSON strings, read under a bound: the one reader behind aisb's small
 * JSON inputs (the gate's audit lines as the launcher reads them back,
 * package-lock.json, the Windows runner's lease and result documents).
 * Each of those walks its own object; only the string, the part with the
 * escapes, is here.
 *
 * Pure, libc only, no allocation: every read is below len, every write
 * below outsize.  A string that does not fit is refused, never cut: a
 * cut value is another value (a host, a path), and a caller that wants a
 * prefix takes it from a buffer that fits.
 */
#ifndef AISB_JSON_H
#define AISB_JSON_H

#include <sys/types.h>

#include <stddef.h>

/*
 * \u escapes are characters, written out as UTF-8, a surrogate pair as
 * the one character it encodes.  With JSON_BYTES a lone low surrogate
 * \udc80-\udcff is the byte 0x80-0xff instead: how the gate's audit
 * lines write a byte that is not part of valid UTF-8 (gate/audit.c,
 * docs/gate.md "The audit log"); any other lone surrogate is refused
 * either way.
 */
#define JSON_BYTES	0x01

/*
 * Reads the JSON string whose opening quote is in[0], from at most len
 * bytes of in (not NUL-terminated; len at most SSIZE_MAX).
 *
 * Decoded into out, outsize bytes, NUL-terminated, its length without the
 * NUL in *outlen (NULL: not wanted).  out may be NULL: the string is
 * then checked and skipped, of any length.  The decoded string never
 * holds a NUL (\u0000 is refused) and is never longer than its source.
 * Bytes from 0x80 are copied as they are, not checked as UTF-8.
 *
 * Returns the bytes the string took in in, both quotes included (> 0);
 * 0 when in ends before the string does (nothing is wrong so far: a
 * caller with the whole input treats it as "ends inside a string"); -1
 * when it is not a JSON string, or when it does not fit in out, with the
 * reason and its byte offset in err (errlen bytes; err may be NULL).
 * out's contents are unspecified unless the return is > 0.
 */
ssize_t	 json_string(const char *in, size_t len, char *out, size_t outsize,
	    size_t *outlen, int flags, char *err, size_t errlen);

#endif
