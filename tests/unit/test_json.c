/*
 * common/: the JSON string reader (json.h) and the hex digits under it
 * (hex.h).  Inputs are counted, not NUL-terminated: the cases that
 * check the bound leave a closing quote right past len, which a reader
 * that looked beyond it would take.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hex.h"
#include "json.h"

/* json_string over the whole of s (without its NUL) into out[size]. */
static ssize_t
rd(const char *s, char *out, size_t size, size_t *n, int flags, char *err,
    size_t errlen)
{
	return json_string(s, strlen(s), out, size, n, flags, err, errlen);
}

static void
hex_digits(void **state)
{
	int	 c;

	(void)state;
	for (c = -1; c < 512; c++) {
		const char	*d = c > 0 && c < 256 ?
		    strchr("0123456789abcdef", c) : NULL;
		const char	*u = c > 0 && c < 256 ?
		    strchr("0123456789ABCDEF", c) : NULL;
		int		 want = d ? (int)(d - "0123456789abcdef") :
		    u ? (int)(u - "0123456789ABCDEF") : -1;

		assert_int_equal(hex_digit(c), want);
	}
	assert_int_equal(hex_byte("00"), 0);
	assert_int_equal(hex_byte("fF"), 255);
	assert_int_equal(hex_byte("a5x"), 0xa5);
	assert_int_equal(hex_byte("5g"), -1);
	assert_int_equal(hex_byte("g5"), -1);
	/* a string that ends after one digit: s[1] is its NUL, not read on */
	assert_int_equal(hex_byte("7"), -1);
	assert_int_equal(hex_byte(""), -1);
	/* written: every byte, lower case, read back by hex_byte */
	{
		unsigned char	 all[256];
		char		 out[2 * 256 + 1];
		int		 i;

		for (i = 0; i < 256; i++)
			all[i] = (unsigned char)i;
		hex_encode(all, sizeof(all), out);
		assert_int_equal(strlen(out), 512);
		assert_memory_equal(out, "00010203", 8);
		assert_string_equal(out + 2 * 250, "fafbfcfdfeff");
		for (i = 0; i < 256; i++)
			assert_int_equal(hex_byte(out + 2 * i), i);
		out[0] = 'x';
		hex_encode(all, 0, out);
		assert_string_equal(out, "");
	}
}

static void
plain_and_escapes(void **state)
{
	char	 out[64], err[128];
	size_t	 n = 99;

	(void)state;
	/* what follows the closing quote is not the string's */
	assert_int_equal(rd("\"abc\", \"x\"", out, sizeof(out), &n, 0, err,
	    sizeof(err)), 5);
	assert_string_equal(out, "abc");
	assert_int_equal(n, 3);
	assert_int_equal(rd("\"\"", out, sizeof(out), &n, 0, err,
	    sizeof(err)), 2);
	assert_string_equal(out, "");
	assert_int_equal(n, 0);
	assert_int_equal(rd("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", out, sizeof(out),
	    &n, 0, err, sizeof(err)), 18);
	assert_string_equal(out, "\"\\/\b\f\n\r\t");
	/* UTF-8 and DEL as they are: JSON escapes only what is below 0x20 */
	assert_int_equal(rd("\"\xc3\xa9\x7f\"", out, sizeof(out), &n, 0, err,
	    sizeof(err)), 5);
	assert_string_equal(out, "\xc3\xa9\x7f");
	/* outlen may be NULL */
	assert_int_equal(rd("\"q\"", out, sizeof(out), NULL, 0, NULL, 0), 3);
}

static void
unicode_escapes(void **state)
{
	char	 out[64], err[128];
	size_t	 n;

	(void)state;
	assert_int_equal(rd("\"\\u0041\\u00e9\\u20AC\"", out, sizeof(out), &n,
	    0, err, sizeof(err)), 20);
	assert_string_equal(out, "A\xc3\xa9\xe2\x82\xac");
	assert_int_equal(n, 6);
	/* a surrogate pair is one character, four bytes of UTF-8 */
	assert_int_equal(rd("\"\\ud83d\\ude00\"", out, sizeof(out), &n, 0, err,
	    sizeof(err)), 14);
	assert_string_equal(out, "\xf0\x9f\x98\x80");
	assert_int_equal(rd("\"x\\uD834\\uDD1Ey\"", out, sizeof(out), &n, 0,
	    err, sizeof(err)), 16);
	assert_string_equal(out, "x\xf0\x9d\x84\x9ey");
	/* the first and the last of each UTF-8 length */
	assert_int_equal(rd("\"\\u007f\\u0080\\u07ff\\u0800\\uffff"
	    "\\udbff\\udfff\"", out, sizeof(out), &n, 0, err, sizeof(err)), 44);
	assert_int_equal(n, 1 + 2 + 2 + 3 + 3 + 4);
	assert_memory_equal(out, "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"
	    "\xf4\x8f\xbf\xbf", 15);
}

static void
surrogates_alone_refused(void **state)
{
	char	 out[64], err[128];

	(void)state;
	assert_int_equal(rd("\"\\ud83d\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "without its low half"));
	assert_int_equal(rd("\"\\ud83dx\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_int_equal(rd("\"\\ud83d\\n\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	/* a high half twice, or one followed by an ordinary character */
	assert_int_equal(rd("\"\\ud83d\\ud83d\"", out, sizeof(out), NULL, 0,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "followed by \\ud83d"));
	assert_int_equal(rd("\"\\ud83d\\u0041\"", out, sizeof(out), NULL, 0,
	    err, sizeof(err)), -1);
	assert_int_equal(rd("\"\\ude00\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "without its high half"));
	assert_string_equal(err, "byte 1: \\ude00, the low half of a surrogate "
	    "pair, without its high half");
}

static void
bytes_mode(void **state)
{
	char	 out[64], err[128];
	size_t	 n;

	(void)state;
	/*
	 * the gate's audit lines: characters are characters, and a lone
	 * \udc80-\udcff is the byte that was not UTF-8
	 */
	assert_int_equal(rd("\"a\\u00e9\\u0001\\udcff\\ud83d\\ude00\"", out,
	    sizeof(out), &n, JSON_BYTES, err, sizeof(err)), 33);
	assert_int_equal(n, 1 + 2 + 1 + 1 + 4);
	assert_memory_equal(out, "a\xc3\xa9\x01\xff\xf0\x9f\x98\x80", 10);
	assert_int_equal(rd("\"\\udc80\\u20ac\"", out, sizeof(out), &n,
	    JSON_BYTES, err, sizeof(err)), 14);
	assert_memory_equal(out, "\x80\xe2\x82\xac", 5);
	/* not a byte's escape: below \udc80, or without the flag */
	assert_int_equal(rd("\"\\udc7f\"", out, sizeof(out), &n, JSON_BYTES,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "without its high half"));
	assert_int_equal(rd("\"\\udcff\"", out, sizeof(out), &n, 0,
	    err, sizeof(err)), -1);
	/* a lone high half stays refused */
	assert_int_equal(rd("\"\\ud83dx\"", out, sizeof(out), &n, JSON_BYTES,
	    err, sizeof(err)), -1);
}

static void
nul_refused(void **state)
{
	char	 out[64], err[128];

	(void)state;
	/* a NUL would cut the C string the caller gets: in both modes */
	assert_int_equal(rd("\"a\\u0000b\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 2: \\u0000 (a C string cannot hold it)");
	assert_int_equal(rd("\"a\\u0000b\"", out, sizeof(out), NULL,
	    JSON_BYTES, err, sizeof(err)), -1);
	assert_int_equal(json_string("\"a\0b\"", 5, out, sizeof(out), NULL, 0,
	    err, sizeof(err)), -1);
	assert_string_equal(err, "byte 2: a control byte 0x00 in a string "
	    "(JSON writes it as an escape)");
}

static void
malformed(void **state)
{
	char	 out[64], err[128];

	(void)state;
	assert_int_equal(rd("abc\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "no opening quote"));
	assert_int_equal(rd("\"a\nb\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 2: a control byte 0x0a in a string "
	    "(JSON writes it as an escape)");
	assert_int_equal(rd("\"\x1f\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_int_equal(rd("\"ab\\x\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 3: an unknown escape \\x");
	assert_int_equal(rd("\"\\'\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_int_equal(rd("\"\\\x01\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 1: an unknown escape \\ and byte 0x01");
	assert_int_equal(rd("\"\\u12g4\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 5: \\u wants four hex digits");
	assert_int_equal(rd("\"\\u12\"", out, sizeof(out), NULL, 0, err,
	    sizeof(err)), -1);
	/* no err: the same answer */
	assert_int_equal(rd("\"\\q\"", out, sizeof(out), NULL, 0, NULL, 0), -1);
	/* a short err is cut, still a C string */
	assert_int_equal(rd("\"\\q\"", out, sizeof(out), NULL, 0, err, 10), -1);
	assert_string_equal(err, "byte 1: a");
}

static void
output_bound(void **state)
{
	char	 out[8], err[128];
	size_t	 n;

	(void)state;
	/* seven bytes and the NUL fit in eight; eight do not, never cut */
	assert_int_equal(rd("\"1234567\"", out, 8, &n, 0, err, sizeof(err)),
	    9);
	assert_string_equal(out, "1234567");
	assert_int_equal(rd("\"12345678\"", out, 8, &n, 0, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "byte 8: the string is longer than 7 bytes");
	/* an escape's bytes go whole or not at all */
	assert_int_equal(rd("\"12345\\u20ac\"", out, 8, &n, 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "byte 6: the string is longer than 7 bytes");
	assert_int_equal(rd("\"1234\\u20ac\"", out, 8, &n, 0, err,
	    sizeof(err)), 12);
	assert_int_equal(n, 7);
	assert_int_equal(rd("\"1234\\ud83d\\ude00\"", out, 8, &n, 0, err,
	    sizeof(err)), -1);
	assert_int_equal(rd("\"\"", out, 1, &n, 0, err, sizeof(err)), 2);
	assert_int_equal(rd("\"a\"", out, 1, &n, 0, err, sizeof(err)), -1);
	assert_int_equal(rd("\"\"", out, 0, &n, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no room"));
}

static void
skip_without_output(void **state)
{
	char	*big;
	size_t	 n = 0;

	(void)state;
	/* out NULL: checked and skipped, of any length */
	assert_non_null(big = malloc(100003));
	big[0] = '"';
	memset(big + 1, 'x', 100000);
	memcpy(big + 100001, "\"}", 2);
	assert_int_equal(json_string(big, 100003, NULL, 0, &n, 0, NULL, 0),
	    100002);
	assert_int_equal(n, 100000);
	/* and still checked */
	big[5000] = '\t';
	assert_int_equal(json_string(big, 100003, NULL, 0, &n, 0, NULL, 0),
	    -1);
	free(big);
}

static void
input_bound(void **state)
{
	static const char	 good[] =
	    "\"a\\n\\u00e9\\ud83d\\ude00\\\"z\"";
	char			 out[64], err[128];
	size_t			 k, len = sizeof(good) - 1;

	(void)state;
	assert_int_equal(json_string(good, len, out, sizeof(out), NULL, 0, err,
	    sizeof(err)), (ssize_t)len);
	/*
	 * Every prefix of a good string is "need more", never an error and
	 * never a string (good[k] is past the bound: a reader that looked at
	 * it would see the closing quote at k = len - 1 and finish early).
	 */
	for (k = 0; k < len; k++)
		assert_int_equal(json_string(good, k, out, sizeof(out), NULL,
		    0, err, sizeof(err)), 0);
	/* the same with JSON_BYTES, which reads it the same way */
	for (k = 0; k < len; k++)
		assert_int_equal(json_string(good, k, out, sizeof(out), NULL,
		    JSON_BYTES, err, sizeof(err)), 0);
	/* "ab then a quote just past len: 0, not a string of 2 */
	assert_int_equal(json_string("\"ab\"", 3, out, sizeof(out), NULL, 0,
	    err, sizeof(err)), 0);
	assert_int_equal(json_string("\"\\\"", 2, out, sizeof(out), NULL, 0,
	    err, sizeof(err)), 0);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(hex_digits),
		cmocka_unit_test(plain_and_escapes),
		cmocka_unit_test(unicode_escapes),
		cmocka_unit_test(surrogates_alone_refused),
		cmocka_unit_test(bytes_mode),
		cmocka_unit_test(nul_refused),
		cmocka_unit_test(malformed),
		cmocka_unit_test(output_bound),
		cmocka_unit_test(skip_without_output),
		cmocka_unit_test(input_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
