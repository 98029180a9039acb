/*
 * Builders for the sandbox container: the enforcer plan and the podman
 * argv.  Nothing here runs anything.
 */
#ifndef AISB_PODMAN_H
#define AISB_PODMAN_H

#include <stdint.h>

#include "session/options.h"

struct launch_agent;

/*
 * Seconds between the first stop signal passed to the command and the
 * container's kill, whoever stops it: the launcher, its watcher.
 */
#define LAUNCH_STOP_GRACE_S	5
/* podman's own --timeout: this long after aisb's --timeout. */
#define LAUNCH_BACKSTOP_S	10

struct launch_ids;
struct policy;

/* A NULL-terminated vector of malloc'd strings. */
struct launch_strv {
	char	**s;
	size_t	  n, cap;
	int	  failed;
};

/*
 * A bind mount a session adds to the workspace's (the git guard's, the
 * protected paths', --mount's): src at dst, read-only or read-write.
 * Added parents first: podman mounts them in that order.
 */
struct launch_mount {
	char	*src, *dst;
	int	 ro;
};

struct launch_mounts {
	struct launch_mount	*v;
	size_t			 n, cap;
};

/* 0, or -1 (memory).  A second mount at dst is none: the first stays,
 * made read-only when either is. */
int	 launch_mounts_add(struct launch_mounts *, const char *src,
	    const char *dst, int ro);
void	 launch_mounts_free(struct launch_mounts *);

struct launch_run {
	const struct launch_opts *opts;
	const char	*podman;	/* path of the podman binary */
	const char	*runtime;	/* OCI runtime, or NULL for podman's */
	const char	*network;	/* --network value for gate/direct */
	unsigned long	 nofile, nproc;	/* --ulimit values; 0: from getrlimit */
	const char	*session_id;
	const char	*image;
	const char	*envfile;
	const char	*planfile;
	const struct launch_ids *ids;	/* NULL: no mapping (previews) */
	const char	*workspace_src;	/* mount source: the idmapped clone
					   of a rootful session, else NULL
					   for the workspace itself */
	const char	*home_volume;	/* NULL: the option's value */
	int		 no_limits;	/* the host cannot apply cgroup limits */
	const char	*seccomp;	/* profile path; NULL: no argv */
	const char	*enforcer;	/* the host's aisb-enforce (enforcer.h);
					   NULL: no argv */
	const char	*hostca;	/* the host's CAs (hostcas.h), or NULL */
	const char	*recorddir;	/* --record --net direct: SESSION/recording */
	const struct launch_mounts *mounts;	/* after the workspace's */
	int		 workspace_ro;	/* readonly, quarantine */
	int		 home_ephemeral;	/* quarantine: a home that goes */
	int		 interactive, tty;
};

/*
 * aisb's own paths in the container: what the enforcer reads (the plan,
 * the env file, the host's CAs, the recording folder, all under
 * LAUNCH_RUN_DIR), the enforcer (LAUNCH_ENFORCER_IN_CONTAINER, in it
 * too), the home.  No --mount goes over them.
 */
#define LAUNCH_RUN_DIR		"/run/aisb"
#define LAUNCH_HOME		"/home/sandbox"

/*
 * --record in direct mode (docs/record.md): SESSION/recording is mounted
 * here and the plan's record line names the capture in it, bounded by
 * --record-max.
 */
#define LAUNCH_RECORD_DIR	LAUNCH_RUN_DIR "/record"
#define LAUNCH_RECORD_FILE	LAUNCH_RECORD_DIR "/capture.pcapng"

void	 launch_strv_free(struct launch_strv *);
/* The plan's version, its first line "aisb-plan N" (enforcer/plan.c). */
#define LAUNCH_PLAN_VERSION	1
/*
 * The plan text for aisb-enforce; *out is malloc'd.  host_loopback is the
 * address at which the container reaches the host's 127.0.0.1, net_dns
 * the network mode's DNS forwarder (NULL if none is known).  -1 with err.
 */
int	 launch_plan_text(const struct launch_opts *, const struct policy *,
	    const struct launch_agent *, const char *host_loopback,
	    uint16_t gate_port, const char *net_dns, char **out, char *err,
	    size_t errlen);
const char	*launch_network_dns(const char *network);
int	 launch_podman_argv(const struct launch_run *, struct launch_strv *);

/*
 * What a session holds when podman runs, or what a preview says in its
 * place: the one builder of struct launch_run (launch_run_build), for the
 * session, its dry run and doctor's probe of a session's container, so
 * that the three cannot drift apart.
 */
struct launch_run_src {
	const struct launch_host_facts *facts;	/* NULL: not probed (a dry
						   run): slirp4netns, the
						   hard limits */
	const struct launch_ids *ids;	/* NULL: no mapping known */
	const char	*podman, *runtime, *seccomp, *enforcer;
	const char	*session_id, *image, *envfile, *planfile;
	const char	*hostca;	/* the host's CAs, or NULL */
	const char	*recorddir;	/* --record --net direct's folder */
	const char	*clone;		/* the idmapped workspace (MAPPED) */
	const char	*stage;		/* a snapshot session's stage */
	const struct launch_mounts *mounts;	/* git guard, protect, --mount */
	int		 attached;	/* the user's stdin (and terminal) */
};
/*
 * r from o and src: the network and the ulimits from the facts, the
 * workspace's mount source (the idmapped clone, else a snapshot's stage,
 * else the workspace), the limits this host will not apply, stdin and a
 * terminal when attached.
 */
void	 launch_run_build(struct launch_run *r, const struct launch_opts *o,
	    const struct launch_run_src *src);

/*
 * The cgroup limits o asks for that this host will not apply (rootless
 * podman on cgroups v1), named into buf (" memory cpus pids"; "" when all
 * hold).  1 when some do not hold.
 */
struct launch_host_facts;
int	 launch_limits_unheld(const struct launch_opts *,
	    const struct launch_host_facts *, char *buf, size_t len);

/*
 * The podman volume name for /home/sandbox, created labelled
 * (io.aisb.workspace=workspace) if missing.  0, or -1 with err.
 */
int	 launch_home_volume_ensure(const char *podman, const char *name,
	    const char *workspace, char *err, size_t errlen);

#endif
