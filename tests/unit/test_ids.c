/*
 * Who the sandbox user is on the host: the /etc/subuid parser, and the
 * podman argv of each mapping (the same builder sessions and doctor use).
 */
#include "config.h"

#include <sys/mount.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <cmocka.h>

#include "session/ids.h"
#include "session/options.h"
#include "session/podman.h"
#include "policy.h"

static void
test_subid_find(void **state)
{
	const char	*t = "# comment\n"
	    "alice:100000:65536\n"
	    "bad line\n"
	    "aisb:x:65536\n"		/* not a number: skipped */
	    "aisb:200000:0\n"		/* empty: skipped */
	    "aisb:300000:65536:extra\n"	/* four fields: skipped */
	    "999:400000:65536\n"
	    "aisb:500000:131072";		/* no newline at the end */
	unsigned long	 start = 0, count = 0;

	(void)state;
	/* by name, after every malformed entry */
	assert_int_equal(launch_subid_find(t, strlen(t), "aisb", 12345, &start,
	    &count), 1);
	assert_int_equal(start, 500000);
	assert_int_equal(count, 131072);
	/* by uid, first match wins */
	assert_int_equal(launch_subid_find(t, strlen(t), "aisb", 999, &start,
	    &count), 1);
	assert_int_equal(start, 400000);
	assert_int_equal(launch_subid_find(t, strlen(t), "alice", 1, &start,
	    &count), 1);
	assert_int_equal(start, 100000);
	assert_int_equal(launch_subid_find(t, strlen(t), "bob", 1001, &start,
	    &count), 0);
	/* a prefix of a name is not the name */
	assert_int_equal(launch_subid_find(t, strlen(t), "ali", 1001, &start,
	    &count), 0);
	/* the length bounds the text: the last entry cut off is not seen */
	assert_int_equal(launch_subid_find(t, strlen(t) - 5, "aisb", 1, &start,
	    &count), 1);
	assert_int_equal(start, 500000);
	assert_int_equal(count, 1);
	assert_int_equal(launch_subid_find("", 0, "aisb", 1, &start, &count),
	    0);
}

static int
has(const struct launch_strv *v, const char *arg)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->s[i], arg) == 0)
			return 1;
	return 0;
}

static int
has_prefix(const struct launch_strv *v, const char *prefix)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		if (strncmp(v->s[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

static void
fill(struct launch_opts *o, struct launch_run *r, char **cmd)
{
	memset(o, 0, sizeof(*o));
	o->val[LO_WORKSPACE] = (char *)"/home/u/proj";
	o->val[LO_HOME_VOLUME] = (char *)"aisb-home-0123456789ab";
	o->net = LAUNCH_NET_NONE;
	o->memory = 1 << 30;
	o->cpus_milli = 1500;
	o->pids = 100;
	o->cmd = cmd;
	o->ncmd = 1;
	memset(r, 0, sizeof(*r));
	r->opts = o;
	r->podman = "podman";
	r->network = "slirp4netns";
	r->nofile = r->nproc = 4096;
	r->session_id = "s1";
	r->image = "localhost/aisb:x";
	r->envfile = "/s/env";
	r->planfile = "/s/plan";
	r->seccomp = "/p/seccomp.json";
	r->enforcer = "/b/aisb-enforce";
}

static void
test_argv_mappings(void **state)
{
	struct launch_opts	 o;
	struct launch_run	 r;
	struct launch_strv	 v;
	struct launch_ids	 ids;
	char			*cmd[] = { (char *)"true", NULL };

	(void)state;
	/* rootless: keep-id, the workspace itself */
	fill(&o, &r, cmd);
	memset(&ids, 0, sizeof(ids));
	ids.mode = LAUNCH_IDS_KEEPID;
	r.ids = &ids;
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--userns=keep-id:uid=1000,gid=1000"));
	/* the container's root, not 1000: the command cannot signal it */
	assert_true(has(&v, "--user=0:0"));
	assert_false(has_prefix(&v, "--uidmap"));
	assert_true(has(&v, "--volume=/home/u/proj:/home/u/proj:rw"));
	assert_true(has(&v, "--volume=aisb-home-0123456789ab:/home/sandbox"));
	assert_true(has(&v, "--memory=1073741824"));
	assert_true(has(&v, "--cpus=1.500"));
	assert_true(has(&v, "--pids-limit=100"));
	launch_strv_free(&v);

	/* rootful: the whole range, the idmapped clone as the source */
	ids.mode = LAUNCH_IDS_MAPPED;
	ids.uid_base = 100000;
	ids.gid_base = 200000;
	ids.count = 65536;
	r.workspace_src = "/s/workspace";
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--uidmap=0:100000:65536"));
	assert_true(has(&v, "--gidmap=0:200000:65536"));
	assert_false(has_prefix(&v, "--userns"));
	/* the container's root too, whatever USER the image names */
	assert_true(has(&v, "--user=0:0"));
	assert_true(has(&v, "--volume=/s/workspace:/home/u/proj:rw"));
	assert_true(has(&v, "--workdir=/home/u/proj"));
	assert_int_equal(launch_ids_host_uid(&ids), 101000);
	assert_int_equal(launch_ids_host_gid(&ids), 201000);
	assert_int_equal(launch_ids_root_uid(&ids), 100000);
	launch_strv_free(&v);

	/* limits the host cannot apply are left out, not passed to warn */
	r.no_limits = 1;
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_false(has_prefix(&v, "--memory"));
	assert_false(has_prefix(&v, "--cpus"));
	assert_false(has_prefix(&v, "--pids-limit"));
	assert_true(has(&v, "--ulimit=nofile=4096:4096"));
	launch_strv_free(&v);
}

/* Every argv names aisb's seccomp profile; without one there is none. */
static void
test_argv_seccomp(void **state)
{
	struct launch_opts	 o;
	struct launch_run	 r;
	struct launch_strv	 v;
	char			*cmd[] = { (char *)"true", NULL };

	(void)state;
	fill(&o, &r, cmd);
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--security-opt=seccomp=/p/seccomp.json"));
	assert_true(has(&v, "--security-opt=no-new-privileges"));
	launch_strv_free(&v);

	r.seccomp = NULL;
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	assert_null(v.s);
	r.seccomp = "";
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	assert_null(v.s);
}

/* The index of arg in v, or -1. */
static int
at(const struct launch_strv *v, const char *arg)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->s[i], arg) == 0)
			return (int)i;
	return -1;
}

/*
 * The enforcer is the host's, mounted read-only and named the
 * entrypoint, and nothing of the image's configuration decides its
 * process: its user, the variables a static glibc reads before main,
 * a health check, the stop signal.  Without the binary, no argv.
 */
static void
test_argv_enforcer(void **state)
{
	struct launch_opts	 o;
	struct launch_run	 r;
	struct launch_strv	 v;
	struct launch_ids	 ids;
	char			*cmd[] = { (char *)"true", NULL };
	size_t			 i;
	int			 img, n;

	(void)state;
	fill(&o, &r, cmd);
	memset(&ids, 0, sizeof(ids));
	ids.mode = LAUNCH_IDS_MAPPED;
	ids.count = 65536;
	r.ids = &ids;
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--mount=type=bind,src=/b/aisb-enforce,"
	    "dst=/run/aisb/aisb-enforce,ro=true"));
	assert_true(has(&v, "--entrypoint=/run/aisb/aisb-enforce"));
	assert_true(has(&v, "--user=0:0"));
	assert_true(has(&v, "--unsetenv=GLIBC_TUNABLES"));
	assert_true(has(&v, "--unsetenv=MALLOC_PERTURB_"));
	assert_true(has(&v, "--no-healthcheck"));
	assert_true(has(&v, "--stop-signal=SIGTERM"));
	assert_false(has_prefix(&v, "--entrypoint=/usr/local/bin"));
	/* all of it before the image, which the enforcer's flags follow */
	img = at(&v, "localhost/aisb:x");
	assert_true(img > 0);
	assert_true(at(&v, "--entrypoint=/run/aisb/aisb-enforce") < img);
	assert_true(at(&v, "--no-healthcheck") < img);
	assert_string_equal(v.s[img + 1], "--plan");
	launch_strv_free(&v);

	/* keep-id too: its root, not 1000, and only once */
	ids.mode = LAUNCH_IDS_KEEPID;
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	for (i = 0, n = 0; i < v.n; i++)
		n += strncmp(v.s[i], "--user=", 7) == 0;
	assert_int_equal(n, 1);
	assert_true(has(&v, "--user=0:0"));
	launch_strv_free(&v);

	r.enforcer = NULL;
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	assert_null(v.s);
	r.enforcer = "";
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	r.enforcer = "/b,ro=false/aisb-enforce";	/* --mount's separator */
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	assert_null(v.s);
}

/*
 * KILL in every mode, for the enforcer that stays as the command's
 * parent; podman's own --timeout as a backstop past aisb's.
 */
static void
test_argv_stopping(void **state)
{
	struct launch_opts	 o;
	struct launch_run	 r;
	struct launch_strv	 v;
	char			*cmd[] = { (char *)"true", NULL };

	(void)state;
	fill(&o, &r, cmd);
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--cap-add=NET_ADMIN,SETUID,SETGID,SETPCAP,KILL"));
	assert_true(has(&v, "--init"));
	assert_true(has(&v, "--pull=never"));
	assert_false(has_prefix(&v, "--timeout"));
	launch_strv_free(&v);

	o.net = LAUNCH_NET_DIRECT;
	o.timeout = 3;
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--cap-add=NET_ADMIN,SETUID,SETGID,SETPCAP,KILL,"
	    "NET_BIND_SERVICE"));
	assert_true(has(&v, "--timeout=13"));
	launch_strv_free(&v);
}

/*
 * Two first sessions at once on a machine without the aisb user: both
 * resolve, to the same range.  Runs in a mount namespace of its own over a
 * copy of /etc without that user, so the host's /etc is never touched.
 * Root only (useradd, mounts).
 */
static int
race_child(void)
{
	char		 dir[] = "/tmp/aisb-ids-race-XXXXXX", cmd[1024], etc[64];
	char		 ws[96];
	int		 go[2], i, st, rc = 0;
	pid_t		 kid[2];
	unsigned long	 base[2];
	int		 res[2][2];

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mkdtemp(dir) == NULL)
		return 10;
	snprintf(etc, sizeof(etc), "%s/etc", dir);
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	/*
	 * The test's own folder; no outside input in the command.  Lock
	 * files another program held while /etc was copied (an e2e test's
	 * useradd) would stay held in the copy: removed.
	 */
	snprintf(cmd, sizeof(cmd), "cp -a /etc %s && mkdir %s && "
	    "rm -f %s/*.lock %s/.pwd.lock && "
	    "sed -i '/^aisb:/d' %s/passwd %s/group %s/shadow %s/gshadow "
	    "%s/subuid %s/subgid 2>/dev/null; true", etc, ws, etc, etc, etc,
	    etc, etc, etc, etc, etc);
	if (system(cmd) != 0 || mount(etc, "/etc", NULL, MS_BIND, NULL) == -1)
		return 11;
	if (pipe(go) == -1 || pipe(res[0]) == -1 || pipe(res[1]) == -1)
		return 12;
	for (i = 0; i < 2; i++) {
		if ((kid[i] = fork()) == 0) {
			struct launch_ids	 ids;
			char			 err[512], c;
			unsigned long		 b = 0;

			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(13);
			if (launch_ids_resolve(&ids, 0, ws, 1, err,
			    sizeof(err)) == 0)
				b = ids.uid_base;
			else
				fprintf(stderr, "resolve: %s\n", err);
			if (write(res[i][1], &b, sizeof(b)) != sizeof(b))
				_exit(14);
			_exit(b != 0 ? 0 : 15);
		}
	}
	close(go[0]);
	close(go[1]);		/* both start now */
	for (i = 0; i < 2; i++) {
		if (waitpid(kid[i], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = 16;
		if (read(res[i][0], &base[i], sizeof(base[i])) !=
		    sizeof(base[i]))
			rc = 17;
	}
	if (rc == 0 && base[0] != base[1])
		rc = 18;
	/* one user, not one per session */
	snprintf(cmd, sizeof(cmd), "test \"$(grep -c '^aisb:' %s/passwd)\" = 1 "
	    "&& test \"$(grep -c '^aisb:' %s/subuid)\" = 1 && "
	    "test \"$(grep -c '^aisb:' %s/subgid)\" = 1", etc, etc, etc);
	if (rc == 0 && system(cmd) != 0)
		rc = 19;
	(void)umount2("/etc", MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)system(cmd);
	return rc;
}

/*
 * --record, direct mode: the session's record folder mounted where the
 * plan's record line points, and only then; a recording plan without
 * the folder is refused here rather than at 77 inside.
 */
static void
test_argv_record(void **state)
{
	static const char	 yaml[] = "version: 1\nallow:\n"
				    "  - host: example.com\n    ports: [443]\n";
	struct launch_opts	 o;
	struct launch_run	 r;
	struct launch_strv	 v;
	struct policy		*p = NULL;
	char			*cmd[] = { (char *)"true", NULL };
	char			*plan = NULL, err[256];

	(void)state;
	fill(&o, &r, cmd);
	o.record = 1;
	o.record_max = UINT64_C(1) << 30;	/* --record-max's default */
	o.net = LAUNCH_NET_DIRECT;
	r.recorddir = "/s/record";
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_true(has(&v, "--volume=/s/record:/run/aisb/record:rw"));
	launch_strv_free(&v);
	r.recorddir = NULL;
	assert_int_equal(launch_podman_argv(&r, &v), -1);
	assert_null(v.s);
	/* gate mode: the gate records, the container mounts nothing */
	o.net = LAUNCH_NET_GATE;
	r.recorddir = "/s/record";
	assert_int_equal(launch_podman_argv(&r, &v), 0);
	assert_false(has_prefix(&v, "--volume=/s/record"));
	launch_strv_free(&v);

	assert_int_equal(policy_load_buffer("t.yaml", yaml, sizeof(yaml) - 1,
	    &p, NULL), 0);
	o.net = LAUNCH_NET_DIRECT;
	assert_int_equal(launch_plan_text(&o, p, NULL, "10.0.2.2", 0, "10.0.2.3",
	    &plan, err, sizeof(err)), 0);
	assert_non_null(strstr(plan, "\nrecord /run/aisb/record/capture.pcapng "
	    "1073741824\n"));
	free(plan);
	o.record = 0;
	assert_int_equal(launch_plan_text(&o, p, NULL, "10.0.2.2", 0, "10.0.2.3",
	    &plan, err, sizeof(err)), 0);
	assert_null(strstr(plan, "record"));
	free(plan);
	/* gate mode: the transparent ports, every port of the synthetic range */
	o.net = LAUNCH_NET_GATE;
	o.transparent = 1;
	o.ntports = 2;
	o.tports[0] = 80;
	o.tports[1] = 443;
	assert_int_equal(launch_plan_text(&o, p, NULL, "10.0.2.2", 4000, "10.0.2.3",
	    &plan, err, sizeof(err)), 0);
	assert_non_null(strstr(plan, "\ngate 10.0.2.2 4000\ntransparent 80,443\n"
	    "transparent-range 198.18.0.0/15\ndns-gate\n"));
	free(plan);
	o.transparent = 0;
	assert_int_equal(launch_plan_text(&o, p, NULL, "10.0.2.2", 4000, "10.0.2.3",
	    &plan, err, sizeof(err)), 0);
	assert_null(strstr(plan, "transparent"));
	free(plan);
	policy_free(p);
}

static void
test_resolve_race(void **state)
{
	pid_t	 pid;
	int	 st;

	(void)state;
	if (geteuid() != 0 || access("/usr/sbin/useradd", X_OK) != 0)
		skip();
	if ((pid = fork()) == 0)
		_exit(race_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subid_find),
		cmocka_unit_test(test_argv_mappings),
		cmocka_unit_test(test_argv_seccomp),
		cmocka_unit_test(test_argv_enforcer),
		cmocka_unit_test(test_argv_stopping),
		cmocka_unit_test(test_argv_record),
		cmocka_unit_test(test_resolve_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
