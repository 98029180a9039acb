/*
 * aisb-run's command line.  Pure: the Win32 side hands it UTF-8 argv and
 * the value of the test variable; unit-tested on Linux.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/winrun.h"

const char winrun_usage[] =
"usage: aisb-run --lease FILE --result FILE [options] -- COMMAND [ARG...]\n"
"       aisb-run --self-test [--memory MIB] [--procs N] [--timeout SEC] [--cpu SEC]\n"
"       aisb-run --clean LEASE --stage-root DIR\n"
"       aisb-run --help | --version\n"
"  --run-id HEX32      this run's id (default: random)\n"
"  --lease FILE        lease document, written before the command starts\n"
"  --result FILE       result document, written at the end\n"
"  --stage DIR         the command's working folder (absolute), removed at\n"
"                      the end unless --keep-stage\n"
"  --keep-stage        leave the stage (the caller writes it back)\n"
"  --env NAME          pass the host's NAME (repeatable; never a credential)\n"
"  --env-file FILE     NAME=VALUE lines set in the child (<= 64 KiB)\n"
"  --timeout SEC       kill the job after SEC seconds (default 120, 0: none)\n"
"  --memory MIB        job committed memory limit (default 1024)\n"
"  --procs N           active processes in the job (default 32)\n"
"  --cpu SEC           job user CPU time limit (default: none)\n"
"  --gate-port PORT    network to the gate on 127.0.0.1:PORT only\n"
"                      (docs/windows.md; default: no network at all)\n"
"  --no-appcontainer   TESTS ONLY: run without the AppContainer; refused\n"
"                      unless " WINRUN_TEST_ENV "=" WINRUN_TEST_ENV_VALUE "\n"
"  --self-test         check the isolation on this host (docs/windows.md)\n"
"  --clean LEASE       remove a dead run's profile and stage, exactly as\n"
"                      its lease names them (a live run is left alone)\n"
"  --stage-root DIR    the folder the stages of runs are made in\n"
"Standard input: the line \"cancel\" kills the job.\n";

int
winrun_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
winrun_number(const char *opt, const char *s, uint64_t min, uint64_t max,
    uint64_t *out, char *err, size_t errlen)
{
	uint64_t v = 0;
	const char *p;

	if (*s == '\0' || strlen(s) > 20)
		goto bad;
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			goto bad;
		if (v > (UINT64_MAX - 9) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return winrun_fail(err, errlen, "%s: \"%.32s\" is not a number from %llu to "
	    "%llu", opt, s, (unsigned long long)min, (unsigned long long)max);
}

int
winrun_path_absolute(const char *p)
{
	return (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
	    p[1] == ':' && (p[2] == '\\' || p[2] == '/')) ||
	    (p[0] == '\\' && p[1] == '\\');
}

/* An absolute Windows path (X:\... or \\server\...), bounded. */
static int
winpath(const char *opt, const char *s, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (n == 0 || n >= WINRUN_PATH_MAX)
		return winrun_fail(err, errlen, "%s: the path must be 1 to %d bytes",
		    opt, WINRUN_PATH_MAX - 1);
	if (!winrun_path_absolute(s))
		return winrun_fail(err, errlen, "%s: \"%.64s\" is not an absolute path "
		    "(write it as C:\\dir\\file)", opt, s);
	return 0;
}

int
winrun_env_pass_check(const char *s, char *err, size_t errlen)
{
	const char *p;

	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '(' ||
		    *p == ')'))
			break;
	if (*s == '\0' || strlen(s) > 64 || *p != '\0')
		return winrun_fail(err, errlen, "--env: \"%.64s\" is not a variable "
		    "name ([A-Za-z0-9_()], 1 to 64)", s);
	if (winrun_env_secret(s))
		return winrun_fail(err, errlen, "--env: %s looks like a credential "
		    "and is never passed from the host; put what the command "
		    "needs in --env-file", s);
	return 0;
}

int
winrun_env_add(const char **names, size_t *n, const char *name, char *err,
    size_t errlen)
{
	if (winrun_env_pass_check(name, err, errlen) == -1)
		return -1;
	if (*n >= WINRUN_ENV_MAX)
		return winrun_fail(err, errlen, "--env: at most %d",
		    WINRUN_ENV_MAX);
	names[(*n)++] = name;
	return 0;
}

int
winrun_no_appcontainer_check(int no_appcontainer, const char *test_env,
    char *err, size_t errlen)
{
	if (no_appcontainer && (test_env == NULL ||
	    strcmp(test_env, WINRUN_TEST_ENV_VALUE) != 0))
		return winrun_fail(err, errlen, "--no-appcontainer is for the test "
		    "suite only (it runs the command without isolation) and is "
		    "refused unless %s=%s", WINRUN_TEST_ENV,
		    WINRUN_TEST_ENV_VALUE);
	return 0;
}

int
winrun_command_check(int nwords, const char *usage, char *err,
    size_t errlen)
{
	if (nwords <= 0)
		return winrun_fail(err, errlen, "no command: %s", usage);
	if (nwords > WINRUN_ARGS_MAX)
		return winrun_fail(err, errlen, "the command has %d words; at most %d",
		    nwords, WINRUN_ARGS_MAX);
	return 0;
}

int
winrun_opts_parse(struct winrun_opts *o, int argc, char *const *argv,
    const char *test_env, char *err, size_t errlen)
{
	uint64_t v;
	int i;

	memset(o, 0, sizeof(*o));
	o->timeout_ms = WINRUN_DEF_TIMEOUT_MS;
	o->memory = WINRUN_DEF_MEMORY;
	o->procs = WINRUN_DEF_PROCS;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			o->help = 1;
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			o->version = 1;
			return 0;
		}
		if (strcmp(a, "--keep-stage") == 0) {
			o->keep_stage = 1;
			continue;
		}
		if (strcmp(a, "--no-appcontainer") == 0) {
			o->no_appcontainer = 1;
			continue;
		}
		if (strcmp(a, "--self-test") == 0) {
			o->self_test = 1;
			continue;
		}
		/* the rest take a value */
		if (strcmp(a, "--run-id") && strcmp(a, "--lease") &&
		    strcmp(a, "--result") && strcmp(a, "--stage") &&
		    strcmp(a, "--env") && strcmp(a, "--env-file") &&
		    strcmp(a, "--timeout") && strcmp(a, "--memory") &&
		    strcmp(a, "--procs") && strcmp(a, "--cpu") &&
		    strcmp(a, "--gate-port") && strcmp(a, "--clean") &&
		    strcmp(a, "--stage-root"))
			return winrun_fail(err, errlen, "unknown option \"%.64s\" "
			    "(aisb-run --help lists them)", a);
		if (i + 1 >= argc)
			return winrun_fail(err, errlen, "%s needs a value", a);
		val = argv[++i];
		if (strcmp(a, "--run-id") == 0) {
			if (!winrun_runid_valid(val))
				return winrun_fail(err, errlen, "--run-id: give %d "
				    "lowercase hex digits", WINRUN_RUNID_LEN);
			memcpy(o->run_id, val, WINRUN_RUNID_LEN + 1);
		} else if (strcmp(a, "--lease") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->lease = val;
		} else if (strcmp(a, "--result") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->result = val;
		} else if (strcmp(a, "--stage") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->stage = val;
		} else if (strcmp(a, "--clean") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->clean = val;
		} else if (strcmp(a, "--stage-root") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->stage_root = val;
		} else if (strcmp(a, "--env-file") == 0) {
			if (winpath(a, val, err, errlen) == -1)
				return -1;
			o->env_file = val;
		} else if (strcmp(a, "--env") == 0) {
			if (winrun_env_add(o->env_pass, &o->n_env_pass, val, err,
			    errlen) == -1)
				return -1;
		} else if (strcmp(a, "--timeout") == 0) {
			if (winrun_number(a, val, 0, 86400, &v, err, errlen) == -1)
				return -1;
			o->timeout_ms = v * 1000;
		} else if (strcmp(a, "--cpu") == 0) {
			if (winrun_number(a, val, 0, 86400, &v, err, errlen) == -1)
				return -1;
			o->cpu_ms = v * 1000;
		} else if (strcmp(a, "--memory") == 0) {
			if (winrun_number(a, val, 16, 65536, &v, err, errlen) == -1)
				return -1;
			o->memory = v * 1024 * 1024;
		} else if (strcmp(a, "--procs") == 0) {
			if (winrun_number(a, val, 1, 1024, &v, err, errlen) == -1)
				return -1;
			o->procs = (uint32_t)v;
		} else {	/* --gate-port */
			if (winrun_number(a, val, 1, 65535, &v, err, errlen) == -1)
				return -1;
			o->gate_port = (uint16_t)v;
		}
	}

	if (winrun_no_appcontainer_check(o->no_appcontainer, test_env, err,
	    errlen) == -1)
		return -1;
	/* --gate-port with --no-appcontainer: the proxy variables are set,
	 * the profile's network rules are not (there is no profile); the
	 * launcher builds one argv whatever the mode */
	if (o->clean != NULL) {
		if (i < argc || o->self_test)
			return winrun_fail(err, errlen, "--clean takes no command");
		if (o->stage_root == NULL)
			return winrun_fail(err, errlen, "--clean needs --stage-root DIR: "
			    "a stage is removed only inside it");
		return 0;
	}
	if (o->self_test) {
		if (i < argc)
			return winrun_fail(err, errlen, "--self-test takes no command");
		return 0;
	}
	if (winrun_command_check(argc - i, "aisb-run [options] -- COMMAND "
	    "[ARG...]", err, errlen) == -1)
		return -1;
	if (o->lease == NULL || o->result == NULL)
		return winrun_fail(err, errlen, "--lease FILE and --result FILE are "
		    "required (aisb clean and the caller read them)");
	o->argc = argc - i;
	o->argv = argv + i;
	return 0;
}
