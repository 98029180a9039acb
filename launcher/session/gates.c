/*
 * Named gates (gates.h).
 *
 * $XDG_STATE_HOME/aisb/gates/NAME/ (0700) holds:
 *	lock		flock(2)ed around every change below
 *	state		"supervisor PID START", "gate PID START", "port N",
 *			"idle SECONDS", "policy PATH"; written once at start
 *	tokens		the gate's credential file (0600): one line per
 *			attached session, "session-<id>:<secret>"
 *	sessions/<id>	"PID START" of the launcher of an attached session
 *	control		the gate's control socket (reload, status)
 *	gate-ca.pem	the certificate of the gate's CA (--ca-out): what
 *			attached sessions trust for inspected hosts
 *	audit.jsonl	the gate's decisions, every session's
 *	gate.log	the gate's and the supervisor's log
 *
 * The supervisor is `aisb gate up` forked into its own session.  It
 * starts aisb-gate as its child, and once a second takes back the
 * credentials of sessions whose launcher is gone (killed, say) and
 * counts the live ones; after --idle seconds with none, or on SIGTERM
 * (`aisb gate down`), it stops the gate and removes the run-time files.
 * The audit log and gate.log stay for review.  A process is named by pid
 * and start time, so a recycled pid is never taken for a live session.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exitcode.h"
#include "file.h"
#include "host/paths.h"
#include "session/gateproc.h"
#include "session/ids.h"
#include "session/gates.h"
#include "session/gates-int.h"
#include "session/secrets.h"
#include "host/proc.h"
#include "session/folder.h"

#define POLICY_COPY_MAX	(1024 * 1024)	/* the policy library's own bound */

#define STATE_MAX		(PATH_MAX + 256)
#define CONTROL_TIMEOUT_MS	5000
#define GATES_REAP_MAX		64	/* gone sessions withdrawn a call */
#define GATES_REAP_SAY_S	60	/* a failed withdrawal told again after */
#define AUDIT_LINE		16384	/* longer lines are not copied */

extern char	**environ;


int
launch_gate_name_ok(const char *s)
{
	size_t	 i;

	if (s == NULL || s[0] == '\0' || strlen(s) > LAUNCH_GATE_NAME_MAX ||
	    s[0] == '-' || s[0] == '_')
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

int
gates_dir(const char *name, char *out, size_t len, char *err, size_t errlen)
{
	char	 base[PATH_MAX];
	int	 n;

	if (!launch_gate_name_ok(name)) {
		snprintf(err, errlen, "bad gate name \"%.40s\": 1-%d of a-z, "
		    "0-9, '-' and '_', starting with a letter or digit", name,
		    LAUNCH_GATE_NAME_MAX);
		return -1;
	}
	if (launch_state_dir(environ, base, sizeof(base)) == -1) {
		snprintf(err, errlen, "cannot find a state folder: set "
		    "XDG_STATE_HOME or HOME to an absolute path");
		return -1;
	}
	n = snprintf(out, len, "%s/gates/%s", base, name);
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "state folder path too long");
		return -1;
	}
	return 0;
}

/*
 * The group of the user the gate drops to (ids.h), which reads the
 * credential file and the policy copy on reload: (gid_t)-1 when aisb is
 * not root and the gate runs as the invoking user.
 */
gid_t
gates_group(void)
{
	static int	 known;
	static gid_t	 gid = (gid_t)-1;
	char		 name[64], err[256];

	if (!known && launch_gate_user(name, sizeof(name), &gid, err,
	    sizeof(err)) == -1)
		gid = (gid_t)-1;
	known = 1;
	return gid;
}

/* Replaces dir/name by data (file_write_atomic). */
static int
write_atomic(const char *dir, const char *name, const char *data,
    size_t len, mode_t mode, gid_t group)
{
	char	 dst[PATH_MAX];

	if (file_path_join(dst, sizeof(dst), dir, name) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return file_write_atomic(dst, data, len, mode, group);
}

int
gates_lock(const char *dir)
{
	char	 path[PATH_MAX];
	int	 fd;

	if (file_path_join(path, sizeof(path), dir, "lock") == -1 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1)
		return -1;
	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

int
gates_state_read(const char *dir, struct gates_state *st)
{
	char	 path[PATH_MAX], err[64], *buf, *line, *save = NULL;
	size_t	 len;
	long	 pid;

	memset(st, 0, sizeof(*st));
	if (file_path_join(path, sizeof(path), dir, "state") == -1 ||
	    (buf = file_read_bounded(path, STATE_MAX, &len, err,
	    sizeof(err))) == NULL)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "supervisor %ld %llu", &pid,
		    &st->sup_start) == 2)
			st->sup = (pid_t)pid;
		else if (sscanf(line, "gate %ld %llu", &pid,
		    &st->gate_start) == 2)
			st->gate = (pid_t)pid;
		else if (sscanf(line, "port %u", &st->port) == 1 ||
		    sscanf(line, "idle %u", &st->idle) == 1 ||
		    sscanf(line, "ask %u", &st->ask) == 1)
			;
		else if (strncmp(line, "policy ", 7) == 0)
			snprintf(st->policy, sizeof(st->policy), "%s",
			    line + 7);
	}
	free(buf);
	return st->sup > 0 && st->gate > 0 && st->port > 0 &&
	    st->port < 65536 && st->policy[0] == '/' ? 0 : -1;
}

int
gates_state_up(const struct gates_state *st)
{
	return launch_proc_alive(st->sup, st->sup_start) &&
	    launch_proc_alive(st->gate, st->gate_start);
}

ssize_t
launch_tokens_edit(const char *in, const char *drop_session, const char *add,
    char *out, size_t outlen)
{
	size_t	 off = 0, dl = drop_session ? strlen(drop_session) : 0, n;
	const char *line;

	for (line = in; *line != '\0'; line += n + (line[n] == '\n')) {
		n = strcspn(line, "\n");
		if (n == 0)
			continue;
		if (dl > 0 && n > dl && strncmp(line, drop_session, dl) == 0 &&
		    line[dl] == ':')
			continue;
		if (off + n + 2 > outlen)
			return -1;
		memcpy(out + off, line, n);
		off += n;
		out[off++] = '\n';
	}
	if (add != NULL) {
		n = strlen(add);
		if (off + n + 2 > outlen)
			return -1;
		memcpy(out + off, add, n);
		off += n;
		out[off++] = '\n';
	}
	if (off + 1 > outlen)
		return -1;
	out[off] = '\0';
	return (ssize_t)off;
}

/* Rewrites the credential file: one session's line out, another in. */
static int
tokens_update(const char *dir, const char *drop, const char *add)
{
	char	 path[PATH_MAX], err[64], *in = NULL, *out;
	size_t	 inlen = 0;
	ssize_t	 n;
	int	 rc = -1;

	if ((out = malloc(LAUNCH_TOKENS_MAX)) == NULL ||
	    file_path_join(path, sizeof(path), dir, "tokens") == -1 ||
	    (in = file_read_bounded(path, LAUNCH_TOKENS_MAX - 1, &inlen, err,
	    sizeof(err))) == NULL)
		goto out;
	if ((n = launch_tokens_edit(in, drop, add, out,
	    LAUNCH_TOKENS_MAX)) == -1) {
		errno = EFBIG;
		goto out;
	}
	rc = write_atomic(dir, "tokens", out, (size_t)n, 0640, gates_group());
out:
	if (in != NULL)
		explicit_bzero(in, inlen);
	if (out != NULL)
		explicit_bzero(out, LAUNCH_TOKENS_MAX);
	free(in);
	free(out);
	return rc;
}

int
gates_control_open(const char *dir, const char *cmd)
{
	struct sockaddr_un	 sun;
	int			 fd, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (file_path_join(sun.sun_path, sizeof(sun.sun_path), dir,
	    "control") == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    file_write_all(fd, cmd, strlen(cmd)) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * One command on the gate's control socket; its answer (up to len - 1
 * bytes, the first line for all but status) into resp.  0 or -1.
 */
int
gates_control(const char *dir, const char *cmd, char *resp, size_t len,
    int whole)
{
	struct pollfd		 pfd;
	size_t			 off = 0;
	ssize_t			 n;
	int			 fd, rc = -1;

	if ((fd = gates_control_open(dir, cmd)) == -1)
		return -1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (off < len - 1) {
		if (poll(&pfd, 1, CONTROL_TIMEOUT_MS) <= 0) {
			errno = ETIMEDOUT;
			goto out;
		}
		if ((n = read(fd, resp + off, len - 1 - off)) <= 0)
			break;
		off += (size_t)n;
		if (!whole && memchr(resp, '\n', off) != NULL)
			break;
	}
	resp[off] = '\0';
	rc = off > 0 ? 0 : -1;
out:
	close(fd);
	return rc;
}

/*
 * The gate enforces a copy of its policy in its own folder: once it has
 * dropped to its unprivileged user it reads files by name in folders it
 * may search (file_dir_open), and the user's policy may sit in a folder
 * only its owner can (~/.config/aisb).  The copy is made at gate up and
 * again before every reload, so edits still reach the gate.  0 or -1.
 */
static int
policy_copy(const char *dir, const char *policy, char *err, size_t errlen)
{
	char	*text;
	size_t	 len;
	int	 rc;

	if ((text = file_read_bounded(policy, POLICY_COPY_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	if ((rc = write_atomic(dir, "policy.yaml", text, len, 0640,
	    gates_group())) == -1)
		snprintf(err, errlen, "%s/policy.yaml: %s", dir,
		    strerror(errno));
	free(text);
	return rc;
}

/*
 * Has the gate reread its token file and the policy?  0: both are the
 * gate's now; 1: the token file's credentials are, the policy was
 * refused (the gate keeps its old one); -1: the credentials may not be
 * (no answer, or the gate kept its old ones), why in err.
 */
static int
gate_reload(const char *dir, char *err, size_t errlen)
{
	struct gates_state	 st;
	char			 resp[128], perr[512];

	if (gates_state_read(dir, &st) == 0 && policy_copy(dir, st.policy,
	    perr, sizeof(perr)) == -1)
		fprintf(stderr, "aisb: the gate keeps its last copy of the "
		    "policy: %s\n", perr);
	if (gates_control(dir, "reload\n", resp, sizeof(resp), 0) == -1) {
		snprintf(err, errlen, "no answer on its control socket (%s)",
		    strerror(errno));
		return -1;
	}
	if (strncmp(resp, "{\"reload\":\"ok\"", 14) == 0 &&
	    strstr(resp, "\"credentials\":\"kept\"") == NULL)
		return 0;
	if (strstr(resp, "\"credentials\":\"applied\"") != NULL) {
		snprintf(err, errlen, "it refused the policy (its gate.log "
		    "says why)");
		return 1;
	}
	snprintf(err, errlen, "it kept its old credentials (its gate.log "
	    "says why)");
	return -1;
}

/*
 * Takes back the credentials of sessions whose launcher is gone; returns
 * how many are attached.  Called with the lock held, every second by the
 * supervisor.  A session's file goes only once the gate has reread the
 * token file without its credential: until then each call tries again
 * (a gate that kept the old file would let the session's container,
 * which may outlive its launcher, on).
 */
int
gates_reap(const char *dir)
{
	static time_t	 said;		/* the last failure told, this process */
	char		 sdir[PATH_MAX], path[PATH_MAX], drop[64], err[256];
	char		 gone[GATES_REAP_MAX][LAUNCH_ID_HEX + 1];
	char		*text;
	struct dirent	*de;
	DIR		*d;
	long		 pid;
	unsigned long long start;
	size_t		 len, n = 0, i;
	int		 live = 0;

	if (file_path_join(sdir, sizeof(sdir), dir, "sessions") == -1 ||
	    (d = opendir(sdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) != LAUNCH_ID_HEX ||
		    file_path_join(path, sizeof(path), sdir, de->d_name) == -1)
			continue;
		if ((text = file_read_bounded(path, 64, &len, err,
		    sizeof(err))) != NULL &&
		    sscanf(text, "%ld %llu", &pid, &start) == 2 &&
		    launch_proc_alive((pid_t)pid, start)) {
			free(text);
			live++;
			continue;
		}
		free(text);
		if (n == GATES_REAP_MAX)	/* the rest on the next call */
			continue;
		/* "session-ID"; d_name is LAUNCH_ID_HEX long (checked
		 * above), which drop holds */
		len = strlen("session-");
		memcpy(drop, "session-", len);
		memcpy(drop + len, de->d_name, LAUNCH_ID_HEX);
		drop[len + LAUNCH_ID_HEX] = '\0';
		if (tokens_update(dir, drop, NULL) == 0) {
			memcpy(gone[n], de->d_name, LAUNCH_ID_HEX + 1);
			n++;
		}
	}
	closedir(d);
	if (n == 0)
		return live;
	if (gate_reload(dir, err, sizeof(err)) == -1) {
		if (time(NULL) - said >= GATES_REAP_SAY_S) {
			fprintf(stderr, "aisb gate: %zu gone session(s) may "
			    "still use their credential: the gate did not "
			    "reread its token file: %s; trying again every "
			    "second\n", n, err);
			said = time(NULL);
		}
		return live;
	}
	said = 0;
	for (i = 0; i < n; i++) {
		if (file_path_join(path, sizeof(path), sdir, gone[i]) == 0)
			(void)unlink(path);
		fprintf(stderr, "aisb gate: session %s is gone; its "
		    "credential is withdrawn\n", gone[i]);
	}
	return live;
}

/* Removes the run-time files; the audit log and gate.log stay. */
void
gates_remove_runtime(const char *dir)
{
	static const char *const files[] = { "tokens", "state", "control",
	    "tokens.tmp", "state.tmp", "policy.yaml", "policy.yaml.tmp",
	    LAUNCH_GATE_CA };
	char		 path[PATH_MAX], sdir[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	size_t		 i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (file_path_join(path, sizeof(path), dir, files[i]) == 0)
			(void)unlink(path);
	if (file_path_join(sdir, sizeof(sdir), dir, "sessions") == 0 &&
	    (d = opendir(sdir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' &&
			    file_path_join(path, sizeof(path), sdir,
			    de->d_name) == 0)
				(void)unlink(path);
		closedir(d);
		(void)rmdir(sdir);
	}
}

/*
 * The gate of folder dir, with extra flags, started as the supervisor's
 * child (gateproc.h).  Its CA is made at start and its certificate
 * written whether or not the policy inspects yet (an edited policy may,
 * on a reload): what every attached session's clients trust (run.c),
 * since the key never leaves the gate.  The test hook as for a
 * session's own gate.  0, or -1 with err.
 */
static int
supervisor_spawn(struct launch_gate *g, const char *dir,
    const char *const *extra, char *err, size_t errlen)
{
	const char		*upca = getenv(LAUNCH_TEST_UPSTREAM_CA_ENV);
	char			 tok[PATH_MAX], audit[PATH_MAX], glog[PATH_MAX];
	char			 ctl[PATH_MAX], pcopy[PATH_MAX], caout[PATH_MAX];
	struct launch_gate_args	 a;

	if (file_path_join(tok, sizeof(tok), dir, "tokens") == -1 ||
	    file_path_join(audit, sizeof(audit), dir, "audit.jsonl") == -1 ||
	    file_path_join(glog, sizeof(glog), dir, "gate.log") == -1 ||
	    file_path_join(ctl, sizeof(ctl), dir, "control") == -1 ||
	    file_path_join(pcopy, sizeof(pcopy), dir, "policy.yaml") == -1 ||
	    file_path_join(caout, sizeof(caout), dir, LAUNCH_GATE_CA) == -1) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.policy = pcopy;
	a.tokenfile = tok;
	a.auditfile = audit;
	a.logfile = glog;
	a.control = ctl;
	a.extra = extra;
	a.secrets_fd = -1;
	a.ca_out = caout;
	a.upstream_ca = upca != NULL && upca[0] == '/' ? upca : NULL;
	return launch_gate_spawn_with(g, &a, err, errlen);
}

/* The supervisor: never returns. */
static void __attribute__((noreturn))
supervisor(const char *dir, const char *policy, unsigned idle, int closes,
    unsigned ask, int ready)
{
	const char		*extra[4] = { NULL };
	char			 asks[16];
	struct launch_gate	 g;
	sigset_t		 set;
	siginfo_t		 si;
	struct timespec		 ts = { 1, 0 };
	char			 tok[PATH_MAX], audit[PATH_MAX], glog[PATH_MAX];
	char			 ctl[PATH_MAX], st[STATE_MAX], err[512];
	char			 pcopy[PATH_MAX];
	char			 secret[LAUNCH_SECRET_HEX + 1], line[160];
	time_t			 idle_since = time(NULL);
	int			 n, status, fd, lockfd, sig;

	(void)setsid();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		_exit(EXIT_ENFORCE);
	if (file_path_join(tok, sizeof(tok), dir, "tokens") == -1 ||
	    file_path_join(audit, sizeof(audit), dir, "audit.jsonl") == -1 ||
	    file_path_join(glog, sizeof(glog), dir, "gate.log") == -1 ||
	    file_path_join(ctl, sizeof(ctl), dir, "control") == -1 ||
	    file_path_join(pcopy, sizeof(pcopy), dir, "policy.yaml") == -1)
		_exit(EXIT_ENFORCE);
	/*
	 * The supervisor must let go of the terminal and of whatever waits
	 * on `aisb gate up`'s output: its own descriptors or no supervisor.
	 */
	if ((fd = open(glog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || dup2(fd, STDERR_FILENO) == -1) {
		dprintf(ready, "%s: %s\n", glog, strerror(errno));
		_exit(EXIT_ENFORCE);
	}
	close(fd);
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(fd, STDIN_FILENO) == -1 || dup2(fd, STDOUT_FILENO) == -1) {
		dprintf(ready, "/dev/null: %s\n", strerror(errno));
		_exit(EXIT_ENFORCE);
	}
	close(fd);
	/*
	 * The gate refuses an empty credential file: until a session
	 * attaches it holds one whose secret is thrown away at once.
	 */
	if (launch_random_hex(secret, LAUNCH_SECRET_HEX) == -1)
		_exit(EXIT_ENFORCE);
	n = snprintf(line, sizeof(line), "# sessions add and remove their "
	    "lines; this one nobody holds\nnobody:%s\n", secret);
	explicit_bzero(secret, sizeof(secret));
	if (write_atomic(dir, "tokens", line, (size_t)n, 0640, gates_group()) == -1) {
		explicit_bzero(line, sizeof(line));
		dprintf(ready, "%s: %s\n", tok, strerror(errno));
		_exit(EXIT_ENFORCE);
	}
	explicit_bzero(line, sizeof(line));
	(void)unlink(ctl);
	if (policy_copy(dir, policy, err, sizeof(err)) == -1) {
		dprintf(ready, "%s\n", err);
		gates_remove_runtime(dir);
		_exit(EXIT_ENFORCE);
	}
	/* its flags: what gate up said (cli.c), --ask its option's */
	n = 0;
	if (closes)
		extra[n++] = "--reload-closes";
	if (ask > 0) {
		snprintf(asks, sizeof(asks), "%u", ask);
		extra[n++] = "--ask";
		extra[n++] = asks;
	}
	if (supervisor_spawn(&g, dir, extra, err, sizeof(err)) == -1 ||
	    launch_gate_ready(&g, err, sizeof(err)) == -1) {
		dprintf(ready, "%s\n", err);
		gates_remove_runtime(dir);
		_exit(EXIT_ENFORCE);
	}
	n = snprintf(st, sizeof(st), "supervisor %ld %llu\ngate %ld %llu\n"
	    "port %u\nidle %u\nask %u\npolicy %s\n", (long)getpid(),
	    launch_proc_start(getpid()), (long)g.pid,
	    launch_proc_start(g.pid), g.port, idle, ask, policy);
	if (n < 0 || (size_t)n >= sizeof(st) ||
	    write_atomic(dir, "state", st, (size_t)n, 0600, (gid_t)-1) == -1) {
		dprintf(ready, "%s/state: cannot write it\n", dir);
		launch_gate_stop(&g);
		gates_remove_runtime(dir);
		_exit(EXIT_ENFORCE);
	}
	dprintf(ready, "ok %u\n", g.port);
	close(ready);
	fprintf(stderr, "aisb gate: up on 127.0.0.1:%u, policy %s, reaped "
	    "after %u s without a session%s\n", g.port, policy, idle, closes ?
	    "; a reload closes the connections it denies" : "");

	for (;;) {
		sig = sigtimedwait(&set, &si, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			fprintf(stderr, "aisb gate: stopping (signal %d)\n",
			    sig);
			break;
		}
		if (waitpid(g.pid, &status, WNOHANG) == g.pid) {
			fprintf(stderr, "aisb gate: the gate exited (%d); "
			    "its sessions lose their way out\n",
			    launch_exit_code(status));
			g.pid = -1;
			break;
		}
		if ((lockfd = gates_lock(dir)) == -1)
			continue;
		n = gates_reap(dir);
		close(lockfd);
		if (n > 0)
			idle_since = time(NULL);
		else if (time(NULL) - idle_since >= (time_t)idle) {
			fprintf(stderr, "aisb gate: no session for %u s; "
			    "stopping\n", idle);
			break;
		}
	}
	lockfd = gates_lock(dir);
	launch_gate_stop(&g);
	/* a gate up that found ours dead may have started another since */
	{
		struct gates_state	 now;

		if (gates_state_read(dir, &now) == -1 || now.sup == getpid())
			gates_remove_runtime(dir);
	}
	if (lockfd != -1)
		close(lockfd);
	_exit(0);
}

int
gates_spawn(const char *dir, const char *policy, unsigned idle, int closes,
    unsigned ask, int lockfd, char *msg, size_t msglen)
{
	size_t	 off = 0;
	ssize_t	 n;
	pid_t	 pid;
	int	 p[2], save;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		save = errno;
		close(p[0]);
		close(p[1]);
		errno = save;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		close(lockfd);
		/* a grandchild, so that nobody has to wait for it */
		if ((pid = fork()) != 0)
			_exit(pid == -1 ? EXIT_ENFORCE : 0);
		supervisor(dir, policy, idle, closes, ask, p[1]);
	}
	close(p[1]);
	(void)waitpid(pid, NULL, 0);
	while (off < msglen - 1 &&
	    ((n = read(p[0], msg + off, msglen - 1 - off)) > 0 ||
	    (n == -1 && errno == EINTR)))
		if (n > 0)
			off += (size_t)n;
	close(p[0]);
	msg[off] = '\0';
	return 0;
}

int
launch_gate_policy(const char *name, char *path, size_t len, char *err,
    size_t errlen)
{
	struct gates_state	 st;
	char			 dir[PATH_MAX];

	if (gates_dir(name, dir, sizeof(dir), err, errlen) == -1)
		return -1;
	if (gates_state_read(dir, &st) == -1 || !gates_state_up(&st)) {
		snprintf(err, errlen, "no gate named %s is up; start it with: "
		    "aisb gate up %s", name, name);
		return -1;
	}
	if ((size_t)snprintf(path, len, "%s", st.policy) >= len) {
		snprintf(err, errlen, "policy path too long");
		return -1;
	}
	return 0;
}

int
launch_gate_attach(const char *name, const struct launch_session *s,
    struct launch_shared *sh, char *err, size_t errlen)
{
	struct gates_state	 st;
	struct stat		 sb;
	char			 path[PATH_MAX], sdir[PATH_MAX], line[160], why[256];
	int			 lockfd, n;

	memset(sh, 0, sizeof(*sh));
	if (gates_dir(name, sh->dir, sizeof(sh->dir), err, errlen) == -1)
		return -1;
	snprintf(sh->name, sizeof(sh->name), "%s", name);
	if ((lockfd = gates_lock(sh->dir)) == -1) {
		snprintf(err, errlen, "no gate named %s is up; start it with: "
		    "aisb gate up %s", name, name);
		return -1;
	}
	if (gates_state_read(sh->dir, &st) == -1 || !gates_state_up(&st)) {
		snprintf(err, errlen, "no gate named %s is up; start it with: "
		    "aisb gate up %s", name, name);
		goto fail;
	}
	if (file_path_join(path, sizeof(path), sh->dir, "audit.jsonl") == 0 &&
	    stat(path, &sb) == 0)
		sh->audit_off = sb.st_size;
	/* first the file that lets the reaper find us, then the credential */
	if (file_path_join(sdir, sizeof(sdir), sh->dir, "sessions") == -1 ||
	    launch_mkdirs(sdir) == -1) {
		snprintf(err, errlen, "%s: %s", sdir, strerror(errno));
		goto fail;
	}
	n = snprintf(line, sizeof(line), "%ld %llu\n", (long)getpid(),
	    launch_proc_start(getpid()));
	if (write_atomic(sdir, s->id, line, (size_t)n, 0600, (gid_t)-1) == -1) {
		snprintf(err, errlen, "%s/%s: %s", sdir, s->id,
		    strerror(errno));
		goto fail;
	}
	n = snprintf(line, sizeof(line), "session-%s:%s", s->id, s->secret);
	if (tokens_update(sh->dir, NULL, line) == -1) {
		explicit_bzero(line, sizeof(line));
		snprintf(err, errlen, "gate %s: adding the session's "
		    "credential: %s", name, strerror(errno));
		goto fail_session;
	}
	explicit_bzero(line, sizeof(line));
	sh->attached = 1;
	if (gate_reload(sh->dir, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "gate %s did not take the session's "
		    "credential: %s; is its policy still valid? see "
		    "%s/gate.log", name, why, sh->dir);
		goto fail_session;
	}
	sh->gate_pid = st.gate;
	sh->gate_start = st.gate_start;
	sh->port = (uint16_t)st.port;
	close(lockfd);
	return 0;
fail_session:
	close(lockfd);
	launch_gate_detach(sh, s);
	return -1;
fail:
	close(lockfd);
	return -1;
}

/* The session's lines of the gate's audit log, from where it attached. */
static void
copy_audit(const struct launch_shared *sh, const struct launch_session *s)
{
	char	 src[PATH_MAX], dst[PATH_MAX], want[64], *line;
	FILE	*in, *out;
	int	 fd;

	if (file_path_join(src, sizeof(src), sh->dir, "audit.jsonl") == -1 ||
	    launch_session_path(s, "audit.jsonl", dst, sizeof(dst)) == -1 ||
	    (line = malloc(AUDIT_LINE)) == NULL)
		return;
	snprintf(want, sizeof(want), "\"session\":\"session-%s\"", s->id);
	if ((in = fopen(src, "re")) == NULL) {
		free(line);
		return;
	}
	if ((fd = open(dst, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || (out = fdopen(fd, "a")) == NULL) {
		if (fd != -1)
			close(fd);
		fclose(in);
		free(line);
		return;
	}
	if (fseeko(in, sh->audit_off, SEEK_SET) == 0)
		while (fgets(line, AUDIT_LINE, in) != NULL)
			if (strchr(line, '\n') != NULL &&
			    strstr(line, want) != NULL)
				fputs(line, out);
	fclose(out);
	fclose(in);
	free(line);
}

void
launch_gate_detach(struct launch_shared *sh, const struct launch_session *s)
{
	char	 path[PATH_MAX], drop[64], why[256];
	int	 lockfd;

	if (sh->dir[0] == '\0')
		return;
	if ((lockfd = gates_lock(sh->dir)) != -1) {
		snprintf(drop, sizeof(drop), "session-%s", s->id);
		if (sh->attached && (tokens_update(sh->dir, drop, NULL) == -1 ||
		    gate_reload(sh->dir, why, sizeof(why)) == -1))
			fprintf(stderr, "aisb: gate %s: withdrawing the "
			    "session's credential failed; its supervisor "
			    "retries every second\n", sh->name);
		else if (snprintf(path, sizeof(path), "%s/sessions/%s",
		    sh->dir, s->id) < (int)sizeof(path))
			(void)unlink(path);
		close(lockfd);
	}
	if (sh->attached)
		copy_audit(sh, s);
	sh->attached = 0;
}
