/*
 * SHA-256 for libaisbsnap on Windows: the system's (BCrypt), as hash.c
 * uses libcrypto's on Linux.  Same API (snap-int.h).
 */
#include "config.h"

#include <windows.h>
#include <bcrypt.h>
#include <errno.h>
#include <stdlib.h>

#include "snap-int.h"

struct snap_sha {
	BCRYPT_ALG_HANDLE	alg;
	BCRYPT_HASH_HANDLE	h;
};

struct snap_sha *
snap_sha_new(void)
{
	struct snap_sha *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if (BCryptOpenAlgorithmProvider(&s->alg, BCRYPT_SHA256_ALGORITHM, NULL,
	    0) != 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (BCryptCreateHash(s->alg, &s->h, NULL, 0, NULL, 0, 0) != 0) {
		BCryptCloseAlgorithmProvider(s->alg, 0);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int
snap_sha_update(struct snap_sha *s, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;

		if (BCryptHashData(s->h, (PUCHAR)b, n, 0) != 0) {
			errno = EIO;
			return -1;
		}
		b += n;
		len -= n;
	}
	return 0;
}

int
snap_sha_final(struct snap_sha *s, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[32];
	int i, rc = 0;

	if (BCryptFinishHash(s->h, md, sizeof(md), 0) != 0) {
		errno = EIO;
		rc = -1;
	} else {
		for (i = 0; i < 32; i++) {
			hex[2 * i] = digits[md[i] >> 4];
			hex[2 * i + 1] = digits[md[i] & 15];
		}
		hex[64] = '\0';
	}
	snap_sha_free(s);
	return rc;
}

void
snap_sha_free(struct snap_sha *s)
{
	if (s == NULL)
		return;
	BCryptDestroyHash(s->h);
	BCryptCloseAlgorithmProvider(s->alg, 0);
	free(s);
}

int
snap_sha_buf(const void *p, size_t len, char *hex)
{
	struct snap_sha *s;

	if ((s = snap_sha_new()) == NULL)
		return -1;
	if (snap_sha_update(s, p, len) == -1) {
		snap_sha_free(s);
		return -1;
	}
	return snap_sha_final(s, hex);
}
