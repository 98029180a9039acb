/*
 * aisb [flags] [--] COMMAND (aisb run): the options resolved, the checks
 * that refuse a session before anything starts, the policy prepared
 * (session/prepare.c), the previews (--print-policy, --print-plan,
 * --print-containerfile, --dry-run), then the session (session/run.c).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "host/facts.h"
#include "image/agent.h"
#include "image/image.h"
#include "policy.h"
#include "policytools/derive.h"
#include "session/enforcer.h"
#include "session/hostcas.h"
#include "session/ids.h"
#include "session/ask.h"
#include "session/options.h"
#include "session/podman.h"
#include "session/prepare.h"
#include "session/recording.h"
#include "session/run.h"
#include "session/seccomp.h"
#include "session/secrets.h"
#include "session/spec.h"
#include "session/wsmode.h"

extern char **environ;

/* argv as one shell-quoted line (what --dry-run prints; no shell runs it) */
static void
print_argv(FILE *f, char **argv)
{
	for (; *argv != NULL; argv++) {
		const char *a = *argv;

		if (a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")] == '\0' &&
		    a[0] != '\0')
			fprintf(f, "%s", a);
		else {
			fputc('\'', f);
			for (; *a != '\0'; a++)
				if (*a == '\'')
					fputs("'\\''", f);
				else
					fputc(*a, f);
			fputc('\'', f);
		}
		fputc(argv[1] != NULL ? ' ' : '\n', f);
	}
}

/* The env file as a session would write it: names, no secret value. */
static void
print_env(const struct launch_opts *o)
{
	char	 buf[LAUNCH_MAX_VALUE + 32];
	size_t	 i;

	printf("# env file (mode 0600)\n");
	if (o->net == LAUNCH_NET_GATE)
		printf("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lower case)="
		    "http://<session credential>@" LAUNCH_SLIRP_HOST ":<gate "
		    "port>\nNO_PROXY, no_proxy=localhost,127.0.0.1,::1\n");
	/* a placeholder each; the values are read only by a session */
	for (i = 0; i < o->nsecrets; i++)
		printf("%.*s=<placeholder: the gate adds the secret from %s>\n",
		    (int)strcspn(o->secrets[i].text, "="), o->secrets[i].text,
		    strchr(o->secrets[i].text, '=') != NULL ?
		    strchr(o->secrets[i].text, '=') + 1 : "aisb's environment");
	for (i = 0; i < o->nenv; i++) {
		/* a recipe's setenv holds no secret: shown */
		if (o->env[i].src == LAUNCH_SRC_DEFAULT &&
		    strncmp(o->env[i].where, "agent ", 6) == 0) {
			printf("%s (setenv of %s)\n", o->env[i].text,
			    o->env[i].where);
			continue;
		}
		printf("%s\n", launch_env_redacted(o->env[i].text, buf,
		    sizeof(buf)));
	}
}

/*
 * The tag of the image a session would run (launch_agent_image: the
 * same spec and hash, nothing built or pulled) into tag, and how it
 * stands: "built", "not built yet", or why it cannot be known ("" tag).
 */
static const char *
image_tag(const struct launch_opts *o, const struct launch_agent *a,
    char *tag, size_t len)
{
	char	 err[512];
	int	 rc;

	tag[0] = '\0';
	rc = launch_agent_image(o, a, tag, len, err, sizeof(err));
	if (rc == 1)
		return "built";
	if (rc == 0 && tag[0] != '\0')
		return "not built yet: the session builds it";
	return rc == 0 ? "not known until its base is built: aisb image build" :
	    "unknown";
}

/*
 * --dry-run: the env file and podman's argv a session would use, from
 * the same builder (launch_run_build), with placeholders for what only
 * a session makes.  0, or an exit code after a line on stderr.
 */
static int
dry_run(const struct launch_opts *o, const struct launch_agent *a)
{
	char			 tag[LAUNCH_TAG_MAX];
	const char		*state = image_tag(o, a, tag, sizeof(tag));
	struct launch_run_src	 src;
	struct launch_run	 r;
	struct launch_strv	 v;
	struct launch_ids	 ids;
	struct launch_wsmode	 w;
	char			 err[1024], seccomp[PATH_MAX];
	char			 enforcer[PATH_MAX];
	int			 k;

	memset(&src, 0, sizeof(src));
	src.podman = "podman";
	src.runtime = o->val[LO_RUNTIME];
	src.session_id = "<session>";
	src.image = tag[0] != '\0' ? tag : "<image>";
	src.envfile = "<session>/env";
	src.planfile = "<session>/plan";
	src.recorddir = "<session>/" LAUNCH_RECORDING_DIR;
	/* the host's CAs as a session would gather them (hostcas.h) */
	if (o->host_ca) {
		const char	*cadir = getenv(LAUNCH_HOST_CA_DIR_ENV);
		char		*pem = NULL, warn[PATH_MAX + 64];
		size_t		 len, ncerts = 0;

		if (cadir == NULL || cadir[0] != '/')
			cadir = LAUNCH_HOST_CA_DIR;
		if (launch_host_ca_gather(cadir, &pem, &len, &ncerts, warn,
		    sizeof(warn), err, sizeof(err)) == 0 && ncerts > 0)
			src.hostca = "<session>/host-ca.pem";
		free(pem);
	}
	/* the mapping a session would use; nothing is created */
	if (launch_ids_resolve(&ids, geteuid() != 0, o->val[LO_WORKSPACE], 0,
	    err, sizeof(err)) == 0) {
		src.ids = &ids;
		src.clone = "<session>/workspace";
		src.stage = "<session>/stage";
	} else
		printf("# user namespace: %s\n", err);
	if (launch_seccomp_profile(seccomp, sizeof(seccomp), err,
	    sizeof(err)) == -1 || launch_enforcer_locate(enforcer,
	    sizeof(enforcer), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	/* a preview shows what a session would refuse, and goes on */
	if (launch_enforcer_check(enforcer, err, sizeof(err)) == -1)
		printf("# enforcer: a session stops here (77): %s\n", err);
	src.seccomp = seccomp;
	src.enforcer = enforcer;
	/* the git guard's mounts, the protected paths, --mount: planned as
	 * a session would, nothing made (wsmode.h) */
	if ((k = launch_wsmode_prepare(&w, o, src.ids, "<session>",
	    src.ids != NULL && src.ids->mode == LAUNCH_IDS_MAPPED ?
	    src.clone : NULL, 1, err, sizeof(err))) != 0) {
		fprintf(stderr, "aisb: %s\n", err);
		launch_wsmode_free(&w);
		return k;
	}
	src.mounts = &w.mounts;
	launch_run_build(&r, o, &src);
	k = launch_podman_argv(&r, &v);
	launch_wsmode_free(&w);
	if (k == -1)
		return 0;
	print_env(o);
	if (o->learn)
		printf("# learn: the gate runs with --learn: NOTHING IS BLOCKED "
		    "BY THE POLICY (the denied address ranges still are)\n");
	if (o->record)
		printf("# record: <session>/%s/%s, at most %llu bytes, and a "
		    "manifest at the end (docs/record.md)\n",
		    LAUNCH_RECORDING_DIR, LAUNCH_RECORDING_CAPTURE,
		    (unsigned long long)o->record_max);
	printf("# image %s (%s)\n", tag[0] != '\0' ? tag : "<image>", state);
	printf("# podman\n");
	print_argv(stdout, v.s);
	launch_strv_free(&v);
	return 0;
}

/*
 * --print-policy, --print-plan, --print-containerfile and --dry-run, in
 * that order.  0, or an exit code after a line on stderr.
 */
static int
previews(const struct launch_opts *o, const struct policy *p,
    const struct launch_run_agent *ra)
{
	struct launch_image_spec	 spec;
	struct launch_spec_store	 st;
	char				 err[8192], *plan = NULL, *d;
	size_t				 i;
	int				 rc = 0, k;

	if (o->print_config) {
		char	 tag[LAUNCH_TAG_MAX];
		const char *state = image_tag(o, ra->a, tag, sizeof(tag));

		/* (the image option above is the base it is built on) */
		printf("%-15s %s (%s)\n", "sandbox image", tag[0] != '\0' ?
		    tag : "<image>", state);
	}
	if (o->print_policy) {
		/* the canonical form cites nothing: say what the agent added */
		for (i = 0; ra->a != NULL && ra->yaml != NULL &&
		    i < ra->a->nhosts; i++)
			printf("# agent %s: %s:%u (%s)\n", ra->a->name,
			    ra->a->hosts[i].host, ra->a->hosts[i].port,
			    launch_agent_where(ra->set, &ra->a->hosts[i].pos,
			    err, sizeof(err)));
		if ((d = policy_dump(p, NULL)) != NULL)
			fputs(d, stdout);
		free(d);
	}
	if (o->print_plan || o->dry_run) {
		/* the gate's port is known only once it runs */
		if (launch_plan_text(o, p, ra->a, LAUNCH_SLIRP_HOST, 0,
		    LAUNCH_SLIRP_DNS, &plan, err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = EXIT_CONFIG;
		} else
			printf("# plan (the gate's port is chosen when it "
			    "starts)\n%s", plan);
		free(plan);
	}
	if (o->print_containerfile) {
		if (launch_session_spec(o, ra->a, 0, o->val[LO_RUNTIME], &st,
		    &spec, err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = EXIT_CONFIG;
		} else if (launch_image_print_containerfile(&spec,
		    stdout) == -1)
			rc = EXIT_CONFIG;
		launch_spec_store_free(&st);
	}
	if (o->dry_run && (k = dry_run(o, ra->a)) != 0)
		rc = k;
	return rc;
}

/*
 * What refuses a session before anything is read or started: a system
 * folder as the workspace, --learn without a gate of its own, --ask
 * without a gate.  0, or -1
 * after a line on stderr.
 */
static int
refuse(struct launch_opts *o, int preview, int named)
{
	char	 err[1024];

	if ((!preview || o->dry_run) &&
	    launch_workspace_check(o, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return -1;
	}
	if (o->learn && (o->net != LAUNCH_NET_GATE || named)) {
		/* never silently run without what was asked for */
		fprintf(stderr, "aisb: --learn needs a gate of the session's "
		    "own: %s; nothing was started\n", o->net !=
		    LAUNCH_NET_GATE ? "--net none and --net direct have no "
		    "gate to learn through (use --net gate)" : "a shared "
		    "gate (--gate) enforces its policy for every session, and "
		    "learning would open it for all of them (drop --gate)");
		return -1;
	}
	if (o->ask > 0 && o->net != LAUNCH_NET_GATE &&
	    (o->src[LO_ASK] == LAUNCH_SRC_FLAG ||
	    o->src[LO_ASK] == LAUNCH_SRC_ENV)) {
		/* nothing holds a request without a gate (the user config's
		 * ask: applies to the sessions that have one) */
		fprintf(stderr, "aisb: %s needs a gate to hold requests: --net "
		    "none and --net direct have none (use --net gate); nothing "
		    "was started\n", o->where[LO_ASK]);
		return -1;
	}
	if (named && launch_use_named_gate(o) == -1)
		return -1;
	/* a named gate holds requests when it was started so (ask.h) */
	if (named && launch_ask_gate_refuses(o, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s; nothing was started\n", err);
		return -1;
	}
	return 0;
}

/*
 * AISB_TEST_UPSTREAM_CA (secrets.h): a test's hook in the shipped
 * launcher, which widens what the session's gate, or a named gate (gate
 * NULL: the session's), trusts.  It stays (the e2e tests stand a local
 * server for an API with it), but never silent (cmd.h).
 */
void
launch_warn_test_env(const char *gate)
{
	const char	*v = getenv(LAUNCH_TEST_UPSTREAM_CA_ENV);
	char		 who[64];

	if (v == NULL || v[0] == '\0')
		return;
	if (v[0] != '/') {
		fprintf(stderr, "aisb: warning: %s=%s is set: a hook for "
		    "tests; ignored (not an absolute path)\n",
		    LAUNCH_TEST_UPSTREAM_CA_ENV, v);
		return;
	}
	if (gate != NULL)
		snprintf(who, sizeof(who), "named gate %s", gate);
	else
		snprintf(who, sizeof(who), "the session's gate");
	fprintf(stderr, "aisb: warning: %s=%s is set: a hook for tests; %s "
	    "trusts that CA for the upstreams of inspected hosts, beside the "
	    "system's: unset it unless a test set it\n",
	    LAUNCH_TEST_UPSTREAM_CA_ENV, v, who);
}

/*
 * The secrets read on the host (a missing one stops the session before
 * anything starts: 78), then the session.
 */
static int
run_session(const struct launch_opts *o, struct policy *p,
    const struct launch_run_agent *ra)
{
	struct launch_secrets	*ss;
	char			 err[2048];
	int			 rc;

	if ((ss = calloc(1, sizeof(*ss))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return EXIT_CONFIG;
	}
	if (launch_secrets_read(ss, o, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		free(ss);
		return EXIT_CONFIG;
	}
	rc = launch_session_run(o, p, ra, ss);
	launch_secrets_free(ss);
	free(ss);
	return rc;
}

int
launch_cmd_run(int argc, char **argv)
{
	struct launch_opts	 o;
	struct policy		*p = NULL;
	struct launch_run_agent	 ra;
	char			 err[8192];
	int			 rc, preview, named, gated;

	memset(&ra, 0, sizeof(ra));
	if (launch_opts_resolve(&o, argc, argv, environ, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.help) {
		launch_opts_free(&o);
		return launch_cli_usage(NULL, stdout);
	}
	if (o.ncmd == 0 && !o.print_config && !o.print_policy &&
	    !o.print_plan && !o.print_containerfile) {
		fprintf(stderr, "aisb: no command to run: aisb [flags] [--] "
		    "COMMAND [ARGS...]\n");
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	preview = o.print_config || o.print_policy || o.print_plan ||
	    o.print_containerfile || o.dry_run;
	named = o.val[LO_GATE] != NULL && o.val[LO_GATE][0] != '\0';
	gated = named && o.net == LAUNCH_NET_GATE;
	rc = EXIT_CONFIG;
	if (refuse(&o, preview, named) == -1)
		goto out;
	if (o.print_config)
		launch_opts_print(&o, stdout);
	if (launch_pick_agent(&o, &ra) == -1 ||
	    (p = launch_load_policy(&o)) == NULL)
		goto out;
	/* a dry run is the session's preview: it says the same */
	if ((!preview || o.dry_run) && !o.quiet) {
		launch_say_default_policy(&o, p);
		launch_say_image(&o);
	}
	if (ra.a != NULL && launch_apply_agent(&o, &ra, gated, !preview ||
	    o.dry_run, &p) == -1)
		goto out;
	/* --allow-from-lockfile (lockfile.h): on top of the agent's merge */
	if (o.allow_from_lockfile && launch_lockfile_apply(o.val[LO_WORKSPACE],
	    gated ? o.val[LO_GATE] : NULL, &p, &ra.yaml, o.print_policy ?
	    stdout : NULL) == -1)
		goto out;
	/* a secret that would reach nothing, or the sandbox: refused */
	launch_secrets_unused(&o, p, o.quiet ? NULL : stderr);
	if (launch_secrets_usable(&o, p, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		goto out;
	}
	/* a named gate's was said by gate up, and this session's is none */
	if ((!preview || o.dry_run) && !gated)
		launch_warn_test_env(NULL);
	rc = previews(&o, p, &ra);
	if (!preview && o.record && gated) {
		/* never silently run without what was asked for */
		fprintf(stderr, "aisb: --record (%s: %s) with --gate %s: a "
		    "shared gate's traffic is not one session's, and it does "
		    "not record; drop --gate to record with a gate of the "
		    "session's own; nothing was started\n",
		    launch_src_str(o.src[LO_RECORD]), o.where[LO_RECORD],
		    o.val[LO_GATE]);
		rc = EXIT_CONFIG;
	} else if (!preview)
		rc = run_session(&o, p, &ra);
out:
	policy_free(p);
	launch_run_agent_free(&ra);
	launch_opts_free(&o);
	return rc;
}
