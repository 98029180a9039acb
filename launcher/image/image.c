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
#include "image/image-int.h"
#include "host/proc.h"
#include "image/names.h"
#include "image/store.h"
#include "file.h"
#include "log.h"

extern char **environ;

/* What the enforcer and the Containerfile need in any Debian-like base. */
static const char *const base_packages[] = {
	"ca-certificates", "passwd", "libnftnl11", "libmnl0", "libc-ares2"
};
#define NBASE_PACKAGES	(sizeof(base_packages) / sizeof(base_packages[0]))

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

void
image_list_drop(void)
{
	free(image_list.text);
	image_list.text = NULL;
	image_list.tried = 1;	/* stale now: podman is asked directly */
}

/* Forgets the listing; the next question lists again. */
void
image_list_reset(void)
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
int
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

/* ---- inputs ---------------------------------------------------------- */

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
	return image_package_list(spec, !offline, pk);
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
	if (len == 0 || !image_valid_ref(base_ref)) {
		snprintf(err, errlen, "bad base reference");
		return -1;
	}
	buf_fixed(&sb, buf, len);
	buf_printf(&sb, "# aisb sandbox image, recipe %d; generated by aisb "
	    "%s, do not edit.\n", IMAGE_RECIPE, PACKAGE_VERSION);
	buf_printf(&sb, "FROM %s\n", base_ref);
	if (offline) {
		/* mmdebstrap installed these into the base already. */
		if ((n = image_package_list(&none, 1, &pk)) == -1)
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
	image_under_spec(spec, pk, &u);
	if (launch_image_spec_check(spec, err, sizeof(err)) == -1 ||
	    image_resolve_base(&u, 1, ref, sizeof(ref), &offline, err,
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
		if ((u.enforcer_path != NULL && image_plain(&u, 1, from,
		    sizeof(from), err, sizeof(err)) == -1) ||
		    image_tools_containerfile(spec, from[0] != '\0' ? from :
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
 * "io.aisb.packages=a,b" from the spec's own packages, sorted, for aisb
 * image ls; NULL when out of memory.
 */
static char *
packages_label(const struct launch_image_spec *spec)
{
	const char	**pk;
	char		 *l;
	ssize_t		  n;

	if ((n = image_package_list(spec, 0, &pk)) == -1)
		return NULL;
	l = image_list_label(LAUNCH_LABEL_PACKAGES, pk, (size_t)n);
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

	image_list_drop();	/* what it makes is not in the listing */

	if (image_scratch_dir("build", dir, sizeof(dir), err, errlen) == -1) {
		free(lpk);
		return -1;
	}
	/* The very bytes that were hashed are the bytes that are copied. */
	if (image_write_file(dir, "Containerfile", cf, strlen(cf), 0644, err,
	    errlen) == -1 ||
	    image_write_file(dir, "aisb-enforce", enf, enflen, 0755, err,
	    errlen) == -1 ||
	    image_write_file(dir, "apt-sandbox.conf", apt_sandbox_conf,
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
	image_unlink_in(dir, "Containerfile");
	image_unlink_in(dir, "aisb-enforce");
	image_unlink_in(dir, "apt-sandbox.conf");
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
int
image_build_lock(void)
{
	const char	*conf = getenv("CONTAINERS_STORAGE_CONF"), *dir;
	EVP_MD_CTX	*ctx;
	char		 path[PATH_MAX], hex[LAUNCH_IMAGE_HASHLEN + 1];
	int		 fd, n;

	if (geteuid() == 0)
		dir = "/run/lock";
	else if ((dir = getenv("XDG_RUNTIME_DIR")) == NULL || dir[0] != '/')
		dir = "/tmp";
	if ((ctx = image_hash_new()) == NULL)
		return -1;
	image_hash_str(ctx, conf != NULL ? conf : "");
	n = image_hash_hex(ctx, hex);
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
int
image_plain(const struct launch_image_spec *spec, int dry, char *tag,
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
		lockfd = image_build_lock();
	if (image_resolve_base(spec, dry, ref, sizeof(ref), &offline, err,
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
	    (ctx = image_hash_new()) == NULL ||
	    (n = layer_packages(spec, offline, &pk)) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (containerfile(spec, ref, offline, cf, LAUNCH_CONTAINERFILE_MAX,
	    err, errlen) == -1)
		goto out;

	snprintf(recipe, sizeof(recipe), "aisb-image %d", IMAGE_RECIPE);
	image_hash_str(ctx, recipe);
	image_hash_str(ctx, ref);
	image_hash_str(ctx, id);
	for (i = 0; i < (size_t)n; i++)
		image_hash_str(ctx, pk[i]);
	image_hash_field(ctx, enf, enflen);
	image_hash_str(ctx, cf);
	image_hash_str(ctx, apt_sandbox_conf);
	if (image_hash_hex(ctx, hash) == -1) {
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
	image_list_reset();
	free(pk);
	EVP_MD_CTX_free(ctx);
	free(cf);
	free(enf);
	if (lockfd != -1)
		close(lockfd);
	return rc;
}

int
launch_image_ensure(const struct launch_image_spec *spec, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	int	rc;

	rc = has_tools(spec) ? image_tools(spec, 0, tag, taglen, err,
	    errlen) : image_plain(spec, 0, tag, taglen, err, errlen);
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
	return has_tools(&s) ? image_tools(&s, 1, tag, taglen, err,
	    errlen) : image_plain(&s, 1, tag, taglen, err, errlen);
}

int
launch_image_default_enforcer(char *buf, size_t len)
{
	if (launch_beside_self("aisb-enforce", buf, len) == -1)
		return -1;
	return access(buf, R_OK) == 0 ? 0 : -1;
}
