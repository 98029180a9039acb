/*
 * Network through the gate (docs/windows.md): the child reaches only
 * 127.0.0.1:PORT, the gate, and learns it from the proxy variables.
 * The runner grants the profile the loopback exemption for the session
 * and the Windows Filtering Platform filters restrict it to that port;
 * this file only writes the variables.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "win32/winrun.h"

int
winrun_gate_env(uint16_t port, const char *cred, char *buf, size_t len)
{
	char url[256];
	int n;

	if (port == 0)
		return -1;
	if (cred != NULL && (strlen(cred) > 128 ||
	    strpbrk(cred, "\r\n@/") != NULL))
		return -1;
	if (cred != NULL && *cred != '\0')
		n = snprintf(url, sizeof(url), "http://%s@127.0.0.1:%u", cred,
		    (unsigned)port);
	else
		n = snprintf(url, sizeof(url), "http://127.0.0.1:%u",
		    (unsigned)port);
	if (n < 0 || (size_t)n >= sizeof(url))
		return -1;
	/* Windows' variables ignore case: http_proxy is HTTP_PROXY */
	n = snprintf(buf, len, "HTTP_PROXY=%s\nHTTPS_PROXY=%s\nNO_PROXY=\n",
	    url, url);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}
