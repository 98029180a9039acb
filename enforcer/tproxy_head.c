/*
 * What the relay sends the gate, pure (tproxy.h; tests/unit/test_tproxy.c):
 * the head of each connection, the credential in it (from
 * the proxy URL of the environment, decoded and wiped after use), the
 * tool's name as X-Aisb-Tool carries it; and the one fact the relay reads
 * from a client's DNS query, how large an answer it takes over UDP.
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "enforcer/tproxy.h"

/* Percent-decodes n bytes of s into out; -1 on a bad escape or overflow. */
static int
pct_decode(const char *s, size_t n, char *out, size_t outlen, size_t *olen)
{
	size_t	 i, o = 0;

	for (i = 0; i < n; i++) {
		int	 c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= n || (c = hex_byte(s + i + 1)) == -1)
				return -1;
			i += 2;
		}
		if (o == outlen)
			return -1;
		out[o++] = (char)c;
	}
	*olen = o;
	return 0;
}

static size_t
b64(const unsigned char *in, size_t n, char *out, size_t outlen)
{
	static const char	 tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t			 i, o = 0;

	if (outlen < (n + 2) / 3 * 4 + 1)
		return 0;
	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = tab[in[i] >> 2];
		out[o++] = tab[(in[i] & 3) << 4 | in[i + 1] >> 4];
		out[o++] = tab[(in[i + 1] & 15) << 2 | in[i + 2] >> 6];
		out[o++] = tab[in[i + 2] & 63];
	}
	if (i < n) {
		out[o++] = tab[in[i] >> 2];
		if (i + 1 < n) {
			out[o++] = tab[(in[i] & 3) << 4 | in[i + 1] >> 4];
			out[o++] = tab[(in[i + 1] & 15) << 2];
		} else {
			out[o++] = tab[(in[i] & 3) << 4];
			out[o++] = '=';
		}
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

int
enf_tproxy_auth(const char *url, const struct enf_endpoint *gate, char *out,
    size_t outlen)
{
	char		 cred[ENF_TPROXY_MAX_AUTH], hp[INET6_ADDRSTRLEN + 16];
	char		 as[INET6_ADDRSTRLEN];
	const char	*s, *at, *end, *colon;
	size_t		 ulen, plen, n;
	int		 rc = -1;

	if (strlen(url) > ENF_TPROXY_MAX_AUTH ||
	    strncasecmp(url, "http://", 7) != 0)
		return -1;
	s = url + 7;
	end = s + strcspn(s, "/?#");
	/* the last '@' before the path ends the userinfo */
	for (at = end; at > s && at[-1] != '@'; at--)
		;
	if (at == s)
		return -1;	/* no credential */
	at--;
	if ((colon = memchr(s, ':', (size_t)(at - s))) == NULL)
		return -1;
	/* HOST:PORT after the '@' must be the gate's, spelled as we would */
	enf_addr_str(&gate->addr, as, sizeof(as));
	snprintf(hp, sizeof(hp), gate->addr.family == AF_INET6 ? "[%s]:%u" :
	    "%s:%u", as, gate->port);
	if ((size_t)(end - at - 1) != strlen(hp) ||
	    strncasecmp(at + 1, hp, strlen(hp)) != 0)
		return -1;
	if (pct_decode(s, (size_t)(colon - s), cred, sizeof(cred) - 1,
	    &ulen) == -1 || memchr(cred, ':', ulen) != NULL)
		goto out;
	cred[ulen] = ':';
	if (pct_decode(colon + 1, (size_t)(at - colon - 1), cred + ulen + 1,
	    sizeof(cred) - ulen - 1, &plen) == -1)
		goto out;
	n = ulen + 1 + plen;
	if (outlen < 7 || b64((unsigned char *)cred, n, out + 6,
	    outlen - 6) == 0)
		goto out;
	memcpy(out, "Basic ", 6);
	rc = 0;
out:
	explicit_bzero(cred, sizeof(cred));
	return rc;
}

size_t
enf_tproxy_head(char *out, size_t outlen, int dns, uint16_t port,
    const char *auth, const char *tool, const char *dialled)
{
	char	 first[32];
	int	 n;

	if (dns)
		snprintf(first, sizeof(first), "AISB-DNS *");
	else
		snprintf(first, sizeof(first), "AISB-TRANSPARENT %u", port);
	n = snprintf(out, outlen, "%s HTTP/1.1\r\n%s%s%s%s%s%s%s%s%s\r\n",
	    first,
	    auth != NULL && auth[0] ? "Proxy-Authorization: " : "",
	    auth != NULL && auth[0] ? auth : "",
	    auth != NULL && auth[0] ? "\r\n" : "",
	    tool != NULL && tool[0] ? "X-Aisb-Tool: " : "",
	    tool != NULL && tool[0] ? tool : "",
	    tool != NULL && tool[0] ? "\r\n" : "",
	    dialled != NULL && dialled[0] ? "X-Aisb-Dialled: " : "",
	    dialled != NULL && dialled[0] ? dialled : "",
	    dialled != NULL && dialled[0] ? "\r\n" : "");
	if (n < 0 || (size_t)n >= outlen)
		return 0;
	return (size_t)n;
}

/* Skips a name at off; the new offset, or 0 when it runs out or loops. */
static size_t
skip_name(const uint8_t *q, size_t len, size_t off)
{
	size_t	 labels = 0;

	while (off < len && labels++ < 128) {
		uint8_t	 l = q[off];

		if (l == 0)
			return off + 1;
		if ((l & 0xc0) == 0xc0)
			return off + 2 <= len ? off + 2 : 0;
		if ((l & 0xc0) != 0)
			return 0;
		off += 1 + (size_t)l;
	}
	return 0;
}

size_t
enf_tproxy_udp_limit(const uint8_t *q, size_t len)
{
	size_t	 off = 12, i, n, size;

	if (len < 12)
		return 512;
	n = (size_t)(q[4] << 8 | q[5]);
	for (i = 0; i < n; i++) {
		if ((off = skip_name(q, len, off)) == 0 || off + 4 > len)
			return 512;
		off += 4;
	}
	/* answers and authorities: a query has none, but walk them */
	n = (size_t)(q[6] << 8 | q[7]) + (size_t)(q[8] << 8 | q[9]);
	for (i = 0; i < n + (size_t)(q[10] << 8 | q[11]); i++) {
		uint16_t	 type, rdlen;

		if ((off = skip_name(q, len, off)) == 0 || off + 10 > len)
			return 512;
		type = (uint16_t)(q[off] << 8 | q[off + 1]);
		rdlen = (uint16_t)(q[off + 8] << 8 | q[off + 9]);
		if (i >= n && type == 41) {	/* OPT: class is the size */
			size = (size_t)(q[off + 2] << 8 | q[off + 3]);
			return size < 512 ? 512 : size;
		}
		off += 10 + rdlen;
		if (off > len)
			return 512;
	}
	return 512;
}

void
enf_tproxy_tool_clean(const char *in, char *out, size_t outlen)
{
	size_t	 i;

	if (outlen == 0)
		return;
	for (i = 0; in[i] != '\0' && in[i] != '\n' &&
	    i < ENF_TPROXY_MAX_TOOL && i + 1 < outlen; i++) {
		char	 c = in[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '+' || c == '-' ? c : '_';
	}
	out[i] = '\0';
}
