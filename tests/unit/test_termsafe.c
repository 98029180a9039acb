/*
 * common/termsafe.h: what a sandbox- or file-chosen string may put on a
 * terminal, and the cut that never splits a UTF-8 character.
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

#include "termsafe.h"

/* in, cleaned with flags into a roomy buffer, is want */
static void
clean_is(const char *in, size_t len, int flags, const char *want)
{
	char	 out[256], *mem = NULL, *dup;
	size_t	 mlen = 0;
	FILE	*f;
	int	 cut;

	assert_int_equal(term_clean(out, sizeof(out), in, len, flags, &cut),
	    strlen(want));
	assert_string_equal(out, want);
	assert_int_equal(cut, 0);
	/* in place and to a stream: the same */
	assert_non_null(dup = strndup(in, len));
	term_clean_str(dup, flags);
	assert_string_equal(dup, want);
	free(dup);
	assert_non_null(f = open_memstream(&mem, &mlen));
	assert_non_null(dup = strndup(in, len));
	assert_int_equal(term_fputs(dup, f, flags), 0);
	free(dup);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(mem, want);
	free(mem);
}

#define CLEAN(in, flags, want)	clean_is(in, sizeof(in) - 1, flags, want)

static void
ascii_and_escapes(void **state)
{
	(void)state;
	CLEAN("plain text 0-9 ~", 0, "plain text 0-9 ~");
	/* ESC [ 2 J, OSC 52 (clipboard), BEL, BS, CR, TAB, DEL */
	CLEAN("a\x1b[2Jb", 0, "a?[2Jb");
	CLEAN("\x1b]52;c;aGk=\x07", 0, "?]52;c;aGk=?");
	CLEAN("x\bx\ry\tz\x7f", 0, "x?x?y?z?");
	CLEAN("one\ntwo\n", 0, "one?two?");
	CLEAN("one\ntwo\r\n", TERM_KEEP_NL, "one\ntwo?\n");
	/* a NUL in a counted string is a control like the others */
	{
		char	 out[8];

		assert_int_equal(term_clean(out, sizeof(out), "ab\0cd", 5, 0,
		    NULL), 5);
		assert_string_equal(out, "ab?cd");
	}
}

static void
utf8_and_c1(void **state)
{
	(void)state;
	/* well-formed: passes (U+00A0, é, €, U+10FFFF, an emoji) */
	CLEAN("\xc2\xa0\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80",
	    0, "\xc2\xa0\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80");
	/* C1 as UTF-8: U+0080, U+009B (CSI), U+009F: one '?' each */
	CLEAN("a\xc2\x80" "b\xc2\x9b" "2Jc\xc2\x9f", 0, "a?b?2Jc?");
	/* C1 as bare bytes (Latin-1 CSI) */
	CLEAN("a\x9b" "2J\x85", 0, "a?2J?");
	/* reordering and hiding: U+202E (RLO) makes "evil.com\u202Egnp.exe"
	 * read otherwise; U+2066, U+200B, U+200F, U+061C, U+FEFF, U+2064;
	 * their neighbours (U+2010, U+2065, U+2070, U+FEFE) pass */
	CLEAN("evil\xe2\x80\xae" "gnp", 0, "evil?gnp");
	/* TERM_ASCII: a look-alike (Cyrillic a, U+0430) and any other
	 * non-ASCII character is one '?', ASCII passes as before */
	CLEAN("\xd0\xb0pple.test \xe2\x82\xac", TERM_ASCII, "?pple.test ?");
	CLEAN("a\x1b[b\xc2\x9b", TERM_ASCII, "a?[b?");
	CLEAN("\xe2\x81\xa6" "a\xe2\x80\x8b" "b\xe2\x80\x8f" "c\xd8\x9c"
	    "d\xef\xbb\xbf" "e\xe2\x81\xa4", 0, "?a?b?c?d?e?");
	CLEAN("\xe2\x80\x90\xe2\x81\xa5\xe2\x81\xb0\xef\xbb\xbe", 0,
	    "\xe2\x80\x90\xe2\x81\xa5\xe2\x81\xb0\xef\xbb\xbe");
}

static void
bad_utf8(void **state)
{
	(void)state;
	/* overlong: '/' as C0 AF, ESC as C0 9B, U+009B as E0 82 9B, NUL */
	CLEAN("\xc0\xaf", 0, "??");
	CLEAN("\xc0\x9b[2J", 0, "??[2J");
	CLEAN("\xe0\x82\x9b", 0, "???");
	CLEAN("\xf0\x80\x80\x80", 0, "????");
	CLEAN("\xc1\xbf", 0, "??");
	/* surrogates, past U+10FFFF, F5-FF */
	CLEAN("\xed\xa0\x80", 0, "???");
	CLEAN("\xf4\x90\x80\x80", 0, "????");
	CLEAN("\xf5\x80\xff\xfe", 0, "????");
	/* truncated: a lead without its continuations, at the end and not */
	CLEAN("\xe2\x82", 0, "??");
	CLEAN("\xe2\x82x", 0, "??x");
	CLEAN("\xf0\x9f\x98", 0, "???");
	CLEAN("\xc3", 0, "?");
	/* stray continuation bytes */
	CLEAN("\x80\xbf" "ok", 0, "??ok");
}

/*
 * A value between quotes (TERM_QUOTED) or a key=value word (TERM_WORD):
 * the quote and the backslash, and for a word the space, are one '?'
 * each; the rest as without the flag.
 */
static void
quoted_and_word(void **state)
{
	(void)state;
	CLEAN("a \"b\" c\\d", TERM_QUOTED, "a ?b? c?d");
	CLEAN("a \"b\" c\\d", TERM_WORD, "a??b??c?d");
	CLEAN("a \"b\" c\\d", 0, "a \"b\" c\\d");
	/* with TERM_ASCII, as the gate's header and capture values are */
	CLEAN("r\xc3\xa9gle \"x\"\x1b", TERM_ASCII | TERM_QUOTED,
	    "r?gle ?x??");
	CLEAN("h\xc3\xa9 s\x7f", TERM_ASCII | TERM_WORD, "h??s?");
	/* a tab and a newline were controls already */
	CLEAN("a\tb\nc", TERM_WORD, "a?b?c");
}

/* One character's bytes: whole when well-formed, else the one bad byte. */
static void
charlen(void **state)
{
	char	 out[8];
	size_t	 n;

	(void)state;
	assert_int_equal(term_charlen("", 0), 0);
	assert_int_equal(term_charlen("ab", 2), 1);
	assert_int_equal(term_charlen("\xc3\xa9x", 3), 2);
	assert_int_equal(term_charlen("\xe2\x82\xac", 3), 3);
	assert_int_equal(term_charlen("\xf0\x9f\x98\x80", 4), 4);
	/* cut short by len, overlong, a stray continuation, C1 as UTF-8 */
	assert_int_equal(term_charlen("\xe2\x82\xac", 2), 1);
	assert_int_equal(term_charlen("\xc0\xaf", 2), 1);
	assert_int_equal(term_charlen("\x80", 1), 1);
	assert_int_equal(term_charlen("\xc2\x9b", 2), 2);
	/* with term_clean: the character alone, or its '?' */
	n = term_charlen("\xc3\xa9z", 3);
	assert_int_equal(term_clean(out, sizeof(out), "\xc3\xa9z", n, 0,
	    NULL), 2);
	assert_string_equal(out, "\xc3\xa9");
	n = term_charlen("\xc2\x9bz", 3);
	assert_int_equal(term_clean(out, sizeof(out), "\xc2\x9bz", n, 0,
	    NULL), 1);
	assert_string_equal(out, "?");
}

/* The cut at dlen: never inside a character, at every byte of each. */
static void
cut_never_splits(void **state)
{
	static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac",
	    "\xf0\x9f\x98\x80" };
	char	 in[32], out[32];
	size_t	 c, k, n, cl, got;
	int	 cut;

	(void)state;
	for (c = 0; c < 3; c++) {
		cl = strlen(chars[c]);
		snprintf(in, sizeof(in), "ab%scd", chars[c]);
		/* dlen - 1 == k bytes of room, k from 0 past the end */
		for (k = 0; k <= strlen(in) + 1; k++) {
			got = term_clean(out, k + 1, in, strlen(in), 0, &cut);
			if (k < 2)
				n = k;
			else if (k < 2 + cl)
				n = 2;		/* the character does not fit */
			else
				n = k < strlen(in) ? k : strlen(in);
			assert_int_equal(got, n);
			assert_memory_equal(out, in, n);
			assert_int_equal(out[n], '\0');
			assert_int_equal(cut, n < strlen(in));
			/* term_cut on the raw text: the same boundary */
			assert_int_equal(term_cut(in, strlen(in), k), n);
		}
	}
	/* a '?' for a bad byte is one byte: it fits where one byte does */
	assert_int_equal(term_clean(out, 3, "a\x1b" "b", 3, 0, &cut), 2);
	assert_string_equal(out, "a?");
	assert_int_equal(cut, 1);
	assert_int_equal(term_clean(out, 0, "a", 1, 0, &cut), 0);
	assert_int_equal(cut, 1);
	assert_int_equal(term_cut("abc", 3, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ascii_and_escapes),
		cmocka_unit_test(utf8_and_c1),
		cmocka_unit_test(bad_utf8),
		cmocka_unit_test(cut_never_splits),
		cmocka_unit_test(quoted_and_word),
		cmocka_unit_test(charlen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
