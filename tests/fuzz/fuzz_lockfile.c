/*
 * libFuzzer: the lockfile and tool-configuration scanners
 * (launcher/policytools/lockfile*.c), which read what an untrusted
 * repository hands over.  Byte 0 picks the format, byte 1 the flags and (for go.sum) the
 * GOPROXY; the rest is the file.  Whatever the bytes: no crash, no read
 * past the input, at most LOCKFILE_MAX_HOSTS hosts, each a host name the
 * policy parser accepts, never an IP literal, on 443 or (with
 * LOCKFILE_HTTP only) 80; an error is one printable line.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policytools/lockfile.h"
#include "policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const char *const proxies[] = {
		NULL, "direct", "https://goproxy.example.test,direct", "off",
	};
	static struct lockfile_hosts	 h;
	struct policy_target		 t;
	char				 err[512], e[128], *copy;
	unsigned			 flags;
	size_t				 i;
	int				 kind, rc;

	if (len < 2)
		return 0;
	kind = data[0] % LOCKFILE__COUNT;
	flags = data[1] & 1 ? LOCKFILE_HTTP : 0;
	/* a copy of exactly the file: reads past it are caught */
	if ((copy = malloc(len - 2 ? len - 2 : 1)) == NULL)
		return 0;
	memcpy(copy, data + 2, len - 2);
	memset(&h, 0, sizeof(h));
	memset(err, 0x55, sizeof(err));
	rc = lockfile_parse((enum lockfile_kind)kind, copy, len - 2, flags,
	    proxies[(data[1] >> 1) & 3], 7, &h, err, sizeof(err));
	free(copy);
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			abort();
		for (i = 0; err[i] != '\0'; i++)
			if (err[i] < 0x20 || err[i] >= 0x7f)
				abort();
		return 0;
	}
	if (h.n > LOCKFILE_MAX_HOSTS)
		abort();
	for (i = 0; i < h.n; i++) {
		if (h.h[i].port != 443 && !(h.h[i].port == 80 &&
		    (flags & LOCKFILE_HTTP)))
			abort();
		if (h.h[i].file != 7)
			abort();
		if (policy_parse_target(h.h[i].host, strlen(h.h[i].host),
		    h.h[i].port, &t, e, sizeof(e)) == -1 || t.is_ip ||
		    strcmp(t.host, h.h[i].host) != 0 ||
		    strchr(h.h[i].host, '*') != NULL)
			abort();
	}
	return 0;
}
