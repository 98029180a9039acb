/*
 * The host's local CAs (hostcas.h).  Only what parses as an X.509
 * certificate leaves the host, re-encoded by OpenSSL, so that neither a
 * stray private key nor arbitrary bytes in that folder reach a sandbox.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "file.h"
#include "session/hostcas.h"
#include "session/folder.h"

struct gather {
	char	 *paths[LAUNCH_HOST_CA_FILES];
	size_t	  npaths;
	int	  overflow;
};

static int
ends_crt(const char *name)
{
	size_t	n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".crt") == 0;
}

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the *.crt paths under dir, depth-bounded; 0 or -1 (memory). */
static int
walk(struct gather *g, const char *dir, int depth)
{
	DIR		*d;
	struct dirent	*e;
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 rc = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    e->d_name) >= sizeof(path))
			continue;
		/* symbolic links are followed, as update-ca-certificates does */
		if (stat(path, &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < LAUNCH_HOST_CA_DEPTH)
				rc = walk(g, path, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !ends_crt(e->d_name))
			continue;
		if (g->npaths == LAUNCH_HOST_CA_FILES) {
			g->overflow = 1;
			continue;
		}
		if ((g->paths[g->npaths] = strdup(path)) == NULL)
			rc = -1;
		else
			g->npaths++;
	}
	closedir(d);
	return rc;
}

/*
 * The certificates of one file appended to mem; the count, 0 when the
 * file has none or holds a key (then nothing of it is kept), -1 on a
 * bound.
 */
static int
one_file(const char *path, BIO *mem, size_t *ncerts, char *warn,
    size_t warnlen)
{
	BIO	*in = NULL, *tmp = NULL;
	X509	*x;
	char	*text, err[256], *p;
	size_t	 len, n = 0;
	long	 tl;
	int	 rc = 0;

	if ((text = file_read_bounded(path, LAUNCH_HOST_CA_FILE_MAX, &len, err,
	    sizeof(err))) == NULL) {
		snprintf(warn, warnlen, "%s", err);
		return 0;
	}
	if (strstr(text, "PRIVATE KEY") != NULL) {
		snprintf(warn, warnlen, "%s: holds a private key; skipped",
		    path);
		goto out;
	}
	if ((in = BIO_new_mem_buf(text, (int)len)) == NULL ||
	    (tmp = BIO_new(BIO_s_mem())) == NULL) {
		rc = -1;
		goto out;
	}
	while ((x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL) {
		if (*ncerts + n == LAUNCH_HOST_CA_CERTS ||
		    PEM_write_bio_X509(tmp, x) != 1) {
			X509_free(x);
			rc = -1;
			goto out;
		}
		X509_free(x);
		n++;
	}
	ERR_clear_error();	/* the end of the file reads as an error */
	if (n == 0) {
		snprintf(warn, warnlen, "%s: no PEM certificate in it; "
		    "skipped", path);
		goto out;
	}
	tl = BIO_get_mem_data(tmp, &p);
	if (tl <= 0 || BIO_write(mem, p, (int)tl) != (int)tl) {
		rc = -1;
		goto out;
	}
	*ncerts += n;
	rc = (int)n;
out:
	BIO_free(in);
	BIO_free(tmp);
	free(text);
	return rc;
}

int
launch_host_ca_gather(const char *dir, char **out, size_t *outlen,
    size_t *ncerts, char *warn, size_t warnlen, char *err, size_t errlen)
{
	struct gather	 g = { .npaths = 0 };
	BIO		*mem = NULL;
	char		*p;
	long		 len;
	size_t		 i;
	int		 rc = -1;

	*out = NULL;
	*outlen = 0;
	*ncerts = 0;
	if (warnlen > 0)
		warn[0] = '\0';
	if (walk(&g, dir, 0) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (g.overflow) {
		snprintf(err, errlen, "%s: more than %d .crt files", dir,
		    LAUNCH_HOST_CA_FILES);
		goto out;
	}
	if (g.npaths == 0) {
		rc = 0;
		goto out;
	}
	/* the order update-ca-certificates would not care about; stable */
	qsort(g.paths, g.npaths, sizeof(g.paths[0]), cmp_path);
	if ((mem = BIO_new(BIO_s_mem())) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < g.npaths; i++)
		if (one_file(g.paths[i], mem, ncerts, warn, warnlen) == -1) {
			snprintf(err, errlen, "%s: more than %d certificates, "
			    "or out of memory", dir, LAUNCH_HOST_CA_CERTS);
			goto out;
		}
	len = BIO_get_mem_data(mem, &p);
	if (len <= 0) {
		rc = 0;
		goto out;
	}
	if ((size_t)len > LAUNCH_HOST_CA_OUT_MAX) {
		snprintf(err, errlen, "%s: certificates larger than %u bytes",
		    dir, LAUNCH_HOST_CA_OUT_MAX);
		*ncerts = 0;
		goto out;
	}
	if ((*out = malloc((size_t)len + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		*ncerts = 0;
		goto out;
	}
	memcpy(*out, p, (size_t)len);
	(*out)[len] = '\0';
	*outlen = (size_t)len;
	rc = 0;
out:
	if (rc == -1)
		*ncerts = 0;
	BIO_free(mem);
	for (i = 0; i < g.npaths; i++)
		free(g.paths[i]);
	return rc;
}

/* The certificates of session_ca appended to *pem (*len bytes); 0 or -1. */
static int
add_session_ca(const char *session_ca, char **pem, size_t *len, char *err,
    size_t errlen)
{
	BIO	*mem;
	char	*p, *out, warn[PATH_MAX + 64];
	size_t	 n = 0;
	long	 l;
	int	 rc = -1;

	if ((mem = BIO_new(BIO_s_mem())) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	warn[0] = '\0';
	if (one_file(session_ca, mem, &n, warn, sizeof(warn)) <= 0 ||
	    (l = BIO_get_mem_data(mem, &p)) <= 0) {
		snprintf(err, errlen, "the gate's CA certificate: %s",
		    warn[0] != '\0' ? warn : "none");
		goto out;
	}
	if ((out = realloc(*pem, *len + (size_t)l + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memcpy(out + *len, p, (size_t)l);
	*len += (size_t)l;
	out[*len] = '\0';
	*pem = out;
	rc = 0;
out:
	BIO_free(mem);
	return rc;
}

int
launch_host_ca_file(const struct launch_session *s, int host,
    const char *session_ca, char *path, size_t pathlen, size_t *ncerts,
    char *err, size_t errlen)
{
	const char	*dir = getenv(LAUNCH_HOST_CA_DIR_ENV);
	char		*pem = NULL, warn[PATH_MAX + 64];
	size_t		 len = 0;
	int		 rc;

	path[0] = '\0';
	*ncerts = 0;
	if (dir == NULL || dir[0] != '/')
		dir = LAUNCH_HOST_CA_DIR;
	if (host && launch_host_ca_gather(dir, &pem, &len, ncerts, warn,
	    sizeof(warn), err, errlen) == -1)
		return -1;
	if (host && warn[0] != '\0')
		fprintf(stderr, "aisb: host CAs: %s\n", warn);
	/* the CA of the gate that inspects: trusted as the host's are */
	if (session_ca != NULL && add_session_ca(session_ca, &pem, &len, err,
	    errlen) == -1) {
		free(pem);
		return -1;
	}
	if (pem == NULL)
		return 0;
	rc = launch_session_write(s, "host-ca.pem", pem, len, path, pathlen,
	    err, errlen);
	free(pem);
	/* certificates only, and the container's root must read them */
	if (rc == 0 && chmod(path, 0644) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc == -1)
		path[0] = '\0';
	return rc;
}
