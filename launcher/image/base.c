/*
 * The offline Debian base, for machines where no container registry is
 * reachable: built by mmdebstrap from the host's own apt sources, its
 * tag a hash of everything that shapes it; and a named base, pulled
 * when missing, with a failed pull remembered so that sessions do not
 * wait on it again for an hour (image-int.h).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file.h"
#include "host/paths.h"
#include "host/proc.h"
#include "image/image-int.h"
#include "image/names.h"
#include "log.h"

extern char **environ;

/*
 * Bumped whenever the base's recipe changes in a way the hashed inputs
 * do not show (e.g. a different mmdebstrap variant).
 */
#define BASE_RECIPE	3
#define BASE_VARIANT	"apt"
#define SOURCES_MAX		32		/* apt source files used */
#define SOURCE_FILE_MAX		(64u * 1024)	/* bytes of one of them */
#define OS_RELEASE_MAX		(8u * 1024)
#define PULL_TIMEOUT_MS		(180 * 1000)
#define PULL_RETRY_SECS		3600		/* after a failed pull */
#define MMDEBSTRAP_TIMEOUT_MS	(30 * 60 * 1000)

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
			image_hash_str(ctx, path);
			image_hash_field(ctx, text, len);
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
	if ((ctx = image_hash_new()) == NULL ||
	    (n = image_package_list(&none, 1, &pk)) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(recipe, sizeof(recipe), "aisb-base %d", BASE_RECIPE);
	image_hash_str(ctx, recipe);
	image_hash_str(ctx, BASE_VARIANT);
	image_hash_str(ctx, bp->suite);
	image_hash_str(ctx, u.machine);
	len = sizeof("--include=");
	for (i = 0; i < (size_t)n; i++) {
		image_hash_str(ctx, pk[i]);
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
	if (image_hash_hex(ctx, bp->hash) == -1) {
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

	image_list_drop();	/* what it makes is not in the listing */

	if (image_scratch_dir("base", dir, sizeof(dir), err, errlen) == -1)
		return -1;
	snprintf(tar, sizeof(tar), "%s/rootfs.tar", dir);
	if (!spec->quiet)
		fprintf(stderr, "aisb: building the offline base %s from this "
		    "host's apt sources (mmdebstrap %s, %s); this takes a "
		    "minute or two\n", bp->tag, bp->suite,
		    bp->include + strlen("--include="));

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
	if (!spec->quiet)
		fprintf(stderr, "aisb: offline base %s ready in %lds\n",
		    bp->tag, (long)(time(NULL) - t0));
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
	if (n < 0 || (size_t)n >= sizeof(dir) || (ctx = image_hash_new()) == NULL)
		return -1;
	image_hash_str(ctx, ref);
	n = image_hash_hex(ctx, hex);
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
int
image_resolve_base(const struct launch_image_spec *spec, int dry_run, char *ref,
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

			image_list_drop();

			if (launch_run_quiet(argv, NULL, 0, PULL_TIMEOUT_MS, 0,
			    perr, sizeof(perr)) == 0) {
				pull_worked(spec->base);
				snprintf(ref, reflen, "%s", spec->base);
				return 0;
			}
			pull_failed(spec->base);
			if (!spec->quiet)
				fprintf(stderr, "aisb: base image %s cannot be "
				    "pulled (%s); using the offline Debian base "
				    "built from this host's apt sources "
				    "instead\n", spec->base, perr);
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
