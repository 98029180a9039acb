/*
 * The SOCKS5 messages a client sends, pure (socksmsg.h).  Nothing here
 * decides: a request's name is handed on as its bytes, and conn/socks.c
 * parses it as the policy library does every target.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gate/socksmsg.h"

int
gate_socks_greeting(const uint8_t *p, size_t len, int *none, int *userpass)
{
	size_t	 i, n;

	*none = *userpass = 0;
	if (len < 1)
		return 0;
	if (p[0] != SOCKS_VERSION)
		return -1;
	if (len < 2)
		return 0;
	if ((n = p[1]) == 0)
		return -1;
	if (len < 2 + n)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[2 + i] == SOCKS_M_NONE)
			*none = 1;
		else if (p[2 + i] == SOCKS_M_USERPASS)
			*userpass = 1;
	}
	return (int)(2 + n);
}

int
gate_socks_userpass(const uint8_t *p, size_t len, const uint8_t **user,
    size_t *ulen, const uint8_t **pass, size_t *plen)
{
	size_t	 u, w;

	*user = *pass = NULL;
	*ulen = *plen = 0;
	if (len < 1)
		return 0;
	if (p[0] != SOCKS_AUTH_VERSION)
		return -1;
	if (len < 2)
		return 0;
	if ((u = p[1]) == 0)
		return -1;
	if (len < 3 + u)
		return 0;
	if ((w = p[2 + u]) == 0)
		return -1;
	if (len < 3 + u + w)
		return 0;
	*user = p + 2;
	*ulen = u;
	*pass = p + 3 + u;
	*plen = w;
	return (int)(3 + u + w);
}

int
gate_socks_request(const uint8_t *p, size_t len, struct gate_socks_req *r,
    int *rep)
{
	size_t	 alen, need;

	memset(r, 0, sizeof(*r));
	*rep = SOCKS_R_FAIL;
	if (len < 1)
		return 0;
	if (p[0] != SOCKS_VERSION) {
		*rep = 0;
		return -1;
	}
	if (len < 2)
		return 0;
	if (p[1] != SOCKS_CMD_CONNECT) {
		*rep = SOCKS_R_CMD;	/* BIND, UDP ASSOCIATE: not served */
		return -1;
	}
	if (len < 4)
		return 0;
	if (p[2] != 0)
		return -1;
	switch ((r->atyp = p[3])) {
	case SOCKS_ATYP_V4:
		alen = 4;
		need = 4 + alen + 2;
		break;
	case SOCKS_ATYP_V6:
		alen = 16;
		need = 4 + alen + 2;
		break;
	case SOCKS_ATYP_NAME:
		if (len < 5)
			return 0;
		if ((alen = p[4]) == 0)
			return -1;
		need = 5 + alen + 2;
		break;
	default:
		*rep = SOCKS_R_ATYP;
		return -1;
	}
	if (len < need)
		return 0;
	if (r->atyp == SOCKS_ATYP_NAME) {
		if (memchr(p + 5, '\0', alen) != NULL)
			return -1;
		memcpy(r->name, p + 5, alen);
		r->name[alen] = '\0';
		r->namelen = alen;
	} else
		memcpy(r->addr, p + 4, alen);
	r->port = (uint16_t)(p[need - 2] << 8 | p[need - 1]);
	if (r->port == 0)
		return -1;
	*rep = SOCKS_R_OK;
	return (int)need;
}
