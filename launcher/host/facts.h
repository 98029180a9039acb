/*
 * What the launcher knows of the host (podman, the runtime, cgroups,
 * limits, the network mode), for sessions to adapt to; aisb doctor
 * learns more with containers (cmd/doctor.c).  See docs/launcher.md,
 * "Doctor".
 */
#ifndef AISB_HOST_FACTS_H
#define AISB_HOST_FACTS_H

#include <stddef.h>
#include <stdio.h>

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
	char		image[256];		/* doctor's probes: an image
						   tag (LAUNCH_TAG_MAX) */
	int		nfail;			/* failed checks */
	int		nskip;			/* checks that could not run */
	FILE		*copy;			/* NULL, or a copy of every
						   line said (doctor's store) */
};

/*
 * The checks that run no container (podman, runtime by cgroups, limits,
 * /dev/net/tun): fast enough for every session.  network then is a guess
 * from podman's version and netmode stays LAUNCH_NET_UNKNOWN.  With
 * verbose, one line per check on stdout (aisb doctor).  The caller zeroes
 * the facts.  0, or -1 when aisb cannot run here.
 */
int	launch_host_check(struct launch_host_facts *, int verbose);

/* One line of aisb doctor's (verbose), counted in nfail and nskip. */
enum launch_verdict {
	LAUNCH_V_OK, LAUNCH_V_WARN, LAUNCH_V_FAIL, LAUNCH_V_SKIP
};
void	launch_facts_say(struct launch_host_facts *, int verbose,
	    enum launch_verdict, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

#define LAUNCH_INFO_TIMEOUT_MS	(60 * 1000)	/* podman info, images */
#define LAUNCH_ULIMIT_MIN	1024UL		/* below: aisb cannot run */
#define LAUNCH_NOFILE_CAP	65536UL		/* never ask for more */
/*
 * podman 4.3 starts conmon with a hard nproc of 32768, and the runtime
 * cannot raise it inside ("error setting rlimit type 6").
 */
#define LAUNCH_NPROC_CAP	32768UL
/*
 * The --ulimit value of RLIMIT_NOFILE or RLIMIT_NPROC: the hard limit,
 * capped; 0 when getrlimit fails.  The one choice of sessions (through
 * the host check) and of dry runs.
 */
unsigned long	 launch_ulimit(int resource);

#endif
