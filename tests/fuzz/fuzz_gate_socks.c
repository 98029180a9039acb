/*
 * libFuzzer: the SOCKS5 messages a client sends (gate/socksmsg.c), each
 * of the three parsers on the same bytes.  Invariants: a parser answers
 * -1, 0 or the bytes it took, never more than it was given nor more than
 * the protocol's bound; every shorter prefix of a whole message answers
 * "more" (0), none of them an error the whole did not make, so that a
 * message cut anywhere by TCP is read the same; what is handed out lies
 * within the input (user, password) or is its copy (a name: NUL-free,
 * 1 to 255 bytes), and a request's port is never 0.
 */
#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "socksmsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
greeting(const uint8_t *p, size_t n)
{
	int	 a, b, r;

	r = gate_socks_greeting(p, n, &a, &b);
	if (r > 257 || (r > 0 && (size_t)r > n) || r < -1)
		abort();
	if (r > 0 && (a != 0 && a != 1))
		abort();
	return r;
}

static int
userpass(const uint8_t *p, size_t n)
{
	const uint8_t	*u, *w;
	size_t		 ul, wl;
	int		 r;

	r = gate_socks_userpass(p, n, &u, &ul, &w, &wl);
	if (r > 3 + 255 + 255 || (r > 0 && (size_t)r > n) || r < -1)
		abort();
	if (r > 0 && (ul == 0 || ul > 255 || wl == 0 || wl > 255 ||
	    u != p + 2 || w != p + 3 + ul || (size_t)r != 3 + ul + wl))
		abort();
	return r;
}

static int
request(const uint8_t *p, size_t n)
{
	struct gate_socks_req	 q;
	int			 r, rep;

	r = gate_socks_request(p, n, &q, &rep);
	if (r > 7 + 255 + 2 || (r > 0 && (size_t)r > n) || r < -1)
		abort();
	if (r > 0) {
		if (rep != SOCKS_R_OK || q.port == 0)
			abort();
		if (q.atyp == SOCKS_ATYP_NAME && (q.namelen == 0 ||
		    q.namelen > 255 || strlen(q.name) != q.namelen ||
		    memcmp(q.name, p + 5, q.namelen) != 0))
			abort();
		if (q.atyp != SOCKS_ATYP_NAME && q.atyp != SOCKS_ATYP_V4 &&
		    q.atyp != SOCKS_ATYP_V6)
			abort();
	}
	if (r == -1 && rep != 0 && rep != SOCKS_R_FAIL &&
	    rep != SOCKS_R_CMD && rep != SOCKS_R_ATYP)
		abort();
	return r;
}

/* Every prefix shorter than a whole message is "more". */
static void
prefixes(int (*f)(const uint8_t *, size_t), const uint8_t *p, size_t whole)
{
	size_t	 k;

	for (k = 0; k < whole; k++)
		if (f(p, k) != 0)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int	 r;

	if ((r = greeting(data, size)) > 0)
		prefixes(greeting, data, (size_t)r);
	if ((r = userpass(data, size)) > 0)
		prefixes(userpass, data, (size_t)r);
	if ((r = request(data, size)) > 0)
		prefixes(request, data, (size_t)r);
	return 0;
}
