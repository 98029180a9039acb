/*
 * Socket addresses as the gate's options spell them (-l, --metrics) and
 * as it prints them for people.  Below config.c, proc.c and metrics.c,
 * which all need them and call nothing here back.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate.h"

const char *
gate_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char	 ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(sin->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else
		snprintf(buf, len, "?");
	return buf;
}

/*
 * "ipv4:port" or "[ipv6]:port", port 0 meaning "any free port".  Names are
 * refused: what the gate binds must not depend on a resolver.
 */
int
gate_listen_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char		 host[INET6_ADDRSTRLEN + 2], *end;
	const char	*colon;
	unsigned long	 port;
	size_t		 hl;

	if ((colon = strrchr(s, ':')) == NULL)
		return -1;
	hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    port > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6	*sin6 = (void *)ss;

		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return -1;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
	} else {
		struct sockaddr_in	*sin = (void *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -1;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
	}
	return 0;
}
