/*
 * The host's local CAs (docs/launcher.md, "Host CAs"): the launcher
 * mounts them read-only at ENF_HOST_CA_PATH, and the enforcer, still root,
 * appends them to the system bundle before any command runs.
 */
#ifndef AISB_ENF_HOSTCA_H
#define AISB_ENF_HOSTCA_H

#include <stddef.h>

#define ENF_HOST_CA_PATH	"/run/aisb/host-ca.pem"
#define ENF_CA_BUNDLE		"/etc/ssl/certs/ca-certificates.crt"
#define ENF_HOST_CA_MAX		(1024u * 1024)	/* bytes of the PEM file */

/*
 * Appends the certificates in pem (a file of PEM CERTIFICATE blocks and
 * nothing that names a private key, at most ENF_HOST_CA_MAX bytes) to the
 * bundle.  1 when there is no pem file (nothing to do), 0 when appended,
 * -1 with err.
 */
int	enf_host_ca(const char *pem, const char *bundle, char *err,
	    size_t errlen);

#endif
