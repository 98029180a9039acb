/*
 * libFuzzer: the policy loader on arbitrary bytes.  Whatever loads must
 * dump, and the dump must load again to the same identity.  Every rule
 * decides two requests (the last bytes of the input are the second's
 * target), and the fix of a refused one is within its bound and loads.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
requests(const struct policy *p, const uint8_t *data, size_t size)
{
	struct policy_request_decision	 d;
	char				 fix[POLICY_FIX_MAX];
	const char			*t = (const char *)data;
	size_t				 i, tlen = size < 64 ? size : 64;
	int				 n;

	t += size - tlen;
	for (i = 0; i < policy_rule_count(p); i++) {
		const struct policy_rule *r = policy_rule_at(p, i);

		policy_decide_request(r, "GET", 3, "/a/b?c", 6, &d);
		policy_decide_request(r, "POST", 4, t, tlen, &d);
		if (d.verdict == POLICY_ALLOW)
			continue;
		n = policy_request_fix_yaml(r, "POST", 4, t, tlen, d.reason,
		    i & 1, fix, sizeof(fix));
		if (n < 0 || (size_t)n != strlen(fix))
			abort();	/* POLICY_FIX_MAX is always enough */
	}
}

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
	requests(p, data, size);
	free(dump);
	policy_free(q);
	policy_free(p);
	return 0;
}
