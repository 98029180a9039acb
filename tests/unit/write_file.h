/*
 * The launcher unit tests' one way to write a small file they then make
 * aisb read (configs, recipes, watched files): whole, or the test fails.
 * Include after <cmocka.h>.
 */
#ifndef AISB_TEST_WRITE_FILE_H
#define AISB_TEST_WRITE_FILE_H

#include <stdio.h>

static __attribute__((unused)) void
write_file(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

#endif
