/*
 * libFuzzer: the users file of aisb-gate --users (gate/users.c), as a gate
 * re-reads it on every reload, and the Proxy-Authorization check against
 * what it parsed.  Invariants: parsing is all or nothing and the same
 * twice (a refusal says why, as FILE...: error: ..., in words a terminal
 * shows as they are: termsafe.h's rule leaves them unchanged); a parsed
 * file has 1 to USERS_MAX_ENTRIES users with distinct, well-formed names;
 * the input as a header value never matches to an unterminated name.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "termsafe.h"
#include "gate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gate_users	*a, *b;
	struct policy		*pol;
	char			 err[512], err2[512], name[128];
	size_t			 i, j, n;

	a = gate_users_parse((const char *)data, size, "u", err, sizeof(err));
	b = gate_users_parse((const char *)data, size, "u", err2,
	    sizeof(err2));
	if ((a == NULL) != (b == NULL))
		abort();
	gate_users_free(b);
	if (a == NULL) {
		if (strncmp(err, "u", 1) != 0 || strstr(err, "error: ") ==
		    NULL || strcmp(err, err2) != 0)
			abort();
		term_clean(err2, sizeof(err2), err, strlen(err), 0, NULL);
		if (strcmp(err, err2) != 0)
			abort();
		return 0;
	}
	n = gate_users_count(a);
	if (n == 0 || n > USERS_MAX_ENTRIES)
		abort();
	for (i = 0; i < n; i++) {
		const char	*s = gate_users_name(a, i);
		const char	*p = gate_users_policy_path(a, i);

		if (s[0] == '\0' || strlen(s) >= GATE_SESSION_MAX ||
		    strpbrk(s, ": \t\r\n\"\\") != NULL)
			abort();
		if (p != NULL && (p[0] == '\0' || strpbrk(p, " \t\n\r\033")
		    != NULL))
			abort();
		if (gate_users_policy(a, i) != NULL)
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(s, gate_users_name(a, j)) == 0)
				abort();
	}
	memset(name, 'x', sizeof(name));
	if (gate_users_check(a, (const char *)data, size, name,
	    sizeof(name), &pol) == 0 && (memchr(name, '\0',
	    sizeof(name)) == NULL || pol != NULL))
		abort();
	gate_users_free(a);
	return 0;
}
