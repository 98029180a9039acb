/*
 * glibc's Name Service Switch, closed to the enforcer.
 *
 * A static glibc still loads NSS modules at run time (dlopen of
 * libnss_*.so, as /etc/nsswitch.conf names them): in a sandbox those are
 * the image's files, which would run in the enforcer as the container's
 * root.  The enforcer never asks NSS anything (ids are numbers, the plan
 * holds addresses, its resolver queries go to the plan's servers); only
 * c-ares' getaddrinfo and getnameinfo, which it does not call, reach for
 * services by name.  The link (enforcer/local.mk: --wrap) sends those
 * calls here, where they find nothing, so that no path into NSS exists
 * in the binary at all.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stddef.h>

struct servent	*__wrap_getservbyname(const char *, const char *);
int		 __wrap_getservbyport_r(int, const char *, struct servent *,
		    char *, size_t, struct servent **);

struct servent *
__wrap_getservbyname(const char *name, const char *proto)
{
	(void)name;
	(void)proto;
	return NULL;
}

int
__wrap_getservbyport_r(int port, const char *proto, struct servent *res,
    char *buf, size_t len, struct servent **out)
{
	(void)port;
	(void)proto;
	(void)res;
	(void)buf;
	(void)len;
	*out = NULL;
	return ENOENT;
}
