/*
 * aisb [flags] [--] COMMAND: option resolution, previews, and the session:
 * policy -> gate -> image -> container, torn down in reverse whatever
 * happens, the command's exit status returned.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "exitcode.h"
#include "image/agent.h"
#include "host/cache.h"
#include "cmd/cli.h"
#include "image/store.h"
#include "policytools/denials.h"
#include "policytools/derive.h"
#include "session/gate.h"
#include "session/gates.h"
#include "session/hostca.h"
#include "session/ids.h"
#include "host/facts.h"
#include "image/image.h"
#include "policytools/lockfile.h"
#include "session/options.h"
#include "session/podman.h"
#include "policy.h"
#include "host/proc.h"
#include "session/record.h"
#include "session/seccomp.h"
#include "session/folder.h"
#include "session/snapshot.h"
#include "session/spec.h"
#include "policytools/suggest.h"
#include "image/tools.h"
#include "session/watch.h"


extern char **environ;

static struct policy *
load_policy(const struct launch_opts *o)
{
	struct policy_errors	*errs;
	struct policy		*p = NULL;
	char			*out;

	if ((errs = calloc(1, sizeof(*errs))) == NULL ||
	    (out = malloc(64 * 1024)) == NULL) {
		free(errs);
		fprintf(stderr, "aisb: out of memory\n");
		return NULL;
	}
	if (policy_load_file(o->val[LO_POLICY], &p, errs) == -1) {
		policy_errors_format(errs, out, 64 * 1024);
		fprintf(stderr, "%s(policy from %s: %s)\n", out,
		    launch_src_str(o->src[LO_POLICY]), o->where[LO_POLICY]);
		if (o->src[LO_POLICY] == LAUNCH_SRC_DEFAULT &&
		    access(o->val[LO_POLICY], F_OK) != 0)
			fprintf(stderr, "aisb: no policy: pass --policy FILE, "
			    "write %s, or run make install for the shipped "
			    "default\n", o->user_policy);
	}
	free(out);
	free(errs);
	return p;
}

/*
 * A session under a policy nobody named starts by saying so, and how to
 * write one's own: otherwise the shipped default decides in silence.
 */
static void
say_default_policy(const struct launch_opts *o, const struct policy *p)
{
	if (o->policy_origin != LAUNCH_POLICY_BUILT &&
	    o->policy_origin != LAUNCH_POLICY_INSTALLED)
		return;
	fprintf(stderr, "aisb: policy: the shipped default, %s (%s copy, "
	    "sha256:%.12s)\n"
	    "aisb: to write your own: copy it to %s and edit it "
	    "(docs/policy.md), or pass --policy FILE\n", o->val[LO_POLICY],
	    o->policy_origin == LAUNCH_POLICY_BUILT ? "build tree" :
	    "installed", policy_sha256(p), o->user_policy);
}

/*
 * --gate NAME: the session's policy is the one that gate enforces.  A
 * policy chosen anywhere but the defaults must be that very file.
 */
static int
use_named_gate(struct launch_opts *o)
{
	char	 gpath[PATH_MAX], mine[PATH_MAX], err[512], *copy;

	if (o->net != LAUNCH_NET_GATE) {
		fprintf(stderr, "aisb: --gate %s (%s: %s) needs --net gate; "
		    "--net is %s (%s: %s)\n", o->val[LO_GATE],
		    launch_src_str(o->src[LO_GATE]), o->where[LO_GATE],
		    o->val[LO_NET], launch_src_str(o->src[LO_NET]),
		    o->where[LO_NET]);
		return -1;
	}
	if (launch_gate_policy(o->val[LO_GATE], gpath, sizeof(gpath), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: --gate (%s: %s): %s\n",
		    launch_src_str(o->src[LO_GATE]), o->where[LO_GATE], err);
		return -1;
	}
	if (o->src[LO_POLICY] != LAUNCH_SRC_DEFAULT &&
	    (realpath(o->val[LO_POLICY], mine) == NULL ||
	    strcmp(mine, gpath) != 0)) {
		fprintf(stderr, "aisb: the policy %s (%s: %s) is not the one "
		    "gate %s enforces (%s); drop it, or start a gate with it: "
		    "aisb gate up NAME --policy %s\n", o->val[LO_POLICY],
		    launch_src_str(o->src[LO_POLICY]), o->where[LO_POLICY],
		    o->val[LO_GATE], gpath, o->val[LO_POLICY]);
		return -1;
	}
	if ((copy = strdup(gpath)) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	free(o->val[LO_POLICY]);
	o->val[LO_POLICY] = copy;
	snprintf(o->where[LO_POLICY], sizeof(o->where[LO_POLICY]), "gate %s",
	    o->val[LO_GATE]);
	return 0;
}

/* The recipe a session uses, and the policy it adds its hosts to. */
struct run_agent {
	struct launch_agents		*set;	/* NULL: no agent */
	const struct launch_agent	*a;
	char				*yaml;	/* the merged policy; NULL:
						   a named gate's, unchanged */
};

static void
run_agent_free(struct run_agent *ra)
{
	free(ra->yaml);
	free(ra->set);
	memset(ra, 0, sizeof(*ra));
}

/*
 * Which recipe applies: the one --agent (config agent:, AISB_AGENT)
 * names, else the one whose command is the command's argv[0], saying
 * so; agent none: neither.  The recipes are read only when one may
 * apply, and a broken file stops the session (78) even when it would
 * not: a recipe file that does not load is not ignored in silence.
 * 0 (ra->a may be NULL) or -1 after one line on stderr.
 */
static int
pick_agent(const struct launch_opts *o, struct run_agent *ra)
{
	const char	*name = o->val[LO_AGENT];
	char		 err[1400], where[1100];
	size_t		 i;

	memset(ra, 0, sizeof(*ra));
	if ((name != NULL && strcmp(name, "none") == 0) ||
	    (name == NULL && o->ncmd == 0))
		return 0;
	if ((ra->set = malloc(sizeof(*ra->set))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return -1;
	}
	if (launch_agents_load(ra->set, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		run_agent_free(ra);
		return -1;
	}
	if (name != NULL) {
		if ((ra->a = launch_agent_find(ra->set, name)) != NULL)
			return 0;
		fprintf(stderr, "aisb: agent %s (%s: %s) has no recipe; known:",
		    name, launch_src_str(o->src[LO_AGENT]), o->where[LO_AGENT]);
		for (i = 0; i < ra->set->n; i++)
			fprintf(stderr, " %s", ra->set->a[i].name);
		fprintf(stderr, "%s (from %s%s%s); write one in %s, or pass "
		    "--agent none\n", ra->set->n == 0 ? " none" : "",
		    ra->set->files[0][0] != '\0' ? ra->set->files[0] :
		    "no shipped file", ra->set->files[1][0] != '\0' ? " and " :
		    "", ra->set->files[1], "~/.config/aisb/agents.yaml");
		run_agent_free(ra);
		return -1;
	}
	if ((ra->a = launch_agent_by_command(ra->set, o->cmd[0])) == NULL) {
		run_agent_free(ra);
		return 0;
	}
	/*
	 * Said even with --quiet: the recipe widens the policy, and nobody
	 * asked for it by name.
	 */
	fprintf(stderr, "aisb: agent %s: its recipe (%s) applies, picked by "
	    "the command's name; --agent none runs without it\n",
	    ra->a->name, launch_agent_where(ra->set, &ra->a->pos, where,
	    sizeof(where)));
	return 0;
}

/* 1 when an --env entry (NAME, NAME=VALUE, NAME?) names name. */
static int
env_named(const struct launch_opts *o, const char *name)
{
	size_t	 k, n, len = strlen(name);

	for (k = 0; k < o->nenv; k++) {
		n = strcspn(o->env[k].text, "=?");
		if (n == len && strncmp(o->env[k].text, name, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * The recipe in the session: its hosts allowed (merged into *pp, or
 * checked against a named gate's policy, which a session never widens),
 * its setenv ahead of the user's --env (which wins for the same name),
 * and a hint when none of its credential variables is passed.  0 or -1
 * after a line on stderr.
 */
static int
apply_agent(struct launch_opts *o, struct run_agent *ra, int named,
    int hint, struct policy **pp)
{
	const struct launch_agent	*a = ra->a;
	struct policy_decision		 d;
	struct launch_item		*l;
	struct policy			*merged;
	char				 err[1024], buf[2048], name[1200];
	size_t				 i, k, n, add = 0, passed = 0;

	if (named) {
		if (launch_agent_missing(a, *pp, buf, sizeof(buf)) > 0) {
			fprintf(stderr, "aisb: agent %s needs %s, which the "
			    "policy of gate %s (%s) does not allow, and a "
			    "session does not widen a shared gate's policy: add "
			    "them to that file as allow rules (the gate reloads "
			    "it when a session attaches), or run without "
			    "--gate\n", a->name, buf, o->val[LO_GATE],
			    o->val[LO_POLICY]);
			return -1;
		}
	} else {
		snprintf(name, sizeof(name), "%s + agent %s",
		    o->val[LO_POLICY], a->name);
		if (launch_agent_policy(ra->set, a, *pp, name, &ra->yaml,
		    &merged, err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			return -1;
		}
		/*
		 * The user's deny rules win: say which of its hosts lose,
		 * citing the rule where the user wrote it (the base).
		 */
		for (i = 0; i < a->nhosts && !o->quiet; i++) {
			if (a->hosts[i].host[0] == '*')
				continue;
			policy_decide_name(*pp, a->hosts[i].host,
			    strlen(a->hosts[i].host), a->hosts[i].port, &d);
			if (d.verdict == POLICY_DENY &&
			    d.reason == POLICY_R_DENY_RULE && d.rule != NULL)
				fprintf(stderr, "aisb: agent %s: %s:%u stays "
				    "denied by %s\n", a->name, a->hosts[i].host,
				    a->hosts[i].port, policy_rule_describe(d.rule,
				    buf, sizeof(buf)));
		}
		policy_free(*pp);
		*pp = merged;
	}

	/* setenv: before the user's entries, skipped where the user names it */
	for (i = 0; i < a->nsetenv; i++)
		if (!env_named(o, a->setenv[i].name))
			add++;
	if (add > 0) {
		if (o->nenv + add > LAUNCH_MAX_LIST ||
		    (l = calloc(o->nenv + add, sizeof(*l))) == NULL) {
			fprintf(stderr, "aisb: agent %s: too many variables\n",
			    a->name);
			return -1;
		}
		for (i = 0, n = 0; i < a->nsetenv; i++) {
			if (env_named(o, a->setenv[i].name))
				continue;
			if (asprintf(&l[n].text, "%s=%s", a->setenv[i].name,
			    a->setenv[i].value) == -1) {
				while (n > 0)
					free(l[--n].text);
				free(l);
				fprintf(stderr, "aisb: out of memory\n");
				return -1;
			}
			l[n].src = LAUNCH_SRC_DEFAULT;
			snprintf(l[n].where, sizeof(l[n].where), "agent %s",
			    a->name);
			n++;
		}
		for (k = 0; k < o->nenv; k++)
			l[n++] = o->env[k];
		free(o->env);
		o->env = l;
		o->nenv = n;
	}

	/* credentials: only what the user passes; a hint when none is */
	for (i = 0; i < a->nenv; i++)
		passed += (size_t)env_named(o, a->env[i]);
	if (hint && a->nenv > 0 && passed == 0 && !o->quiet) {
		buf[0] = '\0';
		for (i = 0; i < a->nenv; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			    "%s%s", i ? ", " : "", a->env[i]);
		fprintf(stderr, "aisb: agent %s reads its credentials from %s; "
		    "none is passed: add --env NAME (or env: [NAME] in %s) to "
		    "pass one, or log in inside%s%s%s\n", a->name, buf,
		    o->user_config, a->nconfig > 0 ? " (kept in ~/" : "",
		    a->nconfig > 0 ? a->config[0] : "", a->nconfig > 0 ?
		    " of the home volume)" : "");
	}
	return 0;
}

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

/*
 * The podman volume for /home/sandbox, created labelled if missing; the
 * label names the workspace it was made for (aisb clean, sessions show).
 */
static int
ensure_home_volume(const char *podman, const char *name,
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

/* Milliseconds on the monotonic clock. */
static int64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * sig to the container's init, which passes it to the enforcer.  Through
 * podman kill, not to podman run: rootless podman runs as two processes
 * (the second in the user namespace), and a signal to the first ended
 * the session with status 0 whatever the container's.  Before the
 * container runs, podman kill fails: podman run's own signal proxy gets
 * it then.
 */
static void
pass_on(const char *podman, const char *name, pid_t run, int sig)
{
	char	 arg[32], err[256];
	char	*argv[] = { (char *)podman, (char *)"kill", arg, (char *)name,
	    NULL };

	snprintf(arg, sizeof(arg), "--signal=%d", sig);
	if (launch_exec(argv, NULL, 0, NULL, 0, 10000, 0, err,
	    sizeof(err)) != 0)
		kill(run, sig);
}

/*
 * Runs podman and waits, watching the gate and the timeout.  Returns the
 * exit code for aisb.
 *
 * SIGINT, SIGTERM and SIGHUP sent to aisb are passed to the container
 * (pass_on), where the enforcer passes them to the command's process
 * group (docs/enforcer.md).  If podman has not exited
 * LAUNCH_STOP_GRACE_S seconds after the first of them, the container is
 * killed (podman exits 137 then).
 *
 * Each signal must reach the command once.  Without a terminal on stdin,
 * podman runs in a process group of its own, so that a signal to aisb's
 * group (timeout(1), a CI runner, a supervisor) reaches the container
 * only through aisb, not through podman's signal proxy as well.  With one, podman must stay in aisb's group, the
 * terminal's foreground, to read it; what the terminal sends (SI_KERNEL:
 * Ctrl-C without --tty, a hangup) then reaches podman directly, and aisb
 * does not pass it on a second time.
 */
static int
supervise(char **argv, struct launch_gate *gate, const char *podman,
    const char *name, unsigned timeout)
{
	sigset_t	 set, old;
	siginfo_t	 si;
	struct timespec	 ts;
	int64_t		 deadline = timeout ? mono_ms() + timeout * 1000LL : 0;
	int64_t		 stop_at = 0, now, wait_ms;
	int		 status, code = 1, sig, own_group;
	pid_t		 pid;
	char		 kerr[256];
	char		*killv[] = { (char *)podman, (char *)"kill", (char *)name,
	    NULL };

	own_group = !isatty(STDIN_FILENO);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &old) == -1) {
		perror("aisb: sigprocmask");
		return 1;
	}
	if ((pid = launch_spawn_fg(argv, own_group, &old)) == -1) {
		perror("aisb: fork");
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	for (;;) {
		now = mono_ms();
		wait_ms = 1000;
		if (stop_at != 0 && stop_at - now < wait_ms)
			wait_ms = stop_at - now > 0 ? stop_at - now : 0;
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (wait_ms % 1000) * 1000000;
		sig = sigtimedwait(&set, &si, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			if (own_group || si.si_code != SI_KERNEL)
				pass_on(podman, name, pid, sig);
			if (stop_at == 0)
				stop_at = mono_ms() +
				    LAUNCH_STOP_GRACE_S * 1000LL;
			continue;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			code = launch_exit_code(status);
			break;
		}
		if (gate->pid > 0 && (gate->shared ?
		    !launch_proc_alive(gate->pid, gate->start) :
		    waitpid(gate->pid, &status, WNOHANG) == gate->pid)) {
			gate->pid = -1;
			fprintf(stderr, "aisb: the gate died; stopping the "
			    "session\n");
			(void)launch_exec(killv, NULL, 0, NULL, 0, 30000, 0,
			    kerr, sizeof(kerr));
			launch_wait(pid, &status);
			code = EXIT_ENFORCE;
			break;
		}
		if (stop_at != 0 && mono_ms() >= stop_at) {
			fprintf(stderr, "aisb: the command is still running "
			    "%d s after the stop signal; killing the session\n",
			    LAUNCH_STOP_GRACE_S);
			(void)launch_exec(killv, NULL, 0, NULL, 0, 30000, 0,
			    kerr, sizeof(kerr));
			launch_wait(pid, &status);
			code = launch_exit_code(status);
			break;
		}
		if (deadline != 0 && mono_ms() >= deadline) {
			fprintf(stderr, "aisb: --timeout %u s reached; killing "
			    "the session\n", timeout);
			(void)launch_exec(killv, NULL, 0, NULL, 0, 30000, 0,
			    kerr, sizeof(kerr));
			launch_wait(pid, &status);
			code = EXIT_TIMEOUT;
			break;
		}
	}
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}

/*
 * Where a session's time went: the host checks and session folder, the
 * gate from its start until ready (its own gate starts while the image
 * phase runs, so the two overlap), the image and home volume, the
 * container from the session files to its exit, and the teardown.  Each
 * phase runs from ph0[k] to ph1[k]; 0 for a phase that did not happen.
 */
enum { PH_HOST, PH_GATE, PH_IMAGE, PH_RUN, PH_END, PH_N };

/* What the session ran on, for its record: image, base, host CAs. */
struct run_image {
	char	tag[LAUNCH_TAG_MAX];
	char	base[LAUNCH_TAG_MAX];
	size_t	host_cas;
};

/* One line: arguments quoted, bytes that could break it escaped. */
static void
record_words(FILE *f, char *const *v, int n)
{
	int	 i;

	for (i = 0; i < n && v[i] != NULL; i++) {
		const unsigned char *a = (const unsigned char *)v[i];

		if (a[0] != '\0' && a[strcspn((const char *)a,
		    " \t\n\r'\"\\")] == '\0') {
			fprintf(f, " %s", (const char *)a);
			continue;
		}
		fputs(" '", f);
		for (; *a != '\0'; a++) {
			if (*a < 0x20 || *a == 0x7f || *a == '\'' || *a == '\\')
				fprintf(f, "\\x%02x", *a);
			else
				fputc(*a, f);
		}
		fputc('\'', f);
	}
}

static void
write_record(const struct launch_session *s, const struct launch_opts *o,
    const struct policy *p, const struct launch_ids *ids,
    const char *unheld, time_t start, int code, const int64_t *ph0,
    const int64_t *ph1, const struct launch_strv *argv,
    const struct run_image *ri, const struct run_agent *ra,
    const struct draft_info *sn)
{
	char	*text = NULL, path[PATH_MAX], err[256];
	size_t	 len = 0;
	FILE	*f;

	if ((f = open_memstream(&text, &len)) == NULL)
		return;
	fprintf(f, "session %s\nstarted %lld\nended %lld\nexit %d\n"
	    "policy %s\npolicy_sha256 %s\ncommand", s->id, (long long)start,
	    (long long)time(NULL), code, o->val[LO_POLICY], policy_sha256(p));
	record_words(f, o->cmd, o->ncmd);
	if (ra->a != NULL) {
		char	 where[1100];

		fprintf(f, "\nagent %s %s%s", ra->a->name,
		    launch_agent_where(ra->set, &ra->a->pos, where,
		    sizeof(where)), ra->yaml != NULL ?
		    " (its hosts merged into policy.yaml here)" : "");
	}
	/* --allow-from-lockfile (lockfile.h): why the policy differs */
	if (o->allow_from_lockfile)
		fprintf(f, "\nallow_from_lockfile %s", ra->yaml != NULL ?
		    "(the lockfiles' hosts merged into policy.yaml here)" :
		    "(checked against the named gate's policy)");
	if (ids->mode == LAUNCH_IDS_KEEPID)
		fprintf(f, "\nidentity keep-id sandbox_uid %u",
		    (unsigned)ids->owner_uid);
	else if (ids->mode == LAUNCH_IDS_MAPPED)
		fprintf(f, "\nidentity mapped sandbox_uid %u owner %u:%u "
		    "range %u-%u", (unsigned)launch_ids_host_uid(ids),
		    (unsigned)ids->owner_uid, (unsigned)ids->owner_gid,
		    (unsigned)ids->uid_base, (unsigned)(ids->uid_base +
		    ids->count - 1));
	if (o->learn)
		fprintf(f, "\nlearn yes (learning mode: nothing was blocked by "
		    "the policy)");
	fprintf(f, "\nimage %s\nbase %s\nhost_cas %zu",
	    ri->tag[0] != '\0' ? ri->tag : "-",
	    ri->base[0] != '\0' ? ri->base : "-", ri->host_cas);
	fprintf(f, "\nhome_volume %s\nlimits_not_applied%s",
	    o->val[LO_HOME_VOLUME], unheld[0] != '\0' ? unheld : " none");
	/*
	 * A snapshot session (workspace_mode among the options below): its
	 * stage, its change set's digest and the outcome when the session
	 * ended (SESSION/snapshot follows apply, discard and recover after
	 * that: snapshot.h).
	 */
	if (sn != NULL && sn->stage[0] != '\0')
		fprintf(f, "\nsnapshot_stage %s entries %llu bytes %llu "
		    "excluded %llu cloned %llu\nsnapshot_changes %llu sha256 "
		    "%s\nsnapshot_outcome %s\nsnapshot_ms stage %lld changes "
		    "%lld", sn->stage, sn->entries, sn->bytes, sn->excluded,
		    sn->cloned, sn->nchanges, sn->digest[0] != '\0' ?
		    sn->digest : "-", sn->outcome[0] != '\0' ? sn->outcome :
		    "none", sn->stage_ms, sn->changes_ms);
	/*
	 * What ran, for tests/bench/startup.sh to derive plain podman from;
	 * no secret is ever in it (launch_podman_argv).  The command after
	 * the enforcer's "--" is the command line above.
	 */
	if (argv->s != NULL) {
		size_t	 n;

		for (n = 0; n < argv->n && strcmp(argv->s[n], "--") != 0; n++)
			;
		fprintf(f, "\npodman");
		record_words(f, argv->s, (int)n);
		if (n < argv->n)
			fprintf(f, " -- (the command)");
	}
	fprintf(f, "\ntimings_ms");
	{
		static const char *const name[PH_N] = { "host", "gate",
		    "image", "run", "teardown" };
		int	 k;

		for (k = PH_HOST; k < PH_N; k++)
			fprintf(f, " %s %lld", name[k], ph0[k] && ph1[k] ?
			    (long long)(ph1[k] - ph0[k]) : 0LL);
	}
	fprintf(f, "\n# options (values of --env are redacted)\n");
	launch_opts_print(o, f);
	fclose(f);
	if (launch_session_write(s, "record", text, len, path, sizeof(path),
	    err, sizeof(err)) == -1)
		fprintf(stderr, "aisb: session record: %s\n", err);
	free(text);
}

/*
 * What the session was denied and the YAML that would allow each, from
 * its audit log (a named gate's lines were copied there at detach).
 */
static void
denial_summary(const struct launch_session *s)
{
	struct launch_denials	*d;
	char			 path[PATH_MAX];

	if (launch_session_path(s, "audit.jsonl", path, sizeof(path)) == -1 ||
	    (d = malloc(sizeof(*d))) == NULL)
		return;
	launch_denials_init(d);
	if (launch_denials_read(d, path) == 0) {
		launch_denials_print(d, stderr, "aisb: ", path);
		launch_denials_print_tools(d, stderr, "aisb: ");
	}
	free(d);
}

/*
 * --record --net direct: SESSION/recording (launch_record_prepare made it),
 * mounted at LAUNCH_RECORD_DIR for the enforcer's recorder (docs/record.md,
 * "Direct mode").  Rootful: given to the container's root (uid_base), so
 * that the command (uid_base + 1000) cannot enter it.  Rootless it stays
 * the user's, who is uid 1000 inside: nothing is recorded where the
 * command could reach, since the enforcer refuses direct mode as the
 * sandbox uid (78, as keep-id starts it today) and a folder the sandbox
 * uid owns or may write (77).  0, or -1 with err.
 */
static int
record_dir(const struct launch_session *s, const struct launch_ids *ids,
    char *path, size_t len, char *err, size_t errlen)
{
	struct stat	 st;

	if (launch_session_path(s, LAUNCH_RECORDING_DIR, path, len) == -1) {
		snprintf(err, errlen, "session record folder: path too long");
		return -1;
	}
	if (mkdir(path, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a folder", path);
		return -1;
	}
	if (ids->mode == LAUNCH_IDS_MAPPED &&
	    chown(path, ids->uid_base, ids->gid_base) == -1) {
		snprintf(err, errlen, "chown of %s: %s", path, strerror(errno));
		return -1;
	}
	if (chmod(path, 0700) == -1) {
		snprintf(err, errlen, "chmod of %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The manifest of a recorded session, and where its files are.  A
 * capture the gate never wrote (it did not start) leaves a manifest of
 * the other files.
 */
static void
say_recording(const struct launch_session *s, const struct launch_opts *o)
{
	char		 err[PATH_MAX + 256], cap[PATH_MAX];
	struct stat	 st;

	if (launch_record_write_manifest(s->dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: --record: no manifest: %s\n", err);
		return;
	}
	if (o->quiet)
		return;
	if (snprintf(cap, sizeof(cap), "%s/%s/%s", s->dir, LAUNCH_RECORDING_DIR,
	    LAUNCH_RECORDING_CAPTURE) >= (int)sizeof(cap) ||
	    lstat(cap, &st) == -1)
		fprintf(stderr, "aisb: --record: no capture was written (see "
		    "%s/gate.log); the manifest covers the other files\n",
		    s->dir);
	else
		fprintf(stderr, "aisb: record: %s (%lld bytes); aisb sessions "
		    "verify %s checks it\n", cap, (long long)st.st_size, s->id);
}

static int
run_session(const struct launch_opts *o, struct policy *p,
    const struct run_agent *ra)
{
	struct launch_session		 s;
	struct launch_gate		 gate = { .pid = -1 };
	struct launch_host_facts	 facts;
	struct launch_image_spec	 spec;
	struct launch_run		 r;
	struct launch_strv		 argv = { 0 };
	struct launch_ids		 ids;
	struct launch_spec_store	 st = { .nown = 0 };
	const char			*gpolicy = o->val[LO_POLICY];
	char				 mpolicy[PATH_MAX];
	char				 err[1024], podman[PATH_MAX];
	char				 wsmount[PATH_MAX], unheld[64];
	char				 token[PATH_MAX], audit[PATH_MAX];
	char				 glog[PATH_MAX], envfile[PATH_MAX];
	char				 planfile[PATH_MAX], image[LAUNCH_TAG_MAX];
	char				*plan = NULL;
	char				 hostca[PATH_MAX] = "";
	char				 recorddir[PATH_MAX] = "";
	struct run_image		 ri = { .host_cas = 0 };
	char				*proxy = NULL, seccomp[PATH_MAX];
	time_t				 start = time(NULL);
	int64_t				 ph0[PH_N] = { mono_ms() };
	int64_t				 ph1[PH_N] = { 0 };
	struct launch_shared		 shared = { .dir = "" };
	int				 code = EXIT_ENFORCE, mounted = 0;
	int				 watchfd = -1, recording = 0;
	char				 capture[PATH_MAX];
	struct draft_info		 snap;
	int				 named = o->val[LO_GATE] != NULL &&
					    o->val[LO_GATE][0] != '\0';

	memset(&snap, 0, sizeof(snap));
	if (launch_seccomp_profile(seccomp, sizeof(seccomp), err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	if (launch_find_program("podman", podman, sizeof(podman)) == -1) {
		fprintf(stderr, "aisb: podman not found; install it "
		    "(apt-get install podman) or see aisb doctor\n");
		return EXIT_ENFORCE;
	}
	memset(&facts, 0, sizeof(facts));
	if (launch_host_check(&facts, 0) == -1) {
		fprintf(stderr, "aisb: this host cannot run sandboxes; "
		    "run aisb doctor for what to fix\n");
		return EXIT_ENFORCE;
	}
	if (launch_ids_resolve(&ids, facts.rootless, o->val[LO_WORKSPACE], 1,
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	if (launch_limits_unheld(o, &facts, unheld, sizeof(unheld)))
		fprintf(stderr, "aisb: rootless podman on cgroups v1 cannot "
		    "apply these limits, and this session runs without them:"
		    "%s (the nofile and nproc ulimits still hold; see aisb "
		    "doctor)\n", unheld);
	if (launch_session_new(&s, environ, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		return EXIT_ENFORCE;
	}
	if (launch_session_path(&s, "audit.jsonl", audit, sizeof(audit)) == -1 ||
	    launch_session_path(&s, "gate.log", glog, sizeof(glog)) == -1) {
		snprintf(err, sizeof(err), "session folder path too long");
		goto fail;
	}
	if (launch_session_path(&s, "workspace", wsmount, sizeof(wsmount)) ==
	    -1) {
		snprintf(err, sizeof(err), "session folder path too long");
		goto fail;
	}
	{
		char	 who[48], path[PATH_MAX];
		int	 n = snprintf(who, sizeof(who), "%ld %llu\n",
			    (long)getpid(), launch_proc_start(getpid()));

		/* aisb clean leaves what a live launcher holds alone */
		if (launch_session_write(&s, "launcher", who, (size_t)n, path,
		    sizeof(path), err, sizeof(err)) == -1)
			goto fail;
	}
	/*
	 * --snapshot: the command gets a copy of the workspace, mounted
	 * where the workspace would be (snapshot.h); a bound exceeded is
	 * 78 with the number.
	 */
	if (o->snapshot) {
		int	 sc;

		if ((sc = launch_snap_stage(&snap, &s, o, &ids, err,
		    sizeof(err))) != 0) {
			fprintf(stderr, "aisb: snapshot: %s\n", err);
			code = sc;
			goto out;
		}
	}
	/*
	 * --record: the folder before the gate, which creates the capture
	 * in it (direct mode: the enforcer's recorder does, docs/record.md).
	 */
	if (o->record) {
		if (launch_record_prepare(s.dir, capture, sizeof(capture), err,
		    sizeof(err)) == -1)
			goto fail;
		recording = 1;
	}
	/* an agent's hosts: the gate enforces the merged policy */
	if (ra->yaml != NULL) {
		if (launch_session_write(&s, "policy.yaml", ra->yaml,
		    strlen(ra->yaml), mpolicy, sizeof(mpolicy), err,
		    sizeof(err)) == -1)
			goto fail;
		gpolicy = mpolicy;
	}
	ph1[PH_HOST] = ph0[PH_GATE] = mono_ms();

	if (o->net == LAUNCH_NET_GATE && named) {
		if (launch_gate_attach(o->val[LO_GATE], &s, &shared, err,
		    sizeof(err)) == -1)
			goto fail;
		gate.pid = shared.gate_pid;
		gate.port = shared.port;
		gate.shared = 1;
		gate.start = shared.gate_start;
		ph1[PH_GATE] = mono_ms();
	} else if (o->net == LAUNCH_NET_GATE) {
		/*
		 * The credential is in place before the gate starts.  The
		 * gate starts now and comes up while the image is looked
		 * up; its port, which the plan and the env file need, is
		 * read after that (launch_gate_ready), and podman runs
		 * only once it has been: a gate that does not come up
		 * ends the session before any container.
		 */
		static const char *const learn[] = { "--learn", NULL };

		if (launch_token_file(&s, token, sizeof(token), err,
		    sizeof(err)) == -1 ||
		    launch_gate_spawn_args(&gate, gpolicy, token, audit,
		    glog, NULL, recording ? capture : NULL, o->record_max,
		    o->learn ? learn : NULL, err, sizeof(err)) == -1)
			goto fail;
		{
			char pid[16], pidfile[PATH_MAX];
			int n = snprintf(pid, sizeof(pid), "%d\n", (int)gate.pid);

			/* for aisb clean, should this launcher be killed */
			if (launch_session_write(&s, "gate.pid", pid, (size_t)n,
			    pidfile, sizeof(pidfile), err, sizeof(err)) == -1)
				goto fail;
		}
	}
	ph0[PH_IMAGE] = mono_ms();

	/*
	 * A runtime the user chose wins over the one doctor found; with
	 * neither, podman's own default.
	 */
	if (launch_session_spec(o, ra->a, 1, o->src[LO_RUNTIME] !=
	    LAUNCH_SRC_DEFAULT ? o->val[LO_RUNTIME] : facts.runtime[0] ?
	    facts.runtime : NULL, &st, &spec, err, sizeof(err)) == -1)
		goto fail;
	if (spec.enforcer_path == NULL) {
		snprintf(err, sizeof(err), "aisb-enforce not found next to "
		    "aisb; build it (make) or install it (make install)");
		goto fail;
	}
	spec.base_used = ri.base;
	spec.base_usedlen = sizeof(ri.base);
	if (launch_image_ensure(&spec, image, sizeof(image), err,
	    sizeof(err)) == -1 ||
	    ensure_home_volume(podman, o->val[LO_HOME_VOLUME],
	    o->val[LO_WORKSPACE], err, sizeof(err)) == -1)
		goto fail;
	ph1[PH_IMAGE] = mono_ms();
	snprintf(ri.tag, sizeof(ri.tag), "%s", image);
	launch_image_mark_used(image);	/* for aisb image ls and clean */

	if (o->net == LAUNCH_NET_GATE) {
		if (!named) {
			if (launch_gate_ready(&gate, err, sizeof(err)) == -1)
				goto fail;
			ph1[PH_GATE] = mono_ms();
		}
		if (asprintf(&proxy, "http://session-%s:%s@%s:%u", s.id,
		    s.secret, facts.host_loopback[0] ? facts.host_loopback :
		    LAUNCH_SLIRP_HOST, gate.port) == -1) {
			proxy = NULL;
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
	}
	ph0[PH_RUN] = mono_ms();
	if (launch_env_file(&s, o, environ, proxy, envfile, sizeof(envfile),
	    err, sizeof(err)) == -1)
		goto fail;
	if (proxy != NULL)
		explicit_bzero(proxy, strlen(proxy));

	if (launch_plan_text(o, p, facts.host_loopback[0] ?
	    facts.host_loopback : LAUNCH_SLIRP_HOST, gate.port,
	    launch_network_dns(facts.network[0] ? facts.network :
	    LAUNCH_SLIRP_NETWORK), &plan, err, sizeof(err)) == -1 ||
	    launch_session_write(&s, "plan", plan, strlen(plan), planfile,
	    sizeof(planfile), err, sizeof(err)) == -1)
		goto fail;
	if (o->host_ca && launch_host_ca_file(&s, hostca, sizeof(hostca),
	    &ri.host_cas, err, sizeof(err)) == -1) {
		snprintf(err + strlen(err), sizeof(err) - strlen(err),
		    " (--no-host-ca runs without the host's CAs)");
		goto fail;
	}
	/* rootful: the owner's files, seen as the sandbox user's (ids.h) */
	if (launch_ids_prepare(&ids, o->snapshot ? snap.stage :
	    o->val[LO_WORKSPACE], wsmount, envfile, planfile, &mounted, err,
	    sizeof(err)) == -1)
		goto fail;
	if (o->record && o->net == LAUNCH_NET_DIRECT && record_dir(&s, &ids,
	    recorddir, sizeof(recorddir), err, sizeof(err)) == -1)
		goto fail;

	memset(&r, 0, sizeof(r));
	r.opts = o;
	r.podman = podman;
	r.runtime = spec.runtime;
	r.network = facts.network[0] ? facts.network : LAUNCH_SLIRP_NETWORK;
	r.nofile = facts.nofile;
	r.nproc = facts.nproc;
	r.session_id = s.id;
	r.image = image;
	r.envfile = envfile;
	r.planfile = planfile;
	r.ids = &ids;
	r.workspace_src = mounted ? wsmount : o->snapshot ? snap.stage : NULL;
	r.no_limits = unheld[0] != '\0';
	r.seccomp = seccomp;
	r.hostca = hostca[0] != '\0' ? hostca : NULL;
	r.recorddir = recorddir[0] != '\0' ? recorddir : NULL;
	r.interactive = 1;	/* stdin reaches the command, piped or not */
	r.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (launch_podman_argv(&r, &argv) == -1) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	{
		struct launch_watch_spec	 w;
		char				 name[LAUNCH_ID_HEX + 8];
		static const char *const	 left[] = { "token", "env",
		    "gate.pid" };
		char				 f[3][PATH_MAX];
		size_t				 k, nf = 0;

		snprintf(name, sizeof(name), "aisb-%s", s.id);
		/* should aisb die, its watcher stops the session (watch.c) */
		memset(&w, 0, sizeof(w));
		w.podman = podman;
		w.container = name;
		if (!gate.shared && gate.pid > 0) {
			w.gate_pid = gate.pid;
			w.gate_start = launch_proc_start(gate.pid);
		}
		for (k = 0; k < 3; k++)
			if (launch_session_path(&s, left[k], f[nf],
			    sizeof(f[nf])) == 0) {
				w.unlink[nf] = f[nf];
				nf++;
			}
		w.umount = mounted ? wsmount : NULL;
		if (launch_watch_start(&w, &watchfd, err, sizeof(err)) == -1)
			goto fail;
		/* said even with --quiet: the policy does not hold */
		if (o->learn)
			fprintf(stderr, "aisb: LEARNING MODE: NOTHING IS BLOCKED "
			    "BY THE POLICY in session %s: every name and port "
			    "is allowed (the denied address ranges still are "
			    "not) and recorded for aisb policy suggest %s\n",
			    s.id, s.id);
		code = supervise(argv.s, &gate, podman, name, o->timeout);
		ph1[PH_RUN] = mono_ms();
	}
	goto out;
fail:
	fprintf(stderr, "aisb: %s\n", err);
	code = EXIT_ENFORCE;
out:
	ph0[PH_END] = mono_ms();
	launch_gate_stop(&gate);
	if (mounted)
		launch_ids_umount(wsmount);
	if (named)
		launch_gate_detach(&shared, &s);
	/* the credential and the values are useless now: none stay at rest */
	if (launch_session_path(&s, "token", token, sizeof(token)) == 0)
		(void)unlink(token);
	if (launch_session_path(&s, "env", envfile, sizeof(envfile)) == 0)
		(void)unlink(envfile);
	if (launch_session_path(&s, "gate.pid", token, sizeof(token)) == 0)
		(void)unlink(token);
	launch_watch_dismiss(&watchfd);
	/* the container is gone: the change set, the question, the apply */
	if (o->snapshot)
		code = launch_snap_end(&snap, &s, o, code);
	ph1[PH_END] = mono_ms();
	write_record(&s, o, p, &ids, unheld, start, code, ph0, ph1, &argv, &ri,
	    ra, o->snapshot ? &snap : NULL);
	/* after the gate stopped and the record was written: it covers both */
	if (recording)
		say_recording(&s, o);
	if (!o->quiet)
		denial_summary(&s);
	if (o->learn && gate.port != 0)
		launch_learn_summary(audit, s.id, stderr);
	if (o->keep || code != 0)
		fprintf(stderr, "aisb: session %s: %s\n", s.id, s.dir);
	launch_strv_free(&argv);
	free(plan);
	free(proxy);
	launch_spec_store_free(&st);
	launch_session_wipe(&s);
	return code;
}

int
launch_cmd_run(int argc, char **argv)
{
	struct launch_opts	 o;
	struct launch_strv	 v;
	struct launch_run	 r;
	struct launch_image_spec spec;
	struct launch_ids	 ids;
	struct policy		*p = NULL;
	struct run_agent	 ra;
	char			 err[8192], *plan = NULL;
	char			 seccomp[PATH_MAX];
	int			 rc = 0, preview, named;

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
	preview = o.print_config || o.print_policy || o.print_plan ||
	    o.print_containerfile || o.dry_run;
	if ((!preview || o.dry_run) &&
	    launch_workspace_check(&o, err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: %s\n", err);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	named = o.val[LO_GATE] != NULL && o.val[LO_GATE][0] != '\0';
	if (o.learn && (o.net != LAUNCH_NET_GATE || named)) {
		/* never silently run without what was asked for */
		fprintf(stderr, "aisb: --learn needs a gate of the session's "
		    "own: %s; nothing was started\n", o.net !=
		    LAUNCH_NET_GATE ? "--net none and --net direct have no "
		    "gate to learn through (use --net gate)" : "a shared "
		    "gate (--gate) enforces its policy for every session, and "
		    "learning would open it for all of them (drop --gate)");
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (named && use_named_gate(&o) == -1) {
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.print_config)
		launch_opts_print(&o, stdout);
	if (pick_agent(&o, &ra) == -1) {
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if ((p = load_policy(&o)) == NULL) {
		run_agent_free(&ra);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	/* a dry run is the session's preview: it says the same */
	if ((!preview || o.dry_run) && !o.quiet)
		say_default_policy(&o, p);
	if (ra.a != NULL && apply_agent(&o, &ra, named && o.net ==
	    LAUNCH_NET_GATE, !preview || o.dry_run, &p) == -1) {
		policy_free(p);
		run_agent_free(&ra);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	/* --allow-from-lockfile (lockfile.h): on top of the agent's merge */
	if (o.allow_from_lockfile && launch_lockfile_apply(o.val[LO_WORKSPACE],
	    named && o.net == LAUNCH_NET_GATE ? o.val[LO_GATE] : NULL, &p,
	    &ra.yaml, o.print_policy ? stdout : NULL) == -1) {
		policy_free(p);
		run_agent_free(&ra);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.print_policy) {
		char *d = policy_dump(p, NULL);
		size_t i;

		/* the canonical form cites nothing: say what the agent added */
		for (i = 0; ra.a != NULL && ra.yaml != NULL &&
		    i < ra.a->nhosts; i++)
			printf("# agent %s: %s:%u (%s)\n", ra.a->name,
			    ra.a->hosts[i].host, ra.a->hosts[i].port,
			    launch_agent_where(ra.set, &ra.a->hosts[i].pos, err,
			    sizeof(err)));
		if (d != NULL)
			fputs(d, stdout);
		free(d);
	}
	if (o.print_plan || o.dry_run) {
		/* the gate's port is known only once it runs */
		if (launch_plan_text(&o, p, LAUNCH_SLIRP_HOST, 0, LAUNCH_SLIRP_DNS, &plan,
		    err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = EXIT_CONFIG;
		} else {
			printf("# plan (the gate's port is chosen when it "
			    "starts)\n%s", plan);
		}
		free(plan);
	}
	if (o.print_containerfile) {
		struct launch_spec_store	st;

		if (launch_session_spec(&o, ra.a, 0, o.val[LO_RUNTIME], &st,
		    &spec, err, sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = EXIT_CONFIG;
		} else if (launch_image_print_containerfile(&spec,
		    stdout) == -1)
			rc = EXIT_CONFIG;
		launch_spec_store_free(&st);
	}
	if (o.dry_run) {
		memset(&r, 0, sizeof(r));
		r.opts = &o;
		r.podman = "podman";
		r.runtime = o.val[LO_RUNTIME];
		r.network = LAUNCH_SLIRP_NETWORK;
		r.session_id = "<session>";
		r.image = "<image>";
		r.envfile = "<session>/env";
		r.planfile = "<session>/plan";
		r.recorddir = "<session>/" LAUNCH_RECORDING_DIR;
		/* the host's CAs as a session would gather them (hostca.h) */
		if (o.host_ca) {
			const char	*cadir = getenv(LAUNCH_HOST_CA_DIR_ENV);
			char		*pem = NULL, warn[PATH_MAX + 64];
			size_t		 len, ncerts = 0;

			if (cadir == NULL || cadir[0] != '/')
				cadir = LAUNCH_HOST_CA_DIR;
			if (launch_host_ca_gather(cadir, &pem, &len, &ncerts,
			    warn, sizeof(warn), err, sizeof(err)) == 0 &&
			    ncerts > 0)
				r.hostca = "<session>/host-ca.pem";
			free(pem);
		}
		/* the mapping a session would use; nothing is created */
		if (launch_ids_resolve(&ids, geteuid() != 0,
		    o.val[LO_WORKSPACE], 0, err, sizeof(err)) == 0) {
			r.ids = &ids;
			if (ids.mode == LAUNCH_IDS_MAPPED)
				r.workspace_src = "<session>/workspace";
			else if (o.snapshot)
				r.workspace_src = "<session>/stage";
		} else
			printf("# user namespace: %s\n", err);
		if (launch_seccomp_profile(seccomp, sizeof(seccomp), err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "aisb: %s\n", err);
			rc = EXIT_ENFORCE;
		} else
			r.seccomp = seccomp;
		if (r.seccomp != NULL && launch_podman_argv(&r, &v) == 0) {
			size_t i;

			printf("# env file (mode 0600)\n");
			if (o.net == LAUNCH_NET_GATE)
				printf("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and "
				    "lower case)=http://<session credential>@"
				    LAUNCH_SLIRP_HOST ":<gate port>\n"
				    "NO_PROXY, no_proxy=localhost,127.0.0.1,::1\n");
			for (i = 0; i < o.nenv; i++) {
				/* a recipe's setenv holds no secret: shown */
				if (o.env[i].src == LAUNCH_SRC_DEFAULT &&
				    strncmp(o.env[i].where, "agent ", 6) == 0) {
					printf("%s (setenv of %s)\n",
					    o.env[i].text, o.env[i].where);
					continue;
				}
				printf("%s\n", launch_env_redacted(o.env[i].text,
				    err, sizeof(err)));
			}
			if (o.learn)
				printf("# learn: the gate runs with --learn: "
				    "NOTHING IS BLOCKED BY THE POLICY (the "
				    "denied address ranges still are)\n");
			if (o.record)
				printf("# record: <session>/%s/%s, at most "
				    "%llu bytes, and a manifest at the end "
				    "(docs/record.md)\n", LAUNCH_RECORDING_DIR,
				    LAUNCH_RECORDING_CAPTURE,
				    (unsigned long long)o.record_max);
			printf("# podman\n");
			print_argv(stdout, v.s);
			launch_strv_free(&v);
		}
	}
	if (!preview && o.record && named && o.net == LAUNCH_NET_GATE) {
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
	policy_free(p);
	run_agent_free(&ra);
	launch_opts_free(&o);
	return rc;
}
