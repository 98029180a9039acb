/*
 * Session files: folder 0700, env and token files 0600 written once,
 * proxy variables in every spelling, --env entries, nothing written twice.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/gates.h"
#include "host/proc.h"
#include "session/folder.h"
#include "session/writer.h"

static char	 dir[] = "/tmp/aisb-sess-XXXXXX";
static char	 envstate[300];

static char *
slurp(const char *path)
{
	static char	 buf[8192];
	FILE		*f = fopen(path, "r");
	size_t		 n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
cleanup_tree(const char *d)
{
	char	 cmd[600];

	/* the test's own temporary folder; no user input involved */
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static void
test_session_files(void **state)
{
	struct launch_session	 s;
	struct launch_opts	 o;
	struct launch_item	 items[3];
	struct stat		 st;
	char			 path[PATH_MAX], err[512], *text;
	char			*envp[] = { envstate, (char *)"TOKEN=t0ken",
	    (char *)"HOME=/root", NULL };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(envstate, sizeof(envstate), "XDG_STATE_HOME=%s/state", dir);
	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	assert_int_equal(strlen(s.id), LAUNCH_ID_HEX);
	assert_int_equal(strlen(s.secret), LAUNCH_SECRET_HEX);
	assert_non_null(strstr(s.dir, "/state/aisb/sessions/"));
	assert_int_equal(stat(s.dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	memset(&o, 0, sizeof(o));
	items[0].text = (char *)"TOKEN";
	items[1].text = (char *)"MODE=fast";
	items[2].text = (char *)"ABSENT?";
	o.env = items;
	o.nenv = 3;
	assert_int_equal(launch_env_file(&s, &o, envp,
	    "http://u:p@10.0.2.2:3128", NULL, path, sizeof(path), err,
	    sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = slurp(path);
	assert_non_null(strstr(text, "HTTP_PROXY=http://u:p@10.0.2.2:3128\n"));
	assert_non_null(strstr(text, "https_proxy=http://u:p@10.0.2.2:3128\n"));
	assert_non_null(strstr(text, "NO_PROXY=localhost,127.0.0.1,::1\n"));
	assert_non_null(strstr(text, "\nTOKEN=t0ken\n"));
	assert_non_null(strstr(text, "\nMODE=fast\n"));
	assert_null(strstr(text, "ABSENT"));
	assert_null(strstr(text, "HOME="));	/* deny by default */

	/* written once: a second env file is refused, not overwritten */
	assert_int_equal(launch_env_file(&s, &o, envp, NULL, NULL, path,
	    sizeof(path), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "File exists"));

	assert_int_equal(launch_token_file(&s, path, sizeof(path), err,
	    sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = slurp(path);
	assert_int_equal(strncmp(text, "session-", 8), 0);
	assert_non_null(strstr(text, s.secret));

	launch_session_wipe(&s);
	assert_int_equal(s.secret[0], '\0');
	cleanup_tree(dir);
}

static void
test_env_refusals(void **state)
{
	struct launch_session	 s;
	struct launch_opts	 o;
	struct launch_item	 items[1];
	char			 path[PATH_MAX], err[512];
	char			 d2[] = "/tmp/aisb-sess-XXXXXX", e2[300];
	char			*envp[] = { e2, (char *)"ML=a\nb", NULL };

	(void)state;
	assert_non_null(mkdtemp(d2));
	snprintf(e2, sizeof(e2), "XDG_STATE_HOME=%s", d2);
	assert_int_equal(launch_session_new(&s, envp, err, sizeof(err)), 0);
	memset(&o, 0, sizeof(o));
	o.env = items;
	o.nenv = 1;
	items[0].text = (char *)"ML";
	assert_int_equal(launch_env_file(&s, &o, envp, NULL, NULL, path,
	    sizeof(path), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line break"));
	items[0].text = (char *)"GONE";
	assert_int_equal(launch_env_file(&s, &o, envp, NULL, NULL, path,
	    sizeof(path), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not set"));
	/* a bad state folder is a clear error */
	{
		char	*bad[] = { (char *)"HOME=relative", NULL };

		assert_int_equal(launch_session_new(&s, bad, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "state folder"));
	}
	cleanup_tree(d2);
}

/* The named gate's credential file: one session out, another in. */
static void
test_tokens_edit(void **state)
{
	const char	*in = "# comment\nnobody:aaa\nsession-0123:s1\n"
	    "session-01234:s2\n\nsession-0123x:s3";
	char		 out[256];
	ssize_t		 n;

	n = launch_tokens_edit(in, "session-0123", "session-9:s9", out,
	    sizeof(out));
	assert_string_equal(out, "# comment\nnobody:aaa\nsession-01234:s2\n"
	    "session-0123x:s3\nsession-9:s9\n");
	assert_int_equal(n, (ssize_t)strlen(out));
	/* nothing to drop, nothing to add: lines normalised, blanks out */
	assert_true(launch_tokens_edit(in, NULL, NULL, out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "session-0123:s1\n"));
	assert_null(strstr(out, "\n\n"));
	/* too small: refused, not cut */
	assert_int_equal(launch_tokens_edit(in, NULL, "x:y", out, 20), -1);
	assert_int_equal(launch_tokens_edit("", NULL, NULL, out, 1), 0);
	assert_string_equal(out, "");
}

static void
test_gate_names(void **state)
{
	assert_true(launch_gate_name_ok("ci"));
	assert_true(launch_gate_name_ok("team-a_2"));
	assert_true(launch_gate_name_ok("0123456789abcdef0123456789abcdef"));
	assert_false(launch_gate_name_ok("0123456789abcdef0123456789abcdefx"));
	assert_false(launch_gate_name_ok(""));
	assert_false(launch_gate_name_ok("-x"));
	assert_false(launch_gate_name_ok("_x"));
	assert_false(launch_gate_name_ok("Team"));
	assert_false(launch_gate_name_ok("a/b"));
	assert_false(launch_gate_name_ok(".."));
	assert_false(launch_gate_name_ok("a b"));
}

/*
 * launch_spawn hands the child descriptors 0-2 and the one it names, and
 * nothing else, however high: a descriptor above 1024 (the old loop's
 * bound) must not reach a gate.
 */
static void
test_spawn_closes(void **state)
{
	struct rlimit	 rl;
	char		*argv[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"test -e /proc/self/fd/1500 && exit 3; "
	    "test -e /proc/self/fd/3 || exit 4; exit 0", NULL };
	int		 fds[3] = { -1, -1, -1 }, p[2], status;
	pid_t		 pid;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 1500)
		skip();
	if (rl.rlim_cur <= 1500) {
		rl.rlim_cur = 1501;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	assert_int_equal(pipe(p), 0);
	assert_int_equal(dup2(p[0], 1500), 1500);	/* not close-on-exec */
	pid = launch_spawn(argv, fds, p[1], 3);
	assert_true(pid > 0);
	assert_int_equal(launch_wait(pid, &status), 0);
	assert_int_equal(launch_exit_code(status), 0);
	close(1500);
	close(p[0]);
	close(p[1]);
}

/* A take of ws's writer lock in a process of uid (-1: this one's): 0,
 * 1 (refused, with want in the error), or 2 (another answer). */
static int
take_in_child(const char *ws, uid_t uid, const char *want)
{
	char	 err[1024];
	pid_t	 pid;
	int	 fd, rc, status;

	if ((pid = fork()) == 0) {
		if (uid != (uid_t)-1 && (setgid(uid) == -1 || setuid(uid) == -1))
			_exit(3);
		rc = launch_writer_take(ws, "bbbbbbbbbbbbbbbbbbbbbbbb", &fd, err,
		    sizeof(err));
		if (rc == 1 && strstr(err, want) == NULL) {
			fprintf(stderr, "refused, but: %s\n", err);
			_exit(2);
		}
		if (rc == 0)
			launch_writer_release(ws, &fd);
		_exit(rc == 0 ? 0 : rc == 1 ? 1 : 2);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

/*
 * One writer per workspace: a second session (another process) is refused
 * naming the first and the way out; once released the workspace is free;
 * a session of another user is refused too (the lock is on the folder
 * itself), named as another user's.
 */
static void
test_writer(void **state)
{
	char	 ws[] = "/tmp/aisb-ws-XXXXXX", st[] = "/tmp/aisb-wst-XXXXXX";
	char	 err[1024], *old;
	int	 fd, fd2;

	(void)state;
	assert_non_null(mkdtemp(ws));
	assert_non_null(mkdtemp(st));
	assert_int_equal(chmod(ws, 0755), 0);
	old = getenv("XDG_STATE_HOME") != NULL ?
	    strdup(getenv("XDG_STATE_HOME")) : NULL;
	setenv("XDG_STATE_HOME", st, 1);
	assert_int_equal(launch_writer_take(ws, "aaaaaaaaaaaaaaaaaaaaaaaa", &fd,
	    err, sizeof(err)), 0);
	assert_int_equal(take_in_child(ws, (uid_t)-1,
	    "is being written by session aaaaaaaaaaaaaaaaaaaaaaaa"), 1);
	assert_int_equal(take_in_child(ws, (uid_t)-1, "--snapshot"), 1);
	/* the same process, another take: flock is per open file */
	assert_int_equal(launch_writer_take(ws, "cccccccccccccccccccccccc", &fd2,
	    err, sizeof(err)), 1);
	assert_int_equal(fd2, -1);
	if (geteuid() == 0)
		assert_int_equal(take_in_child(ws, 65534,
		    "a session of another user"), 1);
	launch_writer_release(ws, &fd);
	assert_int_equal(fd, -1);
	assert_int_equal(take_in_child(ws, (uid_t)-1, ""), 0);
	if (old != NULL)
		setenv("XDG_STATE_HOME", old, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(old);
	assert_int_equal(rmdir(ws), 0);
	/* what the takes left: the folders of the (removed) names */
	snprintf(err, sizeof(err), "%s/aisb/writers", st);
	(void)rmdir(err);
	snprintf(err, sizeof(err), "%s/aisb", st);
	(void)rmdir(err);
	assert_int_equal(rmdir(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_files),
		cmocka_unit_test(test_env_refusals),
		cmocka_unit_test(test_tokens_edit),
		cmocka_unit_test(test_gate_names),
		cmocka_unit_test(test_spawn_closes),
		cmocka_unit_test(test_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
