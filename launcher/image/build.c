/*
 * What every build of an image uses (image-int.h): the tag's hash, the
 * spec's checks (its names by names.c's grammar), the package list with
 * the base's own, scratch folders, files written for a build, labels,
 * the build lock, and the enforcer beside aisb.  Nothing here runs
 * podman.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file.h"
#include "hex.h"
#include "host/paths.h"
#include "host/proc.h"
#include "image/image.h"
#include "image/image-int.h"
#include "image/names.h"
#include "log.h"

extern char **environ;

/*
 * What the Containerfile needs in any Debian-like base: the enforcer
 * needs nothing of it, being static and mounted from the host.
 */
static const char *const base_packages[] = {
	"ca-certificates", "passwd"
};
#define NBASE_PACKAGES	(sizeof(base_packages) / sizeof(base_packages[0]))

/* Each field is length-prefixed, so that no two inputs hash alike. */
void
image_hash_field(EVP_MD_CTX *ctx, const void *p, size_t len)
{
	unsigned char	lenbuf[8];
	int		i;

	for (i = 0; i < 8; i++)
		lenbuf[i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
	EVP_DigestUpdate(ctx, lenbuf, sizeof(lenbuf));
	EVP_DigestUpdate(ctx, p, len);
}


void
image_hash_str(EVP_MD_CTX *ctx, const char *s)
{
	image_hash_field(ctx, s, strlen(s));
}


/* Finishes ctx into LAUNCH_IMAGE_HASHLEN hex digits and a NUL. */
int
image_hash_hex(EVP_MD_CTX *ctx, char hex[LAUNCH_IMAGE_HASHLEN + 1])
{
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0;

	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    mdlen * 2 < LAUNCH_IMAGE_HASHLEN)
		return -1;
	hex_encode(md, LAUNCH_IMAGE_HASHLEN / 2, hex);
	return 0;
}


EVP_MD_CTX *
image_hash_new(void)
{
	EVP_MD_CTX	*ctx;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return NULL;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}


/* An image reference we are willing to hand podman and hash. */
int
image_valid_ref(const char *s)
{
	size_t	i, len = strlen(s);

	if (len == 0 || len >= LAUNCH_TAG_MAX || s[0] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    strchr("._-/:@", s[i]) != NULL))
			return 0;
	return 1;
}


static int
check_tools(const struct launch_image_spec *spec, char *err, size_t errlen)
{
	size_t	i;

	if (spec->nnpm > LAUNCH_TOOLS_MAX || spec->npip > LAUNCH_TOOLS_MAX ||
	    spec->nhomedirs > LAUNCH_TOOLS_MAX) {
		snprintf(err, errlen, "more than %d npm, pip or home folder "
		    "entries", LAUNCH_TOOLS_MAX);
		return -1;
	}
	for (i = 0; i < spec->nnpm; i++)
		if (launch_npm_entry_ok(spec->npm[i], err, errlen) == -1)
			return -1;
	for (i = 0; i < spec->npip; i++)
		if (launch_pip_entry_ok(spec->pip[i], err, errlen) == -1)
			return -1;
	if (spec->node != NULL && !launch_node_version_ok(spec->node)) {
		snprintf(err, errlen, "node '%.32s': not a Node release "
		    "(X.Y.Z)", spec->node);
		return -1;
	}
	for (i = 0; i < spec->nhomedirs; i++)
		if (!launch_homedir_ok(spec->homedirs[i])) {
			snprintf(err, errlen, "home folder '%.64s': a relative "
			    "path under %s of letters, digits, . _ -",
			    spec->homedirs[i], LAUNCH_SANDBOX_HOME);
			return -1;
		}
	return 0;
}


/* 1 when spec installs npm or pip tools (a layer of its own). */
int
image_has_tools(const struct launch_image_spec *spec)
{
	return spec->nnpm > 0 || spec->npip > 0 || spec->node != NULL;
}


const char *
launch_image_base(const char *word)
{
	return word != NULL && strcmp(word, LAUNCH_OFFLINE_BASE) == 0 ? NULL :
	    word;
}


int
image_foreign(const char *ref, int offline)
{
	return !offline && strcmp(ref, LAUNCH_DEFAULT_BASE) != 0;
}


/*
 * Packages and tools on a foreign base: refused, for they need the
 * network in the build.  apt-get install (of --package, of the nodejs
 * an npm tool's install session needs, of python3-pip for pip) runs as
 * root with that base's apt, its sources, its apt.conf.d hooks and its
 * packages' scripts, and the base's ONBUILD triggers before it: code a
 * stranger chose, with the network.  A build of such a base has none.
 */
static int
check_foreign(const struct launch_image_spec *spec, char *err, size_t errlen)
{
	const char	*what;

	if (spec->base == NULL || !image_foreign(spec->base, 0))
		return 0;
	if (spec->npackages > 0)
		what = spec->packages[0];
	else if (image_has_tools(spec))
		what = spec->nnpm > 0 ? spec->npm[0] : spec->npip > 0 ?
		    spec->pip[0] : "node";
	else
		return 0;
	snprintf(err, errlen, "base image %.128s is not aisb's own (the "
	    "offline Debian base or %s), so its build gets no network, and "
	    "'%.64s' needs apt-get install in it (npm and pip tools: nodejs "
	    "or python3-pip), which would run that base's apt, sources and "
	    "scripts as root; bake what you need into the base yourself "
	    "(FROM it, RUN apt-get install ...), or use aisb's default base "
	    "(leave image: and --image unset)", spec->base,
	    LAUNCH_DEFAULT_BASE, what);
	return -1;
}


int
launch_image_spec_check(const struct launch_image_spec *spec, char *err,
    size_t errlen)
{
	size_t	i;

	if (check_tools(spec, err, errlen) == -1)
		return -1;

	if (spec->base != NULL && !image_valid_ref(spec->base)) {
		snprintf(err, errlen, "base image '%.64s': not an image "
		    "reference (e.g. debian:bookworm-slim)", spec->base);
		return -1;
	}
	if (spec->npackages > LAUNCH_PACKAGES_MAX) {
		snprintf(err, errlen, "%zu packages: at most %d",
		    spec->npackages, LAUNCH_PACKAGES_MAX);
		return -1;
	}
	for (i = 0; i < spec->npackages; i++)
		if (!launch_deb_package_ok(spec->packages[i])) {
			snprintf(err, errlen, "package '%.64s': not a Debian "
			    "package name (lower case letters, digits, + - .)",
			    spec->packages[i]);
			return -1;
		}
	if (spec->suite != NULL && !launch_deb_package_ok(spec->suite)) {
		snprintf(err, errlen, "suite '%.64s': not a suite name",
		    spec->suite);
		return -1;
	}
	return check_foreign(spec, err, errlen);
}


static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}


static int
is_base_package(const char *name)
{
	size_t	i;

	for (i = 0; i < NBASE_PACKAGES; i++)
		if (strcmp(base_packages[i], name) == 0)
			return 1;
	return 0;
}


/*
 * The sorted, duplicate-free list of spec->packages, with base_packages
 * added (with_base) or taken out (!with_base: what a layer on the offline
 * base still has to install), into list (caller frees the array, not the
 * strings).  The count or -1.
 */
ssize_t
image_package_list(const struct launch_image_spec *spec, int with_base,
    const char ***list)
{
	const char	**v;
	size_t		  n = 0, i, o;

	if ((v = calloc(NBASE_PACKAGES + spec->npackages + 1,
	    sizeof(*v))) == NULL)
		return -1;
	for (i = 0; with_base && i < NBASE_PACKAGES; i++)
		v[n++] = base_packages[i];
	for (i = 0; i < spec->npackages; i++)
		if (with_base || !is_base_package(spec->packages[i]))
			v[n++] = spec->packages[i];
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0, o = 0; i < n; i++)
		if (o == 0 || strcmp(v[o - 1], v[i]) != 0)
			v[o++] = v[i];
	*list = v;
	return (ssize_t)o;
}


/* A private scratch directory under $TMPDIR or /var/tmp. */
int
image_scratch_dir(const char *what, char *buf, size_t len, char *err,
    size_t errlen)
{
	const char	*tmp = getenv("TMPDIR");

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/var/tmp";
	if ((size_t)snprintf(buf, len, "%s/aisb-%s.XXXXXX", tmp, what) >=
	    len || mkdtemp(buf) == NULL) {
		snprintf(err, errlen, "%s: cannot make a scratch directory: "
		    "%s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}


/*
 * The sorted, duplicate-free copy of v[0..n) into *out (the caller frees
 * the array); the count or -1.
 */
ssize_t
image_sorted(const char *const *v, size_t n, const char ***out)
{
	const char	**c;
	size_t		  i, o;

	if ((c = calloc(n + 1, sizeof(*c))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		c[i] = v[i];
	qsort(c, n, sizeof(*c), cmp_str);
	for (i = 0, o = 0; i < n; i++)
		if (o == 0 || strcmp(c[o - 1], c[i]) != 0)
			c[o++] = c[i];
	*out = c;
	return (ssize_t)o;
}


/* "key=a,b,c" of a sorted list; NULL when out of memory. */
char *
image_list_label(const char *key, const char *const *v, size_t n)
{
	const char	**c;
	char		 *l;
	size_t		  len = strlen(key) + 2, off, i;
	ssize_t		  k;

	if ((k = image_sorted(v, n, &c)) == -1)
		return NULL;
	for (i = 0; i < (size_t)k; i++)
		len += strlen(c[i]) + 1;
	if ((l = malloc(len)) != NULL) {
		off = (size_t)snprintf(l, len, "%s=", key);
		for (i = 0; i < (size_t)k; i++)
			off += (size_t)snprintf(l + off, len - off, "%s%s",
			    i > 0 ? "," : "", c[i]);
	}
	free(c);
	return l;
}


int
image_write_file(const char *dir, const char *name, const void *p, size_t len,
    mode_t mode, char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	int		 fd;

	if (file_path_join(path, sizeof(path), dir, name) == -1) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (file_write_all(fd, p, len) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (fchmod(fd, mode) == -1 || close(fd) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}


void
image_unlink_in(const char *dir, const char *name)
{
	char	path[PATH_MAX];

	if (file_path_join(path, sizeof(path), dir, name) == 0)
		(void)unlink(path);
}


/*
 * One image build at a time per podman store: a second aisb waits, then
 * finds the image built, instead of running mmdebstrap again and racing
 * the first for the tag.  The lock is named after the store
 * (CONTAINERS_STORAGE_CONF), so that separate stores do not wait on each
 * other, and lives in the user's state folder, which aisb makes 0700
 * ($XDG_STATE_HOME/aisb/locks/image-<hash>.lock): in /tmp or /run/lock,
 * which every user may write, another user could make the file first, or
 * open it and hold its lock so that the user's builds wait for ever.  It
 * is never removed: an aisb may have it open, waiting, while the holder
 * unlinks it, and a third then makes a new file and holds that lock
 * alongside; an empty file per store costs nothing.  The descriptor, or
 * -1 when there is no lock to be had, and then builds simply go
 * unserialised.
 */
int
image_build_lock(void)
{
	const char	*conf = getenv("CONTAINERS_STORAGE_CONF");
	EVP_MD_CTX	*ctx;
	struct stat	 st;
	char		 path[PATH_MAX], state[PATH_MAX], dir[PATH_MAX];
	char		 hex[LAUNCH_IMAGE_HASHLEN + 1];
	int		 fd, n;

	if (launch_state_dir(environ, state, sizeof(state)) == -1 ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/locks", state) >=
	    sizeof(dir) || launch_mkdirs(dir) == -1) {
		log_debug("image lock: no state folder");
		return -1;
	}
	if ((ctx = image_hash_new()) == NULL)
		return -1;
	image_hash_str(ctx, conf != NULL ? conf : "");
	n = image_hash_hex(ctx, hex);
	EVP_MD_CTX_free(ctx);
	if (n == -1)
		return -1;
	n = snprintf(path, sizeof(path), "%s/image-%s.lock", dir, hex);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    (fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		log_debug("image lock: %s", strerror(errno));
		return -1;
	}
	/* a file of the user's own: nobody else can hold it */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		log_debug("image lock %s: not a file of the user's", path);
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		fprintf(stderr, "aisb: waiting for another aisb that is "
		    "building an image\n");
		while ((n = flock(fd, LOCK_EX)) == -1 && errno == EINTR)
			;
		if (n == 0)
			return fd;
	}
	log_debug("image lock %s: %s", path, strerror(errno));
	close(fd);
	return -1;
}


int
image_podman_build(const struct launch_image_spec *spec, const char *dir,
    const char *tag, const char *hash, const char *base,
    const char *const *labels, int network, const char *what, char *err,
    size_t errlen)
{
	char	*argv[40], cfpath[PATH_MAX + 16], lhash[128], rt[64];
	char	 lbase[LAUNCH_TAG_MAX + 32];
	size_t	 a = 0, k;
	time_t	 t0 = time(NULL);

	snprintf(cfpath, sizeof(cfpath), "%s/Containerfile", dir);
	snprintf(lhash, sizeof(lhash), "%s=%s", LAUNCH_LABEL_HASH, hash);
	snprintf(lbase, sizeof(lbase), "%s=%s", LAUNCH_LABEL_BASE, base);
	argv[a++] = "podman";
	argv[a++] = "build";
	if (spec->runtime != NULL) {
		snprintf(rt, sizeof(rt), "--runtime=%s", spec->runtime);
		argv[a++] = rt;
	}
	argv[a++] = "--pull=never";
	argv[a++] = "--layers=false";
	if (!network)
		argv[a++] = "--network=none";
	argv[a++] = "--label";
	argv[a++] = LAUNCH_LABEL_MANAGED "=1";
	argv[a++] = "--label";
	argv[a++] = LAUNCH_LABEL_KIND "=sandbox";
	argv[a++] = "--label";
	argv[a++] = lhash;
	argv[a++] = "--label";
	argv[a++] = lbase;
	for (k = 0; labels[k] != NULL && a + 8 < sizeof(argv) / sizeof(argv[0]);
	    k++) {
		argv[a++] = "--label";
		argv[a++] = (char *)labels[k];
	}
	argv[a++] = "--tag";
	argv[a++] = (char *)tag;
	argv[a++] = "--file";
	argv[a++] = cfpath;
	argv[a++] = (char *)dir;
	argv[a] = NULL;
	if (!spec->quiet)
		fprintf(stderr, "aisb: building image %s%s\n", tag, what);
	if (launch_run_quiet(argv, NULL, 0, BUILD_TIMEOUT_MS, spec->verbose,
	    err, errlen) == -1)
		return -1;
	if (!spec->quiet)
		fprintf(stderr, "aisb: image %s built in %lds\n", tag,
		    (long)(time(NULL) - t0));
	return 0;
}
