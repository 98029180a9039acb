/*
 * aisb.exe's pure logic (wlaunch.h): its command line, the gate and its
 * credential file, the state paths, the runner's argv, the session's exit
 * code and the files it writes.  Unit-tested on Linux
 * (tests/unit/test_wlaunch.c).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "win32/wlaunch.h"

#define EXIT_CANCELLED	130	/* as the runner: cancelled, or the caller died */

const char wlaunch_usage[] =
"usage: aisb [options] [--] COMMAND [ARG...]\n"
"       aisb changes ID [--diff] | apply ID | discard ID | recover ID\n"
"       aisb undo ID\n"
"       aisb transactions | clean | doctor | --help | --version\n"
"  --workspace DIR        the folder the command works on (default: the\n"
"                         current one); it sees a copy, the stage\n"
"  --apply auto|ask|never what to do with the changes at the end\n"
"                         (default auto: ask on a console, else keep)\n"
"  --snapshot-exclude PAT leave PAT out of the stage (repeatable)\n"
"  --timeout SEC          kill the command after SEC s (default 120, 0: none)\n"
"  --memory MIB           job memory limit (default 1024)\n"
"  --procs N              processes in the job (default 32)\n"
"  --cpu SEC              job CPU time limit (default: none)\n"
"  --env NAME             pass the variable NAME (never a credential)\n"
"  --quiet                say less\n"
"  --gate 127.0.0.1:PORT  network through the gate there (docs/windows.md)\n"
"  --gate-credential-file FILE  one line user:secret for the gate\n"
"  --no-appcontainer      TESTS ONLY: refused unless " WINRUN_TEST_ENV "="
    WINRUN_TEST_ENV_VALUE "\n";


static int
is_hex_lower(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return 1;
}

int
wlaunch_id_valid(const char *id)
{
	return id != NULL && is_hex_lower(id, WLAUNCH_ID_HEX);
}

int
wlaunch_gate_parse(const char *s, uint16_t *port, char *err, size_t errlen)
{
	static const char lo[] = "127.0.0.1:";
	unsigned long v = 0;
	const char *p;

	if (strncmp(s, lo, sizeof(lo) - 1) != 0)
		return winrun_fail(err, errlen, "--gate: \"%.64s\" is not "
		    "127.0.0.1:PORT (the gate listens on loopback; on Windows "
		    "run aisb-gate where it runs, e.g. WSL2, and give its "
		    "port)", s);
	p = s + sizeof(lo) - 1;
	if (*p == '\0' || strlen(p) > 5)
		goto bad;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			goto bad;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		goto bad;
	*port = (uint16_t)v;
	return 0;
bad:
	return winrun_fail(err, errlen, "--gate: \"%.64s\": the port must be a "
	    "number from 1 to 65535", s);
}

int
wlaunch_cred_parse(const char *text, size_t len, char *cred, size_t credlen,
    char *user, char *err, size_t errlen)
{
	size_t i, colon = (size_t)-1, end = len, nuser, nsecret;

	if (len > WLAUNCH_CRED_FILE_MAX)
		return winrun_fail(err, errlen, "longer than %d bytes: give one line "
		    "user:secret", WLAUNCH_CRED_FILE_MAX);
	/* one optional line break at the end, nothing after it */
	if (end > 0 && text[end - 1] == '\n')
		end--;
	if (end > 0 && text[end - 1] == '\r')
		end--;
	for (i = 0; i < end; i++) {
		char c = text[i];

		if (c == ':' && colon == (size_t)-1) {
			colon = i;
			continue;
		}
		if (c == '\n' || c == '\r')
			return winrun_fail(err, errlen, "more than one line: give one "
			    "line user:secret");
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-' || (colon != (size_t)-1 && c == '~')))
			return winrun_fail(err, errlen, "byte %zu is not allowed: the "
			    "user is [A-Za-z0-9._-], the secret [A-Za-z0-9._~-]"
			    " (it goes into the proxy URL)", i + 1);
	}
	if (colon == (size_t)-1 || colon == 0)
		return winrun_fail(err, errlen, "no \"user:\" before the secret: give "
		    "one line user:secret");
	nuser = colon;
	nsecret = end - colon - 1;
	if (nuser > WLAUNCH_CRED_USER_MAX)
		return winrun_fail(err, errlen, "the user is longer than %d bytes",
		    WLAUNCH_CRED_USER_MAX);
	if (nsecret == 0 || nsecret > WLAUNCH_CRED_SECRET_MAX)
		return winrun_fail(err, errlen, "the secret must be 1 to %d bytes",
		    WLAUNCH_CRED_SECRET_MAX);
	if (credlen < nuser + nsecret + 2)
		return winrun_fail(err, errlen, "no room for the credential");
	memcpy(cred, text, end);
	cred[end] = '\0';
	memcpy(user, text, nuser);
	user[nuser] = '\0';
	return 0;
}

int
wlaunch_state_path(const char *localappdata, const char *id, char *out,
    size_t len, char *err, size_t errlen)
{
	/* sdir\result.json.tmp, the longest name the runner writes in it */
	size_t room = len < WINRUN_PATH_MAX - 20 ? len : WINRUN_PATH_MAX - 20;
	size_t n;
	int r;

	if (localappdata == NULL || *localappdata == '\0')
		return winrun_fail(err, errlen, "LOCALAPPDATA is not set: aisb keeps "
		    "its sessions in %%LOCALAPPDATA%%\\%s", WLAUNCH_SESSIONS);
	if (!winrun_path_absolute(localappdata) ||
	    strchr(localappdata, '\n') != NULL)
		return winrun_fail(err, errlen, "LOCALAPPDATA (%.64s) is not an "
		    "absolute path", localappdata);
	if (id != NULL && !wlaunch_id_valid(id))
		return winrun_fail(err, errlen, "\"%.64s\" is not a session id (%d "
		    "lowercase hex digits: aisb transactions lists them)", id,
		    WLAUNCH_ID_HEX);
	n = strlen(localappdata);
	while (n > 2 && (localappdata[n - 1] == '\\' ||
	    localappdata[n - 1] == '/'))
		n--;
	if (id != NULL)
		r = snprintf(out, room, "%.*s\\%s\\%s", (int)n, localappdata,
		    WLAUNCH_SESSIONS, id);
	else
		r = snprintf(out, room, "%.*s\\%s", (int)n, localappdata,
		    WLAUNCH_SESSIONS);
	if (r < 0 || (size_t)r >= room)
		return winrun_fail(err, errlen, "LOCALAPPDATA (%.64s...) is too long "
		    "for the session folders (%zu bytes at most)", localappdata,
		    room - 1 - WLAUNCH_ID_HEX - sizeof(WLAUNCH_SESSIONS) - 1);
	return 0;
}

/* The commands on a draft, and whether they take a session's ID. */
static const struct wsub {
	const char	*name;
	enum wlaunch_cmd cmd;
	int		 takes_id;
} subs[] = {
	{ "changes", WLAUNCH_CHANGES, 1 },
	{ "apply", WLAUNCH_APPLY, 1 },
	{ "discard", WLAUNCH_DISCARD, 1 },
	{ "recover", WLAUNCH_RECOVER, 1 },
	{ "undo", WLAUNCH_UNDO, 1 },
	{ "transactions", WLAUNCH_TRANSACTIONS, 0 },
	{ "clean", WLAUNCH_CLEAN, 0 },
	{ "doctor", WLAUNCH_DOCTOR, 0 },
};

/* aisb CMD [ID] [--diff]: a command on a draft, argv from its name on. */
static int
parse_sub(struct wlaunch_opts *o, const struct wsub *sub, int argc,
    char *const *argv, char *err, size_t errlen)
{
	int	 i;

	o->cmd = sub->cmd;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (o->cmd == WLAUNCH_CHANGES &&
		    strcmp(a, "--diff") == 0)
			o->diff = 1;
		else if (a[0] == '-')
			return winrun_fail(err, errlen, "aisb %s: unknown "
			    "option \"%.64s\"", sub->name, a);
		else if (sub->takes_id && o->id == NULL)
			o->id = a;
		else
			return winrun_fail(err, errlen, "aisb %s: one %s at "
			    "most (\"%.64s\" is extra)", sub->name,
			    sub->takes_id ? "ID" : "word", a);
	}
	if (sub->takes_id && o->id == NULL)
		return winrun_fail(err, errlen, "aisb %s ID: which session? "
		    "(aisb transactions lists them)", sub->name);
	if (o->id != NULL && !wlaunch_id_valid(o->id))
		return winrun_fail(err, errlen, "\"%.64s\" is not a session id "
		    "(%d lowercase hex digits: aisb transactions lists "
		    "them)", o->id, WLAUNCH_ID_HEX);
	return 0;
}

/* One option of a session that takes a value (name known). */
static int
set_value(struct wlaunch_opts *o, const char *name, const char *val,
    char *err, size_t errlen)
{
	uint64_t v;

	/* the numbers are passed on as written: checked as the runner
	 * takes them, so that it refuses none the launcher took */
	if (strcmp(name, "--workspace") == 0) {
		if (*val == '\0' || strlen(val) >= DRAFT_PATH_MAX ||
		    strpbrk(val, "\r\n") != NULL)
			return winrun_fail(err, errlen, "--workspace: give a "
			    "folder (1 to %d bytes, no line break)",
			    DRAFT_PATH_MAX - 1);
		o->workspace = val;
	} else if (strcmp(name, "--apply") == 0) {
		if (strcmp(val, "auto") == 0)
			o->apply = DRAFT_APPLY_AUTO;
		else if (strcmp(val, "ask") == 0)
			o->apply = DRAFT_APPLY_ASK;
		else if (strcmp(val, "never") == 0)
			o->apply = DRAFT_APPLY_NEVER;
		else
			return winrun_fail(err, errlen, "--apply: \"%.32s\": "
			    "give auto, ask or never", val);
	} else if (strcmp(name, "--snapshot-exclude") == 0) {
		if (*val == '\0' || strlen(val) > WLAUNCH_PATTERN_MAX ||
		    strpbrk(val, "\r\n") != NULL)
			return winrun_fail(err, errlen, "--snapshot-exclude: "
			    "a pattern is 1 to %d bytes on one line",
			    WLAUNCH_PATTERN_MAX);
		if (o->nexclude >= DRAFT_MAX_EXCLUDE)
			return winrun_fail(err, errlen, "--snapshot-exclude: "
			    "at most %d", DRAFT_MAX_EXCLUDE);
		o->exclude[o->nexclude++] = (char *)val;
	} else if (strcmp(name, "--timeout") == 0) {
		if (winrun_number(name, val, 0, 86400, &v, err, errlen) == -1)
			return -1;
		o->timeout = val;
	} else if (strcmp(name, "--cpu") == 0) {
		if (winrun_number(name, val, 0, 86400, &v, err, errlen) == -1)
			return -1;
		o->cpu = val;
	} else if (strcmp(name, "--memory") == 0) {
		if (winrun_number(name, val, 16, 65536, &v, err, errlen) == -1)
			return -1;
		o->memory = val;
	} else if (strcmp(name, "--procs") == 0) {
		if (winrun_number(name, val, 1, 1024, &v, err, errlen) == -1)
			return -1;
		o->procs = val;
	} else if (strcmp(name, "--env") == 0) {
		/* the runner's own check, for an error before
		 * anything is staged */
		if (winrun_env_add(o->env, &o->nenv, val, err, errlen) == -1)
			return -1;
	} else if (strcmp(name, "--gate") == 0) {
		if (wlaunch_gate_parse(val, &o->gate_port, err,
		    errlen) == -1)
			return -1;
	} else {	/* --gate-credential-file */
		if (*val == '\0' || strlen(val) >= WINRUN_PATH_MAX)
			return winrun_fail(err, errlen, "--gate-credential-"
			    "file: the path must be 1 to %d bytes",
			    WINRUN_PATH_MAX - 1);
		o->cred_file = val;
	}
	return 0;
}

int
wlaunch_opts_parse(struct wlaunch_opts *o, int argc, char *const *argv,
    const char *test_env, char *err, size_t errlen)
{
	size_t k;
	int i;

	memset(o, 0, sizeof(*o));
	o->apply = DRAFT_APPLY_AUTO;
	if (argc < 2)
		return winrun_fail(err, errlen, "no command");

	for (k = 0; k < sizeof(subs) / sizeof(subs[0]); k++)
		if (strcmp(argv[1], subs[k].name) == 0)
			return parse_sub(o, &subs[k], argc, argv, err, errlen);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val, *eq;
		char name[40];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			o->cmd = WLAUNCH_HELP;
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			o->cmd = WLAUNCH_VERSION;
			return 0;
		}
		if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			o->quiet = 1;
			continue;
		}
		if (strcmp(a, "--no-appcontainer") == 0) {
			o->no_appcontainer = 1;
			continue;
		}
		/* the rest take a value: --opt VAL or --opt=VAL */
		if ((eq = strchr(a, '=')) != NULL) {
			if ((size_t)(eq - a) >= sizeof(name))
				return winrun_fail(err, errlen, "unknown option "
				    "\"%.40s...\"", a);
			memcpy(name, a, (size_t)(eq - a));
			name[eq - a] = '\0';
			val = eq + 1;
		} else {
			if (strlen(a) >= sizeof(name))
				return winrun_fail(err, errlen, "unknown option "
				    "\"%.40s...\"", a);
			snprintf(name, sizeof(name), "%s", a);
			val = NULL;
		}
		if (strcmp(name, "--workspace") && strcmp(name, "--apply") &&
		    strcmp(name, "--snapshot-exclude") &&
		    strcmp(name, "--timeout") && strcmp(name, "--memory") &&
		    strcmp(name, "--procs") && strcmp(name, "--cpu") &&
		    strcmp(name, "--env") && strcmp(name, "--gate") &&
		    strcmp(name, "--gate-credential-file"))
			return winrun_fail(err, errlen, "unknown option \"%.64s\"", a);
		if (val == NULL) {
			if (i + 1 >= argc)
				return winrun_fail(err, errlen, "%s needs a value",
				    name);
			val = argv[++i];
		}
		if (set_value(o, name, val, err, errlen) == -1)
			return -1;
	}

	if (winrun_no_appcontainer_check(o->no_appcontainer, test_env, err,
	    errlen) == -1)
		return -1;
	if (o->cred_file != NULL && o->gate_port == 0)
		return winrun_fail(err, errlen, "--gate-credential-file needs --gate "
		    "127.0.0.1:PORT");
	if (winrun_command_check(argc - i, "aisb [options] [--] COMMAND "
	    "[ARG...]", err, errlen) == -1)
		return -1;
	o->cmd = WLAUNCH_RUN;
	o->argc = argc - i;
	o->argv = argv + i;
	return 0;
}

void
wlaunch_argv_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* argv[(*n)++] = a copy of s, or of the two strings a and b joined */
static int
push(char **argv, int *n, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b != NULL ? strlen(b) : 0;
	char *s;

	if ((s = malloc(la + lb + 1)) == NULL)
		return -1;
	memcpy(s, a, la);
	if (b != NULL)
		memcpy(s + la, b, lb);
	s[la + lb] = '\0';
	argv[(*n)++] = s;
	return 0;
}

int
wlaunch_runner_argv(const struct wlaunch_opts *o, const char *runner,
    const char *sdir, const char *run_id, const char *env_file,
    char ***argvp, int *argcp, char *err, size_t errlen)
{
	/* the fixed words, each limit, each --env, the command */
	size_t max = 32 + 2 * o->nenv + (size_t)o->argc + 1;
	char **argv, port[8];
	int n = 0, ok = 0, i;
	size_t k;

	*argvp = NULL;
	*argcp = 0;
	if (!winrun_runid_valid(run_id))
		return winrun_fail(err, errlen, "bad run id");
	if (o->gate_port != 0 && env_file == NULL)
		return winrun_fail(err, errlen, "--gate needs the env file");
	if (strlen(sdir) + 20 >= WINRUN_PATH_MAX)
		return winrun_fail(err, errlen, "%.64s...: the session folder's path "
		    "is too long", sdir);
	if ((argv = calloc(max, sizeof(*argv))) == NULL)
		return winrun_fail(err, errlen, "out of memory");
	if (push(argv, &n, runner, NULL) || push(argv, &n, "--run-id", NULL) ||
	    push(argv, &n, run_id, NULL) || push(argv, &n, "--lease", NULL) ||
	    push(argv, &n, sdir, "\\lease.json") ||
	    push(argv, &n, "--result", NULL) ||
	    push(argv, &n, sdir, "\\result.json") ||
	    push(argv, &n, "--stage", NULL) || push(argv, &n, sdir, "\\stage") ||
	    push(argv, &n, "--keep-stage", NULL))
		goto out;
	if (o->no_appcontainer && push(argv, &n, "--no-appcontainer", NULL))
		goto out;
	if (o->gate_port != 0) {
		snprintf(port, sizeof(port), "%u", (unsigned)o->gate_port);
		if (push(argv, &n, "--gate-port", NULL) ||
		    push(argv, &n, port, NULL) ||
		    push(argv, &n, "--env-file", NULL) ||
		    push(argv, &n, env_file, NULL))
			goto out;
	}
	if ((o->timeout != NULL && (push(argv, &n, "--timeout", NULL) ||
	    push(argv, &n, o->timeout, NULL))) ||
	    (o->memory != NULL && (push(argv, &n, "--memory", NULL) ||
	    push(argv, &n, o->memory, NULL))) ||
	    (o->procs != NULL && (push(argv, &n, "--procs", NULL) ||
	    push(argv, &n, o->procs, NULL))) ||
	    (o->cpu != NULL && (push(argv, &n, "--cpu", NULL) ||
	    push(argv, &n, o->cpu, NULL))))
		goto out;
	for (k = 0; k < o->nenv; k++)
		if (push(argv, &n, "--env", NULL) ||
		    push(argv, &n, o->env[k], NULL))
			goto out;
	if (push(argv, &n, "--", NULL))
		goto out;
	for (i = 0; i < o->argc; i++)
		if (push(argv, &n, o->argv[i], NULL))
			goto out;
	ok = 1;
out:
	if (!ok) {
		wlaunch_argv_free(argv);
		return winrun_fail(err, errlen, "out of memory");
	}
	*argvp = argv;
	*argcp = n;
	return 0;
}

int
wlaunch_code(const struct winrun_result *r)
{
	if (r == NULL)
		return EXIT_ENFORCE;
	switch (r->state) {
	case WINRUN_EXITED:
		/* a Windows exit code is 32 bits; one that is not an int's
		 * positive range (an NTSTATUS) is a failure all the same */
		return r->exit_code > 0x7fffffffU ? 1 : (int)r->exit_code;
	case WINRUN_KILLED:
		if (r->hits & (WINRUN_HIT_TIMEOUT | WINRUN_HIT_CPU))
			return EXIT_TIMEOUT;
		return EXIT_CANCELLED;
	case WINRUN_FAILED:
	default:
		return EXIT_ENFORCE;
	}
}

int
wlaunch_launcher_format(uint32_t pid, uint64_t start, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%lu %llu\n", (unsigned long)pid,
	    (unsigned long long)start);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int
wlaunch_launcher_parse(const char *text, uint32_t *pid, uint64_t *start)
{
	unsigned long long p = 0, s = 0;
	const char *c = text;
	int digits;

	for (digits = 0; *c >= '0' && *c <= '9' && digits < 10; c++, digits++)
		p = p * 10 + (unsigned long long)(*c - '0');
	if (digits == 0 || *c++ != ' ' || p == 0 || p > 0xffffffffULL)
		return -1;
	for (digits = 0; *c >= '0' && *c <= '9' && digits < 20; c++, digits++) {
		unsigned long long d = (unsigned long long)(*c - '0');

		if (s > (~0ULL - d) / 10)
			return -1;
		s = s * 10 + d;
	}
	if (digits == 0 || (*c != '\n' && *c != '\0'))
		return -1;
	*pid = (uint32_t)p;
	*start = s;
	return 0;
}

int
wlaunch_record_format(const struct wlaunch_record *rec, char *buf,
    size_t len)
{
	const struct winrun_result *r = rec->result;
	const struct draft_info *d = rec->draft;
	size_t n = 0;
	int w;

#define ADD(...) do {							\
	w = snprintf(buf + n, len - n, __VA_ARGS__);			\
	if (w < 0 || (size_t)w >= len - n)				\
		return -1;						\
	n += (size_t)w;							\
} while (0)
	if (len == 0)
		return -1;
	buf[0] = '\0';
	ADD("# aisb session record 1 (docs/windows.md)\n");
	ADD("id %s\n", rec->id);
	ADD("run_id %s\n", rec->run_id);
	ADD("workspace %s\n", rec->workspace);
	if (rec->cmdline != NULL && strpbrk(rec->cmdline, "\r\n") == NULL)
		ADD("command %s\n", rec->cmdline);
	if (rec->gate_port != 0)
		ADD("gate 127.0.0.1:%u\n", (unsigned)rec->gate_port);
	if (rec->gate_user != NULL && rec->gate_user[0] != '\0')
		ADD("gate_user %s\n", rec->gate_user);
	if (r != NULL) {
		static const struct { uint32_t bit; const char *name; } hit[] = {
			{ WINRUN_HIT_TIMEOUT, "timeout" },
			{ WINRUN_HIT_MEMORY, "memory" },
			{ WINRUN_HIT_PROCS, "processes" },
			{ WINRUN_HIT_CPU, "cpu" },
			{ WINRUN_HIT_CANCEL, "cancel" },
			{ WINRUN_HIT_PARENT, "parent" },
		};
		size_t k;
		int any = 0;

		ADD("state %s\n", winrun_state_name(r->state));
		ADD("exit_code %lu\n", (unsigned long)r->exit_code);
		ADD("limits_hit");
		for (k = 0; k < sizeof(hit) / sizeof(hit[0]); k++)
			if (r->hits & hit[k].bit) {
				ADD(" %s", hit[k].name);
				any = 1;
			}
		ADD("%s\n", any ? "" : " -");
		ADD("wall_ms %llu\n", (unsigned long long)r->wall_ms);
		ADD("appcontainer %s\n", r->appcontainer ? "true" : "false");
	} else
		ADD("state none\n");
	if (d != NULL) {
		ADD("outcome %s\n", d->outcome[0] != '\0' ? d->outcome : "-");
		ADD("changes %llu\n", d->nchanges);
		ADD("digest %s\n", d->digest[0] != '\0' ? d->digest : "-");
	}
	ADD("exit %d\n", rec->code);
#undef ADD
	return (int)n;
}
