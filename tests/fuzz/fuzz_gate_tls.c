/*
 * libFuzzer: the TLS ClientHello reader of aisb-gate (gate/tls.c).
 * Invariants: the answer is one of the documented ones; a name found is
 * non-empty, lower case, of the allowed characters, without an empty
 * label or a trailing dot, within its bound, and the same with an output buffer just large
 * enough; any prefix of the input answers "more" or what the whole input
 * answers (the reader is fed as bytes arrive); a smaller output buffer
 * never gives a different name.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tls.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_name(const char *name, size_t bound)
{
	size_t	 k, nl = strnlen(name, bound);

	if (nl == 0 || nl == bound || name[0] == '.' || name[nl - 1] == '.' ||
	    strstr(name, "..") != NULL)
		abort();
	for (k = 0; k < nl; k++) {
		char	 c = name[k];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_'))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 name[254], small[254];
	size_t	 cut;
	int	 r, rp, rs;

	r = gate_tls_sni(data, size, name, sizeof(name));
	if (r < GATE_TLS_BAD || r > GATE_TLS_NOT_TLS)
		abort();
	if (r == GATE_TLS_NAME) {
		check_name(name, sizeof(name));
		/* a buffer of exactly the name and its NUL is enough */
		rs = gate_tls_sni(data, size, small, strlen(name) + 1);
		if (rs != GATE_TLS_NAME && rs != GATE_TLS_BAD)
			abort();
		if (rs == GATE_TLS_NAME && strcmp(small, name) != 0)
			abort();
	}
	if (size == 0)
		return 0;
	cut = data[size - 1] % (size + 1);
	if (cut < size) {
		rp = gate_tls_sni(data, cut, small, sizeof(small));
		if (rp != GATE_TLS_MORE && rp != r)
			abort();
		if (rp == GATE_TLS_NAME && strcmp(small, name) != 0)
			abort();
	}
	return 0;
}
