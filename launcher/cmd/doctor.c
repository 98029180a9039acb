/*
 * aisb doctor: can aisb run here, and how?  One line per check, with the
 * fix when it fails.  The checks that matter run for real: a container
 * under the chosen runtime and limits, a connection from inside to a
 * listener on the host's 127.0.0.1, the enforcer loading its table, a file
 * written by uid 1000 through a bind mount.  What is learned lands in
 * struct launch_host_facts so that the launcher adapts instead of failing.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/paths.h"
#include "image/agent.h"
#include "session/spec.h"
#include "host/cache.h"
#include "cmd/cli.h"
#include "session/enforcer.h"
#include "session/ids.h"
#include "host/facts.h"
#include "host/storage.h"
#include "image/image-t.h"
#include "image/image.h"
#include "image/store.h"
#include "session/options.h"
#include "session/podman.h"
#include "session/prepare.h"
#include "host/proc.h"
#include "session/seccomp.h"
#include "cmd/cmd.h"
#include "log.h"

#define PROBE_TIMEOUT_MS	(90 * 1000)	/* one probe container */
#define PROBE_WORD		"aisb-doctor"
#define PROBE_ANSWER		"aisb-doctor-heard"
#define PROBE_ANSWER_WAIT_S	10	/* the container's read -t */
#define PROBE_CONNS		4	/* connections the host's end reads */
#define PASTA_HOST		"169.254.1.2"
#define PASTA_NETWORK		"pasta:--map-host-loopback," PASTA_HOST

/* ---- container checks ------------------------------------------------ */

static int
podman_at_least(const struct launch_host_facts *f, int major, int minor)
{
	int	ma = 0, mi = 0;

	if (sscanf(f->podman_version, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * The image a session started here with no flags would run: the user's
 * and the project's config, AISB_*, the configured agent's recipe; its
 * tag from the same spec and hash as --dry-run's, nothing built and no
 * registry asked.  Its base is the image option's when that is here,
 * else the offline base a session falls back to when the pull fails
 * (the one `aisb image build` builds on): when the first is not built
 * the second is checked, and *offline says so.  When neither is built,
 * the sandbox image of the store that sessions here used last (one of
 * another package set, `aisb --package`'s) stands in: the checks need a
 * userland with a shell, and the enforcer, the runtime, the network and
 * the options come from the host, not the image (docs/enforcer.md,
 * "Nothing of the image"); note says so and names the images there.
 * 0 with the tag in f->image, or -1 with what to do in why.
 */
static int
find_image(struct launch_host_facts *f, int *offline, char *note,
    size_t notelen, char *why, size_t whylen)
{
	struct launch_opts		 o;
	struct launch_run_agent		 ra;
	struct launch_spec_store	*st;
	struct launch_image_spec	 spec;
	char				 tag[LAUNCH_TAG_MAX], err[1024];
	char				 off[LAUNCH_TAG_MAX], list[1024];
	char				 alt[LAUNCH_TAG_MAX];
	int				 rc = -1, k, n = 0;

	memset(&ra, 0, sizeof(ra));
	tag[0] = off[0] = alt[0] = note[0] = '\0';
	*offline = 0;
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (launch_spec_opts(&o, err, sizeof(err)) == -1 ||
	    launch_pick_agent(&o, &ra) == -1 ||
	    launch_session_spec(&o, ra.a, 0, NULL, st, &spec, err,
	    sizeof(err)) == -1) {
		snprintf(why, whylen, "the image a session would run: %s",
		    err);
		goto out;
	}
	if ((k = launch_image_lookup(&spec, tag, sizeof(tag), err,
	    sizeof(err))) == 0) {
		spec.base = NULL;	/* as when its pull fails */
		if ((k = launch_image_lookup(&spec, off, sizeof(off), err,
		    sizeof(err))) == 1)
			*offline = 1;
	}
	if (k == 0 && (n = launch_image_sandboxes(alt, sizeof(alt), list,
	    sizeof(list))) > 0) {
		snprintf(note, notelen, "the image a session here would run%s%s "
		    "is not built; this one is the aisb image sessions here "
		    "used last, of %d: %s", tag[0] != '\0' || off[0] != '\0' ?
		    ", " : "", tag[0] != '\0' ? tag : off, n, list);
		*offline = 0;
		k = 1;
	}
	if (k == -1)
		snprintf(why, whylen, "the image a session would run: %s",
		    err);
	else if (k == 0)
		snprintf(why, whylen, "the image a session here would run%s%s "
		    "is not built%s; run `aisb image build`", tag[0] != '\0' ||
		    off[0] != '\0' ? ", " : "", tag[0] != '\0' ? tag : off,
		    n == -1 ? " (and podman could not list aisb's images)" :
		    ", nor any other aisb image");
	else if (strlen(alt[0] != '\0' ? alt : *offline ? off : tag) >=
	    sizeof(f->image))
		snprintf(why, whylen, "image tag too long");
	else {
		snprintf(f->image, sizeof(f->image), "%s", alt[0] != '\0' ?
		    alt : *offline ? off : tag);
		rc = 0;
	}
out:
	launch_spec_store_free(st);
	free(st);
	launch_run_agent_free(&ra);
	launch_opts_free(&o);
	return rc;
}

/*
 * The common head of every probe container: removed on exit, labelled,
 * never pulled, under the runtime and limits aisb will use.  Writes at
 * most 16 entries into argv (which the caller sizes) and returns the count.
 */
struct probe_args {
	char	rt[48], nofile[64], nproc[64];
};

static size_t
probe_head(const struct launch_host_facts *f, const char *runtime,
    struct probe_args *pa, char **argv)
{
	size_t	a = 0;

	snprintf(pa->nofile, sizeof(pa->nofile), "--ulimit=nofile=%lu:%lu",
	    f->nofile, f->nofile);
	snprintf(pa->nproc, sizeof(pa->nproc), "--ulimit=nproc=%lu:%lu",
	    f->nproc, f->nproc);
	argv[a++] = "podman";
	argv[a++] = "run";
	argv[a++] = "--rm";
	/* Empty when podman info failed: podman's default then. */
	if (runtime[0] != '\0') {
		snprintf(pa->rt, sizeof(pa->rt), "--runtime=%s", runtime);
		argv[a++] = pa->rt;
	}
	argv[a++] = pa->nofile;
	argv[a++] = pa->nproc;
	argv[a++] = "--pull=never";
	argv[a++] = "--label=" LAUNCH_LABEL_MANAGED "=1";
	argv[a++] = "--label=" LAUNCH_LABEL_KIND "=doctor";
	return a;
}

static int
try_runtime(const struct launch_host_facts *f, const char *runtime,
    char *err, size_t errlen)
{
	struct probe_args	 pa;
	char			*argv[24];
	size_t			 a;

	a = probe_head(f, runtime, &pa, argv);
	argv[a++] = "--network=none";
	argv[a++] = "--entrypoint=/bin/true";
	argv[a++] = (char *)f->image;
	argv[a] = NULL;
	return launch_exec(argv, NULL, 0, NULL, 0, PROBE_TIMEOUT_MS, 0, err,
	    errlen) == 0 ? 0 : -1;
}

/*
 * try_runtime(), halving a limit the runtime cannot set until it can: the
 * hard limits podman's own processes (conmon) run with are not ours to
 * read, and a runtime can only lower them.
 */
static int
try_runtime_limits(struct launch_host_facts *f, const char *runtime,
    int *lowered, char *err, size_t errlen)
{
	for (;;) {
		if (try_runtime(f, runtime, err, errlen) == 0)
			return 0;
		if (strstr(err, "rlimit type 6") != NULL &&
		    f->nproc / 2 >= LAUNCH_ULIMIT_MIN)
			f->nproc /= 2;
		else if (strstr(err, "rlimit type 7") != NULL &&
		    f->nofile / 2 >= LAUNCH_ULIMIT_MIN)
			f->nofile /= 2;
		else
			return -1;
		*lowered = 1;
	}
}

static int
check_runtime(struct launch_host_facts *f, int verbose)
{
	static const char *const candidates[] = { "runc", "crun" };
	char		first[sizeof(f->runtime)], err[256], why[320];
	size_t		i;
	int		lowered = 0;

	snprintf(first, sizeof(first), "%s", f->runtime);
	if (try_runtime_limits(f, first, &lowered, err, sizeof(err)) == 0) {
		launch_facts_say(f, verbose, LAUNCH_V_OK, "runtime    a "
		    "container runs under %s with --ulimit nofile=%lu:%lu "
		    "--ulimit nproc=%lu:%lu%s", first, f->nofile, f->nofile,
		    f->nproc, f->nproc, lowered ? " (lowered until the "
		    "runtime could set them)" : "");
		return 0;
	}
	snprintf(why, sizeof(why), "%s: %s", first, err);
	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (strcmp(candidates[i], first) == 0 ||
		    !launch_on_path(candidates[i]))
			continue;
		if (try_runtime_limits(f, candidates[i], &lowered, err,
		    sizeof(err)) == 0) {
			snprintf(f->runtime, sizeof(f->runtime), "%s",
			    candidates[i]);
			launch_facts_say(f, verbose, LAUNCH_V_OK,
			    "runtime    %s fails (%s); %s works: aisb passes "
			    "--runtime %s", first, why, candidates[i],
			    candidates[i]);
			return 0;
		}
	}
	launch_facts_say(f, verbose, LAUNCH_V_FAIL, "runtime    no container "
	    "runs (%s); fix: apt-get install runc, and on a cgroups v1/hybrid "
	    "host use runc (crun fails there)", why);
	return -1;
}

/* A listener on 127.0.0.1, port 0.  The descriptor or -1. */
static int
listen_loopback(unsigned *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 8) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/*
 * The host's end of the network probe: accepts on lfd until a connection
 * says PROBE_WORD (at most PROBE_CONNS of them, 64 bytes read of each),
 * answers it PROBE_ANSWER and returns 1; 0 when none did.  It runs while
 * the container does, in a process of its own (probe_server), and the
 * container exits only once it read the answer: before, the host read
 * after the container was gone, and under load the word was lost with
 * it (slirp4netns torn down before it passed the bytes on: "connected to
 * nothing", a working network said broken).
 */
static int
probe_serve(int lfd)
{
	struct pollfd	pfd;
	char		buf[64];
	size_t		len;
	ssize_t		n;
	int		cfd, i, ok = 0;

	for (i = 0; i < PROBE_CONNS && !ok; i++) {
		pfd.fd = lfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, PROBE_TIMEOUT_MS) <= 0)
			return 0;
		if ((cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		pfd.fd = cfd;
		len = 0;
		while (len < sizeof(buf) - 1 && poll(&pfd, 1,
		    PROBE_ANSWER_WAIT_S * 1000) > 0) {
			if ((n = read(cfd, buf + len, sizeof(buf) - 1 - len)) <=
			    0)
				break;
			len += (size_t)n;
			buf[len] = '\0';
			if (strstr(buf, PROBE_WORD) != NULL) {
				ok = send(cfd, PROBE_ANSWER "\n",
				    sizeof(PROBE_ANSWER), MSG_NOSIGNAL) ==
				    (ssize_t)sizeof(PROBE_ANSWER);
				break;
			}
		}
		close(cfd);
	}
	return ok;
}

/*
 * probe_serve() in a child process, which dies with doctor.  The pid, or
 * -1 with errno.
 */
static pid_t
probe_server(int lfd)
{
	pid_t	pid;

	if ((pid = fork()) != 0)
		return pid;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() == 1)
		_exit(1);
	_exit(probe_serve(lfd) ? 0 : 1);
}

/*
 * Connects from a container to host:port with bash's /dev/tcp, says
 * PROBE_WORD and waits for PROBE_ANSWER (at most PROBE_ANSWER_WAIT_S)
 * from the server on lfd, which runs meanwhile.  0 when both ends say
 * they heard the other; -1 with err.  The script is a constant; the
 * words, address and port travel as its arguments.
 */
static int
try_network(const struct launch_host_facts *f, const char *network,
    const char *host, unsigned port, int lfd, char *err, size_t errlen)
{
	struct probe_args	 pa;
	char			*argv[32], net[128], portstr[16], wait[16];
	size_t			 a;
	pid_t			 srv;
	int			 rc, status;

	snprintf(net, sizeof(net), "--network=%s", network);
	snprintf(portstr, sizeof(portstr), "%u", port);
	snprintf(wait, sizeof(wait), "%d", PROBE_ANSWER_WAIT_S);
	a = probe_head(f, f->runtime, &pa, argv);
	argv[a++] = net;
	argv[a++] = "--entrypoint=/bin/bash";
	argv[a++] = (char *)f->image;
	argv[a++] = "-c";
	argv[a++] = "exec 3<>\"/dev/tcp/$1/$2\" && printf %s \"$0\" >&3 && "
	    "read -r -t \"$4\" a <&3 && [ \"$a\" = \"$3\" ] || "
	    "{ echo \"no answer from $1:$2 within $4 s\" >&2; exit 1; }";
	argv[a++] = PROBE_WORD;
	argv[a++] = (char *)host;
	argv[a++] = portstr;
	argv[a++] = PROBE_ANSWER;
	argv[a++] = wait;
	argv[a] = NULL;
	if ((srv = probe_server(lfd)) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	rc = launch_exec(argv, NULL, 0, NULL, 0, PROBE_TIMEOUT_MS, 0, err,
	    errlen);
	/*
	 * 0: the container read the answer, so the server is past its send
	 * and exits; else it may still wait for a connection.
	 */
	if (rc != 0)
		(void)kill(srv, SIGKILL);
	if (launch_wait(srv, &status) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		if (rc == 0)
			snprintf(err, errlen, "the host heard no %s",
			    PROBE_WORD);
		return -1;
	}
	return rc == 0 ? 0 : -1;
}

static int
check_network(struct launch_host_facts *f, int verbose)
{
	static const struct {
		enum launch_netmode	 mode;
		const char		*network, *host, *tool;
	} modes[] = {
		{ LAUNCH_NET_PASTA, PASTA_NETWORK, PASTA_HOST, "pasta" },
		{ LAUNCH_NET_SLIRP, LAUNCH_SLIRP_NETWORK, LAUNCH_SLIRP_HOST,
		    "slirp4netns" },
	};
	char		err[256], why[600] = "";
	size_t		i, off = 0;
	unsigned	port;
	int		lfd;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char	*skip = NULL;

		if (!launch_on_path(modes[i].tool) &&
		    (modes[i].mode != LAUNCH_NET_SLIRP || access(
		    "/usr/libexec/podman/slirp4netns", X_OK) == -1))
			skip = "not installed";
		else if (modes[i].mode == LAUNCH_NET_PASTA && !podman_at_least(
		    f, 4, 4))
			skip = "podman before 4.4 has no pasta";
		if (skip != NULL) {
			off += (size_t)snprintf(why + off, sizeof(why) - off,
			    "%s%s: %s", off ? "; " : "", modes[i].tool, skip);
			continue;
		}
		if ((lfd = listen_loopback(&port)) == -1) {
			launch_facts_say(f, verbose, LAUNCH_V_FAIL,
			    "network    listen on 127.0.0.1: %s",
			    strerror(errno));
			return -1;
		}
		if (try_network(f, modes[i].network, modes[i].host, port, lfd,
		    err, sizeof(err)) == 0) {
			close(lfd);
			f->netmode = modes[i].mode;
			snprintf(f->network, sizeof(f->network), "%s",
			    modes[i].network);
			snprintf(f->host_loopback, sizeof(f->host_loopback),
			    "%s", modes[i].host);
			launch_facts_say(f, verbose, LAUNCH_V_OK,
			    "network    %s: the host's 127.0.0.1:%u answers "
			    "at %s:%u inside%s%s%s", modes[i].network, port,
			    modes[i].host, port, off ? " (" : "", why, off ?
			    ")" : "");
			return 0;
		}
		close(lfd);
		off += (size_t)snprintf(why + off, sizeof(why) - off,
		    "%s%s: %s", off ? "; " : "", modes[i].tool,
		    err[0] != '\0' ? err : "connected to nothing");
		if (off >= sizeof(why))
			off = sizeof(why) - 1;
	}
	launch_facts_say(f, verbose, LAUNCH_V_FAIL, "network    no mode "
	    "reaches the host's loopback (%s); fix: apt-get install "
	    "slirp4netns (podman 4.3) or passt (podman 4.4+)", why);
	return -1;
}

/* A private scratch directory for a probe, under $TMPDIR or /var/tmp. */
static int
probe_dir(char *dir, size_t len)
{
	const char	*tmp = getenv("TMPDIR");
	int		 n;

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/var/tmp";
	n = snprintf(dir, len, "%s/aisb-doctor.XXXXXX", tmp);
	if (n < 0 || (size_t)n >= len || mkdtemp(dir) == NULL)
		return -1;
	return 0;
}

/* Removes dir/a, dir/b, dir/c (files or empty folders), then dir. */
static void
remove_names(const char *dir, const char *a, const char *b, const char *c)
{
	const char	*names[] = { a, b, c };
	char		 path[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) == -1)
			(void)rmdir(path);
	}
	(void)rmdir(dir);
}

static void
check_limits_held(struct launch_host_facts *f, int verbose)
{
	if (!f->rootless || f->cgroups_version == 2) {
		launch_facts_say(f, verbose, LAUNCH_V_OK,
		    "cgroups    --memory, --cpus and --pids are applied by "
		    "podman");
		return;
	}
	launch_facts_say(f, verbose, LAUNCH_V_WARN, "cgroups    rootless "
	    "podman on cgroups v1 cannot apply --memory, --cpus or --pids: "
	    "sessions say so and run without them (the nofile and nproc "
	    "ulimits hold); fix: cgroups v2 "
	    "(systemd.unified_cgroup_hierarchy=1) with the controllers "
	    "delegated to the user, or rootful podman");
}

/* Writes len bytes of text to path (mode 0600, a new file).  0 or -1. */
static int
write_new(const char *path, const char *text, size_t len)
{
	int	 fd, rc = 0;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return -1;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -1;
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

/* The owner and the text of dir/name, for the workspace check. */
static int
probe_file(const char *dir, const char *name, uid_t *uid, char *text,
    size_t len)
{
	struct stat	 st;
	char		 path[PATH_MAX];
	ssize_t		 n = 0;
	int		 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) == -1)
		return -1;
	*uid = st.st_uid;
	if (text == NULL)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, text, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	return 0;
}

/*
 * After the probe's script (SESSION_SCRIPT) ran as uid 1000: the file it
 * edited, created and the folder it made in ws are the owner's outside.
 */
static void
check_owner(struct launch_host_facts *f, int verbose, const char *ws,
    const struct launch_ids *ids)
{
	char	 text[16];
	uid_t	 owner;

	if (probe_file(ws, "existing", &owner, text, sizeof(text)) == -1 ||
	    strcmp(text, "hix") != 0 || owner != ids->owner_uid ||
	    probe_file(ws, "created", &owner, NULL, 0) == -1 ||
	    owner != ids->owner_uid || probe_file(ws, "made", &owner, NULL,
	    0) == -1 || owner != ids->owner_uid) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "workspace  uid "
		    "1000 edited, created and made a folder in a 0700 folder "
		    "of uid %u, but outside they are not that user's as they "
		    "should be (%s)", (unsigned)ids->owner_uid,
		    strerror(errno));
		return;
	}
	f->bind_uid_ok = 1;
	launch_facts_say(f, verbose, LAUNCH_V_OK, "workspace  in a 0700 "
	    "folder of uid %u, the command (uid 1000 inside, %s) edited a "
	    "file and created a file and a folder, owned by uid %u outside",
	    (unsigned)ids->owner_uid, ids->mode == LAUNCH_IDS_KEEPID ?
	    "--userns=keep-id" : "the aisb subordinate range and an idmapped "
	    "mount", (unsigned)ids->owner_uid);
}

/*
 * One container exactly as a session runs it: the options resolved as
 * for `aisb -- CMD` (user config included), the mapping and mounts of
 * ids.c, and the argv of launch_podman_argv(), in a fresh 0700 folder of
 * the invoking user.  The enforcer loads the gate table (--net none
 * without a working network mode), drops to 1000, and the command edits a
 * file of the folder's owner, creates a file and a folder.  Outside, they
 * must belong to that owner.
 */
#define SESSION_SCRIPT \
	"id -u && printf x >> existing && echo new > created && mkdir made"

static void
check_session(struct launch_host_facts *f, int verbose)
{
	struct launch_opts	 o;
	struct launch_ids	 ids;
	struct launch_run	 r;
	struct launch_run_src	 src;
	struct launch_strv	 v = { 0 };
	char			 ws[PATH_MAX], run[PATH_MAX], podman[PATH_MAX];
	char			 env[PATH_MAX + 8], plan[PATH_MAX + 8];
	char			 mnt[PATH_MAX + 16], vol[64], id[40];
	char			 ptext[128], out[64], err[1024], uid[16];
	char			 path[PATH_MAX + 16], seccomp[PATH_MAX];
	char			 enforcer[PATH_MAX];
	char			*av[] = { (char *)"aisb", (char *)"--net", NULL,
	    (char *)"--workspace", ws, (char *)"--home-volume", vol,
	    (char *)"--", (char *)"/bin/sh", (char *)"-c",
	    (char *)SESSION_SCRIPT, NULL };
	char			*rmvol[] = { podman, (char *)"volume",
	    (char *)"rm", (char *)"--force", vol, NULL };
	extern char		**environ;
	int			 n, rc, mounted = 0, have_opts = 0;

	ws[0] = run[0] = '\0';
	if (launch_find_program("podman", podman, sizeof(podman)) == -1 ||
	    launch_random_hex(id, 16) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "session    podman or randomness not available");
		return;
	}
	snprintf(vol, sizeof(vol), "aisb-doctor-%s", id);
	if (probe_dir(ws, sizeof(ws)) == -1 || probe_dir(run,
	    sizeof(run)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL,
		    "session    scratch folder: %s", strerror(errno));
		goto out;
	}
	/* Without a network mode that works, the table of --net none. */
	av[2] = f->netmode != LAUNCH_NET_UNKNOWN ? (char *)"gate" :
	    (char *)"none";
	n = f->netmode != LAUNCH_NET_UNKNOWN ? snprintf(ptext, sizeof(ptext),
	    "aisb-plan 1\nmode gate\ngate %s 9\n", f->host_loopback) :
	    snprintf(ptext, sizeof(ptext), "aisb-plan 1\nmode none\n");
	snprintf(env, sizeof(env), "%s/env", run);
	snprintf(plan, sizeof(plan), "%s/plan", run);
	snprintf(mnt, sizeof(mnt), "%s/workspace", run);
	if (write_new(env, "", 0) == -1 || write_new(plan, ptext,
	    (size_t)n) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    %s: %s",
		    run, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/existing", ws);
	if (write_new(path, "hi", 2) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    %s: %s",
		    ws, strerror(errno));
		goto out;
	}
	if (launch_opts_resolve(&o, (int)(sizeof(av) / sizeof(av[0])) - 1, av,
	    environ, err, sizeof(err)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    the "
		    "options a session would use: %s", err);
		goto out;
	}
	have_opts = 1;
	if (launch_seccomp_profile(seccomp, sizeof(seccomp), err,
	    sizeof(err)) == -1 || launch_enforcer_find(enforcer,
	    sizeof(enforcer), err, sizeof(err)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    %s",
		    err);
		goto out;
	}
	if (launch_ids_resolve(&ids, f->rootless, ws, 1, err,
	    sizeof(err)) == -1 || launch_ids_prepare(&ids, ws, mnt, env,
	    plan, &mounted, err, sizeof(err)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    user "
		    "namespace: %s", err);
		goto out;
	}
	/* the session's own builder, with the probe's files */
	memset(&src, 0, sizeof(src));
	src.facts = f;
	src.ids = &ids;
	src.podman = podman;
	src.runtime = f->runtime[0] != '\0' ? f->runtime : NULL;
	src.seccomp = seccomp;
	src.enforcer = enforcer;
	src.session_id = id;
	src.image = f->image;
	src.envfile = env;
	src.planfile = plan;
	src.clone = mounted ? mnt : NULL;
	launch_run_build(&r, &o, &src);
	if (launch_podman_argv(&r, &v) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "session    out "
		    "of memory");
		goto out;
	}
	rc = launch_exec(v.s, NULL, 0, out, sizeof(out), PROBE_TIMEOUT_MS, 0,
	    err, sizeof(err));
	out[strcspn(out, "\r\n")] = '\0';
	/* `id -u` of the script: the sandbox user */
	snprintf(uid, sizeof(uid), "%d", LAUNCH_SANDBOX_ID);
	if (rc != 0 || strcmp(out, uid) != 0) {
		if (rc == EXIT_CONFIG)
			launch_facts_say(f, verbose, LAUNCH_V_FAIL,
			    "nftables   aisb-enforce (%s) refused the plan "
			    "or its arguments (%s); fix: build aisb and "
			    "aisb-enforce together (make)", enforcer, err);
		else if (rc == EXIT_ENFORCE)
			launch_facts_say(f, verbose, LAUNCH_V_FAIL,
			    "nftables   aisb-enforce could not set up the "
			    "sandbox (%s); fix: the kernel needs nf_tables "
			    "(modprobe nf_tables), and podman must grant "
			    "--cap-add NET_ADMIN", err);
		else
			launch_facts_say(f, verbose, LAUNCH_V_FAIL,
			    "session    a session's container exited %d, "
			    "printing uid '%s' (%s)", rc, out, err);
		goto out;
	}
	f->nft_ok = 1;
	launch_facts_say(f, verbose, LAUNCH_V_OK, "nftables   aisb-enforce "
	    "loaded table inet aisb (--net %s) and ran the command as uid %s",
	    av[2], out);
	check_owner(f, verbose, ws, &ids);
out:
	if (mounted)
		launch_ids_umount(mnt);
	launch_strv_free(&v);
	if (have_opts) {
		(void)launch_exec(rmvol, NULL, 0, NULL, 0,
		    LAUNCH_INFO_TIMEOUT_MS, 0, err, sizeof(err));
		launch_opts_free(&o);
	}
	/* what the probe may have left, and nothing else */
	if (ws[0] != '\0')
		remove_names(ws, "existing", "created", "made");
	if (run[0] != '\0')
		remove_names(run, "env", "plan", "workspace");
}

/* The image a session here would use, as doctor's identity line says it. */
static void
session_image(char *buf, size_t len)
{
	struct launch_host_facts	 t;
	char				 why[1400], note[1400];
	int				 offline = 0;

	memset(&t, 0, sizeof(t));
	if (find_image(&t, &offline, note, sizeof(note), why,
	    sizeof(why)) == -1)
		snprintf(buf, len, "unknown (%s)", why);
	else if (note[0] != '\0')
		snprintf(buf, len, "%s (standing in: the image a session "
		    "here would run is not built)", t.image);
	else
		snprintf(buf, len, "%s%s", t.image, offline ? " (the offline "
		    "base: sessions use it when their base cannot be pulled)" :
		    "");
}

/*
 * The container checks: the runtime, the network mode, a session's own
 * container.  0 when they pass, -1 otherwise.
 */
static int
doctor_containers(struct launch_host_facts *f, int verbose)
{
	if (check_runtime(f, verbose) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_SKIP, "network    needs "
		    "a container that runs");
		return -1;
	}
	(void)check_network(f, verbose);
	check_session(f, verbose);
	return f->nfail == 0 ? 0 : -1;
}

/*
 * The host's checks, then with an aisb image (f->image, else the one a
 * session here would run) the container checks (doctor_containers, or
 * their stored passing run under the same identity unless fresh:
 * doctorid.c).  0 when aisb can run here, -1 otherwise.
 */
static int
doctor_probe(struct launch_host_facts *f, const struct launch_doctor_id *id,
    int fresh)
{
	char	 why[1400], note[1400];
	int	 offline = 0, verbose = 1;

	if (launch_host_check(f, verbose) == -1 && f->podman_version[0] ==
	    '\0')
		return -1;
	launch_storage_check(f, verbose);
	/* a host's fact: said before an image is needed (a rootless
	 * session on cgroups v1 points here when it runs without limits) */
	check_limits_held(f, verbose);
	note[0] = '\0';
	if (f->image[0] == '\0' && find_image(f, &offline, note,
	    sizeof(note), why, sizeof(why)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_SKIP, "containers %s, "
		    "then `aisb doctor` again to run the container checks",
		    why);
		return f->nfail == 0 ? 0 : -1;
	}
	if (verbose)
		printf("%-5simage      %s (for the container checks%s%s)\n",
		    "", f->image, offline ? "; on the offline base, which "
		    "sessions use when their base image cannot be pulled" : "",
		    note[0] != '\0' ? "; it stands in" : "");
	if (verbose && note[0] != '\0')
		printf("%-5s           %s\n", "", note);
	if (launch_doctor_stored(f, id, fresh, doctor_containers) == -1)
		return -1;
	return f->nfail == 0 ? 0 : -1;
}

/*
 * The agent recipes a session would read: a file that does not load
 * stops every session that could use one (session/prepare.c), so it is
 * a failure here too.  Lists name, package@version and where each came from.
 */
static int
check_agents(struct launch_host_facts *f, int verbose)
{
	struct launch_agents	*set;
	char			 shipped[PATH_MAX], user[PATH_MAX];
	char			 pins[PATH_MAX], err[1400];
	int			 have;

	if ((set = malloc(sizeof(*set))) == NULL)
		return -1;
	have = launch_agents_shipped(shipped, sizeof(shipped)) == 0;
	launch_agents_user(environ, user, sizeof(user));
	launch_agents_pins_path(environ, pins, sizeof(pins));
	if (launch_agents_load_pinned(set, have ? shipped : NULL, pins, user,
	    err, sizeof(err)) == -1) {
		launch_facts_say(f, verbose, LAUNCH_V_FAIL, "agents     %s; "
		    "fix: that line (docs/agents.md)", err);
		free(set);
		return -1;
	}
	launch_facts_say(f, verbose, have ? LAUNCH_V_OK : LAUNCH_V_WARN,
	    "agents     %zu recipe%s (%s%s; %s%s)", set->n, set->n == 1 ? "" :
	    "s", have ? "" : "no shipped file: ", shipped,
	    set->files[1][0] != '\0' ? "yours: " : "none of yours in ", user);
	if (verbose) {
		struct launch_opts	o;
		int			known;

		/* the images a session started here would use */
		if (!(known = launch_spec_opts(&o, err, sizeof(err)) == 0))
			printf("  (images unknown: %s)\n", err);
		launch_agents_print(set, known ? &o : NULL, stdout);
		launch_opts_free(&o);
	}
	free(set);
	return 0;
}

int
launch_cmd_doctor(int argc, char **argv)
{
	struct launch_host_facts	f;
	struct cli_args			a;
	struct launch_doctor_id		id;
	const char			*image;
	char				 tag[1600];
	int				rc, fixed = 0;

	memset(&f, 0, sizeof(f));
	if ((rc = launch_cli_parse("doctor", argc - 1, argv + 1, &a)) != 0)
		return rc == 1 ? 0 : EXIT_CONFIG;
	if ((image = launch_cli_get(&a, "--image")) != NULL) {
		if (image[0] == '\0' || strlen(image) >= sizeof(f.image)) {
			fprintf(stderr, "aisb doctor: --image: empty or longer "
			    "than %zu bytes\n", sizeof(f.image) - 1);
			return EXIT_CONFIG;
		}
		snprintf(f.image, sizeof(f.image), "%s", image);
	}
	if (launch_cli_get(&a, "--fix") != NULL)
		fixed = launch_storage_fix(environ) == 0 ? 0 : -1;
	session_image(tag, sizeof(tag));
	launch_doctor_identity(&f, tag, &id);
	rc = doctor_probe(&f, &id, launch_cli_get(&a, "--fresh") != NULL);
	if (f.nfail > 0)
		rc = -1;
	if (check_agents(&f, 1) == -1)
		rc = -1;
	if (rc == 0)
		printf("aisb can run here%s\n", f.nskip > 0 ?
		    " (some checks were skipped)" : "");
	else
		printf("aisb cannot run here: %d check%s failed\n", f.nfail,
		    f.nfail == 1 ? "" : "s");
	return rc == 0 && fixed == 0 ? 0 : 1;
}
