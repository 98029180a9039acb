/*
 * The certificate authority of inspected connections, and the leaf
 * certificates it signs, one per server name, on demand.
 *
 * The CA is made at start-up (gate_ca_new: an ECDSA P-256 key and a
 * self-signed certificate) and lives in the gate's memory only: never
 * written to disk, never logged; the gate holding it is not dumpable
 * (main.c).  Its certificate is public: --ca-out writes it, the control
 * socket's "ca" answers it, and the sandbox trusts it.  A standalone gate
 * may be given a CA instead (gate_ca_load: --ca-key FILE, a PEM file with
 * the certificate, any chain above it, and the key), which its operators
 * distribute.
 *
 * Leaves: one ECDSA P-256 key for all of them (made with the CA: a leaf
 * costs a signature, not a key generation), a certificate per name with
 * the name as its only subjectAltName, serverAuth, valid from an hour ago
 * for LEAF_DAYS days (never past the CA's end).  They are kept in a cache
 * of MINT_CACHE names, least recently used out, and made again when a
 * day or less of validity is left.  Names come normalised from the
 * decision (policy_parse_target): lower case, no trailing dot, at most
 * POLICY_MAX_NAME bytes.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "file.h"
#include "gate/gate.h"
#include "gate/mint.h"

#define MINT_CACHE	1024		/* leaves kept */
#define MINT_BUCKETS	2048
#define LEAF_DAYS	30
#define CA_DAYS		730
#define BACKDATE	3600		/* s: clocks that lag a little */
#define CA_FILE_MAX	(64 * 1024)	/* --ca-key: bytes of the PEM file */

struct leaf {
	struct leaf	*next;		/* in its bucket */
	struct leaf	*older, *newer;	/* the use order */
	X509		*cert;
	time_t		 until;		/* its notAfter */
	char		 name[POLICY_MAX_NAME + 1];
};

struct gate_ca {
	X509			*cert;
	EVP_PKEY		*key;
	STACK_OF(X509)		*chain;		/* above cert (--ca-key); NULL */
	EVP_PKEY		*leaf_key;
	time_t			 until;		/* the CA's notAfter */
	struct leaf		*buckets[MINT_BUCKETS];
	struct leaf		*newest, *oldest;
	size_t			 nleaves;
	uint64_t		 minted;
};

static const char *
ssl_error(char *buf, size_t len)
{
	unsigned long	 e = ERR_get_error();

	if (e == 0)
		snprintf(buf, len, "unknown error");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

static EVP_PKEY *
new_key(void)
{
	return EVP_EC_gen("P-256");
}

static int
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	int		 rc;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	rc = X509_add_ext(cert, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return rc;
}

/* 16 random bytes, the top bit clear: a positive serial no one guesses. */
static int
set_serial(X509 *cert)
{
	unsigned char	 r[16];
	BIGNUM		*bn;
	int		 rc = -1;

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	r[0] &= 0x7f;
	if ((bn = BN_bin2bn(r, sizeof(r), NULL)) != NULL &&
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL)
		rc = 0;
	BN_free(bn);
	return rc;
}

static time_t
not_after(const X509 *cert)
{
	struct tm	 tm;

	if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1)
		return 0;
	return timegm(&tm);
}

/* A certificate valid [now - BACKDATE, until], its serial set. */
static X509 *
cert_new(time_t now, time_t until)
{
	X509	*c;

	if ((c = X509_new()) == NULL || X509_set_version(c, 2) != 1 ||
	    set_serial(c) == -1 ||
	    X509_time_adj_ex(X509_getm_notBefore(c), 0, -BACKDATE, &now) ==
	    NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(c), 0, 0, &until) == NULL) {
		X509_free(c);
		return NULL;
	}
	return c;
}

static struct gate_ca *
ca_alloc(void)
{
	struct gate_ca	*ca;

	if ((ca = calloc(1, sizeof(*ca))) == NULL)
		return NULL;
	if ((ca->leaf_key = new_key()) == NULL) {
		free(ca);
		return NULL;
	}
	return ca;
}

struct gate_ca *
gate_ca_new(char *err, size_t errlen)
{
	struct gate_ca	*ca;
	X509_NAME	*n = NULL;
	unsigned char	 id[4];
	char		 cn[64], why[128];
	time_t		 now = time(NULL);

	if ((ca = ca_alloc()) == NULL || (ca->key = new_key()) == NULL ||
	    RAND_bytes(id, sizeof(id)) != 1)
		goto fail;
	snprintf(cn, sizeof(cn), "aisb session CA %02x%02x%02x%02x", id[0],
	    id[1], id[2], id[3]);
	ca->until = now + (time_t)CA_DAYS * 86400;
	if ((ca->cert = cert_new(now, ca->until)) == NULL ||
	    (n = X509_NAME_new()) == NULL ||
	    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
	    (const unsigned char *)"aisb", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_subject_name(ca->cert, n) != 1 ||
	    X509_set_issuer_name(ca->cert, n) != 1 ||
	    X509_set_pubkey(ca->cert, ca->key) != 1 ||
	    add_ext(ca->cert, ca->cert, NID_basic_constraints,
	    "critical,CA:TRUE,pathlen:0") == -1 ||
	    add_ext(ca->cert, ca->cert, NID_key_usage,
	    "critical,keyCertSign,cRLSign") == -1 ||
	    add_ext(ca->cert, ca->cert, NID_subject_key_identifier,
	    "hash") == -1 ||
	    X509_sign(ca->cert, ca->key, EVP_sha256()) == 0)
		goto fail;
	X509_NAME_free(n);
	return ca;
 fail:
	X509_NAME_free(n);
	snprintf(err, errlen, "making the session CA: %s",
	    ssl_error(why, sizeof(why)));
	gate_ca_free(ca);
	return NULL;
}

/*
 * --ca-key FILE: the CA's certificate first, any certificates above it,
 * and its private key, in PEM.  The certificate must be a CA's and the
 * key its own.  The file's bytes are wiped once read.  A file every user
 * may read or write is refused; *loose is set when its group may (the
 * caller warns).
 */
struct gate_ca *
gate_ca_load(const char *path, int *loose, char *err, size_t errlen)
{
	struct gate_ca	*ca = NULL;
	struct stat	 st;
	BIO		*bio = NULL;
	X509		*x;
	char		*text, why[256];
	size_t		 len;

	if ((text = file_read_bounded(path, CA_FILE_MAX, &len, why,
	    sizeof(why))) == NULL) {
		snprintf(err, errlen, "--ca-key %s", why);
		return NULL;
	}
	if (stat(path, &st) == -1)
		st.st_mode = 0;
	*loose = (st.st_mode & S_IRWXG) != 0;
	if ((ca = ca_alloc()) == NULL ||
	    (bio = BIO_new_mem_buf(text, (int)len)) == NULL ||
	    (ca->chain = sk_X509_new_null()) == NULL) {
		snprintf(err, errlen, "--ca-key %s: out of memory", path);
		goto fail;
	}
	ca->cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	while (ca->cert != NULL &&
	    (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
		if (sk_X509_push(ca->chain, x) == 0) {
			X509_free(x);
			break;
		}
	ERR_clear_error();
	(void)BIO_reset(bio);
	ca->key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	ERR_clear_error();
	if (ca->cert == NULL || ca->key == NULL) {
		snprintf(err, errlen, "--ca-key %s: no %s in it (PEM: the CA "
		    "certificate, then its private key, unencrypted)", path,
		    ca->cert == NULL ? "certificate" : "private key");
		goto fail;
	}
	if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
		/* whoever reads it mints what the clients trust: refused */
		snprintf(err, errlen, "--ca-key %s is open to every user "
		    "(mode %04o): anyone could read or replace the key the "
		    "clients trust; make it 0600 (0640 to a group of --user)",
		    path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	if (X509_check_ca(ca->cert) == 0) {
		snprintf(err, errlen, "--ca-key %s: the certificate is not a "
		    "CA's (basicConstraints CA:TRUE, keyCertSign)", path);
		goto fail;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "--ca-key %s: the key is not the "
		    "certificate's", path);
		goto fail;
	}
	ca->until = not_after(ca->cert);
	if (ca->until <= time(NULL) + 86400) {
		snprintf(err, errlen, "--ca-key %s: the certificate expires "
		    "within a day (or has)", path);
		goto fail;
	}
	BIO_free(bio);
	explicit_bzero(text, len);
	free(text);
	return ca;
 fail:
	BIO_free(bio);
	explicit_bzero(text, len);
	free(text);
	gate_ca_free(ca);
	return NULL;
}

static void
leaf_unlink(struct gate_ca *ca, struct leaf *l)
{
	if (l->older != NULL)
		l->older->newer = l->newer;
	else
		ca->oldest = l->newer;
	if (l->newer != NULL)
		l->newer->older = l->older;
	else
		ca->newest = l->older;
	l->older = l->newer = NULL;
}

static void
leaf_push(struct gate_ca *ca, struct leaf *l)
{
	l->older = ca->newest;
	l->newer = NULL;
	if (ca->newest != NULL)
		ca->newest->newer = l;
	ca->newest = l;
	if (ca->oldest == NULL)
		ca->oldest = l;
}

static unsigned
bucket(const char *name)
{
	uint32_t	 h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h % MINT_BUCKETS;
}

static void
leaf_drop(struct gate_ca *ca, struct leaf *l)
{
	struct leaf	**pp;

	for (pp = &ca->buckets[bucket(l->name)]; *pp != l; pp = &(*pp)->next)
		;
	*pp = l->next;
	leaf_unlink(ca, l);
	X509_free(l->cert);
	free(l);
	ca->nleaves--;
}

/*
 * The authority key identifier, when the CA has a key identifier of its
 * own to give (an operator's CA may have none: the leaf goes without).
 */
static int
auth_key_id(X509 *c, X509 *ca)
{
	if (X509_get0_subject_key_id(ca) == NULL)
		return 0;
	return add_ext(c, ca, NID_authority_key_identifier, "keyid");
}

static X509 *
mint(struct gate_ca *ca, const char *name, time_t now, time_t *until)
{
	X509		*c;
	X509_NAME	*n = NULL;
	char		 san[POLICY_MAX_NAME + 16];
	size_t		 len = strlen(name);

	*until = now + (time_t)LEAF_DAYS * 86400;
	if (*until > ca->until)
		*until = ca->until;
	/* without a subject, the name must be read: RFC 5280 4.2.1.6 */
	snprintf(san, sizeof(san), "%sDNS:%s", len > 64 ? "critical," : "",
	    name);
	/* a subject CN holds 64 bytes at most: longer names have none */
	if ((c = cert_new(now, *until)) == NULL ||
	    (n = X509_NAME_new()) == NULL ||
	    (len <= 64 && X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)name, (int)len, -1, 0) != 1) ||
	    X509_set_subject_name(c, n) != 1 ||
	    X509_set_issuer_name(c, X509_get_subject_name(ca->cert)) != 1 ||
	    X509_set_pubkey(c, ca->leaf_key) != 1 ||
	    add_ext(c, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ==
	    -1 ||
	    add_ext(c, ca->cert, NID_key_usage, "critical,digitalSignature") ==
	    -1 ||
	    add_ext(c, ca->cert, NID_ext_key_usage, "serverAuth") == -1 ||
	    add_ext(c, ca->cert, NID_subject_alt_name, san) == -1 ||
	    add_ext(c, ca->cert, NID_subject_key_identifier, "hash") == -1 ||
	    auth_key_id(c, ca->cert) == -1 ||
	    X509_sign(c, ca->key, EVP_sha256()) == 0) {
		X509_NAME_free(n);
		X509_free(c);
		ERR_clear_error();
		return NULL;
	}
	X509_NAME_free(n);
	ca->minted++;
	return c;
}

/*
 * The leaf for name, from the cache or minted now; the caller gets a
 * reference of its own (X509_free it).  NULL when out of memory.
 */
X509 *
gate_ca_leaf(struct gate_ca *ca, const char *name)
{
	struct leaf	*l;
	unsigned	 b = bucket(name);
	time_t		 now = time(NULL);

	for (l = ca->buckets[b]; l != NULL; l = l->next)
		if (strcmp(l->name, name) == 0)
			break;
	if (l != NULL && l->until - now <= 86400) {
		leaf_drop(ca, l);
		l = NULL;
	}
	if (l == NULL) {
		if (strlen(name) > POLICY_MAX_NAME ||
		    (l = calloc(1, sizeof(*l))) == NULL)
			return NULL;
		if ((l->cert = mint(ca, name, now, &l->until)) == NULL) {
			free(l);
			return NULL;
		}
		snprintf(l->name, sizeof(l->name), "%s", name);
		l->next = ca->buckets[b];
		ca->buckets[b] = l;
		if (++ca->nleaves > MINT_CACHE)
			leaf_drop(ca, ca->oldest);
	} else
		leaf_unlink(ca, l);
	leaf_push(ca, l);
	X509_up_ref(l->cert);
	return l->cert;
}

X509 *
gate_ca_cert(const struct gate_ca *ca)
{
	return ca->cert;
}

/* Whether the CA is self-signed: a trust anchor, not sent with leaves. */
int
gate_ca_is_root(const struct gate_ca *ca)
{
	return (X509_get_extension_flags(ca->cert) & EXFLAG_SS) != 0;
}

STACK_OF(X509) *
gate_ca_chain(const struct gate_ca *ca)
{
	return ca->chain;
}

EVP_PKEY *
gate_ca_leaf_key(const struct gate_ca *ca)
{
	return ca->leaf_key;
}

size_t
gate_ca_cached(const struct gate_ca *ca)
{
	return ca->nleaves;
}

/* The CA certificate in PEM, malloc'd and NUL-terminated; NULL: ENOMEM. */
char *
gate_ca_pem(const struct gate_ca *ca, size_t *lenp)
{
	BIO	*b;
	char	*p, *out = NULL;
	long	 n;

	if ((b = BIO_new(BIO_s_mem())) == NULL)
		return NULL;
	if (PEM_write_bio_X509(b, ca->cert) == 1 &&
	    (n = BIO_get_mem_data(b, &p)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, p, (size_t)n);
		out[n] = '\0';
		*lenp = (size_t)n;
	}
	BIO_free(b);
	return out;
}

/* --ca-out: the certificate (public), replaced whole, mode 0644. */
int
gate_ca_write(const struct gate_ca *ca, const char *path, char *err,
    size_t errlen)
{
	char	*pem;
	size_t	 len;
	int	 rc;

	if ((pem = gate_ca_pem(ca, &len)) == NULL) {
		snprintf(err, errlen, "--ca-out %s: out of memory", path);
		return -1;
	}
	if ((rc = file_write_atomic(path, pem, len, 0644, (gid_t)-1)) == -1)
		snprintf(err, errlen, "--ca-out %s: %s", path, strerror(errno));
	free(pem);
	return rc;
}

void
gate_ca_free(struct gate_ca *ca)
{
	if (ca == NULL)
		return;
	while (ca->oldest != NULL)
		leaf_drop(ca, ca->oldest);
	X509_free(ca->cert);
	sk_X509_pop_free(ca->chain, X509_free);
	EVP_PKEY_free(ca->key);		/* EC keys are cleared when freed */
	EVP_PKEY_free(ca->leaf_key);
	free(ca);
}
