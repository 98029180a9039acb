/*
 * One session, in the order it runs (run.h): the host and the session
 * folder, the gate (started while the image is looked up), the image,
 * the session's files, the container watched and supervised, torn down
 * in reverse whatever happens, its record written; the command's exit
 * status returned.  aisb run (cmd/run.c) prepares the options and the
 * policy (prepare.c) and calls it.
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

#include "exitcode.h"
#include "file.h"
#include "image/agent.h"
#include "host/cache.h"
#include "session/ask.h"
#include "image/store.h"
#include "policytools/denials.h"
#include "session/gateproc.h"
#include "session/gates.h"
#include "session/enforcer.h"
#include "session/hostcas.h"
#include "session/ids.h"
#include "host/facts.h"
#include "image/image.h"
#include "image/pkgof.h"
#include "session/options.h"
#include "session/podman.h"
#include "policy.h"
#include "host/proc.h"
#include "session/prepare.h"
#include "session/recording.h"
#include "session/run.h"
#include "session/seccomp.h"
#include "session/secrets.h"
#include "session/folder.h"
#include "session/retain.h"
#include "session/snapshot.h"
#include "session/writer.h"
#include "session/spec.h"
#include "session/trust.h"
#include "policytools/suggest.h"
#include "session/watch.h"
#include "session/wsmode.h"


extern char **environ;

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

/*
 * What the session ran on, for its record: image, base, host CAs, the
 * gate's CA and the secrets (names and sources, never a value).
 */
struct run_image {
	char				 tag[LAUNCH_TAG_MAX];
	char				 base[LAUNCH_TAG_MAX];
	size_t				 host_cas;
	int				 session_ca;
	const struct launch_secrets	*ss;
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
    const struct run_image *ri, const struct launch_run_agent *ra,
    const struct draft_info *sn)
{
	char	*text = NULL, path[PATH_MAX], err[256];
	size_t	 len = 0, i;
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
	if (ri->session_ca)
		fprintf(f, "\nsession_ca yes (the gate inspects: its CA "
		    "trusted inside)");
	for (i = 0; ri->ss != NULL && i < ri->ss->n; i++)
		fprintf(f, "\nsecret %s from %s (%s); the sandbox held a "
		    "placeholder", ri->ss->v[i].name, ri->ss->v[i].source,
		    ri->ss->v[i].where);
	fprintf(f, "\nhome_volume %s\nlimits_not_applied%s", o->quarantine ?
	    "- (quarantine: an anonymous volume, gone with the container)" :
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
	if (sn != NULL && sn->draft_name[0] != '\0')
		fprintf(f, "\nsnapshot_draft %s revision %lu", sn->draft_name,
		    sn->draft_revision);
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
 * --record --net direct: SESSION/recording (launch_record_prepare made it),
 * mounted at LAUNCH_RECORD_DIR for the enforcer's recorder (docs/record.md,
 * "Direct mode"), given to the container's root (ids.h), so that the
 * command cannot enter it; the enforcer refuses a folder the sandbox uid
 * owns or may write (77).  0, or -1 with err.
 */
static int
record_dir(const struct launch_session *s, const struct launch_ids *ids,
    const char *podman, char *path, size_t len, char *err, size_t errlen)
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
	if (chmod(path, 0700) == -1) {
		snprintf(err, errlen, "chmod of %s: %s", path, strerror(errno));
		return -1;
	}
	return launch_ids_give_root(ids, podman, path, err, errlen);
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

/* One session's state, from its host checks to its record. */
struct run {
	const struct launch_opts	*o;
	struct policy			*p;
	const struct launch_run_agent	*ra;
	struct launch_session		 s;
	struct launch_gate		 gate;
	struct launch_host_facts	 facts;
	struct launch_ids		 ids;
	struct launch_spec_store	 st;
	struct launch_shared		 shared;
	struct launch_strv		 argv;
	struct draft_info		 snap;
	struct launch_trust		 trust;	/* a bind session's files */
	struct launch_wsmode		 ws;	/* guards and mounts */
	struct run_image		 ri;
	const char			*gpolicy;
	char				 mpolicy[PATH_MAX], podman[PATH_MAX];
	char				 wsmount[PATH_MAX], unheld[64];
	char				 token[PATH_MAX], audit[PATH_MAX];
	char				 glog[PATH_MAX], envfile[PATH_MAX];
	char				 planfile[PATH_MAX];
	char				 image[LAUNCH_TAG_MAX];
	char				 hostca[PATH_MAX], recorddir[PATH_MAX];
	char				 seccomp[PATH_MAX], capture[PATH_MAX];
	char				 enforcer[PATH_MAX];
	char				 gateca[PATH_MAX];
	struct launch_secrets		*ss;
	char				*plan, *proxy;
	time_t				 start;
	int64_t				 ph0[PH_N], ph1[PH_N];
	const char			*runtime;	/* podman's --runtime */
	int				 named, mounted, watchfd, recording;
	pid_t				 notify;	/* ask.h; -1 */
	int				 writer;	/* the workspace's writer
							   lock (writer.h); -1 */
	int				 have_session, have_ws, ran;
	char				 err[PATH_MAX + 256];
};

/*
 * The host: its seccomp profile, podman, its facts and the sandbox
 * user's ids; then the session folder and what goes in it before the
 * gate (the launcher's pid, a snapshot's stage, the record folder, an
 * agent's merged policy).  0; -1 with r->err; or an exit code > 0 after
 * a line on stderr.
 */
static int
run_host(struct run *r)
{
	const struct launch_opts	*o = r->o;
	char				 who[48], path[PATH_MAX];
	int				 n, sc;

	if (launch_seccomp_profile(r->seccomp, sizeof(r->seccomp), r->err,
	    sizeof(r->err)) == -1 || launch_enforcer_find(r->enforcer,
	    sizeof(r->enforcer), r->err, sizeof(r->err)) == -1) {
		fprintf(stderr, "aisb: %s\n", r->err);
		return EXIT_ENFORCE;
	}
	if (launch_find_program("podman", r->podman, sizeof(r->podman)) ==
	    -1) {
		fprintf(stderr, "aisb: podman not found; install it "
		    "(apt-get install podman) or see aisb doctor\n");
		return EXIT_ENFORCE;
	}
	if (launch_host_check(&r->facts, 0) == -1) {
		fprintf(stderr, "aisb: this host cannot run sandboxes; "
		    "run aisb doctor for what to fix\n");
		return EXIT_ENFORCE;
	}
	/*
	 * --net direct's plan needs no gate: made now, so that a policy it
	 * cannot pin (cidr rules alone) is bad input, 78, before anything
	 * is made or built
	 */
	if (o->net == LAUNCH_NET_DIRECT && launch_plan_text(o, r->p,
	    r->ra->a, LAUNCH_SLIRP_HOST, 0, launch_network_dns(r->facts.network[0] ?
	    r->facts.network : LAUNCH_SLIRP_NETWORK), &r->plan, r->err,
	    sizeof(r->err)) == -1) {
		fprintf(stderr, "aisb: %s; nothing was started\n", r->err);
		return EXIT_CONFIG;
	}
	if (launch_ids_resolve(&r->ids, r->facts.rootless,
	    o->val[LO_WORKSPACE], 1, r->err, sizeof(r->err)) == -1) {
		fprintf(stderr, "aisb: %s\n", r->err);
		return EXIT_ENFORCE;
	}
	if (launch_limits_unheld(o, &r->facts, r->unheld, sizeof(r->unheld)))
		fprintf(stderr, "aisb: rootless podman on cgroups v1 cannot "
		    "apply these limits, and this session runs without them:"
		    "%s (the nofile and nproc ulimits still hold; see aisb "
		    "doctor)\n", r->unheld);
	if (launch_session_new(&r->s, environ, r->err, sizeof(r->err)) == -1) {
		fprintf(stderr, "aisb: %s\n", r->err);
		return EXIT_ENFORCE;
	}
	r->have_session = 1;
	if (launch_session_path(&r->s, "audit.jsonl", r->audit,
	    sizeof(r->audit)) == -1 || launch_session_path(&r->s, "gate.log",
	    r->glog, sizeof(r->glog)) == -1 || launch_session_path(&r->s,
	    "workspace", r->wsmount, sizeof(r->wsmount)) == -1) {
		snprintf(r->err, sizeof(r->err), "session folder path too "
		    "long");
		return -1;
	}
	/*
	 * One writer per workspace: a session that writes the workspace
	 * itself (not --snapshot, which writes a copy, nor a read-only one)
	 * holds its lock.
	 */
	if (!o->snapshot && !o->readonly && (n = launch_writer_take(
	    o->val[LO_WORKSPACE], r->s.id, &r->writer, r->err,
	    sizeof(r->err))) != 0) {
		fprintf(stderr, "aisb: %s\n", r->err);
		return n == 1 ? EXIT_BUSY : EXIT_ENFORCE;
	}
	/* aisb clean leaves what a live launcher holds alone */
	n = snprintf(who, sizeof(who), "%ld %llu\n", (long)getpid(),
	    launch_proc_start(getpid()));
	if (launch_session_write(&r->s, "launcher", who, (size_t)n, path,
	    sizeof(path), r->err, sizeof(r->err)) == -1)
		return -1;
	/*
	 * --snapshot: the command gets a copy of the workspace, mounted
	 * where the workspace would be (snapshot.h); a bound exceeded is
	 * 78 with the number.
	 */
	if (o->snapshot && (sc = launch_snap_stage(&r->snap, &r->s, o, &r->ids,
	    r->err, sizeof(r->err))) != 0) {
		fprintf(stderr, "aisb: snapshot: %s\n", r->err);
		return sc;
	}
	/* what aisb read from a bind session's workspace, watched to its
	 * end (trust.h); a snapshot's changes wait for an apply */
	if (!o->snapshot && launch_trust_begin(&r->trust, environ,
	    o->val[LO_WORKSPACE], (const char *const[]){ o->project_config,
	    o->val[LO_POLICY], o->user_config, o->user_policy }, 4, r->s.id,
	    r->err, sizeof(r->err)) == -1)
		return -1;
	/*
	 * The workspace as the command sees it (wsmode.h): a direct
	 * session's repositories guarded and protected paths, --mount.
	 * The session folder by its real path: what is made in it is
	 * opened never through a link.
	 */
	if (launch_snap_real(r->s.dir, path) == -1) {
		snprintf(r->err, sizeof(r->err), "%s: %s", r->s.dir,
		    strerror(errno));
		return -1;
	}
	r->have_ws = 1;
	if ((sc = launch_wsmode_prepare(&r->ws, o, &r->ids, path,
	    r->ids.mode == LAUNCH_IDS_MAPPED ? r->wsmount : NULL, 0, r->err,
	    sizeof(r->err))) != 0) {
		fprintf(stderr, "aisb: %s\n", r->err);
		return sc;
	}
	/*
	 * --record: the folder before the gate, which creates the capture
	 * in it (direct mode: the enforcer's recorder does, docs/record.md).
	 */
	if (o->record) {
		if (launch_record_prepare(r->s.dir, r->capture,
		    sizeof(r->capture), r->err, sizeof(r->err)) == -1)
			return -1;
		r->recording = 1;
	}
	/* an agent's hosts: the gate enforces the merged policy */
	if (r->ra->yaml != NULL) {
		if (launch_session_write(&r->s, "policy.yaml", r->ra->yaml,
		    strlen(r->ra->yaml), r->mpolicy, sizeof(r->mpolicy), r->err,
		    sizeof(r->err)) == -1)
			return -1;
		r->gpolicy = r->mpolicy;
	}
	return 0;
}

/*
 * The session's own gate started: an inspecting one writes its CA's
 * certificate into the session folder (run_files makes the sandbox
 * trust it) and gets the secrets on a descriptor of their own, whose
 * values aisb then forgets.  0 or -1 with r->err.
 */
static int
gate_spawn(struct run *r)
{
	const struct launch_opts	*o = r->o;
	struct launch_gate_args		 a;
	const char			*upca = getenv(LAUNCH_TEST_UPSTREAM_CA_ENV);
	const char			*extra[4] = { NULL };
	char				 asks[16], ctl[PATH_MAX];
	int				 rc, n = 0;

	memset(&a, 0, sizeof(a));
	/* --learn; --ask SECONDS, announced on its control socket (ask.h) */
	if (o->learn)
		extra[n++] = "--learn";
	if (o->ask > 0 && launch_session_path(&r->s, "control", ctl,
	    sizeof(ctl)) == 0) {
		snprintf(asks, sizeof(asks), "%u", o->ask);
		extra[n++] = "--ask";
		extra[n++] = asks;
		a.control = ctl;
	}
	a.policy = r->gpolicy;
	a.tokenfile = r->token;
	a.auditfile = r->audit;
	a.logfile = r->glog;
	a.capture = r->recording ? r->capture : NULL;
	a.capture_max = o->record_max;
	a.extra = n > 0 ? extra : NULL;
	a.secrets_fd = -1;
	if (launch_policy_inspects(r->p)) {
		if (launch_session_path(&r->s, "gate-ca.pem", r->gateca,
		    sizeof(r->gateca)) == -1) {
			snprintf(r->err, sizeof(r->err), "session folder path "
			    "too long");
			return -1;
		}
		a.ca_out = r->gateca;
		a.upstream_ca = upca != NULL && upca[0] == '/' ? upca : NULL;
	}
	if (r->ss != NULL && r->ss->n > 0 && (a.secrets_fd =
	    launch_secrets_fd(r->ss, r->err, sizeof(r->err))) == -1)
		return -1;
	rc = launch_gate_spawn_with(&r->gate, &a, r->err, sizeof(r->err));
	if (a.secrets_fd != -1)
		close(a.secrets_fd);
	/* the gate holds them now (or never will): none stays here */
	if (r->ss != NULL)
		launch_secrets_forget(r->ss);
	return rc;
}

/*
 * The gate: a named one attached, or the session's own started.  The
 * credential is in place before the gate starts.  The gate comes up
 * while the image is looked up; its port, which the plan and the env
 * file need, is read after that (run_files), and podman runs only once
 * it has been: a gate that does not come up ends the session before any
 * container.  0 or -1 with r->err.
 */
static int
run_gate(struct run *r)
{
	const struct launch_opts	*o = r->o;
	char				 pid[16], pidfile[PATH_MAX];
	int				 n;

	if (o->net == LAUNCH_NET_GATE && r->named) {
		if (launch_gate_attach(o->val[LO_GATE], &r->s, &r->shared,
		    r->err, sizeof(r->err)) == -1)
			return -1;
		r->gate.pid = r->shared.gate_pid;
		r->gate.port = r->shared.port;
		r->gate.shared = 1;
		r->gate.start = r->shared.gate_start;
		r->ph1[PH_GATE] = mono_ms();
		/* its CA (gates.c): the leaves of its inspected hosts */
		if (file_path_join(r->gateca, sizeof(r->gateca),
		    r->shared.dir, LAUNCH_GATE_CA) == -1 ||
		    access(r->gateca, R_OK) == -1)
			r->gateca[0] = '\0';
		return 0;
	}
	if (o->net != LAUNCH_NET_GATE)
		return 0;
	if (launch_token_file(&r->s, r->token, sizeof(r->token), r->err,
	    sizeof(r->err)) == -1 || gate_spawn(r) == -1)
		return -1;
	/* for aisb clean, should this launcher be killed */
	n = snprintf(pid, sizeof(pid), "%d\n", (int)r->gate.pid);
	return launch_session_write(&r->s, "gate.pid", pid, (size_t)n,
	    pidfile, sizeof(pidfile), r->err, sizeof(r->err));
}

/*
 * The image (built when missing) and the home volume.  A runtime the
 * user chose wins over the one doctor found; with neither, podman's
 * own default.  0; -1 with r->err; or 78 after a line on stderr for a
 * spec the image refuses (packages on a foreign base).
 */
static int
run_image(struct run *r)
{
	const struct launch_opts	*o = r->o;
	struct launch_image_spec	 spec;

	if (launch_session_spec(o, r->ra->a, 1, o->src[LO_RUNTIME] !=
	    LAUNCH_SRC_DEFAULT ? o->val[LO_RUNTIME] : r->facts.runtime[0] ?
	    r->facts.runtime : NULL, &r->st, &spec, r->err,
	    sizeof(r->err)) == -1)
		return -1;
	if (launch_image_spec_check(&spec, r->err, sizeof(r->err)) == -1) {
		fprintf(stderr, "aisb: %s (image: %s: %s)\n", r->err,
		    launch_src_str(o->src[LO_IMAGE]), o->where[LO_IMAGE]);
		return EXIT_CONFIG;
	}
	spec.base_used = r->ri.base;
	spec.base_usedlen = sizeof(r->ri.base);
	/* a quarantined session's home is an anonymous volume (podman.c) */
	if (launch_image_ensure(&spec, r->image, sizeof(r->image), r->err,
	    sizeof(r->err)) == -1 || (!o->quarantine &&
	    launch_home_volume_ensure(r->podman, o->val[LO_HOME_VOLUME],
	    o->val[LO_WORKSPACE], r->err, sizeof(r->err)) == -1))
		return -1;
	r->runtime = spec.runtime;
	snprintf(r->ri.tag, sizeof(r->ri.tag), "%s", r->image);
	launch_image_mark_used(r->image);	/* for aisb image ls and clean */
	return 0;
}

/*
 * The gate ready, then the session's files: the env file (with the
 * proxy's credential), the enforcer's plan, the host's CAs, the idmapped
 * workspace, the direct mode's record folder.  0 or -1 with r->err.
 */
static int
run_files(struct run *r)
{
	const struct launch_opts	*o = r->o;
	const char			*loopback = r->facts.host_loopback[0] ?
					    r->facts.host_loopback :
					    LAUNCH_SLIRP_HOST;

	if (o->net == LAUNCH_NET_GATE) {
		if (!r->named) {
			if (launch_gate_ready(&r->gate, r->err,
			    sizeof(r->err)) == -1)
				return -1;
			r->ph1[PH_GATE] = mono_ms();
		}
		if (asprintf(&r->proxy, "http://session-%s:%s@%s:%u", r->s.id,
		    r->s.secret, loopback, r->gate.port) == -1) {
			r->proxy = NULL;
			snprintf(r->err, sizeof(r->err), "out of memory");
			return -1;
		}
	}
	r->ph0[PH_RUN] = mono_ms();
	if (launch_env_file(&r->s, o, environ, r->proxy, r->ss, r->envfile,
	    sizeof(r->envfile), r->err, sizeof(r->err)) == -1)
		return -1;
	if (r->proxy != NULL)
		explicit_bzero(r->proxy, strlen(r->proxy));
	/* (direct mode's was made by run_host) */
	if ((r->plan == NULL && launch_plan_text(o, r->p, r->ra->a, loopback,
	    r->gate.port, launch_network_dns(r->facts.network[0] ?
	    r->facts.network : LAUNCH_SLIRP_NETWORK), &r->plan, r->err,
	    sizeof(r->err)) == -1) ||
	    launch_session_write(&r->s, "plan", r->plan, strlen(r->plan),
	    r->planfile, sizeof(r->planfile), r->err, sizeof(r->err)) == -1)
		return -1;
	/* the host's CAs, and an inspecting gate's (its leaves' issuer) */
	if ((o->host_ca || r->gateca[0] != '\0') && launch_host_ca_file(&r->s,
	    o->host_ca, r->gateca[0] != '\0' ? r->gateca : NULL, r->hostca,
	    sizeof(r->hostca), &r->ri.host_cas, r->err,
	    sizeof(r->err)) == -1) {
		if (o->host_ca)
			snprintf(r->err + strlen(r->err), sizeof(r->err) -
			    strlen(r->err), " (--no-host-ca runs without the "
			    "host's CAs)");
		return -1;
	}
	r->ri.session_ca = r->gateca[0] != '\0';
	/* rootful: the owner's files, seen as the sandbox user's (ids.h) */
	if (launch_ids_prepare(&r->ids, o->snapshot ? r->snap.stage :
	    o->val[LO_WORKSPACE], r->wsmount, r->envfile, r->planfile,
	    &r->mounted, r->err, sizeof(r->err)) == -1)
		return -1;
	if (o->record && o->net == LAUNCH_NET_DIRECT && record_dir(&r->s,
	    &r->ids, r->podman, r->recorddir, sizeof(r->recorddir), r->err,
	    sizeof(r->err)) == -1)
		return -1;
	return 0;
}

/*
 * podman run, watched: should aisb die, its watcher stops the session
 * (watch.c).  The container's exit code; -1 with r->err when it could
 * not start.
 */
static int
run_container(struct run *r)
{
	static const char *const	 left[] = { "token", "env", "gate.pid" };
	const struct launch_opts	*o = r->o;
	struct launch_run_src		 src;
	struct launch_run		 run;
	struct launch_watch_spec	 w;
	char				 name[LAUNCH_ID_HEX + 8];
	char				 f[3][PATH_MAX];
	size_t				 k, nf = 0;

	memset(&src, 0, sizeof(src));
	src.facts = &r->facts;
	src.ids = &r->ids;
	src.podman = r->podman;
	src.runtime = r->runtime;
	src.seccomp = r->seccomp;
	src.enforcer = r->enforcer;
	src.session_id = r->s.id;
	src.image = r->image;
	src.envfile = r->envfile;
	src.planfile = r->planfile;
	src.hostca = r->hostca[0] != '\0' ? r->hostca : NULL;
	src.recorddir = r->recorddir[0] != '\0' ? r->recorddir : NULL;
	src.clone = r->mounted ? r->wsmount : NULL;
	src.stage = o->snapshot ? r->snap.stage : NULL;
	src.mounts = &r->ws.mounts;
	src.attached = 1;
	launch_run_build(&run, o, &src);
	if (launch_podman_argv(&run, &r->argv) == -1) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	snprintf(name, sizeof(name), "aisb-%s", r->s.id);
	memset(&w, 0, sizeof(w));
	w.podman = r->podman;
	w.container = name;
	if (!r->gate.shared && r->gate.pid > 0) {
		w.gate_pid = r->gate.pid;
		w.gate_start = launch_proc_start(r->gate.pid);
	}
	for (k = 0; k < 3; k++)
		if (launch_session_path(&r->s, left[k], f[nf],
		    sizeof(f[nf])) == 0) {
			w.unlink[nf] = f[nf];
			nf++;
		}
	w.umount = r->mounted ? r->wsmount : NULL;
	/* held requests said on this terminal (ask.h); before the watcher */
	if (((o->ask > 0 || r->named) && o->net == LAUNCH_NET_GATE &&
	    launch_ask_session_begin(&r->s, o, r->named ?
	    r->shared.dir : NULL, &r->notify, r->err, sizeof(r->err)) == -1) ||
	    launch_watch_start(&w, &r->watchfd, r->err, sizeof(r->err)) == -1)
		return -1;
	/* said even with --quiet: the policy does not hold */
	if (o->learn)
		fprintf(stderr, "aisb: LEARNING MODE: NOTHING IS BLOCKED BY THE "
		    "POLICY in session %s: every name and port is allowed (the "
		    "denied address ranges still are not) and recorded for "
		    "aisb policy suggest %s\n", r->s.id, r->s.id);
	r->ran = 1;
	return supervise(r->argv.s, &r->gate, r->podman, name, o->timeout);
}

/*
 * The teardown, whatever happened: the gate, the mount, the secrets at
 * rest, the watcher; a snapshot's draft; the record and what the
 * session's end says.  Returns the session's exit code.
 */
static int
run_end(struct run *r, int code)
{
	const struct launch_opts	*o = r->o;
	char				 path[PATH_MAX];
	static const char *const	 runtime[] = { "token", "env",
	    "gate.pid", "control" };
	size_t				 k;

	r->ph0[PH_END] = mono_ms();
	launch_ask_notify_stop(&r->notify);
	launch_gate_stop(&r->gate);
	if (r->mounted)
		launch_ids_umount(r->wsmount);
	if (r->named)
		launch_gate_detach(&r->shared, &r->s);
	/* the credential and the values are useless now: none stay at
	 * rest; nor does the stopped gate's --ask control socket */
	for (k = 0; k < sizeof(runtime) / sizeof(runtime[0]); k++)
		if (launch_session_path(&r->s, runtime[k], path,
		    sizeof(path)) == 0)
			(void)unlink(path);
	launch_watch_dismiss(&r->watchfd);
	launch_writer_release(o->val[LO_WORKSPACE], &r->writer);
	/* the recorder's folder, the user's again for the manifest (ids.h) */
	if (r->recorddir[0] != '\0' && launch_ids_take_back(&r->ids,
	    r->podman, r->recorddir, r->err, sizeof(r->err)) == -1)
		fprintf(stderr, "aisb: --record: %s\n", r->err);
	/* the container is gone: git's files back, its keys offered, what
	 * runs on its own listed (wsmode.h) */
	if (r->have_ws)
		launch_wsmode_end(&r->ws, o, r->s.id, r->ran);
	/* what it wrote of aisb's files, said */
	if (r->trust.n > 0)
		(void)launch_trust_end(&r->trust, r->s.id, stderr);
	/* the change set, the question, the apply */
	if (o->snapshot)
		code = launch_snap_end(&r->snap, &r->s, o, code);
	r->ph1[PH_END] = mono_ms();
	write_record(&r->s, o, r->p, &r->ids, r->unheld, r->start, code,
	    r->ph0, r->ph1, &r->argv, &r->ri, r->ra, o->snapshot ? &r->snap :
	    NULL);
	/* a bare name the image lacks: the package, from real data */
	if (code == 127 && o->ncmd > 0 && r->image[0] != '\0')
		launch_missing_command_hint(r->podman, &r->facts, r->image,
		    o->cmd[0], stderr);
	/* after the gate stopped and the record was written: it covers both */
	if (r->recording)
		say_recording(&r->s, o);
	if (!o->quiet && r->audit[0] != '\0')
		launch_denials_summary(r->audit, stderr, "aisb: ");
	if (o->learn && r->gate.port != 0)
		launch_learn_summary(r->audit, r->s.id, stderr);
	if (o->keep || code != 0)
		fprintf(stderr, "aisb: session %s: %s\n", r->s.id, r->s.dir);
	launch_retain_end(r->s.id, o->retention, o->quiet);
	return code;
}

int
launch_session_run(const struct launch_opts *o, struct policy *p,
    const struct launch_run_agent *ra, struct launch_secrets *ss)
{
	struct run	*r;
	int		 code, rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		fprintf(stderr, "aisb: out of memory\n");
		return EXIT_ENFORCE;
	}
	r->o = o;
	r->p = p;
	r->ra = ra;
	r->ss = ss;
	r->ri.ss = ss;
	r->gate.pid = -1;
	r->shared.dir[0] = '\0';
	r->watchfd = -1;
	r->writer = -1;
	r->notify = -1;
	r->gpolicy = o->val[LO_POLICY];
	r->start = time(NULL);
	r->ph0[PH_HOST] = mono_ms();
	r->named = o->val[LO_GATE] != NULL && o->val[LO_GATE][0] != '\0';
	if ((rc = run_host(r)) > 0 && !r->have_session) {
		free(r);		/* nothing made yet: nothing to undo */
		return rc;
	}
	if (rc > 0) {
		code = rc;
		goto out;
	}
	if (rc == -1)
		goto fail;
	r->ph1[PH_HOST] = r->ph0[PH_GATE] = mono_ms();
	if (run_gate(r) == -1)
		goto fail;
	r->ph0[PH_IMAGE] = mono_ms();
	if ((rc = run_image(r)) > 0) {
		code = rc;
		goto out;
	}
	if (rc == -1)
		goto fail;
	r->ph1[PH_IMAGE] = mono_ms();
	if (run_files(r) == -1 || (code = run_container(r)) == -1)
		goto fail;
	r->ph1[PH_RUN] = mono_ms();
	goto out;
fail:
	fprintf(stderr, "aisb: %s\n", r->err);
	code = EXIT_ENFORCE;
out:
	code = run_end(r, code);
	launch_strv_free(&r->argv);
	launch_wsmode_free(&r->ws);
	free(r->plan);
	free(r->proxy);
	launch_spec_store_free(&r->st);
	launch_session_wipe(&r->s);
	free(r);
	return code;
}
