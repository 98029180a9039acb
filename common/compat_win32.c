/*
 * memmem and explicit_bzero for the Windows build (compat.h).
 */
#include "config.h"

#include <windows.h>
#include <string.h>

#include "compat.h"

void *
memmem(const void *h, size_t hlen, const void *n, size_t nlen)
{
	const char *p = h;
	size_t i;

	if (nlen == 0)
		return (void *)h;
	for (i = 0; nlen <= hlen && i <= hlen - nlen; i++)
		if (p[i] == *(const char *)n && memcmp(p + i, n, nlen) == 0)
			return (void *)(p + i);
	return NULL;
}

void
explicit_bzero(void *p, size_t len)
{
	SecureZeroMemory(p, len);
}
