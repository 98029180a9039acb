/*
 * libFuzzer: aisb policy suggest (launcher/policytools/suggest.c) over any
 * bytes as an audit log, with and without --group, --allow-ip and a base policy.
 * The log's names came from a sandbox: whatever they are, the suggestion
 * loads as a policy (suggest checks it and returns -2 if not: a bug), and
 * what is printed is printable ASCII and newlines only.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policytools/suggest.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char base_yaml[] =
    "version: 1\n"
    "allow:\n"
    "  - host: api.example.com\n"
    "    ports: [443]\n"
    "  - host: \"*.cdn.example.net\"\n"
    "deny:\n"
    "  - host: upload.example.com\n"
    "allow_ranges: [127.0.0.1/32]\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct policy	*base;
	char			*out = NULL;
	size_t			 olen = 0, i;
	unsigned		 flags;
	FILE			*f;
	int			 rc;

	if (base == NULL && policy_load_buffer("base.yaml", base_yaml,
	    sizeof(base_yaml) - 1, &base, NULL) == -1)
		abort();
	if (len < 1)
		return 0;
	flags = data[0];
	if ((f = open_memstream(&out, &olen)) == NULL)
		return 0;
	rc = launch_suggest_buffer((const char *)data + 1, len - 1,
	    (flags & 4) ? base : NULL, flags & (LAUNCH_SUGGEST_GROUP |
	    LAUNCH_SUGGEST_ALLOW_IP), f);
	fclose(f);
	if (rc == -2)
		abort();	/* a suggestion that does not load */
	for (i = 0; rc == 0 && i < olen; i++)
		if (out[i] != '\n' && (out[i] < 0x20 || out[i] >= 0x7f))
			abort();
	free(out);
	return 0;
}
