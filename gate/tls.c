/*
 * The server name of a TLS ClientHello, so that a tunnel opened with
 * "CONNECT allowed.example:443" cannot carry a handshake for another name
 * (the naive form of domain fronting).  Pure: no I/O, no allocation.
 *
 * Bounds: only the first record is read, at most GATE_TLS_MAX_RECORD bytes
 * of payload (the TLS maximum); a ClientHello that does not fit in it is
 * refused rather than left unchecked.
 */
#include "config.h"

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gate/tls.h"

static unsigned
be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/*
 * The server_name extension's list (RFC 6066 section 3), read whole: it
 * must not be empty, must end where the extension does, and must not hold
 * two names of one type ("MUST NOT"): a server that takes the second
 * host_name would see another name than the one checked.
 */
static int
server_name(const uint8_t *p, size_t len, char *out, size_t outlen)
{
	size_t	 list, i, n;
	int	 r = GATE_TLS_NO_NAME;

	if (len < 2 || (list = be16(p)) != len - 2 || list == 0)
		return GATE_TLS_BAD;
	for (p += 2; list >= 3; p += 3 + n, list -= 3 + n) {
		n = be16(p + 1);
		if (n > list - 3)
			return GATE_TLS_BAD;
		if (p[0] != 0)		/* not host_name */
			continue;
		if (r != GATE_TLS_NO_NAME)
			return GATE_TLS_BAD;	/* a second host_name */
		if (n == 0 || n >= outlen)
			return GATE_TLS_BAD;
		for (i = 0; i < n; i++) {
			uint8_t	 c = p[3 + i];

			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			else if (!((c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
			    c == '_'))
				return GATE_TLS_BAD;
			out[i] = (char)c;
		}
		/* a trailing dot is dropped (not from n: it steps the list) */
		i = out[n - 1] == '.' ? n - 1 : n;
		out[i] = '\0';
		/* no empty label: ".a", "a..b", "a.." are no host names */
		if (i == 0 || out[0] == '.' || out[i - 1] == '.' ||
		    memmem(out, i, "..", 2) != NULL)
			return GATE_TLS_BAD;
		r = GATE_TLS_NAME;
	}
	return list == 0 ? r : GATE_TLS_BAD;
}

int
gate_tls_sni(const uint8_t *buf, size_t len, char *out, size_t outlen)
{
	const uint8_t	*p, *end;
	size_t		 rec, hs, n;
	int		 found = 0, r = GATE_TLS_NO_NAME;

	if (len >= 1 && buf[0] != 0x16)
		return GATE_TLS_NOT_TLS;
	if (len < 5)
		return GATE_TLS_MORE;
	if (buf[1] != 0x03 || (rec = be16(buf + 3)) > GATE_TLS_MAX_RECORD ||
	    rec < 4)
		return GATE_TLS_BAD;
	if (len < 5 + rec)
		return GATE_TLS_MORE;
	p = buf + 5;
	if (p[0] != 0x01)			/* ClientHello */
		return GATE_TLS_BAD;
	hs = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (hs > rec - 4)
		return GATE_TLS_BAD;		/* spread over records */
	p += 4;
	end = p + hs;

	/* version, random, session id, cipher suites, compression */
	if (end - p < 2 + 32 + 1)
		return GATE_TLS_BAD;
	p += 2 + 32;
	n = *p++;
	if ((size_t)(end - p) < n + 2)
		return GATE_TLS_BAD;
	p += n;
	n = be16(p);
	p += 2;
	if ((size_t)(end - p) < n + 1)
		return GATE_TLS_BAD;
	p += n;
	n = *p++;
	if ((size_t)(end - p) < n)
		return GATE_TLS_BAD;
	p += n;
	if (p == end)
		return GATE_TLS_NO_NAME;	/* no extensions */
	if (end - p < 2 || be16(p) != (size_t)(end - p - 2))
		return GATE_TLS_BAD;
	for (p += 2; p < end; p += 4 + n) {
		if (end - p < 4)
			return GATE_TLS_BAD;
		n = be16(p + 2);
		if ((size_t)(end - p - 4) < n)
			return GATE_TLS_BAD;
		if (be16(p) != 0)
			continue;
		if (found++)
			return GATE_TLS_BAD;	/* two server_name extensions */
		if ((r = server_name(p + 4, n, out, outlen)) == GATE_TLS_BAD)
			return GATE_TLS_BAD;
	}
	return r;
}
