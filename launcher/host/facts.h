/*
 * What `aisb doctor` learns about the host (podman, the runtime, cgroups,
 * limits, the network mode), for the launcher to adapt to.  See
 * docs/launcher.md, "Doctor".
 */
#ifndef AISB_DOCTOR_H
#define AISB_DOCTOR_H

#include <stddef.h>

#include "image/image.h"	/* LAUNCH_TAG_MAX */

/*
 * slirp4netns, the network mode every podman has: the host's loopback is
 * LAUNCH_SLIRP_HOST inside, its DNS forwarder LAUNCH_SLIRP_DNS.
 */
#define LAUNCH_SLIRP_NETWORK	"slirp4netns:allow_host_loopback=true"
#define LAUNCH_SLIRP_HOST	"10.0.2.2"
#define LAUNCH_SLIRP_DNS	"10.0.2.3"

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

#endif
