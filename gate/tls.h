/*
 * The server name (SNI) of a TLS ClientHello; see tls.c.
 */
#ifndef AISB_GATE_TLS_H
#define AISB_GATE_TLS_H

#include <stddef.h>
#include <stdint.h>

#define GATE_TLS_MAX_RECORD	16384	/* bytes of one record's payload */

enum {
	GATE_TLS_BAD = -1,	/* a malformed handshake, or two names */
	GATE_TLS_MORE = 0,	/* need more bytes */
	GATE_TLS_NAME = 1,	/* out holds the name, lower case, no trailing dot */
	GATE_TLS_NO_NAME = 2,	/* a ClientHello without server_name */
	GATE_TLS_NOT_TLS = 3,	/* the first byte is not a TLS handshake */
};

/*
 * buf holds the first len bytes the client sent into the tunnel.  out
 * receives the name (outlen of at least 254 for any DNS name).
 */
int	 gate_tls_sni(const uint8_t *buf, size_t len, char *out, size_t outlen);

#endif /* AISB_GATE_TLS_H */
