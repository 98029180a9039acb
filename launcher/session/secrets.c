/*
 * A session's secrets (secrets.h): the entries checked, the values read
 * on the host (aisb's environment, a file, a command), a placeholder
 * made for each, and the gate's secrets file in a sealed memory file.
 * No value is ever in an error, a log line, argv or a file of the
 * session; each is wiped when freed.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "file.h"
#include "host/paths.h"
#include "host/proc.h"
#include "session/options.h"
#include "session/secrets.h"

enum src_kind { SRC_ENV, SRC_FILE, SRC_COMMAND };

/* An entry, split: name, kind, the rest (a variable, a path, a command) */
struct entry {
	char		 name[POLICY_MAX_SECRET_NAME + 1];
	enum src_kind	 kind;
	const char	*arg;		/* into the entry's text */
};

static int
var_ok(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* e into x, checked; 0, or -1 with err. */
static int
entry_parse(const char *e, struct entry *x, char *err, size_t errlen)
{
	size_t		 n = strcspn(e, "="), len = strlen(e);
	const char	*src = e + n + (e[n] == '=');

	if (len > LAUNCH_SECRETS_ENTRY_MAX || strpbrk(e, "\n\r") != NULL) {
		snprintf(err, errlen, "secret '%.64s': more than %d bytes, or "
		    "a line break", e, LAUNCH_SECRETS_ENTRY_MAX);
		return -1;
	}
	if (n > POLICY_MAX_SECRET_NAME || !var_ok(e, n)) {
		snprintf(err, errlen, "secret '%.64s': '%.*s' is not a "
		    "variable name (letters, digits and _, at most %d, not "
		    "starting with a digit); write NAME or NAME=env:VAR, "
		    "NAME=file:/PATH, NAME=command:PROGRAM ARGS", e,
		    (int)(n > 64 ? 64 : n), e, POLICY_MAX_SECRET_NAME);
		return -1;
	}
	memcpy(x->name, e, n);
	x->name[n] = '\0';
	if (e[n] == '\0') {
		x->kind = SRC_ENV;
		x->arg = x->name;
	} else if (strncmp(src, "env:", 4) == 0) {
		x->kind = SRC_ENV;
		x->arg = src + 4;
		if (!var_ok(x->arg, strlen(x->arg))) {
			snprintf(err, errlen, "secret %s: env:'%.64s' is not a "
			    "variable name", x->name, x->arg);
			return -1;
		}
	} else if (strncmp(src, "file:", 5) == 0) {
		x->kind = SRC_FILE;
		x->arg = src + 5;
		if (x->arg[0] != '/') {
			snprintf(err, errlen, "secret %s: file:'%.64s' is not "
			    "an absolute path; write file:/PATH", x->name,
			    x->arg);
			return -1;
		}
	} else if (strncmp(src, "command:", 8) == 0) {
		x->kind = SRC_COMMAND;
		x->arg = src + 8;
		if (x->arg[strspn(x->arg, " \t")] == '\0') {
			snprintf(err, errlen, "secret %s: command: names no "
			    "program; write command:PROGRAM ARGS (no shell)",
			    x->name);
			return -1;
		}
	} else {
		snprintf(err, errlen, "secret %s: '%.32s' is not a source; "
		    "write %s (aisb's environment), %s=env:VAR, "
		    "%s=file:/PATH or %s=command:PROGRAM ARGS", x->name, src,
		    x->name, x->name, x->name, x->name);
		return -1;
	}
	return 0;
}

int
launch_secret_entry_check(const char *entry, char *err, size_t errlen)
{
	struct entry	 x;

	return entry_parse(entry, &x, err, errlen);
}

void
launch_secret_entry_name(const char *entry, char *name, size_t len)
{
	size_t	 n = strcspn(entry, "=");

	snprintf(name, len, "%.*s", (int)n, entry);
}

/* 1 when a rule of p adds a secret of that name */
static int
policy_adds(const struct policy *p, const char *name)
{
	struct policy_secret_info	 si;
	size_t				 i, k;

	for (i = 0; i < policy_rule_count(p); i++)
		for (k = 0; k < policy_rule_secret_count(policy_rule_at(p, i));
		    k++) {
			policy_rule_secret(policy_rule_at(p, i), k, &si);
			if (strcmp(si.name, name) == 0)
				return 1;
		}
	return 0;
}

int
launch_policy_inspects(const struct policy *p)
{
	size_t	 i;

	for (i = 0; i < policy_rule_count(p); i++)
		if (policy_rule_inspect(policy_rule_at(p, i)))
			return 1;
	return 0;
}

/*
 * Why this session cannot give a secret named by the user config, or
 * NULL when it can: only a gate of the session's own adds secrets, under
 * a policy the user chose, on a rule that names it.
 */
static const char *
config_secret_unused(const struct launch_opts *o, const struct policy *p,
    const char *name)
{
	if (o->net != LAUNCH_NET_GATE)
		return "--net none and --net direct have no gate";
	if (o->val[LO_GATE] != NULL && o->val[LO_GATE][0] != '\0')
		return "a named gate adds no secrets";
	if (o->src[LO_POLICY] == LAUNCH_SRC_PROJECT)
		return "the project config chose the policy";
	if (!policy_adds(p, name))
		return "no rule of the policy adds it";
	return NULL;
}

void
launch_secrets_unused(struct launch_opts *o, const struct policy *p,
    FILE *say)
{
	char		 name[POLICY_MAX_SECRET_NAME + 1];
	const char	*why;
	size_t		 i, k;

	for (i = k = 0; i < o->nsecrets; i++) {
		launch_secret_entry_name(o->secrets[i].text, name,
		    sizeof(name));
		if (o->secrets[i].src != LAUNCH_SRC_USER ||
		    (why = config_secret_unused(o, p, name)) == NULL) {
			o->secrets[k++] = o->secrets[i];
			continue;
		}
		if (say != NULL)
			fprintf(say, "aisb: secret %s (user config %s) not given to this "
			    "session: %s; pass --secret %s to be told why as "
			    "an error\n", name, o->secrets[i].where, why,
			    name);
		explicit_bzero(o->secrets[i].text, strlen(o->secrets[i].text));
		free(o->secrets[i].text);
	}
	o->nsecrets = k;
}

int
launch_secrets_usable(const struct launch_opts *o, const struct policy *p,
    char *err, size_t errlen)
{
	char	 name[POLICY_MAX_SECRET_NAME + 1];
	size_t	 i, k, n;

	if (o->nsecrets == 0)
		return 0;
	launch_secret_entry_name(o->secrets[0].text, name, sizeof(name));
	if (o->net != LAUNCH_NET_GATE || (o->val[LO_GATE] != NULL &&
	    o->val[LO_GATE][0] != '\0')) {
		snprintf(err, errlen, "%s: secret %s: only a gate of the "
		    "session's own adds secrets, and %s; drop the secret, or "
		    "run with --net gate and without --gate",
		    o->secrets[0].where, name, o->net != LAUNCH_NET_GATE ?
		    "--net none and --net direct have no gate" : "a named "
		    "gate adds no secrets (one session's would go out with "
		    "every other session's requests)");
		return -1;
	}
	if (o->src[LO_POLICY] == LAUNCH_SRC_PROJECT) {
		/*
		 * The policy says which hosts get a secret: one the
		 * repository chose could hand it to any host it names.
		 */
		snprintf(err, errlen, "%s: secret %s: the policy %s was chosen "
		    "by the project config (%s), and a repository's policy "
		    "would choose the hosts your secrets go to; pass "
		    "--policy FILE of your own, or drop the secret",
		    o->secrets[0].where, name, o->val[LO_POLICY],
		    o->where[LO_POLICY]);
		return -1;
	}
	if (o->nsecrets > LAUNCH_SECRETS_MAX) {
		snprintf(err, errlen, "%s: more than %d secrets",
		    o->secrets[LAUNCH_SECRETS_MAX].where, LAUNCH_SECRETS_MAX);
		return -1;
	}
	for (i = 0; i < o->nsecrets; i++) {
		launch_secret_entry_name(o->secrets[i].text, name,
		    sizeof(name));
		for (k = 0; k < o->nenv; k++) {
			n = strcspn(o->env[k].text, "=?");
			if (n == strlen(name) &&
			    strncmp(o->env[k].text, name, n) == 0) {
				snprintf(err, errlen, "%s: --env %s would pass "
				    "the secret itself into the sandbox, where "
				    "secret %s (%s) puts a placeholder; drop "
				    "the --env entry", o->env[k].where, name,
				    name, o->secrets[i].where);
				return -1;
			}
		}
		if (!policy_adds(p, name)) {
			snprintf(err, errlen, "%s: secret %s: no rule of the "
			    "policy (%s) adds it, so it would reach no host; "
			    "add to the rule of its host: inspect: true and "
			    "secrets: [{name: %s, header: HEADER}] "
			    "(docs/policy.md, \"Inspected hosts\"), or use an "
			    "agent whose recipe names it (aisb agents NAME)",
			    o->secrets[i].where, name, policy_file(p), name);
			return -1;
		}
	}
	return 0;
}

/*
 * The folders the sandboxed command reads: the workspace and each
 * --mount's source, their real paths.  A secret's file there is no
 * secret, and one there that a direct session's command wrote (a file,
 * a program) would be what aisb reads or runs, as the user, for the next
 * session (issue 27's class: nothing aisb reads from the workspace).
 */
struct reach {
	char	(*path)[PATH_MAX];	/* 1 + o->nmounts of them */
	size_t	 n;
};

static void
reach_add(struct reach *r, const char *p)
{
	if (realpath(p, r->path[r->n]) != NULL)
		r->n++;
}

/*
 * r from o: the workspace, and each --mount's SRC, the text before its
 * first ':' (no path of a mount holds one: mounts.h).  -1: no memory.
 */
static int
reach_of(struct reach *r, const struct launch_opts *o)
{
	char	 src[PATH_MAX];
	size_t	 i;

	r->n = 0;
	if ((r->path = calloc(1 + o->nmounts, sizeof(*r->path))) == NULL)
		return -1;
	if (o->val[LO_WORKSPACE] != NULL)
		reach_add(r, o->val[LO_WORKSPACE]);
	for (i = 0; i < o->nmounts; i++) {
		snprintf(src, sizeof(src), "%.*s",
		    (int)strcspn(o->mounts[i].text, ":"), o->mounts[i].text);
		reach_add(r, src);
	}
	return 0;
}

/*
 * The folder of r that path (absolute) passes through, or NULL: each of
 * its prefixes resolved as the kernel would, so that a link anywhere on
 * the way that lies in such a folder counts (the command could retarget
 * it).  At most LAUNCH_SECRETS_ENTRY_MAX prefixes: the entry's bound.
 */
static const char *
reach_through(const struct reach *r, const char *path)
{
	char	 pre[PATH_MAX], real[PATH_MAX];
	size_t	 i, k, len, n = strlen(path);

	for (i = 1; i <= n && n < sizeof(pre); i++) {
		if (i < n && path[i] != '/')
			continue;
		memcpy(pre, path, i);
		pre[i] = '\0';
		if (realpath(pre, real) == NULL)
			continue;
		for (k = 0; k < r->n; k++) {
			len = strlen(r->path[k]);
			if (strncmp(real, r->path[k], len) == 0 &&
			    (real[len] == '\0' || real[len] == '/' ||
			    len == 1))
				return r->path[k];
		}
	}
	return NULL;
}

/*
 * The program a command: source names, as posix_spawnp would find it
 * (a name with a '/' as it is, from the working folder; else PATH's
 * folders in order, an empty or relative one from the working folder),
 * absolute into out, so that what is checked is what runs.  -1: none.
 */
static int
program_path(const char *word, char **envp, char *out, size_t len)
{
	const char	*path, *p, *end;
	char		 cwd[PATH_MAX], dir[PATH_MAX];
	struct stat	 st;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	if (strchr(word, '/') != NULL)
		return (size_t)snprintf(out, len, "%s%s%s", word[0] == '/' ?
		    "" : cwd, word[0] == '/' ? "" : "/", word) < len ? 0 : -1;
	if ((path = launch_getenv(envp, "PATH", 4)) == NULL)
		path = "/bin:/usr/bin";		/* glibc's default */
	for (p = path; ; p = end + 1) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		snprintf(dir, sizeof(dir), "%.*s", (int)(end - p), p);
		if ((size_t)snprintf(out, len, "%s%s%s/%s", dir[0] == '/' ?
		    "" : cwd, dir[0] == '/' || dir[0] == '\0' ? "" : "/", dir,
		    word) < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		if (*end == '\0')
			return -1;
	}
}

/* Words of a command: source, split on blanks, into v (NULL-ended). */
static int
split_words(char *s, char **v, size_t max)
{
	size_t	 n = 0;
	char	*save = NULL, *w;

	for (w = strtok_r(s, " \t", &save); w != NULL;
	    w = strtok_r(NULL, " \t", &save)) {
		if (n + 1 >= max)
			return -1;
		v[n++] = w;
	}
	v[n] = NULL;
	return n > 0 ? 0 : -1;
}

/*
 * x's file or program (what is read or run) is in none of r's folders:
 * 0, or -1 with err saying which folder and what to do.
 */
static int
source_outside(const struct entry *x, const char *what, const struct reach *r,
    char *err, size_t errlen)
{
	const char	*in;

	if ((in = reach_through(r, what)) == NULL)
		return 0;
	snprintf(err, errlen, "%.160s is in %.160s, which the sandboxed command "
	    "%s; %s outside the workspace and the --mount folders", what, in,
	    x->kind == SRC_FILE ? "reads (the secret would be inside) and a "
	    "direct session's command writes" : "of a direct session writes "
	    "(aisb would run what it planted, as you)",
	    x->kind == SRC_FILE ? "keep the file" : "name a program");
	return -1;
}

/* The value of x into *out (malloc'd, NUL-ended); -1 with err. */
static int
read_value(const struct entry *x, char **envp, const struct reach *r,
    char **out, size_t *lenp, size_t *capp, char *err, size_t errlen)
{
	char		*argv[LAUNCH_SECRETS_CMD_WORDS + 1], *words, why[512];
	char		 prog[PATH_MAX];
	const char	*v, *word;
	int		 rc;

	*out = NULL;
	switch (x->kind) {
	case SRC_ENV:
		if ((v = launch_getenv(envp, x->arg, strlen(x->arg))) == NULL) {
			snprintf(err, errlen, "%s is not set in aisb's "
			    "environment; export it, or name another source "
			    "(NAME=file:/PATH, NAME=command:PROGRAM ARGS)",
			    x->arg);
			return -1;
		}
		if ((*out = strdup(v)) == NULL)
			goto oom;
		*lenp = *capp = strlen(*out);
		/*
		 * Wiped where it was, the block /proc/PID/environ shows (of
		 * aisb and of what it forks: the watcher), and removed, so
		 * that nothing aisb starts from now on inherits it.
		 */
		explicit_bzero((char *)v, *lenp);
		(void)unsetenv(x->arg);
		return 0;
	case SRC_FILE:
		if (source_outside(x, x->arg, r, err, errlen) == -1)
			return -1;
		if ((*out = file_read_bounded(x->arg, LAUNCH_SECRETS_VALUE_MAX +
		    2, lenp, why, sizeof(why))) == NULL) {
			snprintf(err, errlen, "%s", why);
			return -1;
		}
		*capp = *lenp;
		return 0;
	case SRC_COMMAND:
		if ((words = strdup(x->arg)) == NULL)
			goto oom;
		if (split_words(words, argv, sizeof(argv) / sizeof(argv[0])) ==
		    -1) {
			free(words);
			snprintf(err, errlen, "command: more than %d words",
			    LAUNCH_SECRETS_CMD_WORDS);
			return -1;
		}
		/* the very file checked is the one run: no second search */
		word = argv[0];
		if (program_path(word, envp, prog, sizeof(prog)) == -1) {
			snprintf(err, errlen, "%s did not run: not found in "
			    "PATH", word);
			free(words);
			return -1;
		}
		if (source_outside(x, prog, r, err, errlen) == -1) {
			free(words);
			return -1;
		}
		argv[0] = prog;
		if ((*out = calloc(1, LAUNCH_SECRETS_VALUE_MAX + 4)) == NULL) {
			free(words);
			goto oom;
		}
		*capp = LAUNCH_SECRETS_VALUE_MAX + 4;
		rc = launch_exec(argv, NULL, 0, *out, LAUNCH_SECRETS_VALUE_MAX +
		    4, LAUNCH_SECRETS_CMD_MS, 0, why, sizeof(why));
		if (rc != 0) {
			snprintf(err, errlen, "%s %s%s%s", word, rc == -1 ?
			    "did not run: " : "failed: ", rc == -1 ? "" :
			    "exit status ", rc == -1 ? why : "");
			if (rc > 0)
				snprintf(err + strlen(err), errlen - strlen(err),
				    "%d%s%s", rc, why[0] != '\0' ? ": " : "",
				    why);
			free(words);
			return -1;
		}
		free(words);
		*lenp = strlen(*out);
		return 0;
	}
	return -1;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* One line break at the end dropped; then visible ASCII, bounded: NULL or why not */
static const char *
value_ok(char *v, size_t *lenp)
{
	size_t	 i, n = *lenp;

	if (n > 0 && v[n - 1] == '\n')
		n--;
	if (n > 0 && v[n - 1] == '\r')
		n--;
	v[n] = '\0';
	*lenp = n;
	if (n == 0)
		return "it is empty";
	if (n > LAUNCH_SECRETS_VALUE_MAX)
		return "it is longer than 4096 bytes";
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
			return "it holds a space, a control byte, a line break "
			    "or a byte outside ASCII, which a request's header "
			    "cannot carry";
	return NULL;
}

static void
describe(const struct entry *x, char *buf, size_t len)
{
	size_t	 n;

	switch (x->kind) {
	case SRC_ENV:
		snprintf(buf, len, "environment %s", x->arg);
		break;
	case SRC_FILE:
		snprintf(buf, len, "file %s", x->arg);
		break;
	case SRC_COMMAND:
		n = strcspn(x->arg + strspn(x->arg, " \t"), " \t");
		snprintf(buf, len, "command %.*s", (int)n, x->arg +
		    strspn(x->arg, " \t"));
		break;
	}
}

int
launch_secrets_read(struct launch_secrets *ss, const struct launch_opts *o,
    char **envp, char *err, size_t errlen)
{
	struct launch_secret	*s;
	struct entry		 x, y;
	struct reach		 r;
	char			 sub[640], ph[41];
	const char		*why;
	size_t			 i, k;

	memset(ss, 0, sizeof(*ss));
	if (reach_of(&r, o) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < o->nsecrets && ss->n < LAUNCH_SECRETS_MAX; i++) {
		if (entry_parse(o->secrets[i].text, &x, err, errlen) == -1)
			goto fail;
		/* a later entry of the name (a flag over the config) wins */
		for (k = i + 1; k < o->nsecrets; k++)
			if (entry_parse(o->secrets[k].text, &y, sub,
			    sizeof(sub)) == 0 && strcmp(x.name, y.name) == 0)
				break;
		if (k < o->nsecrets)
			continue;
		s = &ss->v[ss->n];
		memcpy(s->name, x.name, sizeof(s->name));
		s->where = o->secrets[i].where;
		describe(&x, s->source, sizeof(s->source));
		if (read_value(&x, envp, &r, &s->value, &s->vlen, &s->cap, sub,
		    sizeof(sub)) == -1) {
			snprintf(err, errlen, "%s: secret %s: %s; the session "
			    "did not start", s->where, s->name, sub);
			ss->n++;
			goto fail;
		}
		ss->n++;
		if ((why = value_ok(s->value, &s->vlen)) != NULL) {
			snprintf(err, errlen, "%s: secret %s (%s): %s; the "
			    "session did not start", s->where, s->name,
			    s->source, why);
			goto fail;
		}
		if (launch_random_hex(ph, 40) == -1) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			goto fail;
		}
		snprintf(s->placeholder, sizeof(s->placeholder), "%s%s",
		    LAUNCH_SECRETS_PH_PREFIX, ph);
	}
	free(r.path);
	return 0;
fail:
	free(r.path);
	launch_secrets_free(ss);
	return -1;
}

int
launch_secrets_fd(const struct launch_secrets *ss, char *err, size_t errlen)
{
	struct buf	 b;
	size_t		 i, off = 0, total;
	ssize_t		 n;
	int		 fd;

	buf_init(&b, 160 * 1024, BUF_SECRET);
	buf_printf(&b, "aisb-secrets 1\n");
	for (i = 0; i < ss->n; i++)
		buf_printf(&b, "%s %s %s\n", ss->v[i].name,
		    ss->v[i].placeholder, ss->v[i].value);
	if (b.failed || (fd = memfd_create("aisb-secrets", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1) {
		snprintf(err, errlen, "secrets for the gate: %s", b.failed ?
		    "out of memory" : strerror(errno));
		buf_free(&b);
		return -1;
	}
	total = b.len;
	while (off < total) {
		n = write(fd, b.p + off, total - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf_free(&b);
	if (off < total || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK |
	    F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errlen, "secrets for the gate: %s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

const char *
launch_secrets_placeholder(const struct launch_secrets *ss, const char *name)
{
	size_t	 i;

	for (i = 0; ss != NULL && i < ss->n; i++)
		if (strcmp(ss->v[i].name, name) == 0)
			return ss->v[i].placeholder;
	return NULL;
}

void
launch_secrets_forget(struct launch_secrets *ss)
{
	size_t	 i;

	for (i = 0; i < ss->n; i++) {
		if (ss->v[i].value != NULL) {
			explicit_bzero(ss->v[i].value, ss->v[i].cap);
			free(ss->v[i].value);
		}
		ss->v[i].value = NULL;
		ss->v[i].vlen = ss->v[i].cap = 0;
	}
}

void
launch_secrets_free(struct launch_secrets *ss)
{
	launch_secrets_forget(ss);
	explicit_bzero(ss, sizeof(*ss));
}
