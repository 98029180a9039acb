/*
 * Host names, addresses and host:port targets: parsing and normalisation.
 *
 * Everything here is a pure function of its input.  Inputs are bounded
 * (TARGET_MAX_INPUT) before any work is done.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "policy.h"

#define TARGET_MAX_INPUT	512	/* bytes of host[:port] accepted */
#define TARGET_MAX_PORTDIGITS	16	/* "00000443" is fine, a novel is not */

static void
seterr(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
}

/*
 * Parses exactly an IPv4 dotted quad or an IPv6 address (no zone, no
 * brackets).  Returns 0 and fills out, or -1.
 */
int
policy_parse_addr(const char *in, size_t len, struct policy_addr *out)
{
	char	 buf[INET6_ADDRSTRLEN + 1];

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, in, len);
	buf[len] = '\0';
	if (memchr(in, '\0', len) != NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->bytes) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, buf, out->bytes) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	return -1;
}

const char *
policy_addr_str(const struct policy_addr *a, char *buf, size_t len)
{
	if (inet_ntop(a->family == AF_INET ? AF_INET : AF_INET6, a->bytes,
	    buf, len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

static int
is_name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '_';
}

/*
 * Lower-cases, drops one trailing dot and checks a host name: labels of
 * 1..63 bytes of [a-z0-9_-], at most 253 bytes in all.  Refuses names that
 * a resolver would read as an IPv4 address ("127.1", "0x7f000001") and names
 * whose last label is all digits, so that no name can smuggle an address
 * past the name rules.
 */
int
policy_normalize_name(const char *in, size_t len, char *out, size_t *outlen,
    char *err, size_t errlen)
{
	struct in_addr	 ia;
	size_t		 i, label = 0;
	int		 alldigits = 1;
	char		 tmp[POLICY_MAX_NAME + 2];

	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0) {
		seterr(err, errlen, "empty host name");
		return -1;
	}
	if (len > POLICY_MAX_NAME) {
		seterr(err, errlen, "host name longer than 253 bytes");
		return -1;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c == '.') {
			if (label == 0) {
				seterr(err, errlen, "empty label in host name");
				return -1;
			}
			label = 0;
			alldigits = 1;
			out[i] = '.';
			continue;
		}
		if (c >= 0x80) {
			seterr(err, errlen, "non-ASCII host name "
			    "(write the punycode form, xn--...)");
			return -1;
		}
		if (!is_name_byte(c)) {
			seterr(err, errlen, c < 0x20 || c == 0x7f ?
			    "control byte in host name" :
			    "invalid character in host name");
			return -1;
		}
		if (c < '0' || c > '9')
			alldigits = 0;
		if (++label > POLICY_MAX_LABEL) {
			seterr(err, errlen, "label longer than 63 bytes in host name");
			return -1;
		}
		out[i] = (char)c;
	}
	if (label == 0) {
		seterr(err, errlen, "empty label in host name");
		return -1;
	}
	memcpy(tmp, out, len);
	tmp[len] = '\0';
	if (alldigits || inet_aton(tmp, &ia) != 0) {
		seterr(err, errlen, "not a host name: it reads as a numeric "
		    "address (write an IPv4 address as a.b.c.d)");
		return -1;
	}
	out[len] = '\0';
	*outlen = len;
	return 0;
}

/* Parses 1-65535 allowing leading zeros.  Returns the port or 0. */
static uint16_t
parse_port(const char *p, size_t len)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (len == 0 || len > TARGET_MAX_PORTDIGITS)
		return 0;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (unsigned long)(p[i] - '0');
		if (v > 65535)
			return 0;
	}
	return (uint16_t)v;
}

int
policy_parse_target(const char *in, size_t len, uint16_t default_port,
    struct policy_target *out, char *err, size_t errlen)
{
	const char	*host, *colon = NULL, *portp = NULL;
	size_t		 hostlen, i, ncolon = 0, portlen = 0;

	memset(out, 0, sizeof(*out));
	if (len > TARGET_MAX_INPUT) {
		seterr(err, errlen, "target longer than 512 bytes");
		return -1;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c <= 0x20 || c == 0x7f) {
			seterr(err, errlen, c == 0 ? "NUL byte in target" :
			    "space or control byte in target");
			return -1;
		}
	}

	if (len > 0 && in[0] == '[') {
		const char *end = memchr(in, ']', len);

		if (end == NULL) {
			seterr(err, errlen, "missing ']' after IPv6 address");
			return -1;
		}
		host = in + 1;
		hostlen = (size_t)(end - host);
		if (memchr(host, '%', hostlen) != NULL) {
			seterr(err, errlen, "IPv6 zone identifiers are not allowed");
			return -1;
		}
		if (policy_parse_addr(host, hostlen, &out->addr) == -1 ||
		    out->addr.family != AF_INET6) {
			seterr(err, errlen, "invalid IPv6 address in brackets");
			return -1;
		}
		i = (size_t)(end - in) + 1;
		if (i < len) {
			if (in[i] != ':') {
				seterr(err, errlen, "junk after ']'");
				return -1;
			}
			portp = in + i + 1;
			portlen = len - i - 1;
			colon = portp - 1;
		}
		out->is_ip = 1;
	} else {
		for (i = 0; i < len; i++)
			if (in[i] == ':') {
				ncolon++;
				colon = in + i;
			}
		if (ncolon > 1) {
			seterr(err, errlen, "IPv6 address must be written in "
			    "brackets: [2001:db8::1]:443");
			return -1;
		}
		host = in;
		hostlen = colon != NULL ? (size_t)(colon - in) : len;
		if (colon != NULL) {
			portp = colon + 1;
			portlen = len - hostlen - 1;
		}
		if (hostlen == 0) {
			seterr(err, errlen, "empty host");
			return -1;
		}
		if (policy_parse_addr(host, hostlen, &out->addr) == 0) {
			if (out->addr.family != AF_INET) {
				seterr(err, errlen, "IPv6 address must be "
				    "written in brackets");
				return -1;
			}
			out->is_ip = 1;
		}
	}

	if (colon != NULL) {
		if ((out->port = parse_port(portp, portlen)) == 0) {
			seterr(err, errlen, "port must be a number from 1 to 65535");
			return -1;
		}
	} else if ((out->port = default_port) == 0) {
		seterr(err, errlen, "missing port (host:port)");
		return -1;
	}

	if (out->is_ip) {
		policy_addr_str(&out->addr, out->host, sizeof(out->host));
		out->hostlen = strlen(out->host);
		return 0;
	}
	return policy_normalize_name(host, hostlen, out->host, &out->hostlen,
	    err, errlen);
}
