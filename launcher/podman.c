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

#include "podman.h"
#include "policy.h"

#define LAUNCH_PLAN_PATH	"/run/aisb/plan"
#define LAUNCH_ENFORCER		"/usr/local/bin/aisb-enforce"
#define LAUNCH_HOME		"/home/sandbox"
#define LAUNCH_UID		"1000"

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

/*
 * The plan aisb-enforce reads (docs/enforcer.md).  Gate mode: only the
 * gate.  Direct mode: the policy's exact names with their ports; other
 * rules cannot be turned into addresses and are left out, which narrows.
 */
int
launch_plan_text(const struct launch_opts *o, const struct policy *p,
    const char *gate_addr, uint16_t gate_port, char **out, char *err,
    size_t errlen)
{
	struct launch_strv	 v = { 0 };
	size_t			 i, k, left_out = 0, len = 0;
	char			*text, *w;

	add(&v, "aisb-plan 1\n");
	switch (o->net) {
	case LAUNCH_NET_GATE:
		add(&v, "mode gate\ngate %s %u\n", gate_addr, gate_port);
		break;
	case LAUNCH_NET_NONE:
		add(&v, "mode none\n");
		break;
	case LAUNCH_NET_DIRECT:
		add(&v, "mode direct\ndns-min-ttl %u\ndns-max-ttl %u\n",
		    policy_dns_min_ttl(p) ? policy_dns_min_ttl(p) : 1,
		    policy_dns_max_ttl(p));
		for (i = 0; i < policy_dns_server_count(p); i++) {
			const char *s = policy_dns_server_at(p, i);
			const char *colon = strrchr(s, ':');

			if (s[0] == '[')
				add(&v, "resolver %.*s %s\n",
				    (int)(colon - s - 2), s + 1, colon + 1);
			else
				add(&v, "resolver %.*s %s\n",
				    (int)(colon - s), s, colon + 1);
		}
		for (i = 0; i < policy_rule_count(p); i++) {
			struct policy_rule_info	 r;
			char			 ports[128] = "";
			size_t			 off = 0, np = 0;

			policy_rule_info(policy_rule_at(p, i), &r);
			if (r.action != POLICY_ALLOW)
				continue;
			if (r.kind != POLICY_RULE_EXACT) {
				left_out++;
				continue;
			}
			for (k = 0; k < r.nports && np < 16; k++) {
				unsigned port;

				for (port = r.ports[k].lo; port <= r.ports[k].hi &&
				    np < 16; port++, np++)
					off += (size_t)snprintf(ports + off,
					    sizeof(ports) - off, "%s%u",
					    off ? "," : "", port);
			}
			add(&v, "allow-name %s %s\n", r.pattern, ports);
		}
		break;
	}
	if (left_out > 0)
		fprintf(stderr, "aisb: --net direct: %zu wildcard, regex or "
		    "cidr rule(s) cannot be pinned and are left out\n",
		    left_out);
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

static int
selinux_enforcing(void)
{
	return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

/*
 * `podman run` for one session.  Secrets never appear here: values reach
 * the container through the env file only.
 */
int
launch_podman_argv(const struct launch_run *r, struct launch_strv *v)
{
	const struct launch_opts	*o = r->opts;
	struct rlimit			 rl;
	int				 i;

	memset(v, 0, sizeof(*v));
	add(v, "%s", r->podman);
	if (r->runtime != NULL && r->runtime[0] != '\0')
		add(v, "--runtime=%s", r->runtime);
	add(v, "run");
	if (!o->keep)
		add(v, "--rm");
	add(v, "--name=aisb-%s", r->session_id);
	add(v, "--label=io.aisb.managed=1");
	add(v, "--label=io.aisb.kind=session");
	add(v, "--label=io.aisb.session=%s", r->session_id);
	add(v, "--hostname=aisb");
	/* catatonit as PID 1 reaps what the command orphans */
	add(v, "--init");
	/*
	 * The enforcer needs these, and drops every one before the exec; in
	 * direct mode its refresher keeps NET_ADMIN and KILL (docs/enforcer.md).
	 */
	add(v, "--cap-drop=all");
	add(v, "--cap-add=NET_ADMIN,SETUID,SETGID,SETPCAP%s",
	    o->net == LAUNCH_NET_DIRECT ? ",KILL" : "");
	add(v, "--security-opt=no-new-privileges");
	if (o->net == LAUNCH_NET_NONE)
		add(v, "--network=none");
	else
		add(v, "--network=%s", r->network);
	add(v, "--env-file=%s", r->envfile);
	add(v, "--volume=%s:%s:ro%s", r->planfile, LAUNCH_PLAN_PATH,
	    selinux_enforcing() ? ",z" : "");
	add(v, "--volume=%s:%s:rw%s", o->val[LO_WORKSPACE],
	    o->val[LO_WORKSPACE], selinux_enforcing() ? ",z" : "");
	add(v, "--workdir=%s", o->val[LO_WORKSPACE]);
	add(v, "--volume=%s:%s", o->val[LO_HOME_VOLUME], LAUNCH_HOME);
	if (o->memory > 0)
		add(v, "--memory=%llu", (unsigned long long)o->memory);
	if (o->cpus_milli > 0)
		add(v, "--cpus=%u.%03u", o->cpus_milli / 1000,
		    o->cpus_milli % 1000);
	if (o->pids > 0)
		add(v, "--pids-limit=%u", o->pids);
	/* ulimits inside the host's hard limits, or podman refuses to start */
	if (r->nofile > 0 || getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		unsigned long n = r->nofile > 0 ? r->nofile :
		    rl.rlim_max < 65536 ? (unsigned long)rl.rlim_max : 65536;

		add(v, "--ulimit=nofile=%lu:%lu", n, n);
	}
	if (r->nproc > 0 || getrlimit(RLIMIT_NPROC, &rl) == 0) {
		unsigned long n = r->nproc > 0 ? r->nproc :
		    rl.rlim_max < 65536 ? (unsigned long)rl.rlim_max : 65536;

		add(v, "--ulimit=nproc=%lu:%lu", n, n);
	}
	if (r->interactive)
		add(v, "--interactive");
	if (r->tty)
		add(v, "--tty");
	add(v, "--entrypoint=%s", LAUNCH_ENFORCER);
	add(v, "%s", r->image);
	add(v, "--plan");
	add(v, "%s", LAUNCH_PLAN_PATH);
	add(v, "--uid");
	add(v, "%s", LAUNCH_UID);
	add(v, "--gid");
	add(v, "%s", LAUNCH_UID);
	add(v, "--");
	for (i = 0; i < o->ncmd; i++)
		add(v, "%s", o->cmd[i]);
	if (v->failed) {
		launch_strv_free(v);
		return -1;
	}
	return 0;
}
