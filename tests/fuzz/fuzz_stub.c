/*
 * libFuzzer: direct mode's DNS stub.  Any bytes as a query; the reply is
 * never larger than plain DNS allows, a reply to anything is never a
 * reply's reply, and the name handed to the lookup is always an LDH name
 * of at most 253 bytes that the question really spelled.
 */
#include "config.h"

#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
lookup(void *ctx, const char *name, int family, struct enf_stub_answer *ans)
{
	size_t	 i, len = strlen(name);

	(void)ctx;
	if (len == 0 || len > 255)
		abort();
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '-' || name[i] == '_' || name[i] == '.'))
			abort();
	if (name[0] == 'x')
		return -1;
	if (name[0] == 'y')
		return 0;
	/* as many as the stub takes, both families, so it must choose */
	for (i = 0; i < ENF_STUB_MAX_ADDRS; i++) {
		ans->addrs[i].family = i % 2 ? AF_INET6 : AF_INET;
		ans->addrs[i].addr[0] = (uint8_t)(i + 1);
		ans->ttl[i] = (uint32_t)i * 1000;
	}
	ans->n = family != 0 ? ENF_STUB_MAX_ADDRS : 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t	 out[ENF_STUB_MAX_MSG];
	size_t	 n;

	n = enf_stub_answer(data, size, out, sizeof(out), lookup, NULL);
	if (n > sizeof(out) || (n > 0 && n < 12))
		abort();
	if (n > 0 && ((out[2] & 0x80) == 0 || (data[2] & 0x80) != 0))
		abort();
	return 0;
}
