/*
 * The CA of inspected connections (mint.c): made at start (its key never
 * leaves the process) or loaded from --ca-key, and the leaf certificates
 * it signs, one per server name, minted on demand and cached (bounded).
 * Used by gate/conn/inspect.c and the tests; OpenSSL's types are here,
 * not in gate.h.
 */
#ifndef AISB_GATE_MINT_H
#define AISB_GATE_MINT_H

#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

struct gate_ca;

struct gate_ca		*gate_ca_new(char *err, size_t errlen);
struct gate_ca		*gate_ca_load(const char *path, int *loose, char *err,
			    size_t errlen);
void			 gate_ca_free(struct gate_ca *);
int			 gate_ca_write(const struct gate_ca *, const char *path,
			    char *err, size_t errlen);
char			*gate_ca_pem(const struct gate_ca *, size_t *lenp);
size_t			 gate_ca_cached(const struct gate_ca *);

X509			*gate_ca_leaf(struct gate_ca *, const char *name);
X509			*gate_ca_cert(const struct gate_ca *);
int			 gate_ca_is_root(const struct gate_ca *);
STACK_OF(X509)		*gate_ca_chain(const struct gate_ca *);
EVP_PKEY		*gate_ca_leaf_key(const struct gate_ca *);

#endif /* AISB_GATE_MINT_H */
