/*
 * The host's local CAs into the system bundle (hostca.h).
 *
 * Appending to the one bundle file is what update-ca-certificates would
 * end with, without its minute of hashing: OpenSSL (curl, python's ssl,
 * wget), GnuTLS (git, apt) and requests (REQUESTS_CA_BUNDLE in the image)
 * all read it.  Node reads only its own store, hence NODE_EXTRA_CA_CERTS,
 * set by the caller.  The container is the session's own, so nothing
 * accumulates across sessions.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "enforcer/hostca.h"

#define PEM_BEGIN	"-----BEGIN CERTIFICATE-----"

int
enf_host_ca(const char *pem, const char *bundle, char *err, size_t errlen)
{
	char		*text;
	size_t		 len;
	int		 fd;

	if (access(pem, F_OK) == -1 && errno == ENOENT)
		return 1;
	if ((text = file_read_bounded(pem, ENF_HOST_CA_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	/* The launcher wrote certificates only; anything else is refused. */
	if (strncmp(text, PEM_BEGIN, strlen(PEM_BEGIN)) != 0 ||
	    strstr(text, "PRIVATE KEY") != NULL || strlen(text) != len) {
		snprintf(err, errlen, "%s: not a file of PEM certificates", pem);
		free(text);
		return -1;
	}
	if ((fd = open(bundle, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1) {
		snprintf(err, errlen, "%s: %s", bundle, strerror(errno));
		free(text);
		return -1;
	}
	/* a bundle that does not end its last line must not glue onto ours */
	if (write(fd, "\n", 1) != 1)
		goto fail;
	if (file_write_all(fd, text, len) == -1)
		goto fail;
	free(text);
	if (close(fd) == -1) {
		snprintf(err, errlen, "%s: %s", bundle, strerror(errno));
		return -1;
	}
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", bundle, strerror(errno));
	free(text);
	close(fd);
	return -1;
}
