/*
 * Hex digits, read (hex.h).
 */
#include "config.h"

#include "hex.h"

int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
hex_byte(const char *s)
{
	int	 h, l;

	if ((h = hex_digit((unsigned char)s[0])) == -1 ||
	    (l = hex_digit((unsigned char)s[1])) == -1)
		return -1;
	return h << 4 | l;
}
