/*
 * SHA-256 for libaisbsnap: the project's one implementation, libcrypto's
 * (as gate/auth.c, policy/dump.c and launcher/record.c use it).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "snap-int.h"

struct snap_sha {
	EVP_MD_CTX	*ctx;
};

struct snap_sha *
snap_sha_new(void)
{
	struct snap_sha	*s;

	if ((s = malloc(sizeof(*s))) == NULL)
		return NULL;
	if ((s->ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(s->ctx);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int
snap_sha_update(struct snap_sha *s, const void *p, size_t len)
{
	if (EVP_DigestUpdate(s->ctx, p, len) != 1) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static void
tohex(const unsigned char *md, unsigned int len, char *hex)
{
	static const char	digits[] = "0123456789abcdef";
	unsigned int		i;

	for (i = 0; i < len && i < SNAP_SHA256_HEX / 2; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * i] = '\0';
}

int
snap_sha_final(struct snap_sha *s, char *hex)
{
	unsigned char	md[EVP_MAX_MD_SIZE];
	unsigned int	len = 0;
	int		rc = 0;

	if (EVP_DigestFinal_ex(s->ctx, md, &len) != 1 || len != 32) {
		errno = EIO;
		rc = -1;
	} else
		tohex(md, len, hex);
	snap_sha_free(s);
	return rc;
}

void
snap_sha_free(struct snap_sha *s)
{
	if (s == NULL)
		return;
	EVP_MD_CTX_free(s->ctx);
	free(s);
}

int
snap_sha_buf(const void *p, size_t len, char *hex)
{
	unsigned char	md[EVP_MAX_MD_SIZE];
	unsigned int	mdlen = 0;

	if (EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		errno = EIO;
		return -1;
	}
	tohex(md, mdlen, hex);
	return 0;
}
