/*
 * Regular-expression rules: compilation, and the index that keeps them
 * off the per-connection path.
 *
 * Most host regexes end in a literal domain ("^cdn[0-9]+\.example\.net$").
 * Such a regex can only match names that end in that literal, so it is
 * filed under a domain suffix of the literal and tried only for names that
 * have that suffix: the decision looks suffixes up by hash, as it does for
 * wildcards, and a 1,000-rule policy costs a few lookups, not a thousand
 * matches.  A regex whose literal tail cannot be proven (top-level
 * alternation, inline options, escapes other than simple ones) is left
 * unindexed and tried for every name.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy-int.h"

/* Escapes after which the scanner still understands the pattern. */
static int
simple_escape(char c)
{
	return c == '.' || c == '-' || c == '\\' || c == 'd' || c == 'D' ||
	    c == 'w' || c == 'W' || c == 's' || c == 'S' || c == 'b' ||
	    c == 'B' || c == '[' || c == ']' || c == '(' || c == ')' ||
	    c == '{' || c == '}' || c == '*' || c == '+' || c == '?' ||
	    c == '|' || c == '^' || c == '$' || c == '/';
}

/*
 * Returns the length of the literal every match must end with, written
 * into out lower-cased, or 0 when it cannot be proven.
 */
static size_t
literal_tail(const char *re, size_t len, char *out, size_t outlen)
{
	size_t	 i, depth = 0, n = 0, k, j;
	int	 inclass = 0;

	/* First pass: only constructs we understand; no top-level '|'. */
	for (i = 0; i < len; i++) {
		char c = re[i];

		if (c == '\\') {
			if (i + 1 >= len || !simple_escape(re[i + 1]))
				return 0;
			i++;
			continue;
		}
		if (inclass) {
			if (c == '[' && i + 1 < len && re[i + 1] == ':')
				return 0;	/* POSIX classes: not worth it */
			if (c == ']')
				inclass = 0;
			continue;
		}
		switch (c) {
		case '[':
			inclass = 1;
			if (i + 1 < len && re[i + 1] == '^')
				i++;
			if (i + 1 < len && re[i + 1] == ']')
				i++;	/* a leading ']' is literal */
			break;
		case '(':
			if (i + 1 < len && (re[i + 1] == '*' ||
			    (re[i + 1] == '?' && (i + 2 >= len ||
			    re[i + 2] != ':'))))
				return 0;	/* verbs, options, lookaround */
			depth++;
			break;
		case ')':
			if (depth == 0)
				return 0;
			depth--;
			break;
		case '|':
			if (depth == 0)
				return 0;
			break;
		default:
			break;
		}
	}
	if (inclass || depth != 0)
		return 0;

	/* Must end in an unescaped '$' (DOLLAR_ENDONLY: the very end). */
	if (len < 2 || re[len - 1] != '$')
		return 0;
	for (k = 0, j = len - 1; j > 0 && re[j - 1] == '\\'; j--)
		k++;
	if (k % 2 == 1)
		return 0;

	/* Walk back over literal name bytes and escaped dots and hyphens. */
	i = len - 1;
	while (i > 0 && n < outlen) {
		char c = re[i - 1];

		for (k = 0, j = i - 1; j > 0 && re[j - 1] == '\\'; j--)
			k++;
		if (k % 2 == 1) {
			if (c != '.' && c != '-')
				break;
			out[n++] = c;
			i -= 2;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_'))
			break;
		out[n++] = c;
		i--;
	}
	/* Reverse in place. */
	for (j = 0; j < n / 2; j++) {
		char t = out[j];

		out[j] = out[n - 1 - j];
		out[n - 1 - j] = t;
	}
	return n;
}

/*
 * Sets r->re_key to a domain suffix every matching name has, or leaves it
 * NULL.  The key is the literal tail after its first dot, and must itself
 * hold a dot: "x.edge3.example.net" and ".edge3.example.net" both file the
 * regex under "edge3.example.net".
 */
int
policy_re_index_key(struct policy_rule *r)
{
	char		 tail[POLICY_MAX_NAME + 2];
	const char	*dot;
	size_t		 n;

	r->re_key = NULL;
	r->re_keylen = 0;
	n = literal_tail(r->pattern + 1, r->patlen - 1, tail, sizeof(tail));
	if (n == 0 || (dot = memchr(tail, '.', n)) == NULL)
		return 0;
	dot++;
	n -= (size_t)(dot - tail);
	if (n == 0 || memchr(dot, '.', n) == NULL || dot[0] == '.' ||
	    memmem(dot, n, "..", 2) != NULL || dot[n - 1] == '.')
		return 0;
	if ((r->re_key = malloc(n + 1)) == NULL)
		return -1;
	memcpy(r->re_key, dot, n);
	r->re_key[n] = '\0';
	r->re_keylen = n;
	return 0;
}

static __thread pcre2_match_data *tl_md;

void
policy_thread_cleanup(void)
{
	pcre2_match_data_free(tl_md);
	tl_md = NULL;
}

/*
 * Returns 1 on a match, 0 on none.  A regex that hits the match limits
 * (a hostile name against a backtracking pattern) counts as matching a
 * deny rule and as not matching an allow rule: fail closed either way.
 */
int
policy_re_match(const struct policy *p, const struct policy_rule *r,
    const char *name, size_t len)
{
	int	 rc;

	if (len < r->re_minlen)
		return 0;
	if (tl_md == NULL && (tl_md = pcre2_match_data_create(1, NULL)) == NULL)
		return r->action == POLICY_DENY;
	rc = pcre2_match(r->re, (PCRE2_SPTR)name, len, 0, 0, tl_md, p->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return r->action == POLICY_DENY;
}
