/*
 * What the files of the sandbox image share; only they include this.
 * In one direction: layer.c (the tools layer; ensure, lookup, preview)
 * -> image.c (the plain image: base + Debian packages) -> base.c (the
 * offline base, a named one pulled) -> build.c (hash, checks, files,
 * lock) and store.c (what podman has, last use).
 */
#ifndef AISB_IMAGE_INT_H
#define AISB_IMAGE_INT_H

#include <stddef.h>
#include <sys/types.h>

#include <openssl/evp.h>

#include "image/image-t.h"

/*
 * Bumped whenever the recipe changes in a way the hashed inputs do not
 * show (e.g. a different mmdebstrap variant), so old images are not reused.
 */
#define IMAGE_RECIPE		3
#define BUILD_TIMEOUT_MS	(30 * 60 * 1000)

/* ---- store.c ----------------------------------------------------------- */

/* 1 when the image exists locally, 0 when not, -1 when podman failed. */
int	 image_exists(const char *ref, char *err, size_t errlen);
/* The image's full id (64 hex digits) into id[65].  0 or -1. */
int	 image_id(const char *ref, char id[65], char *err, size_t errlen);
/* After a build or pull: the listing is stale, podman is asked. */
void	 image_list_drop(void);
/* Forgets the listing; the next question lists again. */
void	 image_list_reset(void);

/* ---- build.c ----------------------------------------------------------- */

/* SHA-256 with length-prefixed fields, finished into hex digits. */
EVP_MD_CTX *image_hash_new(void);
void	 image_hash_field(EVP_MD_CTX *, const void *, size_t);
void	 image_hash_str(EVP_MD_CTX *, const char *);
int	 image_hash_hex(EVP_MD_CTX *, char hex[LAUNCH_IMAGE_HASHLEN + 1]);
/* An image reference we are willing to hand podman and hash.  1 or 0. */
int	 image_valid_ref(const char *);
/*
 * 1 when the base ref (offline: aisb's offline base) is foreign: neither
 * that base nor LAUNCH_DEFAULT_BASE.  Its build steps get no network.
 */
int	 image_foreign(const char *ref, int offline);
/* 1 when spec installs npm or pip tools (a layer of its own). */
int	 image_has_tools(const struct launch_image_spec *);
/*
 * The sorted, duplicate-free list of spec->packages, with base_packages
 * when with_base (the caller frees the array); the count or -1.
 */
ssize_t	 image_package_list(const struct launch_image_spec *, int with_base,
	    const char ***out);
/*
 * The sorted, duplicate-free copy of v[0..n) into *out (the caller frees
 * the array); the count or -1.
 */
ssize_t	 image_sorted(const char *const *v, size_t n, const char ***out);
/* "key=a,b,c" of a sorted list; NULL when out of memory. */
char	*image_list_label(const char *key, const char *const *v, size_t n);
/* A new 0700 scratch folder for what, under the state folder. */
int	 image_scratch_dir(const char *what, char *buf, size_t len, char *err,
	    size_t errlen);
/* dir/name written (mode), replacing what was there.  0 or -1 with err. */
int	 image_write_file(const char *dir, const char *name, const void *p,
	    size_t len, mode_t mode, char *err, size_t errlen);
void	 image_unlink_in(const char *dir, const char *name);
/* The build lock's descriptor (flock held), or -1 when there is none. */
int	 image_build_lock(void);
/*
 * podman build of dir/Containerfile into tag, with aisb's labels
 * (managed, kind sandbox, hash, base) and then labels (NULL-terminated
 * "key=value"), never pulling, without the network unless network; what
 * follows the tag in the line on stderr.  0 or -1 with err.
 */
int	 image_podman_build(const struct launch_image_spec *, const char *dir,
	    const char *tag, const char *hash, const char *base,
	    const char *const *labels, int network, const char *what,
	    char *err, size_t errlen);

/* ---- base.c ------------------------------------------------------------ */

/*
 * The base spec's image sits on, into ref: spec->base when present or
 * pullable, else the offline base, built when missing; *offline says
 * which.  With dry_run nothing is pulled or built.  0 or -1.
 */
int	 image_resolve_base(const struct launch_image_spec *, int dry_run,
	    char *ref, size_t reflen, int *offline, char *err, size_t errlen);

/* ---- image.c ----------------------------------------------------------- */

struct buf;

/*
 * The start of a generated Containerfile, into sb over buf[len]: spec
 * checked, from a reference podman may be given, then the line that says
 * what it is ("sandbox image": "# aisb sandbox image, recipe N; ...") and
 * FROM from.  0, or -1 with err.
 */
int	 image_cf_begin(struct buf *sb, char *buf, size_t len,
	    const char *what, const struct launch_image_spec *,
	    const char *from, char *err, size_t errlen);
/* The end of one: 0, or -1 with err when it did not fit its len bytes. */
int	 image_cf_end(const struct buf *sb, size_t len, char *err,
	    size_t errlen);

/*
 * The Containerfile of spec over base_ref (offline: the offline base,
 * whose packages are in it already).  0 or -1 with err.
 */
int	 image_containerfile(const struct launch_image_spec *,
	    const char *base_ref, int offline, char *buf, size_t len, char *err,
	    size_t errlen);
/*
 * The image of spec's base and Debian packages, built unless dry: 1 it
 * is here (tag), 0 not (dry), -1 with err.
 */
int	 image_plain(const struct launch_image_spec *, int dry, char *tag,
	    size_t taglen, char *err, size_t errlen);

/* ---- layer.c ----------------------------------------------------------- */

int	 image_tools_containerfile(const struct launch_image_spec *,
	    const char *from, char *buf, size_t len, char *err, size_t errlen);
/* spec without its tools (the layer below), its packages in pk */
void	 image_under_spec(const struct launch_image_spec *, const char **pk,
	    struct launch_image_spec *u);
/* The tools layer's image, as image_plain() for the plain one. */
int	 image_tools(const struct launch_image_spec *, int dry, char *tag,
	    size_t taglen, char *err, size_t errlen);

#endif
