/*
 * The self-test's stored result (docs/windows.md, "Self-test results"):
 * aisb-run --self-test writes one, aisb doctor shows it only while the
 * programs and the policy it was made with are still the installed
 * ones.  A record is text, at most WINRUN_SELFREC_MAX bytes:
 *
 *	aisb-selftest 1
 *	time 2026-12-02T07:30:00Z
 *	file aisb-run.exe <64 hex>	(the manifest's, verified: the runner
 *	file aisb.exe <64 hex>		 that ran is the one it names)
 *	policy <64 hex> <the policy's text>
 *	check ok|FAIL <what>		(at most WINRUN_SELFREC_CHECKS)
 *	result passed|failed
 *
 * every line once and in this order; the result line last, so that a
 * record cut short does not parse.  A record that does not parse is
 * never trusted: doctor says so and asks for a new self-test.  Pure
 * logic, built on both hosts (tests/unit/test_winrun).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32/winrun.h"

#define SELFREC_MAGIC	"aisb-selftest 1"

int
winrun_selftest_policy(const struct winrun_opts *o, char *buf, size_t len)
{
	int n;

	/* what the child is confined by: a change makes old results stale */
	n = snprintf(buf, len, "protocol %d; appcontainer; capabilities none; "
	    "memory %llu; procs %lu; timeout_ms %llu; cpu_ms %llu",
	    WINRUN_PROTOCOL, (unsigned long long)o->memory,
	    (unsigned long)o->procs, (unsigned long long)o->timeout_ms,
	    (unsigned long long)o->cpu_ms);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
winrun_selfrec_add(struct winrun_selfrec *r, int ok, const char *what)
{
	if (r->nchecks >= WINRUN_SELFREC_CHECKS)
		return -1;
	r->checks[r->nchecks].ok = ok != 0;
	snprintf(r->checks[r->nchecks].what, sizeof(r->checks[0].what), "%s",
	    what);
	/* one line each: a newline in a message would forge a line */
	r->checks[r->nchecks].what[strcspn(r->checks[r->nchecks].what,
	    "\r\n")] = '\0';
	r->nchecks++;
	if (!ok)
		r->failed = 1;
	return 0;
}

int
winrun_selfrec_format(const struct winrun_selfrec *r, char *buf, size_t len)
{
	size_t off;
	int n;
	size_t i;

	n = snprintf(buf, len, SELFREC_MAGIC "\ntime %s\nfile aisb-run.exe %s\n"
	    "file aisb.exe %s\npolicy %s %s\n", r->time, r->runner,
	    r->launcher, r->policy, r->policy_text);
	if (n < 0 || (size_t)n >= len)
		return -1;
	off = (size_t)n;
	for (i = 0; i < r->nchecks; i++) {
		n = snprintf(buf + off, len - off, "check %s %s\n",
		    r->checks[i].ok ? "ok" : "FAIL", r->checks[i].what);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += (size_t)n;
	}
	n = snprintf(buf + off, len - off, "result %s\n", r->failed ?
	    "failed" : "passed");
	if (n < 0 || (size_t)n >= len - off || off + (size_t)n >
	    WINRUN_SELFREC_MAX)
		return -1;
	return (int)(off + (size_t)n);
}

static int
is_hex64(const char *s, size_t n)
{
	return n == WINRUN_SHA_HEX && strspn(s, "0123456789abcdef") >= n;
}

/* The value of line after "key ", copied into out (outlen): 0 or -1. */
static int
value(const char *line, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);

	if (strncmp(line, key, kl) != 0 || line[kl] != ' ' ||
	    strlen(line + kl + 1) >= outlen)
		return -1;
	memcpy(out, line + kl + 1, strlen(line + kl + 1) + 1);
	return 0;
}

/* One line of text into r: 0, or -1 with what is wrong in err. */
static int
parse_line(char *line, int no, struct winrun_selfrec *r, int *done,
    char *err, size_t errlen)
{
	char *sp;

	if (*done)
		return winrun_fail(err, errlen, "line %d: after the result", no);
	switch (no) {
	case 1:
		if (strcmp(line, SELFREC_MAGIC) != 0)
			return winrun_fail(err, errlen, "line 1: not \""
			    SELFREC_MAGIC "\"");
		return 0;
	case 2:
		if (value(line, "time", r->time, sizeof(r->time)) == -1 ||
		    strlen(r->time) != 20)
			return winrun_fail(err, errlen, "line 2: no time");
		return 0;
	case 3:
	case 4:
		if (value(line, no == 3 ? "file aisb-run.exe" : "file aisb.exe",
		    no == 3 ? r->runner : r->launcher, WINRUN_SHA_HEX + 1) == -1 ||
		    !is_hex64(no == 3 ? r->runner : r->launcher, WINRUN_SHA_HEX))
			return winrun_fail(err, errlen, "line %d: not \"file %s "
			    "SHA256\"", no, no == 3 ? "aisb-run.exe" : "aisb.exe");
		return 0;
	case 5:
		if (strncmp(line, "policy ", 7) != 0 || !is_hex64(line + 7,
		    strcspn(line + 7, " ")) || line[7 + WINRUN_SHA_HEX] != ' ' ||
		    strlen(line + 8 + WINRUN_SHA_HEX) >= sizeof(r->policy_text))
			return winrun_fail(err, errlen, "line 5: not \"policy "
			    "SHA256 TEXT\"");
		memcpy(r->policy, line + 7, WINRUN_SHA_HEX);
		r->policy[WINRUN_SHA_HEX] = '\0';
		memcpy(r->policy_text, line + 8 + WINRUN_SHA_HEX,
		    strlen(line + 8 + WINRUN_SHA_HEX) + 1);
		return 0;
	}
	if (strcmp(line, "result passed") == 0 || strcmp(line,
	    "result failed") == 0) {
		if ((line[7] == 'f') != r->failed || r->nchecks == 0)
			return winrun_fail(err, errlen, "line %d: the result "
			    "does not match the checks", no);
		*done = 1;
		return 0;
	}
	if (strncmp(line, "check ", 6) != 0 || (sp = strchr(line + 6,
	    ' ')) == NULL)
		return winrun_fail(err, errlen, "line %d: not a check", no);
	*sp = '\0';
	if ((strcmp(line + 6, "ok") != 0 && strcmp(line + 6, "FAIL") != 0) ||
	    strlen(sp + 1) >= sizeof(r->checks[0].what) ||
	    winrun_selfrec_add(r, line[6] == 'o', sp + 1) == -1)
		return winrun_fail(err, errlen, "line %d: not a check, or more "
		    "than %d", no, WINRUN_SELFREC_CHECKS);
	return 0;
}

int
winrun_selfrec_parse(const char *text, size_t len, struct winrun_selfrec *r,
    char *err, size_t errlen)
{
	char *copy, *line, *next;
	int no = 0, done = 0, rc = 0;

	memset(r, 0, sizeof(*r));
	if (len > WINRUN_SELFREC_MAX)
		return winrun_fail(err, errlen, "larger than %d bytes",
		    WINRUN_SELFREC_MAX);
	if (memchr(text, '\0', len) != NULL || len == 0 ||
	    text[len - 1] != '\n')
		return winrun_fail(err, errlen, "not whole lines of text");
	if ((copy = malloc(len + 1)) == NULL)
		return winrun_fail(err, errlen, "out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = copy; rc == 0 && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		rc = parse_line(line, ++no, r, &done, err, errlen);
	}
	free(copy);
	if (rc == 0 && !done)
		rc = winrun_fail(err, errlen, "no result line (cut short)");
	return rc;
}

int
winrun_selfrec_stale(const struct winrun_selfrec *r, const char *runner,
    const char *launcher, const char *policy, char *why, size_t len)
{
	if (strcmp(r->runner, runner) != 0)
		return winrun_fail(why, len, "aisb-run.exe changed: the result "
		    "is of sha256 %.16s..., the manifest names %.16s...",
		    r->runner, runner);
	if (strcmp(r->launcher, launcher) != 0)
		return winrun_fail(why, len, "aisb.exe changed: the result is "
		    "of sha256 %.16s..., the manifest names %.16s...",
		    r->launcher, launcher);
	if (strcmp(r->policy, policy) != 0)
		return winrun_fail(why, len, "the policy changed: the result "
		    "is of policy %.16s... (%s), sessions run with %.16s...",
		    r->policy, r->policy_text, policy);
	return 0;
}
