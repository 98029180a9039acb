/*
 * libFuzzer: the gate's credential file (gate/auth.c), as a named gate
 * re-reads it on every reload, and the Proxy-Authorization check against
 * what it loaded.  Invariants: loading is all or nothing and the same
 * twice (a refusal says why); the input as a header value never matches
 * to an unterminated or oversized session name, nor to one with a byte
 * outside printable ASCII (a user name is a label: termsafe.h's
 * TERM_ASCII), and a match names a line the file holds (gate_auth_holds
 * of its key).
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The descriptor of a memory file holding data, at its start. */
static int
memfile(const uint8_t *data, size_t size)
{
	int	 fd;

	if ((fd = memfd_create("tokens", MFD_CLOEXEC)) == -1)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	if (lseek(fd, 0, SEEK_SET) == -1)
		abort();
	return fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gate_auth	*a, *b;
	char			 err[256], err2[256], session[128];
	unsigned char		 key[GATE_AUTH_KEY];
	size_t			 i;

	err[0] = err2[0] = '\0';
	a = gate_auth_load_fd(memfile(data, size), err, sizeof(err));
	b = gate_auth_load_fd(memfile(data, size), err2, sizeof(err2));
	if ((a == NULL) != (b == NULL))
		abort();
	gate_auth_free(b);
	if (a == NULL) {
		if (err[0] == '\0' || strcmp(err, err2) != 0)
			abort();
		return 0;
	}
	/* a match names a line the file holds (its key) */
	memset(session, 'x', sizeof(session));
	if (gate_auth_check(a, (const char *)data, size, session,
	    sizeof(session), key) == 0) {
		if (memchr(session, '\0', sizeof(session)) == NULL ||
		    !gate_auth_holds(a, key))
			abort();
		for (i = 0; session[i] != '\0'; i++)
			if ((unsigned char)session[i] < 0x20 ||
			    (unsigned char)session[i] > 0x7e)
				abort();
	}
	gate_auth_free(a);
	return 0;
}
