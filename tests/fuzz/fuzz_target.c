/*
 * libFuzzer: host:port parsing.  Whatever parses must be a normalised
 * target: parsing its own printed form again gives the same target.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_target	 t, u;
	char			 err[128], again[600];
	int			 n;

	if (policy_parse_target((const char *)data, size, 443, &t, err,
	    sizeof(err)) == -1)
		return 0;
	if (t.port == 0 || t.hostlen == 0 || t.hostlen > POLICY_MAX_NAME ||
	    strlen(t.host) != t.hostlen)
		abort();
	n = snprintf(again, sizeof(again),
	    t.is_ip && t.addr.family == AF_INET6 ? "[%s]:%u" : "%s:%u",
	    t.host, t.port);
	if (n < 0 || (size_t)n >= sizeof(again))
		abort();
	if (policy_parse_target(again, (size_t)n, 0, &u, err,
	    sizeof(err)) == -1)
		abort();
	if (strcmp(t.host, u.host) != 0 || t.port != u.port ||
	    t.is_ip != u.is_ip)
		abort();
	(void)policy_classify(NULL, &t.addr);
	return 0;
}
