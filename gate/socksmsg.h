/*
 * The SOCKS5 messages a client sends (RFC 1928, and RFC 1929's user and
 * password), pure and restartable, so that they can be fuzzed
 * (tests/fuzz/fuzz_gate_socks.c).  conn/socks.c drives them.
 *
 * Each parser takes the bytes buffered so far and returns -1 when they
 * are not that message, 0 when more are needed, or the bytes the message
 * took (> 0).  Bounds are the protocol's own: a greeting of at most
 * 2 + 255 bytes, user and password of 1 to 255 bytes each, a request of
 * at most 6 + 1 + 255 + 2 bytes.
 */
#ifndef AISB_GATE_SOCKSMSG_H
#define AISB_GATE_SOCKSMSG_H

#include <stddef.h>
#include <stdint.h>

#define SOCKS_VERSION		5
#define SOCKS_AUTH_VERSION	1	/* RFC 1929's subnegotiation */

/* methods (RFC 1928 section 3) */
#define SOCKS_M_NONE		0x00
#define SOCKS_M_USERPASS	0x02
#define SOCKS_M_NOACCEPT	0xff

#define SOCKS_CMD_CONNECT	1
#define SOCKS_ATYP_V4		1
#define SOCKS_ATYP_NAME		3
#define SOCKS_ATYP_V6		4

/* replies (RFC 1928 section 6) */
#define SOCKS_R_OK		0
#define SOCKS_R_FAIL		1	/* general failure */
#define SOCKS_R_RULESET		2	/* not allowed by ruleset */
#define SOCKS_R_NETUNREACH	3
#define SOCKS_R_HOSTUNREACH	4
#define SOCKS_R_REFUSED		5
#define SOCKS_R_TTL		6	/* TTL expired: the connect timed out */
#define SOCKS_R_CMD		7	/* command not supported */
#define SOCKS_R_ATYP		8	/* address type not supported */

#define SOCKS_NAME_MAX		255	/* a domain name target, bytes */
/* the longest message: RFC 1929's, 3 + 255 + 255 bytes */
#define SOCKS_MSG_MAX		(3 + 255 + 255)

/*
 * Version 5, 1 to 255 methods: *none and *userpass say whether methods
 * 0x00 and 0x02 are among them.
 */
int	 gate_socks_greeting(const uint8_t *p, size_t len, int *none,
	    int *userpass);

/*
 * Version 1, a user and a password of 1 to 255 bytes each: pointers
 * into p and their lengths.
 */
int	 gate_socks_userpass(const uint8_t *p, size_t len, const uint8_t **user,
	    size_t *ulen, const uint8_t **pass, size_t *plen);

struct gate_socks_req {
	uint8_t		 atyp;		/* SOCKS_ATYP_* */
	uint8_t		 addr[16];	/* V4: 4 bytes, V6: 16 */
	char		 name[SOCKS_NAME_MAX + 1];	/* NAME: NUL-terminated */
	size_t		 namelen;
	uint16_t	 port;		/* host order */
};

/*
 * Version 5, CONNECT, reserved byte 0, an address of type 1, 3 or 4
 * (a name of 1 to 255 bytes, none of them NUL), a port other than 0.
 * On -1, *rep is the reply that says why: SOCKS_R_CMD, SOCKS_R_ATYP or
 * SOCKS_R_FAIL (anything else malformed); -1 with *rep 0 for a version
 * other than 5, which gets no reply.
 */
int	 gate_socks_request(const uint8_t *p, size_t len,
	    struct gate_socks_req *r, int *rep);

#endif
