/*
 * Hex digits, read and written (hex.h).
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

void
hex_encode(const void *p, size_t n, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	const unsigned char	*b = p;
	size_t			 i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 0xf];
	}
	out[2 * n] = '\0';
}
