/*
 * libFuzzer: the policy loader on arbitrary bytes.  Whatever loads must
 * dump, and the dump must load again to the same identity.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy_errors	 errs;
	struct policy			*p, *q;
	struct policy_decision		 d;
	char				*dump;
	size_t				 len;

	if (policy_load_buffer("fuzz.yaml", (const char *)data, size, &p,
	    &errs) == -1)
		return 0;
	if ((dump = policy_dump(p, &len)) == NULL)
		abort();
	if (policy_load_buffer("dump.yaml", dump, len, &q, &errs) == -1)
		abort();	/* the dump must load */
	if (strcmp(policy_sha256(p), policy_sha256(q)) != 0)
		abort();	/* to the same policy */
	policy_decide_name(p, "a.example.com", 13, 443, &d);
	free(dump);
	policy_free(q);
	policy_free(p);
	return 0;
}
