/*
 * The CAs this host trusts locally (/usr/local/share/ca-certificates,
 * where companies put their TLS-inspection CA), for the sandbox to trust
 * too.  See docs/launcher.md, "Host CAs".
 */
#ifndef AISB_SESSION_HOSTCAS_H
#define AISB_SESSION_HOSTCAS_H

#include <stddef.h>

#define LAUNCH_HOST_CA_DIR	"/usr/local/share/ca-certificates"
/* For tests only: another folder to read instead (docs/launcher.md). */
#define LAUNCH_HOST_CA_DIR_ENV	"AISB_TEST_HOST_CA_DIR"
#define LAUNCH_HOST_CA_IN_IMAGE	"/run/aisb/host-ca.pem"

/* Bounds on what is read from the host folder. */
#define LAUNCH_HOST_CA_FILES	64		/* *.crt files read */
#define LAUNCH_HOST_CA_FILE_MAX	(256u * 1024)	/* bytes of one of them */
#define LAUNCH_HOST_CA_CERTS	256		/* certificates kept */
#define LAUNCH_HOST_CA_OUT_MAX	(512u * 1024)	/* bytes written */
#define LAUNCH_HOST_CA_DEPTH	4		/* folders below dir */

/*
 * The certificates of every *.crt under dir (what update-ca-certificates
 * reads there), parsed and written back as PEM CERTIFICATE blocks only, in
 * path order, into a new buffer *out (*outlen bytes, NUL-terminated;
 * *out is NULL and *outlen 0 when there are none).  A file that holds a
 * private key, no certificate, or is too large is skipped with a line in
 * warn (the last such), never copied in part.  *ncerts counts what was
 * kept.  0, or -1 with err (out of memory, a bound exceeded); a missing
 * dir is 0 certificates.
 */
int	launch_host_ca_gather(const char *dir, char **out, size_t *outlen,
	    size_t *ncerts, char *warn, size_t warnlen, char *err,
	    size_t errlen);

/*
 * launch_host_ca_gather() of LAUNCH_HOST_CA_DIR (or $AISB_TEST_HOST_CA_DIR)
 * when host is set, then the certificate in session_ca (an inspecting
 * gate's CA, written by the gate: --ca-out) when not NULL, into the
 * session's host-ca.pem (mode 0644: certificates only), its path into
 * path ("" when there is none; then nothing is written).  Skipped files
 * are named on stderr.  *ncerts counts the host's.  0, or -1 with err (a
 * session CA that is not there or holds no certificate is one).
 */
struct launch_session;
int	launch_host_ca_file(const struct launch_session *, int host,
	    const char *session_ca, char *path, size_t pathlen,
	    size_t *ncerts, char *err, size_t errlen);

#endif
