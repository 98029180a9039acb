/*
 * aisb gate up|down|ls|status: named gates from the command line.  The
 * machinery (the gate's folder, the supervisor, attach and detach) is
 * gates.c's; this file parses, asks it and prints (docs/launcher.md,
 * "Named gates").
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "file.h"
#include "host/paths.h"
#include "session/gates.h"
#include "session/gates-int.h"
#include "session/ask.h"
#include "cmd/cmd.h"
#include "session/options.h"
#include "session/secrets.h"
#include "host/proc.h"

#define GATE_IDLE_DEFAULT	600	/* seconds without a session */
#define GATE_IDLE_MAX		(7 * 86400)
#define STATUS_MAX		(1024 * 1024)	/* the control socket's answer */

extern char	**environ;

/* Seconds from "600", "10m", "2h"; 0 on error. */
static unsigned
parse_idle(const char *s)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		return 0;
	if (*end == 'm' || *end == 'h') {
		v *= *end == 'm' ? 60 : 3600;
		end++;
	} else if (*end == 's')
		end++;
	return *end == '\0' && v > 0 && v <= GATE_IDLE_MAX ? (unsigned)v : 0;
}

/*
 * The secrets the gate's policy names, said at once: a named gate adds
 * none (gate up takes no --secret), so those rules' requests go out
 * without them; its gate.log says it too, where nobody looks.
 */
static void
say_secrets(const char *name, const char *path)
{
	struct policy			*p;
	const struct policy_rule	*r;
	struct policy_secret_info	 si;
	char				 rule[256];
	size_t				 i, k;

	if (policy_load_file(path, &p, NULL) == -1)
		return;		/* the gate said why it would not load it */
	for (i = 0; i < policy_rule_count(p); i++) {
		r = policy_rule_at(p, i);
		for (k = 0; policy_rule_inspect(r) &&
		    k < policy_rule_secret_count(r); k++) {
			policy_rule_secret(r, k, &si);
			fprintf(stderr, "aisb: gate %s: secret %s (rule %s): a "
			    "named gate adds no secrets, so that rule's "
			    "requests go out without it; a session with a gate "
			    "of its own adds it: aisb --secret %s -- COMMAND\n",
			    name, si.name, policy_rule_describe(r, rule,
			    sizeof(rule)), si.name);
		}
	}
	policy_free(p);
}

/*
 * A session flag that gate up would otherwise ignore in silence: -1
 * after a line on stderr, else 0.
 */
static int
refused_flag(const struct launch_opts *o)
{
	size_t	 i;

	if (o->src[LO_AGENT] == LAUNCH_SRC_FLAG) {
		/* not ignored in silence: a gate's policy is only its file */
		fprintf(stderr, "aisb: gate up: --agent: a gate enforces its "
		    "policy file as written; add the agent's hosts to it "
		    "(aisb --agent %s --print-policy shows them merged)\n",
		    o->val[LO_AGENT]);
		return -1;
	}
	if (o->allow_from_lockfile &&
	    (o->src[LO_ALLOW_FROM_LOCKFILE] == LAUNCH_SRC_FLAG ||
	    o->src[LO_ALLOW_FROM_LOCKFILE] == LAUNCH_SRC_ENV)) {
		/* not ignored in silence: a gate's policy is only its file */
		fprintf(stderr, "aisb: gate up: --allow-from-lockfile (%s): a "
		    "gate enforces its policy file as written; add the hosts "
		    "to it (aisb policy derive lockfile prints them)\n",
		    o->where[LO_ALLOW_FROM_LOCKFILE]);
		return -1;
	}
	if (o->record && (o->src[LO_RECORD] == LAUNCH_SRC_FLAG ||
	    o->src[LO_RECORD] == LAUNCH_SRC_ENV)) {
		/* not ignored in silence either (docs/record.md) */
		fprintf(stderr, "aisb: gate up: --record (%s): a shared "
		    "gate's traffic is not one session's, and a named gate "
		    "does not record; record a session with a gate of its own: "
		    "aisb --record -- COMMAND\n", o->where[LO_RECORD]);
		return -1;
	}
	for (i = 0; i < o->nsecrets; i++) {
		char	 sname[POLICY_MAX_SECRET_NAME + 1];

		if (o->secrets[i].src != LAUNCH_SRC_FLAG)
			continue;
		/* not ignored in silence: its sessions could not use it */
		launch_secret_entry_name(o->secrets[i].text, sname,
		    sizeof(sname));
		fprintf(stderr, "aisb: gate up: --secret %s: a named gate "
		    "adds no secrets (one session's would go out with every "
		    "other session's requests); pass it to a session with a "
		    "gate of its own: aisb --secret %s -- COMMAND\n", sname,
		    sname);
		return -1;
	}
	return 0;
}

static int
gate_up(int argc, char **argv)
{
	struct launch_opts	 o;
	struct gates_state	 st;
	struct cli_args		 ca;
	char			 dir[PATH_MAX], err[8192], policy[PATH_MAX];
	char			 msg[1024], *rargv[64];
	const char		*name;
	unsigned		 idle = GATE_IDLE_DEFAULT, ask;
	int			 i, rargc = 0, lockfd, rc, userpolicy;

	/*
	 * aisb gate up NAME [--idle D] [session flags: --policy ...]: the
	 * table (cli.c) takes --idle; the session's flags go on to the
	 * session's option table below.
	 */
	if ((rc = launch_cli_parse("gate up", argc - 2, argv + 2, &ca)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (ca.npos < 1 || ca.pos[0][0] == '-') {
		fprintf(stderr, "aisb gate up: missing NAME; usage: aisb gate "
		    "up NAME [options]\n");
		return EXIT_CONFIG;
	}
	name = ca.pos[0];
	if (launch_cli_get(&ca, "--idle") != NULL &&
	    (idle = parse_idle(launch_cli_get(&ca, "--idle"))) == 0) {
		fprintf(stderr, "aisb: gate up: bad --idle \"%s\": seconds, "
		    "Nm or Nh, at most 7 days\n", launch_cli_get(&ca, "--idle"));
		return EXIT_CONFIG;
	}
	rargv[rargc++] = (char *)"aisb";
	for (i = 1; i < ca.npos; i++) {
		if (rargc == 63) {
			fprintf(stderr, "aisb: gate up: too many arguments\n");
			return EXIT_CONFIG;
		}
		rargv[rargc++] = ca.pos[i];
	}
	rargv[rargc] = NULL;
	if (gates_dir(name, dir, sizeof(dir), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: gate up: %s\n", err);
		return EXIT_CONFIG;
	}
	/* the policy as a session would resolve it: flags, AISB_*, configs */
	if (launch_opts_resolve(&o, rargc, rargv, environ, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: gate up: %s\n", err);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.help) {
		launch_opts_free(&o);
		launch_cli_help(launch_cli_find("gate up"), stdout);
		return 0;
	}
	if (refused_flag(&o) == -1) {
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (o.ncmd > 0) {
		fprintf(stderr, "aisb: gate up: unexpected \"%s\"\n", o.cmd[0]);
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	if (realpath(o.val[LO_POLICY], policy) == NULL) {
		fprintf(stderr, "aisb: gate up: policy %s (%s: %s): %s\n",
		    o.val[LO_POLICY], launch_src_str(o.src[LO_POLICY]),
		    o.where[LO_POLICY], strerror(errno));
		launch_opts_free(&o);
		return EXIT_CONFIG;
	}
	/* held requests (ask.h): what aisb approve ID always may write */
	ask = o.ask;
	userpolicy = launch_ask_policy_ours(&o);
	launch_opts_free(&o);

	/*
	 * The gate, once it has dropped to its user, searches this folder
	 * (its group may, nobody else) for the credentials and the policy.
	 */
	if (launch_mkdirs(dir) == -1 || (gates_group() != (gid_t)-1 &&
	    (chown(dir, (uid_t)-1, gates_group()) == -1 ||
	    chmod(dir, 0710) == -1)) || (lockfd = gates_lock(dir)) == -1) {
		fprintf(stderr, "aisb: gate up: %s: %s\n", dir, strerror(errno));
		return EXIT_ENFORCE;
	}
	if (gates_state_read(dir, &st) == 0 && gates_state_up(&st)) {
		fprintf(stderr, "aisb: gate %s is already up on 127.0.0.1:%u "
		    "(policy %s); aisb gate down %s first\n", name, st.port,
		    st.policy, name);
		close(lockfd);
		return EXIT_CONFIG;
	}
	gates_remove_runtime(dir);	/* what a dead supervisor left */
	if (launch_ask_note(dir, userpolicy ? policy : NULL, NULL, 0, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "aisb: gate up: %s\n", err);
		close(lockfd);
		return EXIT_ENFORCE;
	}
	launch_warn_test_env(name);
	if (gates_spawn(dir, policy, idle, launch_cli_get(&ca,
	    "--reload-closes") != NULL, ask, lockfd, msg, sizeof(msg)) == -1) {
		fprintf(stderr, "aisb: gate up: %s\n", strerror(errno));
		close(lockfd);
		return EXIT_ENFORCE;
	}
	close(lockfd);
	if (strncmp(msg, "ok ", 3) != 0) {
		fprintf(stderr, "aisb: gate %s did not come up: %s", name,
		    msg[0] != '\0' ? msg : "the supervisor died\n");
		return EXIT_ENFORCE;
	}
	rc = atoi(msg + 3);
	say_secrets(name, policy);
	printf("gate %s up on 127.0.0.1:%d, policy %s; reaped after %u s "
	    "without a session; use it with: aisb --gate %s -- COMMAND\n",
	    name, rc, policy, idle, name);
	if (ask > 0)
		printf("gate %s holds what its policy denies for %u s: aisb "
		    "pending lists it, aisb approve ID or aisb deny ID "
		    "answers\n", name, ask);
	return 0;
}

static int
gate_down(const char *name)
{
	struct gates_state	 st;
	char			 dir[PATH_MAX], err[256];
	int			 i, lockfd;

	if (gates_dir(name, dir, sizeof(dir), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: gate down: %s\n", err);
		return EXIT_CONFIG;
	}
	if (gates_state_read(dir, &st) == -1 || !gates_state_up(&st)) {
		fprintf(stderr, "aisb: gate %s is not up\n", name);
		return EXIT_CONFIG;
	}
	if ((lockfd = gates_lock(dir)) != -1) {
		i = gates_reap(dir);
		close(lockfd);
		if (i > 0)
			fprintf(stderr, "aisb: gate %s: %d session(s) lose "
			    "their way out\n", name, i);
	}
	kill(st.sup, SIGTERM);
	for (i = 0; i < 200 && launch_proc_alive(st.sup, st.sup_start); i++)
		usleep(50 * 1000);
	if (launch_proc_alive(st.sup, st.sup_start) ||
	    launch_proc_alive(st.gate, st.gate_start)) {
		fprintf(stderr, "aisb: gate %s did not stop within 10 s\n",
		    name);
		return EXIT_ENFORCE;
	}
	printf("gate %s down\n", name);
	return 0;
}

static int
count_sessions(const char *dir)
{
	char		 sdir[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if (file_path_join(sdir, sizeof(sdir), dir, "sessions") == -1 ||
	    (d = opendir(sdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strlen(de->d_name) == LAUNCH_ID_HEX)
			n++;
	closedir(d);
	return n;
}

static int
gate_ls(void)
{
	struct gates_state	 st;
	char			 base[PATH_MAX], gdir[PATH_MAX], dir[PATH_MAX];
	struct dirent		*de;
	DIR			*d;

	if (launch_state_dir(environ, base, sizeof(base)) == -1 ||
	    file_path_join(gdir, sizeof(gdir), base, "gates") == -1) {
		fprintf(stderr, "aisb: cannot find a state folder: set "
		    "XDG_STATE_HOME or HOME to an absolute path\n");
		return EXIT_CONFIG;
	}
	if ((d = opendir(gdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (!launch_gate_name_ok(de->d_name) ||
		    file_path_join(dir, sizeof(dir), gdir, de->d_name) == -1)
			continue;
		if (gates_state_read(dir, &st) == 0 && gates_state_up(&st))
			printf("%-16s up   127.0.0.1:%-5u %d session(s)  idle "
			    "%us  %s\n", de->d_name, st.port,
			    count_sessions(dir), st.idle, st.policy);
		else
			printf("%-16s down (audit log in %s)\n", de->d_name,
			    dir);
	}
	closedir(d);
	return 0;
}

static int
gate_status(const char *name)
{
	struct gates_state	 st;
	char			 dir[PATH_MAX], ca[PATH_MAX], err[256], *resp;

	if (gates_dir(name, dir, sizeof(dir), err, sizeof(err)) == -1) {
		fprintf(stderr, "aisb: gate status: %s\n", err);
		return EXIT_CONFIG;
	}
	if (gates_state_read(dir, &st) == -1 || !gates_state_up(&st)) {
		fprintf(stderr, "aisb: gate %s is not up\n", name);
		return EXIT_CONFIG;
	}
	printf("gate %s\nlisten 127.0.0.1:%u\npolicy %s\nsessions %d\n"
	    "idle %u\nask %u\nsupervisor %ld\ngate_pid %ld\nfolder %s\n",
	    name, st.port, st.policy, count_sessions(dir), st.idle, st.ask,
	    (long)st.sup, (long)st.gate, dir);
	/* what a client of its inspected hosts trusts (gates.c) */
	if (file_path_join(ca, sizeof(ca), dir, LAUNCH_GATE_CA) == 0 &&
	    access(ca, R_OK) == 0)
		printf("ca %s\n", ca);
	if ((resp = malloc(STATUS_MAX)) == NULL)
		return EXIT_ENFORCE;
	if (gates_control(dir, "status\n", resp, STATUS_MAX, 1) == 0)
		printf("status %s", resp);
	else
		fprintf(stderr, "aisb: gate %s: no answer on its control "
		    "socket\n", name);
	free(resp);
	return 0;
}

int
launch_cmd_gate(int argc, char **argv)
{
	struct cli_args	 a;
	char		 name[32];
	int		 rc;

	if ((rc = launch_cli_group("gate", argc, argv)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "up") == 0)
		return gate_up(argc, argv);
	snprintf(name, sizeof(name), "gate %s", argv[1]);
	if ((rc = launch_cli_parse(name, argc - 2, argv + 2, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if (strcmp(argv[1], "down") == 0)
		return gate_down(a.pos[0]);
	if (strcmp(argv[1], "ls") == 0)
		return gate_ls();
	return gate_status(a.pos[0]);
}

