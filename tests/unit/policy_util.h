/*
 * Helpers of the policy unit tests (test_policy, test_policy_inspect):
 * a policy that must load, and one that must be refused with its first
 * error at a line and column, mentioning a text and a hint.  The
 * including file has cmocka and policy.h included.
 */
#ifndef AISB_TEST_POLICY_UTIL_H
#define AISB_TEST_POLICY_UTIL_H

#include <stdio.h>
#include <string.h>

static __attribute__((unused)) struct policy *
load(const char *yaml)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 buf[8192];

	if (policy_load_buffer("t.yaml", yaml, strlen(yaml), &p, &errs) != 0) {
		policy_errors_format(&errs, buf, sizeof(buf));
		fail_msg("load failed:\n%s", buf);
	}
	return p;
}

/* Expects a refusal whose first error is at line:col and mentions what. */
static __attribute__((unused)) void
reject_at(const char *yaml, unsigned line, unsigned col, const char *what,
    const char *hint)
{
	struct policy_errors	 errs;
	struct policy		*p;
	char			 buf[8192];

	if (policy_load_buffer("t.yaml", yaml, strlen(yaml), &p, &errs) == 0) {
		policy_free(p);
		fail_msg("accepted:\n%s", yaml);
	}
	assert_null(p);
	policy_errors_format(&errs, buf, sizeof(buf));
	assert_true(errs.count >= 1);
	if (strstr(errs.err[0].msg, what) == NULL)
		fail_msg("error '%s' does not mention '%s' for:\n%s",
		    errs.err[0].msg, what, yaml);
	if (line != 0 && (errs.err[0].line != line || errs.err[0].column != col))
		fail_msg("error at %u:%u, expected %u:%u: %s", errs.err[0].line,
		    errs.err[0].column, line, col, buf);
	if (hint != NULL && strstr(errs.err[0].hint, hint) == NULL)
		fail_msg("hint '%s' does not mention '%s'", errs.err[0].hint,
		    hint);
	/* the formatted text carries file:line:col */
	if (line != 0) {
		char want[64];

		snprintf(want, sizeof(want), "t.yaml:%u:%u: error: ", line, col);
		if (strstr(buf, want) == NULL)
			fail_msg("formatted errors lack '%s': %s", want, buf);
	}
}

#endif
