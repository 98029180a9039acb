/*
 * The sandbox container: the enforcer plan derived from the options and
 * the policy, and the `podman run` argv.  Pure builders: nothing here runs
 * anything, so --dry-run prints exactly what a session would run.
 */
#include "config.h"

#include <sys/resource.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "host/cache.h"
#include "host/proc.h"
#include "session/ids.h"
#include "host/facts.h"
#include "image/image-t.h"
#include "session/enforcer.h"
#include "session/hostcas.h"
#include "image/agent.h"
#include "session/podman.h"
#include "policy.h"

extern char **environ;

#define LAUNCH_PLAN_PATH	LAUNCH_RUN_DIR "/plan"
#define LAUNCH_ENV_PATH		LAUNCH_RUN_DIR "/env"

int
launch_mounts_add(struct launch_mounts *m, const char *src, const char *dst,
    int ro)
{
	struct launch_mount	*nv;
	size_t			 i;

	/* one mount per place (podman refuses two): read-only wins */
	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i].dst, dst) == 0) {
			m->v[i].ro |= ro;
			return 0;
		}
	if (m->n == m->cap) {
		m->cap = m->cap == 0 ? 16 : m->cap * 2;
		if ((nv = reallocarray(m->v, m->cap, sizeof(*nv))) == NULL)
			return -1;
		m->v = nv;
	}
	if ((m->v[m->n].src = strdup(src)) == NULL ||
	    (m->v[m->n].dst = strdup(dst)) == NULL) {
		free(m->v[m->n].src);
		return -1;
	}
	m->v[m->n].ro = ro;
	m->n++;
	return 0;
}

void
launch_mounts_free(struct launch_mounts *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].src);
		free(m->v[i].dst);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

void
launch_strv_free(struct launch_strv *v)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		free(v->s[i]);
	free(v->s);
	v->s = NULL;
	v->n = v->cap = 0;
}

/* Appends a formatted string; on ENOMEM marks the vector failed. */
static void __attribute__((format(printf, 2, 3)))
add(struct launch_strv *v, const char *fmt, ...)
{
	va_list	 ap;
	char	*s, **ns;

	if (v->failed)
		return;
	if (v->n + 2 > v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 32;

		if ((ns = reallocarray(v->s, ncap, sizeof(*ns))) == NULL) {
			v->failed = 1;
			return;
		}
		v->s = ns;
		v->cap = ncap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1) {
		v->failed = 1;
		va_end(ap);
		return;
	}
	va_end(ap);
	v->s[v->n++] = s;
	v->s[v->n] = NULL;
}

#define DIRECT_MAX_NAMES	64	/* the enforcer's bounds (plan.h) */
#define DIRECT_MAX_PORTS	16
#define DIRECT_MAX_RESOLVERS	3
#define DIRECT_MAX_RANGES	16

struct direct_name {
	const char	*name;		/* the rule's canonical pattern */
	uint16_t	 ports[DIRECT_MAX_PORTS];
	size_t		 nports;
};

/*
 * Adds the ports of one exact allow rule that the whole policy allows
 * (a deny rule may take some back) to the name's entry.  -1 with err when
 * the name would need more ports than the enforcer pins.
 */
static int
direct_ports(const struct policy *p, const struct policy_rule_info *ri,
    const struct policy_rule *rule, struct direct_name *dn, char *err,
    size_t errlen)
{
	struct policy_decision	 d;
	char			 where[512];
	size_t			 k, j, len = strlen(ri->pattern);
	unsigned		 port;

	for (k = 0; k < ri->nports; k++)
		for (port = ri->ports[k].lo; port <= ri->ports[k].hi; port++) {
			policy_decide_name(p, ri->pattern, len, (uint16_t)port,
			    &d);
			if (d.verdict != POLICY_ALLOW)
				continue;
			for (j = 0; j < dn->nports; j++)
				if (dn->ports[j] == port)
					break;
			if (j < dn->nports)
				continue;
			if (dn->nports == DIRECT_MAX_PORTS) {
				snprintf(err, errlen, "%s: --net direct pins "
				    "at most %d ports a name; list fewer ports "
				    "for %s or use --net gate",
				    policy_rule_describe(rule, where,
				    sizeof(where)), DIRECT_MAX_PORTS,
				    ri->pattern);
				return -1;
			}
			dn->ports[dn->nports++] = (uint16_t)port;
		}
	return 0;
}

/*
 * A DNS server of the policy as the sandbox reaches it: the host's
 * 127.0.0.1 through the network's mapping of the host loopback.
 */
static int
direct_resolver(struct launch_strv *v, const char *srv,
    const char *host_loopback, char *err, size_t errlen)
{
	const char	*colon = strrchr(srv, ':');
	char		 addr[64];
	size_t		 alen;

	if (colon == NULL)
		goto bad;
	if (srv[0] == '[') {
		alen = (size_t)(colon - srv) - 2;
		srv++;
	} else
		alen = (size_t)(colon - srv);
	if (alen == 0 || alen >= sizeof(addr))
		goto bad;
	memcpy(addr, srv, alen);
	addr[alen] = '\0';
	if (strcmp(addr, "127.0.0.1") == 0)
		add(v, "resolver %s %s\n", host_loopback, colon + 1);
	else if (strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0) {
		snprintf(err, errlen, "DNS server %s: the sandbox reaches the "
		    "host's loopback only at 127.0.0.1; listen there or use "
		    "--net gate", srv);
		return -1;
	} else
		add(v, "resolver %s %s\n", addr, colon + 1);
	return 0;
bad:
	snprintf(err, errlen, "DNS server \"%s\" is not ADDRESS:PORT", srv);
	return -1;
}

/*
 * Direct mode: the policy's exact names with the ports it allows them,
 * its allow_ranges, its DNS servers (or the network's own forwarder), and
 * the DNS stub the command resolves through.  Wildcard, regex and cidr
 * allow rules cannot be turned into addresses: they are left out, which
 * narrows, and the user is told which.  What the enforcer cannot hold is
 * an error here, not a refusal inside the container.
 */
static int
direct_plan(struct launch_strv *v, const struct policy *p,
    const char *host_loopback, const char *net_dns, char *err, size_t errlen)
{
	struct direct_name	*names;
	struct policy_rule_info	 ri;
	struct policy_addr	 net;
	char			 where[512], a[64];
	size_t			 i, j, n = 0, left_out = 0, nsrv;
	unsigned		 prefix;
	int			 rc = -1;

	if ((names = calloc(DIRECT_MAX_NAMES, sizeof(*names))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	add(v, "mode direct\ndns-min-ttl %u\ndns-max-ttl %u\n",
	    policy_dns_min_ttl(p) ? policy_dns_min_ttl(p) : 1,
	    policy_dns_max_ttl(p));
	nsrv = policy_dns_server_count(p);
	if (nsrv > DIRECT_MAX_RESOLVERS) {
		snprintf(err, errlen, "%s: --net direct asks at most %d DNS "
		    "servers; the policy lists %zu", policy_file(p),
		    DIRECT_MAX_RESOLVERS, nsrv);
		goto out;
	}
	for (i = 0; i < nsrv; i++)
		if (direct_resolver(v, policy_dns_server_at(p, i),
		    host_loopback, err, errlen) == -1)
			goto out;
	if (nsrv == 0) {
		if (net_dns == NULL) {
			snprintf(err, errlen, "%s: --net direct needs DNS "
			    "servers (dns: servers:) with this network mode",
			    policy_file(p));
			goto out;
		}
		add(v, "resolver %s\n", net_dns);
	}
	for (i = 0; i < policy_allow_range_count(p); i++) {
		if (i == DIRECT_MAX_RANGES) {
			snprintf(err, errlen, "%s: --net direct takes at most "
			    "%d allow_ranges", policy_file(p),
			    DIRECT_MAX_RANGES);
			goto out;
		}
		policy_allow_range_at(p, i, &net, &prefix);
		add(v, "allow-range %s/%u\n", policy_addr_str(&net, a,
		    sizeof(a)), prefix);
	}
	add(v, "dns-stub 127.0.0.1\n");

	for (i = 0; i < policy_rule_count(p); i++) {
		const struct policy_rule *rule = policy_rule_at(p, i);

		policy_rule_info(rule, &ri);
		if (ri.action != POLICY_ALLOW)
			continue;
		if (ri.kind != POLICY_RULE_EXACT) {
			if (left_out++ == 0)
				policy_rule_describe(rule, where,
				    sizeof(where));
			continue;
		}
		for (j = 0; j < n; j++)
			if (strcmp(names[j].name, ri.pattern) == 0)
				break;
		if (j == n) {
			if (n == DIRECT_MAX_NAMES) {
				snprintf(err, errlen, "%s: --net direct pins "
				    "at most %d names; use --net gate",
				    policy_file(p), DIRECT_MAX_NAMES);
				goto out;
			}
			names[n++].name = ri.pattern;
		}
		if (direct_ports(p, &ri, rule, &names[j], err, errlen) == -1)
			goto out;
	}
	for (i = 0, j = 0; i < n; i++) {
		char	 ports[DIRECT_MAX_PORTS * 6 + 1];
		size_t	 k, off = 0;

		if (names[i].nports == 0)
			continue;	/* every port denied by a deny rule */
		for (k = 0; k < names[i].nports; k++)
			off += (size_t)snprintf(ports + off, sizeof(ports) - off,
			    "%s%u", k ? "," : "", names[i].ports[k]);
		add(v, "allow-name %s %s\n", names[i].name, ports);
		j++;
	}
	if (left_out > 0)
		fprintf(stderr, "aisb: --net direct: %zu wildcard, regex or "
		    "cidr allow rule(s) cannot be pinned to addresses and are "
		    "left out (first: %s); their hosts are unreachable\n",
		    left_out, where);
	if (j == 0) {
		snprintf(err, errlen, "%s: --net direct needs at least one "
		    "allow rule with an exact host name (wildcards, regexes "
		    "and cidr rules cannot be pinned); use --net gate",
		    policy_file(p));
		goto out;
	}
	rc = 0;
out:
	free(names);
	return rc;
}

/*
 * The plan aisb-enforce reads (docs/enforcer.md).  Gate mode: only the
 * gate.  Direct mode: see direct_plan().
 */
int
launch_plan_text(const struct launch_opts *o, const struct policy *p,
    const struct launch_agent *a, const char *host_loopback,
    uint16_t gate_port, const char *net_dns, char **out, char *err,
    size_t errlen)
{
	struct launch_strv	 v = { 0 };
	size_t			 i, len = 0;
	char			*text, *w;

	add(&v, "aisb-plan %d\n", LAUNCH_PLAN_VERSION);
	switch (o->net) {
	case LAUNCH_NET_GATE:
		add(&v, "mode gate\ngate %s %u\n", host_loopback, gate_port);
		/*
		 * Transparent capture (docs/enforcer.md): TCP to these ports
		 * and all DNS go to the enforcer's relay, then to the gate.
		 */
		if (o->transparent && o->ntports > 0) {
			add(&v, "transparent ");
			for (i = 0; i < o->ntports; i++)
				add(&v, "%s%u", i > 0 ? "," : "",
				    (unsigned)o->tports[i]);
			add(&v, "\n");
		}
		/*
		 * Every TCP port of the addresses the gate's DNS hands out:
		 * the gate decides the name each was given for (ssh, a
		 * database) and the port, as a CONNECT (docs/gate.md)
		 */
		if (o->transparent)
			add(&v, "transparent-range %s\ndns-gate\n",
			    DNSMSG_SYNTH_RANGE);
		break;
	case LAUNCH_NET_NONE:
		add(&v, "mode none\n");
		break;
	case LAUNCH_NET_DIRECT:
		if (direct_plan(&v, p, host_loopback, net_dns, err,
		    errlen) == -1) {
			launch_strv_free(&v);
			return -1;
		}
		/* the enforcer's recorder (docs/record.md, "Direct mode") */
		if (o->record)
			add(&v, "record %s %llu\n", LAUNCH_RECORD_FILE,
			    (unsigned long long)o->record_max);
		break;
	}
	/* the recipe's folders, also in a home volume older than it */
	for (i = 0; a != NULL && i < a->nconfig; i++)
		add(&v, "home-dir %s\n", a->config[i]);
	if (v.failed) {
		snprintf(err, errlen, "out of memory");
		launch_strv_free(&v);
		return -1;
	}
	for (i = 0; i < v.n; i++)
		len += strlen(v.s[i]);
	if ((text = malloc(len + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		launch_strv_free(&v);
		return -1;
	}
	for (i = 0, w = text; i < v.n; i++) {
		size_t l = strlen(v.s[i]);

		memcpy(w, v.s[i], l);
		w += l;
	}
	*w = '\0';
	launch_strv_free(&v);
	*out = text;
	return 0;
}

/* The DNS forwarder a network mode gives the container, if it is known. */
const char *
launch_network_dns(const char *network)
{
	return strncmp(network, "slirp4netns", 11) == 0 ? LAUNCH_SLIRP_DNS :
	    NULL;
}

/*
 * The cgroup limits the options ask for that this host will not apply:
 * rootless podman on cgroups v1 ignores them all and only warns.
 */
int
launch_limits_unheld(const struct launch_opts *o,
    const struct launch_host_facts *f, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!f->rootless || f->cgroups_version == 2)
		return 0;
	snprintf(buf, len, "%s%s%s", o->memory > 0 ? " memory" : "",
	    o->cpus_milli > 0 ? " cpus" : "", o->pids > 0 ? " pids" : "");
	return buf[0] != '\0';
}


static int
selinux_enforcing(void)
{
	return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

/*
 * The mounts of a run: the env file and the plan, the host's CAs, the
 * direct mode's record folder, the workspace and what goes over and
 * beside it, the working folder, the home.
 */
static void
volumes(const struct launch_run *r, struct launch_strv *v)
{
	const struct launch_opts	*o = r->opts;
	size_t				 k;

	/*
	 * Not podman's --env-file: that would keep every value in the
	 * container's configuration for `podman inspect`.  The enforcer
	 * reads the file (root only) and sets the command's environment.
	 */
	add(v, "--volume=%s:%s:ro%s", r->envfile, LAUNCH_ENV_PATH,
	    selinux_enforcing() ? ",z" : "");
	add(v, "--volume=%s:%s:ro%s", r->planfile, LAUNCH_PLAN_PATH,
	    selinux_enforcing() ? ",z" : "");
	/* the enforcer adds them to the system bundle (docs/launcher.md) */
	if (r->hostca != NULL)
		add(v, "--volume=%s:%s:ro%s", r->hostca,
		    LAUNCH_HOST_CA_IN_IMAGE, selinux_enforcing() ? ",z" : "");
	/*
	 * --record, direct mode: the recorder writes the capture into the
	 * session's record folder, which the command cannot enter (its
	 * owner is the container's root, mode 0700: docs/record.md).  A
	 * plan that records without the folder would stop at 77 inside:
	 * refused here.
	 */
	if (o->record && o->net == LAUNCH_NET_DIRECT) {
		if (r->recorddir == NULL)
			v->failed = 1;
		add(v, "--volume=%s:%s:rw%s", r->recorddir, LAUNCH_RECORD_DIR,
		    selinux_enforcing() ? ",z" : "");
	}
	add(v, "--volume=%s:%s:%s%s", r->workspace_src != NULL ?
	    r->workspace_src : o->val[LO_WORKSPACE], o->val[LO_WORKSPACE],
	    r->workspace_ro ? "ro" : "rw", selinux_enforcing() ? ",z" : "");
	/*
	 * What the session adds over the workspace and beside it, parents
	 * first (the git guard's private folders and the host's folders
	 * over them, the protected paths, --mount): gitguard.h, protect.h.
	 */
	for (k = 0; r->mounts != NULL && k < r->mounts->n; k++)
		add(v, "--volume=%s:%s:%s%s", r->mounts->v[k].src,
		    r->mounts->v[k].dst, r->mounts->v[k].ro ? "ro" : "rw",
		    selinux_enforcing() ? ",z" : "");
	add(v, "--workdir=%s", o->val[LO_WORKSPACE]);
	/* quarantine: an anonymous volume, which --rm removes */
	if (r->home_ephemeral)
		add(v, "--volume=%s", LAUNCH_HOME);
	else
		add(v, "--volume=%s:%s", r->home_volume != NULL ?
		    r->home_volume : o->val[LO_HOME_VOLUME], LAUNCH_HOME);
}

/*
 * Who the sandbox user and the container's root are on the host (ids.h);
 * nothing for a preview that knows no mapping.
 */
static void
add_ids(struct launch_strv *v, const struct launch_ids *ids)
{
	if (ids != NULL && ids->mode == LAUNCH_IDS_KEEPID)
		add(v, "--userns=keep-id:uid=%u,gid=%u", LAUNCH_SANDBOX_ID,
		    LAUNCH_SANDBOX_ID);
	else if (ids != NULL && ids->mode == LAUNCH_IDS_MAPPED) {
		add(v, "--uidmap=0:%u:%u", (unsigned)ids->uid_base, ids->count);
		add(v, "--gidmap=0:%u:%u", (unsigned)ids->gid_base, ids->count);
	}
}

/*
 * The enforcer: the host's binary, read-only at a path of aisb's, as
 * the entrypoint (docs/enforcer.md, "Nothing of the image").  What the
 * image's configuration would otherwise decide about its process is
 * said here: the variables a static glibc reads before main are
 * dropped, no health check of the image runs beside it (podman would
 * run it as the container's root with its capabilities), and stop
 * means SIGTERM whatever the image's STOPSIGNAL.  Without the binary,
 * no argv.
 */
static void
add_enforcer(struct launch_strv *v, const struct launch_run *r)
{
	size_t	 i;

	/*
	 * --mount's list cannot quote a comma.  Not relabelled under
	 * SELinux, unlike the session's own files: the binary is the
	 * host's (an installed one is every session's), not the session's.
	 */
	if (r->enforcer == NULL || r->enforcer[0] == '\0' ||
	    strchr(r->enforcer, ',') != NULL)
		v->failed = 1;
	add(v, "--mount=type=bind,src=%s,dst=%s,ro=true", r->enforcer,
	    LAUNCH_ENFORCER_IN_CONTAINER);
	for (i = 0; launch_enforcer_unsetenv[i] != NULL; i++)
		add(v, "--unsetenv=%s", launch_enforcer_unsetenv[i]);
	add(v, "--no-healthcheck");
	add(v, "--stop-signal=SIGTERM");
	add(v, "--entrypoint=%s", LAUNCH_ENFORCER_IN_CONTAINER);
}

/*
 * `podman run` for one session.  Secrets never appear here: values reach
 * the container through the env file only.  -1 without a seccomp profile
 * or an enforcer.
 */
int
launch_podman_argv(const struct launch_run *r, struct launch_strv *v)
{
	const struct launch_opts	*o = r->opts;
	unsigned long			 n;
	int				 i;

	memset(v, 0, sizeof(*v));
	add(v, "%s", r->podman);
	if (r->runtime != NULL && r->runtime[0] != '\0')
		add(v, "--runtime=%s", r->runtime);
	add(v, "run");
	if (!o->keep)
		add(v, "--rm");
	/*
	 * The image was ensured just before (image.c), and may have been
	 * found from the cached listing (cache.h): should it be gone since,
	 * podman fails instead of asking a registry for that name.
	 */
	add(v, "--pull=never");
	add(v, "--name=aisb-%s", r->session_id);
	add(v, "--label=io.aisb.managed=1");
	add(v, "--label=io.aisb.kind=session");
	add(v, "--label=io.aisb.session=%s", r->session_id);
	add(v, "--hostname=aisb");
	/* catatonit as PID 1 reaps what the command orphans */
	add(v, "--init");
	/*
	 * The enforcer starts as the container's root, with the
	 * capabilities below: not as whoever the image names (its USER),
	 * nor, under keep-id, as 1000, the command's uid, which could then
	 * signal catatonit and the enforcer, and which direct mode's per-uid
	 * rule could not tell from the refresher.  The container's root is
	 * a subordinate id (ids.h).
	 */
	add(v, "--user=0:0");
	/*
	 * The enforcer needs these, and the command gets none of them.  It
	 * stays as the command's parent with KILL alone, to pass stop
	 * signals on to the command's process group (another uid); in
	 * direct mode that parent, the refresher, keeps NET_ADMIN too, and
	 * binds the DNS stub to port 53 before it drops (docs/enforcer.md).
	 */
	add(v, "--cap-drop=all");
	add(v, "--cap-add=NET_ADMIN,SETUID,SETGID,SETPCAP,KILL%s",
	    o->net == LAUNCH_NET_DIRECT ? ",NET_BIND_SERVICE" : "");
	add(v, "--security-opt=no-new-privileges");
	add_ids(v, r->ids);
	/* aisb's own profile (docs/seccomp.md); never podman's, never none */
	if (r->seccomp == NULL || r->seccomp[0] == '\0')
		v->failed = 1;
	add(v, "--security-opt=seccomp=%s", r->seccomp);
	if (o->net == LAUNCH_NET_NONE)
		add(v, "--network=none");
	else
		add(v, "--network=%s", r->network);
	if (o->net == LAUNCH_NET_DIRECT) {
		/* the command resolves through the enforcer's stub only */
		add(v, "--dns=127.0.0.1");
		add(v, "--dns-search=.");
	}
	/*
	 * Gate mode with transparent capture: the nat rule takes every
	 * query to port 53 to the relay, whatever the address; 127.0.0.1
	 * and no search domain make that one address and one query a name.
	 */
	if (o->net == LAUNCH_NET_GATE && o->transparent) {
		add(v, "--dns=127.0.0.1");
		add(v, "--dns-search=.");
	}
	volumes(r, v);
	/*
	 * Where the host cannot apply them (rootless on cgroups v1), podman
	 * would only warn; the session reports that itself, once.
	 */
	if (o->memory > 0 && !r->no_limits)
		add(v, "--memory=%llu", (unsigned long long)o->memory);
	if (o->cpus_milli > 0 && !r->no_limits)
		add(v, "--cpus=%u.%03u", o->cpus_milli / 1000,
		    o->cpus_milli % 1000);
	if (o->pids > 0 && !r->no_limits)
		add(v, "--pids-limit=%u", o->pids);
	/*
	 * ulimits inside the host's hard limits, or podman refuses to start.
	 * A session passes what its host check chose (which a runtime
	 * probe may have lowered); a dry run the same choice, made here.
	 */
	if ((n = r->nofile > 0 ? r->nofile : launch_ulimit(RLIMIT_NOFILE)) > 0)
		add(v, "--ulimit=nofile=%lu:%lu", n, n);
	if ((n = r->nproc > 0 ? r->nproc : launch_ulimit(RLIMIT_NPROC)) > 0)
		add(v, "--ulimit=nproc=%lu:%lu", n, n);
	/*
	 * A backstop for --timeout that holds when aisb and its watcher are
	 * both gone: conmon kills the container (docs/launcher.md).
	 */
	if (o->timeout > 0)
		add(v, "--timeout=%u", o->timeout + LAUNCH_BACKSTOP_S);
	if (r->interactive)
		add(v, "--interactive");
	if (r->tty)
		add(v, "--tty");
	add_enforcer(v, r);
	add(v, "%s", r->image);
	add(v, "--plan");
	add(v, "%s", LAUNCH_PLAN_PATH);
	add(v, "--env-file");
	add(v, "%s", LAUNCH_ENV_PATH);
	add(v, "--uid");
	add(v, "%u", LAUNCH_SANDBOX_ID);
	add(v, "--gid");
	add(v, "%u", LAUNCH_SANDBOX_ID);
	add(v, "--");
	for (i = 0; i < o->ncmd; i++)
		add(v, "%s", o->cmd[i]);
	if (v->failed) {
		launch_strv_free(v);
		return -1;
	}
	return 0;
}

void
launch_run_build(struct launch_run *r, const struct launch_opts *o,
    const struct launch_run_src *src)
{
	const struct launch_host_facts	*f = src->facts;
	char				 unheld[64];

	memset(r, 0, sizeof(*r));
	r->opts = o;
	r->podman = src->podman;
	r->runtime = src->runtime;
	r->network = f != NULL && f->network[0] != '\0' ? f->network :
	    LAUNCH_SLIRP_NETWORK;
	r->nofile = f != NULL ? f->nofile : 0;	/* 0: launch_ulimit() */
	r->nproc = f != NULL ? f->nproc : 0;
	r->session_id = src->session_id;
	r->image = src->image;
	r->envfile = src->envfile;
	r->planfile = src->planfile;
	r->ids = src->ids;
	/* rootful: the owner's files through the idmapped clone (ids.h) */
	if (src->ids != NULL && src->ids->mode == LAUNCH_IDS_MAPPED)
		r->workspace_src = src->clone;
	else if (o->snapshot)
		r->workspace_src = src->stage;
	r->no_limits = f != NULL && launch_limits_unheld(o, f, unheld,
	    sizeof(unheld));
	r->seccomp = src->seccomp;
	r->enforcer = src->enforcer;
	r->hostca = src->hostca;
	r->recorddir = src->recorddir;
	r->mounts = src->mounts;
	r->workspace_ro = o->readonly;
	r->home_ephemeral = o->quarantine;
	/* stdin reaches the command, piped or not; a terminal if both are */
	r->interactive = src->attached;
	r->tty = src->attached && isatty(STDIN_FILENO) &&
	    isatty(STDOUT_FILENO);
}

/*
 * The podman volume for /home/sandbox, created labelled if missing; the
 * label names the workspace it was made for (aisb clean, sessions show).
 */
int
launch_home_volume_ensure(const char *podman, const char *name,
    const char *workspace, char *err, size_t errlen)
{
	char	*exists[] = { (char *)podman, (char *)"volume", (char *)"exists",
	    (char *)name, NULL };
	char	*create[] = { (char *)podman, (char *)"volume", (char *)"create",
	    (char *)"--label=io.aisb.managed=1", (char *)"--label=io.aisb.kind=home",
	    NULL, (char *)name, NULL };
	char	 out[256], *label;
	int	 rc;

	/* its folder in podman's volume path: no podman run (cache.h) */
	if (launch_cache_volume_known(podman, environ, name))
		return 0;
	if (launch_exec(exists, NULL, 0, NULL, 0, 30000, 0, err, errlen) == 0)
		return 0;
	if (asprintf(&label, "--label=io.aisb.workspace=%s", workspace) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	create[5] = label;
	rc = launch_exec(create, NULL, 0, out, sizeof(out), 30000, 0, err,
	    errlen) != 0 ? -1 : 0;
	free(label);
	return rc;
}
